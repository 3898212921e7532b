# Shared by the SSH executor's suites (sourced after tests/lib.sh and
# ta_tmpdir): up to 9 "hosts" tassh-hN on this machine, each a real sshd
# (OpenSSH) in its own network namespace ta-ssh-hN and UTS namespace
# (hostname tassh-hN), on a bridge ta-ssh-br, sharing the filesystem (so
# the same topoadvisor path works everywhere); a host key and a client key
# made here; an ssh config naming every host (User, IdentityFile, the
# known host key: what a lab puts in ~/.ssh/config); one fake sysfs root per
# host; a benchmark that reads its host's knob and waits while a gate file
# for its host exists.  ssh_cleanup (set as the EXIT trap) ends every
# process of our namespaces and removes namespaces, links and files, also on
# failure.  Names: ta-ssh-* (the Slurm suites use ta-slurm-* / ta-sl-*).
SSH_BR=ta-ssh-br
SSH_NET=10.199.74
SSH_DIR=$tmp/ssh
export ROOTS="$tmp/roots" GATES="$tmp/gates"
db=$tmp/t.db
ta() { "$TOPOADVISOR" --db "$db" "$@"; }
q() { sqlite3 "$db" "$1"; }
mkdir -p "$SSH_DIR" "$GATES" "$tmp/nodes"
chmod 700 "$SSH_DIR"
made_run_sshd=
bg=

# ssh_kill_host N: every process of host N's namespace, SIGKILL (a host lost).
ssh_kill_host() {
	ns=ta-ssh-h$1
	[ -e "/run/netns/$ns" ] || return 0
	for round in 1 2 3 4 5; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] || return 0
		kill -KILL $pids 2>/dev/null
		sleep 0.2
	done
}

ssh_cleanup() {
	for p in $bg; do kill -KILL "$p" 2>/dev/null; done
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^ta-ssh-h'); do
		ssh_kill_host "${ns#ta-ssh-h}"
		ip netns delete "$ns" 2>/dev/null
	done
	for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
		   grep -e '^ta-ssh-'); do
		ip link delete "$l" 2>/dev/null
	done
	# ssh masters of a killed controller, their directories, and what the
	# workers killed with their hosts left in /tmp (ours: not there before).
	if [ -f "$db" ]; then
		for tag in $(sqlite3 "$db" "SELECT tag FROM distributed" 2>/dev/null); do
			for p in $(pgrep -f "ControlPath=/tmp/ta-ssh-$tag/" 2>/dev/null); do
				kill -KILL "$p" 2>/dev/null
			done
			rm -rf "/tmp/ta-ssh-$tag"
		done
	fi
	for d in /tmp/topoadvisor-block.*; do
		[ -d "$d" ] || continue
		case "
${stream_dirs:-}
" in *"
$d
"*) ;; *) rm -rf "$d" ;; esac
	done
	[ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null
	rm -rf "$tmp"
}

# ssh_hosts N: starts hosts tassh-h1..N.
ssh_hosts() {
	ssh_cleanup_leftovers
	if [ ! -d /run/sshd ]; then
		mkdir -m 755 /run/sshd && made_run_sshd=1
	fi
	ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/hostkey" || fail "ssh-keygen (host)"
	ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/id" || fail "ssh-keygen (client)"
	cp "$SSH_DIR/id.pub" "$SSH_DIR/authorized_keys"
	ip link add "$SSH_BR" type bridge || fail "cannot add bridge $SSH_BR"
	ip addr add "$SSH_NET.1/24" dev "$SSH_BR"
	ip link set "$SSH_BR" up
	: >"$SSH_DIR/config"
	: >"$SSH_DIR/known_hosts"
	i=1
	while [ $i -le "$1" ]; do
		ip netns add "ta-ssh-h$i" || fail "cannot add namespace ta-ssh-h$i"
		ip link add "ta-ssh-$i" type veth peer name "ta-ssh-$i-p"
		ip link set "ta-ssh-$i-p" netns "ta-ssh-h$i"
		ip link set "ta-ssh-$i" master "$SSH_BR" up
		ip -n "ta-ssh-h$i" link set lo up
		ip -n "ta-ssh-h$i" link set "ta-ssh-$i-p" name eth0
		ip -n "ta-ssh-h$i" addr add "$SSH_NET.$((10 + i))/24" dev eth0
		ip -n "ta-ssh-h$i" link set eth0 up
		cat >"$SSH_DIR/sshd-h$i.conf" <<CONF
Port 22
ListenAddress $SSH_NET.$((10 + i))
HostKey $SSH_DIR/hostkey
PidFile $SSH_DIR/sshd-h$i.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 20
MaxStartups 50
CONF
		cat >>"$SSH_DIR/config" <<CONF
Host tassh-h$i
	HostName $SSH_NET.$((10 + i))
	User root
	IdentityFile $SSH_DIR/id
	IdentitiesOnly yes
	UserKnownHostsFile $SSH_DIR/known_hosts
	StrictHostKeyChecking yes
	LogLevel ERROR
CONF
		echo "$SSH_NET.$((10 + i)) $(cut -d' ' -f1,2 "$SSH_DIR/hostkey.pub")" >>"$SSH_DIR/known_hosts"
		mkdir -p "$ROOTS/tassh-h$i/sys/module/kvm_hv/parameters"
		echo 6 >"$ROOTS/tassh-h$i/sys/module/kvm_hv/parameters/dynamic_mt_modes"
		nsenter --net="/run/netns/ta-ssh-h$i" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
			"tassh-h$i" /usr/sbin/sshd -f "$SSH_DIR/sshd-h$i.conf" -E "$SSH_DIR/sshd-h$i.log" ||
			fail "sshd tassh-h$i did not start: $(cat "$SSH_DIR/sshd-h$i.log")"
		i=$((i + 1))
	done
	i=1
	while [ $i -le "$1" ]; do
		n=0
		until ssh -F "$SSH_DIR/config" -o BatchMode=yes "tassh-h$i" hostname >"$tmp/hn" 2>"$tmp/hn.err" &&
			[ "$(cat "$tmp/hn")" = "tassh-h$i" ]; do
			n=$((n + 1))
			[ $n -lt 50 ] || fail "tassh-h$i does not answer: $(cat "$tmp/hn.err" "$SSH_DIR/sshd-h$i.log")"
			sleep 0.1
		done
		i=$((i + 1))
	done
}

