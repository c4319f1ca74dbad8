"""``optsched bound FILE``: optimum, or proven bounds around it, for one instance.

Prints every lower bound with its value and time, the best lower bound and
its method, the best upper bound and where its schedule came from, the
status, the relative gap and the runtime. ``-o`` writes the result as JSON,
``--schedule-out`` the best schedule (both atomically). Ctrl-C during the
search stops it and prints the best result found so far.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from optsched.cli.console import wide_console
from optsched.cli.options import input_options, load_instance
from optsched.instance import Instance
from optsched.io.atomic import atomic_write
from optsched.models import BACKENDS, RESTRICTIONS, solve
from optsched.models.result import Result
from optsched.objective import OBJECTIVE_KINDS, WEIGHT_RULES, Objective

MILP_ONLY = ("lp_only", "grid", "solver")


@click.command(name="bound")
@click.argument("file", type=click.Path(dir_okay=False))
@input_options
@click.option(
    "--objective",
    "kind",
    type=click.Choice(OBJECTIVE_KINDS),
    default="cmax",
    show_default=True,
    help="cmax: makespan; wct: total weighted completion time.",
)
@click.option(
    "--weights",
    type=click.Choice(WEIGHT_RULES),
    default="one",
    show_default=True,
    help="wct weights: one, size, area (size x runtime) or the instance's.",
)
@click.option(
    "--relative",
    is_flag=True,
    help="wct: measure completion from release (weighted flow time).",
)
@click.option(
    "--backend",
    type=click.Choice(list(BACKENDS)),
    default="cpsat",
    show_default=True,
    help="Exact model or closed-form bounds with the best heuristic.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Seconds for the whole computation.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Solver threads.",
)
@click.option(
    "--shelves",
    is_flag=True,
    help="Optimum (or interval) of shelf schedules only: the 'shelf' back-end.",
)
@click.option("--lp-only", is_flag=True, help="milp: only the LP relaxation (a bound).")
@click.option(
    "--grid",
    type=click.IntRange(min=1),
    default=None,
    help="milp: time grid step in seconds (default: fit about 400 cells).",
)
@click.option(
    "--solver",
    type=click.Choice(["highs", "cbc"]),
    default=None,
    help="milp: the MILP solver (default highs).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the result as JSON.",
)
@click.option(
    "--schedule-out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the best schedule (.json: JSON, otherwise CSV).",
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
    instance = load_instance(file, **input_kwargs)
    from optsched.gap import heuristic_incumbents

    # The pipeline's offline incumbents (best list/shelf heuristic, oracle
    # policies): back-ends never simulate policies themselves.
    result = solve(
        instance,
        objective,
        backend=backend,
        time_limit=time_limit,
        workers=workers,
        incumbents=heuristic_incumbents(instance, objective),
        log=log,
        **options,
    )
    _print(instance, objective, result)
    if output is not None:
        text = json.dumps(result_record(instance, objective, result), indent=2)
        with atomic_write(output, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    if schedule_out is not None:
        if result.schedule is None:
            raise click.UsageError("no schedule to write (--lp-only gives bounds only)")
        from optsched.io import write_schedule

        fmt = "json" if Path(schedule_out).suffix.lower() == ".json" else "csv"
        write_schedule(result.schedule, schedule_out, fmt, instance)


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
    console.print(table)
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
    restriction = RESTRICTIONS.get(result.backend)
    if restriction is not None:
        lines.insert(0, ("restriction", f"{restriction} (bounds of the restricted "
                         "problem)"))  # fmt: skip
    if result.error is not None:
        lines.append(("error", result.error))
    if result.interrupted:
        lines.append(("interrupted", "yes: best result so far"))
    for name, value in lines:
        console.print(f"{name:<17} {value}", highlight=False)
