"""``--policy orig``: the recorded schedule as a policy."""

from __future__ import annotations

import pytest
from support.builders import starts_of

from optsched.check import check_schedule
from optsched.heuristics import parse_policy, simulate
from optsched.instance import Instance, Job, Machine


def test_orig_replays_the_recorded_starts() -> None:
    # Recorded waits 0, 50 and 5: starts 0, 60 and 25; processors are the
    # lowest free ids in start order (job 3 reuses none: job 1 still runs).
    jobs = (
        Job(1, 0, 2, 100, wait=0),
        Job(2, 10, 2, 20, wait=50),
        Job(3, 20, 1, 0, wait=5),
    )
    instance = Instance(Machine(4), jobs)
    schedule = simulate(instance, "orig").schedule
    assert {
        j: (p.start, p.end, p.processors) for j, p in schedule.placements.items()
    } == {
        1: (0, 100, (0, 1)),
        2: (60, 80, (2, 3)),
        3: (25, 25, (2,)),
    }
    assert schedule.producer == "orig"
    assert check_schedule(instance, schedule) == []
    assert parse_policy("orig").spec == "orig"


def test_orig_refuses_what_it_cannot_replay() -> None:
    no_wait = Instance(Machine(4), (Job(1, 0, 2, 10, wait=0), Job(2, 0, 2, 10)))
    with pytest.raises(ValueError, match=r"1 jobs have none, e\.g\. job 2"):
        simulate(no_wait, "orig")
    crowded = Instance(Machine(4), (Job(1, 0, 3, 10, wait=0), Job(2, 5, 2, 10, wait=0)))
    with pytest.raises(ValueError, match="holds 5 processors after time 5"):
        simulate(crowded, "orig")
    with pytest.raises(ValueError, match="unknown parameter 'order'; valid: repair"):
        parse_policy("orig:order=spt")


def test_orig_repair_delays_what_does_not_fit() -> None:
    from optsched.heuristics.rigid.orig import Repairs, recorded_schedule

    # 4 CPUs. Job 1 (3 CPUs) runs [0, 10); job 2 (2 CPUs) was recorded at
    # 5 (a log inconsistency): it moves to 10, 5 s later. Job 3 (1 CPU,
    # recorded at 6) still fits beside job 1 and stays. Job 4 lasts 0 s.
    jobs = (
        Job(1, 0, 3, 10, wait=0),
        Job(2, 5, 2, 10, wait=0),
        Job(3, 6, 1, 3, wait=0),
        Job(4, 7, 4, 0, wait=0),
    )
    instance = Instance(Machine(4), jobs)
    schedule, repairs = recorded_schedule(instance, repair=True)
    assert starts_of(schedule) == {1: 0, 2: 10, 3: 6, 4: 7}
    assert repairs == Repairs(delayed=1, delay=5)
    assert check_schedule(instance, schedule) == []
    policy = simulate(instance, "orig:repair").schedule
    assert policy.placements == schedule.placements and policy.producer == "orig:repair"
