"""Price tables of grid clusters: a price per CPU-hour by weekday and hour.

Time is in seconds from a Monday 00:00 (weekday 0); the table repeats every
week. Two cost rules:

``sampled`` (Meltzer 2005, §4.7.3, Listing 7; the study's rule, bit-exact)
    .. math:: c(s, d, q) = q \\sum_{k=0}^{\\lfloor d/3600 \\rfloor} r(s + 3600k)

    the rate ``r`` in force at each hourly sample point from the start,
    the last sample being the end itself when ``d`` is a whole number of
    hours (the Haskell list ``[st, st+3600 .. st+dauer]``). Example: 10 CPUs,
    Monday 7:30-9:00, rates 1.0 before 8:00 and 1.5 after: ``10 * (1.0 +
    1.5) = 25``.
``prorata``
    .. math:: c(s, d, q) = \\frac{q}{3600} \\int_s^{s+d} r(t)\\, dt

Prices are kept as exact fractions (a float is read by its shortest
decimal form, ``0.1`` is 1/10), so costs compare exactly and the CP-SAT
model can scale them to integers (:meth:`Tariff.scale`).

Reference: J. Meltzer, *Vergleich von Co-Reservierungs-Algorithmen in
Grid-Umgebungen*, Diplomarbeit, FU Berlin / ZIB (about 2005), §4.7.3.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

HOUR = 3600
WEEK_HOURS = 7 * 24
MAX_PRICE = 1e12
"""Highest price per CPU-hour accepted: a week of a 2**24-CPU request at it
stays far from float overflow in reports (1e308 was read without a word)."""
WEEKDAYS = (
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
)
COST_RULES = ("sampled", "prorata")


def exact(value: float | int | Fraction) -> Fraction:
    """``value`` as a fraction, a float read by its shortest decimal form."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)


@dataclass(frozen=True)
class PriceEntry:
    """A price per CPU-hour on ``weekday`` for hours ``hour_from <= h < hour_to``."""

    weekday: int
    hour_from: int
    hour_to: int
    price: Fraction

    def __post_init__(self) -> None:
        for name in ("weekday", "hour_from", "hour_to"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name}: expected an integer, got {value!r}")
        if not 0 <= self.weekday <= 6:
            raise ValueError(f"weekday {self.weekday} must be 0 (Monday) to 6 (Sunday)")
        if not 0 <= self.hour_from < self.hour_to <= 24:
            raise ValueError(
                f"hours {self.hour_from}-{self.hour_to} must satisfy "
                "0 <= hour_from < hour_to <= 24"
            )
        price = exact(self.price)
        if not 0 <= price <= MAX_PRICE:
            raise ValueError(f"price {float(price):g} must be from 0 to {MAX_PRICE:g}")
        object.__setattr__(self, "price", price)


