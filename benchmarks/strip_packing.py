"""Issue 16: strip packing, perfect (BKW-like) and non-perfect instances.

Usage::

    .venv/bin/python benchmarks/strip_packing.py [--time-limit 60]
        [--workers 2] [--perfect-seeds 4] [--reduced-seeds 5]
        [--sizes 50,100,200,300,500] [--reduced 20,30,40,50] [--out FILE]

Perfect packings: :func:`optsched.generate.perfect.perfect_packing` with ``mixed=True``
(guillotine cuts in either direction with probability 1/2: mixed aspect
ratios), strip dimensions modelled on the BKW family (Burke, Kendall,
Whitwell 2004; see :data:`PERFECT`), seeds ``0..K-1``; the optimum is ``H``.
Non-perfect: :func:`optsched.generate.perfect.reduced_packing` of a ``W x W`` cut
(``W`` in :data:`REDUCED`) with share ``0.10, 0.15, 0.20, 0.25, 0.30`` for
seeds ``0..4``; the optimum is unknown, at most the reduced layout's
makespan. Each instance is solved by ``optsched.models.solve(inst, "cmax",
time_limit=..., workers=...)``. Every schedule goes through
:func:`optsched.check.check_schedule`, every lower bound is compared with
the optimum where known (perfect: ``H``) and with the objective; the script
stops on any violation. Rows go to ``benchmarks/results/strip_packing/``
(jsonl); a summary table is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from markdown_table import markdown_table

from optsched import models
from optsched.check import check_schedule
from optsched.generate.perfect import perfect_packing, reduced_packing
from optsched.instance import Instance

PERFECT: dict[int, tuple[int, int]] = {
    50: (100, 100),
    100: (50, 150),
    200: (70, 150),
    300: (70, 150),
    500: (100, 300),
}
"""Items -> (strip width, height), after BKW's N5, N9-N12 (as recalled)."""

REDUCED: dict[int, int] = {20: 20, 30: 30, 40: 40, 50: 40, 60: 50}
"""Items -> side ``W = H`` of the cut before the removal."""

SHARES = (0.10, 0.15, 0.20, 0.25, 0.30)


Case = tuple[str, int, int, Instance, int | None]


def _instances(args: argparse.Namespace) -> list[Case]:
    out: list[Case] = []
    for n in args.sizes:
        width, height = PERFECT[n]
        for seed in range(args.perfect_seeds):
            inst = perfect_packing(width, height, n, seed=seed, mixed=True)
            out.append(("perfect", n, seed, inst, height))
    for n in args.reduced:
        side = REDUCED[n]
        for seed in range(args.reduced_seeds):
            share = SHARES[seed % len(SHARES)]
            inst, _ = reduced_packing(side, side, n, share=share, seed=seed)
            out.append(("reduced", n, seed, inst, None))
    return out


def _row(
    family: str,
    n: int,
    seed: int,
    inst: Instance,
    optimum: int | None,
    args: argparse.Namespace,
) -> dict[str, object]:
    began = time.perf_counter()
    result = models.solve(
        inst, "cmax", time_limit=args.time_limit, workers=args.workers
    )
    wall = time.perf_counter() - began
    if result.schedule is None or check_schedule(inst, result.schedule):
        sys.exit(f"violation: {inst.name}: schedule missing or infeasible")
    lower = result.lower_bound
    if lower is None or lower > result.objective:
        sys.exit(f"violation: {inst.name}: bound {lower} > {result.objective}")
    if optimum is not None and lower > optimum:
        sys.exit(f"violation: {inst.name}: bound {lower} > optimum {optimum}")
    params = dict(result.params)
    return {
        "family": family,
        "items": n,
        "seed": seed,
        "name": inst.name,
        "status": str(result.status),
        "objective": result.objective,
        "lower_bound": lower,
        "optimum": optimum,
        "gap": result.gap,
        "seconds": round(wall, 2),
        "upper_bound_source": result.upper_bound_source,
        "binding_bound": getattr(result.binding_bound, "method", None),
        "tiling": params.get("tiling"),
        "time_limit": args.time_limit,
        "workers": args.workers,
        "load": os.getloadavg()[0],
        "tiling_off": args.no_tiling,
    }


def summary(rows: list[dict[str, object]]) -> str:
    """The markdown table: proven share, mean gap and time per family/size."""
    header = ("family", "items", "runs", "proven optimal", "mean gap", "max gap",
              "mean time (s)")  # fmt: skip
    cells = []
    keys = sorted({(str(r["family"]), int(r["items"])) for r in rows})  # type: ignore[call-overload]
    for family, n in keys:
        group = [r for r in rows if r["family"] == family and r["items"] == n]
        proven = sum(r["status"] == "OPTIMAL" for r in group)
        gaps = [float(r["gap"] or 0.0) for r in group]  # type: ignore[arg-type]
        times = [float(r["seconds"]) for r in group]  # type: ignore[arg-type]
        cells.append(
            (family, n, len(group), f"{proven}/{len(group)}",
             f"{100 * statistics.mean(gaps):.2f}%", f"{100 * max(gaps):.2f}%",
             f"{statistics.mean(times):.1f}")
        )  # fmt: skip
    return "\n".join(markdown_table(header, "lrrrrrr", cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--perfect-seeds", type=int, default=4)
    parser.add_argument("--reduced-seeds", type=int, default=5)
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=list(PERFECT),
    )
    parser.add_argument(
        "--reduced",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=list(REDUCED),
    )
    parser.add_argument(
        "--no-tiling",
        action="store_true",
        help="CP-SAT alone: the tiling step of models/rigid/cpsat.py does nothing",
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--summary", type=Path, default=None)
    args = parser.parse_args()
    if args.summary is not None:
        rows = [json.loads(line) for line in args.summary.read_text().splitlines()]
        print(summary(rows))
        return
    if args.no_tiling:
        from optsched.models.rigid import cpsat, tiling

        cpsat.tiling_strengthen = lambda *a, **k: tiling.Strengthening()  # type: ignore[attr-defined]
    out = args.out or Path("benchmarks/results/strip_packing") / (
        time.strftime("%Y%m%d-%H%M%S") + ".jsonl"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with out.open("w") as sink:
        for family, n, seed, inst, optimum in _instances(args):
            row = _row(family, n, seed, inst, optimum, args)
            rows.append(row)
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            print(
                family, n, seed, row["status"], row["lower_bound"],
                row["objective"], row["seconds"], flush=True,
            )  # fmt: skip
    print(summary(rows))
    print(f"rows: {out}")


if __name__ == "__main__":
    main()
