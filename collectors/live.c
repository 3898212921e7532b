/* live: a tracefs session feeding the gang counter; see live.h. */
#include "live.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "../util/mono.h"
#include "../util/strbuf.h"
#include "decode.h"
#include "htab.h"
#include "tsmerge.h"
#include "tdat.h"

#define TRACEFS_DIR "/sys/kernel/tracing"
#define WATERMARK_NS (20 * 1000 * 1000ULL)
/*
 * Between drain rounds the reader sleeps, so it reads full pages in batches
 * (the kernel swaps a full page out instead of copying records, and each
 * wake-up costs the traced workload a context switch and cache): 50 ms
 * measured best at 2 M events/s on 2 CPUs (2, 5, 10, 20, 50, 100 ms tried).
 * Smaller buffers get shorter sleeps: one CPU taking all of 2 M events/s
 * (~36 bytes each, FILL_BYTES_PER_US) may fill a quarter of its buffer
 * while the reader sleeps.  The sleep shrinks to ROUND_NAP_US once the
 * busiest CPU filled an eighth of its buffer since the last round, and the
 * next round starts at once above a quarter.
 */
#define ROUND_SLEEP_US 50000
#define ROUND_NAP_US 1000
#define FILL_BYTES_PER_US 72

/*
 * One CPU's pages read and not yet fed, walked in place: read() fills a page
 * buffer, the page reader walks it where it lies, and the merge feeds records
 * straight from it (no copy per record).  pages[head] is the page being
 * walked when n > 0.
 */
struct cpu_queue {
	int cpu;
	int fd;
	unsigned char **pages;	/* ring of page buffers */
	size_t cap, head, n;
	struct page_reader pr;
};

/* pid -> tgid for x86 events, which carry no tgid (0: not known at all). */
struct tgid_entry {
	int32_t pid;		/* key */
	int32_t tgid;
};

/*
 * Process names, looked up when a process is first seen (it may be gone at
 * the end).  Records are read a while after they were written, so a short
 * process may already be gone then too: the kernel's saved_cmdlines, read
 * at the end, names those (pid: the thread seen first, for that look-up).
 */
struct comm_entry {
	int32_t tgid, pid;
	char comm[32];
};

struct live_session {
	struct tracefs_instance *inst;
	char name[64];
	struct evfmt_table formats;
	struct decoder dec;
	struct gang_counter *g;
	bool run_core_seen;	/* a kvmppc_run_core was fed (POWER7/8) */
	struct cpu_queue *q;
	int nq;
	uint32_t page_size;
	uint64_t buffer_pages;	/* per CPU */
	long sleep_us;		/* between rounds while the buffers stay empty-ish */
	unsigned char **spare;	/* page buffers walked to the end, for reuse */
	size_t nspare, spare_cap;
	int32_t *tgids;
	size_t ntgids;
	struct htab tc;			/* struct tgid_entry by pid */
	struct tsmerge merge;		/* the CPU queues with records, in time order */
	struct comm_entry *comms;
	size_t ncomms;
	struct comm_entry *named;	/* live_name(): what the caller knows */
	size_t nnamed;
	pthread_t thread;
	bool thread_running;
	bool stop;			/* set by live_stop under lock, wakes the thread */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	uint64_t records;
	uint64_t start_ns, stop_ns;
	char thread_err[256];
};

/*
 * pid's tgid in the kernel's saved_tgids ("PID TGID" lines), 0 when absent.
 * The kernel fills it at context switches while events are traced with the
 * record-tgid option, so it still knows threads that exited before their
 * records were read.
 */
