/*
 * rank-output: the text and JSON forms of a ranking and a recommendation
 * (part of the rank module, see rank.h; keys documented in docs/advisor.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../util/json.h"
#include "rank.h"

void rank_format_gain(struct strbuf *out, double gain)
{
	if (isnan(gain))
		strbuf_addstr(out, "n/a");
	else
		strbuf_addf(out, "%+.1f %%", 100 * gain);
}

/* [lo, hi] as a JSON pair, or null when undefined. */
static void json_interval(struct json_writer *w, double lo, double hi)
{
	if (isnan(lo) || isnan(hi)) {
		json_null(w);
		return;
	}
	json_arr_begin(w);
	json_double(w, lo);
	json_double(w, hi);
	json_arr_end(w);
}

static void json_nullable_double(struct json_writer *w, double v)
{
	json_double(w, v);	/* non-finite values are written as null */
}

void rank_json_entry(struct json_writer *w, const struct rank_result *r,
		     const struct rank_entry *e)
{
	const struct db_results_config *c = e->config;
	json_obj_begin(w);
	json_key(w, "rank");
	if (e->position)
		json_int(w, (int64_t)e->position);
	else
		json_null(w);
	json_key(w, "key"); json_str(w, c->key);
	json_key(w, "configuration_id"); json_int(w, c->id);
	json_key(w, "vcpus"); json_int(w, c->vcpus);
	json_key(w, "sockets"); json_int(w, c->sockets);
	json_key(w, "dies"); json_int(w, c->dies);
	json_key(w, "cores"); json_int(w, c->cores);
	json_key(w, "threads"); json_int(w, c->threads);
	json_key(w, "pinning"); json_str(w, c->pinning);
	json_key(w, "noise"); json_str(w, c->noise);
	json_key(w, "factors"); json_raw(w, c->factors_json);
	json_key(w, "baseline"); json_bool(w, e == r->baseline);
	json_key(w, "n"); json_int(w, (int64_t)e->s.n);
	json_key(w, "mean"); json_nullable_double(w, e->s.mean);
	json_key(w, "median"); json_nullable_double(w, e->s.median);
	json_key(w, "stddev"); json_nullable_double(w, e->s.stddev);
	json_key(w, "cv"); json_nullable_double(w, e->s.cv);
	json_key(w, "ci95"); json_interval(w, e->s.ci_lo, e->s.ci_hi);
	json_key(w, "min"); json_nullable_double(w, e->s.min);
	json_key(w, "max"); json_nullable_double(w, e->s.max);
	json_key(w, "values");
	json_arr_begin(w);
	for (size_t i = 0; i < e->s.n; i++) {
		json_obj_begin(w);
		json_key(w, "run_id"); json_int(w, e->value_runs[i]->id);
		json_key(w, "repetition"); json_int(w, e->value_runs[i]->repetition);
		json_key(w, "value"); json_double(w, e->values[i]);
		json_key(w, "modified_z"); json_double(w, e->z[i]);
		json_key(w, "outlier"); json_bool(w, fabs(e->z[i]) > STATS_OUTLIER_Z);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "ratio"); json_nullable_double(w, e->ratio);
	json_key(w, "ratio_ci95"); json_interval(w, e->ratio_lo, e->ratio_hi);
	json_key(w, "gain"); json_nullable_double(w, e->gain);
	json_key(w, "gain_ci95"); json_interval(w, e->gain_lo, e->gain_hi);
	json_key(w, "p_vs_baseline"); json_nullable_double(w, e->p_baseline);
	json_key(w, "p_vs_baseline_holm"); json_nullable_double(w, e->p_baseline_holm);
	json_key(w, "beats_baseline"); json_bool(w, e->beats_baseline);
	json_key(w, "best"); json_bool(w, e->is_best);
	json_key(w, "host_reference"); json_bool(w, e->host_reference);
	json_key(w, "tied_with_best"); json_bool(w, e->tied_with_best);
	json_key(w, "p_vs_best"); json_nullable_double(w, e->p_best);
	json_key(w, "p_vs_best_holm"); json_nullable_double(w, e->p_best_holm);
	json_key(w, "mann_whitney_p_vs_best"); json_nullable_double(w, e->p_best_mw);
	json_key(w, "composite"); json_nullable_double(w, e->composite);
	json_key(w, "composite_ci95"); json_interval(w, e->composite_lo, e->composite_hi);
	json_key(w, "tests");
	json_arr_begin(w);
	for (size_t i = 0; i < e->ntests; i++) {
		const struct rank_test_ratio *t = &e->tests[i];
		json_obj_begin(w);
		json_key(w, "metric"); json_str(w, t->name);
		json_key(w, "mean"); json_double(w, t->mean);
		json_key(w, "ratio"); json_double(w, t->ratio);
		json_key(w, "ratio_ci95"); json_interval(w, t->ratio_lo, t->ratio_hi);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "gang_exits"); json_nullable_double(w, e->gang_exits);
	json_key(w, "gang_exits_per_s"); json_nullable_double(w, e->gang_exits_per_s);
	json_key(w, "top_exits");
	json_arr_begin(w);
	for (size_t i = 0; i < e->ntop_exits; i++) {
		json_obj_begin(w);
		json_key(w, "source"); json_str(w, e->top_exits[i].source);
		json_key(w, "reason"); json_str(w, e->top_exits[i].reason);
		json_key(w, "mean_per_run"); json_double(w, e->top_exits[i].mean_per_run);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "runs"); json_int(w, (int64_t)c->nruns);
	json_key(w, "runs_failed"); json_int(w, (int64_t)e->nfailed);
	json_key(w, "outliers"); json_int(w, (int64_t)e->noutliers);
	json_key(w, "host_cpus"); json_int(w, e->host_cpus);
	json_key(w, "nondefault_knobs"); json_int(w, e->nondefault_knobs);
	json_key(w, "eliminated_block"); json_int(w, e->eliminated_block);
	json_obj_end(w);
}

