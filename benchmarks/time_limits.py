"""Issue 30: do time limits hold, model building included? (every back-end)

Usage::

    .venv/bin/python benchmarks/time_limits.py [--time-limit 5] [--workers 2]
        [--backends cpsat,shelf,milp,bounds-only,preemptive]
        [--kth-windows 5] [--kth-sizes 100,1000] [--perfect-seeds 1]
        [--reduced-seeds 1] [--large 3152] [--out FILE.jsonl]

Instances: the strip set of ``benchmarks/strip_packing.py`` (perfect BKW-like
packings of 50–500 items and reduced 20–50-item ones, ``--perfect-seeds`` /
``--reduced-seeds`` seeds each), perfect packings of ``--large`` items
(``W = 100, H = 10000``, the issue's 3,152-item example) and
``--kth-windows`` KTH-SP2 windows of each size in ``--kth-sizes``
(``models_bench.kth_windows``, seed 0). Makespan for the strips, makespan
and ``wct`` for the KTH windows.

Each (instance, objective, back-end) runs in a fresh child process, so that
the back-end's imports (OR-Tools, PuLP: seconds on a loaded machine) fall
inside the measured call, as in a command: the child times
``optsched.models.solve(..., time_limit=L)`` alone (``time.perf_counter``
around the call; reading or generating the instance is outside, as in
``optsched bound``, whose limit starts after reading). The target is
``elapsed <= 1.1 L + 1 s``; each row gives ``elapsed / L``, the status and
whether the target held. Every schedule goes through
:func:`optsched.check.check_schedule` and every lower bound is compared with
the objective and the known optimum (the script stops on a violation). A
back-end that refuses an instance (a rigid-only back-end, ``shelf`` on a
weighted objective it does not take) gives a row ``refused``. Nothing is
asserted about time: the table is the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from markdown_table import markdown_table

BACKENDS = ("cpsat", "shelf", "milp", "bounds-only", "preemptive")
LARGE_SIDE = (100, 10_000)


def cases(args: argparse.Namespace) -> list[tuple[str, str]]:
    """``(case key, objective)`` for every instance of the set."""
    import strip_packing

    keys: list[tuple[str, str]] = []
    strips = argparse.Namespace(
        sizes=list(strip_packing.PERFECT),
        perfect_seeds=args.perfect_seeds,
        reduced=list(strip_packing.REDUCED),
        reduced_seeds=args.reduced_seeds,
    )
    for family, n, seed, _, _ in strip_packing._instances(strips):
        keys.append((f"strip:{family}:{n}:{seed}", "cmax"))
    for n in args.large:
        keys.append((f"strip:large:{n}:0", "cmax"))
    for size in args.kth_sizes:
        for k in range(args.kth_windows):
            for objective in ("cmax", "wct"):
                keys.append((f"kth:{size}:{k}", objective))
    return keys


def instance_of(key: str, args: argparse.Namespace) -> tuple[Any, int | None]:
    """The instance named by ``key`` and its optimum when known."""
    kind, *rest = key.split(":")
    if kind == "strip":
        import strip_packing

        from optsched.generate.perfect import perfect_packing

        family, n, seed = rest[0], int(rest[1]), int(rest[2])
        if family == "large":
            width, height = LARGE_SIDE
            return perfect_packing(width, height, n, seed=seed), height
        strips = argparse.Namespace(
            sizes=[n] if family == "perfect" else [],
            perfect_seeds=seed + 1,
            reduced=[n] if family == "reduced" else [],
            reduced_seeds=seed + 1,
        )
        found = [c for c in strip_packing._instances(strips) if c[2] == seed]
        return found[0][3], found[0][4]
    import models_bench

    size, k = int(rest[0]), int(rest[1])
    windows = models_bench.kth_windows(models_bench.KTH, [size], k + 1, 0)
    return list(windows)[k][2], None


def one(key: str, objective: str, backend: str, args: argparse.Namespace) -> dict:
    """Solve one case in this process (the child's work) and return its row."""
    instance, optimum = instance_of(key, args)
    from optsched import models
    from optsched.check import check_schedule

    row: dict[str, Any] = {"case": key, "objective": objective, "backend": backend}
    row.update(jobs=len(instance.jobs), limit=args.time_limit)
    began = time.perf_counter()
    try:
        result = models.solve(
            instance, objective, backend=backend,
            time_limit=args.time_limit, workers=args.workers,
        )  # fmt: skip
    except ValueError as refusal:
        return {**row, "status": "refused", "why": str(refusal)[:80]}
    elapsed = time.perf_counter() - began
    if result.schedule is not None and check_schedule(instance, result.schedule):
        sys.exit(f"violation: {key} {backend}: infeasible schedule")
    lower, value = result.lower_bound, result.objective
    if lower is not None and value is not None and lower > value * (1 + 1e-9):
        sys.exit(f"violation: {key} {backend}: bound {lower} > objective {value}")
    # The shelf back-end bounds the shelf optimum, which may exceed the
    # strip's.
    known = optimum is not None and objective == "cmax" and backend != "shelf"
    if known and lower is not None and lower > optimum:
        sys.exit(f"violation: {key} {backend}: bound {lower} > optimum {optimum}")
    return {
        **row,
        "status": result.status.value,
        "elapsed": round(elapsed, 3),
        "ratio": round(elapsed / args.time_limit, 3),
        "held": elapsed <= 1.1 * args.time_limit + 1.0,
        "skipped": list(result.skipped),
        "load": round(os.getloadavg()[0], 2),
    }


def child(key: str, objective: str, backend: str, args: argparse.Namespace) -> dict:
    """Run :func:`one` in a fresh process (imports inside the measured call)."""
    command = [sys.executable, __file__, "--one", key, objective, backend]
    command += ["--time-limit", str(args.time_limit), "--workers", str(args.workers)]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        sys.exit(f"{key} {backend}: child failed: {out.stderr.strip()[-400:]}")
    return json.loads(lines[-1])


def summary(rows: list[dict]) -> str:
    """Worst ratio per back-end and instance family, runs that missed."""
    cells = []
    for backend in dict.fromkeys(r["backend"] for r in rows):
        for family in ("strip", "kth"):
            group = [
                r for r in rows
                if r["backend"] == backend and r["case"].startswith(family)
                and r["status"] != "refused"
            ]  # fmt: skip
            if not group:
                continue
            worst = max(group, key=lambda r: r["ratio"])
            missed = sum(not r["held"] for r in group)
            cells.append(
                (backend, family, len(group), f"{worst['ratio']:.2f}",
                 f"{worst['case']} {worst['objective']}", f"{missed}")
            )  # fmt: skip
    header = ("back-end", "set", "runs", "worst elapsed / limit", "worst case",
              "over 1.1 L + 1 s")  # fmt: skip
    return "\n".join(markdown_table(header, "llrrlr", cells))


def main() -> None:
    """Every case and back-end in its own process; rows to jsonl, a table out."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--kth-windows", type=int, default=5)
    parser.add_argument("--kth-sizes", type=ints, default=[100, 1000])
    parser.add_argument("--perfect-seeds", type=int, default=1)
    parser.add_argument("--reduced-seeds", type=int, default=1)
    parser.add_argument("--large", type=ints, default=[3152])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--summary", type=Path, default=None)
    parser.add_argument("--one", nargs=3, metavar=("CASE", "OBJECTIVE", "BACKEND"))
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one, args)))
        return
    if args.summary is not None:
        print(summary([json.loads(x) for x in args.summary.read_text().splitlines()]))
        return
    out = args.out or Path("benchmarks/results/time_limits.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with out.open("w") as sink:
        for key, objective in cases(args):
            for backend in args.backends.split(","):
                rows.append(child(key, objective, backend, args))
                sink.write(json.dumps(rows[-1]) + "\n")
                sink.flush()
                print(json.dumps(rows[-1]), file=sys.stderr)
    print(summary(rows))


if __name__ == "__main__":
    main()
