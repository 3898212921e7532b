/*
 * reuse: guest reuse groups, the kept-guest cache and the boot count; see
 * reuse.h.
 */
#include "reuse.h"

#include <stdlib.h>
#include <string.h>

#include "../model/knob-table.h"
#include "../util/strbuf.h"

static bool same_domain(const struct plan *p, const struct plan_config *a,
			const struct plan_config *b)
{
	return (p->live_pin || a->pinning == b->pinning) && a->rec.vcpus == b->rec.vcpus &&
	       a->shape.sockets == b->shape.sockets && a->shape.dies == b->shape.dies &&
	       a->shape.cores == b->shape.cores && a->shape.threads == b->shape.threads;
}

size_t reuse_group(const struct plan *p, size_t config)
{
	const struct plan_config *c = &p->configs[config];
	if (c->rec.host_reference)
		return REUSE_NO_GROUP;
	for (size_t i = 0; i < config; i++)
		if (!p->configs[i].rec.host_reference && same_domain(p, &p->configs[i], c))
			return i;
	return config;
}

size_t reuse_groups(const struct plan *p)
{
	size_t groups = 0;
	for (size_t i = 0; i < p->nconfigs; i++)
		groups += reuse_group(p, i) == i;
	return groups;
}

size_t reuse_capacity(const struct plan *p, long mem_available_mib)
{
	size_t groups = reuse_groups(p);
	if (mem_available_mib <= 0 || groups <= 1)
		return 1;
	long per = p->cfg->memory_mib + REUSE_GUEST_OVERHEAD_MIB;
	long fit = mem_available_mib / 2 / per;
	if (fit < 1)
		return 1;
	return (size_t)fit < groups ? (size_t)fit : groups;
}

bool reuse_boot_serves(int first, int block, int runs)
{
	return block >= first && block - first < (runs > 0 ? runs : 1);
}

void reuse_cache_init(struct reuse_cache *rc, size_t cap)
{
	rc->cap = cap ? cap : 1;
	rc->group = xcalloc(rc->cap, sizeof(*rc->group));
	rc->used = xcalloc(rc->cap, sizeof(*rc->used));
	rc->first = xcalloc(rc->cap, sizeof(*rc->first));
	for (size_t i = 0; i < rc->cap; i++)
		rc->group[i] = REUSE_NO_GROUP;
	rc->clock = 0;
}

void reuse_cache_release(struct reuse_cache *rc)
{
	free(rc->group);
	free(rc->used);
	free(rc->first);
	memset(rc, 0, sizeof(*rc));
}

size_t reuse_cache_slot(const struct reuse_cache *rc, size_t group)
{
	for (size_t i = 0; i < rc->cap; i++)
		if (rc->group[i] == group)
			return i;
	return REUSE_NO_GROUP;
}

void reuse_cache_copy(struct reuse_cache *dst, const struct reuse_cache *src)
{
	reuse_cache_init(dst, src->cap);
	memcpy(dst->group, src->group, src->cap * sizeof(*dst->group));
	memcpy(dst->used, src->used, src->cap * sizeof(*dst->used));
	memcpy(dst->first, src->first, src->cap * sizeof(*dst->first));
	dst->clock = src->clock;
}

size_t reuse_cache_take(struct reuse_cache *rc, size_t group, int block, int runs, bool *hit,
			bool *evict)
{
	size_t slot = 0;
	*hit = *evict = false;
	for (size_t i = 0; i < rc->cap; i++) {
		if (rc->group[i] == group) {
			/* Kept, but its blocks may be used up: then a fresh boot in its slot. */
			*hit = reuse_boot_serves(rc->first[i], block, runs);
			*evict = !*hit;
			if (*evict)
				rc->first[i] = block;
			slot = i;
			rc->used[slot] = ++rc->clock;
			return slot;
		}
		/* An empty slot first, else the least recently used. */
		bool empty = rc->group[i] == REUSE_NO_GROUP, best_empty = rc->group[slot] == REUSE_NO_GROUP;
		if ((empty && !best_empty) || (empty == best_empty && rc->used[i] < rc->used[slot]))
			slot = i;
	}
	*evict = rc->group[slot] != REUSE_NO_GROUP;
	rc->group[slot] = group;
	rc->first[slot] = block;
	rc->used[slot] = ++rc->clock;
	return slot;
}

