"""``optsched generate ...``: instance generators with a known optimum.

``optsched generate perfect-packing --width W --height H --items N --seed S
[--guillotine/--non-guillotine] -o FILE`` writes a native JSON instance whose
optimal contiguous makespan is ``H`` (see :mod:`optsched.generate.perfect`).
``optsched generate afkt ...`` writes a synthetic job mix of Arndt et al.
(2000) on nodes with speeds (:mod:`optsched.generate.afkt`).
"""

from __future__ import annotations

import click

from optsched.cli.console import echo
from optsched.cli.options import (
    native_output,
    output_option,
    shown_option,
    shown_options,
)
from optsched.cli.types import FiniteFloatRange
from optsched.generate.perfect import perfect_packing_layout

_seed = shown_option("--seed", default=0, type=int, help="Random seed.")
"""``--seed`` of every generator."""


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
@_seed
@click.option(
    "--guillotine/--non-guillotine",
    default=True,
    show_default=True,
    help="Guillotine cuts only, or a non-guillotine tiling (pinwheels).",
)
@native_output
@output_option(
    "--layout", help="Also write the cut as a schedule (CSV): an optimal schedule."
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


@command.command("moldable")
@shown_option(
    "--jobs", default=20, type=click.IntRange(min=1),
    help="Jobs, all released at 0 (Table 6.5: 20; Fig. 5.10: 12).",
)  # fmt: skip
@shown_option(
    "--share", default=1.0, type=FiniteFloatRange(0, 1),
    help="Share of moldable (scalable) jobs; the others stay rigid.",
)  # fmt: skip
@shown_option(
    "--machine", default=128, type=click.IntRange(min=128),
    help="Processors (requests are drawn from 4..128).",
)  # fmt: skip
@shown_option(
    "--speedup", default="linear",
    help="Speed-up model of the moldable jobs (as --moldable takes it); "
    "'linear:max=128' lets them grow beyond their request.",
)  # fmt: skip
@_seed
@native_output
def moldable_command(
    jobs: int, share: float, machine: int, speedup: str, seed: int, output: str
) -> None:
    """A batch of Kalthoff's rescaling experiments (thesis Table 6.5, Fig. 5.10).

    Requests uniform on 4..128 processors, run times on 20..400 s, the
    moldable jobs with modes from the speed-up model
    (:mod:`optsched.generate.moldable`).
    """
    from optsched.generate.moldable import moldable_batch
    from optsched.io.native import write_native
    from optsched.moldable.speedup import parse_model

    try:
        parse_model(speedup)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--speedup") from None
    instance = moldable_batch(
        jobs, round(share * jobs), machine=machine, seed=seed, speedup=speedup,
        name=f"moldable-{jobs}-s{share:g}-seed{seed}",
    )  # fmt: skip
    write_native(instance, output)
    moldable = sum(1 for job in instance.jobs if job.modes)
    echo(f"wrote {output}: {jobs} jobs ({moldable} moldable) on {machine} processors")


AFKT_OPTIONS: list[tuple[str, object, str]] = [
    ("--jobs", 250, "Jobs n (AFKT00 experiments 1-4: 250; 5: 500)."),
    (
        "--speeds",
        "10x100",
        "Node speeds: QxS (Q nodes of speed S), a node count M (the thesis's "
        "two classes: 22 -> 16x275 + 6x825, 100 -> 74x275 + 26x825), or a list "
        "'100,100,275'.",
    ),
    ("--seq-ratio", 0.5, "Share of sequential jobs (seqR, AFKT00's P_s)."),
    (
        "--large-ratio",
        0.3,
        "Share of large jobs among the parallel ones (largeR, P_lp).",
    ),
    ("--timespan", 10_000, "T_c,max: releases uniform on 0..T (0: offline)."),
    ("--seq-work", "1000:50000", "MIN:MAX work of sequential jobs (at speed 1)."),
    ("--par-work", "10000:400000", "MIN:MAX work of parallel jobs (at speed 1)."),
    ("--error-rate", 0.0, "Probability that a job's estimate is wrong."),
    ("--max-error", 0.0, "Largest relative estimate error (maxError / p_err)."),
    (
        "--error-model",
        "under",
        "'under' (thesis: p/(1+e U), underestimates only) or 'symmetric' "
        "(AFKT00: p f or p / f, f = 1 + e U).",
    ),
]
"""The knobs of ``generate afkt`` as rows (option, default, help): click
reads each option's type from its default (integer, float or text)."""


@command.command("afkt")
@shown_options(AFKT_OPTIONS)
@_seed
@native_output
def afkt_command(
    jobs: int,
    speeds: str,
    seq_ratio: float,
    large_ratio: float,
    timespan: int,
    seq_work: str,
    par_work: str,
    error_rate: float,
    max_error: float,
    error_model: str,
    seed: int,
    output: str,
) -> None:
    """A synthetic job mix of Arndt et al. 2000 as Rassmann 2020 generates it.

    Sequential and parallel (small: 2..m/2 nodes, large: m/2..m) rigid jobs
    on nodes with speeds; a job's runtime in the file is its work at speed 1
    (:mod:`optsched.generate.afkt`).
    """
    from optsched.generate.afkt import afkt_instance
    from optsched.io.native import write_native

    instance = afkt_instance(
        jobs, speeds, seq_ratio=seq_ratio, large_ratio=large_ratio,
        timespan=timespan, seq_work=_work_range(seq_work, "--seq-work"),
        par_work=_work_range(par_work, "--par-work"), error_rate=error_rate,
        max_error=max_error, error_model=error_model, seed=seed,
    )  # fmt: skip
    write_native(instance, output)
    sequential = sum(1 for job in instance.jobs if job.size == 1)
    echo(
        f"wrote {output}: {jobs} jobs ({sequential} sequential) on "
        f"{instance.processors} nodes"
    )


def _work_range(text: str, option: str) -> tuple[int, int]:
    low, sep, high = text.partition(":")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit():
        raise ValueError(f"{option} {text!r}: expected MIN:MAX, two integers")
    return int(low), int(high)
