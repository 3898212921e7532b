/* cli: the command line every topoadvisor program shares; see cli.h. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct cmd_ctx ctx;
static int show_version;

#define COMMON_OPTIONS \
	OPT_BOOL(0, "json", &ctx.json, "print results as JSON"), \
	OPT_COUNT('q', "quiet", &ctx.quiet, "print only results and errors"), \
	OPT_COUNT('v', "verbose", &ctx.verbose, "say more (repeat for more)")

static const struct option global_options[] = {
	OPT_STRING(0, "db", &ctx.db_path, "PATH",
		   "database (default: $TOPOADVISOR_DB, else ./topoadvisor.db)"),
	COMMON_OPTIONS,
	OPT_END(),
};

/* For the commands that use no database: --db is not theirs to list. */
static const struct option global_options_no_db[] = {
	COMMON_OPTIONS,
	OPT_END(),
};

static const struct option *globals_of(const struct cmd_entry *c)
{
	return c->no_db ? global_options_no_db : global_options;
}

static const struct option no_options[] = { OPT_END() };

static const struct option top_options[] = {
	OPT_BOOL(0, "version", &show_version, "print the version and exit"),
	OPT_END(),
};

static void top_usage(const struct cli *t, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;
	const struct option *const tables[] = { global_options, top_options, NULL };
	strbuf_addstr(&sb, "usage: topoadvisor [options] COMMAND [ARGS]\n\n"
		      "Find the best VM shape for a workload by experiment.\n\n"
		      "Commands:\n");
	for (const struct cmd_entry *const *c = t->commands; *c; c++)
		strbuf_addf(&sb, "  %-13s %s\n", (*c)->name, (*c)->summary);
	strbuf_addstr(&sb, "\nOptions:\n");
	opts_help(&sb, tables);
	strbuf_addstr(&sb, "\n'topoadvisor COMMAND --help' lists a command's options.\n");
	fputs(strbuf_str(&sb), f);
	strbuf_release(&sb);
}

static void cmd_usage(FILE *f, const struct cmd_entry *c)
{
	struct strbuf sb = STRBUF_INIT;
	const struct option *const tables[] = { c->options ? c->options : no_options,
						globals_of(c), NULL };
	strbuf_addf(&sb, "usage: topoadvisor %s [options]%s%s\n\n%s\n\nOptions:\n",
		    c->name, c->args_usage[0] ? " " : "", c->args_usage, c->summary);
	opts_help(&sb, tables);
	if (c->help)
		strbuf_addf(&sb, "\n%s", c->help);
	fputs(strbuf_str(&sb), f);
	strbuf_release(&sb);
}

static const struct cmd_entry *find_command(const struct cli *t, const char *name)
{
	for (const struct cmd_entry *const *c = t->commands; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

int cli_main(const struct cli *t, int argc, char **argv)
{
	struct ta_err err = { 0 };
	const struct option *const top_tables[] = { global_options, top_options, NULL };

	/*
	 * A daemon or pipe that goes away (libvirtd restarting, `| head`) must
	 * give an error we handle, not kill us mid-run with knobs changed.
	 */
	signal(SIGPIPE, SIG_IGN);

	/* The parse below reorders argv: elsewhere gets it as it came. */
	char *given[argc + 1];
	memcpy(given, argv, ((size_t)argc + 1) * sizeof(*given));

	/* Global options may come before the command ... */
	int n = opts_parse(top_tables, argc - 1, argv + 1, 1, &err);
	if (show_version && n >= 0) {
		printf("topoadvisor %s\n", TA_VERSION);
		return EXIT_OK;
	}
	const struct cmd_entry *cmd = n > 0 ? find_command(t, argv[1]) : NULL;
	if (!cmd && t->elsewhere)
		return t->elsewhere(argc, given);
	if (n == OPTS_HELP) {
		top_usage(t, stdout);
		return EXIT_OK;
	}
	if (n < 0) {
		cmd_fail(&err);
		top_usage(t, stderr);
		return EXIT_BAD_INPUT;
	}
	if (n == 0) {
		top_usage(t, stderr);
		return EXIT_BAD_INPUT;
	}
	char **args = argv + 1;
	if (!cmd) {
		err_set(&err, EXIT_BAD_INPUT, "'%s' is not a command; see 'topoadvisor --help'",
			args[0]);
		return cmd_fail(&err);
	}

	/* ... or after it, mixed with the command's own. */
	const struct option *const tables[] = { cmd->options ? cmd->options : no_options,
						globals_of(cmd), NULL };
	n = opts_parse(tables, n - 1, args + 1, cmd->stop_at_arg, &err);
	if (n == OPTS_HELP) {
		cmd_usage(stdout, cmd);
		return EXIT_OK;
	}
	if (n < 0) {
		cmd_fail(&err);
		cmd_usage(stderr, cmd);
		return EXIT_BAD_INPUT;
	}
	if (n < cmd->min_args || (cmd->max_args >= 0 && n > cmd->max_args)) {
		err_set(&err, EXIT_BAD_INPUT, "'%s' takes %s", cmd->name,
			cmd->args_usage[0] ? cmd->args_usage : "no arguments");
		cmd_fail(&err);
		cmd_usage(stderr, cmd);
		return EXIT_BAD_INPUT;
	}
	if (!ctx.db_path) {
		const char *env = getenv("TOPOADVISOR_DB");
		ctx.db_path = env && *env ? env : CMD_DEFAULT_DB;
	}
	return cmd->exec(&ctx, n, args + 1);
}
