"""Strength and cost of each ``wct`` lower bound on the 100-job KTH windows (issue 30).

For each window of :func:`models_bench.kth_windows` (same seed and sizes as
the ``models_bench.py`` runs) this computes, with the CPU seconds each took:

* the best closed-form bound (:func:`optsched.models.rigid.bounds.lower_bounds`),
* the preemptive interval-indexed LP bound
  (:func:`optsched.models.preempt.wct_lp.preemptive_wct_lp_bound`) on about
  ``--slots`` slots,
* the LP relaxation of the time-indexed model on the rounded-down grid
  (:func:`optsched.models.rigid.milp.solve` with ``lp_only``; the grid is
  :func:`optsched.models.common.timegrid.relaxation_grid`, whose module
  notes prove the rounding safe) on at most ``--cells`` cells,

and sets them beside CP-SAT's own bound and the best schedule of a
``models_bench.py`` run (``--cpsat FILE.jsonl``). A bound "closes" a window
when it reaches that schedule's objective. Every row is appended to
``--out`` (JSON lines); ``--summary FILE`` prints the table of a file.

Example::

    .venv/bin/python benchmarks/wct_bounds.py --windows 10 \\
        --cpsat benchmarks/results/models_wct100_60s_issue30_before.jsonl \\
        --out benchmarks/results/wct_bounds_100.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markdown_table import markdown_table
from models_bench import KTH, kth_windows

from optsched.instance import Instance
from optsched.models.preempt.wct_lp import preemptive_wct_lp_bound
from optsched.models.rigid import milp
from optsched.models.rigid.bounds import lower_bounds
from optsched.objective import Objective


def timed(compute: Callable[[], float]) -> tuple[float, float]:
    """``(value, CPU seconds)`` of ``compute()``."""
    began = time.process_time()
    value = compute()
    return value, time.process_time() - began


def time_indexed_lp(instance: Instance, objective: Objective, cells: int) -> float:
    """The time-indexed LP bound on at most ``cells`` cells (``-inf`` if none)."""
    result = milp.solve(
        instance, objective, lp_only=True, max_cells=cells, time_limit=600, workers=1
    )
    values = [b.value for b in result.bounds if b.method.startswith("lp:")]
    return max(values, default=float("-inf"))


def measure(
    first: int, instance: Instance, slots: list[int], cells: list[int]
) -> dict[str, Any]:
    """One window's row: each bound's value and CPU seconds."""
    objective = Objective.parse("wct")
    row: dict[str, Any] = {"key": first}
    row["closed-form"] = timed(
        lambda: max(b.value for b in lower_bounds(instance, objective))
    )
    for count in slots:
        row[f"preemptive-lp/{count}"] = timed(
            lambda count=count: (
                preemptive_wct_lp_bound(instance, objective, slots=count).value
            )
        )
    for count in cells:
        row[f"time-indexed-lp/{count}"] = timed(
            lambda count=count: time_indexed_lp(instance, objective, count)
        )
    return row


def summary(rows: list[dict[str, Any]], cpsat: dict[int, dict[str, Any]]) -> str:
    """Per window and bound: the shortfall below the best schedule, in %
    (negative: the bound closes the window), and the CPU seconds."""
    names = [k for k in rows[0] if k != "key"]
    header = ["first job", "best schedule", "60 s solve's bound", *names]
    lines = []
    for row in rows:
        ran = cpsat.get(row["key"], {})
        upper = ran.get("upper")
        own = ran.get("lower")
        cells = [
            f"{row['key']}",
            f"{upper:,.0f}" if upper is not None else "–",
            _short(own, upper) if own is not None else "–",
        ]
        for name in names:
            value, cpu = row[name]
            cells.append(f"{_short(value, upper)} ({cpu:.2f} s)")
        lines.append(cells)
    return "\n".join(markdown_table(header, "rrr" + "r" * len(names), lines))


def _short(value: float, upper: float | None) -> str:
    if upper is None:
        return f"{value:,.0f}"
    return f"{value:,.0f} ({(upper - value) / upper:.3%})"


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def _rows(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default=str(KTH))
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--windows", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slots", type=_ints, default=[400, 1600])
    parser.add_argument("--cells", type=_ints, default=[400, 2000])
    parser.add_argument("--cpsat", default=None, help="models_bench.py rows (wct)")
    parser.add_argument("--out", default=None, help="JSON-lines file to append to")
    parser.add_argument("--summary", default=None, help="only summarise this file")
    args = parser.parse_args(argv)
    cpsat = {}
    if args.cpsat:
        cpsat = {
            r["key"]: r for r in _rows(Path(args.cpsat)) if r["objective"] == "wct"
        }
    if args.summary:
        print(summary(_rows(Path(args.summary)), cpsat))
        return 0
    rows = []
    windows = kth_windows(Path(args.trace), [args.size], args.windows, args.seed)
    for _, first, instance in windows:
        row = measure(first, instance, args.slots, args.cells)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with Path(args.out).open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
    print(summary(rows, cpsat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
