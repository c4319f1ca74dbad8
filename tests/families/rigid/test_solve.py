"""The back-end registry and every back-end against the brute-force optimum.

Each back-end, on both allocations and both objectives, is compared with
:func:`optsched.models.rigid.enumerate.solve_exact` on tiny seeded random
instances (releases, zero-length jobs, busy blocks with offsets). Every
returned schedule goes through the checker; every bound is checked against
the proven optimum.
"""

from __future__ import annotations

import inspect
import math
import time

import pytest
from support.builders import exact_optimum, golden_instance, random_instance

from optsched.check import check_schedule
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models import BACKENDS, solve
from optsched.models.common.settings import (
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    SolverSettings,
)
from optsched.models.common.solution import (
    checked_candidate,
    completion_deadlines,
    finish,
    upper_bound_candidates,
)
from optsched.models.rigid import cpsat
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective
from optsched.result import Bound, SolveStatus
from optsched.schedule import Placement, Schedule

OBJECTIVES = ("cmax", "wct", "wct:size:relative", "wct:instance")
EXACT = (("cpsat", {}), ("milp", {}), ("milp", {"solver": "cbc"}))


def assert_valid(instance: Instance, result, optimum: float) -> None:  # type: ignore[no-untyped-def]
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    assert all(p.processors is not None for p in result.schedule.placements.values())
    assert not any(r.startswith(("cpsat", "milp")) for r in result.rejected)
    for bound in result.bounds:
        assert bound.value <= optimum + 1e-9, bound
    assert result.lower_bound is not None and result.lower_bound <= optimum + 1e-9
    assert result.objective >= optimum - 1e-9


CASES = [(seed, alloc) for seed in range(12) for alloc in ("any", "contiguous")]


@pytest.mark.parametrize(("seed", "allocation"), CASES)
def test_every_backend_agrees_with_enumeration(seed: int, allocation: str) -> None:
    instance = random_instance(seed, allocation)
    for text in OBJECTIVES:
        objective = Objective.parse(text)
        optimum = exact_optimum(instance, objective)
        for backend, options in EXACT:
            result = solve(
                instance, objective, backend=backend, time_limit=10, workers=2,
                **options,
            )  # fmt: skip
            assert_valid(instance, result, optimum)
            assert result.status is SolveStatus.OPTIMAL, (backend, options, text)
            assert result.objective == pytest.approx(optimum, abs=1e-9)
            assert result.objective == objective.value(instance, result.schedule)
        bounded = solve(instance, objective, backend="bounds-only")
        assert_valid(instance, bounded, optimum)
        assert bounded.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)
        if bounded.status is SolveStatus.OPTIMAL:
            assert bounded.objective == pytest.approx(optimum)


@pytest.mark.parametrize("backend", ["cpsat", "milp"])
@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_golden_instance(backend: str, allocation: str) -> None:
    instance = golden_instance(allocation)
    cmax = solve(instance, "cmax", backend=backend, time_limit=10)
    assert (cmax.status, cmax.objective, cmax.lower_bound) == (
        SolveStatus.OPTIMAL,
        7,
        7,
    )
    wct = solve(instance, "wct", backend=backend, time_limit=10)
    assert (wct.status, wct.objective, wct.lower_bound) == (SolveStatus.OPTIMAL, 15, 15)
    starts = {jid: p.start for jid, p in wct.schedule.placements.items()}
    assert starts == {1: 0, 2: 3, 3: 3}
    assert check_schedule(instance, wct.schedule) == []
    flow = solve(instance, "wct:one:relative", backend=backend, time_limit=10)
    assert flow.objective == 15 - 2  # minus sum of releases


def test_empty_instance_is_optimal_with_value_zero() -> None:
    instance = Instance(Machine(4), ())
    for backend in BACKENDS:
        result = solve(instance, "wct", backend=backend, time_limit=1)
        assert (result.status, result.objective, result.lower_bound) == (
            SolveStatus.OPTIMAL,
            0.0,
            0.0,
        )


def test_unknown_backend_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="valid back-ends: cpsat, milp, bounds-only"):
        solve(golden_instance(), "cmax", backend="gurobi")


def test_unknown_option_names_the_backend_options() -> None:
    with pytest.raises(ValueError, match="takes no option 'grid'"):
        solve(golden_instance(), "cmax", backend="cpsat", grid=5)


def test_bad_time_limit_and_workers_are_refused() -> None:
    with pytest.raises(ValueError, match="time limit"):
        solve(golden_instance(), "cmax", time_limit=-1)
    with pytest.raises(ValueError, match="workers"):
        solve(golden_instance(), "cmax", workers=0)


