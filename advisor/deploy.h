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
 * Whether this configuration's runs had a guest (guest.runner: agent).  A
 * host-runner sweep (and a host reference) ran its benchmark on the host:
 * no guest of that shape ever existed, so there is no XML to recommend.
 */
bool deploy_has_guest(const struct db_results_config *c);
/* What the output says instead of the XML when deploy_has_guest is false. */
#define DEPLOY_NO_GUEST "none: the benchmark ran on the host (guest.runner: host); no " \
	"guest of this shape was measured, so there is no domain XML to apply"
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
