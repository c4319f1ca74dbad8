"""Closed-form lower bounds: hand-computed values and validity against the optimum."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import given, settings
from support.builders import Optimum, make, optima, slow_settings, small_instances

from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.rigid.bounds import (
    DualFeasibleFunction,
    _conflict_cliques,
    _context,
    _Profile,
    _sequence_end,
    area_bound,
    best_lower_bound,
    dff_bound,
    dual_feasible_functions,
    earliest_start_alone,
    energy_bound,
    fluid_bound,
    height_bound,
    lower_bounds,
    release_bound,
    squashed_area_bound,
    wide_jobs_bound,
    wide_jobs_wct_bound,
)
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective

CMAX = Objective("cmax")
WCT = Objective("wct")


# --------------------------------------------------------------------------
# Golden values (computed by hand in the comments)
# --------------------------------------------------------------------------


def test_release_date_instance_every_makespan_bound() -> None:
    # m = 2. A (r0, q2, p2), B (r3, q2, p4), C (r3, q1, p2). Optimum 9: A [0,2),
    # then B and C cannot overlap (2 + 1 > 2) and start at >= 3: 3 + 4 + 2.
    inst = make(2, [(0, 2, 2), (3, 2, 4), (3, 1, 2)])
    # area: (4 + 8 + 2) / 2 = 7
    assert area_bound(inst).value == 7
    # release: max(0 + 2, 3 + 4, 3 + 2) = 7
    assert release_bound(inst).value == 7
    # energy at t = 3: A is done, B and C need 8 + 2 = 10 -> 3 + 10/2 = 8
    assert energy_bound(inst).value == 8
    # wide jobs, threshold 1: sizes [1, 2, 2], 1 + 2 > 2, so one machine:
    # at t = 3, 4 + 2 = 6 seconds of work -> 9
    assert wide_jobs_bound(inst).value == 9
    assert best_lower_bound(inst, CMAX).value == 9
    assert best_lower_bound(inst, CMAX).method == "wide-jobs"
    assert solve_exact(inst, CMAX).objective == 9


def test_area_bound_counts_busy_blocks() -> None:
    # m = 4, a block takes 3 processors during [0, 2); one job of area 10.
    # Free capacity: 1 per second on [0, 2), then 4: 2 + 4 (T - 2) >= 10 -> T = 4.
    inst = make(4, [(0, 2, 5)], unavailable=(BusyBlock(0, 2, 3),))
    assert area_bound(inst).value == 4
    # The job needs 2 processors: it cannot start before 2 -> release bound 7.
    assert release_bound(inst).value == 7
    assert solve_exact(inst, CMAX).objective == 7


def test_area_bound_rounds_up_and_empty_instance() -> None:
    assert area_bound(make(4, [(0, 3, 3)])).value == 3  # ceil(9 / 4)
    empty = make(4, [])
    assert [b.value for b in lower_bounds(empty, CMAX)] == [0, 0, 0, 0, 0]
    assert [b.value for b in lower_bounds(empty, WCT)] == [0, 0, 0, 0]


def test_dff_bound_beats_area_energy_and_wide_jobs() -> None:
    # m = 7, jobs (q, p) = (2, 2), (2, 3), (2, 2), (4, 3), all released at 0.
    # Area 26 / 7 -> 4; wide jobs: all four, at most 3 side by side, 10 / 3
    # -> 4. CCM with λ = 2 maps 2 -> 2 floor(2/2) = 2 and 4 (> 7/2) ->
    # 2 (floor(7/2) - floor(3/2)) = 4, capacity 2 floor(7/2) = 6:
    # (2*2 + 2*3 + 2*2 + 4*3) / 6 = 26 / 6 -> 5, the optimum (the size-4 job
    # leaves room for one size-2 job only: d and b [0, 3), a and c [3, 5)).
    inst = make(7, [(0, 2, 2), (0, 2, 3), (0, 2, 2), (0, 4, 3)])
    assert area_bound(inst).value == 4
    assert energy_bound(inst).value == 4
    assert wide_jobs_bound(inst).value == 4
    assert dff_bound(inst).value == 5
    assert solve_exact(inst, CMAX).objective == 5


def test_dual_feasible_function_values() -> None:
    ccm = DualFeasibleFunction("ccm", 2, 6)
    assert [ccm(x) for x in range(7)] == [0, 0, 2, 3, 4, 6, 6]
    fs = DualFeasibleFunction("fs", 1, 6)  # f_1: 2x/6 integer -> x, else floor
    assert [fs(x) for x in range(7)] == [0, 0, 0, 3, 6, 6, 6]
    f0 = DualFeasibleFunction("f0", 2, 6)
    assert [f0(x) for x in range(7)] == [0, 0, 2, 3, 4, 6, 6]
    assert (ccm.scale, fs.scale, f0.scale) == (6, 6, 6)
    assert fs.label == "fs(k=1)"


@pytest.mark.parametrize("capacity", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12])
def test_every_generated_function_is_dual_feasible(capacity: int) -> None:
    # Brute force: every multiset of sizes summing to at most C (partitions).
    functions = dual_feasible_functions(capacity, range(1, capacity + 1))
    assert functions
    for f in functions:
        assert f(0) == 0
        for parts in _partitions(capacity):
            assert sum(f(x) for x in parts) <= f.scale, (f, parts)


def _partitions(n: int, largest: int | None = None) -> list[tuple[int, ...]]:
    """Every multiset of positive integers with sum <= n (as tuples)."""
    largest = n if largest is None else largest
    out: list[tuple[int, ...]] = [()]
    for first in range(1, min(n, largest) + 1):
        out += [(first, *rest) for rest in _partitions(n - first, first)]
    return out


def test_wide_jobs_bound_k_machines() -> None:
    # m = 10, four jobs of size 4 (at most 2 at a time), p = 3, released at 0:
    # 4 * 3 / 2 = 6; the area bound only gives ceil(48 / 10) = 5.
    inst = make(10, [(0, 4, 3)] * 4)
    assert area_bound(inst).value == 5
    assert wide_jobs_bound(inst).value == 6
    assert solve_exact(inst, CMAX).objective == 6


def test_wide_jobs_bound_conflict_clique_with_a_narrow_job() -> None:
    # m = 10: A (q2, p10) conflicts with B (q9, p3) and C (q9, p4), which
    # conflict with each other: one at a time, 10 + 3 + 4 = 17, the optimum
    # (D, q5 p1, runs beside A). Size thresholds alone give at most 9: the set
    # {q >= 2} lets A and D run together (count 2), (10 + 3 + 4 + 1) / 2.
    inst = make(10, [(0, 2, 10), (0, 9, 3), (0, 9, 4), (0, 5, 1)])
    assert area_bound(inst).value == 9
    assert wide_jobs_bound(inst).value == 17
    assert solve_exact(inst, CMAX).objective == 17


def _check_conflict_cliques(instance: Instance) -> None:
    # Oracle: the conflict graph (q_i + q_j > m, jobs of runtime > 0) in
    # networkx and its maximal cliques; each clique's score must be the
    # energy bound of _sequence_end computed on its own.
    ctx = _context(instance)
    runs = [i for i, j in enumerate(ctx.jobs) if j.runtime > 0]
    graph = nx.Graph()
    graph.add_nodes_from(runs)
    graph.add_edges_from(
        (i, k)
        for i in runs
        for k in runs
        if i < k and ctx.jobs[i].size + ctx.jobs[k].size > ctx.m
    )
    maximal = {frozenset(c) for c in nx.find_cliques(graph) if len(c) >= 2}
    found = _conflict_cliques(ctx)
    sets = [frozenset(clique) for _, clique in found]
    assert len(set(sets)) == len(sets)
    assert maximal <= set(sets)
    for clique in sets:  # only the set of the jobs wider than m/2 may be non-maximal
        assert any(clique <= c for c in maximal)
    for value, clique in found:
        assert value == _sequence_end(ctx, clique)
    assert [v for v, _ in found] == sorted((v for v, _ in found), reverse=True)
    for limit in (0, 1, 3):
        assert _conflict_cliques(ctx, limit) == found[:limit]


@settings(max_examples=300, deadline=None)
@given(instance=small_instances(max_jobs=14, max_m=10))
def test_conflict_cliques_are_the_maximal_cliques_with_their_bound(
    instance: Instance,
) -> None:
    _check_conflict_cliques(instance)


def test_conflict_cliques_larger_instances_with_blocks() -> None:
    # Many narrow jobs per size share one scorer: larger random instances
    # with releases and busy blocks exercise its range maxima.
    rng = random.Random(7)
    for _ in range(60):
        m = rng.randint(4, 16)
        blocks = (
            BusyBlock(0, rng.randint(1, 40), rng.randint(1, m - 1)),
            BusyBlock(50, 50 + rng.randint(1, 30), rng.randint(1, m)),
        )
        jobs = [
            (rng.randint(0, 80), rng.randint(1, m), rng.randint(0, 25))
            for _ in range(rng.randint(10, 60))
        ]
        _check_conflict_cliques(make(m, jobs, unavailable=blocks))


def test_effective_release_contiguous_needs_adjacent_processors() -> None:
    # m = 4, block on processor 1 during [0, 5): 3 processors are free but no
    # two adjacent ones on the right... processors 2, 3 are adjacent -> 0.
    # A size-3 job needs [0, 3) or [1, 4): both hit processor 1 -> start 5.
    block = BusyBlock(0, 5, 1, offset=1)
    machine = Machine(4, "contiguous", (block,))
    assert earliest_start_alone(Job(1, 0, 2, 4), machine) == 0
    assert earliest_start_alone(Job(2, 0, 3, 4), machine) == 5
    # On an any machine the block is a count: 3 free processors -> 0.
    counted = Machine(4, "any", (BusyBlock(0, 5, 1),))
    assert earliest_start_alone(Job(2, 0, 3, 4), counted) == 0
    # A zero-length job never waits.
    assert earliest_start_alone(Job(3, 2, 4, 0), machine) == 2


def test_profile_earliest_end() -> None:
    # capacity 1 on [0, 2), 0 on [2, 4), 4 afterwards
    profile = _Profile.from_steps([0, 2, 4], [1, 0, 4])
    assert profile.integral(3) == 2
    assert profile.earliest_end(0, 2) == 2
    assert profile.earliest_end(0, 3) == 5  # 2 + 4 (T - 4) >= 3
    assert profile.earliest_end(1, 1) == 2
    assert profile.earliest_end(3, 0) == 3
    assert profile.earliest_end(3, 8) == 6


# Instance G: m = 4; jobs (r, q, p): 1 (0, 2, 3), 2 (0, 3, 2), 3 (1, 1, 4),
# 4 (5, 4, 1); areas 6, 6, 4, 4.
G = make(4, [(0, 2, 3), (0, 3, 2), (1, 1, 4), (5, 4, 1)])


def test_height_bound_with_weights_and_relative() -> None:
    # sum (r + p) = 3 + 2 + 5 + 6 = 16
    assert height_bound(G, WCT).value == 16
    # size weights: 2*3 + 3*2 + 1*5 + 4*6 = 41
    assert height_bound(G, Objective("wct", "size")).value == 41
    # relative: minus sum w r = 1 + 5 = 6
    assert height_bound(G, Objective("wct", "one", relative=True)).value == 10


def test_squashed_area_bound_formula() -> None:
    # Smith order by 1/a: jobs 3, 4 (a = 4), then 1, 2 (a = 6): squashed
    # completions 1, 2, 3.5, 5 -> A_sq = 11.5. Strengthening
    # 1/2 (3 (1 - 2/4) + 2 (1 - 3/4) + 4 (1 - 1/4) + 0) = 2.5 -> 14.
    assert squashed_area_bound(G, WCT, strengthened=False).value == 12  # ceil 11.5
    assert squashed_area_bound(G, WCT).value == 14


def test_fluid_bound_by_hand() -> None:
    # Rate 4. [0,1) job 1 (4 of 6 units); job 3 released at 1 has the higher
    # ratio 1/4: [1,2); job 1 again [2,2.5); job 2 [2.5,4); job 4 [5,6).
    # Mean busy times: job 1 (4*1/2 + 4*(6.25-4)/2)/6 = 13/12, job 3 1.5,
    # job 2 (4*(16-6.25)/2)/6 = 3.25, job 4 5.5. Sum 11 + 1/3, plus
    # sum p / 2 = 5 -> 16 + 1/3, rounded up to 17 (integer weights).
    assert fluid_bound(G, WCT).value == 17
    fractional = Objective("wct", "instance")
    heavy = G.with_jobs([j.replace(weight=0.5) for j in G.jobs])
    assert fluid_bound(heavy, fractional).value == pytest.approx((16 + 1 / 3) / 2)


def test_wide_jobs_wct_bound_by_hand() -> None:
    # m = 4: A (q3, p2, w1), B (q3, p1, w1) cannot overlap; C (q1, p1, w 1/2).
    # One machine for A, B: WSPT B [0,1), A [1,3): 1 + 3 = 4. C alone: its
    # height 1/2 beats its fluid 1/2 (1/8 + 1/2). Total 4.5, the optimum
    # (B [0,1), A [1,3), C [0,1)). The fluid bound only gives 4.1875.
    inst = Instance(
        Machine(4),
        (Job(1, 0, 3, 2), Job(2, 0, 3, 1), Job(3, 0, 1, 1, weight=0.5)),
    )
    objective = Objective("wct", "instance")
    assert wide_jobs_wct_bound(inst, objective).value == 4.5
    assert fluid_bound(inst, objective).value == 4.1875
    assert solve_exact(inst, objective).objective == 4.5


def test_bounds_refuse_the_wrong_objective() -> None:
    with pytest.raises(ValueError, match="weighted completion"):
        fluid_bound(G, CMAX)


def test_lower_bounds_lists_every_method_and_best_is_the_max() -> None:
    cmax = lower_bounds(G, CMAX)
    assert [b.method for b in cmax] == ["release", "area", "energy", "wide-jobs", "dff"]
    wct = lower_bounds(G, "wct")
    assert [b.method for b in wct] == ["height", "squashed-area", "fluid", "wide-jobs"]
    best = best_lower_bound(G, WCT)
    assert best.value == max(b.value for b in wct)
    assert all(b.runtime >= 0 for b in cmax + wct)


# --------------------------------------------------------------------------
# Validity: every bound <= the optimum (hypothesis, exact enumeration)
# --------------------------------------------------------------------------


@slow_settings(400)
@given(optima())
def test_every_bound_is_at_most_the_optimum(case: Optimum) -> None:
    optimum = case.value
    for bound in lower_bounds(case.instance, case.objective):
        assert bound.value <= optimum + 1e-9 * max(1.0, abs(optimum)), bound


@settings(max_examples=60, deadline=None)
@given(instance=small_instances(max_jobs=6))
def test_squashed_area_strengthening_is_the_fluid_without_releases(
    instance: Instance,
) -> None:
    # Without blocks: strengthened = plain A_sq + 1/2 sum w p (1 - q/m),
    # with A_sq from Smith's rule computed independently here.
    instance = instance.replace(machine=instance.machine.replace(unavailable=()))
    objective = Objective("wct", "instance")
    m = instance.processors
    jobs = sorted(
        (j for j in instance.jobs if j.runtime > 0),
        key=lambda j: Fraction(j.weight) / j.area,
        reverse=True,
    )
    done, a_sq = 0, Fraction(0)
    for j in jobs:
        done += j.area
        a_sq += Fraction(j.weight) * Fraction(done, m)
    a_sq += sum(
        (Fraction(j.weight) * j.release for j in instance.jobs if j.runtime == 0),
        Fraction(0),
    )
    extra = (
        sum(
            (Fraction(j.weight) * j.runtime * Fraction(m - j.size, m) for j in jobs),
            Fraction(0),
        )
        / 2
    )
    plain = squashed_area_bound(instance, objective, strengthened=False).value
    strong = squashed_area_bound(instance, objective).value
    # With integral weights the objective is an integer: bounds are rounded up.
    integral = all(float(j.weight).is_integer() for j in instance.jobs)
    for value, expected in ((plain, a_sq), (strong, a_sq + extra)):
        if integral:
            assert value == math.ceil(expected)
        else:
            assert value == pytest.approx(float(expected))
    assert fluid_bound(instance, objective).value >= strong - 1e-9


@settings(max_examples=60, deadline=None)
@given(instance=small_instances(max_jobs=6))
def test_integral_objectives_give_integral_bounds(instance: Instance) -> None:
    for bound in lower_bounds(instance, CMAX) + lower_bounds(instance, WCT):
        assert bound.value == math.floor(bound.value)
