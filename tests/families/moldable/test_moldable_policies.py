"""Adaptive partitioning and EASY with scaling: hand-checked cases, the
rigid reduction to ``fcfs`` and ``easy``, valid schedules."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import starts_of
from support.paths import INSTANCES, REPO

from optsched import check
from optsched.heuristics.engine.runner import simulate
from optsched.heuristics.moldable.policies import (
    MOLDABLE_POLICY_NAMES,
    adaptive,
    adaptive_target,
    easy_scaling,
    parse_moldable_policy,
    run_moldable_policy,
)
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.io.native import read_native
from optsched.moldable.speedup import parse_model
from optsched.schedule import Placement, Schedule


def linear(job_id: int, release: int, size: int, work: int, most: int) -> Job:
    """A moldable job of ``work`` processor-seconds, linear speed-up on 1 ..
    ``most`` processors (``T(p) = ceil(work / p)``), requesting ``size``."""
    modes = tuple(Mode(p, math.ceil(work / p)) for p in range(1, most + 1))
    request = modes[size - 1]
    return Job(job_id, release, size, request.runtime, modes=modes)


def valid(instance: Instance, schedule: Schedule) -> Schedule:
    assert check.check_schedule(instance, schedule) == []
    assert set(schedule.placements) == {j.id for j in instance.jobs}
    return schedule


def sizes(schedule: Schedule) -> dict[int, tuple[int, int]]:
    """``{job: (start, processors)}``."""
    return {
        j: (p.start, len(p.processors or ())) for j, p in schedule.placements.items()
    }


def test_adaptive_target() -> None:
    assert adaptive_target(8, 2) == 2
    assert adaptive_target(8, 0) == 8
    assert adaptive_target(3, 5) == 1
    assert adaptive_target(0, 0) == 1  # then no mode fits: the head waits


def test_adaptive_by_hand() -> None:
    # m = 8. At 0 jobs 1-3 wait: job 1 gets floor(8 / 3) = 2 (T = 16/2 =
    # 8); job 2 floor(6 / 2) = 3 (T = ceil(8/3) = 3); job 3 floor(3 / 1) = 3
    # (T = 3). Job 4 (modes up to 4) arrives at 1, nothing is free; at 3
    # jobs 2 and 3 end, 6 free, nobody behind it: target 6, largest mode 4
    # (T = 12/4 = 3), ends at 6.
    instance = Instance(
        Machine(8),
        (
            linear(1, 0, 1, 16, 8),
            linear(2, 0, 1, 8, 8),
            linear(3, 0, 1, 8, 8),
            linear(4, 1, 1, 12, 4),
        ),
    )
    schedule = valid(instance, adaptive(instance))
    assert schedule[1] == Placement(0, 8, (0, 1))
    assert schedule[2] == Placement(0, 3, (2, 3, 4))
    assert schedule[3] == Placement(0, 3, (5, 6, 7))
    assert schedule[4] == Placement(3, 6, (2, 3, 4, 5))
    assert schedule.producer == "adaptive"


def test_adaptive_smallest_mode_when_the_target_is_below_it() -> None:
    # Job 1 only runs on 3 or 4 processors; with 4 free and 3 jobs waiting
    # the target is 1. Unguarded, it runs on its smallest mode, 3 (it
    # fits). Job 2 (target max(1, floor(1 / 2)) = 1) takes the last
    # processor; job 3 waits until job 2 ends at 4, then takes the one free
    # processor.
    wide = Job(1, 0, 4, 5, modes=(Mode(3, 6), Mode(4, 5)))
    instance = Instance(
        Machine(4), (wide, linear(2, 0, 1, 4, 4), linear(3, 0, 1, 4, 4))
    )
    schedule = valid(instance, adaptive(instance, guarded=False))
    assert sizes(schedule) == {1: (0, 3), 2: (0, 1), 3: (4, 1)}
    assert schedule.producer == "adaptive:guard=none"
    # Guarded: its request (4) is free now, so the 3-processor mode (ends
    # at 6, not 5) is refused; the smallest admitted mode is 4, [0, 5).
    # At 5 jobs 2 and 3 (request 1, work 4) wait: job 2's target is
    # floor(4 / 2) = 2 (a mode above its request, never refused: T = 2),
    # job 3's floor(2 / 1) = 2; both run [5, 7).
    schedule = valid(instance, adaptive(instance))
    assert sizes(schedule) == {1: (0, 4), 2: (5, 2), 3: (5, 2)}


# m = 4. Job 1 runs [0, 10) on 3. At 1, job 2 (4 processors for 5 s, or 2
# for 10) is the head: on 4 it ends at 10 + 5, on 2 at 10 + 10, so it is
# reserved on 4 at the shadow time 10 (extra 0). Job 3 requests 2 processors
# for 4 s but only 1 is free: on 1 it takes 8 s and ends by 9 <= 10, so it
# backfills on 1 processor. Plain EASY makes it wait for job 2 (start 15).
FEWER = Instance(
    Machine(4),
    (
        Job(1, 0, 3, 10, modes=(Mode(3, 10),)),
        Job(2, 1, 4, 5, modes=(Mode(2, 10), Mode(4, 5))),
        Job(3, 1, 2, 4, modes=(Mode(1, 8), Mode(2, 4))),
    ),
)

# m = 8. Job 1 holds 4 until 10; the head job 2 needs 5: shadow 10, 8
# available then, extra 3. Job 3 takes 2 extra processors (ends at 20 on 2,
# 40 on 1): extra 1.
SHRINK = Instance(
    Machine(8),
    (
        Job(1, 0, 4, 10),
        Job(2, 0, 5, 3),
        Job(3, 0, 2, 20, modes=(Mode(1, 40), Mode(2, 20))),
        Job(4, 0, 2, 30, modes=(Mode(1, 60), Mode(2, 30))),
        Job(5, 0, 1, 50),
    ),
)

EASY_SCALING_CASES = [
    pytest.param(FEWER, True, {1: (0, 3), 2: (10, 4), 3: (1, 1)}, id="fewer"),
    # Job 1 holds 2 of 4 processors until 10. The head, job 2, ends at 6 on
    # the 2 free processors and at 10 + 5 = 15 on its requested 4: it
    # starts now on 2. Job 3 is never scaled up (modes above its request
    # are not considered): it starts on its 1 at once.
    pytest.param(
        Instance(
            Machine(4),
            (
                Job(1, 0, 2, 10, modes=(Mode(2, 10),)),
                Job(2, 0, 4, 5, modes=(Mode(2, 6), Mode(4, 5))),
                Job(3, 0, 1, 20, modes=(Mode(1, 20), Mode(4, 5))),
            ),
        ),
        True,
        {1: (0, 2), 2: (0, 2), 3: (6, 1)},
        id="head-scaled",
    ),
    # m = 6. Job 1 holds 4 until 10; the head job 2 needs 6: shadow 10,
    # extra 0. Job 3 (2 processors for 20 s, or 1 for 40) cannot end by 10
    # on either and extra is 0: it waits. Job 4 (1 for 5 s) ends by 10 and
    # backfills. Job 3 then starts after job 2, on its faster mode.
    pytest.param(
        Instance(
            Machine(6),
            (
                Job(1, 0, 4, 10),
                Job(2, 0, 6, 3),
                Job(3, 0, 2, 20, modes=(Mode(1, 40), Mode(2, 20))),
                Job(4, 0, 1, 5),
            ),
        ),
        True,
        {1: (0, 4), 2: (10, 6), 3: (13, 2), 4: (0, 1)},
        id="no-mode-keeps-the-reservation",
    ),
    # Unguarded, job 4 (2 for 30 s or 1 for 60) may only use 1 extra
    # processor now: it starts on 1, extra 0. Job 5 (1 processor, 50 s)
    # fits now but neither ends by 10 nor finds extra processors: it waits
    # for job 2 (ends at 13).
    pytest.param(
        SHRINK,
        False,
        {1: (0, 4), 2: (10, 5), 3: (0, 2), 4: (0, 1), 5: (13, 1)},
        id="extra-shrinks-unguarded",
    ),
    # Guarded: job 4's request (2) is free now (s_2 = 0), so on 1 it would
    # end at 60 against 30: refused, it waits. Job 5 takes the extra
    # processor instead, [0, 50). At 13 (job 2 done) job 4 is the head: on
    # 1 it ends at 73, on 2 at 43; it runs on 2.
    pytest.param(
        SHRINK,
        True,
        {1: (0, 4), 2: (10, 5), 3: (0, 2), 4: (13, 2), 5: (0, 1)},
        id="extra-shrinks-guarded",
    ),
]
"""Hand-checked EASY-with-scaling cases: the instance, the guard, then each
job's start and processor count."""


