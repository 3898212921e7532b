/*
 * hosts: the host x decision interaction of a sweep run on several hosts,
 * in the engine's model (decide.h).  Pure: no I/O.
 *
 * Does a decision do as well on every host?  Per host, each decision is
 * compared with a reference decision on that host's blocks only, the
 * engine's own paired comparison (decide-int.h: decide_paired): within
 * blocks, over the environment levels both ran (the `mean` objective),
 * failed runs as the worst outcome, blocks sharing a boot pooled into one
 * unit, the trimmed location.  The interaction is then tested contrast by
 * contrast: for every pair of decisions and every pair of hosts, whether
 * the pair's difference on one host differs from that on the other
 * (Yuen's two-sample form: the two paired estimates' difference over the
 * root of their squared standard errors added, Welch-Satterthwaite df),
 * Bonferroni over every contrast tested.  The interaction is *shown* when
 * the smallest adjusted p is below DECIDE_ALPHA; only then is a best that
 * differs by host a finding about the hosts.  Under no interaction the
 * family's error is at most DECIDE_ALPHA, however many decisions and hosts.
 *
 * Only blocks whose runs all ran on one host count, and only decisions a
 * race did not eliminate.
 */
#ifndef TA_DECIDE_HOSTS_H
#define TA_DECIDE_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"

struct decide_hosts {
	size_t nhosts;
	size_t *blocks;			/* [h]: blocks on host h */
	size_t nblocks;			/* blocks on one host, in all */
	size_t ndecisions;
	size_t *decisions;		/* [i]: the engine's decision index */
	size_t reference;		/* index into decisions: what effects are against */
	double *effect;			/* [i * nhosts + h]: log gain over the reference on
					 * host h, in the metric's direction; NAN: untestable */
	size_t *best;			/* [h]: index into decisions of the best there */
	size_t tests;			/* contrasts tested: the Bonferroni family */
	double p, p_adj;		/* the strongest contrast's p; adjusted (NAN: none) */
	size_t x, y, h1, h2;		/* that contrast: decisions x - y, host h1 against h2 */
	double diff;			/* its log difference: (x - y on h1) - (x - y on h2) */
	bool shown;			/* p_adj < DECIDE_ALPHA */
	bool best_differs;		/* shown, and not the same best on every host */
};

/*
 * The diagnostic of in over its blocks: block_host[b] (nblocks entries,
 * one per block the runs number) is the host index of block b, or
 * DECIDE_NONE for a block whose runs are on several hosts or on none
 * known; hosts are numbered 0..nhosts-1.  reference is the decision the
 * effects are against (DECIDE_NONE: the baseline, else the first).
 * Returns false (out empty) when fewer than two hosts have blocks or fewer
 * than two decisions are left; -1 never: bad indices are left out.
 */
bool decide_hosts_compute(const struct decide_input *in, const size_t *block_host,
			  size_t nblocks, size_t nhosts, size_t reference,
			  struct decide_hosts *out);
void decide_hosts_release(struct decide_hosts *h);

#endif
