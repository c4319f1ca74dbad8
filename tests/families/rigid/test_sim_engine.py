"""Engine semantics: event order, zero runtimes, overruns, kills, busy blocks."""

from __future__ import annotations

import pytest
from support.builders import starts_of
from support.simulation import simulated

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.schedule import Schedule


def make(
    m: int,
    rows: list[tuple[int, int, int, int, int]],
    blocks: tuple[BusyBlock, ...] = (),
    allocation: str = "any",
) -> Instance:
    """Jobs from ``(id, release, size, runtime, estimate)`` rows."""
    jobs = [Job(i, r, q, p, e) for i, r, q, p, e in rows]
    return Instance(Machine(m, allocation, blocks), tuple(jobs), name="engine")


Where = tuple[int, int, tuple[int, ...] | None]


def placements(schedule: Schedule) -> dict[int, Where]:
    items = sorted(schedule.placements.items())
    return {j: (p.start, p.end, p.processors) for j, p in items}


# m = 2. Job 1 ends at 5, exactly when jobs 2-4 arrive. Completions come
# before arrivals, so the processors are free in the pass at 5. Job 2 has
# zero runtime (and estimate): it starts and ends at 5 and gives its
# processors back at once, so job 3 starts at 5 too. Job 4 (zero runtime,
# estimate 4) still needs a processor to start: it waits for job 3.
ZERO = make(
    2,
    [
        (1, 0, 2, 5, 5),
        (2, 5, 2, 0, 0),
        (3, 5, 2, 3, 3),
        (4, 5, 1, 0, 4),
    ],
)


@pytest.mark.parametrize(
    "spec", ["fcfs", "easy", "conservative", "firstfit", "best-package"]
)
def test_equal_timestamps_and_zero_runtimes(spec: str) -> None:
    result = simulated(ZERO, spec)
    assert placements(result.schedule) == {
        1: (0, 5, (0, 1)),
        2: (5, 5, (0, 1)),
        3: (5, 8, (0, 1)),
        4: (8, 8, (0,)),
    }


def test_events_and_passes_are_counted() -> None:
    result = simulated(ZERO, "fcfs")
    # 4 arrivals + 4 completions; passes at 0, 5 and 8.
    assert result.stats.events == 8
    assert result.stats.passes == 3
    assert result.stats.max_queue == 3


# m = 4. Job 1 claims 10 s and runs 20. Head 2 (2 procs) gets the shadow 10
# at t1 (extra 4 - 2 = 2). Job 3 ends by the shadow. At t12 job 1's
# estimated end is in the past: it counts as now, so the shadow is 12 and
# extra = 1 free + 3 = 4 - 2 = 2; job 4 (1 proc, 100 s) uses the extra.
OVERRUN = make(
    4,
    [
        (1, 0, 3, 20, 10),
        (2, 1, 2, 5, 5),
        (3, 2, 1, 4, 4),
        (4, 12, 1, 100, 100),
    ],
)


def test_easy_with_an_overrunning_job() -> None:
    result = simulated(OVERRUN, "easy")
    assert starts_of(result.schedule) == {1: 0, 2: 20, 3: 2, 4: 12}
    assert result.reservations[2] == 10  # the shadow when 2 became head
    assert result.schedule.killed == frozenset()


def test_conservative_with_an_overrunning_job() -> None:
    # Reservations: 2 at 10 (behind 1's estimate), 3 at 2. At t12 the
    # reservation of 2 is in the past: it is placed again from now (12);
    # 4 arrives and is reserved at 12 too and starts (1 processor is really
    # free); 2 cannot start until 1 ends at 20.
    result = simulated(OVERRUN, "conservative")
    assert starts_of(result.schedule) == {1: 0, 2: 20, 3: 2, 4: 12}
    assert result.reservations == {1: 0, 2: 10, 3: 2, 4: 12}


def test_kill_at_estimate() -> None:
    result = simulated(OVERRUN, "easy", kill_at_estimate=True)
    assert placements(result.schedule)[1][:2] == (0, 10)
    assert starts_of(result.schedule) == {1: 0, 2: 10, 3: 2, 4: 12}
    assert result.schedule.killed == frozenset({1})
    assert result.stats.killed == 1
    assert result.stats.killed_for_blocks == 0


