# gang-exits-seed.py: the seed RFC's perf script (shared/seeds/gang-exits-rfc.txt,
# tools/perf/scripts/python/gang_exits.py), ported to Python 3 for
# `perf script -s` and otherwise unchanged: the same per-tgid rule, the same
# output.  Used by the perf.data tests (as the reference for
# `topoadvisor exits --algorithm seed`) and by `make bench`.
#
# Two porting notes: print is a function; perf 6.1 passes common_callchain
# after common_comm, and the emulated events (uprobes) carry an extra
# __probe_ip field first, so the event's own fields are taken from the end
# of the argument list, where both the real and the emulated formats agree.
#
#   perf script -i perf.data -s gang-exits-seed.py

import os
import sys

sys.path.append(os.environ['PERF_EXEC_PATH'] +
                '/scripts/python/Perf-Trace-Util/lib/Perf/Trace')

from perf_trace_context import *  # noqa: F401,F403
from Core import *  # noqa: F401,F403

usage = "perf script -s gang-exits-seed.py\n"

stats = {}
pid_tgid = {}


def trace_begin():
    print("Ganged exits summary")


def trace_end():
    print_ganged_exits()


def kvm_hv__kvm_guest_exit(event_name, context, common_cpu,
                           common_secs, common_nsecs, common_pid, common_comm,
                           common_callchain, *fields):
    # vcpu_id, trap (reason), pc (nip), msr, ceded
    ceded = fields[-1]
    if common_pid in pid_tgid:
        if ceded:  # vcpu ceded ?
            stats[pid_tgid[common_pid]]['nr_cedes'] += ceded


def kvm_hv__kvmppc_run_core(event_name, context, common_cpu,
                            common_secs, common_nsecs, common_pid, common_comm,
                            common_callchain, *fields):
    n_runnable, runner_vcpu, where, tgid = fields[-4:]
    if (where):  # kvmppc_run_core: Exit
        if tgid in stats:
            forced = n_runnable - stats[tgid]['nr_cedes']
            if (forced > 1):
                stats[tgid]['gang-exits'] += 1
    else:  # kvmppc_run_core: Enter, init the counts
        if tgid in stats:
            stats[tgid]['nr_cedes'] = 0
        else:
            stats[tgid] = {'gang-exits': 0, 'nr_cedes': 0}
        if common_pid not in pid_tgid:
            pid_tgid[common_pid] = tgid


def print_ganged_exits():
    for i in stats.keys():
        print("\nGanged exits for process %d : %20d" % (i, stats[i]['gang-exits']))

    print("=======================================")
