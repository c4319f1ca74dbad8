"""Issue 17 for schedule files, the checker and the suite reader.

Bad input never crashes and never loses data: one line ``file[:line]:
reason``, exit status 2, no output left behind. Sizes that a file names but
does not hold (a range of 3*10**9 processors, a machine of 10**9) cost what
the file holds, by construction: the tests make expanding them an error.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.paths import DATA, REPO
from support.refusals import refusal

from optsched.bench.suite import load_suite
from optsched.check import check_schedule
from optsched.cli import main
from optsched.errors import InputError
from optsched.instance import Instance, Job, Machine
from optsched.io import read
from optsched.io.native import write_native
from optsched.io.schedules import (
    FINAL_STATES,
    read_schedule,
    schedule_from_json,
    write_schedule,
)
from optsched.schedule import (
    Placement,
    ProcessorSet,
    Schedule,
    format_processors,
    parse_processors,
)

KTH = REPO / "instances" / "kth_20.json"
TINY_SWF = DATA / "suites" / "tiny.swf"
HEADER = "job_id,start,end,size,processors\n"


def _error(path: Path) -> str:
    return refusal(read_schedule, path)


def _check(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["check", *map(str, args)])


def _one_line_exit_2(result: Result, start: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"optsched: error: {start}"), result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture()
def no_expansion(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make walking a ProcessorSet index by index an error."""

    def refuse(self: ProcessorSet) -> None:
        raise AssertionError(f"{self!r} expanded")

    monkeypatch.setattr(ProcessorSet, "__iter__", refuse)


# --------------------------------------------------------------------------
# 1. Deep JSON
# --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [100_000, 3_000])
def test_deeply_nested_json_schedule_is_one_line(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"placements": ' + "[" * depth + "]" * depth + "}")
    message = _error(path)
    assert message in (
        f"{path}: invalid JSON: nested too deeply",
        f"{path}:1: placements[0]: expected an object",
    )
    _one_line_exit_2(_check(KTH, path), f"{path}")


def test_deep_json_from_a_store_row() -> None:
    with pytest.raises(InputError, match=r"^row 7: invalid JSON: nested too deeply$"):
        schedule_from_json("[" * 100_000, "row 7")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"placements": [{"job": 1, "start": 0, "end": NaN}]}', "NaN is not a JSON"),
        ('{"placements": [{"job": 1, "start": 0, "end": ' + "9" * 5000 + "}]}",
         "a number too long"),
        ('{"placements": [{"job": 1, "start": 0, "end": 1e400}]}',
         "end: expected an integer, got inf"),
        ('{"placements": [{"job": 1, "start": 0, "end": 9223372036854775808}]}',
         "end: 9223372036854775808 is beyond the limit 2**53"),
    ],
)  # fmt: skip
def test_json_numbers_out_of_range(tmp_path: Path, body: str, reason: str) -> None:
    path = tmp_path / "n.json"
    path.write_text(body)
    message = _error(path)
    assert message.startswith(f"{path}")
    assert reason in message
    assert len(message) < 200 + len(str(path))


# --------------------------------------------------------------------------
# 2. Processor ranges and large integers
# --------------------------------------------------------------------------


def test_processor_ranges_stay_intervals() -> None:
    procs = parse_processors("3000000001 0-3000000000")
    assert isinstance(procs, ProcessorSet)
    assert procs.runs == ((0, 3000000001),)  # sorted, adjacent runs merged
    procs = parse_processors("0-3000000000 7")  # 7 repeated: kept for the checker
    assert procs is not None
    assert procs.runs == ((0, 3000000000), (7, 7))
    assert procs.merged() == [(0, 3000000000)]
    assert len(procs) == 3000000002
    assert procs[0] == 0 and procs[-1] == 3000000000 and 7 in procs
    assert format_processors(procs) == "0-3000000000 7"
    small = parse_processors("5 0-2")
    assert small == (0, 1, 2, 5) and (0, 1, 2, 5) == small  # noqa: SIM300
    assert hash(small) == hash((0, 1, 2, 5))
    assert list(small) == [0, 1, 2, 5] and small[1:3] == (1, 2)
    assert pickle.loads(pickle.dumps(procs)) == procs
    assert parse_processors("2-3 0-3") == (0, 1, 2, 2, 3, 3)


