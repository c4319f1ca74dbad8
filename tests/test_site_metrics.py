"""Mallmann's utilisation and waiting-time measures, by hand."""

from __future__ import annotations

import pytest

from optsched.heuristics import simulate
from optsched.instance import Instance, Job, Machine
from optsched.schedule import Placement, Schedule
from optsched.site_metrics import utilisation, waits_by_class


def test_utilisation_by_hand() -> None:
    # 4 CPUs. Job 1: 2 CPUs over [10, 30); job 2: 4 CPUs over [50, 60).
    # L = 40 + 40 = 80; T_ges = 60 - 10 = 50; T_act = 20 + 10 = 30.
    instance = Instance(Machine(4), (Job(1, 0, 2, 20), Job(2, 5, 4, 10)))
    schedule = Schedule(
        {1: Placement(10, 30, (0, 1)), 2: Placement(50, 60, (0, 1, 2, 3))}
    )
    u = utilisation(instance, schedule)
    assert (u.load, u.total_time, u.active_time) == (80, 50, 30)
    assert u.l_ges == pytest.approx(80 / 200) and u.l_act == pytest.approx(80 / 120)


def test_waits_by_class_by_hand() -> None:
    # Waits 10, 45, 0 and 100 s; job 4 is large (40 CPUs) and long.
    jobs = (
        Job(1, 0, 2, 20),
        Job(2, 5, 4, 10),
        Job(3, 7, 1, 5),
        Job(4, 0, 40, 1_000),
    )
    instance = Instance(Machine(64), jobs)
    schedule = Schedule(
        {
            1: Placement(10, 30, (0, 1)),
            2: Placement(50, 60, (0, 1, 2, 3)),
            3: Placement(7, 12, (5,)),
            4: Placement(100, 1_100, tuple(range(10, 50))),
        }
    )
    waits = waits_by_class(instance, schedule)
    assert waits["all"].jobs == 4 and waits["all"].mean == pytest.approx(155 / 4)
    assert waits["all"].maximum == 100
    assert waits["all"].q50 == pytest.approx(27.5)  # between 10 and 45
    assert waits[">32p"].jobs == 1 and waits[">32p"].q95 == 100
    assert waits["<=10min"].jobs == 3 and waits[">10min"].maximum == 100
    assert set(waits) == {"all", "<=10min", ">10min", "<=32p", ">32p"}


def test_measures_of_a_simulated_schedule() -> None:
    instance = Instance(
        Machine(4), tuple(Job(k, k, 1 + k % 4, 10 + k) for k in range(1, 30))
    )
    schedule = simulate(instance, "easy").schedule
    u = utilisation(instance, schedule)
    assert 0 < u.l_ges <= u.l_act <= 1
    assert u.load == sum(j.size * j.runtime for j in instance.jobs)
