"""Gantt charts of parallel-job schedules.

Processors are on the y axis (processor ``p`` occupies the band
``[p, p + 1)``), time on the x axis in the unit that :func:`choose_time_unit`
picks from the span shown (seconds up to 2 h, hours up to 3 days, days
beyond; ``time_unit=`` forces one), with ticks at round values of that unit.
A job placed on processors
``P_j`` during ``[S_j, C_j)`` is drawn as one rectangle per maximal run of
consecutive indices in ``P_j``: a job on processors ``{0, 1, 5}`` gives two
rectangles, ``[0, 2)`` and ``[5, 6)``, of the same colour. A job that
migrates (:attr:`optsched.schedule.Placement.moves`) is drawn stretch by
stretch, each on its own processors; a preempted job
(:attr:`optsched.schedule.Placement.pieces`) piece by piece, the context
switch at the start of a resumed piece cross-hatched over its colour
(``gid = "switch <id>"``).

Conventions, chosen so that a chart can be checked against the numbers:

* Colours come from :func:`job_colour`, a function of the job id only, so a
  job has the same colour in every chart (the policy's schedule and the best
  known one side by side).
* Busy blocks (jobs already running at the window start, reservations,
  downtimes) are hatched grey. A block with an ``offset`` is drawn on its
  processors. A block *without* an offset takes ``size`` processors whose
  indices are not fixed, so drawing it on the processor axis would invent a
  position. Those blocks go in a separate band above the machine (above a
  dashed line at ``y = m``), stacked so that they never overlap, with a note
  saying that their position in the band is arbitrary; the band's height is
  their peak total size.
* A placement without processor indices (a producer that only counts
  processors) is laid out for drawing: jobs in start order get the lowest
  free indices (contiguous when possible). A note on the chart says so.
  For a feasible schedule of such jobs this never overlaps, because every
  job already laid out that meets ``[S_j, C_j)`` is running at ``S_j``.
* Jobs are labelled with their id when their rectangle is large enough to
  hold the text.
* On request (``wait_lines=True``), a job that waited gets a thin line of
  its colour from its release to its start, at the height of its first
  rectangle (as in Mallmann's plots), so that waiting is visible. Jobs
  that started at their release get none.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.patheffects import withStroke
from matplotlib.ticker import MaxNLocator

from optsched.errors import one_line
from optsched.instance import BusyBlock, Instance
from optsched.intervals import distinct, highest, merged_runs
from optsched.plot.text import literal_texts
from optsched.schedule import Placement, Schedule

BUSY_FACE = "#d9d9d9"
BUSY_EDGE = "#6e6e6e"
BUSY_HATCH = "///"
JOB_EDGE = "#222222"
SWITCH_HATCH = "xxxx"
"""Hatch of the context-switch part of a resumed piece."""
SWITCH_EDGE = "#000000"

# tab20 holds ten hues in a dark and a light shade. Walking the dark shades
# first, then the light ones, gives consecutive job ids different hues.
_PALETTE_ORDER = (*range(0, 20, 2), *range(1, 20, 2))
_TAB20 = matplotlib.colormaps["tab20"]

# A label is drawn when the rectangle spans at least these shares of the
# axis ranges (below that the text spills over its neighbours).
_LABEL_MIN_WIDTH = 0.045
_LABEL_MIN_HEIGHT = 0.035

TIME_UNITS: dict[str, int] = {"s": 1, "min": 60, "h": 3600, "d": 86400}
"""Seconds in one unit of the time axis."""

# ``auto`` keeps tick values readable: seconds while the span is at most
# 2 h (values up to 7,200), hours up to 3 days (up to 72), days beyond.
AUTO_SECONDS_MAX = 2 * 3600
AUTO_HOURS_MAX = 3 * 86400

# Tick steps of each unit, times powers of ten: ticks land on round values
# of the unit (15 or 30 min, 6 or 12 h, a week).
_TICK_STEPS: dict[str, list[float]] = {
    "s": [1, 2, 2.5, 5, 10],
    "min": [1, 1.5, 2, 3, 5, 6, 10],
    "h": [1, 2, 3, 6, 10],
    "d": [1, 2, 5, 7, 10],
}


def choose_time_unit(span: float, requested: str = "auto") -> str:
    """Unit of a time axis that shows ``span`` seconds.

    Parameters
    ----------
    span
        Length of the time range shown, in seconds.
    requested
        ``"auto"``, or a key of :data:`TIME_UNITS` (returned as is).

    Returns
    -------
    str
        ``"s"`` when ``span <= AUTO_SECONDS_MAX`` (2 h), ``"h"`` when
        ``span <= AUTO_HOURS_MAX`` (3 days), else ``"d"``.

    Raises
    ------
    ValueError
        ``requested`` is neither ``"auto"`` nor a known unit.
    """
    if requested != "auto":
        if requested not in TIME_UNITS:
            raise ValueError(
                f"unknown time unit {requested!r}: expected auto or "
                + ", ".join(TIME_UNITS)
            )
        return requested
    if span <= AUTO_SECONDS_MAX:
        return "s"
    return "h" if span <= AUTO_HOURS_MAX else "d"


def shared_time_unit(
    instance: Instance, *schedules: Schedule, requested: str = "auto"
) -> str:
    """One time unit for charts of several schedules drawn side by side.

    The widest span decides, so that axes set to common limits agree; pass
    the result as ``time_unit`` to each :func:`gantt`.
    """
    spans = [high - low for low, high in (_time_limits(instance, s) for s in schedules)]
    return choose_time_unit(max(spans, default=0), requested)


def job_colour(job_id: int) -> tuple[float, float, float, float]:
    """RGBA colour of a job, a function of its id only.

    Qualitative palette (matplotlib ``tab20``, ten hues in a dark and a light
    shade): ``job_id mod 20`` walks the dark shades first, then the light
    ones, so jobs ``i`` and ``i + 1`` never share a hue.
    """
    red, green, blue, alpha = _TAB20(_PALETTE_ORDER[job_id % 20])
    return (float(red), float(green), float(blue), float(alpha))


def processor_runs(processors: Iterable[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive indices as ``(first, count)`` pairs.

    ``(0, 1, 2, 5, 7, 8)`` -> ``[(0, 3), (5, 1), (7, 2)]``. A
    :class:`~optsched.schedule.ProcessorSet` gives its intervals, never
    expanded (:func:`optsched.intervals.merged_runs`).
    """
    if not isinstance(processors, Sequence):
        processors = tuple(processors)
    return [(first, last - first + 1) for first, last in merged_runs(processors)]


