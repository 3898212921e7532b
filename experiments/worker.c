/* worker: one block of a distributed sweep on its node; see worker.h. */
#include "worker.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../schema/db-blocks.h"
#include "../util/mono.h"
#include "../util/strbuf.h"
#include "blockreq.h"
#include "config.h"
#include "controller.h"
#include "hostlock.h"
#include "knobs.h"
#include "plan-store.h"
#include "plan.h"

/* Seconds a worker waits for the worker before it on the node to finish. */
#define NODE_LOCK_WAIT 120

/* The name this node's state and results go under: $SLURMD_NODENAME, else uname's. */
static const char *worker_node_name(void)
{
	static struct utsname u;
	const char *env = getenv("SLURMD_NODENAME");
	if (env && *env)
		return env;
	return uname(&u) == 0 ? u.nodename : "localhost";
}

/* Whether s can name a file of its own: [A-Za-z0-9._-], not "." or "..". */
static bool file_word(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("._-", *s)))
			return false;
	return true;
}

/* mkdir -p with mode for the directories it makes. */
static int mkdir_p(const char *path, mode_t mode, struct ta_err *err)
{
	char *p = xstrdup(path);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			int e = errno;
			err_set(err, EXIT_FAILURE_RUN, "cannot create %s: %s", p, strerror(e));
			free(p);
			return -1;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(err, EXIT_FAILURE_RUN, "%s is not a directory", path);
	return 0;
}

/*
 * Whether the node's directory (node_dir/NODE) and node_dir are safe to
 * keep journals in: NODE ours (this user) and closed to everyone else,
 * node_dir ours or root's and writable by no one else unless sticky (as
 * /var/tmp).  Otherwise another user could plant a journal that sets any
 * knob when "restored", or take our lock and results away.
 */
static int check_node_dir(const char *node_dir, const char *dir, struct ta_err *err)
{
	struct stat st;
	uid_t me = geteuid();
	if (lstat(node_dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(err, EXIT_FAILURE_RUN, "executor.node_dir %s is not a directory",
			       node_dir);
	if ((st.st_uid != me && st.st_uid != 0) ||
	    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
		return err_set(err, EXIT_FAILURE_RUN, "executor.node_dir %s is owned by uid %u "
			       "with mode %04o: others could write our journals there; make it "
			       "this user's (uid %u) or root's and writable by no one else",
			       node_dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			       (unsigned)me);
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != me ||
	    (st.st_mode & 077))
		return err_set(err, EXIT_FAILURE_RUN, "%s is not a directory of this user "
			       "(uid %u) closed to others (mode 0700); remove it and the worker "
			       "makes it again", dir, (unsigned)me);
	return 0;
}

/* Whether name is one of our journals: "JOBNAME.job-J.db", a regular file of ours. */
static bool our_journal(int dirfd, const char *name)
{
	size_t len = strlen(name);
	const char *job = strstr(name, ".job-");
	struct stat st;
	return len > 3 && !strcmp(name + len - 3, ".db") && name[0] != '.' && job &&
	       job != name && file_word(name) &&
	       fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       st.st_uid == geteuid();
}

/* root with every "%n" replaced by the node's name (NULL stays NULL). */
static char *root_for_node(const char *root, const char *node)
{
	if (!root)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = root; *s; s++) {
		if (s[0] == '%' && s[1] == 'n') {
			strbuf_addstr(&sb, node);
			s++;
		} else {
			strbuf_addch(&sb, *s);
		}
	}
	return strbuf_detach(&sb);
}

static void remove_db_files(const char *path)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal", NULL };
	for (const char *const *s = suffixes; *s; s++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%s%s", path, *s);
		unlink(strbuf_str(&sb));
		strbuf_release(&sb);
	}
}

/*
 * The databases earlier workers on this node left (killed before they
 * finished): restores the knobs each journalled, then removes it.  One
 * that cannot be restored stays, and the block is not run on a host in
 * an unknown state.
 */
