/* hostfx: the host x configuration diagnostic, numbered and formatted; see hostfx.h. */
#include "hostfx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report-html.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t host_find(const struct hostfx *h, const char *s)
{
	const char **at = bsearch(&s, h->hosts, h->d.nhosts, sizeof(*h->hosts), cmp_str);
	return at ? (size_t)(at - h->hosts) : DECIDE_NONE;
}

bool hostfx_compute(const struct rank_result *r, struct hostfx *out)
{
	memset(out, 0, sizeof(*out));
	const struct decide_sweep *sw = &r->sweep;
	size_t n = sw->in.nruns, nblocks = 0, nhosts = 0;
	const char **names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++) {
		const struct db_results_run *run = sw->run_of[i];
		if ((size_t)sw->runs[i].block + 1 > nblocks)
			nblocks = (size_t)sw->runs[i].block + 1;
		if (run->host && sw->runs[i].status != DECIDE_RUN_NONE)
			names[nhosts++] = run->host;
	}
	qsort(names, nhosts, sizeof(*names), cmp_str);
	size_t k = 0;
	for (size_t i = 0; i < nhosts; i++)
		if (!k || strcmp(names[k - 1], names[i]))
			names[k++] = names[i];
	out->hosts = names;
	out->d.nhosts = k;
	/* The host of each block; DECIDE_NONE where its runs name several or none. */
	size_t *block_host = xmalloc((nblocks + 1) * sizeof(*block_host));
	bool *seen = xcalloc(nblocks + 1, sizeof(*seen));
	for (size_t b = 0; b < nblocks; b++)
		block_host[b] = DECIDE_NONE;
	for (size_t i = 0; i < n; i++) {
		if (sw->runs[i].status == DECIDE_RUN_NONE)
			continue;
		size_t b = (size_t)sw->runs[i].block;
		size_t h = sw->run_of[i]->host ? host_find(out, sw->run_of[i]->host) : DECIDE_NONE;
		if (!seen[b])
			block_host[b] = h;
		else if (block_host[b] != h)
			block_host[b] = DECIDE_NONE;
		seen[b] = true;
	}
	free(seen);
	size_t ref = r->baseline_decision ? r->baseline_decision->index
		     : r->dr.best != DECIDE_NONE ? r->dr.best : DECIDE_NONE;
	bool ok = k >= 2 && decide_hosts_compute(&sw->in, block_host, nblocks, k, ref, &out->d);
	free(block_host);
	if (!ok) {
		free(names);
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->metric = r->metric;
	out->keys = xcalloc(out->d.ndecisions + 1, sizeof(*out->keys));
	for (size_t i = 0; i < out->d.ndecisions; i++)
		out->keys[i] = sw->keys[out->d.decisions[i]];
	return true;
}

void hostfx_release(struct hostfx *h)
{
	free(h->hosts);
	free(h->keys);
	decide_hosts_release(&h->d);
	memset(h, 0, sizeof(*h));
}

/* Whether the best point estimate differs by host (shown or not). */
static bool leaders_differ(const struct hostfx *h)
{
	size_t first = DECIDE_NONE;
	for (size_t i = 0; i < h->d.nhosts; i++) {
		if (h->d.best[i] == DECIDE_NONE)
			continue;
		if (first == DECIDE_NONE)
			first = h->d.best[i];
		else if (h->d.best[i] != first)
			return true;
	}
	return false;
}

/* The best on the first host that has one. */
static const char *leader(const struct hostfx *h)
{
	for (size_t i = 0; i < h->d.nhosts; i++)
		if (h->d.best[i] != DECIDE_NONE)
			return h->keys[h->d.best[i]];
	return "none";
}

/* One sentence on what the interaction test says; a finding only when it is shown. */
static void verdict(struct strbuf *out, const struct hostfx *h)
{
	const struct decide_hosts *d = &h->d;
	if (!d->tests) {
		strbuf_addstr(out, "too few blocks per host to test whether the hosts change the "
			      "configurations' effects");
		return;
	}
	if (d->best_differs)
		strbuf_addstr(out, "the best configuration differs by host, and the interaction is "
			      "shown: a finding about the hosts, not noise to average away");
	else if (d->shown)
		strbuf_addf(out, "the hosts change the size of the configurations' effects (shown), "
			    "though %s leads on every host", leader(h));
	else if (leaders_differ(h))
		strbuf_addstr(out, "no interaction shown: the leaders per host differ only within "
			      "noise; the ranking over all hosts stands");
	else
		strbuf_addstr(out, "no interaction shown; the same leader on every host");
	strbuf_addf(out, " (strongest contrast: %s against %s, %s against %s, %+.1f %%, p = %.2g, "
		    "%.2g adjusted over %zu contrasts; shown below %.0f %%)", h->keys[d->x],
		    h->keys[d->y], h->hosts[d->h1], h->hosts[d->h2], 100 * expm1(d->diff), d->p,
		    d->p_adj, d->tests, 100 * DECIDE_ALPHA);
}

