"""Trace windows: a contiguous slice of a trace turned into an instance.

A window is selected either by position (``first_job`` ``K`` and ``jobs``
``N``: the jobs at indices ``K .. K+N-1``) or by submit time (the jobs
submitted in ``[start, end)``). Positions count jobs in submit order -- a
stable sort by ``(release, file order)`` -- after the reader's skipped jobs
have been removed.

Releases are rebased so that the window starts at 0: the shift is the first
selected job's submit time for a position window and ``start`` for a time
window (the first selected job's submit time when ``start`` is omitted).
Original job ids are kept, and the instance's :class:`~optsched.instance.Source`
records the selection and the shift in a :class:`~optsched.instance.Window`.

Initial machine state:

``none``
    The machine is empty at the window start.
``recorded``
    Jobs before the window that, in the trace's recorded schedule, run at the
    window start ``T`` (``submit + wait <= T < submit + wait + runtime``)
    become busy blocks ``[0, end - T)`` labelled ``"job <id>"``. Jobs that
    were still queued at ``T`` are left out (they are neither running nor in
    the window), and so are jobs the reader skipped. This needs the recorded
    wait time (SWF field 3) of every job before the window. On a contiguous
    machine the blocks get offsets by first-fit packing, longest-running
    block at the lowest offset, so that the processors they free always form
    one range at the top of the machine.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from optsched.errors import InputError
from optsched.instance import BusyBlock, Instance, Job, Machine, Source, Window
from optsched.trace import Trace

INITIAL_STATES = ("none", "recorded")


def wants_window(
    *,
    first_job: int | None,
    jobs: int | None,
    start: int | None,
    end: int | None,
    initial_state: str,
) -> bool:
    """Whether any window option is set (otherwise the whole file is used)."""
    asked = Window(first_job, jobs, start, end, initial_state=initial_state)
    return asked != Window()


def cut_window(
    trace: Trace | Instance,
    *,
    first_job: int | None = None,
    jobs: int | None = None,
    start: int | None = None,
    end: int | None = None,
    initial_state: str = "none",
) -> Instance:
    """Cut a window out of a trace (see the module docstring for the rules).

    Parameters
    ----------
    trace
        The whole trace (or an instance, read as a trace).
    first_job
        Index (0-based, submit order) of the first job; default 0 when only
        ``jobs`` is given.
    jobs
        Number of consecutive jobs; default: all jobs from ``first_job`` on.
    start, end
        Submit-time range ``[start, end)`` in trace seconds; either may be
        omitted (open end).
    initial_state
        ``"none"`` or ``"recorded"``.

    Returns
    -------
    Instance
        The window's jobs with rebased releases, the machine with busy
        blocks, name ``<trace>_jobs<K>-<K+N-1>`` or ``<trace>_t<start>-<end>``
        (``_recorded`` appended for a recorded initial state), and the
        provenance.

    Raises
    ------
    ValueError
        On a bad combination of options.
    InputError
        When the window is empty or out of range, or the recorded state
        cannot be built (missing wait times, more processors busy than the
        machine has, blocks that cannot be packed).
    """
    instance = trace.instance if isinstance(trace, Trace) else trace
    asked = Window(first_job, jobs, start, end, initial_state=initial_state)
    by_time = _check_options(asked)
    ordered = sorted(instance.jobs, key=operator.attrgetter("release"))
    if by_time:
        selected, before, shift = _select_by_time(instance, ordered, start, end)
        window = Window(start=start, end=end, shift=shift, initial_state=initial_state)
        label = f"t{_fmt(start)}-{_fmt(end)}"
    else:
        k = first_job or 0
        selected, before = _select_by_position(instance, ordered, k, jobs)
        shift = selected[0].release
        window = Window(
            first_job=k, jobs=len(selected), shift=shift, initial_state=initial_state
        )
        label = f"jobs{k}-{k + len(selected) - 1}"
    if initial_state == "recorded":
        label += "_recorded"
    return _assemble(instance, selected, before, window, label)


def _assemble(
    instance: Instance,
    selected: Sequence[Job],
    before: Sequence[Job],
    window: Window,
    label: str,
) -> Instance:
    """The window instance: rebased jobs and blocks, name and provenance."""
    shift = window.shift
    blocks = _rebased_blocks(instance.machine.unavailable, shift)
    if window.initial_state == "recorded":
        blocks += _recorded_blocks(instance, before, shift)
    return Instance(
        _machine_with_blocks(instance, blocks, shift),
        tuple(job.replace(release=job.release - shift) for job in selected),
        name=f"{instance.name or 'trace'}_{label}",
        source=_window_source(instance.source, window),
    )


def _fmt(value: int | None) -> str:
    return "" if value is None else str(value)


def submit_span(jobs: Sequence[Job]) -> str:
    """``the trace's jobs are submitted in [FIRST, LAST]``, for messages
    about a time window that selects nothing (``jobs`` must not be empty)."""
    releases = [job.release for job in jobs]
    return f"the trace's jobs are submitted in [{min(releases)}, {max(releases)}]"


def _check_options(asked: Window) -> bool:
    """Validate the options (a :class:`~optsched.instance.Window` with no
    shift); return whether they select by time."""
    first_job, jobs, start, end = asked.first_job, asked.jobs, asked.start, asked.end
    initial_state = asked.initial_state
    by_position = first_job is not None or jobs is not None
    by_time = start is not None or end is not None
    if initial_state not in INITIAL_STATES:
        raise ValueError(
            f"initial state {initial_state!r} is not one of {', '.join(INITIAL_STATES)}"
        )
    if by_position and by_time:
        raise ValueError(
            "choose a window by position (--first-job/--jobs) or by submit time "
            "(--start/--end), not both"
        )
    if not (by_position or by_time):
        raise ValueError(
            "a window needs --first-job/--jobs or --start/--end "
            f"(--initial-state {initial_state} alone selects no jobs)"
        )
    for name, value in (("first job", first_job), ("start", start), ("end", end)):
        if value is not None and value < 0:
            raise ValueError(f"window {name} {value} is negative")
    if jobs is not None and jobs < 1:
        raise ValueError(f"window jobs {jobs} must be at least 1")
    if start is not None and end is not None and end <= start:
        raise ValueError(f"window end {end} must be after start {start}")
    return by_time


def _select_by_position(
    instance: Instance, ordered: Sequence[Job], first: int, count: int | None
) -> tuple[list[Job], list[Job]]:
    total = len(ordered)
    if first >= total:
        raise InputError(
            f"window first job {first} is past the last job: the trace has "
            f"{total} jobs (indices 0..{total - 1}) after skipped jobs are removed",
            instance.source.file,
        )
    last = total if count is None else first + count
    if last > total:
        raise InputError(
            f"window asks for {count} jobs from index {first}, but only "
            f"{total - first} jobs follow it ({total} in the trace after skipped "
            "jobs are removed)",
            instance.source.file,
        )
    return list(ordered[first:last]), list(ordered[:first])


def _select_by_time(
    instance: Instance, ordered: Sequence[Job], start: int | None, end: int | None
) -> tuple[list[Job], list[Job], int]:
    lo = -1 if start is None else start
    hi = None if end is None else end
    selected = [
        j for j in ordered if j.release >= lo and (hi is None or j.release < hi)
    ]
    if not selected:
        # Say where the jobs are: a user guessing times from the trace's
        # start (0) often misses a log whose first submit is days later.
        raise InputError(
            f"window [{_fmt(start) or '-inf'}, {_fmt(end) or '+inf'}) is empty: "
            f"no job is submitted in it ({submit_span(ordered)})",
            instance.source.file,
        )
    before = [j for j in ordered if j.release < lo]
    shift = selected[0].release if start is None else start
    return selected, before, shift


def _rebased_blocks(blocks: Sequence[BusyBlock], shift: int) -> list[BusyBlock]:
    """Busy blocks already in the trace, in window time (clipped at 0)."""
    out = []
    for block in blocks:
        if block.end <= shift and block.start < shift:
            continue  # over before the window starts
        out.append(
            BusyBlock(
                max(block.start - shift, 0),
                block.end - shift,
                block.size,
                block.offset,
                block.label,
            )
        )
    return out


def _recorded_blocks(
    instance: Instance, before: Sequence[Job], shift: int
) -> list[BusyBlock]:
    """Jobs before the window that run at its start in the recorded schedule."""
    _require_waits(instance, before)
    blocks = []
    for job in before:
        assert job.wait is not None
        started = job.release + job.wait
        ended = started + job.runtime
        if started <= shift < ended:
            blocks.append(BusyBlock(0, ended - shift, job.size, label=f"job {job.id}"))
    return blocks


def _require_waits(instance: Instance, before: Sequence[Job]) -> None:
    missing = [job for job in before if job.wait is None]
    if not missing:
        return
    if all(job.wait is None for job in instance.jobs):
        raise InputError(
            "--initial-state recorded needs recorded wait times, but the trace "
            "has none (SWF field 3 is -1 for every job)",
            instance.source.file,
        )
    raise InputError(
        f"--initial-state recorded: job {missing[0].id} (before the window) has "
        "no recorded wait time (SWF field 3 is -1), so whether it runs at the "
        f"window start is unknown ({len(missing)} such jobs before the window)",
        instance.source.file,
    )


def _machine_with_blocks(
    instance: Instance, blocks: list[BusyBlock], shift: int
) -> Machine:
    machine = instance.machine
    m = machine.processors
    busy_at_start = sum(b.size for b in blocks if b.start <= 0 < b.end)
    if busy_at_start > m:
        raise InputError(
            f"the recorded schedule has {busy_at_start} processors busy at the "
            f"window start (trace time {shift}), more than the machine's {m}",
            instance.source.file,
        )
    if machine.allocation == "contiguous":
        blocks = _pack_first_fit(instance, blocks)
    return machine.replace(unavailable=tuple(blocks))


def _pack_first_fit(instance: Instance, blocks: list[BusyBlock]) -> list[BusyBlock]:
    """Give every block without an offset the lowest free processor range.

    Blocks that already have an offset keep it. The others are placed longest
    end first, each at the lowest offset where its range is free of every
    placed block that overlaps it in time.
    """
    placed = [b for b in blocks if b.offset is not None]
    waiting = sorted(
        (b for b in blocks if b.offset is None), key=lambda b: (-b.end, b.start)
    )
    m = instance.machine.processors
    for block in waiting:
        offset = _lowest_free_offset(block, placed, m)
        if offset is None:
            raise InputError(
                f"cannot place busy block {block.label or (block.start, block.end)} "
                f"({block.size} processors) on a contiguous range of the "
                f"{m}-processor machine",
                instance.source.file,
            )
        placed.append(
            BusyBlock(block.start, block.end, block.size, offset, block.label)
        )
    return placed


def _lowest_free_offset(
    block: BusyBlock, placed: Sequence[BusyBlock], m: int
) -> int | None:
    taken = sorted(
        (b.offset, b.offset + b.size)
        for b in placed
        if b.offset is not None and b.start < block.end and block.start < b.end
    )
    offset = 0
    for low, high in taken:
        if low - offset >= block.size:
            return offset
        offset = max(offset, high)
    return offset if m - offset >= block.size else None


def _window_source(source: Source, window: Window) -> Source:
    if source.window is not None:
        window = _compose(source.window, window)
    return Source(source.file, source.sha256, source.format, window)


def _compose(outer: Window, inner: Window) -> Window:
    """The window ``inner`` of an instance that is itself the window ``outer``.

    Only same-kind windows on an empty initial machine compose exactly.
    """
    if "recorded" in (outer.initial_state, inner.initial_state):
        raise ValueError(
            "cannot cut a window with a recorded initial state from an instance "
            "that is already a window; cut it from the original trace"
        )
    outer_by_time = outer.first_job is None
    inner_by_time = inner.first_job is None
    if outer_by_time != inner_by_time:
        raise ValueError(
            "cannot cut a window by position from a window by time (or the "
            "reverse); cut it from the original trace"
        )
    shift = outer.shift + inner.shift
    if not inner_by_time:
        assert outer.first_job is not None and inner.first_job is not None
        return Window(
            first_job=outer.first_job + inner.first_job, jobs=inner.jobs, shift=shift
        )
    start = None if inner.start is None else inner.start + outer.shift
    end = None if inner.end is None else inner.end + outer.shift
    if start is None:
        start = outer.start
    if outer.end is not None:
        end = outer.end if end is None else min(end, outer.end)
    return Window(start=start, end=end, shift=shift)
