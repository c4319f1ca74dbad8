"""``optsched gap``: competitive gap of policies, window by window."""

from __future__ import annotations

import math
from pathlib import Path

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from optsched.cli.options import file_options
from optsched.gap import GapRow, aggregate, analyse_window, rows_frame
from optsched.selection import WindowRule, select_windows

DEFAULT_INSTANCE = Path(__file__).resolve().parents[2] / "instances" / "default.json"
"""The bundled window ``optsched gap`` analyses when given no file."""

DEFAULT_POLICIES = "fcfs,firstfit,easy,conservative,best-package"
PER_WINDOW_LIMIT = 5


def _rule(
    window_jobs: int | None,
    windows: int | None,
    first_job: int,
    sample: bool,
    seed: int,
    window_start: int | None,
    window_end: int | None,
    step: int | None,
    initial_state: str,
) -> WindowRule:
    if window_jobs is not None and step is not None:
        raise click.UsageError("give either --window-jobs or --step, not both")
    if window_jobs is not None:
        kind = "random" if sample else "consecutive"
        count = windows if windows is not None else (1 if sample else None)
        return WindowRule(
            kind, window_jobs, count, seed, first_job, initial_state=initial_state
        )
    if step is not None or window_start is not None or window_end is not None:
        return WindowRule(
            "time",
            count=windows,
            start=window_start,
            end=window_end,
            step=step or 2**62,
            initial_state=initial_state,
        )
    if initial_state != "none":
        raise click.UsageError("--initial-state needs a window (--window-jobs, --step)")
    return WindowRule("whole")


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    if math.isinf(value):
        return "inf"
    return f"{value:.4f}" if abs(value) < 100 else f"{value:,.0f}"


def _ratio(low: float, high: float) -> str:
    return _fmt(low) if low == high else f"[{_fmt(low)}, {_fmt(high)}]"


def _window_table(rows: list[GapRow]) -> Table:
    table = Table(title=f"window {rows[0].window}")
    for name in ("policy", "objective", "value", "optimum or [LB, UB]", "ratio"):
        table.add_column(
            name, justify="left" if name in ("policy", "objective") else "right"
        )
    for r in rows:
        known = _fmt(r.upper) if r.optimal else f"[{_fmt(r.lower)}, {_fmt(r.upper)}]"
        table.add_row(
            r.policy,
            r.objective,
            _fmt(r.value),
            known,
            _ratio(r.ratio_low, r.ratio_high),
        )
    return table


def _aggregate_table(frame: pd.DataFrame) -> Table:
    table = Table(title="competitive ratio over windows (policy value / optimum)")
    for name in (
        "policy",
        "objective",
        "windows",
        "proven",
        "mean",
        "median",
        "max",
        "worst window",
    ):
        table.add_column(
            name,
            justify="left"
            if name in ("policy", "objective", "worst window")
            else "right",
        )
    for r in frame.to_dict("records"):
        table.add_row(
            str(r["policy"]),
            str(r["objective"]),
            str(r["windows"]),
            f"{r['optimal_share']:.0%}",
            _ratio(r["mean_low"], r["mean_high"]),
            _ratio(r["median_low"], r["median_high"]),
            _ratio(r["max_low"], r["max_high"]),
            str(r["worst_window"]),
        )
    return table


@click.command(name="gap")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@file_options
@click.option(
    "--window-jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Windows of N consecutive jobs (submit order).",
)
@click.option(
    "--windows",
    type=click.IntRange(min=1),
    default=None,
    help="Number of windows (default: all that fit; 1 with --random).",
)
@click.option(
    "--first-job",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Index of the first job of the first window.",
)
@click.option(
    "--random",
    "sample",
    is_flag=True,
    help="Draw the windows at random positions (with --seed).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--start",
    "window_start",
    type=click.IntRange(min=0),
    default=None,
    help="Time windows: first submit time (trace seconds).",
)
@click.option(
    "--end",
    "window_end",
    type=click.IntRange(min=0),
    default=None,
    help="Time windows: end of submit times (exclusive).",
)
@click.option(
    "--step",
    type=click.IntRange(min=1),
    default=None,
    help="Time windows of this many seconds of submit time.",
)
@click.option(
    "--initial-state",
    default="none",
    show_default=True,
    help="none, recorded, or simulated:POLICY (jobs running at the window "
    "start under POLICY become busy blocks).",
)
@click.option(
    "--policies",
    default=DEFAULT_POLICIES,
    show_default=True,
    help="Comma-separated policy specs (see 'optsched simulate --help').",
)
@click.option(
    "--objective",
    "objectives",
    default="cmax,wct",
    show_default=True,
    help="Comma-separated objectives: cmax, wct, wct:size, wct:area, ...",
)
@click.option(
    "--backend",
    default="cpsat",
    show_default=True,
    help="Reference back-end: cpsat, milp or bounds-only.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Seconds per window and objective.",
)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write every (window, policy, objective) row to this CSV.",
)
def command(
    file: str | None,
    input_format: str | None,
    processors: int | None,
    allocation: str | None,
    window_jobs: int | None,
    windows: int | None,
    first_job: int,
    sample: bool,
    seed: int,
    window_start: int | None,
    window_end: int | None,
    step: int | None,
    initial_state: str,
    policies: str,
    objectives: str,
    backend: str,
    time_limit: float,
    workers: int,
    output: str | None,
) -> None:
    """Competitive gap of policies against the optimum, window by window.

    For each window: simulate each policy, bound and solve the offline
    problem, and print each policy's ratio value / optimum — exact when the
    optimum is proven, else the interval [value / UB, value / LB]. Without
    FILE, runs on the bundled default instance.
    """
    from optsched.io import read_trace

    path = Path(file) if file else DEFAULT_INSTANCE
    trace = read_trace(path, input_format, processors=processors)
    rule = _rule(
        window_jobs,
        windows,
        first_job,
        sample,
        seed,
        window_start,
        window_end,
        step,
        initial_state,
    )
    specs = select_windows(trace, rule)
    policy_list = [p.strip() for p in policies.split(",") if p.strip()]
    objective_list = [o.strip() for o in objectives.split(",") if o.strip()]
    console = Console()
    console.print(
        f"{path}: {len(specs)} window(s), policies {', '.join(policy_list)}, "
        f"back-end {backend}, {time_limit:g} s per solve"
    )
    all_rows = []
    for spec in specs:
        instance = spec.cut(trace)
        if allocation is not None:
            instance = instance.replace(
                machine=instance.machine.replace(allocation=allocation)
            )
        rows, _, _ = analyse_window(
            instance,
            spec.key,
            policy_list,
            objective_list,
            backend=backend,
            time_limit=time_limit,
            workers=workers,
        )
        if len(specs) <= PER_WINDOW_LIMIT:
            console.print(_window_table(rows))
        all_rows += rows
    frame = rows_frame(all_rows)
    if len(specs) > 1:
        console.print(_aggregate_table(aggregate(frame)))
    if output:
        from optsched.io.atomic import atomic_write

        with atomic_write(output, newline="") as handle:
            frame.to_csv(handle, index=False)
        console.print(f"wrote {len(frame)} rows to {output}")
