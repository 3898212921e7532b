/*
 * cmd: the command table contract (after tmux's cmd_entry).
 *
 * Each command lives in advisor/cmd-NAME.c and exports one
 * `const struct cmd_entry cmd_NAME_entry`: its name, a one-line summary, the
 * usage of its arguments, its option table and the function that runs it.
 * main() parses the global options together with the command's own, checks
 * the argument count, and calls exec with the remaining arguments.
 * Commands report through cmd_fail (errors), warn_emit (util/warn.h:
 * warnings), cmd_print and cmd_print_data (results), all in advisor/cmd.c,
 * part of the library: a command file links into a unit test on its own.
 */
#ifndef TA_CMD_H
#define TA_CMD_H

#include "../util/err.h"
#include "../util/opts.h"
#include "../util/strbuf.h"
#include "../util/warn.h"

/* The database when neither --db nor $TOPOADVISOR_DB names one. */
#define CMD_DEFAULT_DB "topoadvisor.db"

/* Global options, shared by every command. */
struct cmd_ctx {
	const char *db_path;	/* --db, else $TOPOADVISOR_DB, else ./topoadvisor.db */
	int json;		/* --json: machine-readable output */
	int quiet;		/* -q */
	int verbose;		/* -v (counts) */
};

struct cmd_entry {
	const char *name;
	const char *summary;		/* one line for `topoadvisor --help` */
	const char *args_usage;		/* e.g. "CONFIG" or "[-d SECS | -- CMD...]" */
	const struct option *options;	/* may be NULL */
	const char *help;		/* after the options in --help (what the output
					 * means), or NULL */
	int min_args, max_args;		/* max_args -1: unlimited */
	int stop_at_arg;		/* first argument ends option parsing */
	int no_db;			/* uses no database: --db is not listed nor taken */
	/* Returns the exit status: EXIT_OK, EXIT_FAILURE_RUN or EXIT_BAD_INPUT. */
	int (*exec)(const struct cmd_ctx *ctx, int argc, char **argv);
};

/*
 * Prints "topoadvisor: error: MSG" to stderr and returns e->code (1 if
 * unset).  Control characters in MSG are shown escaped (strbuf_add_printable).
 */
int cmd_fail(const struct ta_err *e);
/*
 * Writes out to stdout (a JSON document gets a final newline), terminal-
 * safe: stored text (names, errors, benchmark output) goes through
 * strbuf_add_printable, so it can never drive the terminal.  JSON is
 * unchanged by that (json_escape already escapes every control character).
 */
void cmd_print(const struct strbuf *out);
/*
 * cmd_print for data meant for other programs (export): the exact bytes
 * when stdout is a file or pipe, the terminal-safe form on a terminal.
 */
void cmd_print_data(const struct strbuf *out);
/*
 * cmd_print_data for data written in parts as it is made (export streams
 * its rows): each part as it is, nothing appended; the last part goes
 * through cmd_print_data.  Parts must end on a whole character.
 */
void cmd_print_data_part(const struct strbuf *out);

/*
 * Appends the start of a command line a message tells the user to run:
 * "topoadvisor", then " --db PATH" unless the database is the default one
 * (a hint must name the database it is about), then " NAME" and, when
 * root is not NULL, " --root ROOT" (a sweep's fake sysfs root).  Words a
 * shell would split or expand are double-quoted.
 */
void cmd_hint(const struct cmd_ctx *ctx, const char *name, const char *root,
	      struct strbuf *out);

#endif
