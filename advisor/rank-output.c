/*
 * rank-output: the text and JSON forms of a ranking and a recommendation
 * (part of the rank module, see rank.h; keys documented in docs/advisor.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "deploy.h"
#include "hostfx.h"
#include "rank.h"

void rank_format_gain(struct strbuf *out, double gain)
{
	if (isnan(gain))
		strbuf_addstr(out, "n/a");
	else
		strbuf_addf(out, "%+.1f %%", 100 * gain);
}

void rank_format_gain_ci(struct strbuf *out, double gain, double lo, double hi)
{
	rank_format_gain(out, gain);
	if (!isnan(lo)) {
		strbuf_addstr(out, " [");
		rank_format_gain(out, lo);
		strbuf_addstr(out, ", ");
		rank_format_gain(out, hi);
		strbuf_addstr(out, "]");
	}
}

/* Is a metric of this name and unit a time (its fall: faster)? */
static bool metric_is_time(const char *name, const char *unit)
{
	static const char *const units[] = { "s", "ms", "us", "\u00b5s", "ns", "sec", "msec",
					     "usec", "nsec", "seconds", "min" };
	for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i]))
			return true;
	if (!name)
		return false;
	static const char *const suffixes[] = { "_s", "_ms", "_us", "_ns", "_sec", "_msec",
						"_usec", "_seconds" };
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && !strcmp(name + n - k, suffixes[i]))
			return true;
	}
	return strstr(name, "latency") || strstr(name, "time") || strstr(name, "duration");
}

/* A lower-is-better gain g as the change of the value: 1 / (1 + g) - 1. */
static double value_change(double gain)
{
	return 1 / (1 + gain) - 1;
}

void rank_format_change(struct strbuf *out, double gain, double lo, double hi,
			bool higher_is_better, const char *name, const char *unit, bool factor)
{
	if (higher_is_better || isnan(gain)) {
		rank_format_gain_ci(out, gain, lo, hi);
		return;
	}
	/* The value falls as the gain grows: the interval's ends swap. */
	rank_format_gain_ci(out, value_change(gain), isnan(lo) ? NAN : value_change(hi),
			    value_change(lo));
	if (!factor || gain == 0)
		return;
	bool time = metric_is_time(name, unit);
	if (gain > 0)
		strbuf_addf(out, ", %.2fx %s", 1 + gain, time ? "faster" : "lower");
	else
		strbuf_addf(out, ", %.2fx %s", 1 / (1 + gain), time ? "slower" : "higher");
}

void rank_format_metric_change(struct strbuf *out, const struct rank_result *r, double gain,
			       double lo, double hi)
{
	rank_format_change(out, gain, lo, hi, r->higher_is_better, r->metric, r->unit, true);
}

void rank_location_of(const double *values, size_t n, struct rank_location *out)
{
	*out = (struct rank_location){ NAN, NAN, NAN, true };
	double *logs = xmalloc((n + 1) * sizeof(*logs));
	for (size_t i = 0; i < n; i++) {
		if (!(values[i] > 0))
			out->geometric = false;
		logs[i] = out->geometric ? log(values[i]) : 0;
	}
	struct stats_summary s;
	stats_summarize(out->geometric ? logs : values, n, &s);
	free(logs);
	if (!n)
		return;
	if (out->geometric)
		*out = (struct rank_location){ exp(s.mean), exp(s.ci_lo), exp(s.ci_hi), true };
	else
		*out = (struct rank_location){ s.mean, s.ci_lo, s.ci_hi, false };
}

bool rank_locations_geometric(const struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++)
		for (size_t k = 0; k < r->entries[i].s.n; k++)
			if (!(r->entries[i].values[k] > 0))
				return false;
	return true;
}

void rank_entry_location(const struct rank_entry *e, bool geo, struct rank_location *out)
{
	if (geo)
		rank_location_of(e->values, e->s.n, out);
	else
		*out = (struct rank_location){ e->s.mean, e->s.ci_lo, e->s.ci_hi, false };
}

/* "about 12 more blocks" / "more than 100 more blocks" for a needed count. */
static void rank_format_needed(struct strbuf *out, int needed)
{
	if (needed > DECIDE_NEEDED_CAP)
		strbuf_addf(out, "more than %d more blocks", DECIDE_NEEDED_CAP);
	else if (needed > 0)
		strbuf_addf(out, "about %d more block%s", needed, needed == 1 ? "" : "s");
	else if (needed == 0)
		strbuf_addstr(out, "settled");
	else
		strbuf_addstr(out, "unknown");
}

/* needed_repetitions as JSON: null when unknown (< 0). */
static void json_needed(struct json_writer *w, int n)
{
	if (n < 0)
		json_null(w);
	else
		json_int(w, n);
}

