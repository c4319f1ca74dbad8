"""``optsched plot gantt SCHEDULE [INSTANCE] -o out.png|out.svg``."""

from __future__ import annotations

from typing import Any

import click

from optsched.cli.console import echo
from optsched.cli.options import (
    choice_option,
    input_options,
    load_instance,
    output_option,
    schedule_format_option,
)
from optsched.io.schedules import read_schedule


@click.group(name="plot")
def command() -> None:
    """Draw figures of schedules."""


@command.command(name="gantt")
@click.argument("schedule_file", metavar="SCHEDULE", type=click.Path(dir_okay=False))
@click.argument(
    "instance_file",
    metavar="[INSTANCE]",
    required=False,
    type=click.Path(dir_okay=False),
)
@output_option(required=True, help="Figure file: .png, .svg or .pdf.")
@click.option("--title", default=None, help="Chart title (default: name, producer).")
@schedule_format_option
@choice_option(
    "--time-unit",
    choices=["auto", "s", "min", "h", "d"],
    default="auto",
    help="Unit of the time axis; auto: seconds up to 2 h, hours up to 3 days, "
    "days beyond.",
)
@click.option(
    "--wait-lines",
    is_flag=True,
    help="A thin line from each job's release to its start (jobs that waited); "
    "needs the releases: the INSTANCE, or a Batsim out_jobs.csv.",
)
@input_options
def gantt_command(
    schedule_file: str,
    instance_file: str | None,
    output: str,
    title: str | None,
    schedule_format: str | None,
    time_unit: str,
    wait_lines: bool,
    **input_kwargs: Any,
) -> None:
    """Draw SCHEDULE as a Gantt chart: processors on the y axis, time on x,
    jobs coloured by id, busy blocks hatched grey.

    INSTANCE gives the machine size, the busy blocks and the job sizes (the
    window options cut it first). Without it, the instance is rebuilt from
    the schedule: sizes from the processors listed (or the CSV ``size`` /
    Batsim ``requested_number_of_resources`` column), no busy blocks, and the
    fewest processors that hold the schedule.

    --wait-lines draws, for each job that waited, a thin line from its
    release to its start. Releases come from INSTANCE, or without it from a
    Batsim ``out_jobs.csv`` (``submission_time``); other schedule files do
    not record them, and the option is then refused.
    """
    from optsched.check import check_schedule
    from optsched.io.schedules import schedule_file_jobs
    from optsched.plot.gantt import (
        instance_from_schedule,
        save_gantt,
        schedule_notes,
    )

    schedule = read_schedule(schedule_file, schedule_format)
    if instance_file is not None:
        instance = load_instance(instance_file, **input_kwargs)
        violations = check_schedule(instance, schedule)
        if violations:
            echo(
                f"warning: the schedule has {len(violations)} violation(s), "
                f"first: {violations[0]}",
                err=True,
            )
    elif any(value not in (None, "none", False) for value in input_kwargs.values()):
        raise ValueError("the instance and window options need an INSTANCE file")
    else:
        try:
            notes = schedule_notes(schedule)
        except ValueError as error:
            raise ValueError(f"{schedule_file}: {error}") from None
        for note in notes:
            echo(
                f"note: {schedule_file}: {note}; unchecked (give the INSTANCE)",
                err=True,
            )
        sizes, releases = schedule_file_jobs(schedule_file)
        if wait_lines and not set(schedule.placements) <= set(releases):
            raise ValueError(
                f"{schedule_file}: --wait-lines needs the jobs' releases, which "
                "the schedule file does not record; give the INSTANCE"
            )
        try:
            instance = instance_from_schedule(schedule, sizes=sizes, releases=releases)
        except ValueError as error:
            raise ValueError(
                f"{schedule_file}: {error}; give the INSTANCE the schedule belongs to"
            ) from None
        echo(
            f"note: no INSTANCE given; instance rebuilt from the schedule "
            f"(m = {instance.processors}, the fewest processors that hold it; "
            "no busy blocks)",
            err=True,
        )
    try:
        path = save_gantt(
            instance,
            schedule,
            output,
            title=title,
            time_unit=time_unit,
            wait_lines=wait_lines,
        )
    except ValueError as error:
        # What the chart cannot draw is a fault of the schedule file.
        raise ValueError(f"{schedule_file}: {error}") from None
    echo(f"gantt -> {path} ({len(schedule)} jobs, m = {instance.processors})")
