/*
 * report-html: one self-contained HTML report of a ranked experiment:
 * inline CSS and SVG only (no scripts, no network), so it can be mailed,
 * archived and opened anywhere.  Pure: renders into a strbuf.
 *
 * Stable hooks for tests and scrapers: table#ranking, svg#chart-bars (rect.bar,
 * line.whisker, circle.run, g#legend), svg#chart-scatter (circle.point), section#recommendation,
 * ul#lineage (li.rerun-of, li.extended, li.reruns), table.op#op-NAME (one per operation of a
 * multi-metric benchmark), pre#config.
 */
#ifndef TA_REPORT_HTML_H
#define TA_REPORT_HTML_H

#include <stdint.h>

#include "../util/strbuf.h"
#include "rank.h"

/*
 * Where an experiment comes from and what became of it, read from the
 * database by the caller: the experiment it reruns (parent_id 0: none),
 * its reruns, and its blocks planned now against the sweep's configured
 * repetitions (more: `extend` added blocks; 0: unknown).
 */
struct report_lineage {
	int64_t parent_id;
	const char *parent_name;	/* NULL: unknown (deleted) */
	const int64_t *children;
	size_t nchildren;
	int configured_blocks, blocks;
};

/* The report of r; lin NULL: no lineage shown. */
void report_html_render(const struct rank_result *r, const struct report_lineage *lin,
			struct strbuf *out);
/* Appends s with &, <, >, " and ' escaped (NULL appends nothing). */
void report_html_escape(struct strbuf *out, const char *s);

#endif
