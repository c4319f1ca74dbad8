"""``optsched gap``: competitive gap of policies, window by window.

A thin command over :func:`optsched.bench.analysis.analyse`: the windows,
policies, objectives and back-end given on the command line become a suite
(:func:`optsched.bench.analysis.gap_suite`) run in memory through the same
task graph as ``optsched bench``.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pandas as pd
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from optsched.analysis.gap import aggregate
from optsched.bench.store import PREEMPTION as RELAXATION
from optsched.bench.suite import (
    DEFAULT_OBJECTIVES,
    DEFAULT_POLICIES,
    DEFAULT_SOLVER_WORKERS,
    DEFAULT_TIME_LIMIT,
    SolverSpec,
)
from optsched.bundled import bundled_path
from optsched.cli.display import failed_task, wide_option
from optsched.cli.options import (
    choice_option,
    count_option,
    file_options,
    machine_options,
    machine_shape,
    moldable_options,
    option_group,
    output_option,
    run_options,
    seconds_option,
    seed_option,
    shown_option,
)
from optsched.console import print_table
from optsched.heuristics import split_policy_specs
from optsched.moldable.speedup import SpeedupModel
from optsched.simulation import RunOptions
from optsched.windows.selection import WindowRule

DEFAULT_INSTANCE = bundled_path("default.json")
"""The bundled window ``optsched gap`` analyses when given no file (package
data, so that an installed wheel runs it too)."""

PER_WINDOW_LIMIT = 5
EXIT_DEFECT = 3
"""Exit status when a schedule beats a lower bound (a defect of optsched)."""


@dataclass(frozen=True, slots=True)
class WindowOptions:
    """The window options of ``optsched gap``, as one command argument."""

    window_jobs: int | None
    windows: int | None
    first_job: int
    sample: bool
    seed: int
    window_start: int | None
    window_end: int | None
    step: int | None
    initial_state: str

    def rule(self) -> WindowRule:
        """The :class:`~optsched.windows.selection.WindowRule` they ask for; a
        usage error (exit 2) on options that do not go together."""
        if self.window_jobs is not None and self.step is not None:
            raise click.UsageError("give either --window-jobs or --step, not both")
        if self.window_jobs is not None:
            kind = "random" if self.sample else "consecutive"
            count = self.windows
            if count is None and self.sample:
                count = 1  # one random window unless --windows says more
            return WindowRule(
                kind,
                self.window_jobs,
                count,
                self.seed,
                self.first_job,
                initial_state=self.initial_state,
            )
        timed = (self.step, self.window_start, self.window_end)
        if any(value is not None for value in timed):
            return WindowRule(
                "time",
                count=self.windows,
                start=self.window_start,
                end=self.window_end,
                step=self.step or 2**62,
                initial_state=self.initial_state,
            )
        if self.initial_state != "none":
            raise click.UsageError(
                "--initial-state needs a window (--window-jobs, --step)"
            )
        return WindowRule("whole")


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    if math.isinf(value):
        return "inf"
    if float(value).is_integer() or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.4f}"


def _ratio_end(value: float) -> str:
    if math.isnan(value):
        return "?"
    return "inf" if math.isinf(value) else f"{value:.4f}"


def _ratio(low: float, high: float) -> str:
    if low == high:
        return _ratio_end(low)
    return f"[{_ratio_end(low)}, {_ratio_end(high)}]"


def _interval(low: float, high: float) -> str:
    """An optimum: its value when proven (``low == high``), else ``[LB, UB]``."""
    return _fmt(high) if low == high else f"[{_fmt(low)}, {_fmt(high)}]"


def _unit(objective: str) -> str:
    return "s" if objective == "cmax" else "job-s"


def _restrictions(frame: pd.DataFrame) -> list[str]:
    suffix = "_price_low"
    return sorted(
        str(c)[: -len(suffix)]
        for c in frame.columns
        if str(c).endswith(suffix) and str(c) != f"{RELAXATION}{suffix}"
    )


def _window_table(rows: pd.DataFrame) -> Table:
    first = rows.iloc[0]
    table = Table(title=f"window {first['window']}")
    restrictions = _restrictions(rows)
    names = ["policy", "objective", "value", "optimum or [LB, UB]", "ratio"]
    for name in restrictions:
        names += [f"{name} optimum", f"ratio to {name} opt", f"price of {name}"]
    relaxed = f"{RELAXATION}_price_low" in rows.columns
    if relaxed:
        names += ["preemptive optimum", "price of non-preemption"]
    for name in names:
        table.add_column(
            name, justify="left" if name in ("policy", "objective") else "right"
        )
    for r in rows.to_dict("records"):
        lower = None if pd.isna(r["lower"]) else float(r["lower"])
        upper = None if pd.isna(r["upper"]) else float(r["upper"])
        known = _fmt(upper) if r["optimal"] else f"[{_fmt(lower)}, {_fmt(upper)}]"
        if r.get("reference") == RELAXATION:
            known += " preemptive"  # a preemptive policy meets that optimum
        if r["comparable"]:
            ratio = _ratio(r["ratio_low"], r["ratio_high"])
        elif r["killed"]:
            ratio = f"not comparable: {r['killed']} killed"
        else:
            ratio = "withheld (defect)"
        cells = [
            policy_label(str(r["policy"])),
            f"{r['objective']} ({_unit(str(r['objective']))})",
            _fmt(float(r["value"])),
            known,
            ratio,
        ]
        for name in restrictions:
            cells += [
                _interval(r[f"{name}_lower"], r[f"{name}_upper"]),
                _ratio(r[f"{name}_ratio_low"], r[f"{name}_ratio_high"]),
                _ratio(r[f"{name}_price_low"], r[f"{name}_price_high"]),
            ]
        if relaxed:
            cells += [
                _interval(r[f"{RELAXATION}_lower"], r[f"{RELAXATION}_upper"]),
                _ratio(r[f"{RELAXATION}_price_low"], r[f"{RELAXATION}_price_high"]),
            ]
        table.add_row(*cells)
    return table


def _extra_columns(table: Table) -> list[str]:
    """The window table's columns beyond the ratio, the order they are left
    out in to fit the terminal: the optima, the ratios to them, the prices."""
    extra = [str(column.header) for column in table.columns[5:]]
    optima = [h for h in extra if h.endswith("optimum") or h.endswith(" opt")]
    return optima + [h for h in extra if h not in optima]


AGGREGATE_OPTIONAL = ("median", "not comparable", "windows", "worst window")
"""The aggregate table's columns left out, in this order, to fit the terminal."""


