"""The waiting jobs of the node simulator in one base order, for a machine
with a site calendar (:mod:`optsched.heuristics.topology.simulator`).

Under a calendar (and NQS's user limit, which moves refused jobs to the end
of the queue and back, :mod:`optsched.heuristics.site.gate`) whether a job
may start depends on its queue and user, not on its size alone, and ranks
change during the run: the size buckets of
:class:`~optsched.heuristics.topology.simulator.OrderIndex` no longer
answer "the first job that may start", so the simulator scans the waiting
jobs in order, as the engine's policies scan their queue.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Sequence


class RankedOrder:
    """The waiting jobs sorted by a rank that may change (smaller: earlier).

    Parameters
    ----------
    rank
        Per job its rank in the base order (copied: :meth:`move` changes it).
    """

    def __init__(self, rank: Sequence[int]) -> None:
        self.rank = list(rank)
        self._waiting: list[tuple[int, int]] = []  # sorted (rank, job)

    def add(self, j: int) -> None:
        """Job ``j`` starts waiting."""
        insort(self._waiting, (self.rank[j], j))

    def remove(self, j: int) -> None:
        """Job ``j`` no longer waits."""
        del self._waiting[bisect_left(self._waiting, (self.rank[j], j))]

    def head(self, state: Sequence[int]) -> int | None:
        """The first waiting job, or ``None`` (``state`` unused: every job
        listed waits)."""
        return self._waiting[0][1] if self._waiting else None

    def move(self, j: int, rank: int, waiting: bool) -> None:
        """Give job ``j`` the rank ``rank`` (and its place, if it waits)."""
        if waiting:
            self.remove(j)
        self.rank[j] = rank
        if waiting:
            self.add(j)

    def __iter__(self) -> Iterator[int]:
        """The waiting jobs in order (do not start one while iterating)."""
        return (j for _, j in self._waiting)
