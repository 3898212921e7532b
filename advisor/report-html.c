/* report-html: the self-contained HTML report; see report-html.h. */
#include "report-html.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deploy.h"
#include "hostfx.h"

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

void report_html_escape(struct strbuf *out, const char *s)
{
	const char *end = s ? s + strlen(s) : s;
	while (s && *s) {
		uint32_t cp = 0;
		size_t n = strbuf_utf8_len(s, (size_t)(end - s), &cp);
		switch (*s) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&#39;"); break;
		default:
			/* Controls (ESC, BEL, DEL, C1) shown, as `show` prints them;
			 * bytes that are not UTF-8 are left to report_html_render's
			 * last pass, which counts them. */
			if (n && *s != '\n' && *s != '\t' &&
			    (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))) {
				strbuf_add_printable(out, s, n);
				s += n;
				continue;
			}
			strbuf_add(out, s, n ? n : 1);
			s += n ? n : 1;
			continue;
		}
		s++;
	}
}

/*
 * Makes out[start..] valid UTF-8, every byte that is not replaced by
 * U+FFFD (benchmark output is stored as the benchmark wrote it); returns
 * how many were.
 */
static size_t utf8_repair(struct strbuf *out, size_t start)
{
	struct strbuf fixed = STRBUF_INIT;
	size_t replaced = strbuf_add_valid_utf8(&fixed, out->buf + start, out->len - start);
	if (replaced) {
		out->len = start;
		strbuf_add(out, fixed.buf, fixed.len);
	}
	strbuf_release(&fixed);
	return replaced;
}

/* A "nice" tick step (1, 2 or 5 x 10^k) giving about `want` ticks over range. */
static double nice_step(double range, int want)
{
	if (!(range > 0))
		return 1;
	double raw = range / want;
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* A linear axis mapping [lo, hi] to pixels [p0, p1], ticks every `step`. */
struct axis {
	double lo, hi, p0, p1;
	double step;
};

static double axis_map(const struct axis *a, double v)
{
	return a->p0 + (v - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

/* Widens [lo, hi] to tick multiples, keeping a zero-width range drawable. */
static void axis_fit(struct axis *a, double lo, double hi)
{
	if (!(hi > lo)) {
		double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
		lo -= pad;
		hi += pad;
	}
	double step = nice_step(hi - lo, 5);
	a->step = step;
	a->lo = floor(lo / step) * step;
	a->hi = ceil(hi / step) * step;
	if (a->hi == a->lo)
		a->hi = a->lo + step;
}

static void svg_ticks_x(struct strbuf *o, const struct axis *a, double y0, double y1)
{
	double step = a->step;
	for (double v = a->lo; v <= a->hi + step / 2; v += step) {
		double x = axis_map(a, v);
		strbuf_addf(o, "<line class='grid' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
			    "<text x='%.1f' y='%.1f' text-anchor='middle'>%.6g</text>\n",
			    x, y0, x, y1, x, y1 + 16, fabs(v) < step / 1e6 ? 0 : v);
	}
}

static void svg_ticks_y(struct strbuf *o, const struct axis *a, double x0, double x1)
{
	double step = a->step;
	for (double v = a->lo; v <= a->hi + step / 2; v += step) {
		double y = axis_map(a, v);
		strbuf_addf(o, "<line class='grid' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
			    "<text x='%.1f' y='%.1f' text-anchor='end'>%.6g</text>\n",
			    x0, y, x1, y, x0 - 6, y + 4, fabs(v) < step / 1e6 ? 0 : v);
	}
}

/*
 * Horizontal bars: one row per configuration, bar = mean, whisker = 95 % CI
 * of the mean, dots = the individual runs (outliers in red).
 */
/* Pixels a label of n characters needs at 12 px sans-serif (about 6.8 px each). */
static double label_px(size_t n)
{
	return 6.8 * (double)n;
}

static size_t longest_key(const struct rank_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nentries; i++)
		if (strlen(r->entries[i].config->rec.key) > n)
			n = strlen(r->entries[i].config->rec.key);
	return n;
}

/* The bar colours, one per role; the legend lists them in this order. */
static const struct {
	const char *fill, *label;
} bar_roles[] = {
	{ "#2ca02c", "recommended" },
	{ "#7f7f7f", "baseline" },
	{ "#98df8a", "best / tied with the best" },
	{ "#aec7e8", "other configuration" },
	{ "#e0e0e0", "eliminated by the race" },
	{ "#ffbb78", "host reference (benchmark on the host, not a VM shape)" },
};

static size_t bar_role(const struct rank_result *r, const struct rank_entry *e)
{
	if (e->host_reference)
		return 5;
	if (e->decision == r->recommended_decision && rank_decisive(r))
		return 0;
	if (e->decision == r->baseline_decision)
		return 1;
	if (e->eliminated_block > 0)
		return 4;
	if (e->is_best || e->tied_with_best)
		return 2;
	return 3;
}

/* What the bar chart draws, so that its legend lists that and nothing else. */
struct bar_keys {
	bool role[sizeof(bar_roles) / sizeof(bar_roles[0])];
	bool outlier, whisker;
	size_t rows;
};

static void bar_keys_of(const struct rank_result *r, bool geo, struct bar_keys *k)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		if (!e->s.n)
			continue;
		struct rank_location loc;
		rank_entry_location(e, geo, &loc);
		k->role[bar_role(r, e)] = true;
		k->whisker |= !isnan(loc.lo);
		for (size_t j = 0; j < e->s.n; j++)
			k->outlier |= e->outlier[j];
	}
	for (size_t i = 0; i < sizeof(k->role) / sizeof(k->role[0]); i++)
		k->rows += k->role[i];
	k->rows += 1 + k->outlier + k->whisker;	/* "one run" always */
}