/* One configuration as a JSON object (keys in docs/advisor.md). */
static void rank_json_entry(struct json_writer *w, const struct rank_result *r,
			    const struct rank_entry *e)
{
	const struct db_results_config *c = e->config;
	json_obj_begin(w);
	json_key(w, "rank");
	if (e->position)
		json_int(w, (int64_t)e->position);
	else
		json_null(w);
	json_key(w, "key"); json_str(w, c->rec.key);
	json_key(w, "decision"); json_str(w, e->decision->key);
	json_key(w, "environment"); json_str(w, r->levels[e->level]);
	json_key(w, "configuration_id"); json_int(w, c->id);
	config_record_json(w, &c->rec);
	json_key(w, "factors");
	json_obj_begin(w);
	config_record_json(w, &c->rec);
	json_obj_end(w);
	json_key(w, "baseline"); json_bool(w, e->decision == r->baseline_decision);
	json_key(w, "n"); json_int(w, (int64_t)e->s.n);
	json_key(w, "mean"); json_double(w, e->s.mean);
	json_key(w, "median"); json_double(w, e->s.median);
	json_key(w, "stddev"); json_double(w, e->s.stddev);
	json_key(w, "cv"); json_double(w, e->s.cv);
	json_key(w, "ci95"); json_interval(w, e->s.ci_lo, e->s.ci_hi);
	struct rank_location loc;
	rank_location_of(e->values, e->s.n, &loc);
	json_key(w, "geomean"); json_double(w, loc.geometric ? loc.mean : NAN);
	json_key(w, "geomean_ci95");
	json_interval(w, loc.geometric ? loc.lo : NAN, loc.geometric ? loc.hi : NAN);
	json_key(w, "min"); json_double(w, e->s.min);
	json_key(w, "max"); json_double(w, e->s.max);
	json_key(w, "values");
	json_arr_begin(w);
	for (size_t i = 0; i < e->s.n; i++) {
		json_obj_begin(w);
		json_key(w, "run_id"); json_int(w, e->value_runs[i]->id);
		json_key(w, "repetition"); json_int(w, e->value_runs[i]->repetition + 1);
		json_key(w, "value"); json_double(w, e->values[i]);
		json_key(w, "deviation"); json_double(w, e->dev[i]);
		json_key(w, "outlier"); json_bool(w, e->outlier[i]);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "verdict");
	json_str(w, e->decision == r->baseline_decision ? "baseline" : decide_verdict_name(e->verdict));
	json_key(w, "ratio"); json_double(w, e->ratio);
	json_key(w, "ratio_ci"); json_interval(w, e->ratio_lo, e->ratio_hi);
	json_key(w, "gain"); json_double(w, e->gain);
	json_key(w, "gain_ci"); json_interval(w, e->gain_lo, e->gain_hi);
	json_key(w, "p_vs_baseline"); json_double(w, e->p_baseline);
	json_key(w, "p_vs_baseline_adjusted"); json_double(w, e->p_baseline_adj);
	json_key(w, "beats_baseline"); json_bool(w, e->beats_baseline);
	json_key(w, "min_detectable_effect"); json_double(w, e->min_detectable_effect);
	json_key(w, "needed_repetitions"); json_needed(w, e->needed_repetitions);
	json_key(w, "best"); json_bool(w, e->is_best);
	json_key(w, "host_reference"); json_bool(w, e->host_reference);
	json_key(w, "tied_with_best"); json_bool(w, e->tied_with_best);
	json_key(w, "eliminated_block");
	if (e->eliminated_block)
		json_int(w, e->eliminated_block);
	else
		json_null(w);
	json_key(w, "p_vs_best"); json_double(w, e->p_best);
	json_key(w, "p_vs_best_adjusted"); json_double(w, e->p_best_adj);
	json_key(w, "composite"); json_double(w, e->composite);
	json_key(w, "composite_ci"); json_interval(w, e->composite_lo, e->composite_hi);
	json_key(w, "tests");
	json_arr_begin(w);
	for (size_t i = 0; i < e->ntests; i++) {
		const struct rank_test_ratio *t = &e->tests[i];
		json_obj_begin(w);
		json_key(w, "metric"); json_str(w, t->name);
		json_key(w, "higher_is_better"); json_bool(w, t->higher_is_better);
		json_key(w, "mean"); json_double(w, t->mean);
		json_key(w, "ratio"); json_double(w, t->ratio);
		json_key(w, "ratio_ci"); json_interval(w, t->ratio_lo, t->ratio_hi);
		json_key(w, "gain"); json_double(w, t->gain);
		json_key(w, "gain_ci"); json_interval(w, t->gain_lo, t->gain_hi);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "gang_exits"); json_double(w, e->gang_exits);
	json_key(w, "gang_exits_per_s"); json_double(w, e->gang_exits_per_s);
	json_key(w, "top_exits");
	json_arr_begin(w);
	for (size_t i = 0; i < e->ntop_exits; i++) {
		json_obj_begin(w);
		json_key(w, "source"); json_str(w, e->top_exits[i].source);
		json_key(w, "reason"); json_str(w, e->top_exits[i].reason);
		json_key(w, "mean_per_run"); json_double(w, e->top_exits[i].mean_per_run);
		/* null (json_double of NAN) when no run timed these exits */
		json_key(w, "mean_time_s"); json_double(w, e->top_exits[i].mean_time_s);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "runs"); json_int(w, (int64_t)c->nruns);
	json_key(w, "runs_failed"); json_int(w, (int64_t)e->nfailed);
	json_key(w, "runs_interrupted"); json_int(w, (int64_t)e->ninterrupted);
	json_key(w, "failure_rate"); json_double(w, e->failure_rate);
	json_key(w, "failing"); json_bool(w, e->failing);
	json_key(w, "more_failures"); json_bool(w, e->more_failures);
	json_key(w, "boots"); json_int(w, (int64_t)e->nboots);
	json_key(w, "pairs"); json_int(w, (int64_t)e->pairs);
	json_key(w, "units"); json_int(w, (int64_t)e->units);
	json_key(w, "set_aside"); json_int(w, (int64_t)e->set_aside);
	json_key(w, "outliers"); json_int(w, (int64_t)e->noutliers);
	json_key(w, "host_cpus"); json_int(w, e->host_cpus);
	json_key(w, "nondefault_knobs"); json_int(w, e->nondefault_knobs);
	json_obj_end(w);
}

