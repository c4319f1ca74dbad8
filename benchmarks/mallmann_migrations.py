"""Mallmann's migration counts (Tables 4.5-4.7) beside ours, on the same months.

Usage::

    .venv/bin/python benchmarks/mallmann_migrations.py [--workers 2]

The study counts, for its T3E runs with submit times and migration over
March-May 1997 (3 months, 3,840 jobs, 518 nodes), the migrations (full
left-compactions), the jobs moved and the nodes moved. This script runs the
same variants with migration on KTH SP2's March, April and May 1997, each
month cut and simulated alone under the T3E calendar scaled to 100
processors with contiguous best-fit allocation (the set-up of
``mallmann_study.py``), checks every schedule, sums the three months and
writes ``benchmarks/results/mallmann/migrations.csv`` (one row per month
and variant) and prints the table of benchmarks/README.md: the study's
numbers beside ours, raw, per 1,000 jobs, and the share of the machine one
migration moves (nodes moved / migrations / machine size).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from mallmann_ranking import SITE, TRACE, trace_months, write_rows
from mallmann_study import VARIANTS, _m
from markdown_table import markdown_table

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.io.swf import read_swf
from optsched.site.files import apply_site, read_site
from optsched.windows.window import cut_window

HERE = Path(__file__).parent
MONTHS = ("1997-03", "1997-04", "1997-05")
"""The study's T3E period (seed 000 §6: 3/1997-5/1997, 91 days)."""
STUDY_JOBS, STUDY_NODES = 3840, 518

STUDY: dict[str, tuple[int, int, int]] = {
    # Table 4.5 (FCFS), 4.6 (SPTF, LPTF), 4.7 (SJSF, LJSF, BP): migrations,
    # migrated jobs, migrated nodes (seed 000 §6.9-6.11).
    "fcfs": (167, 921, 43077),
    "fcfs fc1": (127, 601, 31713),
    "fcfs bc": (81, 317, 18129),
    "sptf bd0": (94, 416, 24096),
    "lptf bd1": (78, 288, 17806),
    "lptf bc": (85, 308, 18607),
    "sjsf": (141, 597, 38228),
    "ljsf": (88, 610, 20920),
    "ljsf ws0": (122, 522, 26886),
    "ljsf bs0f": (69, 343, 15396),
    "ljsf bs1": (87, 539, 22050),
    "bp": (74, 326, 15576),
}
SPECS = {**{name: VARIANTS[name][1] for name in STUDY if name in VARIANTS}}
SPECS["lptf bc"] = _m("lpt", "bc")  # in Table 4.6, not in the l_ges table


def _month(task: tuple[str, int, int]) -> list[dict[str, Any]]:
    label, start, end = task
    trace = read_swf(TRACE)
    window = cut_window(trace, start=start, end=end)
    window = window.replace(machine=window.machine.with_allocation("contiguous"))
    window, _ = apply_site(window, read_site(SITE), trace.header)
    rows = []
    for name in STUDY:
        result = simulate(
            window, SPECS[name], allocation_rule="best-fit", migration=True
        )
        assert check_schedule(window, result.schedule) == []
        stats = result.stats
        rows.append(
            {
                "month": label,
                "variant": name,
                "jobs": len(window.jobs),
                "processors": window.processors,
                "migrations": stats.migrations,
                "migrated_jobs": stats.migrated_jobs,
                "migrated_processors": stats.migrated_processors,
            }
        )
    print(label, len(window.jobs), flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The README's table: the study's three counts beside ours (summed over
    the months), per 1,000 jobs, and the machine share one migration moves."""
    jobs = sum({r["month"]: r["jobs"] for r in rows}.values())
    processors = rows[0]["processors"]
    cells = []
    for name, (migrations, moved, nodes) in STUDY.items():
        ours = [r for r in rows if r["variant"] == name]
        m = sum(r["migrations"] for r in ours)
        j = sum(r["migrated_jobs"] for r in ours)
        p = sum(r["migrated_processors"] for r in ours)
        share = f"{p / m / processors:.2f}" if m else "–"
        cells.append(
            (name, f"{migrations} / {moved} / {nodes:,}", f"{m} / {j} / {p:,}",
             f"{1000 * migrations / STUDY_JOBS:.1f} / {1000 * m / jobs:.1f}",
             f"{nodes / migrations / STUDY_NODES:.2f} / {share}")
        )  # fmt: skip
    header = ("variant", "study: migrations / jobs / nodes",
              "ours: migrations / jobs / processors",
              "migrations per 1,000 jobs, study / ours",
              "machine share moved per migration, study / ours")  # fmt: skip
    lines = markdown_table(header, "lllll", cells)
    return "\n".join(lines) + f"\n\n(ours: {jobs:,} jobs on {processors} processors)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "mallmann")
    args = parser.parse_args()
    tasks = [t for t in trace_months(12)[1] if t[0] in MONTHS]
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for month_rows in pool.map(_month, tasks):
            rows += month_rows
    args.out.mkdir(parents=True, exist_ok=True)
    write_rows(args.out / "migrations.csv", rows)
    print(table(rows))


if __name__ == "__main__":
    main()
