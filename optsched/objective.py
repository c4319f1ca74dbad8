"""Objectives of the offline models.

``cmax``: makespan ``max_j C_j``. ``wct``: total weighted completion time
``sum_j w_j C_j`` (or the weighted flow ``sum_j w_j (C_j - r_j)`` with
``relative``; it differs by the constant ``sum_j w_j r_j``, so both have the
same optimal schedules). Weights: ``one`` (``w_j = 1``), ``size``
(``w_j = q_j``), ``area`` (``w_j = q_j p_j``) or ``instance`` (the weights
stored on the jobs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from optsched import metrics
from optsched.instance import Instance, Job
from optsched.schedule import Schedule

OBJECTIVE_KINDS = ("cmax", "wct")
WEIGHT_RULES = ("one", "size", "area", "instance")


@dataclass(frozen=True, slots=True)
class Objective:
    """What to minimise.

    Parameters
    ----------
    kind
        ``"cmax"`` or ``"wct"``.
    weights
        Weight rule for ``wct``: ``one``, ``size``, ``area`` or ``instance``.
    relative
        ``wct`` only: measure completion from release (weighted flow time).
    """

    kind: str = "cmax"
    weights: str = "one"
    relative: bool = False

    def __post_init__(self) -> None:
        if self.kind not in OBJECTIVE_KINDS:
            raise ValueError(
                f"objective {self.kind!r} is not one of {', '.join(OBJECTIVE_KINDS)}"
            )
        if self.weights not in WEIGHT_RULES:
            raise ValueError(
                f"weights {self.weights!r} is not one of {', '.join(WEIGHT_RULES)}"
            )

    @classmethod
    def parse(cls, text: str | Objective) -> Objective:
        """``"cmax"``, ``"wct"``, ``"wct:size"``, ``"wct:area:relative"``."""
        if isinstance(text, Objective):
            return text
        kind, *rest = text.split(":")
        weights = next((r for r in rest if r in WEIGHT_RULES), "one")
        unknown = [r for r in rest if r not in WEIGHT_RULES and r != "relative"]
        if unknown:
            raise ValueError(f"objective {text!r}: unknown option {unknown[0]!r}")
        return cls(kind, weights, "relative" in rest)

    @property
    def label(self) -> str:
        """Canonical text form, inverse of :meth:`parse`."""
        if self.kind == "cmax":
            return "cmax"
        parts = ["wct", self.weights] + (["relative"] if self.relative else [])
        return ":".join(parts)

    def weight(self, job: Job) -> float:
        """``w_j`` under this objective's weight rule."""
        if self.weights == "one":
            return 1.0
        if self.weights == "size":
            return float(job.size)
        if self.weights == "area":
            return float(job.size * job.runtime)
        return float(job.weight)

    def exact_weight(self, job: Job) -> int | float:
        """``w_j`` as an exact ``int`` when it is an integer, else a float.

        :meth:`weight` is a float, which rounds an ``area`` weight
        ``q_j p_j`` beyond ``2**53``; sums of exact weights (objective values,
        bounds) stay exact whatever their size.
        """
        if self.weights == "one":
            return 1
        if self.weights == "size":
            return job.size
        if self.weights == "area":
            return job.size * job.runtime
        weight = float(job.weight)
        return int(weight) if weight.is_integer() else weight

    def weighted(self, instance: Instance) -> Instance:
        """The instance with ``Job.weight`` set by the weight rule.

        Jobs of zero area get a tiny positive weight under ``area`` because
        weights must be positive; they then contribute ``~0``.
        """
        if self.weights == "instance":
            return instance
        jobs = tuple(j.replace(weight=self.weight(j) or 1e-9) for j in instance.jobs)
        return instance.with_jobs(jobs)

    def value(self, instance: Instance, schedule: Schedule) -> float:
        """The objective of ``schedule``, recomputed from its placements.

        An ``int`` when every term is an integer (makespans; weighted
        completion times with integer weights), so that values beyond
        ``2**53`` stay exact and compare exactly with integer bounds; a float
        (correctly rounded sum, :func:`math.fsum`) otherwise.
        """
        if self.kind == "cmax":
            return metrics.makespan(instance, schedule)
        return _exact_sum(
            self.exact_weight(j)
            * (schedule[j.id].end - (j.release if self.relative else 0))
            for j in instance.jobs
        )

    def offset(self, instance: Instance) -> float:
        """Constant subtracted by ``relative``: ``sum_j w_j r_j`` (0 otherwise)."""
        if self.kind == "wct" and self.relative:
            return _exact_sum(self.exact_weight(j) * j.release for j in instance.jobs)
        return 0


def _exact_sum(terms: Iterable[int | float]) -> int | float:
    """The sum, exact as an ``int`` when every term is one, else :func:`math.fsum`."""
    values = list(terms)
    if all(isinstance(v, int) for v in values):
        return sum(values)
    return math.fsum(values)
