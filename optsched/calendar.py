"""Site calendars: batch capacity and the largest job size by time of week.

Real machines give batch jobs a share that changes with the time of day
(Mallmann 1997, §3.1.5 and §3.2.5): Jülich's Paragon ran batch jobs on
weekdays from 20:00 to 08:00 and all day at weekends and on holidays; its
T3E shrank the batch partition from 518 to 383 to 4 nodes during the day
and capped job sizes by hour. Only a job's *start* is checked, exactly as
in the study: a job may start at ``t`` when

.. math::

    q_j \\le \\mathrm{maxsize}(t)
    \\quad\\text{and}\\quad
    \\sum_{i:\\, S_i \\le t < C_i} q_i \\le \\mathrm{capacity}(t)

(the sum over every job running at ``t``, ``j`` included); running jobs are
never stopped when the capacity drops. The machine's processor count
``m`` still bounds the jobs running at every instant.

Time is seconds from time 0; ``monday_offset`` seconds after a Monday
00:00 (time 0 is a Monday 00:00 by default, as in the study, §4.3). A
calendar day ``d`` covers ``[d * 86400 - monday_offset, (d + 1) * 86400 -
monday_offset)``; days listed as holidays follow the holiday pattern
(weekday 7) instead of their weekday's.

Reference: B. Mallmann, *Untersuchung von Scheduling-Strategien für
Parallelrechner* (Jülich, 1997), §3.1.5, §3.2.5 and §4.3.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from optsched.errors import is_count

DAY = 86_400
WEEK = 7 * DAY
HOLIDAY = 7
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun", "holiday")


@dataclass(frozen=True)
class Period:
    """Batch capacity and largest startable job over part of some days.

    Parameters
    ----------
    days
        Weekdays ``0`` (Monday) to ``6`` and ``7`` for holidays.
    start, end
        Seconds from midnight, ``0 <= start < end <= 86400``.
    capacity
        Processors that batch jobs may hold at a start in this period
        (``None``: all of the machine).
    max_size
        Largest job that may start in it (``None``: no limit).
    """

    days: tuple[int, ...]
    start: int
    end: int
    capacity: int | None = None
    max_size: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "days", tuple(self.days))
        if not self.days or any(d not in range(8) for d in self.days):
            raise ValueError(
                f"days {self.days!r}: expected weekdays 0-6 or 7 (holiday)"
            )
        if not 0 <= self.start < self.end <= DAY:
            raise ValueError(
                f"period {self.start}-{self.end} s: needs 0 <= start < end <= 86400"
            )
        for name in ("capacity", "max_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} {value!r} must be an integer >= 0")


@dataclass(frozen=True)
class Calendar:
    """A weekly batch calendar with holidays (module docstring).

    Parameters
    ----------
    periods
        :class:`Period` entries; on each day (weekday or holiday) they may
        not overlap. Hours no period covers give the whole machine with no
        size limit.
    holidays
        Calendar day numbers (see the module docstring) that follow the
        holiday pattern.
    monday_offset
        Seconds from a Monday 00:00 to time 0 (``0 <= offset < 604800``).
    sequential_queues
        Queues (SWF field 15) that run one job at a time (NQS sequential
        queues, Mallmann §3.1.2): a job of such a queue starts only while
        no other job of its queue runs.
    anytime_queues
        Queues whose jobs may start whatever the calendar says (the
        Paragon's test queue ``p004h1``, §3.1.2): only the machine's
        processors limit them.
    user_limit
        NQS's per-user limit, in processor-seconds (Mallmann §3.1.4: twice
        the largest job times the queue's maximum run time, 1,088
        node-hours on the Paragon), or ``None``. Each start of a job of
        user ``u`` adds ``size x requested time`` to ``u``'s account; the
        accounts of all other users are emptied after an instant at which
        a job of ``u`` started (the study: "after a job of another user
        has run"; two users starting at one instant empty every account).
        A job whose start would bring its user's account above the limit
        may not start while a job of another user waits; the simulator
        then moves it to the end of the queue until its user's account is
        emptied (NQS's demotion to the lowest priority). Jobs without a
        user (SWF field 12 is -1) are exempt and never count as another
        user's.
    """

    periods: tuple[Period, ...]
    holidays: frozenset[int] = frozenset()
    monday_offset: int = 0
    sequential_queues: frozenset[int] = frozenset()
    anytime_queues: frozenset[int] = frozenset()
    user_limit: int | None = None
    _days: tuple[tuple[tuple[int, int | None, int | None], ...], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "periods", tuple(self.periods))
        for name in ("holidays", "sequential_queues", "anytime_queues"):
            object.__setattr__(self, name, frozenset(getattr(self, name)))
        if self.user_limit is not None and not is_count(self.user_limit):
            raise ValueError(
                f"user_limit {self.user_limit!r} must be processor-seconds >= 0"
            )
        if not 0 <= self.monday_offset < WEEK:
            raise ValueError(
                f"monday_offset {self.monday_offset} must lie in [0, 604800)"
            )
        days = []
        for day in range(8):
            mine = sorted(
                (p for p in self.periods if day in p.days), key=lambda p: p.start
            )
            steps: list[tuple[int, int | None, int | None]] = []
            at = 0
            for p in mine:
                if p.start < at:
                    raise ValueError(
                        f"periods overlap on {DAY_NAMES[day]} at {_clock(p.start)}"
                    )
                if p.start > at:
                    steps.append((at, None, None))
                steps.append((p.start, p.capacity, p.max_size))
                at = p.end
            if at < DAY:
                steps.append((at, None, None))
            days.append(tuple(steps))
        object.__setattr__(self, "_days", tuple(days))

    # -- derived calendars ----------------------------------------------------
    def shifted(self, seconds: int) -> Calendar:
        """The same calendar seen from a time 0 that lies ``seconds`` later
        (a window cut at trace time ``seconds`` and rebased to 0): every
        instant keeps its time of week, and holidays their dates."""
        total = self.monday_offset + seconds
        weeks, offset = divmod(total, WEEK)
        holidays = frozenset(d - 7 * weeks for d in self.holidays if d >= 7 * weeks)
        return dataclasses.replace(self, holidays=holidays, monday_offset=offset)

    def scaled(self, old: int, new: int) -> Calendar:
        """Capacities, size limits and the user limit scaled from a machine of ``old``
        processors to one of ``new`` (rounded half up; a positive limit stays
        at least 1), for running a site's calendar on another trace."""

        def scale(value: int | None) -> int | None:
            if value is None:
                return None
            scaled = (2 * value * new + old) // (2 * old)
            return max(scaled, 1) if value > 0 else 0

        periods = tuple(
            Period(p.days, p.start, p.end, scale(p.capacity), scale(p.max_size))
            for p in self.periods
        )
        return dataclasses.replace(
            self, periods=periods, user_limit=scale(self.user_limit)
        )

    # -- looking up one instant --------------------------------------------
    def day_of(self, t: int) -> int:
        """Calendar day number of instant ``t``."""
        return (t + self.monday_offset) // DAY

    def _step(self, t: int) -> tuple[int, tuple[int, int | None, int | None]]:
        day = self.day_of(t)
        kind = HOLIDAY if day in self.holidays else day % 7
        steps = self._days[kind]
        second = (t + self.monday_offset) - day * DAY
        k = bisect_right([s[0] for s in steps], second) - 1
        return day, steps[k]

    def capacity_at(self, t: int, processors: int) -> int:
        """Processors batch jobs may hold at a start at ``t`` (``<= processors``)."""
        capacity = self._step(t)[1][1]
        return processors if capacity is None else min(capacity, processors)

    def max_size_at(self, t: int, processors: int) -> int:
        """Largest job that may start at ``t`` (at most ``processors``)."""
        size = self._step(t)[1][2]
        return processors if size is None else min(size, processors)

    def next_change(self, t: int) -> int:
        """The first instant after ``t`` at which capacity or size limit may change."""
        day, step = self._step(t)
        kind = HOLIDAY if day in self.holidays else day % 7
        steps = self._days[kind]
        k = steps.index(step)
        base = day * DAY - self.monday_offset
        return base + steps[k + 1][0] if k + 1 < len(steps) else base + DAY

    def segments(
        self, start: int, end: int, processors: int
    ) -> Iterator[tuple[int, int, int, int]]:
        """``(from, to, capacity, max_size)`` pieces covering ``[start, end)``."""
        t = start
        while t < end:
            nxt = min(self.next_change(t), end)
            yield (
                t,
                nxt,
                self.capacity_at(t, processors),
                self.max_size_at(t, processors),
            )
            t = nxt

    def earliest_start(self, size: int, release: int, processors: int) -> int | None:
        """The first ``t >= release`` at which a job of ``size`` passes both
        limits on an otherwise idle machine (``None``: never within two
        weeks of unchanging pattern, i.e. never)."""
        t = release
        horizon = release + 2 * WEEK + DAY * (len(self.holidays) + 1)
        while t < horizon:
            if size <= self.capacity_at(t, processors) and size <= self.max_size_at(
                t, processors
            ):
                return t
            t = self.next_change(t)
        return None


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}"


def parse_clock(text: str) -> int:
    """``"20:00"`` or ``"04:30"`` (``"24:00"`` allowed) as seconds from midnight."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"time {text!r}: expected HH:MM")
    hours, minutes = int(parts[0]), int(parts[1])
    if minutes >= 60 or hours > 24 or (hours == 24 and minutes):
        raise ValueError(f"time {text!r}: expected 00:00 to 24:00")
    return hours * 3600 + minutes * 60
