"""Reproduce Meltzer's grid co-reservation experiments (§6.4-§6.9) on KTH.

Usage::

    .venv/bin/python benchmarks/coreserve_study.py [--seeds 3] [--only 6.6]

Every experiment runs on the scenarios in ``benchmarks/grid/`` (two-week
KTH SP2 slices as the clusters' local workloads: the study's SDSC Blue
Horizon log is not available), once per seed (the seed draws the request
templates and orders the variants), with each request's exact optimum
computed on the same cluster states (``optimum=True``). Writes
``runs.csv`` (one row per run) and ``means.csv`` (means over the seeds)
into ``--out``; ``coreserve_tables.py RUNS.csv`` sets the study's numbers
beside ours with the spread over the seeds. The pessimistic A3* runs on R3
only, as in the study (Fig. 25b).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.coreserve.metrics import GridMeasures, measure
from optsched.coreserve.scenario import Scenario, load_scenario
from optsched.coreserve.simulate import GridRun, simulate_grid
from optsched.coreserve.workload import STUDY_MONDAY_OFFSET

HERE = Path(__file__).parent
GRID = HERE / "grid"


@dataclass(frozen=True)
class Run:
    """One configuration of one experiment."""

    experiment: str
    scenario: str
    label: str
    service: dict[str, Any] = field(default_factory=dict)


def experiments() -> Iterator[Run]:
    """The study's experiments (Tables 7, 8, 10, 13, 16, 18, §6.9.2)."""
    for wl in ("r1", "r3"):
        for c in (4, 7):
            for m, w in ((1, 1), (1, 3), (300, 20), (1, 200)):
                yield Run(
                    "6.4",
                    f"{wl}_c{c}",
                    f"{wl.upper()} m{m} w{w} C{c}",
                    {"algorithm": "a1", "minsize": m, "windows": w},
                )
    for a in ("a1", "a2"):
        yield Run("6.5", "r3_c4", a.upper(), {"algorithm": a})
    for wl in ("r1", "r2", "r3"):
        for a, extra in (
            ("a2", {}),
            ("a3", {}),
            ("a3*", {"accuracy": 1.0}),
            ("a3bf", {}),
        ):
            if a == "a3*" and wl != "r3":
                continue  # the study ran the pessimistic A3* on R3 only (Fig. 25b)
            service = {"algorithm": a.rstrip("*"), **extra}
            yield Run("6.6", f"{wl}_c4", f"{wl.upper()} {a.upper()}", service)
    for series in (1, 2, 3):
        for a, service in (
            ("A2", {"algorithm": "a2", "sort": "start"}),
            ("A3", {"algorithm": "a3", "sort": "start"}),
            ("A4", {"algorithm": "a4"}),
        ):
            yield Run("6.8", f"s68_series{series}", f"series {series} {a}", service)
    for k, s in ((1, 0), (0.9, 0.1), (0.8, 0.2), (0.7, 0.3), (0.6, 0.4), (0, 1)):
        yield Run("6.9.1", "s691", f"k={k} s={s}", {"algorithm": "a5", "k": k, "s": s})
    yield Run(
        "6.9.2", "s692", "CostMin A5 k=1", {"algorithm": "a5", "k": 1.0, "s": 0.0}
    )
    yield Run("6.9.2", "r1_c4", "NoOpt A4 homogeneous", {"algorithm": "a4"})


