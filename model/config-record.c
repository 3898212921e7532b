/* config-record: a configuration as data; see config-record.h. */
#include "config-record.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void settings_free(struct config_setting *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static void setting_add(struct config_setting **v, size_t *n, const char *name, const char *value)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct config_setting){ xstrdup(name), xstrdup(value) };
}

static const char *setting_find(const struct config_setting *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].value;
	return NULL;
}

void config_record_release(struct config_record *r)
{
	free(r->key);
	free(r->decision);
	free(r->environment);
	free(r->topology);
	free(r->pinning);
	free(r->pinning_policy);
	for (size_t i = 0; i < r->npinning_cpus; i++)
		free(r->pinning_cpus[i]);
	free(r->pinning_cpus);
	free(r->emulator_cpus);
	settings_free(r->knobs, r->nknobs);
	free(r->noise);
	free(r->noise_kind);
	free(r->runner);
	free(r->arch);
	free(r->cpu_mode);
	free(r->cpu_model);
	settings_free(r->host_defaults, r->nhost_defaults);
	memset(r, 0, sizeof(*r));
}

void config_record_copy(struct config_record *dst, const struct config_record *src)
{
	*dst = *src;
	dst->key = dup_or_null(src->key);
	dst->decision = dup_or_null(src->decision);
	dst->environment = dup_or_null(src->environment);
	dst->topology = dup_or_null(src->topology);
	dst->pinning = dup_or_null(src->pinning);
	dst->pinning_policy = dup_or_null(src->pinning_policy);
	dst->pinning_cpus = xcalloc(src->npinning_cpus + 1, sizeof(char *));
	for (size_t i = 0; i < src->npinning_cpus; i++)
		dst->pinning_cpus[i] = xstrdup(src->pinning_cpus[i]);
	dst->emulator_cpus = dup_or_null(src->emulator_cpus);
	dst->knobs = NULL;
	dst->nknobs = 0;
	for (size_t i = 0; i < src->nknobs; i++)
		setting_add(&dst->knobs, &dst->nknobs, src->knobs[i].name, src->knobs[i].value);
	dst->noise = dup_or_null(src->noise);
	dst->noise_kind = dup_or_null(src->noise_kind);
	dst->runner = dup_or_null(src->runner);
	dst->arch = dup_or_null(src->arch);
	dst->cpu_mode = dup_or_null(src->cpu_mode);
	dst->cpu_model = dup_or_null(src->cpu_model);
	dst->host_defaults = NULL;
	dst->nhost_defaults = 0;
	for (size_t i = 0; i < src->nhost_defaults; i++)
		setting_add(&dst->host_defaults, &dst->nhost_defaults, src->host_defaults[i].name,
			    src->host_defaults[i].value);
}

void config_record_knob_add(struct config_record *r, const char *name, const char *value)
{
	setting_add(&r->knobs, &r->nknobs, name, value);
}

const char *config_record_knob(const struct config_record *r, const char *name)
{
	return setting_find(r->knobs, r->nknobs, name);
}

const char *config_record_host_default(const struct config_record *r, const char *name)
{
	return setting_find(r->host_defaults, r->nhost_defaults, name);
}

bool config_factor_is_environment(const char *name, const char *const *env, size_t nenv)
{
	if (!strcmp(name, "noise"))
		return true;
	for (size_t i = 0; i < nenv; i++)
		if (!strcmp(env[i], name))
			return true;
	return false;
}

/* Appends "/" (unless sb is empty) and one key part. */
static void part_add(struct strbuf *sb, const char *label, const char *value)
{
	if (sb->len)
		strbuf_addch(sb, '/');
	if (label)
		strbuf_addf(sb, "%s=", label);
	strbuf_addstr(sb, value);
}

/*
 * The key names pinning "pin" and every other factor by its own name; the
 * shape (or "host") comes first and is never an environment factor.  Each
 * factor goes into the key, and into the decision or the level.
 */
void config_record_name(struct config_record *r, const char *const *env, size_t nenv)
{
	assert(r->topology && r->pinning && r->noise);
	struct strbuf key = STRBUF_INIT, decision = STRBUF_INIT, level = STRBUF_INIT;
	const char *first = r->host_reference ? "host" : r->topology;
	part_add(&key, NULL, first);
	part_add(&decision, NULL, first);
	part_add(&key, "pin", r->pinning);
	if (!config_factor_is_environment("pinning", env, nenv))
		part_add(&decision, "pin", r->pinning);
	for (size_t i = 0; i < r->nknobs; i++) {
		part_add(&key, r->knobs[i].name, r->knobs[i].value);
		if (!config_factor_is_environment(r->knobs[i].name, env, nenv))
			part_add(&decision, r->knobs[i].name, r->knobs[i].value);
	}
	part_add(&key, "noise", r->noise);
	part_add(&level, "noise", r->noise);
	for (size_t i = 0; i < nenv; i++) {
		const char *v = !strcmp(env[i], "pinning") ? r->pinning
				: config_record_knob(r, env[i]);
		if (v && strcmp(env[i], "noise"))
			part_add(&level, env[i], v);
	}
	free(r->key);
	free(r->decision);
	free(r->environment);
	r->key = strbuf_detach(&key);
	r->decision = strbuf_detach(&decision);
	r->environment = strbuf_detach(&level);
}

void config_record_visit(const struct config_record *r, const struct config_record_visitor *v,
			 void *data)
{
	v->text(data, "topology", r->topology);
	v->integer(data, "vcpus", r->vcpus);
	v->integer(data, "sockets", r->sockets);
	v->integer(data, "dies", r->dies);
	v->integer(data, "cores", r->cores);
	v->integer(data, "threads", r->threads);
	v->text(data, "pinning", r->pinning);
	v->text(data, "pinning_policy", r->pinning_policy);
	v->list(data, "pinning_cpus", r->pinning_cpus, r->npinning_cpus);
	v->text(data, "emulator_cpus", r->emulator_cpus);
	for (size_t i = 0; i < r->nknobs; i++)
		v->text(data, r->knobs[i].name, r->knobs[i].value);
	v->text(data, "runner", r->runner);
	v->text(data, "noise", r->noise);
	v->text(data, "noise_kind", r->noise_kind);
	v->text(data, "arch", r->arch);
	v->text(data, "cpu_mode", r->cpu_mode);
	v->text(data, "cpu_model", r->cpu_model);
}

static void json_text(void *data, const char *name, const char *value)
{
	json_key(data, name);
	json_str(data, value);
}

static void json_integer(void *data, const char *name, long long value)
{
	json_key(data, name);
	json_int(data, value);
}

static void json_list(void *data, const char *name, char *const *values, size_t n)
{
	json_key(data, name);
	json_arr_begin(data);
	for (size_t i = 0; i < n; i++)
		json_str(data, values[i]);
	json_arr_end(data);
}

void config_record_json(struct json_writer *w, const struct config_record *r)
{
	static const struct config_record_visitor to_json = { json_text, json_integer, json_list };
	config_record_visit(r, &to_json, w);
	if (r->nhost_defaults) {
		json_key(w, "host_defaults");
		json_obj_begin(w);
		for (size_t i = 0; i < r->nhost_defaults; i++) {
			json_key(w, r->host_defaults[i].name);
			json_str(w, r->host_defaults[i].value);
		}
		json_obj_end(w);
	}
}

char *config_record_json_text(const struct config_record *r)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, false);
	json_obj_begin(&w);
	config_record_json(&w, r);
	json_obj_end(&w);
	return strbuf_detach(&sb);
}
