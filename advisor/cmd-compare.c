/*
 * compare: the configurations two experiments share (a rerun, the same
 * sweep on another day or host), the ratio of each between them with its
 * interval and verdict, and whether the recommendation still holds.  A
 * rerun whose winner flipped is flagged, never silently accepted.  The
 * statistics are in compare.h; this file only formats them.
 */
#include <math.h>
#include <stdio.h>

#include "../schema/db-results.h"
#include "../util/json.h"
#include "cmd.h"
#include "compare.h"
#include "rank.h"

static const char *compare_metric;

static const struct option compare_options[] = {
	OPT_STRING(0, "metric", &compare_metric, "M",
		   "compare by metric M (default: the first experiment's primary metric)"),
	OPT_END(),
};

/* "x1.034 [x1.010, x1.058]" (NAN parts as n/a). */
static void format_ratio(struct strbuf *sb, const struct decide_shift *r)
{
	if (isnan(r->ratio)) {
		strbuf_addstr(sb, "n/a");
		return;
	}
	strbuf_addf(sb, "x%.3f", r->ratio);
	if (!isnan(r->lo))
		strbuf_addf(sb, " [x%.3f, x%.3f]", r->lo, r->hi);
}

/* How experiment x measured the pick `key` of the other one (d: its decision there). */
static void pick_there(struct strbuf *out, const struct rank_decision *d, const char *key,
		       const struct rank_result *x)
{
	strbuf_addf(out, "  in experiment %lld, %s ", (long long)x->res->exp.id, key);
	if (!d)
		strbuf_addstr(out, "was not measured\n");
	else if (d->is_best)
		strbuf_addstr(out, "is the best\n");
	else if (d->failing)
		strbuf_addstr(out, "is failing\n");
	else if (d->eliminated_block)
		strbuf_addf(out, "was eliminated by the race after block %d\n", d->eliminated_block);
	else if (d->worse_than_best)
		strbuf_addstr(out, "is shown worse than the best\n");
	else if (d->verdict == DECIDE_WORSE)
		strbuf_addstr(out, "is shown worse than the baseline\n");
	else if (d == x->baseline_decision || d->verdict == DECIDE_EQUIVALENT)
		strbuf_addstr(out, "is not shown better than the baseline, which the pick is\n");
	else
		strbuf_addstr(out, "is not separated from the best\n");
}

/* The recommendation neither holds nor changed: say why. */
static void holds_unknown(struct strbuf *out, const struct compare_result *c)
{
	if (c->status == DECIDE_TIED_WINNERS || (rank_decisive(c->first) && rank_decisive(c->second)))
		strbuf_addf(out, "  both decide, on different picks (%s, %s) that neither experiment "
			    "separates: tied winners, either is as good on this evidence ('topoadvisor "
			    "extend' both to separate them)\n",
			    c->recommended_first ? c->recommended_first : "nothing",
			    c->recommended_second ? c->recommended_second : "nothing");
	else
		strbuf_addf(out, "  experiment %lld does not decide: it neither confirms nor changes the "
			    "recommendation ('topoadvisor extend' it)\n", (long long)
			    (rank_decisive(c->first) ? c->second : c->first)->res->exp.id);
}

static void compare_text(struct strbuf *out, const struct compare_result *c)
{
	const struct rank_result *a = c->first, *b = c->second;
	strbuf_addf(out, "experiment %lld '%s' against experiment %lld '%s': %s, %s is better\n",
		    (long long)b->res->exp.id, b->res->exp.name, (long long)a->res->exp.id,
		    a->res->exp.name, a->metric, a->higher_is_better ? "higher" : "lower");
	strbuf_addf(out, "MEAN1, MEAN2: %.0f %% trimmed geometric means; ratio = MEAN2 / MEAN1; "
		    "%.1f %% Yuen intervals (Bonferroni over %zu configurations); equivalent "
		    "within +-%.0f %%\n\n", 100 * DECIDE_TRIM, 100 * (1 - c->alpha), c->nentries,
		    100 * c->delta);
	strbuf_addf(out, "%-48s %4s %4s %12s %12s  %-28s %s\n", "CONFIGURATION", "N1", "N2",
		    "MEAN1", "MEAN2", "RATIO [CI]", "VERDICT");
	for (size_t i = 0; i < c->nentries; i++) {
		const struct compare_entry *e = &c->entries[i];
		struct strbuf r = STRBUF_INIT;
		format_ratio(&r, &e->r);
		strbuf_addf(out, "%-48s %4zu %4zu %12.6g %12.6g  %-28s %s\n", e->key,
			    e->first->s.n, e->second->s.n, e->r.first_loc, e->r.second_loc,
			    strbuf_str(&r), decide_verdict_name(e->r.verdict));
		strbuf_release(&r);
	}
	for (size_t i = 0; i < c->nonly_first; i++)
		strbuf_addf(out, "%-48s only in experiment %lld\n", c->only_first[i],
			    (long long)a->res->exp.id);
	for (size_t i = 0; i < c->nonly_second; i++)
		strbuf_addf(out, "%-48s only in experiment %lld\n", c->only_second[i],
			    (long long)b->res->exp.id);
	strbuf_addf(out, "\nrecommendation: %s\n", decide_compare_status_name(c->status));
	const char *r1 = c->recommended_first ? c->recommended_first : "nothing";
	const char *r2 = c->recommended_second ? c->recommended_second : "nothing";
	strbuf_addf(out, "  experiment %lld: %s %s; experiment %lld: %s %s\n",
		    (long long)a->res->exp.id, decide_verdict_name(a->verdict), r1,
		    (long long)b->res->exp.id, decide_verdict_name(b->verdict), r2);
	switch (c->status) {
	case DECIDE_CONSISTENT:
		strbuf_addf(out, "  both decide %s, and no configuration shifted: the winner holds\n",
			    r1);
		break;
	case DECIDE_DRIFTED:
		strbuf_addf(out, "  %s shifted by x%.3f [x%.3f, x%.3f]: the levels moved (host load, "
			    "firmware, kernel); the comparisons within each experiment stand\n",
			    c->largest->key, c->largest->r.ratio, c->largest->r.lo, c->largest->r.hi);
		if (c->holds == DECIDE_HOLDS_YES)
			strbuf_addf(out, "  both decide %s: the winner holds\n", r1);
		else
			holds_unknown(out, c);
		break;
	case DECIDE_CHANGED_WINNER:
		strbuf_addf(out, "  CHANGED: both decide, they pick different configurations, and "
			    "one experiment separates them\n");
		pick_there(out, c->first_pick_there, r1, b);
		pick_there(out, c->second_pick_here, r2, a);
		strbuf_addstr(out, "  the winner is not stable between these runs: look for drift "
			      "(host load, firmware, kernel), then 'topoadvisor extend' both\n");
		break;
	case DECIDE_TIED_WINNERS:
	case DECIDE_INCONCLUSIVE:
		holds_unknown(out, c);
		break;
	}
}

