/*
 * guestbg: processes that run in the background inside the measured guest
 * while its benchmark runs — in-guest noise loads (a busy loop, `ping -f`,
 * any argv, on given guest vCPUs) and benchmark servers (redis-server) —
 * started, watched, stopped and verified gone through the guest agent.
 *
 * Processes are started by GUESTBG_START_SCRIPT (busybox sh in the test
 * image; any POSIX sh with setsid, taskset and /proc elsewhere): `setsid`
 * makes it the leader of its own process group, so stopping reaches the
 * children it starts; `taskset -c CPUS` pins it (and them) to guest vCPUs;
 * its stderr goes to a file under /tmp that a failure message quotes.  A
 * program name without "/" is looked up in the guest's PATH first, because
 * busybox's taskset would otherwise run its own applet of that name (its
 * `ping`, which has no -f, instead of iputils' /usr/bin/ping).  The
 * script waits 0.1 s and fails, quoting that stderr, when the process is
 * already gone (a program that does not exist, a bad option); one that
 * fails later is caught when it is stopped after the benchmark (the run
 * fails then, quoting the same stderr).
 *
 * GUESTBG_STOP_SCRIPT sends SIGTERM to every group, waits up to the grace
 * period, then SIGKILL, and succeeds only when no process of any group is
 * left (zombies count as gone: the guest's init reaps them).  A guest kept
 * for the next run (guest.reuse) is then as clean as a fresh one.
 *
 * Every call goes through agent_exec; a guest whose agent does not answer
 * fails the call with the agent's reason.
 */
#ifndef TA_GUESTBG_H
#define TA_GUESTBG_H

#include <stddef.h>

#include <libvirt/libvirt.h>

#include "../util/err.h"
#include "../util/strbuf.h"
#include "config.h"

/*
 * sh -c GUESTBG_START_SCRIPT sh SETS ARGV...: starts one ARGV per word of
 * SETS, each word a guest cpulist or "-" (unpinned), in one agent call.
 * Prints "PID ERRFILE" per process and exits 0; or, when any of them is
 * gone already, prints their stderr, kills all of them and exits 1.
 */
#define GUESTBG_START_SCRIPT \
	"sets=$1; shift\n" \
	"case $1 in */*) ;; *)\n" \
	"\tIFS=:\n" \
	"\tfor d in $PATH; do\n" \
	"\t\t[ -x \"$d/$1\" ] && { p=$d/$1; shift; set -- \"$p\" \"$@\"; break; }\n" \
	"\tdone\n" \
	"\tunset IFS;;\n" \
	"esac\n" \
	"n=0 procs=\n" \
	"for cpus in $sets; do\n" \
	"\tn=$((n + 1))\n" \
	"\terr=/tmp/topoadvisor-bg.$$.$n.err\n" \
	"\tif [ \"$cpus\" = - ]; then\n" \
	"\t\tsetsid \"$@\" </dev/null >/dev/null 2>\"$err\" &\n" \
	"\telse\n" \
	"\t\tsetsid taskset -c \"$cpus\" \"$@\" </dev/null >/dev/null 2>\"$err\" &\n" \
	"\tfi\n" \
	"\tprocs=\"$procs $!:$err\"\n" \
	"done\n" \
	"sleep 0.1\n" \
	"bad=\n" \
	"for pe in $procs; do\n" \
	"\t{ read -r s </proc/${pe%%:*}/stat; } 2>/dev/null && s=${s##*) } && [ \"${s%% *}\" != Z ] ||\n" \
	"\t\tbad=\"$bad $pe\"\n" \
	"done\n" \
	"if [ -n \"$bad\" ]; then\n" \
	"\tfor pe in $bad; do cat \"${pe#*:}\" >&2; done\n" \
	"\tfor pe in $procs; do kill -KILL -${pe%%:*} 2>/dev/null; rm -f \"${pe#*:}\"; done\n" \
	"\texit 1\n" \
	"fi\n" \
	"for pe in $procs; do echo \"${pe%%:*} ${pe#*:}\"; done\n"

/*
 * The shell function alive: sets n to how many live (non-zombie) processes
 * are in the process groups listed in $groups (a variable, not output: a
 * command substitution forks, slow under TCG); `kill -0` answers the
 * common case (no group left at all) without reading every /proc entry,
 * which costs 0.5 s and more in a busy TCG guest.  `alive quick` stops
 * there: n is 1 while any process of the groups exists, zombies included.
 */
