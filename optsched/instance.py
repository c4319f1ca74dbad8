"""Core problem types: jobs, machines with busy blocks, instances.

All types are frozen dataclasses validated on construction. Time is integer
seconds and intervals are half-open ``[start, end)``: a job ending at ``t``
frees its processors for a job starting at ``t``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Allocation = Literal["any", "contiguous"]
ALLOCATIONS: tuple[str, ...] = ("any", "contiguous")


def _require_int(owner: str, name: str, value: object) -> None:
    # bool is an int subclass; a True size is almost surely a bug upstream.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{owner}: {name} must be an integer, got {value!r}")


@dataclass(frozen=True, slots=True)
class Job:
    """A rigid parallel job.

    Parameters
    ----------
    id
        Job number, unique within an instance (the SWF job number for traces).
    release
        Submit time in seconds, ``>= 0``.
    size
        Processors used for the whole run, ``>= 1``.
    runtime
        Actual run time in seconds, ``>= 0``.
    estimate
        Requested wall time the schedulers see; defaults to ``runtime``.
    weight
        Weight in weighted objectives, ``> 0``.
    wait
        Recorded wait time in the trace (SWF field 3), when known.

    The remaining fields are SWF extras kept for provenance and filtering;
    ``None`` means missing (``-1`` in SWF).
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

    def __post_init__(self) -> None:
        who = f"job {self.id}"
        for name in ("id", "release", "size", "runtime"):
            _require_int(who, name, getattr(self, name))
        if self.release < 0:
            raise ValueError(f"{who}: release {self.release} is negative")
        if self.size < 1:
            raise ValueError(f"{who}: size {self.size} must be at least 1")
        if self.runtime < 0:
            raise ValueError(f"{who}: runtime {self.runtime} is negative")
        if self.estimate is None:
            object.__setattr__(self, "estimate", self.runtime)
        else:
            _require_int(who, "estimate", self.estimate)
            if self.estimate < 0:
                raise ValueError(f"{who}: estimate {self.estimate} is negative")
        if not isinstance(self.weight, int | float) or isinstance(self.weight, bool):
            raise ValueError(f"{who}: weight must be a number, got {self.weight!r}")
        # NaN fails "> 0"; infinity would poison every weighted objective.
        if not 0 < self.weight < math.inf:
            raise ValueError(f"{who}: weight {self.weight} must be positive and finite")

    @property
    def requested(self) -> int:
        """The estimate as an ``int`` (never ``None`` after validation)."""
        assert self.estimate is not None
        return self.estimate

    @property
    def area(self) -> int:
        """``size * runtime``, the processor-seconds the job consumes."""
        return self.size * self.runtime

    def replace(self, **changes: object) -> Job:
        """Return a validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class BusyBlock:
    """Processors that are unavailable during ``[start, end)``.

    One mechanism models jobs already running when a window starts, advance
    reservations and downtimes.

    Parameters
    ----------
    start, end
        Half-open time interval, ``0 <= start <= end``.
    size
        Number of processors taken.
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
        who = f"busy block {self.label or (self.start, self.end)}"
        for name in ("start", "end", "size"):
            _require_int(who, name, getattr(self, name))
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"{who}: interval [{self.start}, {self.end}) is invalid")
        if self.size < 1:
            raise ValueError(f"{who}: size {self.size} must be at least 1")
        if self.offset is not None:
            _require_int(who, "offset", self.offset)
            if self.offset < 0:
                raise ValueError(f"{who}: offset {self.offset} is negative")

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
        Number of processors ``m``.
    allocation
        ``"any"``: a job may use any free processors; ``"contiguous"``: a job
        needs a consecutive range of processor indices (strip packing).
    unavailable
        Fixed busy blocks. On a ``contiguous`` machine each block needs an
        offset; on an ``any`` machine a block is a processor count and has no
        offset.

    Notes
    -----
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

    def __post_init__(self) -> None:
        _require_int("machine", "processors", self.processors)
        if self.processors < 1:
            raise ValueError(f"machine: processors {self.processors} must be >= 1")
        if self.allocation not in ALLOCATIONS:
            raise ValueError(
                f"machine: allocation {self.allocation!r} is not one of "
                f"{', '.join(ALLOCATIONS)}"
            )
        object.__setattr__(self, "unavailable", tuple(self.unavailable))
        for block in self.unavailable:
            self._validate_block(block)
        self._validate_block_capacity()
        self._validate_block_overlaps()

    def _validate_block(self, block: BusyBlock) -> None:
        who = f"busy block {block.label or (block.start, block.end)}"
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
        events = sorted(
            [(b.start, b.size) for b in self.unavailable if b.end > b.start]
            + [(b.end, -b.size) for b in self.unavailable if b.end > b.start]
        )
        used = 0
        for time, delta in events:
            used += delta
            if used > self.processors:
                raise ValueError(
                    f"machine: busy blocks use {used} processors at time {time}, "
                    f"more than {self.processors}"
                )

    def _validate_block_overlaps(self) -> None:
        # Blocks with offsets must not claim the same processor at the same
        # time; otherwise the checker would blame the schedule for it.
        placed = sorted(
            (b for b in self.unavailable if b.offset is not None and b.end > b.start),
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
                        f"busy block {block.label or (block.start, block.end)}: "
                        f"shares processors with busy block "
                        f"{other.label or (other.start, other.end)} at time "
                        f"{block.start}"
                    )
            active.append(block)

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
        ranges first. The same allocation returns ``self``.
        """
        if allocation == self.allocation:
            return self
        blocks = self.unavailable
        if allocation == "any":
            blocks = tuple(
                dataclasses.replace(b, offset=None) if b.offset is not None else b
                for b in blocks
            )
        return dataclasses.replace(self, allocation=allocation, unavailable=blocks)


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

    @property
    def processors(self) -> int:
        """Number of processors of the machine."""
        return self.machine.processors

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
