/*
 * plan-store: the plan handed to the database as the schema's own rows;
 * see plan-store.h.
 */
#include "plan-store.h"

#include <stdlib.h>

#include "../schema/db-plan.h"
#include "../util/strbuf.h"

int plan_store(struct db *db, int64_t exp_id, const struct plan *p, int64_t *config_ids_out,
	       struct ta_err *err)
{
	const struct sweep_config *cfg = p->cfg;
	const char **names = xcalloc(cfg->nknobs + 1, sizeof(*names));
	for (size_t k = 0; k < cfg->nknobs; k++)
		names[k] = cfg->knobs[k].name;
	struct db_plan_config *rows = xcalloc(p->nconfigs + 1, sizeof(*rows));
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct plan_config *c = &p->configs[i];
		rows[i] = (struct db_plan_config){
			.idx = c->index, .key = c->key, .vcpus = c->vcpus,
			.sockets = c->shape.sockets, .dies = c->shape.dies,
			.cores = c->shape.cores, .threads = c->shape.threads,
			.pinning = c->pinning->name, .noise = c->noise->name,
			.knob_names = names, .knob_values = c->knob_values,
			.nknobs = cfg->nknobs, .factors_json = plan_factors_json(p, c),
			.is_baseline = c->baseline,
		};
	}
	struct db_plan_run *runs = xcalloc(p->nruns + 1, sizeof(*runs));
	for (size_t i = 0; i < p->nruns; i++)
		runs[i] = (struct db_plan_run){ .config = p->runs[i].config,
						.repetition = p->runs[i].repetition,
						.order = p->runs[i].order };
	int rc = db_plan_store(db, exp_id, rows, p->nconfigs, runs, p->nruns, config_ids_out, err);
	for (size_t i = 0; i < p->nconfigs; i++)
		free((char *)rows[i].factors_json);
	free(rows);
	free(runs);
	free(names);
	return rc;
}
