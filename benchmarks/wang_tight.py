"""Wang's Tight study: KTH on 10 SMP nodes of 10 processors (issue 15).

Usage::

    .venv/bin/python benchmarks/wang_tight.py run [--trace FILE]
        [--policies easy,fcfs,firstfit] [--tights 0-6] [--levels 0-5]
        [--estimates user|exact] [--cost ratio|excess] [--jobs N]
        [--workers 2] --out FILE
    .venv/bin/python benchmarks/wang_tight.py report FILE.csv [FILE.csv...]

``run`` simulates the whole KTH trace (``--jobs N``: its first N jobs) on
``Machine(100, nodes=Nodes(10, 10, tight, level, base=0.05, cost))`` for
every (tight, level) of the grid and each policy:

- ``easy``: topology-aware EASY, ``optimistic:f=fifo`` of
  :mod:`optsched.heuristics.topology.combinators` (fits-now and the shadow time
  respect the span limit, SMP-aware placement: the fullest nodes first);
- ``fcfs``: topology-aware FCFS, ``blocking:f=fifo``;
- ``firstfit``: ``fit:f=fifo``, the first waiting job that fits (another
  reading of Wang's FCFS, whose numbers are far from strict FCFS's).

A job of ``n`` processors spread over ``span`` nodes runs
``ceil(p (1 + 0.05 span level))`` (``--cost ratio``, the default) or
``ceil(p (1 + 0.05 (span - ceil(n/10)) level))`` (``excess``). The
scheduler sees the same inflation applied to the estimate: the user's
requested time (``--estimates user``) or the run time (``exact``). Jobs
are never killed. Every schedule passes :func:`optsched.check.check_schedule`.

Per run it records the mean of three slowdowns, the mean wait, turnaround
and communication cost (``0.05 span level``):

- ``sd_orig``: ``(C - r) / max(p, 1)``, ``p`` the trace's run time;
- ``sd_run``: ``(C - r) / max(d, 1)``, ``d`` the inflated run time;
- ``bsld``: ``max(1, (C - r) / max(d, 10))``.

``report`` prints Wang's Table 3 and Fig. 4's FCFS column beside ours for
each convention found in the CSV files, with the adaptive rule
``tight = max(0, 6 - level)`` read from the grid, the best tight per level
and the adaptive rule's excess over the best.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
from markdown_table import markdown_table

TRACE = Path(__file__).resolve().parents[2] / "shared/traces/KTH-SP2-1996-2.1-cln.swf"
POLICIES = {
    "easy": "optimistic:f=fifo",
    "fcfs": "blocking:f=fifo",
    "firstfit": "fit:f=fifo",
}

WANG_TABLE3 = {  # tight -> mean slowdown at levels 0..5 (Backfilling)
    0: (150.0, 174.2, 218.8, 263.1, 346.0, 466.1),
    1: (87.3, 103.5, 131.7, 168.4, 222.9, 354.1),
    2: (67.7, 88.2, 119.1, 150.8, 253.4, 486.9),
    3: (64.0, 83.8, 117.6, 159.4, 346.1, 701.8),
    4: (63.8, 82.5, 121.3, 167.4, 430.3, 1221.1),
    5: (61.7, 83.4, 119.3, 179.4, 584.8, 2263.5),
    6: (61.6, 84.6, 119.5, 171.1, 562.6, 2692.8),
}
WANG_FCFS = {  # (tight, level) -> mean slowdown, Fig. 4's table
    (0, 0): 268, (2, 0): 186, (4, 0): 179, (6, 0): 178,
    (0, 2): 442, (2, 2): 363, (4, 2): 385, (6, 2): 393,
    (0, 4): 793, (2, 4): 963, (4, 4): 1180, (6, 4): 1255,
}  # fmt: skip
FIELDS = (
    "policy", "estimates", "cost", "tight", "level", "jobs", "sd_orig",
    "sd_run", "bsld", "wait", "turnaround", "comm", "makespan", "seconds",
)  # fmt: skip

_BASE: Any = None


def _load(trace: str, jobs: int | None, estimates: str) -> Any:
    from optsched.io.swf import read_swf

    instance = read_swf(trace).instance
    if jobs is not None:
        instance = instance.with_jobs(instance.jobs[:jobs])
    if estimates == "exact":
        instance = instance.with_jobs(j.with_exact_estimates() for j in instance.jobs)
    return instance


def _init(trace: str, jobs: int | None, estimates: str) -> None:
    global _BASE
    _BASE = _load(trace, jobs, estimates)


def _one(task: tuple[str, int, int, str, str]) -> dict[str, Any]:
    from optsched.check import check_schedule
    from optsched.heuristics import simulate
    from optsched.instance import Machine
    from optsched.nodes import Nodes

    policy, tight, level, cost, estimates = task
    nodes = Nodes(10, 10, tight=tight, level=level, cost=cost)
    instance = _BASE.replace(machine=Machine(100, nodes=nodes))
    began = time.process_time()
    schedule = simulate(instance, POLICIES[policy]).schedule
    seconds = time.process_time() - began
    violations = check_schedule(instance, schedule)
    if violations:
        raise RuntimeError(f"{policy} T{tight} L{level}: {violations[0]}")
    release = np.array([j.release for j in instance.jobs], dtype=float)
    runtime = np.array([j.runtime for j in instance.jobs], dtype=float)
    start = np.array([schedule[j.id].start for j in instance.jobs], dtype=float)
    end = np.array([schedule[j.id].end for j in instance.jobs], dtype=float)
    span = np.array(
        [nodes.span(schedule[j.id].processors or ()) for j in instance.jobs],
        dtype=float,
    )
    run = end - start
    response = end - release
    return {
        "policy": policy, "estimates": estimates, "cost": cost, "tight": tight,
        "level": level, "jobs": len(instance.jobs),
        "sd_orig": float(np.mean(response / np.maximum(runtime, 1))),
        "sd_run": float(np.mean(response / np.maximum(run, 1))),
        "bsld": float(np.mean(np.maximum(1, response / np.maximum(run, 10)))),
        "wait": float(np.mean(start - release)),
        "turnaround": float(np.mean(response)),
        "comm": float(np.mean(0.05 * span * level)),
        "makespan": float(end.max() - release.min()),
        "seconds": round(seconds, 2),
    }  # fmt: skip


def _range(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def run(args: argparse.Namespace) -> None:
    tasks = [
        (policy, tight, level, args.cost, args.estimates)
        for policy in args.policies.split(",")
        for level in _range(args.levels)
        for tight in _range(args.tights)
        if policy == "easy" or (tight, level) in WANG_FCFS or args.all_fcfs
    ]
    init = (str(args.trace), args.jobs, args.estimates)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pool = Pool(args.workers, initializer=_init, initargs=init)
    with pool, out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        for row in pool.imap_unordered(_one, tasks):
            writer.writerow(row)
            handle.flush()
            print(
                f"{row['policy']} T{row['tight']} L{row['level']}: "
                f"sd {row['sd_orig']:.1f} ({row['seconds']} s)",
                file=sys.stderr,
            )


def _rows(paths: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                for key in ("tight", "level", "jobs"):
                    row[key] = int(row[key])
                for key in FIELDS[6:]:
                    row[key] = float(row[key])
                rows.append(row)
    return rows


def report(args: argparse.Namespace) -> None:
    rows = _rows(args.files)
    conventions = sorted({(r["estimates"], r["cost"]) for r in rows})
    for estimates, cost in conventions:
        mine = [r for r in rows if (r["estimates"], r["cost"]) == (estimates, cost)]
        for metric in ("sd_orig", "sd_run", "bsld"):
            print(_table3(mine, estimates, cost, metric))
        print(_fcfs_table(mine, estimates, cost))


def _grid(rows: list[dict[str, Any]], policy: str, metric: str) -> dict[Any, float]:
    return {(r["tight"], r["level"]): r[metric] for r in rows if r["policy"] == policy}


def _table3(rows: list[dict[str, Any]], estimates: str, cost: str, metric: str) -> str:
    grid = _grid(rows, "easy", metric)
    levels = sorted({level for _, level in grid})
    lines = [
        f"\n#### EASY, estimates {estimates}, cost {cost}, {metric}: Wang / ours\n",
        "| | " + " | ".join(f"Level {lv}" for lv in levels) + " |",
        "|---|" + "---|" * len(levels),
    ]
    for tight in sorted({t for t, _ in grid}):
        cells = [
            f"{WANG_TABLE3[tight][lv]:g} / {grid[(tight, lv)]:.1f}"
            if (tight, lv) in grid
            else "–"
            for lv in levels
        ]
        lines.append(f"| Tight={tight} | " + " | ".join(cells) + " |")
    best, adaptive = [], []
    for lv in levels:
        column = {t: v for (t, level), v in grid.items() if level == lv}
        wang_best = min(range(7), key=lambda t: WANG_TABLE3[t][lv])
        ours_best = min(column, key=column.__getitem__)
        best.append(f"T{wang_best} / T{ours_best}")
        a = max(0, 6 - lv)
        if a in column:
            wang_excess = WANG_TABLE3[a][lv] / WANG_TABLE3[wang_best][lv] - 1
            excess = column[a] / column[ours_best] - 1
            adaptive.append(f"+{100 * wang_excess:.1f} % / +{100 * excess:.1f} %")
        else:
            adaptive.append("–")
    lines.append("| best Tight | " + " | ".join(best) + " |")
    lines.append("| adaptive over best | " + " | ".join(adaptive) + " |")
    return "\n".join(lines)


def _fcfs_table(rows: list[dict[str, Any]], estimates: str, cost: str) -> str:
    grid = _grid(rows, "fcfs", "sd_orig")
    first = _grid(rows, "firstfit", "sd_orig")
    easy = _grid(rows, "easy", "sd_orig")
    if not grid:
        return ""
    header = ("Tight", "Level", "Wang FCFS", "our FCFS", "our FirstFit",
              "Wang EASY", "our EASY")  # fmt: skip
    cells = []
    for (tight, level), value in sorted(WANG_FCFS.items(), key=lambda kv: kv[0][::-1]):
        if (tight, level) not in grid or (tight, level) not in easy:
            continue
        fit = first.get((tight, level))
        cells.append(
            (tight, level, value, f"{grid[(tight, level)]:.0f}",
             "–" if fit is None else f"{fit:.1f}",
             f"{WANG_TABLE3[tight][level]:g}", f"{easy[(tight, level)]:.1f}")
        )  # fmt: skip
    title = (
        f"\n#### Fig. 4, estimates {estimates}, cost {cost}, sd_orig: Wang's "
        "FCFS beside our strict FCFS and FirstFit\n"
    )
    return "\n".join([title, *markdown_table(header, "lllllll", cells)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    runner = sub.add_parser("run")
    runner.add_argument("--trace", default=TRACE)
    runner.add_argument("--policies", default="easy,fcfs,firstfit")
    runner.add_argument("--tights", default="0-6")
    runner.add_argument("--levels", default="0-5")
    runner.add_argument("--estimates", choices=("user", "exact"), default="user")
    runner.add_argument("--cost", choices=("ratio", "excess"), default="ratio")
    runner.add_argument("--jobs", type=int, default=None)
    runner.add_argument("--all-fcfs", action="store_true")
    runner.add_argument("--workers", type=int, default=2)
    runner.add_argument("--out", required=True)
    reporter = sub.add_parser("report")
    reporter.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        if not Path(args.trace).is_file():
            sys.exit(f"wang_tight.py: {args.trace}: no such trace")
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
