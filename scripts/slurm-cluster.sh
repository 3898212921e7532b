#!/bin/sh
# A throw-away Slurm cluster on this machine, for the Slurm executor's tests:
# munged, a slurmctld and N slurmd "hosts", each daemon in its own network
# namespace (own address, own hostname through a UTS namespace) on a private
# bridge, all sharing the filesystem.  No systemd, no cgroups, no accounting.
#
#   scripts/slurm-cluster.sh start DIR [N]   N nodes (default 3): tasl-n1..N;
#                                            prints SLURM_CONF's value
#   scripts/slurm-cluster.sh stop DIR        everything start made, gone
#   scripts/slurm-cluster.sh kill-node DIR NODE
#                                            every process of that node
#                                            (slurmd, its jobs) SIGKILLed
#   scripts/slurm-cluster.sh sweep-leftovers removes what a crashed earlier
#                                            test left (our names only)
#
# Root only.  Names are fixed and recognisable (bridge ta-slurm-br, namespaces
# ta-slurm-*, veths ta-sl-*, nodes tasl-*), which is safe because every suite
# using the cluster holds /tmp/ta-suite.lock; start first removes what a crashed
# run left under those names.  Daemons are stopped by the pids they wrote; a
# node's processes are those in its namespace (ip netns pids).  Every wait is
# bounded.  Measured here: up in ~3 s, down in ~1.5 s.
#
# Pitfalls (DESIGN.md 5.6): daemons start under nsenter --net, never
# `ip netns exec` (its private /sys hides the cgroup mount and slurmd exits);
# the munge key directory is 0700, its socket directory world-traversable;
# each node's SlurmdSpoolDir (%n) must exist first; SLURM_CONF must always be
# exported (without it clients try DNS SRV records).
set -eu

BR=ta-slurm-br
NET=10.199.73
PORT_CTLD=16817
PORT_SLURMD=16818

die() { echo "slurm-cluster: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, daemons)"

# wait_for SECONDS CMD...: polls CMD every 0.1 s; fails after SECONDS.
wait_for() {
	limit=$(( $1 * 10 )); shift
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt "$limit" ] || return 1
		sleep 0.1
	done
}

# Ends the process whose pid is in file $1 (TERM, then KILL after 3 s).
stop_pidfile() {
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	case "$pid" in ''|*[!0-9]*) return 0 ;; esac
	kill -TERM "$pid" 2>/dev/null || return 0
	wait_for 3 sh -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null || true
}

# Kills every process in network namespace $1 and waits (3 s at most) until none is left.
kill_netns() {
	[ -e "/run/netns/$1" ] || return 0
	for round in 1 2 3; do
		pids=$(ip netns pids "$1" 2>/dev/null || true)
		[ -n "$pids" ] || return 0
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		wait_for 1 sh -c "[ -z \"\$(ip netns pids $1 2>/dev/null)\" ]" && return 0
	done
}

# What a crashed run left under our names: namespaces (and their processes),
# links, the bridge.
sweep_leftovers() {
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^ta-slurm-' || true); do
		kill_netns "$ns"
		ip netns delete "$ns" 2>/dev/null || true
	done
	for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
		   grep -e '^ta-sl-' -e "^$BR\$" || true); do
		ip link delete "$l" 2>/dev/null || true
	done
}

write_conf() { # dir n
	d=$1 n=$2
	cat >"$d/slurm.conf" <<EOF
# Written by scripts/slurm-cluster.sh: a test cluster, not a template
# (docs/config.md has a lab's minimal slurm.conf).
ClusterName=tasl
SlurmctldHost=tasl-ctl($NET.10)
SlurmctldPort=$PORT_CTLD
SlurmdPort=$PORT_SLURMD
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge-run/munge.socket,cred_expire=10
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=10
SlurmctldTimeout=10
InactiveLimit=0
MinJobAge=600
KillWait=10
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=5,bf_interval=5
SelectType=select/linear
NodeName=DEFAULT CPUs=1 RealMemory=100 State=UNKNOWN
EOF
	i=1
	while [ $i -le "$n" ]; do
		echo "NodeName=tasl-n$i NodeAddr=$NET.$((10 + i)) NodeHostname=tasl-n$i" >>"$d/slurm.conf"
		i=$((i + 1))
	done
	echo "PartitionName=ta Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$d/slurm.conf"
}