# Namespaces or links of an earlier run of this suite that died unseen.
ssh_cleanup_leftovers() {
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^ta-ssh-h'); do
		ssh_kill_host "${ns#ta-ssh-h}"
		ip netns delete "$ns" 2>/dev/null
	done
	for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^ta-ssh-'); do
		ip link delete "$l" 2>/dev/null
	done
}

# wait_until SECONDS CMD...: polls every 0.05 s, fails the test after SECONDS.
wait_until() {
	limit=$(( $1 * 20 )); shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt "$limit" ] || fail "timed out waiting for: $*"
		sleep 0.05
	done
}

# The benchmark: ops from its host's dynamic_mt_modes (2 far worse than 6);
# waits while $GATES/HOST exists; then sleeps $1 s.
cat >"$tmp/bench" <<EOF
#!/bin/sh
node=\$(hostname)
while [ -e "$GATES/\$node" ]; do sleep 0.02; done
k=\$(cat "$ROOTS/\$node/sys/module/kvm_hv/parameters/dynamic_mt_modes")
sleep "\${1:-0}"
echo "throughput: \$(( k == 2 ? 50 : 100 )) ops/s"
EOF
chmod +x "$tmp/bench"

worker_db_on() { [ -n "$(find "$tmp/nodes/$1" -name '*.db' 2>/dev/null)" ]; }

# ssh_sweep NAME REPS SLEEP HOSTS...: $tmp/NAME.yaml, two dynamic_mt_modes values.
ssh_sweep() {
	name=$1 reps=$2 sl=$3; shift 3
	hosts=$(echo "$@" | sed 's/ /, /g')
	cat >"$tmp/$name.yaml" <<YAML
name: $name
guest: {runner: host}
topology: [1x1x1]
host:
  kvm_hv.dynamic_mt_modes: [2, 6]
benchmark:
  kind: command
  argv: ["$tmp/bench", "$sl"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
collect: {gang_exits: false, exit_reasons: false}
repetitions: $reps
seed: 11
executor: {kind: ssh, hosts: [$hosts], ssh_config: "$SSH_DIR/config", node_dir: "$tmp/nodes",
           max_attempts: 3}
YAML
}

run_failed() {
	cat "$tmp/err" >&2
	q "SELECT block, attempt, node, state, error FROM block_attempts" >&2
	q "SELECT c.key, r.repetition, r.host, r.status, r.error FROM runs r JOIN configurations c
	   ON c.id = r.configuration_id WHERE r.status <> 'ok'" >&2
	fail "$1"
}

exp_of() { q "SELECT MAX(id) FROM experiments WHERE name = '$1'"; }

# check_blocks EXP BLOCKS CONFIGS: every (configuration, repetition) stored
# exactly once and ok, every block ingested once from one host, no two runs
# at once on one host, every run measured under its own knob.
check_blocks() {
	e=$1
	[ "$(q "SELECT COUNT(*), COUNT(DISTINCT block) FROM block_attempts WHERE experiment_id = $e AND outcome = 'ingested'")" = "$2|$2" ] ||
		fail "exp $e: ingested attempts: $(q "SELECT block, attempt, node, state, outcome FROM block_attempts WHERE experiment_id = $e")"
	runs="SELECT r.*, c.key AS key FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $e"
	[ "$(q "SELECT COUNT(*), SUM(status = 'ok'), COUNT(DISTINCT key || '/' || repetition) FROM ($runs)")" = "$(( $2 * $3 ))|$(( $2 * $3 ))|$(( $2 * $3 ))" ] ||
		fail "exp $e runs: $(q "SELECT key, repetition, status, host, error FROM ($runs)")"
	[ "$(q "SELECT COUNT(*) FROM (SELECT repetition FROM ($runs) GROUP BY repetition HAVING COUNT(DISTINCT host) <> 1)")" = 0 ] ||
		fail "exp $e: a block's runs come from several hosts"
	[ "$(q "SELECT COUNT(*) FROM ($runs) a, ($runs) b WHERE a.host = b.host AND a.id <> b.id
		AND a.started_at < b.finished_at AND b.started_at < a.finished_at")" = 0 ] ||
		fail "exp $e: two runs overlapped on one host"
	[ "$(q "SELECT COUNT(*) FROM ($runs) r JOIN metrics m ON m.run_id = r.id
		WHERE m.name = 'ops' AND m.value <> (CASE WHEN r.key LIKE '%=2%' THEN 50 ELSE 100 END)")" = 0 ] ||
		fail "exp $e: a run measured under another knob: $(q "SELECT r.key, m.value FROM ($runs) r JOIN metrics m ON m.run_id = r.id")"
}

hosts_of() {
	q "SELECT COUNT(DISTINCT r.host) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $1"
}
