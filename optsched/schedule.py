"""Schedules: where and when each job runs."""

from __future__ import annotations

import bisect
import heapq
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, pairwise
from types import MappingProxyType
from typing import overload

from optsched.instance import MAX_INTEGER

MAX_TIME = MAX_INTEGER
"""Largest absolute time (and job id) a schedule may hold: the core limit on
the integers of an instance (times and sizes), so that sums of times stay
exact in a float and no value is cut to 64 bits by a solver or a database."""
MAX_PROCESSOR = MAX_INTEGER
"""Largest processor index a schedule may name: machine sizes have the same
limit, so an index above it can never be valid and is refused as malformed
input rather than judged by the checker."""

HASHED_AS_TUPLE = 1 << 20
"""Processor sets up to this size hash as the tuple they equal."""


class ProcessorLimitError(ValueError):
    """A processor index above :data:`MAX_PROCESSOR`."""


def _format_runs(runs: Iterable[tuple[int, int]]) -> str:
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _runs_of(processors: Iterable[int]) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of a sorted sequence; repeats stay repeated.

    ``(0, 1, 2, 2, 3)`` -> ``[(0, 2), (2, 3)]``: the runs, concatenated, give
    the sequence back.
    """
    runs: list[tuple[int, int]] = []
    for p in processors:
        if runs and p == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    return runs


def merged_runs(processors: Sequence[int]) -> list[tuple[int, int]]:
    """The distinct indices of ``processors`` as disjoint sorted runs.

    Costs the number of runs of a :class:`ProcessorSet`, not the number of
    processors it names, so checking a range of 10**9 processors is cheap.
    """
    if isinstance(processors, ProcessorSet):
        return processors.merged()
    runs: list[tuple[int, int]] = []
    ordered = sorted(processors)  # linear on a Placement's sorted tuple
    if not ordered:
        return runs
    first = last = ordered[0]
    for p in ordered:
        if p > last + 1:
            runs.append((first, last))
            first = p
        last = p  # p == last repeats an index: the run does not grow
    runs.append((first, last))
    return runs


class ProcessorSet(Sequence[int]):
    """Sorted processor indices stored as inclusive intervals.

    What the schedule readers build from ``"0-3 7"``: the memory is the
    number of intervals written, never the width of a range, so
    ``"0-3000000000"`` is two integers. It behaves as the sorted tuple it
    stands for (length, iteration, indexing, ``in``, equality and hash with
    that tuple), and :func:`merged_runs` gives the checker its intervals
    without expanding them. Repeated indices (``"0-3 2"``) are kept, as
    in the tuple, so that the checker can report them.

    Parameters
    ----------
    runs
        ``(first, last)`` pairs, ``0 <= first <= last``, in any order.
    """

    __slots__ = ("_disjoint", "_hash", "_offsets", "_runs", "_starts")

    def __init__(self, runs: Iterable[tuple[int, int]]) -> None:
        ordered: list[tuple[int, int]] = []
        for first, last in sorted(runs):
            if first < 0 or last < first:
                raise ValueError(f"bad processor range {first}-{last}")
            if ordered and first == ordered[-1][1] + 1:
                # Adjacent runs merge, so that equal sets have equal runs.
                ordered[-1] = (ordered[-1][0], last)
            else:
                ordered.append((first, last))
        self._runs = tuple(ordered)
        self._disjoint = all(a[1] < b[0] for a, b in pairwise(ordered))
        offsets, total = [], 0
        for first, last in ordered:
            offsets.append(total)
            total += last - first + 1
        offsets.append(total)
        self._starts = [first for first, _ in ordered]
        self._offsets = offsets
        self._hash: int | None = None

    @classmethod
    def of(cls, processors: Iterable[int]) -> ProcessorSet:
        """The set of an explicit collection of indices."""
        return cls(_runs_of(sorted(processors)))

    @property
    def runs(self) -> tuple[tuple[int, int], ...]:
        """The intervals, sorted; they overlap where an index is repeated."""
        return self._runs

    def merged(self) -> list[tuple[int, int]]:
        """The distinct indices as disjoint sorted runs."""
        if self._disjoint:
            return list(self._runs)
        out: list[tuple[int, int]] = []
        for first, last in self._runs:
            if out and first <= out[-1][1] + 1:
                out[-1] = (out[-1][0], max(out[-1][1], last))
            else:
                out.append((first, last))
        return out

    def __len__(self) -> int:
        return self._offsets[-1]

    def __iter__(self) -> Iterator[int]:
        ranges = (range(first, last + 1) for first, last in self._runs)
        if self._disjoint:
            return chain.from_iterable(ranges)
        return heapq.merge(*ranges)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...

    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        if isinstance(index, slice):
            # Element by element: costs the slice, not the set.
            return tuple(self[i] for i in range(*index.indices(len(self))))
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("processor index out of range")
        if not self._disjoint:
            return self._nth_repeated(index)
        k = bisect.bisect_right(self._offsets, index) - 1
        return self._runs[k][0] + index - self._offsets[k]

    def _nth_repeated(self, index: int) -> int:
        """Element ``index`` when runs overlap: the least ``v`` with more than
        ``index`` elements ``<= v``, by bisection on values."""
        low, high = self._runs[0][0], max(last for _, last in self._runs)
        while low < high:
            middle = (low + high) // 2
            at_most = sum(
                min(last, middle) - first + 1
                for first, last in self._runs
                if first <= middle
            )
            if at_most > index:
                high = middle
            else:
                low = middle + 1
        return low

    def _profile(self) -> list[tuple[int, int, int]]:
        """``(first, last, times)`` pieces: how often each index is listed.

        Canonical (pieces merged where the count is the same), so that two
        sets are equal exactly when their profiles are.
        """
        if self._disjoint:
            return [(first, last, 1) for first, last in self._runs]
        changes: dict[int, int] = {}
        for first, last in self._runs:
            changes[first] = changes.get(first, 0) + 1
            changes[last + 1] = changes.get(last + 1, 0) - 1
        pieces: list[tuple[int, int, int]] = []
        times = 0
        points = sorted(changes)
        for here, after in pairwise(points):
            times += changes[here]
            if not times:
                continue
            if pieces and pieces[-1][1] == here - 1 and pieces[-1][2] == times:
                pieces[-1] = (pieces[-1][0], after - 1, times)
            else:
                pieces.append((here, after - 1, times))
        return pieces

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        return any(first <= value <= last for first, last in self._near(value))

    def _near(self, value: int) -> tuple[tuple[int, int], ...]:
        if not self._disjoint:
            return self._runs
        k = bisect.bisect_right(self._starts, value) - 1
        return self._runs[k : k + 1] if k >= 0 else ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ProcessorSet):
            return len(self) == len(other) and self._profile() == other._profile()
        if isinstance(other, tuple):
            # A tuple holds its elements: walking both costs what it holds.
            return len(self) == len(other) and all(map(operator.eq, self, other))
        return NotImplemented

    def __hash__(self) -> int:
        # The hash of the tuple it equals, up to HASHED_AS_TUPLE elements;
        # beyond, the profile's, so that hashing never expands a huge range
        # (no tuple that large is built: schedules of such machines come
        # from files, hence as ProcessorSets).
        if self._hash is None:
            if len(self) <= HASHED_AS_TUPLE:
                self._hash = hash(tuple(self))
            else:
                self._hash = hash(tuple(self._profile()))
        return self._hash

    def __repr__(self) -> str:
        return f"ProcessorSet({_format_runs(self._runs)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (ProcessorSet, (self._runs,))


def format_processors(processors: Iterable[int] | None) -> str:
    """Processor set as Batsim-style intervals: ``(0, 1, 2, 5)`` -> ``"0-2 5"``."""
    if processors is None:
        return ""
    if isinstance(processors, ProcessorSet):
        return _format_runs(processors.runs)
    return _format_runs(_runs_of(sorted(processors)))


def parse_processors(text: str) -> ProcessorSet | None:
    """Inverse of :func:`format_processors`; ``""`` gives ``None``.

    The result keeps the intervals (a :class:`ProcessorSet`): its memory is
    the length of ``text``, whatever the width of the ranges. Raises
    ``ValueError`` on malformed text and on indices above
    :data:`MAX_PROCESSOR`.
    """
    text = text.strip()
    if not text:
        return None
    runs: list[tuple[int, int]] = []
    for part in text.split():
        lo, sep, hi = part.partition("-")
        first, last = _index(lo, part), _index(hi, part) if sep else _index(lo, part)
        if last < first:
            raise ValueError(f"bad processor range {part!r}")
        runs.append((first, last))
    return ProcessorSet(runs)


def _index(text: str, part: str) -> int:
    # Digits only: int() would also take "+1", "1_000" and " 1".
    if not text.isascii() or not text.isdigit() or len(text) > 20:
        raise ValueError(f"bad processor range {part!r}")
    value = int(text)
    if value > MAX_PROCESSOR:
        raise ProcessorLimitError(f"processor {value} above the limit {MAX_PROCESSOR}")
    return value


Moves = tuple[tuple[int, Sequence[int]], ...]


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
        moves.append((parse_time(time), parsed))
    return tuple(moves)


_TIME = re.compile(r"[+-]?[0-9]{1,20}")


def parse_time(text: str) -> int:
    """An integer time in ``[-MAX_TIME, MAX_TIME]``; ``ValueError`` otherwise.

    The digits are counted before ``int()``, which would spend time on (or
    refuse) a number of thousands of digits.
    """
    text = text.strip()
    if not _TIME.fullmatch(text):
        raise ValueError(f"bad time {text[:30]!r}")
    value = int(text)
    if abs(value) > MAX_TIME:
        raise ValueError(f"time {value} beyond the limit {MAX_TIME}")
    return value


def _sorted(processors: Iterable[int]) -> Sequence[int]:
    # A ProcessorSet is sorted already; expanding it would undo its purpose.
    if isinstance(processors, ProcessorSet):
        return processors
    return tuple(sorted(processors))


@dataclass(frozen=True, slots=True)
class Piece:
    """One stretch of a preempted job: ``[start, end)`` on ``processors``.

    ``switch`` is the context-switch cost paid at the start of the piece
    (seconds, ``0 <= switch <= end - start``): the job holds its processors
    but does no work during ``[start, start + switch)``. The first piece of
    a job has no switch cost; a resumed one pays the machine's
    (:attr:`optsched.instance.Machine.switch_cost`). The piece's work is
    ``end - start - switch``.
    """

    start: int
    end: int
    processors: Sequence[int] | None = None
    switch: int = 0

    def __post_init__(self) -> None:
        for name in ("start", "end", "switch"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"piece: {name} must be an integer, got {value!r}")
        if self.processors is not None:
            object.__setattr__(self, "processors", _sorted(self.processors))

    @property
    def work(self) -> int:
        """``end - start - switch``: the job's progress during the piece."""
        return self.end - self.start - self.switch