/* One decision (configurations over the environment levels) as JSON. */
static void json_decision(struct json_writer *w, const struct rank_result *r,
			  const struct rank_decision *d)
{
	json_obj_begin(w);
	json_key(w, "key"); json_str(w, d->key);
	json_key(w, "baseline"); json_bool(w, d == r->baseline_decision);
	json_key(w, "host_reference"); json_bool(w, d->host_reference);
	json_key(w, "verdict");
	json_str(w, d == r->baseline_decision ? "baseline" : decide_verdict_name(d->verdict));
	json_key(w, "gain"); json_double(w, d->gain);
	json_key(w, "gain_ci"); json_interval(w, d->gain_lo, d->gain_hi);
	json_key(w, "p_adjusted"); json_double(w, d->p_adj);
	json_key(w, "min_detectable_effect"); json_double(w, d->min_detectable_effect);
	json_key(w, "needed_repetitions"); json_needed(w, d->needed_repetitions);
	json_key(w, "best"); json_bool(w, d->is_best);
	json_key(w, "equivalent_to_best"); json_bool(w, d->equivalent_to_best);
	json_key(w, "worse_than_best"); json_bool(w, d->worse_than_best);
	json_key(w, "gain_vs_best"); json_double(w, d->best_gain);
	json_key(w, "gain_vs_best_ci"); json_interval(w, d->best_gain_lo, d->best_gain_hi);
	json_key(w, "host_cpus"); json_int(w, d->host_cpus);
	json_key(w, "nondefault_knobs"); json_int(w, d->nondefault_knobs);
	json_key(w, "eliminated_block"); json_int(w, d->eliminated_block);
	json_key(w, "eliminated_against"); json_str(w, d->eliminated_against);
	json_key(w, "eliminated_p"); json_double(w, d->eliminated_p);
	json_key(w, "runs_ok"); json_int(w, (int64_t)d->runs_ok);
	json_key(w, "runs_failed"); json_int(w, (int64_t)d->runs_failed);
	json_key(w, "failure_rate"); json_double(w, d->failure_rate);
	json_key(w, "failing"); json_bool(w, d->failing);
	json_key(w, "gain_bias"); json_double(w, d->gain_bias);
	json_key(w, "failing_at");
	json_str(w, d->failing && r->nlevels > 1 && d->failing_level < r->nlevels
		    ? r->levels[d->failing_level] : NULL);
	json_key(w, "more_failures"); json_bool(w, d->more_failures);
	json_key(w, "failures_p"); json_double(w, d->failures_p);
	json_key(w, "in_contention"); json_bool(w, d->in_contention);
	json_key(w, "configurations");
	json_arr_begin(w);
	for (size_t l = 0; l < r->nlevels; l++) {
		if (!d->levels[l])
			continue;
		json_obj_begin(w);
		json_key(w, "environment"); json_str(w, r->levels[l]);
		json_key(w, "key"); json_str(w, d->levels[l]->config->rec.key);
		json_key(w, "verdict"); json_str(w, decide_verdict_name(d->levels[l]->verdict));
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

/* The warnings as a JSON array of {kind, configuration, message}. */
static void rank_json_warnings(struct json_writer *w, const struct rank_result *r)
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
	json_key(w, "strategy"); json_str(w, r->res->raced ? "race" : "full");
	json_key(w, "race_stop_reason"); json_str(w, r->res->race_stop_reason);
	json_obj_end(w);
	json_key(w, "metric"); json_str(w, r->metric);
	json_key(w, "unit"); json_str(w, r->unit);
	json_key(w, "higher_is_better"); json_bool(w, r->higher_is_better);
	json_key(w, "baseline"); json_str(w, r->baseline ? r->baseline->config->rec.key : NULL);
	json_key(w, "baseline_source"); json_str(w, r->baseline_source);
	json_key(w, "composite"); json_str(w, r->composite_family);
	/* 0.05, or after a race its last look's group-sequential level */
	json_key(w, "alpha"); json_double(w, r->level_alpha * (double)r->ncomparisons);
	json_key(w, "comparisons"); json_int(w, (int64_t)r->ncomparisons);
	json_key(w, "interval_level"); json_double(w, 1 - r->level_alpha);
	json_key(w, "equivalence"); json_double(w, r->equivalence);
	json_key(w, "max_failure_rate"); json_double(w, r->max_failure_rate);
	json_key(w, "trim"); json_double(w, DECIDE_TRIM);
	json_key(w, "objective"); json_str(w, decide_objective_name(r->objective));
	json_key(w, "environment_levels");
	json_arr_begin(w);
	for (size_t l = 0; l < r->nlevels; l++)
		json_str(w, r->levels[l]);
	json_arr_end(w);
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
	json_key(w, "decisions");
	json_arr_begin(w);
	for (size_t d = 0; d < r->ndecisions; d++)
		json_decision(w, r, &r->decisions[d]);
	json_arr_end(w);
	rank_json_boots(w, r);
	if (r->hosts) {
		json_key(w, "host_interaction");
		hostfx_json(w, r->hosts);
	}
	json_key(w, "warnings");
	rank_json_warnings(w, r);
	json_obj_end(w);
}

/* Host commands one per array element. */
static void json_commands(struct json_writer *w, const struct rank_result *r,
			  const struct db_results_config *c)
{
	struct strbuf sb = STRBUF_INIT;
	deploy_host_commands(r, c, &sb);
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
	const struct rank_decision *d = r->recommended_decision;
	json_obj_begin(w);
	json_header(w, r);
	json_key(w, "verdict"); json_str(w, decide_verdict_name(r->verdict));
	json_key(w, "decisive"); json_bool(w, rank_decisive(r));
	json_key(w, "recommended");
	if (e)
		rank_json_entry(w, r, e);
	else
		json_null(w);
	json_key(w, "recommended_decision");
	if (d)
		json_decision(w, r, d);
	else
		json_null(w);
	json_key(w, "nothing_beats_baseline"); json_bool(w, r->nothing_beats_baseline);
	json_key(w, "best"); json_str(w, r->best_decision ? r->best_decision->key : NULL);
	bool self = d && d == r->baseline_decision;
	json_key(w, "gain"); json_double(w, d && !self ? d->gain : NAN);
	json_key(w, "gain_ci");
	json_interval(w, d && !self ? d->gain_lo : NAN, d && !self ? d->gain_hi : NAN);
	json_key(w, "contention");
	json_arr_begin(w);
	for (size_t i = 0; i < r->ncontention; i++) {
		json_obj_begin(w);
		json_key(w, "key"); json_str(w, r->contention[i]->key);
		json_key(w, "verdict"); json_str(w, decide_verdict_name(r->contention[i]->verdict));
		json_key(w, "gain"); json_double(w, r->contention[i]->gain);
		json_key(w, "gain_ci");
		json_interval(w, r->contention[i]->gain_lo, r->contention[i]->gain_hi);
		json_key(w, "needed_repetitions");
		json_needed(w, r->verdict == DECIDE_BETTER ? r->contention[i]->needed_vs_pick
							   : r->contention[i]->needed_repetitions);
		json_key(w, "runs_failed"); json_int(w, (int64_t)r->contention[i]->runs_failed);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "eliminated_unsettled");
	json_arr_begin(w);
	for (size_t i = 0; i < r->nunsettled; i++) {
		const struct rank_decision *u = r->unsettled[i];
		json_obj_begin(w);
		json_key(w, "key"); json_str(w, u->key);
		json_key(w, "verdict"); json_str(w, decide_verdict_name(u->verdict));
		json_key(w, "eliminated_block"); json_int(w, u->eliminated_block);
		json_key(w, "against"); json_str(w, u->eliminated_against);
		json_key(w, "p"); json_double(w, u->eliminated_p);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "leader"); json_str(w, r->leader ? r->leader->key : NULL);
	json_key(w, "min_detectable_effect"); json_double(w, r->min_detectable_effect);
	json_key(w, "needed_repetitions"); json_needed(w, r->needed_repetitions);
	json_key(w, "test_gains");
	json_arr_begin(w);
	for (size_t i = 0; e && !self && i < e->ntests; i++) {
		const struct rank_test_ratio *t = &e->tests[i];
		json_obj_begin(w);
		json_key(w, "metric"); json_str(w, t->name);
		json_key(w, "higher_is_better"); json_bool(w, t->higher_is_better);
		json_key(w, "gain"); json_double(w, t->gain);
		json_key(w, "gain_ci"); json_interval(w, t->gain_lo, t->gain_hi);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "reason"); json_str(w, r->reason);
	json_key(w, "libvirt_xml");
	if (e && deploy_has_guest(e->config)) {
		struct strbuf xml = STRBUF_INIT;
		deploy_xml(e->config, &xml);
		json_str(w, strbuf_str(&xml));
		strbuf_release(&xml);
	} else {
		json_null(w);
	}
	json_key(w, "host_commands");
	if (e)
		json_commands(w, r, e->config);
	else
		json_null(w);
	json_key(w, "evidence");
	json_obj_begin(w);
	json_key(w, "runs"); json_int(w, (int64_t)r->runs_total);
	json_key(w, "runs_ok"); json_int(w, (int64_t)r->runs_ok);
	json_key(w, "runs_failed"); json_int(w, (int64_t)r->runs_failed);
	json_key(w, "runs_interrupted"); json_int(w, (int64_t)r->runs_interrupted);
	json_key(w, "recommended_runs_failed");
	json_int(w, d ? (int64_t)d->runs_failed : 0);
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
	rank_json_boots(w, r);
	if (r->hosts) {
		json_key(w, "host_interaction");
		hostfx_json(w, r->hosts);
	}
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
	if (r->baseline_decision)
		strbuf_addf(out, "baseline: %s (%s)\n", r->baseline_decision->key,
			    r->baseline_source);
	else
		strbuf_addstr(out, "baseline: none (ranked without ratios)\n");
	if (r->nlevels > 1) {
		strbuf_addf(out, "environment levels (never recommended, objective %s):",
			    decide_objective_name(r->objective));
		for (size_t l = 0; l < r->nlevels; l++)
			strbuf_addf(out, " %s", r->levels[l]);
		strbuf_addch(out, '\n');
	}
}

/* Width of the configuration column: the longest key, at least the heading. */
static int key_width(const struct rank_result *r)
{
	size_t w = strlen("CONFIGURATION");
	for (size_t i = 0; i < r->nentries; i++)
		if (strlen(r->entries[i].config->rec.key) > w)
			w = strlen(r->entries[i].config->rec.key);
	return (int)w;
}

void rank_entry_status(struct strbuf *st, const struct rank_result *r,
		       const struct rank_entry *e)
{
	if (e->host_reference)
		strbuf_addstr(st, "host reference (not a VM shape)");
	else if (e->eliminated_block > 0)
		strbuf_addf(st, "eliminated after block %d", e->eliminated_block);
	else if (e->failing)
		strbuf_addstr(st, "failing");
	else if (!e->s.n)
		strbuf_addstr(st, "no data");
	else if (e->is_best)
		strbuf_addstr(st, r->nlevels > 1 ? "best decision" : "best");
	else if (e->tied_with_best)
		strbuf_addf(st, "tied with the best%s (+-%.0f %%)", r->nlevels > 1 ? " decision" : "",
			    100 * r->equivalence);
	else if (e->decision->worse_than_best)
		strbuf_addstr(st, r->nlevels > 1 ? "decision worse than the best" : "worse than the best");
	else if (!isnan(e->decision->best_gain))
		strbuf_addstr(st, "not separated from the best");
	else
		strbuf_addstr(st, "untested");
	if (e->nfailed)
		strbuf_addf(st, ", %zu of %zu failed", e->nfailed, e->nfailed + e->s.n);
}

/* The configurations of one environment level (all of them with one level). */
static void text_level(struct strbuf *out, const struct rank_result *r, size_t level, int kw,
		       bool geo)
{
	strbuf_addf(out, "\n%-4s  %-*s  %3s  %12s  %-27s  %6s  %-28s  %-12s  %10s  %s\n", "RANK",
		    kw, "CONFIGURATION", "N", geo ? "GEOMEAN" : "MEAN", "95% CI", "CV",
		    "VS BASELINE [CI]", "VERDICT", "GANG/S", "STATUS");
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		if (e->level != level)
			continue;
		struct strbuf ci = STRBUF_INIT, vs = STRBUF_INIT, st = STRBUF_INIT;
		struct rank_location loc;
		rank_entry_location(e, geo, &loc);
		if (!isnan(loc.lo))
			strbuf_addf(&ci, "[%.6g, %.6g]", loc.lo, loc.hi);
		else
			strbuf_addstr(&ci, "-");
		if (e->decision == r->baseline_decision)
			strbuf_addstr(&vs, "baseline");
		else if (!isnan(e->gain))
			rank_format_change(&vs, e->gain, e->gain_lo, e->gain_hi, r->higher_is_better,
					   r->metric, r->unit, false);
		else
			strbuf_addstr(&vs, "-");
		rank_entry_status(&st, r, e);
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
			snprintf(mean, sizeof(mean), "%.6g", loc.mean);
		else
			snprintf(mean, sizeof(mean), "-");
		strbuf_addf(out, "%-4s  %-*s  %3zu  %12s  %-27s  %6s  %-28s  %-12s  %10s  %s\n", pos,
			    kw, e->config->rec.key, e->s.n, mean, strbuf_str(&ci), cv, strbuf_str(&vs),
			    e->decision == r->baseline_decision ? "-" : decide_verdict_name(e->verdict),
			    gang, strbuf_str(&st));
		strbuf_release(&ci);
		strbuf_release(&vs);
		strbuf_release(&st);
	}
}

