"""``optsched coreserve``: grid co-reservation (Meltzer 2005).

``optsched coreserve optimum FILE`` gives the exact optimum of one request
on given cluster profiles (:mod:`optsched.coreserve.optimum`, or the CP-SAT model
:mod:`optsched.models.coreserve.request` with ``--method cpsat``); the file format
is in :mod:`optsched.coreserve.io`. The JSON result (``start``, ``cost``,
``clusters``, with ``--pareto`` the front) goes to ``-o`` (atomically) or
to standard output, a one-line summary to standard error. A request that
cannot be placed gives ``"start": null`` and a ``reason`` (exit 0); a
malformed file one line and exit 2.

Further subcommands register on :data:`command` (``@command.command()``).
"""

from __future__ import annotations

from fractions import Fraction

import click

from optsched.cli.options import (
    check_output_path,
    choice_option,
    seconds_option,
    shown_option,
)
from optsched.cli.types import FiniteFloatRange
from optsched.coreserve.io import optimum_record, read_coreserve, write_record
from optsched.coreserve.optimum import OBJECTIVES, optimum, pareto_front
from optsched.coreserve.request import Choice
from optsched.coreserve.tariff import COST_RULES


@click.group(name="coreserve")
def command() -> None:
    """Grid co-reservation (Meltzer 2005)."""


def _output(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    del ctx, param
    if value is not None and value != "-":
        check_output_path(value)
    return value


@command.command(name="optimum")
@click.argument("file", type=click.Path(dir_okay=False))
@choice_option(
    "--objective",
    choices=OBJECTIVES,
    default="start",
    help="start: earliest; cost: cheapest; weighted: k*norm cost + s*norm start.",
)
@shown_option("--k", "k", type=FiniteFloatRange(min=0), default=1.0,
              help="weighted: weight of the normalised cost.")  # fmt: skip
@shown_option("--s", "s", type=FiniteFloatRange(min=0), default=1.0,
              help="weighted: weight of the normalised start.")  # fmt: skip
@click.option("--pareto", is_flag=True, help="Add the (start, cost) Pareto front.")
@choice_option(
    "--cost-rule",
    choices=COST_RULES,
    default="sampled",
    help="sampled: the study's hourly samples; prorata: per second.",
)
@choice_option(
    "--method",
    choices=["enumerate", "cpsat"],
    default="enumerate",
    help="Event-point enumeration (exact) or the CP-SAT model (sampled only).",
)
@seconds_option("--time-limit", default=10.0, help="cpsat: seconds.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    callback=_output,
    help="Write the result as JSON here (default or '-': standard output).",
)
def optimum_command(
    file: str,
    objective: str,
    k: float,
    s: float,
    pareto: bool,
    cost_rule: str,
    method: str,
    time_limit: float,
    output: str | None,
) -> None:
    """Exact optimum of the co-reservation request in FILE."""
    if method == "cpsat" and cost_rule != "sampled":
        raise click.UsageError(
            "--method cpsat: sampled cost rule only (prorata: use enumerate)"
        )
    request, clusters = read_coreserve(file)
    choice: Choice | None
    value: Fraction | None
    if method == "enumerate":
        best = optimum(request, clusters, objective, k=k, s=s, cost_rule=cost_rule)
        choice, reason, value = best.choice, best.reason, best.value
        status = "optimal" if choice is not None else "infeasible"
    else:
        from optsched.models.coreserve.request import solve

        result = solve(request, clusters, objective, k=k, s=s, time_limit=time_limit)
        choice, reason, value, status = (
            result.choice,
            result.reason,
            result.objective,
            result.status,
        )
        if choice is None and reason is None:
            reason = f"CP-SAT found no choice ({status}, time limit {time_limit:g} s)"
    front = pareto_front(request, clusters, cost_rule=cost_rule) if pareto else None
    record = optimum_record(
        choice,
        reason=reason,
        objective=objective,
        value=value,
        cost_rule=cost_rule,
        method=method,
        status=status,
        pareto=front,
    )
    write_record(record, output)
    click.echo(_summary(file, choice, reason, status, front), err=True)


def _summary(
    file: str,
    choice: Choice | None,
    reason: str | None,
    status: str,
    front: list[Choice] | None,
) -> str:
    if choice is None:
        text = f"{file}: no placement: {reason}"
    else:
        text = (
            f"{file}: start {choice.start}, cost {float(choice.cost):g}, "
            f"clusters {', '.join(choice.clusters)} ({status})"
        )
    if front is not None:
        text += f"; Pareto front of {len(front)} points"
    return text


def _add_simulate() -> None:
    # The simulation lives in its own module (it imports the engine).
    from optsched.cli.coreserve_simulate import simulate_command

    command.add_command(simulate_command)


_add_simulate()
