"""Availability profile: free processors over time, as a step function.

Backfilling policies plan with a profile (Mu'alem and Feitelson 2001, who call
it the "cpu snapshot" of conservative backfilling): running jobs occupy their
processors until their *estimated* end, busy blocks occupy theirs over their
fixed interval, and reservations occupy theirs over ``[start, start +
estimate)``. The profile only describes the future: the segment holding the
current time starts at ``now``, so an estimated end already in the past
counts as ``now``.

Representation: parallel lists ``times`` (strictly increasing breakpoints)
and ``free``; segment ``k`` covers ``[times[k], times[k+1])`` with
``free[k]`` processors free, and the last segment extends to infinity.
Neighbouring segments never have the same value (they are merged). Every
operation is linear in the number of breakpoints it touches; the profile
never holds breakpoints before ``now`` (see :meth:`Profile.advance`), so its
length is bounded by the running jobs, busy blocks and reservations, never
by the finished jobs.

Reference: A. W. Mu'alem, D. G. Feitelson, "Utilization, predictability,
workloads, and user runtime estimates in scheduling the IBM SP2 with
backfilling", IEEE TPDS 12(6), 2001.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class Profile:
    """Free processors from ``now`` on.

    Parameters
    ----------
    now
        First instant described.
    free
        Free processors from ``now`` to infinity before any rectangle is added.
    """

    __slots__ = ("free", "times")

    def __init__(self, now: int, free: int) -> None:
        self.times: list[int] = [now]
        self.free: list[int] = [free]

    def copy(self) -> Profile:
        """An independent copy."""
        clone = Profile.__new__(Profile)
        clone.times = self.times.copy()
        clone.free = self.free.copy()
        return clone

    @property
    def now(self) -> int:
        """The first instant described."""
        return self.times[0]

    def __len__(self) -> int:
        return len(self.times)

    def _split(self, time: int) -> int:
        # Index of the breakpoint at `time`, inserting one if needed. Times
        # before `now` are clamped to `now`: the past is not described.
        times = self.times
        if time <= times[0]:
            return 0
        index = bisect_left(times, time)
        if index < len(times) and times[index] == time:
            return index
        times.insert(index, time)
        self.free.insert(index, self.free[index - 1])
        return index

    def add(self, start: int, end: int, delta: int) -> None:
        """Add ``delta`` free processors over ``[start, end)``.

        A negative ``delta`` occupies processors (a running job, a block, a
        reservation); a positive one releases them. Parts before ``now`` are
        ignored.
        """
        if end <= start or end <= self.times[0]:
            return
        first = self._split(start)
        last = self._split(end)
        free = self.free
        for k in range(first, last):
            free[k] += delta
        # Merge equal neighbours at both ends (the interior keeps its steps),
        # so the profile only holds real changes: removing a reservation
        # leaves no trace.
        times = self.times
        if last < len(free) and free[last] == free[last - 1]:
            del times[last]
            del free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first]
            del free[first]

    def advance(self, now: int) -> None:
        """Forget everything before ``now`` (``now`` never goes back)."""
        times = self.times
        if now <= times[0]:
            return
        k = bisect_right(times, now) - 1
        if k > 0:
            del times[:k]
            del self.free[:k]
        times[0] = now

    def free_at(self, time: int) -> int:
        """Free processors at instant ``time`` (``now`` if earlier)."""
        k = bisect_right(self.times, time) - 1
        return self.free[max(k, 0)]

    def min_free(self, start: int, end: int) -> int:
        """Minimum free processors over ``[start, end)``.

        An empty interval (``end <= start``) is the instant ``start``: a job
        of zero duration still needs its processors when it starts.
        """
        times, free = self.times, self.free
        k = max(bisect_right(times, start) - 1, 0)
        low = free[k]
        k += 1
        n = len(times)
        while k < n and times[k] < end:
            if free[k] < low:
                low = free[k]
            k += 1
        return low

    def fits(self, start: int, duration: int, size: int) -> bool:
        """Whether ``size`` processors are free over ``[start, start + duration)``."""
        return self.min_free(start, start + duration) >= size

    def earliest(
        self, size: int, duration: int, limit: int | None = None
    ) -> int | None:
        """Earliest start ``t >= now`` with ``size`` processors free over
        ``[t, t + duration)``.

        Candidate starts are ``now`` and the breakpoints: free capacity only
        rises at breakpoints, so the first feasible window starts at one.
        With ``limit``, the search stops at ``limit`` and returns ``limit``
        when no earlier start exists (the caller knows ``limit`` is feasible).
        Returns ``None`` when no start exists (``size`` exceeds what the
        profile ever frees).
        """
        times, free = self.times, self.free
        n = len(times)
        k = 0
        while k < n:
            start = times[k]
            if limit is not None and start >= limit:
                return limit
            if free[k] < size:
                k += 1
                continue
            end = start + duration
            j = k + 1
            while j < n and times[j] < end and free[j] >= size:
                j += 1
            if j >= n or times[j] >= end:
                return start
            k = j + 1  # segment j is too low: no window can contain it
        return None

    def earliest_before(self, size: int, duration: int, limit: int) -> int | None:
        """Earliest start ``t < limit`` for a job that holds a reservation at
        ``limit``, or ``None`` when it cannot move earlier.

        The profile still contains the job's own rectangle ``[limit, limit +
        duration)``. A window ``[t, t + duration)`` with ``t < limit`` ends
        inside that rectangle, where the job's own processors are available
        to it, so only ``[t, min(t + duration, limit))`` needs ``size`` free
        processors. Nothing is modified: compressing a reservation that
        cannot move costs one scan of the breakpoints before ``limit``.
        """
        times, free = self.times, self.free
        n = bisect_left(times, limit)  # segments starting before `limit`
        k = 0
        while k < n:
            if free[k] < size:
                k += 1
                continue
            start = times[k]
            end = min(start + duration, limit)
            j = k + 1
            while j < n and times[j] < end and free[j] >= size:
                j += 1
            if j >= n or times[j] >= end:
                return start
            k = j + 1
        return None

    def segments(self) -> list[tuple[int, int]]:
        """``(time, free)`` breakpoints, for tests and debugging."""
        return list(zip(self.times, self.free, strict=True))
