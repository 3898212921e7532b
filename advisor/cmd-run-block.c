/*
 * run-block (internal): run one block of a distributed sweep on the node
 * it was given, as the job the controller submitted.  Not for users: the
 * controller (`run` with executor: slurm) writes the request and starts
 * this through sbatch; with executor: ssh it starts `run-block -` over ssh,
 * the request on its stdin and the result database on its stdout (no
 * shared file system).  See experiments/worker.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../experiments/worker.h"
#include "../util/safefile.h"
#include "cmd.h"

/* A request is a config and a list of keys: far below this. */
#define STREAM_REQUEST_MAX (16u << 20)

static const struct option run_block_options[] = {
	OPT_END(),
};

/* Writes all of buf to fd. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The request from stdin into a private directory (mode 0700, removed
 * after), the worker run there, the result copied to stdout; everything
 * else the worker says goes to stderr.
 */
static int run_block_stream(const struct worker_opts *o, struct worker_outcome *out,
			    int result_fd, struct ta_err *err)
{
	const char *tmpdir = getenv("TMPDIR");
	struct strbuf dir = STRBUF_INIT, req = STRBUF_INIT, data = STRBUF_INIT;
	strbuf_addf(&dir, "%s/topoadvisor-block.XXXXXX", tmpdir && *tmpdir == '/' ? tmpdir : "/tmp");
	int rc = -1;
	if (!mkdtemp(dir.buf)) {
		err_set(err, EXIT_FAILURE_RUN, "cannot create %s: %s", dir.buf, strerror(errno));
		strbuf_release(&dir);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(0, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || data.len + (size_t)n > STREAM_REQUEST_MAX) {
			err_set(err, EXIT_BAD_INPUT, "reading the request from stdin: %s",
				n < 0 ? strerror(errno) : "larger than 16 MiB");
			goto out;
		}
		strbuf_add(&data, buf, (size_t)n);
	}
	strbuf_addf(&req, "%s/request.json", dir.buf);
	int fd = safefile_create(strbuf_str(&req), 0600, err);
	if (fd < 0)
		goto out;
	int w = write_all(fd, data.buf ? data.buf : "", data.len);
	close(fd);
	if (w < 0) {
		err_set(err, EXIT_FAILURE_RUN, "writing %s: %s", strbuf_str(&req), strerror(errno));
		goto out;
	}
	rc = worker_run_block(strbuf_str(&req), o, out, err);
	if (rc == 0 && out->result) {
		int in = open(out->result, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (in < 0) {
			rc = err_set(err, EXIT_FAILURE_RUN, "cannot read the result %s: %s",
				     out->result, strerror(errno));
		} else {
			while ((n = read(in, buf, sizeof(buf))) > 0 && write_all(result_fd, buf,
										 (size_t)n) == 0)
				;
			if (n != 0)
				rc = err_set(err, EXIT_FAILURE_RUN, "sending the result: %s",
					     strerror(errno));
			close(in);
		}
	}
out:
	/* Only what we made: the request, the result, the directory. */
	if (out->result)
		unlink(out->result);
	if (req.len)
		unlink(strbuf_str(&req));
	rmdir(dir.buf);
	strbuf_release(&dir);
	strbuf_release(&req);
	strbuf_release(&data);
	return rc;
}

static int cmd_run_block_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct worker_opts o = { .quiet = ctx->quiet, .verbose = ctx->verbose };
	struct worker_outcome out = { 0 };
	if (!strcmp(argv[0], "-")) {
		/* A controller gone (its ssh ended) fails the copy, it does not kill us
		 * before we tidy up. */
		signal(SIGPIPE, SIG_IGN);
		/* stdout carries the result alone: what the worker prints goes to stderr. */
		int result_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
		if (result_fd < 0 || dup2(2, 1) < 0) {
			err_set(&err, EXIT_FAILURE_RUN, "cannot set up stdout: %s", strerror(errno));
			return cmd_fail(&err);
		}
		int rc = run_block_stream(&o, &out, result_fd, &err);
		if (close(result_fd) < 0 && rc == 0)
			rc = err_set(&err, EXIT_FAILURE_RUN, "sending the result: %s",
				     strerror(errno));
		if (rc < 0) {
			free(out.result);
			return cmd_fail(&err);
		}
	} else if (worker_run_block(argv[0], &o, &out, &err) < 0) {
		return cmd_fail(&err);
	}
	if (out.interrupted) {
		fprintf(stderr, "interrupted: no result for this block\n");
		free(out.result);
		return 130;
	}
	if (!ctx->quiet)
		fprintf(stderr, "%zu runs ok, %zu failed; result: %s\n", out.ok, out.failed,
			out.result);
	free(out.result);
	return EXIT_OK;
}

const struct cmd_entry cmd_run_block_entry = {
	.no_db = 1,
	.name = "run-block",
	.summary = "(internal) run one block of a distributed sweep on this node",
	.args_usage = "REQUEST|-",
	.options = run_block_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_run_block_exec,
};
