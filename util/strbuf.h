/*
 * strbuf: a growable, always NUL-terminated string (after git's strbuf.h).
 *
 * Used instead of fixed buffers and sprintf everywhere text is built.  A
 * zero-initialised strbuf (STRBUF_INIT) is valid and empty.  Allocation
 * failure aborts: there is nothing sensible a CLI tool can do without memory.
 */
#ifndef TA_STRBUF_H
#define TA_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf;	/* never NULL after the first append; "" when empty */
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT { NULL, 0, 0 }

void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_reset(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* The content (never NULL, "" for an unused strbuf). */
const char *strbuf_str(const struct strbuf *sb);
/* Hands the buffer to the caller (free() it) and resets sb. */
char *strbuf_detach(struct strbuf *sb);

/*
 * The length (1-4) of the valid UTF-8 sequence at s, which has avail bytes,
 * with its code point in *cp; 0 when it is not valid UTF-8.
 */
size_t strbuf_utf8_len(const char *s, size_t avail, uint32_t *cp);

/*
 * Appends data[0..len) made safe for a terminal: newlines, tabs, printable
 * ASCII and valid UTF-8 go as they are; other control characters (ESC, CR,
 * BEL, DEL, C1 such as CSI), NUL and invalid UTF-8 bytes become "\xHH", so
 * stored text (benchmark output, names) can never move the cursor, retitle
 * the window or hide what is printed.
 */
void strbuf_add_printable(struct strbuf *sb, const char *data, size_t len);

/*
 * Appends data[0..len) as valid UTF-8: each byte that is not part of a valid
 * sequence becomes U+FFFD.  Returns how many bytes were replaced, for a
 * note saying so (a report declared UTF-8 must be UTF-8).
 */
size_t strbuf_add_valid_utf8(struct strbuf *sb, const char *data, size_t len);

/*
 * Appends data[0..len) as a terminal ends up showing it: of each line,
 * only the last non-empty part after a carriage return (a progress
 * counter, like redis-benchmark's, rewrites its line with CR many times a
 * second).  "\r\n" endings and a CR ending the data lose nothing else.
 */
void strbuf_add_overwritten(struct strbuf *sb, const char *data, size_t len);

/* Reads a whole file; -1 with errno set on failure. */
int strbuf_read_file(struct strbuf *sb, const char *path);

/* xmalloc family: abort on allocation failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