#define GUESTBG_ALIVE_FN \
	"alive() {\n" \
	"\tn=0\n" \
	"\tfor g in $groups; do kill -0 -$g 2>/dev/null && n=1; done\n" \
	"\t[ $n -eq 0 ] || [ \"$1\" = quick ] && return\n" \
	"\tn=0\n" \
	"\tfor f in /proc/[0-9]*/stat; do\n" \
	"\t\t{ read -r l <\"$f\"; } 2>/dev/null || continue\n" \
	"\t\tset -- ${l##*) }\n" \
	"\t\t[ \"$1\" = Z ] && continue\n" \
	"\t\tfor g in $groups; do [ \"$3\" = \"$g\" ] && n=$((n + 1)); done\n" \
	"\tdone\n" \
	"}\n"

/*
 * sh -c GUESTBG_STOP_SCRIPT sh TENTHS PID ERRFILE [PID ERRFILE...]: first
 * prints "PID: <its stderr>" on stdout for each PID that had ended already
 * (a load that should have run to this point: its check, in the same agent
 * call), then SIGTERM to each group, removes the stderr files (one rm for
 * all: every fork is slow under TCG), SIGKILL after TENTHS tenths of a
 * second; exits 0 when nothing is left, else 1 with a count on stderr.
 * Processes that take the SIGTERM are usually gone within the rm or a
 * few 20 ms looks (`alive quick`), before a /proc scan is needed.
 */
#define GUESTBG_STOP_SCRIPT \
	GUESTBG_ALIVE_FN \
	"tenths=$1; shift\n" \
	"groups= files=\n" \
	"while [ $# -ge 2 ]; do\n" \
	"\t{ read -r s </proc/$1/stat; } 2>/dev/null && s=${s##*) } && [ \"${s%% *}\" != Z ] ||\n" \
	"\t\techo \"$1: $(tail -c 300 \"$2\" 2>/dev/null | tr '\\n' ' ')\"\n" \
	"\tgroups=\"$groups $1\" files=\"$files $2\"; shift 2\n" \
	"done\n" \
	"for g in $groups; do kill -TERM -$g 2>/dev/null; done\n" \
	"rm -f $files\n" \
	"i=0\n" \
	"alive quick\n" \
	"while [ $n -gt 0 ] && [ $i -lt 3 ]; do sleep 0.02; i=$((i + 1)); alive quick; done\n" \
	"i=0\n" \
	"[ $n -gt 0 ] && alive\n" \
	"while [ $n -gt 0 ] && [ $i -lt $tenths ]; do sleep 0.1; i=$((i + 1)); alive; done\n" \
	"if [ $n -gt 0 ]; then\n" \
	"\tfor g in $groups; do kill -KILL -$g 2>/dev/null; done\n" \
	"\ti=0\n" \
	"\talive\n" \
	"\twhile [ $n -gt 0 ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); alive; done\n" \
	"fi\n" \
	"[ $n -eq 0 ] || { echo \"$n processes survive SIGKILL\" >&2; exit 1; }\n"

/* The busy loop a spin load runs in the guest (one per vCPU). */
#define GUESTBG_SPIN_ARGV { "sh", "-c", "while :; do :; done", NULL }

struct guestbg_proc {
	char *pid;		/* as the guest printed it */
	char *errfile;		/* its stderr in the guest */
};

/* Zero-initialised is empty. */
struct guestbg {
	struct guestbg_proc *v;
	size_t n;
};

/*
 * Starts argv in the guest once per word of `sets` (each a guest cpulist
 * the copy is pinned to, or "-" for unpinned; NULL: one unpinned copy) and
 * adds them to bg.  -1 (EXIT_FAILURE_RUN) when the agent fails or a copy
 * does not keep running, with its stderr; then none is left running.
 */
int guestbg_start(virDomainPtr dom, const char *sets, char *const argv[], struct guestbg *bg,
		  struct ta_err *err);

/*
 * Starts a noise load inside the guest on guest vCPUs `vcpus` (required):
 * spin: `threads` busy loops (<= 0: one per vCPU of the set), loop i pinned
 * to the i-th vCPU of the set modulo its size; command: argv pinned to the
 * whole set.  On failure whatever had started is stopped again.
 */
int guestbg_start_noise(virDomainPtr dom, enum noise_kind kind, const char *vcpus, int threads,
			char *const argv[], struct guestbg *bg, struct ta_err *err);

/*
 * Stops every process group of bg (SIGTERM, SIGKILL after grace_ms) and
 * checks that none is left, in one agent call.  Empties bg, also on
 * failure.  -1 when something survived or the agent failed: the caller
 * must not reuse the guest then.  `ended` (NULL: not wanted) gets, for each
 * process that had ended before the stop, "PID: <its stderr>" (lines
 * joined by "; "): a load that should have run until now did not.
 */
int guestbg_stop(virDomainPtr dom, struct guestbg *bg, int grace_ms, struct strbuf *ended,
		 struct ta_err *err);

/* Gives back what bg holds, leaving it empty, without touching the guest (it is being destroyed). */
void guestbg_release(struct guestbg *bg);

#endif
