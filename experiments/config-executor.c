/*
 * config-executor: where the sweep's runs go (executor: local or slurm,
 * with Slurm's partition, sbatch options and shared directory); see
 * config.c.
 */
#include "config-int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const executor_names[] = { [EXECUTOR_LOCAL] = "local",
					      [EXECUTOR_SLURM] = "slurm",
					      [EXECUTOR_SSH] = "ssh", NULL };

const char *config_executor_name(enum executor_kind k) { return executor_names[k]; }

int config_executor_from_name(const char *s, enum executor_kind *out)
{
	for (int i = 0; executor_names[i]; i++)
		if (!strcmp(s, executor_names[i])) {
			*out = (enum executor_kind)i;
			return 0;
		}
	return -1;
}

/*
 * sbatch options the controller sets itself (one job per block, named for
 * the block and attempt, its output beside the results): a user's copy
 * would break the sweep's bookkeeping.
 */
static const char *const executor_sbatch_managed[] = {
	"--job-name", "-J", "--parsable", "--exclusive", "--no-requeue", "--requeue",
	"--array", "-a", "--wrap", "--output", "-o", "--error", "-e", "--export", "--chdir",
	"-D", NULL
};

/* executor.sbatch: a list of sbatch options, none of those the controller sets. */
static int parse_executor_sbatch(struct yr_reader *L, const yaml_node_t *v,
				 struct argv_list *out)
{
	if (yr_expect_type(L, v, "executor.sbatch", YAML_SEQUENCE_NODE,
			   "a list of sbatch options, e.g. [--time=02:00:00, --account=lab]") < 0)
		return -1;
	size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	out->argv = xcalloc(count + 1, sizeof(char *));
	out->argc = count;
	char key[YR_KEY_MAX];
	int rc = 0;
	for (size_t i = 0; i < count; i++) {
		const yaml_node_t *item = yr_node(L, v->data.sequence.items.start[i]);
		yr_key_index(key, "executor.sbatch", i);
		if (yr_get_str(L, item, key, &out->argv[i]) < 0) {
			rc = -1;
			continue;
		}
		const char *a = out->argv[i];
		if (a[0] != '-') {
			rc = yr_fail(L, item, key, "'%s' is not an sbatch option; give options "
				     "only (--name=value), the job script is topoadvisor's", a);
			continue;
		}
		size_t len = strcspn(a, "=");
		for (const char *const *m = executor_sbatch_managed; *m; m++)
			if (strlen(*m) == len && !strncmp(a, *m, len))
				rc = yr_fail(L, item, key, "%s is set by topoadvisor for every block "
					     "(one exclusive job per block, named for it); remove it",
					     *m);
		/* -J NAME, -oFILE: short options glued to their value. */
		if (a[1] && a[1] != '-' && strchr("JaoeD", a[1]))
			rc = yr_fail(L, item, key, "-%c is set by topoadvisor for every block; "
				     "remove it", a[1]);
	}
	return rc;
}

/*
 * executor.hosts: the hosts of an ssh sweep, each a name ssh resolves
 * through its own configuration (~/.ssh/config, or executor.ssh_config:
 * user, port, identity, jump host): [user@]name, letters, digits and
 * "._-" (never an ssh option), each once.
 */
static int parse_executor_hosts(struct yr_reader *L, const yaml_node_t *v, struct argv_list *out)
{
	if (yr_expect_type(L, v, "executor.hosts", YAML_SEQUENCE_NODE,
			   "a list of host names as ssh knows them, e.g. [lab1, lab2]") < 0)
		return -1;
	size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	out->argv = xcalloc(count + 1, sizeof(char *));
	out->argc = count;
	char key[YR_KEY_MAX];
	int rc = 0;
	if (!count)
		return yr_fail(L, v, "executor.hosts", "no host given; name at least one");
	for (size_t i = 0; i < count; i++) {
		const yaml_node_t *item = yr_node(L, v->data.sequence.items.start[i]);
		yr_key_index(key, "executor.hosts", i);
		if (yr_get_str(L, item, key, &out->argv[i]) < 0) {
			rc = -1;
			continue;
		}
		const char *h = out->argv[i];
		bool ok = h[0] && h[0] != '-' && strlen(h) <= 255;
		for (const char *c = h; ok && *c; c++)
			ok = isalnum((unsigned char)*c) || strchr("._-@", *c);
		if (!ok || strchr(h, '@') != strrchr(h, '@'))
			rc = yr_fail(L, item, key, "'%s' is not a host name ([user@]name: letters, "
				     "digits, '.', '_', '-'); put ports, keys and jump hosts in "
				     "the ssh configuration (executor.ssh_config)", h);
		for (size_t k = 0; ok && k < i; k++)
			if (out->argv[k] && !strcmp(out->argv[k], h))
				rc = yr_fail(L, item, key, "host '%s' is listed twice", h);
	}
	return rc;
}

