/*
 * db-fixture: builds an experiment's rows one at a time, with defaults —
 * for the tests' fixtures (tests/unit/rank-fixtures.h) and importers, not
 * for the tool itself (which stores plans with db-plan and runs with
 * db-runs).  Here so that all SQL stays in schema/.
 */
#ifndef TA_DB_FIXTURE_H
#define TA_DB_FIXTURE_H

#include <stdint.h>

#include "../model/config-record.h"
#include "../util/metricdir.h"
#include "db.h"

struct db_fixture_run {
	int repetition, order_index;
	const char *status;	/* NULL: 'ok' */
	const char *error;
	int topology_ok;	/* -1: NULL */
	int64_t lost_events;	/* -1: NULL */
};

/*
 * One configuration as db_plan_store() writes it, with defaults for
 * fixtures: dies 0 means 1, pinning and noise NULL 'none'; decision and
 * environment NULL are left NULL (the reader takes the key and the noise).
 */
int db_fixture_config_add(struct db *db, int64_t experiment_id, const struct config_record *c,
			  int64_t *id_out, struct ta_err *err);
int db_fixture_run_add(struct db *db, int64_t configuration_id,
		       const struct db_fixture_run *r, int64_t *id_out, struct ta_err *err);
/* unit NULL: NULL; dir as db_run_store stores it (UNKNOWN: NULL). */
int db_fixture_metric_add(struct db *db, int64_t run_id, const char *name, double value,
			  const char *unit, enum metric_dir dir, struct ta_err *err);
/* vcpu -1: NULL (all vCPUs). */
int db_fixture_exit_add(struct db *db, int64_t run_id, const char *source, int vcpu,
			const char *reason, int64_t count, struct ta_err *err);

#endif
