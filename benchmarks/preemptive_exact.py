"""What preemption is worth: exact preemptive optima against non-preemptive ones.

Usage::

    python benchmarks/preemptive_exact.py price --batches 50     # cmax, 20-job batches
    python benchmarks/preemptive_exact.py price --releases       # with release dates
    python benchmarks/preemptive_exact.py scale                  # LP time by job count
    python benchmarks/preemptive_exact.py wct --batches 30       # small wct instances

``price``: random batches of 20 jobs (sizes uniform in 4..128 on 128
processors, ``any`` allocation, run times uniform in 20..400, seed
``--seed``; with ``--releases`` submit times uniform in 0..2000). For each,
the preemptive makespan by the configuration LP
(:func:`optsched.models.preempt.model.preemptive_makespan`: the exact
continuous-time optimum ``LP``, the integer-time interval
``[ceil(LP), UB]``) and the non-preemptive optimum or interval by CP-SAT
(``--np-limit`` seconds); the price of non-preemption is
``OPT_np / LP`` (an interval when CP-SAT stops early). Every schedule is
checked.

``scale``: column-generation time, rounds, columns and the integer-time
gap for 20 to 160 jobs with release dates.

``wct``: small instances (8 jobs, sizes 1..8 on 8 processors, run times
1..12, releases 0..10, weights 1..5) where the time-indexed model is exact:
preemptive ``sum w_j C_j`` optimum against the non-preemptive one.

Results go to stdout as Markdown.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Iterable

from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.models import SolveStatus, solve
from optsched.models.preempt.model import preemptive_makespan, preemptive_wct
from optsched.result import Result


def batch(rng: random.Random, jobs: int, releases: bool) -> Instance:
    """One random batch (see the module notes)."""
    return Instance(
        Machine(128),
        tuple(
            Job(
                k,
                rng.randint(0, 2000) if releases else 0,
                rng.randint(4, 128),
                rng.randint(20, 400),
            )
            for k in range(1, jobs + 1)
        ),
    )


def _checked(instance: Instance, result: Result) -> None:
    if result.schedule is not None:
        violations = check_schedule(instance, result.schedule)
        if violations:
            raise SystemExit(f"{result.backend}: {violations[0]}")


def price(batches: int, seed: int, releases: bool, np_limit: float) -> str:
    """The ``price`` table (see the module notes)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(batches):
        instance = batch(rng, 20, releases)
        began = time.perf_counter()
        pre = preemptive_makespan(instance)
        seconds = time.perf_counter() - began
        _checked(instance, pre)
        plain = solve(instance, "cmax", backend="cpsat", time_limit=np_limit)
        _checked(instance, plain)
        lp = float(pre.params["lp_value"])
        assert plain.lower_bound is not None and plain.objective is not None
        rows.append(
            {
                "lp": lp,
                "integral": pre.status is SolveStatus.OPTIMAL,
                "int_gap": float(pre.objective or 0) - math.ceil(lp - 1e-9),
                # Every rigid schedule is a preemptive one: OPT_np >= LP.
                "low": max(1.0, plain.lower_bound / lp),
                "high": plain.objective / lp,
                "np_optimal": plain.status is SolveStatus.OPTIMAL,
                "seconds": seconds,
            }
        )
    lows = [r["low"] for r in rows]
    highs = [r["high"] for r in rows]
    lines = [
        f"{batches} batches of 20 jobs on 128 processors, seed {seed}, "
        f"{'releases in 0..2000' if releases else 'all released at 0'}",
        "",
        "| quantity | value |",
        "|---|---|",
        f"| price of non-preemption OPT_np / LP, mean | "
        f"[{statistics.mean(lows):.4f}, {statistics.mean(highs):.4f}] |",
        f"| price, max | [{max(lows):.4f}, {max(highs):.4f}] |",
        f"| batches with price exactly 1 | "
        f"{sum(1 for r in rows if r['high'] <= 1 + 1e-12)} |",
        f"| non-preemptive optimum proven (CP-SAT, {np_limit:g} s) | "
        f"{sum(r['np_optimal'] for r in rows)} / {batches} |",
        f"| integer-time preemptive schedule = ceil(LP) | "
        f"{sum(r['integral'] for r in rows)} / {batches} |",
        f"| integer-time schedule - ceil(LP), max | "
        f"{max(r['int_gap'] for r in rows):.0f} s |",
        f"| preemptive model time, mean / max | "
        f"{statistics.mean(r['seconds'] for r in rows):.3f} / "
        f"{max(r['seconds'] for r in rows):.3f} s |",
    ]
    return "\n".join(lines)


