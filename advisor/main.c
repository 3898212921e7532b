/*
 * topoadvisor-core: every command (advisor/cli.h parses, the table below
 * says which); each command is one advisor/cmd-*.c file.  Users run the
 * front program, topoadvisor (advisor/front.c), which hands all but the
 * light commands over to this one.
 */
#include "cli.h"

extern const struct cmd_entry cmd_plan_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_resume_entry;
extern const struct cmd_entry cmd_rerun_entry;
extern const struct cmd_entry cmd_extend_entry;
extern const struct cmd_entry cmd_compare_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_show_entry;
extern const struct cmd_entry cmd_rank_entry;
extern const struct cmd_entry cmd_recommend_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_restore_host_entry;
extern const struct cmd_entry cmd_exits_entry;
extern const struct cmd_entry cmd_trace_entry;
extern const struct cmd_entry cmd_probe_entry;
extern const struct cmd_entry cmd_run_block_entry;

static const struct cmd_entry *const commands[] = {
	&cmd_plan_entry,
	&cmd_run_entry,
	&cmd_resume_entry,
	&cmd_rerun_entry,
	&cmd_extend_entry,
	&cmd_compare_entry,
	&cmd_list_entry,
	&cmd_show_entry,
	&cmd_rank_entry,
	&cmd_recommend_entry,
	&cmd_report_entry,
	&cmd_export_entry,
	&cmd_restore_host_entry,
	&cmd_exits_entry,
	&cmd_trace_entry,
	&cmd_probe_entry,
	&cmd_run_block_entry,
	NULL,
};

int main(int argc, char **argv)
{
	const struct cli core = { .commands = commands };
	return cli_main(&core, argc, argv);
}
