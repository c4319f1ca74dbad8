"""The engine's policies against the plain references on whole traces.

Usage::

    .venv/bin/python benchmarks/oracle_compare.py [--traces DIR]
        [--trace NAME ...] [--specs easy,conservative,...] [--jobs N]

For every trace of ``--traces`` (default: the shared folder; ``--trace``
picks some by file name) and every policy spec (default: one per engine
rule, and conservative with its three settings), runs the product
(:func:`optsched.heuristics.simulate`) and the plain reference written from
the definitions (``tests/support/oracle``; it shares no code with
``optsched.heuristics``), with overruns (the default) and with
``--kill-at-estimate``, and prints a Markdown table: jobs, jobs whose start
or end differ (0 = equal job for job), the first differing job, and the two
wall times. ``--jobs N`` keeps the first ``N`` jobs of each trace.
``--list N`` also prints, under the table, up to ``N`` differing jobs per
row with the product's and the reference's (start, end). ``--traces
instances --trace default.json`` runs on a bundled window.
The references are slow by design; a full KTH run of every spec takes
minutes.

The references stay in this tree's ``tests``, the product is whatever
``optsched`` imports, so with ``PYTHONPATH`` set to an older checkout
(``git worktree add /tmp/before COMMIT``) the script counts, and with
``--list`` names, the jobs an older product schedules differently from
today's rule (issue 28's "before" columns).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the references live with the tests

from support.oracle import reference_starts, supports  # noqa: E402
from support.oracle.cases import CASES  # noqa: E402

import optsched  # noqa: E402
from optsched.heuristics import simulate  # noqa: E402
from optsched.instance import Instance  # noqa: E402
from optsched.io import read, read_trace  # noqa: E402
from optsched.windows.window import cut_window  # noqa: E402

TRACES = REPO.parent / "shared" / "traces"
DEFAULT_SPECS = (
    "fcfs",
    "firstfit",
    "easy",
    "easy-sjbf",
    "backfill:depth=3",
    "conservative",
    "conservative:oracle",
    "best-package",
)


def compare(instance: Instance, spec: str, kill: bool) -> dict[str, Any]:
    """One row: the product and the reference on ``instance``."""
    rule, options = next((r, o) for s, r, o in CASES if s == spec)
    began = time.perf_counter()
    result = simulate(instance, spec, kill_at_estimate=kill)
    product_seconds = time.perf_counter() - began
    began = time.perf_counter()
    expected = reference_starts(instance, rule, kill=kill, **options)
    reference_seconds = time.perf_counter() - began
    got = {j: (p.start, p.end) for j, p in result.schedule.placements.items()}
    differ = sorted(j for j in expected if expected[j] != got[j])
    return {
        "jobs": len(expected),
        "differ": len(differ),
        "first": differ[0] if differ else "",
        "product": product_seconds,
        "reference": reference_seconds,
        "differing": [(j, got[j], expected[j]) for j in differ],
    }


def _commit(folder: Path) -> str:
    """The checkout ``folder`` is in, as a short commit id."""
    return subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()


def _span(start_end: tuple[int, int]) -> str:
    return f"{start_end[0]:,}–{start_end[1]:,}"


def print_differing(
    rows: list[tuple[str, str, bool, dict[str, Any]]], most: int
) -> None:
    """Up to ``most`` differing jobs of each row, product beside reference."""
    print(
        "\n| trace | spec | kill | job | product (start–end) | reference (start–end) |"
    )
    print("|---|---|---|---:|---|---|")
    for name, spec, kill, row in rows:
        for job, got, expected in row["differing"][:most]:
            print(
                f"| {name} | `{spec}` | {'yes' if kill else 'no'} | {job} | "
                f"{_span(got)} | {_span(expected)} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--trace", action="append", default=[])
    parser.add_argument("--specs", default=",".join(DEFAULT_SPECS))
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--list", type=int, default=0, metavar="N")
    args = parser.parse_args()
    names = args.trace or sorted(
        p.name for p in args.traces.iterdir() if ".swf" in p.name
    )
    print(f"references: commit {_commit(REPO)}")
    product = Path(optsched.__file__).resolve().parent
    print(f"product: commit {_commit(product)} ({product})\n")
    print(
        "| trace | spec | kill | jobs | differ | first | product (s) | reference (s) |"
    )
    print("|---|---|---|---:|---:|---|---:|---:|")
    rows: list[tuple[str, str, bool, dict[str, Any]]] = []
    for name in names:
        path = args.traces / name
        if args.jobs is None:
            instance = read(path)
        else:
            instance = cut_window(read_trace(path), first_job=0, jobs=args.jobs)
        if not supports(instance):
            print(f"| {name} | (skipped: the reference does not model it) |")
            continue
        for spec in args.specs.split(","):
            for kill in (False, True):
                row = compare(instance, spec, kill)
                rows.append((name, spec, kill, row))
                print(
                    f"| {name} | `{spec}` | {'yes' if kill else 'no'} | "
                    f"{row['jobs']:,} | {row['differ']:,} | {row['first']} | "
                    f"{row['product']:.1f} | {row['reference']:.1f} |",
                    flush=True,
                )
    if args.list:
        print_differing(rows, args.list)


if __name__ == "__main__":
    main()