@dataclass(frozen=True, slots=True)
class _Interval:
    """Something occupying processors during ``[start, end)``."""

    start: int
    end: int
    processors: Sequence[int]
    switch: int = 0


def _overlaps(a_start: int, a_end: int, b: _Interval) -> bool:
    return a_start < b.end and b.start < a_end


def _lowest_free(taken: set[int], size: int, capacity: int) -> tuple[int, ...]:
    """``size`` indices in ``[0, capacity)``: a contiguous free run if one
    exists, else the lowest free ones, else (an infeasible schedule) the
    lowest indices, overlapping, so the chart shows the conflict."""
    free = [p for p in range(capacity) if p not in taken]
    for first, count in processor_runs(free):
        if count >= size:
            return tuple(range(first, first + size))
    if len(free) >= size:
        return tuple(free[:size])
    return tuple(sorted(free + sorted(taken))[:size])


def _lay_out(
    items: Sequence[tuple[int, int, int]], fixed: Sequence[_Interval], capacity: int
) -> list[tuple[int, ...]]:
    """Processor indices for ``(start, end, size)`` items, in start order."""
    placed = list(fixed)
    result: dict[int, tuple[int, ...]] = {}
    order = sorted(range(len(items)), key=lambda i: (items[i][0], i))
    for i in order:
        start, end, size = items[i]
        taken = {
            p
            for other in placed
            if _overlaps(start, end, other)
            for p in other.processors
        }
        result[i] = _lowest_free(taken, size, capacity)
        placed.append(_Interval(start, end, result[i]))
    return [result[i] for i in range(len(items))]


def _peak(items: Iterable[tuple[int, int, int]]) -> int:
    """Largest total size of items running at one instant (half-open)."""
    events = sorted(
        [(s, size) for s, e, size in items if e > s]
        + [(e, -size) for s, e, size in items if e > s]
    )
    used = peak = 0
    for _, delta in events:
        used += delta
        peak = max(peak, used)
    return peak


