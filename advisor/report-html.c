/* report-html: the self-contained HTML report; see report-html.h. */
#include "report-html.h"

#include <math.h>
#include <string.h>

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

void report_html_escape(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&#39;"); break;
		default: strbuf_addch(out, *s);
		}
	}
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
		if (strlen(r->entries[i].config->key) > n)
			n = strlen(r->entries[i].config->key);
	return n;
}

static void chart_bars(struct strbuf *o, const struct rank_result *r)
{
	/* Room for the longest configuration key left of the bars. */
	const double left = fmin(fmax(label_px(longest_key(r)) + 20, 150), 560);
	const double right = 1060, top = 20, row = 30;
	double height = top + row * (double)r->nentries + 40;
	double lo = 0, hi = 0;
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		for (size_t j = 0; j < e->s.n; j++) {
			lo = fmin(lo, e->values[j]);
			hi = fmax(hi, e->values[j]);
		}
		if (!isnan(e->s.ci_hi)) {
			hi = fmax(hi, e->s.ci_hi);
			lo = fmin(lo, e->s.ci_lo);
		}
	}
	struct axis ax = { 0, 0, left, right, 1 };
	axis_fit(&ax, lo, hi);
	double bottom = top + row * (double)r->nentries;
	strbuf_addf(o, "<svg id='chart-bars' xmlns='http://www.w3.org/2000/svg' width='1100' "
		    "height='%.0f' viewBox='0 0 1100 %.0f' role='img'>\n"
		    "<title>mean %s per configuration with 95%% CI and runs</title>\n",
		    height, height, r->metric);
	svg_ticks_x(o, &ax, top, bottom);
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		double y = top + row * (double)i;
		strbuf_addf(o, "<text class='label' x='%.1f' y='%.1f' text-anchor='end'>",
			    left - 8, y + row / 2 + 4);
		report_html_escape(o, e->config->key);
		strbuf_addstr(o, "</text>\n");
		if (!e->s.n)
			continue;
		const char *fill = e == r->recommended ? "#2ca02c" : e == r->baseline ? "#7f7f7f"
			: e->tied_with_best || e->is_best ? "#98df8a" : "#aec7e8";
		double x0 = axis_map(&ax, 0), x1 = axis_map(&ax, e->s.mean);
		strbuf_addf(o, "<rect class='bar' x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
			    "fill='%s'><title>", fmin(x0, x1), y + 5, fabs(x1 - x0), row - 10, fill);
		report_html_escape(o, e->config->key);
		strbuf_addf(o, ": mean %.6g, n %zu</title></rect>\n", e->s.mean, e->s.n);
		if (!isnan(e->s.ci_lo)) {
			double a = axis_map(&ax, e->s.ci_lo), b = axis_map(&ax, e->s.ci_hi);
			double ym = y + row / 2;
			strbuf_addf(o, "<line class='whisker' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
				    "<line class='whisker' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
				    "<line class='whisker' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>\n",
				    a, ym, b, ym, a, ym - 7, a, ym + 7, b, ym - 7, b, ym + 7);
		}
		for (size_t j = 0; j < e->s.n; j++) {
			bool outlier = fabs(e->z[j]) > STATS_OUTLIER_Z;
			/* Spread the dots vertically a little so equal values stay visible. */
			double jitter = ((double)(j % 5) - 2) * 2.5;
			strbuf_addf(o, "<circle class='run%s' cx='%.1f' cy='%.1f' r='3.5'>"
				    "<title>repetition %d: %.6g</title></circle>\n",
				    outlier ? " outlier" : "", axis_map(&ax, e->values[j]),
				    y + row / 2 + jitter, e->value_runs[j]->repetition, e->values[j]);
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
	axis_fit(&ax, fmin(0, xlo), xhi);
	axis_fit(&ay, ylo, yhi);
	strbuf_addf(o, "<svg id='chart-scatter' xmlns='http://www.w3.org/2000/svg' width='1100' "
		    "height='%.0f' viewBox='0 0 1100 %.0f' role='img'>\n<title>%s against ",
		    height, height, what);
	report_html_escape(o, r->metric);
	strbuf_addstr(o, " per run</title>\n");
	svg_ticks_x(o, &ax, top, bottom);
	svg_ticks_y(o, &ay, left, right);
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		const char *color = palette[i % NPALETTE];
		for (size_t j = 0; j < e->s.n; j++) {
			double x;
			if (!scatter_x(e->value_runs[j], what, &x))
				continue;
			strbuf_addf(o, "<circle class='point' cx='%.1f' cy='%.1f' r='4.5' "
				    "fill='%s'><title>", axis_map(&ax, x), axis_map(&ay, e->values[j]),
				    color);
			report_html_escape(o, e->config->key);
			strbuf_addf(o, " rep %d: %.6g, %.6g</title></circle>\n",
				    e->value_runs[j]->repetition, x, e->values[j]);
		}
		strbuf_addf(o, "<rect x='%.0f' y='%.0f' width='11' height='11' fill='%s'/>"
			    "<text class='legend' x='%.0f' y='%.0f'>", right + 15,
			    top + legend_row * (double)i, color, right + 31,
			    top + legend_row * (double)i + 10);
		report_html_escape(o, e->config->key);
		strbuf_addstr(o, "</text>\n");
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
	strbuf_addf(o, ". First test after block %d, at most %d blocks. After each block, a "
		    "configuration shown worse than the best then (one-sided paired t-test on "
		    "the log values, Holm-corrected) was dropped.</p>\n", res->race_first_test,
		    res->race_max_blocks);
	strbuf_addstr(o, "<table id='eliminations'>\n<thead><tr><th>configuration</th>"
		      "<th>eliminated after block</th><th>against</th><th>p (Holm)</th></tr>"
		      "</thead>\n<tbody>\n");
	size_t n = 0;
	for (int block = 1; block <= res->race_max_blocks; block++)
		for (size_t i = 0; i < res->nconfigs; i++) {
			const struct db_results_config *c = &res->configs[i];
			if (c->eliminated_block != block)
				continue;
			strbuf_addstr(o, "<tr><td>");
			report_html_escape(o, c->key);
			strbuf_addf(o, "</td><td>%d</td><td>", block);
			report_html_escape(o, c->eliminated_against ? c->eliminated_against : "?");
			strbuf_addf(o, "</td><td>%.3g</td></tr>\n", c->eliminated_p);
			n++;
		}
	if (!n)
		strbuf_addstr(o, "<tr><td colspan='4'>none: every configuration ran to the end"
			      "</td></tr>\n");
	strbuf_addstr(o, "</tbody></table>\n");
}

