"""Gantt charts of parallel-job schedules.

Processors are on the y axis (processor ``p`` occupies the band
``[p, p + 1)``), time in seconds on the x axis. A job placed on processors
``P_j`` during ``[S_j, C_j)`` is drawn as one rectangle per maximal run of
consecutive indices in ``P_j``: a job on processors ``{0, 1, 5}`` gives two
rectangles, ``[0, 2)`` and ``[5, 6)``, of the same colour. A job that
migrates (:attr:`optsched.schedule.Placement.moves`) is drawn stretch by
stretch, each on its own processors.

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
from matplotlib.ticker import MaxNLocator

from optsched.instance import BusyBlock, Instance
from optsched.plot.text import literal_texts
from optsched.schedule import Placement, Schedule

BUSY_FACE = "#d9d9d9"
BUSY_EDGE = "#6e6e6e"
BUSY_HATCH = "///"
JOB_EDGE = "#222222"

# tab20 holds ten hues in a dark and a light shade. Walking the dark shades
# first, then the light ones, gives consecutive job ids different hues.
_PALETTE_ORDER = (*range(0, 20, 2), *range(1, 20, 2))
_TAB20 = matplotlib.colormaps["tab20"]

# A label is drawn when the rectangle spans at least these shares of the
# axis ranges (below that the text spills over its neighbours).
_LABEL_MIN_WIDTH = 0.045
_LABEL_MIN_HEIGHT = 0.035


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

    ``(0, 1, 2, 5, 7, 8)`` -> ``[(0, 3), (5, 1), (7, 2)]``.
    """
    runs: list[tuple[int, int]] = []
    for p in sorted(set(processors)):
        if runs and p == runs[-1][0] + runs[-1][1]:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


@dataclass(frozen=True, slots=True)
class _Interval:
    """Something occupying processors during ``[start, end)``."""

    start: int
    end: int
    processors: Sequence[int]


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
    migrates, see :meth:`optsched.schedule.Placement.segments`)."""
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
    items = [(schedule[j].start, schedule[j].end, jobs[j].size) for j in unknown]
    laid = _lay_out(items, fixed, instance.processors)
    for job_id, (start, end, _), procs in zip(unknown, items, laid, strict=True):
        known[job_id] = [_Interval(start, end, procs)]
    return known, True


def _draw_busy(ax: Axes, block: BusyBlock, y: int, height: int) -> Rectangle:
    patch = Rectangle(
        (block.start, y),
        block.end - block.start,
        height,
        facecolor=BUSY_FACE,
        edgecolor=BUSY_EDGE,
        hatch=BUSY_HATCH,
        linewidth=0.6,
        gid=f"busy {block.label or f'{block.start}-{block.end}'}",
    )
    ax.add_patch(patch)
    return patch


def _draw_job(ax: Axes, job_id: int, pieces: list[_Interval]) -> list[Rectangle]:
    patches = []
    for piece in pieces:
        for first, count in processor_runs(piece.processors):
            patch = Rectangle(
                (piece.start, first),
                piece.end - piece.start,
                count,
                facecolor=job_colour(job_id),
                edgecolor=JOB_EDGE,
                linewidth=0.4,
                gid=f"job {job_id}",
            )
            ax.add_patch(patch)
            patches.append(patch)
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


def _draw_floating_blocks(ax: Axes, blocks: Sequence[BusyBlock], m: int) -> int:
    """Offset-less blocks in a band above the machine; returns the band top."""
    items = [(b.start, b.end, b.size) for b in blocks]
    height = max(_peak(items), max(b.size for b in blocks))
    gap = max(1, round(0.04 * m))
    base = m + gap
    lanes = _lay_out(items, (), height)
    for block, lane in zip(blocks, lanes, strict=True):
        for first, count in processor_runs(lane):
            _draw_busy(ax, block, base + first, count)
    ax.axhline(m, color=BUSY_EDGE, linestyle="--", linewidth=0.8)
    return base + height


def _time_limits(instance: Instance, schedule: Schedule) -> tuple[float, float]:
    starts = [p.start for p in schedule.placements.values()]
    ends = [p.end for p in schedule.placements.values()]
    starts += [b.start for b in instance.machine.unavailable]
    ends += [b.end for b in instance.machine.unavailable]
    low = min([0, *starts])
    high = max([low + 1, *ends])
    margin = 0.01 * (high - low)
    return low - margin, high + margin


def _processor_ticks(ax: Axes, m: int) -> None:
    # Ticks only on the machine, never in the busy band above it.
    if m <= 24:
        ax.set_yticks([p + 0.5 for p in range(m)], [str(p) for p in range(m)])
        ax.tick_params(axis="y", length=0, labelsize=7 if m > 12 else 8)
        return
    locator = MaxNLocator(nbins=8, integer=True, steps=[1, 2, 2.5, 5, 10])
    ax.set_yticks([t for t in locator.tick_values(0, m) if 0 <= t <= m])


def gantt(
    instance: Instance,
    schedule: Schedule,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Draw ``schedule`` on ``instance`` as a Gantt chart.

    Parameters
    ----------
    instance
        The problem: machine size ``m``, busy blocks, and job sizes for
        placements without processor indices.
    schedule
        The placements to draw (all of them, even jobs absent from the
        instance when their processors are known).
    ax
        Axes to draw on; a new figure when ``None``.
    title
        Chart title; default: instance name, producer and makespan.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on. Every job rectangle has ``gid = "job <id>"`` and
        every busy block ``gid = "busy <label>"`` (they become element ids in
        SVG output).
    """
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(10, 5), layout="constrained")
    m = instance.processors
    pieces, laid_out = _job_segments(instance, schedule)
    x_low, x_high = _time_limits(instance, schedule)
    anchored = [b for b in instance.machine.unavailable if b.offset is not None]
    floating = [b for b in instance.machine.unavailable if b.offset is None]
    for block in anchored:
        _draw_busy(ax, block, block.offset or 0, block.size)
    top = _draw_floating_blocks(ax, floating, m) if floating else m
    y_span = float(top)
    for job_id in sorted(schedule.placements):
        patches = _draw_job(ax, job_id, pieces[job_id])
        if patches:
            biggest = max(patches, key=lambda r: r.get_width() * r.get_height())
            _label(ax, job_id, biggest, x_high - x_low, y_span)
    ax.set_xlim(x_low, x_high)
    ax.set_ylim(0, top)
    _processor_ticks(ax, m)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"processor (m = {m})")
    _legend_and_notes(ax, instance, schedule, laid_out)
    ax.set_title(title if title is not None else _default_title(instance, schedule))
    return literal_texts(ax)


