"""The exact preemptive models: configuration LP (makespan), time-indexed (wct).

Every schedule goes through the checker; values are compared with brute
force (all configurations in one LP; all unit-slot assignments) and with
hand-worked examples.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import highspy
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.builders import draw_blocks, draw_jobs

from optsched.check import check_schedule, migrations
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io import read, read_schedule
from optsched.io.native import write_native
from optsched.models import Incumbent, SolveStatus, solve
from optsched.models.preempt import configurations
from optsched.models.preempt.configurations import (
    ConfigurationProblem,
    best_configuration,
    certified_bound,
    dantzig_bound,
    interval_knapsacks,
    lay_out,
    solve_configuration_lp,
)
from optsched.models.preempt.model import (
    configuration_lp_bound,
    preemptive_makespan,
    preemptive_wct,
    schedule_from_segments,
)
from optsched.models.preempt.wct_lp import preemptive_wct_lp_bound
from optsched.models.rigid.bounds import lower_bounds
from optsched.objective import Objective
from optsched.schedule import Piece, Placement, Schedule

# --------------------------------------------------------------------------
# Brute force
# --------------------------------------------------------------------------


def brute_force_lp(instance: Instance) -> float:
    """The preemptive makespan by one LP over *all* configurations.

    Written from the definitions, independently of the column generation:
    breakpoints are the releases and block times; for each candidate
    interval ``i`` (from the last release on) the LP ``min time used in i``
    over every subset of released jobs that fits the free capacity of each
    interval; the first feasible candidate gives ``b_i + value``.
    """
    jobs = [j for j in instance.jobs if j.runtime > 0]
    first = min(j.release for j in instance.jobs)
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    points = sorted(
        {j.release for j in instance.jobs}
        | {t for b in blocks for t in (b.start, b.end) if t > first}
    )
    total = sum(j.runtime for j in jobs)
    ends = [*points[1:], points[-1] + total]
    last_release = max(j.release for j in instance.jobs)
    if not jobs:
        return last_release
    for i in range(points.index(last_release), len(points)):
        value = _lp_with_all_configurations(instance, jobs, points, ends, blocks, i)
        if value is not None:
            return points[i] + value
    raise AssertionError("no candidate is feasible")


def _lp_with_all_configurations(instance, jobs, points, ends, blocks, i):
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    n = len(jobs)
    empty_i, empty_f = np.array([], dtype=np.int32), np.array([], dtype=np.float64)
    for job in jobs:
        highs.addRow(job.runtime, job.runtime, 0, empty_i, empty_f)
    for k in range(i + 1):
        highs.addRow(-inf, ends[k] - points[k], 0, empty_i, empty_f)
    for k in range(i + 1):
        free = instance.processors - sum(
            b.size for b in blocks if b.start <= points[k] and b.end >= ends[k]
        )
        released = [a for a, j in enumerate(jobs) if j.release <= points[k]]
        for count in range(1, len(released) + 1):
            for subset in itertools.combinations(released, count):
                if sum(jobs[a].size for a in subset) <= free:
                    rows = [*subset, n + k]
                    highs.addCol(
                        1.0 if k == i else 0.0,
                        0.0,
                        inf,
                        len(rows),
                        np.array(rows, dtype=np.int32),
                        np.ones(len(rows)),
                    )
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return highs.getInfo().objective_function_value


def brute_force_wct(instance: Instance, objective: Objective) -> float:
    """Best ``sum w_j C_j`` over every assignment of unit slots (tiny only)."""
    jobs = instance.jobs
    horizon = max(j.release for j in jobs) + sum(j.runtime for j in jobs)
    choices = [
        itertools.combinations(range(j.release, horizon), j.runtime) for j in jobs
    ]
    best = math.inf
    for slots in itertools.product(*map(list, choices)):
        use = [0] * horizon
        for job, chosen in zip(jobs, slots, strict=True):
            for t in chosen:
                use[t] += job.size
        if max(use, default=0) > instance.processors:
            continue
        value = sum(
            objective.exact_weight(j) * (max(s) + 1 if s else j.release)
            for j, s in zip(jobs, slots, strict=True)
        )
        best = min(best, value)
    return best


def valid(instance: Instance, schedule: Schedule | None) -> None:
    """The checker accepts ``schedule`` and every job does exactly its work."""
    assert schedule is not None
    assert check_schedule(instance, schedule) == []
    for job in instance.jobs:
        assert schedule[job.id].work == job.runtime


def make(m: int, jobs: list[tuple[int, int, int]], **machine: object) -> Instance:
    """Jobs as ``(release, size, runtime)``, numbered from 1."""
    return Instance(
        Machine(m, **machine),  # type: ignore[arg-type]
        tuple(Job(k, r, q, p) for k, (r, q, p) in enumerate(jobs, start=1)),
    )


@st.composite
def instances(
    draw: st.DrawFn, max_jobs: int = 8, max_m: int = 6, blocks: bool = True
) -> Instance:
    """Random ``any`` instances with releases and, optionally, busy blocks."""
    m = draw(st.integers(1, max_m))
    most = 2 if blocks else 0
    chosen = draw_blocks(draw, m, "any", most=most, latest=8, longest=5)
    jobs = draw_jobs(
        draw, m, (1, max_jobs), release=6, runtime=6, weights=(1.0, 2.0, 3.0)
    )
    return Instance(Machine(m, "any", chosen), tuple(jobs))


# --------------------------------------------------------------------------
# Makespan: hand-checked
# --------------------------------------------------------------------------


def test_three_unit_jobs_on_two_processors() -> None:
    # LP: configurations {1,2}, {1,3}, {2,3} for 1/2 each: C = 3/2. Integer
    # times need 2 (three unit slots of work, two processors).
    inst = make(2, [(0, 1, 1)] * 3)
    result = preemptive_makespan(inst)
    assert result.params["lp_value"] == pytest.approx(1.5)
    assert result.params["lp_bound"].startswith("3/2")
    assert result.lower_bound == 2 and result.objective == 2
    assert result.status is SolveStatus.OPTIMAL
    valid(inst, result.schedule)


def test_mcnaughton_needs_preemption() -> None:
    # Three jobs of 1 processor and 2 s on 2 processors: the area gives 3,
    # reached only by preempting (McNaughton's wrap-around: job 2 runs 1 s
    # on each processor). Non-preemptively the optimum is 4.
    inst = make(2, [(0, 1, 2)] * 3)
    result = preemptive_makespan(inst)
    assert result.params["lp_value"] == pytest.approx(3.0)
    assert (result.lower_bound, result.objective) == (3, 3)
    valid(inst, result.schedule)
    assert result.schedule is not None
    assert any(p.pieces for p in result.schedule.placements.values())
    exact = solve(inst, "cmax", backend="cpsat", time_limit=10)
    assert exact.objective == 4


def test_releases_split_the_horizon() -> None:
    # m = 2. Job 1 (2 procs, 2 s) at 0, job 2 (1 proc, 2 s) at 1.
    # Interval [0, 1): only job 1, 1 s of it. From 1: job 1 (1 s left, 2
    # procs) and job 2 (2 s, 1 proc) cannot run together: 1 + 2 = 3 more,
    # C = 4. Non-preemptive: also 4 (job 1 at [0,2), job 2 at [2,4)).
    inst = make(2, [(0, 2, 2), (1, 1, 2)])
    result = preemptive_makespan(inst)
    assert result.params["lp_value"] == pytest.approx(4.0)
    assert (result.lower_bound, result.objective) == (4, 4)
    valid(inst, result.schedule)


BLOCK_CASES = [
    # m = 2, a block takes 1 processor during [1, 3). Job (2 procs, 2 s) at
    # 0 runs [0, 1), is preempted by the block and resumes at 3: C = 4
    # (non-preemptively it waits until 3 and ends at 5).
    pytest.param(
        BusyBlock(1, 3, 1), Job(1, 0, 2, 2), 4, None, [(0, 1), (3, 4)], id="around"
    ),
    # m = 2, a block takes 1 processor during [0, 3): the job of 2
    # processors cannot run before 3, so phase 1 of the first candidate
    # [0, 3) must prove infeasibility; the second gives C = 3 + 2 = 5.
    pytest.param(
        BusyBlock(0, 3, 1), Job(1, 0, 2, 2), 5, 2, None, id="candidate-infeasible"
    ),
    # The block [5, 10) starts after the only job ends: C = 1.
    pytest.param(BusyBlock(5, 10, 2), Job(1, 0, 1, 1), 1, 1, None, id="block-after"),
]
"""A busy block and one job on 2 processors: the optimum, then the number
of candidate intervals and the job's pieces where the case pins them."""