@pytest.mark.parametrize(("instance", "guarded", "expected"), EASY_SCALING_CASES)
def test_easy_scaling_by_hand(
    instance: Instance, guarded: bool, expected: dict[int, tuple[int, int]]
) -> None:
    schedule = valid(instance, easy_scaling(instance, guarded=guarded))
    assert sizes(schedule) == expected


def test_easy_scaling_backfills_on_fewer_processors() -> None:
    # FEWER: job 3 backfills on processor 3 for 8 s; plain EASY makes it
    # wait for job 2 (start 15).
    schedule = valid(FEWER, easy_scaling(FEWER))
    assert schedule[3] == Placement(1, 9, (3,))
    assert schedule.producer == "easy-scaling"
    rigid = simulate(FEWER.rigid(), "easy").schedule
    assert rigid[3].start == 15


def test_spec_and_refusals() -> None:
    assert MOLDABLE_POLICY_NAMES == ("adaptive", "easy-scaling")
    assert parse_moldable_policy("adaptive") == {"guarded": True}
    assert parse_moldable_policy(" EASY-scaling ") == {"guarded": True}
    assert parse_moldable_policy("adaptive:guard=None") == {"guarded": False}
    assert parse_moldable_policy("easy-scaling:guard=finish") == {"guarded": True}
    for bad in ("easy", "adaptive:x=1", "deq", "adaptive:guard=x", "adaptive:guard"):
        with pytest.raises(ValueError):
            parse_moldable_policy(bad)
    instance = Instance(Machine(4), (linear(1, 0, 2, 8, 4),))
    assert run_moldable_policy(instance, "adaptive") == adaptive(instance)
    assert run_moldable_policy(instance, "easy-scaling") == easy_scaling(instance)
    unguarded = run_moldable_policy(instance, "easy-scaling:guard=none")
    assert unguarded == easy_scaling(instance, guarded=False)
    for policy in (adaptive, easy_scaling):
        assert policy(Instance(Machine(2), ())).placements == {}