void rank_json_warnings(struct json_writer *w, const struct rank_result *r)
{
	json_arr_begin(w);
	for (size_t i = 0; i < r->nwarnings; i++) {
		json_obj_begin(w);
		json_key(w, "kind"); json_str(w, r->warnings[i].kind);
		json_key(w, "configuration"); json_str(w, r->warnings[i].config);
		json_key(w, "message"); json_str(w, r->warnings[i].message);
		json_obj_end(w);
	}
	json_arr_end(w);
}

static void json_header(struct json_writer *w, const struct rank_result *r)
{
	json_key(w, "experiment");
	json_obj_begin(w);
	json_key(w, "id"); json_int(w, r->res->exp.id);
	json_key(w, "name"); json_str(w, r->res->exp.name);
	json_key(w, "status"); json_str(w, r->res->exp.status);
	json_obj_end(w);
	json_key(w, "metric"); json_str(w, r->metric);
	json_key(w, "unit"); json_str(w, r->unit);
	json_key(w, "higher_is_better"); json_bool(w, r->higher_is_better);
	json_key(w, "baseline"); json_str(w, r->baseline ? r->baseline->config->key : NULL);
	json_key(w, "baseline_source"); json_str(w, r->baseline_source);
	json_key(w, "composite"); json_str(w, r->composite_family);
	json_key(w, "alpha"); json_double(w, RANK_ALPHA);
	json_key(w, "bootstrap_resamples"); json_int(w, STATS_BOOTSTRAP_RESAMPLES);
}

void rank_json(struct json_writer *w, const struct rank_result *r)
{
	json_obj_begin(w);
	json_header(w, r);
	json_key(w, "configurations");
	json_arr_begin(w);
	for (size_t i = 0; i < r->nentries; i++)
		rank_json_entry(w, r, &r->entries[i]);
	json_arr_end(w);
	json_key(w, "warnings");
	rank_json_warnings(w, r);
	json_obj_end(w);
}

/* Host commands one per array element. */
static void json_commands(struct json_writer *w, const struct db_results_config *c)
{
	struct strbuf sb = STRBUF_INIT;
	rank_host_commands(c, &sb);
	json_arr_begin(w);
	char *p = sb.buf;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		*nl = '\0';
		json_str(w, p);
		p = nl + 1;
	}
	json_arr_end(w);
	strbuf_release(&sb);
}

