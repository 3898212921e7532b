/*
 * rank-reason: the recommendation's paragraph in a user's words, written
 * from the engine's result (part of the rank module, see rank.h).
 */
#include <math.h>
#include <string.h>

#include "rank.h"

static void list_decisions(struct strbuf *why, const struct rank_decision *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(why, "%s%s (%s)", i ? ", " : "", v[i]->key,
			    decide_verdict_name(v[i]->verdict));
}

/*
 * "k of n runs failed" for decisions with failures among those named; a
 * decision failing at one environment level says so with that level's count.
 */
static void list_failures(struct strbuf *why, const struct rank_result *r)
{
	bool any = false;
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (!dec->runs_failed || dec->host_reference)
			continue;
		strbuf_addf(why, "%s%s: %zu of %zu runs failed", any ? "; " : " Failures: ",
			    dec->key, dec->runs_failed, dec->runs_ok + dec->runs_failed);
		const struct rank_entry *at = r->nlevels > 1 && dec->failing_level < r->nlevels
					      ? dec->levels[dec->failing_level] : NULL;
		if (dec->failing && at)
			strbuf_addf(why, " (failing at %s: %zu of %zu runs there; never "
				    "recommended)", r->levels[dec->failing_level], at->nfailed,
				    at->nfailed + at->s.n);
		else if (dec->failing)
			strbuf_addstr(why, " (failing: never recommended)");
		else if (dec->more_failures)
			strbuf_addf(why, " (shown more often than the baseline, p = %.2g: never "
				    "better)", dec->failures_p);
		any = true;
	}
	if (any)
		strbuf_addch(why, '.');
}

/* The race's eliminations nothing but the race showed: selection, not evidence. */
static void list_unsettled(struct strbuf *why, const struct rank_result *r)
{
	if (!r->nunsettled)
		return;
	strbuf_addstr(why, " Eliminated by the race, and not shown worse than the baseline or "
		      "within its margin by their own runs: ");
	for (size_t i = 0; i < r->nunsettled; i++) {
		const struct rank_decision *d = r->unsettled[i];
		strbuf_addf(why, "%s%s (after block %d against %s, p = %.2g)", i ? ", " : "",
			    d->key, d->eliminated_block,
			    d->eliminated_against ? d->eliminated_against : "its failures",
			    d->eliminated_p);
	}
	strbuf_addch(why, '.');
}

/* What would settle an undecided verdict: the leader (the strongest
 * contender) against the baseline. */
static void settle(struct strbuf *why, const struct rank_result *r)
{
	const struct rank_decision *l = r->leader;
	if (!l)
		return;
	if (!isnan(r->min_detectable_effect))
		strbuf_addf(why, " The strongest contender %s: these runs detect gains of about %.1f %% "
			    "(power %.0f %%).", l->key, 100 * r->min_detectable_effect,
			    100 * DECIDE_POWER);
	if (r->needed_repetitions > DECIDE_NEEDED_CAP)
		strbuf_addf(why, " More than %d further blocks would be needed at this spread: "
			    "quieten the host or the benchmark (see the CV warnings), or widen "
			    "advisor.equivalence if a difference of +-%.0f %% does not matter to "
			    "you.", DECIDE_NEEDED_CAP, 100 * r->equivalence);
	else if (r->needed_repetitions > 0)
		strbuf_addf(why, " About %d more block%s would %s %s against the baseline "
			    "(topoadvisor extend %s --repetitions %d).", r->needed_repetitions,
			    r->needed_repetitions == 1 ? "" : "s",
			    l->verdict == DECIDE_INSUFFICIENT ? "make testable" : "settle",
			    l->key, r->res->exp.name, r->needed_repetitions);
}

static void method(struct strbuf *why, const struct rank_result *r)
{
	strbuf_addf(why, "paired by block, %.0f %% trimmed, Bonferroni over %zu comparison%s",
		    100 * DECIDE_TRIM, r->dr.m, r->dr.m == 1 ? "" : "s");
}

