-- topoadvisor database schema.
--
-- This file is embedded into the binary.  It is a sequence of numbered
-- migrations, each starting with a line "-- @migration N"; a database's
-- PRAGMA user_version says how many have been applied, and opening it
-- applies the rest, each in its own transaction.  A new database gets all
-- of them.  Released migrations are never edited: change the schema by
-- appending migration N+1.
--
-- Tables: experiments (one per `run`/`rerun`), configurations (one per
-- point of the plan), runs (one per configuration x repetition), metrics
-- (every figure: benchmark results, ganged exits, vCPU times, each with
-- its unit and direction), exit_counts
-- (exit reasons per run, source and vCPU), artifacts (raw outputs, domain
-- XML), host_journal (every host knob change, original value first).
-- Timestamps are UTC ISO-8601 text; JSON columns are checked with json_valid.

-- @migration 1
CREATE TABLE experiments (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	finished_at TEXT,
	parent_id INTEGER REFERENCES experiments(id) ON DELETE SET NULL,
	config_yaml TEXT NOT NULL,
	config_sha256 TEXT NOT NULL,
	config_path TEXT,
	tool_version TEXT NOT NULL,
	host_facts TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(host_facts)),
	status TEXT NOT NULL DEFAULT 'planned'
		CHECK (status IN ('planned', 'running', 'done', 'failed', 'interrupted')),
	seed INTEGER NOT NULL,
	primary_metric TEXT,
	higher_is_better INTEGER CHECK (higher_is_better IN (0, 1))
);

CREATE TABLE configurations (
	id INTEGER PRIMARY KEY,
	experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL,
	key TEXT NOT NULL,
	vcpus INTEGER NOT NULL CHECK (vcpus > 0),
	sockets INTEGER NOT NULL CHECK (sockets > 0),
	dies INTEGER NOT NULL DEFAULT 1 CHECK (dies > 0),
	cores INTEGER NOT NULL CHECK (cores > 0),
	threads INTEGER NOT NULL CHECK (threads > 0),
	pinning TEXT NOT NULL DEFAULT 'none',
	noise TEXT NOT NULL DEFAULT 'none',
	subcores_per_core INTEGER,
	smt TEXT,
	dynamic_mt_modes INTEGER,
	target_smt_mode INTEGER,
	indep_threads_mode INTEGER,
	one_vm_per_core INTEGER,
	factors TEXT NOT NULL CHECK (json_valid(factors)),
	is_baseline INTEGER NOT NULL DEFAULT 0 CHECK (is_baseline IN (0, 1)),
	UNIQUE (experiment_id, key),
	UNIQUE (experiment_id, idx),
	CHECK (sockets * dies * cores * threads = vcpus)
);

CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	configuration_id INTEGER NOT NULL REFERENCES configurations(id) ON DELETE CASCADE,
	repetition INTEGER NOT NULL CHECK (repetition >= 0),
	order_index INTEGER NOT NULL,
	status TEXT NOT NULL DEFAULT 'planned'
		CHECK (status IN ('planned', 'running', 'ok', 'failed', 'interrupted')),
	error TEXT,
	started_at TEXT,
	finished_at TEXT,
	host_state TEXT CHECK (host_state IS NULL OR json_valid(host_state)),
	guest_topology TEXT CHECK (guest_topology IS NULL OR json_valid(guest_topology)),
	topology_ok INTEGER CHECK (topology_ok IN (0, 1)),
	lost_events INTEGER,
	UNIQUE (configuration_id, repetition)
);
CREATE INDEX runs_order ON runs(order_index);

CREATE TABLE metrics (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	value REAL NOT NULL,
	unit TEXT,
	higher_is_better INTEGER CHECK (higher_is_better IN (0, 1)),
	UNIQUE (run_id, name)
);

CREATE TABLE exit_counts (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	source TEXT NOT NULL,
	vcpu INTEGER,
	reason TEXT NOT NULL,
	count INTEGER NOT NULL CHECK (count >= 0)
);
CREATE INDEX exit_counts_run ON exit_counts(run_id);

CREATE TABLE artifacts (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	content BLOB NOT NULL,
	UNIQUE (run_id, name)
);

CREATE TABLE host_journal (
	id INTEGER PRIMARY KEY,
	experiment_id INTEGER REFERENCES experiments(id) ON DELETE SET NULL,
	knob TEXT NOT NULL,
	path TEXT,
	original_value TEXT NOT NULL,
	applied_value TEXT NOT NULL,
	applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	restored_at TEXT
);

-- @migration 2
CREATE INDEX metrics_name ON metrics(name);

