"""How far from optimal are Mallmann's strategies when all jobs are there at
the start? Proven optima on small windows (issue 13).

Usage::

    .venv/bin/python benchmarks/mallmann_optimum.py [--jobs 30] [--time-limit 30]

A KTH month at window start holds 2,000-4,000 jobs, too many for the exact
model under the calendar (``optsched.models.site.model``), so the months get an
interval (``mallmann_study.py``: best strategy against the best lower
bound). Here, from each month, the ``--jobs`` consecutive jobs whose area
most exceeds their longest job's run time (:func:`densest`: the windows in
which packing, not one long job, sets the makespan), all released at once,
under the T3E calendar scaled to 100 processors, are solved for the
makespan by CP-SAT with every strategy's schedule as incumbent, and
each strategy's makespan is divided by the optimum (or by the interval's
ends when the proof is not complete). Allocation ``any``: the exact model
with contiguous ranges proves far less within the limit, and the strategies
run on the same machine, so the ratios compare like with like.

Writes ``benchmarks/results/mallmann/optimum.csv``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mallmann_ranking import month_windows, write_rows

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import Instance, Job
from optsched.models import Incumbent, solve

HERE = Path(__file__).parent
# The fairness-0 variants of the window-start runs, and EASY.
STRATEGIES = {
    "fcfs": "fcfs",
    "fcfs easy": "easy:order=fcfs",
    "fcfs bc": "mallmann:order=fcfs,variant=bc",
    "sptf fc3": "mallmann:order=spt,variant=fc3",
    "lptf easy": "easy:order=lpt",
    "sjsf": "ssf",
    "ljsf bs0": "mallmann:order=lsf,variant=bs",
    "ljsf ws0": "mallmann:order=lsf,variant=ws",
    "scdf bs0": "mallmann:order=saf,variant=bs",
    "lcdf easy": "easy:order=laf",
    "lcdf bc": "mallmann:order=laf,variant=bc",
    "bp": "best-package",
}


def densest(jobs: Sequence[Job], n: int, m: int) -> Sequence[Job]:
    """The ``n`` consecutive jobs (submit order) whose area most exceeds
    what their longest job alone implies, ``sum q_j p_j / (m max p_j)``:
    windows in which packing, not one long job, sets the makespan."""
    best, chosen = -1.0, jobs[:n]
    for k in range(len(jobs) - n + 1):
        part = jobs[k : k + n]
        longest = max(j.runtime for j in part) or 1
        density = sum(j.size * j.runtime for j in part) / (m * longest)
        if density > best:
            best, chosen = density, part
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "mallmann")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    def at_once(window: Instance) -> Instance | None:
        """The month's densest ``--jobs`` jobs, all released at the first."""
        if len(window.jobs) < 10 * args.jobs:
            return None  # a partial month
        jobs = densest(window.jobs, args.jobs, window.machine.processors)
        first = min(j.release for j in jobs)
        return window.replace(jobs=tuple(j.replace(release=first) for j in jobs))

    rows: list[dict[str, Any]] = []
    for label, window in month_windows(args.months, at_once):
        made = {}
        for name, spec in STRATEGIES.items():
            schedule = simulate(window, spec).schedule
            assert check_schedule(window, schedule) == []
            made[name] = schedule
        result = solve(
            window,
            "cmax",
            backend="cpsat",
            time_limit=args.time_limit,
            workers=args.workers,
            incumbents=[Incumbent(f"policy:{n}", s) for n, s in made.items()],
        )
        assert result.schedule is not None
        assert check_schedule(window, result.schedule) == []
        lower, upper = result.lower_bound, result.objective
        assert lower is not None and upper is not None
        for name, schedule in made.items():
            value = max(p.end for p in schedule.placements.values())
            rows.append(
                {
                    "month": label,
                    "jobs": args.jobs,  # densest() takes exactly that many
                    "strategy": name,
                    "makespan": value,
                    "optimum_lower": lower,
                    "optimum_upper": upper,
                    "proven": lower == upper,
                    "ratio_low": round(value / upper, 4),
                    "ratio_high": round(value / lower, 4),
                    "solve_seconds": round(result.runtime, 1),
                }
            )
        print(label, lower, upper, flush=True)
    write_rows(args.out / "optimum.csv", rows)


if __name__ == "__main__":
    main()
