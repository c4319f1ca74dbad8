"""Processor allocation: which processors a starting job gets.

Two machines (``Machine.allocation``):

``any``
    Processor counting. The simulator still assigns explicit processor ids,
    the lowest free ones, so the checker and the Gantt chart see real
    processors. Busy blocks with an offset hold their processors; blocks
    without one only count.
``contiguous``
    Processors in a line; a job needs a consecutive range. ``first-fit``
    takes the lowest free range that is long enough, ``best-fit`` the
    shortest such range (lowest offset on ties). With migration, when no
    range fits but enough processors are free in total, running jobs are
    compacted towards processor 0 (each keeps its relative order) and the
    job takes a range of the compacted free space.

Busy blocks never move. A block that starts later has its processors
excluded from a job's allocation when the block starts before the job's
estimated end (the engine passes them as ``excluded``), and compaction never
moves a job onto the processors of a block that has not ended yet.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

ALLOCATION_RULES: tuple[str, ...] = ("first-fit", "best-fit")
"""Range choice on contiguous machines."""

Range = tuple[int, int]
"""Half-open processor range ``[lo, hi)``."""


class AnyAllocator:
    """Lowest free processor ids on a machine of ``m`` processors.

    The free processors are kept as sorted, merged ranges, and a job holds a
    list of ranges: taking and giving back cost the number of ranges
    touched, not the number of processors (Atlas jobs use thousands).
    """

    def __init__(self, processors: int) -> None:
        self.free: list[Range] = [(0, processors)] if processors > 0 else []

    @property
    def free_ids(self) -> list[int]:
        """Every free processor id, sorted (for tests and debugging)."""
        return [p for lo, hi in self.free for p in range(lo, hi)]

    def can_take(self, size: int, excluded: Sequence[Range] = ()) -> bool:
        """Whether ``size`` processors outside ``excluded`` are free."""
        pieces = _subtract(self.free, excluded) if excluded else self.free
        return sum(hi - lo for lo, hi in pieces) >= size

    def take(self, size: int, excluded: Sequence[Range] = ()) -> list[range]:
        """Take the ``size`` lowest free processors outside ``excluded``.

        Returns the ranges taken, in increasing order.
        """
        pieces = _subtract(self.free, excluded) if excluded else self.free
        taken: list[range] = []
        need = size
        for lo, hi in pieces:
            if need == 0:
                break
            top = min(hi, lo + need)
            taken.append(range(lo, top))
            need -= top - lo
        if need > 0:
            raise RuntimeError(f"allocator: {size} processors requested, fewer free")
        if excluded:
            for piece in taken:
                self._remove(piece.start, piece.stop)
        else:
            self._remove_prefix(taken)
        return taken

    def _remove_prefix(self, taken: list[range]) -> None:
        # The pieces are the lowest free ranges, all whole but maybe the last.
        free = self.free
        last = taken[-1]
        whole = len(taken) - 1
        if free[whole][1] == last.stop:
            whole += 1
        else:
            free[whole] = (last.stop, free[whole][1])
        del free[:whole]

    def _remove(self, lo: int, hi: int) -> None:
        free = self.free
        k = bisect_right(free, (lo, self._top())) - 1
        if k < 0 or not (free[k][0] <= lo and hi <= free[k][1]):
            raise ValueError(f"processors [{lo}, {hi}) are not all free")
        start, stop = free[k]
        free[k : k + 1] = [r for r in ((start, lo), (hi, stop)) if r[1] > r[0]]

    def _top(self) -> int:
        return self.free[-1][1] + 1 if self.free else 1

    def take_range(self, lo: int, hi: int) -> None:
        """Take ``[lo, hi)`` (a busy block); every processor must be free."""
        self._remove(lo, hi)

    def give(self, pieces: Sequence[range]) -> None:
        """Give back the ranges a job took."""
        for piece in pieces:
            self.give_range(piece.start, piece.stop)

    def give_range(self, lo: int, hi: int) -> None:
        """Free ``[lo, hi)``, merging with its free neighbours."""
        insert_merged(self.free, lo, hi)


def insert_merged(free: list[Range], lo: int, hi: int) -> None:
    """Insert the free range ``[lo, hi)`` into the sorted, merged ``free`` list."""
    k = bisect_right(free, (lo, hi))
    if k > 0 and free[k - 1][1] == lo:
        k -= 1
        lo = free[k][0]
        del free[k]
    if k < len(free) and free[k][0] == hi:
        hi = free[k][1]
        del free[k]
    free.insert(k, (lo, hi))


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction plan: ``moves`` are ``(holder, old offset, new offset, size)``."""

    moves: tuple[tuple[Hashable, int, int, int], ...]
    free: tuple[Range, ...]


