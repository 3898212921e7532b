/* deploy: the XML fragment and host commands of a configuration; see deploy.h. */
#include "deploy.h"

#include <ctype.h>
#include <string.h>

#include "../decide/input.h"
#include "../model/knob-table.h"

/*
 * Values go into lines a user pastes into a root shell: anything beyond
 * [A-Za-z0-9_.,:-] (never produced by the config loader) is refused.
 */
static bool shell_safe(const char *v)
{
	if (!*v)
		return false;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("_.,:-", *v))
			return false;
	return true;
}

void deploy_host_commands(const struct rank_result *r, const struct db_results_config *c,
			  struct strbuf *out)
{
	struct decide_knob k[32];
	size_t n = decide_config_knobs(c, r ? &r->roles : NULL, k, 32);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(k[i].value, "default"))
			continue;
		if (!shell_safe(k[i].value)) {
			strbuf_addf(out, "# knob %zu: stored value is not a plain word; set it by hand\n",
				    i + 1);
			continue;
		}
		const char *canon = knob_canonical(k[i].knob, k[i].value);
		knob_host_command(k[i].knob, canon ? canon : k[i].value, out);
	}
}

/* A stored cpuset fit to paste into XML, else NULL. */
static const char *xml_cpuset(const char *set)
{
	return set && decide_cpuset_count(&set, 1) > 0 ? set : NULL;
}

bool deploy_has_guest(const struct db_results_config *c)
{
	return !c->rec.host_reference && (!c->rec.runner || strcmp(c->rec.runner, "host"));
}

void deploy_xml(const struct db_results_config *c, struct strbuf *out)
{
	const struct config_record *r = &c->rec;
	strbuf_addf(out, "<vcpu placement='static'>%d</vcpu>\n", r->vcpus);
	if (r->cpu_mode) {
		strbuf_addf(out, "<cpu mode='%s'%s check='none'>\n", r->cpu_mode,
			    r->cpu_model ? " match='exact'" : "");
		if (r->cpu_model)
			strbuf_addf(out, "  <model fallback='forbid'>%s</model>\n", r->cpu_model);
	} else {
		if (!r->arch)
			strbuf_addstr(out, "<!-- the guests' CPU mode was not recorded (an experiment "
				      "stored before schema 7): set it as your hosts need -->\n");
		strbuf_addstr(out, "<cpu>\n");
	}
	strbuf_addf(out, "  <topology sockets='%d' dies='%d' cores='%d' threads='%d'/>\n"
		    "</cpu>\n", r->sockets, r->dies, r->cores, r->threads);
	if (decide_pinning_explicit(c)) {
		strbuf_addstr(out, "<cputune>\n");
		for (size_t i = 0; i < r->npinning_cpus; i++) {
			const char *set = xml_cpuset(r->pinning_cpus[i]);
			if (set)
				strbuf_addf(out, "  <vcpupin vcpu='%zu' cpuset='%s'/>\n", i, set);
			else
				strbuf_addf(out, "  <!-- vCPU %zu: stored cpuset is malformed -->\n", i);
		}
		const char *emu = r->emulator_cpus;
		if (emu && xml_cpuset(emu))
			strbuf_addf(out, "  <emulatorpin cpuset='%s'/>\n", emu);
		else if (emu)
			strbuf_addstr(out, "  <!-- emulator: stored cpuset is malformed -->\n");
		strbuf_addstr(out, "</cputune>\n");
	} else if (strcmp(r->pinning_policy, "none")) {
		strbuf_addf(out, "<!-- pinning '%s' (policy %s): the <cputune> vcpupin and "
			    "emulatorpin CPUs are chosen per host by this policy -->\n", r->pinning,
			    r->pinning_policy);
	}
}
