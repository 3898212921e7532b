/*
 * topoadvisor: the program users run.  It runs the commands that need no
 * heavy library itself (exits: a trace reader needs libc and libzstd) and
 * hands everything else — every other command, the top-level help, any
 * unknown word — unchanged to topoadvisor-core, which links libvirt, glib,
 * libxml2, SQLite, libtracefs and the rest (63 shared libraries whose
 * relocation alone cost 14–17 ms of CPU at every start).  See the README's
 * start-up section for why the split is here and not a dlopen of each
 * library.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

extern const struct cmd_entry cmd_exits_entry;

static const struct cmd_entry *const light[] = {
	&cmd_exits_entry,
	NULL,
};

/*
 * Replaces this process with topoadvisor-core: next to this program (the
 * build tree), else in ../libexec/topoadvisor/ (make install).  Only
 * returns when neither can be run.
 */
static int run_core(int argc, char **argv)
{
	static const char *const where[] = { "%s/topoadvisor-core",
					     "%s/../libexec/topoadvisor/topoadvisor-core" };
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int why = ENOENT;
	(void)argc;	/* argv is NULL-ended: execv passes it whole */
	if (n > 0) {
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
			snprintf(path, sizeof(path), where[i], self);
			execv(path, argv);
			if (errno != ENOENT)
				why = errno;
		}
	}
	fprintf(stderr, "topoadvisor: error: cannot run topoadvisor-core (every command but "
		"exits): %s (looked next to %s and in its ../libexec/topoadvisor; reinstall with "
		"'make install')\n", strerror(why), n > 0 ? self : "this program");
	return EXIT_FAILURE_RUN;
}

int main(int argc, char **argv)
{
	const struct cli front = { .commands = light, .elsewhere = run_core };
	return cli_main(&front, argc, argv);
}