static void chart_legend(struct strbuf *o, const struct bar_keys *k, bool geo, double x,
			 double y)
{
	strbuf_addstr(o, "<g id='legend'>\n");
	double row = y;
	for (size_t i = 0; i < sizeof(bar_roles) / sizeof(bar_roles[0]); i++) {
		if (!k->role[i])
			continue;
		strbuf_addf(o, "<rect x='%.0f' y='%.0f' width='12' height='12' fill='%s' "
			    "stroke='#999'/><text class='legend' x='%.0f' y='%.0f'>%s</text>\n", x,
			    row, bar_roles[i].fill, x + 18, row + 10, bar_roles[i].label);
		row += 16;
	}
	strbuf_addf(o, "<circle class='key-run' cx='%.0f' cy='%.0f' r='5'/><text class='legend' "
		    "x='%.0f' y='%.0f'>one run</text>\n", x + 6, row + 6, x + 18, row + 10);
	row += 16;
	if (k->outlier) {
		strbuf_addf(o, "<circle class='key-run key-outlier' cx='%.0f' cy='%.0f' r='5'/>"
			    "<text class='legend' x='%.0f' y='%.0f'>outlier run (far from its "
			    "configuration's median; kept)</text>\n", x + 6, row + 6, x + 18, row + 10);
		row += 16;
	}
	if (k->whisker)
		strbuf_addf(o, "<line class='key-whisker' x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f'/>"
			    "<text class='legend' x='%.0f' y='%.0f'>95 %% CI of the %s</text>\n", x,
			    row + 6, x + 12, row + 6, x + 18, row + 10,
			    geo ? "geometric mean (log scale)" : "mean");
	strbuf_addstr(o, "</g>\n");
}

static void chart_bars(struct strbuf *o, const struct rank_result *r)
{
	/* Room for the longest configuration key left of the bars. */
	const double left = fmin(fmax(label_px(longest_key(r)) + 20, 150), 560);
	const double right = 1060, row = 30;
	bool geo = rank_locations_geometric(r);
	struct bar_keys keys;
	bar_keys_of(r, geo, &keys);
	const double legend_h = 16 * (double)keys.rows + 10;
	const double top = 20 + legend_h;
	double height = top + row * (double)r->nentries + 40;
	/* Bars are lengths from 0: the axis always starts there (metrics are
	 * positive); whiskers below 0 (arithmetic ones) are cut at the axis. */
	double hi = 0;
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		struct rank_location loc;
		rank_entry_location(e, geo, &loc);
		for (size_t j = 0; j < e->s.n; j++)
			hi = fmax(hi, e->values[j]);
		if (!isnan(loc.hi))
			hi = fmax(hi, loc.hi);
	}
	struct axis ax = { 0, 0, left, right, 1 };
	axis_fit(&ax, 0, hi);
	double bottom = top + row * (double)r->nentries;
	strbuf_addf(o, "<svg id='chart-bars' xmlns='http://www.w3.org/2000/svg' width='1100' "
		    "height='%.0f' viewBox='0 0 1100 %.0f' role='img'>\n"
		    "<title>%s %s per configuration with 95%% CI and runs</title>\n",
		    height, height, geo ? "geometric mean" : "mean", r->metric);
	chart_legend(o, &keys, geo, left, 14);
	svg_ticks_x(o, &ax, top, bottom);
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		double y = top + row * (double)i;
		strbuf_addf(o, "<text class='label' x='%.1f' y='%.1f' text-anchor='end'>",
			    left - 8, y + row / 2 + 4);
		report_html_escape(o, e->config->rec.key);
		strbuf_addstr(o, "</text>\n");
		if (!e->s.n)
			continue;
		size_t role = bar_role(r, e);
		struct rank_location loc;
		rank_entry_location(e, geo, &loc);
		double x0 = axis_map(&ax, 0), x1 = axis_map(&ax, loc.mean);
		strbuf_addf(o, "<rect class='bar' x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
			    "fill='%s'><title>", fmin(x0, x1), y + 5, fabs(x1 - x0), row - 10,
			    bar_roles[role].fill);
		report_html_escape(o, e->config->rec.key);
		strbuf_addf(o, ": %s %.6g, n %zu (%s)</title></rect>\n",
			    geo ? "geometric mean" : "mean", loc.mean, e->s.n, bar_roles[role].label);
		if (!isnan(loc.lo)) {
			double a = axis_map(&ax, fmax(loc.lo, 0)), b = axis_map(&ax, loc.hi);
			double ym = y + row / 2;
			strbuf_addf(o, "<line class='whisker' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
				    "<line class='whisker' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
				    "<line class='whisker' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>\n",
				    a, ym, b, ym, a, ym - 7, a, ym + 7, b, ym - 7, b, ym + 7);
		}
		for (size_t j = 0; j < e->s.n; j++) {
			/* Spread the dots vertically a little so equal values stay visible. */
			double jitter = ((double)(j % 5) - 2) * 2.5;
			const struct db_results_run *run = e->value_runs[j];
			strbuf_addf(o, "<circle class='run%s' cx='%.1f' cy='%.1f' r='5'>"
				    "<title>repetition %d: %.6g", e->outlier[j] ? " outlier" : "",
				    axis_map(&ax, e->values[j]), y + row / 2 + jitter,
				    run->repetition + 1, e->values[j]);
			if (!isnan(run->loadavg))
				strbuf_addf(o, "; host load %.2f", run->loadavg);
			if (!isnan(run->loadavg) && run->host_cpus > 0)
				strbuf_addf(o, " on %d CPUs%s", run->host_cpus,
					    rank_run_busy(run) ? " (busy)" : "");
			strbuf_addstr(o, "</title></circle>\n");
		}
	}
	strbuf_addf(o, "<text x='%.1f' y='%.1f' text-anchor='middle'>", (left + right) / 2,
		    bottom + 34);
	report_html_escape(o, r->metric);
	if (r->unit) {
		strbuf_addstr(o, " (");
		report_html_escape(o, r->unit);
		strbuf_addstr(o, ")");
	}
	strbuf_addstr(o, "</text>\n</svg>\n");
}

