"""The shelf policies (batch framework, PC²) under the site rules that act
during a run: outages, which kill and requeue running jobs, and NQS's user
limit, which refuses and demotes jobs.

Both used to break a running level: a member killed by an outage was never
started again (``RuntimeError: simulation stalled``), and a member refused
by the user limit was retried for ever while the level held back the very
jobs whose waiting made the limit refuse it (the run never ended: the
calendar wakes the engine once a day). The small instances below are
checked by hand; the bundled ``kth_50`` with the snapshot test's outages and
user limit runs every shelf spec to a checked schedule.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from support.paths import INSTANCES
from support.simulation import lost_of, run_checked, spans_of
from support.specs import LEVEL_SPECS, SHELF_SPECS

from optsched.calendar import Calendar
from optsched.heuristics import simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io import read
from optsched.schedule import Schedule

ONE_SHELF_SPECS = (*LEVEL_SPECS, "batch", "pc2")
"""Specs that put two jobs of heights 100 and 50 side by side in one shelf
(SMART's height classes separate them)."""

SECONDS = 10
"""A run that takes longer hangs (the bug these tests pin down)."""


@contextmanager
def _deadline(seconds: int = SECONDS) -> Iterator[None]:
    """Fail instead of hanging (where SIGALRM exists)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the simulation did not end within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _run(instance: Instance, spec: str) -> Schedule:
    """The checked schedule of ``spec`` on ``instance``, every job placed."""
    with _deadline():
        schedule = run_checked(instance, spec)
    assert set(schedule.placements) == {job.id for job in instance.jobs}, spec
    return schedule


def _processors(schedule: Schedule) -> dict[int, tuple[int, ...]]:
    return {j: tuple(p.processors or ()) for j, p in schedule.placements.items()}


# --------------------------------------------------------------------------
# Outages
# --------------------------------------------------------------------------


def _with_outage(jobs: tuple[Job, ...], size: int) -> Instance:
    """4 processors; an outage of ``size`` processors over [20, 30)."""
    outage = BusyBlock(20, 30, size, label="outage")
    return Instance(Machine(4, outages=(outage,)), jobs)


# Jobs 1 and 2 form the first batch (one shelf: job 1 on processors 0-1,
# job 2 on 2-3); job 3, the whole machine, arrives while it runs.
SIDE_BY_SIDE = (
    Job(1, 0, 2, 100),
    Job(2, 0, 2, 50),
    Job(3, 10, 4, 10),
)


@pytest.mark.parametrize("spec", ONE_SHELF_SPECS)
def test_a_member_killed_by_an_outage_runs_again_in_its_level(spec: str) -> None:
    # At 20 the outage needs 2 processors and none is idle: the engine
    # kills the running job that started last (a tie: the later job, 2)
    # and requeues it. It cannot restart during the outage (job 1 and the
    # outage hold the machine); at 30 it restarts, from scratch, and ends
    # at 80. The level is over when job 1 ends at 100; job 3 follows. PC²:
    # jobs 1 and 2 started in FCFS mode; job 3 made the machine full, so
    # they are the running level, and job 3 is planned at its end (100).
    instance = _with_outage(SIDE_BY_SIDE, 2)
    schedule = _run(instance, spec)
    assert spans_of(schedule) == {1: (0, 100), 2: (30, 80), 3: (100, 110)}
    assert lost_of(schedule) == {2: [(0, 20)]}
    if spec == "nfdh":
        # On the processors the plan gave it, where it ran before.
        assert _processors(schedule)[2] == (2, 3)
        assert tuple(schedule.lost[2][0].processors or ()) == (2, 3)


@pytest.mark.parametrize("spec", ONE_SHELF_SPECS)
def test_an_outage_of_the_whole_machine_restarts_the_whole_level(spec: str) -> None:
    # Both members are killed at 20 and restart at 30, when the outage
    # ends; the level ends with job 1 at 130, then job 3 runs.
    instance = _with_outage(SIDE_BY_SIDE, 4)
    schedule = _run(instance, spec)
    assert spans_of(schedule) == {1: (30, 130), 2: (30, 80), 3: (130, 140)}
    assert lost_of(schedule) == {1: [(0, 20)], 2: [(0, 20)]}
    if spec == "nfdh":
        assert _processors(schedule) == {1: (0, 1), 2: (2, 3), 3: (0, 1, 2, 3)}


def test_a_job_stacked_behind_a_killed_one_waits_for_its_restart() -> None:
    # FFDH*: job 1 (height 100) and job 2 (height 40) side by side, job 3
    # (height 30) stacked behind job 2 (40 + 30 <= 100), on its processors.
    # The outage kills job 2 at 20 (it started last); it restarts at 30 and
    # ends at 70, and job 3 follows it then (not at 40 as planned), still
    # inside the shelf: it ends at 100 with job 1. Job 4 arrived at 5 and
    # forms the next batch.
    jobs = (
        Job(1, 0, 2, 100),
        Job(2, 0, 2, 40),
        Job(3, 0, 2, 30),
        Job(4, 5, 4, 10),
    )
    schedule = _run(_with_outage(jobs, 2), "ffdh-stack")
    assert spans_of(schedule) == {
        1: (0, 100),
        2: (30, 70),
        3: (70, 100),
        4: (100, 110),
    }
    assert _processors(schedule) == {
        1: (0, 1),
        2: (2, 3),
        3: (2, 3),
        4: (0, 1, 2, 3),
    }
    assert lost_of(schedule) == {2: [(0, 20)]}


# --------------------------------------------------------------------------
# The user limit
# --------------------------------------------------------------------------


def _limited(jobs: tuple[Job, ...], limit: int = 50) -> Instance:
    """4 processors, NQS's user limit alone (processor-seconds)."""
    return Instance(Machine(4, calendar=Calendar((), user_limit=limit)), jobs)


# Limit 50. Job 3 (user 1) charges 2 x 40 = 80, over the limit by itself:
# it may start only when no job of another user that the limit allows
# waits. Job 5 (user 2, 1 x 10) arrives at 60, while the first batch runs.
# Jobs 2 and 4 have no user (the limit ignores them); job 1's user 3 is
# over the limit too, but nobody the limit allows waits at 0.
LIMITED = (
    Job(1, 0, 4, 200, user=3),
    Job(2, 0, 2, 100),
    Job(3, 0, 2, 40, user=1),
    Job(4, 0, 2, 30),
    Job(5, 60, 1, 10, user=2),
)


@pytest.mark.parametrize("spec", ["ffdh-stack", "ffdh", "nfdh"])
def test_a_member_refused_by_the_user_limit_does_not_block_its_level(
    spec: str,
) -> None:
    # The first batch is jobs 1-4: job 1 alone in shelf 1; jobs 2 and 3
    # side by side in shelf 2; job 4 stacked behind job 3 (FFDH*) or in
    # shelf 3 (FFDH, NFDH). At 200 shelf 2 opens: job 2 starts, job 3 is
    # refused (job 5 waits) and demoted. The level retries it while job 2
    # runs; at 300 it is still refused and nothing else of the level runs:
    # the level gives it up. Job 4 then runs (FFDH*: on the processors job
    # 3 was to free), 300-330. At 330 the next batch is jobs 3 and 5:
    # job 3 is refused while job 5 waits, job 5 starts, then nobody the
    # limit allows waits and job 3 starts too.
    schedule = _run(_limited(LIMITED), spec)
    assert spans_of(schedule) == {
        1: (0, 200),
        2: (200, 300),
        3: (330, 370),
        4: (300, 330),
        5: (330, 340),
    }
    if spec == "ffdh-stack":
        assert _processors(schedule)[4] == (2, 3)


def test_pc2_plans_a_refused_member_again_like_a_new_submission() -> None:
    # Job 1 starts at once (FCFS mode). Job 2 (user 1, 2 x 50 = 100 > 50)
    # arrives at 10 and cannot start: the machine is full, job 1 is the
    # running level (to 100) and job 2 is planned in a level at 100.
    # Job 3 (user 2, 4 x 10 = 40) arrives at 20: it fits in no planned
    # level, so a new level at the end (150). At 100 job 2 is refused (job
    # 3 waits) and nothing else of its level runs: the level gives it up,
    # job 3's level starts at once (100-110), and job 2 is planned again
    # behind it, at 110, where nothing holds it back any more. Each job is
    # told its start at its submission, and the first one told stands:
    # job 1 at 0, job 2 at 100 (starts 10 s later), job 3 at 150 (starts
    # 50 s earlier).
    jobs = (
        Job(1, 0, 4, 100),
        Job(2, 10, 2, 50, user=1),
        Job(3, 20, 4, 10, user=2),
    )
    instance = _limited(jobs)
    schedule = _run(instance, "pc2")
    assert spans_of(schedule) == {1: (0, 100), 2: (110, 160), 3: (100, 110)}
    with _deadline():
        stats = simulate(instance, "pc2").stats
    assert stats.predictions == 3
    assert stats.prediction_error == pytest.approx((0 + 10 + 50) / 3)


def test_a_refused_member_may_still_start_in_its_level() -> None:
    # Two shelf mates of users 1 and 2, limit 50: job 1 (2 x 40 = 80) is
    # tried first and refused while job 2 (2 x 10 = 20) waits; job 2
    # starts, and in the same pass job 1 is tried again: nobody the limit
    # allows waits now, so it starts too. Nothing is dropped.
    jobs = (Job(1, 0, 2, 40, user=1), Job(2, 0, 2, 10, user=2))
    for spec in ("nfdh", "ffdh-stack", "pc2"):
        schedule = _run(_limited(jobs), spec)
        assert spans_of(schedule) == {1: (0, 40), 2: (0, 10)}, spec


# --------------------------------------------------------------------------
# kth_50 with the snapshot test's outages and user limit
# --------------------------------------------------------------------------


def _kth_50() -> Instance:
    return read(INSTANCES / "kth_50.json")


def _kth_50_outages() -> Instance:
    """60 % of the machine down over [3000, 6000), all of it over
    [20000, 23600) (the snapshot test's ``kth_50-outages``)."""
    instance = _kth_50()
    m = instance.machine.processors
    down = (
        BusyBlock(3_000, 6_000, m * 6 // 10, label="outage"),
        BusyBlock(20_000, 23_600, m, label="outage"),
    )
    return instance.replace(machine=instance.machine.replace(outages=down))


def _kth_50_user_limit() -> Instance:
    """A user limit of 100 processor-hours (``kth_50-userlimit``)."""
    instance = _kth_50()
    calendar = Calendar((), user_limit=100 * 3600)
    return instance.replace(machine=instance.machine.replace(calendar=calendar))


@pytest.fixture(scope="module")
def kth_50_outages() -> Instance:
    return _kth_50_outages()


@pytest.fixture(scope="module")
def kth_50_user_limit() -> Instance:
    return _kth_50_user_limit()


@pytest.mark.parametrize("spec", SHELF_SPECS)
def test_kth_50_with_outages(kth_50_outages: Instance, spec: str) -> None:
    # Used to stop with "simulation stalled at time 34746" (42490: PC²).
    schedule = _run(kth_50_outages, spec)
    # The whole-machine outage at 20000 kills whatever runs then.
    assert schedule.lost
    assert all(
        run.end in (3_000, 20_000) for runs in schedule.lost.values() for run in runs
    )


@pytest.mark.parametrize("spec", SHELF_SPECS)
def test_kth_50_with_a_user_limit(kth_50_user_limit: Instance, spec: str) -> None:
    # Used to run for ever (all but the three FFIH specs).
    _run(kth_50_user_limit, spec)