void reuse_cache_drop(struct reuse_cache *rc, size_t slot)
{
	if (slot < rc->cap)
		rc->group[slot] = REUSE_NO_GROUP;
}

bool reuse_knobs_clear_guests(const struct plan *p, const char **from, const char **to)
{
	const struct sweep_config *cfg = p->cfg;
	for (size_t i = 0; i < cfg->nknobs; i++) {
		if (from && from[i] && !strcmp(from[i], to[i]))
			continue;
		const struct knob *k = knob_find(cfg->knobs[i].name);
		if (k && k->needs_no_guests)
			return true;
	}
	return false;
}

size_t reuse_ahead(const struct plan *p, const struct reuse_cache *rc, int block,
		   const char **applied, const struct plan_config *const *next, size_t n,
		   size_t *out, size_t max)
{
	struct reuse_cache sim;
	reuse_cache_copy(&sim, rc);
	size_t k = 0;
	for (size_t i = 0; i < n && k < max && next[i]; i++) {
		const struct plan_config *c = next[i];
		if (reuse_knobs_clear_guests(p, applied, c->knob_values))
			break;
		applied = c->knob_values;
		size_t g = reuse_group(p, c->rec.index);
		if (g == REUSE_NO_GROUP)
			continue;
		/* A boot that replaces its own group's used-up guest needs no room
		 * either: that guest can serve no later block. */
		bool had = reuse_cache_slot(&sim, g) != REUSE_NO_GROUP;
		bool hit, evict;
		reuse_cache_take(&sim, g, block, p->cfg->reuse_runs, &hit, &evict);
		if (!hit && (!evict || had))
			out[k++] = i;
	}
	reuse_cache_release(&sim);
	return k;
}

/* Whether group is among the n pending boots; removes it if so. */
static bool pending_take(size_t *group, size_t *n, size_t g)
{
	for (size_t i = 0; i < *n; i++) {
		if (group[i] == g) {
			group[i] = group[--*n];
			return true;
		}
	}
	return false;
}

size_t reuse_boots(const struct plan *p, size_t capacity, size_t *ahead)
{
	size_t boots = 0;
	if (ahead)
		*ahead = 0;
	if (p->cfg->runner != RUNNER_AGENT)
		return 0;
	if (!p->cfg->reuse_guest) {
		for (size_t i = 0; i < p->nruns; i++)
			boots += !p->configs[p->runs[i].config].rec.host_reference;
		return boots;
	}
	struct reuse_cache rc;
	reuse_cache_init(&rc, capacity);
	const char **applied = NULL;
	/* The groups whose boot started ahead with an earlier one of block
	 * pblock, as the controller does. */
	size_t *pgroup = xcalloc(rc.cap + 1, sizeof(*pgroup)), npending = 0;
	int pblock = -1;
	const struct plan_config **next = xcalloc(p->nruns + 1, sizeof(*next));
	size_t *idx = xcalloc(rc.cap + 1, sizeof(*idx));
	for (size_t i = 0; i < p->nruns; i++) {
		const struct plan_config *c = &p->configs[p->runs[i].config];
		int block = p->runs[i].repetition;
		if (reuse_knobs_clear_guests(p, applied, c->knob_values)) {
			for (size_t s = 0; s < rc.cap; s++)
				reuse_cache_drop(&rc, s);
			npending = 0;
		}
		applied = c->knob_values;
		if (pblock != block)
			npending = 0;
		size_t g = reuse_group(p, c->rec.index);
		if (g == REUSE_NO_GROUP)
			continue;
		bool hit, evict;
		reuse_cache_take(&rc, g, block, p->cfg->reuse_runs, &hit, &evict);
		if (hit)
			continue;
		boots++;
		if (pending_take(pgroup, &npending, g)) {
			if (ahead)
				(*ahead)++;
			continue;
		}
		size_t n = 0;
		for (size_t j = i + 1; j < p->nruns && p->runs[j].repetition == block; j++)
			next[n++] = &p->configs[p->runs[j].config];
		size_t k = reuse_ahead(p, &rc, block, applied, next, n, idx, rc.cap - npending);
		for (size_t j = 0; j < k; j++)
			pgroup[npending++] = reuse_group(p, next[idx[j]]->rec.index);
		pblock = block;
	}
	free(pgroup);
	free(next);
	free(idx);
	reuse_cache_release(&rc);
	return boots;
}