@pytest.mark.parametrize(
    ("block", "job", "optimum", "candidates", "pieces"), BLOCK_CASES
)
def test_one_job_beside_a_busy_block(
    block: BusyBlock,
    job: Job,
    optimum: int,
    candidates: int | None,
    pieces: list[tuple[int, int]] | None,
) -> None:
    inst = Instance(Machine(2, "any", (block,)), (job,))
    result = preemptive_makespan(inst)
    assert (result.lower_bound, result.objective) == (optimum, optimum)
    valid(inst, result.schedule)
    assert result.schedule is not None
    if candidates is not None:
        assert result.params["candidates"] == candidates
    if pieces is not None:
        assert [(p.start, p.end) for p in result.schedule[1].pieces] == pieces


def test_zero_runtime_jobs_end_at_their_release() -> None:
    # A job of run time 0 released at 7 sets the makespan to 7.
    inst = make(2, [(0, 1, 3), (7, 2, 0)])
    result = preemptive_makespan(inst)
    assert (result.lower_bound, result.objective) == (7, 7)
    valid(inst, result.schedule)


def test_contiguous_machine_gets_a_bound_only() -> None:
    inst = make(2, [(0, 1, 2)] * 3, allocation="contiguous")
    result = preemptive_makespan(inst)
    assert result.status is SolveStatus.BOUNDED
    assert result.schedule is None and result.lower_bound == 3