static int restore_leftovers(const char *dir, const char *root, const char *node,
			     const struct worker_opts *o, struct ta_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return err_set(err, EXIT_FAILURE_RUN, "cannot read %s: %s", dir, strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".db") || e->d_name[0] == '.')
			continue;
		if (!our_journal(dirfd(d), e->d_name)) {
			if (!o->quiet)
				fprintf(stderr, "%s: %s/%s is not a journal of ours: left alone\n",
					node, dir, e->d_name);
			continue;
		}
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", dir, e->d_name);
		struct ta_err oerr = { 0 };
		struct db *db = db_open_readonly(strbuf_str(&path), &oerr);
		if (!db) {
			/* Named like ours, but no database of ours (a worker killed while
			 * creating it leaves an empty one): nothing journalled in it. */
			if (!o->quiet)
				fprintf(stderr, "%s: %s is no journal (%s): left alone\n", node,
					strbuf_str(&path), oerr.msg);
			strbuf_release(&path);
			continue;
		}
		db_close(db);
		db = db_open(strbuf_str(&path), false, err);
		struct knob_journal journal = { db, 0 };
		if (!db || knobs_restore_all(root ? root : "/", &journal, err) < 0) {
			err_prefix(err, "%s: host knobs an earlier worker left changed (its "
				   "journal: %s; 'topoadvisor --db %s restore-host' on this node "
				   "retries)", node, strbuf_str(&path), strbuf_str(&path));
			rc = -1;
		} else if (!o->quiet) {
			fprintf(stderr, "restored what an earlier worker on %s left (%s)\n", node,
				e->d_name);
		}
		db_close(db);
		if (rc == 0)
			remove_db_files(strbuf_str(&path));
		strbuf_release(&path);
	}
	closedir(d);
	return rc;
}

/*
 * Waits, at most NODE_LOCK_WAIT seconds, while another process holds the
 * node's lock: a job Slurm has just cancelled there may still be putting
 * the node back.  hostlock_acquire then takes it (or says who holds it).
 */
static void wait_node_lock(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	for (int i = 0; i < NODE_LOCK_WAIT * 10 && flock(fd, LOCK_SH | LOCK_NB) < 0; i++)
		mono_sleep_ms(100);
	close(fd);
}