# netns NAME ADDR: a namespace on the bridge with ADDR, loopback up.
add_netns() {
	ip netns add "ta-slurm-$1"
	ip link add "ta-sl-$1" type veth peer name "ta-sl-$1-p"
	ip link set "ta-sl-$1-p" netns "ta-slurm-$1"
	ip link set "ta-sl-$1" master "$BR" up
	ip -n "ta-slurm-$1" link set lo up
	ip -n "ta-slurm-$1" link set "ta-sl-$1-p" name eth0
	ip -n "ta-slurm-$1" addr add "$2/24" dev eth0
	ip -n "ta-slurm-$1" link set eth0 up
}

# in_host NAME HOSTNAME CMD...: runs CMD in namespace ta-slurm-NAME with its own hostname.
in_host() {
	ns=$1 host=$2; shift 2
	nsenter --net="/run/netns/ta-slurm-$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
		"$host" "$@"
}

start() { # dir n
	d=$1 n=$2
	sweep_leftovers
	mkdir -p "$d/ctld" "$d/run" "$d/log" "$d/munge-key" "$d/munge-run" "$d/munge-lib"
	chmod 0700 "$d/munge-key"
	chmod 0755 "$d" "$d/munge-run"
	dd if=/dev/urandom of="$d/munge-key/munge.key" bs=1024 count=1 2>/dev/null
	chmod 0400 "$d/munge-key/munge.key"
	write_conf "$d" "$n"
	munged --force --key-file="$d/munge-key/munge.key" --socket="$d/munge-run/munge.socket" \
		--pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" \
		--seed-file="$d/munge-lib/munged.seed" ||
		die "munged did not start: $(tail -n 3 "$d/log/munged.log" 2>/dev/null)"
	wait_for 5 test -S "$d/munge-run/munge.socket" || die "munged has no socket"

	ip link add "$BR" type bridge
	ip addr add "$NET.1/24" dev "$BR"
	ip link set "$BR" up
	add_netns ctl "$NET.10"
	i=1
	while [ $i -le "$n" ]; do
		add_netns "n$i" "$NET.$((10 + i))"
		mkdir -p "$d/spool/tasl-n$i"
		i=$((i + 1))
	done

	export SLURM_CONF="$d/slurm.conf"
	in_host ctl tasl-ctl slurmctld -f "$SLURM_CONF" -i ||
		die "slurmctld did not start: $(tail -n 5 "$d/log/slurmctld.log" 2>/dev/null)"
	wait_for 10 scontrol ping || die "slurmctld does not answer: $(tail -n 5 "$d/log/slurmctld.log")"
	i=1
	while [ $i -le "$n" ]; do
		in_host "n$i" "tasl-n$i" slurmd -f "$SLURM_CONF" -N "tasl-n$i" ||
			die "slurmd tasl-n$i did not start: $(tail -n 5 "$d/log/slurmd-tasl-n$i.log")"
		i=$((i + 1))
	done
	wait_for 20 sh -c "[ \"\$(sinfo -h -N -t idle -o %N | wc -l)\" -eq $n ]" ||
		die "nodes not idle: $(sinfo -N 2>&1 | tail -n 5)"
	echo "$SLURM_CONF"
}

stop() { # dir
	d=$1
	if [ -f "$d/slurm.conf" ]; then
		for f in "$d"/run/slurmd-*.pid; do
			[ -e "$f" ] && stop_pidfile "$f"
		done
		stop_pidfile "$d/run/slurmctld.pid"
		stop_pidfile "$d/run/munged.pid"
	fi
	sweep_leftovers
	rm -rf "$d/ctld" "$d/run" "$d/log" "$d/spool" "$d/munge-key" "$d/munge-run" \
		"$d/munge-lib" "$d/slurm.conf"
}

case "${1:-}" in
start)
	[ $# -ge 2 ] || die "usage: $0 start DIR [N]"
	start "$2" "${3:-3}" ;;
stop)
	[ $# -eq 2 ] || die "usage: $0 stop DIR"
	stop "$2" ;;
kill-node)
	[ $# -eq 3 ] || die "usage: $0 kill-node DIR NODE"
	kill_netns "ta-slurm-${3#tasl-}" ;;
sweep-leftovers)
	sweep_leftovers ;;
*)
	die "usage: $0 start DIR [N] | stop DIR | kill-node DIR NODE | sweep-leftovers" ;;
esac
