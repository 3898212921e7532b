# Shared by the scripts that run inside the emulated POWER host (sourced).

# record_beside DAT OUT ERR CMD...: runs CMD (stdout to OUT, stderr to ERR)
# while trace-cmd records the kvm_hv events and kvm:kvm_userspace_exit into
# DAT, so that topoadvisor's own counts can be checked against trace-cmd's
# file of the same events.  Returns CMD's status; prints trace-cmd's.
record_beside() {
	dat=$1
	out=$2
	err=$3
	shift 3
	trace-cmd record -e kvm_hv -e kvm:kvm_userspace_exit -o "$dat" >/tmp/rec.log 2>&1 &
	rec=$!
	# trace-cmd has started recording once its per-CPU readers exist.
	i=0
	while [ $i -lt 100 ] && ! grep -q "Hit Ctrl" /tmp/rec.log 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	"$@" >"$out" 2>"$err"
	rc=$?
	kill -INT $rec
	wait $rec
	echo "trace-cmd exit $?"
	tail -n 3 /tmp/rec.log
	return $rc
}