@dataclass(frozen=True)
class Tariff:
    """A weekly price table (empty: every CPU-hour is free).

    Parameters
    ----------
    entries
        :class:`PriceEntry` items (or ``(weekday, hour_from, hour_to,
        price)`` tuples). A non-empty table must cover each of the 168 hours
        of the week exactly once.
    """

    entries: tuple[PriceEntry, ...] = ()
    hourly: tuple[Fraction, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        entries = tuple(
            e if isinstance(e, PriceEntry) else PriceEntry(*e) for e in self.entries
        )
        object.__setattr__(self, "entries", entries)
        hourly: list[Fraction | None] = [None] * WEEK_HOURS
        for e in entries:
            for h in range(e.hour_from, e.hour_to):
                k = 24 * e.weekday + h
                if hourly[k] is not None:
                    raise ValueError(
                        f"prices overlap on {WEEKDAYS[e.weekday]} at {h}:00"
                    )
                hourly[k] = e.price
        if entries:
            missing = next((k for k, p in enumerate(hourly) if p is None), None)
            if missing is not None:
                raise ValueError(
                    f"prices do not cover {WEEKDAYS[missing // 24]} at "
                    f"{missing % 24}:00 (a table must cover every hour of the week)"
                )
        object.__setattr__(
            self, "hourly", tuple(Fraction(0) if p is None else p for p in hourly)
        )

    @classmethod
    def flat(cls, price: float | Fraction) -> Tariff:
        """One price at every hour."""
        return cls(tuple(PriceEntry(d, 0, 24, exact(price)) for d in range(7)))

    @classmethod
    def day_night(
        cls,
        day: float | Fraction,
        night: float | Fraction,
        *,
        day_from: int = 8,
        day_to: int = 18,
        weekend_factor: float | Fraction = 1,
    ) -> Tariff:
        """Meltzer's scenario (§6.9.1): ``day`` from ``day_from`` to
        ``day_to`` h, ``night`` otherwise, every price times
        ``weekend_factor`` on Saturday and Sunday."""
        entries = []
        for d in range(7):
            f = exact(weekend_factor) if d >= 5 else Fraction(1)
            n, dd = exact(night) * f, exact(day) * f
            entries += [
                PriceEntry(d, 0, day_from, n),
                PriceEntry(d, day_from, day_to, dd),
                PriceEntry(d, day_to, 24, n),
            ]
        return cls(tuple(entries))

    @property
    def free(self) -> bool:
        """Whether every hour costs nothing."""
        return not any(self.hourly)

    def rate(self, t: int) -> Fraction:
        """Price per CPU-hour in force at time ``t`` (seconds from Monday 0:00)."""
        return self.hourly[(t // HOUR) % WEEK_HOURS]

    def sampled_sum(self, start: int, duration: int) -> Fraction:
        """Sampled cost of one CPU: ``sum_{k=0}^{floor(d/3600)} r(start + 3600k)``."""
        hourly = self.hourly
        h = start // HOUR
        # Whole weeks of samples at once: a duration of years costs one week.
        weeks, rest = divmod(duration // HOUR + 1, WEEK_HOURS)
        total = weeks * sum(hourly, Fraction(0)) if weeks else Fraction(0)
        return total + sum(
            (hourly[(h + k) % WEEK_HOURS] for k in range(rest)), Fraction(0)
        )

    def integral(self, start: int, end: int) -> Fraction:
        """Pro-rata cost of one CPU: ``(1/3600) * integral of r over [start, end)``."""
        # Whole weeks at once (a week's integral is HOUR times the week's
        # prices); the hours of the last partial week one by one.
        weeks = max(0, end - start) // (WEEK_HOURS * HOUR)
        total = weeks * HOUR * sum(self.hourly, Fraction(0)) if weeks else Fraction(0)
        t = start + weeks * WEEK_HOURS * HOUR
        while t < end:
            nxt = min(end, (t // HOUR + 1) * HOUR)
            total += self.rate(t) * (nxt - t)
            t = nxt
        return total / HOUR

    def cost(
        self, start: int, duration: int, cpus: int, rule: str = "sampled"
    ) -> Fraction:
        """Cost of ``cpus`` CPUs over ``[start, start + duration)`` under ``rule``."""
        if rule == "sampled":
            return cpus * self.sampled_sum(start, duration)
        if rule == "prorata":
            return cpus * self.integral(start, start + duration)
        raise ValueError(f"unknown cost rule {rule!r}; valid: {', '.join(COST_RULES)}")

    def scale(self) -> int:
        """Smallest integer ``K`` such that ``K * price`` is an integer for
        every price (the CP-SAT model works on ``K``-scaled costs)."""
        return math.lcm(1, *(p.denominator for p in self.hourly))


def common_scale(tariffs: Iterable[Tariff]) -> int:
    """The :meth:`Tariff.scale` common to several tariffs."""
    return math.lcm(1, *(t.scale() for t in tariffs))


def as_entries(rows: Sequence[Sequence[float | int]]) -> tuple[PriceEntry, ...]:
    """``[[weekday, hour_from, hour_to, price], ...]`` as validated entries."""
    out = []
    for k, row in enumerate(rows):
        if len(row) != 4:
            raise ValueError(
                f"price row {k}: expected [weekday, hour_from, hour_to, price], "
                f"got {len(row)} values"
            )
        weekday, hour_from, hour_to, price = row
        out.append(PriceEntry(weekday, hour_from, hour_to, exact(price)))  # type: ignore[arg-type]
    return tuple(out)
