"""Processor sets as intervals: the one place that reads, writes, merges and
tests them.

A processor set is a sorted sequence of indices; wherever it is written
(schedule files, Batsim's ``allocated_resources``, evalys) it is a list of
inclusive intervals, ``"0-3 7 9-10"``, the notation of `procset
<https://pypi.org/project/procset/>`_. This module holds:

* :class:`ProcessorSet`, a sequence stored as its intervals (what the
  readers build: ``"0-3000000000"`` costs two integers), equal to and
  hashed as the tuple it stands for;
* :func:`parse_processors` / :func:`format_processors`, the text form;
* :func:`merged_runs`, :func:`merge_runs`, :func:`runs_of`, :func:`count`,
  :func:`highest`, :func:`is_consecutive`, :func:`disjoint`: what the
  checker, the charts and the simulator ask of a set, on its intervals,
  never index by index;
* :func:`processor_set`, the set of half-open ranges (a tuple when small,
  else a :class:`ProcessorSet`), and :class:`RunColumns`, many sets stored
  column-wise (what a simulation of 450,000 jobs keeps instead of one tuple
  per job);
* :func:`to_procset` / :func:`from_procset`, the conversions to and from
  :class:`procset.ProcSet`.

Own code or procset: procset's :class:`~procset.ProcSet` keeps a set as
merged intervals, so it cannot hold the repeated indices (``"0-3 2"``) the
checker must see to report a processor used twice, and its parser takes
what ``int()`` takes (``"+1"``, ``"1_0"``, non-ASCII digits) and merges
intervals one at a time (quadratic). Where both could serve, the choice was
measured (``benchmarks/intervals.py``, results in ``benchmarks/README.md``,
"One processor-interval module"): our parsing, writing, merging, runs and
disjointness were faster on every input; procset's contiguity test is
faster on a ``ProcSet`` it holds, but ours reads a :class:`ProcessorSet`'s
runs where procset would need a conversion costing hundreds of times the
test. procset serves the conversions (:func:`to_procset`,
:func:`from_procset`), which must build its type.
"""

from __future__ import annotations

import bisect
import heapq
import operator
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, pairwise
from typing import TYPE_CHECKING, overload

from optsched.instance import MAX_INTEGER

if TYPE_CHECKING:
    import numpy as np
    from procset import ProcSet

MAX_PROCESSOR = MAX_INTEGER
"""Largest processor index a schedule may name: machine sizes have the same
limit, so an index above it can never be valid and is refused as malformed
input rather than judged by the checker."""

HASHED_AS_TUPLE = 1 << 20
"""Processor sets up to this size hash as the tuple they equal."""

EXPAND_LIMIT = 4096
"""Widest processor set built as a plain tuple; wider ones stay intervals."""

POOL_LIMIT = 1 << 16
"""Sets on machines of up to this many processors share one int object per
index when expanded from columns (:class:`RunColumns`)."""

Run = tuple[int, int]
"""An inclusive interval ``(first, last)`` of processor indices."""


class ProcessorLimitError(ValueError):
    """A processor index above :data:`MAX_PROCESSOR`."""


# --------------------------------------------------------------------------
# Runs: what is asked of a set, on its intervals
# --------------------------------------------------------------------------


def runs_of(processors: Iterable[int]) -> list[Run]:
    """Maximal runs ``(first, last)`` of a sorted sequence; repeats stay repeated.

    ``(0, 1, 2, 2, 3)`` -> ``[(0, 2), (2, 3)]``: the runs, concatenated, give
    the sequence back.
    """
    runs: list[Run] = []
    for p in processors:
        if runs and p == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    return runs


def merge_runs(runs: Iterable[Run]) -> list[Run]:
    """The union of inclusive intervals (any order) as disjoint sorted runs;
    touching intervals (``(0, 3), (4, 5)``) become one."""
    out: list[Run] = []
    for first, last in sorted(runs):
        if out and first <= out[-1][1] + 1:
            if last > out[-1][1]:
                out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


def merged_runs(processors: Sequence[int]) -> list[Run]:
    """The distinct indices of ``processors`` as disjoint sorted runs.

    Costs the number of runs of a :class:`ProcessorSet`, not the number of
    processors it names, so checking a range of 10**9 processors is cheap.
    """
    if isinstance(processors, ProcessorSet):
        return processors.merged()
    runs: list[Run] = []
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