/* The x of the scatter for one run: ganged exits/s, ganged exits, or all exits. */
static bool scatter_x(const struct db_results_run *run, const char *what, double *x)
{
	if (!strcmp(what, "exits per run")) {
		if (!run->nexits)
			return false;
		*x = 0;
		for (size_t i = 0; i < run->nexits; i++)
			*x += (double)run->exits[i].count;
		return true;
	}
	const struct db_results_metric *m = db_results_run_metric(run, what);
	if (m)
		*x = m->value;
	return m != NULL;
}

static void chart_scatter(struct strbuf *o, const struct rank_result *r)
{
	const char *candidates[] = { "gang_exits_per_s", "gang_exits", "exits per run" };
	const char *what = NULL;
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	for (size_t t = 0; t < 3 && !what; t++) {
		for (size_t i = 0; i < r->nentries; i++) {
			const struct rank_entry *e = &r->entries[i];
			for (size_t j = 0; j < e->s.n; j++) {
				double x;
				if (!scatter_x(e->value_runs[j], candidates[t], &x))
					continue;
				what = candidates[t];
				xlo = fmin(xlo, x);
				xhi = fmax(xhi, x);
				ylo = fmin(ylo, e->values[j]);
				yhi = fmax(yhi, e->values[j]);
			}
		}
	}
	if (!what) {
		strbuf_addstr(o, "<p class='note'>No ganged-exit or exit-reason data was "
			      "recorded for this experiment: nothing to plot against the "
			      "metric (ganged exits are not applicable on this host).</p>\n");
		return;
	}
	/* The legend (one line per configuration) sits right of the plot. */
	const double left = 90, top = 20, bottom = 380, legend_row = 16;
	const double right = fmin(820, 1100 - 30 - 0.95 * label_px(longest_key(r)));
	double height = fmax(440, top + legend_row * (double)r->nentries + 20);
	struct axis ax = { 0, 0, left, right, 1 }, ay = { 0, 0, bottom, top, 1 };
	/* Both axes from 0: counts and throughputs are read as lengths. */
	axis_fit(&ax, fmin(0, xlo), xhi);
	axis_fit(&ay, fmin(0, ylo), yhi);
	strbuf_addf(o, "<svg id='chart-scatter' xmlns='http://www.w3.org/2000/svg' width='1100' "
		    "height='%.0f' viewBox='0 0 1100 %.0f' role='img'>\n<title>%s against ",
		    height, height, what);
	report_html_escape(o, r->metric);
	strbuf_addstr(o, " per run</title>\n");
	svg_ticks_x(o, &ax, top, bottom);
	svg_ticks_y(o, &ay, left, right);
	size_t keyed = 0;	/* legend rows: the configurations with a point drawn */
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		const char *color = palette[i % NPALETTE];
		size_t drawn = 0;
		for (size_t j = 0; j < e->s.n; j++) {
			double x;
			if (!scatter_x(e->value_runs[j], what, &x))
				continue;
			drawn++;
			strbuf_addf(o, "<circle class='point' cx='%.1f' cy='%.1f' r='5.5' "
				    "fill='%s'><title>", axis_map(&ax, x), axis_map(&ay, e->values[j]),
				    color);
			report_html_escape(o, e->config->rec.key);
			strbuf_addf(o, " rep %d: %.6g, %.6g</title></circle>\n",
				    e->value_runs[j]->repetition + 1, x, e->values[j]);
		}
		if (!drawn)
			continue;
		strbuf_addf(o, "<rect class='key' x='%.0f' y='%.0f' width='11' height='11' "
			    "fill='%s'/><text class='legend' x='%.0f' y='%.0f'>", right + 15,
			    top + legend_row * (double)keyed, color, right + 31,
			    top + legend_row * (double)keyed + 10);
		report_html_escape(o, e->config->rec.key);
		strbuf_addstr(o, "</text>\n");
		keyed++;
	}
	strbuf_addf(o, "<text x='%.0f' y='%.0f' text-anchor='middle'>%s</text>\n",
		    (left + right) / 2, bottom + 40, what);
	strbuf_addf(o, "<text x='20' y='%.0f' text-anchor='middle' transform='rotate(-90 20 %.0f)'>",
		    (top + bottom) / 2, (top + bottom) / 2);
	report_html_escape(o, r->metric);
	strbuf_addstr(o, "</text>\n</svg>\n");
	if (r->correlation_x)
		strbuf_addf(o, "<p>Spearman correlation of %s with the metric: %.2f over %zu "
			    "runs.</p>\n", r->correlation_x, r->spearman, r->spearman_n);
}

static void fmt_interval(struct strbuf *o, double lo, double hi)
{
	if (isnan(lo))
		strbuf_addstr(o, "&ndash;");
	else
		strbuf_addf(o, "%.6g &ndash; %.6g", lo, hi);
}