def _makespan(schedule: Schedule) -> int | None:
    ends = [p.end for p in schedule.placements.values()]
    return max(ends) if ends else None


def _default_title(instance: Instance, schedule: Schedule) -> str:
    parts = [instance.name or "instance", schedule.producer or "schedule"]
    cmax = _makespan(schedule)
    jobs = f"{len(schedule)} jobs"
    return " — ".join(p for p in parts if p) + f" ({jobs}, C_max = {cmax} s)"


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
    ax: Axes, instance: Instance, schedule: Schedule, laid_out: bool
) -> None:
    handles: list[Patch | Line2D] = []
    cmax = _makespan(schedule)
    if cmax is not None:
        ax.axvline(cmax, color="black", linestyle="--", linewidth=0.9)
        handles.append(
            Line2D([], [], color="black", linestyle="--", label=f"C_max = {cmax} s")
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
    highest = max(
        (
            max(piece.processors)
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
    needed = max(highest + 1, peak, max((j.size for j in jobs), default=1), 1)
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
) -> Path:
    """Draw :func:`gantt` to ``path`` (``.png``, ``.svg`` or ``.pdf``).

    Uses the Agg canvas without pyplot and writes atomically.
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
    gantt(instance, schedule, ax=figure.subplots(), title=title)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix[1:], dpi=dpi)
    with atomic_write(path, "wb") as handle:
        handle.write(buffer.getvalue())
    return path


def schedule_file_jobs(path: str | Path) -> tuple[dict[int, int], dict[int, int]]:
    """Sizes and releases that a schedule file records beside its placements.

    Our CSV has a ``size`` column; a Batsim ``out_jobs.csv`` has
    ``requested_number_of_resources`` and ``submission_time``. JSON schedules
    record neither (empty dictionaries). Read the file with
    :func:`optsched.io.schedules.read_schedule` first: this assumes it is
    well formed and skips what it cannot read.
    """
    import csv

    text = Path(path).read_text(encoding="utf-8-sig")
    lines = [
        line
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines or lines[0].lstrip().startswith("{"):
        return {}, {}
    sizes: dict[int, int] = {}
    releases: dict[int, int] = {}
    for row in csv.DictReader(lines):
        job = _int(str(row.get("job_id", "")).rpartition("!")[2])
        if job is None:
            continue
        size = _int(row.get("size") or row.get("requested_number_of_resources"))
        release = _int(row.get("submission_time"))
        if size is not None and size > 0:
            sizes[job] = size
        if release is not None and release >= 0:
            releases[job] = release
    return sizes, releases


def _int(text: str | None) -> int | None:
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() else None