static void table_ranking(struct strbuf *o, const struct rank_result *r)
{
	strbuf_addstr(o, "<table id='ranking'>\n<thead><tr><th>rank</th><th>configuration</th>"
		      "<th>n</th><th>mean</th><th>95% CI</th><th>CV</th><th>vs baseline</th>"
		      "<th>gain 95% CI</th><th>p vs best (Holm)</th><th>ganged exits/s</th>"
		      "<th>main exits</th><th>failed</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		strbuf_addf(o, "<tr class='%s'>", e == r->recommended ? "recommended"
			    : e->is_best || e->tied_with_best ? "tied" : "");
		if (e->position)
			strbuf_addf(o, "<td>%zu</td><td>", e->position);
		else
			strbuf_addstr(o, "<td>&ndash;</td><td>");
		/* Long keys may wrap after each '/', numbers never wrap. */
		for (const char *k = e->config->key; *k; k++) {
			char c[2] = { *k, 0 };
			report_html_escape(o, c);
			if (*k == '/')
				strbuf_addstr(o, "<wbr>");
		}
		if (e == r->baseline)
			strbuf_addstr(o, " <em>(baseline)</em>");
		strbuf_addf(o, "</td><td>%zu</td><td>", e->s.n);
		if (e->s.n)
			strbuf_addf(o, "%.6g", e->s.mean);
		strbuf_addstr(o, "</td><td>");
		fmt_interval(o, e->s.ci_lo, e->s.ci_hi);
		strbuf_addstr(o, "</td><td>");
		if (!isnan(e->s.cv))
			strbuf_addf(o, "%.1f %%", 100 * e->s.cv);
		strbuf_addstr(o, "</td><td>");
		if (e == r->baseline)
			strbuf_addstr(o, "baseline");
		else
			rank_format_gain(o, e->gain);
		strbuf_addstr(o, "</td><td>");
		if (!isnan(e->gain_lo)) {
			rank_format_gain(o, e->gain_lo);
			strbuf_addstr(o, " &ndash; ");
			rank_format_gain(o, e->gain_hi);
		}
		strbuf_addstr(o, "</td><td>");
		if (e->is_best)
			strbuf_addstr(o, "best");
		else if (!isnan(e->p_best_holm))
			strbuf_addf(o, "%.3g%s", e->p_best_holm, e->tied_with_best ? " (tied)" : "");
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
		}
		strbuf_addf(o, "</td><td>%zu</td></tr>\n", e->nfailed);
	}
	strbuf_addstr(o, "</tbody>\n</table>\n");
}

