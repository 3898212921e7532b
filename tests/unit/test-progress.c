/*
 * Unit tests for experiments/progress: the lines a sweep prints, on a
 * terminal and off one, driven by a fake clock into a memory stream (no
 * ticker thread: progress_tick is called where the ticker would).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/progress.h"
#include "util/warn.h"

static double fake_now;
static double fake_clock(void)
{
	return fake_now;
}

struct sink {
	char *buf;
	size_t len;
	FILE *f;
	struct progress p;
};

static void sink_open(struct sink *s, bool tty, size_t total, int timeout_s)
{
	memset(s, 0, sizeof(*s));
	s->f = open_memstream(&s->buf, &s->len);
	assert_non_null(s->f);
	fake_now = 100;
	progress_init(&s->p, s->f, tty, false, total, timeout_s);
	s->p.clock = fake_clock;
	s->p.start = fake_now;
}

/* What was written so far, as a string. */
static const char *sink_text(struct sink *s)
{
	fflush(s->f);
	return s->buf;
}

static void sink_close(struct sink *s)
{
	progress_release(&s->p);
	fclose(s->f);
	free(s->buf);
}

/*
 * The text a terminal would show: each \r goes back to the line's start,
 * ESC[K erases the rest of it.  Returns the screen's lines joined by \n.
 */
static char *screen(const char *raw)
{
	size_t n = strlen(raw);
	char *out = calloc(n + 2, 1), *line = calloc(n + 2, 1);
	size_t olen = 0, col = 0, llen = 0;
	for (size_t i = 0; i < n; i++) {
		if (raw[i] == '\r') {
			col = 0;
		} else if (raw[i] == '\033' && raw[i + 1] == '[' && raw[i + 2] == 'K') {
			llen = col;
			i += 2;
		} else if (raw[i] == '\n') {
			memcpy(out + olen, line, llen);
			olen += llen;
			out[olen++] = '\n';
			col = llen = 0;
		} else {
			line[col++] = raw[i];
			if (col > llen)
				llen = col;
		}
	}
	memcpy(out + olen, line, llen);
	out[olen + llen] = '\0';
	free(line);
	return out;
}

/* On a terminal: the status line ticks with the run's time; a note gets a line of its own. */
static void test_tty_live_and_notes(void **state)
{
	struct sink s;
	sink_open(&s, true, 4, 300);
	progress_run_begin(&s.p, "1x2x2/pin=split", 0);
	char *sc = screen(sink_text(&s));
	assert_string_equal(sc, "[1/4] 1x2x2/pin=split #1  run 0:00 (benchmark timeout 5:00)  "
			    "elapsed 0:00  ETA ?");
	free(sc);
	/* 42 s into a run the line says so, live. */
	fake_now += 42;
	progress_tick(&s.p);
	sc = screen(sink_text(&s));
	assert_string_equal(sc, "[1/4] 1x2x2/pin=split #1  run 0:42 (benchmark timeout 5:00)  "
			    "elapsed 0:42  ETA ?");
	free(sc);
	/* A failure note: on its own line, the status line back below it. */
	progress_note(&s.p, "run 7 failed: %s", "boom");
	sc = screen(sink_text(&s));
	assert_string_equal(sc, "run 7 failed: boom\n"
			    "[1/4] 1x2x2/pin=split #1  run 0:42 (benchmark timeout 5:00)  "
			    "elapsed 0:42  ETA ?");
	free(sc);
	progress_run_end(&s.p);
	/* The race's look between blocks: nothing glued to the status line. */
	progress_hold(&s.p);
	fputs("race: after block 1: dropped x\n", s.f);
	fake_now += 18;
	progress_tick(&s.p);	/* no run: the ticker draws nothing */
	progress_run_begin(&s.p, "1x2x2/pin=one-cpu", 1);
	sc = screen(sink_text(&s));
	assert_string_equal(sc, "run 7 failed: boom\n"
			    "race: after block 1: dropped x\n"
			    "[2/4] 1x2x2/pin=one-cpu #2  run 0:00 (benchmark timeout 5:00)  "
			    "elapsed 1:00  ETA 3:00");
	free(sc);
	/* A warning through the sink, the same way. */
	warn_sink_set(progress_warn, &s.p);
	warn_emit("guest left running");
	warn_sink_set(NULL, NULL);
	sc = screen(sink_text(&s));
	assert_non_null(strstr(sc, "\ntopoadvisor: warning: guest left running\n[2/4] "));
	free(sc);
	/* Released: the status line is erased, the screen ends at a line start. */
	sink_close(&s);
}