def test_busy_blocks_and_contiguous_machines_by_hand() -> None:
    # On the engine the machine's rules apply to the chosen modes. m = 4,
    # one job of work 8 (T = 8, 4, 3, 2 on 1..4) requesting 4 processors,
    # a busy block holding 2 over [0, 3). Guard: the request's slot is 3
    # (ends 5), so mode 1 (ends 8) is refused. EASY with scaling: the
    # earliest ends are 2 at 0 -> 4, 3 at 3 -> 6, 4 at 3 -> 5: 2 processors
    # over [0, 4). Adaptive: target floor(2 / 1) = 2, mode 2, [0, 4).
    job = linear(1, 0, 4, 8, 4)
    blocked = Instance(Machine(4, unavailable=(BusyBlock(0, 3, 2),)), (job,))
    for policy in (adaptive, easy_scaling):
        assert sizes(valid(blocked, policy(blocked))) == {1: (0, 2)}
        assert valid(blocked, policy(blocked))[1].end == 4
    # Contiguous, request 2: adaptive takes the whole machine (target 4,
    # mode 4 ends at 2); EASY with scaling keeps to at most 2 (mode 2,
    # [0, 4); mode 1 would end at 8, later than the request's 4).
    contiguous = Instance(Machine(4, "contiguous"), (linear(1, 0, 2, 8, 4),))
    wide = valid(contiguous, adaptive(contiguous))[1]
    assert (wide.start, wide.end, wide.processors) == (0, 2, (0, 1, 2, 3))
    narrow = valid(contiguous, easy_scaling(contiguous))[1]
    assert (narrow.start, narrow.end, narrow.processors) == (0, 4, (0, 1))


@st.composite
def rigid_instances(draw: st.DrawFn) -> Instance:
    """Rigid jobs with estimates above, at or below their run times."""
    m = draw(st.integers(1, 10))
    jobs = []
    for k in range(1, draw(st.integers(0, 14)) + 1):
        runtime = draw(st.integers(0, 20))
        estimate = max(0, runtime + draw(st.sampled_from([0, 0, -3, 4, 15])))
        size = draw(st.integers(1, m))
        jobs.append(Job(k, draw(st.integers(0, 30)), size, runtime, estimate))
    return Instance(Machine(m), tuple(jobs))


@settings(max_examples=200, deadline=None)
@given(rigid_instances())
def test_rigid_instances_reduce_to_easy_and_fcfs(instance: Instance) -> None:
    scaled = valid(instance, easy_scaling(instance))
    assert starts_of(scaled) == starts_of(simulate(instance, "easy").schedule)
    partitioned = valid(instance, adaptive(instance))
    assert starts_of(partitioned) == starts_of(simulate(instance, "fcfs").schedule)


