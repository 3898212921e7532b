#!/bin/sh
# The SSH executor on three real sshd "hosts" (tests/ssh-lib.sh: OpenSSH in
# network and UTS namespaces, keys made here, one fake sysfs root each):
#  1. a sweep across them: every (configuration, repetition) stored exactly
#     once and ok, on >= 2 hosts, no two runs at once on one host, every
#     host's knob put back, no worker database left;
#  2. a host killed mid-block (every process of its namespace: sshd and the
#     worker): its attempt fails, the block runs again on another host,
#     nothing lost or doubled;
#  3. the controller killed (SIGKILL) mid-sweep, then `resume`: every run
#     stored once;
#  4. `resume` of a sweep whose blocks came back with failed runs: those
#     blocks are done (their results stored), nothing runs again;
# and nothing is left: daemons, namespaces, links, ssh masters.
# Run it under flock /tmp/ta-suite.lock (namespaces and daemons are global).
. "$TA_TOP/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, sshd)"
for b in /usr/sbin/sshd ssh ssh-keygen ip nsenter unshare sqlite3; do
	command -v "$b" >/dev/null || skip "$b not installed (scripts/deps.sh check: openssh-server)"
done
ta_tmpdir
. "$TA_TOP/tests/ssh-lib.sh"
trap ssh_cleanup EXIT
# A worker killed with its host (SIGKILL) leaves its request here: ours are removed.
stream_dirs=$(ls -d /tmp/topoadvisor-block.* 2>/dev/null)
ssh_hosts 3
H="tassh-h1 tassh-h2 tassh-h3"

# ---- 1: a sweep across the hosts ---------------------------------------------
ssh_sweep spread 6 0.3 $H
ta -q run --root "$ROOTS/%n" "$tmp/spread.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "spread: run failed"
e=$(exp_of spread)
check_blocks "$e" 6 2
[ "$(hosts_of "$e")" -ge 2 ] || fail "runs on fewer than 2 hosts"
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e")" = 6 ] ||
	fail "spread attempts: $(q "SELECT block, attempt, node, state FROM block_attempts WHERE experiment_id = $e")"
for n in $H; do
	[ "$(cat "$ROOTS/$n/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] || fail "$n: knob not restored"
done
[ -z "$(find "$tmp/nodes" -name '*.db')" ] || fail "a worker left its database"
[ "$(ls -d /tmp/topoadvisor-block.* 2>/dev/null)" = "$stream_dirs" ] ||
	fail "a streaming worker left its directory"

# ---- 2: a host killed mid-block ------------------------------------------------
ssh_sweep hostloss 3 0.1 $H
touch "$GATES/tassh-h1"
"$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/hostloss.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 60 worker_db_on tassh-h1
ssh_kill_host 1
rm -f "$GATES/tassh-h1"
wait "$pid" || run_failed "hostloss: run failed"
e=$(exp_of hostloss)
check_blocks "$e" 3 2
lost=$(q "SELECT block FROM block_attempts WHERE experiment_id = $e AND node = 'tassh-h1' AND state = 'failed' AND outcome IS NULL")
[ -n "$lost" ] || fail "no failed attempt on the killed host: $(q "SELECT block, attempt, node, state, error FROM block_attempts WHERE experiment_id = $e")"
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND block = $(echo "$lost" | head -n 1)
	AND outcome = 'ingested' AND node <> 'tassh-h1'")" = 1 ] || fail "the lost block was not run again elsewhere"
q "SELECT error FROM block_attempts WHERE experiment_id = $e AND node = 'tassh-h1' AND state = 'failed'" |
	grep -q "connection was lost" || fail "the cause is not said: $(q "SELECT error FROM block_attempts WHERE experiment_id = $e")"

# ---- 3: the controller killed, then resume -------------------------------------
# Host 1 is dead: the sweep runs on hosts 2 and 3 (and says host 1 fails).
ssh_sweep ctlkill 4 0.1 $H
touch "$GATES/tassh-h2" "$GATES/tassh-h3"
"$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/ctlkill.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 60 worker_db_on tassh-h2
wait_until 60 worker_db_on tassh-h3
kill -KILL "$pid"
wait "$pid" 2>/dev/null
rm -f "$GATES/tassh-h2" "$GATES/tassh-h3"
e=$(exp_of ctlkill)
ta -q resume --root "$ROOTS/%n" "$e" >/dev/null 2>"$tmp/err" || run_failed "resume failed"
check_blocks "$e" 4 2
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND error = 'the controller stopped during this attempt'")" -ge 2 ] ||
	fail "the killed controller's attempts: $(q "SELECT block, attempt, node, state, error FROM block_attempts WHERE experiment_id = $e")"
for n in tassh-h2 tassh-h3; do
	[ "$(cat "$ROOTS/$n/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] || fail "$n: knob not restored"
done

# ---- 4: resume after a block stored with failed runs: nothing runs again -----------
ssh_sweep failing 2 0 tassh-h2 tassh-h3
sed -i "s|argv: \[\"$tmp/bench\", \"0\"\]|argv: [\"false\"]|" "$tmp/failing.yaml"
grep -q 'argv: \["false"\]' "$tmp/failing.yaml" || fail "failing.yaml"
ta -q run --root "$ROOTS/%n" "$tmp/failing.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || run_failed "a sweep of failing runs did not exit 1"
e=$(exp_of failing)
timeout -s KILL 120 "$TOPOADVISOR" --db "$db" -q resume --root "$ROOTS/%n" "$e" >/dev/null 2>"$tmp/err"
[ $? -ne 137 ] || fail "resume of stored blocks with failed runs never ended"
[ "$(q "SELECT COUNT(*), SUM(outcome = 'ingested') FROM block_attempts WHERE experiment_id = $e")" = "2|2" ] ||
	fail "blocks with stored results ran again: $(q "SELECT block, attempt, node, state, outcome FROM block_attempts WHERE experiment_id = $e")"

# ---- nothing left behind --------------------------------------------------------
for tag in $(q "SELECT tag FROM distributed"); do
	pgrep -f "ControlPath=/tmp/ta-ssh-$tag/" >/dev/null && fail "ssh masters left: $(pgrep -af "ta-ssh-$tag")"
	[ ! -e "/tmp/ta-ssh-$tag" ] || fail "the control directory /tmp/ta-ssh-$tag is left"
done
ssh_cleanup
trap - EXIT
[ -z "$(ip netns list | grep '^ta-ssh-')" ] || fail "namespaces left: $(ip netns list)"
[ -z "$(ip -o link show | grep ' ta-ssh-')" ] || fail "links left"
pgrep -f "$SSH_DIR" >/dev/null && fail "daemons left: $(pgrep -af "$SSH_DIR")"
pass
