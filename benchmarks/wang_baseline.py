"""Wang's Level-0 baseline: every reading of "mean slowdown" we tried.

Usage::

    .venv/bin/python benchmarks/wang_baseline.py

At Level 0 the communication cost is zero, so the span limit is the only
thing the topology adds, and at Tight 6 (a 100-CPU job may span every node)
it is no limit at all: the cell is plain EASY on 100 CPUs. Wang's Table 3
gives 61.6 there (150 at Tight 0); the paper gives no slowdown formula. This
script simulates the cleaned KTH log (28,475 jobs) with the flat engine's
``easy`` (the node simulator at Tight 6 gives the same schedule's slowdown,
202.0; benchmarks/README.md) under user estimates and exact ones, checks
each schedule, and prints the mean slowdown under every reading below, and
the same for the first 20,000 jobs (Wang quotes "20,000-plus jobs"):

- ``(C - r) / max(p, 1)``: turnaround over run time (the usual slowdown);
- the same over the jobs with ``p >= 1`` only, and over ``p >= 60`` only;
- ``(s - r) / max(p, 10)``: the wait-based ratio Rassmann's thesis quotes;
- bounded slowdown ``max(1, (C - r) / max(p, tau))`` for tau = 10, 30, 60 s;
- the ratio of means, mean turnaround over mean run time.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import Instance, Job
from optsched.io.swf import read_swf
from optsched.schedule import Placement

TRACE = (
    Path(__file__).parent.parent.parent
    / "shared"
    / "traces"
    / "KTH-SP2-1996-2.1-cln.swf"
)
WANG_LEVEL0 = {"Tight 6": 61.6, "Tight 0": 150.0}

Row = tuple[Job, Placement]


def _mean(rows: Sequence[Row], ratio: Callable[[Job, Placement], float]) -> float:
    return statistics.fmean(ratio(job, p) for job, p in rows)


def readings(rows: Sequence[Row]) -> dict[str, float]:
    """Mean slowdown of ``rows`` under each reading (module docstring)."""

    def bounded(tau: int) -> float:
        return _mean(
            rows, lambda j, p: max(1, (p.end - j.release) / max(j.runtime, tau))
        )

    def turnaround(least: int) -> float:
        kept = [(j, p) for j, p in rows if j.runtime >= least]
        return _mean(kept, lambda j, p: (p.end - j.release) / j.runtime)

    return {
        "(C - r) / max(p, 1)": _mean(
            rows, lambda j, p: (p.end - j.release) / max(j.runtime, 1)
        ),
        "(C - r) / p, p >= 1 only": turnaround(1),
        "(C - r) / p, p >= 60 only": turnaround(60),
        "(s - r) / max(p, 10)": _mean(
            rows, lambda j, p: (p.start - j.release) / max(j.runtime, 10)
        ),
        "bounded, tau 10 s": bounded(10),
        "bounded, tau 30 s": bounded(30),
        "bounded, tau 60 s": bounded(60),
        "mean turnaround / mean run time": statistics.fmean(
            p.end - j.release for j, p in rows
        )
        / statistics.fmean(j.runtime for j, _ in rows),
    }


def main() -> None:
    user = read_swf(TRACE).instance
    exact = user.with_jobs(j.replace(estimate=j.runtime) for j in user.jobs)
    columns: dict[str, dict[str, float]] = {}
    for label, instance in (("user", user), ("exact", exact)):
        rows = _easy_rows(instance)
        columns[f"{label} estimates, all jobs"] = readings(rows)
        columns[f"{label} estimates, first 20,000"] = readings(rows[:20000])
    print(f"Wang, Level 0: {WANG_LEVEL0}; KTH {len(user.jobs):,} jobs\n")
    print("| reading | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for reading in next(iter(columns.values())):
        cells = " | ".join(f"{column[reading]:,.1f}" for column in columns.values())
        print(f"| {reading} | {cells} |")


def _easy_rows(instance: Instance) -> list[Row]:
    schedule = simulate(instance, "easy").schedule
    assert check_schedule(instance, schedule) == []
    return [(job, schedule[job.id]) for job in instance.jobs]


if __name__ == "__main__":
    main()
