"""From a file to the instance to schedule: one preparation, in one order.

Every command that reads an instance (``optsched simulate``, ``bound``,
``info``, ...) and every suite window (``optsched bench``, ``optsched
gap``) is prepared here: :class:`Preparation` holds the options (the
command line's ``--format``, ``--site``, ``--arrivals``, ``--no-chains``,
``--moldable``, ``--speeds``, ...; a suite's ``[[traces]]`` keys), and
:func:`prepare` applies them in the one order its docstring gives.

A suite reads each trace once and cuts many windows of it: it calls
:func:`read_source` once and :func:`prepare` on the trace read for each
window. The command line does the same two steps on its one window (it
keeps the whole trace, which ``optsched info`` reports); a script may call
:func:`prepare` on the file at once.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from optsched.instance import Instance
from optsched.moldable.speedup import SpeedupModel
from optsched.topology.machines import MachineShape
from optsched.trace import Trace
from optsched.windows.selection import WindowSpec

ARRIVALS = ("recorded", "window-start")
"""Arrival modes: the jobs' own submit times, or all at the window start."""

PARTIAL_RUNTIMES = ("summary", "sum")
"""How an SWF job written with partial executions gets its run time."""

WHOLE = WindowSpec(whole=True)
"""The window of the whole file, times as in the file."""


class OptionError(ValueError):
    """An option that cannot apply: the command line shows it as a usage
    error (exit 2 with the usage line), the library as a ``ValueError``."""


@dataclass(frozen=True, slots=True)
class Preparation:
    """The options that turn a file, or a window of it, into an instance.

    Parameters
    ----------
    input_format
        ``"swf"``, ``"json"``, ``"batsim"`` or ``"strip"``; ``None``: as
        recognised from the content.
    processors
        Machine size override (SWF: wins over the header).
    allocation
        ``"any"`` or ``"contiguous"``: the machine's allocation rule
        override; ``None`` keeps the file's.
    status
        Keep only the jobs of these SWF status codes; ``None``: every job.
    partial_runtime
        SWF jobs written as partial executions: ``"summary"`` (the summary
        line's run time, also for ``None``) or ``"sum"``.
    moldable, malleable
        Make every job moldable under this speed-up model (and malleable).
    site
        A site file (calendar, queue rules, outages).
    arrivals
        ``"recorded"`` or ``"window-start"`` (every job released at the
        window's first submit).
    chains
        ``False`` drops the job chains (SWF fields 17/18), as ``--no-chains``.
    machine
        Speeds and SMP nodes given to the machine.
    """

    input_format: str | None = None
    processors: int | None = None
    allocation: str | None = None
    status: frozenset[int] | None = None
    partial_runtime: str | None = None
    moldable: SpeedupModel | None = None
    malleable: bool = False
    site: str | Path | None = None
    arrivals: str = "recorded"
    chains: bool = True
    machine: MachineShape | None = None

    def __post_init__(self) -> None:
        if self.arrivals not in ARRIVALS:
            raise OptionError(
                f"arrivals {self.arrivals!r} is not one of {', '.join(ARRIVALS)}"
            )
        if self.partial_runtime not in (None, *PARTIAL_RUNTIMES):
            raise OptionError(
                f"partial runtime {self.partial_runtime!r} is not one of "
                f"{', '.join(PARTIAL_RUNTIMES)}"
            )


def read_source(path: str | Path, preparation: Preparation = Preparation()) -> Trace:
    """Steps 1 to 3 of :func:`prepare`: the whole file, as the options read it.

    Nothing is printed: :func:`prepare` (or the caller, with
    :func:`optsched.trace.note_skips`) announces the jobs left out.

    Raises
    ------
    InputError
        A missing, unreadable or malformed file.
    """
    from optsched.io import detect_format, read_trace
    from optsched.io.archive import resolve_trace_path

    path = resolve_trace_path(path)  # a pwa: name is fetched first
    p = preparation
    if Path(path).exists() and (p.input_format or detect_format(path)) == "swf":
        from optsched.io.swf import read_swf

        # The SWF reader filters statuses itself, so that its skip report
        # names the lines, and folds partial executions.
        trace = read_swf(
            path,
            processors=p.processors,
            status=p.status,
            partial=p.partial_runtime or "summary",
        )
    else:
        trace = read_trace(path, p.input_format, processors=p.processors)
        if p.status is not None:
            from optsched.trace import keep_statuses

            trace = keep_statuses(trace, p.status)
    whole = trace.instance
    if p.allocation is not None and p.allocation != whole.machine.allocation:
        machine = whole.machine.with_allocation(p.allocation)
        # replace() keeps every report field of the trace (folds, statuses).
        trace = dataclasses.replace(trace, instance=whole.replace(machine=machine))
    return trace


