"""The independent checker: golden cases, corruption properties, brute-force
oracle, and the ``optsched check`` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import paths

from optsched.check import Violation, check_schedule
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io.native import write_native
from optsched.io.schedules import write_schedule
from optsched.schedule import Placement, Schedule

DATA = paths.DATA / "schedules"


def _instance(m: int, *jobs: Job, allocation: str = "any", blocks=()) -> Instance:
    return Instance(Machine(m, allocation, tuple(blocks)), jobs)


def _kinds(violations: list[Violation]) -> list[str]:
    return [v.kind for v in violations]


# --------------------------------------------------------------------------
# Golden cases: every message, job, time and processor asserted
# --------------------------------------------------------------------------

BLOCKED = _instance(
    4,
    Job(1, 0, 2, 10),
    Job(2, 2, 2, 4),
    Job(3, 0, 1, 3),
    Job(4, 5, 4, 1),
    blocks=[BusyBlock(0, 5, 1, label="down")],
)
BLOCKED_VALID = Schedule(
    {
        1: Placement(0, 10, (0, 1)),
        3: Placement(0, 3, (2,)),
        2: Placement(5, 9, (2, 3)),  # one processor is down until 5
        4: Placement(10, 11, (0, 1, 2, 3)),
    }
)


def test_valid_schedule_with_a_busy_block() -> None:
    assert check_schedule(BLOCKED, BLOCKED_VALID) == []
    # The same schedule without processor sets is valid too.
    counted = Schedule(
        {j: Placement(p.start, p.end) for j, p in BLOCKED_VALID.placements.items()}
    )
    assert check_schedule(BLOCKED, counted) == []


def test_missing_and_unknown_jobs() -> None:
    placements = dict(BLOCKED_VALID.placements)
    del placements[4]
    placements[99] = Placement(20, 21, (0,))
    violations = check_schedule(BLOCKED, Schedule(placements, killed=frozenset({77})))
    assert violations == [
        Violation("missing", "job 4 is not placed", job=4),
        Violation("unknown", "job 99 is placed but not in the instance", job=99),
        Violation("unknown", "job 77 is listed as killed but unknown", job=77),
    ]


def test_early_start() -> None:
    instance = _instance(2, Job(1, 5, 1, 3))
    assert check_schedule(instance, Schedule({1: Placement(4, 7, (0,))})) == [
        Violation(
            "early-start", "job 1 starts at 4 before its release 5", job=1, time=4
        )
    ]


def test_wrong_duration() -> None:
    instance = _instance(2, Job(1, 5, 1, 3))
    assert check_schedule(instance, Schedule({1: Placement(5, 9, (0,))})) == [
        Violation("duration", "job 1 runs [5, 9) = 4 s, expected 3 s", job=1, time=5)
    ]


def test_killed_jobs_run_for_their_estimate() -> None:
    instance = _instance(1, Job(1, 0, 1, 10, 6), Job(2, 0, 1, 3, 5))
    valid = Schedule(
        {1: Placement(0, 6, (0,)), 2: Placement(6, 9, (0,))}, killed=frozenset({1})
    )
    assert check_schedule(instance, valid) == []
    full_run = Schedule(
        {1: Placement(0, 10), 2: Placement(10, 13)}, killed=frozenset({1})
    )
    assert check_schedule(instance, full_run) == [
        Violation("duration", "job 1 runs [0, 10) = 10 s, expected 6 s", job=1, time=0)
    ]
    # Job 2's estimate (5) is not below its runtime (3): it cannot be killed.
    bad_kill = Schedule(
        {1: Placement(0, 10), 2: Placement(10, 13)}, killed=frozenset({2})
    )
    assert check_schedule(instance, bad_kill) == [
        Violation(
            "bad-kill",
            "job 2 is listed as killed but its estimate 5 is not below its runtime 3",
            job=2,
        )
    ]


def test_capacity_overrun_is_reported_once_where_it_begins() -> None:
    instance = _instance(4, Job(1, 0, 3, 10), Job(2, 0, 2, 3))
    schedule = Schedule({1: Placement(0, 10), 2: Placement(5, 8)})
    assert check_schedule(instance, schedule) == [
        Violation(
            "capacity",
            "5 processors in use at time 5, machine has 4 (jobs starting: [2])",
            job=2,
            time=5,
        )
    ]


def test_capacity_counts_busy_blocks() -> None:
    instance = _instance(4, Job(1, 0, 3, 2), blocks=[BusyBlock(0, 10, 2)])
    assert check_schedule(instance, Schedule({1: Placement(4, 6)})) == [
        Violation(
            "capacity",
            "5 processors in use at time 4, machine has 4 (jobs starting: [1])",
            job=1,
            time=4,
        )
    ]
    # A block starting under a running job: no job starts then.
    late_block = _instance(4, Job(1, 0, 3, 9), blocks=[BusyBlock(3, 10, 2)])
    assert check_schedule(late_block, Schedule({1: Placement(0, 9)})) == [
        Violation("capacity", "5 processors in use at time 3, machine has 4", time=3)
    ]


def test_half_open_intervals_touch_without_conflict() -> None:
    instance = _instance(4, Job(1, 0, 4, 5), Job(2, 0, 4, 4))
    schedule = Schedule(
        {1: Placement(0, 5, (0, 1, 2, 3)), 2: Placement(5, 9, (0, 1, 2, 3))}
    )
    assert check_schedule(instance, schedule) == []


def test_shared_processors() -> None:
    instance = _instance(4, Job(1, 0, 2, 10), Job(2, 0, 2, 3))
    schedule = Schedule({1: Placement(0, 10, (0, 1)), 2: Placement(5, 8, (1, 2))})
    assert check_schedule(instance, schedule) == [
        Violation(
            "processor-overlap",
            "job 2 and job 1 share processors [1] at time 5",
            job=2,
            time=5,
            processors=(1,),
        )
    ]


def test_job_on_a_busy_block_processor() -> None:
    instance = _instance(
        4,
        Job(1, 0, 2, 2),
        allocation="contiguous",
        blocks=[BusyBlock(0, 5, 1, 3, "down")],
    )
    assert check_schedule(instance, Schedule({1: Placement(2, 4, (2, 3))})) == [
        Violation(
            "processor-overlap",
            "job 1 and a busy block share processors [3] at time 2",
            job=1,
            time=2,
            processors=(3,),
        )
    ]


def test_processor_count_and_range() -> None:
    instance = _instance(4, Job(1, 0, 2, 1), Job(2, 0, 2, 1))
    schedule = Schedule({1: Placement(0, 1, (0,)), 2: Placement(0, 1, (3, 4))})
    assert check_schedule(instance, schedule) == [
        Violation(
            "processor-count",
            "job 1 has 1 distinct processors, its size is 2",
            job=1,
            time=0,
            processors=(0,),
        ),
        Violation(
            "processor-range",
            "job 2 uses processors [4] outside [0, 4)",
            job=2,
            time=0,
            processors=(4,),
        ),
    ]


def test_contiguous_machine_rules() -> None:
    instance = _instance(4, Job(1, 0, 2, 1), Job(2, 0, 1, 1), allocation="contiguous")
    schedule = Schedule({1: Placement(0, 1, (0, 2)), 2: Placement(0, 1)})
    assert check_schedule(instance, schedule) == [
        Violation(
            "not-contiguous",
            "job 1 uses non-consecutive processors on a contiguous machine",
            job=1,
            time=0,
            processors=(0, 2),
        ),
        Violation(
            "no-processors",
            "job 2 has no processors on a contiguous machine",
            job=2,
            time=0,
        ),
    ]


def test_empty_processor_set_on_a_contiguous_machine_does_not_crash() -> None:
    instance = _instance(4, Job(1, 0, 2, 1), allocation="contiguous")
    assert _kinds(check_schedule(instance, Schedule({1: Placement(0, 1, ())}))) == [
        "processor-count"
    ]


def test_violation_text() -> None:
    violation = Violation("capacity", "5 processors in use at time 4, machine has 4")
    assert str(violation) == "capacity: 5 processors in use at time 4, machine has 4"


# --------------------------------------------------------------------------
# Random valid schedules and their single-field corruptions
# --------------------------------------------------------------------------


def _free(
    busy: dict[int, list[tuple[int, int]]], proc: int, start: int, end: int
) -> bool:
    return all(e <= start or end <= s for s, e in busy.get(proc, []))


def _place(
    busy: dict[int, list[tuple[int, int]]],
    m: int,
    job: Job,
    duration: int,
    contiguous: bool,
) -> Placement:
    """Earliest start >= release with processors free for the whole run."""
    t = job.release
    while True:
        end = t + duration
        if contiguous:
            for offset in range(m - job.size + 1):
                procs = range(offset, offset + job.size)
                if duration == 0 or all(_free(busy, p, t, end) for p in procs):
                    break
            else:
                procs = range(0)
        else:
            free = [p for p in range(m) if duration == 0 or _free(busy, p, t, end)]
            procs = range(0) if len(free) < job.size else free[: job.size]  # type: ignore[assignment]
        if len(procs) == job.size:
            for p in procs:
                busy.setdefault(p, []).append((t, end))
            return Placement(t, end, tuple(procs))
        t += 1


@st.composite
def valid_pairs(draw: st.DrawFn) -> tuple[Instance, Schedule]:
    m = draw(st.integers(1, 6))
    contiguous = draw(st.booleans())
    busy: dict[int, list[tuple[int, int]]] = {}
    blocks = []
    for _ in range(draw(st.integers(0, 2))):
        size = draw(st.integers(1, m))
        start = draw(st.integers(0, 6))
        end = start + draw(st.integers(1, 6))
        offset = draw(st.integers(0, m - size))
        procs = range(offset, offset + size)
        if all(_free(busy, p, start, end) for p in procs):
            for p in procs:
                busy.setdefault(p, []).append((start, end))
            # Blocks are counts on "any" machines: the processors reserved
            # for them in `busy` only make the jobs respect the count.
            pinned = offset if contiguous else None
            blocks.append(BusyBlock(start, end, size, pinned, "block"))
    jobs, placements, killed = [], {}, set()
    for job_id in range(1, draw(st.integers(1, 7)) + 1):
        runtime = draw(st.integers(0, 6))
        job = Job(
            job_id,
            draw(st.integers(0, 8)),
            draw(st.integers(1, m)),
            runtime,
            draw(st.integers(0, 8)),
        )
        kill = job.requested < runtime and draw(st.booleans())
        duration = job.requested if kill else runtime
        if kill:
            killed.add(job_id)
        jobs.append(job)
        placements[job_id] = _place(busy, m, job, duration, contiguous)
    allocation = "contiguous" if contiguous else "any"
    instance = Instance(Machine(m, allocation, tuple(blocks)), tuple(jobs))
    return instance, Schedule(placements, "generator", frozenset(killed))


def _with(schedule: Schedule, job_id: int, placement: Placement) -> Schedule:
    return Schedule({**schedule.placements, job_id: placement}, "", schedule.killed)


def _flagged(violations: list[Violation], kind: str, job: int) -> bool:
    return any(v.kind == kind and v.job == job for v in violations)


@settings(max_examples=150, deadline=None)
@given(valid_pairs())
def test_valid_schedules_pass(pair: tuple[Instance, Schedule]) -> None:
    instance, schedule = pair
    assert check_schedule(instance, schedule) == []


@pytest.mark.parametrize("moved", ["start", "end"])
@settings(max_examples=150, deadline=None)
@given(valid_pairs(), st.data())
def test_a_moved_start_or_end_is_flagged(
    moved: str, pair: tuple[Instance, Schedule], data: st.DataObject
) -> None:
    # The job's start (or its end) moves by a non-zero delta, the other end
    # stays: its duration is wrong.
    instance, schedule = pair
    job_id = data.draw(st.sampled_from(sorted(schedule.placements)))
    p = schedule[job_id]
    delta = data.draw(st.integers(-5, 5).filter(bool))
    start, end = (
        (p.start + delta, p.end) if moved == "start" else (p.start, p.end + delta)
    )
    bad = _with(schedule, job_id, Placement(start, end, p.processors))
    assert _flagged(check_schedule(instance, bad), "duration", job_id)


@settings(max_examples=150, deadline=None)
@given(valid_pairs(), st.data())
def test_early_start_is_flagged(
    pair: tuple[Instance, Schedule], data: st.DataObject
) -> None:
    instance, schedule = pair
    released = [j for j in instance.jobs if j.release > 0]
    assume(released)
    job = data.draw(st.sampled_from(released))
    p = schedule[job.id]
    start = data.draw(st.integers(0, job.release - 1))
    bad = _with(schedule, job.id, Placement(start, start + p.duration, p.processors))
    violations = check_schedule(instance, bad)
    assert _flagged(violations, "early-start", job.id)
    assert not _flagged(violations, "duration", job.id)


def _overlapping_pairs(schedule: Schedule) -> list[tuple[int, int, int]]:
    """(i, j, processor of j not used by i) for jobs running at a common instant."""
    out = []
    for i, pi in schedule.placements.items():
        for j, pj in schedule.placements.items():
            if i == j or not pi.duration or not pj.duration:
                continue
            if pi.start < pj.end and pj.start < pi.end:
                assert pi.processors is not None and pj.processors is not None
                out += [(i, j, p) for p in pj.processors if p not in pi.processors]
    return out


# Most drawn schedules have no pair to corrupt (assume): by design, not
# a slow strategy, so Hypothesis's filtering health check does not apply.
CORRUPTING = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much],
)
"""Settings of the properties that look for a pair of jobs to corrupt."""


@CORRUPTING
@given(valid_pairs(), st.data())
def test_overlapping_processors_are_flagged(
    pair: tuple[Instance, Schedule], data: st.DataObject
) -> None:
    instance, schedule = pair
    candidates = _overlapping_pairs(schedule)
    assume(candidates)
    i, j, stolen = data.draw(st.sampled_from(candidates))
    p = schedule[i]
    assert p.processors is not None
    given_up = data.draw(st.sampled_from(p.processors))
    processors = tuple(sorted({*p.processors} - {given_up} | {stolen}))
    bad = _with(schedule, i, Placement(p.start, p.end, processors))
    violations = check_schedule(instance, bad)
    overlaps = [v for v in violations if v.kind == "processor-overlap"]
    assert any({v.job, i, j} == {i, j} and stolen in v.processors for v in overlaps)


def _usage(
    instance: Instance, schedule: Schedule, t: int, skip: int | None = None
) -> int:
    jobs = instance.jobs_by_id()
    used = sum(b.size for b in instance.machine.unavailable if b.start <= t < b.end)
    return used + sum(
        jobs[k].size
        for k, p in schedule.placements.items()
        if k != skip and p.start <= t < p.end
    )


@CORRUPTING
@given(valid_pairs(), st.data())
def test_capacity_overrun_is_flagged(
    pair: tuple[Instance, Schedule], data: st.DataObject
) -> None:
    instance, schedule = pair
    # Count-only placements on an "any" machine leave only the capacity rule
    # to catch the move.
    instance = instance.replace(machine=instance.machine.with_allocation("any"))
    counted = Schedule(
        {k: Placement(p.start, p.end) for k, p in schedule.placements.items()},
        killed=schedule.killed,
    )
    jobs = instance.jobs_by_id()
    times = {p.start for p in counted.placements.values()}
    times |= {b.start for b in instance.machine.unavailable}
    candidates = [
        (k, t)
        for k, p in counted.placements.items()
        if p.duration > 0
        for t in sorted(times)
        if _usage(instance, counted, t, skip=k) + jobs[k].size > instance.processors
    ]
    assume(candidates)
    k, t = data.draw(st.sampled_from(candidates))
    bad = _with(counted, k, Placement(t, t + counted[k].duration))
    violations = check_schedule(instance, bad)
    capacity = [v for v in violations if v.kind == "capacity"]
    assert capacity
    assert min(v.time for v in capacity if v.time is not None) <= t


# --------------------------------------------------------------------------
# Arbitrary schedules against a brute-force, instant-by-instant oracle
# --------------------------------------------------------------------------


@st.composite
def arbitrary_pairs(draw: st.DrawFn) -> tuple[Instance, Schedule]:
    m = draw(st.integers(1, 5))
    blocks = []
    if draw(st.booleans()):
        size = draw(st.integers(1, m))
        start = draw(st.integers(0, 8))
        # A count: blocks on "any" machines have no offset.
        blocks.append(BusyBlock(start, start + draw(st.integers(0, 6)), size))
    jobs, placements = [], {}
    for job_id in range(1, draw(st.integers(1, 6)) + 1):
        job = Job(
            job_id,
            draw(st.integers(0, 6)),
            draw(st.integers(1, m)),
            draw(st.integers(0, 5)),
        )
        jobs.append(job)
        start = draw(st.integers(0, 10))
        procs = draw(
            st.none()
            | st.lists(st.integers(0, m), min_size=1, max_size=m + 1).map(tuple)
        )
        placements[job_id] = Placement(start, start + draw(st.integers(0, 6)), procs)
    return Instance(Machine(m, "any", tuple(blocks)), tuple(jobs)), Schedule(placements)


@settings(max_examples=200, deadline=None)
@given(arbitrary_pairs())
def test_checker_agrees_with_a_brute_force_oracle(
    pair: tuple[Instance, Schedule],
) -> None:
    instance, schedule = pair
    jobs = instance.jobs_by_id()
    violations = check_schedule(instance, schedule)
    horizon = range(0, 20)

    overloaded = [
        t for t in horizon if _usage(instance, schedule, t) > instance.processors
    ]
    capacity_times = [v.time for v in violations if v.kind == "capacity"]
    assert bool(overloaded) == bool(capacity_times)
    if overloaded:
        assert min(capacity_times) == overloaded[0]  # type: ignore[type-var]

    shared: set[tuple[int, int]] = set()  # (time, processor)
    for t in horizon:
        owners: dict[int, set[object]] = {}
        for k, p in schedule.placements.items():
            if p.processors is not None and p.start <= t < p.end:
                for proc in p.processors:
                    owners.setdefault(proc, set()).add(k)
        for b in instance.machine.unavailable:
            if b.processors is not None and b.start <= t < b.end:
                for proc in b.processors:
                    owners.setdefault(proc, set()).add("block")
        shared |= {(t, proc) for proc, who in owners.items() if len(who) > 1}
    overlap = [v for v in violations if v.kind == "processor-overlap"]
    assert bool(shared) == bool(overlap)
    assert {proc for _, proc in shared} == {
        proc for v in overlap for proc in v.processors
    }

    for k, p in schedule.placements.items():
        job = jobs[k]
        assert _flagged(violations, "early-start", k) == (p.start < job.release)
        assert _flagged(violations, "duration", k) == (p.duration != job.runtime)
        if p.processors is not None:
            wrong_count = (
                len(set(p.processors)) != job.size or len(p.processors) != job.size
            )
            assert _flagged(violations, "processor-count", k) == wrong_count
            outside = any(not 0 <= q < instance.processors for q in p.processors)
            assert _flagged(violations, "processor-range", k) == outside


# --------------------------------------------------------------------------
# optsched check
# --------------------------------------------------------------------------


def _run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["check", *map(str, args)])


def test_cli_valid_schedule() -> None:
    for name in ("golden.csv", "golden_batsim.csv", "golden.json"):
        result = _run(DATA / "instance.json", DATA / name)
        assert result.exit_code == 0, result.output
        assert result.stdout == "OK: 4 jobs, schedule valid\n"


def test_cli_lists_every_violation_and_exits_1(tmp_path: Path) -> None:
    schedule = tmp_path / "bad.csv"
    schedule.write_text(
        "job_id,start,end,size,processors\n1,0,10,2,0-1\n2,0,6,2,1-2\n3,2,10,4,0-3\n"
    )
    result = _run(DATA / "instance.json", schedule)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "missing: job 4 is not placed",
        "duration: job 2 runs [0, 6) = 6 s, expected 5 s",
        "early-start: job 3 starts at 2 before its release 3",
        "capacity: 8 processors in use at time 2, machine has 4 (jobs starting: [3])",
        "processor-overlap: job 1 and job 2 share processors [1] at time 0",
        "processor-overlap: job 3 and job 1 share processors [0, 1] at time 2",
        "processor-overlap: job 3 and job 2 share processors [1, 2] at time 2",
        "INVALID: 7 violations (4 jobs)",
    ]


def test_cli_window_options_cut_the_instance_first(tmp_path: Path) -> None:
    # Jobs 3 and 4 (positions 2, 3) released at 3 and 4: rebased to 0 and 1.
    schedule = tmp_path / "window.csv"
    write_schedule(
        Schedule({3: Placement(0, 8, (0, 1, 2, 3)), 4: Placement(8, 8, (0,))}), schedule
    )
    result = _run(DATA / "instance.json", schedule, "--first-job", "2", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout == "OK: 2 jobs, schedule valid\n"
    result = _run(DATA / "instance.json", schedule)
    assert result.exit_code == 1
    assert "missing: job 1 is not placed" in result.stdout


def test_cli_caps_the_list_and_points_at_the_window(tmp_path: Path) -> None:
    # 100 jobs released every 10 s; the schedule of the window of positions
    # 40..44 (rebased to 0) checked against the whole instance: 95 missing
    # jobs and 5 early starts.
    whole = _instance(1, *(Job(k + 1, 10 * k, 1, 1) for k in range(100)))
    write_native(whole, tmp_path / "whole.json")
    schedule = tmp_path / "window.csv"
    write_schedule(
        Schedule({41 + i: Placement(10 * i, 10 * i + 1, (0,)) for i in range(5)}),
        schedule,
    )
    result = _run(tmp_path / "whole.json", schedule)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 22
    assert lines[:2] == ["missing: job 1 is not placed", "missing: job 2 is not placed"]
    assert lines[20:] == [
        "... and 80 more violations (2 kinds in all: missing 95, early-start 5; "
        "--all lists every one)",
        "INVALID: 100 violations (100 jobs)",
    ]
    assert result.stderr == (
        "hint: the schedule places only 5 of the 100 jobs, positions 40..44: "
        "check it against that window with --first-job 40 --jobs 5 "
        "(and --initial-state as when it was cut)\n"
    )
    window = _run(tmp_path / "whole.json", schedule, "--first-job", "40", "--jobs", "5")
    assert window.exit_code == 0, window.output
    for flag in (["--all"], ["--max-violations", "0"]):
        every = _run(tmp_path / "whole.json", schedule, *flag)
        assert every.exit_code == 1
        assert len(every.stdout.splitlines()) == 101
        assert "more violation" not in every.stdout
    three = _run(tmp_path / "whole.json", schedule, "--max-violations", "3")
    assert three.exit_code == 1
    assert three.stdout.splitlines()[3].startswith("... and 97 more violations")


def test_cli_hint_without_positions_inside_a_window(tmp_path: Path) -> None:
    whole = _instance(1, *(Job(k + 1, 10 * k, 1, 1) for k in range(10)))
    write_native(whole, tmp_path / "whole.json")
    schedule = tmp_path / "one.csv"
    write_schedule(Schedule({3: Placement(0, 1, (0,))}), schedule)
    result = _run(tmp_path / "whole.json", schedule, "--first-job", "2", "--jobs", "5")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "INVALID: 4 violations (5 jobs)"
    assert result.stderr == (
        "hint: the schedule places only 1 of the 5 jobs: check it against its "
        "window (--first-job/--jobs or --start/--end, and --initial-state as "
        "when it was cut)\n"
    )


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    schedule = tmp_path / "dup.csv"
    schedule.write_text("job_id,start,end\n1,0,10\n1,0,10\n")
    result = _run(DATA / "instance.json", schedule)
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"optsched: error: {schedule}:3: job 1 appears twice (first at line 2)\n"
    )
    assert result.stdout == ""
    missing = _run(tmp_path / "absent.json", DATA / "golden.csv")
    assert missing.exit_code == 2
    assert missing.stderr.count("\n") == 1


def test_cli_forced_schedule_format(tmp_path: Path) -> None:
    instance = _instance(2, Job(1, 0, 1, 5))
    write_native(instance, tmp_path / "i.json")
    write_schedule(Schedule({1: Placement(0, 5, (1,))}), tmp_path / "s.txt", "json")
    result = _run(tmp_path / "i.json", tmp_path / "s.txt", "--schedule-format", "json")
    assert result.exit_code == 0, result.output
    result = _run(tmp_path / "i.json", tmp_path / "s.txt", "--schedule-format", "csv")
    assert result.exit_code == 2


def test_cli_help_mentions_exit_codes_and_window_options() -> None:
    result = CliRunner().invoke(main, ["check", "--help"])
    assert result.exit_code == 0
    assert "Exit status: 0 when valid, 1 with violations, 2 on bad input." in " ".join(
        result.stdout.split()
    )
    assert "--first-job" in result.stdout and "--schedule-format" in result.stdout