def test_solver_settings_hold_the_defaults_and_refuse_bad_values() -> None:
    settings = SolverSettings()
    assert (settings.time_limit, settings.workers) == (
        DEFAULT_TIME_LIMIT,
        DEFAULT_WORKERS,
    )
    defaults = inspect.signature(solve).parameters
    assert defaults["time_limit"].default == DEFAULT_TIME_LIMIT
    assert defaults["workers"].default == DEFAULT_WORKERS
    with pytest.raises(ValueError, match=r"^time limit -1 must not be negative$"):
        SolverSettings(time_limit=-1)
    with pytest.raises(ValueError, match=r"^time limit nan must be a number"):
        SolverSettings(time_limit=math.nan)
    with pytest.raises(ValueError, match=r"^workers 0 must be at least 1$"):
        SolverSettings(workers=0)
    # A back-end called directly checks its settings too.
    with pytest.raises(ValueError, match=r"^time limit nan must be a number"):
        cpsat.solve(golden_instance(), "cmax", time_limit=math.nan)
    given = {"instance": None, "time_limit": 5, "workers": 1, "solver": "highs"}
    assert SolverSettings.of(given) == SolverSettings(time_limit=5, workers=1)


def test_steps_left_out_are_a_typed_field() -> None:
    # No time at all: the bounds and the search are skipped, each named in
    # Result.skipped (and, for the readers that still look there, in
    # params["skipped"]); the list schedule is still a checked answer.
    result = solve(golden_instance(), "cmax", time_limit=0, workers=1)
    assert "cpsat: search skipped (time limit)" in result.skipped
    assert list(result.skipped) == list(result.params["skipped"])
    assert result.schedule is not None
    assert check_schedule(golden_instance(), result.schedule) == []
    proven = solve(golden_instance(), "cmax", time_limit=10, workers=1)
    assert proven.skipped == () and "skipped" not in proven.params


def test_optimal_hint_is_the_upper_bound_source() -> None:
    # On the golden instance every list order starts job 1 first or puts a
    # small job at 0; the hint below is optimal for wct, so nothing beats it.
    instance = golden_instance()
    hint = Schedule(
        {1: Placement(0, 3, (0, 1)), 2: Placement(3, 5, (0,)), 3: Placement(3, 7, (1,))}
    )
    result = solve(instance, "wct", backend="bounds-only", hint=hint)
    assert result.objective == 15
    assert result.upper_bound_source in ("hint", *_heuristic_sources(result))


def _heuristic_sources(result) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    # A heuristic reaching the same value first keeps the credit (ties go to
    # the earlier candidate); any list or policy source is then acceptable.
    source = result.upper_bound_source or ""
    return (source,) if source.startswith(("list:", "shelf:", "policy:")) else ()


def test_infeasible_hint_is_rejected_not_used() -> None:
    instance = golden_instance()
    bad = Schedule({1: Placement(0, 3), 2: Placement(0, 2), 3: Placement(2, 6)})
    result = solve(instance, "wct", backend="bounds-only", hint=bad)
    assert any(r.startswith("hint: capacity") for r in result.rejected)
    assert result.upper_bound_source != "hint"
    assert check_schedule(instance, result.schedule) == []


def test_busy_blocks_are_fixed_occupancy() -> None:
    # Two processors, one busy on [0, 10): a 2-wide job must wait until 10.
    blocks = (BusyBlock(0, 10, 1, offset=1),)
    for allocation in ("any", "contiguous"):
        machine = Machine(2, "contiguous", blocks).with_allocation(allocation)
        instance = Instance(machine, [Job(1, 0, 2, 3), Job(2, 0, 1, 4)])
        for backend in ("cpsat", "milp"):
            result = solve(instance, "cmax", backend=backend, time_limit=10)
            assert result.objective == 13
            assert result.schedule[1].start == 10
            assert check_schedule(instance, result.schedule) == []


def test_a_bound_above_a_checked_schedule_is_an_error() -> None:
    instance = golden_instance()
    objective = Objective("wct")
    optimal = Schedule(
        {1: Placement(0, 3, (0, 1)), 2: Placement(3, 5, (0,)), 3: Placement(3, 7, (1,))}
    )
    candidate, reason = checked_candidate(instance, objective, "by-hand", optimal)
    assert candidate is not None and reason is None
    result = finish(
        instance, objective, backend="test", candidates=[candidate],
        bounds=[Bound(14.0, "fine"), Bound(16.0, "bogus")],
        started=time.perf_counter(), params={},
    )  # fmt: skip
    assert result.status is SolveStatus.ERROR
    assert result.error is not None and "bogus = 16.0" in result.error


@pytest.mark.parametrize("seed", range(30))
def test_optimal_schedules_meet_the_completion_deadlines(seed: int) -> None:
    """The horizon argument of ``completion_deadlines`` on exact optima.

    The deadlines come from the heuristic incumbent; the enumerator's
    optimal schedule (one of the optimal ones) must meet every one of them.
    """
    instance = random_instance(300 + seed, ("any", "contiguous")[seed % 2])
    for text in ("cmax", "wct", "wct:area"):
        objective = Objective.parse(text)
        optimal = solve_exact(instance, objective).schedule
        assert optimal is not None
        incumbent = upper_bound_candidates(instance, objective)[0][0]
        deadlines = completion_deadlines(instance, objective, incumbent.schedule)
        for job in instance.jobs:
            assert job.release + job.runtime <= deadlines[job.id]
            assert incumbent.schedule[job.id].end <= deadlines[job.id]
            if objective.kind == "cmax" or objective.weight(job) > 0:
                assert optimal[job.id].end <= deadlines[job.id], (text, job)
