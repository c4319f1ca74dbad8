"""Competitive gap of the online co-reservation algorithms on acceptance.

Usage::

    .venv/bin/python benchmarks/coreserve_offline_gap.py [--days 14] [--limit 10]

Runs each algorithm on ``benchmarks/grid/r1_c4.toml`` (seed 0), cuts the
run into one-day windows (:func:`optsched.coreserve.offline_window.offline_window`)
and solves each window's offline problem (``accepted``: most requests
accepted, then least local wait; CP-SAT, 1 worker, ``--limit`` seconds per
solve). Writes ``benchmarks/results/coreserve/offline_gap.csv``: per
algorithm and window the online acceptance, the offline solution and its
proven upper bound, and the local jobs' total wait online and offline.
With ``--weighted``, the cost objective of
:func:`~optsched.models.coreserve.offline.solve_offline` (``k=1, s=0``: each
accepted request's cost over the most it could cost, 2 per rejection) for
A4 and A5 k=1 on ``benchmarks/grid/s692.toml`` (cheap weekends), into
``offline_gap_weighted.csv`` (online value, offline value and the proven
lower bound).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from optsched.coreserve.offline_window import offline_window
from optsched.coreserve.scenario import load_scenario
from optsched.coreserve.simulate import simulate_grid
from optsched.models.coreserve.offline import competitive_gap, solve_offline

HERE = Path(__file__).parent
ALGORITHMS = {
    "A2": {"algorithm": "a2"},
    "A3": {"algorithm": "a3"},
    "A3-BF": {"algorithm": "a3bf"},
    "A4": {"algorithm": "a4"},
    "A5 k=1": {"algorithm": "a5", "k": 1.0, "s": 0.0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--limit", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "coreserve")
    parser.add_argument(
        "--weighted",
        action="store_true",
        help="cost objective instead (k=1, s=0): F = sum over accepted "
        "requests of cost / most possible cost, + 2 per rejected request; "
        "for A4 and A5 k=1",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # The cost objective needs prices that differ (homogeneous prices make
    # every variant cost the same): the §6.9.2 scenario, cheap weekends.
    name = "s692" if args.weighted else "r1_c4"
    base = load_scenario(HERE / "grid" / f"{name}.toml")
    loads = base.workloads()
    rows = []
    chosen_algorithms = (
        {k: ALGORITHMS[k] for k in ("A4", "A5 k=1")} if args.weighted else ALGORITHMS
    )
    objective = "weighted" if args.weighted else "accepted"
    weights = {"k": 1, "s": 0} if args.weighted else {}
    for label, service in chosen_algorithms.items():
        chosen = base.with_service(**service)
        clusters, requests = chosen.build(loads)
        run = simulate_grid(clusters, requests, chosen.service, seed=chosen.seed)
        for day in range(args.days):
            window = offline_window(run, day * 86_400, (day + 1) * 86_400)
            if not window.requests:
                continue
            began = time.perf_counter()
            offline = solve_offline(
                window.clusters,
                window.requests,
                objective,
                time_limit=args.limit,
                workers=1,
                **weights,
            )
            gap = competitive_gap(
                window.clusters, window.requests, window.online, offline, **weights
            )
            rows.append(
                {
                    "algorithm": label,
                    "day": day,
                    "requests": len(window.requests),
                    "jobs": sum(len(c.jobs) for c in window.clusters),
                    "online_accepted": gap.online_accepted,
                    "offline_accepted": gap.offline_accepted,
                    "accepted_bound": gap.accepted_bound,
                    "status": offline.status.name,
                    "online_wait": window.online_wait,
                    "offline_wait": offline.local_wait,
                    "wait_status": offline.params.get("wait_status", ""),
                    "online_value": float(gap.online_value),
                    "offline_value": float(gap.offline_value),
                    "lower_bound": None
                    if gap.lower_bound is None
                    else float(gap.lower_bound),
                    "seconds": round(time.perf_counter() - began, 1),
                }
            )
            print(rows[-1], flush=True)
    name = "offline_gap_weighted.csv" if args.weighted else "offline_gap.csv"
    with open(args.out / name, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
