/*
 * rank_load: what rank, recommend and report all start with — open the
 * database, read the experiment whole, rank it — in one place.
 */
#include "../schema/db-results.h"
#include "dbread.h"
#include "rank.h"

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
	if (rank_compute(res, metric, r, err) < 0) {
		db_results_release(res);
		return -1;
	}
	return 0;
}