def _segments(placement: Placement) -> list[_Interval]:
    """Stretches of a placement on one processor set (several when the job
    migrates or was preempted, see
    :meth:`optsched.schedule.Placement.segments`), with the context-switch
    seconds at the start of each resumed piece."""
    if placement.pieces:
        return [
            _Interval(p.start, p.end, p.processors, p.switch)
            for p in placement.pieces
            if p.processors
        ]
    return [
        _Interval(start, end, procs)
        for start, end, procs in placement.segments()
        if procs
    ]


def _job_segments(
    instance: Instance, schedule: Schedule
) -> tuple[dict[int, list[_Interval]], bool]:
    """Where every placed job runs; ``True`` if some jobs were laid out."""
    jobs = instance.jobs_by_id()
    known = {j: _segments(p) for j, p in schedule.placements.items() if p.processors}
    unknown = sorted(j for j, p in schedule.placements.items() if not p.processors)
    for job_id in unknown:
        if job_id not in jobs:
            raise ValueError(
                f"job {job_id}: placed without processors and absent from the "
                "instance, so its size is unknown"
            )
    if not unknown:
        return known, False
    fixed = [piece for pieces in known.values() for piece in pieces] + [
        _Interval(b.start, b.end, tuple(b.processors))
        for b in instance.machine.unavailable
        if b.processors is not None
    ]
    # Each piece of a preempted job is laid out on its own (its processors
    # are unknown, so they may differ from piece to piece).
    owners, items, switches = [], [], []
    for job_id in unknown:
        placement = schedule[job_id]
        for piece in placement.pieces or (placement,):
            owners.append(job_id)
            items.append((piece.start, piece.end, jobs[job_id].size))
            switches.append(getattr(piece, "switch", 0))
        known[job_id] = []
    laid = _lay_out(items, fixed, instance.processors)
    for job_id, (start, end, _), procs, switch in zip(
        owners, items, laid, switches, strict=True
    ):
        known[job_id].append(_Interval(start, end, procs, switch))
    return known, True


def _draw_busy(
    ax: Axes, block: BusyBlock, y: int, height: int, scale: int
) -> Rectangle:
    patch = Rectangle(
        (block.start / scale, y),
        (block.end - block.start) / scale,
        height,
        facecolor=BUSY_FACE,
        edgecolor=BUSY_EDGE,
        hatch=BUSY_HATCH,
        linewidth=0.6,
        # The id goes into SVG as written: a control character there makes
        # the file invalid XML (and the HTML report's figure blank).
        gid=one_line(f"busy {block.label or f'{block.start}-{block.end}'}"),
    )
    ax.add_patch(patch)
    return patch


def _draw_job(
    ax: Axes, job_id: int, pieces: list[_Interval], scale: int
) -> list[Rectangle]:
    patches = []
    for piece in pieces:
        for first, count in processor_runs(piece.processors):
            patch = Rectangle(
                (piece.start / scale, first),
                (piece.end - piece.start) / scale,
                count,
                facecolor=job_colour(job_id),
                edgecolor=JOB_EDGE,
                linewidth=0.4,
                gid=f"job {job_id}",
            )
            ax.add_patch(patch)
            patches.append(patch)
            if piece.switch:
                ax.add_patch(
                    Rectangle(
                        (piece.start / scale, first),
                        piece.switch / scale,
                        count,
                        facecolor="none",
                        edgecolor=SWITCH_EDGE,
                        hatch=SWITCH_HATCH,
                        linewidth=0.0,
                        gid=f"switch {job_id}",
                    )
                )
    return patches


def _label(
    ax: Axes, job_id: int, patch: Rectangle, x_span: float, y_span: float
) -> None:
    width, height = patch.get_width(), patch.get_height()
    if width < _LABEL_MIN_WIDTH * x_span or height < _LABEL_MIN_HEIGHT * y_span:
        return
    red, green, blue, _ = job_colour(job_id)
    # Relative luminance (ITU-R BT.709) decides black or white text.
    dark = 0.2126 * red + 0.7152 * green + 0.0722 * blue < 0.5
    ax.text(
        patch.get_x() + width / 2,
        patch.get_y() + height / 2,
        str(job_id),
        ha="center",
        va="center",
        fontsize=7,
        color="white" if dark else "black",
        clip_on=True,
    )


