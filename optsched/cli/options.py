"""Options shared by every command that reads an instance or a trace, the
check every output option makes before any work is done, and the decorators
that let several commands share an option (:func:`output_option`) or a group
of options (:func:`option_group`)."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from optsched.cli.types import FiniteFloatRange
from optsched.errors import InputError
from optsched.heuristics import ALLOCATION_RULES
from optsched.instance import Instance
from optsched.io.schedules import SCHEDULE_FORMATS
from optsched.moldable.speedup import SpeedupModel
from optsched.simulation import RunOptions
from optsched.topology.machines import MachineShape
from optsched.trace import Trace
from optsched.windows.prepare import (
    OptionError,
    Preparation,
    prepare,
    read_source,
    requested_window,
)

F = TypeVar("F", bound=Callable[..., Any])

Decorator = Callable[[Any], Any]

FORMATS = ("swf", "json", "batsim", "strip")


def check_output_path(path: str | Path, *, folder: bool = False) -> None:
    """Fail at once when ``path`` cannot be written, before any computation.

    The folder that will hold ``path`` must exist and be writable (nothing
    creates it: a typo must not become a new folder tree), and ``path``
    must not be a folder (a file output) or a file (a folder output). The
    message names ``path`` as the user gave it, not the temporary file an
    atomic write would use.

    Parameters
    ----------
    path
        The output the user named.
    folder
        ``path`` is a folder optsched creates (or fills) rather than a file.

    Raises
    ------
    InputError
        ``path: cannot write file: ...`` (or ``folder``), one line.
    """
    target = Path(path)
    parent = target.parent
    what = "cannot write folder" if folder else "cannot write file"
    if not parent.exists():
        raise InputError(f"{what}: no such folder {str(parent)!r}", path)
    if not parent.is_dir():
        raise InputError(f"{what}: {str(parent)!r} is not a folder", path)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{what}: folder {str(parent)!r} is not writable", path)
    if folder and target.exists() and not target.is_dir():
        raise InputError(f"{what}: a file of that name exists", path)
    if not folder and target.is_dir():
        raise InputError(f"{what}: it is a folder", path)


def output_file(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback of every output file option: :func:`check_output_path`.

    Click runs it while parsing the command line, so a bad output stops the
    command before it reads or computes anything.
    """
    del ctx, param  # the click callback signature
    if value is not None:
        check_output_path(value)
    return value


