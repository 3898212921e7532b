/* cpuset: parsing and formatting host CPU lists; see cpuset.h. */
#define _GNU_SOURCE
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Reads one CPU number at *p (digits only: no sign, no hex). */
static int read_cpu(const char **p, const char *whole, long *out, struct ta_err *err)
{
	const char *s = *p;
	while (*s == ' ')
		s++;
	if (!isdigit((unsigned char)*s))
		return err_set(err, EXIT_BAD_INPUT,
			       "cpuset '%s': expected a CPU number at '%s' "
			       "(write CPUs as e.g. \"0-3,8\")", whole, s);
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || v > CPUSET_MAX_CPU)
		return err_set(err, EXIT_BAD_INPUT, "cpuset '%s': CPU %.*s is above %d",
			       whole, (int)(end - s), s, CPUSET_MAX_CPU);
	while (*end == ' ')
		end++;
	*p = end;
	*out = v;
	return 0;
}

int cpuset_parse(const char *s, struct cpuset *out, struct ta_err *err)
{
	if (!s)
		s = "";
	/* A bitmap first, so overlapping items ("0-3,2") need no sorting. */
	unsigned char *seen = xcalloc(CPUSET_MAX_CPU + 1, 1);
	const char *p = s;
	size_t n = 0;
	for (;;) {
		long a, b;
		if (read_cpu(&p, s, &a, err) < 0)
			goto fail;
		b = a;
		if (*p == '-') {
			p++;
			if (read_cpu(&p, s, &b, err) < 0)
				goto fail;
			if (b < a) {
				err_set(err, EXIT_BAD_INPUT,
					"cpuset '%s': range %ld-%ld goes down; write it as %ld-%ld",
					s, a, b, b, a);
				goto fail;
			}
		}
		for (long c = a; c <= b; c++)
			if (!seen[c]) {
				seen[c] = 1;
				n++;
			}
		if (*p == '\0')
			break;
		if (*p != ',') {
			err_set(err, EXIT_BAD_INPUT,
				"cpuset '%s': unexpected '%c' (write CPUs as e.g. \"0-3,8\")",
				s, *p);
			goto fail;
		}
		p++;
	}
	out->cpus = xmalloc(n * sizeof(int));
	out->n = 0;
	for (int c = 0; c <= CPUSET_MAX_CPU; c++)
		if (seen[c])
			out->cpus[out->n++] = c;
	free(seen);
	return 0;
fail:
	free(seen);
	return -1;
}

int cpuset_last(const struct cpuset *cs)
{
	return cs->n ? cs->cpus[cs->n - 1] : -1;
}

void cpuset_to_mask(const struct cpuset *cs, cpu_set_t *set)
{
	CPU_ZERO(set);
	for (size_t i = 0; i < cs->n; i++)
		CPU_SET(cs->cpus[i], set);
}

void cpuset_format(const struct cpuset *cs, struct strbuf *out)
{
	for (size_t i = 0; i < cs->n;) {
		size_t j = i;
		while (j + 1 < cs->n && cs->cpus[j + 1] == cs->cpus[j] + 1)
			j++;
		if (i)
			strbuf_addch(out, ',');
		if (j > i)
			strbuf_addf(out, "%d-%d", cs->cpus[i], cs->cpus[j]);
		else
			strbuf_addf(out, "%d", cs->cpus[i]);
		i = j + 1;
	}
}

void cpuset_release(struct cpuset *cs)
{
	free(cs->cpus);
	cs->cpus = NULL;
	cs->n = 0;
}