class ContiguousAllocator:
    """Free ranges of a line of ``m`` processors, with their holders.

    Holders are jobs (movable by compaction) and busy blocks (fixed). The
    free ranges are kept sorted and merged, so their number is at most the
    number of holders plus one.
    """

    def __init__(self, processors: int, rule: str = "first-fit") -> None:
        if rule not in ALLOCATION_RULES:
            raise ValueError(
                f"unknown allocation rule {rule!r}; "
                f"valid: {', '.join(ALLOCATION_RULES)}"
            )
        self.processors = processors
        self.rule = rule
        self.free: list[Range] = [(0, processors)]
        self.holders: dict[Hashable, tuple[int, int, bool]] = {}

    # -- queries ---------------------------------------------------------
    def find(self, size: int, excluded: Sequence[Range] = ()) -> int | None:
        """Offset of a free range of ``size`` avoiding ``excluded``, or ``None``."""
        return _choose(self._pieces(self.free, excluded), size, self.rule)

    def total_free(self) -> int:
        """Free processors, fragmented or not."""
        return sum(hi - lo for lo, hi in self.free)

    # -- changes ---------------------------------------------------------
    def take(self, holder: Hashable, offset: int, size: int, movable: bool) -> None:
        """Give ``[offset, offset + size)`` to ``holder``; it must be free."""
        end = offset + size
        k = bisect_right(self.free, (offset, self.processors + 1)) - 1
        if k < 0 or not (self.free[k][0] <= offset and end <= self.free[k][1]):
            raise ValueError(f"processors [{offset}, {end}) are not all free")
        lo, hi = self.free[k]
        pieces = [r for r in ((lo, offset), (end, hi)) if r[1] > r[0]]
        self.free[k : k + 1] = pieces
        self.holders[holder] = (offset, size, movable)

    def give(self, holder: Hashable) -> None:
        """Free the range of ``holder``."""
        offset, size, _ = self.holders.pop(holder)
        insert_merged(self.free, offset, offset + size)

    # -- compaction ------------------------------------------------------
    def plan_compaction(self, obstacles: Sequence[Range]) -> Compaction:
        """Slide movable holders towards processor 0, in offset order.

        Each holder takes the lowest position at or above the end of the
        previous one that avoids ``obstacles`` and the fixed holders, and
        never moves up: when no lower position exists it stays. Ranges stay
        disjoint because holders are visited by increasing offset and only
        move down.
        """
        fixed = sorted(
            [(o, o + s) for o, s, movable in self.holders.values() if not movable]
            + list(obstacles)
        )
        order = sorted(
            ((o, s, h) for h, (o, s, movable) in self.holders.items() if movable),
            key=lambda item: item[0],
        )
        moves: list[tuple[Hashable, int, int, int]] = []
        taken: list[Range] = [
            (o, o + s) for o, s, movable in self.holders.values() if not movable
        ]
        cursor = 0
        for offset, size, holder in order:
            target = _lowest_clear(cursor, size, fixed)
            if target >= offset:
                target = offset
            elif target != offset:
                moves.append((holder, offset, target, size))
            taken.append((target, target + size))
            cursor = target + size
        return Compaction(tuple(moves), tuple(free_ranges(taken, self.processors)))

    def find_after(
        self, plan: Compaction, size: int, excluded: Sequence[Range] = ()
    ) -> int | None:
        """Like :meth:`find` on the free space ``plan`` would leave."""
        return _choose(self._pieces(list(plan.free), excluded), size, self.rule)

    def apply(self, plan: Compaction) -> None:
        """Carry out ``plan``."""
        for holder, _, _, _ in plan.moves:
            self.give(holder)
        for holder, _, new, size in plan.moves:
            self.take(holder, new, size, True)

    @staticmethod
    def _pieces(free: Sequence[Range], excluded: Sequence[Range]) -> list[Range]:
        if not excluded:
            return list(free)
        return _subtract(free, excluded)


def _choose(pieces: Sequence[Range], size: int, rule: str) -> int | None:
    if rule == "first-fit":
        for lo, hi in pieces:
            if hi - lo >= size:
                return lo
        return None
    best: Range | None = None
    for lo, hi in pieces:
        if hi - lo >= size and (best is None or hi - lo < best[1] - best[0]):
            best = (lo, hi)
    return None if best is None else best[0]


def _lowest_clear(position: int, size: int, fixed: Sequence[Range]) -> int:
    # Lowest p >= position with [p, p + size) disjoint from every fixed range.
    moved = True
    while moved:
        moved = False
        for lo, hi in fixed:
            if lo < position + size and position < hi:
                position = hi
                moved = True
    return position


def free_ranges(taken: Iterable[Range], processors: int) -> list[Range]:
    """Maximal free ranges ``[lo, hi)`` of ``[0, processors)`` outside ``taken``
    (half-open ranges, in any order, overlapping or not)."""
    return _subtract([(0, processors)], tuple(taken))


def _subtract(free: Sequence[Range], excluded: Sequence[Range]) -> list[Range]:
    out: list[Range] = []
    cuts = sorted(excluded)
    for lo, hi in free:
        cursor = lo
        for clo, chi in cuts:
            if chi <= cursor or clo >= hi:
                continue
            if clo > cursor:
                out.append((cursor, clo))
            cursor = max(cursor, chi)
        if cursor < hi:
            out.append((cursor, hi))
    return out
