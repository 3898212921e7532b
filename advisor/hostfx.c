/* hostfx: host x configuration interaction; see hostfx.h. */
#include "hostfx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report-html.h"
#include "stats.h"

/* The index of host name s in h->hosts, appending it when new. */
static size_t host_index(struct hostfx *h, const char *s)
{
	for (size_t i = 0; i < h->nhosts; i++)
		if (!strcmp(h->hosts[i], s))
			return i;
	h->hosts = xrealloc(h->hosts, (h->nhosts + 1) * sizeof(*h->hosts));
	h->hosts[h->nhosts] = s;
	return h->nhosts++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The metric of a successful run (> 0: taken on the log scale), or NAN. */
static double run_value(const struct db_results_run *run, const char *metric)
{
	if (strcmp(run->status, "ok") || !run->host)
		return NAN;
	const struct db_results_metric *m = db_results_run_metric(run, metric);
	return m && m->value > 0 && isfinite(m->value) ? m->value : NAN;
}

bool hostfx_compute(const struct db_results *res, const char *metric, bool higher_is_better,
		    struct hostfx *out)
{
	memset(out, 0, sizeof(*out));
	out->metric = metric;
	out->higher_is_better = higher_is_better;
	out->f = out->p = NAN;
	/* Configurations still raced that have a value at all. */
	out->configs = xcalloc(res->nconfigs + 1, sizeof(*out->configs));
	int nblocks = 0;
	for (size_t i = 0; i < res->nconfigs; i++) {
		const struct db_results_config *c = &res->configs[i];
		bool any = false;
		for (size_t j = 0; j < c->nruns; j++) {
			any |= !isnan(run_value(&c->runs[j], metric));
			if (c->runs[j].repetition + 1 > nblocks)
				nblocks = c->runs[j].repetition + 1;
		}
		if (!c->eliminated_block && any)
			out->configs[out->nconfigs++] = c;
	}
	size_t nc = out->nconfigs;
	if (nc < 2 || nblocks < 2) {
		hostfx_release(out);
		return false;
	}
	/* y[c * nblocks + b]: log value; block_host[b]: its host, NULL: incomplete. */
	double *y = xcalloc(nc * (size_t)nblocks, sizeof(*y));
	const char **block_host = xcalloc((size_t)nblocks, sizeof(*block_host));
	bool *complete = xcalloc((size_t)nblocks, sizeof(*complete));
	for (int b = 0; b < nblocks; b++)
		complete[b] = true;
	for (size_t c = 0; c < nc; c++) {
		bool *seen = xcalloc((size_t)nblocks, sizeof(*seen));
		for (size_t j = 0; j < out->configs[c]->nruns; j++) {
			const struct db_results_run *run = &out->configs[c]->runs[j];
			double v = run_value(run, metric);
			int b = run->repetition;
			if (isnan(v))
				continue;
			if (block_host[b] && strcmp(block_host[b], run->host))
				complete[b] = false;	/* one block on two hosts: not paired */
			block_host[b] = run->host;
			y[c * (size_t)nblocks + (size_t)b] = log(v);
			seen[b] = true;
		}
		for (int b = 0; b < nblocks; b++)
			complete[b] &= seen[b];
		free(seen);
	}
	for (int b = 0; b < nblocks; b++)
		if (complete[b]) {
			out->nblocks++;
			host_index(out, block_host[b]);
		}
	if (out->nhosts < 2) {
		free(y);
		free(block_host);
		free(complete);
		hostfx_release(out);
		return false;
	}
	qsort(out->hosts, out->nhosts, sizeof(*out->hosts), cmp_str);
	size_t nh = out->nhosts;
	out->effect = xcalloc(nc * nh, sizeof(*out->effect));
	out->blocks = xcalloc(nh, sizeof(*out->blocks));
	out->best = xcalloc(nh, sizeof(*out->best));
	/* r = y - the block's mean: the configuration's effect within its block. */
	double *r = xcalloc(nc * (size_t)nblocks, sizeof(*r));
	int *bh = xcalloc((size_t)nblocks, sizeof(*bh));
	for (int b = 0; b < nblocks; b++) {
		if (!complete[b])
			continue;
		double m = 0;
		for (size_t c = 0; c < nc; c++)
			m += y[c * (size_t)nblocks + (size_t)b] / (double)nc;
		for (size_t c = 0; c < nc; c++)
			r[c * (size_t)nblocks + (size_t)b] = y[c * (size_t)nblocks + (size_t)b] - m;
		bh[b] = (int)host_index(out, block_host[b]);
		out->blocks[bh[b]]++;
	}
	double ss_int = 0, ss_err = 0;
	for (size_t c = 0; c < nc; c++) {
		double all = 0;
		for (size_t h = 0; h < nh; h++) {
			double s = 0;
			for (int b = 0; b < nblocks; b++)
				if (complete[b] && bh[b] == (int)h)
					s += r[c * (size_t)nblocks + (size_t)b];
			out->effect[c * nh + h] = s / out->blocks[h];
			all += s;
		}
		all /= (double)out->nblocks;
		for (size_t h = 0; h < nh; h++) {
			double d = out->effect[c * nh + h] - all;
			ss_int += out->blocks[h] * d * d;
		}
		for (int b = 0; b < nblocks; b++) {
			if (!complete[b])
				continue;
			double d = r[c * (size_t)nblocks + (size_t)b] - out->effect[c * nh + bh[b]];
			ss_err += d * d;
		}
	}
	out->df1 = (int)((nc - 1) * (nh - 1));
	out->df2 = (int)((nc - 1) * (out->nblocks - nh));
	if (out->df2 > 0 && ss_err > 0) {
		out->f = (ss_int / out->df1) / (ss_err / out->df2);
		double x = out->df1 * out->f / (out->df1 * out->f + out->df2);
		out->p = 1 - stats_incbeta(out->df1 / 2.0, out->df2 / 2.0, x);
	}
	for (size_t h = 0; h < nh; h++) {
		for (size_t c = 1; c < nc; c++) {
			double e = out->effect[c * nh + h], b = out->effect[out->best[h] * nh + h];
			if (higher_is_better ? e > b : e < b)
				out->best[h] = c;
		}
		out->best_differs |= out->best[h] != out->best[0];
	}
	free(r);
	free(bh);
	free(y);
	free(block_host);
	free(complete);
	return true;
}

void hostfx_release(struct hostfx *h)
{
	free(h->hosts);
	free(h->configs);
	free(h->effect);
	free(h->blocks);
	free(h->best);
	memset(h, 0, sizeof(*h));
}

/* One sentence on what the interaction test and the best per host say. */
static void verdict(struct strbuf *out, const struct hostfx *h)
{
	if (h->best_differs)
		strbuf_addstr(out, "the best configuration differs by host: a finding about "
			      "the hosts, not noise to average away");
	else
		strbuf_addf(out, "the same best on every host (%s)", h->configs[h->best[0]]->rec.key);
	if (isnan(h->p))
		strbuf_addstr(out, "; too few blocks per host to test the interaction");
	else
		strbuf_addf(out, "; host x configuration interaction F(%d, %d) = %.3g, p = %.2g%s",
			    h->df1, h->df2, h->f, h->p, h->p < 0.05
			    ? ": the hosts change the configurations' effects"
			    : " (no sign that the host changes them)");
}

void hostfx_text(struct strbuf *out, const struct hostfx *h)
{
	size_t kw = 13;
	for (size_t c = 0; c < h->nconfigs; c++)
		if (strlen(h->configs[c]->rec.key) > kw)
			kw = strlen(h->configs[c]->rec.key);
	strbuf_addf(out, "\nhost x configuration (a diagnostic: %s of each configuration against "
		    "its block's mean, by host; %zu complete blocks):\n  %-*s", h->metric,
		    h->nblocks, (int)kw, "CONFIGURATION");
	for (size_t i = 0; i < h->nhosts; i++)
		strbuf_addf(out, " %12.12s", h->hosts[i]);
	strbuf_addch(out, '\n');
	for (size_t c = 0; c < h->nconfigs; c++) {
		strbuf_addf(out, "  %-*s", (int)kw, h->configs[c]->rec.key);
		for (size_t i = 0; i < h->nhosts; i++)
			strbuf_addf(out, " %+11.1f%%", (exp(h->effect[c * h->nhosts + i]) - 1) * 100);
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "  %-*s", (int)kw, "(blocks)");
	for (size_t i = 0; i < h->nhosts; i++)
		strbuf_addf(out, " %12d", h->blocks[i]);
	strbuf_addstr(out, "\n  ");
	verdict(out, h);
	strbuf_addch(out, '\n');
}

void hostfx_json(struct json_writer *w, const struct hostfx *h)
{
	json_obj_begin(w);
	json_key(w, "metric"); json_str(w, h->metric);
	json_key(w, "complete_blocks"); json_uint(w, h->nblocks);
	json_key(w, "hosts");
	json_arr_begin(w);
	for (size_t i = 0; i < h->nhosts; i++) {
		json_obj_begin(w);
		json_key(w, "host"); json_str(w, h->hosts[i]);
		json_key(w, "blocks"); json_int(w, h->blocks[i]);
		json_key(w, "best"); json_str(w, h->configs[h->best[i]]->rec.key);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "configurations");
	json_arr_begin(w);
	for (size_t c = 0; c < h->nconfigs; c++) {
		json_obj_begin(w);
		json_key(w, "key"); json_str(w, h->configs[c]->rec.key);
		json_key(w, "effect_by_host");
		json_arr_begin(w);
		for (size_t i = 0; i < h->nhosts; i++)
			json_double(w, exp(h->effect[c * h->nhosts + i]) - 1);
		json_arr_end(w);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "best_differs"); json_bool(w, h->best_differs);
	json_key(w, "f"); json_double(w, h->f);
	json_key(w, "df"); json_arr_begin(w); json_int(w, h->df1); json_int(w, h->df2);
	json_arr_end(w);
	json_key(w, "p"); json_double(w, h->p);
	json_obj_end(w);
}

void hostfx_html(struct strbuf *out, const struct hostfx *h)
{
	strbuf_addstr(out, "<h2 id='hosts'>Host &times; configuration</h2>\n<p>A diagnostic: ");
	report_html_escape(out, h->metric);
	strbuf_addf(out, " of each configuration against its block's mean, by host (%zu "
		    "complete blocks).</p>\n<table>\n<tr><th>configuration</th>", h->nblocks);
	for (size_t i = 0; i < h->nhosts; i++) {
		strbuf_addstr(out, "<th>");
		report_html_escape(out, h->hosts[i]);
		strbuf_addf(out, " (%d)</th>", h->blocks[i]);
	}
	strbuf_addstr(out, "</tr>\n");
	for (size_t c = 0; c < h->nconfigs; c++) {
		strbuf_addstr(out, "<tr><td style='text-align:left'>");
		report_html_escape(out, h->configs[c]->rec.key);
		strbuf_addstr(out, "</td>");
		for (size_t i = 0; i < h->nhosts; i++)
			strbuf_addf(out, "<td%s>%+.1f %%</td>", h->best[i] == c ? " class='v-better'"
				    : "", (exp(h->effect[c * h->nhosts + i]) - 1) * 100);
		strbuf_addstr(out, "</tr>\n");
	}
	struct strbuf v = STRBUF_INIT;
	verdict(&v, h);
	strbuf_addstr(out, "</table>\n<p>");
	report_html_escape(out, strbuf_str(&v));
	strbuf_addstr(out, ".</p>\n");
	strbuf_release(&v);
}
