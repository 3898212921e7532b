/*
 * race-replay: replays a stored race serially, block after block, over the
 * runs a sweep stored, and prints what it decides — what a distributed
 * sweep's race must equal (ordered block racing: the look after block k
 * uses blocks 1..k only).
 *
 *   race-replay DB EXP    (DB is changed: give it a copy)
 *
 * Clears the experiment's eliminations and the race's progress, then asks
 * the race's scheduler (advisor/race-run.h, what `run` uses) after blocks
 * 1, 2, ... as a serial sweep would, and prints one line per elimination,
 * "KEY after BLOCK against KEY", then "stop REASON after BLOCK".  The same
 * lines from the sweep's own database (the test's sqlite3 query) must match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/race-run.h"
#include "experiments/config.h"
#include "experiments/plan.h"
#include "schema/db-race.h"
#include "schema/db.h"

static int fail(const struct ta_err *err)
{
	fprintf(stderr, "race-replay: %s\n", err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: race-replay DB EXP\n");
		return 2;
	}
	struct ta_err err = { 0 };
	struct db *db = db_open(argv[1], false, &err);
	if (!db)
		return fail(&err);
	struct db_experiment e;
	if (db_experiment_get(db, argv[2], &e, &err) < 0)
		return fail(&err);
	struct sweep_config *cfg = config_parse("stored", e.config_yaml, strlen(e.config_yaml),
						&err);
	struct host_facts host;
	host_facts_read(&host);
	struct plan *p = cfg ? plan_expand(cfg, &host, e.seed, &err) : NULL;
	if (!p)
		return fail(&err);
	char sql[256];
	snprintf(sql, sizeof(sql), "DELETE FROM eliminations WHERE configuration_id IN (SELECT id "
		 "FROM configurations WHERE experiment_id = %lld); UPDATE races SET "
		 "blocks_evaluated = 0, stop_reason = NULL, stopped_after = NULL WHERE "
		 "experiment_id = %lld", (long long)e.id, (long long)e.id);
	if (sqlite3_exec(db->handle, sql, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "race-replay: %s\n", sqlite3_errmsg(db->handle));
		return 1;
	}
	struct db_race race;
	bool raced;
	if (db_race_get(db, e.id, &race, &raced, &err) < 0)
		return fail(&err);
	if (!raced) {
		fprintf(stderr, "race-replay: experiment %s is not raced\n", argv[2]);
		return 1;
	}
	struct race_run rr;
	if (race_run_init(&rr, db, e.id, p, true, &err) < 0)
		return fail(&err);
	for (int k = 1; k <= race.max_blocks; k++)
		if (rr.sched.between_blocks(rr.sched.data, db, e.id, k, &err) < 0)
			return fail(&err);
	race_run_release(&rr);
	db_race_release(&race);
	struct db_elimination *el;
	size_t nel;
	if (db_eliminations_list(db, e.id, &el, &nel, &err) < 0 ||
	    db_race_get(db, e.id, &race, &raced, &err) < 0)
		return fail(&err);
	for (size_t i = 0; i < nel; i++)
		printf("%s after %d against %s\n", el[i].key, el[i].after_block, el[i].against_key);
	printf("stop %s after %d\n", race.stop_reason ? race.stop_reason : "none",
	       race.stopped_after);
	db_eliminations_free(el, nel);
	db_race_release(&race);
	plan_free(p);
	config_free(cfg);
	db_experiment_release(&e);
	db_close(db);
	return 0;
}
