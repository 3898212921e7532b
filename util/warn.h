/*
 * warn: the one channel for warnings, as util/err.h is for errors.
 *
 * A warning is something the user should know that does not stop the
 * operation (a guest that could not be destroyed, a host that differs
 * from the one an experiment ran on).  warn_emit() formats it once —
 * "topoadvisor: warning: MSG", MSG made terminal-safe (control characters
 * escaped: warnings quote stored and guest text) — and hands the line to
 * the sink: stderr unless someone installed another (the sweep's progress
 * line clears itself first; tests capture).
 */
#ifndef TA_WARN_H
#define TA_WARN_H

/* Emits one warning (printf-style, no trailing newline needed). */
void warn_emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Where warnings go: sink gets each whole line (prefix and newline
 * included) and data.  NULL restores the default (stderr).
 */
typedef void (*warn_sink_fn)(const char *line, void *data);
void warn_sink_set(warn_sink_fn sink, void *data);

#endif
