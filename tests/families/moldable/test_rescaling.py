"""Rescaling search (optsched.heuristics.moldable.rescaling), Kalthoff's
generators."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.generate.moldable import figure_5_10, moldable_batch, table_6_5
from optsched.heuristics.moldable.rescaling import (
    DEFAULT_OBJECTIVE,
    RESCALE_NAME,
    genetic,
    great_deluge,
    hill_climbing,
    inner_scheduler,
    parse_rescale,
    rescale,
    rescale_spec,
    run_rescale,
)
from optsched.instance import Instance, Job, Machine, Mode
from optsched.objective import Objective


def small(seed: int = 3, jobs: int = 5, scalable: int = 5) -> Instance:
    """A small moldable batch: 16 processors, requests 2..16, runs 5..30."""
    return moldable_batch(
        jobs, scalable, machine=16, seed=seed, sizes=(2, 16), runtimes=(5, 30)
    )


def sequence(values: list[float]):
    """A stub cost function returning ``values`` in call order."""
    left = list(values)
    return lambda vector: left.pop(0)


def hashed(vector: tuple[int, ...]) -> float:
    """A stub cost function: a fixed pseudo-random cost per vector."""
    return float(np.random.default_rng(list(vector) or [0]).integers(100, 1000))


# --------------------------------------------------------------------------
# Engines on stub cost functions
# --------------------------------------------------------------------------


def test_deluge_threshold_mechanics_by_hand():
    # Initial cost 100: threshold 150, decrement 150 / 4 = 37.5.
    # it 1: 140 < 150 accepted, threshold 112.5; best 100 <= 112.5.
    # it 2: 160 >= 112.5 undone; threshold stays.
    # it 3: 90 < 112.5 accepted, threshold 75, raised to best 100; best 90.
    # it 4: 95 < 100 accepted, threshold 62.5, raised to best 90.
    trace = great_deluge(
        (0,), (2,), sequence([100, 140, 160, 90, 95]), 4, np.random.default_rng(0)
    )
    assert trace.thresholds == (112.5, 112.5, 100.0, 90.0)
    assert trace.current == (140.0, 140.0, 90.0, 95.0)
    assert trace.best_cost == 90.0
    assert trace.initial_cost == 100.0
    # One position of two modes: every move flips it. (1,) accepted, (0,)
    # refused, (0,) accepted and best, (1,) accepted.
    assert trace.best == (0,)
    assert trace.evaluations == 4


def test_deluge_accepts_a_worse_vector_below_the_threshold():
    # Threshold 150, decrement 15: 120 < 150 (threshold 135), 130 < 135
    # (threshold 120), then 1000s refused until the end.
    costs = [100, 120, 130] + [1000] * 8
    trace = great_deluge((0,), (2,), sequence(costs), 10, np.random.default_rng(0))
    assert trace.current[:3] == (120.0, 130.0, 130.0)
    assert trace.thresholds[:3] == (135.0, 120.0, 120.0)
    assert trace.best_cost == 100.0
    assert trace.best == (0,)


def test_hill_climbing_keeps_only_strict_improvements():
    trace = hill_climbing(
        (0,), (2,), sequence([100, 100, 90, 95, 80]), 4, np.random.default_rng(0)
    )
    assert trace.current == (100.0, 90.0, 90.0, 80.0)
    assert trace.best_cost == 80.0
    # (1,) refused (equal), (1,) kept, (0,) refused, (0,) kept.
    assert trace.best == (0,)


class Search(NamedTuple):
    """A search of an engine on :func:`hashed`: the number of modes of each
    position, the budget of evaluations and the seed of the generator."""

    choices: list[int]
    budget: int
    seed: int


def searches(modes: int, budgets: tuple[int, int]) -> st.SearchStrategy[Search]:
    """Searches over 1 to 4 positions of 2 to ``modes`` modes each, with a
    budget in the closed range ``budgets``."""
    return st.builds(
        Search,
        st.lists(st.integers(2, modes), min_size=1, max_size=4),
        st.integers(*budgets),
        st.integers(0, 10**6),
    )


def on_hashed(engine: Callable[..., Any], search: Search) -> Any:
    """``engine``'s trace of ``search`` from the all-zero vector."""
    start = tuple(0 for _ in search.choices)
    rng = np.random.default_rng(search.seed)
    return engine(start, search.choices, hashed, search.budget, rng)