def test_wide_range_beyond_the_machine_is_a_violation(
    tmp_path: Path, no_expansion: None
) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(HEADER + "2815,0,3580,12,0-3000000000\n")  # 80 bytes
    placement = read_schedule(path)[2815]
    assert isinstance(placement.processors, ProcessorSet)
    instance = read(KTH)
    kinds = {v.kind: str(v) for v in check_schedule(instance, read_schedule(path))}
    assert kinds["processor-range"] == (
        "processor-range: job 2815 uses processors [100-3000000000] (2999999901 "
        "processors) outside [0, 100)"
    )
    assert kinds["processor-count"] == (
        "processor-count: job 2815 has 3000000001 distinct processors, its size is 12"
    )
    result = _check(KTH, path, "--all")
    assert result.exit_code == 1
    assert kinds["processor-range"] + "\n" in result.stdout


def _huge_machine(tmp_path: Path) -> Path:
    jobs = (Job(1, 0, 500_000_000, 10), Job(2, 0, 500_000_000, 10))
    instance = Instance(Machine(10**9), (*jobs, Job(3, 5, 999_999_999, 10)))
    write_native(instance, tmp_path / "huge.json")
    return tmp_path / "huge.json"


def test_a_billion_processors_are_checked_on_intervals(
    tmp_path: Path, no_expansion: None
) -> None:
    instance = read(_huge_machine(tmp_path))
    valid = tmp_path / "valid.csv"
    valid.write_text(
        HEADER + "1,0,10,,0-499999999\n2,0,10,,500000000-999999999\n"
        "3,10,20,,1-999999999\n"
    )
    assert check_schedule(instance, read_schedule(valid)) == []
    clash = tmp_path / "clash.csv"
    clash.write_text(
        HEADER + "1,0,10,,0-499999999\n2,0,10,,400000000-899999999\n"
        "3,10,20,,1-999999999\n"
    )
    overlaps = [
        str(v)
        for v in check_schedule(instance, read_schedule(clash))
        if v.kind == "processor-overlap"
    ]
    assert overlaps == [
        "processor-overlap: job 2 and job 1 share processors [400000000-499999999] "
        "(100000000 processors) at time 0"
    ]
    result = _check(tmp_path / "huge.json", valid)
    assert (result.exit_code, result.stdout) == (0, "OK: 3 jobs, schedule valid\n")


def test_overlap_sweep_lists_shared_intervals_and_blocks() -> None:
    machine = Machine(16, allocation="contiguous")
    jobs = tuple(Job(i, 0, 4, 10) for i in (1, 2, 3))
    instance = Instance(machine, jobs)
    schedule = Schedule(
        {
            1: Placement(0, 10, parse_processors("0-3")),
            2: Placement(5, 15, parse_processors("2-5")),
            3: Placement(5, 15, parse_processors("3-6")),
        }
    )
    overlaps = [str(v) for v in check_schedule(instance, schedule)][-3:]
    assert overlaps == [
        "processor-overlap: job 2 and job 1 share processors [2, 3] at time 5",
        "processor-overlap: job 3 and job 1 share processors [3] at time 5",
        "processor-overlap: job 3 and job 2 share processors [3, 4, 5] at time 5",
    ]


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("1,0,9223372036854775808,1,0", "2: end: time '9223372036854775808' is beyond"),
        ("1," + "9" * 5000 + ",1,1,0", "2: start: time '99999999999999999999"),
        ("9223372036854775808,0,1,1,0", "2: job_id: id '9223372036854775808' is"),
        ("1,0,1,1,0-9223372036854775808",
         "2: processors: a processor index in '0-9223372036854775808' is beyond"),
        ("1,0,1,1,0-" + "9" * 5000, "2: processors: bad processor intervals"),
        ("1,0,1,99999999999999999999,0", "2: size: size '99999999999999999999' is"),
    ],
)  # fmt: skip
def test_integers_beyond_2_53_are_one_line(
    tmp_path: Path, row: str, reason: str
) -> None:
    path = tmp_path / "big.csv"
    path.write_text(HEADER + row + "\n")
    message = _error(path)
    assert message.startswith(f"{path}:{reason}"), message
    assert len(message) < 220 + len(str(path))
    _one_line_exit_2(_check(KTH, path), f"{path}:2: ")


# --------------------------------------------------------------------------
# 3. check: 1 means violations, 2 means unreadable input
# --------------------------------------------------------------------------