@pytest.mark.parametrize("name", ["kth_20", "kth_50", "lublin256_30", "hpc2n_40"])
def test_trace_windows_reproduce_easy(name: str) -> None:
    instance = read_native(INSTANCES / f"{name}.json").instance
    scaled = valid(instance, easy_scaling(instance))
    assert starts_of(scaled) == starts_of(simulate(instance, "easy").schedule)
    moldable = parse_model("linear:max=64").apply(instance)
    for policy in (adaptive, easy_scaling):
        valid(moldable, policy(moldable))


@settings(max_examples=100, deadline=None)
@given(rigid_instances(), st.sampled_from(["linear", "amdahl:f=0.2", "conservative"]))
def test_moldable_schedules_are_valid(instance: Instance, model: str) -> None:
    moldable = parse_model(model).apply(instance)
    for policy in (adaptive, easy_scaling):
        valid(moldable, policy(moldable))
    requested = {j.id: j.size for j in moldable.jobs}
    for job_id, placement in easy_scaling(moldable).placements.items():
        assert len(placement.processors or ()) <= requested[job_id]  # never up


@settings(max_examples=150, deadline=None)
@given(rigid_instances(), st.sampled_from(["linear", "amdahl:f=0.2", "conservative"]))
def test_easy_scaling_delays_no_reservation(instance: Instance, model: str) -> None:
    # With exact estimates, a job ends no later than its first reservation
    # promised (whatever modes it and the backfilled jobs were given).
    exact = instance.with_jobs(j.replace(estimate=j.runtime) for j in instance.jobs)
    moldable = parse_model(model).apply(exact)
    promised: dict[int, int] = {}
    schedule = valid(moldable, easy_scaling(moldable, reserved_ends=promised))
    for job_id, end in promised.items():
        assert schedule[job_id].end <= end


def test_malleable_jobs_run_in_one_mode() -> None:
    # A malleable job may also run in one piece on one of its modes.
    rigid = Instance(Machine(8), (Job(1, 0, 4, 10), Job(2, 1, 8, 6), Job(3, 2, 2, 9)))
    malleable = parse_model("linear").apply(rigid, malleable=True)
    for policy in (adaptive, easy_scaling):
        schedule = valid(malleable, policy(malleable))
        assert all(not p.pieces for p in schedule.placements.values())


def _waiting_case() -> Instance:
    """m = 4: job 1 holds 2 processors over [0, 10); job 2 (rigid, 3) waits
    for it; job 3 requests 2 processors of a 60-processor-second linear job
    (60 s on 1, 30 s on 2)."""
    return Instance(
        Machine(4),
        (Job(1, 0, 2, 10), Job(2, 0, 3, 10), linear(3, 0, 2, 60, 2)),
    )


GUARD_CASES = [
    # EASY with scaling: job 2 is reserved at 10 on 3 of 4 processors,
    # extra 1. Job 3 on 1 processor keeps that (extra), so unguarded it
    # runs [0, 60).
    pytest.param(easy_scaling, False, (0, 1), 60, id="easy-scaling-unguarded"),
    # Guarded: its request (2) is free now, so it would end at 0 + 30 by
    # waiting; 0 + 60 > 30, refused. At 10 (job 2 starts on 3) its request
    # is next free at 20, ending 50; 10 + 60 = 70 > 50, refused. At 20 it
    # runs on 2, [20, 50): the makespan falls from 60 to 50.
    pytest.param(easy_scaling, True, (20, 2), 50, id="easy-scaling-guarded"),
    # Adaptive partitioning (strict FCFS): job 2 waits for 10; then job 3
    # has 1 free processor and nobody behind it, target 1. Unguarded it
    # runs [10, 70); guarded (waited end 20 + 30 = 50 < 10 + 60) it waits
    # for its request and runs [20, 50).
    pytest.param(adaptive, False, (10, 1), 70, id="adaptive-unguarded"),
    pytest.param(adaptive, True, (20, 2), 50, id="adaptive-guarded"),
]
"""A policy and its guard on :func:`_waiting_case`, then job 3's start and
processor count, and its end (jobs 1 and 2 run [0, 10) on 2 and from 10 on
3 in every case)."""


@pytest.mark.parametrize(("policy", "guarded", "third", "end"), GUARD_CASES)
def test_the_guard_under_linear_speed_up_by_hand(
    policy: Callable[..., Schedule], guarded: bool, third: tuple[int, int], end: int
) -> None:
    instance = _waiting_case()
    schedule = valid(instance, policy(instance, guarded=guarded))
    assert sizes(schedule) == {1: (0, 2), 2: (10, 3), 3: third}
    assert schedule[3].end == end