def test_oracle_sees_the_killed_duration() -> None:
    # With kills, the oracle sees min(runtime, estimate) = 10 for job 1 and
    # plans exactly like EASY with exact estimates.
    result = simulated(OVERRUN, "easy:oracle", kill_at_estimate=True)
    assert starts_of(result.schedule) == {1: 0, 2: 10, 3: 2, 4: 12}


# m = 4, contiguous (blocks pin processors only there; on "any" machines
# they are counts). Block A: processors 0-1 until 5, e.g. jobs running when
# the window starts. Block B: processors 1-3 during [20, 30), e.g. an
# advance reservation.
BLOCKS = (
    BusyBlock(0, 5, 2, offset=0, label="running"),
    BusyBlock(20, 30, 3, offset=1, label="reservation"),
)
BLOCKED = make(
    4,
    [
        (1, 0, 2, 10, 10),
        (2, 1, 3, 8, 8),
        (3, 2, 2, 5, 5),
        (4, 3, 1, 25, 25),
    ],
    BLOCKS,
    "contiguous",
)


def test_fcfs_respects_busy_blocks() -> None:
    # t0: 1 on the 2 free processors (2-3). t10: 2 ([10, 18) ends before B).
    # t18: 3 would overlap B, which leaves 1 processor: it waits for B's
    # end at 30; 4 then starts beside it.
    result = simulated(BLOCKED, "fcfs")
    assert placements(result.schedule) == {
        1: (0, 10, (2, 3)),
        2: (10, 18, (0, 1, 2)),
        3: (30, 35, (0, 1)),
        4: (30, 55, (2,)),
    }


@pytest.mark.parametrize("spec", ["firstfit", "best-package"])
def test_firstfit_avoids_the_processors_of_a_future_block(spec: str) -> None:
    # t5: A ends; 3 takes processors 0-1 until 10. t10: 2 starts on 0-2;
    # 4 (25 s, overlapping B) may only use processor 0, which 2 holds.
    # t18: 4 starts on processor 0, beside B. (Best Package at t10 picks
    # 2 and 4, 3 + 1 = 4 processors, but 4 then finds no processor outside
    # B's range and stays.)
    result = simulated(BLOCKED, spec)
    assert placements(result.schedule) == {
        1: (0, 10, (2, 3)),
        2: (10, 18, (0, 1, 2)),
        3: (5, 10, (0, 1)),
        4: (18, 43, (0,)),
    }


@pytest.mark.parametrize("spec", ["easy", "conservative", "backfill:depth=2"])
def test_backfilling_plans_around_busy_blocks(spec: str) -> None:
    # EASY through the profile: t1 head 2 reserved at 10. t2: 3 cannot
    # start (0 free). t3: 4 (1 proc, 25 s) does not fit now. t5: 3 ends by
    # 10 on 0-1. t10: 2 on 0-2; 4 again only on processor 0, held. t18: 4.
    # Conservative reaches the same schedule (3's reservation is at 5, 4's
    # at 18, the first slot that avoids B's processors by count).
    result = simulated(BLOCKED, spec)
    assert starts_of(result.schedule) == {1: 0, 2: 10, 3: 5, 4: 18}


def test_overrun_into_a_busy_block_is_killed_at_the_estimate() -> None:
    # m = 2, the whole machine is reserved during [10, 20). Job 1 claims 5 s
    # but would run 15: its run would collide with the block, so it is
    # stopped at its estimate. Job 2 claims 12 s: it cannot start before
    # the block. Job 3 (3 s) fits beside job 1 on processor 1.
    instance = make(
        2,
        [(1, 0, 1, 15, 5), (2, 0, 1, 3, 12), (3, 0, 1, 3, 3)],
        (BusyBlock(10, 20, 2, label="downtime"),),
    )
    result = simulated(instance, "firstfit")
    assert placements(result.schedule) == {
        1: (0, 5, (0,)),
        2: (20, 23, (0,)),
        3: (0, 3, (1,)),
    }
    assert result.schedule.killed == frozenset({1})
    assert result.stats.killed_for_blocks == 1