/* Raw bytes: every message line is preceded by the erase of the status line. */
static void test_tty_never_glued(void **state)
{
	struct sink s;
	sink_open(&s, true, 2, 0);
	progress_run_begin(&s.p, "k", 0);
	progress_note(&s.p, "note");
	const char *raw = sink_text(&s);
	/* The note starts right after an erase, never after the ETA. */
	assert_null(strstr(raw, "?note"));
	assert_non_null(strstr(raw, "\r\033[Knote\n"));
	/* No timeout: none shown. */
	assert_null(strstr(raw, "timeout"));
	sink_close(&s);
}

/* A narrow terminal: the line is cut to its width - 1 (a wrapped line cannot be erased). */
static void test_tty_width(void **state)
{
	struct sink s;
	sink_open(&s, true, 2, 60);
	s.p.width = 30;
	progress_run_begin(&s.p, "a-very-long-configuration-key", 0);
	char *sc = screen(sink_text(&s));
	assert_int_equal(strlen(sc), 29);
	free(sc);
	sink_close(&s);
}

/* Off a terminal: a line per run start, and one per further minute of a long run. */
static void test_pipe_lines(void **state)
{
	struct sink s;
	sink_open(&s, false, 3, 300);
	progress_run_begin(&s.p, "k", 0);
	fake_now += 59;
	progress_tick(&s.p);
	fake_now += 1;
	progress_tick(&s.p);
	progress_tick(&s.p);		/* the same minute: nothing more */
	fake_now += 150;
	progress_tick(&s.p);		/* 3:30: one line, the next due at 4:00 */
	progress_run_end(&s.p);
	progress_run_begin(&s.p, "k2", 0);
	assert_string_equal(sink_text(&s),
			    "[1/3] k repetition 1 (elapsed 0:00, ETA ?)\n"
			    "[1/3] k repetition 1: still running after 1:00 (benchmark timeout 5:00)\n"
			    "[1/3] k repetition 1: still running after 3:30 (benchmark timeout 5:00)\n"
			    "[2/3] k2 repetition 1 (elapsed 3:30, ETA 7:00)\n");
	assert_null(strchr(sink_text(&s), '\r'));
	/* A race dropped runs: the total follows. */
	progress_run_end(&s.p);
	progress_left_set(&s.p, 0);
	assert_int_equal(s.p.total, 2);
	sink_close(&s);
}

/* Quiet: notes still show, the progress never does. */
static void test_quiet(void **state)
{
	struct sink s;
	sink_open(&s, true, 2, 0);
	s.p.quiet = true;
	progress_run_begin(&s.p, "k", 0);
	fake_now += 5;
	progress_tick(&s.p);
	progress_note(&s.p, "n");
	assert_string_equal(sink_text(&s), "n\n");
	sink_close(&s);
}

static void test_clock_format(void **state)
{
	char b[32];
	progress_clock_format(b, sizeof(b), 59.4);
	assert_string_equal(b, "0:59");
	progress_clock_format(b, sizeof(b), 3599.6);
	assert_string_equal(b, "1:00:00");
	progress_clock_format(b, sizeof(b), -3);
	assert_string_equal(b, "0:00");
}

/* The ticker thread starts and stops cleanly (what it draws is progress_tick's). */
static void test_ticker_lifecycle(void **state)
{
	struct sink s;
	sink_open(&s, false, 1, 0);
	progress_ticker_start(&s.p);
	assert_true(s.p.ticking);
	progress_run_begin(&s.p, "k", 0);
	progress_run_end(&s.p);
	sink_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tty_live_and_notes),
		cmocka_unit_test(test_tty_never_glued),
		cmocka_unit_test(test_tty_width),
		cmocka_unit_test(test_pipe_lines),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_clock_format),
		cmocka_unit_test(test_ticker_lifecycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
