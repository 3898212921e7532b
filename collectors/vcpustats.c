/*
 * vcpustats: vcpu.N.time / vcpu.N.delay from virDomainListGetStats.  The
 * contract is in vcpustats.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "vcpustats.h"

int vcpustats_read(virDomainPtr dom, struct vcpustats *s, struct ta_err *err)
{
	memset(s, 0, sizeof(*s));
	virDomainPtr doms[] = { dom, NULL };
	virDomainStatsRecordPtr *recs = NULL;
	if (virDomainListGetStats(doms, VIR_DOMAIN_STATS_VCPU, &recs, 0) < 1 || !recs[0]) {
		const char *m = virGetLastErrorMessage();
		virDomainStatsRecordListFree(recs);
		return err_set(err, EXIT_FAILURE_RUN, "reading vCPU stats: %s",
			       m ? m : "no record");
	}
	virDomainStatsRecordPtr r = recs[0];
	unsigned int cur = 0;
	if (virTypedParamsGetUInt(r->params, r->nparams, "vcpu.current", &cur) != 1 || !cur) {
		virDomainStatsRecordListFree(recs);
		return err_set(err, EXIT_FAILURE_RUN, "vCPU stats lack vcpu.current");
	}
	s->n = cur;
	s->time_ns = xcalloc(cur, sizeof(*s->time_ns));
	s->delay_ns = xcalloc(cur, sizeof(*s->delay_ns));
	s->has_delay = true;
	for (unsigned int i = 0; i < cur; i++) {
		char key[64];
		unsigned long long v;
		snprintf(key, sizeof(key), "vcpu.%u.time", i);
		if (virTypedParamsGetULLong(r->params, r->nparams, key, &v) == 1)
			s->time_ns[i] = v;
		snprintf(key, sizeof(key), "vcpu.%u.delay", i);
		if (virTypedParamsGetULLong(r->params, r->nparams, key, &v) == 1)
			s->delay_ns[i] = v;
		else
			s->has_delay = false;
	}
	virDomainStatsRecordListFree(recs);
	return 0;
}

int vcpustats_diff(const struct vcpustats *before, const struct vcpustats *after,
		   struct vcpustats *d, struct ta_err *err)
{
	memset(d, 0, sizeof(*d));
	if (before->n != after->n)
		return err_set(err, EXIT_FAILURE_RUN, "vCPU count changed in the window (%zu -> %zu)",
			       before->n, after->n);
	d->n = before->n;
	d->has_delay = before->has_delay && after->has_delay;
	d->time_ns = xcalloc(d->n ? d->n : 1, sizeof(*d->time_ns));
	d->delay_ns = xcalloc(d->n ? d->n : 1, sizeof(*d->delay_ns));
	for (size_t i = 0; i < d->n; i++) {
		if (after->time_ns[i] > before->time_ns[i])
			d->time_ns[i] = after->time_ns[i] - before->time_ns[i];
		if (d->has_delay && after->delay_ns[i] > before->delay_ns[i])
			d->delay_ns[i] = after->delay_ns[i] - before->delay_ns[i];
	}
	return 0;
}

void vcpustats_release(struct vcpustats *s)
{
	free(s->time_ns);
	free(s->delay_ns);
	memset(s, 0, sizeof(*s));
}

void vcpustats_json(const struct vcpustats *s, struct strbuf *out)
{
	struct json_writer w;
	json_init(&w, out, false);
	json_obj_begin(&w);
	json_key(&w, "has_delay"); json_bool(&w, s->has_delay);
	json_key(&w, "vcpus");
	json_arr_begin(&w);
	for (size_t i = 0; i < s->n; i++) {
		json_obj_begin(&w);
		json_key(&w, "time_ns"); json_uint(&w, s->time_ns[i]);
		json_key(&w, "delay_ns");
		if (s->has_delay)
			json_uint(&w, s->delay_ns[i]);
		else
			json_null(&w);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
}
