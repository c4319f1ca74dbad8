"""Job chains in the simulator and the checker (rule 12)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import swf_job, write_swf

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import Instance, Job, Machine
from optsched.schedule import Placement, Schedule


def test_successor_waits_for_its_predecessor_golden() -> None:
    # 8 CPUs, plenty of room. B follows A (think 5 s): it arrives at
    # max(10, 100 + 5) = 105. C follows B with no think time but a late
    # submit (300): it arrives at max(300, 155) = 300. D names a job not in
    # the instance: no chain. E follows C, but its think time is -1 (SWF's
    # "unknown"): counted as 0.
    jobs = (
        Job(1, 0, 4, 100),
        Job(2, 10, 2, 50, preceding_job=1, think_time=5),
        Job(3, 20, 2, 10, preceding_job=2, think_time=0),
        Job(4, 30, 2, 10, preceding_job=99),
        Job(5, 40, 2, 10, preceding_job=3, think_time=-1),
    )
    jobs = (*jobs[:2], jobs[2].replace(release=300), *jobs[3:])
    instance = Instance(Machine(8), jobs)
    for policy in ("fcfs", "easy", "conservative", "firstfit"):
        schedule = simulate(instance, policy).schedule
        starts = {j: p.start for j, p in schedule.placements.items()}
        assert starts == {1: 0, 2: 105, 3: 300, 4: 30, 5: 310}, policy
        assert check_schedule(instance, schedule) == []


def test_checker_rule_12() -> None:
    jobs = (Job(1, 0, 4, 100), Job(2, 0, 2, 50, preceding_job=1, think_time=5))
    instance = Instance(Machine(8), jobs)
    early = Schedule(
        {1: Placement(0, 100, (0, 1, 2, 3)), 2: Placement(104, 154, (4, 5))}
    )
    violations = check_schedule(instance, early)
    assert [(v.kind, v.job, v.time) for v in violations] == [("chain", 2, 104)]
    on_time = Schedule(
        {1: Placement(0, 100, (0, 1, 2, 3)), 2: Placement(105, 155, (4, 5))}
    )
    assert check_schedule(instance, on_time) == []


def test_what_does_not_follow_chains_refuses_them() -> None:
    from optsched.models import solve

    jobs = (Job(1, 0, 4, 100), Job(2, 0, 2, 50, preceding_job=1))
    instance = Instance(Machine(8), jobs)
    with pytest.raises(ValueError, match="chains"):
        solve(instance, "cmax", backend="milp", time_limit=1, workers=1)
    with pytest.raises(ValueError, match="does not follow job chains"):
        simulate(instance, "pbi")
    # Lower bounds stay valid: chains only remove schedules.
    from optsched.models.rigid.bounds import lower_bounds

    makespan = max(
        p.end for p in simulate(instance, "easy").schedule.placements.values()
    )
    assert all(b.value <= makespan for b in lower_bounds(instance, "cmax"))


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    policy=st.sampled_from(
        ["fcfs", "easy", "conservative", "firstfit", "backfill:depth=3"]
    ),
    kill=st.booleans(),
)
def test_random_chains_are_followed(seed: int, policy: str, kill: bool) -> None:
    rng = random.Random(seed)
    jobs: list[Job] = []
    for k in range(1, 21):
        runtime = rng.randrange(0, 500)
        prec = rng.choice([None, None, *range(1, 25)])  # some missing, some later
        jobs.append(
            Job(
                k,
                rng.randrange(0, 2_000),
                rng.randrange(1, 9),
                runtime,
                max(1, runtime + rng.randrange(-100, 300)),
                preceding_job=prec,
                think_time=rng.choice([None, -1, 0, 30]),
            )
        )
    instance = Instance(Machine(8), tuple(jobs))
    result = simulate(instance, policy, kill_at_estimate=kill)
    assert check_schedule(instance, result.schedule) == []


def test_arrival_modes_and_no_chains(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from optsched.cli.options import load_instance

    lines = [
        swf_job(k, submit, 60, 4, preceding=prec, think=5 if prec > 0 else -1)
        for k, (submit, prec) in enumerate([(100, -1), (250, 1), (400, -1)], 1)
    ]
    path = write_swf(tmp_path / "t.swf", lines, 8)
    recorded = load_instance(str(path))
    assert [j.release for j in recorded.jobs] == [100, 250, 400]
    assert recorded.job(2).preceding_job == 1
    batch = load_instance(str(path), arrivals="window-start")
    assert [j.release for j in batch.jobs] == [100, 100, 100]
    # All there at 100, but job 2 still waits for job 1 (ends 160) + 5 s.
    starts = {
        j: p.start for j, p in simulate(batch, "easy").schedule.placements.items()
    }
    assert starts == {1: 100, 2: 165, 3: 100}
    loose = load_instance(str(path), arrivals="window-start", no_chains=True)
    assert all(j.preceding_job is None for j in loose.jobs)
    starts = {
        j: p.start for j, p in simulate(loose, "easy").schedule.placements.items()
    }
    assert starts == {1: 100, 2: 100, 3: 160}
