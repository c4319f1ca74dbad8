"""Contiguous machines: fragmentation, first-fit/best-fit, migration."""

from __future__ import annotations

import pytest
from support.simulation import simulated

from optsched.check import check_schedule
from optsched.heuristics import SimulationResult
from optsched.heuristics.engine.allocation import AnyAllocator, ContiguousAllocator
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.schedule import Placement, Schedule


def make(
    m: int,
    rows: list[tuple[int, int, int, int]],
    blocks: tuple[BusyBlock, ...] = (),
) -> Instance:
    """Exact-estimate jobs from ``(id, release, size, runtime)`` rows."""
    jobs = [Job(i, r, q, p) for i, r, q, p in rows]
    return Instance(Machine(m, "contiguous", blocks), tuple(jobs), name="line")


def where(result: SimulationResult) -> dict[int, tuple[int, int, int | None]]:
    return {
        j: (p.start, p.end, p.offset)
        for j, p in sorted(result.schedule.placements.items())
    }


# m = 4. Jobs 1-3 take processors 0, 1, 2. At 5 job 2 ends: processors 1
# and 3 are free, two in total but not adjacent, so job 4 (2 procs) cannot
# start until 10 without migration.
FRAGMENTED = make(
    4,
    [(1, 0, 1, 10), (2, 0, 1, 5), (3, 0, 1, 10), (4, 1, 2, 4)],
)


@pytest.mark.parametrize("spec", ["fcfs", "firstfit", "easy", "conservative"])
def test_fragmentation_delays_a_job(spec: str) -> None:
    result = simulated(FRAGMENTED, spec)
    assert where(result) == {
        1: (0, 10, 0),
        2: (0, 5, 1),
        3: (0, 10, 2),
        4: (10, 14, 0),
    }
    assert result.stats.migrations == 0


@pytest.mark.parametrize("spec", ["fcfs", "firstfit", "easy", "conservative"])
def test_migration_compacts_to_the_low_end(spec: str) -> None:
    # At 5: job 1 stays on 0, job 3 moves from 2 to 1; job 4 takes 2-3.
    result = simulated(FRAGMENTED, spec, migration=True)
    assert where(result) == {
        1: (0, 10, 0),
        2: (0, 5, 1),
        3: (0, 10, 2),
        4: (5, 9, 2),
    }
    assert result.schedule[3].moves == ((5, (1,)),)
    assert result.schedule[3].segments() == ((0, 5, (2,)), (5, 10, (1,)))
    assert result.stats.migrations == 1
    assert result.stats.migrated_jobs == 1
    assert result.stats.migrated_processors == 1


# m = 7. At 5 job 2 ends: free ranges [1, 4) (3 long) and [5, 6) (1 long).
# Job 6 (1 proc) arrives at 6 before job 7 (3 procs). First fit puts 6 on
# processor 1, so 7 waits for it (8); best fit puts 6 on processor 5 and 7
# fits in [1, 4) at once.
TWO_HOLES = make(
    7,
    [
        (1, 0, 1, 10),
        (2, 0, 3, 5),
        (3, 0, 1, 10),
        (4, 0, 1, 5),
        (5, 0, 1, 10),
        (6, 6, 1, 2),
        (7, 6, 3, 1),
    ],
)


def test_first_fit_takes_the_lowest_hole() -> None:
    result = simulated(TWO_HOLES, "fcfs", allocation_rule="first-fit")
    assert where(result)[6] == (6, 8, 1)
    assert where(result)[7] == (8, 9, 1)
    # Job 4 ended at 5 too, so the holes were [1, 4) and [5, 6).
    assert where(result)[4] == (0, 5, 5)


def test_best_fit_takes_the_shortest_hole() -> None:
    result = simulated(TWO_HOLES, "fcfs", allocation_rule="best-fit")
    assert where(result)[6] == (6, 8, 5)
    assert where(result)[7] == (6, 7, 1)


