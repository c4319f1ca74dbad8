"""Schedules: where and when each job runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


def _format_ranges(processors: tuple[int, ...]) -> str:
    parts: list[str] = []
    run_start = prev = None
    for p in processors:
        if prev is not None and p == prev + 1:
            prev = p
            continue
        if run_start is not None:
            parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
        run_start = prev = p
    if run_start is not None:
        parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
    return " ".join(parts)


def format_processors(processors: Iterable[int] | None) -> str:
    """Processor set as Batsim-style intervals: ``(0, 1, 2, 5)`` -> ``"0-2 5"``."""
    if processors is None:
        return ""
    return _format_ranges(tuple(sorted(processors)))


def parse_processors(text: str) -> tuple[int, ...] | None:
    """Inverse of :func:`format_processors`; ``""`` gives ``None``.

    Raises ``ValueError`` on malformed text.
    """
    text = text.strip()
    if not text:
        return None
    result: list[int] = []
    for part in text.split():
        lo, sep, hi = part.partition("-")
        first, last = int(lo), int(hi) if sep else int(lo)
        if first < 0 or last < first:
            raise ValueError(f"bad processor range {part!r}")
        result.extend(range(first, last + 1))
    return tuple(result)


Moves = tuple[tuple[int, tuple[int, ...]], ...]


def format_moves(moves: Moves) -> str:
    """Migrations as text.

    ``((120, (0, 1)), (300, (4, 5)))`` -> ``"120:0-1;300:4-5"``.
    """
    return ";".join(f"{time}:{format_processors(procs)}" for time, procs in moves)


def parse_moves(text: str) -> Moves:
    """Inverse of :func:`format_moves`; ``""`` gives ``()``.

    Raises ``ValueError`` on malformed text.
    """
    text = text.strip()
    if not text:
        return ()
    moves = []
    for part in text.split(";"):
        time, colon, procs = part.partition(":")
        parsed = parse_processors(procs)
        if not colon or parsed is None:
            raise ValueError(f"bad move {part!r}: expected TIME:PROCESSORS")
        moves.append((int(time), parsed))
    return tuple(moves)


@dataclass(frozen=True, slots=True)
class Placement:
    """When and where one job runs: ``[start, end)`` on ``processors``.

    ``processors`` is a sorted tuple of processor indices, or ``None`` when a
    producer only counts processors. On a contiguous machine the indices
    must be consecutive; :attr:`offset` is then the first one.

    ``moves`` records migrations (the simulator's compaction of a
    contiguous machine): ``(time, processors)`` pairs, times increasing and
    inside ``(start, end)``; from ``time`` on the job runs on the new
    processors, and ``processors`` is where it started. Empty for a job
    that never moves; :meth:`segments` gives the pieces.
    """

    start: int
    end: int
    processors: tuple[int, ...] | None = None
    moves: tuple[tuple[int, tuple[int, ...]], ...] = ()

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"placement: {name} must be an integer, got {value!r}")
        if self.processors is not None:
            object.__setattr__(self, "processors", tuple(sorted(self.processors)))
        if self.moves:
            object.__setattr__(
                self,
                "moves",
                tuple((time, tuple(sorted(procs))) for time, procs in self.moves),
            )

    def segments(self) -> tuple[tuple[int, int, tuple[int, ...] | None], ...]:
        """``(start, end, processors)`` of each stretch on one processor set."""
        if not self.moves:
            return ((self.start, self.end, self.processors),)
        out = []
        since, procs = self.start, self.processors
        for time, new in self.moves:
            out.append((since, time, procs))
            since, procs = time, new
        out.append((since, self.end, procs))
        return tuple(out)

    @classmethod
    def contiguous(cls, start: int, end: int, offset: int, size: int) -> Placement:
        """Placement on processors ``[offset, offset + size)``."""
        return cls(start, end, tuple(range(offset, offset + size)))

    @property
    def offset(self) -> int | None:
        """Lowest processor index, if processors are known."""
        return self.processors[0] if self.processors else None

    @property
    def duration(self) -> int:
        """``end - start``."""
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Schedule:
    """Placements by job id, plus who made the schedule.

    Parameters
    ----------
    placements
        ``{job id: Placement}``.
    producer
        Free text naming the policy or solver, e.g. ``"easy"`` or
        ``"cpsat"``.
    killed
        Ids of jobs stopped at their estimate (runtime > estimate); the
        checker then expects ``end - start == estimate``.
    """

    placements: Mapping[int, Placement]
    producer: str = ""
    killed: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        object.__setattr__(self, "placements", MappingProxyType(dict(self.placements)))
        object.__setattr__(self, "killed", frozenset(self.killed))

    def __reduce__(self) -> tuple[object, ...]:
        # The placements are a read-only mappingproxy, which pickle cannot
        # copy; schedules cross process borders (solver incumbents sent to
        # pool workers), so they pickle as a plain dict.
        return (Schedule, (dict(self.placements), self.producer, self.killed))

    def __len__(self) -> int:
        return len(self.placements)

    def __getitem__(self, job_id: int) -> Placement:
        return self.placements[job_id]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schedule):
            return NotImplemented
        return (
            dict(self.placements) == dict(other.placements)
            and self.producer == other.producer
            and self.killed == other.killed
        )

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.placements.items())), self.producer))