static void reason_better(struct strbuf *why, const struct rank_result *r)
{
	const struct rank_decision *pick = r->recommended_decision;
	const struct rank_decision *top = rank_decision_at(r, r->dr.top);
	strbuf_addf(why, "%s is better than the baseline %s: ", pick->key,
		    r->baseline_decision->key);
	rank_format_metric_change(why, r, pick->gain, pick->gain_lo, pick->gain_hi);
	strbuf_addstr(why, " (");
	method(why, r);
	strbuf_addch(why, ')');
	if (r->dr.ncandidates > 1 && top)
		strbuf_addf(why, "; of the %zu configurations within +-%.0f %% of the top one "
			    "(%s) it costs least (fewer host CPUs, then fewer non-default host "
			    "settings, then significantly fewer ganged exits)", r->dr.ncandidates,
			    100 * r->equivalence, top->key);
	if (r->ncontention) {
		strbuf_addstr(why, ". Not yet shown worse than the best, and could still be "
			      "better: ");
		list_decisions(why, r->contention, r->ncontention);
	}
	strbuf_addch(why, '.');
}

static void reason_with_baseline(struct strbuf *why, const struct rank_result *r)
{
	const struct rank_decision *b = r->baseline_decision;
	if (r->verdict == DECIDE_BETTER) {
		reason_better(why, r);
	} else if (r->verdict == DECIDE_INSUFFICIENT) {
		strbuf_addf(why, "Only the baseline %s was measured: nothing to compare it with.",
			    b->key);
	} else if (r->verdict == DECIDE_EQUIVALENT) {
		strbuf_addf(why, "Nothing beats the baseline %s: every other configuration is "
			    "shown worse than it, within +-%.0f %% of it, or failing (",
			    b->key, 100 * r->equivalence);
		method(why, r);
		strbuf_addstr(why, "): keep it.");
	} else if (rank_decision_at(r, r->dr.top)) {
		const struct rank_decision *top = rank_decision_at(r, r->dr.top);
		strbuf_addf(why, "Undecided: %s is better than the baseline %s (", top->key, b->key);
		rank_format_metric_change(why, r, top->gain, top->gain_lo, top->gain_hi);
		strbuf_addf(why, "), but %s scores higher and is neither shown better than the "
			    "baseline nor separated from %s.", r->leader->key, top->key);
		settle(why, r);
		strbuf_addf(why, " Until then %s is the safe choice.", top->key);
	} else {
		strbuf_addf(why, "Undecided: no configuration is shown better than the baseline "
			    "%s, and not every one is shown worse or within +-%.0f %% of it.",
			    b->key, 100 * r->equivalence);
		if (r->ncontention) {
			strbuf_addstr(why, " Still in contention: ");
			list_decisions(why, r->contention, r->ncontention);
			strbuf_addch(why, '.');
		}
		list_unsettled(why, r);
		settle(why, r);
		strbuf_addstr(why, " Until then the baseline stays.");
	}
}

/* The decisions tied with the best (within the margin), the best first. */
static void list_tied(struct strbuf *why, const struct rank_result *r)
{
	const struct rank_decision *best = r->best_decision;
	strbuf_addstr(why, best->key);
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *x = &r->decisions[d];
		if (x != best && x->equivalent_to_best && !x->failing && !x->host_reference &&
		    !x->eliminated_block)
			strbuf_addf(why, ", %s", x->key);
	}
}