static int32_t saved_tgid(int32_t pid)
{
	char *text = tracefs_instance_file_read(NULL, "saved_tgids", NULL);
	int32_t tgid = 0;
	for (char *line = text; line && *line;) {
		char *end;
		long p = strtol(line, &end, 10);
		if (p == pid && end != line && *end == ' ') {
			tgid = (int32_t)strtol(end, NULL, 10);
			break;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	free(text);
	return tgid;
}

static int32_t proc_tgid(int32_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	int32_t tgid = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (int32_t)atoi(line + 5);
			break;
		}
	fclose(f);
	return tgid;
}

static int32_t tgid_lookup(struct htab *tc, int32_t pid)
{
	if (pid <= 0)
		return 0;
	size_t slot;
	const struct tgid_entry *e = htab_find(tc, &pid, sizeof(pid), &slot);
	if (e)
		return e->tgid;
	int32_t tgid = proc_tgid(pid);
	if (!tgid)	/* gone already (a short-lived program) */
		tgid = saved_tgid(pid);
	struct tgid_entry *n = htab_insert(tc, &pid, slot);
	n->tgid = tgid;
	return tgid;
}

static unsigned char *page_get(struct live_session *s)
{
	if (s->nspare)
		return s->spare[--s->nspare];
	return xmalloc(s->page_size);
}

static void page_put(struct live_session *s, unsigned char *page)
{
	if (s->nspare == s->spare_cap) {
		s->spare_cap = s->spare_cap ? s->spare_cap * 2 : 64;
		s->spare = xrealloc(s->spare, s->spare_cap * sizeof(*s->spare));
	}
	s->spare[s->nspare++] = page;
}

static bool corrupt(struct live_session *s, const struct cpu_queue *q)
{
	snprintf(s->thread_err, sizeof(s->thread_err),
		 "a corrupt ring-buffer page was read on CPU %d", q->cpu);
	return false;
}

/*
 * Drops the head page when walked to its end and starts the next one that
 * holds records; false on a corrupt page.
 */
static bool queue_advance(struct live_session *s, struct cpu_queue *q)
{
	while (q->n && !q->pr.ev) {
		page_put(s, q->pages[q->head]);
		q->head = (q->head + 1) % q->cap;
		if (!--q->n)
			break;
		if (page_reader_attach(&q->pr, q->pages[q->head], s->page_size) < 0)
			return corrupt(s, q);
	}
	return true;
}

/*
 * Reads the pages the kernel has for this CPU now, up to a quarter of its
 * buffer (so no CPU waits long for its turn); false on a corrupt page.  A
 * page less than half full means the reader has caught up with the writer:
 * reading on would fetch a few records per read(), so the rest waits for the
 * next round.  The final round, after tracing stopped, reads everything.
 */
static bool queue_fill(struct live_session *s, struct cpu_queue *q, bool final,
		       unsigned *pages)
{
	uint64_t most = final ? UINT64_MAX : s->buffer_pages / 4 ? s->buffer_pages / 4 : 1;
	for (uint64_t k = 0; k < most; k++) {
		unsigned char *page = page_get(s);
		ssize_t n = read(q->fd, page, s->page_size);
		if (n <= 0) {
			page_put(s, page);
			return true;	/* EAGAIN: empty for now */
		}
		(*pages)++;
		/* trace_pipe_raw hands out whole pages: a short one is zero padded. */
		if ((size_t)n < s->page_size)
			memset(page + n, 0, s->page_size - (size_t)n);
		if (q->n == q->cap) {
			size_t ncap = q->cap ? q->cap * 2 : 64;
			unsigned char **np = xcalloc(ncap, sizeof(*np));
			for (size_t i = 0; i < q->n; i++)
				np[i] = q->pages[(q->head + i) % q->cap];
			free(q->pages);
			q->pages = np;
			q->cap = ncap;
			q->head = 0;
		}
		q->pages[(q->head + q->n++) % q->cap] = page;
		bool caught_up = (uint64_t)page_committed(&q->pr, page) * 2 < s->page_size;
		if (q->n == 1) {
			if (page_reader_attach(&q->pr, page, s->page_size) < 0)
				return corrupt(s, q);
			if (!queue_advance(s, q))
				return false;
		}
		if (caught_up && !final)
			return true;
	}
	return true;
}

static bool read_comm(int32_t pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	FILE *f = fopen(path, "re");
	bool ok = false;
	if (f) {
		ok = fgets(out, (int)len, f) != NULL;
		out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
	return ok && out[0];
}

/* Whether thread pid still belongs to process tgid. */
static bool thread_of(int32_t tgid, int32_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d", tgid, pid);
	return access(path, F_OK) == 0;
}

/*
 * Names tgid on first sight: its own comm, else its runner thread's.  A
 * process may be gone before the reader sees its records and its pid given
 * to another: /proc is believed only while the recording thread is still
 * one of tgid's (checked after reading, so a reuse in between shows).
 * Otherwise the name stays empty and result_comms() takes the one the
 * kernel saved when it recorded the event.
 */
static void comm_note(struct live_session *s, int32_t tgid, int32_t pid)
{
	for (size_t i = 0; i < s->ncomms; i++)
		if (s->comms[i].tgid == tgid)
			return;
	s->comms = xrealloc(s->comms, (s->ncomms + 1) * sizeof(*s->comms));
	struct comm_entry *c = &s->comms[s->ncomms++];
	c->tgid = tgid;
	c->pid = pid;
	c->comm[0] = '\0';
	if (tgid > 0 && pid > 0 && tgid != pid) {
		if (!read_comm(tgid, c->comm, sizeof(c->comm)) || !thread_of(tgid, pid))
			c->comm[0] = '\0';
	} else {
		read_comm(tgid > 0 ? tgid : pid, c->comm, sizeof(c->comm));
	}
}

static void feed_record(struct live_session *s, uint64_t ts, const void *data, int size, int cpu)
{
	struct gang_event ev;
	s->records++;
	if (decoder_decode(&s->dec, data, size, &ev) <= 0)
		return;
	ev.cpu = cpu;
	ev.ts = ts;
	if (ev.kind == GANG_EV_KVM_EXIT || ev.kind == GANG_EV_USERSPACE_EXIT ||
	    ev.kind == GANG_EV_KVM_ENTRY) {
		/* 0: unknown, the thread stands in for its process (gang.h). */
		ev.tgid = tgid_lookup(&s->tc, ev.pid);
		comm_note(s, ev.tgid ? ev.tgid : ev.pid, ev.pid);
	} else if (ev.kind == GANG_EV_RUN_CORE) {
		s->run_core_seen = true;
		comm_note(s, (int32_t)ev.u.run_core.tgid, ev.pid);
	} else if (!s->run_core_seen) {
		/*
		 * POWER9/10: no runner names the VM of a guest exit or entry;
		 * the recording vCPU thread's process does (gang.h).
		 */
		ev.tgid = tgid_lookup(&s->tc, ev.pid);
		comm_note(s, ev.tgid ? ev.tgid : ev.pid, ev.pid);
	}
	gang_feed(s->g, &ev);
}

/*
 * Feeds queued records in timestamp order.  A CPU's records come in order,
 * so the oldest queued record can go once every other CPU has a newer one
 * queued: the CPU with the oldest record runs on until it passes the next
 * CPU's oldest.  Only while another CPU's queue is empty (nothing read from it
 * yet: it may still commit an older record) do records wait for the
 * watermark.  False on a corrupt page.
 */
static bool merge_upto(struct live_session *s, uint64_t watermark)
{
	struct tsmerge *m = &s->merge;
	tsmerge_clear(m);
	bool empty = false;
	for (int i = 0; i < s->nq; i++) {
		if (s->q[i].n)
			tsmerge_push(m, (uint32_t)i, s->q[i].pr.ts, (uint64_t)i);
		else
			empty = true;
	}
	while (m->n) {
		uint32_t i = (uint32_t)tsmerge_top(m);
		struct cpu_queue *q = &s->q[i];
		uint64_t cap = empty ? watermark : UINT64_MAX;
		if (q->pr.ts > cap)
			return true;
		do {
			int size = page_reader_size(&q->pr);
			if (size < 0)
				return corrupt(s, q);
			feed_record(s, q->pr.ts, q->pr.ev, size, q->cpu);
			page_reader_next(&q->pr);
			if (!queue_advance(s, q))
				return false;
		} while (q->n && q->pr.ts <= cap && tsmerge_runs_on(m, q->pr.ts, i));
		if (q->n) {
			tsmerge_update_top(m, q->pr.ts, i);
		} else {
			tsmerge_pop(m);
			empty = true;
		}
	}
	return true;
}

/*
 * One drain round; returns the most pages read from one CPU, -1 on a corrupt
 * page.
 */
static int drain_round(struct live_session *s, bool final)
{
	/* Taken before reading: anything committed later is newer than this. */
	uint64_t now = mono_now_ns();
	unsigned most = 0;
	for (int i = 0; i < s->nq; i++) {
		unsigned pages = 0;
		if (!queue_fill(s, &s->q[i], final, &pages))
			return -1;
		if (pages > most)
			most = pages;
	}
	if (!merge_upto(s, final ? UINT64_MAX : now - WATERMARK_NS))
		return -1;
	return (int)most;
}

static void *drain_thread(void *arg)
{
	struct live_session *s = arg;
	for (;;) {
		int rc = drain_round(s, false);
		if (rc < 0)
			break;
		long us = (uint64_t)rc * 4 >= s->buffer_pages ? 0
			: (uint64_t)rc * 8 >= s->buffer_pages ? ROUND_NAP_US : s->sleep_us;
		struct timespec until = mono_deadline_us(us);
		bool stop;
		pthread_mutex_lock(&s->lock);
		while (!s->stop && us &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			;
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
	}
	return NULL;
}

/* tracefs must be mounted (mount it if not) and writable by us. */
static int tracefs_ready(struct ta_err *err)
{
	if (geteuid() != 0)
		return err_set(err, EXIT_FAILURE_RUN,
			       "live tracing needs root (tracefs instances and kernel events): "
			       "run 'sudo topoadvisor trace ...', or read a recording made as root "
			       "with 'topoadvisor exits FILE' (" RECORD_HINT ")");
	/* Mounted by hand: tracefs_tracing_dir_is_mounted() leaks (libtracefs 1.6). */
	if (access(TRACEFS_DIR "/instances", F_OK) < 0 &&
	    mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) < 0 && errno != EBUSY)
		return err_set(err, EXIT_FAILURE_RUN,
			       "tracefs is not mounted and mounting it on %s failed: %s (the "
			       "kernel needs CONFIG_TRACING)", TRACEFS_DIR, strerror(errno));
	if (!tracefs_tracing_dir())
		return err_set(err, EXIT_FAILURE_RUN,
			       "tracefs is not available and could not be mounted (try 'mount -t "
			       "tracefs nodev /sys/kernel/tracing'; the kernel needs "
			       "CONFIG_TRACING)");
	return 0;
}

/* The inode of the PID namespace /proc/PID/ns/pid (PID "self") names; 0: none. */
static unsigned long long pidns_of(const char *pid)
{
	char path[300];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	return stat(path, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* The initial PID namespace's inode (PROC_PID_INIT_INO). */
#define PIDNS_INIT_INO 0xEFFFFFFCULL

/* Whether /proc is our PID namespace's (unshare --pid without --mount-proc: not). */
static bool proc_is_ours(void)
{
	char link[32];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strtol(link, NULL, 10) == (long)getpid();
}

/* Field 22 of /proc/PID/stat (clock ticks since boot); 0 when there is none. */
static unsigned long long start_time_of(const char *pid)
{
	char path[300], buf[1024];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');	/* comm may hold anything */
	unsigned long long start = 0;
	for (int field = 2; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (p)
		sscanf(p, "%llu", &start);
	return start;
}

/* The last number of the "NSpid:" line of /proc/PID/status: its pid in its own namespace. */
static long innermost_pid(const char *pid)
{
	char path[300], buf[4096];
	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *line = strstr(buf, "\nNSpid:");
	if (!line)
		return -1;
	line[strcspn(line + 1, "\n") + 1] = '\0';
	char *last = strrchr(line, '\t');
	return last ? strtol(last + 1, NULL, 10) : -1;
}

void live_instance_token(struct live_token *tok)
{
	char pid[24];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	tok->pid = getpid();
	tok->pidns = pidns_of("self");
	tok->start = start_time_of(proc_is_ours() ? pid : "self");
}

enum live_owner live_instance_owner(const char *name)
{
	int pid, serial, used = 0;
	unsigned long long ns, start;
	char tail;
	bool token = sscanf(name, "topoadvisor-%d-%d-%llu-%llu%n", &pid, &serial, &ns, &start,
			    &used) == 4 && name[used] == '\0';
	if (!token && (sscanf(name, "topoadvisor-%d-%d%c", &pid, &serial, &tail) != 2))
		return LIVE_OWNER_NOT_OURS;
	if (pid <= 0)
		return LIVE_OWNER_NOT_OURS;
	unsigned long long self = pidns_of("self");
	if (!self || !proc_is_ours())
		return LIVE_OWNER_UNKNOWN;
	if (!token) {
		/* A name of an older build: it says nothing of its namespace,
		 * so only the initial one may judge it, by its pid. */
		if (self != PIDNS_INIT_INO)
			return LIVE_OWNER_UNKNOWN;
		return kill(pid, 0) < 0 && errno == ESRCH ? LIVE_OWNER_GONE : LIVE_OWNER_ALIVE;
	}
	char p[24];
	snprintf(p, sizeof(p), "%d", pid);
	if (ns == self)
		return start_time_of(p) == start ? LIVE_OWNER_ALIVE : LIVE_OWNER_GONE;
	/* Another namespace: only from the initial one are all its processes
	 * in sight (each with its pid there, NSpid); from elsewhere, unknown. */
	if (self != PIDNS_INIT_INO)
		return LIVE_OWNER_UNKNOWN;
	DIR *d = opendir("/proc");
	if (!d)
		return LIVE_OWNER_UNKNOWN;
	enum live_owner owner = LIVE_OWNER_GONE;
	struct dirent *de;
	while (owner == LIVE_OWNER_GONE && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || pidns_of(de->d_name) != ns)
			continue;
		if (innermost_pid(de->d_name) == pid && start_time_of(de->d_name) == start)
			owner = LIVE_OWNER_ALIVE;
	}
	closedir(d);
	return owner;
}

int live_cleanup_stale(void)
{
	/* Only instances named like ours whose process is shown to be gone. */
	DIR *d = opendir(TRACEFS_DIR "/instances");
	if (!d)
		return 0;
	int removed = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (live_instance_owner(de->d_name) != LIVE_OWNER_GONE)
			continue;
		struct tracefs_instance *inst = tracefs_instance_alloc(NULL, de->d_name);
		if (!inst)
			continue;
		tracefs_event_disable(inst, NULL, NULL);
		if (tracefs_instance_destroy(inst) == 0)
			removed++;
		tracefs_instance_free(inst);
	}
	closedir(d);
	return removed;
}

/* Which sessions need each of evfmt_events (enum live_events). */
static const unsigned needed_by[EVFMT_NEVENTS] = {
	[EVFMT_RUN_CORE] = LIVE_EV_GANG,
	[EVFMT_GUEST_EXIT] = LIVE_EV_GANG | LIVE_EV_REASONS,
	[EVFMT_KVM_EXIT] = LIVE_EV_REASONS,
	[EVFMT_USERSPACE_EXIT] = LIVE_EV_REASONS,
	[EVFMT_GUEST_ENTER] = LIVE_EV_REASONS,
	[EVFMT_KVM_ENTRY] = LIVE_EV_REASONS,
};

/*
 * This kernel's page header and the formats of the events in wanted, read
 * from tracefs by the parser the offline readers use.  The generic
 * tracefs_local_events_system() also parses /proc/kallsyms, which costs
 * more CPU than a second of tracing at 1 M events/s.
 */
static int local_formats(struct evfmt_table *t, unsigned wanted, struct ta_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	evfmt_table_init(t, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, (int)sizeof(long),
			 (uint32_t)sysconf(_SC_PAGESIZE));
	char *path = tracefs_get_tracing_file("events/header_page");
	int rc = path ? strbuf_read_file(&sb, path) : -1;
	tracefs_put_tracing_file(path);
	if (rc < 0) {
		strbuf_release(&sb);
		return err_set(err, EXIT_FAILURE_RUN, "cannot read this kernel's ring-buffer "
			       "header format (events/header_page)");
	}
	rc = evfmt_table_header_page(t, sb.buf, sb.len, err);
	for (int i = 0; rc == 0 && i < EVFMT_NEVENTS; i++) {
		if (!(needed_by[i] & wanted))
			continue;	/* not parsed, so never enabled below */
		char rel[128];
		snprintf(rel, sizeof(rel), "events/%s/%s/format", evfmt_events[i][0],
			 evfmt_events[i][1]);
		strbuf_reset(&sb);
		path = tracefs_get_tracing_file(rel);
		int present = path ? strbuf_read_file(&sb, path) : -1;
		tracefs_put_tracing_file(path);
		if (present >= 0 && evfmt_table_event(t, evfmt_events[i][0], sb.buf, sb.len, err) < 0)
			rc = -1;
	}
	strbuf_release(&sb);
	if (rc < 0)
		err_prefix(err, "this kernel's trace formats");
	return rc;
}

static void session_free(struct live_session *s)
{
	for (int i = 0; i < s->nq; i++) {
		if (s->q[i].fd >= 0)
			close(s->q[i].fd);
		page_reader_release(&s->q[i].pr);
		for (size_t k = 0; k < s->q[i].n; k++)
			free(s->q[i].pages[(s->q[i].head + k) % s->q[i].cap]);
		free(s->q[i].pages);
	}
	for (size_t k = 0; k < s->nspare; k++)
		free(s->spare[k]);
	free(s->spare);
	free(s->q);
	if (s->inst) {
		tracefs_trace_off(s->inst);
		tracefs_instance_destroy(s->inst);
		tracefs_instance_free(s->inst);
	}
	gang_free(s->g);
	free(s->tgids);
	htab_release(&s->tc);
	tsmerge_release(&s->merge);
	free(s->named);
	free(s->comms);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int session_open_cpus(struct live_session *s, struct ta_err *err)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	s->q = xcalloc(ncpu > 0 ? ncpu : 1, sizeof(*s->q));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		int fd = tracefs_instance_file_open(s->inst, file, O_RDONLY | O_NONBLOCK);
		if (fd < 0)
			continue;	/* offline or absent CPU */
		struct cpu_queue *q = &s->q[s->nq++];
		q->cpu = cpu;
		q->fd = fd;
		if (page_reader_init(&q->pr, &s->formats, s->page_size) < 0)
			return err_set(err, EXIT_FAILURE_RUN, "out of memory");
	}
	if (!s->nq)
		return err_set(err, EXIT_FAILURE_RUN,
			       "cannot open any per_cpu/cpuN/trace_pipe_raw of instance %s", s->name);
	return 0;
}

int live_start(const struct live_opts *opts, struct live_session **out, struct ta_err *err)
{
	static int serial;
	*out = NULL;
	if (tracefs_ready(err) < 0)
		return -1;
	live_cleanup_stale();

	struct live_session *s = xcalloc(1, sizeof(*s));
	mono_cond_init(&s->wake);
	pthread_mutex_init(&s->lock, NULL);
	s->g = gang_new(opts->algorithm);
	if (opts->ntgids) {
		s->tgids = xcalloc(opts->ntgids, sizeof(*s->tgids));
		memcpy(s->tgids, opts->tgids, opts->ntgids * sizeof(*s->tgids));
		s->ntgids = opts->ntgids;
	}
	htab_init(&s->tc, sizeof(struct tgid_entry), sizeof(int32_t));
	tsmerge_init(&s->merge);

	if (local_formats(&s->formats, opts->events ? opts->events : LIVE_EV_GANG | LIVE_EV_REASONS,
			  err) < 0 || decoder_init(&s->dec, &s->formats, err) < 0)
		goto fail;
	if (decoder_has_entries(&s->dec))
		gang_expect_entries(s->g);
	if (!decoder_has_events(&s->dec)) {
		err_set(err, EXIT_FAILURE_RUN,
			"this kernel has no kvm_hv or kvm trace events: nothing to count (is the "
			"kvm / kvm_hv module loaded?)");
		goto fail;
	}

	/* Named with what proves its owner alive from any PID namespace
	 * (live_instance_owner): pid, serial, PID namespace, start time. */
	struct live_token tok;
	live_instance_token(&tok);
	snprintf(s->name, sizeof(s->name), "topoadvisor-%d-%d-%llu-%llu", (int)tok.pid, serial++,
		 tok.pidns, tok.start);
	s->inst = tracefs_instance_create(s->name);
	if (!s->inst) {
		err_set(err, EXIT_FAILURE_RUN, "cannot create tracefs instance %s: %s", s->name,
			strerror(errno));
		goto fail;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int kib = opts->buffer_kib;
	if (kib <= 0) {
		kib = (int)(LIVE_TOTAL_BUFFER_KIB / (ncpu > 0 ? ncpu : 1));
		kib = kib > LIVE_MAX_CPU_BUFFER_KIB ? LIVE_MAX_CPU_BUFFER_KIB
			: kib < LIVE_MIN_CPU_BUFFER_KIB ? LIVE_MIN_CPU_BUFFER_KIB : kib;
	}
	tracefs_trace_off(s->inst);
	if (tracefs_instance_set_buffer_size(s->inst, (size_t)kib, -1) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "cannot set a %d KiB per-CPU trace buffer: %s", kib,
			strerror(errno));
		goto fail;
	}
	/* mono: one clock for all CPUs, comparable with CLOCK_MONOTONIC watermarks. */
	if (tracefs_instance_file_write(s->inst, "trace_clock", "mono") < 0 ||
	    tracefs_option_disable(s->inst, TRACEFS_OPTION_OVERWRITE) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "cannot configure instance %s: %s", s->name,
			strerror(errno));
		goto fail;
	}
	/*
	 * Before the events: saved_tgids then knows x86 threads that exit before
	 * their records are read.  Best effort (kernels before 4.14 lack it):
	 * without it such threads are counted under their own id.
	 */
	tracefs_option_enable(s->inst, TRACEFS_OPTION_RECORD_TGID);
	for (int i = 0; i < EVFMT_NEVENTS; i++) {
		if (!s->formats.events[i].present)
			continue;
		if (tracefs_event_enable(s->inst, evfmt_events[i][0], evfmt_events[i][1]) < 0) {
			err_set(err, EXIT_FAILURE_RUN, "cannot enable %s:%s in %s: %s",
				evfmt_events[i][0], evfmt_events[i][1], s->name, strerror(errno));
			goto fail;
		}
	}

	long ps = sysconf(_SC_PAGESIZE);
	long long subbuf = 0;
	if (tracefs_instance_file_read_number(s->inst, "buffer_subbuf_size_kb", &subbuf) == 0 &&
	    subbuf > 0)
		ps = (long)subbuf * 1024;
	s->page_size = (uint32_t)ps;
	s->buffer_pages = (uint64_t)kib * 1024 / s->page_size;
	if (!s->buffer_pages)
		s->buffer_pages = 1;
	s->sleep_us = (long)((uint64_t)kib * 1024 / 4 / FILL_BYTES_PER_US);
	s->sleep_us = s->sleep_us > ROUND_SLEEP_US ? ROUND_SLEEP_US
		: s->sleep_us < ROUND_NAP_US ? ROUND_NAP_US : s->sleep_us;
	if (session_open_cpus(s, err) < 0)
		goto fail;

	s->start_ns = mono_now_ns();
	if (tracefs_trace_on(s->inst) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "cannot turn tracing on in %s: %s", s->name,
			strerror(errno));
		goto fail;
	}
	/* The drain thread must not take the caller's SIGINT/SIGTERM. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&s->thread, NULL, drain_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		err_set(err, EXIT_FAILURE_RUN, "cannot start the trace reader thread: %s",
			strerror(rc));
		goto fail;
	}
	s->thread_running = true;
	*out = s;
	return 0;
fail:
	session_free(s);
	return -1;
}

static void session_join(struct live_session *s)
{
	if (!s->thread_running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->thread_running = false;
}

static bool tgid_wanted(const struct live_session *s, int32_t tgid)
{
	if (!s->ntgids)
		return true;
	for (size_t i = 0; i < s->ntgids; i++)
		if (s->tgids[i] == tgid)
			return true;
	return false;
}

/* Keeps only the requested processes (the controller's guest). */
static void result_filter(const struct live_session *s, struct gang_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		if (tgid_wanted(s, r->procs[i].tgid))
			r->procs[n++] = r->procs[i];
	r->nprocs = n;
	n = 0;
	for (size_t i = 0; i < r->nreasons; i++)
		if (tgid_wanted(s, r->reasons[i].tgid))
			r->reasons[n++] = r->reasons[i];
	r->nreasons = n;
	/* The histograms sum every process: no percentiles for some of them. */
	if (s->ntgids)
		r->nhists = 0;
}

/* A name the kernel's saved_cmdlines (text, len bytes) holds for pid, or NULL. */
static const char *saved_comm(const char *text, size_t len, int32_t pid, char *buf, size_t n)
{
	const char *c = pid > 0 ? evfmt_comm(text, len, pid, buf, n) : NULL;
	return c && strcmp(c, "<...>") ? c : NULL;
}

static void result_comms(struct live_session *s, struct gang_result *r)
{
	char *cmdlines = NULL;
	size_t len = 0;
	bool loaded = false;
	for (size_t k = 0; k < s->ncomms; k++) {
		struct comm_entry *c = &s->comms[k];
		if (c->comm[0])
			continue;
		/* The caller's name (the process as it ended) before the kernel's:
		 * saved_cmdlines may still hold the name it had before exec. */
		const char *known = NULL;
		for (size_t j = 0; j < s->nnamed && !known; j++)
			if (s->named[j].tgid == c->tgid)
				known = s->named[j].comm;
		if (known) {
			snprintf(c->comm, sizeof(c->comm), "%s", known);
			continue;
		}
		if (!loaded) {
			int n = 0;
			cmdlines = tracefs_instance_file_read(NULL, "saved_cmdlines", &n);
			len = cmdlines && n > 0 ? (size_t)n : 0;
			loaded = true;
		}
		char buf[sizeof(c->comm)];
		const char *name = saved_comm(cmdlines, len, c->tgid, buf, sizeof(buf));
		if (!name)
			name = saved_comm(cmdlines, len, c->pid, buf, sizeof(buf));
		if (name)
			snprintf(c->comm, sizeof(c->comm), "%s", name);
	}
	free(cmdlines);
	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t k = 0; k < s->ncomms; k++)
			if (s->comms[k].tgid == r->procs[i].tgid)
				snprintf(r->procs[i].comm, sizeof(r->procs[i].comm), "%s",
					 s->comms[k].comm);
}

