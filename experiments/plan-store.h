/*
 * plan-store: stores a plan.  The database layer knows nothing of plans:
 * this hands it the configurations' records (model/config-record.h, each
 * whole: key, decision, environment, every factor, the guest's arch and
 * <cpu> once controller_guests_describe filled them) and the planned runs
 * (schema/db-plan.h).
 */
#ifndef TA_PLAN_STORE_H
#define TA_PLAN_STORE_H

#include <stdint.h>

#include "../schema/db.h"
#include "../util/err.h"
#include "plan.h"

/*
 * Stores plan p for experiment exp_id in one transaction: every
 * configuration and one 'planned' run per run of the plan, in plan order.
 * config_ids_out (optional, p->nconfigs long) receives the new ids.
 */
int plan_store(struct db *db, int64_t exp_id, const struct plan *p, int64_t *config_ids_out,
	       struct ta_err *err);

#endif
