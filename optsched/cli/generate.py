"""``optsched generate ...``: instance generators with a known optimum.

``optsched generate perfect-packing --width W --height H --items N --seed S
[--guillotine/--non-guillotine] -o FILE`` writes a native JSON instance whose
optimal contiguous makespan is ``H`` (see :mod:`optsched.generate`).
"""

from __future__ import annotations

import click

from optsched.cli.console import echo
from optsched.cli.options import output_file
from optsched.generate import perfect_packing_layout


@click.group("generate")
def command() -> None:
    """Generate instances with a known optimum."""


@command.command("perfect-packing")
@click.option(
    "--width", required=True, type=click.IntRange(min=1), help="Processors W."
)
@click.option(
    "--height", required=True, type=click.IntRange(min=1), help="Optimal makespan H."
)
@click.option(
    "--items", required=True, type=click.IntRange(min=1), help="Number of jobs."
)
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
@click.option(
    "--guillotine/--non-guillotine",
    default=True,
    show_default=True,
    help="Guillotine cuts only, or a non-guillotine tiling (pinwheels).",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    callback=output_file,
    help="Native JSON instance file to write.",
)
@click.option(
    "--layout",
    type=click.Path(dir_okay=False),
    default=None,
    callback=output_file,
    help="Also write the cut as a schedule (CSV): an optimal schedule.",
)
def perfect_packing_command(
    width: int,
    height: int,
    items: int,
    seed: int,
    guillotine: bool,
    output: str,
    layout: str | None,
) -> None:
    """Cut a W x H rectangle into N pieces: jobs on W contiguous processors.

    Each piece is a job (size = width, runtime = height, released at 0); the
    pieces tile the rectangle, so the optimal makespan is H.
    """
    from optsched.io.native import write_native

    instance, schedule = perfect_packing_layout(
        width, height, items, seed=seed, guillotine=guillotine
    )
    write_native(instance, output)
    if layout is not None:
        from optsched.io.schedules import write_schedule

        write_schedule(schedule, layout, "csv", instance)
    echo(
        f"wrote {output}: {items} jobs on {width} contiguous processors, "
        f"optimal makespan {height}"
    )