@settings(max_examples=40, deadline=None)
@given(searches(5, (0, 60)))
def test_hill_climbing_never_worsens(search: Search) -> None:
    trace = on_hashed(hill_climbing, search)
    values = [trace.initial_cost, *trace.current]
    assert all(b <= a for a, b in itertools.pairwise(values))
    assert trace.best_cost == values[-1] == hashed(trace.best)
    assert trace.evaluations == search.budget


@settings(max_examples=40, deadline=None)
@given(searches(4, (1, 80)))
def test_deluge_threshold_never_below_best(search: Search) -> None:
    trace = on_hashed(great_deluge, search)
    assert len(trace.thresholds) == search.budget
    assert min(trace.thresholds) >= trace.best_cost
    assert trace.best_cost == hashed(trace.best) <= trace.initial_cost


@pytest.mark.parametrize("budget", [0, 30, 49, 50, 237, 1000])
def test_genetic_keeps_population_and_budget(budget):
    calls = []

    def cost(vector):
        calls.append(vector)
        return hashed(vector)

    trace = genetic(
        (0, 0, 0), (3, 4, 5), cost, budget, np.random.default_rng(1), (0, budget)
    )
    assert len(calls) == budget + 1  # the initial evaluation is not counted
    assert trace.evaluations == budget
    assert trace.population == min(50, budget + 1)
    assert trace.checkpoints == {0: trace.initial_cost, budget: trace.best_cost}
    assert trace.best_cost == min(hashed(v) for v in calls)


def test_genetic_from_copies_of_the_initial_vector():
    calls = []

    def cost(vector):
        calls.append(vector)
        return hashed(vector)

    trace = genetic((0, 0), (3, 3), cost, 120, np.random.default_rng(2), init="initial")
    assert trace.population == 50
    assert len(calls) == 121
    # Generation 1: every child is one move from the initial vector.
    assert all(sum(x != 0 for x in v) == 1 for v in calls[1:51])


def test_checkpoints_are_best_so_far():
    costs = [100, 120, 90, 95, 70, 80]
    trace = hill_climbing(
        (0,), (2,), sequence(costs), 5, np.random.default_rng(0), (0, 1, 2, 4, 5)
    )
    assert trace.checkpoints == {0: 100.0, 1: 100.0, 2: 90.0, 4: 70.0, 5: 70.0}


def test_engine_arguments_are_checked():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="checkpoint 11 lies outside"):
        hill_climbing((0,), (2,), hashed, 10, rng, (11,))
    with pytest.raises(ValueError, match="at least two modes"):
        hill_climbing((0,), (1,), hashed, 10, rng)
    with pytest.raises(ValueError, match="outside its modes"):
        hill_climbing((2,), (2,), hashed, 10, rng)
    with pytest.raises(ValueError, match="init"):
        genetic((0,), (2,), hashed, 10, rng, init="best")


# --------------------------------------------------------------------------
# rescale on instances
# --------------------------------------------------------------------------


def test_fixed_seed_gives_fixed_result():
    inst = small()
    results = {
        search: rescale(inst, "pbi", search, budget=60, seed=5, checkpoints=(0, 30, 60))
        for search in ("hc", "deluge", "ga")
    }
    # Initial cost by hand: PBI (Smith order, w = 1) runs jobs 5, 4, 3, 2
    # (4+5+4+3 = 16 processors) in S1 and job 1 (14 x 25) in S2; the first
    # stripe [0, 25) runs S1's part (ends 7, 6, 20, job 2 cut at 25), then
    # S2's (job 1 on [25, 50)), then job 2's last 2 s: 7+6+20+52+50 = 135.
    # The rest are regression values (same seed, same numbers on rerun).
    assert {s: r.initial_cost for s, r in results.items()} == {
        "hc": 135.0,
        "deluge": 135.0,
        "ga": 135.0,
    }
    assert {s: r.checkpoints for s, r in results.items()} == {
        "hc": {0: 135.0, 30: 114.0, 60: 114.0},
        "deluge": {0: 135.0, 30: 116.0, 60: 116.0},
        "ga": {0: 135.0, 30: 135.0, 60: 135.0},
    }
    assert results["hc"].modes[1] == Mode(13, 27)  # ceil(14 * 25 / 13)
    again = rescale(inst, "pbi", "deluge", budget=60, seed=5, checkpoints=(0, 30, 60))
    assert again.checkpoints == results["deluge"].checkpoints
    assert again.modes == results["deluge"].modes


