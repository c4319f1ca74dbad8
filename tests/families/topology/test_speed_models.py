"""Exact CP-SAT models on machines with node speeds and SMP nodes.

The optima are compared with a brute force that is exact for regular
objectives (:func:`brute_force`), and hand-checked golden schedules; every
schedule passes :func:`optsched.check.check_schedule` and an own check of
its run times and spans (:func:`own_check`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.models.common.settings import SolverSettings
from optsched.models.topology import bounds as topology_bounds
from optsched.models.topology import smp, speeds
from optsched.nodes import Nodes
from optsched.objective import Objective
from optsched.result import Incumbent, SolveStatus
from optsched.schedule import Placement, Schedule

SOLVE = SolverSettings(time_limit=20.0, workers=1)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def own_check(instance: Instance, schedule: Schedule) -> None:
    """The checker, and the rules of non-flat machines verified here again:
    explicit processors, run time from their speeds and span, span limit."""
    assert check_schedule(instance, schedule) == []
    machine = instance.machine
    for job in instance.jobs:
        placement = schedule[job.id]
        procs = placement.processors
        assert procs is not None and len(set(procs)) == job.size
        time = Fraction(job.runtime)
        if machine.speeds is not None:
            time /= sum(Fraction(str(machine.speeds[p])) for p in procs)
        nodes = machine.nodes
        if nodes is not None:
            span = len({p // nodes.cpus for p in procs})
            assert span <= nodes.span_limit(job.size)
            paid = span if nodes.cost == "ratio" else span - nodes.min_span(job.size)
            time *= 1 + Fraction(str(nodes.base)) * nodes.level * paid
        assert placement.end - placement.start == -(-time.numerator // time.denominator)


def allowed_sets(instance: Instance, job: Job) -> list[tuple[int, ...]]:
    """Every processor set the job may run on (span limit respected)."""
    nodes = instance.machine.nodes
    sets = itertools.combinations(range(instance.processors), job.size)
    if nodes is None:
        return list(sets)
    return [s for s in sets if nodes.span(s) <= nodes.span_limit(job.size)]


def brute_force(instance: Instance, objective: Objective) -> tuple[float, Schedule]:
    """Exact optimum of a tiny instance by exhaustive search.

    Every job order times every allowed processor set per job, each job at
    its earliest start (at or after its release, an end of a job placed
    before it) with its set free for its whole run time. Exact for regular
    objectives: order an optimal schedule's jobs by start; placing them in
    that order on their own sets, each at its earliest start, starts no job
    later (induction: a job placed before one sharing a processor started
    before it, so ended by its start, and ends no later now), so some leaf
    is as good.
    """
    jobs = instance.jobs
    machine = instance.machine
    choices = {
        j.id: [(s, machine.run_time(j.runtime, s)) for s in allowed_sets(instance, j)]
        for j in jobs
    }
    best: tuple[float, Schedule] | None = None

    def place(order: Sequence[Job], k: int, placed: dict[int, Placement]) -> None:
        nonlocal best
        if k == len(order):
            schedule = Schedule(dict(placed), "brute")
            value = objective.value(instance, schedule)
            if best is None or value < best[0]:
                best = (value, schedule)
            return
        job = order[k]
        for procs, d in choices[job.id]:
            times = sorted(
                {job.release} | {p.end for p in placed.values() if p.end > job.release}
            )
            for t in times:
                if d == 0 or all(
                    p.end <= t or p.start >= t + d or p.end == p.start
                    or not set(p.processors or ()) & set(procs)
                    for p in placed.values()
                ):  # fmt: skip
                    placed[job.id] = Placement(t, t + d, procs)
                    place(order, k + 1, placed)
                    del placed[job.id]
                    break

    for order in itertools.permutations(jobs):
        place(order, 0, {})
    assert best is not None
    return best


def random_instance(rng: random.Random, machine: Machine, n: int) -> Instance:
    """``n`` jobs with small sizes, works and releases (one may be empty)."""
    jobs = []
    for k in range(n):
        size = rng.randint(
            1, machine.processors if k == 1 else min(3, machine.processors)
        )
        work = rng.choice([0, *range(1, 13)]) if k == 0 else rng.randint(1, 12)
        jobs.append(Job(k + 1, rng.randint(0, 3), size, work))
    return Instance(machine, tuple(jobs))


SPEED_MACHINES = [
    Machine(3, speeds=(1, 2, 3)),
    Machine(4, speeds=(1, 1, 3, 3)),
    Machine(3, speeds=(0.5, 1, 1)),
]
NODE_MACHINES = [
    Machine(4, nodes=Nodes(2, 2, tight=tight, level=level))
    for tight in (0, None)
    for level in (0, 2)
] + [Machine(4, nodes=Nodes(2, 2, tight=0, level=3, cost="excess"))]


def model_of(instance: Instance) -> Any:
    """The model module for the instance's machine."""
    return speeds if instance.machine.speeds is not None else smp