static void reason_without_baseline(struct strbuf *why, const struct rank_result *r)
{
	const struct rank_decision *pick = r->recommended_decision, *best = r->best_decision;
	if (r->dr.tied && !r->ncontention) {
		strbuf_addf(why, "Equivalent: %zu configurations are within +-%.0f %% of each "
			    "other's %s (", r->dr.ncandidates, 100 * r->equivalence, r->metric);
		list_tied(why, r);
		strbuf_addf(why, ") and none costs less than the others: none is shown better, "
			    "any of them will do; %s is listed only because it measured highest.",
			    pick->key);
		strbuf_addstr(why, " There is no baseline, so no gain can be given.");
		return;
	}
	if (pick == best)
		strbuf_addf(why, "%s has the best %s", pick->key, r->metric);
	else
		strbuf_addf(why, "%s is within +-%.0f %% of the best (%s) and costs least of the "
			    "%zu such configurations (fewer host CPUs, then fewer non-default host "
			    "settings, then significantly fewer ganged exits)", pick->key,
			    100 * r->equivalence, best ? best->key : "?", r->dr.ncandidates);
	if (r->ncontention) {
		strbuf_addstr(why, "; undecided: not shown worse than the best nor within its "
			      "margin: ");
		list_decisions(why, r->contention, r->ncontention);
		strbuf_addch(why, '.');
		if (r->needed_repetitions > 0 && r->needed_repetitions <= DECIDE_NEEDED_CAP)
			strbuf_addf(why, " About %d more blocks would settle %s against it "
				    "(topoadvisor extend %s --repetitions %d).",
				    r->needed_repetitions, r->leader ? r->leader->key : "the contention",
				    r->res->exp.name, r->needed_repetitions);
	} else if (r->verdict == DECIDE_INSUFFICIENT) {
		strbuf_addstr(why, "; nothing else was measured to compare it with.");
	} else if (r->dr.ncandidates > 1) {
		strbuf_addstr(why, "; the others tied with it cost more, every other configuration "
			      "is shown worse or failing.");
	} else {
		strbuf_addstr(why, "; every other configuration is shown worse or failing.");
	}
	strbuf_addstr(why, " There is no baseline, so no gain can be given.");
}

void rank_reason(struct rank_result *r)
{
	struct strbuf why = STRBUF_INIT;
	const struct rank_decision *b = r->baseline_decision;
	if (!r->recommended_decision) {
		strbuf_addstr(&why, "No configuration has a successful run with this metric.");
	} else if (b && !r->dr.baseline_testable) {
		const struct rank_decision *lead = rank_leading(r);
		strbuf_addf(&why, "Insufficient: the baseline %s has fewer than 2 successful "
			    "runs, so nothing can be tested against it", b->key);
		if (lead)
			strbuf_addf(&why, "; %s leads by its mean, which decides nothing", lead->key);
		strbuf_addf(&why, ". Run the baseline again (topoadvisor extend %s --repetitions "
			    "%d).", r->res->exp.name,
			    r->needed_repetitions > 0 ? r->needed_repetitions : 1);
	} else if (b) {
		reason_with_baseline(&why, r);
	} else if (r->best_decision) {
		reason_without_baseline(&why, r);
	} else {
		strbuf_addf(&why, "Insufficient: no configuration has 2 successful runs to "
			    "test; %s leads by its mean, which decides nothing.",
			    r->recommended_decision->key);
	}
	if (r->recommended_decision)
		list_failures(&why, r);
	if (r->nlevels > 1)
		strbuf_addf(&why, " Over %zu environment levels, objective %s (%s).", r->nlevels,
			    decide_objective_name(r->objective), r->objective == DECIDE_OBJECTIVE_MEAN
			    ? "the levels' log ratios averaged within each block"
			    : "the worst level's ratio");
	const struct rank_decision *g = r->recommended_decision;
	if (r->nlevels > 1 && r->objective == DECIDE_OBJECTIVE_WORST && g && b && g != b &&
	    g->gain_bias < -0.0005)
		strbuf_addf(&why, " The worst level's gain is the smallest of %zu noisy estimates: "
			    "for %s it reads about %.1f points low (its levels' estimates taken as "
			    "true); the interval holds the worst level's true gain.", r->nlevels,
			    g->key, -100 * g->gain_bias);
	r->reason = strbuf_detach(&why);
}