static void compare_json(struct json_writer *w, const struct compare_result *c)
{
	json_obj_begin(w);
	json_key(w, "first"); json_int(w, c->first->res->exp.id);
	json_key(w, "second"); json_int(w, c->second->res->exp.id);
	json_key(w, "metric"); json_str(w, c->first->metric);
	json_key(w, "higher_is_better"); json_bool(w, c->first->higher_is_better);
	json_key(w, "alpha"); json_double(w, c->alpha);
	json_key(w, "equivalence"); json_double(w, c->delta);
	json_key(w, "configurations");
	json_arr_begin(w);
	for (size_t i = 0; i < c->nentries; i++) {
		const struct compare_entry *e = &c->entries[i];
		json_obj_begin(w);
		json_key(w, "key"); json_str(w, e->key);
		json_key(w, "n_first"); json_uint(w, e->first->s.n);
		json_key(w, "n_second"); json_uint(w, e->second->s.n);
		json_key(w, "mean_first"); json_double(w, e->r.first_loc);
		json_key(w, "mean_second"); json_double(w, e->r.second_loc);
		json_key(w, "ratio"); json_double(w, e->r.ratio);
		json_key(w, "ratio_ci"); json_interval(w, e->r.lo, e->r.hi);
		json_key(w, "p"); json_double(w, e->r.p);
		json_key(w, "verdict"); json_str(w, decide_verdict_name(e->r.verdict));
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "only_in_first");
	json_arr_begin(w);
	for (size_t i = 0; i < c->nonly_first; i++)
		json_str(w, c->only_first[i]);
	json_arr_end(w);
	json_key(w, "only_in_second");
	json_arr_begin(w);
	for (size_t i = 0; i < c->nonly_second; i++)
		json_str(w, c->only_second[i]);
	json_arr_end(w);
	json_key(w, "recommendation");
	json_obj_begin(w);
	json_key(w, "first"); json_str(w, c->recommended_first);
	json_key(w, "second"); json_str(w, c->recommended_second);
	json_key(w, "first_verdict"); json_str(w, decide_verdict_name(c->first->verdict));
	json_key(w, "second_verdict"); json_str(w, decide_verdict_name(c->second->verdict));
	json_key(w, "holds");
	if (c->holds == DECIDE_HOLDS_UNKNOWN)
		json_null(w);
	else
		json_bool(w, c->holds == DECIDE_HOLDS_YES);
	json_key(w, "status"); json_str(w, decide_compare_status_name(c->status));
	json_key(w, "shifted"); json_str(w, c->largest ? c->largest->key : NULL);
	json_key(w, "shift_ratio"); json_double(w, c->largest ? c->largest->r.ratio : NAN);
	json_obj_end(w);
	json_obj_end(w);
}

static int cmd_compare_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct db_results ra, rb;
	struct rank_result a, b;
	if (rank_load(ctx->db_path, argv[0], compare_metric, &ra, &a, &err) < 0)
		return cmd_fail(&err);
	if (rank_load(ctx->db_path, argv[1], compare_metric ? compare_metric : a.metric, &rb, &b,
		      &err) < 0) {
		rank_result_release(&a);
		db_results_release(&ra);
		return cmd_fail(&err);
	}
	struct compare_result c;
	int rc = EXIT_OK;
	if (compare_rankings(&a, &b, a.equivalence, &c, &err) < 0) {
		rc = cmd_fail(&err);
	} else {
		struct strbuf out = STRBUF_INIT;
		if (ctx->json) {
			struct json_writer w;
			json_init(&w, &out, true);
			compare_json(&w, &c);
		} else {
			compare_text(&out, &c);
		}
		cmd_print(&out);
		strbuf_release(&out);
		compare_result_release(&c);
	}
	rank_result_release(&b);
	db_results_release(&rb);
	rank_result_release(&a);
	db_results_release(&ra);
	return rc;
}

const struct cmd_entry cmd_compare_entry = {
	.name = "compare",
	.summary = "compare the configurations two experiments share: drift, and whether "
		   "the recommendation holds",
	.args_usage = "EXP1 EXP2",
	.options = compare_options,
	.min_args = 2,
	.max_args = 2,
	.exec = cmd_compare_exec,
};
