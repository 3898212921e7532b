/*
 * plan-store: the plan handed to the database as its configuration records
 * and planned runs; see plan-store.h.
 */
#include "plan-store.h"

#include <stdlib.h>

#include "../schema/db-plan.h"
#include "../util/strbuf.h"

int plan_store(struct db *db, int64_t exp_id, const struct plan *p, int64_t *config_ids_out,
	       struct ta_err *err)
{
	struct config_record *rows = xcalloc(p->nconfigs + 1, sizeof(*rows));
	for (size_t i = 0; i < p->nconfigs; i++)
		rows[i] = p->configs[i].rec;	/* borrowed for the call */
	struct db_plan_run *runs = xcalloc(p->nruns + 1, sizeof(*runs));
	for (size_t i = 0; i < p->nruns; i++)
		runs[i] = (struct db_plan_run){ .config = p->runs[i].config,
						.repetition = p->runs[i].repetition,
						.order = p->runs[i].order };
	int rc = db_plan_store(db, exp_id, rows, p->nconfigs, runs, p->nruns, config_ids_out, err);
	free(rows);
	free(runs);
	return rc;
}
