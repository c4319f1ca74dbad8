"""``optsched window TRACE -o FILE``: cut a window and write it as JSON.

Select ``--first-job K --jobs N`` (position, 0-based, submit order, after
skipped jobs are removed) or ``--start T0 --end T1`` (submit time, trace
seconds, half-open); ``--initial-state recorded`` turns the jobs the trace's
recorded schedule still runs at the window start into busy blocks. See
:mod:`optsched.windows.window`. ``--workload-format batsim`` writes a Batsim JSON
workload instead of the native instance
(:func:`optsched.io.batsim.write_batsim_workload`); without a selection it
converts the whole file. The file is written
atomically: on any error no file is left behind.
"""

from __future__ import annotations

from typing import Any

import click

from optsched.cli.console import echo
from optsched.cli.options import (
    choice_option,
    input_options,
    load_instance,
    native_output,
)
from optsched.errors import InputError


@click.command("window")
@click.argument("trace_file", metavar="TRACE", type=click.Path(dir_okay=False))
@native_output
@choice_option(
    "--workload-format",
    choices=("native", "batsim"),
    default="native",
    help="Write -o as an optsched instance or a Batsim JSON workload "
    "(delay profiles; no busy blocks).",
)
@input_options
def command(
    trace_file: str, output: str, workload_format: str, **input_kwargs: Any
) -> None:
    """Cut a window of TRACE into a native JSON instance file.

    Releases are rebased so the window starts at 0; job ids are kept; the
    file records the trace's name, sha256 and the window (selection, shift,
    initial state).
    """
    selection = ("first_job", "n_jobs", "window_start", "window_end")
    # A Batsim workload of the whole file is a format conversion, not a cut.
    whole = workload_format == "batsim"
    if not whole and all(input_kwargs.get(key) is None for key in selection):
        raise ValueError(
            "optsched window needs a selection: --first-job K --jobs N or "
            "--start T0 --end T1 (--workload-format batsim converts the "
            "whole file without one)"
        )
    instance = load_instance(trace_file, **input_kwargs)
    from optsched.io.batsim import write_batsim_workload
    from optsched.io.native import write_native

    write = write_batsim_workload if workload_format == "batsim" else write_native
    try:
        write(instance, output)
    except OSError as error:
        raise InputError(
            f"cannot write file: {error.strerror or error}", output
        ) from None
    window = instance.source.window
    shift = 0 if window is None else window.shift
    echo(
        f"wrote {output}: {len(instance.jobs)} jobs, {instance.processors} "
        f"processors, {len(instance.machine.unavailable)} busy blocks, "
        f"releases shifted by {shift}"
    )