def _aggregate_table(frame: pd.DataFrame) -> Table:
    table = Table(title="competitive ratio over windows (policy value / optimum)")
    names = ("policy", "objective", "windows", "not comparable", "proven",
             "mean", "median", "max", "worst window")  # fmt: skip
    for name in names:
        left = name in ("policy", "objective", "worst window")
        table.add_column(name, justify="left" if left else "right")
    for r in frame.to_dict("records"):
        table.add_row(
            policy_label(str(r["policy"])),
            str(r["objective"]),
            str(r["windows"]),
            str(r["not_comparable"]),
            "?" if pd.isna(r["optimal_share"]) else f"{r['optimal_share']:.0%}",
            _ratio(r["mean_low"], r["mean_high"]),
            _ratio(r["median_low"], r["median_high"]),
            _ratio(r["max_low"], r["max_high"]),
            str(r["worst_window"]),
        )
    return table


def _console(stderr: bool = False) -> Console:
    from optsched.console import wide_console

    return wide_console(stderr=stderr)


_window_options = option_group(
    "window_options",
    WindowOptions,
    [
        count_option(
            "--window-jobs", help="Windows of N consecutive jobs (submit order)."
        ),
        count_option(
            "--windows",
            help="Number of windows (default: all that fit; 1 with --random).",
        ),
        count_option(
            "--first-job",
            low=0,
            default=0,
            help="Index of the first job of the first window.",
        ),
        click.option(
            "--random",
            "sample",
            is_flag=True,
            help="Draw the windows at random positions (with --seed).",
        ),
        seed_option,
        count_option(
            "--start",
            "window_start",
            low=0,
            help="Time windows: first submit time (trace seconds).",
        ),
        count_option(
            "--end",
            "window_end",
            low=0,
            help="Time windows: end of submit times (exclusive).",
        ),
        count_option(
            "--step", help="Time windows of this many seconds of submit time."
        ),
        shown_option(
            "--initial-state",
            default="none",
            help="none, recorded, or simulated:POLICY (jobs running at the window "
            "start under POLICY become busy blocks).",
        ),
    ],
)
"""Options choosing the windows; the command receives them as one
:class:`WindowOptions`, ``window_options``."""


