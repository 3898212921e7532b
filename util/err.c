/* err: per-operation error messages; see err.h. */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(struct ta_err *e, int code, const char *fmt, ...)
{
	if (!e)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->code = code;
	return -1;
}

void err_prefix(struct ta_err *e, const char *fmt, ...)
{
	if (!e)
		return;
	char prefix[512], old[sizeof(e->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	size_t n = strlen(prefix);
	if (n > sizeof(e->msg) - 3)
		n = sizeof(e->msg) - 3;
	memcpy(e->msg, prefix, n);
	memcpy(e->msg + n, ": ", 2);
	size_t rest = sizeof(e->msg) - n - 3;
	strncpy(e->msg + n + 2, old, rest);
	e->msg[sizeof(e->msg) - 1] = '\0';
}

void err_clear(struct ta_err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

int err_open_code(int errnum)
{
	switch (errnum) {
	case ENOENT:
	case ELOOP:
	case ENOTDIR:
	case ENAMETOOLONG:
	case EISDIR:
		return EXIT_BAD_INPUT;
	default:
		return EXIT_FAILURE_RUN;
	}
}
