/* procgroup: process group liveness and ending; see procgroup.h. */
#include "procgroup.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mono.h"

/* Parses the text of /proc/PID/stat; -1 when it is not one. */
static int proc_stat_parse(const char *text, pid_t pid, struct proc_info *pi)
{
	/* "pid (comm) S ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice threads itrealvalue
	 * starttime": comm may hold spaces and ')'. */
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	if (!open || !close || close < open)
		return -1;
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof(pi->comm))
		n = sizeof(pi->comm) - 1;
	memcpy(pi->comm, open + 1, n);
	pi->comm[n] = '\0';
	int ppid, pgrp;
	if (sscanf(close + 1, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
		   "%*d %*d %*d %*d %llu", &pi->state, &ppid, &pgrp, &pi->start) != 4)
		return -1;
	pi->pid = pid;
	pi->ppid = ppid;
	pi->pgrp = pgrp;
	return 0;
}

static int proc_stat_read(pid_t pid, struct proc_info *pi, struct strbuf *sb)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	strbuf_reset(sb);
	if (strbuf_read_file(sb, path) < 0)
		return -1;
	return proc_stat_parse(strbuf_str(sb), pid, pi);
}

int procgroup_info(pid_t pid, struct proc_info *pi)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = proc_stat_read(pid, pi, &sb);
	strbuf_release(&sb);
	return rc;
}

int procgroup_list(struct proc_info **list, size_t *n)
{
	*list = NULL;
	*n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	size_t cap = 0;
	struct dirent *de;
	struct strbuf sb = STRBUF_INIT;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			*list = xrealloc(*list, cap * sizeof(**list));
		}
		if (proc_stat_read((pid_t)atoi(de->d_name), &(*list)[*n], &sb) == 0)
			(*n)++;
	}
	strbuf_release(&sb);
	closedir(d);
	return 0;
}

/* Counts the live processes of group pgid, naming them in who when not NULL. */
static int group_scan(pid_t pgid, struct strbuf *who)
{
	struct proc_info *all;
	size_t n;
	if (procgroup_list(&all, &n) < 0)
		return -1;
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		const struct proc_info *pi = &all[i];
		if (pi->pgrp != pgid || pi->state == 'Z' || pi->state == 'X')
			continue;
		if (who)
			strbuf_addf(who, "%s%s(%d)", who->len ? ", " : "", pi->comm, (int)pi->pid);
		found++;
	}
	free(all);
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
	struct proc_info pi;
	return procgroup_info(pid, &pi) < 0 ? 0 : pi.start;
}

static uint64_t (*clock_ns)(void) = mono_now_ns;

void procgroup_set_clock(uint64_t (*now_ns)(void))
{
	clock_ns = now_ns ? now_ns : mono_now_ns;
}

/* By the clock, not by counting sleeps: on a loaded host each 10 ms nap
 * takes longer, and a count would wait many times ms. */
bool procgroup_wait_gone(pid_t pgid, int ms)
{
	uint64_t end = clock_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000u;
	for (;;) {
		if (!procgroup_alive(pgid))
			return true;
		if (clock_ns() >= end)
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