def test_check_exit_codes_tell_invalid_from_unreadable(tmp_path: Path) -> None:
    instance = read(KTH)
    good = Schedule(
        {
            job.id: Placement(10**6 + 10**5 * k, 10**6 + 10**5 * k + job.runtime, None)
            for k, job in enumerate(instance.jobs)
        }
    )
    write_schedule(good, tmp_path / "good.json", "json")
    assert _check(KTH, tmp_path / "good.json").exit_code == 0
    late = Schedule({**good.placements, 2815: Placement(0, 1, None)})
    write_schedule(late, tmp_path / "invalid.json", "json")
    invalid = _check(KTH, tmp_path / "invalid.json")
    assert invalid.exit_code == 1
    assert invalid.stdout.endswith("INVALID: 1 violation (20 jobs)\n")
    (tmp_path / "broken.json").write_text('{"placements": [{"job": 1}]}')
    _one_line_exit_2(
        _check(KTH, tmp_path / "broken.json"), f"{tmp_path / 'broken.json'}:1: "
    )
    _one_line_exit_2(_check(KTH, tmp_path), f"{tmp_path}: cannot read file")
    _one_line_exit_2(
        _check(KTH, "/dev/zero"), "/dev/zero: cannot read file: not a regular file"
    )
    _one_line_exit_2(_check(tmp_path, tmp_path / "good.json"), f"{tmp_path}: ")
    (tmp_path / "bad_instance.json").write_text("{" * 100_000)
    _one_line_exit_2(
        _check(tmp_path / "bad_instance.json", tmp_path / "good.json"),
        f"{tmp_path / 'bad_instance.json'}",
    )


# --------------------------------------------------------------------------
# 4. Batsim final states
# --------------------------------------------------------------------------

BATSIM = "job_id,success,final_state,starting_time,finish_time,allocated_resources\n"


def test_batsim_final_states_documented() -> None:
    assert FINAL_STATES == (
        "COMPLETED_SUCCESSFULLY",
        "COMPLETED_FAILED",
        "COMPLETED_WALLTIME_REACHED",
        "COMPLETED_KILLED",
        "REJECTED",
    )


@pytest.mark.parametrize("state", ["DONE", "", "completed_successfully", "RUNNING"])
def test_batsim_unknown_final_state_is_refused(tmp_path: Path, state: str) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(BATSIM + f"1,1,{state},0,10,0\n")
    assert _error(path) == (
        f"{path}:2: final_state: unknown value {state!r} (expected one of "
        "COMPLETED_SUCCESSFULLY, COMPLETED_FAILED, COMPLETED_WALLTIME_REACHED, "
        "COMPLETED_KILLED, REJECTED)"
    )


def test_batsim_stopped_jobs_are_not_complete_runs(tmp_path: Path) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(
        BATSIM + "1,1,COMPLETED_SUCCESSFULLY,0,10,0\n2,0,COMPLETED_FAILED,0,5,1\n"
        "3,0,COMPLETED_WALLTIME_REACHED,0,4,2\n4,0,COMPLETED_KILLED,0,3,3\n"
        "5,0,REJECTED,0,0,\n"
    )
    schedule = read_schedule(path)
    assert sorted(schedule.placements) == [1, 2, 3, 4]
    assert schedule.killed == frozenset({3, 4})