def day_night(run: GridRun) -> tuple[float, float]:
    """Shares of accepted requests whose parts ran entirely in daytime
    (8-18 h) or entirely at night (18-8 h), in the study's time of day."""
    day = night = 0
    accepted = [o for o in run.outcomes if o.accepted]
    for o in accepted:
        assert o.start is not None
        start = o.start + STUDY_MONDAY_OFFSET
        end = start + o.request.duration
        hours = {((t // 3600) % 24) for t in range(start, end, 600)}
        hours.add(((end - 1) // 3600) % 24)
        if all(8 <= h < 18 for h in hours) and end - start <= 10 * 3600:
            day += 1
        elif all(h >= 18 or h < 8 for h in hours) and end - start <= 14 * 3600:
            night += 1
    n = len(accepted) or 1
    return day / n, night / n


def message_split(run: GridRun) -> tuple[float, float, float]:
    """Mean reserve + rollback messages of the requests booked furthest
    ahead (advance booking at or above the run's median) and of the others,
    and the share of accepted requests whose first variant succeeded."""
    outcomes = run.outcomes
    advance = sorted(o.request.earliest_start - o.request.submit for o in outcomes)
    median = advance[len(advance) // 2] if advance else 0
    far = [
        o.messages.reservation
        for o in outcomes
        if o.request.earliest_start - o.request.submit >= median
    ]
    near = [
        o.messages.reservation
        for o in outcomes
        if o.request.earliest_start - o.request.submit < median
    ]
    accepted = [o for o in outcomes if o.accepted]
    first = [o.messages.reserve == len(o.request.parts) for o in accepted]
    return (
        statistics.fmean(far) if far else 0.0,
        statistics.fmean(near) if near else 0.0,
        statistics.fmean(first) if first else 0.0,
    )


def row_of(
    run: Run, seed: int, m: GridMeasures, grid: GridRun, seconds: float
) -> dict[str, Any]:
    day, night = day_night(grid)
    row: dict[str, Any] = {
        "experiment": run.experiment,
        "scenario": run.scenario,
        "label": run.label,
        "seed": seed,
        "seconds": round(seconds, 2),
        "day_share": day,
        "night_share": night,
    }
    far, near, first = message_split(grid)
    row["messages_far_ahead"] = far
    row["messages_short_notice"] = near
    row["first_variant_success"] = first
    for key, value in m.__dict__.items():
        if key in ("clusters", "expansion_by_size"):
            continue
        row[key] = value
    for c in m.clusters:
        row[f"{c.name}_reservations"] = c.reservations
        row[f"{c.name}_job_util"] = c.job_utilisation
        row[f"{c.name}_res_util"] = c.reservation_utilisation
        row[f"{c.name}_filter_degree"] = c.mean_filter_degree
        row[f"{c.name}_infeasibility"] = c.infeasibility_rate
        row[f"{c.name}_expansion"] = c.mean_expansion
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "coreserve")
    parser.add_argument("--only", default=None, help="one experiment, e.g. 6.6")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scenarios: dict[str, Scenario] = {}
    loads: dict[str, Any] = {}
    rows = []
    for run in experiments():
        if args.only and run.experiment != args.only:
            continue
        if run.scenario not in scenarios:
            scenarios[run.scenario] = load_scenario(GRID / f"{run.scenario}.toml")
            loads[run.scenario] = scenarios[run.scenario].workloads()
        base = scenarios[run.scenario]
        for seed in range(args.seeds):
            chosen = base.with_service(**run.service)
            chosen = dataclasses.replace(chosen, request_seed=seed, seed=seed)
            began = time.perf_counter()
            clusters, requests = chosen.build(loads[run.scenario])
            grid = simulate_grid(
                clusters, requests, chosen.service, seed=seed, optimum=True
            )
            m = measure(grid, chosen.t_stop)
            rows.append(row_of(run, seed, m, grid, time.perf_counter() - began))
            print(
                f"{run.experiment} {run.label} seed {seed}: {m.accepted}/{m.requests} "
                f"failure {m.failure_rate:.3f} unfair {m.unfairness:.3f} "
                f"({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    keys = sorted({k for row in rows for k in row}, key=lambda k: (k not in rows[0], k))
    with open(args.out / "runs.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    summary = {}
    for row in rows:
        summary.setdefault((row["experiment"], row["label"]), []).append(row)
    with open(args.out / "means.csv", "w", newline="") as handle:
        numeric = [k for k in keys if isinstance(rows[0].get(k), int | float)]
        writer = csv.writer(handle)
        writer.writerow(["experiment", "label", "runs", *numeric])
        for (experiment, label), group in summary.items():
            means = [
                statistics.fmean(r[k] for r in group if r.get(k) is not None)
                if any(r.get(k) is not None for r in group)
                else ""
                for k in numeric
            ]
            writer.writerow([experiment, label, len(group), *means])
    print(f"wrote {args.out / 'runs.csv'} and {args.out / 'means.csv'}")


if __name__ == "__main__":
    main()