/* A raced experiment: why the race stopped, and each configuration it dropped. */
static void section_race(struct strbuf *o, const struct rank_result *r)
{
	const struct db_results *res = r->res;
	if (!res->raced)
		return;
	strbuf_addstr(o, "<h2 id='race'>Race</h2>\n<p>");
	if (res->race_stop_reason) {
		strbuf_addf(o, "Stopped after block %d: ", res->race_stopped_after);
		report_html_escape(o, res->race_stop_reason);
	} else {
		strbuf_addstr(o, "Not finished");
	}
	strbuf_addf(o, ". First test after block %d, at most %d blocks. After each block from "
		    "then on, a decision shown worse than the leader (one-sided, on the same "
		    "paired comparison of log values as the verdicts, its p multiplied for the "
		    "other survivors and the looks the race may take), or failing too often, "
		    "was dropped with all its configurations; the baseline never is.</p>\n",
		    res->race_first_test, res->race_max_blocks);
	strbuf_addstr(o, "<table id='eliminations'>\n<thead><tr><th>configuration</th>"
		      "<th>eliminated after block</th><th>against</th><th>p (adjusted)</th></tr>"
		      "</thead>\n<tbody>\n");
	size_t n = 0;
	for (int block = 1; block <= res->race_max_blocks; block++)
		for (size_t i = 0; i < res->nconfigs; i++) {
			const struct db_results_config *c = &res->configs[i];
			if (c->eliminated_block != block)
				continue;
			strbuf_addstr(o, "<tr><td>");
			report_html_escape(o, c->rec.key);
			strbuf_addf(o, "</td><td>%d</td><td>", block);
			report_html_escape(o, c->eliminated_against ? c->eliminated_against : "(failing)");
			strbuf_addf(o, "</td><td>%.3g</td></tr>\n", c->eliminated_p);
			n++;
		}
	if (!n)
		strbuf_addstr(o, "<tr><td colspan='4'>none: every configuration ran to the end"
			      "</td></tr>\n");
	strbuf_addstr(o, "</tbody></table>\n");
}

/*
 * The host's load during the runs: a summary, and every run during which
 * the load average exceeded the host's CPUs (each run's load is in its
 * dot's tooltip).
 */
static void section_load(struct strbuf *o, const struct rank_result *r)
{
	size_t n = 0, busy = 0;
	double max = 0;
	for (size_t c = 0; c < r->res->nconfigs; c++)
		for (size_t j = 0; j < r->res->configs[c].nruns; j++) {
			const struct db_results_run *run = &r->res->configs[c].runs[j];
			if (isnan(run->loadavg))
				continue;
			n++;
			busy += rank_run_busy(run);
			max = fmax(max, run->loadavg);
		}
	if (!n)
		return;
	strbuf_addf(o, "<h2 id='load'>Host load</h2>\n<p>The host's 1-minute load average at "
		    "the end of each run (in each run's tooltip): at most %.2f over %zu runs; "
		    "%zu above the host's CPUs.</p>\n", max, n, busy);
	if (!busy)
		return;
	strbuf_addstr(o, "<table id='busy'>\n<tr><th>configuration</th><th>repetition</th>"
		      "<th>host</th><th>load</th><th>CPUs</th></tr>\n");
	for (size_t c = 0; c < r->res->nconfigs; c++)
		for (size_t j = 0; j < r->res->configs[c].nruns; j++) {
			const struct db_results_run *run = &r->res->configs[c].runs[j];
			if (!rank_run_busy(run))
				continue;
			strbuf_addstr(o, "<tr><td style='text-align:left'>");
			report_html_escape(o, r->res->configs[c].rec.key);
			strbuf_addf(o, "</td><td>%d</td><td>", run->repetition + 1);
			report_html_escape(o, run->host ? run->host : "");
			strbuf_addf(o, "</td><td>%.2f</td><td>%d</td></tr>\n", run->loadavg,
				    run->host_cpus);
		}
	strbuf_addstr(o, "</table>\n");
}

