/*
 * number: reading integers people write in configs.  Pure, no I/O.
 */
#ifndef TA_NUMBER_H
#define TA_NUMBER_H

#include <stdbool.h>

/*
 * A whole integer in decimal or 0x hex with an optional sign ("42", "+6",
 * "0x4", "-1"): true and *out, or false for anything else (blanks, trailing
 * text, out of range for long long).
 */
bool number_parse_ll(const char *s, long long *out);

#endif
