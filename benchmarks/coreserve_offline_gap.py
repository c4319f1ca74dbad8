"""Competitive gap of the online co-reservation algorithms on acceptance.

Usage::

    .venv/bin/python benchmarks/coreserve_offline_gap.py [--days 14] [--limit 10]

Runs each algorithm on ``benchmarks/grid/r1_c4.toml`` (seed 0), cuts the
run into one-day windows (:func:`optsched.grid.offline_window.offline_window`)
and solves each window's offline problem (``accepted``: most requests
accepted, then least local wait; CP-SAT, 1 worker, ``--limit`` seconds per
solve). Writes ``benchmarks/results/coreserve/offline_gap.csv``: per
algorithm and window the online acceptance, the offline solution and its
proven upper bound, and the local jobs' total wait online and offline.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from optsched.grid.offline_window import offline_window
from optsched.grid.scenario import load_scenario
from optsched.grid.simulate import simulate_grid
from optsched.models.coreserve_offline import competitive_gap, solve_offline

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
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    base = load_scenario(HERE / "grid" / "r1_c4.toml")
    loads = base.workloads()
    rows = []
    for label, service in ALGORITHMS.items():
        chosen = base.with_service(**service)
        clusters, requests = chosen.build(loads)
        run = simulate_grid(clusters, requests, chosen.service, seed=chosen.seed)
        for day in range(args.days):
            window = offline_window(run, day * 86_400, (day + 1) * 86_400)
            if not window.requests:
                continue
            began = time.perf_counter()
            offline = solve_offline(
                window.clusters, window.requests, time_limit=args.limit, workers=1
            )
            gap = competitive_gap(
                window.clusters, window.requests, window.online, offline
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
                    "seconds": round(time.perf_counter() - began, 1),
                }
            )
            print(rows[-1], flush=True)
    with open(args.out / "offline_gap.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
