"""CP-SAT back-end: known optima, symmetry breaking, weights, hints, options."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import INSTANCES

from optsched.check import check_schedule
from optsched.generate.perfect import perfect_packing
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io import read
from optsched.models.rigid import cpsat
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective
from optsched.result import Incumbent, SolveStatus
from optsched.schedule import Placement, Schedule


@pytest.mark.parametrize(
    ("items", "seed", "guillotine"),
    [(10, 1, True), (10, 2, False), (15, 3, True), (15, 4, False), (20, 5, False)],
)
def test_perfect_packings_are_solved_to_their_height(
    items: int, seed: int, guillotine: bool
) -> None:
    instance = perfect_packing(12, 12, items, seed=seed, guillotine=guillotine)
    result = cpsat.solve(instance, "cmax", time_limit=30, workers=2)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == 12
    assert check_schedule(instance, result.schedule) == []


def test_bundled_perfect_packing_is_solved_to_its_height() -> None:
    instance = read(INSTANCES / "perfect" / "pp_ng_10.json")
    height = sum(j.size * j.runtime for j in instance.jobs) // instance.processors
    result = cpsat.solve(instance, "cmax", time_limit=30, workers=2)
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, height)


def identical_jobs(allocation: str) -> Instance:
    """Five identical 2x3 jobs and one 1x4 job on 3 processors.

    Cmax by hand: area 5*6 + 4 = 34 -> ceil(34/3) = 12; only one 2-wide job
    fits at a time (2 + 2 > 3), so the 2-wide jobs alone need 5 * 3 = 15,
    and the 1x4 job runs beside them: the optimum is 15.
    """
    jobs = [Job(i, 0, 2, 3) for i in range(1, 6)] + [Job(6, 0, 1, 4)]
    return Instance(Machine(3, allocation), jobs)


@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_symmetry_breaking_keeps_the_optimum(allocation: str) -> None:
    instance = identical_jobs(allocation)
    for objective in ("cmax", "wct"):
        optimum = solve_exact(instance, objective).objective
        on = cpsat.solve(instance, objective, time_limit=10)
        off = cpsat.solve(instance, objective, time_limit=10, symmetry=False)
        assert on.params["symmetry_groups"] == 1
        assert off.params["symmetry_groups"] == 0
        assert on.objective == off.objective == optimum
        assert on.status is SolveStatus.OPTIMAL
    assert solve_exact(instance, "cmax").objective == 15


def test_zero_length_job_inside_a_full_width_job_is_allowed() -> None:
    # CP-SAT's NoOverlap2D would forbid the empty box inside job 1; the model
    # leaves zero-length jobs out of the resource constraints.
    jobs = [Job(1, 0, 3, 4), Job(2, 2, 3, 0)]
    instance = Instance(Machine(3, "contiguous"), jobs)
    result = cpsat.solve(instance, "wct", time_limit=5)
    assert result.objective == 4 + 2
    assert result.schedule[2].start == 2
    assert result.status is SolveStatus.OPTIMAL


def test_contiguous_offsets_come_from_the_model() -> None:
    # m = 5 and a block on processors 1-2 during [0, 5): the only free pair
    # of adjacent processors at time 0 is 3-4.
    blocks = (BusyBlock(0, 5, 2, offset=1),)
    instance = Instance(Machine(5, "contiguous", blocks), [Job(1, 0, 2, 5)])
    result = cpsat.solve(instance, "cmax", time_limit=5)
    assert result.objective == 5
    assert result.schedule[1].processors == (3, 4)


def test_integer_weights_are_exact_when_possible() -> None:
    assert cpsat.integer_weights([1.0, 3.0, 7.0], horizon=1000) == (
        [1, 3, 7],
        1.0,
        True,
    )
    # Halves and quarters: times the least power of two that makes integers.
    assert cpsat.integer_weights([0.5, 1.25, 2.0], horizon=1000) == (
        [2, 5, 8],
        4.0,
        True,
    )
    # 0.1 is no short dyadic fraction: scaled and floored, not exact.
    assert cpsat.integer_weights([0.1, 1.0], horizon=1000)[2] is False


def test_scaled_bound_rounds_in_the_safe_direction() -> None:
    # An exact integer objective comes back with float noise below it.
    assert cpsat.scaled_bound(90.99999999999999, 1.0, True) == 91
    assert cpsat.scaled_bound(90.99999999999999, 4.0, True) == 91 / 4
    assert cpsat.scaled_bound(91.0, 3.3, False) < 91 / 3.3


@given(
    st.lists(st.floats(0.001, 1e4, allow_nan=False), min_size=1, max_size=8),
    st.integers(1, 10**7),
)
@settings(max_examples=60, deadline=None)
def test_scaled_weights_never_exceed_the_true_ones(
    weights: list[float], horizon: int
) -> None:
    scaled, scale, _ = cpsat.integer_weights(weights, horizon)
    for w, s in zip(weights, scaled, strict=True):
        assert s <= w * scale  # floor: the solver's bound divided by s is valid
    assert sum(scaled) * horizon < 2**51


def test_fractional_weights_give_a_valid_bound() -> None:
    jobs = [
        Job(1, 0, 2, 3, weight=0.5),
        Job(2, 0, 2, 2, weight=1.25),
        Job(3, 1, 1, 2, weight=2.0),
    ]
    instance = Instance(Machine(3), jobs)
    optimum = solve_exact(instance, "wct:instance").objective
    result = cpsat.solve(instance, "wct:instance", time_limit=5)
    assert result.objective == pytest.approx(optimum)
    # Weights 0.5 and 1.25 are exact quarters: the optimum is proven.
    assert result.params["weight_scale"] == 4.0
    assert result.lower_bound == optimum and result.status is SolveStatus.OPTIMAL


def test_area_weights_of_long_jobs_are_scaled_down() -> None:
    # Area weights times the horizon exceed 2**50: the weights get scaled.
    p = 3 * 10**6
    jobs = [Job(1, 0, 64, p), Job(2, 0, 64, p), Job(3, 0, 1, 5)]
    instance = Instance(Machine(100), jobs)
    result = cpsat.solve(instance, "wct:area", time_limit=5)
    assert result.params["weight_scale"] < 1.0
    # Jobs 1 and 2 cannot overlap (64 + 64 > 100): C = p and 2p; job 3 runs
    # beside them (C = 5, weight 5). The value stays below 2**53: exact.
    assert result.objective == 64 * p * (p + 2 * p) + 5 * 5
    assert result.lower_bound <= result.objective


def test_better_hint_becomes_the_upper_bound_source() -> None:
    # kth_20: the heuristics do not reach the optimum (asserted below), so an
    # optimal schedule given as hint is strictly better than all of them.
    instance = read(INSTANCES / "kth_20.json")
    optimal = cpsat.solve(instance, "wct", time_limit=30, workers=2)
    assert optimal.status is SolveStatus.OPTIMAL
    heuristic = cpsat.solve(instance, "wct", time_limit=0)
    assert heuristic.objective > optimal.objective
    hinted = cpsat.solve(
        instance, "wct", time_limit=0, incumbents=[Incumbent("hint", optimal.schedule)]
    )
    assert hinted.upper_bound_source == "hint"
    assert hinted.params["hint_source"] == "hint"
    assert hinted.objective == optimal.objective


def test_poor_hint_does_not_constrain_the_search() -> None:
    jobs = [Job(1, 0, 1, 10), Job(2, 1, 3, 2)]
    instance = Instance(Machine(3), jobs)
    poor = Schedule({1: Placement(0, 10, (0,)), 2: Placement(10, 12, (0, 1, 2))})
    result = cpsat.solve(
        instance, "wct", time_limit=5, incumbents=[Incumbent("hint", poor)]
    )
    # Optimum by hand: job 2 on [1, 3), job 1 on [3, 13): 3 + 13.
    assert result.objective == 16
    assert result.status is SolveStatus.OPTIMAL


def test_disjunctive_cliques_of_wide_jobs() -> None:
    jobs = [
        Job(1, 0, 6, 1),
        Job(2, 0, 7, 1),
        Job(3, 0, 5, 1),
        Job(4, 0, 4, 1),
        Job(5, 0, 1, 1),
    ]
    # m = 10: jobs 1, 2 are wider than 5; job 3 (5 + 6 > 10) conflicts with
    # both, job 4 (4 + 6 = 10) does not, nor does job 5.
    cliques = cpsat._disjunctive_cliques(jobs, 10)
    assert [[j.id for j in c] for c in cliques] == [[1, 2, 3]]
    instance = Instance(Machine(10), jobs)
    with_cliques = cpsat.solve(instance, "wct", time_limit=5, cliques=True)
    assert with_cliques.params["cliques"] == 1
    assert with_cliques.objective == solve_exact(instance, "wct").objective


def test_log_lines_go_to_the_callback() -> None:
    lines: list[str] = []
    cpsat.solve(identical_jobs("any"), "cmax", time_limit=5, log=lines.append)
    assert any("CP-SAT" in line for line in lines)


def test_extra_parameters_reach_the_solver() -> None:
    with pytest.raises(AttributeError):
        cpsat.solve(identical_jobs("any"), "cmax", parameters={"no_such_field": 1})


def test_bounds_are_reported_and_the_best_one_is_used() -> None:
    instance = read(INSTANCES / "kth_20.json")
    result = cpsat.solve(instance, "cmax", time_limit=3, workers=2)
    methods = {b.method for b in result.bounds}
    assert {"area", "release", "energy", "cpsat"} <= methods
    best = max(b.value for b in result.bounds)
    assert result.lower_bound == math.ceil(best - 1e-9)
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == Objective("cmax").value(instance, result.schedule)