def test_switch_costs_are_refused() -> None:
    inst = make(2, [(0, 1, 2)], switch_cost=1)
    with pytest.raises(ValueError, match="context-switch cost"):
        preemptive_makespan(inst)
    with pytest.raises(ValueError, match="context-switch cost"):
        preemptive_wct(inst, "wct")


def test_empty_instance() -> None:
    inst = Instance(Machine(3), ())
    assert preemptive_makespan(inst).objective == 0


# --------------------------------------------------------------------------
# Makespan: properties
# --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_column_generation_equals_the_full_lp(inst: Instance) -> None:
    result = preemptive_makespan(inst)
    expected = brute_force_lp(inst)
    assert result.params["lp_converged"]
    assert result.params["lp_value"] == pytest.approx(expected, abs=1e-6)
    # The certified bound is the LP value up to the solver's tolerance, and
    # never above it beyond float noise.
    assert result.lower_bound == math.ceil(expected - 1e-6)
    assert result.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)
    assert result.objective is not None and result.objective >= result.lower_bound
    valid(inst, result.schedule)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_jobs=5, max_m=4, blocks=False))
def test_preemptive_below_non_preemptive_above_bounds(inst: Instance) -> None:
    result = preemptive_makespan(inst)
    exact = solve(inst, "cmax", backend="cpsat", time_limit=20, workers=1)
    assert exact.objective is not None
    assert result.lower_bound is not None
    assert result.lower_bound <= exact.objective
    assert result.objective is not None and result.objective <= exact.objective
    assert configuration_lp_bound(inst).value == result.lower_bound
    # Every closed-form makespan bound holds for preemptive schedules
    # without busy blocks (each bounds a quantity that preemption cannot
    # lower: area, release + run time, energy after t, parallel counts).
    lp = result.params["lp_value"]
    for bound in lower_bounds(inst, "cmax"):
        assert bound.value <= math.ceil(lp - 1e-6), bound.method


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_floor_rounding_appends_what_is_missing(inst: Instance) -> None:
    # The fallback when the integer programme finds nothing: floor every
    # LP duration, run the missing seconds at the end beside the blocks.
    problem = ConfigurationProblem.of(inst)
    chosen = solve_configuration_lp(problem).chosen
    assert chosen is not None
    floors = [math.floor(x + 1e-9) for x in chosen.durations]
    segments = lay_out(problem, chosen, floors)
    valid(inst, schedule_from_segments(inst, segments, "floor"))