-- Every run with its experiment and configuration key.
CREATE VIEW run_overview AS
SELECT e.id AS experiment_id, e.name AS experiment, c.id AS configuration_id,
       c.key, c.is_baseline, r.id AS run_id, r.repetition, r.order_index,
       r.status, r.error, r.started_at, r.finished_at
FROM runs r
JOIN configurations c ON c.id = r.configuration_id
JOIN experiments e ON e.id = c.experiment_id;

-- One row per run and metric, successful runs only.
CREATE VIEW run_metrics AS
SELECT c.experiment_id, c.id AS configuration_id, c.key, r.id AS run_id,
       r.repetition, m.name AS metric, m.value, m.unit, m.higher_is_better
FROM metrics m
JOIN runs r ON r.id = m.run_id AND r.status = 'ok'
JOIN configurations c ON c.id = r.configuration_id;

-- n, mean, sample standard deviation, min and max per configuration and metric.
CREATE VIEW config_metric_stats AS
SELECT experiment_id, configuration_id, key, metric, unit,
       COUNT(*) AS n,
       AVG(value) AS mean,
       CASE WHEN COUNT(*) > 1 THEN
	    sqrt(max(0.0, (SUM(value * value) - SUM(value) * SUM(value) / COUNT(*))
			  / (COUNT(*) - 1)))
       END AS stddev,
       MIN(value) AS min,
       MAX(value) AS max
FROM run_metrics
GROUP BY configuration_id, metric;

-- @migration 3
-- Which way each metric is better, as its producer declared it: 'higher',
-- 'lower', or 'none' for a figure that is no figure of merit (boot time,
-- run count), which higher_is_better cannot tell from "nobody said" (both
-- NULL).  NULL here: unknown (a command regex group the config does not
-- name).  Rows stored before keep what higher_is_better knew.
ALTER TABLE metrics ADD COLUMN direction TEXT
	CHECK (direction IS NULL OR direction IN ('higher', 'lower', 'none'));
UPDATE metrics SET direction = CASE higher_is_better WHEN 1 THEN 'higher' WHEN 0 THEN 'lower' END;

DROP VIEW config_metric_stats;
DROP VIEW run_metrics;

CREATE VIEW run_metrics AS
SELECT c.experiment_id, c.id AS configuration_id, c.key, r.id AS run_id,
       r.repetition, m.name AS metric, m.value, m.unit, m.higher_is_better, m.direction
FROM metrics m
JOIN runs r ON r.id = m.run_id AND r.status = 'ok'
JOIN configurations c ON c.id = r.configuration_id;

CREATE VIEW config_metric_stats AS
SELECT experiment_id, configuration_id, key, metric, unit, direction,
       COUNT(*) AS n,
       AVG(value) AS mean,
       CASE WHEN COUNT(*) > 1 THEN
	    sqrt(max(0.0, (SUM(value * value) - SUM(value) * SUM(value) / COUNT(*))
			  / (COUNT(*) - 1)))
       END AS stddev,
       MIN(value) AS min,
       MAX(value) AS max
FROM run_metrics
GROUP BY configuration_id, metric;

-- @migration 4
-- The kvm_hv booleans are stored as the knob table spells them, 'Y' or 'N'
-- (model/knob-table.c).  Migration 1 declared their columns INTEGER, so the
-- text went in and read back as 0: the columns become TEXT, and integers an
-- older importer stored become 'Y'/'N'.
ALTER TABLE configurations RENAME COLUMN indep_threads_mode TO indep_threads_mode_v1;
ALTER TABLE configurations ADD COLUMN indep_threads_mode TEXT;
UPDATE configurations SET indep_threads_mode =
	CASE WHEN typeof(indep_threads_mode_v1) = 'integer'
	     THEN CASE indep_threads_mode_v1 WHEN 0 THEN 'N' ELSE 'Y' END
	     ELSE indep_threads_mode_v1 END;
ALTER TABLE configurations DROP COLUMN indep_threads_mode_v1;
ALTER TABLE configurations RENAME COLUMN one_vm_per_core TO one_vm_per_core_v1;
ALTER TABLE configurations ADD COLUMN one_vm_per_core TEXT;
UPDATE configurations SET one_vm_per_core =
	CASE WHEN typeof(one_vm_per_core_v1) = 'integer'
	     THEN CASE one_vm_per_core_v1 WHEN 0 THEN 'N' ELSE 'Y' END
	     ELSE one_vm_per_core_v1 END;
ALTER TABLE configurations DROP COLUMN one_vm_per_core_v1;