void live_name(struct live_session *s, int32_t pid)
{
	char comm[sizeof(s->named->comm)];
	if (pid <= 0 || !read_comm(pid, comm, sizeof(comm)))
		return;
	s->named = xrealloc(s->named, (s->nnamed + 1) * sizeof(*s->named));
	struct comm_entry *c = &s->named[s->nnamed++];
	c->tgid = c->pid = pid;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
}

int live_stop(struct live_session *s, struct gang_result *res, struct ta_err *err)
{
	memset(res, 0, sizeof(*res));
	session_join(s);
	tracefs_trace_off(s->inst);
	s->stop_ns = mono_now_ns();
	if (s->thread_err[0] || drain_round(s, true) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "live trace failed: %s", s->thread_err);
		session_free(s);
		return -1;
	}

	uint64_t lost = 0;
	bool known = true;
	for (int i = 0; i < s->nq; i++) {
		char file[64];
		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", s->q[i].cpu);
		char *stats = tracefs_instance_file_read(s->inst, file, NULL);
		long long l = tdat_stats_lost(stats);
		free(stats);
		if (l < 0)
			known = false;
		else
			lost += (uint64_t)l;
	}

	gang_result_get(s->g, res);
	res->lost_events = lost;
	res->lost_known = known;
	res->run_core_format = s->dec.id_run_core >= 0;
	res->span_seconds = (double)(s->stop_ns - s->start_ns) / 1e9;
	res->records = s->records;
	if (lost)
		gang_result_untime(res, "events were lost while tracing live (use a bigger "
				   "--buffer-kib)");
	result_filter(s, res);
	result_comms(s, res);
	session_free(s);
	return 0;
}

void live_abort(struct live_session *s)
{
	if (!s)
		return;
	session_join(s);
	session_free(s);
}

const char *live_instance_name(const struct live_session *s)
{
	return s->name;
}
