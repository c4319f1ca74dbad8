"""Simulator at archive scale (issue 16): a heavily queued 450k-job trace.

Usage::

    .venv/bin/python benchmarks/sim_scale.py run [--policies "easy;conservative"]
        [--copies 11.5] [--dump DIR] [--tree /work/snap16]
    .venv/bin/python benchmarks/sim_scale.py compare --old /work/snap16
        [--policies "easy;conservative"] [--copies 11.5] [--real]
        [--no-saturated]
    .venv/bin/python benchmarks/sim_scale.py counts [--copies 1]

The trace ("Atlas/4 saturated"): the largest partition of the LLNL-Atlas
log (39,207 jobs, 9,216 processors) on a machine of a quarter of its size
(2,304 processors), every job's size divided by 4 (rounded up, so every job
fits), its inter-arrival times divided by 1.45 so that the offered load is
1.02 (a saturated machine: thousands of jobs wait for weeks), replayed
``--copies`` times one after the other (each copy shifted by its span plus
one day; jobs renumbered). 11.5 copies are 450,880 jobs. Atlas' own load is
0.70 and the KTH replay of benchmarks/README.md keeps queues short; this
trace is built to stress the backfilling scan.

``run`` simulates each policy in a fresh process (the trace is built there
first, untimed) and reports the process CPU time of the whole
:func:`optsched.heuristics.simulate` call, its wall time, the peak resident
memory during the call (``VmHWM``, reset just before it, so the trace
reader's own peak is left out), the resident memory before the call (the
interpreter, libraries and the instance) and the memory per job ((peak -
before) / jobs). ``--dump DIR`` also writes the start times, in job order,
to ``DIR/<policy>.npy``.

Policies are separated by ``;`` (specs contain commas). ``--tree`` times
the code of another tree (``PYTHONPATH``), e.g. the snapshot of HEAD.

``counts`` runs conservative backfilling on the trace and counts its work
(issue 30): compressions, the waiting jobs they visit, the reservations
they move, the profile updates and the mean number of profile breakpoints
an update meets. It wraps the policy's methods, so its CPU time is not the
benchmark's.

``compare`` checks that the tree under test (this checkout) and an old
tree (``--old``, e.g. a ``git archive`` of HEAD) give every job the same
start time and the same processors: each is run in its own process with
``PYTHONPATH`` set to the tree, on the benchmark trace and, with
``--real``, on the full real traces of ``../shared/traces``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
TRACES = HERE.parent.parent.parent / "shared" / "traces"
ATLAS = "LLNL-Atlas-2006-2.1-cln.swf"
REAL = (
    "KTH-SP2-1996-2.1-cln.swf",
    ATLAS,
    "lublin_256.swf",
    "hpc2n.swf",
    "NASA-iPSC-1993-3.1-cln.swf.gz",
)
DAY = 86_400
SHRINK = 4  # machine and job sizes divided by this
COMPRESS = 1.45  # inter-arrival times divided by this: offered load 1.02

EQUIVALENCE_POLICIES = (
    "easy",
    "conservative",
    "backfill:depth=3",
    "easy:select=largest",
    "easy:select=smallest",
    "easy:select=largest-area",
    "easy:select=submit",
    "easy:select=largest,maxwait=3600",
    "easy:select=largest,maxidle=0.1",
    "backfill:depth=3,select=largest",
    "backfill:depth=2,select=smallest",
    "sjf",
    "easy:order=sjf",
    "firstfit",
)


def saturated(copies: float, traces: Path = TRACES):  # type: ignore[no-untyped-def]
    """The "Atlas/4 saturated" instance of ``copies`` replays (see module)."""
    from optsched.io import read

    atlas = read(traces / ATLAS)
    m = atlas.processors // SHRINK
    first = min(j.release for j in atlas.jobs)
    base = sorted(
        (
            j.replace(
                size=-(-j.size // SHRINK),
                release=int((j.release - first) / COMPRESS),
            )
            for j in atlas.jobs
        ),
        key=lambda j: (j.release, j.id),
    )
    span = base[-1].release + DAY
    top = max(j.id for j in base) + 1
    total = round(copies * len(base))
    jobs = []
    k = 0
    while len(jobs) < total:
        jobs += [
            j.replace(id=j.id + k * top, release=j.release + k * span)
            for j in base[: total - len(jobs)]
        ]
        k += 1
    return atlas.replace(
        jobs=tuple(jobs),
        machine=atlas.machine.replace(processors=m),
        name=f"atlas4-saturated-x{copies}",
    )


def _status_mb(field: str) -> float:
    # A memory line of /proc/self/status (Linux), in MB.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    # Writing 5 to clear_refs resets the peak resident size (VmHWM), so the
    # peak measured is the simulation's, not the trace reader's.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _one(args: argparse.Namespace) -> None:
    # Child: build, simulate one policy, print one JSON line.
    from optsched.heuristics import simulate

    if args.trace == "saturated":
        instance = saturated(args.copies)
    else:
        from optsched.io import read

        instance = read(TRACES / args.trace)
    before = _status_mb("VmRSS")
    _reset_peak()
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(instance, args.policy)
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    peak = _status_mb("VmHWM")
    process_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    placements = result.schedule.placements
    ids = sorted(placements)
    digest = hashlib.sha256()
    for i in ids:
        p = placements[i]
        digest.update(repr((i, p.start, p.end, tuple(p.processors))).encode())
    if args.dump:
        import numpy as np

        Path(args.dump).mkdir(parents=True, exist_ok=True)
        name = args.policy.replace(":", "_").replace(",", "_").replace("=", "-")
        np.save(
            Path(args.dump) / f"{name}.npy",
            np.array([placements[i].start for i in ids], dtype=np.int64),
        )
    print(
        json.dumps(
            {
                "policy": args.policy,
                "jobs": len(ids),
                "cpu": cpu,
                "wall": wall,
                "peak_mb": peak,
                "before_mb": before,
                "process_peak_mb": process_peak,
                "max_queue": result.stats.max_queue,
                "passes": result.stats.passes,
                "digest": digest.hexdigest(),
            }
        )
    )


def _counts(args: argparse.Namespace) -> None:
    # Wrap conservative's compression, its reservations and the profile's
    # updates with counters, then run it once.
    from optsched import packing
    from optsched.heuristics import simulate
    from optsched.heuristics.rigid import policies

    instance = saturated(args.copies)
    count = dict.fromkeys(("compressions", "visits", "moves", "updates"), 0)
    breakpoints = 0
    compressing = False
    compress = policies.Conservative._compress
    place = policies._Reservations.place
    add = packing.Profile.add

    def counted_compress(sim, state, void):  # type: ignore[no-untyped-def]
        nonlocal compressing
        count["compressions"] += 1
        count["visits"] += len(sim.queue)
        compressing = True
        compress(sim, state, void)
        compressing = False

    def counted_place(self, j, t):  # type: ignore[no-untyped-def]
        count["moves"] += compressing  # a move, or a void job placed again
        place(self, j, t)

    def counted_add(self, start, end, delta):  # type: ignore[no-untyped-def]
        nonlocal breakpoints
        count["updates"] += 1
        breakpoints += len(self.times)
        add(self, start, end, delta)

    policies.Conservative._compress = staticmethod(counted_compress)  # type: ignore[method-assign]
    policies._Reservations.place = counted_place  # type: ignore[method-assign]
    packing.Profile.add = counted_add  # type: ignore[method-assign]
    cpu = time.process_time()
    result = simulate(instance, "conservative")
    cpu = time.process_time() - cpu
    jobs = len(instance.jobs)
    print(
        "| jobs | max queue | compressions | jobs visited | moves | moves/job "
        "| profile updates | breakpoints/update | cpu s (counted) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {jobs:,} | {result.stats.max_queue:,} | {count['compressions']:,} | "
        f"{count['visits']:,} | {count['moves']:,} | {count['moves'] / jobs:.1f} "
        f"| {count['updates']:,} | {breakpoints / max(count['updates'], 1):.0f} "
        f"| {cpu:.1f} |"
    )


def _child(
    policy: str, trace: str, copies: float, tree: Path | None, dump: str = ""
) -> dict[str, object]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    command = [sys.executable, str(HERE), "one", policy, trace, "--copies", str(copies)]
    if dump:
        command += ["--dump", dump]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _run(args: argparse.Namespace) -> None:
    print(
        "| policy | jobs | cpu s | wall s | peak MB | before MB | kB/job | max queue |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    tree = Path(args.tree) if args.tree else None
    for policy in args.policies.split(";"):
        r = _child(policy, "saturated", args.copies, tree, args.dump)
        per_job = (r["peak_mb"] - r["before_mb"]) * 1024 / r["jobs"]  # type: ignore[operator]
        print(
            f"| {policy} | {r['jobs']:,} | {r['cpu']:.1f} | {r['wall']:.1f} | "
            f"{r['peak_mb']:.0f} | {r['before_mb']:.0f} | {per_job:.2f} | "
            f"{r['max_queue']:,} |",
            flush=True,
        )


def _compare(args: argparse.Namespace) -> None:
    traces = ([] if args.no_saturated else ["saturated"]) + (
        list(REAL) if args.real else []
    )
    failures = 0
    for trace in traces:
        for policy in args.policies.split(";"):
            new = _child(policy, trace, args.copies, None)
            old = _child(policy, trace, args.copies, Path(args.old))
            same = new["digest"] == old["digest"]
            failures += not same
            print(
                f"{trace} {policy}: {'same' if same else 'DIFFERENT'} "
                f"({new['jobs']} jobs, cpu old {old['cpu']:.1f} s new "
                f"{new['cpu']:.1f} s)",
                flush=True,
            )
    sys.exit(1 if failures else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--policies", default="easy;backfill:depth=3;conservative")
    run.add_argument("--copies", type=float, default=11.5)
    run.add_argument("--dump", default="")
    run.add_argument("--tree", default="", help="PYTHONPATH of the code to time")
    compare = sub.add_parser("compare")
    compare.add_argument("--old", required=True)
    compare.add_argument("--policies", default=";".join(EQUIVALENCE_POLICIES))
    compare.add_argument("--copies", type=float, default=11.5)
    compare.add_argument("--real", action="store_true")
    compare.add_argument("--no-saturated", action="store_true")
    counts = sub.add_parser("counts")
    counts.add_argument("--copies", type=float, default=1.0)
    one = sub.add_parser("one")
    one.add_argument("policy")
    one.add_argument("trace")
    one.add_argument("--copies", type=float, default=11.5)
    one.add_argument("--dump", default="")
    args = parser.parse_args()
    commands = {"run": _run, "compare": _compare, "one": _one, "counts": _counts}
    commands[args.command](args)


if __name__ == "__main__":
    main()
