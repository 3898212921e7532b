# Shared by the fake Slurm tools (sourced): a job table in $FAKE_SLURM_DIR,
# one directory per job (name, state, node, argv, output, pid, rc), nodes
# from $FAKE_SLURM_NODES, one job per node (--exclusive), every change made
# under flock $FAKE_SLURM_DIR/lock.  Faults are files in $FAKE_SLURM_DIR/faults
# holding a count; take_fault decrements one.
d=${FAKE_SLURM_DIR:?set FAKE_SLURM_DIR}
mkdir -p "$d/jobs" "$d/faults" "$d/down"

# take_fault NAME: true (and one fewer left) when fault NAME has a count > 0.
take_fault() {
	f="$d/faults/$1"
	[ -s "$f" ] || return 1
	n=$(cat "$f")
	[ "$n" -gt 0 ] 2>/dev/null || return 1
	echo $((n - 1)) >"$f"
	return 0
}

# Whether job $1 still runs: started, no exit status, not ended by a fault or scancel.
job_running() {
	[ -f "$d/jobs/$1/pid" ] && [ ! -f "$d/jobs/$1/rc" ] && [ ! -f "$d/jobs/$1/final" ]
}

node_busy() {
	for nb_dir in "$d"/jobs/*; do
		[ -d "$nb_dir" ] || continue
		[ "$(cat "$nb_dir/node" 2>/dev/null)" = "$1" ] && job_running "${nb_dir##*/}" &&
			return 0
	done
	return 1
}

# Starts job $1 on node $2 in a session of its own, as Slurm would, with
# the job's environment (SLURMD_NODENAME, SLURM_JOB_ID).  Returns once the
# job has left our process group (the tool calling us may end that group).
job_start() {
	j="$d/jobs/$1"
	echo "$2" >"$j/node"
	out=$(sed "s/%j/$1/g" "$j/output")
	(
		cd "$(cat "$j/chdir")" || exit 1
		export SLURMD_NODENAME="$2" SLURM_JOB_ID="$1"
		# shellcheck disable=SC2046
		setsid sh -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1"; rc_file=$2; shift 2
			"$@"; echo $? >"$rc_file"' sh "$j/pid" "$j/rc" \
			$(cat "$j/argv") >"$out" 2>&1 </dev/null 9>&- &
	)
	i=0
	while [ ! -s "$j/pid" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# Starts pending jobs on free nodes (not down), oldest first; a job whose
# name matches a line of faults/hold stays pending, a hidden one too.
schedule() {
	for id in $(ls "$d/jobs" 2>/dev/null | sort -n); do
		j="$d/jobs/$id"
		[ -f "$j/pid" ] || [ -f "$j/final" ] && continue
		# Not registered yet (sbatch-hidden): neither listed nor started.
		[ "$(cat "$j/hidden" 2>/dev/null || echo 0)" -gt 0 ] && continue
		if [ -s "$d/faults/hold" ] && grep -qF -f "$d/faults/hold" "$j/name"; then
			continue
		fi
		for n in $FAKE_SLURM_NODES; do
			[ -e "$d/down/$n" ] && continue
			grep -qx "$n" "$j/exclude" 2>/dev/null && continue
			node_busy "$n" && continue
			job_start "$id" "$n"
			break
		done
	done
}

# The Slurm state of job $1.
job_state() {
	j="$d/jobs/$1"
	if [ -f "$j/final" ]; then cat "$j/final"
	elif [ -f "$j/rc" ]; then [ "$(cat "$j/rc")" = 0 ] && echo COMPLETED || echo FAILED
	elif [ -f "$j/pid" ]; then echo RUNNING
	else echo PENDING
	fi
}
