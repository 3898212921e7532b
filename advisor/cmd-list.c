/*
 * list: the experiments in the database, newest first, with their run
 * counts, so the user can pick an id for show/rank/recommend.
 */
#include <stdio.h>

#include "../schema/db.h"
#include "../util/json.h"
#include "cmd.h"
#include "dbread.h"

static void list_json(struct strbuf *out, const struct db_experiment *v, size_t n)
{
	struct json_writer w;
	json_init(&w, out, true);
	json_arr_begin(&w);
	for (size_t i = 0; i < n; i++) {
		const struct db_experiment *e = &v[i];
		json_obj_begin(&w);
		json_key(&w, "id"); json_int(&w, e->id);
		json_key(&w, "name"); json_str(&w, e->name);
		json_key(&w, "created_at"); json_str(&w, e->created_at);
		json_key(&w, "status"); json_str(&w, e->status);
		json_key(&w, "parent_id");
		if (e->parent_id)
			json_int(&w, e->parent_id);
		else
			json_null(&w);
		json_key(&w, "configurations"); json_int(&w, e->nconfigs);
		json_key(&w, "runs"); json_int(&w, e->nruns);
		json_key(&w, "ok"); json_int(&w, e->nok);
		json_key(&w, "failed"); json_int(&w, e->nfailed);
		json_key(&w, "interrupted"); json_int(&w, e->ninterrupted);
		json_key(&w, "planned"); json_int(&w, e->nplanned + e->nrunning);
		json_obj_end(&w);
	}
	json_arr_end(&w);
}

static void list_text(struct strbuf *out, const struct db_experiment *v, size_t n)
{
	if (n == 0) {
		strbuf_addstr(out, "no experiments yet (start one with 'topoadvisor run CONFIG')\n");
		return;
	}
	strbuf_addf(out, "%5s  %-24s  %-20s  %-11s  %7s  %11s\n", "ID", "NAME", "CREATED",
		    "STATUS", "CONFIGS", "RUNS OK/ALL");
	for (size_t i = 0; i < n; i++) {
		const struct db_experiment *e = &v[i];
		char created[20];
		snprintf(created, sizeof(created), "%.19s", e->created_at ? e->created_at : "");
		for (char *p = created; *p; p++)
			if (*p == 'T')
				*p = ' ';
		strbuf_addf(out, "%5lld  %-24s  %-20s  %-11s  %7d  %5d/%-5d", (long long)e->id,
			    e->name, created, e->status, e->nconfigs, e->nok, e->nruns);
		if (e->nfailed)
			strbuf_addf(out, "  %d failed", e->nfailed);
		if (e->parent_id)
			strbuf_addf(out, "  (rerun of %lld)", (long long)e->parent_id);
		strbuf_addch(out, '\n');
	}
}

static int cmd_list_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct db *db = dbread_open(ctx->db_path, &err);
	if (!db)
		return cmd_fail(&err);
	struct db_experiment *v;
	size_t n;
	int rc = db_experiment_list(db, &v, &n, &err);
	db_close(db);
	if (rc < 0)
		return cmd_fail(&err);
	struct strbuf out = STRBUF_INIT;
	if (ctx->json)
		list_json(&out, v, n);
	else
		list_text(&out, v, n);
	cmd_print(&out);
	strbuf_release(&out);
	db_experiments_free(v, n);
	return EXIT_OK;
}

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.summary = "list the stored experiments",
	.args_usage = "",
	.options = NULL,
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_list_exec,
};
