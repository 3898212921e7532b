/*
 * hostfx: the host x configuration interaction of a sweep run on several
 * hosts, as a diagnostic next to the ranking (rank, report).
 *
 * Blocks are the unit of pairing, so each configuration's effect is taken
 * within its block: its log metric minus the mean log metric of the
 * block's configurations (the block, and with it the host, cancels).
 * Averaged over each host's blocks, these effects show whether a
 * configuration does as well on every host; an F test of the host x
 * configuration interaction against the spread of the effects between
 * blocks of one host says whether the differences are more than noise.
 * A configuration that wins on one host and loses on another is a finding
 * about the hosts, not noise to average away: the best per host is shown.
 *
 * Only complete blocks count (every configuration still raced has a
 * successful run with the metric) and only configurations a race did not
 * eliminate.  Pure: no I/O.
 */
#ifndef TA_HOSTFX_H
#define TA_HOSTFX_H

#include <stdbool.h>
#include <stddef.h>

#include "../schema/db-results.h"
#include "../util/json.h"
#include "../util/strbuf.h"

struct hostfx {
	const char *metric;
	bool higher_is_better;
	size_t nhosts;
	const char **hosts;		/* point into the results, by name */
	size_t nconfigs;
	const struct db_results_config **configs;
	double *effect;			/* [c * nhosts + h]: mean log effect; NAN: no block */
	int *blocks;			/* [h]: complete blocks on host h */
	size_t nblocks;			/* complete blocks in all */
	size_t *best;			/* [h]: index into configs of the best there */
	bool best_differs;		/* not the same best on every host */
	double f, p;			/* interaction F and its p; NAN: not testable */
	int df1, df2;
};

/*
 * Computes the diagnostic of metric `metric` (direction higher_is_better)
 * over res.  Returns false (and out empty) when the runs come from fewer
 * than two hosts or leave fewer than two configurations in complete blocks.
 */
bool hostfx_compute(const struct db_results *res, const char *metric, bool higher_is_better,
		    struct hostfx *out);
void hostfx_release(struct hostfx *h);

/* A text section (rank), a JSON value (rank --json), an HTML section (report). */
void hostfx_text(struct strbuf *out, const struct hostfx *h);
void hostfx_json(struct json_writer *w, const struct hostfx *h);
void hostfx_html(struct strbuf *out, const struct hostfx *h);

#endif
