/*
 * progress: what a sweep tells the user while it runs.
 *
 * On a terminal one status line is redrawn in place — the run in progress
 * (position, configuration, repetition), how long it has run against the
 * benchmark's timeout, the sweep's elapsed time and an estimate of what
 * is left — once a second, so a long run is visibly alive.  Every other
 * message (a failed run, a warning, the race's drops and stop) gets a line
 * of its own: the status line is cleared first and redrawn after, so
 * nothing is ever glued to it.  Elsewhere (a pipe, a log, a Slurm job's
 * output) each run start is one line, and a run still going after each
 * further minute one more.
 *
 * The ticker is a thread that only draws (under the progress lock, every
 * signal blocked); the sweep's thread owns everything else.  Tests drive
 * progress_tick() with their own clock and stream instead.
 */
#ifndef TA_PROGRESS_H
#define TA_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct progress {
	FILE *out;
	bool tty, quiet;
	int width;			/* terminal columns the line is cut to; 0: unknown */
	size_t total, done;		/* runs of this sweep: planned, finished */
	int timeout_s;			/* the benchmark's, shown beside a run's time; 0: none */
	double (*clock)(void);		/* seconds (mono_now_s unless a test sets another) */
	double start;
	/* the run in progress */
	bool active;			/* between progress_run_begin and _end */
	bool shown;			/* the status line is on the terminal now */
	char *key;
	int repetition;			/* 0-based, shown 1-based */
	double run_start, next_still;
	/* the ticker */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool ticking, stop;
};

/* Seconds as progress shows them: "M:SS", or "H:MM:SS" from an hour on. */
void progress_clock_format(char *buf, size_t n, double s);

/*
 * Sets p up for a sweep of `total` runs writing to out (tty: whether out
 * is a terminal; quiet: show nothing but the notes).  No thread yet.
 */
void progress_init(struct progress *p, FILE *out, bool tty, bool quiet, size_t total,
		   int timeout_s);
/* Starts the ticker (nothing when quiet); a failure to start only loses the live time. */
void progress_ticker_start(struct progress *p);
/* Stops the ticker, clears the status line and frees p. */
void progress_release(struct progress *p);

/* The runs left changed (a race dropped some): total = done + left. */
void progress_left_set(struct progress *p, size_t left);
/* Run `key` repetition `repetition` (0-based) starts: its line (or status line) shows. */
void progress_run_begin(struct progress *p, const char *key, int repetition);
/* The run ended: one more done, the status line stays until the next begin or hold. */
void progress_run_end(struct progress *p);
/*
 * No run for a while (the race's look between blocks, the end): the
 * status line is cleared so that whatever the caller prints next starts a
 * line of its own.
 */
void progress_hold(struct progress *p);
/* One message on a line of its own (a newline is added), the status line redrawn after. */
void progress_note(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A whole line (newline included) the same way: the warnings sink (util/warn.h). */
void progress_warn(const char *line, void *data);
/*
 * What the ticker does every second: on a terminal the status line is
 * redrawn with the time now; elsewhere a line when the run has gone on
 * for another whole minute.
 */
void progress_tick(struct progress *p);

#endif
