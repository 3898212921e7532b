/*
 * The ring-buffer page walker (collectors/decode.c) against libtraceevent's
 * kbuffer as the oracle: random but valid pages with every record type (small
 * and type-0 data, time extends, absolute time stamps, padding, a null event
 * at the end, stored missed-event counts) in both byte orders and both commit
 * sizes must give the same records, sizes and timestamps.  Random garbage
 * pages must never make the walker return a record outside the page (run
 * under ASan by `make SAN=1 check`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <kbuffer.h>

#include "collectors/decode.h"

#define PAGE 4096

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct gen {
	unsigned char page[PAGE + PAGE_READER_SLACK];
	bool big;
	int commit_size;
	uint32_t off;		/* after the page header */
	uint64_t missed;	/* the stored count of the last page */
};

static void put(unsigned char *p, uint64_t v, int size, bool big)
{
	for (int i = 0; i < size; i++)
		p[big ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static void put_word(struct gen *g, uint32_t type, uint32_t delta)
{
	uint32_t w = g->big ? (type << 27) | delta : type | (delta << 5);
	put(g->page + 8 + g->commit_size + g->off, w, 4, g->big);
	g->off += 4;
}

static void put_u32(struct gen *g, uint32_t v)
{
	put(g->page + 8 + g->commit_size + g->off, v, 4, g->big);
	g->off += 4;
}

static void put_payload(struct gen *g, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		g->page[8 + g->commit_size + g->off + i] = (unsigned char)rnd(256);
	g->off += len;
}

/* Fills a page with random valid records; returns the committed length. */
static uint32_t gen_page(struct gen *g, bool missed)
{
	memset(g->page, 0, sizeof(g->page));
	uint32_t room = PAGE - 8 - g->commit_size - (missed ? g->commit_size : 0) - 16;
	/* Top bits set too: absolute time stamps must keep them. */
	put(g->page, ((uint64_t)rnd(1u << 30) << 34) | rnd(1u << 30), 8, g->big);
	g->off = 0;
	while (g->off + 300 < room) {
		uint32_t kind = rnd(10), delta = rnd(1u << 27);
		if (kind < 4) {			/* small data */
			uint32_t words = 1 + rnd(28);
			put_word(g, words, delta);
			put_payload(g, words * 4);
		} else if (kind < 6) {		/* type-0 data, any length */
			uint32_t len = 4 * (1 + rnd(60));
			put_word(g, 0, delta);
			put_u32(g, len + 4);
			put_payload(g, len);
		} else if (kind == 6) {		/* time extend */
			put_word(g, 30, delta);
			put_u32(g, rnd(1u << 20));
		} else if (kind == 7) {		/* absolute time stamp */
			put_word(g, 31, delta);
			put_u32(g, rnd(1u << 30));
		} else if (kind == 8) {		/* padding of a discarded record */
			uint32_t len = 4 * rnd(20);
			put_word(g, 29, 1 + rnd(100));
			put_u32(g, len + 4);	/* counts itself, not the header word */
			put_payload(g, len);
		} else {			/* type-0 with a length not a multiple of 4 */
			uint32_t len = 1 + rnd(100);
			put_word(g, 0, delta);
			put_u32(g, len + 4);
			put_payload(g, (len + 3) & ~3u);
		}
	}
	uint32_t committed = g->off;
	if (rnd(2)) {
		put_word(g, 29, 0);	/* a null event: the page ends here */
		committed = g->off;
	}
	uint64_t commit = committed;
	g->missed = 0;
	if (missed) {
		commit |= (1u << 31) | (1u << 30);
		g->missed = 1000 + rnd(1000);
		put(g->page + 8 + g->commit_size + committed, g->missed, g->commit_size, g->big);
	}
	put(g->page + 8, commit, g->commit_size, g->big);
	return committed;
}

static struct evfmt_table table_for(bool big, int commit_size)
{
	struct evfmt_table t;
	evfmt_table_init(&t, big, commit_size, PAGE);
	t.commit_size = commit_size;
	return t;
}

static void check_against_kbuffer(bool big, int commit_size)
{
	struct evfmt_table t = table_for(big, commit_size);
	struct page_reader r;
	assert_int_equal(page_reader_init(&r, &t, PAGE), 0);
	struct kbuffer *kb = kbuffer_alloc(commit_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
					   big ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
	assert_non_null(kb);
	static struct gen g;
	g.big = big;
	g.commit_size = commit_size;
	uint64_t records = 0, missed_want = 0;
	for (int page = 0; page < 400; page++) {
		bool missed = page % 7 == 3;
		gen_page(&g, missed);
		unsigned char copy[PAGE + PAGE_READER_SLACK];
		memcpy(copy, g.page, sizeof(copy));
		int rc = page_reader_attach(&r, copy, PAGE);
		assert_int_not_equal(rc, -1);
		assert_int_equal(kbuffer_load_subbuffer(kb, g.page), 0);
		/* kbuffer_missed_events() reports 0 when a time stamp leads the page. */
		missed_want += g.missed;
		unsigned long long kts;
		void *kev = kbuffer_read_event(kb, &kts);
		assert_int_equal(rc, kev != NULL);
		while (kev) {
			assert_non_null(r.ev);
			assert_int_equal((unsigned char *)r.ev - copy, (unsigned char *)kev - g.page);
			assert_int_equal(page_reader_size(&r), kbuffer_event_size(kb));
			assert_true(r.ts == kts);
			records++;
			kev = kbuffer_next_event(kb, &kts);
			assert_int_equal(page_reader_next(&r), kev != NULL);
		}
		assert_null(r.ev);
	}
	assert_true(records > 400 * 10);
	assert_true(r.missed == missed_want);
	kbuffer_free(kb);
	page_reader_release(&r);
}

struct layout {
	bool big;
	int commit_size;
};

static const struct layout little_8 = { false, 8 }, big_8 = { true, 8 },
			   little_4 = { false, 4 }, big_4 = { true, 4 };

static void test_layout(void **state)
{
	const struct layout *l = *state;
	check_against_kbuffer(l->big, l->commit_size);
}

/* A short page (a truncated file's last) is zero padded and walked as such. */
static void test_load_short(void **state)
{
	(void)state;
	struct evfmt_table t = table_for(false, 8);
	struct page_reader r;
	assert_int_equal(page_reader_init(&r, &t, PAGE), 0);
	static struct gen g;
	g.commit_size = 8;
	uint32_t committed = gen_page(&g, false);
	/* Cut inside the data: the header is fine, records past the cut overrun. */
	assert_int_equal(page_reader_load(&r, g.page, 16 + committed / 2), 1);
	int n = 0, bad = 0;
	do {
		int size = page_reader_size(&r);
		if (size < 0) {
			bad++;
			assert_false(page_reader_next(&r));
			break;
		}
		unsigned char *ev = r.ev;
		assert_true(ev >= r.page + 16 && ev + size <= r.page + 16 + committed);
		n++;
	} while (page_reader_next(&r));
	assert_true(n > 0);
	/* The zeros past the cut are a type-0 record of length 0: one overrun ends the walk. */
	assert_int_equal(bad, 1);
	/* Too short for a header, and a commit larger than the page: refused. */
	assert_int_equal(page_reader_load(&r, g.page, 15), -1);
	put(g.page + 8, PAGE, 8, false);
	assert_int_equal(page_reader_load(&r, g.page, PAGE), -1);
	page_reader_release(&r);
}

/* Garbage: every record returned with a size lies inside the committed data. */
static void test_garbage(void **state)
{
	(void)state;
	for (int big = 0; big < 2; big++) {
		struct evfmt_table t = table_for(big, 8);
		struct page_reader r;
		assert_int_equal(page_reader_init(&r, &t, PAGE), 0);
		unsigned char *buf = malloc(PAGE + PAGE_READER_SLACK);
		assert_non_null(buf);
		int pages = 0, overruns = 0;
		for (int i = 0; i < 3000; i++) {
			for (int k = 0; k < PAGE; k++)
				buf[k] = (unsigned char)rnd(256);
			put(buf + 8, rnd(PAGE), 8, big);	/* sometimes past the data */
			int rc = page_reader_attach(&r, buf, PAGE);
			if (rc < 0)
				continue;
			pages++;
			for (int steps = 0; rc > 0 && r.ev; steps++) {
				assert_true(steps < PAGE);
				int size = page_reader_size(&r);
				unsigned char *ev = r.ev;
				assert_true(ev >= buf + 16 && ev <= buf + 16 + r.data_len);
				if (size < 0)
					overruns++;
				else
					assert_true(ev + size <= buf + 16 + r.data_len);
				if (!page_reader_next(&r))
					break;
			}
		}
		assert_true(pages > 500);
		assert_true(overruns > 0);
		free(buf);
		page_reader_release(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_layout, (void *)&little_8),
		cmocka_unit_test_prestate(test_layout, (void *)&big_8),
		cmocka_unit_test_prestate(test_layout, (void *)&little_4),
		cmocka_unit_test_prestate(test_layout, (void *)&big_4),
		cmocka_unit_test(test_load_short),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
