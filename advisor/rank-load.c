/*
 * rank_load: what rank, recommend and report all start with — open the
 * database, read the experiment whole, read what its stored sweep says
 * about the decision, rank it — in one place.
 */
#include <string.h>

#include "../experiments/config.h"
#include "../experiments/domain.h"
#include "../schema/db-results.h"
#include "../util/json.h"
#include "dbread.h"
#include "rank.h"

/* The guest's architecture: the sweep's, else the host's the run recorded. */
static enum guest_arch stored_arch(const struct db_results *res, enum guest_arch a)
{
	if (a != ARCH_HOST)
		return a;
	const char *facts = res->exp.host_facts ? res->exp.host_facts : "";
	if (strstr(facts, "\"arch\":\"x86_64\""))
		return ARCH_X86_64;
	if (strstr(facts, "\"arch\":\"ppc64\""))
		return ARCH_PPC64;
	return ARCH_HOST;
}

void rank_options_from_sweep(const struct db_results *res, struct rank_options *o)
{
	rank_options_init(o);
	const char *yaml = res->exp.config_yaml;
	if (!yaml)
		return;
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse_flags(res->exp.config_path ? res->exp.config_path
						      : "stored config", yaml, strlen(yaml), 0, &err);
	if (!cfg)
		return;	/* an old or hand-made config: the defaults */
	const struct advisor_settings *a = &cfg->advisor;
	o->objective = a->objective == OBJECTIVE_MEAN ? DECIDE_OBJECTIVE_MEAN
						      : DECIDE_OBJECTIVE_WORST;
	o->equivalence = a->equivalence;
	o->max_failure_rate = a->max_failure_rate;
	o->owned = xcalloc(a->nenvironment + 1, sizeof(*o->owned));
	for (size_t i = 0; i < a->nenvironment; i++)
		o->owned[i] = xstrdup(a->environment[i]);
	o->environment = (const char *const *)o->owned;
	o->nenvironment = a->nenvironment;
	/* The <cpu> the controller gave the measured guests (experiments/domain.h). */
	enum guest_arch arch = stored_arch(res, cfg->arch);
	if (cfg->domain_type == DOMAIN_KVM) {
		o->cpu_mode = "host-passthrough";
	} else if (cfg->domain_type == DOMAIN_QEMU && arch == ARCH_X86_64) {
		o->cpu_mode = "custom";
		o->cpu_model = DOMAIN_TCG_X86_MODEL;
	} else if (cfg->domain_type == DOMAIN_AUTO && arch == ARCH_X86_64) {
		/* Resolved per run: KVM where /dev/kvm works, else TCG. */
		o->cpu_note = "domain_type auto: KVM runs had mode='host-passthrough', "
			      "TCG runs mode='custom' with model " DOMAIN_TCG_X86_MODEL;
	} else if (cfg->domain_type == DOMAIN_AUTO) {
		o->cpu_note = "domain_type auto: KVM runs had mode='host-passthrough', "
			      "TCG runs no CPU model";
	}
	config_free(cfg);
}

int rank_load(const char *db_path, const char *exp, const char *metric,
	      struct db_results *res, struct rank_result *r, struct ta_err *err)
{
	struct db *db = dbread_open(db_path, err);
	if (!db)
		return -1;
	int rc = db_results_load(db, exp, res, err);
	db_close(db);
	if (rc < 0)
		return -1;
	struct rank_options o;
	rank_options_from_sweep(res, &o);
	o.metric = metric;
	rc = rank_compute_opts(res, &o, r, err);
	rank_options_release(&o);
	if (rc < 0)
		db_results_release(res);
	return rc;
}

int rank_load_print(const char *db_path, const char *exp, const char *metric, bool json,
		    struct strbuf *out, struct ta_err *err)
{
	struct db_results res;
	struct rank_result r;
	if (rank_load(db_path, exp, metric, &res, &r, err) < 0)
		return -1;
	if (json) {
		struct json_writer w;
		json_init(&w, out, true);
		rank_json(&w, &r);
	} else {
		rank_text(out, &r);
	}
	rank_result_release(&r);
	db_results_release(&res);
	return 0;
}
