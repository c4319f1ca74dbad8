"""SWF out: schedules written as SWF logs, and read back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.builders import recorded_schedule
from support.paths import INSTANCES, trace_path

from optsched import __version__
from optsched.check import check_schedule
from optsched.cli import main
from optsched.heuristics import simulate
from optsched.instance import Instance, Job, Machine
from optsched.io.native import read_native
from optsched.io.schedules import SCHEDULE_WRITE_FORMATS, write_schedule
from optsched.io.swf import N_FIELDS, read_swf
from optsched.io.swf_out import write_swf
from optsched.schedule import Placement, Schedule
from optsched.windows.window import cut_window


def run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def job_lines(path: Path) -> list[list[int]]:
    lines = path.read_text().splitlines()
    return [[int(v) for v in x.split()] for x in lines if not x.startswith(";")]


def test_round_trip_of_a_simulated_window(tmp_path: Path) -> None:
    instance = read_native(INSTANCES / "kth_50.json").instance
    window = instance.source.window
    assert window is not None and window.shift > 0
    result = simulate(instance, "easy")
    assert check_schedule(instance, result.schedule) == []
    out = tmp_path / "easy.swf"
    write_schedule(result.schedule, out, "swf", instance)

    back = read_swf(out)
    assert back.skipped.total == 0 and back.records == 50
    assert back.instance.processors == instance.processors
    jobs = instance.jobs_by_id()
    assert [j.id for j in back.instance.jobs] == sorted(
        jobs, key=lambda i: (jobs[i].release, i)
    )
    for job in back.instance.jobs:
        original = jobs[job.id]
        assert (job.size, job.runtime, job.estimate, job.user, job.group) == (
            original.size,
            original.runtime,
            original.estimate,
            original.user,
            original.group,
        )
        # Submit times are back in the trace's time base.
        assert job.release == original.release + window.shift
        assert job.status == 1
    # The recorded schedule of the file read back is the written one,
    # shifted by the window's shift, and it is valid on what was read.
    schedule = recorded_schedule(back.instance)
    for job_id, placement in result.schedule.placements.items():
        assert schedule[job_id].start == placement.start + window.shift
        assert schedule[job_id].end == placement.end + window.shift
    assert check_schedule(back.instance, schedule) == []


def test_header_records_producer_policy_and_time_base(tmp_path: Path) -> None:
    instance = read_native(INSTANCES / "kth_50.json").instance
    out = tmp_path / "s.swf"
    write_schedule(simulate(instance, "easy").schedule, out, "swf", instance)
    text = out.read_text()
    head = [x for x in text.splitlines() if x.startswith(";")]
    assert head[0] == "; Version: 2.2"
    assert "; MaxProcs: 100" in head and "; MaxJobs: 50" in head
    assert f"; Note: written by optsched {__version__}, producer (policy) easy" in head
    assert any(re.match(r"; Note: submit time = release \+ 942933 ", x) for x in head)
    assert all(len(x) == N_FIELDS for x in job_lines(out))


def test_cli_simulate_writes_swf_and_info_reads_it_back(tmp_path: Path) -> None:
    out = tmp_path / "out.swf"
    result = run("simulate", INSTANCES / "kth_50.json", "-p", "easy", "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("; Version: 2.2\n")
    info = run("info", out)
    assert info.exit_code == 0, info.output
    assert re.search(r"jobs kept\s+│ 50 ", info.output)
    assert re.search(r"completed\s+│\s+1 │\s+50 │\s+50 │", info.output)
    # Any name with --schedule-format swf.
    named = tmp_path / "schedule.txt"
    forced = run(
        "simulate", INSTANCES / "kth_20.json", "-o", named, "--schedule-format", "swf"
    )
    assert forced.exit_code == 0, forced.output
    assert len(job_lines(named)) == 20
    assert "swf" in SCHEDULE_WRITE_FORMATS


def test_real_trace_window_keeps_the_trace_header(tmp_path: Path) -> None:
    trace = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf"))
    window = cut_window(trace, first_job=1000, jobs=40)
    result = simulate(window, "fcfs")
    out = tmp_path / "w.swf"
    write_swf(result.schedule, out, window, header=trace.header)
    text = out.read_text()
    assert "; Computer: IBM SP2" in text
    assert f"; UnixStartTime: {trace.header['UnixStartTime']}\n" in text
    back = read_swf(out)
    originals = trace.instance.jobs_by_id()
    for job in back.instance.jobs:
        # Same submit time and job number as in the original trace.
        assert job.release == originals[job.id].release
        assert job.runtime == originals[job.id].runtime
    assert len(back.instance.jobs) == 40
    assert check_schedule(back.instance, recorded_schedule(back.instance)) == []


def test_killed_and_unplaced_jobs(tmp_path: Path) -> None:
    instance = Instance(
        Machine(4),
        (
            Job(1, 0, 2, 10, estimate=5, user=3),
            Job(2, 1, 1, 4),
            Job(3, 2, 1, 4),
        ),
        name="k",
    )
    schedule = Schedule(
        {1: Placement(0, 5), 2: Placement(3, 7)}, producer="easy\nkill", killed={1}
    )
    out = tmp_path / "k.swf"
    write_swf(schedule, out, instance)
    assert job_lines(out) == [
        [1, 0, 0, 5, 2, -1, -1, 2, 5, -1, 0, 3, -1, -1, -1, -1, -1, -1],
        [2, 1, 2, 4, 1, -1, -1, 1, 4, -1, 1, -1, -1, -1, -1, -1, -1, -1],
        [3, 2, -1, -1, -1, -1, -1, 1, 4, -1, 5, -1, -1, -1, -1, -1, -1, -1],
    ]
    # The producer's line break is escaped: the comment stays one line.
    assert "producer (policy) easy\\nkill\n" in out.read_text()
    back = read_swf(out)
    assert [j.id for j in back.instance.jobs] == [1, 2]  # job 3 never ran
    assert back.instance.job(1).status == 0


def test_unknown_job_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    instance = Instance(Machine(2), (Job(1, 0, 1, 3),))
    out = tmp_path / "x.swf"
    with pytest.raises(ValueError, match="job 9 is placed but not in the instance"):
        write_swf(Schedule({9: Placement(0, 3)}), out, instance)
    with pytest.raises(ValueError, match="the swf format needs the instance"):
        write_schedule(Schedule({1: Placement(0, 3)}), out, "swf")
    assert list(tmp_path.iterdir()) == []


def test_bound_writes_its_optimal_schedule_as_swf(tmp_path: Path) -> None:
    from optsched.io.native import write_native

    jobs = (Job(1, 0, 2, 3), Job(2, 0, 1, 2), Job(3, 1, 1, 4, estimate=9))
    path = tmp_path / "i.json"
    write_native(Instance(Machine(2), jobs, name="tiny"), path)
    out = tmp_path / "best.swf"
    result = run(
        "bound", path, "--objective", "cmax", "--time-limit", "10",
        "--schedule-out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("; Version: 2.2\n")
    back = read_swf(out)
    assert [(j.id, j.size, j.runtime, j.estimate) for j in back.instance.jobs] == [
        (1, 2, 3, 3),
        (2, 1, 2, 2),
        (3, 1, 4, 9),
    ]
    schedule = recorded_schedule(back.instance)
    assert check_schedule(back.instance, schedule) == []
    assert max(p.end for p in schedule.placements.values()) == 7
