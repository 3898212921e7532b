/*
 * rank_load: what rank, recommend and report all start with — open the
 * database, read the experiment whole, take the advisor settings stored
 * with it, rank it — in one place.
 */
#include <math.h>
#include <string.h>

#include "../schema/db-results.h"
#include "../util/json.h"
#include "dbread.h"
#include "hostfx.h"
#include "rank.h"

void rank_options_from_stored(const struct db_results *res, struct rank_options *o)
{
	rank_options_init(o);
	const struct db_advisor_settings *a = &res->exp.advisor;
	if (!a->known) {
		o->settings_unknown = true;
		return;
	}
	o->objective = !strcmp(a->objective, "mean") ? DECIDE_OBJECTIVE_MEAN
						     : DECIDE_OBJECTIVE_WORST;
	o->equivalence = a->equivalence;
	if (!isnan(a->max_failure_rate))
		o->max_failure_rate = a->max_failure_rate;
	o->environment = (const char *const *)a->environment;
	o->nenvironment = a->nenvironment;
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
	rank_options_from_stored(res, &o);
	o.metric = metric;
	rc = rank_compute_opts(res, &o, r, err);
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
	struct hostfx fx;
	if (hostfx_compute(&r, &fx))
		r.hosts = &fx;
	if (json) {
		struct json_writer w;
		json_init(&w, out, true);
		rank_json(&w, &r);
	} else {
		rank_text(out, &r);
	}
	if (r.hosts)
		hostfx_release(&fx);
	rank_result_release(&r);
	db_results_release(&res);
	return 0;
}
