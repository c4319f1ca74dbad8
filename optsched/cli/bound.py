"""``optsched bound FILE``: optimum, or proven bounds around it, for one instance.

Prints every lower bound with its value and time, the best lower bound and
its method, the best upper bound and where its schedule came from, the
status, the relative gap and the runtime. ``-o`` writes the result as JSON,
``--schedule-out`` the best schedule (both atomically). Ctrl-C during the
search stops it and prints the best result found so far.

``--time-limit`` covers everything after reading the instance: the starting
schedules (offline heuristics, oracle policies: at most
:data:`INCUMBENT_SHARE` of the limit), the closed-form bounds, the model
and the search. What did not fit is listed under ``skipped``.

``--preemptive`` gives the optimum (or interval) of *preemptive* schedules
with migration instead: for ``cmax`` the configuration LP (its exact value
is printed beside the integer-time interval ``[ceil(LP), schedule]``), for
``wct`` the time-indexed model of small horizons, and beyond its size
limits the interval between an LP bound and the list schedule
(:mod:`optsched.models.preempt.model`); on a contiguous machine only the lower
bound. No starting schedules are simulated for it.

``--schedule-out`` with ``--lp-only`` is refused before anything is computed
(an LP relaxation has no schedule); a run that ends without a schedule, or
with neither a schedule nor a bound, writes nothing and exits with status 2.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import click
from rich.table import Table

from optsched.cli.options import (
    choice_option,
    count_option,
    input_options,
    load_instance,
    output_option,
    seconds_option,
)
from optsched.console import print_table, wide_console
from optsched.instance import Instance
from optsched.io.atomic import atomic_write
from optsched.models import BACKENDS, RESTRICTIONS, solve
from optsched.objective import OBJECTIVE_KINDS, WEIGHT_RULES, Objective
from optsched.result import Incumbent, Result
from optsched.schedule import Schedule

MILP_ONLY = ("lp_only", "grid", "solver")

INCUMBENT_SHARE = 0.4
"""Largest share of ``--time-limit`` spent on the starting schedules; the
back-end gets the rest (and whatever they leave)."""


@click.command(name="bound")
@click.argument("file", type=click.Path(dir_okay=False))
@input_options
@choice_option(
    "--objective",
    "kind",
    choices=OBJECTIVE_KINDS,
    default="cmax",
    help="cmax: makespan; wct: total weighted completion time.",
)
@choice_option(
    "--weights",
    choices=WEIGHT_RULES,
    default="one",
    help="wct weights: one, size, area (size x runtime) or the instance's.",
)
@click.option(
    "--relative",
    is_flag=True,
    help="wct: measure completion from release (weighted flow time).",
)
@choice_option(
    "--backend",
    choices=list(BACKENDS),
    default="cpsat",
    help="Exact model or closed-form bounds with the best heuristic.",
)
@seconds_option("--time-limit", default=60.0, help="Seconds for the whole computation.")
@count_option("--workers", default=2, help="Solver threads.")
@click.option(
    "--shelves",
    is_flag=True,
    help="Optimum (or interval) of shelf schedules only: the 'shelf' back-end.",
)
@click.option(
    "--preemptive",
    is_flag=True,
    help="Optimum (or interval) of preemptive schedules with migration "
    "(configuration LP for cmax, time-indexed model for wct).",
)
@click.option("--lp-only", is_flag=True, help="milp: only the LP relaxation (a bound).")
@count_option(
    "--grid", help="milp: time grid step in seconds (default: fit about 400 cells)."
)
@choice_option(
    "--solver",
    choices=["highs", "cbc"],
    help="milp: the MILP solver (default highs).",
)
@output_option(help="Write the result as JSON.")
@output_option(
    "--schedule-out",
    help="Write the best schedule, in the format its name gives as for "
    "simulate -o (.json JSON, *_jobs.csv Batsim with its *_schedule.csv, "
    ".swf SWF, else CSV).",
)
@click.option("--log", is_flag=True, help="Stream the solver's log.")
def command(
    file: str,
    kind: str,
    weights: str,
    relative: bool,
    backend: str,
    time_limit: float,
    workers: int,
    shelves: bool,
    preemptive: bool,
    lp_only: bool,
    grid: int | None,
    solver: str | None,
    output: str | None,
    schedule_out: str | None,
    log: bool,
    **input_kwargs: Any,
) -> None:
    """Optimum or [lower, upper] bounds of FILE for one objective."""
    objective = _objective(kind, weights, relative)
    if shelves:
        if backend not in ("cpsat", "shelf"):
            raise click.UsageError(
                f"--shelves solves with the shelf back-end (CP-SAT), not {backend}"
            )
        backend = "shelf"
    options = _backend_options(backend, lp_only=lp_only, grid=grid, solver=solver)
    if lp_only and schedule_out is not None:
        # Refused before any work: an LP relaxation gives a bound, no schedule.
        raise ValueError(
            "--schedule-out: --lp-only computes a lower bound only, there is no "
            "schedule to write"
        )
    if preemptive:
        _refuse_with_preemptive(backend, shelves, options)
    instance = load_instance(file, **input_kwargs)
    if preemptive:
        result = _preemptive(instance, objective, time_limit, workers)
        _finish(file, instance, objective, result, output, schedule_out)
        return
    began = time.monotonic()
    # The pipeline's offline incumbents (best list/shelf heuristic, oracle
    # policies): back-ends never simulate policies themselves.
    incumbents, skipped = timed_incumbents(
        instance, objective, began + INCUMBENT_SHARE * time_limit
    )
    result = solve(
        instance,
        objective,
        backend=backend,
        time_limit=max(0.0, time_limit - (time.monotonic() - began)),
        workers=workers,
        incumbents=incumbents,
        log=log,
        **options,
    )
    if skipped:
        result = dataclasses.replace(result, skipped=(*skipped, *result.skipped))
    _finish(file, instance, objective, result, output, schedule_out)


def _finish(
    file: str,
    instance: Instance,
    objective: Objective,
    result: Result,
    output: str | None,
    schedule_out: str | None,
) -> None:
    """Print the result, write the files asked for."""
    _refuse_empty(file, result, schedule_out)
    _print(instance, objective, result)
    if output is not None:
        text = json.dumps(result_record(instance, objective, result), indent=2)
        with atomic_write(output, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    if schedule_out is not None and result.schedule is not None:
        from optsched.io.schedules import schedule_format_for, write_schedule

        fmt = schedule_format_for(schedule_out)
        write_schedule(result.schedule, schedule_out, fmt, instance)


def _refuse_with_preemptive(
    backend: str, shelves: bool, options: dict[str, Any]
) -> None:
    if shelves or backend != "cpsat" or options:
        raise click.UsageError(
            "--preemptive uses its own models (configuration LP, time-indexed "
            "MILP): no --backend, --shelves or milp options with it"
        )


def _preemptive(
    instance: Instance, objective: Objective, time_limit: float, workers: int
) -> Result:
    """The preemptive optimum or interval (the ``preemptive`` back-end)."""
    from optsched.models.preempt.model import solve

    return solve(instance, objective, time_limit=time_limit, workers=workers)


def _refuse_empty(file: str, result: Result, schedule_out: str | None) -> None:
    """One line and exit 2 (through the group) when the run has nothing to give.

    Checked before anything is printed or written, so that a failed run
    leaves no output file behind.
    """
    why = result.error or f"status {result.status.value}"
    if result.objective is None and result.lower_bound is None:
        raise ValueError(f"{file}: {result.backend}: no schedule and no bound ({why})")
    if schedule_out is not None and result.schedule is None:
        raise ValueError(
            f"{file}: {result.backend}: no schedule to write to {schedule_out} ({why})"
        )


class _OutOfTime(BaseException):
    """The time box of :func:`_time_box` ran out.

    A ``BaseException``, so that no ``except Exception`` of the code inside
    swallows it.
    """


@contextlib.contextmanager
def _time_box(deadline: float) -> Iterator[None]:
    """Raise :class:`_OutOfTime` in the body at ``deadline`` (``time.monotonic``).

    The policies' simulator has no clock of its own: on a 3,000-job strip
    conservative backfilling alone takes minutes. ``SIGALRM`` stops it at
    the deadline (main thread only; elsewhere the body runs to its end).
    Raises at once when the deadline has passed.
    """
    left = deadline - time.monotonic()
    if left <= 0:
        raise _OutOfTime
    # A deadline decades away (--time-limit 1e300) overflows the timer: no
    # alarm is needed then.
    if (
        threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "setitimer")
        or left > 1e9
    ):
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed_incumbents(
    instance: Instance, objective: Objective, deadline: float
) -> tuple[list[Incumbent], list[str]]:
    """:func:`optsched.analysis.gap.heuristic_incumbents` within ``deadline``.

    Parameters
    ----------
    instance, objective
        The problem.
    deadline
        A :func:`time.monotonic` instant.

    Returns
    -------
    incumbents, skipped
        The best offline heuristic among those that end before the deadline
        (:func:`_timed_heuristics`), then each oracle policy whose
        simulation ends before it; one line per step left out.
    """
    from optsched.analysis.gap import POLICY_SEED, exact_estimates, oracle_policies
    from optsched.heuristics import simulate

    out, skipped = _timed_heuristics(instance, objective, deadline)
    exact = exact_estimates(instance)
    for policy in oracle_policies(instance):
        try:
            with _time_box(deadline):
                schedule = simulate(exact, policy, seed=POLICY_SEED).schedule
        except _OutOfTime:
            skipped.append(f"oracle:{policy}: skipped (time limit)")
            continue
        out.append(Incumbent(f"oracle:{policy}", schedule))
    return out, skipped


def _timed_heuristics(
    instance: Instance, objective: Objective, deadline: float
) -> tuple[list[Incumbent], list[str]]:
    """The best of the offline heuristics that end before ``deadline``.

    Each one runs in its own time box: a list schedule over the whole past
    is quadratic (minutes on a 50,000-item strip), so one that would end
    late is stopped and named; the back-end still has its own list
    schedule. The same candidates as
    :func:`optsched.heuristics.rigid.offline.best_heuristic`.
    """
    from optsched.heuristics.rigid.offline import ORDERS, SHELVES, heuristic_schedules

    schedules: list[Schedule] = []
    late: list[str] = []
    for name in [*ORDERS, *(SHELVES if instance.machine.flat else {})]:
        try:
            with _time_box(deadline):
                found = heuristic_schedules(instance, objective, candidates=[name])
        except _OutOfTime:
            late.append(name)
            continue
        schedules.extend(found.values())
    skipped = [f"heuristics {', '.join(late)}: skipped (time limit)"] if late else []
    if not schedules:
        return [], skipped
    best = min(schedules, key=lambda s: objective.value(instance, s))
    return [Incumbent(best.producer or "heuristic", best)], skipped


def _objective(kind: str, weights: str, relative: bool) -> Objective:
    if kind == "cmax" and (weights != "one" or relative):
        raise click.UsageError("--weights and --relative apply to --objective wct only")
    return Objective(kind, weights, relative)


def _backend_options(backend: str, **given: Any) -> dict[str, Any]:
    options = {k: v for k, v in given.items() if v not in (None, False)}
    if backend != "milp" and options:
        flags = ", ".join("--" + k.replace("_", "-") for k in options)
        raise click.UsageError(f"{flags}: only for --backend milp")
    return options


def result_record(
    instance: Instance, objective: Objective, result: Result
) -> dict[str, Any]:
    """The result as a JSON-ready dictionary (no schedule: see --schedule-out)."""
    binding = result.binding_bound
    return {
        "instance": instance.name,
        "source": {
            "file": instance.source.file,
            "sha256": instance.source.sha256,
            "format": instance.source.format,
        },
        "jobs": len(instance.jobs),
        "processors": instance.processors,
        "allocation": instance.machine.allocation,
        "objective": objective.label,
        "backend": result.backend,
        # Set when objective_value and lower_bound are those of a restricted
        # problem (e.g. "shelves": the best shelf schedule), else null.
        "restriction": RESTRICTIONS.get(result.backend),
        "status": result.status.value,
        "objective_value": result.objective,
        "upper_bound_source": result.upper_bound_source,
        "lower_bound": result.lower_bound,
        "lower_bound_method": binding.method if binding is not None else None,
        "gap": _finite(result.gap),
        "runtime": result.runtime,
        "bounds": [
            {"method": b.method, "value": b.value, "runtime": b.runtime}
            for b in result.bounds
        ],
        "params": _jsonable(dict(result.params)),
        "error": result.error,
        "interrupted": result.interrupted,
        "rejected": list(result.rejected),
        "skipped": list(result.skipped),
    }


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else value


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3f}"


def _print(instance: Instance, objective: Objective, result: Result) -> None:
    console = wide_console()
    table = Table(
        title=f"lower bounds: {instance.name or 'instance'}, {objective.label}"
    )
    table.add_column("method")
    table.add_column("value", justify="right")
    table.add_column("time (s)", justify="right")
    for bound in result.bounds:
        table.add_row(bound.method, _number(bound.value), f"{bound.runtime:.3f}")
    print_table(console, table)
    binding = result.binding_bound
    lines = [
        ("best lower bound", _number(result.lower_bound)
         + (f"  ({binding.method})" if binding is not None else "")),
        ("best upper bound", _number(result.objective)
         + (f"  ({result.upper_bound_source})" if result.upper_bound_source else "")),
        ("status", result.status.value),
        ("relative gap", "-" if result.gap is None else f"{result.gap:.4%}"),
        ("runtime (s)", f"{result.runtime:.2f}"),
    ]  # fmt: skip
    if result.params.get("lp_bound") is not None:
        lines.insert(0, ("preemptive LP", str(result.params["lp_bound"])
                         + ("" if result.params.get("lp_converged")
                            else "  (bound; column generation stopped)")))  # fmt: skip
    if "relaxation" in result.params:
        lines.insert(0, ("relaxation", str(result.params["relaxation"])))
    restriction = RESTRICTIONS.get(result.backend)
    if restriction is not None:
        lines.insert(0, ("restriction", f"{restriction} (bounds of the restricted "
                         "problem)"))  # fmt: skip
    if result.error is not None:
        lines.append(("error", result.error))
    if result.interrupted:
        lines.append(("interrupted", "yes: best result so far"))
    for note in result.skipped:
        lines.append(("skipped", str(note)))
    for name, value in lines:
        console.print(f"{name:<17} {value}", highlight=False)
