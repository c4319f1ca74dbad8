"""Mallmann's strategy ranking on KTH under the T3E calendar (issue 13).

Usage::

    .venv/bin/python benchmarks/mallmann_ranking.py [--months 11]

Each calendar month of KTH SP2 (local time, from the SWF header) is
simulated on its own, as in the study (§4.3). The runs use:

- the T3E site calendar of ``instances/sites/t3e.toml``, scaled from 518 to
  100 processors;
- contiguous best-fit allocation, with and without migration;
- the study's queue orders with EASY backfilling and without backfilling.

For each run we record the overall utilisation ``l_ges = L_ges / (T_ges *
m)`` and ``l_act = L_ges / (T_act * m)`` (§5). ``T_ges`` runs from the first
start to the last end, and ``T_act`` is the time with at least one busy
processor.

A second mode puts all jobs of a month at its start. There the best
strategy's makespan is set beside the closed-form lower bound under the
calendar, which gives an upper bound on the achievable ``l_ges``.

Writes ``benchmarks/results/mallmann/ranking.csv``.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import Instance
from optsched.io.swf import read_swf
from optsched.models.rigid.bounds import lower_bounds
from optsched.site.files import apply_site, read_site
from optsched.site.metrics import utilisation
from optsched.trace import Trace
from optsched.windows.window import cut_window

HERE = Path(__file__).parent
TRACE = HERE.parent.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf"
SITE = HERE.parent / "instances" / "sites" / "t3e.toml"
# The study's strategies (§1.1) as optsched queue orders.
ORDERS = {
    "FCFS": "fcfs",
    "SPTF": "spt",
    "LPTF": "lpt",
    "SJSF": "ssf",
    "LJSF": "lsf",
    "SCDF": "saf",
    "LCDF": "laf",
    "BP": "best-package",
}


def months(header: dict[str, str], first: int, last: int) -> list[tuple[str, int, int]]:
    """Calendar months (local time) covering trace times ``first..last``."""
    zone = ZoneInfo(header.get("TimeZoneString", "UTC"))
    origin = int(header["UnixStartTime"])
    at = datetime.datetime.fromtimestamp(origin + first, zone).replace(
        day=1, hour=0, minute=0, second=0
    )
    out = []
    while True:
        nxt = (at + datetime.timedelta(days=32)).replace(day=1)
        start = int(at.timestamp()) - origin
        end = int(nxt.timestamp()) - origin
        if start > last:
            return out
        out.append((at.strftime("%Y-%m"), max(start, 0), end))
        at = nxt


def trace_months(count: int) -> tuple[Trace, list[tuple[str, int, int]]]:
    """KTH and its first ``count`` calendar months."""
    trace = read_swf(TRACE)
    releases = [j.release for j in trace.instance.jobs]
    return trace, months(trace.header, min(releases), max(releases))[:count]


def month_windows(
    count: int, shape: Callable[[Instance], Instance | None]
) -> Iterator[tuple[str, Instance]]:
    """The first ``count`` calendar months of KTH, each cut as a window,
    changed by ``shape`` (``None``: the month is left out), then put under
    the T3E site calendar."""
    trace, chosen = trace_months(count)
    site = read_site(SITE)
    for label, start, end in chosen:
        window = shape(cut_window(trace, start=start, end=end))
        if window is not None:
            yield label, apply_site(window, site, trace.header)[0]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as a CSV file with a header (nothing when empty)."""
    if not rows:
        return
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def contiguous(window: Instance) -> Instance:
    """``window`` on a machine of contiguous allocation."""
    return window.replace(machine=window.machine.with_allocation("contiguous"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--months", type=int, default=11)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "mallmann")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for label, window in month_windows(args.months, contiguous):
        batch = window.replace(jobs=tuple(j.replace(release=0) for j in window.jobs))
        bound = max(b.value for b in lower_bounds(batch, "cmax"))
        for mode, instance in (("recorded", window), ("window-start", batch)):
            for name, order in ORDERS.items():
                for backfill in (False, True):
                    if backfill and order == "best-package":
                        continue  # BP has no backfilling variant here
                    spec = f"easy:order={order}" if backfill else order
                    for migration in (False, True):
                        began = time.perf_counter()
                        result = simulate(
                            instance,
                            spec,
                            allocation_rule="best-fit",
                            migration=migration,
                        )
                        assert check_schedule(instance, result.schedule) == []
                        measured = utilisation(instance, result.schedule)
                        l_ges, l_act = measured.l_ges, measured.l_act
                        span = measured.total_time
                        makespan = max(
                            p.end for p in result.schedule.placements.values()
                        )
                        rows.append(
                            {
                                "month": label,
                                "jobs": len(instance.jobs),
                                "mode": mode,
                                "strategy": name,
                                "backfilling": "easy" if backfill else "none",
                                "migration": migration,
                                "l_ges": round(l_ges, 4),
                                "l_act": round(l_act, 4),
                                "T_ges": span,
                                "makespan": makespan,
                                "makespan_bound": bound
                                if mode == "window-start"
                                else "",
                                "migrations": result.stats.as_dict().get(
                                    "migrations", 0
                                ),
                                "seconds": round(time.perf_counter() - began, 2),
                            }
                        )
            print(label, mode, len(instance.jobs), flush=True)
    write_rows(args.out / "ranking.csv", rows)


if __name__ == "__main__":
    main()