def _draw_floating_blocks(
    ax: Axes, blocks: Sequence[BusyBlock], m: int, scale: int
) -> int:
    """Offset-less blocks in a band above the machine; returns the band top."""
    items = [(b.start, b.end, b.size) for b in blocks]
    height = max(_peak(items), max(b.size for b in blocks))
    gap = max(1, round(0.04 * m))
    base = m + gap
    lanes = _lay_out(items, (), height)
    for block, lane in zip(blocks, lanes, strict=True):
        for first, count in processor_runs(lane):
            _draw_busy(ax, block, base + first, count, scale)
    ax.axhline(m, color=BUSY_EDGE, linestyle="--", linewidth=0.8)
    return base + height


def _time_limits(instance: Instance, schedule: Schedule) -> tuple[int, int]:
    """Time range to show, in seconds, before margins.

    It starts at 0 or earlier, so it holds every wait line too: releases
    are never negative, and a line is drawn only up to a later start.
    """
    starts = [p.start for p in schedule.placements.values()]
    ends = [p.end for p in schedule.placements.values()]
    starts += [b.start for b in instance.machine.unavailable]
    ends += [b.end for b in instance.machine.unavailable]
    low = min([0, *starts])
    return low, max([low + 1, *ends])


def _time_axis(ax: Axes, low: int, high: int, unit: str) -> None:
    """Limits, label and round ticks of the time axis in ``unit``."""
    scale = TIME_UNITS[unit]
    margin = 0.01 * (high - low)
    ax.set_xlim((low - margin) / scale, (high + margin) / scale)
    ax.xaxis.set_major_locator(
        MaxNLocator(nbins="auto", steps=_TICK_STEPS[unit], integer=True)
    )
    # Plain values of the unit: no offset ("+1.7e4") nor scientific factor.
    ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax.set_xlabel(f"time ({unit})")


def _processor_ticks(ax: Axes, m: int) -> None:
    # Ticks only on the machine, never in the busy band above it.
    if m <= 24:
        ax.set_yticks([p + 0.5 for p in range(m)], [str(p) for p in range(m)])
        ax.tick_params(axis="y", length=0, labelsize=7 if m > 12 else 8)
        return
    locator = MaxNLocator(nbins=8, integer=True, steps=[1, 2, 2.5, 5, 10])
    ax.set_yticks([t for t in locator.tick_values(0, m) if 0 <= t <= m])


