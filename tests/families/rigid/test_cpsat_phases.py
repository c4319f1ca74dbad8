"""The two-phase CP-SAT search of two-worker ``wct`` solves (issue 30)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from support.builders import exact_optimum, make, slow_settings, small_instances
from support.optimum import assert_sound

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.models.rigid import cpsat
from optsched.result import Result, SolveStatus


def crowded() -> Instance:
    """m = 4, eight jobs released over time whose sizes (3, 2 and 4) rarely
    fit side by side: no closed-form bound meets the list schedules, so
    the call reaches CP-SAT's search."""
    return make(
        4,
        [(0, 3, 5), (0, 2, 4), (1, 2, 6), (2, 4, 2),
         (3, 3, 3), (3, 2, 5), (5, 4, 1), (6, 3, 4)],
    )  # fmt: skip


def optimum_of_crowded() -> float:
    return exact_optimum(crowded(), "wct")


def solved(objective: str = "wct", **options: Any) -> Result:
    arguments: dict[str, Any] = {"time_limit": 20, "workers": 2, "decompose": False}
    arguments.update(options)
    result = cpsat.solve(crowded(), objective, **arguments)
    assert result.schedule is not None
    assert check_schedule(crowded(), result.schedule) == []
    return result


def test_two_worker_wct_runs_the_first_phase_and_stays_exact() -> None:
    result = solved()
    assert "first_phase" in result.params
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == optimum_of_crowded()
    # One CP-SAT bound per phase, each at most the optimum.
    own = [b.value for b in result.bounds if b.method == "cpsat"]
    assert 1 <= len(own) <= 2
    assert max(own) <= optimum_of_crowded()


@pytest.mark.parametrize(
    ("objective", "options"),
    [
        ("cmax", {}),
        ("wct", {"workers": 1}),
        ("wct", {"bound_subsolvers": ()}),
        ("wct", {"parameters": {"subsolvers": ["default_lp", "core"]}}),
    ],
)
def test_no_first_phase_outside_its_case(objective: str, options: Any) -> None:
    result = solved(objective, **options)
    assert "first_phase" not in result.params
    assert "cpsat_status" in result.params


def test_no_first_phase_in_deterministic_mode() -> None:
    with cpsat.deterministic(5.0):
        result = solved()
    assert "first_phase" not in result.params


@slow_settings(20)
@given(small_instances(max_jobs=6, max_m=4))
def test_two_phase_bounds_never_exceed_the_optimum(instance: Instance) -> None:
    if not instance.jobs:
        return
    result = cpsat.solve(instance, "wct:size", time_limit=5, workers=2, decompose=False)
    assert_sound(instance, "wct:size", result)


def test_a_stopped_first_phase_ends_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searches: list[int] = []
    original = cpsat.run_search

    def counted(*args: Any, **kwargs: Any) -> Any:
        searches.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(cpsat, "run_search", counted)
    # A first phase with no time proves nothing: the second phase follows.
    monkeypatch.setattr(cpsat, "FIRST_PHASE_SHARE", 0.0)
    assert solved().status is SolveStatus.OPTIMAL
    assert len(searches) == 2
    searches.clear()
    cpsat.stop_searches()  # as a signal would: every search stops at once
    try:
        result = solved()
    finally:
        cpsat.resume_searches()
    assert result.interrupted
    assert "first_phase" in result.params
    assert len(searches) == 1  # the second phase never started
