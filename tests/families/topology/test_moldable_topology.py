"""Moldable jobs on machines with node speeds or SMP nodes.

A mode ``(q, t)`` is ``q`` processors and ``t`` seconds on ``q`` processors
of speed 1 (work ``q t``); on the processor set ``S`` it runs ``ceil(q t /
sum_S s_k * inflation(span))``. The goldens below are worked by hand in
their comments; every schedule goes through the checker, and the bounds
are held to every checked schedule on random small instances.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.heuristics.moldable.policies import ModeChoosing, moldable_policy
from optsched.heuristics.topology.modes import run_mode_choosing
from optsched.instance import Instance, Job, Machine, Mode
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.nodes import Nodes
from optsched.result import Incumbent, SolveStatus
from optsched.schedule import Placement, Schedule
from optsched.topology.machines import MachineShape, append_schedule, flat_relaxation

POLICIES = ("fcfs", "easy", "fit:f=fifo", "adaptive", "easy-scaling")


def _flat() -> Instance:
    return Instance(
        Machine(4),
        (
            Job(1, 0, 2, 10, modes=(Mode(1, 20), Mode(2, 10), Mode(4, 6))),
            Job(2, 0, 1, 8),
            Job(3, 5, 4, 6, modes=(Mode(2, 12), Mode(4, 6))),
        ),
    )


def _placed(schedule: Schedule) -> dict[int, tuple[int, int, tuple[int, ...]]]:
    out = {}
    for jid, p in schedule.placements.items():
        assert p.processors is not None
        out[jid] = (p.start, p.end, tuple(p.processors))
    return out


def test_speeds_keep_the_modes_and_turn_rigid_jobs_into_work() -> None:
    shaped = MachineShape.parse("speeds=2x1,2x2").apply(_flat())
    jobs = shaped.jobs_by_id()
    assert jobs[1].modes == _flat().job(1).modes  # run times on speed 1
    assert jobs[2].runtime == 8 and jobs[2].size == 1  # work 8 * 1


def test_malleable_jobs_are_refused_by_the_shape() -> None:
    malleable = _flat().with_jobs(
        j.replace(malleable=True) if j.modes else j for j in _flat().jobs
    )
    with pytest.raises(ValueError, match="malleable jobs are not supported"):
        MachineShape.parse("nodes=2x2").apply(malleable)


# Speeds 1, 1, 2, 2. Job 1 (request 2 x 10 s, work 20) on the fastest pair
# {2, 3} (speed 4): 5 s. Job 2 (rigid, work 8) on processor 0: 8 s. Job 3
# arrives at 5 with request 4 x 6 s (work 24): fcfs waits for the whole
# machine at 8, speed 6: 4 s. adaptive: free {1, 2, 3}, target 3; the
# request's shadow is 8 and its shortest run time 24 / 6 = 4, so it would
# end at 12; the mode 2 x 12 s (work 24) on {2, 3} (speed 4) ends at
# 5 + 6 = 11 <= 12, the guard admits it, and it is the largest within 3.
SPEED_GOLDEN = {
    "fcfs": {1: (0, 5, (2, 3)), 2: (0, 8, (0,)), 3: (8, 12, (0, 1, 2, 3))},
    "easy": {1: (0, 5, (2, 3)), 2: (0, 8, (0,)), 3: (8, 12, (0, 1, 2, 3))},
    "adaptive": {1: (0, 5, (2, 3)), 2: (0, 8, (0,)), 3: (5, 11, (2, 3))},
    "easy-scaling": {1: (0, 5, (2, 3)), 2: (0, 8, (0,)), 3: (5, 11, (2, 3))},
}
# Nodes 2 x 2, tight 0, level 2, ratio cost 1 + 0.05 * 2 * span. Job 1 on
# node 0 (span 1, x 1.1): 11 s; job 2 on processor 2: 8.8 -> 9 s. Job 3
# (request 4, span 2, x 1.2: 7.2 -> 8 s) fits at 11. With the guard
# adaptive waits for it (mode 2 at 9 on node 1: 13.2 s, ends 22.2 > 11 +
# 8 = 19); without, it takes mode 2 at 9: ceil(13.2) = 14, ends 23.
NODE_GOLDEN = {
    "easy": {1: (0, 11, (0, 1)), 2: (0, 9, (2,)), 3: (11, 19, (0, 1, 2, 3))},
    "adaptive": {1: (0, 11, (0, 1)), 2: (0, 9, (2,)), 3: (11, 19, (0, 1, 2, 3))},
    "adaptive:guard=none": {1: (0, 11, (0, 1)), 2: (0, 9, (2,)), 3: (9, 23, (2, 3))},
}


@pytest.mark.parametrize(
    ("shape", "golden"),
    [("speeds=2x1,2x2", SPEED_GOLDEN), ("nodes=2x2;tight=0;level=2", NODE_GOLDEN)],
)
def test_golden_schedules(shape: str, golden: dict) -> None:
    instance = MachineShape.parse(shape).apply(_flat())
    for policy, expected in golden.items():
        schedule = simulate(instance, policy).schedule
        assert check_schedule(instance, schedule) == [], policy
        assert _placed(schedule) == expected, policy


def _speed_instance() -> Instance:
    return MachineShape.parse("speeds=2x1,2x2").apply(_flat())


def _with(schedule: Schedule, jid: int, placement: Placement) -> Schedule:
    return Schedule({**schedule.placements, jid: placement}, "edited")


def test_the_checker_takes_the_mode_of_the_processor_count() -> None:
    instance = _speed_instance()
    good = simulate(instance, "adaptive").schedule
    assert check_schedule(instance, good) == []
    # Job 3 in mode 4 on the whole machine (speed 6): 24 / 6 = 4 s.
    right = _with(good, 3, Placement(11, 15, (0, 1, 2, 3)))
    assert check_schedule(instance, right) == []


def test_the_checker_refuses_a_count_that_is_no_mode() -> None:
    instance = _speed_instance()
    good = simulate(instance, "adaptive").schedule
    wrong = _with(good, 3, Placement(11, 19, (0, 1, 2)))  # 3 is no mode of job 3
    kinds = {v.kind for v in check_schedule(instance, wrong)}
    assert "mode" in kinds


def test_the_checker_refuses_a_duration_of_another_reading() -> None:
    instance = _speed_instance()
    good = simulate(instance, "adaptive").schedule
    # Mode 2 x 12 s on {2, 3}: work 24 at speed 4 is 6 s. 12 s (the speed-1
    # run time) and 3 s (reading 12 as the work) are both wrong.
    for end in (17, 8):
        wrong = _with(good, 3, Placement(5, end, (2, 3)))
        violations = check_schedule(instance, wrong)
        assert [v.kind for v in violations] == ["duration"], (end, violations)
        assert "expected 6 s" in violations[0].message
    # On the slow pair {0, 1} (speed 2) the same mode takes 12 s.
    slow = _with(good, 3, Placement(11, 23, (0, 1)))
    assert check_schedule(instance, slow) == []


def test_the_checker_applies_the_span_limit_to_the_mode() -> None:
    instance = MachineShape.parse("nodes=2x2;tight=0").apply(_flat())
    good = simulate(instance, "easy").schedule
    # Job 1 in mode 2 across both nodes: span 2 > 0 + ceil(2 / 2).
    spread = _with(good, 1, Placement(0, 10, (1, 2)))
    assert "span" in {v.kind for v in check_schedule(instance, spread)}


def test_the_flat_relaxation_keeps_each_mode_at_its_shortest_time() -> None:
    relaxed = flat_relaxation(_speed_instance())
    assert relaxed.machine.flat
    # Work 20 / 2 (one processor of speed 2), 20 / 4, 24 / 6.
    assert relaxed.job(1).modes == (Mode(1, 10), Mode(2, 5), Mode(4, 4))
    assert (relaxed.job(1).size, relaxed.job(1).runtime) == (2, 5)
    assert relaxed.job(2).runtime == 4  # rigid work 8 on speed 2


# ------------------------------------------------------------------ random


@st.composite
def _flat_instances(draw: st.DrawFn, m: int) -> Instance:
    # Moldable jobs of linear speed-up (T(q) = ceil(W / q): valid modes).
    jobs = []
    for jid in range(1, draw(st.integers(1, 5)) + 1):
        work = draw(st.integers(1, 40))
        sizes = sorted(draw(st.sets(st.integers(1, m), min_size=1, max_size=3)))
        modes = tuple(Mode(q, math.ceil(work / q)) for q in sizes)
        request = draw(st.sampled_from(modes))
        jobs.append(
            Job(
                jid,
                draw(st.integers(0, 20)),
                request.processors,
                request.runtime,
                weight=draw(st.sampled_from([1.0, 2.0])),
                modes=modes if len(modes) > 1 else (),
            )
        )
    return Instance(Machine(m), tuple(jobs))


@st.composite
def _instances(draw: st.DrawFn) -> Instance:
    count, cpus = draw(st.sampled_from([(2, 2), (2, 3), (3, 2), (4, 1)]))
    m = count * cpus
    flat = draw(_flat_instances(m))
    if draw(st.booleans()):
        speeds = draw(st.lists(st.sampled_from([1, 2, 0.5, 3]), min_size=m, max_size=m))
        return MachineShape(speeds=tuple(speeds)).apply(flat)
    tight = draw(st.sampled_from([None, 0, 1]))
    level = draw(st.integers(0, 3))
    return MachineShape(nodes=(count, cpus), tight=tight, level=level).apply(flat)


def _objective(instance: Instance, schedule: Schedule, kind: str) -> Fraction:
    # Recomputed from the schedule: the makespan, or sum w_j C_j.
    ends = {jid: p.end for jid, p in schedule.placements.items()}
    if kind == "cmax":
        return Fraction(max(ends.values()))
    return sum((Fraction(j.weight) * ends[j.id] for j in instance.jobs), Fraction(0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances())
def test_bounds_never_exceed_a_checked_schedule(instance: Instance) -> None:
    schedules = [append_schedule(instance, [j.id for j in instance.jobs])]
    schedules += [simulate(instance, p).schedule for p in POLICIES]
    for schedule in schedules:
        assert check_schedule(instance, schedule) == [], schedule.producer
    for kind in ("cmax", "wct"):
        best = min(_objective(instance, s, kind) for s in schedules)
        bounds, _ = lower_bounds_within(instance, kind, None)
        assert bounds
        for bound in bounds:
            assert bound.value <= best, (kind, bound)


@settings(max_examples=60, deadline=None)
@given(_flat_instances(4))
def test_the_node_policies_decide_as_the_engine_on_a_flat_machine(
    instance: Instance,
) -> None:
    # The node simulator's reading of the two policies (est = the mode's
    # estimate on a flat machine) against the engine's, which shares no
    # decision code with it.
    for spec in ("adaptive", "easy-scaling", "adaptive:guard=none"):
        policy = moldable_policy(spec)
        assert isinstance(policy, ModeChoosing)
        on_nodes = run_mode_choosing(instance, policy)
        assert check_schedule(instance, on_nodes) == []
        on_engine = simulate(instance, spec).schedule
        assert _starts(on_nodes) == _starts(on_engine), spec


def _starts(schedule: Schedule) -> dict[int, tuple[int, int]]:
    return {
        j: (p.start, len(p.processors or ())) for j, p in schedule.placements.items()
    }


def test_a_machine_of_one_node_without_cost_reads_modes_as_the_flat_engine() -> None:
    instance = Instance(
        Machine(4, nodes=Nodes(1, 4)),
        _flat().jobs,
    )
    for spec in ("adaptive", "easy-scaling"):
        flat = simulate(_flat(), spec).schedule
        on_nodes = simulate(instance, spec).schedule
        assert check_schedule(instance, on_nodes) == []
        assert {j: (p.start, p.end) for j, p in on_nodes.placements.items()} == {
            j: (p.start, p.end) for j, p in flat.placements.items()
        }


@pytest.mark.parametrize("policy", ["adaptive", "easy-scaling"])
def test_a_head_the_user_limit_refuses_lets_the_next_job_start(policy: str) -> None:
    # The limit moves a refused head to the end of the FCFS queue; a
    # selection that kept asking the same head looped over the calendar's
    # weeks for ever.
    from support.composition import build_instance

    instance = build_instance(("user-limit", "moldable", "speeds"))
    schedule = simulate(instance, policy).schedule
    assert check_schedule(instance, schedule) == []
    assert len(schedule.placements) == len(instance.jobs)


def test_appending_in_the_mode_that_ends_first() -> None:
    # Speeds 1, 1, 2, 2, all idle at 0. Job 1: mode 4 (work 24, speed 6)
    # ends at 4, before mode 2 on {2, 3} (20 / 4 = 5) and mode 1 on a
    # speed-2 processor (10). Job 2 (rigid, work 8): processor 2 at 4, 4 s.
    # Job 3 (released at 5): mode 2 on {3, 0} from 5 (speed 3) ends at 13,
    # mode 4 from 8 ends at 12.
    instance = _speed_instance()
    order = [1, 2, 3]
    chosen = append_schedule(instance, order, "x", choose_modes=True)
    assert _placed(chosen) == {
        1: (0, 4, (0, 1, 2, 3)),
        2: (4, 8, (2,)),
        3: (8, 12, (0, 1, 2, 3)),
    }
    requested = append_schedule(instance, order)
    assert _placed(requested) == {
        1: (0, 5, (2, 3)),
        2: (0, 8, (0,)),
        3: (8, 12, (0, 1, 2, 3)),
    }
    for schedule in (chosen, requested):
        assert check_schedule(instance, schedule) == []


def test_bound_keeps_the_better_checked_schedule() -> None:
    from optsched.models import solve

    instance = _speed_instance()
    # fcfs (requests): 5 + 8 + 12 = 25, valid but worse than the append.
    fcfs = Incumbent("fcfs", simulate(instance, "fcfs").schedule)
    for backend in ("bounds-only", "cpsat"):
        result = solve(
            instance, "wct", backend=backend, time_limit=5, incumbents=[fcfs]
        )
        assert result.objective == 24  # 4 + 8 + 12, the earliest-mode append
        assert result.upper_bound_source == "list:earliest-mode"
        assert result.schedule is not None
        assert check_schedule(instance, result.schedule) == []
        assert result.lower_bound is not None and result.lower_bound <= 24
        # No exact model: the flat relaxation's bound (17 by the closed
        # forms, 18 by CP-SAT on it) below the checked schedule.
        assert result.status == SolveStatus.FEASIBLE
        assert result.lower_bound == (17 if backend == "bounds-only" else 18)
        assert result.relaxed == (() if backend == "bounds-only" else ("speeds",))


def test_the_user_limit_charges_a_mode_its_requested_time() -> None:
    # Rule 14 charges processors x requested time: job 1's mode 2 x 5 s is
    # 10, job 2 (rigid, work 4) 1 x 4, together 14 <= 14, so with job 3 of
    # another user all start at 0. Charging the mode's work (2 x 10 > 14)
    # would refuse job 1 while job 3 waits.
    import dataclasses

    from optsched.calendar import Calendar

    limited = dataclasses.replace(Calendar(()), user_limit=14)
    flat = Instance(
        Machine(4, calendar=limited),
        (
            Job(1, 0, 2, 5, user=1, modes=(Mode(1, 10), Mode(2, 5))),
            Job(2, 0, 1, 4, user=1),
            Job(3, 0, 1, 2, user=2),
        ),
    )
    instance = MachineShape.parse("speeds=2x1,2x2").apply(flat)
    for policy in POLICIES:
        schedule = simulate(instance, policy).schedule
        assert check_schedule(instance, schedule) == [], policy
        # Job 1 on {2, 3}: work 10 at speed 4, 3 s; job 2 on 0: 4 s; job 3
        # on 1: 2 s.
        assert _placed(schedule) == {
            1: (0, 3, (2, 3)),
            2: (0, 4, (0,)),
            3: (0, 2, (1,)),
        }, policy
