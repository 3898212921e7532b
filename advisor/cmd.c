/*
 * cmd: what every command prints through (cmd.h) — errors, results, data.
 * In the library, not in main.c, so that each advisor/cmd-*.c (and
 * sweep.c) links into a unit test on its own.
 */
#include "cmd.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cmd_fail(const struct ta_err *e)
{
	/* Messages quote stored and benchmark text: never raw to a terminal. */
	struct strbuf safe = STRBUF_INIT;
	const char *msg = e->msg[0] ? e->msg : "unknown error";
	strbuf_add_printable(&safe, msg, strlen(msg));
	fprintf(stderr, "topoadvisor: error: %s\n", strbuf_str(&safe));
	strbuf_release(&safe);
	return e->code ? e->code : EXIT_FAILURE_RUN;
}

/* Writes out as it is, and a final newline when `last` and it lacks one. */
static void print_exact(const struct strbuf *out, bool last)
{
	fwrite(strbuf_str(out), 1, out->len, stdout);
	if (last && out->len && out->buf[out->len - 1] != '\n')
		fputc('\n', stdout);
}

static void print_printable(const struct strbuf *out, bool last)
{
	struct strbuf safe = STRBUF_INIT;
	strbuf_add_printable(&safe, strbuf_str(out), out->len);
	print_exact(&safe, last);
	strbuf_release(&safe);
}

void cmd_print(const struct strbuf *out)
{
	print_printable(out, true);
}

static void print_data(const struct strbuf *out, bool last)
{
	if (isatty(STDOUT_FILENO))
		print_printable(out, last);
	else
		print_exact(out, last);
}

void cmd_print_data(const struct strbuf *out)
{
	print_data(out, true);
}

void cmd_print_data_part(const struct strbuf *out)
{
	print_data(out, false);
}
