#!/bin/sh
# Offline, on recordings of a real kvm_hv (tests/fixtures/real/, recorded by
# tests/power8/record-fixtures.sh on Debian's ppc64el kernel under QEMU's
# powernv8 and powernv9): kvmppc-guest made a known number of hypercalls
# (its guest.json), each one `sc 1` exit (SYSCALL) and one
# KVM_EXIT_PAPR_HCALL to user space.
#   POWER8: ganged exits applicable; one process (the program's pid), every
#           core run one guest exit of one runnable vCPU, so no gang exit
#           and no bail-out, with both gang rules; user-space exits charged
#           to that process too.
#   POWER9: kvmppc_run_core never fires: gang exits "not applicable" (null,
#           never 0) while the exit reasons are still counted.
#   POWER8 with two threads per core, patched and unpatched: see the end.
# The committed event format files are the ones the recording carries.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
fx=$TA_TOP/tests/fixtures/real
command -v python3 >/dev/null || skip "python3 not installed (scripts/deps.sh)"

for m in power8 power9; do
	d=$fx/$m
	for algo in vcore seed; do
		"$TOPOADVISOR" --json exits --algorithm "$algo" "$d/trace.dat" >"$tmp/$m.json" \
			2>"$tmp/err" || fail "$m $algo: exits exited $?: $(cat "$tmp/err")"
		python3 - "$tmp/$m.json" "$d/guest.json" "$m" "$algo" <<'PY' || fail "$m $algo: see above"
import json, sys
out = json.load(open(sys.argv[1]))
guest = json.load(open(sys.argv[2]))
machine, algo = sys.argv[3], sys.argv[4]
n, pid = guest["hcalls"], guest["pid"]
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
reasons = {(r["source"], r["name"]): r["count"] for r in out["exit_reasons"]}
want(reasons.get(("powerpc", "SYSCALL")) == n, f"SYSCALL exits {reasons.get(('powerpc', 'SYSCALL'))}, the program made {n} hypercalls")
want(reasons.get(("userspace", "PAPR_HCALL")) == n, f"PAPR_HCALL exits {reasons.get(('userspace', 'PAPR_HCALL'))}, wanted {n}")
want(out["lost_events"] == 0, "lost events")
power = sum(r["count"] for r in out["exit_reasons"] if r["source"] == "powerpc")
want(power == sum(p["guest_exits"] for p in out["processes"]),
     f"{power} exits by reason, {sum(p['guest_exits'] for p in out['processes'])} per process")
if machine == "power8":
    want(out["applicable"] is True, "gang exits should be applicable on POWER8")
    want([p["tgid"] for p in out["processes"]] == [pid], f"processes {[p['tgid'] for p in out['processes']]}, the program was {pid}")
    p = out["processes"][0] if out["processes"] else {}
    want(p.get("comm") == "kvmppc-guest", f"comm {p.get('comm')}")
    want(p.get("gang_exits") == 0, f"gang exits {p.get('gang_exits')} with one vCPU")
    want(p.get("bailouts") == 0, f"bailouts {p.get('bailouts')}")
    want(p.get("core_runs") == p.get("guest_exits") and p.get("core_runs", 0) >= n,
         f"core runs {p.get('core_runs')} vs guest exits {p.get('guest_exits')}")
    byv = [r for r in out["exit_reasons_by_vcpu"] if r["name"] == "PAPR_HCALL"]
    want([r["tgid"] for r in byv] == [pid], f"PAPR_HCALL charged to {[r['tgid'] for r in byv]}")
else:
    want(out["applicable"] is False, "gang exits must be not applicable on POWER9")
    want("kvmppc_run_core never fired" in out.get("why", ""), f"why: {out.get('why')}")
    want(all(p["gang_exits"] is None for p in out["processes"]), "gang exits must be null, never 0")
for b in bad:
    print(f"FAIL: {sys.argv[1]}: {b}")
sys.exit(1 if bad else 0)
PY
	done
	"$TOPOADVISOR" exits "$d/trace.dat" >"$tmp/$m.txt" || fail "$m: text output"
	if [ $m = power8 ]; then
		grep -q "^ *$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$d/guest.json")  *kvmppc-guest  *0 " \
			"$tmp/$m.txt" || fail "power8 text table: $(cat "$tmp/$m.txt")"
	else
		grep -q "not applicable" "$tmp/$m.txt" || fail "power9 text: $(cat "$tmp/$m.txt")"
	fi

	# The format files are this recording's own (trace-cmd prints the ones
	# the file carries: trace-cmd dump --events), with the fields DESIGN.md §4.1 names.
	if command -v trace-cmd >/dev/null; then
		for e in kvmppc_run_core kvm_guest_exit; do
			format_is_recorded "$d/trace.dat" "$e" "$d/formats/$e.format" ||
				fail "$m: $e.format differs from the recording's"
		done
	fi
	grep -q 'field:int n_runnable;' "$d/formats/kvmppc_run_core.format" || fail "$m: run_core format"
	grep -q 'field:u8 ceded;' "$d/formats/kvm_guest_exit.format" || fail "$m: guest_exit format"
done
grep -q POWER8 "$fx/power8/cpuinfo" && grep -q POWER9 "$fx/power9/cpuinfo" || fail "fixture CPUs"

# One vcore of two vCPUs on a POWER8 core of two threads (recorded by
# tests/power8/record-fixtures.sh --smt): with the patched kernel, whose
# secondary threads run, and with Debian's as it is, where n_runnable = 2
# is the kernel's bookkeeping for a secondary that never executes a guest
# instruction (tests/power8/smt_check.py says what each must show).
export TOPOADVISOR
python3 "$TA_TOP/tests/power8/smt_check.py" "$fx/power8-smt" smt || fail "power8-smt (above)"
python3 "$TA_TOP/tests/power8/smt_check.py" "$fx/power8-smt-stock" stock || fail "power8-smt-stock (above)"
for d in power8-smt power8-smt-stock; do
	if command -v trace-cmd >/dev/null; then
		for e in kvmppc_run_core kvm_guest_exit; do
			format_is_recorded "$fx/$d/spin-spin.dat" "$e" "$fx/$d/formats/$e.format" ||
				fail "$d: $e.format differs from the recording's"
		done
	fi
done
pass