def test_missing_work_waits_for_a_block() -> None:
    # m = 2, a block of both processors on [4, 5). Missing work from 0:
    # job 1 (1 proc) 3 s, job 3 (2 procs) 2 s, job 2 (1 proc) 1 s. A list
    # schedule, longest first: job 1 on [0, 3); job 3 needs both processors
    # for 2 s, which [3, 5) cannot give (the block): [5, 7); job 2 fits
    # beside job 1 on [0, 1). (Jobs as problem positions 0, 1, 2.)
    inst = Instance(
        Machine(2, "any", (BusyBlock(4, 5, 2),)),
        make(2, [(0, 1, 3), (0, 1, 1), (0, 2, 2)]).jobs,
    )
    problem = ConfigurationProblem.of(inst)
    segments = configurations._append(problem, 0, {0: 3, 2: 2, 1: 1})
    assert segments == [
        (0, 1, frozenset({0, 1})),
        (1, 3, frozenset({0})),
        (5, 7, frozenset({2})),
    ]


def test_a_time_limit_keeps_the_bounds_valid() -> None:
    # 30 jobs with releases; cut the column generation short at several
    # points: the certified bound never exceeds the converged one, and the
    # schedule (LP rounding or the list schedule) always passes the checker.
    rng = np.random.default_rng(7)
    jobs = tuple(
        Job(
            k,
            int(rng.integers(0, 400)),
            int(rng.integers(4, 129)),
            int(rng.integers(20, 401)),
        )
        for k in range(30)
    )
    inst = Instance(Machine(128), jobs)
    full = preemptive_makespan(inst)
    assert full.params["lp_converged"] and full.lower_bound is not None
    for limit in (0.0, 0.05, 0.2):
        cut = preemptive_makespan(inst, time_limit=limit)
        assert cut.lower_bound is not None and cut.lower_bound <= full.lower_bound
        valid(inst, cut.schedule)


# --------------------------------------------------------------------------
# Pricing and certificates
# --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 9), st.integers(-5, 9)), max_size=9),
    st.integers(0, 20),
)
def test_knapsack_is_exact(items: list[tuple[int, int]], capacity: int) -> None:
    weights = [w for w, _ in items]
    profits = [Fraction(v, 3) for _, v in items]
    found = best_configuration(weights, profits, capacity)
    assert found is not None
    value, chosen = found
    best = max(
        sum((profits[k] for k in subset), Fraction(0))
        for r in range(len(items) + 1)
        for subset in itertools.combinations(range(len(items)), r)
        if sum(weights[k] for k in subset) <= capacity
    )
    assert value == best
    assert sum(weights[k] for k in chosen) <= capacity
    assert sum((profits[k] for k in chosen), Fraction(0)) == value
    assert dantzig_bound(weights, profits, capacity) >= best


@settings(max_examples=40, deadline=None)
@given(instances(), st.lists(st.integers(-4, 9), min_size=8, max_size=8))
def test_release_order_programme_equals_the_pareto_lists(
    inst: Instance, numerators: list[int]
) -> None:
    # One dynamic programme in release order against one Nemhauser-Ullmann
    # list per interval, in exact arithmetic.
    problem = ConfigurationProblem.of(inst)
    profits = [Fraction(v, 4) for v in numerators[: len(problem.ids)]]
    last = len(problem.intervals) - 1
    together = interval_knapsacks(problem, last, profits)
    for interval, found in zip(problem.intervals, together, strict=True):
        weights = [problem.sizes[j] for j in interval.released]
        values = [profits[j] for j in interval.released]
        alone = best_configuration(weights, values, interval.capacity)
        assert found is not None and alone is not None
        assert found[0] == alone[0]
        assert set(found[1]) <= set(interval.released)
        assert sum(problem.sizes[j] for j in found[1]) <= interval.capacity
        assert sum((profits[j] for j in found[1]), Fraction(0)) == found[0]


