"""The core schedule toolkit: capacity profile, list scheduling, processors.

The property tests are the soundness argument of the ``any`` rule in action:
busy blocks on ``any`` machines are processor counts, so every
count-feasible start vector, including ones with reservations starting
after some jobs, gets a processor set for every job and passes the checker.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import make, rectangles

from optsched.check import check_schedule
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.common.solution import assign_processors as assign_for_models
from optsched.packing import Profile, assign_processors, list_schedule
from optsched.schedule import Schedule

# --------------------------------------------------------------------------
# Profile
# --------------------------------------------------------------------------


def test_profile_of_blocks_and_earliest_from() -> None:
    # m = 4; 3 processors busy on [2, 5), 2 on [7, 9).
    profile = Profile.of_blocks(4, [BusyBlock(2, 5, 3), BusyBlock(7, 9, 2)])
    assert profile.segments() == [(0, 4), (2, 1), (5, 4), (7, 2), (9, 4)]
    assert profile.earliest_from(0, 2, 2) == 0  # [0, 2) before the first block
    assert profile.earliest_from(0, 2, 3) == 5  # [0, 3) meets it
    assert profile.earliest_from(1, 1, 10) == 1  # one processor is always free
    assert profile.earliest_from(6, 3, 2) == 9  # [6, 8) meets the second block
    assert profile.earliest_from(3, 3, 0) == 5  # an instant needs its processors
    assert profile.earliest_from(0, 5, 1) is None  # wider than the machine


@settings(max_examples=200, deadline=None)
@given(
    rectangles(12, 6, (1, 4), most=6),
    st.integers(0, 15),
    st.integers(1, 4),
    st.integers(0, 6),
)
def test_earliest_from_is_the_first_feasible_integer_start(
    rectangles: list[tuple[int, int, int]], release: int, size: int, duration: int
) -> None:
    m = 4
    profile = Profile(0, m)
    used = [0] * 40
    for start, length, width in rectangles:
        if all(used[t] + width <= m for t in range(start, start + length)):
            profile.add(start, start + length, -width)
            for t in range(start, start + length):
                used[t] += width
    expected = next(
        t
        for t in range(release, 40)
        if all(used[u] + size <= m for u in range(t, t + max(duration, 1)))
    )
    assert profile.earliest_from(release, size, duration) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 70), st.integers(1, 9)), max_size=40),
    st.integers(1, 4),
    st.integers(0, 12),
    st.integers(1, 80),
)
def test_earliest_and_earliest_before_are_the_first_feasible_starts(
    steps: list[tuple[int, int]], size: int, duration: int, limit: int
) -> None:
    # Profiles of up to 80 segments against the first feasible integer
    # start found by brute force (the searches conservative backfilling's
    # compression spends its time in).
    m = 4
    profile = Profile(0, m)
    free = [m] * 100
    for start, width in steps:
        take = min(width % (m + 1), free[start])  # at most what is free
        if take:
            profile.add(start, start + 1, -take)
            free[start] -= take
    horizon = 99  # the profile is all free from 71 on

    def fits(t: int, end: int) -> bool:
        return all(free[u] >= size for u in range(t, max(end, t + 1)))

    expected = next((t for t in range(horizon) if fits(t, t + duration)), None)
    assert profile.earliest(size, duration) == expected
    assert profile.earliest(size, duration, limit=limit) == min(expected, limit)
    before = next((t for t in range(limit) if fits(t, min(t + duration, limit))), None)
    assert profile.earliest_before(size, duration, limit) == before


# --------------------------------------------------------------------------
# Busy blocks on any machines are counts
# --------------------------------------------------------------------------


def test_pinned_blocks_on_an_any_machine_are_refused() -> None:
    # The old unsound case: processor 0 pinned during [0, 1), processor 1
    # during [1, 2). By count a size-1 job of 2 s fits at 0, but no processor
    # is free for [0, 2); the sweep used to return it without processors and
    # the checker accepted that.
    pinned = (BusyBlock(0, 1, 1, 0, "job 7"), BusyBlock(1, 2, 1, 1, "job 8"))
    with pytest.raises(ValueError) as info:
        Machine(2, "any", pinned)
    assert str(info.value) == (
        "busy block job 7: offset 0 on an 'any' machine: blocks on 'any' "
        "machines are processor counts; drop the offset or use allocation "
        "'contiguous'"
    )
    # As counts, the machine picks the blocks' processors around the job.
    counted = Machine(2, "contiguous", pinned).with_allocation("any")
    instance = Instance(counted, (Job(1, 0, 1, 2),))
    schedule = list_schedule(instance, [1])
    assert schedule[1].start == 0 and schedule[1].processors is not None
    assert check_schedule(instance, schedule) == []


@st.composite
def count_instances(draw: st.DrawFn) -> Instance:
    """Random jobs and random count blocks on an ``any`` machine; blocks may
    start after jobs are released (reservations)."""
    m = draw(st.integers(1, 6))
    blocks: list[BusyBlock] = []
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(0, 15))
        block = BusyBlock(
            start, start + draw(st.integers(0, 8)), draw(st.integers(1, m))
        )
        try:
            Machine(m, "any", (*blocks, block))
        except ValueError:
            continue  # more than m processors in blocks at some time
        blocks.append(block)
    jobs = [
        Job(
            k,
            draw(st.integers(0, 12)),
            draw(st.integers(1, m)),
            draw(st.integers(0, 6)),
        )
        for k in range(1, draw(st.integers(0, 8)) + 1)
    ]
    return Instance(Machine(m, "any", tuple(blocks)), tuple(jobs))


def _with_processors_everywhere(instance: Instance, schedule: Schedule) -> None:
    assert set(schedule.placements) == {j.id for j in instance.jobs}
    for job in instance.jobs:
        processors = schedule[job.id].processors
        assert processors is not None and len(processors) == job.size, job.id
    assert check_schedule(instance, schedule) == []


@settings(max_examples=200, deadline=None)
@given(instance=count_instances(), data=st.data())
def test_list_schedules_in_random_orders_get_processors_and_pass(
    instance: Instance, data: st.DataObject
) -> None:
    order = data.draw(st.permutations([j.id for j in instance.jobs]))
    _with_processors_everywhere(instance, list_schedule(instance, order))


@settings(max_examples=200, deadline=None)
@given(instance=count_instances(), data=st.data())
def test_every_count_feasible_start_vector_gets_processors(
    instance: Instance, data: st.DataObject
) -> None:
    # Jobs in random order, each at the first start at or after a random
    # time (not the earliest one: holes and idle time are allowed) where the
    # processor count fits beside the blocks and the jobs already placed.
    m = instance.processors
    horizon = 80
    used = [0] * horizon
    for b in instance.machine.unavailable:
        for t in range(b.start, b.end):
            used[t] += b.size
    starts = {}
    for job in data.draw(st.permutations(list(instance.jobs))):
        t = job.release + data.draw(st.integers(0, 10))
        while any(used[u] + job.size > m for u in range(t, t + job.runtime)):
            t += 1
        for u in range(t, t + job.runtime):
            used[u] += job.size
        starts[job.id] = t
    _with_processors_everywhere(instance, assign_processors(instance, starts))


def test_assign_processors_refuses_a_capacity_overrun() -> None:
    instance = make(2, [(0, 2, 4), (0, 1, 4)], unavailable=(BusyBlock(2, 6, 1),))
    with pytest.raises(ValueError, match="3 processors in use at time 0"):
        assign_processors(instance, {1: 0, 2: 0})
    with pytest.raises(ValueError, match="3 processors in use at time 4"):
        assign_processors(instance, {1: 4, 2: 0})
    with pytest.raises(ValueError, match="the machine is contiguous"):
        assign_processors(make(2, [], allocation="contiguous"), {})
    # For the models, a broken start vector (a model bug) becomes a schedule
    # that the checker rejects, naming the overrun, rather than an exception.
    broken = assign_for_models(instance, {1: 0, 2: 0})
    kinds = [v.kind for v in check_schedule(instance, broken)]
    assert "capacity" in kinds
