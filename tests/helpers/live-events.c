/*
 * live-events: the driver behind tests/integration/trace-events.sh.
 *
 * Starts a live session (collectors/live.h) collecting EVENTS ("gang",
 * "reasons" or "all"), prints its tracefs instance name on stdout, waits
 * for a line on stdin (while the script inspects the instance and changes
 * the kernel's events), stops the session and prints "records N
 * run_core_format B".  This is exactly what the sweep controller does for a
 * run, minus the guest: a sweep with `gang_exits: false` asks for "reasons".
 * Exit 0 when start and stop succeeded.
 */
#include <stdio.h>
#include <string.h>

#include "collectors/live.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: live-events gang|reasons|all\n");
		return 2;
	}
	unsigned events = !strcmp(argv[1], "gang") ? LIVE_EV_GANG
		: !strcmp(argv[1], "reasons") ? LIVE_EV_REASONS : LIVE_EV_ALL;
	struct live_opts opts = { .events = events, .algorithm = GANG_ALGO_VCORE };
	struct live_session *s;
	struct ta_err err = { 0 };
	if (live_start(&opts, &s, &err) < 0) {
		fprintf(stderr, "live-events: %s\n", err.msg);
		return 1;
	}
	printf("%s\n", live_instance_name(s));
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	struct gang_result res;
	if (live_stop(s, &res, &err) < 0) {
		fprintf(stderr, "live-events: %s\n", err.msg);
		return 1;
	}
	printf("records %llu run_core_format %d\n", (unsigned long long)res.records,
	       res.run_core_format);
	gang_result_release(&res);
	return 0;
}
