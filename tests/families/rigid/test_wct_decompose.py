"""Decomposition of wct windows into release blocks (models/rigid/wct_decompose.py)."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
from hypothesis import given, settings
from support.builders import exact_optimum, make, small_instances
from support.optimum import assert_sound

from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.models.rigid import cpsat, wct_decompose
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective
from optsched.result import SolveStatus
from optsched.schedule import Placement, Schedule


def _decomposition_bound(result: object) -> float | None:
    bounds = getattr(result, "bounds", ())
    return next((b.value for b in bounds if b.method == "decomposition"), None)


def two_blocks() -> Instance:
    """m = 4. Block 1 (released at 0): A (3 x 4) and B (2 x 2) cannot run
    together; C (1 x 1) runs beside either. Block 2 (released at 20, after
    block 1 has ended in every sensible schedule): D, E (2 x 3 each) side by
    side, F (4 x 1) alone.

    Block 1 optimum, by hand: C at 0 (ends 1, it fits beside anything);
    B then A (2 + 6 = 8) beats A then B (4 + 6 = 10): 1 + 2 + 6 = 9.
    Block 2: F first (21), then D, E together (24, 24): 69; D, E first
    (23, 23) then F (24): 70. So the optimum is 9 + 69 = 78.
    """
    return make(
        4,
        [(0, 3, 4), (0, 2, 2), (0, 1, 1), (20, 2, 3), (20, 2, 3), (20, 4, 1)],
    )


def test_release_blocks_cut_where_the_schedule_empties() -> None:
    instance = two_blocks()
    starts = {1: 2, 2: 0, 3: 0, 4: 21, 5: 21, 6: 20}
    jobs = instance.jobs_by_id()
    schedule = Schedule(
        {j: Placement(s, s + jobs[j].runtime) for j, s in starts.items()}
    )
    blocks = wct_decompose.release_blocks(instance, schedule)
    assert [[j.id for j in b] for b in blocks] == [[1, 2, 3], [4, 5, 6]]
    # A job of block 1 still running at 20: no cut there.
    late = dict(schedule.placements) | {1: Placement(18, 22)}
    blocks = wct_decompose.release_blocks(instance, Schedule(late))
    assert [len(b) for b in blocks] == [6]


def test_golden_two_blocks_proven_by_decomposition() -> None:
    instance = two_blocks()
    result = cpsat.solve(instance, "wct", time_limit=10, workers=1)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == 78
    assert result.params["decomposition"] == {
        "blocks": [3, 3],
        "proven": 2,
        "union_feasible": True,
    }
    assert _decomposition_bound(result) == 78
    assert result.upper_bound_source in ("decomposition", "list:submit")
    assert check_schedule(instance, result.schedule) == []
    assert solve_exact(instance, "wct").objective == 78


def test_decompose_false_gives_the_same_optimum() -> None:
    instance = two_blocks()
    result = cpsat.solve(instance, "wct", time_limit=10, workers=1, decompose=False)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == 78
    assert "decomposition" not in result.params


def test_single_block_falls_back_to_one_search() -> None:
    instance = make(3, [(0, 2, 3), (1, 2, 3), (2, 3, 1)])
    result = cpsat.solve(instance, "wct", time_limit=10, workers=1)
    assert "decomposition" not in result.params
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == solve_exact(instance, "wct").objective


def test_cmax_is_not_decomposed() -> None:
    result = cpsat.solve(two_blocks(), "cmax", time_limit=10, workers=1)
    assert "decomposition" not in result.params
    assert result.objective == 24


def _spread_instance(rng: random.Random, n: int) -> Instance:
    """Jobs in bursts far apart in time (so windows split), mixed weights."""
    m = rng.randint(2, 5)
    jobs = []
    for k in range(1, n + 1):
        burst = rng.randint(0, 2) * 12
        jobs.append(
            Job(
                k,
                burst + rng.randint(0, 3),
                rng.randint(1, m),
                rng.randint(1, 5),
                weight=rng.choice([0.5, 1.0, 2.0, 3.0]),
            )
        )
    allocation = rng.choice(["any", "contiguous"])
    return Instance(Machine(m, allocation), tuple(jobs))


OBJECTIVES = [
    "wct",
    "wct:size",
    "wct:area:relative",
    "wct:instance",
    "wct:one:relative",
]


@pytest.mark.parametrize("seed", range(12))
def test_brute_force_on_split_windows(seed: int) -> None:
    rng = random.Random(seed)
    instance = _spread_instance(rng, rng.randint(4, 7))
    objective = Objective.parse(OBJECTIVES[seed % len(OBJECTIVES)])
    exact = solve_exact(instance, objective)
    assert exact.objective is not None
    result = cpsat.solve(instance, objective, time_limit=10, workers=1)
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == objective.value(instance, result.schedule)
    assert result.status is SolveStatus.OPTIMAL
    assert math.isclose(result.objective, exact.objective, rel_tol=1e-12)
    bound = _decomposition_bound(result)
    if bound is not None:
        assert bound <= exact.objective * (1 + 1e-12)


def test_some_brute_force_windows_do_split() -> None:
    # The sample above exercises the decomposition, not only the fallback.
    split = 0
    for seed in range(12):
        rng = random.Random(seed)
        instance = _spread_instance(rng, rng.randint(4, 7))
        objective = Objective.parse(OBJECTIVES[seed % len(OBJECTIVES)])
        result = cpsat.solve(instance, objective, time_limit=10, workers=1)
        split += "decomposition" in result.params
    assert split >= 6


def test_blocks_bound_any_partition() -> None:
    # The bound is valid for any partition, even one whose union clashes:
    # A (2 x 4) at 0 and B (2 x 4) at 1 on m = 2 cannot overlap.
    instance = make(2, [(0, 2, 4), (1, 2, 4)])
    parts = [
        cpsat.solve(instance.with_jobs([j]), "wct", time_limit=5, workers=1)
        for j in instance.jobs
    ]
    total = wct_decompose.summed_bound([r.lower_bound for r in parts])
    assert total == 4 + 5
    assert total <= solve_exact(instance, "wct").objective == 4 + 8
    joined = wct_decompose.union(instance, [r.schedule for r in parts])
    assert check_schedule(instance, joined) != []


def test_summed_bound_never_rounds_up() -> None:
    values = [0.1] * 10
    total = wct_decompose.summed_bound(values)
    assert total < 1.0  # fsum rounds the exact sum to 1.0; one ulp lower
    assert total <= math.fsum(values)
    assert wct_decompose.summed_bound([3, 4]) == 7
    assert isinstance(wct_decompose.summed_bound([3, 4]), int)


@settings(max_examples=25, deadline=None)
@given(small_instances(max_jobs=6, max_m=4))
def test_bounds_never_exceed_the_optimum(instance: Instance) -> None:
    if not instance.jobs:
        return
    result = cpsat.solve(instance, "wct:instance", time_limit=5, workers=1)
    assert_sound(instance, "wct:instance", result)


def test_chunks_cut_where_least_work_is_left() -> None:
    # One block of five jobs (job 1 runs long, so the schedule never empties):
    # cutting before job 3 (r = 10) leaves 1 x 10 of job 1's work; before job
    # 4 (r = 12), 1 x 8; before job 5 (r = 20) nothing of job 1 but 2 x 2 of
    # job 4 (12..22).
    instance = make(4, [(0, 1, 20), (1, 2, 2), (10, 2, 2), (12, 2, 10), (20, 2, 3)])
    starts = {1: 0, 2: 1, 3: 10, 4: 12, 5: 20}
    jobs = instance.jobs_by_id()
    schedule = Schedule(
        {j: Placement(s, s + jobs[j].runtime) for j, s in starts.items()}
    )
    blocks = wct_decompose.release_blocks(instance, schedule)
    assert [len(b) for b in blocks] == [5]
    pieces = wct_decompose.chunked(blocks, schedule, 3)
    # Candidates within [1, 3] jobs: before job 2 (tail 1 x 19 = 19), job 3
    # (10), job 4 (8): job 4 wins; the rest (2 jobs) fits.
    assert [[j.id for j in p] for p in pieces] == [[1, 2, 3], [4, 5]]


def test_repair_turns_a_clashing_union_into_a_schedule() -> None:
    instance = make(2, [(0, 2, 4), (1, 2, 4)])
    clash = Schedule({1: Placement(0, 4), 2: Placement(1, 5)})
    assert check_schedule(instance, clash) != []
    fixed = wct_decompose.repaired(instance, clash)
    assert check_schedule(instance, fixed) == []
    assert (fixed[1].start, fixed[2].start) == (0, 4)


@pytest.mark.parametrize("seed", range(6))
def test_brute_force_with_small_chunks(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wct_decompose, "LARGEST_BLOCK", 2)
    rng = random.Random(50 + seed)
    instance = _spread_instance(rng, rng.randint(4, 7))
    objective = Objective.parse(OBJECTIVES[seed % len(OBJECTIVES)])
    exact = exact_optimum(instance, objective)
    result = cpsat.solve(instance, objective, time_limit=10, workers=1)
    assert check_schedule(instance, result.schedule) == []
    assert result.status is SolveStatus.OPTIMAL
    assert math.isclose(result.objective, exact, rel_tol=1e-12)
    for bound in result.bounds:
        assert bound.value <= exact * (1 + 1e-12), bound


def test_an_interrupted_block_stops_the_decomposition() -> None:
    # The first block's search reports an interruption: no further search
    # runs, the result says so and still holds a checked schedule.
    calls: list[int] = []
    real = cpsat.solve

    def interrupted(instance: Instance, objective: object, **kw: object) -> object:
        calls.append(len(instance.jobs))
        result = real(instance, objective, **kw)  # type: ignore[arg-type]
        return dataclasses.replace(result, interrupted=True)

    instance = two_blocks()
    result = wct_decompose.solve(
        instance, Objective.parse("wct"), time_limit=10, search=interrupted, workers=1
    )
    assert calls == [3]
    assert result.interrupted
    assert "decomposition" not in [b.method for b in result.bounds]
    assert check_schedule(instance, result.schedule) == []


def test_lopsided_windows_are_searched_whole() -> None:
    # Eleven jobs: one released at 0 and done by 5, ten released at 10 and
    # later. The cut gives blocks of 1 and 10 jobs: 10/11 > LOPSIDED, so one
    # whole search runs (no decomposition note), with the true optimum.
    jobs = [(0, 2, 5)] + [(10 + k, 1 + k % 2, 2 + k % 3) for k in range(10)]
    instance = make(2, jobs)
    blocks = wct_decompose.release_blocks(
        instance, cpsat.solve(instance, "wct", time_limit=5, workers=1).schedule
    )
    assert [len(b) for b in blocks] == [1, 10]
    assert wct_decompose.LOPSIDED * len(jobs) < 10
    result = cpsat.solve(instance, "wct", time_limit=10, workers=1)
    assert "decomposition" not in result.params
    assert result.status is SolveStatus.OPTIMAL
    assert check_schedule(instance, result.schedule) == []
