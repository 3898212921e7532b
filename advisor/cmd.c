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

#include "../util/json.h"

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

/*
 * Says on stderr how many bytes of stored text JSON output had to replace
 * by U+FFFD since the last note (output stays valid UTF-8; the note keeps
 * the replacement from going unnoticed).
 */
static void note_replaced(void)
{
	static size_t noted;
	size_t n = json_replaced_bytes();
	if (n > noted)
		fprintf(stderr, "topoadvisor: note: %zu byte%s of stored text (benchmark output, "
			"names) %s not valid UTF-8 and %s written as U+FFFD\n", n - noted,
			n - noted == 1 ? "" : "s", n - noted == 1 ? "was" : "were",
			n - noted == 1 ? "is" : "are");
	noted = n;
}

void cmd_print(const struct strbuf *out)
{
	print_printable(out, true);
	note_replaced();
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
	note_replaced();
}

void cmd_print_data_part(const struct strbuf *out)
{
	print_data(out, false);
}

/*
 * word as one shell word: as it is when plain, else double-quoted (hints
 * are themselves shown in single quotes) with \ " $ ` escaped.
 */
static void shell_word(struct strbuf *out, const char *word)
{
	if (*word && strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_./:,+=@%-") == strlen(word)) {
		strbuf_addstr(out, word);
		return;
	}
	strbuf_addch(out, '"');
	for (; *word; word++) {
		if (strchr("\\\"$`", *word))
			strbuf_addch(out, '\\');
		strbuf_addch(out, *word);
	}
	strbuf_addch(out, '"');
}

void cmd_hint(const struct cmd_ctx *ctx, const char *name, const char *root,
	      struct strbuf *out)
{
	strbuf_addstr(out, "topoadvisor");
	if (ctx->db_path && strcmp(ctx->db_path, CMD_DEFAULT_DB)) {
		strbuf_addstr(out, " --db ");
		shell_word(out, ctx->db_path);
	}
	strbuf_addf(out, " %s", name);
	if (root) {
		strbuf_addstr(out, " --root ");
		shell_word(out, root);
	}
}
