"""Mallmann's utilisation and waiting-time measures, by hand."""

from __future__ import annotations

import pytest

from optsched.heuristics import simulate
from optsched.instance import Instance, Job, Machine
from optsched.schedule import Placement, Schedule
from optsched.site.metrics import utilisation, waits_by_class


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


def test_mode_split_by_hand() -> None:
    from optsched.calendar import Calendar, Period
    from optsched.site.metrics import mode_split

    # 10 CPUs; on Mondays 8-12 h the batch partition is 6 (mixed mode),
    # 12-20 h 1 (interactive mode), else the whole machine (batch mode).
    hour = 3600
    calendar = Calendar(
        (Period((0,), 8 * hour, 12 * hour, 6), Period((0,), 12 * hour, 20 * hour, 1))
    )
    instance = Instance(
        Machine(10, calendar=calendar), (Job(1, 0, 4, 2 * hour), Job(2, 0, 1, hour))
    )
    # Job 1 over [7 h, 9 h): 1 h in batch, 1 h in mixed mode; job 2 over
    # [13 h, 14 h) in interactive mode. The span [7 h, 14 h) holds 3 idle
    # hours of mixed mode ([9, 12)) and 1 of interactive mode ([12, 13)).
    schedule = Schedule(
        {1: Placement(7 * hour, 9 * hour), 2: Placement(13 * hour, 14 * hour)}
    )
    split = mode_split(instance, schedule)
    assert split.modes == {"batch": (10,), "mixed": (6,), "interactive": (1,)}
    assert split.load == {"batch": 4 * hour, "mixed": 4 * hour, "interactive": hour}
    assert split.active == {"batch": hour, "mixed": hour, "interactive": hour}
    assert split.idle == {"batch": 0, "mixed": 3 * hour, "interactive": hour}
    assert split.l_act_bat == pytest.approx(0.4)
    assert split.t_idle_bat == 0.0
    # The loads add up to L_ges.
    assert sum(split.load.values()) == utilisation(instance, schedule).load