def test_best_cost_is_recomputed_and_brute_force_bounds_it():
    inst = moldable_batch(3, 3, machine=8, seed=11, sizes=(2, 8), runtimes=(3, 12))
    rigid_cost = {}
    for modes in itertools.product(*(j.modes for j in inst.jobs)):
        jobs = [j.rigid(m) for j, m in zip(inst.jobs, modes, strict=True)]
        schedule = inner_scheduler("pbi")(inst.with_jobs(jobs))
        rigid_cost[modes] = DEFAULT_OBJECTIVE.value(inst, schedule)
    optimum = min(rigid_cost.values())
    result = rescale(inst, "pbi", "hc", budget=400, seed=0)
    chosen = tuple(result.modes[j.id] for j in inst.jobs)
    assert result.best_cost == rigid_cost[chosen]
    assert result.best_cost == DEFAULT_OBJECTIVE.value(inst, result.schedule)
    assert result.best_cost >= optimum
    # 400 single-job moves on a space this small reach its optimum.
    assert result.best_cost == optimum
    assert result.initial_cost == rigid_cost[tuple(j.mode(j.size) for j in inst.jobs)]


@pytest.mark.parametrize(
    "inner", ["fcfs", "easy", "offline:ffdh", "offline:wspt", "ffdh", "psrs", "pbi"]
)
def test_schedules_pass_the_checker(inner):
    inst = small(seed=7, jobs=6, scalable=4)
    result = rescale(inst, inner, "hc", budget=40, seed=1)
    assert check_schedule(result.instance, result.schedule) == []
    for job in inst.jobs:
        placement = result.schedule[job.id]
        mode = result.modes.get(job.id, Mode(job.size, job.runtime))
        segments = placement.segments()
        assert all(len(procs) == mode.processors for _, _, procs in segments)
        assert placement.work == mode.runtime
    # Valid on the moldable instance too (rule 8: PBI's and PSRS's pieces
    # all run in the chosen mode).
    assert check_schedule(inst, result.schedule) == []
    assert result.schedule.producer == result.spec


def test_rescaling_improves_a_table_6_5_set():
    inst = table_6_5(1)
    result = rescale(inst, "pbi", "hc", budget=100, seed=0, checkpoints=(0, 100))
    assert result.best_cost < result.initial_cost
    assert check_schedule(inst, result.schedule) == []
    assert result.evaluations == 100
    assert result.inner_calls <= 102  # distinct vectors + the final rebuild


def test_other_objective():
    inst = small()
    result = rescale(inst, "offline:ffdh", "hc", budget=50, objective="cmax")
    assert result.best_cost == Objective.parse("cmax").value(inst, result.schedule)
    assert result.best_cost <= result.initial_cost


def test_rigid_instance_spends_nothing():
    inst = Instance(Machine(4), (Job(1, 0, 2, 5), Job(2, 0, 4, 3)))
    result = rescale(inst, "fcfs", "deluge", budget=100, checkpoints=(0, 100))
    assert result.evaluations == 0
    assert result.checkpoints == {0: 13.0, 100: 13.0}
    assert result.best_cost == result.initial_cost == 13.0
    assert result.modes == {}
    assert check_schedule(inst, result.schedule) == []


def test_unknown_names():
    inst = small()
    with pytest.raises(ValueError, match="unknown search"):
        rescale(inst, search="tabu")
    with pytest.raises(ValueError, match="unknown offline algorithm"):
        rescale(inst, inner="offline:magic")
    with pytest.raises(ValueError, match="unknown policy"):
        rescale(inst, inner="magic")


# --------------------------------------------------------------------------
# Spec
# --------------------------------------------------------------------------