/* The configurations of one environment level. */
static void table_level(struct strbuf *o, const struct rank_result *r, size_t level)
{
	bool geo = rank_locations_geometric(r);
	strbuf_addf(o, "<table%s class='ranking'>\n<thead><tr><th>rank</th><th>configuration</th>"
		    "<th>n</th><th>%s</th><th>95%% CI</th><th>CV</th><th>vs baseline%s "
		    "[%.4g %% CI]</th><th>verdict</th><th>status</th><th>ganged exits/s</th>"
		    "<th>main exits</th><th>failed</th></tr></thead>\n<tbody>\n",
		    level == 0 ? " id='ranking'" : "", geo ? "geometric mean" : "mean",
		    r->higher_is_better ? "" : ": change of the value (lower is better)",
		    100 * (1 - r->level_alpha));
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		if (e->level != level)
			continue;
		strbuf_addf(o, "<tr class='%s'>", e->host_reference ? "hostref"
			    : e->decision == r->recommended_decision && rank_decisive(r) ? "recommended"
			    : e->eliminated_block > 0 ? "eliminated"
			    : e->is_best || e->tied_with_best ? "tied" : "");
		if (e->position)
			strbuf_addf(o, "<td>%zu</td><td>", e->position);
		else
			strbuf_addstr(o, "<td>&ndash;</td><td>");
		/* Long keys may wrap after each '/', numbers never wrap. */
		for (const char *k = e->config->rec.key; *k; k++) {
			char c[2] = { *k, 0 };
			report_html_escape(o, c);
			if (*k == '/')
				strbuf_addstr(o, "<wbr>");
		}
		if (e->decision == r->baseline_decision)
			strbuf_addstr(o, " <em>(baseline)</em>");
		if (e->host_reference)
			strbuf_addstr(o, " <em>(host reference)</em>");
		struct rank_location loc;
		rank_entry_location(e, geo, &loc);
		strbuf_addf(o, "</td><td>%zu</td><td>", e->s.n);
		if (e->s.n)
			strbuf_addf(o, "%.6g", loc.mean);
		strbuf_addstr(o, "</td><td>");
		fmt_interval(o, loc.lo, loc.hi);
		strbuf_addstr(o, "</td><td>");
		if (!isnan(e->s.cv))
			strbuf_addf(o, "%.1f %%", 100 * e->s.cv);
		strbuf_addstr(o, "</td><td>");
		if (e->decision == r->baseline_decision)
			strbuf_addstr(o, "baseline");
		else
			rank_format_change(o, e->gain, e->gain_lo, e->gain_hi, r->higher_is_better,
					   r->metric, r->unit, false);
		strbuf_addstr(o, "</td><td>");
		if (e->decision != r->baseline_decision)
			strbuf_addf(o, "<span class='v-%s'>%s</span>", decide_verdict_name(e->verdict),
				    decide_verdict_name(e->verdict));
		strbuf_addstr(o, "</td><td class='status'>");
		struct strbuf st = STRBUF_INIT;
		rank_entry_status(&st, r, e);
		report_html_escape(o, strbuf_str(&st));
		strbuf_release(&st);
		strbuf_addstr(o, "</td><td>");
		if (isnan(e->gang_exits_per_s))
			strbuf_addstr(o, isnan(e->gang_exits) ? "n/a" : "&ndash;");
		else
			strbuf_addf(o, "%.4g", e->gang_exits_per_s);
		strbuf_addstr(o, "</td><td>");
		for (size_t t = 0; t < e->ntop_exits; t++) {
			strbuf_addstr(o, t ? ", " : "");
			report_html_escape(o, e->top_exits[t].reason);
			strbuf_addf(o, " %.4g", e->top_exits[t].mean_per_run);
			if (!isnan(e->top_exits[t].mean_time_s))
				strbuf_addf(o, " (%.4g ms)", e->top_exits[t].mean_time_s * 1e3);
		}
		strbuf_addf(o, "</td><td>%zu</td></tr>\n", e->nfailed);
	}
	strbuf_addstr(o, "</tbody>\n</table>\n");
}

/* Decisions over the environment levels, by the objective. */
static void table_decisions(struct strbuf *o, const struct rank_result *r)
{
	strbuf_addf(o, "<h2>Decisions over the %zu environment levels</h2>\n<p>Objective "
		    "<b>%s</b>: %s. Environment levels are conditions the choice must survive; "
		    "they are never recommended.</p>\n<table id='decisions'>\n<thead><tr>"
		    "<th>decision</th><th>objective %s [CI]</th><th>verdict</th>", r->nlevels,
		    decide_objective_name(r->objective), r->objective == DECIDE_OBJECTIVE_MEAN
		    ? "the geometric mean of the ratios to the baseline over the levels"
		    : "the worst ratio to the baseline over the levels", r->higher_is_better
		    ? "gain" : "change of the value");
	for (size_t l = 0; l < r->nlevels; l++) {
		strbuf_addstr(o, "<th>");
		report_html_escape(o, r->levels[l]);
		strbuf_addstr(o, "</th>");
	}
	strbuf_addstr(o, "</tr></thead>\n<tbody>\n");
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		strbuf_addf(o, "<tr class='%s'><td>", dec->host_reference ? "hostref"
			    : dec == r->recommended_decision && rank_decisive(r) ? "recommended" : "");
		report_html_escape(o, dec->key);
		if (dec == r->baseline_decision)
			strbuf_addstr(o, " <em>(baseline)</em>");
		if (dec->host_reference)
			strbuf_addstr(o, " <em>(host reference)</em>");
		strbuf_addstr(o, "</td><td>");
		if (dec != r->baseline_decision)
			rank_format_change(o, dec->gain, dec->gain_lo, dec->gain_hi,
					   r->higher_is_better, r->metric, r->unit, false);
		strbuf_addf(o, "</td><td>%s</td>", dec == r->baseline_decision ? ""
			    : decide_verdict_name(dec->verdict));
		for (size_t l = 0; l < r->nlevels; l++) {
			const struct rank_entry *e = dec->levels[l];
			strbuf_addstr(o, "<td>");
			if (e && dec != r->baseline_decision)
				rank_format_change(o, e->gain, e->gain_lo, e->gain_hi,
						   r->higher_is_better, r->metric, r->unit, false);
			else if (!e)
				strbuf_addstr(o, "not measured");
			strbuf_addstr(o, "</td>");
		}
		strbuf_addstr(o, "</tr>\n");
	}
	strbuf_addstr(o, "</tbody>\n</table>\n");
}

/* The operation of a multi-metric test: "GET" of "redis.GET.p50_ms" in family "redis". */
static size_t op_of(const char *family, const char *test, const char **op)
{
	*op = test + strlen(family) + 1;
	return strcspn(*op, ".");
}

