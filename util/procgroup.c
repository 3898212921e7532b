/* procgroup: process group liveness and ending; see procgroup.h. */
#include "procgroup.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mono.h"

struct proc_stat {
	char comm[64];
	char state;
	int pgrp;
	unsigned long long start;
};

/* Parses /proc/PID/stat; -1 when the process is gone. */
static int proc_stat_read(const char *pid, struct proc_stat *ps, struct strbuf *sb)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	strbuf_reset(sb);
	if (strbuf_read_file(sb, path) < 0)
		return -1;
	/* "pid (comm) S ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice threads itrealvalue
	 * starttime": comm may hold spaces and ')'. */
	const char *open = strchr(strbuf_str(sb), '(');
	const char *close = strrchr(strbuf_str(sb), ')');
	if (!open || !close || close < open)
		return -1;
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof(ps->comm))
		n = sizeof(ps->comm) - 1;
	memcpy(ps->comm, open + 1, n);
	ps->comm[n] = '\0';
	int ppid;
	if (sscanf(close + 1, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
		   "%*d %*d %*d %*d %llu", &ps->state, &ppid, &ps->pgrp, &ps->start) != 4)
		return -1;
	return 0;
}

/* Counts the live processes of group pgid, naming them in who when not NULL. */
static int group_scan(pid_t pgid, struct strbuf *who)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	int found = 0;
	struct dirent *de;
	struct strbuf sb = STRBUF_INIT;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		struct proc_stat ps;
		if (proc_stat_read(de->d_name, &ps, &sb) < 0 || ps.pgrp != pgid ||
		    ps.state == 'Z' || ps.state == 'X')
			continue;
		if (who)
			strbuf_addf(who, "%s%s(%s)", who->len ? ", " : "", ps.comm, de->d_name);
		found++;
	}
	strbuf_release(&sb);
	closedir(d);
	return found;
}

bool procgroup_alive(pid_t pgid)
{
	if (pgid <= 0 || (kill(-pgid, 0) < 0 && errno == ESRCH))
		return false;
	/* Zombies still count for kill(); they are dead for our purposes
	 * (orphaned ones wait for an init that may never reap them). */
	return group_scan(pgid, NULL) != 0;
}

unsigned long long procgroup_start_time(pid_t pid)
{
	char name[24];
	snprintf(name, sizeof(name), "%d", (int)pid);
	struct strbuf sb = STRBUF_INIT;
	struct proc_stat ps;
	int rc = proc_stat_read(name, &ps, &sb);
	strbuf_release(&sb);
	return rc < 0 ? 0 : ps.start;
}

bool procgroup_wait_gone(pid_t pgid, int ms)
{
	for (int waited = 0;; waited += 10) {
		if (!procgroup_alive(pgid))
			return true;
		if (waited >= ms)
			return false;
		mono_sleep_ms(10);
	}
}

int procgroup_end_leftover(pid_t pgid, unsigned long long start, int wait_ms,
			   struct strbuf *who)
{
	if (pgid <= 1)
		return 0;
	/* The kernel keeps a group's id allocated while any member lives, so a
	 * live process with that id and another start time means our group is
	 * gone and the number was handed out again. */
	unsigned long long now = procgroup_start_time(pgid);
	if (now && now != start)
		return 0;
	int found = group_scan(pgid, who);
	if (found <= 0)
		return 0;
	kill(-pgid, SIGKILL);
	return procgroup_wait_gone(pgid, wait_ms) ? found : -1;
}
