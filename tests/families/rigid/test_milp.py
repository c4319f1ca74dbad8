"""Time-indexed MILP: grids, LP relaxation, solvers, contiguous handling."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import golden_instance, random_instance

from optsched.check import check_schedule
from optsched.generate.perfect import perfect_packing
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.common.solution import completion_deadlines
from optsched.models.common.timegrid import (
    busy_profile,
    choose_step,
    feasible_grid,
    relaxation_grid,
)
from optsched.models.rigid import milp
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective
from optsched.result import SolveStatus


def test_lp_only_gives_a_bound_and_no_schedule() -> None:
    instance = golden_instance()
    result = milp.solve(instance, "wct", lp_only=True, time_limit=10)
    assert result.status is SolveStatus.BOUNDED
    assert result.schedule is None and result.objective is None
    lp = [b for b in result.bounds if b.method == "lp:highs"]
    assert len(lp) == 1
    assert lp[0].value <= 15  # the optimum (support.builders.golden_instance)


def test_lp_bound_of_two_parallel_jobs_is_exact() -> None:
    # Two jobs of size 1 on 2 processors, p = 3 and 5: the LP's integral
    # optimum is C = (3, 5), sum 8 (every LP solution has C_j >= p_j).
    instance = Instance(Machine(2), [Job(1, 0, 1, 3), Job(2, 0, 1, 5)])
    result = milp.solve(instance, "wct", lp_only=True, time_limit=10)
    lp = next(b for b in result.bounds if b.method == "lp:highs")
    assert lp.value == pytest.approx(8, abs=1e-4)
    assert lp.value <= 8  # lowered by the safety margin, never raised
    assert result.lower_bound == 8  # integral objective: rounded up


@pytest.mark.parametrize("step", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_coarse_grid_bounds_and_schedules_are_valid(step: int, seed: int) -> None:
    instance = random_instance(100 + seed, "any")
    for text in ("cmax", "wct:size"):
        optimum = solve_exact(instance, text).objective
        result = milp.solve(instance, text, grid=step, time_limit=10)
        assert result.params["step"] == step
        assert check_schedule(instance, result.schedule) == []
        assert all(b.value <= optimum + 1e-9 for b in result.bounds)
        assert result.objective >= optimum - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_cbc_agrees_with_highs(seed: int) -> None:
    instance = random_instance(200 + seed, "any")
    for text in ("cmax", "wct"):
        highs = milp.solve(instance, text, solver="highs", time_limit=10)
        cbc = milp.solve(instance, text, solver="cbc", time_limit=10)
        assert highs.objective == cbc.objective
        assert highs.status is cbc.status is SolveStatus.OPTIMAL


def test_large_contiguous_instance_uses_the_any_relaxation() -> None:
    instance = perfect_packing(20, 20, 12, seed=3)
    result = milp.solve(instance, "cmax", time_limit=2)
    assert result.params["contiguous_model"] == "any-relaxation"
    assert all(b.value <= 20 for b in result.bounds)
    assert any(b.method.endswith(":any") for b in result.bounds)
    assert check_schedule(instance, result.schedule) == []
    assert not result.upper_bound_source.startswith("milp")


def test_small_contiguous_instance_uses_the_exact_pulse_model() -> None:
    instance = golden_instance("contiguous")
    result = milp.solve(instance, "cmax", time_limit=10)
    assert result.params["contiguous_model"] == "exact"
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, 7)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown MILP solver 'gurobi'"):
        milp.solve(golden_instance(), "cmax", solver="gurobi")
    with pytest.raises(ValueError, match="grid step 0"):
        milp.solve(golden_instance(), "cmax", grid=0)


def test_choose_step_fits_the_cell_budget() -> None:
    assert choose_step(400, 400) == 1
    assert choose_step(401, 400) == 2
    assert choose_step(10**6, 400) == 2500


def test_busy_profile_is_a_step_function() -> None:
    blocks = (BusyBlock(2, 6, 1), BusyBlock(4, 8, 2))
    times, busy = busy_profile(Instance(Machine(3, "any", blocks), ()))
    assert times.tolist() == [0, 2, 4, 6, 8]
    assert busy.tolist() == [0, 1, 3, 2, 0]


@st.composite
def instances_with_steps(draw: st.DrawFn) -> tuple[Instance, int, str]:
    seed = draw(st.integers(0, 10**6))
    step = draw(st.integers(2, 4))
    objective = draw(st.sampled_from(["cmax", "wct"]))
    return random_instance(seed, "any"), step, objective


@given(instances_with_steps())
@settings(max_examples=40, deadline=None)
def test_optimal_schedules_map_into_the_relaxation_grid(
    case: tuple[Instance, int, str],
) -> None:
    """The rounding argument of models.grid, checked on optimal schedules.

    With ``t_j = floor(S_j / g)`` every start lies in its window, the grid
    jobs occupying a cell fit in its capacity, and ``g t_j + p_j <= C_j``.
    """
    instance, step, text = case
    objective = Objective.parse(text)
    optimal = solve_exact(instance, objective).schedule
    assert optimal is not None
    deadlines = completion_deadlines(instance, objective, optimal)
    weights = {j.id: objective.weight(j) for j in instance.jobs}
    grid = relaxation_grid(instance, deadlines, step, weights)
    used = np.zeros(grid.cells, dtype=int)
    for job in grid.jobs:
        cell = optimal[job.id].start // step
        assert job.first <= cell <= job.last
        assert job.completion(cell, step) <= optimal[job.id].end
        used[cell : cell + job.duration] += job.size
    assert (used <= np.array(grid.capacity)).all()


@given(instances_with_steps())
@settings(max_examples=40, deadline=None)
def test_feasible_grid_list_schedule_is_feasible_in_seconds(
    case: tuple[Instance, int, str],
) -> None:
    from optsched.models.common.solution import assign_processors

    instance, step, text = case
    order = [j.id for j in instance.jobs]
    random.Random(step).shuffle(order)
    weights = {j.id: 1.0 for j in instance.jobs}
    grid, cells = feasible_grid(instance, step, order, text, weights)
    schedule = assign_processors(instance, {j: step * t for j, t in cells.items()})
    assert check_schedule(instance, schedule) == []
    for job in grid.jobs:
        assert job.first <= cells[job.id] <= job.last