def test_contiguous_busy_block_is_an_obstacle() -> None:
    # m = 4, processors 1-2 are down during [0, 20). Job 1 (2 procs) fits
    # nowhere before 20 even though 2 processors are free (0 and 3), with or
    # without migration: a block never moves.
    instance = make(
        4,
        [(1, 0, 2, 5), (2, 0, 1, 3)],
        (BusyBlock(0, 20, 2, offset=1, label="down"),),
    )
    for migration in (False, True):
        result = simulated(instance, "firstfit", migration=migration)
        assert where(result) == {1: (20, 25, 0), 2: (0, 3, 0)}
        assert result.stats.migrations == 0


def test_migration_never_moves_onto_a_future_block() -> None:
    # m = 4; processors 0-1 are reserved during [50, 60). Jobs 1-3 take
    # processors 0, 1, 2; job 2 ends at 5, leaving 1 and 3 free. Compaction
    # may not move job 3 onto processor 1 (a block will need it), so job 4
    # (2 procs) waits until job 1 frees processor 0... which is still not
    # adjacent to 3 while 3 runs: it starts at 10 on 0-1 (ends by 50).
    instance = make(
        4,
        [(1, 0, 1, 10), (2, 0, 1, 5), (3, 0, 1, 10), (4, 1, 2, 4)],
        (BusyBlock(50, 60, 2, offset=0, label="reservation"),),
    )
    result = simulated(instance, "fcfs", migration=True)
    assert where(result)[4] == (10, 14, 0)
    assert result.stats.migrations == 0


def test_checker_judges_each_stretch_of_a_moved_job() -> None:
    instance = Instance(
        Machine(2, "contiguous"), (Job(1, 0, 1, 10), Job(2, 0, 1, 4)), name="moves"
    )
    # Job 1 moves onto processor 1 at 3 while job 2 still runs there.
    clash = Schedule(
        {
            1: Placement(0, 10, (0,), moves=((3, (1,)),)),
            2: Placement(0, 4, (1,)),
        }
    )
    kinds = [v.kind for v in check_schedule(instance, clash)]
    assert kinds == ["processor-overlap"]
    fine = Schedule(
        {
            1: Placement(0, 10, (0,), moves=((4, (1,)),)),
            2: Placement(0, 4, (1,)),
        }
    )
    assert check_schedule(instance, fine) == []
    late = Schedule(
        {
            1: Placement(0, 10, (0,), moves=((10, (1,)),)),
            2: Placement(0, 4, (1,)),
        }
    )
    assert [v.kind for v in check_schedule(instance, late)] == ["bad-move"]


def test_contiguous_allocator_ranges() -> None:
    line = ContiguousAllocator(10, "best-fit")
    line.take("a", 0, 3, True)
    line.take("b", 5, 2, True)
    assert line.free == [(3, 5), (7, 10)]
    assert line.find(2) == 3  # best fit: the 2-long hole
    assert line.find(3) == 7
    assert line.find(4) is None
    assert line.find(2, excluded=[(3, 4)]) == 7
    line.give("a")
    assert line.free == [(0, 5), (7, 10)]
    plan = line.plan_compaction([])
    assert plan.moves == (("b", 5, 0, 2),)
    line.apply(plan)
    assert line.free == [(2, 10)]


def test_any_allocator_lowest_ids() -> None:
    pool = AnyAllocator(6)
    assert pool.take(2) == [range(0, 2)]
    assert pool.take(1, excluded=[(2, 4)]) == [range(4, 5)]
    pool.give([range(0, 1)])
    assert pool.free_ids == [0, 2, 3, 5]
    assert pool.free == [(0, 1), (2, 4), (5, 6)]
    assert pool.can_take(3, excluded=[(0, 1)])
    assert not pool.can_take(4, excluded=[(0, 1)])
    assert pool.take(3) == [range(0, 1), range(2, 4)]
    assert pool.free == [(5, 6)]
    pool.give([range(0, 1), range(2, 4)])
    pool.give([range(1, 2), range(4, 5)])
    assert pool.free == [(0, 6)]