def output_folder(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """As :func:`output_file`, for an option naming a folder to fill."""
    del ctx, param
    if value is not None:
        check_output_path(value, folder=True)
    return value


def output_option(
    *names: str,
    help: str,
    required: bool = False,
    folder: bool = False,
    **attrs: Any,
) -> Decorator:
    """An option naming a file (or, with ``folder``, a folder) to write.

    The path is checked while the command line is parsed
    (:func:`output_file`, :func:`output_folder`), so that a path that cannot
    be written stops the command before any work.

    Parameters
    ----------
    *names
        The option's names, in the order click shows them in its messages;
        ``-o/--output`` when none are given.
    help
        The option's help text.
    required
        The option must be given; otherwise it defaults to ``None`` unless
        ``attrs`` name another default.
    folder
        The path names a folder (``click.Path(file_okay=False)``), not a file.
    **attrs
        Further :func:`click.option` arguments (``default``,
        ``show_default``, ...).

    Returns
    -------
    Decorator
        The :func:`click.option` decorator; one may serve several commands
        (click builds a new option each time it is applied).
    """
    if required:
        attrs["required"] = True
    else:
        attrs.setdefault("default", None)
    return click.option(
        *(names or ("-o", "--output")),
        type=click.Path(file_okay=False) if folder else click.Path(dir_okay=False),
        callback=output_folder if folder else output_file,
        help=help,
        **attrs,
    )


def shown_option(
    *names: str, default: Any, help: str | None = None, **attrs: Any
) -> Decorator:
    """A :func:`click.option` whose ``--help`` shows its default, if any.

    The base of :func:`choice_option`, :func:`count_option` and
    :func:`seconds_option`, the shapes most options of the commands take.
    """
    shown = default is not None
    return click.option(*names, default=default, show_default=shown, help=help, **attrs)


def shown_options(rows: list[tuple[str, object, str]]) -> Callable[[F], F]:
    """Options declared as rows ``(name, default, help)``, in ``--help`` order.

    Each is a :func:`shown_option` whose type click reads from its default.
    """
    options = [
        shown_option(name, default=value, help=text) for name, value, text in rows
    ]
    return lambda command: _apply(command, options)


def choice_option(
    *names: str,
    choices: Sequence[str],
    default: str | None = None,
    help: str,
    **attrs: Any,
) -> Decorator:
    """An option taking one of ``choices`` (:class:`click.Choice`)."""
    kind = click.Choice(choices)
    return shown_option(*names, type=kind, default=default, help=help, **attrs)


def count_option(
    *names: str,
    low: int = 1,
    high: int | None = None,
    default: int | None = None,
    help: str | None = None,
    **attrs: Any,
) -> Decorator:
    """A whole-number option in ``[low, high]`` (:class:`click.IntRange`)."""
    kind = click.IntRange(min=low, max=high)
    return shown_option(*names, type=kind, default=default, help=help, **attrs)


def seconds_option(
    *names: str, default: float | None, help: str, positive: bool = False
) -> Decorator:
    """A finite duration in seconds, at least 0 (``positive``: above 0)."""
    kind = FiniteFloatRange(min=0, min_open=positive)
    return shown_option(*names, type=kind, default=default, help=help)


seed_option = shown_option("--seed", type=int, default=0)
"""``--seed`` of the random searches of ``gap`` and ``worst-case``."""


native_output = output_option(required=True, help="Native JSON instance file to write.")
"""``-o/--output``: the native JSON instance a generator or ``window`` writes."""

schedule_format_option = click.option(
    "--schedule-format",
    type=click.Choice(SCHEDULE_FORMATS),
    default=None,
    help="Force the schedule's format (default: recognised from the content).",
)
"""``--schedule-format`` of the commands that read a schedule file."""


def _apply(command: F, options: list[Decorator]) -> F:
    for option in reversed(options):
        command = option(command)
    return command


def option_group(
    name: str, group: type[Any], options: list[Decorator]
) -> Callable[[F], F]:
    """A decorator adding ``options`` to a command as one argument, ``name``.

    Parameters
    ----------
    name
        The keyword argument the command receives.
    group
        A dataclass with one field per option (named as the option's
        parameter); the command receives ``group(**values)``.
    options
        The :func:`click.option` decorators, in the order of ``--help``.

    Returns
    -------
    Callable
        The decorator, built once and shared by the commands that take the
        group.
    """
    fields = [field.name for field in dataclasses.fields(group)]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def grouped(*args: Any, **kwargs: Any) -> Any:
            values = {field: kwargs.pop(field) for field in fields}
            return command(*args, **{name: group(**values)}, **kwargs)

        return _apply(cast(F, grouped), options)

    return decorate


RUN_OPTIONS: list[Decorator] = [
    click.option(
        "--kill-at-estimate",
        is_flag=True,
        help="Stop jobs that overrun their estimate at their estimate (a "
        "policy that killed jobs did less work: its ratio is not comparable).",
    ),
    choice_option(
        "--allocation-rule",
        choices=ALLOCATION_RULES,
        default="first-fit",
        help="Range choice on contiguous machines.",
    ),
    click.option(
        "--migration",
        is_flag=True,
        help="Contiguous machines: compact running jobs when no range fits.",
    ),
]
"""How policies are simulated (:class:`optsched.simulation.RunOptions`):
``simulate``, ``compare`` and ``gap`` take them alike."""

run_options = option_group("run", RunOptions, RUN_OPTIONS)
"""The :data:`RUN_OPTIONS` as one :class:`~optsched.simulation.RunOptions`
argument, ``run``."""


def file_options(command: F) -> F:
    """Add ``--format``, ``--processors`` and ``--allocation`` to a command.

    They arrive as ``input_format``, ``processors`` and ``allocation``.
    """
    return _apply(command, _file_options())


def _file_options() -> list[Decorator]:
    return [
        choice_option(
            "--format",
            "input_format",
            choices=FORMATS,
            help="Force the input format (default: recognised from the content).",
        ),
        count_option(
            "--processors",
            help="Machine size for an SWF trace without MaxProcs/MaxNodes "
            "(overrides the header).",
        ),
        choice_option(
            "--allocation",
            choices=["any", "contiguous"],
            help="Override the machine's allocation rule.",
        ),
    ]


def input_options(command: F) -> F:
    """Add the file options and the window options to a command.

    The command receives them as keyword arguments and passes them all to
    :func:`load_instance` (``**input_kwargs``).
    """
    window_options: list[Decorator] = [
        count_option(
            "--first-job",
            low=0,
            help="Window: index (0-based, submit order) of the first job.",
        ),
        count_option("--jobs", "n_jobs", help="Window: number of consecutive jobs."),
        count_option(
            "--start",
            "window_start",
            low=0,
            help="Window: first submit time (trace seconds, inclusive).",
        ),
        count_option(
            "--end",
            "window_end",
            low=0,
            help="Window: last submit time (trace seconds, exclusive).",
        ),
        choice_option(
            "--initial-state",
            choices=["none", "recorded"],
            default="none",
            help="Window: machine state at the window start; 'recorded' turns "
            "jobs still running in the trace's recorded schedule into busy blocks.",
        ),
    ]
    return _apply(command, _file_options() + _trace_options() + window_options)


def _parsed_by(target: str, prefix: str = "") -> Callable[..., Any]:
    """A click callback: the option's text parsed by ``target``
    (``"module:function"``, imported on first use), ``None`` when absent; a
    ``ValueError`` becomes click's bad-parameter error, ``prefix`` cut off
    (click names the option itself)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        del ctx, param
        if value is None:
            return None
        module, _, name = target.partition(":")
        try:
            return getattr(importlib.import_module(module), name)(value)
        except ValueError as error:
            raise click.BadParameter(str(error).removeprefix(prefix)) from None

    return callback


_statuses = _parsed_by("optsched.io.swf:parse_statuses", prefix="--status: ")
"""Click callback of ``--status``: names to SWF status codes."""

_speedup_model = _parsed_by("optsched.moldable.speedup:parse_model")
"""Click callback of ``--moldable``: the parsed speed-up model."""


def moldable_options(command: F) -> F:
    """Add ``--moldable`` (a parsed :class:`~optsched.moldable.speedup.SpeedupModel`
    or ``None``) and ``--malleable`` to a command."""
    return _apply(command, _moldable_options())


def _moldable_options() -> list[Decorator]:
    return [
        click.option(
            "--moldable",
            "moldable",
            default=None,
            callback=_speedup_model,
            metavar="MODEL[:PARAMS]",
            help="Make every job moldable under a speed-up model: linear[:max=K], "
            "conservative, points:P=S;P=S..., amdahl:f=F, downey:a=A,sigma=S "
            "(each also takes max=K, min=K); a job's size and run time become "
            "its requested mode. Default: jobs stay as the file gives them.",
        ),
        click.option(
            "--malleable",
            is_flag=True,
            default=False,
            help="With --moldable: jobs may also change their processor count "
            "while they run.",
        ),
    ]


def machine_options(command: F) -> F:
    """Add ``--speeds``, ``--nodes``, ``--tight``, ``--level``,
    ``--comm-base`` and ``--comm-cost`` (see :func:`machine_shape`)."""
    return _apply(command, _machine_options())


def _machine_options() -> list[Decorator]:
    return [
        click.option(
            "--speeds",
            default=None,
            metavar="LIST|FILE",
            help="Give the processors speeds: a comma list of numbers or "
            "COUNTxSPEED groups (16x275,6x825), or a file of them. Each job "
            "keeps its run time on SIZE processors of speed 1 (its work is "
            "run time x size) and runs ceil(work / sum of its processors' "
            "speeds).",
        ),
        click.option(
            "--nodes",
            default=None,
            metavar="QxP",
            help="Make the machine an SMP cluster of Q nodes of P processors "
            "(Q x P = processors; processor i on node i // P).",
        ),
        click.option(
            "--tight",
            default=None,
            metavar="T|adaptive",
            help="With --nodes: a job of n processors spans at most "
            "T + ceil(n / P) nodes; 'adaptive' is Wang's max(0, 6 - level). "
            "Default: no span limit.",
        ),
        count_option(
            "--level",
            low=0,
            help="With --nodes: network load; a job's run time grows by the "
            "factor 1 + base x span x level (see --comm-cost). Default 0.",
        ),
        click.option(
            "--comm-base",
            type=FiniteFloatRange(min=0),
            default=None,
            help="With --nodes: the communication cost of one node at level 1 "
            "(Wang's BASE, default 0.05).",
        ),
        choice_option(
            "--comm-cost",
            choices=["ratio", "excess"],
            help="With --nodes: 'ratio' (default) inflates by base x span x "
            "level, 'excess' by base x (span - ceil(n/P)) x level.",
        ),
    ]


def machine_shape(
    speeds: str | None = None,
    nodes: str | None = None,
    tight: str | None = None,
    level: int | None = None,
    comm_base: float | None = None,
    comm_cost: str | None = None,
) -> MachineShape | None:
    """The :class:`~optsched.topology.machines.MachineShape` the options ask for
    (``None`` without ``--speeds``/``--nodes``); a usage error (exit 2) on a
    bad value."""
    from optsched.topology.machines import MachineShape

    given = (speeds, nodes, tight, level, comm_base, comm_cost)
    if all(value is None for value in given):
        return None
    try:
        return MachineShape.from_options(
            speeds, nodes, tight, level, comm_base, comm_cost
        )
    except ValueError as error:
        raise click.UsageError(f"--speeds/--nodes: {error}") from None


def _trace_options() -> list[Decorator]:
    return [
        *_moldable_options(),
        *_machine_options(),
        click.option(
            "--site",
            default=None,
            metavar="FILE",
            help="A site file (TOML): batch capacity and the largest job that "
            "may start by time of week, holidays, NQS queue rules and user "
            "limit, machine outages (instances/sites/t3e.toml, paragon.toml). "
            "Only starts are checked. A site of another size is scaled to the "
            "machine.",
        ),
        choice_option(
            "--arrivals",
            choices=["recorded", "window-start"],
            help="'recorded' (default): jobs arrive at their submit times; "
            "'window-start': every job of the window is there at its start "
            "(Mallmann's second mode; chains still hold successors back).",
        ),
        click.option(
            "--no-chains",
            "no_chains",
            is_flag=True,
            default=None,
            help="Ignore job chains (SWF fields 17/18: a job submitted when "
            "its predecessor ended). By default a successor is released at "
            "max(its submit, predecessor end + think time).",
        ),
        click.option(
            "--status",
            "status",
            default=None,
            callback=_statuses,
            metavar="NAMES",
            help="Keep only the jobs of these SWF statuses (field 11), e.g. "
            "'completed,failed': completed (1), failed (0), cancelled (5), "
            "partial (2), partial-completed (3), partial-failed (4), unknown "
            "(-1), or all. Default: every job, whatever its status.",
        ),
        choice_option(
            "--partial-runtime",
            choices=["summary", "sum"],
            # No default, not "summary": commands tell options the user set
            # from defaults by None (plot refuses input options without INSTANCE).
            help="SWF jobs written as a summary line plus partial-execution "
            "lines (status 2/3/4): the run time of the summary line (the "
            "default), or the sum of the partial executions' run times.",
        ),
    ]


def load_instance(path: str, **options: Any) -> Instance:
    """Read ``path`` and cut the window the options ask for.

    ``options`` are those of :func:`load_trace_and_instance`. Without window
    options the whole file is used, times as in the file.
    """
    return load_trace_and_instance(path, **options)[1]


def input_preparation(
    *,
    input_format: str | None = None,
    processors: int | None = None,
    allocation: str | None = None,
    status: frozenset[int] | None = None,
    partial_runtime: str | None = None,
    moldable: SpeedupModel | None = None,
    malleable: bool = False,
    site: str | None = None,
    arrivals: str | None = None,
    no_chains: bool | None = None,
    **machine: Any,
) -> Preparation:
    """The :class:`~optsched.windows.prepare.Preparation` the input options ask
    for; ``machine`` holds the options of :func:`machine_shape` (a usage
    error, exit 2, on a bad value)."""
    return Preparation(
        input_format=input_format,
        processors=processors,
        allocation=allocation,
        status=status,
        partial_runtime=partial_runtime,
        moldable=moldable,
        malleable=malleable,
        site=site,
        arrivals=arrivals or "recorded",
        chains=not no_chains,
        machine=machine_shape(**machine),
    )


def load_trace_and_instance(
    path: str,
    *,
    first_job: int | None = None,
    n_jobs: int | None = None,
    window_start: int | None = None,
    window_end: int | None = None,
    initial_state: str = "none",
    **options: Any,
) -> tuple[Trace, Instance]:
    """Like :func:`load_instance`, also returning the whole trace read.

    The window options choose the window
    (:func:`~optsched.windows.prepare.requested_window`); ``options`` are
    those of :func:`input_preparation`, applied by
    :func:`~optsched.windows.prepare.prepare` in its order. Jobs the reader
    skipped, jobs whose estimate is their run time, and what a site file
    changed are announced in one note line each on stderr. An option that
    does not fit the instance is a usage error (exit 2).
    """
    from optsched.trace import note_skips

    chosen = input_preparation(**options)
    trace = read_source(path, chosen)
    note_skips(trace, path)
    window = requested_window(
        first_job, n_jobs, window_start, window_end, initial_state
    )
    try:
        return trace, prepare(trace, chosen, window)
    except OptionError as error:
        raise click.UsageError(str(error)) from None
