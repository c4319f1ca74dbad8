"""PBI and PSRS against SMART and FFDH on random batches, for sum w_j C_j.

Usage::

    python benchmarks/preemptive.py                     # 1000 batches, seed 1
    python benchmarks/preemptive.py --batches 200 --weighted --rows out.csv
    python benchmarks/preemptive.py --nonpreemptive 10  # + CP-SAT, 10 s each

Batches as in ``benchmarks/shelves.py`` (Kalthoff 2002, Table 6.5): 20 jobs,
sizes uniform in 4..128 on 128 processors (``any``), run times uniform in
20..400, all released at 0, seed ``--seed``; weights 1, or uniform in 1..10
with ``--weighted``. Algorithms: PBI with both readings of its priority rule
(and the smith order with ``move_back=always``), PSRS
(:mod:`optsched.heuristics.preempt.algorithms`), SMART (``smart:order=smith``) and
FFDH (:mod:`optsched.heuristics.shelf.algorithms`, run times known). Every schedule
is checked (:func:`optsched.check.check_schedule`) and every PBI schedule
keeps at most two jobs in progress per processor.

The reference is the preemptive optimum ``OPT_p`` of ``sum w_j C_j``, known
here as an interval ``[LB, UB]``: ``LB`` is the largest of the ``wct``
lower bounds of :mod:`optsched.models.rigid.bounds` that hold for preemptive
schedules on machines without busy blocks (height, squashed area, fluid,
wide jobs; see ``preemptive_lower_bound`` in
``tests/families/preempt/test_preemptive_heuristics.py`` for why), ``UB`` the
best schedule seen (the algorithms above and the non-preemptive list heuristics; every
schedule is a preemptive one). Each algorithm's ratio to ``OPT_p`` is then
in ``[v / UB, v / LB]``. ``PREEMPTIVE_OPTIMUM`` is the hook for the exact
preemptive model (issue 11, being built separately): a function
``f(instance, objective) -> (lower, upper)`` that narrows the interval.
The guarantees (PBI < 2.5, PSRS <= 2.37) are about ``OPT_p``: a ratio to
``UB`` above them disproves an implementation, a ratio to ``LB`` above them
only says that the bound is loose there; both are counted.

``--nonpreemptive SECONDS`` also solves the non-preemptive problem with
CP-SAT and reports the ratio to its optimum ``OPT_np`` and the price of
non-preemption ``OPT_np / OPT_p``, as intervals: ``OPT_np`` lies between
the larger of CP-SAT's bound and ``LB`` (``OPT_np >= OPT_p``) and the best
non-preemptive schedule (CP-SAT's, the list heuristics', SMART's, FFDH's).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from optsched.check import check_schedule, max_jobs_per_processor
from optsched.heuristics.preempt.algorithms import parse_preemptive
from optsched.heuristics.rigid.offline import heuristic_schedules
from optsched.heuristics.shelf.algorithms import shelf_schedule
from optsched.instance import Instance, Job, Machine
from optsched.models.rigid.bounds import (
    fluid_bound,
    height_bound,
    squashed_area_bound,
    wide_jobs_wct_bound,
)
from optsched.objective import Objective
from optsched.schedule import Schedule

ALGORITHMS: dict[str, Callable[[Instance], Schedule]] = {
    "pbi:order=smith": parse_preemptive("pbi:order=smith"),
    "pbi:order=literal": parse_preemptive("pbi:order=literal"),
    "pbi:order=smith,move_back=always": parse_preemptive(
        "pbi:order=smith,move_back=always"
    ),
    "psrs": parse_preemptive("psrs"),
    "smart:order=smith": lambda i: shelf_schedule(
        i, "smart:order=smith", estimate=False
    ),
    "ffdh": lambda i: shelf_schedule(i, "ffdh", estimate=False),
}
NON_PREEMPTIVE = ("smart:order=smith", "ffdh")
FACTORS = {"pbi": 2.5, "psrs": 2.37}
"""Proven factors against the preemptive optimum (by algorithm family)."""

PREEMPTIVE_OPTIMUM: Callable[[Instance, Objective], tuple[float, float]] | None = None
"""Hook: the exact preemptive optimum (or an interval) when it exists."""

OBJECTIVE = Objective.parse("wct:instance")


def random_batches(
    count: int, seed: int, weighted: bool
) -> Iterable[tuple[str, Instance]]:
    """The batches of ``benchmarks/shelves.py`` (same draws for weights 1)."""
    rng = random.Random(seed)
    for k in range(count):
        jobs = [
            Job(i + 1, 0, rng.randint(4, 128), rng.randint(20, 400)) for i in range(20)
        ]
        if weighted:
            jobs = [j.replace(weight=float(rng.randint(1, 10))) for j in jobs]
        yield f"batch-{k:04d}", Instance(Machine(128), tuple(jobs), name=f"b{k}")


def preemptive_lower_bound(instance: Instance) -> float:
    """The largest ``wct`` bound valid for preemptive schedules (no blocks)."""
    assert not instance.machine.unavailable
    bounds = (height_bound, squashed_area_bound, fluid_bound, wide_jobs_wct_bound)
    return max(b(instance, OBJECTIVE).value for b in bounds)


def nonpreemptive_interval(instance: Instance, limit: float) -> tuple[float, float]:
    from optsched.models import solve

    result = solve(instance, OBJECTIVE, backend="cpsat", time_limit=limit, workers=1)
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    upper = OBJECTIVE.value(instance, result.schedule)
    lower = result.lower_bound if result.lower_bound is not None else 0.0
    return lower, upper


def evaluate(name: str, instance: Instance, nonpreemptive: float) -> list[dict]:
    """One row per algorithm."""
    values: dict[str, float] = {}
    for algorithm, run in ALGORITHMS.items():
        schedule = run(instance)
        violations = check_schedule(instance, schedule)
        assert violations == [], (name, algorithm, violations[:3])
        if algorithm.startswith("pbi"):
            assert max_jobs_per_processor(instance, schedule) <= 2, (name, algorithm)
        values[algorithm] = OBJECTIVE.value(instance, schedule)
    heuristics = heuristic_schedules(instance, OBJECTIVE).values()
    # Non-preemptive schedules: the list heuristics, SMART and FFDH.
    np_best = min(
        [OBJECTIVE.value(instance, s) for s in heuristics]
        + [v for a, v in values.items() if a in NON_PREEMPTIVE]
    )
    upper = min(np_best, *values.values())
    lower = preemptive_lower_bound(instance)
    if PREEMPTIVE_OPTIMUM is not None:
        exact_low, exact_up = PREEMPTIVE_OPTIMUM(instance, OBJECTIVE)
        lower, upper = max(lower, exact_low), min(upper, exact_up)
    np_low = np_up = float("nan")
    if nonpreemptive > 0:
        # OPT_np >= OPT_p >= lower; every non-preemptive schedule is >= OPT_np.
        solved_low, solved_up = nonpreemptive_interval(instance, nonpreemptive)
        np_low, np_up = max(solved_low, lower), min(solved_up, np_best)
    rows = []
    for algorithm, value in values.items():
        rows.append(
            {
                "instance": name,
                "algorithm": algorithm,
                "value": value,
                "pmtn_lb": lower,
                "pmtn_ub": upper,
                "ratio_ub": value / upper,
                "ratio_lb": value / lower,
                "np_lb": np_low,
                "np_ub": np_up,
                "np_ratio_ub": value / np_up,
                "np_ratio_lb": value / np_low,
                "price_low": max(1.0, np_low / upper),
                "price_high": np_up / lower,
            }
        )
    return rows


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and max of the ratio interval per algorithm; factor breaches."""
    out = []
    for algorithm, group in rows.groupby("algorithm", sort=False):
        family = str(algorithm).split(":")[0]
        factor = FACTORS.get(family)
        entry = {
            "algorithm": algorithm,
            "mean v/UB": group["ratio_ub"].mean(),
            "max v/UB": group["ratio_ub"].max(),
            "mean v/LB": group["ratio_lb"].mean(),
            "max v/LB": group["ratio_lb"].max(),
            "factor": factor if factor is not None else float("nan"),
            "v/UB > factor": int((group["ratio_ub"] > factor).sum()) if factor else 0,
            "v/LB > factor": int((group["ratio_lb"] > factor).sum()) if factor else 0,
        }
        if group["np_ub"].notna().any():
            entry["mean v/OPT_np in"] = (
                f"[{group['np_ratio_ub'].mean():.3f}, "
                f"{group['np_ratio_lb'].mean():.3f}]"
            )
        out.append(entry)
    return pd.DataFrame(out)