void hostfx_text(struct strbuf *out, const struct hostfx *h)
{
	const struct decide_hosts *d = &h->d;
	size_t kw = 13;
	for (size_t i = 0; i < d->ndecisions; i++)
		if (strlen(h->keys[i]) > kw)
			kw = strlen(h->keys[i]);
	strbuf_addf(out, "\nhost x configuration (a diagnostic: %s of each decision against %s on "
		    "the same blocks, by host; %zu blocks on one host):\n  %-*s", h->metric,
		    h->keys[d->reference], d->nblocks, (int)kw, "DECISION");
	for (size_t i = 0; i < d->nhosts; i++)
		strbuf_addf(out, " %12.12s", h->hosts[i]);
	strbuf_addch(out, '\n');
	for (size_t c = 0; c < d->ndecisions; c++) {
		strbuf_addf(out, "  %-*s", (int)kw, h->keys[c]);
		for (size_t i = 0; i < d->nhosts; i++) {
			double e = d->effect[c * d->nhosts + i];
			if (isnan(e))
				strbuf_addf(out, " %12s", "n/a");
			else
				strbuf_addf(out, " %+11.1f%%", 100 * expm1(e));
		}
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "  %-*s", (int)kw, "(blocks)");
	for (size_t i = 0; i < d->nhosts; i++)
		strbuf_addf(out, " %12zu", d->blocks[i]);
	strbuf_addstr(out, "\n  ");
	verdict(out, h);
	strbuf_addch(out, '\n');
}

void hostfx_json(struct json_writer *w, const struct hostfx *h)
{
	const struct decide_hosts *d = &h->d;
	json_obj_begin(w);
	json_key(w, "metric"); json_str(w, h->metric);
	json_key(w, "reference"); json_str(w, h->keys[d->reference]);
	json_key(w, "blocks"); json_uint(w, d->nblocks);
	json_key(w, "hosts");
	json_arr_begin(w);
	for (size_t i = 0; i < d->nhosts; i++) {
		json_obj_begin(w);
		json_key(w, "host"); json_str(w, h->hosts[i]);
		json_key(w, "blocks"); json_uint(w, d->blocks[i]);
		json_key(w, "best");
		json_str(w, d->best[i] == DECIDE_NONE ? NULL : h->keys[d->best[i]]);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "decisions");
	json_arr_begin(w);
	for (size_t c = 0; c < d->ndecisions; c++) {
		json_obj_begin(w);
		json_key(w, "key"); json_str(w, h->keys[c]);
		json_key(w, "gain_by_host");
		json_arr_begin(w);
		for (size_t i = 0; i < d->nhosts; i++)
			json_double(w, expm1(d->effect[c * d->nhosts + i]));
		json_arr_end(w);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "contrasts"); json_uint(w, d->tests);
	json_key(w, "p"); json_double(w, d->p);
	json_key(w, "p_adjusted"); json_double(w, d->p_adj);
	json_key(w, "interaction_shown"); json_bool(w, d->shown);
	json_key(w, "best_differs"); json_bool(w, d->best_differs);
	json_obj_end(w);
}

void hostfx_html(struct strbuf *out, const struct hostfx *h)
{
	const struct decide_hosts *d = &h->d;
	strbuf_addstr(out, "<h2 id='hosts'>Host &times; configuration</h2>\n<p>A diagnostic: ");
	report_html_escape(out, h->metric);
	strbuf_addstr(out, " of each decision against ");
	report_html_escape(out, h->keys[d->reference]);
	strbuf_addf(out, " on the same blocks, by host (%zu blocks on one host).</p>\n<table>\n"
		    "<tr><th>decision</th>", d->nblocks);
	for (size_t i = 0; i < d->nhosts; i++) {
		strbuf_addstr(out, "<th>");
		report_html_escape(out, h->hosts[i]);
		strbuf_addf(out, " (%zu)</th>", d->blocks[i]);
	}
	strbuf_addstr(out, "</tr>\n");
	for (size_t c = 0; c < d->ndecisions; c++) {
		strbuf_addstr(out, "<tr><td style='text-align:left'>");
		report_html_escape(out, h->keys[c]);
		strbuf_addstr(out, "</td>");
		for (size_t i = 0; i < d->nhosts; i++) {
			double e = d->effect[c * d->nhosts + i];
			const char *cls = d->best_differs && d->best[i] == c ? " class='v-better'" : "";
			if (isnan(e))
				strbuf_addf(out, "<td%s>n/a</td>", cls);
			else
				strbuf_addf(out, "<td%s>%+.1f %%</td>", cls, 100 * expm1(e));
		}
		strbuf_addstr(out, "</tr>\n");
	}
	struct strbuf v = STRBUF_INIT;
	verdict(&v, h);
	strbuf_addstr(out, "</table>\n<p>");
	report_html_escape(out, strbuf_str(&v));
	strbuf_addstr(out, ".</p>\n");
	strbuf_release(&v);
}
