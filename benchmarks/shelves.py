"""Shelf algorithms against the optimum, the shelf optimum, and the price of shelves.

Usage::

    python benchmarks/shelves.py perfect                 # instances/perfect/*.json
    python benchmarks/shelves.py random --batches 200    # random 20-job batches
    python benchmarks/shelves.py kth STORE.sqlite        # KTH windows of a store

``perfect`` and ``random`` run every offline shelf algorithm
(:func:`optsched.heuristics.shelf.algorithms.shelf_schedule`, run times known) on
each instance, solve the unrestricted problem (CP-SAT) and the
shelf-restricted one (back-end ``shelf``) for ``cmax`` and ``wct``, and
print, per algorithm and objective, the mean and max of the ratio interval
``[v / UB, v / LB]`` against each optimum, and the price of shelves
``OPT_shelf / OPT`` (:func:`optsched.analysis.gap.price_interval`). Every schedule is
checked. Random batches: 20 jobs, sizes uniform in 4..128 on 128 processors
(``any`` allocation), run times uniform in 20..400, all released at 0, seed
``--seed`` (default 1).

``kth`` simulates the shelf policies (``pc2``, ``batch:inner=ffdh``,
``smart``) and EASY on every window of a ``benchmarks/suites/kth.toml``
store, using the stored instances, and rates them against the stored
references (:func:`optsched.bench.store.references`): no solve is repeated.

Results go to stdout as Markdown tables and, with ``--rows FILE.csv``, one
row per (instance, algorithm, objective).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from markdown_table import markdown_table

from optsched.analysis.gap import (
    Candidate,
    LowerBound,
    Reference,
    price_interval,
    ratio_interval,
    window_reference,
)
from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.objective import Objective

HERE = Path(__file__).resolve().parent
ALGORITHMS = (
    "nfdh", "ffdh", "nfih", "ffih", "ffdh-stack", "ffih-stack",
    "smart:order=size", "smart:order=smith", "smart:order=smith,fit=first",
)  # fmt: skip
OBJECTIVES = ("cmax", "wct")


def _reference(
    instance: Instance, objective: str, backend: str, limit: float
) -> Reference:
    from optsched.analysis.gap import heuristic_incumbents
    from optsched.models import solve

    parsed = Objective.parse(objective)
    incumbents = heuristic_incumbents(instance, parsed) if backend == "cpsat" else ()
    result = solve(
        instance, parsed, backend=backend, time_limit=limit, workers=1,
        incumbents=incumbents,
    )  # fmt: skip
    assert result.schedule is not None and not check_schedule(instance, result.schedule)
    value = parsed.value(instance, result.schedule)
    lower = (
        [LowerBound(result.lower_bound, backend)]
        if result.lower_bound is not None
        else []
    )
    return window_reference(parsed.label, lower, [Candidate(value, backend)])


def rate(
    name: str,
    instance: Instance,
    limit: float,
    objectives: tuple[str, ...] = OBJECTIVES,
) -> list[dict[str, object]]:
    """Every algorithm on one instance, against both optima."""
    from optsched.heuristics.shelf.algorithms import shelf_schedule

    out = []
    for objective in objectives:
        parsed = Objective.parse(objective)
        began = time.perf_counter()
        plain = _reference(instance, objective, "cpsat", limit)
        shelves = _reference(instance, objective, "shelf", limit)
        solve_time = time.perf_counter() - began
        price = price_interval(shelves, plain)
        for algorithm in ALGORITHMS:
            schedule = shelf_schedule(instance, algorithm, estimate=False)
            assert not check_schedule(instance, schedule), (name, algorithm)
            value = parsed.value(instance, schedule)
            low, high = ratio_interval(value, plain.lower, plain.upper)
            s_low, s_high = ratio_interval(value, shelves.lower, shelves.upper)
            out.append(
                {
                    "instance": name, "algorithm": algorithm, "objective": objective,
                    "value": value, "lower": plain.lower, "upper": plain.upper,
                    "shelf_lower": shelves.lower, "shelf_upper": shelves.upper,
                    "ratio_low": low, "ratio_high": high,
                    "shelf_ratio_low": s_low, "shelf_ratio_high": s_high,
                    "price_low": price[0], "price_high": price[1],
                    "proven": plain.optimal, "shelf_proven": shelves.optimal,
                    "solve_time": solve_time,
                }
            )  # fmt: skip
    return out


def random_batches(count: int, seed: int) -> Iterable[tuple[str, Instance]]:
    """``count`` batches of 20 jobs (sizes 4..128 on 128, run times 20..400)."""
    rng = random.Random(seed)
    for k in range(count):
        jobs = [
            Job(i + 1, 0, rng.randint(4, 128), rng.randint(20, 400)) for i in range(20)
        ]
        yield f"batch-{k}", Instance(Machine(128), tuple(jobs), name=f"batch-{k}")


def perfect() -> Iterable[tuple[str, Instance]]:
    from optsched.io import read

    for path in sorted((HERE.parent / "instances" / "perfect").glob("*.json")):
        yield path.stem, read(path)


def _interval(low: float, high: float) -> str:
    if any(math.isnan(x) for x in (low, high)):
        return "?"
    if abs(low - high) < 5e-5:
        return f"{low:.4f}"
    return f"[{low:.4f}, {high:.4f}]"


RATIO_COLUMNS = ("algorithm", "objective", "instances", "mean ratio to OPT",
                 "max ratio to OPT", "mean ratio to shelf OPT",
                 "max ratio to shelf OPT")  # fmt: skip
PRICE_COLUMNS = ("objective", "OPT proven", "shelf OPT proven",
                 "mean price of shelves", "max price of shelves",
                 "mean solve time (s)")  # fmt: skip


def summary(rows: pd.DataFrame) -> str:
    """Markdown: per algorithm and objective, mean and max of each interval end."""
    ratios = [
        (algorithm, objective, len(g),
         _interval(g.ratio_low.mean(), g.ratio_high.mean()),
         _interval(g.ratio_low.max(), g.ratio_high.max()),
         _interval(g.shelf_ratio_low.mean(), g.shelf_ratio_high.mean()),
         _interval(g.shelf_ratio_low.max(), g.shelf_ratio_high.max()))
        for (algorithm, objective), g in rows.groupby(
            ["algorithm", "objective"], sort=False
        )
    ]  # fmt: skip
    first = rows.drop_duplicates(["instance", "objective"])
    prices = [
        (objective, f"{int(g.proven.sum())}/{len(g)}",
         f"{int(g.shelf_proven.sum())}/{len(g)}",
         _interval(g.price_low.mean(), g.price_high.mean()),
         _interval(g.price_low.max(), g.price_high.max()),
         f"{g.solve_time.mean():.2f}")
        for objective, g in first.groupby("objective", sort=False)
    ]  # fmt: skip
    lines = [
        *markdown_table(RATIO_COLUMNS, "llrllll", ratios),
        "",
        *markdown_table(PRICE_COLUMNS, "lrrllr", prices),
    ]
    return "\n".join(lines)


def kth(store_path: str) -> str:
    """Shelf policies on the stored KTH windows against the stored references."""
    from optsched.analysis.gap import evaluate_policy
    from optsched.bench.store import Store, references

    policies = ("pc2", "batch:inner=ffdh", "smart", "easy")
    with Store(store_path, create=False) as store:
        rows = store.task_rows()
        known = references(rows)
        windows = {r.window_id: r.instance_sha256 for r in rows if r.instance_sha256}
        out = []
        for window_id, sha in windows.items():
            instance = store.instance(sha)
            for policy in policies:
                outcome = evaluate_policy(instance, policy, ["cmax", "wct"])
                for objective, value in outcome.values.items():
                    ref = known[(*window_id, objective)]
                    low, high = (
                        ratio_interval(value, ref.lower, ref.upper)
                        if outcome.complete
                        else (math.nan, math.nan)
                    )
                    out.append((policy, objective, low, high, outcome.killed > 0))
    frame = pd.DataFrame(out, columns=["policy", "objective", "low", "high", "killed"])
    cells = []
    for (policy, objective), g in frame.groupby(["policy", "objective"], sort=False):
        ok = g[~g.killed]
        cells.append(
            (policy, objective, len(g), int(g.killed.sum()),
             _interval(ok.low.mean(), ok.high.mean()),
             _interval(ok.low.median(), ok.high.median()),
             _interval(ok.low.max(), ok.high.max()))
        )  # fmt: skip
    header = ("policy", "objective", "windows", "killed", "mean", "median", "max")
    return "\n".join(markdown_table(header, "llrrlll", cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["perfect", "random", "kth"])
    parser.add_argument("store", nargs="?")
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--rows", default=None)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--objectives", default=",".join(OBJECTIVES))
    args = parser.parse_args()
    if args.what == "kth":
        if not args.store:
            sys.exit("kth needs the store")
        print(kth(args.store))
        return
    source = (
        perfect() if args.what == "perfect" else random_batches(args.batches, args.seed)
    )
    rows = []
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        for found in pool.starmap(
            rate,
            [
                (name, instance, args.time_limit, tuple(args.objectives.split(",")))
                for name, instance in source
            ],
        ):
            rows += found
    frame = pd.DataFrame(rows)
    if args.rows:
        frame.to_csv(args.rows, index=False)
    print(summary(frame))


if __name__ == "__main__":
    main()