/* One operation's table: each configuration's figures of the tests of op (a length-n prefix). */
static void table_op(struct strbuf *o, const struct rank_result *r, const struct rank_entry *ref,
		     const char *op, size_t n)
{
	strbuf_addstr(o, "<h3>");
	strbuf_add(o, op, n);
	strbuf_addstr(o, "</h3>\n<table class='op' id='op-");
	for (size_t i = 0; i < n; i++)	/* an id: letters, digits, - and _ only */
		strbuf_addch(o, isalnum((unsigned char)op[i]) ? op[i] : '_');
	strbuf_addstr(o, "'>\n<thead><tr><th>rank</th><th>configuration</th><th>n</th>");
	for (size_t t = 0; t < ref->ntests; t++) {
		const char *top;
		if (op_of(r->composite_family, ref->tests[t].name, &top) != n || strncmp(top, op, n))
			continue;
		const char *what = top[n] == '.' ? top + n + 1 : "throughput";
		strbuf_addstr(o, "<th>");
		report_html_escape(o, what);
		strbuf_addf(o, " (%s is better): geometric mean</th><th>95%% CI</th><th>vs baseline "
			    "[CI]</th>", ref->tests[t].higher_is_better ? "higher" : "lower");
	}
	strbuf_addstr(o, "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		if (e->position)
			strbuf_addf(o, "<tr><td>%zu</td><td>", e->position);
		else
			strbuf_addstr(o, "<tr><td>&ndash;</td><td>");
		report_html_escape(o, e->config->rec.key);
		if (e->decision == r->baseline_decision)
			strbuf_addstr(o, " <em>(baseline)</em>");
		strbuf_addf(o, "</td><td>%zu</td>", e->s.n);
		for (size_t t = 0; t < e->ntests; t++) {
			const struct rank_test_ratio *tr = &e->tests[t];
			const char *top;
			if (op_of(r->composite_family, tr->name, &top) != n || strncmp(top, op, n))
				continue;
			double *v = xmalloc((e->s.n + 1) * sizeof(*v));
			size_t nv = 0;
			for (size_t j = 0; j < e->s.n; j++) {
				const struct db_results_metric *m =
					db_results_run_metric(e->value_runs[j], tr->name);
				if (m)
					v[nv++] = m->value;
			}
			struct rank_location loc;
			rank_location_of(v, nv, &loc);
			free(v);
			strbuf_addstr(o, "<td>");
			if (nv)
				strbuf_addf(o, "%.6g%s", loc.mean, loc.geometric ? "" : " (arithmetic)");
			strbuf_addstr(o, "</td><td>");
			fmt_interval(o, loc.lo, loc.hi);
			strbuf_addstr(o, "</td><td>");
			if (e->decision == r->baseline_decision)
				strbuf_addstr(o, "baseline");
			else
				rank_format_change(o, tr->gain, tr->gain_lo, tr->gain_hi,
						   tr->higher_is_better, tr->name, NULL, false);
			strbuf_addstr(o, "</td>");
		}
		strbuf_addstr(o, "</tr>\n");
	}
	strbuf_addstr(o, "</tbody>\n</table>\n");
}

/*
 * A multi-metric benchmark (redis): one table per operation, each of its
 * tests (throughput, latencies) with its geometric mean and its gain over
 * the baseline in its own direction; the ranking above is the composite's
 * or the chosen metric's.
 */
static void section_ops(struct strbuf *o, const struct rank_result *r)
{
	const struct rank_entry *ref = NULL;
	for (size_t i = 0; i < r->nentries && !ref; i++)
		if (r->entries[i].ntests)
			ref = &r->entries[i];
	if (!r->composite_family || !ref)
		return;
	strbuf_addstr(o, "<h2 id='operations'>Per operation</h2>\n<p>Each ");
	report_html_escape(o, r->composite_family);
	strbuf_addstr(o, " test on its own: geometric means with 95 % intervals on the log "
		      "scale, gains over the baseline in each test's own direction (the same "
		      "paired comparison as the verdicts).</p>\n");
	for (size_t t = 0; t < ref->ntests; t++) {
		const char *op;
		size_t n = op_of(r->composite_family, ref->tests[t].name, &op);
		bool seen = false;
		for (size_t u = 0; u < t && !seen; u++) {
			const char *prev;
			seen = op_of(r->composite_family, ref->tests[u].name, &prev) == n &&
			       !strncmp(prev, op, n);
		}
		if (!seen)
			table_op(o, r, ref, op, n);
	}
}

/* Where the experiment comes from and what became of it: rerun of, reruns, extensions. */
static void section_lineage(struct strbuf *o, const struct report_lineage *lin)
{
	if (!lin || (!lin->parent_id && !lin->nchildren &&
		     !(lin->configured_blocks > 0 && lin->blocks > lin->configured_blocks)))
		return;
	strbuf_addstr(o, "<ul id='lineage'>\n");
	if (lin->parent_id) {
		strbuf_addf(o, "<li class='rerun-of'>A rerun of experiment %lld", (long long)lin->parent_id);
		if (lin->parent_name) {
			strbuf_addstr(o, " (");
			report_html_escape(o, lin->parent_name);
			strbuf_addstr(o, ")");
		}
		strbuf_addstr(o, ": the same stored sweep, run again.</li>\n");
	}
	if (lin->configured_blocks > 0 && lin->blocks > lin->configured_blocks)
		strbuf_addf(o, "<li class='extended'>Extended: %d blocks planned where the sweep "
			    "configured %d (<code>topoadvisor extend</code> added %d).</li>\n",
			    lin->blocks, lin->configured_blocks, lin->blocks - lin->configured_blocks);
	if (lin->nchildren) {
		strbuf_addstr(o, "<li class='reruns'>Rerun as experiment");
		strbuf_addstr(o, lin->nchildren > 1 ? "s " : " ");
		for (size_t i = 0; i < lin->nchildren; i++)
			strbuf_addf(o, "%s%lld", i ? ", " : "", (long long)lin->children[i]);
		strbuf_addstr(o, ".</li>\n");
	}
	strbuf_addstr(o, "</ul>\n");
}

