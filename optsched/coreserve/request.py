"""Co-reservation requests, cluster states and chosen placements.

A co-reservation request (Meltzer 2005, §3, Table 1) asks for ``parts``
(CPU counts) on distinct clusters, all starting at one common time ``S``
with ``earliest_start <= S`` and ``S + duration <= deadline``, each part
holding its CPUs over ``[S, S + duration)``. A cluster, as a request sees
it, is a capacity, a price table and the CPUs already committed over time
(``busy``: running local jobs up to their estimated ends and granted
reservations, as in the local scheduler's reservation table, Listing 3).

Times are integer seconds from a Monday 00:00.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import cast

from optsched.coreserve.tariff import Tariff


@dataclass(frozen=True)
class Request:
    """A flexible co-reservation request.

    Parameters
    ----------
    submit
        When the request reaches the grid service (``>= 0``).
    earliest_start, deadline
        Every part runs inside ``[earliest_start, deadline)``.
    duration
        Common run time of the parts (``>= 1``).
    parts
        CPUs of each part (``>= 1`` each, at least one part), in the
        client's order; results name one cluster per part in this order.
    id
        A label for messages and reports.
    """

    submit: int
    earliest_start: int
    deadline: int
    duration: int
    parts: tuple[int, ...]
    id: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))
        for name in ("submit", "earliest_start", "deadline", "duration", "id"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name}: expected an integer, got {value!r}")
        if self.submit < 0 or self.earliest_start < 0:
            raise ValueError("submit and earliest_start must be >= 0")
        if self.duration < 1:
            raise ValueError(f"duration {self.duration} must be at least 1 second")
        if self.deadline < self.earliest_start:
            raise ValueError(
                f"deadline {self.deadline} is before earliest_start "
                f"{self.earliest_start}"
            )
        if not self.parts:
            raise ValueError("parts: a request needs at least one part")
        for k, q in enumerate(self.parts):
            if not isinstance(q, int) or isinstance(q, bool) or q < 1:
                raise ValueError(f"parts[{k}]: expected an integer >= 1, got {q!r}")

    @property
    def latest_start(self) -> int:
        """``deadline - duration`` (below ``earliest_start``: no start fits)."""
        return self.deadline - self.duration

    @property
    def span(self) -> int:
        """Meltzer's *Startzeitspanne*: ``deadline - earliest_start - duration``."""
        return self.latest_start - self.earliest_start

    @property
    def area(self) -> int:
        """CPU-seconds of all parts."""
        return sum(self.parts) * self.duration


@dataclass(frozen=True)
class ClusterState:
    """A cluster as a request sees it: capacity, prices and committed CPUs.

    Parameters
    ----------
    name
        Unique within a grid.
    processors
        CPUs of the cluster.
    busy
        ``(start, end, cpus)`` triples, each holding ``cpus`` over
        ``[start, end)``; they may overlap but never exceed ``processors``
        together (checked).
    tariff
        Its price table (empty: free).
    """

    name: str
    processors: int
    busy: tuple[tuple[int, int, int], ...] = ()
    tariff: Tariff = field(default_factory=Tariff)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name: expected a non-empty string")
        if not isinstance(self.processors, int) or self.processors < 1:
            raise ValueError(f"processors {self.processors!r} must be an integer >= 1")
        # Lists from JSON become tuples; the length is checked below.
        rows = [tuple(b) for b in self.busy]
        busy = cast(tuple[tuple[int, int, int], ...], tuple(rows))
        for k, entry in enumerate(busy):
            if len(entry) != 3 or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in entry
            ):
                raise ValueError(
                    f"busy[{k}]: expected [start, end, processors] integers"
                )
            start, end, cpus = entry
            if end < start or cpus < 0:
                raise ValueError(f"busy[{k}]: needs start <= end and processors >= 0")
            if cpus > self.processors:
                raise ValueError(
                    f"busy[{k}]: {cpus} processors exceed the cluster's "
                    f"{self.processors}"
                )
        object.__setattr__(self, "busy", busy)
        peak = max((used for _, used in occupancy_steps(busy)), default=0)
        if peak > self.processors:
            raise ValueError(
                f"busy entries hold {peak} processors at once, more than the "
                f"cluster's {self.processors}"
            )

    def occupied(self, start: int, end: int) -> int:
        """Most CPUs committed at one instant of ``[start, end)`` (0 if empty).

        Listing 3's ``statusanfrage``, restricted to the interval as its prose
        says.
        """
        if end <= start:
            return 0
        times = sorted({start} | {b[0] for b in self.busy if start < b[0] < end})
        return max(sum(q for s, e, q in self.busy if s <= t < e) for t in times)

    def free(self, start: int, end: int) -> int:
        """CPUs free throughout ``[start, end)``."""
        return self.processors - self.occupied(start, end)


def occupancy_steps(
    busy: Sequence[tuple[int, int, int]],
) -> list[tuple[int, int]]:
    """The committed CPUs as a step function: ``(time, cpus from then on)``."""
    delta: dict[int, int] = {}
    for start, end, cpus in busy:
        if end > start and cpus:
            delta[start] = delta.get(start, 0) + cpus
            delta[end] = delta.get(end, 0) - cpus
    steps, used = [], 0
    for t in sorted(delta):
        used += delta[t]
        steps.append((t, used))
    return steps


@dataclass(frozen=True)
class Choice:
    """A co-reservation: one start and one cluster per part (in part order)."""

    start: int
    clusters: tuple[str, ...]
    cost: Fraction

    def as_dict(self) -> dict[str, object]:
        """``{"start", "cost", "clusters"}`` for JSON (cost as a float)."""
        return {
            "start": self.start,
            "cost": float(self.cost),
            "clusters": list(self.clusters),
        }