def scale(seed: int, sizes: Iterable[int] = (20, 40, 80, 160)) -> str:
    """The ``scale`` table (see the module notes)."""
    rng = random.Random(seed)
    lines = [
        "| jobs | LP value | [ceil(LP), UB] | status | rounds | columns | time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for jobs in sizes:
        instance = batch(rng, jobs, releases=True)
        began = time.perf_counter()
        result = preemptive_makespan(instance, time_limit=300)
        seconds = time.perf_counter() - began
        _checked(instance, result)
        lines.append(
            f"| {jobs} | {result.params['lp_value']:.3f}"
            f"{'' if result.params['lp_converged'] else ' (not converged)'} | "
            f"[{result.lower_bound}, {result.objective}] | {result.status.value} | "
            f"{result.params['rounds']} | {result.params['columns']} | "
            f"{seconds:.2f} |"
        )
    return "\n".join(lines)


def wct(batches: int, seed: int, np_limit: float) -> str:
    """The ``wct`` table (see the module notes)."""
    rng = random.Random(seed)
    ratios, optimal, seconds = [], 0, []
    for _ in range(batches):
        instance = Instance(
            Machine(8),
            tuple(
                Job(
                    k,
                    rng.randint(0, 10),
                    rng.randint(1, 8),
                    rng.randint(1, 12),
                    weight=float(rng.randint(1, 5)),
                )
                for k in range(1, 9)
            ),
        )
        began = time.perf_counter()
        pre = preemptive_wct(instance, "wct:instance", time_limit=60)
        seconds.append(time.perf_counter() - began)
        _checked(instance, pre)
        plain = solve(instance, "wct:instance", backend="cpsat", time_limit=np_limit)
        _checked(instance, plain)
        assert pre.objective is not None and plain.objective is not None
        optimal += pre.status is SolveStatus.OPTIMAL
        # OPT_pmtn in [LB_p, UB_p], OPT_np in [LB_np, UB_np]; every rigid
        # schedule is a preemptive one, so OPT_np >= OPT_pmtn.
        assert pre.lower_bound is not None and pre.lower_bound > 0
        low = max(1.0, float(plain.lower_bound or 0) / pre.objective)
        ratios.append((low, plain.objective / pre.lower_bound))
    lines = [
        f"{batches} instances of 8 jobs on 8 processors, seed {seed}",
        "",
        "| quantity | value |",
        "|---|---|",
        f"| preemptive optimum proven | {optimal} / {batches} |",
        f"| OPT_np / OPT_pmtn, mean | [{statistics.mean(r[0] for r in ratios):.4f}, "
        f"{statistics.mean(r[1] for r in ratios):.4f}] |",
        f"| OPT_np / OPT_pmtn, max | [{max(r[0] for r in ratios):.4f}, "
        f"{max(r[1] for r in ratios):.4f}] |",
        f"| time-indexed model, mean / max | {statistics.mean(seconds):.2f} / "
        f"{max(seconds):.2f} s |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["price", "scale", "wct"])
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--releases", action="store_true")
    parser.add_argument("--np-limit", type=float, default=10.0)
    args = parser.parse_args()
    if args.what == "price":
        print(price(args.batches, args.seed, args.releases, args.np_limit))
    elif args.what == "scale":
        print(scale(args.seed))
    else:
        print(wct(args.batches, args.seed, args.np_limit))


if __name__ == "__main__":
    main()
