/*
 * report-html: one self-contained HTML report of a ranked experiment:
 * inline CSS and SVG only (no scripts, no network), so it can be mailed,
 * archived and opened anywhere.  Pure: renders into a strbuf.
 *
 * Stable hooks for tests and scrapers: table#ranking, svg#chart-bars (rect.bar,
 * line.whisker, circle.run), svg#chart-scatter (circle.point), section#recommendation,
 * pre#config.
 */
#ifndef TA_REPORT_HTML_H
#define TA_REPORT_HTML_H

#include "../util/strbuf.h"
#include "rank.h"

void report_html_render(const struct rank_result *r, struct strbuf *out);
/* Appends s with &, <, >, " and ' escaped (NULL appends nothing). */
void report_html_escape(struct strbuf *out, const char *s);

#endif