def test_any_duals_give_a_valid_certificate() -> None:
    # The repaired dual value is a lower bound whatever the duals: here
    # arbitrary ones on the three-unit-jobs instance (optimum 3/2).
    problem = ConfigurationProblem.of(make(2, [(0, 1, 1)] * 3))
    for duals in ([0.5, 0.5, 0.5, 0.0], [1.0, 1.0, 1.0, 0.0], [0.9, 0.1, 0.7, -0.2]):
        assert certified_bound(problem, 0, duals, 2) <= Fraction(3, 2)
    assert certified_bound(problem, 0, [0.5, 0.5, 0.5, 0.0], 2) == Fraction(3, 2)


# --------------------------------------------------------------------------
# Weighted completion time
# --------------------------------------------------------------------------


def test_wct_hand_checked() -> None:
    # m = 1: job 1 (5 s) at 0, job 2 (1 s) at 1. Preempting job 1 at 1 to
    # run job 2 gives C_2 = 2, C_1 = 6: sum 8 (non-preemptive: 5 + 6 = 11,
    # or 1 idle then 2 + 7 = 9).
    inst = make(1, [(0, 1, 5), (1, 1, 1)])
    result = preemptive_wct(inst, "wct")
    assert (result.objective, result.lower_bound) == (8, 8)
    assert result.status is SolveStatus.OPTIMAL
    valid(inst, result.schedule)
    assert result.schedule is not None
    assert [(p.start, p.end) for p in result.schedule[1].pieces] == [(0, 1), (2, 6)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.integers(1, 2),
            st.integers(0, 3),
            st.sampled_from([0.5, 1.0, 1.5, 3.0]),
        ),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from(["wct", "wct:instance", "wct:area", "wct:one:relative"]),
)
def test_wct_equals_brute_force(
    jobs: list[tuple[int, int, int, float]], text: str
) -> None:
    inst = Instance(
        Machine(2),
        tuple(Job(k, r, q, p, weight=w) for k, (r, q, p, w) in enumerate(jobs, 1)),
    )
    objective = Objective.parse(text)
    result = preemptive_wct(inst, objective)
    expected = brute_force_wct(inst, objective) - objective.offset(inst)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == pytest.approx(expected)
    assert result.lower_bound == pytest.approx(expected)
    valid(inst, result.schedule)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_jobs=4, max_m=3, blocks=False))
def test_wct_bounds_and_non_preemptive_optimum(inst: Instance) -> None:
    objective = Objective.parse("wct:instance")
    result = preemptive_wct(inst, objective)
    assert result.status is SolveStatus.OPTIMAL and result.objective is not None
    valid(inst, result.schedule)
    # The non-preemptive optimum (or any non-preemptive schedule: the
    # CP-SAT back-end may stop at FEASIBLE) is a preemptive schedule too.
    exact = solve(inst, objective, backend="cpsat", time_limit=20, workers=1)
    assert exact.objective is not None
    assert result.objective <= exact.objective + 1e-9
    # The closed-form wct bounds (height, squashed area, fluid, wide jobs)
    # are preemptive bounds: each relaxes C_j to a mean busy time, which a
    # preempted job only lowers (M_j <= C_j - p_j / 2), or to r_j + p_j.
    for bound in lower_bounds(inst, objective):
        assert bound.value <= result.objective + 1e-9, bound.method


def test_wct_cpsat_engine_agrees() -> None:
    # Same optimum with CP-SAT as with HiGHS (hand-checked value 8 and the
    # block instance below, 7).
    inst = make(1, [(0, 1, 5), (1, 1, 1)])
    result = preemptive_wct(inst, "wct", engine="cpsat")
    assert (result.objective, result.lower_bound) == (8, 8)
    valid(inst, result.schedule)
    with pytest.raises(ValueError, match="engine"):
        preemptive_wct(inst, "wct", engine="gurobi")


def test_wct_with_a_block_and_migration() -> None:
    # m = 2, block of 1 processor on [0, 2). Job 1 (1 proc, 3 s) and job 2
    # (2 procs, 1 s), both at 0. Job 2 can only run from 2. Best: job 1 on
    # [0, 2), job 2 on [2, 3), job 1 again [3, 4): 4 + 3 = 7; or job 2
    # first at 2: job 1 [0,2) + [3,4) -> same. Job 1 alone before: C_1 = 3
    # needs job 2 after 3: 3 + 4 = 7 too.
    inst = Instance(
        Machine(2, "any", (BusyBlock(0, 2, 1),)), (Job(1, 0, 1, 3), Job(2, 0, 2, 1))
    )
    for engine in ("highs", "cpsat"):
        result = preemptive_wct(inst, "wct", engine=engine)
        assert (result.objective, result.lower_bound) == (7, 7)
        valid(inst, result.schedule)


