# Shared by the scripts that run inside the emulated POWER host (sourced).

# record_beside DAT OUT ERR CMD...: runs CMD (stdout to OUT, stderr to ERR)
# while trace-cmd records the kvm_hv events and kvm:kvm_userspace_exit into
# DAT, so that topoadvisor's own counts can be checked against trace-cmd's
# file of the same events.  trace-cmd starts CMD itself, from its child
# that has just switched tracing on: CMD never runs before trace-cmd
# records, however slowly trace-cmd sets up on the emulated host (waiting
# for its "Hit Ctrl^C" line could not tell: that line is buffered until it
# exits).  Returns CMD's status; prints trace-cmd's.
record_beside() {
	dat=$1
	out=$2
	err=$3
	shift 3
	rm -f /tmp/rec.rc
	trace-cmd record -e kvm_hv -e kvm:kvm_userspace_exit -o "$dat" \
		sh -c 'o=$1 e=$2; shift 2; "$@" >"$o" 2>"$e"; echo $? >/tmp/rec.rc' \
		sh "$out" "$err" "$@" >/tmp/rec.log 2>&1
	echo "trace-cmd exit $?"
	tail -n 3 /tmp/rec.log
	rc=$(cat /tmp/rec.rc 2>/dev/null) || rc=125
	return "$rc"
}