/* An absolute directory path (not checked on this host: it may be a node's). */
static int get_abs_dir(struct yr_reader *L, const yaml_node_t *v, const char *key, char **out)
{
	if (yr_get_str(L, v, key, out) < 0)
		return -1;
	if ((*out)[0] != '/')
		return yr_fail(L, v, key, "'%s' is not an absolute path; the controller and the "
			       "nodes must all find it under the same name", *out);
	return 0;
}

/*
 * executor: where the sweep's runs go.  local (this host, the default) or
 * slurm: one Slurm job per block on the cluster SLURM_CONF names.  A
 * setting of `run` rather than of the experiment (`run --executor`
 * overrides the kind), so shared_dir is required only where a slurm sweep
 * starts, not here.
 */
int config_parse_executor(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "kind", "max_hosts", "partition", "sbatch",
					    "shared_dir", "node_dir", "max_attempts",
					    "poll_interval", "exclude_after", "hosts", "ssh_config",
					    NULL };
	if (yr_map_check(L, n, "executor", keys, "a mapping (kind, max_hosts, shared_dir, "
			 "...)") < 0)
		return -1;
	struct executor_settings *x = &cfg->executor;
	yaml_node_t *v;
	int e, rc = 0;
	if ((v = yr_map_get(L, n, "kind"))) {
		if (yr_get_enum(L, v, "executor.kind", executor_names, &e) < 0)
			rc = -1;
		else
			x->kind = (enum executor_kind)e;
	}
	if ((v = yr_map_get(L, n, "max_hosts")) &&
	    yr_get_int(L, v, "executor.max_hosts", 1, 10000, &x->max_hosts) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "partition")) &&
	    yr_get_name(L, v, "executor.partition", 64, "_-.", &x->partition) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "sbatch")) && parse_executor_sbatch(L, v, &x->sbatch) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "shared_dir")) &&
	    get_abs_dir(L, v, "executor.shared_dir", &x->shared_dir) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "node_dir")) &&
	    get_abs_dir(L, v, "executor.node_dir", &x->node_dir) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "hosts")) && parse_executor_hosts(L, v, &x->hosts) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "ssh_config")) && yr_get_str(L, v, "executor.ssh_config",
							      &x->ssh_config) == 0 &&
	    x->ssh_config[0] != '/')
		rc = yr_fail(L, v, "executor.ssh_config", "'%s' is not an absolute path",
			     x->ssh_config);
	if (x->kind == EXECUTOR_SSH && !x->hosts.argc)
		rc = yr_fail(L, n, "executor.hosts", "an ssh sweep needs executor.hosts: the "
			     "hosts to run blocks on, as ssh names them");
	if ((v = yr_map_get(L, n, "max_attempts")) &&
	    yr_get_int(L, v, "executor.max_attempts", 1, 100, &x->max_attempts) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "poll_interval")) &&
	    config_get_fraction(L, v, "executor.poll_interval", 0.01, 600, "seconds, 0.01..600 "
			 "(e.g. 3)", &x->poll_interval) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "exclude_after")) &&
	    yr_get_int(L, v, "executor.exclude_after", 0, 1000, &x->exclude_after) < 0)
		rc = -1;
	return rc;
}

void config_executor_defaults(struct executor_settings *x)
{
	x->kind = EXECUTOR_LOCAL;
	x->max_hosts = 4;
	x->node_dir = xstrdup("/var/lib/topoadvisor/nodes");
	x->max_attempts = 3;
	x->poll_interval = 3;
	x->exclude_after = 3;
}

void config_executor_release(struct executor_settings *x)
{
	free(x->partition);
	config_argv_free(&x->sbatch);
	free(x->shared_dir);
	free(x->node_dir);
	config_argv_free(&x->hosts);
	free(x->ssh_config);
}

void config_executor_dump(const struct executor_settings *x, struct strbuf *out)
{
	strbuf_addf(out, "executor: kind=%s max_hosts=%d partition=%s shared_dir=%s "
		    "node_dir=%s max_attempts=%d poll_interval=%g exclude_after=%d\n",
		    executor_names[x->kind], x->max_hosts, x->partition ? x->partition : "default",
		    x->shared_dir ? x->shared_dir : "none", x->node_dir, x->max_attempts,
		    x->poll_interval, x->exclude_after);
	if (x->sbatch.argc)
		config_dump_argv(out, "executor.sbatch", &x->sbatch);
	if (x->hosts.argc)
		config_dump_argv(out, "executor.hosts", &x->hosts);
	if (x->ssh_config)
		strbuf_addf(out, "executor.ssh_config: %s\n", x->ssh_config);
}