def test_wct_horizon_limit() -> None:
    inst = make(2, [(0, 1, 500), (0, 1, 600)])
    with pytest.raises(ValueError, match=r"horizon .* above the limit 100"):
        preemptive_wct(inst, "wct", max_horizon=100)
    # With too_large="bound": the interval [LP bound, list schedule]. Both
    # jobs run side by side from 0: 500 + 600 = 1100, which the LP (and
    # the height bound) prove optimal.
    result = preemptive_wct(inst, "wct", max_horizon=100, too_large="bound")
    assert (result.objective, result.lower_bound) == (1100, 1100)
    assert "preemptive-lp" in {b.method for b in result.bounds}
    assert "horizon" in result.skipped[0]
    valid(inst, result.schedule)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_jobs=5, max_m=4), st.sampled_from(["wct:instance", "wct:size"]))
def test_wct_lp_bound_is_below_the_optimum(inst: Instance, text: str) -> None:
    # Blocks included: the interval-indexed LP relaxes every preemptive
    # schedule (module notes of optsched.models.preempt.wct_lp).
    objective = Objective.parse(text)
    exact = preemptive_wct(inst, objective)
    assert exact.status is SolveStatus.OPTIMAL and exact.objective is not None
    for slots in (3, 50):
        bound = preemptive_wct_lp_bound(inst, objective, slots=slots)
        assert bound.value <= exact.objective + 1e-9


def test_wct_contiguous_is_a_bound() -> None:
    inst = make(1, [(0, 1, 5), (1, 1, 1)], allocation="contiguous")
    result = preemptive_wct(inst, "wct")
    assert result.status is SolveStatus.BOUNDED and result.lower_bound == 8


# --------------------------------------------------------------------------
# Pieces from segments
# --------------------------------------------------------------------------


def test_segments_keep_processors_while_a_job_runs_on() -> None:
    # m = 3. [0, 2): jobs 1 (2 procs) and 2 (1 proc); [2, 3): jobs 1 and 3
    # (1 proc); [4, 5): job 2 alone. Job 1 keeps processors 0-1 for [0, 3);
    # job 3 takes the free processor 2; job 2 resumes at 4 (after a gap: a
    # new piece) on its old processor 2, which is free again.
    inst = make(3, [(0, 2, 3), (0, 1, 3), (0, 1, 1)])
    segments = [(0, 2, {1, 2}), (2, 3, {1, 3}), (4, 5, {2})]
    schedule = schedule_from_segments(inst, segments, "test")
    assert schedule[1].pieces == () and schedule[1].processors == (0, 1)
    assert schedule[3].processors == (2,)
    pieces = [(p.start, p.end, p.processors) for p in schedule[2].pieces]
    assert pieces == [(0, 2, (2,)), (4, 5, (2,))]
    assert check_schedule(inst, schedule) == []
    assert migrations(schedule) == []


def test_segments_migrate_when_the_old_processors_are_taken() -> None:
    # m = 3. [0, 1): jobs 1 and 2 (1 proc each) on 0 and 1; [1, 2): job 3
    # (2 procs) on 0-1; [2, 3): job 3 goes on, job 2 resumes but its
    # processor 1 is job 3's: it moves to 2.
    inst = make(3, [(0, 1, 1), (0, 1, 2), (0, 2, 2)])
    segments = [(0, 1, {1, 2}), (1, 2, {3}), (2, 3, {2, 3})]
    schedule = schedule_from_segments(inst, segments, "test")
    pieces = [(p.start, p.end, p.processors) for p in schedule[2].pieces]
    assert pieces == [(0, 1, (1,)), (2, 3, (2,))]
    assert check_schedule(inst, schedule) == []
    assert migrations(schedule) == [2]


# --------------------------------------------------------------------------
# optsched bound --preemptive
# --------------------------------------------------------------------------


