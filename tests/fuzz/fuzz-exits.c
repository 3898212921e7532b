/*
 * fuzz-exits: libFuzzer harness for both offline readers (trace.dat via
 * tdat/evfmt/page walker, perf.data via perfdata), through the one entry
 * point `topoadvisor exits` uses, then both reports it prints (text and
 * JSON).  The input picks the reader by its magic, so one corpus covers
 * both.  The harness runs exactly what the product runs, in the same
 * process layout: the event formats are read by our own parser (evfmt.h),
 * nothing is parsed in a child or by a third-party library, so any crash,
 * sanitizer report, leak or hang here is the product's.  Errors are the
 * expected answer to most inputs.
 *
 *	make fuzz			FUZZ_TIME s of exploration (scripts/fuzz.sh)
 *	build-fuzz/fuzz-exits FILE...	replays inputs once each (what
 *					tests/integration/fuzz-readers.sh does
 *					with tests/fuzz/corpus)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/exitsum.h"
#include "../../collectors/offline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy: the reader may drop pages it has read. */
	unsigned char *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	for (int algo = 0; algo < 2; algo++) {
		memcpy(copy, data, size);
		struct offline_opts opts = { .algorithm = algo ? GANG_ALGO_SEED : GANG_ALGO_VCORE };
		struct gang_result res;
		struct offline_info info;
		struct ta_err err;
		if (offline_analyze_buffer("fuzz-input", copy, size, &opts, &res, &info, &err) < 0)
			continue;
		struct exitsum_meta meta = { .source = "fuzz-input", .buffer = info.buffer,
					     .clock = info.clock[0] ? info.clock : NULL };
		struct strbuf out = STRBUF_INIT;
		exitsum_text(&out, &res, &meta, 1);
		exitsum_json(&out, &res, &meta);
		strbuf_release(&out);
		gang_result_release(&res);
	}
	free(copy);
	return 0;
}
