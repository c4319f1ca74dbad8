"""Batsim in and out: procset intervals, JSON workloads, out_schedule.csv,
evalys job sets, and the schedule format chosen from the output's name."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from procset import ProcInt, ProcSet
from support.paths import REPO
from support.refusals import refusal

from optsched.check import check_schedule
from optsched.cli import main
from optsched.heuristics import parse_policy, simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io import detect_format, read, read_schedule, read_trace
from optsched.io.batsim import (
    SUMMARY_COLUMNS,
    format_resources,
    parse_resources,
    processors_of,
    procset_of,
    summary_path,
    write_batsim_workload,
)
from optsched.io.native import write_native
from optsched.io.schedules import schedule_format_for, write_schedule
from optsched.metrics import summarize
from optsched.schedule import Placement, ProcessorSet, Schedule

ROOT = REPO
KTH_20 = ROOT / "instances" / "kth_20.json"


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _one_line_error(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# --------------------------------------------------------------------------
# Processor sets: the procset convention
# --------------------------------------------------------------------------

runs_strategy = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 5)), min_size=1, max_size=8
).map(lambda pairs: [(a, a + w) for a, w in pairs])


@settings(max_examples=80, deadline=None)
@given(runs_strategy)
def test_intervals_are_procsets(runs: list[tuple[int, int]]) -> None:
    expected = ProcSet(*(ProcInt(a, b) for a, b in runs))
    text = " ".join(f"{a}-{b}" for a, b in runs)
    parsed = parse_resources(text)
    assert parsed is not None
    # Same set as procset's parser; repeats kept for the checker.
    assert parsed.merged() == [tuple(i) for i in ProcSet.from_str(text).intervals()]
    assert len(parsed) == sum(b - a + 1 for a, b in runs)
    distinct = ProcessorSet(parsed.merged())
    assert format_resources(distinct) == str(expected)
    assert format_resources(tuple(distinct)) == str(expected)
    assert procset_of(parsed) == expected
    assert processors_of(expected) == distinct


def test_huge_ranges_stay_intervals() -> None:
    parsed = parse_resources("0-9007199254740991 9007199254740992")
    assert parsed is not None and parsed.runs == ((0, 2**53),)
    assert len(parsed) == 2**53 + 1
    assert str(procset_of(parsed)) == "0-9007199254740992"


def test_many_intervals_are_read_in_linear_time() -> None:
    # ProcSet.from_str merges intervals one at a time: 16,000 take minutes.
    text = " ".join(str(2 * i) for i in range(50_000))
    parsed = parse_resources(text)
    assert parsed is not None and len(parsed.runs) == 50_000
    assert format_resources(parsed) == text
    few = parse_resources(" ".join(str(2 * i) for i in range(5_000)))
    assert few is not None and len(list(procset_of(few).intervals())) == 5_000


def test_repeated_processors_are_kept_for_the_checker() -> None:
    parsed = parse_resources("0-3 2")
    assert parsed == (0, 1, 2, 2, 3)
    instance = Instance(Machine(8), (Job(1, 0, 5, 10),))
    violations = check_schedule(instance, Schedule({1: Placement(0, 10, parsed)}))
    assert violations


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("+1", "bad processor intervals '+1'"),
        ("1_0", "bad processor intervals '1_0'"),
        ("\u0663", "bad processor intervals '\u0663'"),
        ("5-3", "bad processor intervals '5-3'"),
        ("0-9007199254740993", "a processor index in '0-9007199254740993' is beyond"),
        ("1" * 5000, "bad processor intervals '11111"),
    ],
)
def test_bad_allocated_resources_are_one_line(
    tmp_path: Path, cell: str, reason: str
) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(
        f"job_id,starting_time,finish_time,allocated_resources\n1,0,10,{cell}\n"
    )
    message = refusal(read_schedule, path)
    assert message.startswith(f"{path}:2: allocated_resources: {reason}")


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------


def _fields(instance: Instance) -> list[tuple[int, int, int, int, int | None]]:
    return [(j.id, j.release, j.size, j.runtime, j.estimate) for j in instance.jobs]


def test_kth_20_round_trips_through_a_batsim_workload(tmp_path: Path) -> None:
    instance = read(KTH_20)
    path = tmp_path / "w_batsim.json"
    write_batsim_workload(instance, path)
    data = json.loads(path.read_text())
    assert data["nb_res"] == 100
    assert all(isinstance(job["id"], str) for job in data["jobs"])
    assert {p["type"] for p in data["profiles"].values()} == {"delay"}
    # One profile per distinct run time, shared between jobs.
    assert len(data["profiles"]) == len({j.runtime for j in instance.jobs})
    assert detect_format(path) == "json"
    trace = read_trace(path)
    back = trace.instance
    assert back.source.format == "batsim"
    assert _fields(back) == _fields(instance)
    assert back.machine == instance.machine
    assert trace.estimates_missing == 0
    # The native file is still read as native.
    assert read_trace(KTH_20).instance.source.format != "batsim"


def test_batsim_workload_as_other_tools_write_it(tmp_path: Path) -> None:
    # Sorted keys (nb_res after jobs), float times, ids with a workload
    # prefix or as numbers, no walltime or -1, extra fields.
    path = tmp_path / "w.json"
    data = {
        "description": "generated",
        "jobs": [
            {"id": "w0!3", "profile": "a", "res": 2, "subtime": 10.0},
            {"id": 4, "profile": "b", "res": 1, "subtime": 12, "walltime": -1},
            {"id": "5", "profile": "a", "res": 4, "subtime": 12, "walltime": 100.0,
             "user": "bob"},
        ],
        "nb_res": 4,
        "profiles": {"a": {"type": "delay", "delay": 30.0}, "b": {"type": "delay",
                     "delay": 7}, "unused": {"type": "parallel", "cpu": 1}},
    }  # fmt: skip
    path.write_text(json.dumps(data, sort_keys=True, indent=1))
    trace = read_trace(path)
    assert _fields(trace.instance) == [
        (3, 10, 2, 30, 30),
        (4, 12, 1, 7, 7),
        (5, 12, 4, 30, 100),
    ]
    assert trace.estimates_missing == 2
    assert trace.instance.processors == 4


def _workload(tmp_path: Path, job: dict, profiles: dict | None = None) -> Path:
    path = tmp_path / "w.json"
    data = {
        "nb_res": 4,
        "jobs": [job],
        "profiles": profiles or {"p": {"type": "delay", "delay": 5}},
    }
    path.write_text(json.dumps(data, indent=2))
    return path


JOB = {"id": "17", "subtime": 0, "walltime": 10, "res": 2, "profile": "p"}


@pytest.mark.parametrize(
    ("job", "profiles", "line", "reason"),
    [
        (
            JOB,
            {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
            13,
            "jobs[0] (id '17'): profile 'p' has type 'parallel_homogeneous': only "
            "'delay' profiles give a run time optsched can use",
        ),
        (
            {**JOB, "subtime": 1.5},
            None,
            6,
            "jobs[0] (id '17'): subtime: expected whole seconds, got 1.5 "
            "(optsched times are integer seconds)",
        ),
        ({**JOB, "res": 5}, None, 8, "jobs[0] (id 17): res 5 exceeds nb_res 4"),
        (
            {**JOB, "id": "abc"},
            None,
            5,
            "jobs[0]: id: expected an integer job id (or 'workload!17'), got 'abc'",
        ),
        (
            {**JOB, "profile": "q"},
            None,
            9,
            "jobs[0] (id '17'): profile 'q' is not in 'profiles'",
        ),
    ],
)
def test_bad_workloads_give_one_line_and_status_2(
    tmp_path: Path, job: dict, profiles: dict | None, line: int, reason: str
) -> None:
    path = _workload(tmp_path, job, profiles)
    assert refusal(read, path) == f"{path}:{line}: {reason}"
    code, _, stderr = _cli("info", str(path))
    assert code == 2
    assert _one_line_error(stderr) == f"optsched: error: {path}:{line}: {reason}"


def test_workload_refuses_busy_blocks_and_leaves_no_file(tmp_path: Path) -> None:
    machine = Machine(4, unavailable=(BusyBlock(0, 10, 2),))
    instance = Instance(machine, (Job(1, 0, 2, 5),))
    path = tmp_path / "w.json"
    with pytest.raises(ValueError, match="cannot hold the 1 busy block"):
        write_batsim_workload(instance, path)
    assert list(tmp_path.iterdir()) == []


def test_window_writes_a_batsim_workload(tmp_path: Path) -> None:
    out = tmp_path / "w_batsim.json"
    code, _, stderr = _cli(
        "window", str(KTH_20), "--first-job", "0", "--jobs", "5",
        "--workload-format", "batsim", "-o", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    assert "nb_res" in json.loads(out.read_text())
    assert _fields(read(out)) == _fields(read(KTH_20))[:5]
    native = tmp_path / "w.json"
    code, _, _ = _cli(
        "window", str(KTH_20), "--first-job", "0", "--jobs", "5", "-o", str(native)
    )
    assert code == 0
    assert json.loads(native.read_text())["format"] == "optsched-instance"


# --------------------------------------------------------------------------
# out_schedule.csv beside out_jobs.csv
# --------------------------------------------------------------------------


def test_summary_path() -> None:
    assert summary_path("x/out_jobs.csv") == Path("x/out_schedule.csv")
    assert summary_path("x/easy_JOBS.csv") == Path("x/easy_schedule.csv")
    assert summary_path("x/jobs.csv") is None
    assert summary_path("x/s.csv") is None


def test_simulate_writes_out_schedule_csv(tmp_path: Path) -> None:
    jobs_csv = tmp_path / "out_jobs.csv"
    code, stdout, stderr = _cli(
        "simulate", str(KTH_20), "-p", "easy", "-o", str(jobs_csv)
    )
    assert code == 0, stderr
    summary_csv = tmp_path / "out_schedule.csv"
    assert f"Batsim summary written to {summary_csv}" in stdout
    instance = read(KTH_20)
    schedule = read_schedule(jobs_csv)
    assert check_schedule(instance, schedule) == []
    summary = summarize(instance, schedule)
    row = pd.read_csv(tmp_path / "out_schedule.csv")
    assert tuple(row.columns) == SUMMARY_COLUMNS
    values = row.iloc[0]
    assert values["makespan"] == summary.makespan == 51488
    assert values["nb_jobs"] == values["nb_jobs_success"] == 20
    assert values["nb_jobs_killed"] == values["nb_jobs_rejected"] == 0
    assert values["nb_computing_machines"] == 100
    assert values["mean_waiting_time"] == pytest.approx(summary.mean_wait)
    assert values["max_waiting_time"] == summary.max_wait
    assert values["mean_turnaround_time"] == pytest.approx(summary.mean_response)
    assert values["time_computing"] == sum(
        j.size * (schedule[j.id].end - schedule[j.id].start) for j in instance.jobs
    )
    assert values["time_idle"] == 100 * 51488 - values["time_computing"]
    for column in ("consumed_joules", "scheduling_time", "simulation_time"):
        assert pd.isna(values[column])


def test_jobs_and_summary_are_written_together_or_not_at_all(tmp_path: Path) -> None:
    instance = Instance(Machine(4), (Job(1, 0, 2, 5), Job(2, 0, 2, 5)))
    moved = Schedule(
        {1: Placement(0, 5, (0, 1), ((2, (2, 3)),)), 2: Placement(0, 5, (2, 3))}
    )
    with pytest.raises(ValueError, match="migrations"):
        write_schedule(moved, tmp_path / "out_jobs.csv", "batsim", instance)
    assert list(tmp_path.iterdir()) == []
    # The summary cannot be renamed (a folder has its name): no jobs file either.
    (tmp_path / "out_schedule.csv").mkdir()
    schedule = Schedule({1: Placement(0, 5, (0, 1)), 2: Placement(0, 5, (2, 3))})
    with pytest.raises(OSError):
        write_schedule(schedule, tmp_path / "out_jobs.csv", "batsim", instance)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_schedule.csv"]


def test_format_from_the_name() -> None:
    assert schedule_format_for("run/out_jobs.csv") == "batsim"
    assert schedule_format_for("run/easy_jobs.CSV") == "batsim"
    assert schedule_format_for("s.json") == "json"
    assert schedule_format_for("s.csv") == "csv"
    assert schedule_format_for("out_jobs.csv", "csv") == "csv"


def test_bound_schedule_out_writes_batsim(tmp_path: Path) -> None:
    instance = Instance(
        Machine(2), (Job(1, 0, 2, 3), Job(2, 0, 1, 2), Job(3, 2, 1, 4)), name="g"
    )
    path = tmp_path / "g.json"
    write_native(instance, path)
    jobs_csv = tmp_path / "out_jobs.csv"
    code, stdout, stderr = _cli(
        "bound", str(path), "--objective", "cmax", "--time-limit", "10",
        "--schedule-out", str(jobs_csv),
    )  # fmt: skip
    assert code == 0, stdout + stderr
    assert jobs_csv.read_text().startswith("job_id,workload_name,profile,")
    schedule = read_schedule(jobs_csv)
    assert check_schedule(instance, schedule) == []
    assert pd.read_csv(tmp_path / "out_schedule.csv")["makespan"][0] == 7


# --------------------------------------------------------------------------
# evalys
# --------------------------------------------------------------------------


# evalys 4.0.7 calls DataFrame.rename(inplace=True), deprecated by pandas.
@pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:The inplace keyword:FutureWarning")
def test_evalys_reads_and_writes_optsched_job_sets(tmp_path: Path) -> None:
    jobset = pytest.importorskip(
        "evalys.jobset", reason="evalys is not installed (pip install .[test])"
    )
    instance = read(KTH_20)
    schedule = simulate(instance, parse_policy("easy")).schedule
    jobs_csv = tmp_path / "out_jobs.csv"
    write_schedule(schedule, jobs_csv, "batsim", instance)
    js = jobset.JobSet.from_csv(str(jobs_csv))
    summary = summarize(instance, schedule)
    assert js.df.finish_time.max() == summary.makespan
    area = js.utilisation["area"].sum()
    span = js.df.finish_time.max() - js.df.submission_time.min()
    assert area / (instance.processors * span) == pytest.approx(summary.utilisation)
    assert js.MaxProcs <= instance.processors
    # evalys writes its own job set back (jobID, proc_alloc columns).
    written = tmp_path / "evalys_jobs.csv"
    js.to_csv(str(written))
    assert written.read_text().startswith("jobID,")
    back = read_schedule(written)
    assert check_schedule(instance, back) == []
    assert {j: p.start for j, p in back.placements.items()} == {
        j: p.start for j, p in schedule.placements.items()
    }
    code, stdout, stderr = _cli("check", str(KTH_20), str(written))
    assert code == 0, stdout + stderr
    gantt = tmp_path / "gantt.png"
    code, stdout, stderr = _cli(
        "plot", "gantt", str(written), str(KTH_20), "-o", str(gantt)
    )
    assert code == 0, stdout + stderr
    assert gantt.stat().st_size > 0


def test_missing_walltimes_are_noted(tmp_path: Path) -> None:
    path = _workload(tmp_path, {**JOB, "walltime": -1})
    code, _, stderr = _cli("info", str(path))
    assert code == 0
    assert (
        f"optsched: note: {path}: estimates missing for 1 of 1 jobs (Batsim "
        "walltime -1 or none): their run time is used" in stderr
    )