@click.command(name="gap")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@file_options
@moldable_options
@machine_options
@click.option(
    "--site",
    default=None,
    metavar="FILE",
    help="A site file (TOML): calendar, NQS queue rules, user limit and "
    "outages, given to every window (see 'optsched simulate --help').",
)
@choice_option(
    "--arrivals",
    choices=["recorded", "window-start"],
    default="recorded",
    help="'window-start': every job of a window is there at its start.",
)
@_window_options
@run_options
@click.option(
    "--schedule",
    "schedules",
    multiple=True,
    metavar="NAME=FILE",
    help="Also rate a schedule made elsewhere (a Batsim out_jobs.csv, an "
    "optsched CSV or JSON schedule, an SWF trace's recorded starts), matched "
    "to each window's jobs by id and checked first; repeatable.",
)
@shown_option(
    "--policies",
    default=",".join(DEFAULT_POLICIES),
    help="Comma-separated policy specs (see 'optsched simulate --help'); a "
    "spec's own parameters stay with it: 'easy:order=spt,oracle,fcfs'.",
)
@shown_option(
    "--objective",
    "objectives",
    default=",".join(DEFAULT_OBJECTIVES),
    help="Comma-separated objectives: cmax, wct, wct:size, wct:area, ...",
)
@shown_option(
    "--backend",
    default="cpsat",
    help="Reference back-end: cpsat, milp or bounds-only.",
)
@seconds_option(
    "--time-limit",
    default=DEFAULT_TIME_LIMIT,
    positive=True,
    help="Seconds per window and objective.",
)
@count_option(
    "--workers", default=DEFAULT_SOLVER_WORKERS, help="Solver threads per solve."
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Run CP-SAT in its deterministic mode: interleaved search stopped "
    "after --time-limit in deterministic time (CP-SAT's work count, about "
    "seconds but often several times longer in wall-clock time) instead of "
    "wall-clock time, so that two runs give the same rows whatever the load "
    "and the --workers.",
)
@click.option(
    "--shelves",
    is_flag=True,
    help="Also solve the shelf-restricted problem (back-end 'shelf'): each "
    "policy's ratio to the best shelf schedule, and the price of shelves "
    "(shelf optimum / optimum).",
)
@output_option(
    "--store",
    help="Keep every task row in this SQLite results store (as 'optsched "
    "bench' writes it; a re-run resumes).",
)
@shown_option(
    "--progress/--no-progress",
    default=True,
    help="A progress bar on a terminal, a line per finished window otherwise.",
)
@wide_option
@output_option(help="Write every (window, policy, objective) row to this CSV.")
def command(
    file: str | None,
    input_format: str | None,
    processors: int | None,
    allocation: str | None,
    moldable: SpeedupModel | None,
    malleable: bool,
    speeds: str | None,
    nodes: str | None,
    tight: str | None,
    level: int | None,
    comm_base: float | None,
    comm_cost: str | None,
    site: str | None,
    arrivals: str,
    window_options: WindowOptions,
    run: RunOptions,
    schedules: tuple[str, ...],
    policies: str,
    objectives: str,
    backend: str,
    time_limit: float,
    workers: int,
    deterministic: bool,
    shelves: bool,
    store: str | None,
    progress: bool,
    wide: bool,
    output: str | None,
) -> None:
    """Competitive gap of policies against the optimum, window by window.

    For each window: simulate each policy once, bound and solve the offline
    problem (starting from the policies' complete schedules), and print each
    policy's ratio value / optimum — exact when the optimum is proven, else
    the interval [value / UB, value / LB]. A policy that killed jobs (stopped
    at their estimate) did less work than the window: its ratio is not
    comparable. A preemptive policy (pbi, psrs, gang) is rated against the
    preemptive optimum, solved alongside (back-end 'preemptive'), and the
    table adds the price of non-preemption. Without FILE, runs on the
    bundled default instance. Ctrl-C
    (SIGINT) or SIGTERM stops the run within a second or two, even during a
    solve, and keeps the finished windows (exit status 130 or 143).
    """
    from optsched.bench.analysis import (
        MEMORY,
        WindowLines,
        analyse,
        gap_suite,
        policies_that_run,
    )
    from optsched.windows.prepare import OptionError

    try:
        suite = gap_suite(
            Path(file) if file else DEFAULT_INSTANCE,
            input_format=input_format,
            processors=processors,
            allocation=allocation,
            moldable=moldable,
            malleable=malleable,
            machine=machine_shape(speeds, nodes, tight, level, comm_base, comm_cost),
            site=Path(site) if site else None,
            arrivals=arrivals,
            rule=window_options.rule(),
            policies=[*split_policy_specs(policies), *map(schedule_spec, schedules)],
            objectives=objectives,
            solver=SolverSpec(backend, time_limit, workers),
            shelves=shelves,
            run=run,
        )
    except OptionError as error:
        # The command's own checks: a usage error, with the usage line.
        raise click.UsageError(str(error)) from None
    from optsched.bench.tasks import expand

    # Reads the file: bad input stops here, one line.
    plan = expand(suite, deterministic=deterministic)
    console = _console()
    kept, left_out = policies_that_run(plan)
    if left_out:
        source = click.get_current_context().get_parameter_source("policies")
        if source is not ParameterSource.DEFAULT or not kept:
            # Policies the user named: refused before any work (exit 2).
            raise click.UsageError(f"--policies: {left_out[0][1]}")
        # The default list adapts to the instance: say what it leaves out.
        suite = dataclasses.replace(suite, policies=kept)
        plan = expand(suite, deterministic=deterministic)
        for spec, why in left_out:
            console.print(f"left out {spec}: {why}", markup=False, highlight=False)
    names = ", ".join(map(policy_label, suite.policies))
    console.print(
        f"{file or 'instances/default.json (bundled)'}: {len(plan.windows)} "
        f"window(s), policies {names}, back-end {backend}, "
        f"{time_limit:g} s and {workers} worker(s) per solve"
    )
    reporter: bool | WindowLines = False
    if progress:
        per_window = len(suite.policies) + len(suite.objectives) * len(suite.solvers)
        reporter = True if _console(True).is_terminal else WindowLines(per_window)
    found = analyse(suite, store=store or MEMORY, progress=reporter, plan=plan)
    frame = found.rows
    if found.finished <= PER_WINDOW_LIMIT:
        for _, rows in frame.groupby(["window_index", "window"], sort=True):
            table = _window_table(rows)
            print_table(console, table, optional=_extra_columns(table), wide=wide)
    if found.finished > 1:
        table = _aggregate_table(aggregate(frame))
        print_table(console, table, optional=AGGREGATE_OPTIONAL, wide=wide)
    if output:
        from optsched.io.atomic import atomic_write
        from optsched.io.spreadsheet import safe_frame

        # UTF-8 whatever the locale: pandas.read_csv reads UTF-8 by default.
        with atomic_write(output, "w", encoding="utf-8", newline="") as handle:
            safe_frame(frame).to_csv(handle, index=False)
        console.print(f"wrote {len(frame)} rows to {output}")
    _finish(found)


