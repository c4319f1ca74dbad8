"""Offline list and shelf heuristics: golden schedules, errors and properties."""

from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import (
    Optimum,
    make,
    optima,
    slow_settings,
    small_instances,
    starts_of,
)

from optsched.check import check_schedule
from optsched.heuristics.rigid.offline import (
    ORDERS,
    best_heuristic,
    ffdh,
    heuristic_schedules,
    improve_schedule,
    nfdh,
    order_by,
)
from optsched.instance import BusyBlock, Instance, Job
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective
from optsched.packing import list_schedule
from optsched.schedule import Schedule

CMAX = Objective("cmax")
WCT = Objective("wct")


def offsets(schedule: Schedule) -> dict[int, int | None]:
    return {jid: p.offset for jid, p in schedule.placements.items()}


# Instance G: m = 4; jobs (r, q, p): 1 (0, 2, 3), 2 (0, 3, 2), 3 (1, 1, 4),
# 4 (5, 4, 1).
G = [(0, 2, 3), (0, 3, 2), (1, 1, 4), (5, 4, 1)]


# --------------------------------------------------------------------------
# List scheduling
# --------------------------------------------------------------------------


def test_list_schedule_any_machine() -> None:
    # 1 at 0 on 2 processors; 2 needs 3, only 2 free until 3 -> [3, 5);
    # 3 (released 1) fits beside both: [1, 5); 4 at its release 5.
    inst = make(4, G)
    schedule = list_schedule(inst, [1, 2, 3, 4])
    assert starts_of(schedule) == {1: 0, 2: 3, 3: 1, 4: 5}
    # Sweep in start order, lowest free processors first.
    procs = {jid: p.processors for jid, p in schedule.placements.items()}
    assert procs == {1: (0, 1), 3: (2,), 2: (0, 1, 3), 4: (0, 1, 2, 3)}
    assert schedule.producer == "list"
    assert check_schedule(inst, schedule) == []


def test_list_schedule_contiguous_machine() -> None:
    # 1 on [0, 2) at time 0; 2 needs 3 adjacent: at 3, offset 0; 3 at time 1
    # needs a free processor during [1, 5): only processor 3.
    inst = make(4, G, allocation="contiguous")
    schedule = list_schedule(inst, [1, 2, 3, 4])
    assert starts_of(schedule) == {1: 0, 2: 3, 3: 1, 4: 5}
    assert offsets(schedule) == {1: 0, 2: 0, 3: 3, 4: 0}
    assert check_schedule(inst, schedule) == []


def test_list_schedule_fills_holes() -> None:
    # m = 2: A (r0, q1, p4), B (r1, q2, p1) waits for A until 4; C (r0, q1,
    # p2), listed last, still starts at 0 beside A.
    inst = make(2, [(0, 1, 4), (1, 2, 1), (0, 1, 2)])
    assert starts_of(list_schedule(inst, [1, 2, 3])) == {1: 0, 2: 4, 3: 0}


def test_list_schedule_respects_busy_blocks() -> None:
    # m = 3, 2 processors busy during [0, 2): a size-2 job waits until 2.
    inst = make(3, [(0, 2, 1), (0, 1, 2)], unavailable=(BusyBlock(0, 2, 2),))
    schedule = list_schedule(inst, [1, 2])
    assert starts_of(schedule) == {1: 2, 2: 0}
    assert check_schedule(inst, schedule) == []


def test_count_blocks_take_processors_in_the_sweep() -> None:
    # m = 2: one processor busy during [0, 1), one during [1, 2). By count a
    # size-1 job of 2 s fits at 0; the sweep (ties by earlier end) gives the
    # first block processor 0, the job processor 1, then the second block
    # processor 0. (Pinned to processors 0 then 1, as they
    # could be before, the blocks would leave no processor free for [0, 2):
    # such blocks are refused on any machines.)
    blocks = (BusyBlock(0, 1, 1), BusyBlock(1, 2, 1))
    inst = make(2, [(0, 1, 2)], unavailable=blocks)
    schedule = list_schedule(inst, [1])
    assert starts_of(schedule) == {1: 0}
    assert schedule[1].processors == (1,)
    assert check_schedule(inst, schedule) == []
    pinned = (BusyBlock(0, 1, 1, offset=0), BusyBlock(1, 2, 1, offset=1))
    with pytest.raises(ValueError, match="offset 0 on an 'any' machine"):
        make(2, [(0, 1, 2)], unavailable=pinned)


def test_contiguous_placement_on_an_any_machine() -> None:
    inst = make(4, G)
    schedule = list_schedule(inst, [1, 2, 3, 4], allocation="contiguous")
    assert check_schedule(inst, schedule) == []
    assert all(p.processors is not None for p in schedule.placements.values())


