/*
 * Unit tests of what the Slurm executor reads and writes without Slurm:
 * sbatch --parsable's job id, squeue rows (a reason holding '|', blank
 * lines, garbage refused), which job states are final, and the block
 * request written and read back (a 64-bit seed intact, a file of another
 * kind or version refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "experiments/blockreq.h"
#include "experiments/slurm.h"
#include "util/strbuf.h"

static void test_submit_parse(void **state)
{
	(void)state;
	static const struct { const char *in, *want; } cases[] = {
		{ "1234\n", "1234" },
		{ "1234;cluster\n", "1234" },
		{ "  77\n", "77" },
		{ "5", "5" },
		{ "", NULL },
		{ "Submitted batch job 12\n", NULL },	/* not --parsable */
		{ "12x\n", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *id = slurm_submit_parse(cases[i].in);
		if (!cases[i].want)
			assert_null(id);
		else
			assert_string_equal(id, cases[i].want);
		free(id);
	}
}

static void test_queue_parse(void **state)
{
	(void)state;
	struct slurm_job *jobs;
	size_t n;
	struct ta_err err = { 0 };
	const char out[] = "101|ta-e1-ab-b1-a1|RUNNING|tasl-n2|None\n\n"
			   "102|ta-e1-ab-b2-a1|PENDING||Resources\n"
			   "103|ta-e1-ab-b3-a1|NODE_FAIL|tasl-n1|a|reason|with bars\n";
	assert_int_equal(slurm_queue_parse(out, &jobs, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(jobs[0].id, "101");
	assert_string_equal(jobs[0].name, "ta-e1-ab-b1-a1");
	assert_string_equal(jobs[0].state, "RUNNING");
	assert_string_equal(jobs[0].nodes, "tasl-n2");
	assert_string_equal(jobs[1].nodes, "");
	assert_string_equal(jobs[1].reason, "Resources");
	assert_string_equal(jobs[2].reason, "a|reason|with bars");
	slurm_jobs_free(jobs, n);
	assert_int_equal(slurm_queue_parse("", &jobs, &n, &err), 0);
	assert_int_equal(n, 0);
	slurm_jobs_free(jobs, n);
	assert_int_equal(slurm_queue_parse("JOBID NAME STATE\n", &jobs, &n, &err), -1);
	assert_non_null(strstr(err.msg, "not 'id|name|state|nodes|reason'"));
	assert_int_equal(slurm_queue_parse("|x|RUNNING|n|r\n", &jobs, &n, &err), -1);
}

static void test_state_active(void **state)
{
	(void)state;
	static const struct { const char *state; bool active; } cases[] = {
		{ "PENDING", true }, { "RUNNING", true }, { "COMPLETING", true },
		{ "CONFIGURING", true }, { "SUSPENDED", true }, { "REQUEUED", true },
		{ "SOMETHING_NEW", true },
		{ "COMPLETED", false }, { "FAILED", false }, { "CANCELLED", false },
		{ "CANCELLED by 0", false }, { "TIMEOUT", false }, { "NODE_FAIL", false },
		{ "PREEMPTED", false }, { "BOOT_FAIL", false }, { "OUT_OF_MEMORY", false },
		{ "DEADLINE", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (slurm_state_active(cases[i].state) != cases[i].active)
			fail_msg("%s: expected %s", cases[i].state,
				 cases[i].active ? "active" : "final");
}

static void test_request_roundtrip(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/test-slurm.%d.json", (int)getpid());
	char *keys[] = { "1x2x1/pin=none/noise=none", "1x1x2/pin=none/noise=\"odd\"" };
	struct block_request r = { .experiment_id = 42, .name = "study", .seed = UINT64_MAX - 5,
				   .config = "name: study\ntopology: [1x2x1]\n",
				   .primary_metric = "ops", .higher_is_better = 1, .block = 3,
				   .attempt = 2, .job_name = "ta-e42-abc-b4-a2", .root = "/r/%n",
				   .keys = keys, .nkeys = 2 };
	struct ta_err err = { 0 };
	assert_int_equal(blockreq_write(&r, path, &err), 0);
	struct block_request back;
	if (blockreq_read(path, &back, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(back.experiment_id, 42);
	assert_true(back.seed == UINT64_MAX - 5);
	assert_string_equal(back.config, r.config);
	assert_string_equal(back.name, "study");
	assert_string_equal(back.primary_metric, "ops");
	assert_int_equal(back.higher_is_better, 1);
	assert_int_equal(back.block, 3);
	assert_int_equal(back.attempt, 2);
	assert_string_equal(back.job_name, r.job_name);
	assert_string_equal(back.root, "/r/%n");
	assert_int_equal(back.nkeys, 2);
	assert_string_equal(back.keys[1], keys[1]);
	blockreq_release(&back);
	/* No root, no metric: nulls both ways. */
	r.root = NULL;
	r.primary_metric = NULL;
	r.higher_is_better = -1;
	assert_int_equal(blockreq_write(&r, path, &err), 0);
	assert_int_equal(blockreq_read(path, &back, &err), 0);
	assert_null(back.root);
	assert_null(back.primary_metric);
	assert_int_equal(back.higher_is_better, -1);
	blockreq_release(&back);

	static const struct { const char *text, *msg; } bad[] = {
		{ "{\"format\": \"topoadvisor-block-request\", \"version\": 2}", "a version 2 block "
		  "request" },
		{ "{\"format\": \"something\", \"version\": 1}", "not a block request" },
		{ "[1, 2]", "not a block request" },
		{ "not json", "not a block request" },
		{ "{\"format\": \"topoadvisor-block-request\", \"version\": 1, \"experiment_id\": 1}",
		  "not a block request" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");
		fputs(bad[i].text, f);
		fclose(f);
		assert_int_equal(blockreq_read(path, &back, &err), -1);
		assert_int_equal(err.code, EXIT_BAD_INPUT);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("%s: got '%s'", bad[i].text, err.msg);
	}
	unlink(path);
}

/* sinfo's node states: which take a job, as a table. */
static void test_node_state_usable(void **state)
{
	(void)state;
	static const struct {
		const char *state;
		bool usable;
	} cases[] = {
		{ "idle", true }, { "mix", true }, { "alloc", true }, { "comp", true },
		{ "resv", true }, { "idle~", true }, { "plnd", true },
		{ "down", false }, { "down*", false }, { "idle*", false }, { "drain", false },
		{ "drng", false }, { "drain*", false }, { "fail", false }, { "futr", false },
		{ "maint", false }, { "unk", false }, { "inval", false }, { "", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (slurm_node_state_usable(cases[i].state) != cases[i].usable)
			fail_msg("state '%s': usable should be %d", cases[i].state, cases[i].usable);
}

/* sinfo -N -o '%N|%t|%P': a partition's nodes, each once; the default's without -p. */
static void test_nodes_parse(void **state)
{
	(void)state;
	static const char text[] = "n1|idle|debug*\nn1|idle|big\nn2|down*|debug*\n"
				   "n3|mix|big\n\nn2|down*|big\n";
	static const struct {
		const char *partition;
		const char *want;	/* "name:usable ..." */
	} cases[] = {
		{ NULL, "n1:1 n2:0" },
		{ "debug", "n1:1 n2:0" },
		{ "big", "n1:1 n3:1 n2:0" },
		{ "none", "" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct slurm_node *v;
		size_t n;
		struct ta_err err = { 0 };
		assert_int_equal(slurm_nodes_parse(text, cases[c].partition, &v, &n, &err), 0);
		char got[128] = "";
		for (size_t i = 0; i < n; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s:%d", i ? " " : "",
				 v[i].name, v[i].usable);
		if (strcmp(got, cases[c].want))
			fail_msg("partition %s: got '%s', want '%s'", cases[c].partition, got,
				 cases[c].want);
		slurm_nodes_free(v, n);
	}
	struct slurm_node *v;
	size_t n;
	struct ta_err err = { 0 };
	assert_int_equal(slurm_nodes_parse("PARTITION AVAIL\n", NULL, &v, &n, &err), -1);
	assert_non_null(strstr(err.msg, "not 'node|state|partition'"));
}

/* Which sbatch errors no retry mends, as a table. */
static void test_error_permanent(void **state)
{
	(void)state;
	static const struct {
		const char *msg;
		bool permanent;
	} cases[] = {
		{ "sbatch: error: invalid partition specified: bad", true },
		{ "sbatch: error: Batch job submission failed: Invalid partition name specified", true },
		{ "sbatch: error: Batch job submission failed: Requested node configuration is not available", true },
		{ "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified", true },
		{ "sbatch: error: Batch job submission failed: Invalid qos specification", true },
		{ "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)", false },
		{ "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation", false },
		{ "sbatch timed out after 30 s", false },
		{ "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (slurm_error_permanent(cases[i].msg) != cases[i].permanent)
			fail_msg("'%s': permanent should be %d", cases[i].msg, cases[i].permanent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_parse),
		cmocka_unit_test(test_queue_parse),
		cmocka_unit_test(test_state_active),
		cmocka_unit_test(test_node_state_usable),
		cmocka_unit_test(test_nodes_parse),
		cmocka_unit_test(test_error_permanent),
		cmocka_unit_test(test_request_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