def _machine_structure(ax: Axes, instance: Instance) -> None:
    # SMP nodes: a line between nodes, one tick per node; speeds: each
    # processor's speed beside its index on small machines.
    machine = instance.machine
    nodes = machine.nodes
    if nodes is not None:
        for k in range(1, nodes.count):
            ax.axhline(k * nodes.cpus, color=BUSY_EDGE, linewidth=0.6, gid="node line")
        ticks = [(k + 0.5) * nodes.cpus for k in range(nodes.count)]
        labels = [f"node {k}" for k in range(nodes.count)]
        if nodes.count > 24:
            step = -(-nodes.count // 12)
            ticks, labels = ticks[::step], labels[::step]
        ax.set_yticks(ticks, labels)
        ax.tick_params(axis="y", length=0, labelsize=7)
        ax.set_ylabel(f"{nodes.count} nodes x {nodes.cpus} processors")
    elif machine.speeds is not None and machine.processors <= 24:
        ax.set_yticklabels(
            [f"{p} (x{speed:g})" for p, speed in enumerate(machine.speeds)]
        )
        ax.set_ylabel(f"processor (speed), m = {machine.processors}")


def gantt(
    instance: Instance,
    schedule: Schedule,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    time_unit: str = "auto",
    wait_lines: bool = False,
) -> Axes:
    """Draw ``schedule`` on ``instance`` as a Gantt chart.

    Parameters
    ----------
    instance
        The problem: machine size ``m``, busy blocks, job sizes for
        placements without processor indices, and releases for the wait
        lines.
    schedule
        The placements to draw (all of them, even jobs absent from the
        instance when their processors are known).
    ax
        Axes to draw on; a new figure when ``None``.
    title
        Chart title; default: instance name, producer and makespan.
    time_unit
        Unit of the time axis: ``"s"``, ``"min"``, ``"h"``, ``"d"``, or
        ``"auto"`` (the default) to let :func:`choose_time_unit` pick it
        from the span shown. x coordinates of every artist are in that
        unit; the axis label names it (``"time (h)"``).
    wait_lines
        Draw a thin line from release to start for each job of the instance
        that started after its release (``gid = "wait <id>"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on. Every job rectangle has ``gid = "job <id>"`` and
        every busy block ``gid = "busy <label>"`` (they become element ids in
        SVG output).

    Raises
    ------
    ValueError
        ``time_unit`` is unknown, a job placed without processors is
        absent from the instance, or a job's processors pass the machine's.
    """
    _refuse_beyond_machine(instance, schedule)
    low, high = _time_limits(instance, schedule)
    unit = choose_time_unit(high - low, time_unit)
    scale = TIME_UNITS[unit]
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(10, 5), layout="constrained")
    m = instance.processors
    pieces, laid_out = _job_segments(instance, schedule)
    top = _draw_busy_blocks(ax, instance, scale)
    _draw_lost_attempts(ax, schedule, scale)
    for job_id in sorted(schedule.placements):
        patches = _draw_job(ax, job_id, pieces[job_id], scale)
        if patches:
            biggest = max(patches, key=lambda r: r.get_width() * r.get_height())
            _label(ax, job_id, biggest, 1.02 * (high - low) / scale, float(top))
    if wait_lines:
        _draw_wait_lines(ax, instance, schedule, pieces, scale)
    _time_axis(ax, low, high, unit)
    ax.set_ylim(0, top)
    _processor_ticks(ax, m)
    ax.set_ylabel(f"processor (m = {m})")
    _machine_structure(ax, instance)
    _legend_and_notes(ax, instance, schedule, laid_out, unit, wait_lines)
    ax.set_title(
        title if title is not None else _default_title(instance, schedule, unit)
    )
    return literal_texts(ax)


def _refuse_beyond_machine(instance: Instance, schedule: Schedule) -> None:
    """A job drawn on processors the machine lacks would be drawn off the
    chart (and ``0-1000000000000`` would take matplotlib minutes)."""
    m = instance.processors
    for job_id, placement in sorted(schedule.placements.items()):
        for piece in _segments(placement):
            if piece.processors and highest(piece.processors) >= m:
                raise ValueError(
                    f"job {job_id}: processor {highest(piece.processors)} is beyond "
                    f"the machine's {m} processors (0 to {m - 1}); cannot draw it"
                )


def _draw_busy_blocks(ax: Axes, instance: Instance, scale: int) -> int:
    """Busy blocks on their processors or in the band above; returns the
    top of the drawing (``m``, or the top of the band)."""
    m = instance.processors
    floating = []
    for block in (*instance.machine.unavailable, *instance.machine.outages):
        if block.offset is None:
            floating.append(block)
        else:
            _draw_busy(ax, block, block.offset, block.size, scale)
    return _draw_floating_blocks(ax, floating, m, scale) if floating else m


def _draw_lost_attempts(ax: Axes, schedule: Schedule, scale: int) -> None:
    """Runs killed by outages (``Schedule.lost``): hollow, cross-hatched
    rectangles in the job's colour (``gid = "lost <id>"``); attempts
    without processor indices are not drawn."""
    for job_id, attempts in sorted(schedule.lost.items()):
        colour = job_colour(job_id)
        for attempt in attempts:
            for start, end, procs in attempt.segments():
                for first, count in processor_runs(procs or ()):
                    ax.add_patch(
                        Rectangle(
                            (start / scale, first),
                            (end - start) / scale,
                            count,
                            facecolor="none",
                            edgecolor=colour,
                            hatch="xx",
                            linewidth=0.6,
                            gid=f"lost {job_id}",
                        )
                    )