void rank_text(struct strbuf *out, const struct rank_result *r)
{
	int kw = key_width(r);
	bool geo = rank_locations_geometric(r);
	text_header(out, r);
	for (size_t l = 0; l < r->nlevels; l++) {
		if (r->nlevels > 1)
			strbuf_addf(out, "\nenvironment %s:", r->levels[l]);
		text_level(out, r, l, kw, geo);
	}
	if (r->nlevels > 1) {
		strbuf_addf(out, "\ndecisions over the %zu environment levels (objective %s):\n",
			    r->nlevels, decide_objective_name(r->objective));
		for (size_t d = 0; d < r->ndecisions; d++) {
			const struct rank_decision *dec = &r->decisions[d];
			strbuf_addf(out, "  %-*s  ", kw, dec->key);
			if (dec == r->baseline_decision)
				strbuf_addstr(out, "baseline");
			else
				rank_format_metric_change(out, r, dec->gain, dec->gain_lo, dec->gain_hi);
			strbuf_addf(out, "  %s%s\n", dec == r->baseline_decision ? "" :
				    decide_verdict_name(dec->verdict), dec->host_reference
				    ? " (host reference)" : dec->is_best ? " (best)" :
				    dec->equivalent_to_best ? " (tied with the best)" : "");
		}
	}
	if (r->composite_family) {
		strbuf_addf(out, "\ncomposite (%s: geometric mean of the throughput tests, "
			    "per run, against the baseline):\n", r->composite_family);
		for (size_t i = 0; i < r->nentries; i++) {
			const struct rank_entry *e = &r->entries[i];
			strbuf_addf(out, "  %-*s  %.3f ", kw, e->config->rec.key, e->composite);
			if (isnan(e->composite_lo))
				strbuf_addstr(out, "               ");
			else
				strbuf_addf(out, "[%.3f, %.3f]", e->composite_lo, e->composite_hi);
			for (size_t t = 0; t < e->ntests; t++) {
				strbuf_addf(out, " %s ", e->tests[t].name + strlen(r->composite_family) + 1);
				rank_format_change(out, e->tests[t].gain, NAN, NAN,
						   e->tests[t].higher_is_better, e->tests[t].name, NULL,
						   false);
			}
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
			strbuf_addf(out, "  %-*s ", kw, e->config->rec.key);
			for (size_t t = 0; t < e->ntop_exits; t++) {
				strbuf_addf(out, " %s:%s %.4g", e->top_exits[t].source,
					    e->top_exits[t].reason, e->top_exits[t].mean_per_run);
				if (!isnan(e->top_exits[t].mean_time_s))
					strbuf_addf(out, " (%.4g ms handling)",
						    e->top_exits[t].mean_time_s * 1e3);
			}
			strbuf_addch(out, '\n');
		}
	}
	strbuf_addf(out, "\nverdicts: log ratios paired by block (blocks sharing a guest boot "
		    "pooled), %.0f %% trimmed; intervals at %.4g %% (Bonferroni over %zu "
		    "comparisons with the baseline); equivalent = the interval inside +-%.0f %%; "
		    "tied = equivalent to the best; a failed run counts as the worst outcome\n",
		    100 * DECIDE_TRIM, 100 * (1 - r->level_alpha), r->ncomparisons,
		    100 * r->equivalence);
	if (!r->higher_is_better)
		strbuf_addf(out, "VS BASELINE: the change of %s against the baseline (lower is better: "
			    "a fall is a gain)\n", r->metric);
	if (r->res->raced)
		strbuf_addf(out, "race: the verdict is its look after the blocks run, at that look's "
			    "level %.3g (the race's 0.05 spent over its looks, blocks %d..%d)\n",
			    r->level_alpha * (double)r->ncomparisons, r->res->race_first_test,
			    r->res->race_max_blocks);
	strbuf_addstr(out, geo ? "means: geometric, on the scale of the gains (ratios of them), "
		      "with their 95 % intervals on the log scale\n"
		      : "means: arithmetic, with Student t intervals (a value is not positive: "
		      "no geometric mean)\n");
	rank_text_boots(out, r);
	if (r->hosts)
		hostfx_text(out, r->hosts);
	text_warnings(out, r);
}

