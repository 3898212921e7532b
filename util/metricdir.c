/*
 * metricdir: the names under which a metric's direction is stored.
 */
#include "metricdir.h"

#include <stddef.h>
#include <string.h>

const char *metric_dir_name(enum metric_dir d)
{
	switch (d) {
	case METRIC_DIR_HIGHER:
		return "higher";
	case METRIC_DIR_LOWER:
		return "lower";
	case METRIC_DIR_NONE:
		return "none";
	case METRIC_DIR_UNKNOWN:
		break;
	}
	return NULL;
}

enum metric_dir metric_dir_from_name(const char *s)
{
	static const enum metric_dir all[] = { METRIC_DIR_HIGHER, METRIC_DIR_LOWER, METRIC_DIR_NONE };
	for (size_t i = 0; s && i < sizeof(all) / sizeof(*all); i++)
		if (!strcmp(s, metric_dir_name(all[i])))
			return all[i];
	return METRIC_DIR_UNKNOWN;
}