-- @migration 5
-- Why an experiment failed as a whole (its sweep could not start or go on:
-- a libvirt URI that does not answer, no permission, a database error),
-- shown by `show`; NULL while it has not failed, or for a run's own failure
-- (those are in runs.error).
ALTER TABLE experiments ADD COLUMN error TEXT;

-- @migration 6
-- Raced sweeps (strategy: race).  One races row per raced experiment: how
-- many blocks were run before the first test, the maximum (the sweep's
-- repetitions, raised by extend), how many blocks the race has looked at,
-- and why it stopped (NULL while it goes on).  One eliminations row per
-- configuration a race dropped: after which block, against which
-- configuration (the best then), the Holm-adjusted one-sided p and the
-- ratio to that best.  A configuration's planned runs after its
-- elimination, and every planned run after the race stopped, are deleted
-- in the same transaction.
CREATE TABLE races (
	experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
	first_test INTEGER NOT NULL CHECK (first_test >= 2),
	max_blocks INTEGER NOT NULL CHECK (max_blocks >= 1),
	blocks_evaluated INTEGER NOT NULL DEFAULT 0 CHECK (blocks_evaluated >= 0),
	stop_reason TEXT CHECK (stop_reason IS NULL OR
		stop_reason IN ('one survivor', 'all equivalent', 'maximum reached')),
	stopped_after INTEGER
);

CREATE TABLE eliminations (
	configuration_id INTEGER PRIMARY KEY REFERENCES configurations(id) ON DELETE CASCADE,
	after_block INTEGER NOT NULL CHECK (after_block >= 1),
	against_id INTEGER NOT NULL REFERENCES configurations(id) ON DELETE CASCADE,
	p REAL NOT NULL CHECK (p >= 0 AND p <= 1),
	ratio REAL
);

-- @migration 7
-- The configuration record (model/config-record.h) stored whole with the
-- plan, so the advisor reads what the planner and the controller decided
-- instead of deriving it again: the decision and the environment level
-- each configuration belongs to (written once by the plan, with the
-- sweep's advisor.environment; never parsed from the key), the guests'
-- architecture and the <cpu> mode and model their domains had (NULL: none
-- set).  And the experiment's advisor settings (objective, equivalence,
-- environment: a JSON array of the factors besides noise).
ALTER TABLE configurations ADD COLUMN decision TEXT;
ALTER TABLE configurations ADD COLUMN environment TEXT;
ALTER TABLE configurations ADD COLUMN arch TEXT;
ALTER TABLE configurations ADD COLUMN cpu_mode TEXT;
ALTER TABLE configurations ADD COLUMN cpu_model TEXT;
ALTER TABLE experiments ADD COLUMN objective TEXT
	CHECK (objective IS NULL OR objective IN ('worst', 'mean'));
ALTER TABLE experiments ADD COLUMN equivalence REAL
	CHECK (equivalence IS NULL OR (equivalence > 0 AND equivalence <= 0.5));
ALTER TABLE experiments ADD COLUMN environment TEXT
	CHECK (environment IS NULL OR json_valid(environment));
-- Rows stored before: the level is the noise, the decision the key without
-- its trailing noise part (what the default environment makes of them).
-- The architecture and <cpu> were not recorded and stay NULL.  A sweep
-- that never mentions `advisor` had the default settings; one that does
-- keeps NULL ones (unknown: the advisor ranks with the defaults and says so).
UPDATE configurations SET environment = 'noise=' || noise,
	decision = CASE WHEN substr(key, -length('/noise=' || noise)) = '/noise=' || noise
		THEN substr(key, 1, length(key) - length('/noise=' || noise)) ELSE key END;
UPDATE experiments SET objective = 'worst', equivalence = 0.02, environment = '[]'
	WHERE instr(config_yaml, 'advisor') = 0;