def test_overrun_beside_a_block_keeps_running() -> None:
    # Contiguous: the block holds only processor 1; job 1 overruns on
    # processor 0.
    instance = make(
        2,
        [(1, 0, 1, 15, 5)],
        (BusyBlock(10, 20, 1, offset=1, label="half"),),
        "contiguous",
    )
    result = simulated(instance, "fcfs")
    assert placements(result.schedule) == {1: (0, 15, (0,))}
    assert result.stats.killed == 0


def test_overrun_into_a_counted_block_is_killed() -> None:
    # The same on an "any" machine: the block is a count of one processor,
    # which the machine picks when it starts, so it may be processor 0 and
    # the overrun collides with it.
    instance = make(2, [(1, 0, 1, 15, 5)], (BusyBlock(10, 20, 1, label="half"),))
    result = simulated(instance, "fcfs")
    assert placements(result.schedule) == {1: (0, 5, (0,))}
    assert result.schedule.killed == frozenset({1})


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="allocation rule"):
        simulate(ZERO, "fcfs", allocation_rule="worst-fit")
    with pytest.raises(ValueError, match="contiguous"):
        simulate(ZERO, "fcfs", migration=True)
    with pytest.raises(ValueError, match="unknown policy"):
        simulate(ZERO, "fastest")


def test_same_input_same_schedule() -> None:
    first = simulate(BLOCKED, "random", seed=7).schedule
    second = simulate(BLOCKED, "random", seed=7).schedule
    assert first == second
    assert first.producer == "random:seed=7"


def test_job_ids_and_submit_ties() -> None:
    # Equal submit times: FCFS breaks ties by job id, not by input order.
    instance = Instance(
        Machine(1), (Job(9, 0, 1, 4), Job(3, 0, 1, 2), Job(5, 0, 1, 1)), name="ties"
    )
    result = simulated(instance, "fcfs")
    assert starts_of(result.schedule) == {3: 0, 5: 2, 9: 3}


@pytest.mark.parametrize("spec", ["conservative", "backfill:depth=2", "easy"])
def test_early_completion_while_nobody_waits(spec: str) -> None:
    # m = 2. Job 1 claims 10 s and ends at 2, when no job waits; job 2
    # arrives at 5 and must see the whole machine free.
    instance = make(2, [(1, 0, 2, 2, 10), (2, 5, 2, 5, 5)])
    result = simulated(instance, spec)
    assert starts_of(result.schedule) == {1: 0, 2: 5}


def test_progress_off_a_terminal_is_lines_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from optsched.heuristics.engine import runner

    # A short run prints nothing: lines come at most every 30 s.
    monkeypatch.setattr(runner, "PROGRESS_MIN_JOBS", 0)  # even a tiny run
    result = simulate(BLOCKED, "easy", progress=True)
    assert check_schedule(BLOCKED, result.schedule) == []
    assert capsys.readouterr() == ("", "")
    # With a clock that moves 31 s per call, every report is a line.
    clock = iter(range(0, 10_000, 31))
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock))
    report = runner._progress_lines(447_794)
    report(45_000)
    report(447_794)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "optsched: simulating: 45,000 of 447,794 jobs done (10.0 %), 31 s",
        "optsched: simulating: 447,794 of 447,794 jobs done (100.0 %), 62 s",
    ]


def test_progress_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from optsched.heuristics.engine import runner

    monkeypatch.setattr(runner.sys.stdout, "isatty", lambda: True)
    with runner._progress_bar(runner.PROGRESS_MIN_JOBS, True) as advance:
        assert advance is not None
        advance(10)
    with runner._progress_bar(runner.PROGRESS_MIN_JOBS - 1, True) as advance:
        assert advance is None
    with runner._progress_bar(runner.PROGRESS_MIN_JOBS, False) as advance:
        assert advance is None
