/*
 * cli: the command line every topoadvisor program shares.
 *
 * The global options (--db, --json, -q, -v, --version), the usage texts
 * generated from the option tables, the command look-up, the argument
 * check and the hand-over to the command's exec, for a given table of
 * commands.  Two programs use it (see the README's start-up section):
 * topoadvisor-core runs every command; topoadvisor, the program users run,
 * runs only the commands that need no heavy library (exits) and hands the
 * rest, the top-level help and any unknown word to topoadvisor-core.
 */
#ifndef TA_CLI_H
#define TA_CLI_H

#include "cmd.h"

struct cli {
	const struct cmd_entry *const *commands;	/* NULL-ended: what this program runs */
	/*
	 * Runs argc/argv (as main got them) elsewhere when the first word is
	 * not one of commands, or absent (--help, a bad option, nothing):
	 * NULL means this program answers those itself.
	 */
	int (*elsewhere)(int argc, char **argv);
};

/* main() of a topoadvisor program: returns its exit status. */
int cli_main(const struct cli *t, int argc, char **argv);

#endif