-- @migration 8
-- Sweeps across many hosts (executor: slurm).  Every run stores the host
-- it ran on (the controller's host name for a local sweep, the Slurm node
-- for a distributed one; NULL for runs stored before).  A distributed
-- experiment has one distributed row (its executor settings as the sweep
-- ran with them, and the tag its job names and work directory carry) and
-- one block_attempts row per Slurm job it submitted: the block (the
-- repetition), the attempt (1, 2, ... for resubmissions of that block),
-- the job's unique name and id, the node, where the attempt is (state),
-- the last Slurm state seen, and what became of its result: 'ingested'
-- (the block's first complete result: its runs are in runs) or
-- 'duplicate' (a later complete result of a block already ingested, kept
-- in its file, never stored twice).  A worker's result file is itself a
-- database holding one experiment (the block's runs) and its own
-- block_attempts row.
ALTER TABLE runs ADD COLUMN host TEXT;

CREATE TABLE distributed (
	experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
	kind TEXT NOT NULL CHECK (kind IN ('slurm')),
	tag TEXT NOT NULL UNIQUE,
	work_dir TEXT NOT NULL,
	settings TEXT NOT NULL CHECK (json_valid(settings))
);

CREATE TABLE block_attempts (
	id INTEGER PRIMARY KEY,
	experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
	block INTEGER NOT NULL CHECK (block >= 0),
	attempt INTEGER NOT NULL CHECK (attempt >= 1),
	job_name TEXT NOT NULL,
	job_id TEXT,
	node TEXT,
	state TEXT NOT NULL DEFAULT 'submitting'
		CHECK (state IN ('submitting', 'queued', 'running', 'done', 'failed', 'cancelled')),
	slurm_state TEXT,
	outcome TEXT CHECK (outcome IS NULL OR outcome IN ('ingested', 'duplicate')),
	result_file TEXT,
	error TEXT,
	submitted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	started_at TEXT,
	finished_at TEXT,
	UNIQUE (experiment_id, block, attempt)
);
CREATE UNIQUE INDEX block_attempts_one_ingested ON block_attempts(experiment_id, block)
	WHERE outcome = 'ingested';

-- @migration 9
-- Boots as a level of replication.  runs.boot: the id of the run whose
-- guest boot (or host-runner session) this run ran in — its own id when it
-- booted one; runs sharing a boot are not independent replicates
-- (guest.reuse, guest.reuse_runs).  NULL: not recorded (stored before).
ALTER TABLE runs ADD COLUMN boot INTEGER;

-- advisor.max_failure_rate, stored with the other advisor settings
-- (migration 7); NULL: stored before it was, the default (0.2) applies.
ALTER TABLE experiments ADD COLUMN max_failure_rate REAL
	CHECK (max_failure_rate IS NULL OR (max_failure_rate >= 0 AND max_failure_rate <= 1));

-- A race also stops when its verdict is decided ('decided'), and drops a
-- configuration whose failure rate is shown too high: such an elimination
-- has no configuration it lost to (against_id NULL, reason 'failing').
CREATE TABLE races_v9 (
	experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
	first_test INTEGER NOT NULL CHECK (first_test >= 2),
	max_blocks INTEGER NOT NULL CHECK (max_blocks >= 1),
	blocks_evaluated INTEGER NOT NULL DEFAULT 0 CHECK (blocks_evaluated >= 0),
	stop_reason TEXT CHECK (stop_reason IS NULL OR stop_reason IN
		('one survivor', 'all equivalent', 'maximum reached', 'decided')),
	stopped_after INTEGER
);
INSERT INTO races_v9 SELECT experiment_id, first_test, max_blocks, blocks_evaluated,
	stop_reason, stopped_after FROM races;
DROP TABLE races;
ALTER TABLE races_v9 RENAME TO races;

CREATE TABLE eliminations_v9 (
	configuration_id INTEGER PRIMARY KEY REFERENCES configurations(id) ON DELETE CASCADE,
	after_block INTEGER NOT NULL CHECK (after_block >= 1),
	against_id INTEGER REFERENCES configurations(id) ON DELETE CASCADE,
	p REAL NOT NULL CHECK (p >= 0 AND p <= 1),
	ratio REAL,
	reason TEXT NOT NULL DEFAULT 'worse' CHECK (reason IN ('worse', 'failing')),
	CHECK ((reason = 'failing') = (against_id IS NULL))
);
INSERT INTO eliminations_v9 (configuration_id, after_block, against_id, p, ratio)
	SELECT configuration_id, after_block, against_id, p, ratio FROM eliminations;
DROP TABLE eliminations;
ALTER TABLE eliminations_v9 RENAME TO eliminations;

-- @migration 10
-- Reading an experiment walks its runs' metrics in run order and, within a
-- run, in the order they were stored (schema/db-results.c): an index on
-- run_id alone holds exactly that order (run_id, then rowid), so the walk
-- needs no sort however many runs there are.
CREATE INDEX metrics_run ON metrics(run_id);

-- How many runs of each configuration are in each status, kept by triggers
-- as runs are planned, run, stored, deleted (a race's dropped blocks) and
-- cascaded away, so that `list` and an experiment's header read a few rows
-- per configuration instead of every run ever stored.  One row per
-- configuration, made with it; rows stored before are counted here once.
CREATE TABLE run_counts (
	configuration_id INTEGER PRIMARY KEY REFERENCES configurations(id) ON DELETE CASCADE,
	planned INTEGER NOT NULL DEFAULT 0,
	running INTEGER NOT NULL DEFAULT 0,
	ok INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0,
	interrupted INTEGER NOT NULL DEFAULT 0
);
INSERT INTO run_counts (configuration_id, planned, running, ok, failed, interrupted)
SELECT c.id, COALESCE(SUM(r.status = 'planned'), 0), COALESCE(SUM(r.status = 'running'), 0),
       COALESCE(SUM(r.status = 'ok'), 0), COALESCE(SUM(r.status = 'failed'), 0),
       COALESCE(SUM(r.status = 'interrupted'), 0)
FROM configurations c LEFT JOIN runs r ON r.configuration_id = c.id GROUP BY c.id;

CREATE TRIGGER run_counts_configuration AFTER INSERT ON configurations BEGIN
	INSERT INTO run_counts (configuration_id) VALUES (NEW.id);
END;
CREATE TRIGGER run_counts_run_insert AFTER INSERT ON runs BEGIN
	UPDATE run_counts SET planned = planned + (NEW.status = 'planned'),
		running = running + (NEW.status = 'running'), ok = ok + (NEW.status = 'ok'),
		failed = failed + (NEW.status = 'failed'),
		interrupted = interrupted + (NEW.status = 'interrupted')
	WHERE configuration_id = NEW.configuration_id;
END;
CREATE TRIGGER run_counts_run_delete AFTER DELETE ON runs BEGIN
	UPDATE run_counts SET planned = planned - (OLD.status = 'planned'),
		running = running - (OLD.status = 'running'), ok = ok - (OLD.status = 'ok'),
		failed = failed - (OLD.status = 'failed'),
		interrupted = interrupted - (OLD.status = 'interrupted')
	WHERE configuration_id = OLD.configuration_id;
END;
CREATE TRIGGER run_counts_run_update AFTER UPDATE OF status, configuration_id ON runs
WHEN OLD.status IS NOT NEW.status OR OLD.configuration_id IS NOT NEW.configuration_id BEGIN
	UPDATE run_counts SET planned = planned - (OLD.status = 'planned'),
		running = running - (OLD.status = 'running'), ok = ok - (OLD.status = 'ok'),
		failed = failed - (OLD.status = 'failed'),
		interrupted = interrupted - (OLD.status = 'interrupted')
	WHERE configuration_id = OLD.configuration_id;
	UPDATE run_counts SET planned = planned + (NEW.status = 'planned'),
		running = running + (NEW.status = 'running'), ok = ok + (NEW.status = 'ok'),
		failed = failed + (NEW.status = 'failed'),
		interrupted = interrupted + (NEW.status = 'interrupted')
	WHERE configuration_id = NEW.configuration_id;
END;

-- @migration 11
-- Exit handling time per run and reason (collectors/gang.h): how many of a
-- row's exits were timed (exit to the vCPU's next entry) and their summed
-- time in nanoseconds.  NULL: not timed (user-space exits; a trace without
-- entry events, or one that lost events where no time may span them).
ALTER TABLE exit_counts ADD COLUMN time_pairs INTEGER
	CHECK (time_pairs IS NULL OR time_pairs >= 0);
ALTER TABLE exit_counts ADD COLUMN time_ns INTEGER CHECK (time_ns IS NULL OR time_ns >= 0);

-- @migration 12
-- The controller of each experiment that runs here: the host it drives
-- (the machine's name and the host lock's key of its root, hostlock.h) and
-- its process (pid and start time, against a reused pid), so that a second
-- experiment on that host is refused while this one's controller lives,
-- whatever lock either took (schema/db-controller.h).
CREATE TABLE controllers (
	experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
	host TEXT NOT NULL,
	pid INTEGER NOT NULL,
	pid_start INTEGER NOT NULL
);
CREATE INDEX controllers_host ON controllers(host);

-- A distributed sweep may also run over ssh (experiments/sshexec.h).
CREATE TABLE distributed_v12 (
	experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
	kind TEXT NOT NULL CHECK (kind IN ('slurm', 'ssh')),
	tag TEXT NOT NULL UNIQUE,
	work_dir TEXT NOT NULL,
	settings TEXT NOT NULL CHECK (json_valid(settings))
);
INSERT INTO distributed_v12 SELECT experiment_id, kind, tag, work_dir, settings FROM distributed;
DROP TABLE distributed;
ALTER TABLE distributed_v12 RENAME TO distributed;
