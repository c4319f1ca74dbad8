"""Offline shelf algorithms: hand-checked goldens, ties, contiguity, the
checker on random instances, and the properties the literature implies."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.builders import (
    draw_blocks,
    draw_jobs,
    exact_optimum,
    make,
    slow_settings,
    starts_of,
)

from optsched.check import check_schedule, is_shelf_schedule
from optsched.heuristics.rigid.offline import ffdh, nfdh
from optsched.heuristics.shelf.algorithms import (
    SHELF_ALGORITHMS,
    SHELF_NAMES,
    Builder,
    Item,
    Obstacles,
    ShelfSpec,
    build,
    height_class,
    parse_shelf_algorithm,
    shelf_plan,
    shelf_schedule,
)
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.objective import Objective
from optsched.schedule import Schedule

FAST = slow_settings(150)

SPECS = (
    *SHELF_NAMES,
    "smart:order=smith",
    "smart:fit=first",
    "smart:order=smith,fit=first",
    "smart:sequence=smith",
    "smart:order=smith,sequence=class,weights=size",
)


def procs(schedule: Schedule) -> dict[int, tuple[int, ...] | None]:
    return {jid: p.processors for jid, p in schedule.placements.items()}


def span(lo: int, size: int) -> tuple[int, ...]:
    return tuple(range(lo, lo + size))


# m = 4, all released at 0, exact estimates; (q, p) by id:
# 1 (2, 3), 2 (3, 2), 3 (1, 4), 4 (2, 1), 5 (1, 1).
SHELF = [(0, 2, 3), (0, 3, 2), (0, 1, 4), (0, 2, 1), (0, 1, 1)]


@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_golden_nfdh_ffdh(allocation: str) -> None:
    inst = make(4, SHELF, allocation=allocation)
    # Decreasing height: 3 (4), 1 (3), 2 (2), 4 (1), 5 (1; after 4, its tie).
    # NFDH: shelf [0, 4): 3 on 0, 1 on 1-2 (width 3); 2 (q 3) opens [4, 6);
    # 4 (q 2) opens [6, 7); 5 joins it on 2.
    s = shelf_schedule(inst, "nfdh")
    assert starts_of(s) == {3: 0, 1: 0, 2: 4, 4: 6, 5: 6}
    assert procs(s) == {
        3: span(0, 1),
        1: span(1, 2),
        2: span(0, 3),
        4: span(0, 2),
        5: span(2, 1),
    }
    assert s.producer == "shelf:nfdh"
    # FFDH: as NFDH, but 5 goes back to the first shelf, on processor 3.
    s = shelf_schedule(inst, "ffdh")
    assert starts_of(s) == {3: 0, 1: 0, 2: 4, 4: 6, 5: 0}
    assert procs(s)[5] == span(3, 1)
    for name in ("nfdh", "ffdh"):
        assert check_schedule(inst, shelf_schedule(inst, name)) == []
        assert is_shelf_schedule(inst, shelf_schedule(inst, name)) is None


def test_golden_nfih_ffih() -> None:
    inst = make(4, SHELF)
    # Increasing height: 4 (1), 5 (1), 2 (2), 1 (3), 3 (4).
    # NFIH: shelf 4 [0,2) + 5 [2,3), height 1; 2 (q 3) opens a shelf at 1
    # (height 2); 1 (q 2) opens one at 3; 3 (q 1) joins it, height 3 -> 4.
    s = shelf_schedule(inst, "nfih")
    assert starts_of(s) == {4: 0, 5: 0, 2: 1, 1: 3, 3: 3}
    assert procs(s)[3] == span(2, 1)
    assert max(p.end for p in s.placements.values()) == 7
    # FFIH: 3 (q 1) fits the first shelf (width 3 + 1 = 4), which grows from
    # height 1 to 4; the shelves after it move up: 2 at 4, 1 at 6.
    s = shelf_schedule(inst, "ffih")
    assert starts_of(s) == {4: 0, 5: 0, 3: 0, 2: 4, 1: 6}
    assert procs(s)[3] == span(3, 1)
    assert max(p.end for p in s.placements.values()) == 9
    # On one batch FFIH* has nothing to stack (every job is the tallest yet).
    assert shelf_schedule(inst, "ffih-stack").placements == s.placements


def test_golden_ffdh_stack() -> None:
    inst = make(4, SHELF, allocation="contiguous")
    # Order 3, 1, 2, 4, 5. Shelf 0 (height 4): 3 on 0 (slot: processor 0
    # from 4), 1 on 1-2 (slot: 1-2 from 3). 2 (q 3) neither fits beside nor
    # in a slot: shelf at 4. 4 (q 2, h 1) does not fit beside (3 + 2 > 4)
    # but is stacked behind 1: [3, 4) on 1-2 (ends by the shelf's end 4).
    # 5 (q 1) fits beside in shelf 0, on processor 3. Makespan 6 (FFDH: 7).
    s = shelf_schedule(inst, "ffdh-stack")
    assert starts_of(s) == {3: 0, 1: 0, 4: 3, 5: 0, 2: 4}
    assert procs(s) == {
        3: span(0, 1),
        1: span(1, 2),
        4: span(1, 2),
        5: span(3, 1),
        2: span(0, 3),
    }
    assert check_schedule(inst, s) == []
    plan = shelf_plan(inst, "ffdh-stack")
    stacked = {pj.id: (pj.behind, pj.delay) for pj in plan.shelves[0].jobs}
    assert stacked[4] == (1, 3)
    assert plan.end == 6


def test_golden_smart_as_printed() -> None:
    inst = make(4, SHELF)
    # Classes (2^(k-1) < p <= 2^k): p 1 -> 0 (4, 5), p 2 -> 1 (2),
    # p 3 and 4 -> 2 (1, 3). Ascending size inside a class, one class per
    # shelf, shelves by class: [5, 4] at 0 (h 1), [2] at 1 (h 2), [3, 1] at
    # 3 (h 4). Sum of completions 1 + 1 + 3 + 7 + 6 = 18.
    s = shelf_schedule(inst, "smart")
    assert starts_of(s) == {5: 0, 4: 0, 2: 1, 3: 3, 1: 3}
    assert procs(s) == {
        5: span(0, 1),
        4: span(1, 2),
        2: span(0, 3),
        3: span(0, 1),
        1: span(1, 2),
    }
    assert Objective("wct").value(inst, s) == 18
    # order=smith with job 2 of weight 10: shelf weights W = 2, 10, 2 and
    # heights H = 1, 2, 4; Smith's order (H / W = 0.5, 0.2, 2) runs [2]
    # first, then [5, 4], then [3, 1].
    heavy = inst.with_jobs(
        j.replace(weight=10.0) if j.id == 2 else j for j in inst.jobs
    )
    s = shelf_schedule(heavy, "smart", order="smith")
    assert starts_of(s) == {2: 0, 5: 2, 4: 2, 3: 3, 1: 3}
    assert Objective("wct", "instance").value(heavy, s) == 20 + 3 + 3 + 7 + 6
    # ... and sequence=class keeps the printed order with the Smith packing.
    s = shelf_schedule(heavy, "smart:order=smith,sequence=class")
    assert starts_of(s) == {5: 0, 4: 0, 2: 1, 3: 3, 1: 3}


def test_golden_smart_orders_and_fits() -> None:
    # m = 4, one class (p 3 or 4 -> class 2); (q, p, w) by id:
    # 1 (2, 4, 1), 2 (3, 3, 6), 3 (1, 4, 1), 4 (2, 3, 1).
    jobs = [(2, 4, 1.0), (3, 3, 6.0), (1, 4, 1.0), (2, 3, 1.0)]
    inst = Instance(
        Machine(4),
        tuple(Job(k, 0, q, p, weight=w) for k, (q, p, w) in enumerate(jobs, 1)),
    )
    # size: 3 (1), 1 (2), 4 (2), 2 (3): [3, 1] (h 4), [4] (h 3), [2] (h 3)
    s = shelf_schedule(inst, "smart")
    assert starts_of(s) == {3: 0, 1: 0, 4: 4, 2: 7}
    # smith: w / (q p) = 1/8, 6/9, 1/4, 1/6 -> 2, 3, 4, 1: [2, 3] (h 4,
    # W 7), [4, 1] (h 4, W 2); Smith's order keeps them.
    s = shelf_schedule(inst, "smart:order=smith")
    assert starts_of(s) == {2: 0, 3: 0, 4: 4, 1: 4}
    assert procs(s) == {2: span(0, 3), 3: span(3, 1), 4: span(0, 2), 1: span(2, 2)}
    # Next vs first fit: m = 4, one class; Smith order x (3, w 12), y (2,
    # w 4), z (1, w 1), all p = 4. Next fit: [x], [y, z]; first fit: z
    # goes back beside x.
    three = Instance(
        Machine(4),
        (Job(1, 0, 3, 4, weight=12.0), Job(2, 0, 2, 4, weight=4.0), Job(3, 0, 1, 4)),
    )
    assert starts_of(shelf_schedule(three, "smart:order=smith")) == {1: 0, 2: 4, 3: 4}
    first = shelf_schedule(three, "smart:order=smith,fit=first")
    assert starts_of(first) == {1: 0, 3: 0, 2: 4}


def test_height_classes() -> None:
    # 2^(k-1) < p <= 2^k, exact on integers; 0 has its own class.
    assert [height_class(p) for p in (0, 1, 2, 3, 4, 5, 8, 9, 3600)] == [
        -1,
        0,
        1,
        2,
        2,
        3,
        3,
        4,
        12,
    ]
    for p in range(1, 5000):
        k = height_class(p)
        assert 2 ** (k - 1) < p <= 2**k


@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_golden_busy_blocks(allocation: str) -> None:
    # m = 4, block of 2 processors during [0, 5) (processors 0-1 on the
    # contiguous machine). FFDH: 1 (q 2, p 3) opens a shelf at 0 beside the
    # block (processors 2-3 there). 2 (q 2, p 2) would need 4 processors
    # during [0, 3): a new shelf at 3, beside the block again until 5. 3
    # (q 3, p 1) fits neither: a shelf at 5, after the block.
    offset = 0 if allocation == "contiguous" else None
    inst = make(
        4,
        [(0, 2, 3), (0, 2, 2), (0, 3, 1)],
        allocation=allocation,
        unavailable=(BusyBlock(0, 5, 2, offset),),
    )
    s = shelf_schedule(inst, "ffdh")
    assert starts_of(s) == {1: 0, 2: 3, 3: 5}
    base = 2 if allocation == "contiguous" else 0
    assert procs(s) == {1: span(base, 2), 2: span(base, 2), 3: span(0, 3)}
    assert check_schedule(inst, s) == []


def test_estimates_plan_and_actual_times_realise() -> None:
    # m = 2; (q, runtime, estimate): 1 (1, 2, 5), 2 (2, 3, 3), 3 (1, 4, 4).
    inst = Instance(
        Machine(2),
        (Job(1, 0, 1, 2, 5), Job(2, 0, 2, 3, 3), Job(3, 0, 1, 4, 4)),
    )
    # By estimate: 1 (5), 3 (4), 2 (3). Shelf [1, 3) planned 5 high, but its
    # jobs end by 4, so 2's shelf starts at 4.
    plan = shelf_plan(inst, "nfdh")
    assert [s.start for s in plan.shelves] == [0, 5]
    assert starts_of(shelf_schedule(inst, "nfdh")) == {1: 0, 3: 0, 2: 4}
    # By run time: 3 (4), 2 (3), 1 (2): 3 alone (2 does not fit beside),
    # then 2 at 4, then 1 at 7.
    assert starts_of(shelf_schedule(inst, "nfdh", estimate=False)) == {3: 0, 2: 4, 1: 7}
    assert starts_of(shelf_schedule(inst, "nfdh", heights={1: 1})) == {3: 0, 2: 4, 1: 7}


def test_stacked_job_starts_when_the_job_in_front_ends() -> None:
    # m = 3; (q, runtime, estimate): 1 (2, 2, 4), 2 (1, 5, 5), 3 (2, 1, 1).
    # FFDH* by estimate: 2 (5) on 0, 1 (4) on 1-2, 3 behind 1 (4 + 1 <= 5).
    # 1 ends at 2 instead of 4, so 3 runs [2, 3).
    inst = Instance(
        Machine(3, "contiguous"),
        (Job(1, 0, 2, 2, 4), Job(2, 0, 1, 5, 5), Job(3, 0, 2, 1, 1)),
    )
    assert shelf_plan(inst, "ffdh-stack").planned_starts() == {2: 0, 1: 0, 3: 4}
    s = shelf_schedule(inst, "ffdh-stack")
    assert starts_of(s) == {2: 0, 1: 0, 3: 2}
    assert procs(s)[3] == span(1, 2)
    assert check_schedule(inst, s) == []


def test_ties_keep_the_instance_order() -> None:
    # Three jobs of equal height, each alone on a shelf (2 + 2 > 3).
    jobs = (Job(5, 0, 2, 2), Job(2, 0, 2, 2), Job(9, 0, 2, 2))
    inst = Instance(Machine(3), jobs)
    for name in ("nfdh", "ffdh", "nfih", "ffih", "ffdh-stack", "smart"):
        assert starts_of(shelf_schedule(inst, name)) == {5: 0, 2: 2, 9: 4}, name
        backwards = inst.with_jobs(reversed(jobs))
        assert starts_of(shelf_schedule(backwards, name)) == {9: 0, 2: 2, 5: 4}, name
    # `jobs=` gives the tie order (and the batch).
    chosen = shelf_schedule(inst, "ffdh", jobs=[jobs[1], jobs[2]])
    assert starts_of(chosen) == {2: 0, 9: 2}


def test_offline_wrappers_are_the_shelf_module() -> None:
    inst = make(4, SHELF, allocation="contiguous")
    assert nfdh(inst).placements == shelf_schedule(inst, "nfdh").placements
    assert ffdh(inst).placements == shelf_schedule(inst, "ffdh").placements
    assert ffdh(inst).producer == "shelf:ffdh"


def test_specs_and_errors() -> None:
    assert set(SHELF_ALGORITHMS) == set(SHELF_NAMES)
    spec = parse_shelf_algorithm("smart:fit=first,order=smith")
    assert spec == ShelfSpec("smart", order="smith", fit="first")
    assert spec.spec == "smart:order=smith,fit=first"
    assert parse_shelf_algorithm(spec.spec) == spec
    assert parse_shelf_algorithm("smart", weights="size").spec == "smart:weights=size"
    assert parse_shelf_algorithm("smart:sequence=auto").spec == "smart"
    inst = make(2, [(0, 1, 1)])
    for bad, message in [
        ("nope", "unknown shelf algorithm 'nope'"),
        ("ffdh:order=smith", "unknown parameter 'order'; valid: none"),
        ("smart:order=random", "order must be one of size, smith"),
        ("smart:fit", "needs a value"),
        ("smart:fit=next,fit=first", "given twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            shelf_schedule(inst, bad)
    with pytest.raises(ValueError, match="given twice"):
        shelf_schedule(inst, "smart:fit=first", fit="next")


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------


@st.composite
def batches(
    draw: st.DrawFn,
    *,
    blocks: bool = True,
    releases: bool = True,
    exact: bool = False,
    allocation: str | None = None,
    max_jobs: int = 14,
) -> Instance:
    """Random batches: both allocations, busy blocks (counts on ``any``
    machines, ranges on contiguous ones), releases, inexact estimates, jobs
    of length 0, mixed weights; the jobs in a random order."""
    m = draw(st.integers(1, 10))
    allocation = allocation or draw(st.sampled_from(["any", "contiguous"]))
    most = 3 if blocks else 0
    chosen = draw_blocks(draw, m, allocation, most=most, latest=30, longest=15)
    late = releases and draw(st.booleans())
    jobs = draw_jobs(
        draw,
        m,
        (0, max_jobs),
        release=30 if late else 0,
        runtime=20,
        estimate=st.just if exact else lambda _: st.integers(0, 25),
        weights=(0.5, 1.0, 2.0),
    )
    jobs = draw(st.permutations(jobs))
    return Instance(Machine(m, allocation, chosen), tuple(jobs))


@FAST
@given(batches())
def test_every_schedule_passes_the_checker(inst: Instance) -> None:
    for spec in SPECS:
        for estimate in (True, False):
            s = shelf_schedule(inst, spec, estimate=estimate)
            assert check_schedule(inst, s) == [], (spec, estimate)
            assert s.killed == frozenset()


@FAST
@given(batches(blocks=False, releases=False))
def test_shelves_without_stacking_are_shelf_schedules(inst: Instance) -> None:
    for spec in SPECS:
        if SHELF_ALGORITHMS[ShelfSpec.parse(spec).name].stack:
            continue
        s = shelf_schedule(inst, spec, estimate=False)
        assert is_shelf_schedule(inst, s) is None, spec


@FAST
@given(batches(blocks=False, releases=False, allocation="contiguous"))
def test_a_shelf_takes_adjacent_ranges_left_to_right(inst: Instance) -> None:
    sizes = {j.id: j.size for j in inst.jobs}
    for spec in SPECS:
        plan = shelf_plan(inst, spec)
        s = shelf_schedule(inst, spec)
        for shelf in plan.shelves:
            cursor = shelf.offset
            for pj in shelf.jobs:
                if pj.behind is not None:
                    continue  # stacked: inside the range of the job in front
                assert pj.offset + shelf.offset == cursor, spec
                assert s[pj.id].processors == span(cursor, sizes[pj.id])
                cursor += sizes[pj.id]
            assert cursor - shelf.offset == shelf.width <= inst.processors


@FAST
@given(batches())
def test_plan_invariants(inst: Instance) -> None:
    # A shelf is as tall as its tallest job starting with it; a stacked job
    # starts when the job in front of it is planned to end, on processors of
    # that job, and ends by the shelf's end (a job of length 0 counting as 1
    # s); shelves follow each other and start after their jobs' releases.
    jobs = inst.jobs_by_id()
    for spec in SPECS:
        plan = shelf_plan(inst, spec)
        ready = 0
        for shelf in plan.shelves:
            assert shelf.start >= ready
            ready = shelf.end
            where = {pj.id: pj for pj in shelf.jobs}
            front = [pj for pj in shelf.jobs if pj.behind is None]
            assert shelf.height == max(jobs[pj.id].requested for pj in front)
            assert shelf.width == sum(jobs[pj.id].size for pj in front)
            for pj in shelf.jobs:
                job = jobs[pj.id]
                assert shelf.start >= job.release
                assert 0 <= pj.offset <= shelf.width - job.size
                if pj.behind is None:
                    assert pj.delay == 0
                    continue
                before = where[pj.behind]
                assert pj.delay == before.delay + jobs[before.id].requested
                assert before.offset <= pj.offset
                assert pj.offset + job.size <= before.offset + jobs[before.id].size
                assert pj.delay + max(job.requested, 1) <= max(shelf.height, 1)


@FAST
@given(batches(blocks=False, releases=False))
def test_first_fit_never_needs_more_shelves_than_next_fit(inst: Instance) -> None:
    # Next fit cuts the ordered list into segments that each fit one shelf;
    # first fit opens at most one shelf per segment (once it opens one, the
    # rest of the segment fits beside the job that opened it), and that
    # job is no taller than the segment's first job. So, for the same
    # order, first fit uses no more shelves and (decreasing heights) is no
    # taller; stacking only takes jobs out of the count.
    def count(spec: str) -> int:
        return len(shelf_plan(inst, spec).shelves)

    def height(spec: str) -> int:
        return shelf_plan(inst, spec).end

    assert count("ffdh") <= count("nfdh")
    assert count("ffdh-stack") <= count("ffdh")
    assert count("ffih") <= count("nfih")
    assert count("smart:fit=first") <= count("smart")
    assert count("smart:order=smith,fit=first") <= count("smart:order=smith")
    assert height("ffdh") <= height("nfdh")
    assert height("ffdh-stack") <= height("ffdh")


@FAST
@given(batches(blocks=False, releases=False, exact=True))
def test_nfdh_and_ffdh_within_twice_the_area_bound_plus_the_tallest(
    inst: Instance,
) -> None:
    # Coffman et al. 1980's proof of NFDH <= 2 OPT + h_max bounds NFDH by
    # twice the area bound: with shelves of heights H_1 >= H_2 >= ..., the
    # jobs of shelf i plus the first job of shelf i + 1 are wider than m and
    # at least H_{i+1} tall, so sum_{i >= 2} H_i < 2 sum_j q_j p_j / m. FFDH
    # and FFDH* are no taller than NFDH (previous test). All on both
    # machine kinds, with every job at 0 and no block.
    assume(inst.jobs)
    m = inst.processors
    area = sum(j.size * j.runtime for j in inst.jobs)
    tallest = max(j.runtime for j in inst.jobs)
    for spec in ("nfdh", "ffdh", "ffdh-stack"):
        makespan = max(p.end for p in shelf_schedule(inst, spec).placements.values())
        assert m * (makespan - tallest) <= 2 * area, spec
        assert makespan >= max(tallest, -(-area // m))  # never below a bound


SMALL = slow_settings(40)


@SMALL
@given(
    batches(
        blocks=False,
        releases=False,
        exact=True,
        allocation="contiguous",
        max_jobs=6,
    )
)
def test_strip_packing_bounds_against_the_optimum(inst: Instance) -> None:
    # On strip packing (contiguous, all at 0, no block) against the exact
    # optimum of the brute force: FFDH <= 1.7 OPT + h_max, NFDH <= 2 OPT +
    # h_max (Coffman, Garey, Johnson, Tarjan 1980).
    assume(inst.jobs)
    cmax = Objective("cmax")
    opt = exact_optimum(inst, cmax)
    tallest = max(j.runtime for j in inst.jobs)
    assert cmax.value(inst, shelf_schedule(inst, "ffdh")) <= 1.7 * opt + tallest
    assert cmax.value(inst, shelf_schedule(inst, "nfdh")) <= 2 * opt + tallest


@SMALL
@given(batches(blocks=False, releases=False, exact=True, allocation="any", max_jobs=6))
def test_smart_within_its_bounds_of_the_optimum(inst: Instance) -> None:
    # Schwiegelshohn et al. 1998: SMART (shelves in Smith's order) within 8
    # of the optimal sum of completion times, 8.53 weighted; checked against
    # the brute-force optimum of tiny instances.
    assume(inst.jobs)
    unweighted, weighted = Objective("wct"), Objective("wct", "instance")
    opt = exact_optimum(inst, unweighted)
    value = unweighted.value(inst, shelf_schedule(inst, "smart:sequence=smith"))
    assert value <= 8 * opt
    opt = exact_optimum(inst, weighted)
    value = weighted.value(inst, shelf_schedule(inst, "smart:order=smith"))
    assert value <= 8.53 * opt


@settings(max_examples=300, deadline=None)
@given(
    m=st.integers(1, 8),
    jobs=st.lists(
        st.tuples(st.integers(0, 30), st.integers(1, 8), st.integers(0, 12)),
        min_size=1,
        max_size=25,
    ),
    start=st.integers(0, 10),
    contiguous=st.booleans(),
)
def test_ffdh_with_releases_is_the_shelf_by_shelf_first_fit(
    m: int, jobs: list[tuple[int, int, int]], start: int, contiguous: bool
) -> None:
    # The O(log S) first fit (by width and release) builds exactly the
    # shelves of trying every shelf in turn (Builder.place).
    items = [
        Item(key, release, min(size, m), height)
        for key, (release, size, height) in enumerate(jobs)
    ]
    instance = Instance(Machine(m, "contiguous" if contiguous else "any"), ())
    spec = parse_shelf_algorithm("ffdh")
    fast = build(items, spec, m, Obstacles.of(instance), start)
    slow = Builder(m, Obstacles.of(instance), start, timed=True, stack=False)
    for item in sorted(items, key=lambda it: -it.height):
        slow.place(item, first_fit=True)
    slow.relayout()
    assert fast.frozen("ffdh") == slow.frozen("ffdh")
