/* warn: the warnings channel; see warn.h. */
#include "warn.h"

#include <stdarg.h>
#include <stdio.h>

#include "strbuf.h"

static warn_sink_fn sink;
static void *sink_data;

void warn_sink_set(warn_sink_fn fn, void *data)
{
	sink = fn;
	sink_data = data;
}

void warn_emit(const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	while (msg.len && msg.buf[msg.len - 1] == '\n')
		msg.buf[--msg.len] = '\0';
	strbuf_addstr(&line, "topoadvisor: warning: ");
	strbuf_add_printable(&line, strbuf_str(&msg), msg.len);
	strbuf_addch(&line, '\n');
	if (sink) {
		sink(strbuf_str(&line), sink_data);
	} else {
		fputs(strbuf_str(&line), stderr);
		fflush(stderr);
	}
	strbuf_release(&msg);
	strbuf_release(&line);
}