def test_parse_rescale_defaults_and_round_trip():
    assert parse_rescale("rescale") == {
        "search": "deluge",
        "budget": 1000,
        "inner": "pbi",
        "seed": 0,
        "objective": None,
    }
    options = parse_rescale(
        "rescale:search=GA,budget=200,inner=easy/order=spt;oracle,seed=4,"
        "objective=wct/one/relative,population=20,init=initial"
    )
    assert options == {
        "search": "ga",
        "budget": 200,
        "inner": "easy:order=spt,oracle",
        "seed": 4,
        "objective": "wct:one:relative",
        "population": 20,
        "init": "initial",
    }
    spec = rescale_spec(**options)  # type: ignore[arg-type]
    assert spec.startswith(RESCALE_NAME + ":")
    assert parse_rescale(spec) == options


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("easy", "not a rescale spec"),
        ("rescale:speed=3", "unknown parameter 'speed'; valid: search, budget"),
        ("rescale:budget", "needs a value"),
        ("rescale:budget=1,budget=2", "given twice"),
        ("rescale:budget=ten", "budget must be an integer"),
        ("rescale:budget=-1", "budget must be >= 0"),
        ("rescale:search=tabu", "unknown search"),
        ("rescale:inner=pbi/order=best", "order must be one of"),
        ("rescale:search=hc,population=5", "search=ga only"),
        ("rescale:search=ga,init=best", "init 'best'"),
        ("rescale:objective=wct/heavy", "unknown option"),
    ],
)
def test_parse_rescale_errors(spec, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_rescale(spec)
    assert spec.strip() in str(error.value)


def test_run_rescale():
    inst = small()
    schedule = run_rescale(inst, "rescale:search=hc,budget=20,inner=pbi/order=literal")
    assert (
        schedule.producer
        == "rescale:search=hc,budget=20,inner=pbi/order=literal,seed=0"
    )
    direct = rescale(inst, "pbi:order=literal", "hc", budget=20, seed=0)
    assert schedule == direct.schedule


# --------------------------------------------------------------------------
# Generators
# --------------------------------------------------------------------------


def test_table_6_5_distributions():
    sets = [table_6_5(s) for s in range(60)]
    jobs = [j for inst in sets for j in inst.jobs]
    assert all(len(inst.jobs) == 20 and inst.processors == 128 for inst in sets)
    sizes = np.array([j.size for j in jobs])
    runs = np.array([j.runtime for j in jobs])
    assert sizes.min() >= 4 and sizes.max() <= 128
    assert runs.min() >= 20 and runs.max() <= 400
    assert sizes.min() <= 6 and sizes.max() >= 126  # the whole range is drawn
    assert runs.min() <= 25 and runs.max() >= 395
    assert abs(sizes.mean() - 66) < 4 and abs(runs.mean() - 210) < 12
    assert all(j.release == 0 and j.weight == 1 for j in jobs)
    for job in jobs:
        assert job.modes[0].processors == 1 and job.modes[-1].processors == job.size
        for mode in job.modes:  # linear speed-up up to the request
            assert mode.runtime == math.ceil(job.runtime * job.size / mode.processors)
    assert table_6_5(5).jobs == table_6_5(5).jobs
    assert table_6_5(5, machine=200).processors == 200


@pytest.mark.parametrize(
    ("share", "scalable"), [(0, 0), (0.25, 3), (0.5, 6), (0.75, 9), (1, 12)]
)
def test_figure_5_10_share(share, scalable):
    for seed in range(5):
        inst = figure_5_10(share, seed)
        assert len(inst.jobs) == 12
        assert sum(j.moldable for j in inst.jobs) == scalable
        # The same requests and run times whatever the share (paired sets).
        base = figure_5_10(1, seed)
        assert [(j.size, j.runtime) for j in inst.jobs] == [
            (j.size, j.runtime) for j in base.jobs
        ]


def test_generator_arguments():
    with pytest.raises(ValueError, match="scalable"):
        moldable_batch(3, 4)
    with pytest.raises(ValueError, match="smaller than the largest"):
        moldable_batch(3, 3, machine=64)
    with pytest.raises(ValueError, match="share"):
        figure_5_10(1.5)


def test_generator_speedup_model_may_grow_jobs():
    inst = table_6_5(2, speedup="linear:max=128")
    for job in inst.jobs:
        assert job.modes[0].processors == 1
        assert job.mode(job.size) == Mode(job.size, job.runtime)
        assert job.modes[-1].processors <= 128
        for mode in job.modes:
            assert mode.runtime == math.ceil(job.runtime * job.size / mode.processors)
    assert any(job.modes[-1].processors > job.size for job in inst.jobs)
