"""``optsched compare FILE --policies fcfs,easy,...``: one row per policy.

Every schedule is checked with :func:`optsched.check.check_schedule` and
measured with :mod:`optsched.metrics`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from dataclasses import dataclass
from typing import Any

import click
from rich.table import Table

from optsched.check import check_schedule
from optsched.cli.console import echo
from optsched.cli.display import echo_json, json_option, wide_option
from optsched.cli.options import (
    input_options,
    load_instance,
    output_option,
    shown_option,
)
from optsched.cli.simulate import (
    POLICY_HELP,
    SimulationOptions,
    completion_unit,
    exact,
    simulation_options,
)
from optsched.console import print_table, wide_console
from optsched.heuristics import Policy, parse_policy, simulate
from optsched.instance import Instance
from optsched.io.atomic import atomic_write
from optsched.io.spreadsheet import safe_cell
from optsched.metrics import summarize

DEFAULT_POLICIES = "fcfs,firstfit,easy,conservative"
COLUMNS = (
    "policy",
    "makespan",
    "weighted_completion",
    "mean_response",
    "mean_wait",
    "max_wait",
    "mean_bounded_slowdown",
    "utilisation",
    "killed",
    "seconds",
)
"""Columns of the CSV (``-o``) and keys of ``--json``; times in seconds. The
metric names are :class:`optsched.metrics.Summary`'s, as ``optsched export``
writes them after ``metric_``."""


OPTIONAL = ("sim time (s)", "killed (jobs)", "mean response (s)", "max wait (s)")
"""Printed columns left out, in this order, to fit the terminal (``--wide``
prints them all)."""


def headers(instance: Instance) -> tuple[str, ...]:
    """Headers of the printed table, one per :data:`COLUMNS`, units named."""
    unit = completion_unit(instance)
    completions = "sum C_j" if unit == "s" else "sum w_j C_j"
    return (
        "policy",
        "makespan (s)",
        f"{completions} ({unit})",
        "mean response (s)",
        "mean wait (s)",
        "max wait (s)",
        "mean bsld",
        "utilisation",
        "killed (jobs)",
        "sim time (s)",
    )


@dataclass(frozen=True, slots=True)
class Row:
    """Metrics of one policy's schedule (``seconds``: simulation time)."""

    policy: str
    makespan: int
    weighted_completion: float
    mean_response: float
    mean_wait: float
    max_wait: int
    mean_bounded_slowdown: float
    utilisation: float
    killed: int
    seconds: float


def compare_policies(
    instance: Instance, specs: list[str | Policy], **options: Any
) -> list[Row]:
    """Simulate each policy spec on ``instance``; check and measure it.

    Raises
    ------
    RuntimeError
        When a schedule fails the checker (a simulator bug, never bad input).
    """
    rows = []
    for spec in specs:
        result = simulate(instance, spec, **options)
        violations = check_schedule(instance, result.schedule)
        if violations:
            raise RuntimeError(f"policy {spec}: invalid schedule: {violations[0]}")
        summary = summarize(instance, result.schedule)
        rows.append(
            Row(
                policy=result.schedule.producer,
                makespan=summary.makespan,
                weighted_completion=summary.weighted_completion,
                mean_response=summary.mean_response,
                mean_wait=summary.mean_wait,
                max_wait=summary.max_wait,
                mean_bounded_slowdown=summary.mean_bounded_slowdown,
                utilisation=summary.utilisation,
                killed=result.stats.killed,
                seconds=result.stats.wall_time,
            )
        )
    return rows


def _specs(text: str) -> list[str]:
    specs = [s.strip() for s in _split_specs(text) if s.strip()]
    if not specs:
        raise ValueError("--policies: no policy given")
    for spec in specs:
        parse_policy(spec)  # fail before simulating anything
    return specs


def _split_specs(text: str) -> list[str]:
    from optsched.heuristics import split_policy_specs

    return split_policy_specs(text)


def _table(rows: list[Row], title: str, instance: Instance) -> Table:
    table = Table(title=title)
    for name in headers(instance):
        table.add_column(name, justify="left" if name == "policy" else "right")
    for row in rows:
        table.add_row(
            row.policy,
            f"{row.makespan}",
            exact(row.weighted_completion),
            f"{row.mean_response:.2f}",
            f"{row.mean_wait:.2f}",
            f"{row.max_wait}",
            f"{row.mean_bounded_slowdown:.3f}",
            f"{row.utilisation:.4f}",
            f"{row.killed}",
            f"{row.seconds:.2f}",
        )
    return table


def _csv_text(rows: list[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(
            [
                safe_cell(row.policy),  # a spec may start with "=" or "-"
                row.makespan,
                repr(row.weighted_completion),
                repr(row.mean_response),
                repr(row.mean_wait),
                row.max_wait,
                repr(row.mean_bounded_slowdown),
                repr(row.utilisation),
                row.killed,
                f"{row.seconds:.3f}",
            ]
        )
    return buffer.getvalue()


@click.command("compare", epilog=POLICY_HELP)
@click.argument("file", type=click.Path(dir_okay=False))
@shown_option(
    "--policies",
    default=DEFAULT_POLICIES,
    help="Comma-separated policy specs (see below).",
)
@simulation_options
@output_option("--output", "-o", help="Also write the table as CSV to this file.")
@wide_option
@json_option
@input_options
def command(
    file: str,
    policies: str,
    simulation: SimulationOptions,
    output: str | None,
    wide: bool,
    as_json: bool,
    **input_kwargs: Any,
) -> None:
    """Simulate FILE under several policies and print one row per policy.

    Columns: makespan (s), sum of completion times (s; weighted when the
    jobs have weights), mean response time (s), mean and max wait (s), mean
    bounded slowdown (10 s), utilisation (share of the processor-seconds),
    jobs killed at their estimate, and the simulation's wall time (s).
    """
    chosen: list[str | Policy] = [simulation.policy(s) for s in _specs(policies)]
    instance = load_instance(file, **input_kwargs)
    rows = compare_policies(instance, chosen, **simulation.run_options())
    title = f"{instance.name or file}: {len(instance.jobs)} jobs"
    if as_json:
        echo_json({"instance": instance.name or file, "jobs": len(instance.jobs),
                   "rows": [dataclasses.asdict(row) for row in rows]})  # fmt: skip
    else:
        table = _table(rows, title, instance)
        print_table(wide_console(), table, optional=OPTIONAL, wide=wide)
    if output is not None:
        with atomic_write(output, "w", encoding="utf-8", newline="") as handle:
            handle.write(_csv_text(rows))
        echo(f"table written to {output}", err=as_json)