def test_the_guard_admits_a_shrink_that_ends_earlier() -> None:
    # m = 4. Job 1 holds 3 processors until 10; job 3 requests 2 of an
    # 8-processor-second linear job (8 s on 1, 4 on 2). Its request is
    # free at 10 and would end at 14; on the one free processor it ends at
    # 8 <= 14: the guard admits it. EASY with scaling: job 2 (4
    # processors) is reserved at 10, extra 0, and 8 <= 10 keeps that: job 3
    # starts now on 1. Adaptive partitioning is strict FCFS, so job 3 is
    # alone there: target 1, it starts now on 1.
    job_1, job_3 = Job(1, 0, 3, 10), linear(3, 0, 2, 8, 2)
    backfilled = Instance(Machine(4), (job_1, Job(2, 0, 4, 10), job_3))
    alone = Instance(Machine(4), (job_1, job_3))
    for instance, policy in ((backfilled, easy_scaling), (alone, adaptive)):
        schedule = valid(instance, policy(instance))
        assert sizes(schedule)[3] == (0, 1)
        assert schedule[3].end == 8


def _running_at(
    schedule: Schedule, time: int, other_than: int
) -> list[tuple[int, int]]:
    """``(end, processors)`` of the jobs started at or before ``time`` and
    not ended by it (every job but ``other_than``), by end."""
    return sorted(
        (p.end, len(p.processors or ()))
        for j, p in schedule.placements.items()
        if j != other_than and p.start <= time < p.end
    )


def _earliest_free(
    running: list[tuple[int, int]], free: int, need: int, now: int
) -> int:
    for end, processors in running:
        if free >= need:
            break
        free += processors
        now = max(now, end)
    return now


def assert_guarded(instance: Instance, schedule: Schedule) -> None:
    """Plain check of the finish-time guard with exact estimates: a job
    started at ``t`` on ``p`` of its requested ``q`` processors ends no
    later than its request would, started when ``q`` processors are next
    free. Jobs that started at ``t`` after it are counted as running (the
    check cannot tell the order within an instant), which only makes the
    request's start later: a necessary condition of the guard."""
    m = instance.processors
    for job in instance.jobs:
        placement = schedule[job.id]
        p = len(placement.processors or ())
        if p >= job.size:
            continue
        running = _running_at(schedule, placement.start, job.id)
        free = m - sum(processors for _, processors in running)
        start = _earliest_free(running, free, job.size, placement.start)
        assert placement.end <= start + job.runtime, (job.id, p, job.size)


@settings(max_examples=150, deadline=None)
@given(rigid_instances())
def test_no_job_shrinks_to_end_later_than_by_waiting(instance: Instance) -> None:
    exact = instance.with_jobs(j.replace(estimate=j.runtime) for j in instance.jobs)
    moldable = parse_model("linear").apply(exact)
    for policy in (adaptive, easy_scaling):
        assert_guarded(moldable, valid(moldable, policy(moldable)))


def _makespan_and_total(schedule: Schedule) -> tuple[int, int]:
    """Makespan and sum of completion times, from the placements."""
    ends = [p.end for p in schedule.placements.values()]
    return max(ends), sum(ends)


def test_kth_50_under_linear_speed_up() -> None:
    # The issue-28 collapse and its repair, on instances/kth_50.json made
    # moldable with linear speed-up (EASY on the same window: makespan
    # 71,989 s, sum of completions 738,640 s).
    instance = parse_model("linear").apply(
        read_native(INSTANCES / "kth_50.json").instance
    )
    easy = simulate(instance.rigid(), "easy").schedule
    assert _makespan_and_total(easy) == (71989, 738640)
    values = {}
    for policy in (adaptive, easy_scaling):
        for guarded in (True, False):
            schedule = valid(instance, policy(instance, guarded=guarded))
            values[schedule.producer] = _makespan_and_total(schedule)
    assert values == {
        "adaptive": (68463, 1783927),
        "adaptive:guard=none": (780758, 3134226),
        "easy-scaling": (67556, 1627686),
        "easy-scaling:guard=none": (175396, 1724231),
    }
    # The moldable guide prints these makespans: they must be these.
    guide = (REPO / "docs" / "guide" / "moldable.md").read_text()
    paragraph = guide[guide.index("**The finish-time guard**") :]
    paragraph = paragraph[: paragraph.index("\n- ")]
    printed = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]{4,}", paragraph)]
    makespans = {name: value[0] for name, value in values.items()}
    assert printed == [
        makespans["easy-scaling:guard=none"],
        makespans["adaptive:guard=none"],
        _makespan_and_total(easy)[0],
        makespans["easy-scaling"],
        makespans["adaptive"],
    ]
