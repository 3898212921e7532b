/*
 * restore-host: puts every host knob a controller changed back to its
 * original value, from the journal in the database — the way out after a
 * crash or a SIGKILL left the host in a sweep's settings.  Safe to run any
 * number of times: knobs already at their original are only marked
 * restored.  Takes the host lock, so it never fights a live controller.
 */
#include <stdio.h>

#include "../experiments/hostlock.h"
#include "../experiments/knobs.h"
#include "../schema/db.h"
#include "../util/json.h"
#include "cmd.h"
#include "sweep.h"

static const char *root_dir;

static const struct option restore_host_options[] = {
	OPT_STRING(0, "root", &root_dir, "DIR",
		   "host root the knob files live under (default /; for tests)"),
	OPT_END(),
};

static void report_json(struct strbuf *out, const char *root,
			const struct knob_restore_report *r)
{
	size_t counts[KNOB_RESTORE_NSTATUS] = { 0 };
	for (size_t i = 0; i < r->n; i++)
		counts[r->items[i].status]++;
	struct json_writer w;
	json_init(&w, out, true);
	json_obj_begin(&w);
	json_key(&w, "root"); json_str(&w, root);
	json_key(&w, "restored"); json_uint(&w, counts[KNOB_RESTORED]);
	json_key(&w, "unchanged"); json_uint(&w, counts[KNOB_WAS_ORIGINAL]);
	json_key(&w, "failed"); json_uint(&w, counts[KNOB_RESTORE_FAILED]);
	json_key(&w, "other_root"); json_uint(&w, counts[KNOB_OTHER_ROOT]);
	json_key(&w, "gone"); json_uint(&w, counts[KNOB_GONE]);
	json_key(&w, "entries");
	json_arr_begin(&w);
	for (size_t i = 0; i < r->n; i++) {
		const struct knob_restore_item *it = &r->items[i];
		json_obj_begin(&w);
		json_key(&w, "journal_id"); json_int(&w, it->journal_id);
		json_key(&w, "experiment_id");
		if (it->experiment_id)
			json_int(&w, it->experiment_id);
		else
			json_null(&w);
		json_key(&w, "knob"); json_str(&w, it->knob);
		json_key(&w, "path"); json_str(&w, it->path);
		json_key(&w, "original"); json_str(&w, it->original);
		json_key(&w, "applied"); json_str(&w, it->applied);
		json_key(&w, "before"); json_str(&w, it->before);
		json_key(&w, "status"); json_str(&w, knob_restore_status_name(it->status));
		json_key(&w, "error"); json_str(&w, it->error);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
}

static void report_text(struct strbuf *out, const struct knob_restore_report *r)
{
	if (r->n == 0) {
		strbuf_addstr(out, "nothing to restore: the journal has no unrestored host "
			      "changes\n");
		return;
	}
	size_t counts[KNOB_RESTORE_NSTATUS] = { 0 };
	for (size_t i = 0; i < r->n; i++) {
		const struct knob_restore_item *it = &r->items[i];
		counts[it->status]++;
		switch (it->status) {
		case KNOB_RESTORED:
			strbuf_addf(out, "restored   %s = %s (was %s)", it->knob, it->original,
				    it->before ? it->before : "unreadable");
			break;
		case KNOB_WAS_ORIGINAL:
			strbuf_addf(out, "unchanged  %s = %s (already the original)", it->knob,
				    it->original);
			break;
		case KNOB_RESTORE_FAILED:
			strbuf_addf(out, "FAILED     %s = %s: %s", it->knob, it->original,
				    it->error);
			break;
		case KNOB_OTHER_ROOT:
			strbuf_addf(out, "skipped    %s: %s", it->knob, it->error);
			break;
		case KNOB_GONE:
			strbuf_addf(out, "gone       %s: %s no longer exists (module unloaded "
				    "or host rebooted): nothing to put back", it->knob, it->path);
			break;
		}
		strbuf_addf(out, "  [journal #%lld", (long long)it->journal_id);
		if (it->experiment_id)
			strbuf_addf(out, ", experiment %lld", (long long)it->experiment_id);
		strbuf_addstr(out, "]\n");
	}
	strbuf_addf(out, "%zu restored, %zu already original, %zu failed", counts[KNOB_RESTORED],
		    counts[KNOB_WAS_ORIGINAL], counts[KNOB_RESTORE_FAILED]);
	if (counts[KNOB_GONE])
		strbuf_addf(out, ", %zu gone", counts[KNOB_GONE]);
	if (counts[KNOB_OTHER_ROOT])
		strbuf_addf(out, ", %zu under another root", counts[KNOB_OTHER_ROOT]);
	strbuf_addch(out, '\n');
}

static int cmd_restore_host_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	const char *root = root_dir && *root_dir ? root_dir : "/";
	struct hostlock lock;
	if (sweep_lock(ctx, root, &lock, &err) < 0)
		return cmd_fail(&err);
	struct db *db = db_open(ctx->db_path, false, &err);
	if (!db) {
		hostlock_release(&lock);
		return cmd_fail(&err);
	}
	struct knob_journal journal = { db, 0 };
	struct knob_restore_report report;
	int rc = knobs_restore_report(root, &journal, &report, &err);
	db_close(db);
	hostlock_release(&lock);
	/* A journal that cannot be read gives no report: only the error. */
	if (rc < 0 && !report.items)
		return cmd_fail(&err);
	struct strbuf out = STRBUF_INIT;
	if (ctx->json)
		report_json(&out, root, &report);
	else if (!ctx->quiet || report.nfailed)
		report_text(&out, &report);
	if (out.len)
		cmd_print(&out);
	strbuf_release(&out);
	knob_restore_report_release(&report);
	return rc < 0 ? cmd_fail(&err) : EXIT_OK;
}

const struct cmd_entry cmd_restore_host_entry = {
	.name = "restore-host",
	.summary = "put host knobs back from the journal after a crash",
	.args_usage = "",
	.options = restore_host_options,
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_restore_host_exec,
};