# --------------------------------------------------------------------------
# Golden, hand-checked
# --------------------------------------------------------------------------


def test_golden_speeds_need_the_slow_mix() -> None:
    # Speeds (1, 3): A (work 3) takes 1 s fast or 3 s slow, B (work 9) 3 s
    # fast or 9 s slow. cmax: B fast and A slow side by side end at 3 (both
    # fast in turn: 4); so a slower mix can be the optimal one. wct: A fast
    # [0, 1) then B fast [1, 4): 1 + 4 = 5 (B fast, A slow: 3 + 3 = 6).
    instance = Instance(Machine(2, speeds=(1, 3)), (Job(1, 0, 1, 3), Job(2, 0, 1, 9)))
    result = speeds.solve(instance, "cmax", settings=SOLVE)
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, 3)
    assert result.schedule is not None
    assert result.schedule[1].processors == (0,)  # the slow processor
    own_check(instance, result.schedule)
    result = speeds.solve(instance, "wct", settings=SOLVE)
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, 5)
    assert result.schedule is not None
    assert [result.schedule[j].processors for j in (1, 2)] == [(1,), (1,)]
    own_check(instance, result.schedule)


def test_golden_smp_span_and_cost() -> None:
    # 2 nodes x 2, level 2 (ratio): a 2-processor job of runtime 10 takes
    # ceil(10 * 1.1) = 11 on one node, 12 on two. J1 on one node and J2,
    # J3 on the other all end at 11.
    machine = Machine(4, nodes=Nodes(2, 2, tight=None, level=2))
    instance = Instance(machine, (Job(1, 0, 2, 10), Job(2, 0, 1, 10), Job(3, 0, 1, 10)))
    result = smp.solve(instance, "cmax", settings=SOLVE)
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, 11)
    assert result.schedule is not None
    assert machine.nodes is not None
    assert machine.nodes.span(result.schedule[1].processors or ()) == 1
    own_check(instance, result.schedule)
    # "excess": the minimum span pays nothing: a 3-processor job on 2 nodes
    # runs its 10 s, a 1-processor job too.
    excess = Machine(4, nodes=Nodes(2, 2, tight=0, level=2, cost="excess"))
    instance = Instance(excess, (Job(1, 0, 3, 10), Job(2, 0, 1, 10)))
    result = smp.solve(instance, "wct", settings=SOLVE)
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, 20)


def test_span_limit_cost_golden() -> None:
    # 2 nodes x 3, level 0, three 2-processor jobs of 10 s. Tight 0: each
    # within one node, two at a time, cmax 20; no limit: the third splits
    # 1 + 1 over the nodes, cmax 10.
    machine = Machine(6, nodes=Nodes(2, 3, tight=0))
    instance = Instance(machine, tuple(Job(k, 0, 2, 10) for k in (1, 2, 3)))
    cost = smp.span_limit_cost(instance, "cmax", settings=SOLVE)
    assert cost.limited.objective == 20
    assert cost.unlimited.objective == 10
    assert cost.ratio == 2.0
    for result, inst in ((cost.limited, instance), (cost.unlimited, None)):
        assert result.status == SolveStatus.OPTIMAL
        assert result.schedule is not None
        if inst is not None:
            own_check(inst, result.schedule)


# --------------------------------------------------------------------------
# Against the brute force
# --------------------------------------------------------------------------


@pytest.mark.parametrize("objective", ["cmax", "wct", "wct:size:relative"])
@pytest.mark.parametrize("machine", SPEED_MACHINES + NODE_MACHINES, ids=str)
def test_optimum_equals_brute_force(machine: Machine, objective: str) -> None:
    rng = random.Random(f"{machine}{objective}")
    for n in (3, 4, 4):
        instance = random_instance(rng, machine, n)
        parsed = Objective.parse(objective)
        expected, witness = brute_force(instance, parsed)
        own_check(instance, witness)
        result = model_of(instance).solve(instance, objective, settings=SOLVE)
        assert result.status == SolveStatus.OPTIMAL, result.params
        assert result.objective == expected
        assert result.lower_bound is not None and result.lower_bound <= expected
        assert result.schedule is not None
        own_check(instance, result.schedule)
        assert parsed.value(instance, result.schedule) == result.objective