def count(runs: Iterable[Run]) -> int:
    """Indices in disjoint ``runs``."""
    return sum(last - first + 1 for first, last in runs)


def distinct(processors: Sequence[int]) -> int:
    """Distinct indices of ``processors`` (``len`` counts repeats)."""
    return count(merged_runs(processors))


def highest(processors: Sequence[int]) -> int:
    """The highest index (a :class:`ProcessorSet`'s from its runs)."""
    if isinstance(processors, ProcessorSet):
        return max(last for _, last in processors.runs)
    return max(processors)


def is_consecutive(processors: Sequence[int]) -> bool:
    """Are the indices one run without repeats (``()`` is not)?"""
    if isinstance(processors, ProcessorSet):
        # Touching runs are merged when the set is built, and a single run
        # repeats nothing.
        return len(processors.runs) == 1
    runs = merged_runs(processors)
    return len(runs) == 1 and count(runs) == len(processors)


def disjoint(first: Sequence[int], second: Sequence[int]) -> bool:
    """Do two sets share no index? A walk over both sets' runs."""
    a, b = merged_runs(first), merged_runs(second)
    i = k = 0
    while i < len(a) and k < len(b):
        if a[i][1] < b[k][0]:
            i += 1
        elif b[k][1] < a[i][0]:
            k += 1
        else:
            return False
    return True


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
        return cls(runs_of(sorted(processors)))

    @property
    def runs(self) -> tuple[tuple[int, int], ...]:
        """The intervals, sorted; they overlap where an index is repeated."""
        return self._runs

    def merged(self) -> list[Run]:
        """The distinct indices as disjoint sorted runs."""
        if self._disjoint:
            return list(self._runs)
        return merge_runs(self._runs)

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
        return f"ProcessorSet({format_runs(self._runs)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (ProcessorSet, (self._runs,))


# --------------------------------------------------------------------------
# Text: "0-3 7 9-10"
# --------------------------------------------------------------------------


def format_runs(runs: Iterable[Run]) -> str:
    """``[(0, 2), (5, 5)]`` -> ``"0-2 5"`` (procset's notation)."""
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def format_processors(processors: Iterable[int] | None) -> str:
    """Processor set as intervals: ``(0, 1, 2, 5)`` -> ``"0-2 5"``.

    ``None`` (processors unknown) gives ``""``. A set without repeated
    indices is written exactly as ``str(procset.ProcSet(...))``; a repeated
    index stays repeated (``"0-3 2"``) so that the checker can report it.
    """
    if processors is None:
        return ""
    if isinstance(processors, ProcessorSet):
        return format_runs(processors.runs)
    return format_runs(runs_of(sorted(processors)))


def parse_processors(text: str) -> ProcessorSet | None:
    """Inverse of :func:`format_processors`; ``""`` gives ``None``.

    The result keeps the intervals (a :class:`ProcessorSet`): linear in the
    length of ``text``, whatever the width of the ranges.

    Raises
    ------
    ProcessorLimitError
        An index above :data:`MAX_PROCESSOR` (``2**53``).
    ValueError
        Anything else that is not an interval list (reversed bounds,
        signs, ``_``, non-ASCII digits, more than 20 digits).
    """
    text = text.strip()
    if not text:
        return None
    runs: list[Run] = []
    for part in text.split():
        lo, sep, hi = part.partition("-")
        first = _index(lo, part)
        last = _index(hi, part) if sep else first
        if last < first:
            raise ValueError(f"bad processor range {part!r}")
        runs.append((first, last))
    return ProcessorSet(runs)


def _index(text: str, part: str) -> int:
    # ASCII digits only: int() would also take "+1", "1_0", " 1" and "٣";
    # more than 20 digits is no index (and int() of thousands is slow).
    if not text.isascii() or not text.isdigit() or len(text) > 20:
        raise ValueError(f"bad processor range {part!r}")
    value = int(text)
    if value > MAX_PROCESSOR:
        raise ProcessorLimitError(f"processor {value} above the limit {MAX_PROCESSOR}")
    return value


# --------------------------------------------------------------------------
# procset
# --------------------------------------------------------------------------