/* Indents every line of text by two spaces. */
static void text_indented(struct strbuf *out, const char *text)
{
	for (const char *p = text, *nl; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		strbuf_addf(out, "  %.*s\n", (int)(nl - p), p);
	}
}

void rank_text_recommendation(struct strbuf *out, const struct rank_result *r)
{
	const struct rank_entry *e = r->recommended;
	const struct rank_decision *d = r->recommended_decision;
	text_header(out, r);
	strbuf_addf(out, "\nverdict: %s\n", decide_verdict_name(r->verdict));
	if (!e) {
		strbuf_addf(out, "no recommendation: %s\n", r->reason);
		text_warnings(out, r);
		return;
	}
	if (rank_decisive(r)) {
		strbuf_addf(out, "recommended: %s\n", d->key);
	} else {
		/* "Leading" is the best objective only; the pick below is what stays meanwhile. */
		const struct rank_decision *lead = rank_leading(r);
		strbuf_addstr(out, "no decision yet; ");
		if (lead)
			strbuf_addf(out, "leading for now: %s", lead->key);
		if (r->leader && r->leader != lead)
			strbuf_addf(out, "%sstrongest contender: %s", lead ? " (" : "", r->leader->key);
		if (lead && r->leader && r->leader != lead)
			strbuf_addch(out, ')');
		if (d != lead)
			strbuf_addf(out, "%suntil then: %s%s", lead || r->leader ? "; " : "", d->key,
				    d == r->baseline_decision ? " (the baseline)" : "");
		strbuf_addch(out, '\n');
	}
	if (r->nothing_beats_baseline)
		strbuf_addf(out, "  nothing beats the baseline (every other shown worse, within "
			    "+-%.0f %% or failing): keep it.\n", 100 * r->equivalence);
	for (size_t l = 0; l < r->nlevels; l++) {
		const struct rank_entry *x = d->levels[l];
		if (!x)
			continue;
		struct rank_location loc;
		rank_location_of(x->values, x->s.n, &loc);
		strbuf_addf(out, "  %s%s%s: %s %.6g", r->metric, r->nlevels > 1 ? " at " : "",
			    r->nlevels > 1 ? r->levels[l] : "",
			    loc.geometric ? "geometric mean" : "mean", loc.mean);
		if (!isnan(loc.lo))
			strbuf_addf(out, " (95%% CI %.6g .. %.6g)", loc.lo, loc.hi);
		strbuf_addf(out, " over %zu runs", x->s.n);
		if (x->nfailed)
			strbuf_addf(out, "; %zu of %zu runs failed", x->nfailed, x->nfailed + x->s.n);
		if (r->nlevels > 1 && d != r->baseline_decision && !isnan(x->gain)) {
			strbuf_addstr(out, "; ");
			rank_format_metric_change(out, r, x->gain, x->gain_lo, x->gain_hi);
			strbuf_addf(out, " against the baseline there (%s)", decide_verdict_name(x->verdict));
		}
		strbuf_addch(out, '\n');
	}
	if (r->baseline_decision && d != r->baseline_decision && !isnan(d->gain)) {
		strbuf_addf(out, "  %s %s over the baseline: ", r->nlevels > 1 ?
			    decide_objective_name(r->objective) : "expected", r->higher_is_better
			    ? "gain" : "change of the value");
		rank_format_metric_change(out, r, d->gain, d->gain_lo, d->gain_hi);
		strbuf_addch(out, '\n');
		for (size_t t = 0; t < e->ntests; t++) {
			strbuf_addf(out, "    %-20s ", e->tests[t].name);
			rank_format_change(out, e->tests[t].gain, e->tests[t].gain_lo,
					   e->tests[t].gain_hi, e->tests[t].higher_is_better,
					   e->tests[t].name, NULL, true);
			strbuf_addstr(out, e->tests[t].higher_is_better ? "\n" : " (lower is better)\n");
		}
	}
	if (r->ncontention) {
		strbuf_addf(out, "  still in contention (%s):\n", r->verdict == DECIDE_BETTER
			    ? "not yet separated from the best" : "against the baseline");
		for (size_t i = 0; i < r->ncontention; i++) {
			const struct rank_decision *c = r->contention[i];
			strbuf_addf(out, "    %-*s %-12s ", key_width(r), c->key,
				    decide_verdict_name(c->verdict));
			rank_format_metric_change(out, r, c->gain, c->gain_lo, c->gain_hi);
			strbuf_addstr(out, "  (");
			rank_format_needed(out, r->verdict == DECIDE_BETTER ? c->needed_vs_pick
									     : c->needed_repetitions);
			if (c->runs_failed)
				strbuf_addf(out, "; %zu of %zu runs failed", c->runs_failed,
					    c->runs_ok + c->runs_failed);
			strbuf_addstr(out, ")\n");
		}
	}
	for (size_t i = 0; i < r->nunsettled; i++) {
		const struct rank_decision *u = r->unsettled[i];
		strbuf_addf(out, "  eliminated by the race (not shown worse): %s after block %d "
			    "against %s, p = %.2g\n", u->key, u->eliminated_block,
			    u->eliminated_against ? u->eliminated_against : "its failures",
			    u->eliminated_p);
	}
	if (!rank_decisive(r) && !isnan(r->min_detectable_effect))
		strbuf_addf(out, "  min_detectable_effect: %.1f %%\n", 100 * r->min_detectable_effect);
	if (!rank_decisive(r) && r->needed_repetitions > 0) {
		strbuf_addf(out, "  needed_repetitions: %s%d", r->needed_repetitions > DECIDE_NEEDED_CAP
			    ? "more than " : "", r->needed_repetitions > DECIDE_NEEDED_CAP
			    ? DECIDE_NEEDED_CAP : r->needed_repetitions);
		if (r->leader)
			strbuf_addf(out, " (%s against the baseline)", r->leader->key);
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "  why: %s\n", r->reason);

	strbuf_addstr(out, "\nlibvirt domain XML:\n");
	struct strbuf xml = STRBUF_INIT;
	if (deploy_has_guest(e->config))
		deploy_xml(e->config, &xml);
	else
		strbuf_addstr(&xml, DEPLOY_NO_GUEST "\n");
	text_indented(out, xml.buf);
	strbuf_release(&xml);
	struct strbuf cmds = STRBUF_INIT;
	deploy_host_commands(r, e->config, &cmds);
	strbuf_addstr(out, "\nhost commands (as root, with no HV guest running):\n");
	if (!cmds.len)
		strbuf_addstr(out, "  none: the host's settings stay as they are\n");
	text_indented(out, cmds.buf);
	strbuf_release(&cmds);

	strbuf_addf(out, "\nevidence: %zu runs, %zu ok, %zu failed", r->runs_total, r->runs_ok,
		    r->runs_failed);
	if (r->runs_interrupted)
		strbuf_addf(out, ", %zu interrupted", r->runs_interrupted);
	if (r->correlation_x)
		strbuf_addf(out, "; Spearman(%s, %s) = %.2f over %zu runs", r->correlation_x,
			    r->metric, r->spearman, r->spearman_n);
	else
		strbuf_addstr(out, "; ganged exits: not applicable on this host");
	strbuf_addch(out, '\n');
	if (r->hosts)
		hostfx_text(out, r->hosts);
	text_warnings(out, r);
}

