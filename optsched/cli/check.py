"""``optsched check INSTANCE SCHEDULE``: judge a schedule with the checker.

Exit status: 0 when the schedule is valid, 1 when it has violations (the
first :data:`MAX_VIOLATIONS` printed one per line, then a count by kind), 2
on bad input: any instance or schedule that cannot be read (missing, a
directory or a device, malformed, nested too deeply, numbers beyond
2**53), with one line ``file[:line]: reason`` on stderr. Status 1 means
"the checker found violations" and nothing else.
"""

from __future__ import annotations

import operator
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import click

from optsched.check import Violation, check_promises, check_schedule
from optsched.cli.options import (
    count_option,
    input_options,
    load_instance,
    schedule_format_option,
)
from optsched.errors import InputError
from optsched.instance import Instance
from optsched.io.schedules import read_schedule
from optsched.schedule import Schedule

T = TypeVar("T")

MAX_VIOLATIONS = 20
"""Violations listed by default; the rest are counted by kind."""


def _more_line(violations: list[Violation], shown: int) -> str:
    """``... and N more violations (K kinds: kind count, ...)``."""
    kinds = Counter(v.kind for v in violations).most_common()
    counts = ", ".join(f"{kind} {count}" for kind, count in kinds)
    plural = "s" if len(kinds) != 1 else ""
    rest = len(violations) - shown
    return (
        f"... and {rest} more violation{'s' if rest != 1 else ''} "
        f"({len(kinds)} kind{plural} in all: {counts}; --all lists every one)"
    )


def _window_hint(instance: Instance, schedule: Schedule, windowed: bool) -> str:
    """The window options that would cut the part ``schedule`` covers.

    Positions are only named when ``instance`` is the whole file (not
    ``windowed``), so that they are those ``--first-job`` counts.
    """
    ordered = sorted(instance.jobs, key=operator.attrgetter("release"))
    positions = [k for k, job in enumerate(ordered) if job.id in schedule.placements]
    placed = f"the schedule places only {len(positions)} of the {len(ordered)} jobs"
    state = "and --initial-state as when it was cut"
    consecutive = bool(positions) and positions[-1] - positions[0] + 1 == len(positions)
    if consecutive and not windowed:
        return (
            f"hint: {placed}, positions {positions[0]}..{positions[-1]}: check it "
            f"against that window with --first-job {positions[0]} --jobs "
            f"{len(positions)} ({state})"
        )
    return (
        f"hint: {placed}: check it against its window (--first-job/--jobs or "
        f"--start/--end, {state})"
    )


def _read(path: str, reader: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``reader(*args, **kwargs)``, any failure to read ``path`` as an InputError.

    Exit status 1 means "the checker found violations" and nothing else, so
    an input that exhausts the stack or the memory (which Python would
    report with a traceback and status 1) is bad input: one line, status 2.
    """
    try:
        return reader(*args, **kwargs)
    except RecursionError:
        raise InputError("nested too deeply to read", path) from None
    except MemoryError:
        raise InputError("too large to read in memory", path) from None


# Paths are checked by the readers, not by click: a directory given for a
# file is then one line "PATH: cannot read file: Is a directory", status 2,
# not click's three-line usage error.
@click.command("check")
@click.argument("instance_file", metavar="INSTANCE", type=click.Path())
@click.argument("schedule_file", metavar="SCHEDULE", type=click.Path())
@schedule_format_option
@count_option(
    "--max-violations",
    low=0,
    default=MAX_VIOLATIONS,
    help="List at most this many violations, then count the rest by kind "
    "(0: list all).",
)
@click.option("--all", "show_all", is_flag=True, help="List every violation.")
@count_option(
    "--max-per-processor",
    help="Also demand at most K jobs in progress on any processor (a preempted "
    "job stays in progress until its last piece ends; PBI promises 2).",
)
@click.option(
    "--no-migration",
    is_flag=True,
    help="Also demand that every job keeps one processor set in all its pieces.",
)
@input_options
def command(
    instance_file: str,
    schedule_file: str,
    schedule_format: str | None,
    max_violations: int,
    show_all: bool,
    max_per_processor: int | None,
    no_migration: bool,
    **input_kwargs: Any,
) -> None:
    """Check SCHEDULE against INSTANCE: every job placed once, start >= release,
    exact durations (the work of a preempted job's pieces), capacity (busy
    blocks included), disjoint processor sets, contiguity on contiguous
    machines, context-switch costs; on request, the promises of
    --max-per-processor and --no-migration.

    The window options cut INSTANCE first, so a schedule of a window can be
    checked against the trace it came from.

    The first --max-violations violations are listed, then one line counts
    the rest by kind; when most are missing jobs (a window's schedule checked
    against the whole trace), a hint on stderr names the window options.

    Exit status: 0 when valid, 1 with violations, 2 on bad input.
    """
    instance = _read(instance_file, load_instance, instance_file, **input_kwargs)
    schedule = _read(schedule_file, read_schedule, schedule_file, schedule_format)
    violations = check_schedule(instance, schedule)
    if max_per_processor is not None or no_migration:
        try:
            violations += check_promises(
                instance,
                schedule,
                max_per_processor=max_per_processor,
                no_migration=no_migration,
            )
        except ValueError as error:  # a count-only schedule: nothing to judge
            raise InputError(f"--max-per-processor: {error}", schedule_file) from None
    n = len(instance.jobs)
    if not violations:
        click.echo(f"OK: {n} jobs, schedule valid")
        return
    limit = len(violations) if show_all or max_violations == 0 else max_violations
    for violation in violations[:limit]:
        click.echo(str(violation))
    if len(violations) > limit:
        click.echo(_more_line(violations, limit))
    plural = "s" if len(violations) != 1 else ""
    click.echo(f"INVALID: {len(violations)} violation{plural} ({n} jobs)")
    missing = sum(v.kind == "missing" for v in violations)
    if 2 * missing > len(violations):
        windowed = any(
            input_kwargs.get(name) is not None
            for name in ("first_job", "n_jobs", "window_start", "window_end")
        )
        click.echo(_window_hint(instance, schedule, windowed), err=True)
    sys.exit(1)