void rank_json_recommendation(struct json_writer *w, const struct rank_result *r)
{
	const struct rank_entry *e = r->recommended;
	json_obj_begin(w);
	json_header(w, r);
	json_key(w, "recommended");
	if (e)
		rank_json_entry(w, r, e);
	else
		json_null(w);
	json_key(w, "nothing_beats_baseline"); json_bool(w, r->nothing_beats_baseline);
	json_key(w, "best"); json_str(w, r->best ? r->best->config->key : NULL);
	json_key(w, "gain"); json_double(w, e ? e->gain : NAN);
	json_key(w, "gain_ci95");
	json_interval(w, e ? e->gain_lo : NAN, e ? e->gain_hi : NAN);
	json_key(w, "test_gains");
	json_arr_begin(w);
	for (size_t i = 0; e && i < e->ntests; i++) {
		const struct rank_test_ratio *t = &e->tests[i];
		json_obj_begin(w);
		json_key(w, "metric"); json_str(w, t->name);
		json_key(w, "gain"); json_double(w, t->ratio - 1);
		json_key(w, "gain_ci95"); json_interval(w, t->ratio_lo - 1, t->ratio_hi - 1);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "reason"); json_str(w, r->reason);
	json_key(w, "libvirt_xml");
	if (e) {
		struct strbuf xml = STRBUF_INIT;
		rank_xml_fragment(e->config, &xml);
		json_str(w, strbuf_str(&xml));
		strbuf_release(&xml);
	} else {
		json_null(w);
	}
	json_key(w, "host_commands");
	if (e)
		json_commands(w, e->config);
	else
		json_null(w);
	json_key(w, "evidence");
	json_obj_begin(w);
	json_key(w, "runs"); json_int(w, (int64_t)r->runs_total);
	json_key(w, "runs_ok"); json_int(w, (int64_t)r->runs_ok);
	json_key(w, "runs_failed"); json_int(w, (int64_t)r->runs_failed);
	json_key(w, "gang_exits_applicable"); json_bool(w, r->gang_data);
	json_key(w, "correlation");
	if (r->correlation_x) {
		json_obj_begin(w);
		json_key(w, "x"); json_str(w, r->correlation_x);
		json_key(w, "y"); json_str(w, r->metric);
		json_key(w, "spearman"); json_double(w, r->spearman);
		json_key(w, "n"); json_int(w, (int64_t)r->spearman_n);
		json_obj_end(w);
	} else {
		json_null(w);
	}
	json_obj_end(w);
	json_key(w, "warnings");
	rank_json_warnings(w, r);
	json_obj_end(w);
}

static void text_warnings(struct strbuf *out, const struct rank_result *r)
{
	if (!r->nwarnings)
		return;
	strbuf_addstr(out, "\nwarnings:\n");
	for (size_t i = 0; i < r->nwarnings; i++)
		strbuf_addf(out, "  - %s\n", r->warnings[i].message);
}

static void text_header(struct strbuf *out, const struct rank_result *r)
{
	strbuf_addf(out, "experiment %lld '%s': %s%s%s%s, %s is better\n",
		    (long long)r->res->exp.id, r->res->exp.name, r->metric,
		    r->unit ? " (" : "", r->unit ? r->unit : "", r->unit ? ")" : "",
		    r->higher_is_better ? "higher" : "lower");
	if (r->baseline)
		strbuf_addf(out, "baseline: %s (%s)\n", r->baseline->config->key,
			    r->baseline_source);
	else
		strbuf_addstr(out, "baseline: none (ranked without ratios)\n");
}

/* Width of the configuration column: the longest key, at least the heading. */
static int key_width(const struct rank_result *r)
{
	size_t w = strlen("CONFIGURATION");
	for (size_t i = 0; i < r->nentries; i++)
		if (strlen(r->entries[i].config->key) > w)
			w = strlen(r->entries[i].config->key);
	return (int)w;
}