def test_without_symmetry_breaking_same_optimum() -> None:
    machine = Machine(4, nodes=Nodes(2, 2, tight=0, level=2))
    jobs = (Job(1, 0, 1, 5), Job(2, 0, 1, 5), Job(3, 0, 2, 7), Job(4, 1, 3, 4))
    instance = Instance(machine, jobs)
    expected, _ = brute_force(instance, Objective("wct"))
    for symmetry, nodes in ((True, True), (True, False), (False, True)):
        result = smp.solve(
            instance, "wct", node_symmetry=nodes,
            settings=SolverSettings(time_limit=20.0, workers=1, symmetry=symmetry),
        )  # fmt: skip
        assert (result.status, result.objective) == (SolveStatus.OPTIMAL, expected)
        assert result.params["node_symmetry"] is nodes
        assert result.schedule is not None
        own_check(instance, result.schedule)


def test_tight_sweep_never_rises() -> None:
    machine = Machine(6, nodes=Nodes(3, 2, tight=0, level=1))
    jobs = (Job(1, 0, 3, 10), Job(2, 0, 2, 10), Job(3, 0, 3, 6), Job(4, 2, 1, 8))
    instance = Instance(machine, jobs)
    results = smp.tight_sweep(instance, "cmax", [None, 1, 0], settings=SOLVE)
    assert list(results) == [0, 1, None]
    values = [float(r.objective or 0) for r in results.values()]
    assert all(r.status == SolveStatus.OPTIMAL for r in results.values())
    assert values == sorted(values, reverse=True)


def test_incumbent_is_used_and_checked() -> None:
    instance = Instance(
        Machine(3, speeds=(1, 2, 3)), (Job(1, 0, 1, 6), Job(2, 0, 2, 6))
    )
    good = Schedule({1: Placement(0, 2, (2,)), 2: Placement(0, 2, (0, 1))}, "mine")
    bad = Schedule({1: Placement(0, 6, (2,)), 2: Placement(0, 2, (0, 1))}, "wrong")
    result = speeds.solve(
        instance, "cmax", incumbents=[Incumbent("bad", bad), Incumbent("good", good)],
        settings=SOLVE,
    )  # fmt: skip
    assert result.objective == 2 and result.upper_bound_source == "list:speeds-submit"
    assert any(r.startswith("bad:") for r in result.rejected)


# --------------------------------------------------------------------------
# Bounds
# --------------------------------------------------------------------------


@st.composite
def tiny_instances(draw: st.DrawFn) -> Instance:
    if draw(st.booleans()):
        m = draw(st.integers(2, 3))
        values = draw(st.lists(st.sampled_from([0.5, 1, 2, 3]), min_size=m, max_size=m))
        machine = Machine(m, speeds=tuple(values))
    else:
        machine = Machine(
            4,
            nodes=Nodes(
                2, 2, tight=draw(st.sampled_from([0, 1, None])),
                level=draw(st.integers(0, 3)),
                cost=draw(st.sampled_from(["ratio", "excess"])),
            ),
        )  # fmt: skip
    n = draw(st.integers(1, 3))
    jobs = tuple(
        Job(
            k + 1,
            draw(st.integers(0, 4)),
            draw(st.integers(1, min(3, machine.processors))),
            draw(st.integers(0, 15)),
        )
        for k in range(n)
    )
    return Instance(machine, jobs)


@settings(max_examples=40, deadline=None)
@given(
    tiny_instances(),
    st.sampled_from(["cmax", "wct", "wct:area", "wct:size:relative"]),
)
def test_bounds_at_most_optimum(instance: Instance, objective: str) -> None:
    parsed = Objective.parse(objective)
    optimum, _ = brute_force(instance, parsed)
    bounds, _ = topology_bounds.topology_lower_bounds(instance, parsed, None)
    for bound in bounds:
        assert bound.value <= optimum + 1e-9 * max(1.0, optimum), bound


@settings(max_examples=25, deadline=None)
@given(tiny_instances(), st.sampled_from(["cmax", "wct:area"]), st.booleans())
def test_optimum_equals_brute_force_property(
    instance: Instance, objective: str, cliques: bool
) -> None:
    expected, _ = brute_force(instance, Objective.parse(objective))
    result = model_of(instance).solve(
        instance, objective, cliques=cliques, settings=SOLVE
    )
    assert (result.status, result.objective) == (SolveStatus.OPTIMAL, expected)
    assert result.schedule is not None
    own_check(instance, result.schedule)