def _draw_wait_lines(
    ax: Axes,
    instance: Instance,
    schedule: Schedule,
    pieces: dict[int, list[_Interval]],
    scale: int,
) -> list[Line2D]:
    """A line from release to start at the height of the job's first
    rectangle, for every job of the instance that waited."""
    jobs = instance.jobs_by_id()
    drawn = []
    for job_id in sorted(schedule.placements):
        start = schedule[job_id].start
        if job_id not in jobs or start <= jobs[job_id].release or not pieces[job_id]:
            continue
        first, count = processor_runs(pieces[job_id][0].processors)[0]
        line = Line2D(
            [jobs[job_id].release / scale, start / scale],
            [first + count / 2] * 2,
            color=job_colour(job_id),
            linewidth=1.0,
            marker="|",
            markevery=[0],  # a tick at the release, where the wait begins
            markersize=5,
            # A dark outline keeps light colours visible on white and on
            # the rectangles the line crosses.
            path_effects=[withStroke(linewidth=2.2, foreground=JOB_EDGE)],
            gid=f"wait {job_id}",
        )
        ax.add_line(line)
        drawn.append(line)
    return drawn


def _makespan(schedule: Schedule) -> int | None:
    ends = [p.end for p in schedule.placements.values()]
    return max(ends) if ends else None


def _cmax_text(cmax: int | None, unit: str) -> str:
    """``C_max = 93600 s (26 h)``: exact seconds, then the axis unit."""
    text = f"C_max = {cmax} s"
    if cmax is None or unit == "s":
        return text
    return f"{text} ({cmax / TIME_UNITS[unit]:.4g} {unit})"


def _default_title(instance: Instance, schedule: Schedule, unit: str) -> str:
    parts = [instance.name or "instance", schedule.producer or "schedule"]
    cmax = _cmax_text(_makespan(schedule), unit)
    jobs = f"{len(schedule)} jobs"
    return " — ".join(p for p in parts if p) + f" ({jobs}, {cmax})"


_FLOATING_NOTE = (
    "above the dashed line:\n"
    "busy blocks without a\n"
    "processor offset\n"
    "(position arbitrary)"
)
_LAID_OUT_NOTE = "processor indices\nassigned for drawing\n(not in the schedule)"


def _note(text: str) -> Patch:
    """A legend entry that is text only."""
    return Patch(facecolor="none", edgecolor="none", label=text)


def _legend_and_notes(
    ax: Axes,
    instance: Instance,
    schedule: Schedule,
    laid_out: bool,
    unit: str,
    wait_lines: bool,
) -> None:
    handles: list[Patch | Line2D] = []
    cmax = _makespan(schedule)
    if cmax is not None:
        ax.axvline(
            cmax / TIME_UNITS[unit], color="black", linestyle="--", linewidth=0.9
        )
        handles.append(
            Line2D([], [], color="black", linestyle="--", label=_cmax_text(cmax, unit))
        )
    if instance.machine.unavailable:
        handles.append(
            Patch(
                facecolor=BUSY_FACE,
                edgecolor=BUSY_EDGE,
                hatch=BUSY_HATCH,
                label="busy block",
            )
        )
    handles.append(
        Patch(facecolor="white", edgecolor=JOB_EDGE, label="job (colour by id)")
    )
    if any(p.pieces for p in schedule.placements.values()):
        handles.append(_note("preempted jobs: one box per piece"))
    if any(p.switch_cost for p in schedule.placements.values()):
        handles.append(
            Patch(
                facecolor="white",
                edgecolor=SWITCH_EDGE,
                hatch=SWITCH_HATCH,
                label="context switch",
            )
        )
    if wait_lines:
        handles.append(
            Line2D([], [], color=BUSY_EDGE, marker="|", label="wait: release to start")
        )
    if any(b.offset is None for b in instance.machine.unavailable):
        handles.append(_note(_FLOATING_NOTE))
    if laid_out:
        handles.append(_note(_LAID_OUT_NOTE))
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.005, 1.0),
        fontsize=7.5,
        frameon=False,
    )
    if not schedule.placements:
        ax.text(0.5, 0.5, "empty schedule", transform=ax.transAxes, ha="center")