/* "the runs of one boot are alike: ..." and what to spend next, from the variance components. */
void rank_text_boots(struct strbuf *out, const struct rank_result *r)
{
	const struct decide_components *vc = &r->dr.components;
	const struct decide_drift *dr = &r->dr.drift;
	if (!vc->shared) {
		strbuf_addstr(out, "boots: no boot served two runs of one configuration: each run "
			      "is its own replicate, boot-to-boot spread included in the run-to-run one\n");
	} else if (!vc->estimable) {
		strbuf_addf(out, "boots: %zu boots for %zu runs: too few to tell boot-to-boot from "
			    "run-to-run spread\n", vc->boots, vc->runs);
	} else {
		strbuf_addf(out, "boots: %zu boots for %zu runs (%.1f runs per boot): boot-to-boot "
			    "sd %.1f %%, run-to-run sd %.1f %% (F = %.2f on %.0f and %.0f df, p = "
			    "%.2g); verdicts count boots, not runs\n", vc->boots, vc->runs,
			    vc->runs_per_boot, 100 * vc->sd_boot, 100 * vc->sd_run, vc->f, vc->df1,
			    vc->df2, vc->p);
		double k = vc->optimal_runs_per_boot;
		switch (vc->advice) {
		case DECIDE_ADVICE_MORE_BOOTS:
			strbuf_addf(out, "  next: more boots, fewer runs each (guest.reuse_runs: %.0f; "
				    "Kalibera & Jones' optimum %.1f from the costs)\n", fmax(1, round(k)), k);
			break;
		case DECIDE_ADVICE_MORE_RUNS:
			if (isinf(k))
				strbuf_addstr(out, "  next: more runs per boot (raise guest.reuse_runs: "
					      "the boots do not differ measurably)\n");
			else
				strbuf_addf(out, "  next: more runs per boot (guest.reuse_runs: %.0f; "
					    "Kalibera & Jones' optimum %.1f from the costs)\n",
					    round(k), k);
			break;
		case DECIDE_ADVICE_KEEP:
			strbuf_addf(out, "  next: keep %.1f runs per boot (the optimum is %.1f)\n",
				    vc->runs_per_boot, k);
			break;
		case DECIDE_ADVICE_NONE:
			strbuf_addstr(out, "  next: the boot and run costs are unknown (no "
				      "boot_seconds / benchmark_seconds stored)\n");
			break;
		}
	}
	if (dr->tested)
		strbuf_addf(out, "drift: %+.2f %% per block [%+.2f %%, %+.2f %%], p = %.2g over %zu "
			    "units%s\n",
			    100 * expm1(dr->slope), 100 * expm1(dr->lo), 100 * expm1(dr->hi), dr->p,
			    dr->units, dr->p < DECIDE_ALPHA ? "; cancelled by the blocking (every comparison is "
			    "within blocks)" : "");
}

