"""Machines that are not flat: node speeds and SMP nodes with a span limit.

Two features of :class:`~optsched.instance.Machine`, alone or together:

Speeds (Rassmann 2020, after Arndt et al. 2000)
    Processor ``k`` has a speed ``s_k > 0``. A job's ``runtime`` (and
    ``estimate``) is then its *work* ``p_j`` at speed 1, and on the
    processor set ``S`` it runs ``ceil(p_j / sum_{k in S} s_k)`` seconds:
    ``p = 10`` on one processor of speed 2 takes 5 s, and so does ``p = 10``
    on two processors of speed 1. A flat instance gets speeds by
    :func:`optsched.topology.machines.with_speeds`, which keeps each job's run time on
    ``size`` processors of speed 1 (``p_j = runtime_j * size_j``).
SMP nodes (Wang, seed 004)
    ``count`` nodes of ``cpus`` processors each; processor ``i`` belongs to
    node ``i // cpus``. A job of ``n`` processors may touch (span) at most
    ``tight + ceil(n / cpus)`` nodes (:attr:`Nodes.tight`; ``None``: no
    limit), and it pays a communication cost that inflates its run time
    with its span and the network load ``level``:

    - ``cost="ratio"`` (the default; Wang's Table 2 read as an overhead
      ratio): ``d' = ceil(d * (1 + base * span * level))``;
    - ``cost="excess"``: only the nodes beyond the minimum pay,
      ``d' = ceil(d * (1 + base * (span - ceil(n / cpus)) * level))``.

    ``base`` is Wang's BASE = 0.05. The paper gives the cost
    ``BASE * span * Level`` but not how it enters the run time; both
    readings are assumptions, the first the closest to its "overhead ratio"
    header. Wang's adaptive rule chooses ``tight = max(0, 6 - level)``
    (:func:`adaptive_tight`).

With both, the run time is ``ceil(p_j / sum_S s_k * inflation)``, computed
in exact rational arithmetic (:func:`exact_run_time`), so that no float
noise moves a ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from optsched.errors import is_count, shown

COSTS: tuple[str, ...] = ("ratio", "excess")
"""How the communication cost inflates a run time (see the module notes)."""

ADAPTIVE_CONSTANT = 6
"""Wang's adaptive rule: ``Level + Tight = 6``."""

DEFAULT_BASE = 0.05
"""Wang's BASE, the cost of one node's communication at level 1."""


def exact(value: float) -> Fraction:
    """``value`` as an exact fraction: ``0.05`` is ``1/20``, not the binary
    float nearest to it (the decimal the user wrote is meant)."""
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(repr(float(value)))


def adaptive_tight(level: int, constant: int = ADAPTIVE_CONSTANT) -> int:
    """Wang's adaptive span slack: ``max(0, constant - level)``."""
    return max(0, constant - level)


