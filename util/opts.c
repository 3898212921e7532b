/* opts: declarative option parsing and generated help; see opts.h. */
#include "opts.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct option *find_long(const struct option *const *tables,
				      const char *name, size_t len)
{
	for (; *tables; tables++)
		for (const struct option *o = *tables; o->type != OPT_T_END; o++)
			if (o->long_name && strlen(o->long_name) == len &&
			    !strncmp(o->long_name, name, len))
				return o;
	return NULL;
}

static const struct option *find_short(const struct option *const *tables, char c)
{
	for (; *tables; tables++)
		for (const struct option *o = *tables; o->type != OPT_T_END; o++)
			if (o->short_name && o->short_name == c)
				return o;
	return NULL;
}

static void opt_name(char *buf, size_t n, const struct option *o)
{
	if (o->long_name)
		snprintf(buf, n, "--%s", o->long_name);
	else
		snprintf(buf, n, "-%c", o->short_name);
}

static int takes_arg(const struct option *o)
{
	return o->type == OPT_T_STRING || o->type == OPT_T_INT;
}

static int set_value(const struct option *o, const char *arg, struct ta_err *err)
{
	char name[128];
	opt_name(name, sizeof(name), o);
	switch (o->type) {
	case OPT_T_BOOL:
		*(int *)o->value = 1;
		return 0;
	case OPT_T_COUNT:
		(*(int *)o->value)++;
		return 0;
	case OPT_T_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_T_INT: {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < INT_MIN || v > INT_MAX)
			return err_set(err, EXIT_BAD_INPUT,
				       "option %s expects a whole number, not '%s'", name, arg);
		*(int *)o->value = (int)v;
		return 0;
	}
	case OPT_T_END:
		break;
	}
	return err_set(err, EXIT_BAD_INPUT, "option %s: internal error", name);
}

static int parse_long(const struct option *const *tables, int argc, char **argv,
		      int *i, struct ta_err *err)
{
	const char *name = argv[*i] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	if (len == 4 && !strncmp(name, "help", 4))
		return OPTS_HELP;
	const struct option *o = find_long(tables, name, len);
	if (!o)
		return err_set(err, EXIT_BAD_INPUT, "unknown option '--%.*s'", (int)len, name);
	if (!takes_arg(o)) {
		if (eq)
			return err_set(err, EXIT_BAD_INPUT,
				       "option '--%s' takes no value", o->long_name);
		return set_value(o, NULL, err);
	}
	if (eq)
		return set_value(o, eq + 1, err);
	if (*i + 1 >= argc)
		return err_set(err, EXIT_BAD_INPUT, "option '--%s' requires a value (%s)",
			       o->long_name, o->argh ? o->argh : "VALUE");
	(*i)++;
	return set_value(o, argv[*i], err);
}

static int parse_short(const struct option *const *tables, int argc, char **argv,
		       int *i, struct ta_err *err)
{
	const char *p = argv[*i] + 1;
	while (*p) {
		if (*p == 'h')
			return OPTS_HELP;
		const struct option *o = find_short(tables, *p);
		if (!o)
			return err_set(err, EXIT_BAD_INPUT, "unknown option '-%c'", *p);
		if (!takes_arg(o)) {
			if (set_value(o, NULL, err) < 0)
				return -1;
			p++;
			continue;
		}
		if (p[1])
			return set_value(o, p + 1, err);
		if (*i + 1 >= argc)
			return err_set(err, EXIT_BAD_INPUT, "option '-%c' requires a value (%s)",
				       *p, o->argh ? o->argh : "VALUE");
		(*i)++;
		return set_value(o, argv[*i], err);
	}
	return 0;
}

int opts_parse(const struct option *const *tables, int argc, char **argv,
	       int stop_at_arg, struct ta_err *err)
{
	int nargs = 0;
	int i;
	for (i = 0; i < argc; i++) {
		char *a = argv[i];
		int rc;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			argv[nargs++] = a;
			if (stop_at_arg) {
				i++;
				break;
			}
			continue;
		}
		if (a[1] == '-')
			rc = parse_long(tables, argc, argv, &i, err);
		else
			rc = parse_short(tables, argc, argv, &i, err);
		if (rc < 0)
			return rc;
	}
	for (; i < argc; i++)
		argv[nargs++] = argv[i];
	return nargs;
}

void opts_help(struct strbuf *out, const struct option *const *tables)
{
	for (; *tables; tables++) {
		for (const struct option *o = *tables; o->type != OPT_T_END; o++) {
			struct strbuf left = STRBUF_INIT;
			strbuf_addstr(&left, "  ");
			if (o->short_name)
				strbuf_addf(&left, "-%c", o->short_name);
			if (o->short_name && o->long_name)
				strbuf_addstr(&left, ", ");
			if (o->long_name)
				strbuf_addf(&left, "--%s", o->long_name);
			if (takes_arg(o))
				strbuf_addf(&left, " %s", o->argh ? o->argh : "VALUE");
			if (left.len < 26)
				strbuf_addf(out, "%-26s%s\n", strbuf_str(&left), o->help);
			else
				strbuf_addf(out, "%s\n%26s%s\n", strbuf_str(&left), "", o->help);
			strbuf_release(&left);
		}
	}
}