def policy_label(spec: str) -> str:
    """A row's name in the tables: the spec, or ``NAME (schedule)`` for a
    schedule file rated with ``--schedule NAME=FILE`` (the CSV keeps the
    spec, which names the file)."""
    if not spec.startswith("schedule:"):
        return spec
    from optsched.heuristics.spec import split_spec

    name = split_spec(spec).params.get("name")
    return f"{name} (schedule)" if name else spec


def schedule_spec(given: str) -> str:
    """The policy spec of ``--schedule NAME=FILE``
    (:mod:`optsched.heuristics.rigid.replay`)."""
    name, sep, file = given.partition("=")
    if not sep or not name.strip() or not file.strip():
        raise click.UsageError(f"--schedule: expected NAME=FILE, got {given!r}")
    return f"schedule:name={name.strip()},file={file.strip()}"


def _finish(found: object) -> None:
    from optsched.bench.analysis import Analysis

    assert isinstance(found, Analysis)
    err = _console(True)
    for message, path in found.defects:
        saved = f"; window saved to {path}" if path else ""
        err.print(
            f"optsched: defect: {message}{saved}. This is a bug in optsched, not in "
            "your data: please report it with that file."
        )
    _policy_errors(found, err)
    for failure in found.failures:
        err.print(f"optsched: failed: window {failed_task(failure)}")
    if found.interrupted:
        err.print(
            f"optsched: interrupted: {found.finished} of {found.windows} window(s) "
            "finished; the rows above are theirs"
        )
        sys.exit(128 + (found.stop_signal or signal.SIGINT))
    if found.defects:
        sys.exit(EXIT_DEFECT)
    if found.failures:
        sys.exit(1)


USER_ERRORS = ("PolicyError: ", "ScheduleRefused: ")
"""How a task's error text begins when a user's policy broke the protocol
or raised (:class:`optsched.heuristics.plugins.PolicyError`), or a schedule
file cannot be rated (:class:`optsched.heuristics.rigid.replay.ScheduleRefused`)."""


def _policy_errors(found: Any, err: Console) -> None:
    """A user's policy that failed is bad input, not a failure of optsched:
    its traceback (the user's frames), one line naming the window, exit 2."""
    broken = [
        failure
        for failure in found.failures
        if (failure["error"] or "").startswith(USER_ERRORS)
    ]
    if not broken:
        return
    first = broken[0]
    head, _, tail = first["error"].partition("\n\n")
    kind, _, message = head.partition(": ")
    if kind == "PolicyError" and tail:
        err.print(tail, markup=False, highlight=False, soft_wrap=True)  # their frames
    err.print(
        f"optsched: error: window {first['window']}: {message}",
        markup=False,
        highlight=False,
        soft_wrap=True,  # one line, whatever the terminal's width
    )
    sys.exit(2)