@dataclass(frozen=True, slots=True)
class Nodes:
    """An SMP cluster: ``count`` nodes of ``cpus`` processors each.

    Parameters
    ----------
    count, cpus
        ``Q`` nodes of ``P`` processors; the machine has ``Q * P``
        processors and processor ``i`` is on node ``i // P``.
    tight
        Span slack: a job of ``n`` processors may touch at most
        ``tight + ceil(n / P)`` nodes. ``None``: no limit.
    level
        Network load, an integer ``>= 0`` (Wang uses 0 to 5); 0 means no
        communication cost.
    base
        Cost of one node's communication at level 1 (Wang: 0.05).
    cost
        ``"ratio"`` or ``"excess"``: how the cost inflates the run time
        (module notes).
    """

    count: int
    cpus: int
    tight: int | None = None
    level: int = 0
    base: float = DEFAULT_BASE
    cost: str = "ratio"

    def __post_init__(self) -> None:
        for name in ("count", "cpus", "level"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"machine nodes: {name} must be an integer")
        if self.count < 1 or self.cpus < 1:
            raise ValueError(
                f"machine nodes: {shown(self.count)}x{shown(self.cpus)} needs at "
                "least one node of one processor"
            )
        if self.tight is not None and not is_count(self.tight):
            raise ValueError(
                f"machine nodes: tight {shown(self.tight)} must be an integer >= 0"
            )
        if self.level < 0:
            raise ValueError(f"machine nodes: level {self.level} must be >= 0")
        if (
            isinstance(self.base, bool)
            or not isinstance(self.base, int | float)
            or not math.isfinite(self.base)
            or self.base < 0
        ):
            raise ValueError(
                f"machine nodes: base {shown(self.base)} must be a number >= 0"
            )
        if self.cost not in COSTS:
            raise ValueError(
                f"machine nodes: cost {shown(self.cost)} is not one of "
                f"{', '.join(COSTS)}"
            )

    @property
    def processors(self) -> int:
        """``count * cpus``."""
        return self.count * self.cpus

    def node_of(self, processor: int) -> int:
        """The node of processor ``processor``."""
        return processor // self.cpus

    def min_span(self, size: int) -> int:
        """``ceil(size / cpus)``: the fewest nodes a job of ``size`` touches."""
        return -(-size // self.cpus)

    def span_limit(self, size: int) -> int:
        """Most nodes a job of ``size`` may touch: ``tight + ceil(size/P)``,
        at most ``count``."""
        if self.tight is None:
            return self.count
        return min(self.count, self.tight + self.min_span(size))

    def span(self, processors: Iterable[int]) -> int:
        """Number of nodes the processors touch."""
        return len({p // self.cpus for p in processors})

    def inflation(self, size: int, span: int) -> Fraction:
        """Run-time factor of a job of ``size`` spread over ``span`` nodes:
        ``1 + base * level * span`` (``ratio``) or ``1 + base * level *
        (span - ceil(size/P))`` (``excess``)."""
        return _inflation(self.base, self.level, self.cost, self.cpus, size, span)

    def fits(self, size: int, free_per_node: Sequence[int]) -> bool:
        """Whether ``size`` processors within the span limit are free.

        Feasible iff the ``k = span_limit(size)`` nodes with the most free
        processors hold ``size`` of them together (taking the fullest nodes
        first reaches the minimum span).
        """
        best = sorted(free_per_node, reverse=True)[: self.span_limit(size)]
        return sum(best) >= size

    def describe(self) -> str:
        """``10x10, tight 2, level 4`` (for messages and tables)."""
        parts = [f"{self.count}x{self.cpus}"]
        parts.append("no span limit" if self.tight is None else f"tight {self.tight}")
        if self.level:
            parts.append(f"level {self.level} ({self.cost}, base {self.base:g})")
        return ", ".join(parts)


@lru_cache(maxsize=4096)
def _inflation(
    base: float, level: int, cost: str, cpus: int, size: int, span: int
) -> Fraction:
    if not level:
        return Fraction(1)
    paid = span if cost == "ratio" else span - (-(-size // cpus))
    return 1 + exact(base) * level * paid


def exact_run_time(
    work: int,
    processors: Sequence[int],
    speeds: Sequence[Fraction] | None,
    nodes: Nodes | None,
) -> Fraction:
    """Run time of ``work`` on ``processors`` before rounding up.

    ``work / sum_{k in S} s_k`` (``work`` itself without speeds), times the
    communication inflation of the set's span on SMP nodes. ``speeds`` are
    exact fractions (:func:`exact`).
    """
    time = Fraction(work)
    if speeds is not None:
        time /= sum((speeds[p] for p in processors), Fraction(0))
    if nodes is not None and nodes.level:
        time *= nodes.inflation(len(processors), nodes.span(processors))
    return time


def ceiling(value: Fraction) -> int:
    """``ceil(value)`` of an exact fraction."""
    return -(-value.numerator // value.denominator)
