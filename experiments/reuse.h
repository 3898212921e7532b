/*
 * reuse: which runs of a sweep can share one booted guest (guest.reuse),
 * and how many boots a sweep makes.  Pure: no I/O.
 *
 * A guest depends only on its configuration's shape and pinning (the
 * domain XML); noise loads and host knobs are per run, started and stopped
 * around each benchmark.  So configurations with the same shape and
 * pinning form one *reuse group* and share a guest across repetitions and
 * across noise loads.  On a host of one NUMA node the pinning is per run
 * too (plan->live_pin): the guest boots unpinned and every run applies
 * its vCPU and emulator pins live before it measures — the vCPU threads'
 * affinity is all a pin changes there, since all memory is on the one
 * node — so the group is the shape alone.  A group's guest serves at most
 * guest.reuse_runs consecutive blocks: then
 * a fresh boot, so that boots, not only runs, are replicated (runs of one
 * boot share its placement and are no independent replicates: the
 * advisor's paired comparisons pool the blocks one boot served, see
 * decide/decide.h).  The randomized block order interleaves the groups,
 * so the controller keeps one guest per group alive and *suspends* the
 * ones not in use (a paused guest runs no vCPU and steals nothing from the
 * measured one), up to a capacity set by the host's free memory; beyond
 * it, the least recently used guest is destroyed.  A host knob that needs
 * no guests running (POWER8 subcores_per_core) destroys them all when it
 * changes; a failed run destroys its guest (a fresh one is booted next
 * time).  Without guest.reuse every guest run boots its own guest.
 *
 * The controller and `plan` use the same cache (struct reuse_cache), so
 * the boots `plan` announces are the boots a sweep without failures makes.
 */
#ifndef TA_REUSE_H
#define TA_REUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

/* No group: a host reference (guest.host_baseline) boots nothing. */
#define REUSE_NO_GROUP ((size_t)-1)

/* Extra memory per kept guest besides its RAM (QEMU, TCG code buffer), MiB. */
#define REUSE_GUEST_OVERHEAD_MIB 256

/*
 * The group of configuration `config`: the index of the first
 * configuration with the same shape and pinning (the same shape with
 * p->live_pin).
 */
size_t reuse_group(const struct plan *p, size_t config);
/* How many groups the plan has (guests a reusing sweep needs at once). */
size_t reuse_groups(const struct plan *p);

/*
 * How many guests may be kept: half of mem_available_mib over each guest's
 * memory plus overhead, at least 1 (the current guest), at most the number
 * of groups.  mem_available_mib <= 0 (unknown): 1.
 */
size_t reuse_capacity(const struct plan *p, long mem_available_mib);

/*
 * Whether a boot made for a run of block `first` may serve a run of block
 * `block` with guest.reuse_runs `runs`: at most `runs` consecutive blocks.
 */
bool reuse_boot_serves(int first, int block, int runs);

/* The kept guests' groups, least recently used first out. */
struct reuse_cache {
	size_t cap;
	size_t *group;		/* [cap]; REUSE_NO_GROUP: empty slot */
	uint64_t *used;		/* [cap]; when the slot was last used */
	int *first;		/* [cap]; the block its guest was booted for */
	uint64_t clock;
};

void reuse_cache_init(struct reuse_cache *rc, size_t cap);
void reuse_cache_release(struct reuse_cache *rc);
/* The slot holding group's guest, or REUSE_NO_GROUP. */
size_t reuse_cache_slot(const struct reuse_cache *rc, size_t group);
/* dst becomes an independent copy of src (to look ahead without changing it). */
void reuse_cache_copy(struct reuse_cache *dst, const struct reuse_cache *src);

/*
 * The slot for a run of `group` in block `block`: *hit when a guest of that
 * group is kept there and may still serve it (reuse_boot_serves with
 * `runs`); otherwise the slot to boot into, and *evict when it holds a
 * guest that must be destroyed first (another group's, or this group's
 * whose blocks are used up).
 */
size_t reuse_cache_take(struct reuse_cache *rc, size_t group, int block, int runs, bool *hit,
			bool *evict);
/* Empties a slot (its guest was destroyed). */
void reuse_cache_drop(struct reuse_cache *rc, size_t slot);

/*
 * Whether moving from the knob values `from` (NULL: none applied yet) to
 * `to` changes a knob that needs no guests running: then every guest goes.
 */
bool reuse_knobs_clear_guests(const struct plan *p, const char **from, const char **to);

/*
 * The boots that start together with a run's boot (guest.reuse): of the
 * runs after it in its block, whose configurations are next[0..n) in order
 * (a NULL ends them), those that will boot a guest into a slot left empty,
 * or held by their own group's guest whose blocks are used up (it serves
 * no later block: the caller may destroy it now) — evicting no guest that
 * still serves — with no knob change before them that needs no guests
 * (starting from the knob values `applied`).  Looked ahead on a copy
 * of rc, the cache after the run's own take, so these are the boots the
 * sweep makes anyway, only earlier, and no more guests exist than rc's
 * capacity.  Their indexes into next go to out (at most max); returns how
 * many.
 */
size_t reuse_ahead(const struct plan *p, const struct reuse_cache *rc, int block,
		   const char **applied, const struct plan_config *const *next, size_t n,
		   size_t *out, size_t max);

/*
 * Boots the sweep makes in plan order if every run succeeds: with
 * cfg->reuse_guest and `capacity` kept guests, else one per guest run.
 * *ahead (may be NULL) gets how many of them start together with an
 * earlier boot of their block (reuse_ahead), so cost no wait of their own.
 */
size_t reuse_boots(const struct plan *p, size_t capacity, size_t *ahead);

#endif
