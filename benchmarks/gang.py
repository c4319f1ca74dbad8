"""Gang scheduling on a KTH window: utilisation, response, context-switch cost.

Usage::

    .venv/bin/python benchmarks/gang.py                      # KTH jobs 2800..3799
    .venv/bin/python benchmarks/gang.py --first 600 --jobs 500
    .venv/bin/python benchmarks/gang.py --instance instances/kth_50.json

Protocol: one window of the KTH SP2 trace (``../shared/traces``; default the
1,000 jobs from position 2800, no initial state, 100 processors, every job
in the default class ``production`` since the log has no queue numbers),
simulated by :func:`optsched.heuristics.preempt.gang.gang` with the default classes
(``gang_classes.toml``) and by EASY and FCFS (the engine) for reference.
Three context-switch costs: none, and 1 s and 4 s per processor
(``Machine.switch_cost_per_processor``: the T3D wrote a job's memory to
disk, so a 100-processor job pays 100 s or 400 s per resumption).

Columns: ``util`` = work / (m x span), span from the first release to the
last completion (:func:`optsched.metrics.utilisation`); ``held`` = the
same with the processor time of context switches counted (what the
machine was busy with); mean response ``C_j - r_j`` and mean bounded
slowdown (tau = 10 s) in seconds; makespan from the first release;
``resumes`` = pieces - jobs; ``switch`` = share of held processor time spent
switching; ``mpl`` = most jobs ever in progress on one processor
(:func:`optsched.check.max_jobs_per_processor`: the memory a processor must
keep). Every schedule goes through :func:`optsched.check.check_schedule`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from optsched import metrics
from optsched.check import check_schedule, max_jobs_per_processor, migrations
from optsched.heuristics import simulate
from optsched.heuristics.preempt.gang import gang
from optsched.instance import Instance
from optsched.schedule import Schedule

HERE = Path(__file__).resolve().parent
TRACE = HERE.parent.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf"
COSTS = (0, 1, 4)
"""Context-switch costs, seconds per processor."""


def window(args: argparse.Namespace) -> Instance:
    """The instance of the run: a file, or a window of the KTH trace."""
    from optsched.io import read, read_trace
    from optsched.windows.window import cut_window

    if args.instance:
        return read(args.instance)
    return cut_window(read_trace(args.trace), first_job=args.first, jobs=args.jobs)


def row(name: str, cost: int, inst: Instance, s: Schedule, seconds: float) -> str:
    violations = check_schedule(inst, s)
    assert violations == [], violations[:3]
    assert migrations(s) == []
    jobs = [s[j.id] for j in inst.jobs]
    span = max(p.end for p in jobs) - min(j.release for j in inst.jobs)
    held = sum(j.size * s[j.id].held for j in inst.jobs)
    switched = sum(j.size * s[j.id].switch_cost for j in inst.jobs)
    resumes = sum(max(len(p.pieces) - 1, 0) for p in jobs)
    cells = [
        name,
        f"{cost}",
        f"{metrics.utilisation(inst, s):.3f}",
        f"{held / (inst.processors * span):.3f}",
        f"{metrics.responses(inst, s).mean():,.0f}",
        f"{metrics.bounded_slowdowns(inst, s).mean():.2f}",
        f"{metrics.makespan(inst, s, relative=True):,}",
        f"{resumes:,}",
        f"{switched / held:.3f}" if held else "0",
        f"{max_jobs_per_processor(inst, s)}",
        f"{seconds:.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--first", type=int, default=2800)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--instance", help="an instance file instead of the trace")
    parser.add_argument("--quantum", type=int, default=600)
    args = parser.parse_args()
    base = window(args)
    print(f"instance {base.name}: {len(base.jobs)} jobs, m = {base.processors}")
    print()
    print(
        "| policy | switch s/proc | util | held | mean response s | mean bsld "
        "| makespan s | resumes | switch | mpl | run s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs: list[tuple[str, dict[str, object]]] = [
        (f"gang {p}, q={args.quantum}", {"packing": p, "quantum": args.quantum})
        for p in ("first-fit", "best-fit", "buddy")
    ]
    runs += [
        (f"gang first-fit, q={q}", {"packing": "first-fit", "quantum": q})
        for q in (60, 3600)
    ]
    runs.append(
        (
            f"gang first-fit, q={args.quantum}, no alternative",
            {"packing": "first-fit", "quantum": args.quantum, "alternative": False},
        )
    )
    for cost in COSTS:
        machine = base.machine.replace(switch_cost_per_processor=cost)
        inst = base.replace(machine=machine)
        for name, options in runs:
            began = time.perf_counter()
            s = gang(inst, **options)  # type: ignore[arg-type]
            print(row(name, cost, inst, s, time.perf_counter() - began))
    for policy in ("easy", "fcfs"):
        began = time.perf_counter()
        s = simulate(base, policy).schedule
        print(row(policy, 0, base, s, time.perf_counter() - began))


if __name__ == "__main__":
    main()
