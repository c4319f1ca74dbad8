"""NQS's per-user limit: the simulator's demotion and the checker's rule 14."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from test_calendar import _random_calendar

from optsched.calendar import Calendar
from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.schedule import Placement, Schedule

ALWAYS = Calendar(())  # no batch hours: only the limit


def _limited(limit: int | None, jobs: tuple[Job, ...], m: int = 4) -> Instance:
    calendar = dataclasses.replace(ALWAYS, user_limit=limit)
    return Instance(Machine(m, calendar=calendar), jobs)


# Two whole-machine jobs of user 1 (each charges 4 x 10 = 40) and one of
# user 2 arriving at 1.
JOBS = (
    Job(1, 0, 4, 10, user=1),
    Job(2, 0, 4, 10, user=1),
    Job(3, 1, 4, 10, user=2),
)


def _spans(schedule: Schedule) -> dict[int, tuple[int, int]]:
    return {j: (p.start, p.end) for j, p in schedule.placements.items()}


def test_over_the_limit_the_user_drops_behind_the_others() -> None:
    # Limit 50: at 10, job 2 would bring user 1 to 80 while user 2's job
    # waits (and would stay at 40 <= 50): job 2 drops to the end, job 3
    # runs; after it user 1's account is empty and job 2 runs.
    for policy in ("fcfs", "easy", "conservative", "firstfit", "mallmann"):
        schedule = simulate(_limited(50, JOBS), policy).schedule
        assert _spans(schedule) == {1: (0, 10), 3: (10, 20), 2: (20, 30)}, policy
        assert check_schedule(_limited(50, JOBS), schedule) == []
    # Limit 80: job 2 fits in it; FCFS order stands.
    schedule = simulate(_limited(80, JOBS), "fcfs").schedule
    assert _spans(schedule) == {1: (0, 10), 2: (10, 20), 3: (20, 30)}


def test_nobody_is_held_back_for_a_job_that_could_not_start_either() -> None:
    # Limit 30: every job alone is above it. Holding user 1 back for user
    # 2's job (over the limit too) would stall both: FCFS order stands.
    instance = _limited(30, JOBS)
    schedule = simulate(instance, "fcfs").schedule
    assert _spans(schedule) == {1: (0, 10), 2: (10, 20), 3: (20, 30)}
    assert check_schedule(instance, schedule) == []


def test_jobs_without_a_user_are_exempt() -> None:
    jobs = tuple(job.replace(user=None) for job in JOBS)
    schedule = simulate(_limited(50, jobs), "fcfs").schedule
    assert _spans(schedule) == {1: (0, 10), 2: (10, 20), 3: (20, 30)}


def test_checker_rule_14() -> None:
    instance = _limited(50, JOBS)
    fcfs = Schedule({1: Placement(0, 10), 2: Placement(10, 20), 3: Placement(20, 30)})
    violations = check_schedule(instance, fcfs)
    assert [(v.kind, v.job, v.time) for v in violations] == [("user-limit", 2, 10)]
    assert "while job 3 of user 2 waits" in violations[0].message
    # Job 3 not yet submitted at 10: nobody waits, user 1 may go on.
    later = instance.replace(jobs=(*JOBS[:2], JOBS[2].replace(release=15)))
    assert check_schedule(later, fcfs) == []


def test_two_users_at_one_instant_empty_every_account() -> None:
    # Users 1 and 2 both start at 0; at 10 each account is empty again, so
    # user 1's second job (charge 20) is within the limit of 30 although
    # user 1 had charged 20 at 0.
    jobs = (
        Job(1, 0, 2, 10, user=1),
        Job(2, 0, 2, 10, user=2),
        Job(3, 0, 2, 10, user=1),
        Job(4, 1, 2, 10, user=3),
    )
    instance = _limited(30, jobs)
    schedule = simulate(instance, "fcfs").schedule
    assert _spans(schedule) == {1: (0, 10), 2: (0, 10), 3: (10, 20), 4: (10, 20)}
    assert check_schedule(instance, schedule) == []


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    policy=st.sampled_from(["fcfs", "easy", "conservative", "firstfit", "lpt"]),
    allocation=st.sampled_from(["any", "contiguous"]),
    calendar=st.booleans(),
    outages=st.booleans(),
)
def test_random_limits_pass_the_checker(
    seed: int, policy: str, allocation: str, calendar: bool, outages: bool
) -> None:
    rng = random.Random(seed)
    m, day = 16, 86_400
    base = _random_calendar(rng, m) if calendar else ALWAYS
    limit = rng.choice([0, 20_000, 200_000, 1_000_000])
    jobs = []
    for k in range(25):
        runtime = rng.randrange(0, 20_000)
        jobs.append(
            Job(
                k + 1,
                rng.randrange(0, 2 * day),
                rng.randrange(1, m + 1),
                runtime,
                max(runtime, rng.randrange(1, 30_000)),
                user=rng.choice([None, 1, 2, 3]),
                preceding_job=rng.randrange(1, k + 1)
                if k and rng.random() < 0.2
                else None,
            )
        )
    down = ()
    if outages:
        start = rng.randrange(0, day)
        down = (
            BusyBlock(
                start, start + 3600, m, 0 if allocation == "contiguous" else None
            ),
        )
    machine = Machine(
        m,
        allocation,
        calendar=dataclasses.replace(base, user_limit=limit),
        outages=down,
    )
    instance = Instance(machine, tuple(jobs))
    try:
        result = simulate(instance, policy)
    except ValueError as error:
        assert "can never start" in str(error)
        return
    assert check_schedule(instance, result.schedule) == []