def to_procset(processors: Sequence[int]) -> ProcSet:
    """The distinct processors as a :class:`procset.ProcSet` (for evalys).

    Built by balanced unions of its merged runs: ``ProcSet(*intervals)``
    merges them one at a time, which is quadratic.
    """
    from procset import ProcInt, ProcSet

    sets = [ProcSet(ProcInt(first, last)) for first, last in merged_runs(processors)]
    while len(sets) > 1:
        pairs = zip(sets[::2], sets[1::2], strict=False)
        merged = [left | right for left, right in pairs]
        sets = merged + ([sets[-1]] if len(sets) % 2 else [])
    return sets[0] if sets else ProcSet()


def from_procset(procset: ProcSet) -> ProcessorSet:
    """A :class:`procset.ProcSet` as a :class:`ProcessorSet`, interval by interval.

    Raises ``ProcessorLimitError`` past :data:`MAX_PROCESSOR`.
    """
    runs = [(interval.inf, interval.sup) for interval in procset.intervals()]
    if runs and runs[-1][1] > MAX_PROCESSOR:
        raise ProcessorLimitError(
            f"processor {runs[-1][1]} above the limit {MAX_PROCESSOR}"
        )
    return ProcessorSet(runs)


# --------------------------------------------------------------------------
# Sets built from ranges
# --------------------------------------------------------------------------


def processor_set(ranges: Sequence[tuple[int, int]]) -> Sequence[int]:
    """The processors of half-open ``ranges``, sorted and disjoint.

    A tuple when they number at most :data:`EXPAND_LIMIT`, else a
    :class:`ProcessorSet` that stores the intervals: a job of ``10**9``
    processors then costs two integers, not gigabytes.
    """
    if sum(hi - lo for lo, hi in ranges) <= EXPAND_LIMIT:
        # Built from the ranges in C: a third cheaper than a generator
        # (0.4 s instead of 0.6 s for the 11 million indices of 20,000
        # LLNL-Atlas jobs; creating the index objects is the rest).
        if len(ranges) == 1:
            return tuple(range(*ranges[0]))
        return tuple(chain.from_iterable(range(lo, hi) for lo, hi in ranges))
    return ProcessorSet((lo, hi - 1) for lo, hi in ranges if hi > lo)


# --------------------------------------------------------------------------
# Many sets, column-wise
# --------------------------------------------------------------------------


class RunStore:
    """Fills a :class:`RunColumns` set by set, in any order.

    Set ``k`` of ``n`` is stored once (:meth:`put`); its runs are appended
    to one array of bounds, so a set costs 8 bytes per run and 12 bytes for
    its position on a machine of fewer than ``2**31`` processors (twice the
    bounds beyond), whatever its width (a tuple of 106 indices costs
    0.9 kB).

    Parameters
    ----------
    n
        Number of sets.
    processors
        Every index is below it (``None``: no bound known).
    """

    __slots__ = ("_bounds", "_count", "_first")

    def __init__(self, n: int, processors: int | None = None) -> None:
        narrow = processors is not None and processors <= _INT32
        self._bounds = array("i" if narrow else "q")
        self._first = array("q", bytes(8 * n))
        # A set has fewer runs than the machine has processors.
        self._count = array("i", bytes(4 * n)) if narrow else array("q", bytes(8 * n))

    def put(self, k: int, ranges: Sequence[range]) -> None:
        """Set ``k`` is the union of ``ranges`` (increasing, disjoint)."""
        bounds = self._bounds
        self._first[k] = len(bounds) >> 1
        self._count[k] = sum(1 for r in ranges if r)
        for r in ranges:
            if r:  # an empty range holds no processor
                bounds.append(r.start)
                bounds.append(r.stop - 1)

    def columns(self) -> RunColumns:
        """The sets stored so far (sets never put are empty)."""
        return RunColumns(self._bounds, self._first, self._count)


_INT32 = 2**31 - 1


