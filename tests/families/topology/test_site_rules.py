"""Site calendars and NQS's user limit on the node simulator (machines with
node speeds or SMP nodes, and the combinators on flat machines).

The node simulator follows the rules through the engine's own
implementation (:class:`optsched.heuristics.site.gate.SiteGate`): on flat
machines ``fcfs``, ``firstfit`` and ``easy`` (the engine) and the
combinators they equal give the same schedules under random calendars and
user limits; on speeds and SMP nodes hand-checked cases show a job held
back until the calendar's hour and a user's second job delayed by the
limit; every schedule passes the checker.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.simulation import (
    assert_engines_equal_combinators,
    draw_shuffled_jobs,
    run_checked,
)

from optsched.calendar import Calendar, Period
from optsched.instance import Instance, Job, Machine
from optsched.nodes import Nodes

ALL_DAYS = tuple(range(8))
HOUR = 3_600


# -- random calendars: the engine and the combinators agree -----------------
@st.composite
def calendars(draw: st.DrawFn, m: int) -> Calendar:
    """Up to three periods in the first 40 s of every day (capacity and
    largest job at most ``m``), sequential and anytime queues among 0-2, and
    maybe a user limit."""
    cuts = sorted(set(draw(st.lists(st.integers(0, 40), min_size=0, max_size=6))))
    periods = [
        Period(
            ALL_DAYS,
            a,
            b,
            draw(st.one_of(st.none(), st.integers(0, m))),
            draw(st.one_of(st.none(), st.integers(0, m))),
        )
        for a, b in zip(cuts[::2], cuts[1::2], strict=False)
        if a < b
    ]
    queues = draw(st.permutations([0, 1, 2]))
    split = draw(st.integers(0, 3))
    return Calendar(
        tuple(periods),
        sequential_queues=frozenset(queues[:split][:1]),
        anytime_queues=frozenset(queues[1:split]),
        user_limit=draw(st.one_of(st.none(), st.integers(0, 60))),
    )


@st.composite
def site_instances(draw: st.DrawFn) -> Instance:
    """Flat machines under a random calendar; jobs of three queues and
    three users (or none), estimates exact, over or under, 0 s allowed."""
    m = draw(st.integers(1, 6))
    jobs = draw_shuffled_jobs(
        draw,
        m,
        release=30,
        queue=st.integers(0, 2),
        user=st.one_of(st.none(), st.integers(0, 2)),
    )
    return Instance(Machine(m, calendar=draw(calendars(m))), tuple(jobs))


@settings(max_examples=300, deadline=None)
@given(instance=site_instances())
def test_the_combinators_follow_the_site_rules_as_the_engine_does(
    instance: Instance,
) -> None:
    assert_engines_equal_combinators(instance)


@settings(max_examples=100, deadline=None)
@given(instance=site_instances(), shape=st.sampled_from(["speeds", "nodes"]))
def test_every_node_schedule_under_the_site_rules_passes_the_checker(
    instance: Instance, shape: str
) -> None:
    m = instance.processors
    machine = (
        instance.machine.replace(speeds=tuple(1 + k % 2 for k in range(m)))
        if shape == "speeds"
        else instance.machine.replace(nodes=Nodes(m, 1, tight=0, level=1))
    )
    instance = instance.replace(machine=machine)
    for spec in ("easy", "firstfit", "fcfs", "lpt-fifo-optim", "spt-back"):
        run_checked(instance, spec)


# -- hand-checked cases -------------------------------------------------------
NIGHT = Calendar((Period(ALL_DAYS, 0, 8 * HOUR, capacity=2, max_size=2),))
"""Until 08:00 every day batch jobs hold at most 2 processors, and none
larger than 2 starts; from 08:00 the whole machine."""


def _held_back(machine: Machine) -> Instance:
    # Job 1 (2 processors) starts at once; job 2 (4 processors) is too
    # large before 08:00 and starts at 08:00 although 4 processors are
    # idle from 1 h.
    return Instance(
        machine.replace(calendar=NIGHT),
        (Job(1, 0, 2, 3_600, 3_600), Job(2, 60, 4, 7_200, 7_200)),
    )


@pytest.mark.parametrize("spec", ["fcfs", "easy", "firstfit", "optimistic:f=lpt"])
def test_a_calendar_holds_a_job_until_its_hour_on_speeds(spec: str) -> None:
    # Speeds 1,1,2,2,1,1: job 1 takes the two fast processors, 3600 work
    # over speed 4 = 900 s; job 2 at 08:00 on all four free fast-first
    # (2+2+1+1 = 6): 7200 / 6 = 1200 s.
    instance = _held_back(Machine(6, speeds=(1, 1, 2, 2, 1, 1)))
    schedule = run_checked(instance, spec)
    assert (schedule[1].start, schedule[1].end) == (0, 900)
    assert schedule[1].processors == (2, 3)
    assert (schedule[2].start, schedule[2].end) == (8 * HOUR, 8 * HOUR + 1_200)
    assert schedule[2].processors == (0, 1, 2, 3)


@pytest.mark.parametrize("spec", ["fcfs", "easy", "firstfit", "fit:f=spt"])
def test_a_calendar_holds_a_job_until_its_hour_on_smp_nodes(spec: str) -> None:
    # Three nodes of 2, span slack 0, level 2 (run time x (1 + 0.05 * 2
    # per node touched)): job 1 on node 0 runs 3600 * 1.1 = 3960 s; job 2
    # at 08:00 on nodes 0 and 1, 7200 * 1.2 = 8640 s.
    instance = _held_back(Machine(6, nodes=Nodes(3, 2, tight=0, level=2)))
    schedule = run_checked(instance, spec)
    assert (schedule[1].start, schedule[1].end) == (0, 3_960)
    assert schedule[1].processors == (0, 1)
    assert (schedule[2].start, schedule[2].end) == (8 * HOUR, 8 * HOUR + 8_640)
    assert schedule[2].processors == (0, 1, 2, 3)


def _limited(machine: Machine) -> Instance:
    # User 7's jobs each charge 2 x 100 = 200 processor-seconds, the limit
    # is 300: its second job may not start while user 8's job waits and
    # could start (200 <= 300). Job 3 of user 8 arrives at 5, when job 1
    # runs; job 2 (submitted at 0) waits for no processor at 10 but for the
    # limit, job 3 goes first, and then user 7's account is emptied.
    calendar = Calendar((), user_limit=300)
    return Instance(
        machine.replace(calendar=calendar),
        (
            Job(1, 0, 2, 100, 100, user=7),
            Job(2, 0, 2, 100, 100, user=7),
            Job(3, 5, 2, 100, 100, user=8),
        ),
    )


@pytest.mark.parametrize(
    ("machine", "d"),
    [(Machine(2, speeds=(1, 1)), 50), (Machine(2, nodes=Nodes(1, 2, tight=0)), 100)],
    ids=["speeds", "nodes"],
)
def test_the_user_limit_delays_a_users_second_job(machine: Machine, d: int) -> None:
    # Each job runs d seconds: its work 100 over speeds 1 + 1, or its run
    # time 100 on one node. Job 1 runs [0, d); at d job 2 would bring user
    # 7 to 400 > 300 while job 3 (user 8) waits: job 3 runs [d, 2d), then
    # job 2 [2d, 3d), once user 8's start has emptied user 7's account.
    instance = _limited(machine)
    for spec in ("fcfs", "easy", "firstfit"):
        schedule = run_checked(instance, spec)
        starts = {j: (p.start, p.end) for j, p in schedule.placements.items()}
        assert starts == {1: (0, d), 2: (2 * d, 3 * d), 3: (d, 2 * d)}, spec
    free = instance.replace(machine=machine.replace(calendar=None))
    starts = {j: p.start for j, p in run_checked(free, "fcfs").placements.items()}
    assert starts == {1: 0, 2: d, 3: 2 * d}  # without the limit: submit order
