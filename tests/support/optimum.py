"""A solve's result checked against the exact optimum of a small instance."""

from __future__ import annotations

import math

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.result import Result, SolveStatus
from support.builders import exact_optimum


def assert_sound(instance: Instance, objective: str, result: Result) -> None:
    """``result`` has a checked schedule no better than the optimum (by
    :func:`~support.builders.exact_optimum`), no bound above it, and equals
    it when it claims to be optimal."""
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    optimum = exact_optimum(instance, objective)
    assert result.objective is not None
    assert result.objective >= optimum * (1 - 1e-12)
    for bound in result.bounds:
        assert bound.value <= optimum * (1 + 1e-12), bound
    if result.status is SolveStatus.OPTIMAL:
        assert math.isclose(result.objective, optimum, rel_tol=1e-9)
