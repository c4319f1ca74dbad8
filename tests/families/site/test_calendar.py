"""Site calendars: lookups, site files, the checker's rule 11, the engine."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import random_calendar, random_site_jobs, simulate_checked
from support.paths import INSTANCES, swf_job, write_swf

from optsched.calendar import DAY, HOLIDAY, WEEK, Calendar, Period, parse_clock
from optsched.check import check_schedule
from optsched.errors import InputError
from optsched.heuristics import simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.schedule import Placement, Schedule
from optsched.site.files import (
    apply_site,
    detect_holidays,
    header_monday_offset,
    read_site,
)

SITES = INSTANCES / "sites"
WEEKDAYS = (0, 1, 2, 3, 4)


def _t3e() -> Calendar:
    return read_site(SITES / "t3e.toml").calendar


# -- lookups ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("t", "capacity", "largest"),
    [
        (0, 518, 512),  # Monday 00:00
        (4 * 3600, 518, 256),  # Monday 04:00
        (7 * 3600 + 59, 383, 256),  # Monday 07:00:59
        (11 * 3600, 383, 128),
        (12 * 3600, 4, 4),  # interactive afternoon
        (19 * 3600 + 3599, 4, 4),
        (20 * 3600, 518, 512),
        (DAY + 13 * 3600, 4, 4),  # Tuesday 13:00
        (5 * DAY + 13 * 3600, 518, 518),  # Saturday 13:00 (as printed)
        (WEEK + 13 * 3600, 4, 4),  # next Monday
    ],
)
def test_t3e_calendar_of_the_study(t: int, capacity: int, largest: int) -> None:
    calendar = _t3e()
    assert calendar.capacity_at(t, 518) == capacity
    assert calendar.max_size_at(t, 518) == largest


def test_holidays_shift_and_scale() -> None:
    calendar = _t3e()
    holiday = Calendar(calendar.periods, frozenset({2}), 0)  # a Wednesday
    assert holiday.capacity_at(2 * DAY + 13 * 3600, 518) == 518
    assert holiday.capacity_at(3 * DAY + 13 * 3600, 518) == 4
    # Time 0 moved 9 days + 13 h later: instants keep their time of week
    # and the holiday its date (day 2 is before the new time 0: gone).
    shift = 9 * DAY + 13 * 3600
    moved = holiday.shifted(shift)
    for t in (0, 3600, 2 * DAY, 5 * DAY + 7 * 3600):
        assert moved.capacity_at(t, 518) == holiday.capacity_at(t + shift, 518)
    later = Calendar(calendar.periods, frozenset({9, 16}), 0).shifted(8 * DAY)
    assert later.holidays == frozenset({2, 9}) and later.monday_offset == DAY
    small = calendar.scaled(518, 100)
    assert [small.capacity_at(h * 3600, 100) for h in (0, 8, 13)] == [100, 74, 1]
    assert [small.max_size_at(h * 3600, 100) for h in (0, 5, 10, 13)] == [99, 49, 25, 1]
    assert calendar.next_change(0) == 4 * 3600
    assert calendar.next_change(20 * 3600) == DAY
    assert calendar.next_change(4 * DAY + 21 * 3600) == 5 * DAY  # to Saturday
    pieces = list(calendar.segments(11 * 3600, 21 * 3600, 518))
    assert pieces == [
        (11 * 3600, 12 * 3600, 383, 128),
        (12 * 3600, 20 * 3600, 4, 4),
        (20 * 3600, 21 * 3600, 518, 512),
    ]
    # A 300-node job may start at 20:00 at the earliest on a weekday noon.
    assert calendar.earliest_start(300, 12 * 3600, 518) == 20 * 3600
    assert calendar.earliest_start(600, 0, 518) is None


def test_paragon_has_no_daytime_batch() -> None:
    site = read_site(SITES / "paragon.toml")
    assert site.processors == 138
    c = site.calendar
    assert c.capacity_at(9 * 3600, 138) == 0 and c.max_size_at(9 * 3600, 138) == 0
    assert c.max_size_at(4 * 3600 + 1800, 138) == 64
    assert c.max_size_at(4 * 3600 + 1799, 138) == 136
    assert c.capacity_at(6 * DAY + 12 * 3600, 138) == 138  # Sunday


def test_periods_are_validated() -> None:
    with pytest.raises(ValueError, match="overlap on tue at 10:00"):
        Calendar((Period((1,), 0, 12 * 3600), Period((1,), 10 * 3600, DAY)))
    with pytest.raises(ValueError, match="start < end"):
        Period((0,), 5, 5)
    with pytest.raises(ValueError, match="weekdays 0-6 or 7"):
        Period((8,), 0, 10)
    assert parse_clock("04:30") == 16_200 and parse_clock("24:00") == DAY
    with pytest.raises(ValueError, match="HH:MM"):
        parse_clock("4.30")


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("[site]\nnodes = 3\n", "unknown key 'nodes'", 2),
        (
            '[[batch]]\ndays = ["mon"]\nfrom = "08:00"\nto = "07:00"\n',
            "start < end",
            1,
        ),
        (
            '[[batch]]\ndays = ["monday"]\nfrom = "08:00"\nto = "09:00"\n',
            "day 'monday'",
            2,
        ),
        ('[[batch]]\ndays = ["mon"]\nfrom = "8h"\nto = "09:00"\n', "HH:MM", 3),
        ('[site]\nholidays = ["1997-03-28"]\n', "need start_date", 2),
        ('[site]\nstart_date = "1997-03-04"\n', "must be a Monday", 2),
        ("[sites]\n", "unknown table [sites]", None),
        ("[site\n", "invalid TOML", 1),
    ],
)
def test_bad_site_files(
    tmp_path: Path, text: str, message: str, line: int | None
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_site(path)
    assert message in str(caught.value)
    assert caught.value.line == line


def test_dated_holidays_and_detection(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        '[site]\nstart_date = "1997-03-03"\nholidays = ["1997-03-28", 40]\n'
    )
    assert read_site(path).calendar.holidays == frozenset({25, 40})
    # Interactive jobs (queue 0) start on days 0, 1, 3 and 7; day 2 (a
    # Wednesday) and day 4 (a Friday) have batch work only: holidays. Days
    # 5 and 6 are a weekend, never holidays.
    jobs = [
        Job(k + 1, day * DAY + 3600, 1, 10, wait=0, queue=queue)
        for k, (day, queue) in enumerate(
            [(0, 0), (1, 0), (2, 1), (3, 0), (4, 1), (5, 1), (7, 0)]
        )
    ]
    assert detect_holidays(jobs, lambda j: j.queue == 0) == frozenset({2, 4})


def test_header_gives_time_of_week() -> None:
    # KTH: Mon Sep 23 14:00:31 CEST 1996.
    header = {"UnixStartTime": "843480031", "TimeZoneString": "Europe/Stockholm"}
    assert header_monday_offset(header) == 14 * 3600 + 31
    assert header_monday_offset({"UnixStartTime": "843480031", "TimeZone": "7200"}) == (
        14 * 3600 + 31
    )
    assert header_monday_offset({}) is None


# -- rule 11 of the checker ------------------------------------------------------
def _calendar(capacity_then: int, largest_then: int, until: int) -> Calendar:
    """Capacity/size limits over [0, until) every day, the machine after."""
    days = (*range(7), HOLIDAY)
    return Calendar((Period(days, 0, until, capacity_then, largest_then),))


def test_checker_rule_11_golden() -> None:
    machine = Machine(8, calendar=_calendar(4, 4, 600))
    jobs = (Job(1, 0, 4, 1000), Job(2, 0, 2, 100), Job(3, 0, 5, 10), Job(4, 0, 4, 50))
    instance = Instance(machine, jobs)
    good = Schedule(
        {
            1: Placement(0, 1000, (0, 1, 2, 3)),
            2: Placement(1000, 1100, (4, 5)),
            3: Placement(1100, 1110, (0, 1, 2, 3, 4)),
            4: Placement(600, 650, (4, 5, 6, 7)),
        }
    )
    assert check_schedule(instance, good) == []
    bad = Schedule(
        {
            1: Placement(0, 1000, (0, 1, 2, 3)),
            2: Placement(50, 150, (4, 5)),  # 4 + 2 held at 50 > 4
            3: Placement(100 + 1100, 1210, (0, 1, 2, 3, 4)),
            4: Placement(1100, 1150, (4, 5, 6, 7)),
        }
    )
    kinds = [(v.kind, v.job, v.time) for v in check_schedule(instance, bad)]
    assert kinds == [("calendar", 2, 50)]
    too_big = Schedule(
        {
            1: Placement(0, 1000, (0, 1, 2, 3)),
            2: Placement(1000, 1100, (4, 5)),
            3: Placement(10, 20, (0, 1, 2, 3, 4)),  # 5 > 4 before 600
            4: Placement(1100, 1150, (4, 5, 6, 7)),
        }
    )
    violations = check_schedule(instance, too_big)
    assert {(v.kind, v.job) for v in violations} >= {("calendar", 3)}
    assert any("at most 4 start" in v.message for v in violations)
    # A busy block counts in the batch capacity at a start.
    blocked = Instance(
        Machine(8, unavailable=(BusyBlock(0, 100, 2),), calendar=_calendar(4, 4, 600)),
        (Job(1, 0, 3, 10),),
    )
    assert [
        v.kind
        for v in check_schedule(blocked, Schedule({1: Placement(0, 10, (2, 3, 4))}))
    ] == ["calendar"]


# -- the engine -------------------------------------------------------------------
def test_engine_follows_the_calendar_golden() -> None:
    # 8 CPUs, batch capacity 4 and jobs of at most 4 over [0, 600) each day.
    # J1 (4) starts at 0. J2 (4) would hold 8 > 4: it waits for the change
    # at 600 (a pass is woken there). J3 (8) waits for both to end: 1000.
    # J4 (6 CPUs) exceeds the size limit until 600; FCFS keeps it behind J3.
    instance = Instance(
        Machine(8, calendar=_calendar(4, 4, 600)),
        (Job(1, 0, 4, 1000), Job(2, 0, 4, 100), Job(3, 0, 8, 10), Job(4, 0, 6, 5)),
    )
    for policy, expected in (
        ("fcfs", {1: 0, 2: 600, 3: 1000, 4: 1010}),
        ("easy", {1: 0, 2: 600, 3: 1000, 4: 1010}),
        ("conservative", {1: 0, 2: 600, 3: 1000, 4: 1010}),
    ):
        schedule = simulate(instance, policy).schedule
        assert {j: p.start for j, p in schedule.placements.items()} == expected, policy
        assert check_schedule(instance, schedule) == []


def test_a_job_no_time_admits_is_refused() -> None:
    instance = Instance(Machine(8, calendar=_calendar(4, 4, DAY)), (Job(1, 0, 5, 10),))
    with pytest.raises(ValueError, match="can never start"):
        simulate(instance, "easy")


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    policy=st.sampled_from(
        ["fcfs", "easy", "conservative", "firstfit", "backfill:depth=2"]
    ),
    allocation=st.sampled_from(["any", "contiguous"]),
)
def test_every_engine_policy_respects_random_calendars(
    seed: int, policy: str, allocation: str
) -> None:
    rng = random.Random(seed)
    m = 16
    calendar = random_calendar(rng, m)
    jobs = random_site_jobs(rng, m, 3 * DAY, queues=(None, 1, 2))
    # Queue 1 sequential and queue 2 a test queue, each in some draws.
    calendar = dataclasses.replace(
        calendar,
        sequential_queues=frozenset({1} if rng.random() < 0.5 else ()),
        anytime_queues=frozenset({2} if rng.random() < 0.5 else ()),
    )
    instance = Instance(
        Machine(m, allocation=allocation, calendar=calendar), tuple(jobs)
    )
    simulate_checked(instance, policy)


def test_milp_and_standalone_policies_refuse_calendars() -> None:
    from optsched.io.native import instance_to_dict
    from optsched.models import solve
    from optsched.models.rigid.bounds import lower_bounds

    instance = Instance(Machine(8, calendar=_calendar(4, 4, 600)), (Job(1, 0, 4, 10),))
    with pytest.raises(ValueError, match="site calendars"):
        solve(instance, "cmax", backend="milp")
    # The bounds of the machine without its calendar stay valid (weaker).
    simulated = simulate(instance, "easy").schedule.placements[1].end
    assert all(b.value <= simulated for b in lower_bounds(instance, "cmax"))
    with pytest.raises(ValueError, match="ignores site calendars"):
        simulate(instance, "pbi")
    # The native JSON format keeps the calendar (a round trip).
    from optsched.io.native import instance_from_dict

    site = read_site(SITES / "t3e.toml").calendar
    limited = dataclasses.replace(
        site,
        sequential_queues=frozenset({3}),
        anytime_queues=frozenset({4}),
        user_limit=3600,
    )
    rich = instance.replace(machine=Machine(518, calendar=limited))
    again = instance_from_dict(instance_to_dict(rich))
    assert again.machine.calendar == limited


def test_apply_site_to_a_window_scales_and_shifts() -> None:
    from optsched.instance import Source, Window

    site = read_site(SITES / "t3e.toml")
    source = Source(window=Window(first_job=0, jobs=1, shift=DAY + 13 * 3600))
    instance = Instance(Machine(100), (Job(1, 0, 4, 10),), source=source)
    placed, note = apply_site(instance, site)
    assert note is not None and "518 processors scaled" in note
    calendar = placed.machine.calendar
    assert calendar is not None
    # Window time 0 is Tuesday 13:00: the interactive afternoon, 1 CPU.
    assert calendar.capacity_at(0, 100) == 1
    assert calendar.capacity_at(7 * 3600, 100) == 100  # Tuesday 20:00


def test_info_shows_the_calendar_and_chains(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from optsched.cli import main

    # Job 3 follows job 2 (field 17) after 5 s (field 18); job 4 names a
    # predecessor outside the file.
    lines = [
        swf_job(k, 10 * k, 60, 4, preceding=prec, think=5 if prec == 2 else -1)
        for k, prec in ((1, -1), (2, -1), (3, 2), (4, 99))
    ]
    trace = write_swf(tmp_path / "t.swf", lines, 100)
    result = CliRunner().invoke(
        main,
        ["info", str(trace), "--site", str(SITES / "t3e.toml")],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "518 processors scaled to the machine's 100" in result.stderr
    text = " ".join(result.stdout.split())
    assert "batch capacity 1..100 processors" in text
    assert "1 jobs with a predecessor in 1 chains" in text
    assert "1 predecessors not in the file" in text


def test_sequential_and_anytime_queues() -> None:
    # Batch capacity 0 (no jobs) over [0, 600); queue 7 is sequential, queue
    # 9 may start any time (a test queue). Jobs 1 and 2 (queue 7) run one
    # after the other; job 3 (queue 9) starts at once; job 4 (queue 1)
    # waits for 600.
    calendar = Calendar(
        (Period((*range(7), HOLIDAY), 0, 600, 0, 0),),
        sequential_queues=frozenset({7}),
        anytime_queues=frozenset({9}),
    )
    instance = Instance(
        Machine(8, calendar=calendar),
        (
            Job(1, 0, 2, 1000, queue=7),
            Job(2, 0, 2, 100, queue=7),
            Job(3, 0, 2, 50, queue=9),
            Job(4, 0, 2, 50, queue=1),
        ),
    )
    # Strict FCFS keeps the test job behind the blocked head; the others
    # start it at once. Job 2 waits for job 1 (same sequential queue).
    late = {1: 600, 2: 1600, 3: 1600, 4: 1600}
    early = {1: 600, 2: 1600, 3: 0, 4: 600}
    for policy, expected in (
        ("fcfs", late),
        ("easy", early),
        ("conservative", early),
        ("firstfit", early),
    ):
        schedule = simulate(instance, policy).schedule
        starts = {j: p.start for j, p in schedule.placements.items()}
        assert starts == expected, policy
        assert check_schedule(instance, schedule) == []
    overlapping = Schedule(
        {
            1: Placement(600, 1600, (0, 1)),
            2: Placement(700, 800, (2, 3)),
            3: Placement(0, 50, (4, 5)),
            4: Placement(600, 650, (4, 5)),
        }
    )
    assert [(v.kind, v.job) for v in check_schedule(instance, overlapping)] == [
        ("calendar", 2)
    ]


def test_site_file_queue_rules(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text("[site]\nsequential_queues = [3, 4]\nanytime_queues = [1]\n")
    calendar = read_site(path).calendar
    assert calendar.sequential_queues == {3, 4} and calendar.anytime_queues == {1}
    assert calendar.shifted(DAY).sequential_queues == {3, 4}
    path.write_text('[site]\nsequential_queues = ["p008s"]\n')
    with pytest.raises(InputError, match="queue numbers"):
        read_site(path)


def test_bounds_use_the_calendar_and_chains() -> None:
    from optsched.models.rigid.bounds import lower_bounds
    from optsched.objective import Objective

    # No batch job may start before 600: the makespan is at least 610, and
    # the successor (think 5) at least 610 + 5 + 20.
    calendar = Calendar((Period((*range(7), HOLIDAY), 0, 600, 0, 0),))
    instance = Instance(
        Machine(8, calendar=calendar),
        (Job(1, 0, 4, 10), Job(2, 0, 2, 20, preceding_job=1, think_time=5)),
    )
    best = max(b.value for b in lower_bounds(instance, "cmax"))
    assert best == 635
    schedule = simulate(instance, "easy").schedule
    assert Objective.parse("cmax").value(instance, schedule) == 635


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    objective=st.sampled_from(["cmax", "wct", "wct:area:relative"]),
)
def test_bounds_under_calendars_and_chains_are_valid(seed: int, objective: str) -> None:
    from optsched.models.rigid.bounds import lower_bounds
    from optsched.objective import Objective

    rng = random.Random(seed)
    m = 16
    calendar = random_calendar(rng, m)
    jobs = []
    for k in range(1, 16):
        runtime = rng.randrange(0, 20_000)
        jobs.append(
            Job(
                k,
                rng.randrange(0, 2 * DAY),
                rng.randrange(1, m + 1),
                runtime,
                max(1, runtime + rng.randrange(0, 5_000)),
                preceding_job=rng.choice([None, None, *range(1, 16)]),
                think_time=rng.choice([None, 0, 60]),
            )
        )
    instance = Instance(Machine(m, calendar=calendar), tuple(jobs))
    try:
        bounds = lower_bounds(instance, objective)
    except ValueError as error:
        assert "can never start" in str(error)
        return
    for policy in ("easy", "conservative", "firstfit"):
        schedule = simulate(instance, policy).schedule
        value = Objective.parse(objective).value(instance, schedule)
        assert all(b.value <= value + 1e-6 for b in bounds), (policy, bounds, value)


def test_site_leaves_interactive_jobs_out_and_detects_holidays(tmp_path: Path) -> None:
    # Time 0 is Monday 00:00. Interactive jobs (queue 0) start on Monday,
    # Tuesday and Thursday (recorded start = submit + wait); Wednesday has
    # none: a holiday (day 2), whose pattern (whole machine, no limit)
    # replaces the weekday's batch limit of 1 processor. Batch jobs are in
    # queue 1.
    site = tmp_path / "site.toml"
    site.write_text(
        '[site]\nname = "p"\nprocessors = 4\ninteractive_queues = [0]\n'
        "detect_holidays = true\n"
        '[[batch]]\ndays = ["mon", "tue", "wed", "thu", "fri"]\n'
        'from = "08:00"\nto = "20:00"\nprocessors = 1\nmax_size = 1\n'
        '[[batch]]\ndays = ["holiday"]\nfrom = "00:00"\nto = "24:00"\n'
    )
    jobs = (
        Job(1, 10 * 3600, 1, 60, wait=0, queue=0),  # Monday
        Job(2, DAY + 9 * 3600, 1, 60, wait=0, queue=0),  # Tuesday
        Job(3, 3 * DAY + 9 * 3600, 1, 60, wait=0, queue=0),  # Thursday
        Job(4, 2 * DAY + 9 * 3600, 4, 600, wait=0, queue=1),  # Wednesday 09:00
    )
    placed, note = apply_site(Instance(Machine(4), jobs), read_site(site))
    assert [j.id for j in placed.jobs] == [4]
    assert note is not None and "3 interactive jobs (queues 0) left out" in note
    calendar = placed.machine.calendar
    assert calendar is not None and calendar.holidays == frozenset({2})
    # Job 4 (4 processors) may start on the holiday morning, not on a
    # weekday morning.
    assert calendar.capacity_at(2 * DAY + 9 * 3600, 4) == 4
    assert calendar.capacity_at(DAY + 9 * 3600, 4) == 1
    schedule = simulate(placed, "fcfs").schedule
    assert schedule.placements[4].start == 2 * DAY + 9 * 3600
    assert check_schedule(placed, schedule) == []
    # detect_holidays without interactive queues is refused, with its line.
    site.write_text('[site]\nname = "p"\ndetect_holidays = true\n')
    with pytest.raises(InputError, match=r"site.toml:3: .*needs interactive_queues"):
        read_site(site)
