"""Issue 30: the preemptive back-end's LP bounds hold the call's time limit.

No test here times anything: the deadline is already past (``time_limit=0``
or a deadline of ``0.0`` on the ``time.monotonic`` clock), or HiGHS is made
to report its time limit, and the result must be honest: no LP value that
was not proven, a valid lower bound, a checked schedule and a note naming
what was left out.
"""

from __future__ import annotations

import highspy
import pytest

from optsched.check import check_schedule
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models import SolveStatus, solve
from optsched.models.common.template import OutOfTime
from optsched.models.preempt import configurations
from optsched.models.preempt.model import (
    CONFIGURATION_LP_CUT,
    WCT_LP_SKIPPED,
    configuration_lp_bound,
    preemptive_makespan,
    preemptive_wct,
)
from optsched.models.preempt.wct_lp import preemptive_wct_lp_bound
from optsched.objective import Objective
from optsched.result import Result

PAST = 0.0  # a time.monotonic() deadline that has always passed
WCT = Objective("wct")


def _instance(
    jobs: list[tuple[int, int, int]], m: int, blocks: tuple[BusyBlock, ...] = ()
) -> Instance:
    """Jobs as ``(release, size, runtime)``, numbered from 1."""
    return Instance(
        Machine(m, "any", blocks),
        tuple(Job(k, r, q, p) for k, (r, q, p) in enumerate(jobs, start=1)),
    )


# Two jobs side by side from 0 on 2 processors: sum C_j = 500 + 600 = 1100,
# which the closed-form height bound (C_j >= r_j + p_j) already proves.
SIDE_BY_SIDE = _instance([(0, 1, 500), (0, 1, 600)], m=2)
# Five jobs on 3 processors with releases and a busy block (small enough
# for the exact time-indexed optimum).
MIXED = _instance(
    [(0, 2, 3), (1, 1, 4), (2, 3, 2), (2, 1, 1), (5, 2, 2)],
    m=3,
    blocks=(BusyBlock(3, 5, 1),),
)


def _checked(instance: Instance, result: Result, objective: Objective) -> None:
    """A schedule that passes the checker, its objective recomputed, and a
    lower bound at most that objective."""
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == objective.value(instance, result.schedule)
    assert result.lower_bound is not None
    assert result.lower_bound <= result.objective


class _NeverRun(highspy.Highs):
    """A HiGHS that fails if asked to solve (no LP after the deadline)."""

    def run(self) -> highspy.HighsStatus:
        raise AssertionError("an LP was solved after the deadline")


class _StoppedByTheClock(highspy.Highs):
    """A HiGHS whose every solve ends on its time limit, not at the optimum."""

    def run(self) -> highspy.HighsStatus:
        return highspy.HighsStatus.kWarning

    def getModelStatus(self) -> highspy.HighsModelStatus:
        return highspy.HighsModelStatus.kTimeLimit


# --------------------------------------------------------------------------
# wct: the interval-indexed LP bound of windows too large for the exact model
# --------------------------------------------------------------------------


def test_a_spent_limit_solves_no_wct_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(highspy, "Highs", _NeverRun)
    result = preemptive_wct(
        SIDE_BY_SIDE, WCT, max_horizon=100, too_large="bound", time_limit=0
    )
    assert WCT_LP_SKIPPED in result.skipped
    assert "preemptive-lp" not in {b.method for b in result.bounds}
    _checked(SIDE_BY_SIDE, result, WCT)
    # The closed-form bounds still prove the optimum (hand-checked above).
    assert (result.lower_bound, result.objective) == (1100, 1100)
    assert result.status is SolveStatus.OPTIMAL


def test_the_wct_lp_refuses_past_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(highspy, "Highs", _NeverRun)
    with pytest.raises(OutOfTime):
        preemptive_wct_lp_bound(MIXED, WCT, deadline=PAST)


def test_an_lp_stopped_by_its_time_limit_is_no_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HiGHS ends on its limit (not at the optimum): no value is reported,
    whatever duals it left."""
    monkeypatch.setattr(highspy, "Highs", _StoppedByTheClock)
    with pytest.raises(OutOfTime):
        preemptive_wct_lp_bound(MIXED, WCT, deadline=float("inf"))


def test_a_far_deadline_gives_the_same_wct_lp_bound() -> None:
    exact = preemptive_wct(MIXED, WCT)
    assert exact.status is SolveStatus.OPTIMAL and exact.objective is not None
    unlimited = preemptive_wct_lp_bound(MIXED, WCT)
    far = preemptive_wct_lp_bound(MIXED, WCT, deadline=float("inf"))
    assert (far.value, far.partial) == (unlimited.value, False)
    assert 0 < unlimited.value <= exact.objective


def test_a_large_wct_window_past_its_deadline_is_honest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the back-end's entry point (``models.solve``), with blocks:
    only the closed-form bound, at most the exact preemptive optimum."""
    exact = preemptive_wct(MIXED, WCT)
    assert exact.status is SolveStatus.OPTIMAL and exact.objective is not None
    monkeypatch.setattr(highspy, "Highs", _NeverRun)
    result = solve(MIXED, WCT, backend="preemptive", time_limit=0, max_horizon=1)
    assert WCT_LP_SKIPPED in result.skipped
    assert [b.method for b in result.bounds] == ["squashed-area"]
    _checked(MIXED, result, WCT)
    assert result.lower_bound <= exact.objective


# --------------------------------------------------------------------------
# cmax: the configuration LP
# --------------------------------------------------------------------------


def test_a_spent_limit_solves_no_configuration_lp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``time_limit=0``: seeding the master stops at once, no master LP is
    solved. The configuration-LP bound is only what needs no LP: the start
    of the first candidate interval, the last release 5; the area bound
    gives 8 (21 units of work; 3 processors minus the block's 2 units: 19
    by time 7, 22 by time 8), which is the optimum."""
    exact = preemptive_makespan(MIXED)
    assert exact.status is SolveStatus.OPTIMAL and exact.objective is not None

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a master LP was solved after the deadline")

    monkeypatch.setattr(configurations, "_generate", never)
    cmax = Objective("cmax")
    result = preemptive_makespan(MIXED, time_limit=0)
    assert CONFIGURATION_LP_CUT in result.skipped
    assert result.params["lp_converged"] is False
    _checked(MIXED, result, cmax)
    assert {b.method: b.value for b in result.bounds} == {
        "configuration-lp": 5,
        "area": 8,
    }
    assert result.lower_bound == exact.objective == 8
    assert result.upper_bound_source == "list:submit"
    bound = configuration_lp_bound(MIXED, deadline=PAST)
    assert (bound.value, bound.partial) == (5, True)


def test_no_rounding_mip_after_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the deadline the integer run times are the LP's floors (no MIP)."""
    problem = configurations.ConfigurationProblem.of(MIXED)
    chosen = configurations.solve_configuration_lp(problem).chosen
    assert chosen is not None and chosen.converged
    monkeypatch.setattr(highspy, "Highs", _NeverRun)
    durations, method = configurations.round_durations(problem, chosen, deadline=PAST)
    assert method == "floor"
    assert durations == [int(x + 1e-9) for x in chosen.durations]