def test_staged_area_bound_golden() -> None:
    # Speeds (1, 3): works 8 at 0 and 12 at 4; capacity 4 per second.
    # From 0: 20 / 4 = 5; from 4: 4 + 12 / 4 = 7.
    instance = Instance(Machine(2, speeds=(1, 3)), (Job(1, 0, 1, 8), Job(2, 4, 2, 12)))
    assert topology_bounds.staged_speed_area_bound(instance).value == 7


def test_squashed_bound_golden() -> None:
    # Speeds (1, 3), capacity 4; works 4 and 8 (shortest run times 4/3 ->
    # 2 and 8/3 -> 3), weights 1. Smith order: mean busy times 0 + 2/4 =
    # 1/2 and (4 + 4) / 4 = 2; plus half the shortest run times (2 + 3) / 2:
    # 1/2 + 2 + 5/2 = 5. Relative, releases 0 and 1: 5 - 1 = 4.
    machine = Machine(2, speeds=(1, 3))
    instance = Instance(machine, (Job(1, 0, 1, 4), Job(2, 1, 1, 8)))
    assert topology_bounds.speed_squashed_bound(instance, Objective("wct")).value == 5
    relative = Objective("wct", relative=True)
    assert topology_bounds.speed_squashed_bound(instance, relative).value == 4


# --------------------------------------------------------------------------
# Pieces
# --------------------------------------------------------------------------


def test_job_mixes() -> None:
    classes = speeds.speed_classes(Instance(Machine(4, speeds=(1, 3, 1, 2)), ()))
    assert [(c.speed, c.processors) for c in classes] == [
        (3, (1,)), (2, (3,)), (1, (0, 2)),
    ]  # fmt: skip
    assert speeds.job_mixes(2, classes) == [(1, 1, 0), (1, 0, 1), (0, 1, 1), (0, 0, 2)]
    assert speeds.job_mixes(4, classes) == [(1, 1, 2)]
    for size in range(6):
        assert speeds.mix_count(size, classes) == len(speeds.job_mixes(size, classes))


def test_span_options() -> None:
    job = Job(1, 0, 5, 100)
    assert smp.span_options(job, Nodes(4, 2, tight=None)) == [smp.SpanOption(100, 3, 4)]
    assert smp.span_options(job, Nodes(4, 2, tight=0, level=1)) == [
        smp.SpanOption(115, 3, 3)
    ]
    assert smp.span_options(job, Nodes(4, 2, tight=1, level=2)) == [
        smp.SpanOption(130, 3, 3), smp.SpanOption(140, 4, 4),
    ]  # fmt: skip


def test_colour_reuses_freed_processors() -> None:
    got = speeds.colour(
        (4, 5, 6), [(0, 5, 2, 1), (5, 9, 3, 2), (2, 3, 1, 3), (1, 1, 3, 4)]
    )
    assert got == {1: [4, 5], 3: [6], 2: [4, 5, 6], 4: [4, 5, 6]}
    with pytest.raises(ValueError, match="2 processors wanted"):
        speeds.colour((0, 1), [(0, 5, 1, 1), (1, 3, 2, 2)])


def test_refuses_the_other_machine() -> None:
    both = Machine(4, speeds=(1, 1, 2, 2), nodes=Nodes(2, 2))
    instance = Instance(both, (Job(1, 0, 1, 4),))
    with pytest.raises(ValueError, match="speed model"):
        speeds.solve(instance, "cmax", settings=SOLVE)
    with pytest.raises(ValueError, match="SMP model"):
        smp.solve(instance, "cmax", settings=SOLVE)
    many = Machine(60, speeds=tuple(range(1, 61)))  # 60 classes
    wide = Instance(many, (Job(1, 0, 5, 4),))  # C(60, 5) mixes
    with pytest.raises(ValueError, match="job mixes over 60 speed classes"):
        speeds.solve(wide, "cmax", settings=SOLVE)


def test_area_weights_are_fixed_before_the_relaxation() -> None:
    # Regression: the flat relaxation inflates run times, and an area weight
    # recomputed from them (once 404, above the optimum) is no bound.
    machine = Machine(4, nodes=Nodes(2, 2, tight=0, level=2))
    jobs = (Job(1, 2, 2, 6), Job(2, 2, 2, 7), Job(3, 0, 2, 6))
    instance = Instance(machine, jobs)
    objective = Objective.parse("wct:area")
    optimum, _ = brute_force(instance, objective)
    assert optimum == 392
    bounds, _ = topology_bounds.topology_lower_bounds(instance, objective, None)
    assert max(b.value for b in bounds) <= optimum