static void section_recommendation(struct strbuf *o, const struct rank_result *r)
{
	const struct rank_entry *e = r->recommended;
	const struct rank_decision *d = r->recommended_decision;
	strbuf_addf(o, "<section id='recommendation'>\n<h2>Recommendation</h2>\n"
		    "<p class='verdict v-%s'>verdict: <b>%s</b></p>\n",
		    decide_verdict_name(r->verdict), decide_verdict_name(r->verdict));
	if (!e) {
		strbuf_addstr(o, "<p>");
		report_html_escape(o, r->reason);
		strbuf_addstr(o, "</p>\n</section>\n");
		return;
	}
	if (rank_decisive(r)) {
		strbuf_addstr(o, "<p class='pick'>");
		report_html_escape(o, d->key);
	} else {
		/* "Leading" is the best objective only; the pick is what stays meanwhile. */
		const struct rank_decision *lead = rank_leading(r);
		strbuf_addstr(o, "<p class='pick tentative'>no decision yet; ");
		if (lead) {
			strbuf_addstr(o, "leading for now: ");
			report_html_escape(o, lead->key);
		}
		if (r->leader && r->leader != lead) {
			strbuf_addstr(o, lead ? " (strongest contender: " : "strongest contender: ");
			report_html_escape(o, r->leader->key);
			strbuf_addstr(o, lead ? ")" : "");
		}
		if (d != lead) {
			strbuf_addstr(o, lead || r->leader ? "; until then: " : "until then: ");
			report_html_escape(o, d->key);
			strbuf_addstr(o, d == r->baseline_decision ? " (the baseline)" : "");
		}
	}
	if (r->nothing_beats_baseline)
		strbuf_addf(o, " &mdash; nothing beats the baseline (every other shown worse, "
			    "within &plusmn;%.0f %% or failing): keep it", 100 * r->equivalence);
	else if (d != r->baseline_decision && !isnan(d->gain)) {
		strbuf_addstr(o, r->higher_is_better ? " &mdash; gain " : " &mdash; change of the value ");
		rank_format_metric_change(o, r, d->gain, d->gain_lo, d->gain_hi);
	}
	strbuf_addstr(o, "</p>\n<p>");
	report_html_escape(o, r->reason);
	strbuf_addstr(o, "</p>\n");
	if (r->ncontention) {
		strbuf_addstr(o, "<p>Still in contention: ");
		for (size_t i = 0; i < r->ncontention; i++) {
			strbuf_addstr(o, i ? ", " : "");
			report_html_escape(o, r->contention[i]->key);
			strbuf_addf(o, " (%s, ", decide_verdict_name(r->contention[i]->verdict));
			rank_format_metric_change(o, r, r->contention[i]->gain,
						  r->contention[i]->gain_lo, r->contention[i]->gain_hi);
			strbuf_addstr(o, ")");
		}
		strbuf_addstr(o, ".</p>\n");
	}
	if (e->ntests && d != r->baseline_decision) {
		strbuf_addstr(o, "<p>Per test: ");
		for (size_t t = 0; t < e->ntests; t++) {
			strbuf_addstr(o, t ? ", " : "");
			report_html_escape(o, e->tests[t].name);
			strbuf_addch(o, ' ');
			rank_format_change(o, e->tests[t].gain, NAN, NAN, e->tests[t].higher_is_better,
					   e->tests[t].name, NULL, true);
		}
		strbuf_addstr(o, " (throughputs: gains; lower-is-better tests: the change of the "
			      "value).</p>\n");
	}
	struct strbuf tmp = STRBUF_INIT;
	if (deploy_has_guest(e->config))
		deploy_xml(e->config, &tmp);
	else
		strbuf_addstr(&tmp, DEPLOY_NO_GUEST "\n");
	strbuf_addstr(o, "<h3>libvirt domain XML</h3>\n<pre id='xml'>");
	report_html_escape(o, strbuf_str(&tmp));
	strbuf_reset(&tmp);
	deploy_host_commands(r, e->config, &tmp);
	strbuf_addstr(o, "</pre>\n<h3>Host commands</h3>\n<pre id='commands'>");
	report_html_escape(o, tmp.len ? strbuf_str(&tmp) : "none: keep the host's settings\n");
	strbuf_addstr(o, "</pre>\n");
	strbuf_release(&tmp);
	strbuf_addf(o, "<p>Evidence: %zu runs (%zu ok, %zu failed).</p>\n</section>\n",
		    r->runs_total, r->runs_ok, r->runs_failed);
}

