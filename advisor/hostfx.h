/*
 * hostfx: the host x configuration diagnostic of a sweep run on several
 * hosts, as rank, recommend and report show it.  The analysis is the
 * engine's (decide/hosts.h: each decision against a reference within each
 * host's blocks, failures as outcomes, the interaction tested contrast by
 * contrast with Bonferroni); this module numbers the hosts the stored runs
 * name, hands them to it, and formats what it returns.  A best that
 * differs by host is called a finding about the hosts only when the
 * interaction is shown at the engine's alpha.  Pure: no I/O.
 */
#ifndef TA_HOSTFX_H
#define TA_HOSTFX_H

#include <stdbool.h>
#include <stddef.h>

#include "../decide/hosts.h"
#include "../util/json.h"
#include "../util/strbuf.h"
#include "rank.h"

struct hostfx {
	const char *metric;
	const char **hosts;		/* [h]: names, sorted; point into the results */
	const char **keys;		/* [i]: decision keys of d.decisions; point into r */
	struct decide_hosts d;
};

/*
 * The diagnostic of ranking r (its metric and engine input).  Returns
 * false (out empty) when its runs come from fewer than two hosts or leave
 * fewer than two decisions.
 */
bool hostfx_compute(const struct rank_result *r, struct hostfx *out);
void hostfx_release(struct hostfx *h);

/* A text section (rank, recommend), a JSON value (--json), an HTML section (report). */
void hostfx_text(struct strbuf *out, const struct hostfx *h);
void hostfx_json(struct json_writer *w, const struct hostfx *h);
void hostfx_html(struct strbuf *out, const struct hostfx *h);

#endif
