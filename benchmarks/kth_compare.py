"""Compare the reference quality of two KTH suite runs, window by window.

Usage::

    python benchmarks/kth_compare.py NEW.sqlite benchmarks/results/kth_gap_rows.csv

The first argument is a results store of ``benchmarks/suites/kth.toml``,
the second the gap rows of the earlier run (CSV with ``window``,
``objective``, ``lower``, ``upper``: the best bounds of each window,
policies included). For every objective, on the windows both runs
finished, it prints the share of windows whose optimum is proven and the
mean and max relative gap ``(UB - LB) / UB`` of the reference
(:func:`optsched.bench.store.references`: best LB of the window, best UB
of the solver and the complete policy schedules), and the same for the
earlier run.
"""

from __future__ import annotations

import sys

import pandas as pd

from optsched.analysis.gap import is_optimal
from optsched.bench.store import Store, references


def _gap(lower: float, upper: float) -> float:
    return (upper - lower) / upper if upper else 0.0


def new_run(store_path: str) -> pd.DataFrame:
    """One row per (window, objective) of a store: LB, UB, proven, gap."""
    with Store(store_path, create=False) as store:
        rows = store.task_rows()
    out = []
    for (_, _, window, objective), ref in references(rows).items():
        if ref.lower is None or ref.upper is None:
            continue
        out.append(
            (window, objective, ref.lower, ref.upper, is_optimal(ref.lower, ref.upper),
             _gap(ref.lower, ref.upper))
        )  # fmt: skip
    columns = ["window", "objective", "lower", "upper", "proven", "gap"]
    return pd.DataFrame(out, columns=columns)


def old_run(csv_path: str) -> pd.DataFrame:
    """The earlier run's gap rows (one reference per window) in the same shape."""
    old = pd.read_csv(csv_path).drop_duplicates(["window", "objective"])
    pairs = list(zip(old["lower"], old["upper"], strict=True))
    old["proven"] = [is_optimal(lo, up) for lo, up in pairs]
    old["gap"] = [_gap(lo, up) for lo, up in pairs]
    return old[["window", "objective", "lower", "upper", "proven", "gap"]]


def main() -> None:
    new, old = new_run(sys.argv[1]), old_run(sys.argv[2])
    both = new.merge(old, on=["window", "objective"], suffixes=("_new", "_old"))
    print(
        "| objective | windows | proven before | proven now | mean gap before |"
        " mean gap now | max gap before | max gap now | LB raised | UB lowered |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for objective, group in both.groupby("objective"):
        raised = int((group["lower_new"] > group["lower_old"] + 1e-9).sum())
        lowered = int((group["upper_new"] < group["upper_old"] - 1e-9).sum())
        print(
            f"| {objective} | {len(group)} | {group['proven_old'].sum()} | "
            f"{group['proven_new'].sum()} | {group['gap_old'].mean():.3%} | "
            f"{group['gap_new'].mean():.3%} | {group['gap_old'].max():.3%} | "
            f"{group['gap_new'].max():.3%} | {raised} | {lowered} |"
        )


if __name__ == "__main__":
    main()
