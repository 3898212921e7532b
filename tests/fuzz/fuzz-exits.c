/*
 * fuzz-exits: libFuzzer harness for both offline readers (trace.dat via
 * tdat/evfmt/page walker, perf.data via perfdata), through the one entry
 * point `topoadvisor exits` uses.  The input picks the reader by its magic,
 * so one corpus (tests/fuzz/corpus: generated files of both kinds) covers
 * both.  Any crash, sanitizer report, leak or hang is a finding; errors are
 * the expected answer to most inputs.
 *
 *	make fuzz			builds build-fuzz/fuzz-exits, runs FUZZ_TIME s
 *	build-fuzz/fuzz-exits CORPUS	by hand (libFuzzer options apply)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/offline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy: the reader may drop pages it has read. */
	unsigned char *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (int algo = 0; algo < 2; algo++) {
		struct offline_opts opts = { .algorithm = algo ? GANG_ALGO_SEED : GANG_ALGO_VCORE,
					     .in_process_formats = true };
		struct gang_result res;
		struct offline_info info;
		struct ta_err err;
		if (offline_analyze_buffer("fuzz-input", copy, size, &opts, &res, &info, &err) == 0)
			gang_result_release(&res);
		memcpy(copy, data, size);
	}
	free(copy);
	return 0;
}
