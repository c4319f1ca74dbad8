"""Metrics on hand-computed schedules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optsched import metrics
from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.schedule import Placement, Schedule


@pytest.fixture
def small() -> tuple[Instance, Schedule]:
    # m = 4. Job 1: r=0, q=2, p=10 runs [0,10) on 0-1.
    # Job 2: r=0, q=4, p=5 waits for job 1, runs [10,15).
    # Job 3: r=3, q=2, p=4 runs [3,7) on 2-3 (w=2).
    # Job 4: r=20, q=1, p=0 runs [20,20).
    jobs = (
        Job(1, 0, 2, 10),
        Job(2, 0, 4, 5),
        Job(3, 3, 2, 4, weight=2.0),
        Job(4, 20, 1, 0),
    )
    inst = Instance(Machine(4), jobs)
    sched = Schedule(
        {
            1: Placement(0, 10, (0, 1)),
            2: Placement(10, 15, (0, 1, 2, 3)),
            3: Placement(3, 7, (2, 3)),
            4: Placement(20, 20, (0,)),
        }
    )
    assert check_schedule(inst, sched) == []
    return inst, sched


def test_makespan_and_completion(small: tuple[Instance, Schedule]) -> None:
    inst, sched = small
    assert metrics.makespan(inst, sched) == 20
    assert metrics.makespan(inst, sched, relative=True) == 20
    # 10 + 15 + 2*7 + 20 = 59
    assert metrics.weighted_completion(inst, sched) == 59.0
    # flow: 10 + 15 + 2*(7-3) + 0 = 33
    assert metrics.weighted_completion(inst, sched, relative=True) == 33.0
    assert metrics.total_completion(inst, sched) == 52


def test_waits_and_slowdowns(small: tuple[Instance, Schedule]) -> None:
    inst, sched = small
    assert metrics.waits(inst, sched).tolist() == [0, 10, 0, 0]
    # bsld: job 2: (15-0)/max(5,10) = 1.5; job 4: max(1, 0/10) = 1
    assert metrics.bounded_slowdowns(inst, sched).tolist() == [1.0, 1.5, 1.0, 1.0]
    # slowdown: job 2: 15/5 = 3; zero-length job counts 1
    assert metrics.slowdowns(inst, sched).tolist() == [1.0, 3.0, 1.0, 1.0]


def test_utilisation(small: tuple[Instance, Schedule]) -> None:
    inst, sched = small
    # work = 20 + 20 + 8 + 0 = 48 over 4 * 20 = 80
    assert metrics.utilisation(inst, sched) == pytest.approx(0.6)


def test_summary(small: tuple[Instance, Schedule]) -> None:
    inst, sched = small
    s = metrics.summarize(inst, sched)
    assert s.jobs == 4
    assert s.mean_wait == 2.5
    assert s.max_wait == 10
    assert s.mean_bounded_slowdown == pytest.approx(4.5 / 4)
    assert s.p95_wait == pytest.approx(float(np.quantile([0, 10, 0, 0], 0.95)))
    assert math.isclose(s.as_dict()["utilisation"], 0.6)


def test_relative_makespan_subtracts_first_release() -> None:
    inst = Instance(Machine(2), (Job(1, 100, 1, 5), Job(2, 130, 2, 5)))
    sched = Schedule({1: Placement(100, 105), 2: Placement(130, 135)})
    assert metrics.makespan(inst, sched, relative=True) == 35
    assert metrics.utilisation(inst, sched) == pytest.approx((5 + 10) / (2 * 35))
