"""Machine outages: the simulator kills and requeues, the checker judges the
lost attempts (rule 13), the formats keep them, the models see blocks."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import (
    draw_jobs,
    random_calendar,
    random_site_jobs,
    simulate_checked,
)
from support.simulation import lost_of, run_checked, runs_of, spans_of

from optsched.calendar import Calendar, Period
from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io.schedules import schedule_from_json, schedule_to_dict
from optsched.schedule import Placement, Schedule

# Two jobs of 2 on 4 processors from time 0, a third arriving at 1; an
# outage takes 2 processors during [5, 8).
JOBS = (Job(1, 0, 2, 10), Job(2, 0, 2, 10), Job(3, 1, 2, 3))


def test_outage_kills_the_last_started_job_and_requeues_it() -> None:
    # At 5 all 4 processors are busy: the outage needs 2, so one job dies;
    # both started at 0, the later job (2) goes. It lost [0, 5) and waits,
    # ahead of job 3 in FCFS order: it restarts at 8 when the outage ends,
    # and job 3 takes job 1's processors at 10.
    instance = Instance(Machine(4, outages=(BusyBlock(5, 8, 2, label="down"),)), JOBS)
    for policy in ("fcfs", "easy", "firstfit"):
        result = simulate(instance, policy)
        assert spans_of(result.schedule) == {1: (0, 10), 2: (8, 18), 3: (10, 13)}
        assert lost_of(result.schedule) == {2: [(0, 5)]}
        assert (result.stats.outage_kills, result.stats.lost_area) == (1, 10)
        assert check_schedule(instance, result.schedule) == []
    # Conservative: job 3 holds a reservation at 10 made before job 2 came
    # back; compression then moves it to 8 (the outage's end), and job 2,
    # reserved behind it, starts at 10.
    schedule = run_checked(instance, "conservative")
    assert spans_of(schedule) == {1: (0, 10), 2: (10, 20), 3: (8, 11)}


def test_contiguous_outage_kills_the_jobs_on_its_processors() -> None:
    # Job 1 holds 0-1, job 2 holds 2-3; the outage takes processor 3 only.
    # Job 2 dies although processor... none is idle; job 1 runs on.
    machine = Machine(4, "contiguous", outages=(BusyBlock(5, 8, 1, offset=3),))
    instance = Instance(machine, JOBS)
    schedule = run_checked(instance, "fcfs")
    assert runs_of(schedule) == {
        1: (0, 10, (0, 1)), 2: (8, 18, (2, 3)), 3: (10, 13, (0, 1))
    }  # fmt: skip
    assert [(r.start, r.end, tuple(r.processors or ())) for r in schedule.lost[2]] == [
        (0, 5, (2, 3))
    ]


def test_idle_processors_go_down_first() -> None:
    # One job of 2 on 4 processors: an outage of 2 finds them idle.
    instance = Instance(
        Machine(4, outages=(BusyBlock(5, 8, 2),)), (Job(1, 0, 2, 10), Job(2, 6, 4, 1))
    )
    result = simulate(instance, "fcfs")
    assert result.schedule.lost == {}
    # Job 2 needs the whole machine: after the outage and job 1, at 10.
    assert spans_of(result.schedule) == {1: (0, 10), 2: (10, 11)}
    assert check_schedule(instance, result.schedule) == []


def test_whole_machine_downtime_kills_everything_mallmann() -> None:
    # Mallmann's downtimes stop every running job; they run again, whole,
    # after it (a job never resumes where it was).
    outage = BusyBlock(4, 6, 4)
    instance = Instance(Machine(4, outages=(outage,)), JOBS)
    schedule = run_checked(instance, "fcfs")
    assert lost_of(schedule) == {1: [(0, 4)], 2: [(0, 4)]}
    assert spans_of(schedule) == {1: (6, 16), 2: (6, 16), 3: (16, 19)}


def test_a_job_killed_twice_records_both_attempts() -> None:
    outages = (BusyBlock(3, 4, 2), BusyBlock(9, 10, 2))
    instance = Instance(Machine(2, outages=outages), (Job(1, 0, 2, 6),))
    schedule = run_checked(instance, "easy")
    assert lost_of(schedule) == {1: [(0, 3), (4, 9)]}
    assert spans_of(schedule) == {1: (10, 16)}


def test_chain_successor_waits_for_the_complete_run() -> None:
    jobs = (Job(1, 0, 2, 10), Job(2, 0, 2, 5, preceding_job=1, think_time=1))
    instance = Instance(Machine(2, outages=(BusyBlock(4, 6, 2),)), jobs)
    schedule = run_checked(instance, "fcfs")
    # Job 1 dies at 4, runs again [6, 16); its successor arrives at 17.
    assert spans_of(schedule) == {1: (6, 16), 2: (17, 22)}


def test_outage_counts_as_held_under_a_calendar() -> None:
    # Batch capacity 3 of 4 all the time: during the outage (1 processor
    # down) a job of 2 beside a running job of 1 would hold 1 + 1 + 2 = 4.
    calendar = Calendar((Period(tuple(range(8)), 0, 86400, 3, None),))
    machine = Machine(4, calendar=calendar, outages=(BusyBlock(2, 6, 1),))
    jobs = (Job(1, 0, 1, 10), Job(2, 3, 2, 2))
    instance = Instance(machine, jobs)
    schedule = run_checked(instance, "fcfs")
    assert spans_of(schedule) == {1: (0, 10), 2: (6, 8)}


# -- the checker -------------------------------------------------------------


def _instance() -> Instance:
    return Instance(Machine(4, outages=(BusyBlock(5, 8, 2),)), JOBS)


def _valid() -> Schedule:
    return Schedule(
        {1: Placement(0, 10), 2: Placement(8, 18), 3: Placement(10, 13)},
        lost={2: (Placement(0, 5),)},
    )


def _kinds(schedule: Schedule) -> list[tuple[str, int | None, int | None]]:
    return [(v.kind, v.job, v.time) for v in check_schedule(_instance(), schedule)]


def test_checker_accepts_the_simulated_schedule() -> None:
    assert _kinds(_valid()) == []


def test_checker_wants_the_killed_run_recorded() -> None:
    # Without its lost attempt, job 2 would run across the outage... it did
    # not: [8, 18) is its only run, and nothing held processors before 5 but
    # job 1. That is a valid schedule too (the job was never started early).
    ok = Schedule(dict(_valid().placements))
    assert _kinds(ok) == []
    # Job 2 running [0, 10) right through the outage: 2 + 2 + 2 > 4.
    through = Schedule({1: Placement(0, 10), 2: Placement(0, 10), 3: Placement(10, 13)})
    assert ("capacity", None, 5) in [(k, None, t) for k, _, t in _kinds(through)]


def test_checker_rejects_bad_attempts() -> None:
    base = dict(_valid().placements)
    # Ends when no outage starts.
    late = Schedule(base, lost={2: (Placement(0, 6),)})
    assert ("outage", 2, 6) in _kinds(late)
    # As long as the job's run: it completed, it was not lost.
    full = Schedule({**base, 2: Placement(15, 25)}, lost={2: (Placement(-5, 5),)})
    assert any(k == "outage" and "full run" in m for k, m in _messages(full))
    # The complete run starts before the attempt ends.
    early = Schedule({**base, 2: Placement(4, 14)}, lost={2: (Placement(0, 5),)})
    assert any("before its lost attempt ends" in m for _, m in _messages(early))
    # A kill that was not needed: job 3's attempt alone at 5 leaves 2 idle
    # processors for the outage.
    needless = Schedule(
        {1: Placement(8, 18), 2: Placement(8, 18), 3: Placement(18, 21)},
        lost={3: (Placement(1, 5),)},
    )
    assert any("idle processors hold" in m for _, m in _messages(needless))
    # An unknown job.
    stray = Schedule(base, lost={9: (Placement(0, 5),)})
    assert ("outage", 9, None) in _kinds(stray)


def test_checker_judges_attempts_like_jobs() -> None:
    # The attempt overlaps job 1 and job 3 beyond the machine: 2 + 2 + 2 at 1.
    crowded = Schedule(
        {1: Placement(0, 10), 2: Placement(8, 18), 3: Placement(1, 4)},
        lost={2: (Placement(0, 5),)},
    )
    messages = _messages(crowded)
    assert any(k == "capacity" for k, _ in messages)
    # Named processors: the attempt shares processor 0 with job 1.
    shared = Schedule(
        {1: Placement(0, 10, (0, 1)), 2: Placement(8, 18, (2, 3)),
         3: Placement(10, 13, (0, 1))},
        lost={2: (Placement(0, 5, (1, 2)),)},
    )  # fmt: skip
    assert any("lost attempt 1" in m for _, m in _messages(shared))


def _messages(schedule: Schedule) -> list[tuple[str, str]]:
    return [(v.kind, v.message) for v in check_schedule(_instance(), schedule)]


# -- formats and models ---------------------------------------------------------


def test_json_and_csv_keep_lost_attempts_and_batsim_refuses_them(
    tmp_path: Path,
) -> None:
    from optsched.io.schedules import read_schedule, write_schedule

    schedule = simulate(_instance(), "fcfs").schedule
    text = json.dumps(schedule_to_dict(schedule))
    again = schedule_from_json(text)
    assert again == schedule
    assert lost_of(again) == {2: [(0, 5)]}
    # CSV: one row per run, the killed one with lost = 1.
    path = tmp_path / "s.csv"
    write_schedule(schedule, path, "csv", instance=_instance())
    rows = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    assert rows[0] == "job_id,start,end,size,processors,lost"
    assert "2,0,5,2,2-3,1" in rows and "2,8,18,2,2-3,0" in rows
    assert read_schedule(path) == schedule
    # Two killed runs of one job, contiguous machine with migration: both
    # attempts come back in order.
    twice = Instance(
        Machine(2, outages=(BusyBlock(3, 4, 2), BusyBlock(9, 10, 2))),
        (Job(1, 0, 2, 6),),
    )
    killed_twice = simulate(twice, "easy").schedule
    write_schedule(killed_twice, path, "csv", instance=twice)
    assert lost_of(read_schedule(path)) == {1: [(0, 3), (4, 9)]}
    with pytest.raises(ValueError, match="killed by outages"):
        write_schedule(
            schedule, tmp_path / "b_jobs.csv", "batsim", instance=_instance()
        )


def test_csv_lost_attempts_with_gaps_are_refused(tmp_path: Path) -> None:
    from optsched.errors import InputError
    from optsched.io.schedules import read_schedule

    path = tmp_path / "s.csv"
    path.write_text(
        "job_id,start,end,size,processors,lost\n1,0,3,2,0-1,2\n1,4,10,2,0-1,0\n"
    )
    with pytest.raises(InputError, match=r"s.csv:2: job 1: lost attempts are numbered"):
        read_schedule(path)


def test_native_instance_keeps_outages(tmp_path: Path) -> None:
    from optsched.io.native import read_native, write_native

    path = tmp_path / "i.json"
    write_native(_instance(), path)
    assert read_native(path).instance.machine.outages == _instance().machine.outages


def test_models_know_outages_in_advance() -> None:
    from optsched.models import Incumbent, solve

    instance = _instance()
    simulated = simulate(instance, "fcfs").schedule
    result = solve(
        instance,
        "cmax",
        time_limit=10,
        workers=1,
        incumbents=[Incumbent("policy:fcfs", simulated)],
    )
    # Offline the outage is a block. Two jobs of 10 s both started before 5
    # would both run through [5, 8), when only 2 processors are up: one of
    # them starts at 8 or later, so C_max >= 18, and 1 [0, 10), 3 [1, 4),
    # 2 [8, 18) reaches it. The FCFS schedule (lost attempt dropped) is
    # also 18, a valid incumbent.
    assert result.status.name == "OPTIMAL" and result.objective == 18
    assert result.lower_bound == 18
    assert result.rejected == ()
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []


# -- properties --------------------------------------------------------------

POLICIES = ("fcfs", "easy", "conservative", "firstfit", "backfill:depth=2", "lpt")


@st.composite
def _outage_instances(draw: st.DrawFn) -> tuple[Instance, bool]:
    m = draw(st.integers(2, 6))
    contiguous = draw(st.booleans())
    jobs = draw_jobs(
        draw,
        m,
        (1, 7),
        release=15,
        runtime=12,
        estimate=lambda run: st.integers(max(run - 3, 0), run + 5),
    )
    outages = []
    busy_until = 0
    for _ in range(draw(st.integers(0, 3))):
        start = busy_until + draw(st.integers(0, 8))
        end = start + draw(st.integers(1, 6))
        size = draw(st.integers(1, m))
        offset = draw(st.integers(0, m - size)) if contiguous else None
        outages.append(BusyBlock(start, end, size, offset))
        busy_until = end  # one outage at a time keeps them within m
    machine = Machine(m, "contiguous" if contiguous else "any", outages=tuple(outages))
    return Instance(machine, tuple(jobs)), contiguous


@settings(max_examples=60, deadline=None)
@given(
    case=_outage_instances(),
    policy=st.sampled_from(POLICIES),
    kill=st.booleans(),
    migration=st.booleans(),
)
def test_simulated_outage_schedules_pass_the_checker(
    case: tuple[Instance, bool], policy: str, kill: bool, migration: bool
) -> None:
    instance, contiguous = case
    result = simulate(
        instance,
        policy,
        kill_at_estimate=kill,
        migration=migration and contiguous,
        allocation_rule="best-fit" if contiguous else "first-fit",
    )
    schedule = result.schedule
    assert check_schedule(instance, schedule) == []
    runs = [r for attempts in schedule.lost.values() for r in attempts]
    assert len(runs) == result.stats.outage_kills
    sizes = {job.id: job.size for job in instance.jobs}
    assert result.stats.lost_area == sum(
        sizes[j] * (r.end - r.start) for j, rs in schedule.lost.items() for r in rs
    )
    # Offline, the same complete runs are a schedule of the machine whose
    # outages are busy blocks.
    offline = instance.replace(machine=instance.machine.offline())
    assert check_schedule(offline, schedule.without_lost()) == []


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    policy=st.sampled_from(["fcfs", "easy", "conservative", "firstfit", "ljf"]),
    allocation=st.sampled_from(["any", "contiguous"]),
)
def test_outages_with_calendars_queues_and_chains(
    seed: int, policy: str, allocation: str
) -> None:
    # Everything at once: a random calendar with sequential and anytime
    # queues, chains, and outages (whole-machine and partial) over 3 days.
    rng = random.Random(seed)
    m, day = 16, 86_400
    calendar = dataclasses.replace(
        random_calendar(rng, m),
        sequential_queues=frozenset({1} if rng.random() < 0.5 else ()),
        anytime_queues=frozenset({2} if rng.random() < 0.5 else ()),
    )
    jobs = random_site_jobs(rng, m, 3 * day, queues=(None, 1, 2), chained=0.3)
    outages, t = [], 0
    for _ in range(rng.randrange(0, 5)):
        t += rng.randrange(0, day)
        size = m if rng.random() < 0.4 else rng.randrange(1, m)
        offset = rng.randrange(0, m - size + 1) if allocation == "contiguous" else None
        end = t + rng.randrange(60, 4 * 3600)
        outages.append(BusyBlock(t, end, size, offset))
        t = end
    machine = Machine(m, allocation, calendar=calendar, outages=tuple(outages))
    instance = Instance(machine, tuple(jobs))
    simulate_checked(instance, policy)


# -- site files ----------------------------------------------------------------


def _site_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text)
    return path


def test_site_outages_in_seconds_and_dates(tmp_path: Path) -> None:
    from optsched.instance import Window
    from optsched.site.files import apply_site, read_site

    # Time 0 is Monday 1997-03-03 01:00 (monday_offset 3600): the dated
    # outage on Tuesday 10:15-10:45 is at 1 day + 9 h 15 min of trace time.
    site = read_site(
        _site_file(
            tmp_path,
            '[site]\nprocessors = 8\nmonday_offset = 3600\nstart_date = "1997-03-03"\n'
            "[[outage]]\nstart = 100\nduration = 50\nprocessors = 4\n"
            '[[outage]]\nfrom = "1997-03-04 10:15"\nto = "1997-03-04T10:45"\n',
        )
    )
    assert [(o.start, o.end, o.processors) for o in site.outages] == [
        (100, 150, 4),
        (86_400 + 9 * 3600 + 900, 86_400 + 9 * 3600 + 2700, None),
    ]
    # On a machine of 4 (half the site), in a window shifted by 120 s: the
    # first outage is cut at the window's 0 and scaled to 2 processors, the
    # second takes the whole machine.
    instance = Instance(Machine(4), (Job(1, 0, 1, 10),))
    window = Window(first_job=0, jobs=1, start=120, end=None, shift=120)
    instance = instance.replace(source=instance.source.__class__(window=window))
    placed, note = apply_site(instance, site)
    assert note is not None and "scaled" in note
    assert [(o.start, o.end, o.size) for o in placed.machine.outages] == [
        (0, 30, 2),
        (86_400 + 9 * 3600 + 900 - 120, 86_400 + 9 * 3600 + 2700 - 120, 4),
    ]


@pytest.mark.parametrize(
    ("body", "line", "reason"),
    [
        ("[[outage]]\nstart = 5\n", 1, "needs an end"),
        ("[[outage]]\nstart = 5\nend = 9\nspeed = 2\n", 4, "unknown key 'speed'"),
        (
            '[[outage]]\nfrom = "1997-03-04 10:15"\nend = 9\n',
            2,
            "needs [site] start_date",
        ),
        ("[[outage]]\nstart = 5\nend = 3\n", 3, "not before its start"),
        ("[[outage]]\nstart = 5\nend = 9\nprocessors = 0\n", 4, "processors"),
        ("[[outage]]\nend = 9\n", 1, "needs start"),
    ],
)
def test_bad_site_outages_name_their_line(
    tmp_path: Path, body: str, line: int, reason: str
) -> None:
    from optsched.errors import InputError
    from optsched.site.files import read_site

    path = _site_file(tmp_path, body)
    with pytest.raises(InputError) as caught:
        read_site(path)
    assert str(caught.value).startswith(f"{path}:{line}:")
    assert reason in str(caught.value)


def test_gantt_draws_outages_and_lost_attempts() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from optsched.plot.gantt import gantt

    instance = Instance(Machine(4, outages=(BusyBlock(5, 8, 2, label="down"),)), JOBS)
    ax = gantt(instance, simulate(instance, "fcfs").schedule)
    gids = sorted({p.get_gid() for p in ax.patches if p.get_gid()})
    assert gids == ["busy down", "job 1", "job 2", "job 3", "lost 2"]
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_an_attempt_on_too_few_processors_is_caught() -> None:
    # Job 2 (2 processors) claims a lost attempt on one processor.
    short = Schedule(
        {1: Placement(0, 10, (0, 1)), 2: Placement(8, 18, (2, 3)),
         3: Placement(10, 13, (0, 1))},
        lost={2: (Placement(0, 5, (2,)),)},
    )  # fmt: skip
    messages = [v.message for v in check_schedule(_instance(), short)]
    assert any("job 2 (lost attempt 1)" in m for m in messages), messages
