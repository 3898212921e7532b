/* number: integers as written in configs; see number.h. */
#include "number.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

bool number_parse_ll(const char *s, long long *out)
{
	const char *p = s + (*s == '+' || *s == '-');
	if (!isdigit((unsigned char)*p))
		return false;
	bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, hex ? 16 : 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}