void rank_json_boots(struct json_writer *w, const struct rank_result *r)
{
	static const char *const advice[] = {
		[DECIDE_ADVICE_NONE] = NULL, [DECIDE_ADVICE_KEEP] = "keep",
		[DECIDE_ADVICE_MORE_BOOTS] = "more boots", [DECIDE_ADVICE_MORE_RUNS] = "more runs per boot",
	};
	const struct decide_components *vc = &r->dr.components;
	const struct decide_drift *dr = &r->dr.drift;
	json_key(w, "boots");
	json_obj_begin(w);
	json_key(w, "shared"); json_bool(w, vc->shared);
	json_key(w, "estimable"); json_bool(w, vc->estimable);
	json_key(w, "boots"); json_int(w, (int64_t)vc->boots);
	json_key(w, "runs"); json_int(w, (int64_t)vc->runs);
	json_key(w, "runs_per_boot"); json_double(w, vc->runs_per_boot);
	json_key(w, "sd_boot"); json_double(w, vc->sd_boot);
	json_key(w, "sd_run"); json_double(w, vc->sd_run);
	json_key(w, "f"); json_double(w, vc->f);
	json_key(w, "p"); json_double(w, vc->p);
	json_key(w, "optimal_runs_per_boot"); json_double(w, vc->optimal_runs_per_boot);
	json_key(w, "advice"); json_str(w, advice[vc->advice]);
	json_obj_end(w);
	json_key(w, "drift");
	json_obj_begin(w);
	json_key(w, "tested"); json_bool(w, dr->tested);
	json_key(w, "per_block"); json_double(w, dr->tested ? expm1(dr->slope) : NAN);
	json_key(w, "per_block_ci");
	json_interval(w, dr->tested ? expm1(dr->lo) : NAN, dr->tested ? expm1(dr->hi) : NAN);
	json_key(w, "p"); json_double(w, dr->p);
	json_key(w, "units"); json_int(w, (int64_t)dr->units);
	json_obj_end(w);
}