@dataclass(frozen=True, slots=True)
class Placement:
    """When and where one job runs: ``[start, end)`` on ``processors``.

    ``processors`` is a sorted tuple of processor indices (a
    :class:`ProcessorSet` when read from a file: the same sequence, kept as
    intervals), or ``None`` when a producer only counts processors. On a
    contiguous machine the indices must be consecutive; :attr:`offset` is
    then the first one.

    ``moves`` records migrations (the simulator's compaction of a
    contiguous machine): ``(time, processors)`` pairs, times increasing and
    inside ``(start, end)``; from ``time`` on the job runs on the new
    processors, and ``processors`` is where it started. Empty for a job
    that never moves; :meth:`segments` gives the pieces.

    ``pieces`` describes a preempted job (:class:`Piece`, in time order):
    it runs only during its pieces, possibly on other processors in each,
    and its work is the sum of theirs. ``start`` is then the start of the
    first piece, ``end`` the end of the last (what every metric uses:
    ``C_j`` is the end of the last piece) and ``processors`` those of the
    first; :meth:`of_pieces` builds such a placement. A placement has
    ``moves`` or ``pieces``, not both (a migration without a pause is two
    pieces without a gap).
    """

    start: int
    end: int
    processors: Sequence[int] | None = None
    moves: Moves = ()
    pieces: tuple[Piece, ...] = ()

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"placement: {name} must be an integer, got {value!r}")
        if self.processors is not None:
            object.__setattr__(self, "processors", _sorted(self.processors))
        if self.moves:
            object.__setattr__(
                self,
                "moves",
                tuple((time, _sorted(procs)) for time, procs in self.moves),
            )
        if self.pieces:
            self._validate_pieces()

    def _validate_pieces(self) -> None:
        pieces = tuple(self.pieces)
        object.__setattr__(self, "pieces", pieces)
        if not all(isinstance(piece, Piece) for piece in pieces):
            raise ValueError("placement: pieces must be Piece objects")
        if self.moves:
            raise ValueError("placement: give moves or pieces, not both")
        first, last = pieces[0], pieces[-1]
        if (self.start, self.end) != (first.start, last.end):
            raise ValueError(
                f"placement: [{self.start}, {self.end}) is not the span "
                f"[{first.start}, {last.end}) of its pieces"
            )
        if self.processors != first.processors:
            raise ValueError("placement: processors are not those of the first piece")

    @classmethod
    def of_pieces(cls, pieces: Iterable[Piece]) -> Placement:
        """The placement of a job preempted into ``pieces`` (time order).

        One piece gives a plain placement (no ``pieces``), so that a job
        that was never interrupted looks the same whoever scheduled it.
        """
        pieces = tuple(pieces)
        if not pieces:
            raise ValueError("placement: a job needs at least one piece")
        first = pieces[0]
        if len(pieces) == 1 and first.switch == 0:
            return cls(first.start, first.end, first.processors)
        return cls(first.start, pieces[-1].end, first.processors, pieces=pieces)

    def segments(self) -> tuple[tuple[int, int, Sequence[int] | None], ...]:
        """``(start, end, processors)`` of each stretch on one processor set.

        For a preempted job, its pieces (the gaps between them hold no
        processor); for a migrating one, the stretches between moves.
        """
        if self.pieces:
            return tuple((p.start, p.end, p.processors) for p in self.pieces)
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
        """``end - start``: from the first start to the last end."""
        return self.end - self.start

    @property
    def held(self) -> int:
        """Time the job holds processors: the sum of its pieces' lengths
        (``end - start`` when it was never preempted)."""
        if not self.pieces:
            return self.end - self.start
        return sum(p.end - p.start for p in self.pieces)

    @property
    def work(self) -> int:
        """Time the job computes: :attr:`held` minus the switch costs."""
        if not self.pieces:
            return self.end - self.start
        return sum(p.work for p in self.pieces)

    @property
    def switch_cost(self) -> int:
        """Seconds of context switches paid (the sum over the pieces)."""
        return sum(p.switch for p in self.pieces)


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
    lost
        ``{job id: attempts}``: the runs of a job killed by a machine outage
        (:attr:`optsched.instance.Machine.outages`) before the run in
        ``placements``, which is its complete one. Each attempt is a
        :class:`Placement` that ended when an outage took its processors:
        it held them (the checker counts it) but its work was lost, so no
        metric counts it as work.
    """

    placements: Mapping[int, Placement]
    producer: str = ""
    killed: frozenset[int] = field(default_factory=frozenset)
    lost: Mapping[int, tuple[Placement, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "placements", MappingProxyType(dict(self.placements)))
        object.__setattr__(self, "killed", frozenset(self.killed))
        object.__setattr__(
            self,
            "lost",
            MappingProxyType({j: tuple(runs) for j, runs in self.lost.items() if runs}),
        )

    def __reduce__(self) -> tuple[object, ...]:
        # The placements are a read-only mappingproxy, which pickle cannot
        # copy; schedules cross process borders (solver incumbents sent to
        # pool workers), so they pickle as a plain dict.
        return (
            Schedule,
            (dict(self.placements), self.producer, self.killed, dict(self.lost)),
        )

    def without_lost(self) -> Schedule:
        """The schedule without its lost attempts: what it is on the machine
        whose outages are known in advance
        (:meth:`optsched.instance.Machine.offline`)."""
        if not self.lost:
            return self
        return Schedule(self.placements, self.producer, self.killed)

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
            and dict(self.lost) == dict(other.lost)
        )

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.placements.items())), self.producer))

    def refuse_lost(self, format_name: str) -> None:
        """Raise ``ValueError`` when the schedule records runs killed by
        outages (:attr:`lost`): for the writers of formats without them."""
        if self.lost:
            first = min(self.lost)
            raise ValueError(
                f"the {format_name} format cannot record runs killed by outages "
                f"(job {first} lost {len(self.lost[first])}); write json"
            )

    def refuse_pieces(self, format_name: str) -> None:
        """Raise ``ValueError`` when some job runs in pieces: for the writers
        of formats that cannot record preemption (Batsim, SWF)."""
        pieced = sorted(j for j, p in self.placements.items() if p.pieces)
        if pieced:
            raise ValueError(
                f"the {format_name} format cannot record a preempted job (job "
                f"{pieced[0]} runs in {len(self.placements[pieced[0]].pieces)} "
                "pieces); write csv or json"
            )