def test_batsim_success_column_must_be_0_or_1(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text("job_id,success,starting_time,finish_time\n1,yes,0,1\n")
    assert _error(path) == f"{path}:2: success: expected 1 or 0, got 'yes'"


# --------------------------------------------------------------------------
# 5. Suite TOML
# --------------------------------------------------------------------------

SUITE = 'policies = ["fcfs"]\nobjectives = ["cmax"]\n[suite]\nname = "t"\n'


def _suite(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.toml").write_text(text)
    return folder / "suite.toml"


def _suite_error(path: Path) -> str:
    message = refusal(load_suite, path)
    assert message.startswith(str(path))
    return message


def test_suite_trace_paths_are_relative_to_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "t.swf").write_bytes(TINY_SWF.read_bytes())
    _suite(folder, SUITE + '[[traces]]\npath = "t.swf"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "t.swf").write_text("not a trace\n")
    monkeypatch.chdir(elsewhere)
    assert load_suite(Path("../suites/suite.toml")).traces[0].file == folder / "t.swf"
    absolute = _suite(tmp_path / "a", SUITE + f'[[traces]]\npath = "{TINY_SWF}"\n')
    assert load_suite(absolute).traces[0].file == TINY_SWF


def test_suite_never_quotes_a_file_it_names(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("root:SECRET-PASSWORD:0:0\nmore SECRET\n")
    path = _suite(tmp_path, SUITE + f'[[traces]]\npath = "{secret}"\n')
    message = _suite_error(path)
    assert "SECRET" not in message
    assert message == (
        f"{path}:6: trace {secret}: not a readable swf, json or strip trace "
        "(first error at line 1 of the file); 'optsched info' on the file shows why"
    )
    store = tmp_path / "store.sqlite"
    result = CliRunner().invoke(main, ["bench", str(path), "--store", str(store)])
    _one_line_exit_2(result, f"{path}:6: ")
    assert "SECRET" not in result.output and not store.exists()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a = " + "[" * 5000 + "]" * 5000, ": invalid TOML: nested too deeply"),
        ("a = 1" + "0" * 5000, ": invalid TOML: a number too long"),
        ("a = [1,", ": invalid TOML: Invalid value (at end of document)"),
        ("a = [1,\n]]\n", ":2: invalid TOML:"),
        ("seeds = [1]\n" + SUITE + '[[traces]]\npath = "t.swf"\n', ":1: seeds apply"),
        (SUITE.replace('name = "t"', "name = 3"), ":4: [suite] name must be a string"),
        (SUITE + '[[traces]]\npath = "t.swf"\nprocessors = 100000000000000000000\n',
         ":7: [[traces]] processors must be an integer in [1, 2**53], got "
         "100000000000000000000"),
        (SUITE + '[[traces]]\npath = "t.swf"\n[windows]\nkind = "consecutive"\n'
         "jobs = 100000000000000000000\n",
         ":9: [windows] jobs: 100000000000000000000 is beyond the limit 2**53"),
        (SUITE + '[[traces]]\npath = "t.swf"\n[[solvers]]\nbackend = "cpsat"\n'
         "time_limit = 1e300\n", ":9: [[solvers]] time_limit must be a positive"),
        (SUITE + '[[traces]]\npath = "t.swf"\n[[solvers]]\nbackend = "cpsat"\n'
         "time_limit = nan\n", ":9: [[solvers]] time_limit must be a positive"),
        (SUITE + '[[traces]]\npath = "t.swf"\n[[solvers]]\nbackend = "cpsat"\n'
         "workers = 4294967296\n", ":9: [[solvers]] workers must be an integer"),
        ("seeds = [9223372036854775808]\n" + SUITE + '[[traces]]\npath = "t.swf"\n'
         '[windows]\nkind = "random"\njobs = 2\ncount = 1\n',
         ":1: seeds must be a non-empty list"),
        (SUITE + '[[traces]]\npath = "t.swf"\n' + "x" + ".x" * 3000 + " = 1\n",
         ": unknown key 'x' in [traces]"),
    ],
)  # fmt: skip
def test_malformed_suites_are_one_line(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "t.swf").write_bytes(TINY_SWF.read_bytes())
    path = _suite(tmp_path, text)
    message = _suite_error(path)
    assert message.startswith(f"{path}{reason}"), message
    assert len(message) < 300 + len(str(path))


def test_suite_from_a_device_is_refused() -> None:
    assert _suite_error(Path("/dev/zero")) == (
        "/dev/zero: cannot read suite: not a regular file"
    )


def test_suite_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_bytes(SUITE.encode() + b"x = '\xff'\n")
    assert _suite_error(path) == (
        f"{path}:5: not UTF-8 text (byte 0xff): expected a suite (TOML)"
    )


# --------------------------------------------------------------------------
# 7. CSV formula injection
# --------------------------------------------------------------------------


def test_csv_writers_guard_against_formulas(tmp_path: Path) -> None:
    instance = read(KTH).replace(name="=HYPERLINK(evil)")
    jobs = instance.jobs
    schedule = Schedule(
        {
            jobs[0].id: Placement(0, 10, (0,), ((-5, (2,)),)),
            **{job.id: Placement(0, 1, (1,)) for job in jobs[1:3]},
        },
        producer="policy,=cmd|' /C calc'!A0",
    )
    write_schedule(schedule, tmp_path / "s.csv", "csv", instance)
    lines = (tmp_path / "s.csv").read_text().splitlines()
    # The producer is in the JSON sidecar, never a CSV cell.
    assert lines[0] == "job_id,start,end,size,processors,moves"
    sidecar = json.loads((tmp_path / "s.csv.json").read_text())
    assert sidecar["producer"] == "policy,=cmd|' /C calc'!A0"
    assert lines[1].endswith(",'-5:2")
    assert read_schedule(tmp_path / "s.csv") == schedule
    plain = Schedule({job.id: Placement(0, 1, (1,)) for job in jobs})
    write_schedule(plain, tmp_path / "b.csv", "batsim", instance)
    rows = (tmp_path / "b.csv").read_text().splitlines()
    assert rows[1].split(",")[1] == "'=HYPERLINK(evil)"
    assert rows[1].split(",")[15] == "-1"  # a number stays a number
    assert read_schedule(tmp_path / "b.csv") == plain