@pytest.mark.parametrize(
    ("order", "message"),
    [
        ([1, 2, 3], "misses jobs \\[4\\]"),
        ([1, 2, 3, 4, 4], "job 4 appears twice"),
        ([1, 2, 3, 4, 9], "job 9 is not in the instance"),
    ],
)
def test_list_schedule_rejects_bad_orders(order: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        list_schedule(make(4, G), order)


def test_list_schedule_rejects_impossible_allocations() -> None:
    contiguous = make(4, G, allocation="contiguous")
    with pytest.raises(ValueError, match="contiguous machine needs contiguous"):
        list_schedule(contiguous, [1, 2, 3, 4], allocation="any")
    anonymous = make(4, G, unavailable=(BusyBlock(0, 1, 1),))
    with pytest.raises(ValueError, match="busy blocks with offsets"):
        list_schedule(anonymous, [1, 2, 3, 4], allocation="contiguous")


# --------------------------------------------------------------------------
# Shelves
# --------------------------------------------------------------------------

# m = 4, all released at 0; (q, p): 1 (2, 3), 2 (3, 2), 3 (1, 4), 4 (2, 1),
# 5 (1, 1). Decreasing height: 3, 1, 2, 4, 5.
SHELF = [(0, 2, 3), (0, 3, 2), (0, 1, 4), (0, 2, 1), (0, 1, 1)]


def test_nfdh() -> None:
    # shelf 0 (h 4): 3 at 0, 1 at 1; 2 does not fit -> shelf 4 (h 2): 2 at 0;
    # 4 does not fit -> shelf 6 (h 1): 4 at 0, 5 at 2.
    inst = make(4, SHELF, allocation="contiguous")
    schedule = nfdh(inst)
    assert starts_of(schedule) == {3: 0, 1: 0, 2: 4, 4: 6, 5: 6}
    assert offsets(schedule) == {3: 0, 1: 1, 2: 0, 4: 0, 5: 2}
    assert schedule.producer == "shelf:nfdh"
    assert check_schedule(inst, schedule) == []


def test_ffdh() -> None:
    # as NFDH, but 5 goes back to the first shelf, at offset 3.
    inst = make(4, SHELF, allocation="contiguous")
    schedule = ffdh(inst)
    assert starts_of(schedule) == {3: 0, 1: 0, 2: 4, 4: 6, 5: 0}
    assert offsets(schedule) == {3: 0, 1: 1, 2: 0, 4: 0, 5: 3}
    assert check_schedule(inst, schedule) == []


def test_shelves_wait_for_releases_and_blocks() -> None:
    # m = 2. A (r0, q1, p3) opens shelf 0; B (r5, q1, p2) is released after it
    # starts, so it opens a shelf at max(0 + 3, 5) = 5. A block on processor
    # 0 during [5, 6) leaves processor 1 free: the shelf starts at 5 there
    # (the lowest free range for its width); a block on both processors
    # during [5, 6) pushes it to 6.
    inst = make(2, [(0, 1, 3), (5, 1, 2)], allocation="contiguous")
    assert starts_of(ffdh(inst)) == {1: 0, 2: 5}
    for block, start, offset in [
        (BusyBlock(5, 6, 1, offset=0), 5, 1),
        (BusyBlock(5, 6, 2, offset=0), 6, 0),
    ]:
        blocked = make(
            2, [(0, 1, 3), (5, 1, 2)], allocation="contiguous", unavailable=(block,)
        )
        schedule = ffdh(blocked)
        assert starts_of(schedule) == {1: 0, 2: start}
        assert offsets(schedule)[2] == offset
        assert check_schedule(blocked, schedule) == []


# --------------------------------------------------------------------------
# Orders and the best heuristic
# --------------------------------------------------------------------------


def test_orders() -> None:
    inst = make(4, G)
    assert order_by(inst, CMAX, "release-lpt") == [1, 2, 3, 4]
    assert order_by(inst, CMAX, "lpt") == [3, 1, 2, 4]
    # Smith ratios 1/(q p): 1/6, 1/6, 1/4, 1/4 -> 3, 4 (by release), 1, 2
    assert order_by(inst, WCT, "wspt") == [3, 4, 1, 2]
    assert order_by(inst, CMAX, "largest-size") == [4, 2, 1, 3]
    assert order_by(inst, CMAX, "spt") == [4, 2, 1, 3]


def test_best_heuristic_is_the_minimum_and_names_its_producer() -> None:
    inst = make(4, G)
    schedules = heuristic_schedules(inst, WCT)
    assert set(schedules) == {*ORDERS, "nfdh", "ffdh"}
    best = best_heuristic(inst, WCT)
    values = {name: WCT.value(inst, s) for name, s in schedules.items()}
    assert WCT.value(inst, best) == min(values.values())
    assert best.producer in {f"list:{n}" for n in ORDERS} | {"shelf:nfdh", "shelf:ffdh"}
    only = best_heuristic(inst, CMAX, candidates=["release-lpt"])
    assert only.producer == "list:release-lpt"
    assert starts_of(only) == {1: 0, 2: 3, 3: 1, 4: 5}


def test_unknown_candidate_and_shelves_with_count_blocks() -> None:
    inst = make(4, G, unavailable=(BusyBlock(0, 1, 1),))
    with pytest.raises(ValueError, match="unknown heuristic 'nope'"):
        best_heuristic(inst, CMAX, candidates=["nope"])
    with pytest.raises(ValueError, match="no applicable candidate"):
        best_heuristic(inst, CMAX, candidates=[])
    # Shelves handle busy blocks that are processor counts (any machines).
    schedules = heuristic_schedules(inst, CMAX)
    assert set(schedules) == {*ORDERS, "nfdh", "ffdh"}
    for schedule in schedules.values():
        assert check_schedule(inst, schedule) == []


def test_local_search_reaches_the_optimum_the_lists_miss() -> None:
    # m = 6: 1 (r0, q6, p4) and 5 (r1, q6, p5) take the whole machine; 3 (r2,
    # q5, p5) leaves room for one of the size-1 jobs 2 (r1, p3), 4 (r0, p4).
    # Optimum 16: 1 [0,4), 5 [4,9), 3 [9,14), 2 [9,12), 4 [12,16) (the
    # enumeration agrees); every list order of ORDERS gives 17.
    inst = make(6, [(0, 6, 4), (1, 1, 3), (2, 5, 5), (0, 1, 4), (1, 6, 5)])
    start = best_heuristic(inst, CMAX)
    assert CMAX.value(inst, start) == 17
    assert solve_exact(inst, CMAX).objective == 16
    better = improve_schedule(
        inst, CMAX, start, time_limit=60, max_evaluations=200, seed=0, stop_at=16
    )
    assert CMAX.value(inst, better) == 16
    assert better.producer == f"{start.producer}+ls"
    assert check_schedule(inst, better) == []
    searched = best_heuristic(inst, CMAX, improve=0.05, seed=0)
    assert CMAX.value(inst, searched) in (16, 17)  # depends on the time allowed
    assert check_schedule(inst, searched) == []


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------


@slow_settings(250)
@given(optima())
def test_every_heuristic_is_feasible_and_no_better_than_the_optimum(
    case: Optimum,
) -> None:
    instance, objective, optimum = case
    for name, schedule in heuristic_schedules(instance, objective).items():
        assert check_schedule(instance, schedule) == [], name
        assert objective.value(instance, schedule) >= optimum - 1e-9, name
    start = best_heuristic(instance, objective)
    improved = improve_schedule(
        instance, objective, start, time_limit=60, max_evaluations=15, seed=1
    )
    assert check_schedule(instance, improved) == []
    value = objective.value(instance, improved)
    assert optimum - 1e-9 <= value <= objective.value(instance, start)


def _fits(
    instance: Instance,
    placed: list[tuple[int, int, int, int]],
    job: Job,
    t: int,
    o: int,
) -> bool:
    """Naive grid test: can ``job`` run at ``t`` on ``[o, o + q)`` (or by count)?"""
    rects = placed + [
        (b.start, b.end, b.offset or 0, b.size) for b in instance.machine.unavailable
    ]
    for u in range(t, t + job.runtime):
        running = [r for r in rects if r[0] <= u < r[1]]
        if sum(r[3] for r in running) + job.size > instance.processors:
            return False
        if instance.machine.allocation == "contiguous" and any(
            r[2] < o + job.size and o < r[2] + r[3] for r in running
        ):
            return False
    return True


@settings(max_examples=100, deadline=None)
@given(instance=small_instances(max_jobs=6), data=st.data())
def test_list_schedule_starts_each_job_as_early_as_possible(
    instance: Instance, data: st.DataObject
) -> None:
    # Every job starts at the earliest integer time (and, contiguous, the
    # lowest offset at that time) that is feasible beside the jobs listed
    # before it, checked on a unit grid.
    order = data.draw(st.permutations([j.id for j in instance.jobs]))
    schedule = list_schedule(instance, order)
    assert check_schedule(instance, schedule) == []
    jobs = instance.jobs_by_id()
    contiguous = instance.machine.allocation == "contiguous"
    placed: list[tuple[int, int, int, int]] = []
    for jid in order:
        job, p = jobs[jid], schedule[jid]
        offsets_ = range(instance.processors - job.size + 1) if contiguous else [0]
        if job.runtime > 0:
            for t, o in product(range(job.release, p.start + 1), offsets_):
                if (t, o) >= (p.start, p.offset if contiguous else 0):
                    break
                assert not _fits(instance, placed, job, t, o), (jid, t, o)
            assert _fits(instance, placed, job, p.start, p.offset if contiguous else 0)
        else:
            assert p.start == job.release
        placed.append((p.start, p.end, (p.offset or 0) if contiguous else 0, job.size))