/* The plan's runs of block `block` for the requested keys, in their order. */
static int block_plan(const struct plan *p, const struct block_request *req, struct plan *sub,
		      struct ta_err *err)
{
	*sub = *p;
	sub->runs = xcalloc(req->nkeys + 1, sizeof(*sub->runs));
	sub->nruns = 0;
	for (size_t k = 0; k < req->nkeys; k++) {
		size_t i = 0;
		while (i < p->nconfigs && strcmp(p->configs[i].rec.key, req->keys[k]))
			i++;
		if (i == p->nconfigs) {
			free(sub->runs);
			sub->runs = NULL;
			return err_set(err, EXIT_FAILURE_RUN, "configuration %s is not in the plan "
				       "this node (%s) gives for the stored config; are the hosts "
				       "alike?", req->keys[k], worker_node_name());
		}
		sub->runs[sub->nruns] = (struct plan_run){ .config = i, .repetition = req->block,
							   .order = sub->nruns };
		sub->nruns++;
	}
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* rm -r path (not following links, not crossing into other file systems). */
static void remove_tree(const char *path)
{
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* The directory part of path ("." when it has none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	char *d = xmalloc((size_t)(slash - path) + 1);
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = '\0';
	return d;
}

/* Copies db to dir/final atomically: a hidden temporary name, then rename. */
static int publish(struct db *db, const char *dir, const char *final, struct ta_err *err)
{
	/* The copy is made in a directory only we can enter, made fresh
	 * (mkdtemp), never at a name in dir that someone could plant a link
	 * at between our unlink and SQLite's open. */
	struct strbuf priv = STRBUF_INIT, tmp = STRBUF_INIT, dst = STRBUF_INIT;
	strbuf_addf(&priv, "%s/.publish.XXXXXX", dir);
	strbuf_addf(&dst, "%s/%s", dir, final);
	int rc;
	if (!mkdtemp(priv.buf)) {
		rc = err_set(err, EXIT_FAILURE_RUN, "writing %s: making a private directory "
			     "beside it: %s", strbuf_str(&dst), strerror(errno));
		goto out;
	}
	strbuf_addf(&tmp, "%s/result.db", strbuf_str(&priv));
	rc = db_copy_to(db, strbuf_str(&tmp), err);
	if (rc == 0) {
		int fd = open(strbuf_str(&tmp), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || fsync(fd) < 0 || rename(strbuf_str(&tmp), strbuf_str(&dst)) < 0)
			rc = err_set(err, EXIT_FAILURE_RUN, "writing %s: %s", strbuf_str(&dst),
				     strerror(errno));
		if (fd >= 0)
			close(fd);
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	if (rc < 0)
		unlink(strbuf_str(&tmp));
	rmdir(strbuf_str(&priv));
out:
	strbuf_release(&priv);
	strbuf_release(&tmp);
	strbuf_release(&dst);
	return rc;
}

/* Runs the block in db (created at path), then publishes it; see worker_run_block. */
static int run_in(struct db *db, const struct block_request *req, const struct sweep_config *cfg,
		  const struct controller_opts *copts, const char *job, const char *result_dir,
		  struct worker_outcome *out, struct ta_err *err)
{
	const char *node = copts->host;
	struct host_facts host;
	host_facts_read(&host);
	struct plan *p = plan_expand(cfg, &host, req->seed, err);
	if (!p)
		return -1;
	struct plan sub;
	int rc = -1;
	if (p->cross_host) {
		err_set(err, EXIT_FAILURE_RUN, "this sweep is for a %s host; node %s is %s",
			config_arch_name(cfg->arch), node, config_arch_name(host.arch));
		goto out_plan;
	}
	if (controller_check_host(p, copts, true, err) < 0 || block_plan(p, req, &sub, err) < 0)
		goto out_plan;
	controller_guests_describe(p);
	char *facts = controller_host_facts_json();
	struct db_experiment_new e = {
		.name = req->name, .config_yaml = req->config, .config_len = strlen(req->config),
		.config_path = NULL, .host_facts = facts, .seed = req->seed,
		.primary_metric = req->primary_metric, .higher_is_better = req->higher_is_better,
	};
	int64_t exp_id, attempt_id;
	struct controller_summary sum;
	if (db_experiment_insert(db, &e, &exp_id, err) < 0 ||
	    plan_store(db, exp_id, &sub, NULL, err) < 0 ||
	    db_attempt_insert(db, exp_id, req->block, req->attempt, req->job_name, &attempt_id,
			      err) < 0 ||
	    db_attempt_update(db, attempt_id, &(struct db_attempt_set){ .job_id = job,
			      .node = node, .state = "running" }, err) < 0 ||
	    controller_run(db, &sub, exp_id, copts, &sum, err) < 0)
		goto out_facts;
	out->ok = sum.ok;
	out->failed = sum.failed;
	out->interrupted = sum.interrupted;
	if (sum.interrupted) {
		rc = 0;
		goto out_facts;
	}
	struct strbuf final = STRBUF_INIT;
	strbuf_addf(&final, "block-%d.attempt-%d.job-%s.%s.db", req->block + 1, req->attempt,
		    job, node);
	if (db_attempt_update(db, attempt_id, &(struct db_attempt_set){ .state = "done" },
			      err) == 0 &&
	    publish(db, result_dir, strbuf_str(&final), err) == 0) {
		rc = 0;
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", result_dir, strbuf_str(&final));
		out->result = strbuf_detach(&path);
	}
	strbuf_release(&final);
out_facts:
	free(facts);
	free(sub.runs);
out_plan:
	plan_free(p);
	return rc;
}

int worker_run_block(const char *request, const struct worker_opts *o,
		     struct worker_outcome *out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	struct block_request req;
	if (blockreq_read(request, &req, err) < 0)
		return -1;
	char label[96];
	snprintf(label, sizeof(label), "experiment %lld (stored config)",
		 (long long)req.experiment_id);
	struct sweep_config *cfg = config_parse_flags(label, req.config, strlen(req.config), 0,
						      err);
	if (!cfg) {
		blockreq_release(&req);
		return -1;
	}
	const char *node = worker_node_name();
	const char *job_env = getenv("SLURM_JOB_ID");
	const char *job = job_env && *job_env ? job_env : "none";
	char *root = root_for_node(req.root, node);
	if (root && root[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		struct strbuf abs = STRBUF_INIT;
		strbuf_addf(&abs, "%s/%s", cwd ? cwd : ".", root);
		free(cwd);
		free(root);
		root = strbuf_detach(&abs);
	}
	/* Absolute: the worker changes its directory before it writes there. */
	char *request_abs = realpath(request, NULL);
	char *result_dir = dir_of(request_abs ? request_abs : request);
	free(request_abs);
	struct strbuf dir = STRBUF_INIT, local = STRBUF_INIT, run_dir = STRBUF_INIT;
	struct hostlock lock = { .fd = -1 };
	struct db *db = NULL;
	int rc = -1;
	if (!file_word(node) || !file_word(job) || !file_word(req.job_name)) {
		err_set(err, EXIT_FAILURE_RUN, "node '%s', job '%s' or job name '%s' cannot "
			"name a file", node, job, req.job_name);
		goto out;
	}
	strbuf_addf(&dir, "%s/%s", cfg->executor.node_dir, node);
	strbuf_addf(&local, "%s/%s.job-%s.db", strbuf_str(&dir), req.job_name, job);
	struct strbuf lock_path = STRBUF_INIT;
	strbuf_addf(&lock_path, "%s/lock", strbuf_str(&dir));
	if (mkdir_p(strbuf_str(&dir), 0700, err) < 0 ||
	    check_node_dir(cfg->executor.node_dir, strbuf_str(&dir), err) < 0) {
		strbuf_release(&lock_path);
		goto out;
	}
	wait_node_lock(strbuf_str(&lock_path));
	if (hostlock_acquire_host(&lock, root, strbuf_str(&lock_path), err) < 0) {
		strbuf_release(&lock_path);
		goto out;
	}
	strbuf_release(&lock_path);
	if (lock.leftovers && !o->quiet)
		fprintf(stderr, "ended %d process%s an earlier worker on %s left: %s\n",
			lock.leftovers, lock.leftovers == 1 ? "" : "es", node,
			strbuf_str(&lock.leftover_names));
	if (lock.stale_instances && !o->quiet)
		fprintf(stderr, "removed %d trace instance%s an earlier worker on %s left\n",
			lock.stale_instances, lock.stale_instances == 1 ? "" : "s", node);
	if (restore_leftovers(strbuf_str(&dir), root, node, o, err) < 0)
		goto out;
	if (!o->quiet)
		fprintf(stderr, "block %d (attempt %d, job %s) of experiment %lld on %s: %zu "
			"runs\n", req.block + 1, req.attempt, job, (long long)req.experiment_id,
			node, req.nkeys);
	/* The benchmarks' working directory: private to this job on the node, not
	 * the shared work directory among the results (removed after). */
	strbuf_addf(&run_dir, "%s/run.%s", strbuf_str(&dir), job);
	remove_tree(strbuf_str(&run_dir));
	if (mkdir(strbuf_str(&run_dir), 0700) < 0 || chdir(strbuf_str(&run_dir)) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "cannot make %s the working directory: %s",
			strbuf_str(&run_dir), strerror(errno));
		goto out;
	}
	db = db_open(strbuf_str(&local), true, err);
	if (!db)
		goto out;
	struct controller_opts copts = { .sysfs_root = root, .quiet = o->quiet,
					 .verbose = o->verbose, .host = node };
	rc = run_in(db, &req, cfg, &copts, job, result_dir, out, err);
	/* The journal must be empty before the database goes (controller_run
	 * restores at its end; a failure before it may have changed nothing). */
	struct knob_journal journal = { db, 0 };
	struct ta_err rerr = { 0 };
	bool restored = knobs_restore_all(root ? root : "/", &journal, &rerr) == 0;
	db_close(db);
	if (restored)
		remove_db_files(strbuf_str(&local));
	else if (rc == 0)
		rc = err_set(err, EXIT_FAILURE_RUN, "%s (its journal stays in %s for the next "
			     "worker)", rerr.msg, strbuf_str(&local));
out:
	if (run_dir.len) {
		if (chdir("/") == 0)
			remove_tree(strbuf_str(&run_dir));
		strbuf_release(&run_dir);
	}
	hostlock_release(&lock);
	strbuf_release(&dir);
	strbuf_release(&local);
	free(root);
	free(result_dir);
	config_free(cfg);
	blockreq_release(&req);
	return rc;
}
