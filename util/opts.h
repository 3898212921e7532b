/*
 * opts: declarative command-line options (after git's parse-options.h).
 *
 * Each command declares a table of options bound to variables; the parser
 * fills them in and the help text is generated from the same table, so
 * `--help` can never drift from what is accepted.
 *
 *	static const struct option plan_options[] = {
 *		OPT_BOOL(0, "all", &show_all, "also list dropped combinations"),
 *		OPT_END(),
 *	};
 */
#ifndef TA_OPTS_H
#define TA_OPTS_H

#include "err.h"
#include "strbuf.h"

enum opt_type { OPT_T_END, OPT_T_BOOL, OPT_T_STRING, OPT_T_INT, OPT_T_COUNT };

struct option {
	enum opt_type type;
	char short_name;	/* 0 for none */
	const char *long_name;	/* NULL for none */
	void *value;		/* int * (BOOL, INT, COUNT) or const char ** */
	const char *argh;	/* name of the argument in help ("PATH") */
	const char *help;
};

#define OPT_BOOL(s, l, v, h) { OPT_T_BOOL, (s), (l), (v), NULL, (h) }
#define OPT_COUNT(s, l, v, h) { OPT_T_COUNT, (s), (l), (v), NULL, (h) }
#define OPT_STRING(s, l, v, a, h) { OPT_T_STRING, (s), (l), (v), (a), (h) }
#define OPT_INT(s, l, v, a, h) { OPT_T_INT, (s), (l), (v), (a), (h) }
#define OPT_END() { OPT_T_END, 0, NULL, NULL, NULL, NULL }

enum { OPTS_HELP = -2 };

/*
 * Parses argv[0..argc) (argv[0] is an argument, not a program name) against
 * the NULL-terminated list of tables.  Non-option arguments are moved, in
 * order, to the front of argv and their count is returned; everything after
 * "--" is taken as non-option arguments.  With `stop_at_arg`, the first
 * non-option argument ends option parsing (for `cmd -- ARGV` style commands).
 * Returns OPTS_HELP for -h/--help and -1 (code EXIT_BAD_INPUT) on bad usage.
 */
int opts_parse(const struct option *const *tables, int argc, char **argv,
	       int stop_at_arg, struct ta_err *err);

/* Appends the generated option help for the tables to out. */
void opts_help(struct strbuf *out, const struct option *const *tables);

#endif
