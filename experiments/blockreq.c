/* blockreq: a block request as JSON; see blockreq.h. */
#include "blockreq.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/safefile.h"
#include "../util/strbuf.h"
#include "yaml-reader.h"

/* A request holds a config (at most a few MiB) and a key per configuration. */
#define BLOCKREQ_MAX_BYTES (16u << 20)

int blockreq_write(const struct block_request *r, const char *path, struct ta_err *err)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "format", json_object_new_string(BLOCKREQ_FORMAT));
	json_object_object_add(o, "version", json_object_new_int(BLOCKREQ_VERSION));
	json_object_object_add(o, "experiment_id", json_object_new_int64(r->experiment_id));
	json_object_object_add(o, "name", json_object_new_string(r->name));
	/* As a string: JSON numbers lose the low bits of a 64-bit seed. */
	char seed[32];
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)r->seed);
	json_object_object_add(o, "seed", json_object_new_string(seed));
	json_object_object_add(o, "primary_metric", r->primary_metric
			       ? json_object_new_string(r->primary_metric) : NULL);
	json_object_object_add(o, "higher_is_better", json_object_new_int(r->higher_is_better));
	json_object_object_add(o, "block", json_object_new_int(r->block));
	json_object_object_add(o, "attempt", json_object_new_int(r->attempt));
	json_object_object_add(o, "job_name", json_object_new_string(r->job_name));
	json_object_object_add(o, "root", r->root ? json_object_new_string(r->root) : NULL);
	json_object *keys = json_object_new_array();
	for (size_t i = 0; i < r->nkeys; i++)
		json_object_array_add(keys, json_object_new_string(r->keys[i]));
	json_object_object_add(o, "configurations", keys);
	json_object_object_add(o, "config", json_object_new_string(r->config));
	size_t len;
	const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	int rc = safefile_replace(path, text, len, 0644, err);
	json_object_put(o);
	return rc;
}

/* Member `key` of o as a fresh string; NULL (and -1) when absent or not a string. */
static int get_str(json_object *o, const char *key, bool nullable, char **out)
{
	json_object *v;
	*out = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return -1;
	if (json_object_is_type(v, json_type_null))
		return nullable ? 0 : -1;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	*out = xstrdup(json_object_get_string(v));
	return 0;
}

static int get_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_int64(v);
	return *out >= lo && *out <= hi ? 0 : -1;
}

int blockreq_read(const char *path, struct block_request *r, struct ta_err *err)
{
	memset(r, 0, sizeof(*r));
	r->higher_is_better = -1;
	struct strbuf sb = STRBUF_INIT;
	if (yr_read_file(path, BLOCKREQ_MAX_BYTES, "the block request", &sb, err) < 0) {
		strbuf_release(&sb);
		return -1;
	}
	json_object *o = json_tokener_parse(strbuf_str(&sb));
	strbuf_release(&sb);
	json_object *keys = NULL;
	char *format = NULL, *seed = NULL, *end = NULL;
	int64_t version = 0, exp = 0, hib = 0, block = 0, attempt = 0;
	bool ok = o && json_object_is_type(o, json_type_object) &&
		  get_str(o, "format", false, &format) == 0 && !strcmp(format, BLOCKREQ_FORMAT) &&
		  get_int(o, "version", 1, 1000, &version) == 0;
	if (ok && version != BLOCKREQ_VERSION) {
		free(format);
		json_object_put(o);
		return err_set(err, EXIT_BAD_INPUT, "%s: a version %lld block request; this "
			       "topoadvisor reads version %d (run the same version on every node)",
			       path, (long long)version, BLOCKREQ_VERSION);
	}
	ok = ok && get_int(o, "experiment_id", 1, INT64_MAX, &exp) == 0 &&
	     get_str(o, "name", false, &r->name) == 0 &&
	     get_str(o, "seed", false, &seed) == 0 &&
	     get_str(o, "primary_metric", true, &r->primary_metric) == 0 &&
	     get_int(o, "higher_is_better", -1, 1, &hib) == 0 &&
	     get_int(o, "block", 0, 1000000, &block) == 0 &&
	     get_int(o, "attempt", 1, 1000000, &attempt) == 0 &&
	     get_str(o, "job_name", false, &r->job_name) == 0 &&
	     get_str(o, "root", true, &r->root) == 0 &&
	     get_str(o, "config", false, &r->config) == 0 &&
	     json_object_object_get_ex(o, "configurations", &keys) &&
	     json_object_is_type(keys, json_type_array);
	if (ok) {
		r->seed = strtoull(seed, &end, 10);
		ok = *seed && !*end;
	}
	if (ok) {
		r->experiment_id = exp;
		r->higher_is_better = (int)hib;
		r->block = (int)block;
		r->attempt = (int)attempt;
		r->nkeys = json_object_array_length(keys);
		r->keys = xcalloc(r->nkeys + 1, sizeof(*r->keys));
		for (size_t i = 0; ok && i < r->nkeys; i++) {
			json_object *k = json_object_array_get_idx(keys, i);
			ok = json_object_is_type(k, json_type_string);
			if (ok)
				r->keys[i] = xstrdup(json_object_get_string(k));
		}
	}
	free(format);
	free(seed);
	json_object_put(o);
	if (!ok) {
		blockreq_release(r);
		return err_set(err, EXIT_BAD_INPUT, "%s: not a block request of topoadvisor "
			       "(a file the controller of a distributed sweep writes)", path);
	}
	return 0;
}

void blockreq_release(struct block_request *r)
{
	free(r->name);
	free(r->config);
	free(r->primary_metric);
	free(r->job_name);
	free(r->root);
	for (size_t i = 0; i < r->nkeys; i++)
		free(r->keys[i]);
	free(r->keys);
	memset(r, 0, sizeof(*r));
}
