/*
 * deploy: what a user applies to get the recommended configuration — the
 * libvirt XML fragment of its shape and pinning, and the host commands of
 * its decision knobs (environment factors are conditions, never applied).
 */
#ifndef TA_DEPLOY_H
#define TA_DEPLOY_H

#include "../schema/db-results.h"
#include "../util/strbuf.h"
#include "rank.h"

/*
 * The XML fragment that gives a guest this configuration's shape as the
 * measured runs had it: <vcpu>, <cpu> (the mode and model its record
 * stored: what the controller gave the guests) with <topology>, and
 * <cputune> with vcpupin and emulatorpin.
 */
void deploy_xml(const struct db_results_config *c, struct strbuf *out);
/*
 * The host commands that apply this configuration's decision knobs, one
 * per line, in the sweep's order; nothing when it sets none.  Knobs r
 * names as environment factors are left out (r NULL: only noise is).
 */
void deploy_host_commands(const struct rank_result *r, const struct db_results_config *c,
			  struct strbuf *out);

#endif