void rank_text(struct strbuf *out, const struct rank_result *r)
{
	int kw = key_width(r);
	text_header(out, r);
	strbuf_addf(out, "\n%-4s  %-*s  %3s  %12s  %-27s  %6s  %-26s  %10s  %s\n", "RANK",
		    kw, "CONFIGURATION", "N", "MEAN", "95% CI", "CV", "VS BASELINE [95% CI]",
		    "GANG/S", "STATUS");
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		struct strbuf ci = STRBUF_INIT, vs = STRBUF_INIT, st = STRBUF_INIT;
		if (!isnan(e->s.ci_lo))
			strbuf_addf(&ci, "[%.6g, %.6g]", e->s.ci_lo, e->s.ci_hi);
		else
			strbuf_addstr(&ci, "-");
		if (e == r->baseline) {
			strbuf_addstr(&vs, "baseline");
		} else if (!isnan(e->gain)) {
			rank_format_gain(&vs, e->gain);
			if (!isnan(e->gain_lo)) {
				strbuf_addstr(&vs, " [");
				rank_format_gain(&vs, e->gain_lo);
				strbuf_addstr(&vs, ", ");
				rank_format_gain(&vs, e->gain_hi);
				strbuf_addstr(&vs, "]");
			}
		} else {
			strbuf_addstr(&vs, "-");
		}
		if (e->host_reference)
			strbuf_addstr(&st, "host reference");
		else if (e->eliminated_block > 0)
			strbuf_addf(&st, "eliminated after block %d", e->eliminated_block);
		else if (e->is_best)
			strbuf_addstr(&st, "best");
		else if (e->tied_with_best)
			strbuf_addf(&st, "tied (p=%.2g)", e->p_best_holm);
		else if (!isnan(e->p_best_holm))
			strbuf_addf(&st, "worse (p=%.2g)", e->p_best_holm);
		else if (e->s.n)
			strbuf_addstr(&st, "untested");
		else
			strbuf_addstr(&st, "no data");
		if (e->nfailed)
			strbuf_addf(&st, ", %zu failed", e->nfailed);
		if (e->noutliers)
			strbuf_addf(&st, ", %zu outlier%s", e->noutliers, e->noutliers > 1 ? "s" : "");
		char pos[24], gang[32], cv[24], mean[32];
		if (e->position)
			snprintf(pos, sizeof(pos), "%zu", e->position);
		else
			snprintf(pos, sizeof(pos), "-");
		if (isnan(e->gang_exits_per_s))
			snprintf(gang, sizeof(gang), "%s", isnan(e->gang_exits) ? "n/a" : "-");
		else
			snprintf(gang, sizeof(gang), "%.4g", e->gang_exits_per_s);
		if (isnan(e->s.cv))
			snprintf(cv, sizeof(cv), "-");
		else
			snprintf(cv, sizeof(cv), "%.1f%%", 100 * e->s.cv);
		if (e->s.n)
			snprintf(mean, sizeof(mean), "%.6g", e->s.mean);
		else
			snprintf(mean, sizeof(mean), "-");
		strbuf_addf(out, "%-4s  %-*s  %3zu  %12s  %-27s  %6s  %-26s  %10s  %s\n", pos,
			    kw, e->config->key, e->s.n, mean, strbuf_str(&ci), cv, strbuf_str(&vs),
			    gang, strbuf_str(&st));
		strbuf_release(&ci);
		strbuf_release(&vs);
		strbuf_release(&st);
	}
	if (r->composite_family) {
		strbuf_addf(out, "\ncomposite (%s: geometric mean of per-test ratios to the "
			    "baseline):\n", r->composite_family);
		for (size_t i = 0; i < r->nentries; i++) {
			const struct rank_entry *e = &r->entries[i];
			strbuf_addf(out, "  %-*s  %.3f ", kw, e->config->key, e->composite);
			if (isnan(e->composite_lo))
				strbuf_addstr(out, "               ");
			else
				strbuf_addf(out, "[%.3f, %.3f]", e->composite_lo, e->composite_hi);
			for (size_t t = 0; t < e->ntests; t++)
				strbuf_addf(out, " %s %.2f", e->tests[t].name + strlen(r->composite_family) + 1,
					    e->tests[t].ratio);
			strbuf_addch(out, '\n');
		}
	}
	bool any_exits = false;
	for (size_t i = 0; i < r->nentries; i++)
		any_exits |= r->entries[i].ntop_exits > 0;
	if (any_exits) {
		strbuf_addstr(out, "\nmain exit reasons (mean per run):\n");
		for (size_t i = 0; i < r->nentries; i++) {
			const struct rank_entry *e = &r->entries[i];
			if (!e->ntop_exits)
				continue;
			strbuf_addf(out, "  %-*s ", kw, e->config->key);
			for (size_t t = 0; t < e->ntop_exits; t++)
				strbuf_addf(out, " %s:%s %.4g", e->top_exits[t].source,
					    e->top_exits[t].reason, e->top_exits[t].mean_per_run);
			strbuf_addch(out, '\n');
		}
	}
	strbuf_addf(out, "\ntied: Holm-corrected Welch p >= %.2f against the best; CIs of "
		    "ratios: seeded bootstrap, %d resamples\n", RANK_ALPHA,
		    STATS_BOOTSTRAP_RESAMPLES);
	text_warnings(out, r);
}

