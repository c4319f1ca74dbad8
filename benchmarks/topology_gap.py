"""Competitive gaps on machines with speeds and SMP nodes (issue 15).

Usage::

    .venv/bin/python benchmarks/topology_gap.py speeds [--instances 10]
        [--jobs 20] [--timespans 0,4000] [--time-limit 30] --out FILE
    .venv/bin/python benchmarks/topology_gap.py smp [--windows 10] [--jobs 20]
        [--level 2] [--tights 0,1,2] [--time-limit 30] --out FILE

``speeds``: Rassmann's experiment-4 job mix (:func:`optsched.generate.afkt.
afkt_instance`: 22 nodes, 16 x 275 + 6 x 825, seqR 0.5, largeR 0.3,
sequential work U[2000, 100000], parallel U[20000, 800000], exact
estimates), ``--jobs`` jobs per instance, seeds 0..N-1, each with the
release span ``T_c,max`` of ``--timespans`` (0: a batch). The thesis's ten
schedulers run on each (:data:`SCHEDULERS`) and
:func:`optsched.competitive_gap` rates them against the CP-SAT optimum of
:mod:`optsched.models.topology.speeds` (``cmax`` and ``wct``).

``smp``: random ``--jobs``-job windows of KTH (seed 1, as the suites) with
every job released at the window's start (a batch: the recorded releases
leave 20-job windows nearly idle, see ``suites/topology_smp.toml``), on
10 x 10 nodes at ``--level`` with the ``excess`` cost: the schedulers'
gaps at each Tight, and the optimum for each Tight and without a limit
(:func:`optsched.models.topology.smp.tight_sweep`): what a Tight value costs
against the best placement.

Both write ``FILE.csv`` (one row per instance, scheduler and objective) and
``FILE.md`` (mean and max of the ratio interval ends, share proven).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

SCHEDULERS = (
    "blocking:f=fifo", "blocking:f=spt", "blocking:f=lpt", "fit:f=fifo",
    "afkt-backfill:f=fifo", "optimistic:f=fifo", "fit:f=spt",
    "afkt-backfill:f=spt", "fit:f=lpt", "afkt-backfill:f=lpt",
)  # fmt: skip
TRACE = Path(__file__).resolve().parents[2] / "shared/traces/KTH-SP2-1996-2.1-cln.swf"


def _gap(instance: Any, args: argparse.Namespace) -> pd.DataFrame:
    from optsched import competitive_gap

    return competitive_gap(
        instance,
        policies=",".join(SCHEDULERS),
        objectives="cmax,wct",
        time_limit=args.time_limit,
        workers=args.workers,
    )


def speeds(args: argparse.Namespace) -> pd.DataFrame:
    from optsched.generate.afkt import afkt_instance

    frames = []
    for timespan in (int(t) for t in args.timespans.split(",")):
        for seed in range(args.instances):
            instance = afkt_instance(
                args.jobs, "22", seq_ratio=0.5, large_ratio=0.3,
                timespan=timespan, seq_work=(2000, 100_000),
                par_work=(20_000, 800_000), seed=seed,
                name=f"afkt-{args.jobs}-T{timespan}-s{seed}",
            )  # fmt: skip
            rows = _gap(instance, args).assign(timespan=timespan, seed=seed)
            frames.append(rows)
            print(f"T_c {timespan} seed {seed} done", file=sys.stderr)
    return pd.concat(frames, ignore_index=True)


def smp(args: argparse.Namespace) -> pd.DataFrame:
    from optsched.instance import Machine
    from optsched.io.swf import read_swf
    from optsched.models.topology.smp import tight_sweep
    from optsched.nodes import Nodes
    from optsched.windows.selection import WindowRule, select_windows

    trace = read_swf(args.trace)
    rule = WindowRule(kind="random", jobs=args.jobs, count=args.windows, seed=1)
    tights = [int(t) for t in args.tights.split(",")]
    frames = []
    for spec in select_windows(trace, rule):
        window = spec.cut(trace)
        batch = window.with_jobs(j.replace(release=0) for j in window.jobs)
        for tight in tights:
            nodes = Nodes(10, 10, tight=tight, level=args.level, cost="excess")
            instance = batch.replace(machine=Machine(100, nodes=nodes))
            rows = _gap(instance, args).assign(tight=tight, window=spec.key)
            frames.append(rows)
        for objective in ("cmax", "wct"):
            nodes = Nodes(10, 10, level=args.level, cost="excess")
            instance = batch.replace(machine=Machine(100, nodes=nodes))
            sweep = tight_sweep(
                instance, objective, [*tights, None],
                time_limit=args.time_limit, workers=args.workers,
            )  # fmt: skip
            for tight, result in sweep.items():
                frames.append(pd.DataFrame([{
                    "policy": "optimum", "objective": objective,
                    "tight": -1 if tight is None else tight, "window": spec.key,
                    "value": result.objective, "lower": result.lower_bound,
                    "optimal": result.status.name == "OPTIMAL",
                }]))  # fmt: skip
        print(f"window {spec.key} done", file=sys.stderr)
    return pd.concat(frames, ignore_index=True)


def summary(rows: pd.DataFrame, by: list[str]) -> str:
    rated = rows[rows["policy"] != "optimum"]
    table = rated.groupby([*by, "policy", "objective"]).agg(
        instances=("ratio_low", "size"),
        proven=("optimal", "mean"),
        mean_low=("ratio_low", "mean"),
        mean_high=("ratio_high", "mean"),
        max_high=("ratio_high", "max"),
    )
    text = _markdown(table.round(4).reset_index())
    optimum = rows[rows["policy"] == "optimum"]
    if not optimum.empty:
        columns = ["window", "objective", "tight", "value", "lower", "optimal"]
        text += "\n\n" + _markdown(optimum[columns])
    return text


def _markdown(frame: pd.DataFrame) -> str:
    # pandas' to_markdown needs tabulate, which is not a dependency.
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |"]
    lines.append("|" + "---|" * len(frame.columns))
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(map(str, row)) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("speeds")
    a.add_argument("--instances", type=int, default=10)
    a.add_argument("--timespans", default="0,4000")
    b = sub.add_parser("smp")
    b.add_argument("--trace", default=TRACE)
    b.add_argument("--windows", type=int, default=10)
    b.add_argument("--level", type=int, default=2)
    b.add_argument("--tights", default="0,1,2")
    for p in (a, b):
        p.add_argument("--jobs", type=int, default=20)
        p.add_argument("--time-limit", type=float, default=30.0)
        p.add_argument("--workers", type=int, default=2)
        p.add_argument("--out", required=True)
    args = parser.parse_args()
    rows = speeds(args) if args.command == "speeds" else smp(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows.to_csv(out.with_suffix(".csv"), index=False)
    by = ["timespan"] if args.command == "speeds" else ["tight"]
    out.with_suffix(".md").write_text(summary(rows, by) + "\n")
    print(summary(rows, by))


if __name__ == "__main__":
    main()
