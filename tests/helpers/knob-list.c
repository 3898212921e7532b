/*
 * knob-list: prints the knob table, one knob per line: NAME TAB REL_PATH.
 * tests/integration/layering.sh reads it to find knobs defined elsewhere.
 */
#include <stdio.h>

#include "model/knob-table.h"

int main(void)
{
	for (size_t i = 0; i < knob_count(); i++)
		printf("%s\t%s\n", knob_at(i)->name, knob_at(i)->rel_path);
	return 0;
}