def prepare(
    source: str | Path | Trace,
    preparation: Preparation = Preparation(),
    window: WindowSpec = WHOLE,
    *,
    notes: bool = True,
) -> Instance:
    """The instance a file (or a trace already read) and the options give.

    The steps, in this order, and why:

    1. **Read** the file (format, machine size; the SWF reader keeps the
       statuses asked for and folds partial executions).
    2. **Keep statuses** for the other formats, whose readers keep every job.
    3. **Override the allocation** of the whole trace, before any window is
       cut: the busy blocks of a recorded initial state then get offsets on
       a contiguous machine.
    4. **Cut the window** (``window``; :data:`WHOLE`: the whole file). Every
       later step sees the window's jobs only, and releases rebased to it.
    5. **Apply the site** (calendar, queue rules, outages; the trace's
       header gives the time of week). It reads what the file recorded: the
       submit and wait times (holidays are detected from the recorded
       starts of interactive jobs, which it leaves out), so it comes before
       any step that rewrites them.
    6. **Arrivals**: ``window-start`` releases every job at the earliest
       submit among the jobs left (after the site: a left-out interactive
       job does not count).
    7. **Chains**: without them, no successor waits for its predecessor.
       Steps 6 and 7 set when jobs may start, and touch nothing else.
    8. **Moldable**: every job gets its modes under the speed-up model,
       from its size, its run time and the machine size, none of which
       steps 5 to 7 change (so the order among them gives the same
       instance); it follows them so that the jobs the site leaves out are
       never made moldable, and it precedes the shape, which must see it.
    9. **Machine shape** (speeds, SMP nodes), last: it rewrites the machine
       and the rigid jobs' run times (a moldable job's modes stay run times
       on speed-1 processors), and refuses what it cannot carry (malleable
       jobs, busy blocks), which only the finished instance shows.

    Steps 1 to 3 run only when ``source`` is a path (:func:`read_source`);
    a suite reads each trace once and passes it for every window.

    Parameters
    ----------
    source
        The file, or the trace :func:`read_source` read with the same
        ``preparation``.
    preparation
        The options.
    window
        The window to cut.
    notes
        Print the notes on stderr (``optsched: note: ...``): the jobs the
        reader left out and the estimates it lacked (for a path), and what
        the site changed. A suite prints the trace's notes once, not per
        window.

    Returns
    -------
    Instance
        The window, ready to schedule.

    Raises
    ------
    InputError
        A bad file, site file or window.
    OptionError
        ``malleable`` without ``moldable``, or a machine shape that does not
        fit the instance.
    """
    if isinstance(source, Trace):
        trace = source
    else:
        trace = read_source(source, preparation)
        if notes:
            from optsched.trace import note_skips

            note_skips(trace, str(source))
    instance = window.cut(trace)
    return _rewrite(instance, preparation, trace.header, notes)


def _rewrite(
    instance: Instance,
    preparation: Preparation,
    header: Mapping[str, str],
    notes: bool,
) -> Instance:
    """Steps 5 to 9 of :func:`prepare`."""
    p = preparation
    # An option check, not a step: made first, as soon as there is a window.
    if p.malleable and p.moldable is None:
        raise OptionError("--malleable needs --moldable MODEL")
    if p.site is not None:
        from optsched.site.files import apply_site, read_site

        instance, note = apply_site(instance, read_site(p.site), header)
        if note is not None and notes:
            from optsched.console import literal

            print(f"optsched: note: {literal(note, one_line=True)}", file=sys.stderr)
    if p.arrivals == "window-start" and instance.jobs:
        first = min(job.release for job in instance.jobs)
        instance = instance.with_jobs(
            job.replace(release=first) for job in instance.jobs
        )
    if not p.chains:
        from optsched.site.chains import without_chains

        instance = instance.with_jobs(without_chains(instance.jobs))
    if p.moldable is not None:
        instance = p.moldable.apply(instance, malleable=p.malleable)
    if p.machine is not None:
        try:
            instance = p.machine.apply(instance)
        except ValueError as error:
            raise OptionError(str(error)) from None
    return instance


def requested_window(
    first_job: int | None = None,
    jobs: int | None = None,
    start: int | None = None,
    end: int | None = None,
    initial_state: str = "none",
) -> WindowSpec:
    """The window the command line's window options ask for (``--first-job``,
    ``--jobs``, ``--start``, ``--end``, ``--initial-state``): :data:`WHOLE`
    when none is given."""
    from optsched.windows.window import wants_window

    if not wants_window(
        first_job=first_job,
        jobs=jobs,
        start=start,
        end=end,
        initial_state=initial_state,
    ):
        return WHOLE
    return WindowSpec(first_job, jobs, start, end, initial_state)
