/*
 * blockreq: what the controller of a distributed sweep hands a worker —
 * one block of one experiment — as a small JSON file in the sweep's work
 * directory (shared by the controller and every node).  It carries the
 * stored config text and seed (so the worker expands the same plan), the
 * block, the attempt, the job's unique name and the configurations to run,
 * in the stored random order.  The worker's answer is a database file next
 * to it (schema/db-blocks.h).
 */
#ifndef TA_BLOCKREQ_H
#define TA_BLOCKREQ_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

#define BLOCKREQ_FORMAT "topoadvisor-block-request"
#define BLOCKREQ_VERSION 1

struct block_request {
	int64_t experiment_id;	/* in the controller's database (for messages) */
	char *name;		/* the experiment's name */
	uint64_t seed;
	char *config;		/* the stored config text */
	char *primary_metric;	/* NULL: the config's */
	int higher_is_better;	/* -1: unknown */
	int block;		/* the repetition, 0-based */
	int attempt;		/* 1, 2, ... */
	char *job_name;
	char *root;		/* where host knobs live ("%n": the node's name); NULL: / */
	char **keys;		/* the configurations to run, in order */
	size_t nkeys;
};

/* Writes r as JSON to path atomically (safefile_replace). */
int blockreq_write(const struct block_request *r, const char *path, struct ta_err *err);
/* Reads one; EXIT_BAD_INPUT when the file is not a request this version understands. */
int blockreq_read(const char *path, struct block_request *r, struct ta_err *err);
void blockreq_release(struct block_request *r);

#endif