def test_cli_bound_preemptive(tmp_path: Path) -> None:
    # McNaughton's instance (3 jobs of 1 processor, 2 s, on 2): the
    # preemptive makespan is 3, the non-preemptive 4.
    path = tmp_path / "mcn.json"
    write_native(make(2, [(0, 1, 2)] * 3), path)
    out, sched = tmp_path / "r.json", tmp_path / "s.json"
    result = CliRunner().invoke(
        main,
        ["bound", str(path), "--preemptive", "-o", str(out),
         "--schedule-out", str(sched)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "preemptive LP     3" in result.stdout
    assert "best upper bound  3  (preemptive-lp)" in result.stdout
    assert "status            OPTIMAL" in result.stdout
    record = json.loads(out.read_text())
    assert record["backend"] == "preemptive-lp"
    assert record["objective_value"] == record["lower_bound"] == 3
    schedule = read_schedule(sched)
    assert check_schedule(read(path), schedule) == []
    assert any(p.pieces for p in schedule.placements.values())


def test_cli_bound_preemptive_wct_and_refusals(tmp_path: Path) -> None:
    # One processor: job 1 (5 s) at 0, job 2 (1 s) at 1; preempting job 1
    # gives 2 + 6 = 8.
    path = tmp_path / "two.json"
    write_native(make(1, [(0, 1, 5), (1, 1, 1)]), path)
    result = CliRunner().invoke(
        main, ["bound", str(path), "--preemptive", "--objective", "wct"]
    )
    assert result.exit_code == 0, result.output
    assert "best upper bound  8  (preemptive-timeindexed)" in result.stdout
    assert "status            OPTIMAL" in result.stdout
    refused = CliRunner().invoke(
        main, ["bound", str(path), "--preemptive", "--backend", "milp"]
    )
    assert refused.exit_code == 2
    assert "--preemptive uses its own models" in refused.output


def test_long_pareto_lists_fall_back_to_cpsat_and_dantzig(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Capacities "too large" for the dynamic programme and the Pareto list
    # capped at one pair: pricing goes to CP-SAT and
    # the certificate to the Dantzig bound: the LP value is unchanged, the
    # bound stays valid (maybe weaker).
    inst = make(5, [(0, 2, 3), (0, 3, 2), (1, 1, 4), (2, 4, 1), (2, 2, 2)])
    exact = preemptive_makespan(inst)
    monkeypatch.setattr(configurations, "DP_CAPACITY_LIMIT", 0)
    monkeypatch.setattr(configurations, "PARETO_LIMIT", 1)
    capped = preemptive_makespan(inst)
    assert capped.params["lp_value"] == pytest.approx(exact.params["lp_value"])
    assert capped.lower_bound is not None and exact.lower_bound is not None
    assert capped.lower_bound <= exact.lower_bound
    valid(inst, capped.schedule)


def test_incumbents_compete_and_bad_ones_are_rejected() -> None:
    # McNaughton's instance: a hand-made preemptive schedule of makespan 3
    # (job 2 runs 1 s on each processor) and a schedule that kills a job.
    inst = make(2, [(0, 1, 2)] * 3)
    by_hand = Schedule(
        {
            1: Placement(0, 2, (0,)),
            2: Placement.of_pieces([Piece(0, 1, (1,)), Piece(2, 3, (0,))]),
            3: Placement(1, 3, (1,)),
        },
        "hand",
    )
    killed = Schedule(dict(by_hand.placements), "kill", killed=frozenset({1}))
    result = preemptive_makespan(
        inst, incumbents=[Incumbent("hand", by_hand), Incumbent("kill", killed)]
    )
    assert result.objective == 3 and result.status is SolveStatus.OPTIMAL
    assert any(r.startswith("kill: kills jobs [1]") for r in result.rejected)
    wct = preemptive_wct(inst, "wct", incumbents=[Incumbent("hand", by_hand)])
    # Sum of completions: two jobs end at 2, the third at 4 (one processor
    # free from 2 on: 2 + 2 + 4 = 8; the hand schedule gives 2 + 3 + 3 = 8).
    assert (wct.objective, wct.lower_bound) == (8, 8)
