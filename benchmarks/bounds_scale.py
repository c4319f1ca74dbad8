"""CPU time and memory of the ``bounds-only`` back-end on large windows (issue 16).

Usage::

    .venv/bin/python benchmarks/bounds_scale.py [--sizes 1000,5000,20000,50000]
        [--objectives cmax,wct] [--first 2000] [--pipeline] [--json FILE]

For every size and objective a fresh child process cuts a window of
consecutive jobs of the KTH-SP2 log, starting at job ``--first`` (windows
longer than the log come from the log repeated: each copy shifted by the
log's span plus one day and renumbered, as in ``benchmarks/read_trace.py``),
and times ``optsched.solve(window, objective, backend="bounds-only",
time_limit=None)`` (no incumbents: the list schedule of the back-end, the
checks, every closed-form bound). It reports the process CPU time of the
call (``time.process_time``: other programs share the two cores), its wall
time, the peak RSS of the child (``resource.getrusage``, whole process:
trace and window included) and the values (lower bound, objective, status,
and each bound's value and wall seconds).

With ``--pipeline`` it also times what the analysis pipeline adds around the
back-end (:func:`optsched.analysis.gap.evaluate_reference`): the best offline
heuristic (:func:`optsched.heuristics.rigid.offline.best_heuristic`) and one
:func:`optsched.check.check_schedule` of its schedule (each incumbent is
checked once by the back-end). The simulated policies are not timed here
(``benchmarks/sim_scale.py`` and ``simulate_speed.py`` do).

Runs on any tree: ``PYTHONPATH=/work/snap16 .venv/bin/python
benchmarks/bounds_scale.py`` measures a snapshot of another commit. Nothing
is asserted.

``--archive`` (issue 30) measures the two archive-scale files of issue 32
instead, written to ``--files`` (default ``/tmp/bounds_scale``): an SWF of
``--swf-jobs`` job lines (200,000: the KTH log repeated, each copy shifted
by a year, :func:`read_trace.synthetic_swf`) and a strip file of
``--strip-items`` random items (50,000: widths 1–500 on a strip of 1,000,
heights 1–1,000, seed 1). For each it times the back-end call as above
(``time_limit=None``: every bound, the list schedule and its check) and the
whole command ``optsched bound FILE --backend bounds-only --time-limit 60``
and ``--time-limit 10`` (wall time of the child process: start-up,
reading, the time-boxed offline heuristics and oracle policies, the
back-end, printing).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from optsched.instance import Instance

TRACE = (
    Path(__file__).resolve().parent.parent.parent
    / "shared"
    / "traces"
    / "KTH-SP2-1996-2.1-cln.swf"
)
DAY = 86_400


def window(n: int, first: int) -> Instance:
    """``n`` consecutive KTH jobs from ``first`` (the log repeated if needed)."""
    import optsched
    from optsched.windows.window import cut_window

    trace = optsched.read_trace(TRACE)
    instance = trace.instance
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    need = first + n
    if need > len(jobs):
        span = jobs[-1].release - jobs[0].release + DAY
        top = max(j.id for j in jobs) + 1
        copies = -(-need // len(jobs))
        jobs = [
            j.replace(id=j.id + k * top, release=j.release + k * span)
            for k in range(copies)
            for j in jobs
        ]
        instance = instance.with_jobs(jobs)
    return cut_window(instance, first_job=first, jobs=n)


def archive_files(folder: Path, swf_jobs: int, strip_items: int) -> list[Path]:
    """Write (once) the archive-scale SWF and strip files of ``--archive``."""
    import random

    from read_trace import synthetic_swf

    folder.mkdir(parents=True, exist_ok=True)
    swf = folder / f"kth_{swf_jobs}.swf"
    if not swf.exists():
        synthetic_swf(TRACE, swf_jobs, swf)
    strip = folder / f"strip_{strip_items}.txt"
    if not strip.exists():
        rng = random.Random(1)
        items = [
            f"{rng.randint(1, 500)} {rng.randint(1, 1000)}" for _ in range(strip_items)
        ]
        strip.write_text("\n".join(["1000", str(strip_items), *items]) + "\n")
    return [swf, strip]


def command_time(path: Path, objective: str, limit: int) -> str:
    """Wall and CPU seconds of ``optsched bound PATH --backend bounds-only``
    (the CPU of the child process: user + system)."""
    began = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "optsched", "bound", str(path), "--objective",
         objective, "--backend", "bounds-only", "--time-limit", str(limit)],
        check=True, capture_output=True,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return f"{time.perf_counter() - began:.1f} ({cpu:.1f})"


def measure(
    n: int, objective: str, first: int, pipeline: bool, path: Path | None = None
) -> dict[str, object]:
    """One window, one objective: the numbers of one table row (``path``: a
    whole file instead of a KTH window)."""
    import optsched

    instance = window(n, first) if path is None else optsched.read_trace(path).instance
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu, wall = time.process_time(), time.perf_counter()
    result = optsched.solve(instance, objective, backend="bounds-only", time_limit=None)
    row: dict[str, object] = {
        "jobs": len(instance.jobs),
        "objective": objective,
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "rss_before_mb": rss_before / 1024,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "status": str(result.status.value),
        "lower": result.lower_bound,
        "upper": result.objective,
        "gap": (result.objective - (result.lower_bound or 0)) / result.objective
        if result.objective
        else 0.0,
        "bounds": {b.method: [b.value, round(b.runtime, 4)] for b in result.bounds},
    }
    if pipeline:
        from optsched.check import check_schedule
        from optsched.heuristics.rigid.offline import best_heuristic

        cpu = time.process_time()
        best = best_heuristic(instance, objective)
        row["heuristic_cpu_s"] = time.process_time() - cpu
        cpu = time.process_time()
        assert check_schedule(instance, best) == []
        row["check_cpu_s"] = time.process_time() - cpu
        row["heuristic_value"] = optsched.Objective.parse(objective).value(
            instance, best
        )
    return row


def main() -> None:
    """Run every (size, objective) in its own process and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000,50000")
    parser.add_argument("--objectives", default="cmax,wct")
    parser.add_argument("--first", type=int, default=2000)
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", nargs=2, metavar=("JOBS", "OBJECTIVE"))
    parser.add_argument("--file", type=Path, help="with --one: a whole file")
    parser.add_argument("--archive", action="store_true")
    parser.add_argument("--files", type=Path, default=Path("/tmp/bounds_scale"))
    parser.add_argument("--swf-jobs", type=int, default=200_000)
    parser.add_argument("--strip-items", type=int, default=50_000)
    args = parser.parse_args()
    if args.one:
        row = measure(
            int(args.one[0]), args.one[1], args.first, args.pipeline, args.file
        )
        print(json.dumps(row))
        return
    if args.archive:
        archive(args)
        return
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for objective in args.objectives.split(","):
            command = [sys.executable, __file__, "--one", str(n), objective]
            command += ["--first", str(args.first)]
            command += ["--pipeline"] if args.pipeline else []
            out = subprocess.run(command, check=True, capture_output=True, text=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), file=sys.stderr)
    extra = " heuristic cpu s | check cpu s |" if args.pipeline else ""
    print(
        "| jobs | objective | cpu s | wall s | peak RSS MB | status | lower | upper "
        f"| gap |{extra}"
    )
    print("|---:|---|---:|---:|---:|---|---:|---:|---:|" + ("---:|---:|" * bool(extra)))
    for r in rows:
        tail = (
            f" {r['heuristic_cpu_s']:.2f} | {r['check_cpu_s']:.3f} |" if extra else ""
        )
        print(
            f"| {r['jobs']:,} | {r['objective']} | {r['cpu_s']:.3f} | "
            f"{r['wall_s']:.3f} | {r['peak_rss_mb']:.0f} | {r['status']} | "
            f"{r['lower']} | {r['upper']} | {100 * r['gap']:.3f} % |{tail}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


def archive(args: argparse.Namespace) -> None:
    """``--archive``: the back-end call and the whole command on both files."""
    swf, strip = archive_files(args.files, args.swf_jobs, args.strip_items)
    print(
        "| file | jobs | objective | call cpu s | call wall s | peak RSS MB | lower "
        "| upper | status | command wall (CPU) s, limit 60 | limit 10 |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for path, objective in ((swf, "cmax"), (swf, "wct"), (strip, "cmax")):
        command = [sys.executable, __file__, "--one", "0", objective]
        command += ["--file", str(path)]
        out = subprocess.run(command, check=True, capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(r), file=sys.stderr)
        print(
            f"| {path.name} | {r['jobs']:,} | {objective} | {r['cpu_s']:.2f} | "
            f"{r['wall_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['lower']} | "
            f"{r['upper']} | {r['status']} | {command_time(path, objective, 60)} | "
            f"{command_time(path, objective, 10)} |"
        )


if __name__ == "__main__":
    main()
