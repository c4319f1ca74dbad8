"""``optsched info`` and ``optsched window`` through click's CliRunner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.paths import DATA, INSTANCES, trace_path

from optsched.cli import main
from optsched.cli.info import summarize
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io.native import read_native
from optsched.io.swf import read_swf
from optsched.windows.window import cut_window

SWF = DATA / "swf"
GOOD = SWF / "good.swf"
RECORDED = SWF / "recorded.swf"

# Job lines and skipped jobs of each real trace (tests/io/test_swf.py recomputes
# them from the files).
REAL = {
    "KTH-SP2-1996-2.1-cln.swf": (28_476, 1),
    "LLNL-Atlas-2006-2.1-cln.swf": (43_778, 4_571),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18_239, 0),
    "hpc2n.swf": (3_170, 25),
    "lublin_256.swf": (10_000, 0),
}


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _row(output: str, label: str) -> str:
    """The value cell of the overview row ``label`` (folded over the lines
    that follow it with an empty first cell, as on an 80-column terminal)."""
    match = re.search(rf"│ {re.escape(label)}\s*│ (.*?)\s*│\n", output)
    assert match, f"no row {label!r} in:\n{output}"
    value = match.group(1)
    for line in output[match.end() :].splitlines():
        more = re.fullmatch(r"│\s+│ (.*?)\s*│", line)
        if more is None:
            break
        value += " " + more.group(1)
    return value


def _count(text: str) -> int:
    return int(text.replace(",", ""))


# --------------------------------------------------------------------------
# summarize: the numbers behind `info`


def test_summarize_good_file() -> None:
    # Kept jobs (release, size, runtime): 1 (0, 4, 100), 2 (10, 2, 51),
    # 6 (5, 3, 30), 8 (50, 1, 7) on 8 processors.
    s = summarize(read_swf(GOOD).instance)
    assert (s.jobs, s.processors, s.allocation, s.busy_blocks) == (4, 8, "any", 0)
    assert (s.first_release, s.last_release, s.span) == (0, 50, 50)
    assert s.total_area == 400 + 102 + 90 + 7 == 599
    assert s.offered_load == pytest.approx(599 / (8 * 50))
    assert s.area_bound == 75  # ceil(599 / 8) = ceil(74.875)
    assert s.makespan_bound == 100  # max(0 + 75, job 1: 0 + 100)
    # Runtimes sorted 7, 30, 51, 100; linear-interpolation quantiles.
    assert s.runtime is not None and s.runtime.quantiles == pytest.approx(
        (13.9, 24.25, 40.5, 63.25, 85.3)
    )
    assert (s.runtime.minimum, s.runtime.mean, s.runtime.maximum) == (7, 47.0, 100)
    assert s.size is not None and (s.size.minimum, s.size.maximum) == (1, 4)
    assert s.size.mean == 2.5
    assert s.estimate is not None and s.estimate.maximum == 200


def test_summarize_edge_cases() -> None:
    empty = summarize(Instance(Machine(4), ()))
    assert (empty.jobs, empty.total_area, empty.area_bound) == (0, 0, 0)
    assert empty.span is None and empty.offered_load is None and empty.runtime is None
    same_time = summarize(
        Instance(
            Machine(4, "any", (BusyBlock(0, 5, 1),)),
            (Job(1, 7, 4, 3), Job(2, 7, 1, 1)),
        )
    )
    assert same_time.span == 0 and same_time.offered_load is None
    assert same_time.area_bound == 4  # ceil(13 / 4)
    assert same_time.makespan_bound == 11  # 7 + ceil(13 / 4) > 7 + 3
    assert same_time.busy_blocks == 1


# --------------------------------------------------------------------------
# info


def test_info_good_file() -> None:
    result = _run("info", GOOD)
    assert result.exit_code == 0, result.output
    out = result.output
    assert _row(out, "computer") == "Tiny test machine"
    assert _row(out, "job records read") == "8"
    assert _row(out, "jobs skipped") == "4"
    assert _row(out, "jobs kept") == "4"
    assert _row(out, "jobs") == "4"
    assert _row(out, "machine") == "8 processors, allocation any"
    assert _row(out, "releases") == "0 .. 50 (span 50 s)"
    assert _row(out, "offered load A/(m*span)") == "1.4975"
    assert _row(out, "total area A = sum q_j p_j") == "599 processor-seconds"
    assert _row(out, "area bound ceil(A/m)") == "75 s after the first release"
    assert _row(out, "makespan lower bound").startswith("100 = max(")
    for reason, line in (
        ("runtime < 0 (missing)", 13),
        ("size <= 0 (processors missing)", 14),
        ("size > machine processors", 15),
        ("submit time < 0 (missing)", 17),
    ):
        assert re.search(rf"│ {re.escape(reason)}\s*│\s*1 │ {line}\s*│", out), out
    assert re.search(r"│ runtime \(s\)\s*│\s*7 │\s*13\.9 │\s*24\.2 │\s*40\.5 │", out)


@pytest.mark.parametrize("name", sorted(REAL))
def test_info_real_trace_counts(name: str) -> None:
    lines, skipped = REAL[name]
    result = _run("info", trace_path(name))
    assert result.exit_code == 0, result.output
    assert _count(_row(result.output, "job records read")) == lines
    assert _count(_row(result.output, "jobs skipped")) == skipped
    assert _count(_row(result.output, "jobs kept")) == lines - skipped
    assert _count(_row(result.output, "jobs")) == lines - skipped


def test_info_window_shows_trace_skips() -> None:
    result = _run("info", GOOD, "--first-job", "1", "--jobs", "2")
    assert result.exit_code == 0, result.output
    out = result.output
    assert _row(out, "window") == "jobs 1..2, shift 5, initial state none"
    assert _row(out, "jobs") == "2"
    assert _row(out, "jobs kept") == "4"
    assert "jobs skipped by the reader (whole file)" in out
    assert _row(out, "releases") == "0 .. 5 (span 5 s)"


def test_info_recorded_contiguous_window() -> None:
    result = _run(
        "info", RECORDED, "--start", "55", "--end", "75",
        "--initial-state", "recorded", "--allocation", "contiguous",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _row(result.output, "busy blocks") == "4"
    assert _row(result.output, "machine") == "10 processors, allocation contiguous"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [SWF / "non_numeric.swf"],
            f"{SWF}/non_numeric.swf:3: field 4 (run time): expected a number, "
            "got 'ten'",
        ),
        (
            [SWF / "duplicate_ids.swf"],
            f"{SWF}/duplicate_ids.swf:5: duplicate job number 17 (first on line 2)",
        ),
        (
            [SWF / "no_machine_size.swf"],
            f"{SWF}/no_machine_size.swf: machine size unknown: the header has "
            "neither MaxProcs nor MaxNodes; pass --processors",
        ),
        (
            # Format detection (optsched.io) meets the truncation first.
            [SWF / "truncated.swf.gz"],
            f"{SWF}/truncated.swf.gz: truncated gzip file: compressed data ended "
            "before the end-of-stream marker",
        ),
        (
            [RECORDED, "--first-job", "2", "--start", "5"],
            "choose a window by position (--first-job/--jobs) or by submit time "
            "(--start/--end), not both",
        ),
        (
            [RECORDED, "--first-job", "20"],
            "recorded.swf: window first job 20 is past the last job: the trace has "
            "8 jobs (indices 0..7) after skipped jobs are removed",
        ),
    ],
)
def test_info_bad_input_one_line(args: list[object], message: str) -> None:
    result = _run("info", *args)
    assert result.exit_code == 2
    assert result.stderr == f"optsched: error: {message}\n"
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--malleable"], "--malleable needs --moldable MODEL"),
        (["--nodes", "5x1"], "machine: 5 nodes x 1 processors make 5, not the"),
    ],
)
def test_an_option_that_does_not_fit_is_a_usage_error(
    args: list[str], message: str
) -> None:
    # Found while the instance is prepared (optsched.windows.prepare), shown
    # as click shows a usage error: the usage line, then the reason.
    result = _run("info", RECORDED, *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Usage: ")
    assert f"Error: {message}" in result.stderr
    assert result.stdout == ""


def test_info_processors_option_fixes_missing_size() -> None:
    result = _run("info", SWF / "no_machine_size.swf", "--processors", "4")
    assert result.exit_code == 0, result.output
    assert _row(result.output, "machine") == "4 processors, allocation any"


# --------------------------------------------------------------------------
# window


def test_window_writes_native_json(tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    result = _run("window", RECORDED, "--first-job", "4", "--jobs", "3", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"wrote {out}: 3 jobs, 10 processors, 0 busy blocks, releases shifted by 50\n"
    )
    expected = cut_window(read_swf(RECORDED), first_job=4, jobs=3)
    assert read_native(out).instance == expected


def test_window_recorded_contiguous(tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    result = _run(
        "window", RECORDED, "--start", "55", "--end", "75", "--initial-state",
        "recorded", "--allocation", "contiguous", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    instance = read_native(out).instance
    assert instance.machine.allocation == "contiguous"
    assert [(b.label, b.offset) for b in instance.machine.unavailable] == [
        ("job 1", 0),
        ("job 5", 4),
        ("job 2", 5),
        ("job 3", 8),
    ]
    assert instance.source.window is not None
    assert instance.source.window.initial_state == "recorded"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [RECORDED],
            "optsched window needs a selection: --first-job K --jobs N or "
            "--start T0 --end T1 (--workload-format batsim converts the "
            "whole file without one)",
        ),
        (
            [RECORDED, "--start", "100"],
            "recorded.swf: window [100, +inf) is empty: no job is submitted in it "
            "(the trace's jobs are submitted in [0, 70])",
        ),
        (
            [SWF / "wrong_field_count.swf", "--jobs", "1"],
            f"{SWF}/wrong_field_count.swf:4: expected 18 fields, got 17",
        ),
        (
            [RECORDED, "--jobs", "9"],
            "recorded.swf: window asks for 9 jobs from index 0, but only 8 jobs "
            "follow it (8 in the trace after skipped jobs are removed)",
        ),
    ],
)
def test_window_error_leaves_no_file(
    tmp_path: Path, args: list[object], message: str
) -> None:
    out = tmp_path / "w.json"
    result = _run("window", *args, "-o", out)
    assert result.exit_code == 2
    assert result.stderr == f"optsched: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_window_converts_a_whole_file_to_batsim_without_a_selection(
    tmp_path: Path,
) -> None:
    """Every job of the file, submit times from its first (issue 31: a
    dummy ``--first-job 0 --jobs N`` was needed)."""
    out = tmp_path / "w.json"
    result = _run("window", RECORDED, "--workload-format", "batsim", "-o", out)
    assert result.exit_code == 0, result.output
    workload = json.loads(out.read_text())
    submits = {int(job["id"]): job["subtime"] for job in workload["jobs"]}
    # The file's submit column (its first submit is 0).
    assert submits == {1: 0, 2: 10, 3: 20, 4: 30, 5: 50, 6: 50, 7: 60, 8: 70}
    assert workload["nb_res"] == 10


def test_window_unwritable_output_one_line(tmp_path: Path) -> None:
    out = tmp_path / "missing-folder" / "w.json"
    result = _run("window", RECORDED, "--jobs", "2", "-o", out)
    assert result.exit_code == 2
    assert result.stderr == (
        f"optsched: error: {out}: cannot write file: "
        f"no such folder {str(out.parent)!r}\n"
    )


def test_window_keeps_existing_file_on_error(tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    out.write_text("previous")
    result = _run("window", RECORDED, "--start", "100", "-o", out)
    assert result.exit_code == 2
    assert out.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]


# --------------------------------------------------------------------------
# Bundled instances are exactly what instances/README.md says.

BUNDLED = {
    "kth_20.json": ("KTH-SP2-1996-2.1-cln.swf", 2800, 20, "none"),
    "kth_50.json": ("KTH-SP2-1996-2.1-cln.swf", 600, 50, "none"),
    "kth_20_recorded.json": ("KTH-SP2-1996-2.1-cln.swf", 1000, 20, "recorded"),
    "lublin256_30.json": ("lublin_256.swf", 1950, 30, "none"),
    "hpc2n_40.json": ("hpc2n.swf", 840, 40, "none"),
    "default.json": ("KTH-SP2-1996-2.1-cln.swf", 2800, 20, "none"),
}


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_instance_matches_its_trace(name: str, tmp_path: Path) -> None:
    trace_name, first, jobs, state = BUNDLED[name]
    bundled = INSTANCES / name
    expected = cut_window(
        read_swf(trace_path(trace_name)),
        first_job=first,
        jobs=jobs,
        initial_state=state,
    )
    assert read_native(bundled).instance == expected
    out = tmp_path / name
    result = _run(
        "window", trace_path(trace_name), "--first-job", first, "--jobs", jobs,
        "--initial-state", state, "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == bundled.read_bytes()


def test_info_bundled_instance_shows_provenance() -> None:
    result = _run("info", INSTANCES / "kth_20_recorded.json")
    assert result.exit_code == 0, result.output
    out = result.output
    assert (
        _row(out, "source")
        == "KTH-SP2-1996-2.1-cln.swf (swf, sha256 fba36494c4e4257f...)"
    )
    assert _row(out, "window") == (
        "jobs 1000..1019, shift 1,399,133, initial state recorded"
    )
    assert _row(out, "jobs") == "20"
    assert _row(out, "busy blocks") == "13"
