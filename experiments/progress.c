/* progress: a sweep's progress lines; see progress.h. */
#include "progress.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "../util/mono.h"
#include "../util/strbuf.h"

/* How often the ticker looks (s), and how often a run still going is reported off a terminal. */
#define TICK_S 1
#define STILL_S 60.0

void progress_clock_format(char *buf, size_t n, double s)
{
	long v = s > 0 ? (long)(s + 0.5) : 0;
	if (v >= 3600)
		snprintf(buf, n, "%ld:%02ld:%02ld", v / 3600, (v / 60) % 60, v % 60);
	else
		snprintf(buf, n, "%ld:%02ld", v / 60, v % 60);
}

void progress_init(struct progress *p, FILE *out, bool tty, bool quiet, size_t total,
		   int timeout_s)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = tty;
	p->quiet = quiet;
	p->total = total;
	p->timeout_s = timeout_s;
	p->clock = mono_now_s;
	p->start = p->clock();
	struct winsize ws;
	if (tty && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		p->width = ws.ws_col;
	pthread_mutex_init(&p->lock, NULL);
}

/* The estimate of what is left: the mean time per finished run so far ("?" before one). */
static void eta_format(const struct progress *p, double elapsed, char *buf, size_t n)
{
	if (!p->done) {
		snprintf(buf, n, "?");
		return;
	}
	size_t left = p->total > p->done ? p->total - p->done : 0;
	progress_clock_format(buf, n, elapsed / (double)p->done * (double)left);
}

/* Erases the status line if it is on the terminal.  Under the lock. */
static void clear_locked(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", p->out);
	p->shown = false;
}

/*
 * The status line of the run in progress, redrawn in place: cut to the
 * terminal's width, since a wrapped line cannot be erased by \r.  Under
 * the lock, on a terminal only.
 */
static void draw_locked(struct progress *p)
{
	if (p->quiet || !p->tty || !p->active)
		return;
	double now = p->clock();
	char run[32], el[32], eta[32], limit[32];
	progress_clock_format(run, sizeof(run), now - p->run_start);
	progress_clock_format(el, sizeof(el), now - p->start);
	eta_format(p, now - p->start, eta, sizeof(eta));
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "[%zu/%zu] %s #%d  run %s", p->done + 1, p->total, p->key,
		    p->repetition + 1, run);
	if (p->timeout_s > 0) {
		progress_clock_format(limit, sizeof(limit), p->timeout_s);
		strbuf_addf(&sb, " (benchmark timeout %s)", limit);
	}
	strbuf_addf(&sb, "  elapsed %s  ETA %s", el, eta);
	size_t len = sb.len;
	if (p->width && len > (size_t)p->width - 1)
		len = (size_t)p->width - 1;
	fputs("\r\033[K", p->out);
	fwrite(sb.buf, 1, len, p->out);
	fflush(p->out);
	p->shown = true;
	strbuf_release(&sb);
}

void progress_left_set(struct progress *p, size_t left)
{
	pthread_mutex_lock(&p->lock);
	p->total = p->done + left;
	pthread_mutex_unlock(&p->lock);
}

void progress_run_begin(struct progress *p, const char *key, int repetition)
{
	pthread_mutex_lock(&p->lock);
	free(p->key);
	p->key = xstrdup(key);
	p->repetition = repetition;
	p->run_start = p->clock();
	p->next_still = p->run_start + STILL_S;
	p->active = true;
	if (p->tty) {
		draw_locked(p);
	} else if (!p->quiet) {
		char el[32], eta[32];
		double elapsed = p->run_start - p->start;
		progress_clock_format(el, sizeof(el), elapsed);
		eta_format(p, elapsed, eta, sizeof(eta));
		fprintf(p->out, "[%zu/%zu] %s repetition %d (elapsed %s, ETA %s)\n", p->done + 1,
			p->total, p->key, repetition + 1, el, eta);
		fflush(p->out);
	}
	pthread_mutex_unlock(&p->lock);
}

void progress_run_end(struct progress *p)
{
	pthread_mutex_lock(&p->lock);
	p->done++;
	p->active = false;
	free(p->key);
	p->key = NULL;
	pthread_mutex_unlock(&p->lock);
}

void progress_hold(struct progress *p)
{
	pthread_mutex_lock(&p->lock);
	clear_locked(p);
	fflush(p->out);
	pthread_mutex_unlock(&p->lock);
}

/* A whole line on its own, the run's status line back after it.  Under the lock. */
static void line_locked(struct progress *p, const char *line)
{
	clear_locked(p);
	fputs(line, p->out);
	fflush(p->out);
	draw_locked(p);
}

void progress_note(struct progress *p, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addch(&sb, '\n');
	pthread_mutex_lock(&p->lock);
	line_locked(p, strbuf_str(&sb));
	pthread_mutex_unlock(&p->lock);
	strbuf_release(&sb);
}

void progress_warn(const char *line, void *data)
{
	struct progress *p = data;
	pthread_mutex_lock(&p->lock);
	line_locked(p, line);
	pthread_mutex_unlock(&p->lock);
}

/* Off a terminal: the run is still going after another whole minute.  Under the lock. */
static void still_locked(struct progress *p)
{
	double now = p->clock();
	char run[32], limit[32];
	progress_clock_format(run, sizeof(run), now - p->run_start);
	fprintf(p->out, "[%zu/%zu] %s repetition %d: still running after %s", p->done + 1,
		p->total, p->key, p->repetition + 1, run);
	if (p->timeout_s > 0) {
		progress_clock_format(limit, sizeof(limit), p->timeout_s);
		fprintf(p->out, " (benchmark timeout %s)", limit);
	}
	fputc('\n', p->out);
	fflush(p->out);
	while (p->next_still <= now)
		p->next_still += STILL_S;
}

void progress_tick(struct progress *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->tty)
		draw_locked(p);
	else if (!p->quiet && p->active && p->clock() >= p->next_still)
		still_locked(p);
	pthread_mutex_unlock(&p->lock);
}

/* The ticker thread: progress_tick every TICK_S until progress_release says stop. */
static void *ticker(void *arg)
{
	struct progress *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec until = mono_deadline_us(TICK_S * 1000000L);
		int rc = 0;
		while (!p->stop && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&p->wake, &p->lock, &until);
		if (p->stop)
			break;
		pthread_mutex_unlock(&p->lock);
		progress_tick(p);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void progress_ticker_start(struct progress *p)
{
	if (p->quiet)
		return;
	mono_cond_init(&p->wake);
	/* Signals (Ctrl-C, SIGTERM) stay the sweep thread's. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->ticking = pthread_create(&p->thread, NULL, ticker, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->ticking)
		pthread_cond_destroy(&p->wake);
}

void progress_release(struct progress *p)
{
	if (p->ticking) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		pthread_cond_destroy(&p->wake);
		p->ticking = false;
	}
	clear_locked(p);
	fflush(p->out);
	free(p->key);
	p->key = NULL;
	pthread_mutex_destroy(&p->lock);
}
