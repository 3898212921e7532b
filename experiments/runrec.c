/* runrec: per-run results collected for storage; see runrec.h. */
#include "runrec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void runrec_init(struct run_record *r, int64_t run_id)
{
	memset(r, 0, sizeof(*r));
	r->run_id = run_id;
	r->status = "ok";
	r->topology_ok = -1;
	r->lost_events = -1;
}

void runrec_release(struct run_record *r)
{
	strbuf_release(&r->error);
	strbuf_release(&r->steps);
	free(r->host_state);
	free(r->guest_topology);
	for (size_t i = 0; i < r->nmetrics; i++) {
		free((char *)r->metrics[i].name);
		free((char *)r->metrics[i].unit);
	}
	free(r->metrics);
	for (size_t i = 0; i < r->nexits; i++) {
		free((char *)r->exits[i].source);
		free((char *)r->exits[i].reason);
	}
	free(r->exits);
	for (size_t i = 0; i < r->nartifacts; i++) {
		free((char *)r->artifacts[i].name);
		free((void *)r->artifacts[i].content);
	}
	free(r->artifacts);
	memset(r, 0, sizeof(*r));
}

void runrec_metric(struct run_record *r, const char *name, double value, const char *unit,
		   enum metric_dir dir)
{
	struct db_metric *m = NULL;
	for (size_t i = 0; i < r->nmetrics; i++)
		if (!strcmp(r->metrics[i].name, name))
			m = &r->metrics[i];
	if (m) {
		free((char *)m->unit);
	} else {
		r->metrics = xrealloc(r->metrics, (r->nmetrics + 1) * sizeof(*r->metrics));
		m = &r->metrics[r->nmetrics++];
		m->name = xstrdup(name);
	}
	m->value = value;
	m->unit = unit ? xstrdup(unit) : NULL;
	m->dir = dir;
}

void runrec_exit(struct run_record *r, const char *source, int64_t vcpu, const char *reason,
		 uint64_t count, int64_t time_pairs, int64_t time_ns)
{
	r->exits = xrealloc(r->exits, (r->nexits + 1) * sizeof(*r->exits));
	struct db_exit_count *x = &r->exits[r->nexits++];
	x->source = xstrdup(source);
	x->vcpu = vcpu;
	x->reason = xstrdup(reason);
	x->count = count;
	x->time_pairs = time_pairs;
	x->time_ns = time_ns;
}

void runrec_artifact(struct run_record *r, const char *name, const void *content, size_t len)
{
	if (!content || !len)
		return;
	struct db_artifact *a = NULL;
	for (size_t i = 0; i < r->nartifacts; i++)
		if (!strcmp(r->artifacts[i].name, name))
			a = &r->artifacts[i];
	if (a) {
		free((void *)a->content);
	} else {
		r->artifacts = xrealloc(r->artifacts, (r->nartifacts + 1) * sizeof(*r->artifacts));
		a = &r->artifacts[r->nartifacts++];
		a->name = xstrdup(name);
	}
	void *copy = xmalloc(len);
	memcpy(copy, content, len);
	a->content = copy;
	a->len = len;
}

void runrec_fail(struct run_record *r, const char *fmt, ...)
{
	va_list ap;
	if (r->error.len)
		strbuf_addstr(&r->error, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(&r->error, fmt, ap);
	va_end(ap);
	if (strcmp(r->status, "interrupted"))
		r->status = "failed";
}

void runrec_result(const struct run_record *r, struct db_run_result *out)
{
	memset(out, 0, sizeof(*out));
	out->run_id = r->run_id;
	out->status = r->status;
	out->error = r->error.len ? strbuf_str(&r->error) : NULL;
	out->host_state = r->host_state;
	out->guest_topology = r->guest_topology;
	out->topology_ok = r->topology_ok;
	out->lost_events = r->lost_events;
	out->boot = r->boot;
	out->metrics = r->metrics;
	out->nmetrics = r->nmetrics;
	out->exits = r->exits;
	out->nexits = r->nexits;
	out->artifacts = r->artifacts;
	out->nartifacts = r->nartifacts;
}

void runrec_step(struct run_record *r, const char *name, double now)
{
	if (name)
		strbuf_addf(&r->steps, "%s%s %.3f", r->steps.len ? ", " : "", name,
			    now - r->step_mark);
	r->step_mark = now;
}
