"""Processor ranges of the gang scheduler's Ousterhout matrix.

J. K. Ousterhout, "Scheduling techniques for concurrent systems", ICDCS
1982: the machine is a matrix whose columns are the processors and whose
rows are time slots; a gang (a parallel job) occupies processors of one
row, and the rows take turns. Here a job always gets a *consecutive* range
of processor indices (its *claim* in a row), chosen by one of three
packings of the row's free runs:

- ``first-fit``: the lowest free run long enough;
- ``best-fit``: the shortest free run long enough (lowest on ties);
- ``buddy``: a power-of-two block ``2^ceil(log2 q)`` aligned on a multiple
  of its size (the buddy system of Knowlton 1965, as in the distributed
  hierarchical control of Feitelson and Rudolph 1990); on a machine whose
  size is not a power of two the last block is cut at ``m`` and is used
  when it still holds the job. The job runs on the first ``q`` processors
  of its block; the rest of the block stays reserved in the row (internal
  fragmentation), but may be used by jobs run outside their row.

Intervals are half-open ``[first, end)`` pairs of processor indices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from optsched.heuristics.engine.allocation import free_ranges

Interval = tuple[int, int]

PACKINGS = ("first-fit", "best-fit", "buddy")
"""Packings of a job into the free processors of a row."""


def free_runs(busy: Iterable[Interval], m: int) -> list[Interval]:
    """Maximal free runs of ``[0, m)`` outside the ``busy`` intervals."""
    return free_ranges(busy, m)


def overlaps(a: Interval, b: Interval) -> bool:
    """Whether two half-open intervals share a processor."""
    return a[0] < b[1] and b[0] < a[1]


def is_free(busy: Iterable[Interval], claim: Interval) -> bool:
    """Whether ``claim`` meets none of the ``busy`` intervals."""
    return not any(overlaps(claim, other) for other in busy)


def buddy_size(size: int) -> int:
    """``2^ceil(log2 size)``: the buddy block of a job of ``size`` processors."""
    return 1 << (size - 1).bit_length()


def place(free: Sequence[Interval], size: int, packing: str, m: int) -> Interval | None:
    """The claim ``packing`` gives a job of ``size`` processors, or ``None``.

    Parameters
    ----------
    free
        Free runs of the row, sorted (:func:`free_runs`).
    size
        Processors of the job.
    packing
        One of :data:`PACKINGS`.
    m
        Processors of the machine (cuts the last buddy block).
    """
    if packing == "first-fit":
        return next(((a, a + size) for a, e in free if e - a >= size), None)
    if packing == "best-fit":
        fits = [(e - a, a) for a, e in free if e - a >= size]
        if not fits:
            return None
        _, a = min(fits)
        return (a, a + size)
    if packing == "buddy":
        block = buddy_size(size)
        for a, e in free:
            # The first aligned block of a run is the only candidate: a later
            # one ends later (past e) or, cut at m, is shorter.
            offset = -(-a // block) * block
            end = min(offset + block, m)
            if end <= e and end - offset >= size:
                return (offset, end)
        return None
    raise ValueError(f"unknown packing {packing!r}; valid: {', '.join(PACKINGS)}")


def candidate_claims(
    size: int, packing: str, m: int, boundaries: Iterable[int]
) -> list[Interval]:
    """Every claim worth trying when a job may displace others.

    The set of intervals a claim meets only changes where a boundary (an
    end of an interval) enters or leaves it, so one claim per class is
    enough. ``buddy``: the aligned block that holds each boundary, the
    block after it (the first one past the boundary) and block 0, when they
    hold the job. Otherwise ``[o, o + size)`` for ``o`` = 0, a boundary
    ``b`` or ``b - size``. Either way the count is linear in the
    boundaries, never in ``m``.
    """
    if packing == "buddy":
        block = buddy_size(size)
        offsets = {0}
        for b in boundaries:
            here = b // block * block
            offsets.update((here, here + block))
        out = []
        for offset in sorted(offsets):
            end = min(offset + block, m)
            if 0 <= offset < m and end - offset >= size:
                out.append((offset, end))
        return out
    offsets = {0}
    for b in boundaries:
        offsets.update((b, b - size))
    return [(o, o + size) for o in sorted(offsets) if 0 <= o <= m - size]