static void section_recommendation(struct strbuf *o, const struct rank_result *r)
{
	const struct rank_entry *e = r->recommended;
	strbuf_addstr(o, "<section id='recommendation'>\n<h2>Recommendation</h2>\n");
	if (!e) {
		strbuf_addstr(o, "<p>");
		report_html_escape(o, r->reason);
		strbuf_addstr(o, "</p>\n</section>\n");
		return;
	}
	strbuf_addstr(o, "<p class='pick'>");
	report_html_escape(o, e->config->key);
	if (r->nothing_beats_baseline)
		strbuf_addstr(o, " &mdash; nothing beats the baseline significantly: keep it");
	else if (!isnan(e->gain)) {
		strbuf_addstr(o, " &mdash; expected gain ");
		rank_format_gain(o, e->gain);
		if (!isnan(e->gain_lo)) {
			strbuf_addstr(o, " (95% CI ");
			rank_format_gain(o, e->gain_lo);
			strbuf_addstr(o, " &ndash; ");
			rank_format_gain(o, e->gain_hi);
			strbuf_addstr(o, ")");
		}
	}
	strbuf_addstr(o, "</p>\n<p>");
	report_html_escape(o, r->reason);
	strbuf_addstr(o, "</p>\n");
	if (e->ntests && !r->nothing_beats_baseline) {
		strbuf_addstr(o, "<p>Per test: ");
		for (size_t t = 0; t < e->ntests; t++) {
			strbuf_addstr(o, t ? ", " : "");
			report_html_escape(o, e->tests[t].name);
			strbuf_addch(o, ' ');
			rank_format_gain(o, e->tests[t].ratio - 1);
		}
		strbuf_addstr(o, "</p>\n");
	}
	struct strbuf tmp = STRBUF_INIT;
	rank_xml_fragment(e->config, &tmp);
	strbuf_addstr(o, "<h3>libvirt domain XML</h3>\n<pre id='xml'>");
	report_html_escape(o, strbuf_str(&tmp));
	strbuf_reset(&tmp);
	rank_host_commands(e->config, &tmp);
	strbuf_addstr(o, "</pre>\n<h3>Host commands</h3>\n<pre id='commands'>");
	report_html_escape(o, tmp.len ? strbuf_str(&tmp) : "none: keep the host's settings\n");
	strbuf_addstr(o, "</pre>\n");
	strbuf_release(&tmp);
	strbuf_addf(o, "<p>Evidence: %zu runs (%zu ok, %zu failed).</p>\n</section>\n",
		    r->runs_total, r->runs_ok, r->runs_failed);
}

void report_html_render(const struct rank_result *r, struct strbuf *o)
{
	const struct db_experiment *x = &r->res->exp;
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
		"svg{font-size:12px;display:block;margin:12px 0}\n"
		"svg .grid{stroke:#e4e4e4}svg .whisker{stroke:#222;stroke-width:1.5}\n"
		"svg .run{fill:#333;fill-opacity:.7}svg .run.outlier{fill:#d62728}\n"
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
	if (r->baseline) {
		report_html_escape(o, r->baseline->config->key);
		strbuf_addf(o, " (%s)", r->baseline_source);
	} else {
		strbuf_addstr(o, "none");
	}
	strbuf_addstr(o, ".</p>\n");
	section_recommendation(o, r);
	strbuf_addstr(o, "<h2>Ranking</h2>\n");
	table_ranking(o, r);
	strbuf_addf(o, "<p>Tied: Holm-corrected Welch p &ge; %.2f against the best. Gain CIs: "
		    "seeded percentile bootstrap, %d resamples.</p>\n", RANK_ALPHA,
		    STATS_BOOTSTRAP_RESAMPLES);
	section_race(o, r);
	strbuf_addstr(o, "<h2>Mean per configuration (95% CI whiskers, dots = runs)</h2>\n");
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
	strbuf_addf(o, "</pre>\n<p><small>topoadvisor %s</small></p>\n</body>\n</html>\n",
		    TA_VERSION);
}
