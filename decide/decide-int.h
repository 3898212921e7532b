/*
 * decide-int: what the engine's files share (engine.c, paired.c, spread.c,
 * race.c).  Not a public interface.
 */
#ifndef TA_DECIDE_INT_H
#define TA_DECIDE_INT_H

#include "decide.h"

/*
 * The runs as a table of configurations x blocks: the log value in the
 * metric's direction (-inf for a failed run, NAN for none) and the boot of
 * each cell (a boot of its own when the run names none).
 */
struct decide_table {
	const struct decide_input *in;
	size_t nblocks;
	double *lv;		/* [config * nblocks + block] */
	int64_t *boot;		/* [config * nblocks + block] */
	size_t *cfg_of;		/* [decision * nlevels + level]: configuration or DECIDE_NONE */
};

/* False on an index out of range or no levels (t then holds nothing). */
DECIDE_MUST_CHECK bool decide_table_build(const struct decide_input *in, int blocks, struct decide_table *t);
void decide_table_release(struct decide_table *t);
/* The configuration of decision d at level l, or DECIDE_NONE. */
size_t decide_table_config(const struct decide_table *t, size_t d, size_t l);

/*
 * The paired comparison of x with y: per block the mean over the n pairs
 * (xs[i], ys[i]) of their log ratio (blocks missing any pair are left out),
 * blocks sharing a boot pooled into one unit, then the trimmed location of
 * the units.  Fills est, se, df, pairs, units, trimmed, ok; the interval
 * comes from decide_cmp_at.
 */
void decide_paired(const struct decide_table *t, const size_t *xs, const size_t *ys, size_t n,
		   struct decide_cmp *out);
/*
 * The replication units of the whole table: parent[b] (nblocks entries)
 * gets one block of b's unit, the blocks joined by any boot their runs
 * share (every block its own unit when no boot serves two blocks).
 */
void decide_block_units(const struct decide_table *t, size_t *parent);
/*
 * Numbers the distinct values of ids[0..n) in the order they first appear:
 * group[i] is ids[i]'s; returns how many there are.  Linear, however many.
 */
size_t decide_boot_groups(const int64_t *ids, size_t n, size_t *group);
/* The interval, p and min detectable effect of c at alpha (two-sided). */
void decide_cmp_at(struct decide_cmp *c, double alpha);
/* The lower / upper bound of c at a one-sided level. */
double decide_cmp_lower(const struct decide_cmp *c, double one_sided);
double decide_cmp_upper(const struct decide_cmp *c, double one_sided);
/* One-sided p of "x worse than y" (est < 0). */
double decide_cmp_p_worse(const struct decide_cmp *c);
/* better / equivalent / worse / undecided / insufficient from the interval. */
enum decide_verdict decide_verdict_of(const struct decide_cmp *c, double delta);
/*
 * More blocks for c's interval (at its alpha) to settle: exclude 0 for an
 * effect as large as seen, or fit inside +-delta, whichever needs fewer.
 * 0 when already settled, DECIDE_NEEDED_CAP + 1 beyond the cap.
 */
int decide_needed(const struct decide_cmp *c, double delta);

/* Outlier flags, the pooled robust scale, variance components and drift. */
void decide_spread(const struct decide_table *t, struct decide_result *r);

/* The one-sided probability of a comparison "d worse than leader" in a race. */
double decide_race_p(const struct decide_table *t, const struct decide_settings *s, size_t d,
		     size_t leader, double *ratio);

#endif