void rank_text_recommendation(struct strbuf *out, const struct rank_result *r)
{
	const struct rank_entry *e = r->recommended;
	text_header(out, r);
	if (!e) {
		strbuf_addf(out, "\nno recommendation: %s\n", r->reason);
		text_warnings(out, r);
		return;
	}
	strbuf_addf(out, "\nrecommended: %s\n", e->config->key);
	if (r->nothing_beats_baseline)
		strbuf_addstr(out, "  nothing beats the baseline significantly: keep it.\n");
	strbuf_addf(out, "  %s: mean %.6g", r->metric, e->s.mean);
	if (!isnan(e->s.ci_lo))
		strbuf_addf(out, " (95%% CI %.6g .. %.6g)", e->s.ci_lo, e->s.ci_hi);
	strbuf_addf(out, " over %zu runs\n", e->s.n);
	if (r->baseline && e != r->baseline && !isnan(e->gain)) {
		strbuf_addstr(out, "  expected gain over the baseline: ");
		rank_format_gain(out, e->gain);
		if (!isnan(e->gain_lo)) {
			strbuf_addstr(out, " (95% CI ");
			rank_format_gain(out, e->gain_lo);
			strbuf_addstr(out, " .. ");
			rank_format_gain(out, e->gain_hi);
			strbuf_addstr(out, ")");
		}
		strbuf_addch(out, '\n');
		for (size_t t = 0; t < e->ntests; t++) {
			strbuf_addf(out, "    %-20s ", e->tests[t].name);
			rank_format_gain(out, e->tests[t].ratio - 1);
			strbuf_addstr(out, " (");
			rank_format_gain(out, e->tests[t].ratio_lo - 1);
			strbuf_addstr(out, " .. ");
			rank_format_gain(out, e->tests[t].ratio_hi - 1);
			strbuf_addstr(out, ")\n");
		}
	}
	strbuf_addf(out, "  why: %s\n", r->reason);

	strbuf_addstr(out, "\nlibvirt domain XML:\n");
	struct strbuf xml = STRBUF_INIT;
	rank_xml_fragment(e->config, &xml);
	for (char *p = xml.buf, *nl; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		strbuf_addf(out, "  %.*s\n", (int)(nl - p), p);
	}
	strbuf_release(&xml);
	struct strbuf cmds = STRBUF_INIT;
	rank_host_commands(e->config, &cmds);
	strbuf_addstr(out, "\nhost commands (as root, with no HV guest running):\n");
	if (!cmds.len)
		strbuf_addstr(out, "  none: the host's settings stay as they are\n");
	for (char *p = cmds.buf, *nl; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		strbuf_addf(out, "  %.*s\n", (int)(nl - p), p);
	}
	strbuf_release(&cmds);

	strbuf_addf(out, "\nevidence: %zu runs, %zu ok, %zu failed", r->runs_total, r->runs_ok,
		    r->runs_failed);
	if (r->correlation_x)
		strbuf_addf(out, "; Spearman(%s, %s) = %.2f over %zu runs", r->correlation_x,
			    r->metric, r->spearman, r->spearman_n);
	else
		strbuf_addstr(out, "; ganged exits: not applicable on this host");
	strbuf_addch(out, '\n');
	text_warnings(out, r);
}