def schedule_notes(schedule: Schedule) -> list[str]:
    """What a schedule drawn without its instance gets wrong on its face.

    Without the instance nothing checks the schedule
    (:func:`optsched.check.check_schedule` needs it); a job that ends before
    it starts cannot be drawn and is refused, a negative start or a
    processor listed twice is drawn as given and noted (one line each, the
    first job of each kind).

    Raises
    ------
    ValueError
        A placement (or a piece of one) ends before it starts.
    """
    negative, repeated = [], []
    for job_id, placement in sorted(schedule.placements.items()):
        for piece in _segments(placement):
            if piece.end < piece.start:
                raise ValueError(
                    f"job {job_id}: ends at {piece.end} before its start {piece.start}"
                )
            if piece.start < 0:
                negative.append(job_id)
            if len(piece.processors) > distinct(piece.processors):
                repeated.append(job_id)
    notes = []
    if negative:
        notes.append(f"{len(negative)} job(s) start before time 0 (job {negative[0]})")
    if repeated:
        notes.append(
            f"{len(repeated)} job(s) list a processor twice (job {repeated[0]})"
        )
    return notes


def instance_from_schedule(
    schedule: Schedule,
    *,
    sizes: dict[int, int] | None = None,
    releases: dict[int, int] | None = None,
    processors: int | None = None,
    name: str = "",
) -> Instance:
    """A minimal instance that ``schedule`` is feasible on, for drawing.

    Used when the real instance is not at hand. Job ``j`` gets release
    ``releases[j]`` (default: its start), size ``|P_j|`` (or ``sizes[j]`` when
    the placement lists no processors) and runtime ``C_j - S_j``; the
    machine has no busy blocks and ``m = processors``, by default the
    smallest size that holds the schedule: ``max(highest processor index +
    1, peak number of processors in use)``.

    Raises
    ------
    ValueError
        A placement lists no processors and ``sizes`` has no size for it.
    """
    from optsched.instance import Job, Machine

    sizes = sizes or {}
    releases = releases or {}
    jobs = []
    for job_id, placement in sorted(schedule.placements.items()):
        if placement.processors:
            size = len(placement.processors)
        elif job_id in sizes:
            size = sizes[job_id]
        else:
            raise ValueError(
                f"job {job_id}: the schedule lists no processors and no size"
            )
        release = min(releases.get(job_id, placement.start), placement.start)
        jobs.append(Job(job_id, max(0, release), size, max(0, placement.duration)))
    top = max(
        (
            highest(piece.processors)
            for p in schedule.placements.values()
            for piece in _segments(p)
        ),
        default=-1,
    )
    peak = _peak(
        [
            (p.start, p.end, j.size)
            for p, j in zip((schedule[j.id] for j in jobs), jobs, strict=True)
        ]
    )
    needed = max(top + 1, peak, max((j.size for j in jobs), default=1), 1)
    if processors is not None and processors < needed:
        raise ValueError(
            f"machine of {processors} processors is too small for the schedule "
            f"(needs {needed})"
        )
    return Instance(Machine(processors or needed), tuple(jobs), name=name)


FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def save_gantt(
    instance: Instance,
    schedule: Schedule,
    path: str | Path,
    *,
    title: str | None = None,
    size: tuple[float, float] = (11.0, 5.5),
    dpi: int = 110,
    time_unit: str = "auto",
    wait_lines: bool = False,
) -> Path:
    """Draw :func:`gantt` to ``path`` (``.png``, ``.svg`` or ``.pdf``).

    Uses the Agg canvas without pyplot and writes atomically; ``time_unit``
    and ``wait_lines`` are passed to :func:`gantt`.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from optsched.io.atomic import atomic_write

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FIGURE_SUFFIXES:
        raise ValueError(
            f"{path}: the figure must be one of {', '.join(FIGURE_SUFFIXES)}"
        )
    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    gantt(
        instance,
        schedule,
        ax=figure.subplots(),
        title=title,
        time_unit=time_unit,
        wait_lines=wait_lines,
    )
    buffer = io.BytesIO()
    # Same input, same bytes: no creation date, fixed SVG ids (figures in
    # the docs are regenerated and compared in CI).
    stamp = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}
    with matplotlib.rc_context({"svg.hashsalt": "optsched"}):
        figure.savefig(buffer, format=suffix[1:], dpi=dpi, metadata=stamp.get(suffix))
    with atomic_write(path, "wb") as handle:
        handle.write(buffer.getvalue())
    return path
