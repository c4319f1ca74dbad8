"""Schedule files: CSV, Batsim out_jobs.csv and JSON."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import paths
from support.refusals import located_refusal, refusal

from optsched.check import check_schedule
from optsched.errors import InputError
from optsched.instance import Instance, Job, Machine
from optsched.io.native import read_native
from optsched.io.schedules import (
    BATSIM_COLUMNS,
    detect_schedule_format,
    provenance_path,
    read_schedule,
    write_schedule,
)
from optsched.schedule import Placement, Schedule

DATA = paths.DATA / "schedules"
INSTANCE = read_native(DATA / "instance.json").instance
GOLDEN = Schedule(
    {
        1: Placement(0, 10, (0, 1)),
        2: Placement(0, 5, (2, 3)),
        3: Placement(10, 16, (0, 1, 2, 3)),
        4: Placement(5, 5, (2,)),
    },
    "hand",
    frozenset({3}),
)
GOLDEN_FILES = {
    "csv": "golden.csv",
    "batsim": "golden_batsim.csv",
    "json": "golden.json",
}


def test_golden_instance_and_schedule_are_valid() -> None:
    assert INSTANCE.jobs == (
        Job(1, 0, 2, 10, 20),
        Job(2, 0, 2, 5),
        Job(3, 3, 4, 8, 6),
        Job(4, 4, 1, 0),
    )
    assert check_schedule(INSTANCE, GOLDEN) == []


@pytest.mark.parametrize("fmt", sorted(GOLDEN_FILES))
def test_writer_output_is_the_golden_file(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "schedule"
    write_schedule(GOLDEN, out, fmt, INSTANCE)
    expected = (DATA / GOLDEN_FILES[fmt]).read_text()
    if fmt == "csv":
        # The producer moved from the golden file's first line (still read)
        # to the sidecar, so that pandas reads the CSV without options.
        comment, expected = expected.split("\n", 1)
        assert comment == "# producer: hand"
        assert json.loads(provenance_path(out).read_text())["producer"] == "hand"
    assert out.read_text() == expected


@pytest.mark.parametrize("fmt", sorted(GOLDEN_FILES))
def test_golden_files_read_back(fmt: str) -> None:
    path = DATA / GOLDEN_FILES[fmt]
    assert detect_schedule_format(path.read_text()) == fmt
    schedule = read_schedule(path)
    assert dict(schedule.placements) == dict(GOLDEN.placements)
    assert schedule.killed == GOLDEN.killed
    # Batsim has no place for the producer.
    assert schedule.producer == ("" if fmt == "batsim" else "hand")
    assert check_schedule(INSTANCE, schedule) == []


def test_golden_csv_rows_by_hand() -> None:
    lines = (DATA / "golden.csv").read_text().splitlines()
    assert lines == [
        "# producer: hand",
        "job_id,start,end,size,processors,killed",
        "1,0,10,2,0-1,0",
        "2,0,5,2,2-3,0",
        "4,5,5,1,2,0",
        "3,10,16,4,0-3,1",
    ]


def test_golden_batsim_derived_columns_by_hand() -> None:
    with (DATA / "golden_batsim.csv").open() as handle:
        rows = {row["job_id"]: row for row in csv.DictReader(handle)}
    assert list(rows["3"]) == list(BATSIM_COLUMNS)
    job3 = rows["3"]
    # Job 3: submitted at 3, started at 10, stopped at its 6 s estimate.
    assert job3["submission_time"] == "3"
    assert job3["requested_number_of_resources"] == "4"
    assert job3["requested_time"] == "6"
    assert job3["success"] == "0"
    assert job3["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert job3["execution_time"] == "6"
    assert job3["waiting_time"] == "7"
    assert job3["turnaround_time"] == "13"
    assert job3["stretch"] == "2.166667"  # 13 / 6
    assert rows["1"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert rows["1"]["requested_time"] == "20"
    assert rows["4"]["stretch"] == "inf"  # waited 1 s, ran 0 s


def test_batsim_simulator_output_reads() -> None:
    # Float times, "workload!id" job ids, a rejected job, another row order.
    schedule = read_schedule(DATA / "batsim_simulated.csv")
    assert dict(schedule.placements) == dict(GOLDEN.placements)
    assert schedule.killed == frozenset({3})
    assert 5 not in schedule.placements


def test_large_float_times_keep_every_digit(tmp_path: Path) -> None:
    path = tmp_path / "big_jobs.csv"
    path.write_text(
        "job_id,starting_time,finish_time\n1,9007199254740990.000000,"
        "9007199254740991.0\n"
    )
    assert read_schedule(path)[1] == Placement(9007199254740990, 9007199254740991)


def test_times_beyond_2_53_are_refused(tmp_path: Path) -> None:
    # The core limit on integers (issue 17): beyond it sums of times are no
    # longer exact and a solver or a database may cut them to 64 bits.
    path = tmp_path / "big_jobs.csv"
    path.write_text(
        "job_id,starting_time,finish_time\n1,123456789012345678.000000,"
        "123456789012345679.0\n"
    )
    assert refusal(read_schedule, path) == (
        f"{path}:2: starting_time: time '123456789012345678' is beyond the limit "
        "2**53 (9007199254740992)"
    )


def test_batsim_without_final_state_uses_success(tmp_path: Path) -> None:
    path = tmp_path / "old_jobs.csv"
    path.write_text(
        "job_id,submission_time,success,starting_time,finish_time,allocated_resources\n"
        "1,0,1,0,10,0-1\n3,3,0,10,16,0-3\n"
    )
    schedule = read_schedule(path)
    assert schedule.killed == frozenset({3})
    assert schedule[1] == Placement(0, 10, (0, 1))


def test_batsim_needs_the_instance(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batsim format needs the instance"):
        write_schedule(GOLDEN, tmp_path / "out.csv", "batsim")
    assert not (tmp_path / "out.csv").exists()


def test_batsim_refuses_jobs_outside_the_instance(tmp_path: Path) -> None:
    extra = Schedule({**GOLDEN.placements, 99: Placement(0, 1, (0,))})
    with pytest.raises(ValueError, match="job 99 is placed but not in the instance"):
        write_schedule(extra, tmp_path / "out.csv", "batsim", INSTANCE)
    assert os.listdir(tmp_path) == []


def test_csv_size_column_without_instance(tmp_path: Path) -> None:
    schedule = Schedule({1: Placement(0, 4, (3, 4, 5)), 2: Placement(1, 2, None)})
    path = tmp_path / "s.csv"
    write_schedule(schedule, path)
    assert path.read_text().splitlines() == [
        "job_id,start,end,size,processors",
        "1,0,4,3,3-5",
        "2,1,2,,",
    ]
    assert read_schedule(path) == schedule


def test_empty_processor_set_is_refused(tmp_path: Path) -> None:
    schedule = Schedule({1: Placement(0, 4, ())})
    for fmt in ("csv", "json", "batsim"):
        with pytest.raises(ValueError, match="empty processor set"):
            write_schedule(schedule, tmp_path / "s", fmt, INSTANCE)
    assert os.listdir(tmp_path) == []


def test_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown schedule format 'xml'"):
        write_schedule(GOLDEN, tmp_path / "s", "xml")
    path = tmp_path / "s.csv"
    write_schedule(GOLDEN, path)
    with pytest.raises(InputError, match="unknown schedule format 'xml'"):
        read_schedule(path, "xml")


def test_forced_format_overrides_detection(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    write_schedule(GOLDEN, path, "json")
    assert read_schedule(path, "json") == GOLDEN
    with pytest.raises(InputError, match=r"header: unknown column '\{'"):
        read_schedule(path, "csv")


# --------------------------------------------------------------------------
# Round trips (hypothesis)
# --------------------------------------------------------------------------

# Line breaks are flattened to spaces in CSV; NUL marks a binary file; lone
# surrogates cannot be written as UTF-8.
producers = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\n\r\x00"),
    max_size=20,
)
processor_sets = st.none() | st.frozensets(st.integers(0, 300), min_size=1).map(
    lambda s: tuple(sorted(s))
)


moves = st.lists(
    st.tuples(
        st.integers(0, 10**12),
        st.frozensets(st.integers(0, 300), min_size=1).map(lambda s: tuple(sorted(s))),
    ),
    max_size=3,
).map(tuple)


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    ids = draw(st.lists(st.integers(-(10**6), 10**9), unique=True, max_size=15))
    placements = {
        job_id: Placement(
            draw(st.integers(-(10**9), 10**12)),
            draw(st.integers(-(10**9), 10**12)),
            draw(processor_sets),
            draw(moves),
        )
        for job_id in ids
    }
    killed = draw(st.frozensets(st.sampled_from(ids))) if ids else frozenset()
    return Schedule(placements, draw(producers), killed)


@settings(max_examples=80, deadline=None)
@given(schedules(), st.sampled_from(["csv", "json"]))
def test_round_trip(
    tmp_path_factory: pytest.TempPathFactory, schedule: Schedule, fmt: str
) -> None:
    path = tmp_path_factory.mktemp("rt") / f"schedule.{fmt}"
    write_schedule(schedule, path, fmt)
    assert read_schedule(path) == schedule


@st.composite
def instances_and_schedules(draw: st.DrawFn) -> tuple[Instance, Schedule]:
    m = draw(st.integers(1, 16))
    n = draw(st.integers(0, 10))
    jobs, placements, killed = [], {}, set()
    for job_id in range(1, n + 1):
        size = draw(st.integers(1, m))
        runtime = draw(st.integers(0, 1000))
        estimate = draw(st.integers(0, 1000))
        release = draw(st.integers(0, 1000))
        jobs.append(Job(job_id, release, size, runtime, estimate))
        start = release + draw(st.integers(0, 100))
        stop_early = estimate < runtime and draw(st.booleans())
        end = start + (estimate if stop_early else runtime)
        if stop_early:
            killed.add(job_id)
        first = draw(st.integers(0, m - size))
        procs = tuple(range(first, first + size)) if draw(st.booleans()) else None
        placements[job_id] = Placement(start, end, procs)
    instance = Instance(Machine(m), tuple(jobs))
    return instance, Schedule(placements, "", frozenset(killed))


@settings(max_examples=60, deadline=None)
@given(instances_and_schedules())
def test_batsim_reads_back_the_same_placements(
    tmp_path_factory: pytest.TempPathFactory, pair: tuple[Instance, Schedule]
) -> None:
    instance, schedule = pair
    path = tmp_path_factory.mktemp("batsim") / "out_jobs.csv"
    write_schedule(schedule, path, "batsim", instance)
    assert read_schedule(path) == schedule


# --------------------------------------------------------------------------
# Errors: file:line: reason
# --------------------------------------------------------------------------


def _error(tmp_path: Path, text: str | bytes, fmt: str | None = None) -> str:
    return located_refusal(
        lambda path: read_schedule(path, fmt), tmp_path / "bad_schedule", text
    )


HEADER = "job_id,start,end,size,processors\n"
EG = "(expected e.g. '0-3 7')"


def test_duplicate_csv_row(tmp_path: Path) -> None:
    text = (
        "# producer: x\n" + HEADER + "3,0,1,1,0\n\n17,0,1,1,1\n4,0,1,1,2\n17,1,2,1,1\n"
    )
    assert _error(tmp_path, text) == ":7: job 17 appears twice (first at line 5)"


def test_duplicate_batsim_row(tmp_path: Path) -> None:
    lines = (DATA / "golden_batsim.csv").read_text().splitlines()
    text = "\n".join([*lines, lines[2]]) + "\n"
    assert _error(tmp_path, text) == ":6: job 2 appears twice (first at line 3)"


def test_duplicate_json_placement(tmp_path: Path) -> None:
    text = (
        '{"placements": [\n{"job": 1, "start": 0, "end": 1},\n'
        '{"job": 2, "start": 0, "end": 1},\n{"job": 1, "start": 5, "end": 6}]}'
    )
    assert _error(tmp_path, text) == (
        ":4: placements[2]: job 1 appears twice (first at placements[0], line 2)"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("1,0,1,1,3-1\n", f":2: processors: bad processor intervals '3-1' {EG}"),
        ("1,0,1,1,0-x\n", f":2: processors: bad processor intervals '0-x' {EG}"),
        ("1,0,1,1,-2\n", f":2: processors: bad processor intervals '-2' {EG}"),
        ("1,0,1,1\n", f":2: expected 5 fields ({HEADER.strip()}), got 4"),
        ("1,0,1,1,0,9\n", f":2: expected 5 fields ({HEADER.strip()}), got 6"),
        ("x,0,1,1,0\n", ":2: job_id: expected an integer, got 'x'"),
        ("1,0.5,1,1,0\n", ":2: start: expected integer seconds, got '0.5'"),
        ("1,0,,1,0\n", ":2: end: expected integer seconds, got ''"),
        ("1,0,1,two,0\n", ":2: size: expected an integer, got 'two'"),
    ],
)  # fmt: skip
def test_malformed_csv_rows(tmp_path: Path, body: str, expected: str) -> None:
    assert _error(tmp_path, HEADER + body) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("job_id,start,end,wait\n1,0,1,0\n",
         ":1: header: unknown column 'wait' (expected job_id, start, end, size, "
         "processors, killed, moves, piece, switch, lost)"),
        ("job_id,start,end,start\n", ":1: header: column 'start' appears twice"),
        ("# c\njob_id,start,end,killed\n1,0,1,maybe\n",
         ":3: killed: expected 1 or 0, got 'maybe'"),
        ("job_id,end,foo\n",
         ": unrecognised schedule format: expected a JSON schedule, a CSV with a "
         "'job_id,start,end,...' header or a Batsim out_jobs.csv"),
        ("job_id,starting_time\n1,0\n", ":1: header: missing column(s) finish_time"),
        ("job_id,starting_time,finish_time\n1,0,1.25\n",
         ":2: finish_time: expected integer seconds, got '1.25'"),
        ("job_id,starting_time,finish_time,allocated_resources\n1,0,1,2-0\n",
         ":2: allocated_resources: bad processor intervals '2-0' "
         "(expected e.g. '0-3 7')"),
        ("", ": empty file: expected a schedule"),
        (b"\x00\x01", ": binary file: expected a schedule (CSV or JSON)"),
        (
            b"job_id,start,end\n1,0,\xff\n",
            ":2: not UTF-8 text (byte 0xff): expected a schedule",
        ),
    ],
)  # fmt: skip
def test_malformed_csv_files(tmp_path: Path, text: str | bytes, expected: str) -> None:
    assert _error(tmp_path, text) == expected


def test_comments_only_with_forced_format(tmp_path: Path) -> None:
    assert _error(tmp_path, "# producer: x\n", "csv") == (
        ": no header line: expected a CSV schedule"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"placements": [\n{"job": 1, "start": 0, "end": 1,\n "processors": "4-2"}]}',
         ":3: placements[0]: processors: bad processor intervals '4-2' "
         "(expected e.g. '0-3 7')"),
        ('{"placements": [\n{"job": 1, "start": 0}]}',
         ":2: placements[0]: missing key 'end'"),
        ('{"placements": [\n{"job": 1, "start": 0, "end": "5"}]}',
         ":2: placements[0]: end: expected an integer, got '5'"),
        ('{"placements": [\n{"job": 1, "start": 0, "end": 1, "killed": 1}]}',
         ":2: placements[0]: killed: expected true or false"),
        ('{"placements": [\n{"job": 1, "start": 0, "end": 1, "stop": 1}]}',
         ":2: placements[0]: unknown key 'stop'"),
        ('{"placements": [\n{"job": 1, "start": 0, "end": 1}\n',
         ":3: invalid JSON: Expecting ',' delimiter (column 1)"),
        ('{"format": "optsched-instance", "version": 1}',
         ":1: format: expected 'optsched-schedule', got 'optsched-instance' "
         "(an instance file?)"),
        ('{"version": 1}', ":1: placements: expected a list"),
        ('[1]', ":1: expected a JSON object with 'placements'"),
    ],
)  # fmt: skip
def test_malformed_json(tmp_path: Path, text: str, expected: str) -> None:
    assert _error(tmp_path, text) == expected


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_schedule(tmp_path / "absent.csv")


def test_io_package_exposes_the_schedule_pair(tmp_path: Path) -> None:
    from optsched import io

    io.write_schedule(GOLDEN, tmp_path / "s.json", "json")
    assert io.read_schedule(tmp_path / "s.json") == GOLDEN


def test_migrations_round_trip_and_batsim_refuses_them(tmp_path: Path) -> None:
    instance = Instance(Machine(4, "contiguous"), (Job(1, 0, 2, 10),))
    moved = Placement(0, 10, (2, 3), ((4, (0, 1)),))
    schedule = Schedule({1: moved}, "easy")
    for fmt in ("csv", "json"):
        path = tmp_path / f"s.{fmt}"
        write_schedule(schedule, path, fmt, instance)
        assert read_schedule(path) == schedule
    assert "1,0,10,2,2-3,4:0-1" in (tmp_path / "s.csv").read_text()
    with pytest.raises(ValueError, match="cannot record the migrations of job 1"):
        write_schedule(schedule, tmp_path / "s.out", "batsim", instance)
    assert not (tmp_path / "s.out").exists()


def test_malformed_moves_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("job_id,start,end,size,processors,moves\n1,0,10,2,2-3,4:x\n")
    with pytest.raises(InputError, match=r"bad.csv:2: moves: bad migrations '4:x'"):
        read_schedule(path)
