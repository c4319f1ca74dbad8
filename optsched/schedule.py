"""Schedules: where and when each job runs."""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import (
    ItemsView,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
    ValuesView,
)
from dataclasses import dataclass, field
from types import MappingProxyType

from optsched.instance import MAX_INTEGER

# The processor-set vocabulary lives in optsched.intervals; these names stay
# importable from here, where schedules have always offered them.
from optsched.intervals import (
    HASHED_AS_TUPLE,
    MAX_PROCESSOR,
    ProcessorLimitError,
    ProcessorSet,
    RunColumns,
    format_processors,
    merged_runs,
    parse_processors,
)

MAX_TIME = MAX_INTEGER
"""Largest absolute time (and job id) a schedule may hold: the core limit on
the integers of an instance (times and sizes), so that sums of times stay
exact in a float and no value is cut to 64 bits by a solver or a database."""

__all__ = [
    "HASHED_AS_TUPLE",
    "MAX_PROCESSOR",
    "MAX_TIME",
    "Moves",
    "Piece",
    "Placement",
    "PlacementColumns",
    "ProcessorLimitError",
    "ProcessorSet",
    "Schedule",
    "format_moves",
    "format_processors",
    "merged_runs",
    "parse_moves",
    "parse_processors",
    "parse_time",
]


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


def _unchecked_placement(start: int, end: int, processors: Sequence[int]) -> Placement:
    # Placements a producer built from integers and sorted processor sets
    # (the simulator's columns): validating 450k of them would cost a third
    # of a KTH run. Only the fields given here differ from the defaults.
    placement = object.__new__(Placement)
    object.__setattr__(placement, "start", start)
    object.__setattr__(placement, "end", end)
    object.__setattr__(placement, "processors", processors)
    object.__setattr__(placement, "moves", ())
    object.__setattr__(placement, "pieces", ())
    return placement


class PlacementColumns(Mapping[int, Placement]):
    """Placements by job id, stored column-wise.

    What a simulation of hundreds of thousands of jobs returns: job ids,
    starts and ends in ``array('q')`` columns, processor sets as their runs
    (:class:`~optsched.intervals.RunColumns`), tens of bytes per job where
    a :class:`Placement` with its tuple costs a kilobyte. Each
    :class:`Placement` is built when asked for, with the values and types a
    dictionary of placements would hold (processors a tuple, or a
    :class:`~optsched.schedule.ProcessorSet` beyond
    :data:`~optsched.intervals.EXPAND_LIMIT` indices); iteration follows the
    order given. Placements that are more than ``[start, end)`` on one set
    (migrations) are kept whole in ``special``.

    Parameters
    ----------
    ids, starts, ends
        One entry per job (integers within ``int64``); ids distinct.
    processors
        Set ``k`` is job ``k``'s processors (ignored for a special job).
    special
        ``{job id: Placement}`` of the jobs whose placement has moves.
    """

    __slots__ = (
        "_ends",
        "_ids",
        "_intervals",
        "_order",
        "_processors",
        "_sorted",
        "_special",
        "_starts",
    )

    def __init__(
        self,
        ids: Iterable[int],
        starts: Iterable[int],
        ends: Iterable[int],
        processors: RunColumns,
        special: Mapping[int, Placement] | None = None,
    ) -> None:
        self._ids, self._starts, self._ends = (
            column if isinstance(column, array) else array("q", column)
            for column in (ids, starts, ends)
        )
        self._processors = processors
        self._special = dict(special or {})
        lengths = {len(self._ids), len(self._starts), len(self._ends), len(processors)}
        if len(lengths) > 1:
            raise ValueError("placement columns differ in length")
        self._sorted, self._order = _lookup(self._ids)
        self._intervals = False

    def _position(self, job_id: object) -> int:
        """Index of ``job_id`` in the columns, ``-1`` when absent."""
        if not isinstance(job_id, int):
            return -1
        k = bisect.bisect_left(self._sorted, job_id)
        if k == len(self._sorted) or self._sorted[k] != job_id:
            return -1
        return k if self._order is None else self._order[k]

    def _at(self, k: int) -> Placement:
        if self._special:
            found = self._special.get(self._ids[k])
            if found is not None:
                return found
        sets = self._processors
        processors = sets.intervals(k) if self._intervals else sets[k]
        return _unchecked_placement(self._starts[k], self._ends[k], processors)

    def as_intervals(self) -> PlacementColumns:
        """The same placements, each processor set a
        :class:`~optsched.schedule.ProcessorSet` of its runs (equal to, and
        hashed as, the tuple; never expanded): for readers that judge sets
        on their intervals, such as the checker. Shares the columns."""
        view = object.__new__(PlacementColumns)
        for name in PlacementColumns.__slots__:
            setattr(view, name, getattr(self, name))
        view._intervals = True
        return view

    def __getitem__(self, job_id: int) -> Placement:
        k = self._position(job_id)
        if k < 0:
            raise KeyError(job_id)
        return self._at(k)

    def __contains__(self, job_id: object) -> bool:
        return self._position(job_id) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def values(self) -> ValuesView[Placement]:
        return _ColumnValues(self)

    def items(self) -> ItemsView[int, Placement]:
        return _ColumnItems(self)

    def placements(self) -> Iterator[Placement]:
        """Every placement, in column order."""
        return map(self._at, range(len(self._ids)))

    @property
    def columns(self) -> tuple[array, array, array, RunColumns]:
        """``(ids, starts, ends, processors)``, for vectorised readers."""
        return self._ids, self._starts, self._ends, self._processors

    @property
    def special(self) -> Mapping[int, Placement]:
        """Placements kept whole (with moves), by job id."""
        return MappingProxyType(self._special)

    def __repr__(self) -> str:
        return f"PlacementColumns({len(self)} placements)"

    def __reduce__(self) -> tuple[object, ...]:
        return (
            PlacementColumns,
            (self._ids, self._starts, self._ends, self._processors, self._special),
        )


def _lookup(ids: array) -> tuple[array, array | None]:
    """The ids sorted, and the column of each (``None``: already sorted)."""
    import numpy as np

    column = np.frombuffer(ids, dtype=np.int64) if len(ids) else np.zeros(0, np.int64)
    order = np.argsort(column, kind="stable")
    ordered = column[order]
    if len(ordered) > 1 and not bool(np.all(ordered[1:] > ordered[:-1])):
        raise ValueError("placement columns: a job id is repeated")
    if bool(np.all(order == np.arange(len(order)))):
        return ids, None
    return array("q", ordered.tobytes()), array("q", order.astype(np.int64).tobytes())


class _ColumnValues(ValuesView[Placement]):
    _mapping: PlacementColumns

    def __iter__(self) -> Iterator[Placement]:
        return self._mapping.placements()


class _ColumnItems(ItemsView[int, Placement]):
    _mapping: PlacementColumns

    def __iter__(self) -> Iterator[tuple[int, Placement]]:
        return zip(self._mapping, self._mapping.placements(), strict=True)


@dataclass(frozen=True, slots=True)
class Schedule:
    """Placements by job id, plus who made the schedule.

    Parameters
    ----------
    placements
        ``{job id: Placement}``, or a :class:`PlacementColumns` (kept as
        given: what a simulation of many jobs returns).
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
        if not isinstance(self.placements, PlacementColumns):  # immutable already
            object.__setattr__(
                self, "placements", MappingProxyType(dict(self.placements))
            )
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
        placements = self.placements
        if not isinstance(placements, PlacementColumns):
            placements = dict(placements)
        return (Schedule, (placements, self.producer, self.killed, dict(self.lost)))

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