def markdown(frame: pd.DataFrame) -> str:
    """A Markdown table (numbers with 3 decimals)."""

    def cell(value: object) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = [
        "| " + " | ".join(map(str, frame.columns)) + " |",
        "|" + "---|" * len(frame.columns),
    ]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(map(cell, row)) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--weighted", action="store_true")
    parser.add_argument("--nonpreemptive", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--rows", type=Path, help="write one row per run (CSV)")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    rows: list[dict] = []
    for name, instance in random_batches(args.batches, args.seed, args.weighted):
        rows += evaluate(name, instance, args.nonpreemptive)
    table = pd.DataFrame(rows)
    if args.rows:
        table.to_csv(args.rows, index=False)
    weights = "weights 1..10" if args.weighted else "weights 1"
    print(
        f"{args.batches} batches (20 jobs, sizes 4-128 on 128, run times 20-400, "
        f"{weights}, seed {args.seed}), sum w_j C_j; "
        f"ratios to the preemptive optimum in [v/UB, v/LB]\n"
    )
    print(markdown(summary(table)))
    if args.nonpreemptive > 0:
        price = table.drop_duplicates("instance")
        print(
            f"\nprice of non-preemption OPT_np / OPT_p: mean in "
            f"[{price['price_low'].mean():.3f}, {price['price_high'].mean():.3f}]"
        )
    print(f"\n{time.perf_counter() - began:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
