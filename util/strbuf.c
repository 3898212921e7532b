/* strbuf: growable strings; see strbuf.h. */
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die_oom(void)
{
	fputs("topoadvisor: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die_oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		die_oom();
	return d;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < want)
		n *= 2;
	sb->buf = xrealloc(sb->buf, n);
	sb->alloc = n;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	/* Nothing to copy may come as NULL (an empty read): memcpy must not see it. */
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

const char *strbuf_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *strbuf_detach(struct strbuf *sb)
{
	char *s = sb->buf ? sb->buf : xstrdup("");
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return s;
}

int strbuf_read_file(struct strbuf *sb, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		strbuf_grow(sb, 65536);
		ssize_t n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		sb->buf[sb->len + (size_t)n] = '\0';	/* also for an empty file */
		if (n == 0)
			break;
		sb->len += (size_t)n;
	}
	close(fd);
	return 0;
}

size_t strbuf_utf8_len(const char *str, size_t avail, uint32_t *cp_out)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80) {
		*cp_out = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		n = 2;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*cp_out = cp;
	return n;
}

void strbuf_add_overwritten(struct strbuf *sb, const char *data, size_t len)
{
	size_t line = 0;	/* where the current line starts */
	while (line < len) {
		const char *nl = memchr(data + line, '\n', len - line);
		size_t end = nl ? (size_t)(nl - data) : len;
		size_t part = line, part_end = line;	/* the last non-empty part */
		for (size_t i = line, start = line; i <= end; i++) {
			if (i < end && data[i] != '\r')
				continue;
			if (i > start) {
				part = start;
				part_end = i;
			}
			start = i + 1;
		}
		strbuf_add(sb, data + part, part_end - part);
		if (nl)
			strbuf_addch(sb, '\n');
		line = end + 1;
	}
}

void strbuf_add_printable(struct strbuf *sb, const char *data, size_t len)
{
	size_t i = 0;
	while (i < len) {
		unsigned char c = (unsigned char)data[i];
		uint32_t cp = 0;
		size_t n = c ? strbuf_utf8_len(data + i, len - i, &cp) : 1;
		bool control = n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
		if (control && c != '\n' && c != '\t') {
			/* Invalid UTF-8 and controls alike, one byte at a time. */
			size_t k = n ? n : 1;
			for (size_t j = 0; j < k; j++)
				strbuf_addf(sb, "\\x%02x", (unsigned char)data[i + j]);
			i += k;
			continue;
		}
		strbuf_add(sb, data + i, n);
		i += n;
	}
}

size_t strbuf_add_valid_utf8(struct strbuf *sb, const char *data, size_t len)
{
	size_t replaced = 0, i = 0;
	while (i < len) {
		uint32_t cp;
		size_t n = strbuf_utf8_len(data + i, len - i, &cp);
		if (n == 0) {
			strbuf_addstr(sb, "\xef\xbf\xbd");
			replaced++;
			i++;
			continue;
		}
		strbuf_add(sb, data + i, n);
		i += n;
	}
	return replaced;
}
