/*
 * prefixes: every truncation of a recording must be refused.
 *
 *   prefixes FILE...
 *
 * Reads each FILE (which must read cleanly) and then every strict prefix of
 * it through the offline reader in this process; a prefix that reads as a
 * valid recording is reported and fails the run (exit 1).  For trace.dat
 * (v6, v7) and file-mode perf.data every byte counts: their headers say how
 * much follows.  (A pipe-mode perf.data cut between records is a shorter
 * recording, so it is not a case for this helper.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/offline.h"
#include "../../util/strbuf.h"

static int analyze(const unsigned char *data, size_t len, struct ta_err *err)
{
	/* A fresh copy each time: the reader may give pages it read back. */
	unsigned char *copy = xmalloc(len ? len : 1);
	memcpy(copy, data, len);
	struct offline_opts opts = { .algorithm = GANG_ALGO_VCORE };
	struct gang_result res;
	struct offline_info info;
	int rc = offline_analyze_buffer("prefix", copy, len, &opts, &res, &info, err);
	if (rc == 0)
		gang_result_release(&res);
	free(copy);
	return rc;
}

int main(int argc, char **argv)
{
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		struct strbuf sb = STRBUF_INIT;
		struct ta_err err = { 0 };
		if (strbuf_read_file(&sb, argv[i]) < 0) {
			fprintf(stderr, "prefixes: cannot read %s\n", argv[i]);
			return 2;
		}
		const unsigned char *d = (const unsigned char *)sb.buf;
		if (analyze(d, sb.len, &err) < 0) {
			fprintf(stderr, "prefixes: %s does not read: %s\n", argv[i], err.msg);
			return 2;
		}
		size_t accepted = 0;
		for (size_t n = 0; n < sb.len; n++)
			if (analyze(d, n, &err) == 0) {
				if (accepted++ < 5)
					fprintf(stderr, "prefixes: %s cut to %zu of %zu bytes reads as "
						"valid\n", argv[i], n, sb.len);
			}
		printf("%s: %zu prefixes, %zu read as valid\n", argv[i], sb.len, accepted);
		failed |= accepted != 0;
		strbuf_release(&sb);
	}
	return failed;
}