class RunColumns(Sequence[Sequence[int]]):
    """Many processor sets stored column-wise, as their runs.

    Set ``k`` is the inclusive runs ``(bounds[2 i], bounds[2 i + 1])`` for
    ``i`` in ``first[k] .. first[k] + count[k] - 1`` (sorted, disjoint).
    Item ``k`` is built on demand and is exactly what :func:`processor_set`
    builds from those runs: a tuple up to :data:`EXPAND_LIMIT` indices (on
    machines of up to :data:`POOL_LIMIT` processors, slices of one shared
    tuple of ints, so that holding many sets costs 8 bytes per index and no
    int objects), a :class:`ProcessorSet` beyond. :meth:`flat` gives every
    index at once as numpy arrays, for vectorised checks.

    Parameters
    ----------
    bounds, first, count
        ``array('q')`` or ``array('i')`` (or sequences of ints) as described
        above.
    """

    __slots__ = ("_bounds", "_count", "_first", "_pool")

    def __init__(
        self, bounds: Iterable[int], first: Iterable[int], count: Iterable[int]
    ) -> None:
        self._bounds = bounds if isinstance(bounds, array) else array("q", bounds)
        self._first = first if isinstance(first, array) else array("q", first)
        self._count = count if isinstance(count, array) else array("q", count)
        if len(self._first) != len(self._count):
            raise ValueError("run columns: first and count differ in length")
        self._pool: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self._first)

    def runs(self, k: int) -> list[Run]:
        """The runs of set ``k``, inclusive, sorted (their bounds the shared
        int objects when :data:`POOL_LIMIT` allows: a reader that keeps the
        runs of every set, as the checker's sweep does, keeps no new ints)."""
        at, bounds = 2 * self._first[k], self._bounds
        stop = at + 2 * self._count[k]
        pool = self._shared_ints()
        if pool is None:
            return [(bounds[i], bounds[i + 1]) for i in range(at, stop, 2)]
        return [(pool[bounds[i]], pool[bounds[i + 1]]) for i in range(at, stop, 2)]

    def intervals(self, k: int) -> ProcessorSet:
        """Set ``k`` as a :class:`ProcessorSet`, whatever its width."""
        return ProcessorSet(self.runs(k))

    @overload
    def __getitem__(self, k: int) -> Sequence[int]: ...

    @overload
    def __getitem__(self, k: slice) -> Sequence[Sequence[int]]: ...

    def __getitem__(self, k: int | slice) -> Sequence[int] | Sequence[Sequence[int]]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        runs = self.runs(k)
        if count(runs) > EXPAND_LIMIT:
            return ProcessorSet(runs)
        pool = self._shared_ints()
        if pool is None:
            return processor_set([(first, last + 1) for first, last in runs])
        if len(runs) == 1:
            return pool[runs[0][0] : runs[0][1] + 1]
        return tuple(chain.from_iterable(pool[a : b + 1] for a, b in runs))

    def _shared_ints(self) -> tuple[int, ...] | None:
        """``(0, ..., top)`` when every index is below :data:`POOL_LIMIT`."""
        if self._pool is None and self._bounds:
            top = max(self._bounds)
            if top < POOL_LIMIT and min(self._bounds) >= 0:
                self._pool = tuple(range(top + 1))
        return self._pool

    def sizes(self) -> np.ndarray:
        """Indices per set (``int64``), without expanding any set."""
        import numpy as np

        first, last, owner = self._set_pairs()
        sizes = np.zeros(len(self), dtype=np.int64)
        np.add.at(sizes, owner, last - first + 1)
        return sizes

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, lengths)``: every set's indices one after the other,
        in set order, and each set's length (``int64`` arrays)."""
        import numpy as np

        first, last, owner = self._set_pairs()
        widths = last - first + 1
        indices = np.repeat(first, widths) + _ramps(widths)
        lengths = np.zeros(len(self), dtype=np.int64)
        np.add.at(lengths, owner, widths)
        return indices, lengths

    def _set_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, last, owner)`` of every run, in set order."""
        import numpy as np

        bounds, start, runs = (
            np.frombuffer(column, dtype=column.typecode).astype(np.int64)
            for column in (self._bounds, self._first, self._count)
        )
        # A set's runs are consecutive pairs of `bounds`, from its first.
        order = np.repeat(start, runs) + _ramps(runs)
        owner = np.repeat(np.arange(len(runs), dtype=np.int64), runs)
        return bounds[0::2][order], bounds[1::2][order], owner

    def __reduce__(self) -> tuple[object, ...]:
        return (RunColumns, (self._bounds, self._first, self._count))


def _ramps(lengths: np.ndarray) -> np.ndarray:
    """``0 .. n-1`` for each ``n`` of ``lengths``, concatenated."""
    import numpy as np

    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total, dtype=np.int64) - starts