void report_html_render(const struct rank_result *r, const struct report_lineage *lin,
			struct strbuf *o)
{
	const struct db_experiment *x = &r->res->exp;
	size_t start = o->len;
	strbuf_addstr(o, "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
		      "<title>topoadvisor report: ");
	report_html_escape(o, x->name);
	strbuf_addstr(o, "</title>\n<style>\n"
		"body{font-family:sans-serif;margin:24px;color:#222;max-width:1150px}\n"
		"table{border-collapse:collapse;font-size:13px}\n"
		"th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}\n"
		"td:nth-child(2),td:nth-child(11),th:nth-child(2){text-align:left;white-space:normal}\n"
		"th{white-space:normal}\n"
		"tr.recommended{background:#c7f0c0}tr.tied{background:#eef9ec}\n"
		"tr.hostref{background:#fff1e0;font-style:italic}tr.eliminated{color:#888}\n"
		".verdict{font-size:16px}.v-better{color:#1a7f1a}.v-worse,.v-failing{color:#b22}\n"
		".v-undecided,.v-insufficient{color:#a65f00}.tentative{color:#a65f00}\n"
		"svg{font-size:12px;display:block;margin:12px 0}\n"
		"svg .grid{stroke:#e4e4e4}svg .whisker{stroke:#222;stroke-width:1.5}\n"
		"svg .run,svg .key-run{fill:#222;fill-opacity:.75;stroke:#fff;stroke-width:1}"
		"svg .run.outlier,svg .key-outlier{fill:#d62728;fill-opacity:1}\n"
		"svg .key-whisker{stroke:#222;stroke-width:1.5}\n"
		"svg .point{fill-opacity:.8;stroke:#fff}svg .legend{font-size:11px}\n"
		"pre{background:#f6f6f6;padding:8px;overflow:auto}\n"
		".pick{font-size:20px;font-weight:bold}\n"
		".warn li{color:#8a4b00}\n"
		"</style>\n</head>\n<body>\n<h1>topoadvisor report: ");
	report_html_escape(o, x->name);
	strbuf_addf(o, "</h1>\n<p>Experiment %lld, status ", (long long)x->id);
	report_html_escape(o, x->status);
	strbuf_addstr(o, ", created ");
	report_html_escape(o, x->created_at);
	strbuf_addstr(o, ". Metric <b>");
	report_html_escape(o, r->metric);
	strbuf_addf(o, "</b> (%s is better); baseline: ", r->higher_is_better ? "higher" : "lower");
	if (r->baseline_decision) {
		report_html_escape(o, r->baseline_decision->key);
		strbuf_addf(o, " (%s)", r->baseline_source);
	} else {
		strbuf_addstr(o, "none");
	}
	strbuf_addstr(o, ".</p>\n");
	section_lineage(o, lin);
	section_recommendation(o, r);
	strbuf_addstr(o, "<h2>Ranking</h2>\n");
	for (size_t l = 0; l < r->nlevels; l++) {
		if (r->nlevels > 1) {
			strbuf_addstr(o, "<h3>Environment ");
			report_html_escape(o, r->levels[l]);
			strbuf_addstr(o, "</h3>\n");
		}
		table_level(o, r, l);
	}
	if (r->nlevels > 1)
		table_decisions(o, r);
	section_ops(o, r);
	strbuf_addf(o, "<p>Verdicts against the baseline: log ratios paired by block (blocks "
		    "sharing a guest boot pooled), %.0f %% trimmed, a failed run the worst "
		    "outcome; intervals at %.4g %% (Bonferroni over %zu comparisons). "
		    "<b>better</b>: the interval is above 0 (and no more failures than the "
		    "baseline); <b>equivalent</b>: inside &plusmn;%.0f %%; <b>worse</b>: below 0; "
		    "<b>failing</b>: more than %.0f %% of its runs failed; <b>undecided</b>: none "
		    "of these; <b>insufficient</b>: fewer than 2 blocks to compare. Tied: "
		    "equivalent to the best. Host reference rows are the benchmark on the host "
		    "itself.</p>\n", 100 * DECIDE_TRIM, 100 * (1 - r->level_alpha),
		    r->ncomparisons, 100 * r->equivalence, 100 * r->max_failure_rate);
	struct strbuf spread = STRBUF_INIT;
	rank_text_boots(&spread, r);
	strbuf_addstr(o, "<h2>Boots and drift</h2>\n<pre id='spread'>");
	report_html_escape(o, strbuf_str(&spread));
	strbuf_addstr(o, "</pre>\n");
	strbuf_release(&spread);
	section_race(o, r);
	section_load(o, r);
	if (r->hosts)
		hostfx_html(o, r->hosts);
	strbuf_addf(o, "<h2>%s per configuration (95%% CI whiskers, dots = runs)</h2>\n",
		    rank_locations_geometric(r) ? "Geometric mean" : "Mean");
	chart_bars(o, r);
	strbuf_addstr(o, "<h2>Exits against the metric, per run</h2>\n");
	chart_scatter(o, r);
	if (r->nwarnings) {
		strbuf_addstr(o, "<h2>Warnings</h2>\n<ul class='warn'>\n");
		for (size_t i = 0; i < r->nwarnings; i++) {
			strbuf_addstr(o, "<li>");
			report_html_escape(o, r->warnings[i].message);
			strbuf_addstr(o, "</li>\n");
		}
		strbuf_addstr(o, "</ul>\n");
	}
	strbuf_addstr(o, "<h2>Sweep configuration</h2>\n<pre id='config'>");
	report_html_escape(o, x->config_yaml);
	strbuf_addstr(o, "</pre>\n");
	size_t replaced = utf8_repair(o, start);
	if (replaced)
		strbuf_addf(o, "<p class='warn' id='not-utf8'>%zu byte%s of stored text (benchmark "
			    "output, names) %s not valid UTF-8 and %s shown as &#xfffd;.</p>\n",
			    replaced, replaced == 1 ? "" : "s", replaced == 1 ? "was" : "were",
			    replaced == 1 ? "is" : "are");
	strbuf_addf(o, "<p><small>topoadvisor %s</small></p>\n</body>\n</html>\n", TA_VERSION);
}
