/*
 * config-guest: the sections that say where and how the guests run —
 * libvirt (URI, domain type, template, architecture, memory) and guest
 * (runner, boot timeout, preparation, reuse, host reference); see
 * config.c.
 */
#include "config-int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/safefile.h"

static const char *const domain_type_names[] = {
	[DOMAIN_AUTO] = "auto", [DOMAIN_KVM] = "kvm", [DOMAIN_QEMU] = "qemu", NULL
};

/* The host's architecture is resolved by plan; "host" is what we print. */
static const char *const arch_names[] = {
	[ARCH_HOST] = "host", [ARCH_X86_64] = "x86_64", [ARCH_PPC64] = "ppc64", NULL
};

static const char *const arch_words[] = { "x86_64", "ppc64", NULL };

static const char *const runner_names[] = {
	[RUNNER_AGENT] = "agent", [RUNNER_HOST] = "host", NULL
};

const char *config_domain_type_name(enum domain_type t) { return NAME_OF(domain_type_names, t); }

const char *config_arch_name(enum guest_arch a) { return NAME_OF(arch_names, a); }

const char *config_runner_name(enum runner_kind r) { return NAME_OF(runner_names, r); }

/*
 * Each section reads every key it can and records every error (yr_fail);
 * it returns -1 when any of its values failed, so that checks across
 * sections (the baseline, the metric against parse) only run on what read
 * cleanly and do not repeat an error in other words.
 */

/* NULL when path is a regular file we can read, else why not (never blocks). */
static const char *file_unreadable(const char *path)
{
	const char *why = NULL;
	int fd = safefile_open_input(path, &why);
	if (fd >= 0)
		close(fd);
	return why;
}

static int parse_template(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg)
{
	char *t = NULL;
	if (yr_get_str(L, v, "libvirt.template", &t) < 0)
		return -1;
	int rc = 0;
	if (strcmp(t, "builtin") != 0) {
		/* Relative to the config file, so a sweep and its XML travel together. */
		const char *slash = strrchr(L->path, '/');
		struct strbuf sb = STRBUF_INIT;
		if (t[0] != '/' && slash)
			strbuf_add(&sb, L->path, (size_t)(slash - L->path) + 1);
		strbuf_addstr(&sb, t);
		cfg->template_path = strbuf_detach(&sb);
		const char *why = NULL;
		if (!*t)
			why = "an empty path";
		else if (cfg->files_checked)
			why = file_unreadable(cfg->template_path);
		if (why)
			rc = yr_fail(L, v, "libvirt.template", "cannot read '%s': %s (give a "
				     "readable domain XML file, relative to the config's "
				     "directory, or builtin)", cfg->template_path, why);
	}
	free(t);
	return rc;
}

int config_parse_libvirt(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "uri", "domain_type", "template", "name_prefix",
					    "arch", "memory_mib", NULL };
	if (yr_map_check(L, n, "libvirt", keys, "a mapping (uri, domain_type, ...)") < 0)
		return -1;
	yaml_node_t *v;
	int e, rc = 0;
	if ((v = yr_map_get(L, n, "uri")) && yr_get_str(L, v, "libvirt.uri", &cfg->uri) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "domain_type"))) {
		static const char *const words[] = { "kvm", "qemu", "auto", NULL };
		static const enum domain_type types[] = { DOMAIN_KVM, DOMAIN_QEMU, DOMAIN_AUTO };
		if (yr_get_enum(L, v, "libvirt.domain_type", words, &e) < 0)
			rc = -1;
		else
			cfg->domain_type = types[e];
	}
	if ((v = yr_map_get(L, n, "template")) && parse_template(L, v, cfg) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "name_prefix")) &&
	    yr_get_name(L, v, "libvirt.name_prefix", 32, "_-", &cfg->name_prefix) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "arch"))) {
		if (yr_get_enum(L, v, "libvirt.arch", arch_words, &e) < 0)
			rc = -1;
		else
			cfg->arch = e == 0 ? ARCH_X86_64 : ARCH_PPC64;
	}
	if ((v = yr_map_get(L, n, "memory_mib")) &&
	    yr_get_int(L, v, "libvirt.memory_mib", 64, 1048576, &cfg->memory_mib) < 0)
		rc = -1;
	return rc;
}

int config_parse_guest(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "runner", "boot_timeout", "prepare", "reuse",
					    "reuse_runs", "host_baseline", NULL };
	if (yr_map_check(L, n, "guest", keys, "a mapping (runner, boot_timeout, ...)") < 0)
		return -1;
	yaml_node_t *v;
	int e, rc = 0;
	bool runner_ok = true;
	if ((v = yr_map_get(L, n, "runner"))) {
		if (yr_get_enum(L, v, "guest.runner", runner_names, &e) < 0)
			rc = -1, runner_ok = false;
		else
			cfg->runner = (enum runner_kind)e;
	}
	if ((v = yr_map_get(L, n, "boot_timeout")) &&
	    yr_get_int(L, v, "guest.boot_timeout", 1, 3600, &cfg->boot_timeout) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "prepare"))) {
		if (yr_expect_type(L, v, "guest.prepare", YAML_SEQUENCE_NODE,
				   "a list of commands, each a list [prog, arg, ...]") < 0) {
			rc = -1;
		} else {
			size_t count = (size_t)(v->data.sequence.items.top -
						v->data.sequence.items.start);
			cfg->prepare = xcalloc(count ? count : 1, sizeof(*cfg->prepare));
			cfg->nprepare = count;
			char child[YR_KEY_MAX];
			for (size_t i = 0; i < count; i++) {
				yr_key_index(child, "guest.prepare", i);
				if (config_get_argv(L, yr_node(L, v->data.sequence.items.start[i]), child,
					     &cfg->prepare[i]) < 0)
					rc = -1;
			}
		}
	}
	if ((v = yr_map_get(L, n, "reuse")) &&
	    yr_get_bool(L, v, "guest.reuse", &cfg->reuse_guest) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "reuse_runs"))) {
		if (yr_get_int(L, v, "guest.reuse_runs", 1, 1000, &cfg->reuse_runs) < 0)
			rc = -1;
		else if (!cfg->reuse_guest)
			rc = yr_fail(L, v, "guest.reuse_runs", "counts the runs of a reused guest "
				     "boot; it needs reuse: true");
	}
	if ((v = yr_map_get(L, n, "host_baseline"))) {
		if (yr_get_bool(L, v, "guest.host_baseline", &cfg->host_baseline) < 0)
			rc = -1;
		else if (cfg->host_baseline && runner_ok && cfg->runner == RUNNER_HOST)
			rc = yr_fail(L, v, "guest.host_baseline", "with runner host every run is "
				     "on the host already; drop host_baseline or use runner agent");
	}
	return rc;
}
