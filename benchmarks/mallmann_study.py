"""Mallmann's study on KTH under the T3E calendar, with his backfilling family.

Usage::

    .venv/bin/python benchmarks/mallmann_study.py [--months 12] [--workers 2]

Each calendar month of KTH SP2 (local time, from the SWF header) is cut as a
window and simulated alone (§4.3), under the T3E calendar of
``instances/sites/t3e.toml`` scaled from 518 to 100 processors, with
contiguous best-fit allocation, with and without migration.

Strategies are the study's queue orders, each with the backfilling variants
the study reports as its best (§6.2, §6.15), plus EASY for comparison:
``fcfs fc1``, ``fcfs bc``, ``sptf fc3``, ``sptf bd0``, ``lptf fc1``, ``lptf
bd1``, ``ljsf bs0``, ``ljsf bs1``, ``ljsf bs0f`` (f = 60 %), ``ljsf bs3t``
(t = 8 h), ``ljsf bcf`` (f = 40 %), ``ljsf ws0``, ``scdf bs0``, ``lcdf fc1``,
``lcdf bd1``, ``lcdf bc``, ``sjsf`` and ``bp``.

Per run: ``l_ges``, ``l_act``, ``l_act,bat``, ``t_idle,bat``, the shares of
the load run in mixed and interactive mode, and the mean waits of C_all,
C_<=32p and C_<=10min (§5). A second mode puts every job of a month at its
start (§4.4), without migration as in the study: there the fairness-0
variants run (the fairness previews cost
a conservative plan per candidate over a queue of thousands) and each
makespan is set beside the best lower bound under the calendar. The
recorded schedule ("orig") is measured per month without the calendar, on
the machine it really ran on.

Writes ``benchmarks/results/mallmann/study.csv`` and
``benchmarks/results/mallmann/quantiles.csv`` (waiting-time quantiles of
May 1997 with migration, the study's Tables 4.8-4.10; ``--quantiles-only``
writes just those).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from mallmann_ranking import SITE, TRACE, trace_months, write_rows

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.io.swf import read_swf
from optsched.models.rigid.bounds import lower_bounds
from optsched.site.files import apply_site, read_site
from optsched.site.metrics import mode_split, utilisation, waits_by_class
from optsched.windows.window import cut_window

HERE = Path(__file__).parent


def _m(order: str, variant: str, fairness: int = 0, **limits: str) -> str:
    extra = "".join(f",{k}={v}" for k, v in limits.items())
    return f"mallmann:order={order},variant={variant},fairness={fairness}{extra}"


# Study name -> (strategy, optsched spec).
VARIANTS: dict[str, tuple[str, str]] = {
    "fcfs": ("FCFS", "fcfs"),
    "fcfs easy": ("FCFS", "easy:order=fcfs"),
    "fcfs fc1": ("FCFS", _m("fcfs", "fc", 1)),
    "fcfs bc": ("FCFS", _m("fcfs", "bc")),
    "sptf easy": ("SPTF", "easy:order=spt"),
    "sptf fc3": ("SPTF", _m("spt", "fc3")),
    "sptf bd0": ("SPTF", _m("spt", "bd", 0)),
    "lptf easy": ("LPTF", "easy:order=lpt"),
    "lptf fc1": ("LPTF", _m("lpt", "fc", 1)),
    "lptf bd1": ("LPTF", _m("lpt", "bd", 1)),
    "sjsf": ("SJSF", "ssf"),
    "ljsf": ("LJSF", "lsf"),
    "ljsf easy": ("LJSF", "easy:order=lsf"),
    "ljsf bs0": ("LJSF", _m("lsf", "bs")),
    "ljsf bs1": ("LJSF", _m("lsf", "bs", 1)),
    "ljsf bs0f": ("LJSF", _m("lsf", "bs", f="0.6")),
    "ljsf bs3t": ("LJSF", _m("lsf", "bs3", t="8h")),
    "ljsf bcf": ("LJSF", _m("lsf", "bc", f="0.4")),
    "ljsf ws0": ("LJSF", _m("lsf", "ws")),
    "scdf easy": ("SCDF", "easy:order=saf"),
    "scdf bs0": ("SCDF", _m("saf", "bs")),
    "lcdf easy": ("LCDF", "easy:order=laf"),
    "lcdf fc1": ("LCDF", _m("laf", "fc", 1)),
    "lcdf bd1": ("LCDF", _m("laf", "bd", 1)),
    "lcdf bc": ("LCDF", _m("laf", "bc")),
    "bp": ("BP", "best-package"),
}
QUANTILE_MONTH = "1997-05"
QUANTILE_VARIANTS = (
    "fcfs bc",
    "sjsf",
    "ljsf",
    "ljsf bs0f",
    "ljsf bs1",
    "ljsf ws0",
    "bp",
)


def quantile_table(task: tuple[str, int, int]) -> list[dict[str, Any]]:
    """The study's Tables 4.8-4.10 for one month: the waiting-time
    quantiles of orig and of :data:`QUANTILE_VARIANTS` with migration."""
    label, start, end = task
    trace = read_swf(TRACE)
    window = cut_window(trace, start=start, end=end)
    orig = simulate(window, "orig:repair").schedule
    out = _quantile_rows(label, "orig", window, orig)
    window = window.replace(machine=window.machine.with_allocation("contiguous"))
    window, _ = apply_site(window, read_site(SITE), trace.header)
    for name in QUANTILE_VARIANTS:
        result = simulate(
            window, VARIANTS[name][1], allocation_rule="best-fit", migration=True
        )
        assert check_schedule(window, result.schedule) == []
        out += _quantile_rows(label, name, window, result.schedule)
    return out


def _clairvoyant_preview(spec: str) -> bool:
    return "fairness=1" in spec or "fairness=2" in spec


def _month(task: tuple[str, int, int]) -> list[dict[str, Any]]:
    label, start, end = task
    trace = read_swf(TRACE)
    site = read_site(SITE)
    window = cut_window(trace, start=start, end=end)
    orig = _orig_row(label, window)
    window = window.replace(machine=window.machine.with_allocation("contiguous"))
    window, _ = apply_site(window, site, trace.header)
    batch = window.replace(jobs=tuple(j.replace(release=0) for j in window.jobs))
    bound = max(b.value for b in lower_bounds(batch, "cmax"))
    rows = [orig]
    for mode, instance in (("recorded", window), ("window-start", batch)):
        for name, (strategy, spec) in VARIANTS.items():
            if mode == "window-start" and _clairvoyant_preview(spec):
                continue
            # The study's runs without submit times use no migration (§4.3).
            for migration in (False, True) if mode == "recorded" else (False,):
                began = time.perf_counter()
                result = simulate(
                    instance, spec, allocation_rule="best-fit", migration=migration
                )
                assert check_schedule(instance, result.schedule) == []
                row = _measures(instance, result.schedule)
                row.update(
                    month=label,
                    jobs=len(instance.jobs),
                    mode=mode,
                    variant=name,
                    strategy=strategy,
                    migration=migration,
                    makespan_bound=bound if mode == "window-start" else "",
                    migrations=result.stats.migrations,
                    seconds=round(time.perf_counter() - began, 2),
                )
                rows.append(row)
    print(label, len(window.jobs), flush=True)
    return rows


def _measures(instance: Any, schedule: Any) -> dict[str, Any]:
    used = utilisation(instance, schedule)
    split = mode_split(instance, schedule)
    waits = waits_by_class(instance, schedule)
    load = used.load or 1
    return {
        "l_ges": round(used.l_ges, 4),
        "l_act": round(used.l_act, 4),
        "l_act_bat": round(split.l_act_bat, 4),
        "t_idle_bat": round(split.t_idle_bat, 4),
        "mix_share": round(split.load["mixed"] / load, 4),
        "ia_share": round(split.load["interactive"] / load, 4),
        "makespan": max(p.end for p in schedule.placements.values()),
        "wait_all": round(waits["all"].mean, 1),
        "wait_le32p": round(waits["<=32p"].mean, 1) if "<=32p" in waits else "",
        "wait_le10min": round(waits["<=10min"].mean, 1) if "<=10min" in waits else "",
    }


def _orig_row(label: str, window: Any) -> dict[str, Any]:
    """The recorded schedule, repaired where the log breaks capacity."""
    result = simulate(window, "orig:repair")
    assert check_schedule(window, result.schedule) == []
    row = _measures(window, result.schedule)
    row.update(
        month=label,
        jobs=len(window.jobs),
        mode="recorded",
        variant="orig",
        strategy="orig",
        migration=False,
        makespan_bound="",
        migrations=0,
        seconds=0,
    )
    return row


def _quantile_rows(
    label: str, name: str, instance: Any, schedule: Any
) -> list[dict[str, Any]]:
    out = []
    for job_class, w in waits_by_class(instance, schedule).items():
        out.append(
            {
                "month": label,
                "variant": name,
                "class": job_class,
                "jobs": w.jobs,
                **{
                    key: round(getattr(w, key) / 3600, 1)
                    for key in ("q50", "q75", "q90", "q95", "maximum", "mean")
                },
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--quantiles-only", action="store_true", help="only quantiles.csv"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "mallmann")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    _, tasks = trace_months(args.months)
    (month,) = [t for t in trace_months(12)[1] if t[0] == QUANTILE_MONTH]
    write_rows(args.out / "quantiles.csv", quantile_table(month))
    if args.quantiles_only:
        return
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for month_rows in pool.map(_month, tasks):
            rows += month_rows
    write_rows(args.out / "study.csv", rows)


if __name__ == "__main__":
    main()
