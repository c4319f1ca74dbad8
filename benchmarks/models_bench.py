"""Benchmark of the exact and bounded models (issue 4).

Two instance families:

* KTH windows: ``--windows`` windows of each size in ``--sizes``
  consecutive jobs of the KTH-SP2 log, first jobs drawn with a fixed seed,
  empty initial state (no busy blocks); both objectives (``cmax`` and
  ``wct`` with unit weights).
* Perfect packings (``optsched.generate.perfect.perfect_packing``): ``--packings``
  item counts on a 20 x 20 strip, ``--packing-seeds`` seeds each
  (alternately guillotine and non-guillotine), contiguous allocation, cmax;
  the optimum is the strip height 20 by construction.

Every result is checked (schedule through the checker, every bound at most
the objective, packings: bound at most 20 at most objective) and appended to
a JSON-lines file, so an interrupted run keeps what it measured. The summary
(per family, size and objective: share proven optimal, mean and max relative
gap ``(UB - LB) / UB``, mean time) is printed as Markdown.

``--subsolver-study`` instead measures CP-SAT's bound-raising sub-solvers on
one 200-job KTH window (see benchmarks/README.md).

Examples::

    .venv/bin/python benchmarks/models_bench.py --windows 20 --time-limit 60
    .venv/bin/python benchmarks/models_bench.py --windows 5 --time-limit 20 \\
        --out benchmarks/results/models.jsonl
    .venv/bin/python benchmarks/models_bench.py --summary FILE.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from optsched.check import check_schedule
from optsched.generate.perfect import perfect_packing
from optsched.instance import Instance
from optsched.io import read_trace
from optsched.models import solve
from optsched.result import Result
from optsched.windows.window import cut_window

REPO = Path(__file__).resolve().parent.parent
KTH = REPO.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf"
PACKING_SIDE = 20


def kth_windows(
    trace_path: Path, sizes: Iterable[int], windows: int, seed: int
) -> Iterator[tuple[int, int, Instance]]:
    """``(size, first_job, instance)``; first jobs drawn per size with ``seed``."""
    trace = read_trace(trace_path)
    total = len(trace.instance.jobs)
    for size in sizes:
        rng = random.Random(f"{seed}:{size}")
        firsts = sorted(rng.sample(range(total - size + 1), windows))
        for first in firsts:
            yield size, first, cut_window(trace, first_job=first, jobs=size)


def packings(items: Iterable[int], seeds: int) -> Iterator[tuple[int, int, Instance]]:
    """``(items, seed, instance)``; odd seeds non-guillotine; ``--packings
    0`` asks for none."""
    for n in (count for count in items if count > 0):
        for seed in range(seeds):
            guillotine = seed % 2 == 0
            side = PACKING_SIDE
            yield (
                n,
                seed,
                perfect_packing(side, side, n, seed=seed, guillotine=guillotine),
            )


def verified(instance: Instance, result: Result) -> None:
    """Fail loudly on an invalid schedule or bound."""
    if result.schedule is not None:
        violations = check_schedule(instance, result.schedule)
        if violations:
            raise AssertionError(f"{instance.name}: {violations[0]}")
    if result.objective is not None:
        for bound in result.bounds:
            slack = 1e-9 * max(1.0, abs(result.objective))
            if bound.value > result.objective + slack:
                raise AssertionError(
                    f"{instance.name}: bound {bound} > {result.objective}"
                )


def record(
    family: str, size: int, key: int, objective: str, result: Result
) -> dict[str, Any]:
    binding = result.binding_bound
    return {
        "family": family,
        "size": size,
        "key": key,
        "objective": objective,
        "status": result.status.value,
        "upper": result.objective,
        "lower": result.lower_bound,
        "gap": result.gap,
        "runtime": result.runtime,
        "binding": binding.method if binding is not None else None,
        "source": result.upper_bound_source,
        "cpsat_bound": next(
            (b.value for b in result.bounds if b.method == "cpsat"), None
        ),
        "load": _load(),
    }


def _load() -> float | None:
    """The one-minute load average after a solve (Linux; ``None`` elsewhere)."""
    try:
        return float(Path("/proc/loadavg").read_text(encoding="utf-8").split()[0])
    except OSError:
        return None


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    out = Path(args.out) if args.out else None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    options: dict[str, Any] = {"time_limit": args.time_limit, "workers": args.workers}
    if args.parameters:
        options["parameters"] = json.loads(args.parameters)
    if args.subsolvers is not None:
        options["bound_subsolvers"] = tuple(args.subsolvers)

    def keep(row: dict[str, Any]) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)
        if out is not None:
            with out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")

    if args.windows > 0:
        for size, first, instance in kth_windows(
            Path(args.trace), args.sizes, args.windows, args.seed
        ):
            for objective in args.objectives:
                result = solve(instance, objective, backend=args.backend, **options)
                verified(instance, result)
                keep(record("kth", size, first, objective, result))
    for n, seed, instance in packings(args.packings, args.packing_seeds):
        result = solve(instance, "cmax", backend=args.backend, **options)
        verified(instance, result)
        assert result.lower_bound is not None and result.objective is not None
        assert result.lower_bound <= PACKING_SIDE <= result.objective, instance.name
        keep(record("packing", n, seed, "cmax", result))
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    """Markdown table per family, size and objective."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["family"], row["size"], row["objective"]].append(row)
    lines = [
        "| family | size | objective | runs | proven optimal | mean gap | max gap "
        "| mean time (s) | max time (s) | load |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (family, size, objective), group in sorted(groups.items()):
        gaps = [r["gap"] for r in group if r["gap"] is not None]
        times = [r["runtime"] for r in group]
        proven = sum(r["status"] == "OPTIMAL" for r in group) / len(group)
        lines.append(
            f"| {family} | {size} | {objective} | {len(group)} | {proven:.0%} "
            f"| {statistics.mean(gaps):.3%} | {max(gaps):.3%} "
            f"| {statistics.mean(times):.1f} | {max(times):.1f} | {_loads(group)} |"
        )
    return "\n".join(lines)


def comparison(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """Markdown table per window: gap, bound and best schedule, before and after."""
    earlier = {(r["family"], r["size"], r["key"], r["objective"]): r for r in before}
    lines = []
    for row in after:
        old = earlier.get((row["family"], row["size"], row["key"], row["objective"]))
        if old is None:
            continue
        lines.append(
            f"| {row['key']} | {_gap(old)} | {_gap(row)} "
            f"| {row['lower'] - old['lower']:+,.0f} "
            f"| {row['upper'] - old['upper']:+,.0f} "
            f"| {old.get('load', '–')} / {row.get('load', '–')} |"
        )
    header = (
        "| first job | gap before | gap after | bound after − before "
        "| schedule after − before | load before / after |\n"
        "|---:|---:|---:|---:|---:|---:|"
    )
    return "\n".join([header, *lines])


def _gap(row: dict[str, Any]) -> str:
    return "proven" if row["status"] == "OPTIMAL" else f"{row['gap']:.3%}"


def _loads(rows: list[dict[str, Any]]) -> str:
    """The range of the load averages recorded with ``rows`` ("–" if none)."""
    loads = [r["load"] for r in rows if r.get("load") is not None]
    return f"{min(loads):.1f}–{max(loads):.1f}" if loads else "–"


def subsolver_study(args: argparse.Namespace) -> None:
    """CP-SAT's bound with and without the bound-raising sub-solvers."""
    trace = read_trace(Path(args.trace))
    window = cut_window(trace, first_job=args.study_first_job, jobs=200)
    batch = window.with_jobs([j.replace(release=0) for j in window.jobs])
    configs = {
        "none": (),
        "lb_search": ("objective_lb_search",),
        "shaving": ("objective_shaving",),
        "both": ("objective_lb_search", "objective_shaving"),
    }
    cases = [
        ("cmax, releases 0, no domain LB", batch, "cmax", False),
        ("wct, trace releases", window, "wct", True),
    ]
    print("| case | sub-solvers | UB | CP-SAT bound | best LB | gap |")
    print("|---|---|---:|---:|---:|---:|")
    for label, instance, objective, domain in cases:
        for name, subsolvers in configs.items():
            result = solve(
                instance,
                objective,
                backend="cpsat",
                time_limit=args.time_limit,
                workers=args.workers,
                bound_subsolvers=subsolvers,
                bound_domain=domain,
            )
            verified(instance, result)
            own = next((b.value for b in result.bounds if b.method == "cpsat"), None)
            print(
                f"| {label} | {name} | {result.objective:,.0f} | "
                f"{own:,.0f} | {result.lower_bound:,.0f} | {result.gap:.3%} |",
                flush=True,
            )


def _read_rows(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default=str(KTH))
    parser.add_argument("--sizes", type=_ints, default=[50, 100, 200, 500, 1000])
    parser.add_argument("--windows", type=int, default=20, help="windows per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--objectives", type=lambda s: s.split(","), default=["cmax", "wct"]
    )
    parser.add_argument("--packings", type=_ints, default=[10, 20, 30, 40, 50])
    parser.add_argument("--packing-seeds", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", default="cpsat")
    parser.add_argument(
        "--parameters",
        default=None,
        help="CP-SAT fields as JSON, e.g. '{\"interleave_search\": true}'",
    )
    parser.add_argument(
        "--subsolvers",
        type=lambda s: [x for x in s.split(",") if x],
        default=None,
        help="bound_subsolvers, comma-separated ('' for none)",
    )
    parser.add_argument("--out", default=None, help="JSON-lines file to append to")
    parser.add_argument("--summary", default=None, help="only summarise this file")
    parser.add_argument(
        "--compare",
        nargs=2,
        default=None,
        metavar=("BEFORE", "AFTER"),
        help="only compare two JSON-lines files window by window",
    )
    parser.add_argument("--subsolver-study", action="store_true")
    parser.add_argument("--study-first-job", type=int, default=5000)
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(_read_rows(Path(args.summary))))
        return 0
    if args.compare:
        print(comparison(*(_read_rows(Path(name)) for name in args.compare)))
        return 0
    if args.subsolver_study:
        subsolver_study(args)
        return 0
    began = time.perf_counter()
    rows = run(args)
    print(f"\nwall time {time.perf_counter() - began:.0f} s\n")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
