"""A step function of free processors over time, kept as plainly as possible.

``times`` are the breakpoints in increasing order and ``free[k]`` the free
processors over ``[times[k], times[k + 1])``; the last step lasts forever.
Nothing is merged or skipped: every query scans the steps.
"""

from __future__ import annotations

from bisect import bisect_right


class Steps:
    """Free processors from ``origin`` on: ``total`` minus every rectangle
    added (a rectangle before ``origin`` counts only from ``origin``)."""

    def __init__(self, origin: int, total: int) -> None:
        self.times = [origin]
        self.free = [total]

    def _cut(self, time: int) -> int:
        """Index of the step starting at ``time`` (split one if needed)."""
        time = max(time, self.times[0])
        k = bisect_right(self.times, time) - 1
        if self.times[k] != time:
            self.times.insert(k + 1, time)
            self.free.insert(k + 1, self.free[k])
            k += 1
        return k

    def take(self, start: int, end: int, size: int) -> None:
        """``size`` processors busy over ``[start, end)``."""
        self.change(start, end, -size)

    def give(self, start: int, end: int, size: int) -> None:
        """``size`` processors free again over ``[start, end)``."""
        self.change(start, end, size)

    def change(self, start: int, end: int, delta: int) -> None:
        """Add ``delta`` free processors over ``[start, end)``."""
        if end <= max(start, self.times[0]):
            return
        first, last = self._cut(start), self._cut(end)
        for k in range(first, last):
            self.free[k] += delta

    def lowest(self, start: int, end: int) -> int:
        """Fewest free processors over ``[start, end)`` (the instant
        ``start`` when the interval is empty)."""
        low = None
        for k, t in enumerate(self.times):
            step_end = self.times[k + 1] if k + 1 < len(self.times) else None
            if step_end is not None and step_end <= start:
                continue
            if t >= end and t > start:
                break
            low = self.free[k] if low is None else min(low, self.free[k])
        assert low is not None
        return low

    def first_fit(self, size: int, length: int, after: int) -> int:
        """Earliest ``t >= after`` with ``size`` free over ``[t, t + length)``.

        Candidates are ``after`` and every later breakpoint (free processors
        only rise at breakpoints). Raises if none fits (a job wider than
        what is ever free).
        """
        candidates = [after] + [t for t in self.times if t > after]
        for t in candidates:
            if self.lowest(t, t + length) >= size:
                return t
        raise AssertionError(f"no room for {size} processors")
