"""``optsched check INSTANCE SCHEDULE``: judge a schedule with the checker.

Exit status: 0 when the schedule is valid, 1 when it has violations (each
printed on its own line), 2 on bad input.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from optsched.check import check_schedule
from optsched.cli.options import input_options, load_instance
from optsched.io.schedules import SCHEDULE_FORMATS, read_schedule


@click.command("check")
@click.argument("instance_file", metavar="INSTANCE", type=click.Path(dir_okay=False))
@click.argument("schedule_file", metavar="SCHEDULE", type=click.Path(dir_okay=False))
@click.option(
    "--schedule-format",
    type=click.Choice(SCHEDULE_FORMATS),
    default=None,
    help="Force the schedule's format (default: recognised from the content).",
)
@input_options
def command(
    instance_file: str,
    schedule_file: str,
    schedule_format: str | None,
    **input_kwargs: Any,
) -> None:
    """Check SCHEDULE against INSTANCE: every job placed once, start >= release,
    exact durations, capacity (busy blocks included), disjoint processor sets,
    contiguity on contiguous machines.

    The window options cut INSTANCE first, so a schedule of a window can be
    checked against the trace it came from.

    Exit status: 0 when valid, 1 with violations, 2 on bad input.
    """
    instance = load_instance(instance_file, **input_kwargs)
    schedule = read_schedule(schedule_file, schedule_format)
    violations = check_schedule(instance, schedule)
    n = len(instance.jobs)
    if not violations:
        click.echo(f"OK: {n} jobs, schedule valid")
        return
    for violation in violations:
        click.echo(str(violation))
    plural = "s" if len(violations) != 1 else ""
    click.echo(f"INVALID: {len(violations)} violation{plural} ({n} jobs)")
    sys.exit(1)
