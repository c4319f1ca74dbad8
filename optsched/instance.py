"""Core problem types: jobs, machines with busy blocks, instances.

All types are frozen dataclasses validated on construction. Time is integer
seconds and intervals are half-open ``[start, end)``: a job ending at ``t``
frees its processors for a job starting at ``t``.

Limits: every time (release, runtime, estimate, wait, busy-block start and
end), size, offset and processor count is at most :data:`MAX_INTEGER`
(``2**53``), job ids and the other SWF extras lie within ``+-2**53``, and a
weight lies in ``(0, MAX_WEIGHT]``. Integers up to ``2**53`` are exact in
float64, which metrics, ratios, solvers and JSON consumers use; beyond it
sums and products would silently round or overflow 64-bit integers. Runtimes
of 10**12 seconds and more stay valid.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Literal

from optsched.calendar import Calendar
from optsched.errors import shown
from optsched.nodes import Nodes, ceiling, exact, exact_run_time

Allocation = Literal["any", "contiguous"]
ALLOCATIONS: tuple[str, ...] = ("any", "contiguous")

MAX_INTEGER = 2**53
"""Largest time, size or processor count accepted (exact in float64)."""
MAX_DETAILED_PROCESSORS = 1 << 24
"""Most processors of a machine with speeds or SMP nodes (16,777,216): its
speeds and its simulators keep one entry per processor."""
MAX_WEIGHT = 1e12
"""Largest job weight accepted: weighted sums stay far from float overflow."""

EXTRA_FIELDS = (
    "wait",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "status",
    "preceding_job",
    "think_time",
)
"""The optional integer fields of :class:`Job` (trace data kept for output),
in field order after ``weight``."""


def _require_int(owner: str, name: str, value: object) -> None:
    # bool is an int subclass; a True size is almost surely a bug upstream.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{owner}: {name} must be an integer, got {shown(value)}")


def _require_at_most(owner: str, name: str, value: int) -> None:
    if value > MAX_INTEGER:
        raise ValueError(
            f"{owner}: {name} {shown(value)} is above the limit 2**53 = {MAX_INTEGER}"
        )


def _require_within(owner: str, name: str, value: int) -> None:
    # Ids and SWF extras may be negative, but not huge either way.
    if abs(value) > MAX_INTEGER:
        raise ValueError(
            f"{owner}: {name} {shown(value)} is outside the limits +-2**53 = "
            f"+-{MAX_INTEGER}"
        )


@dataclass(frozen=True, slots=True)
class Mode:
    """One way to run a moldable job: on ``processors`` for ``runtime`` s.

    Parameters
    ----------
    processors
        Processor count of the mode, ``1 <= processors <= MAX_INTEGER``.
    runtime
        Actual run time on that many processors, ``0 <= runtime <=
        MAX_INTEGER``.
    estimate
        The run time schedulers see for this mode; defaults to ``runtime``.
    """

    processors: int
    runtime: int
    estimate: int | None = None

    def __post_init__(self) -> None:
        who = f"mode {shown(getattr(self, 'processors', None))}"
        for name in ("processors", "runtime"):
            _require_int(who, name, getattr(self, name))
        if self.processors < 1:
            raise ValueError(f"{who}: processors must be at least 1")
        if self.runtime < 0:
            raise ValueError(f"{who}: runtime {shown(self.runtime)} is negative")
        for name in ("processors", "runtime"):
            _require_at_most(who, name, getattr(self, name))
        _settle_estimate(who, self)

    @property
    def work(self) -> int:
        """``processors * runtime``: the processor-seconds of the mode."""
        return self.processors * self.runtime

    @property
    def requested(self) -> int:
        """The estimate as an ``int``."""
        assert self.estimate is not None
        return self.estimate


def _settle_estimate(who: str, item: Mode | Job) -> None:
    """``item.estimate`` validated, or set to its run time when ``None``."""
    if item.estimate is None:
        object.__setattr__(item, "estimate", item.runtime)
        return
    _require_int(who, "estimate", item.estimate)
    if item.estimate < 0:
        raise ValueError(f"{who}: estimate {shown(item.estimate)} is negative")
    _require_at_most(who, "estimate", item.estimate)


def _validate_modes(who: str, modes: tuple[Mode, ...]) -> tuple[Mode, ...]:
    """``modes`` sorted by processors, or ``ValueError`` saying why they are
    inconsistent: two modes on one processor count, or work that falls as
    processors grow.

    Work may not fall beyond what rounding run times up to whole seconds
    explains: for ``p < p'``, ``p' T(p') > p (T(p) - 1)``. That is exactly
    the condition for real run times ``tau(p)`` with ``T = ceil(tau)`` and
    ``p tau(p)`` non-decreasing to exist, so the integer modes of every
    speed-up at most linear pass (linear speed-up of 33 s gives 17 s on 2
    processors and 11 s on 3: works 33, 34, 33), and a speed-up above
    linear does not.
    """
    if not all(isinstance(mode, Mode) for mode in modes):
        raise ValueError(f"{who}: modes must be Mode objects")
    ordered = tuple(sorted(modes, key=lambda mode: mode.processors))
    most: Mode | None = None  # the mode with the largest p (T - 1) so far
    for low, high in pairwise(ordered):
        if low.processors == high.processors:
            raise ValueError(f"{who}: two modes on {low.processors} processors")
    for mode in ordered:
        if most is not None and mode.work <= most.processors * (most.runtime - 1):
            raise ValueError(
                f"{who}: work falls from {most.work} processor-seconds on "
                f"{most.processors} processors ({most.runtime} s) to {mode.work} "
                f"on {mode.processors} ({mode.runtime} s), more than rounding to "
                "whole seconds explains: speed-up above linear"
            )
        if most is None or mode.processors * (mode.runtime - 1) > most.processors * (
            most.runtime - 1
        ):
            most = mode
    return ordered


@dataclass(frozen=True, slots=True)
class Job:
    """A parallel job: rigid, moldable or malleable.

    Parameters
    ----------
    id
        Job number, unique within an instance (the SWF job number for traces),
        within ``+-MAX_INTEGER``.
    release
        Submit time in seconds, ``0 <= release <= MAX_INTEGER``.
    size
        Processors used for the whole run, ``1 <= size <= MAX_INTEGER``.
    runtime
        Actual run time in seconds, ``0 <= runtime <= MAX_INTEGER``.
    estimate
        Requested wall time the schedulers see, ``0 <= estimate <=
        MAX_INTEGER``; defaults to ``runtime``.
    weight
        Weight in weighted objectives, finite, ``0 < weight <= MAX_WEIGHT``
        (``1e12``).
    wait
        Recorded wait time in the trace (SWF field 3), when known.
    modes
        Empty for a rigid job. For a moldable job, the ways it may run
        (:class:`Mode`, sorted by processors, work never falling as
        processors grow); ``size``, ``runtime`` and ``estimate`` are then
        its *requested* mode, one of them, which rigid schedulers use.
    malleable
        The job may change its processor count while it runs (among its
        modes' counts); it needs modes. Running ``d`` seconds on the
        processors of mode ``k`` does the fraction ``d / T_k`` of it.

    Notes
    -----
    The remaining fields are SWF extras kept for provenance and filtering;
    ``None`` means missing (``-1`` in SWF). Integer extras (``wait``
    included) lie within ``+-MAX_INTEGER``.

    :data:`MAX_INTEGER` is ``2**53``: every integer up to it is exact in
    float64, which metrics, ratios and JSON consumers use. A value beyond a
    limit raises ``ValueError`` naming the field and the limit.
    """

    id: int
    release: int
    size: int
    runtime: int
    estimate: int | None = None
    weight: float = 1.0
    wait: int | None = None
    user: int | None = None
    group: int | None = None
    executable: int | None = None
    queue: int | None = None
    partition: int | None = None
    status: int | None = None
    preceding_job: int | None = None
    think_time: int | None = None
    modes: tuple[Mode, ...] = ()
    malleable: bool = False

    def __post_init__(self) -> None:
        who = job_name(self.id)
        for name in ("id", "release", "size", "runtime"):
            _require_int(who, name, getattr(self, name))
        _require_within(who, "id", self.id)
        if self.release < 0:
            raise ValueError(f"{who}: release {shown(self.release)} is negative")
        if self.size < 1:
            raise ValueError(f"{who}: size {shown(self.size)} must be at least 1")
        if self.runtime < 0:
            raise ValueError(f"{who}: runtime {shown(self.runtime)} is negative")
        for name in ("release", "size", "runtime"):
            _require_at_most(who, name, getattr(self, name))
        _settle_estimate(who, self)
        self._validate_weight(who)
        for name in EXTRA_FIELDS:
            value = getattr(self, name)
            if isinstance(value, int):
                _require_within(who, name, value)
        self._validate_modes(who)

    def _validate_modes(self, who: str) -> None:
        if not self.modes and self.malleable is False:
            return  # rigid: the common case, kept cheap for huge traces
        modes = _validate_modes(who, tuple(self.modes))
        object.__setattr__(self, "modes", modes)
        if not isinstance(self.malleable, bool):
            raise ValueError(f"{who}: malleable must be true or false")
        if not modes:
            if self.malleable:
                raise ValueError(f"{who}: a malleable job needs modes")
            return
        requested = Mode(self.size, self.runtime, self.estimate)
        if requested not in modes:
            raise ValueError(
                f"{who}: its requested mode ({self.size} processors, runtime "
                f"{self.runtime}, estimate {self.estimate}) is not one of its modes"
            )

    def _validate_weight(self, who: str) -> None:
        weight = self.weight
        if not isinstance(weight, int | float) or isinstance(weight, bool):
            raise ValueError(f"{who}: weight must be a number, got {shown(weight)}")
        # NaN fails "> 0"; infinity, or 1e300 times a makespan, would
        # overflow or swamp every weighted objective.
        if not 0 < weight < math.inf:
            raise ValueError(
                f"{who}: weight {shown(weight)} must be positive and finite"
            )
        if weight > MAX_WEIGHT:
            raise ValueError(f"{who}: weight {shown(weight)} is above the limit 1e12")

    @property
    def requested(self) -> int:
        """The estimate as an ``int`` (never ``None`` after validation)."""
        assert self.estimate is not None
        return self.estimate

    @property
    def area(self) -> int:
        """``size * runtime``, the processor-seconds the job consumes."""
        return self.size * self.runtime

    @property
    def moldable(self) -> bool:
        """Whether the scheduler may choose the processor count (has modes)."""
        return bool(self.modes)

    @property
    def all_modes(self) -> tuple[Mode, ...]:
        """The job's modes; a rigid job's only mode is its request (its
        size, run time and estimate)."""
        return self.modes or (Mode(self.size, self.runtime, self.estimate),)

    def mode(self, processors: int) -> Mode | None:
        """The mode on ``processors`` processors (``None`` if there is none;
        a rigid job's only mode is its size)."""
        for mode in self.all_modes:
            if mode.processors == processors:
                return mode
        return None

    def with_mode(self, mode: Mode) -> Job:
        """This job requesting ``mode`` (one of its modes; modes are kept)."""
        return dataclasses.replace(
            self, size=mode.processors, runtime=mode.runtime, estimate=mode.estimate
        )

    def with_exact_estimates(self) -> Job:
        """This job with every estimate (its modes' too) equal to the run time."""
        if self.estimate == self.runtime and all(
            mode.estimate == mode.runtime for mode in self.modes
        ):
            return self
        return dataclasses.replace(
            self,
            estimate=self.runtime,
            modes=tuple(Mode(mode.processors, mode.runtime) for mode in self.modes),
        )

    def rigid(self, mode: Mode | None = None) -> Job:
        """This job fixed to ``mode`` (default: its requested one), no modes."""
        mode = mode or Mode(self.size, self.runtime, self.estimate)
        return dataclasses.replace(
            self,
            size=mode.processors,
            runtime=mode.runtime,
            estimate=mode.estimate,
            modes=(),
            malleable=False,
        )

    def replace(self, **changes: object) -> Job:
        """Return a validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def job_name(job_id: object) -> str:
    """``"job ID"``: names a job in messages, a strange id quoted and cut."""
    return f"job {_plain(job_id)}"


def block_name(label: object, start: object, end: object) -> str:
    """``"busy block LABEL"``, or ``"busy block (START, END)"`` without a label.

    Names a block in messages; a label read from a file is quoted (with
    :func:`~optsched.errors.shown`) when it is long or holds control
    characters, so that a message stays one short line.
    """
    if label:
        return f"busy block {_plain(label)}"
    return f"busy block ({shown(start)}, {shown(end)})"


def _plain(value: object) -> str:
    # A short printable name or id as it is; anything else quoted and cut.
    if isinstance(value, int) and not isinstance(value, bool):
        return shown(value)
    if isinstance(value, str) and len(value) <= 40 and value.isprintable():
        return value
    return shown(value)


@dataclass(frozen=True, slots=True)
class BusyBlock:
    """Processors that are unavailable during ``[start, end)``.

    One mechanism models jobs already running when a window starts, advance
    reservations and downtimes.

    Parameters
    ----------
    start, end
        Half-open time interval, ``0 <= start <= end <= MAX_INTEGER``.
    size
        Number of processors taken, ``1 <= size <= MAX_INTEGER``.
    offset
        First processor of a contiguous range ``[offset, offset + size)``:
        required on a ``contiguous`` machine, refused on an ``any`` machine
        (there a block is a count of processors; see :class:`Machine`).
    label
        Free text: what the block stands for (``"job 1234"``, ``"downtime"``).
    """

    start: int
    end: int
    size: int
    offset: int | None = None
    label: str = ""

    def __post_init__(self) -> None:
        who = block_name(self.label, self.start, self.end)
        for name in ("start", "end", "size"):
            _require_int(who, name, getattr(self, name))
        if self.start < 0 or self.end < self.start:
            raise ValueError(
                f"{who}: interval [{shown(self.start)}, {shown(self.end)}) is invalid"
            )
        if self.size < 1:
            raise ValueError(f"{who}: size {shown(self.size)} must be at least 1")
        for name in ("end", "size"):
            _require_at_most(who, name, getattr(self, name))
        if self.offset is not None:
            _require_int(who, "offset", self.offset)
            if self.offset < 0:
                raise ValueError(f"{who}: offset {shown(self.offset)} is negative")
            _require_at_most(who, "offset", self.offset)

    @property
    def processors(self) -> range | None:
        """The processor indices taken, when the block has an offset."""
        if self.offset is None:
            return None
        return range(self.offset, self.offset + self.size)


@dataclass(frozen=True, slots=True)
class Machine:
    """A parallel machine of identical processors.

    Parameters
    ----------
    processors
        Number of processors ``m``, ``1 <= m <= MAX_INTEGER`` (``2**53``).
        Nothing is allocated per processor, so a huge ``m`` costs no memory.
    allocation
        ``"any"``: a job may use any free processors; ``"contiguous"``: a job
        needs a consecutive range of processor indices (strip packing).
    unavailable
        Fixed busy blocks. On a ``contiguous`` machine each block needs an
        offset; on an ``any`` machine a block is a processor count and has no
        offset.
    switch_cost, switch_cost_per_processor
        Context-switch cost of resuming a preempted job (seconds, integers
        ``>= 0``): a resumed piece of a job of ``q`` processors starts with
        ``switch_cost + switch_cost_per_processor * q`` seconds in which it
        holds its processors and does no work (:meth:`resume_cost`). The
        second form is the Cray T3D's, which switched context by writing the
        job's memory out (Feitelson and Jette 1996). Both 0: preemption is
        free.
    speeds
        One speed ``> 0`` per processor, or ``None`` (identical processors).
        With speeds, a rigid job's ``runtime`` and ``estimate`` are its
        work at speed 1 and its run time depends on its processors
        (:meth:`run_time`; :mod:`optsched.nodes`). A moldable job's modes
        keep their run times on speed-1 processors (a mode's work is
        ``processors * runtime``:
        :func:`optsched.topology.machines.mode_work`).
    nodes
        An SMP cluster (:class:`~optsched.nodes.Nodes`: nodes of ``cpus``
        processors, a span limit, a communication cost), or ``None``.
    calendar
        A site calendar (:class:`~optsched.calendar.Calendar`): the
        processors batch jobs may hold, and the largest job that may start,
        at each time of the week; checked at starts only. ``None``: the
        whole machine at all times.
    outages
        Intervals in which processors are down (:class:`BusyBlock`: count on
        an ``any`` machine, a range with an offset on a ``contiguous`` one).
        Unlike busy blocks they are not announced: the simulator learns of
        one when it starts, kills the jobs on the lost processors and
        requeues them from scratch (:mod:`optsched.heuristics.engine.core`); the
        offline models know them in advance, as busy blocks
        (:meth:`offline`).

    Notes
    -----
    A machine with speeds or nodes (not :attr:`flat`) takes no busy blocks
    and no contiguous allocation: which processors a job gets decides its
    run time there, and neither feature is defined on pinned ranges yet.

    Why blocks on ``any`` machines carry no offset: processors are
    interchangeable there, so the machine (or the scheduler) picks a block's
    processors when it starts. Then every start vector that respects the
    processor *count* (jobs plus blocks use at most ``m`` processors at every
    instant) admits a non-migrating assignment of processors to jobs and
    blocks together: greedy colouring of an interval graph in order of start
    times, blocks being intervals with a fixed start (see
    :mod:`optsched.packing`). Blocks pinned to given processors break this:
    on two processors, blocks pinned on processor 0 during ``[0, 1)`` and on
    processor 1 during ``[1, 2)`` leave one processor free at every instant
    but none for a one-processor job on ``[0, 2)``, so count-based models
    and checks would accept schedules that no processor assignment realises.
    :meth:`with_allocation` changes the allocation and drops or requires
    offsets accordingly.
    """

    processors: int
    allocation: str = "any"
    unavailable: tuple[BusyBlock, ...] = ()
    switch_cost: int = 0
    switch_cost_per_processor: int = 0
    speeds: tuple[float, ...] | None = None
    nodes: Nodes | None = None
    calendar: Calendar | None = None
    outages: tuple[BusyBlock, ...] = ()

    def __post_init__(self) -> None:
        for name in ("switch_cost", "switch_cost_per_processor"):
            value = getattr(self, name)
            _require_int("machine", name, value)
            if value < 0:
                raise ValueError(f"machine: {name} {shown(value)} must be >= 0")
            _require_at_most("machine", name, value)
        _require_int("machine", "processors", self.processors)
        if self.processors < 1:
            raise ValueError(
                f"machine: processors {shown(self.processors)} must be >= 1"
            )
        _require_at_most("machine", "processors", self.processors)
        if self.allocation not in ALLOCATIONS:
            raise ValueError(
                f"machine: allocation {shown(self.allocation)} is not one of "
                f"{', '.join(ALLOCATIONS)}"
            )
        object.__setattr__(self, "unavailable", tuple(self.unavailable))
        object.__setattr__(self, "outages", tuple(self.outages))
        for block in (*self.unavailable, *self.outages):
            self._validate_block(block)
        self._validate_block_capacity()
        self._validate_block_overlaps()
        self._validate_topology()
        if self.calendar is not None and not isinstance(self.calendar, Calendar):
            raise ValueError("machine: calendar must be a Calendar")

    def _validate_topology(self) -> None:
        if self.speeds is not None:
            object.__setattr__(self, "speeds", tuple(self.speeds))
            assert self.speeds is not None
            if len(self.speeds) != self.processors:
                raise ValueError(
                    f"machine: {len(self.speeds)} speeds for {self.processors} "
                    "processors (one speed per processor)"
                )
            for k, speed in enumerate(self.speeds):
                if (
                    isinstance(speed, bool)
                    or not isinstance(speed, int | float)
                    or not math.isfinite(speed)
                    or speed <= 0
                ):
                    raise ValueError(
                        f"machine: speed of processor {k} is {shown(speed)}; "
                        "speeds must be finite numbers > 0"
                    )
        if self.nodes is not None:
            if not isinstance(self.nodes, Nodes):
                raise ValueError("machine: nodes must be a Nodes")
            if self.nodes.processors != self.processors:
                raise ValueError(
                    f"machine: {self.nodes.count} nodes x {self.nodes.cpus} "
                    f"processors make {self.nodes.processors}, not the machine's "
                    f"{self.processors}"
                )
        if self.flat:
            return
        if self.processors > MAX_DETAILED_PROCESSORS:
            raise ValueError(
                f"machine: {self.processors} processors with speeds or SMP nodes; "
                f"at most {MAX_DETAILED_PROCESSORS} (one entry is kept per processor)"
            )
        if self.allocation != "any":
            raise ValueError(
                "machine: speeds and SMP nodes need allocation 'any' "
                "(a contiguous machine has neither)"
            )
        if self.unavailable or self.outages:
            raise ValueError(
                "machine: a machine with speeds or SMP nodes takes no busy "
                "blocks or outages (which processors a block holds would "
                "change run times)"
            )

    @property
    def flat(self) -> bool:
        """Identical processors, no SMP nodes: a job runs ``runtime`` seconds
        on any ``size`` processors."""
        return self.speeds is None and self.nodes is None

    def exact_speeds(self) -> tuple[Fraction, ...] | None:
        """The speeds as exact fractions (``None`` without speeds)."""
        if self.speeds is None:
            return None
        return tuple(exact(s) for s in self.speeds)

    def run_time(self, work: int, processors: Sequence[int]) -> int:
        """Seconds ``work`` takes on ``processors``:
        ``ceil(work / sum_{k in S} s_k * inflation(span))`` (``work`` on a
        flat machine; :mod:`optsched.nodes`)."""
        if self.flat:
            return work
        return ceiling(
            exact_run_time(work, processors, self.exact_speeds(), self.nodes)
        )

    def shortest_run_time(self, work: int, size: int) -> int:
        """A lower bound on the run time of ``work`` on any ``size``
        processors: the ``size`` fastest speeds, and the inflation of the
        fewest nodes ``ceil(size / cpus)`` (each minimised on its own, so
        the bound may be below every real placement's run time when both
        apply)."""
        if self.flat:
            return work
        time = Fraction(work)
        if self.speeds is not None:
            fastest = sorted(self.exact_speeds() or (), reverse=True)[:size]
            time /= sum(fastest, Fraction(0))
        if self.nodes is not None:
            time *= self.nodes.inflation(size, self.nodes.min_span(size))
        return ceiling(time)

    def _validate_block(self, block: BusyBlock) -> None:
        who = block_name(block.label, block.start, block.end)
        if block.size > self.processors:
            raise ValueError(
                f"{who}: size {block.size} exceeds machine processors {self.processors}"
            )
        if block.offset is not None and block.offset + block.size > self.processors:
            raise ValueError(
                f"{who}: processors [{block.offset}, {block.offset + block.size}) "
                f"exceed machine processors {self.processors}"
            )
        if self.allocation == "contiguous" and block.offset is None:
            raise ValueError(f"{who}: a contiguous machine needs block offsets")
        if self.allocation == "any" and block.offset is not None:
            raise ValueError(
                f"{who}: offset {block.offset} on an 'any' machine: blocks on "
                "'any' machines are processor counts; drop the offset or use "
                "allocation 'contiguous'"
            )

    def _validate_block_capacity(self) -> None:
        # Sweep: at equal times, ends (-size) sort before starts (+size).
        down = [b for b in (*self.unavailable, *self.outages) if b.end > b.start]
        events = sorted(
            [(b.start, b.size) for b in down] + [(b.end, -b.size) for b in down]
        )
        used = 0
        for time, delta in events:
            used += delta
            if used > self.processors:
                what = "busy blocks and outages" if self.outages else "busy blocks"
                raise ValueError(
                    f"machine: {what} use {used} processors at time {time}, "
                    f"more than {self.processors}"
                )

    def _validate_block_overlaps(self) -> None:
        # Blocks with offsets must not claim the same processor at the same
        # time; otherwise the checker would blame the schedule for it.
        placed = sorted(
            (
                b
                for b in (*self.unavailable, *self.outages)
                if b.offset is not None and b.end > b.start
            ),
            key=lambda b: b.start,
        )
        active: list[BusyBlock] = []
        for block in placed:
            active = [a for a in active if a.end > block.start]
            for other in active:
                assert block.offset is not None and other.offset is not None
                if (
                    block.offset < other.offset + other.size
                    and other.offset < block.offset + block.size
                ):
                    raise ValueError(
                        f"{block_name(block.label, block.start, block.end)}: "
                        f"shares processors with "
                        f"{block_name(other.label, other.start, other.end)} at "
                        f"time {block.start}"
                    )
            active.append(block)

    def offline(self) -> Machine:
        """This machine with its outages known in advance: busy blocks.

        What an offline model sees (a schedule valid on the machine, its lost
        attempts dropped, is valid on this one and conversely)."""
        if not self.outages:
            return self
        return dataclasses.replace(
            self, unavailable=(*self.unavailable, *self.outages), outages=()
        )

    def resume_cost(self, size: int) -> int:
        """Seconds a job of ``size`` processors pays each time it resumes."""
        return self.switch_cost + self.switch_cost_per_processor * size

    def replace(self, **changes: object) -> Machine:
        """Return a validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def with_allocation(self, allocation: str) -> Machine:
        """This machine with another allocation rule, its busy blocks adapted.

        To ``"any"``: every block keeps its interval, size and label and
        loses its offset (blocks are processor counts there). Nothing is
        lost for feasibility: a schedule valid on the contiguous machine
        stays valid, since the count rule only forgets where the blocks sit.
        To ``"contiguous"``: every block needs an offset, which blocks on an
        ``any`` machine never have, so a machine with busy blocks is refused
        (``ValueError`` naming the first block): choose their processor
        ranges first. Outages of the whole machine get offset 0; others are
        refused like blocks. The same allocation returns ``self``.
        """
        if allocation == self.allocation:
            return self
        blocks, outages = self.unavailable, self.outages
        if allocation == "any":
            blocks, outages = (
                tuple(
                    dataclasses.replace(b, offset=None) if b.offset is not None else b
                    for b in group
                )
                for group in (blocks, outages)
            )
        else:  # an outage of the whole machine takes every range
            outages = tuple(
                dataclasses.replace(o, offset=0)
                if o.offset is None and o.size == self.processors
                else o
                for o in outages
            )
        return dataclasses.replace(
            self, allocation=allocation, unavailable=blocks, outages=outages
        )


@dataclass(frozen=True, slots=True)
class Window:
    """How an instance was cut from a trace.

    ``first_job``/``jobs`` select by position (0-based, submit order, after
    skipped jobs are removed); ``start``/``end`` select by submit time.
    ``shift`` is the time subtracted from the trace's submit times so that the
    window starts at 0. ``initial_state`` is ``none`` or ``recorded``.
    """

    first_job: int | None = None
    jobs: int | None = None
    start: int | None = None
    end: int | None = None
    shift: int = 0
    initial_state: str = "none"


@dataclass(frozen=True, slots=True)
class Source:
    """Provenance of an instance: file, its sha256, format and window."""

    file: str | None = None
    sha256: str | None = None
    format: str | None = None
    window: Window | None = None


@dataclass(frozen=True, slots=True)
class Instance:
    """A machine and a set of jobs to schedule on it.

    Validation: job ids are unique and every job fits on the machine.
    """

    machine: Machine
    jobs: tuple[Job, ...]
    name: str = ""
    source: Source = field(default_factory=Source)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        seen: set[int] = set()
        for job in self.jobs:
            if job.id in seen:
                raise ValueError(f"job {job.id}: duplicate job id")
            seen.add(job.id)
            if job.size > self.machine.processors:
                raise ValueError(
                    f"job {job.id}: size {job.size} exceeds machine processors "
                    f"{self.machine.processors}"
                )
            if job.modes and job.modes[-1].processors > self.machine.processors:
                raise ValueError(
                    f"job {job.id}: mode on {job.modes[-1].processors} processors "
                    f"exceeds machine processors {self.machine.processors}"
                )
            if job.malleable and not self.machine.flat:
                raise ValueError(
                    f"job {job.id}: malleable jobs are not supported on a machine "
                    "with speeds or SMP nodes (a job there runs in one piece)"
                )

    @property
    def processors(self) -> int:
        """Number of processors of the machine."""
        return self.machine.processors

    @property
    def moldable(self) -> bool:
        """Whether some job has modes (moldable or malleable)."""
        return any(job.modes for job in self.jobs)

    @property
    def malleable(self) -> bool:
        """Whether some job is malleable."""
        return any(job.malleable for job in self.jobs)

    def rigid(self) -> Instance:
        """Every job fixed to its requested mode (``self`` when all are rigid)."""
        if not self.moldable:
            return self
        return self.with_jobs(job.rigid() for job in self.jobs)

    def job(self, job_id: int) -> Job:
        """The job with this id (``KeyError`` if absent)."""
        return self.jobs_by_id()[job_id]

    def jobs_by_id(self) -> dict[int, Job]:
        """A fresh ``{id: job}`` dictionary."""
        return {job.id: job for job in self.jobs}

    def replace(self, **changes: object) -> Instance:
        """Return a validated copy with some fields changed."""
        if "jobs" in changes and not isinstance(changes["jobs"], tuple):
            changes["jobs"] = tuple(changes["jobs"])  # type: ignore[arg-type]
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def with_jobs(self, jobs: Iterable[Job]) -> Instance:
        """Return a copy with another job set."""
        return self.replace(jobs=tuple(jobs))
