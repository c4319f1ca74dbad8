"""Issue 32, commands at the extremes: each input below was a traceback or a hang.

Every case gives one line (or a usage error) and exit status 2, or works.
"""

from __future__ import annotations

import json
import os
import xml.dom.minidom
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.csvrows import simulated_rows, write_rows
from support.paths import INSTANCES

from optsched.cli import main
from optsched.console import literal
from optsched.instance import MAX_DETAILED_PROCESSORS
from optsched.topology.machines import parse_speed_list

INSTANCE = INSTANCES / "kth_20.json"


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _instance(tmp_path: Path, change: object, name: str = "i.json") -> Path:
    data = json.loads(INSTANCE.read_text())
    change(data)  # type: ignore[operator]
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("value", ["nan", "inf", "NaN", "1e400"])
@pytest.mark.parametrize("command", ["gap", "bound"])
def test_time_limits_must_be_finite(command: str, value: str) -> None:
    result = _run(command, INSTANCE, "--time-limit", value)
    assert result.exit_code == 2
    assert f"'{value}' is not a finite number" in result.stderr
    assert "Traceback" not in result.output


def test_a_time_limit_of_1e300_is_no_timer_overflow() -> None:
    result = _run("bound", INSTANCE, "--time-limit", "1e300")
    assert result.exit_code == 0, result.output
    assert "relative gap      0.0000%" in result.stdout


def test_a_huge_speed_group_is_refused_before_any_allocation() -> None:
    with pytest.raises(ValueError) as refused:
        parse_speed_list("4x1,1000000000000x1")
    assert str(refused.value) == (
        "speeds: '1000000000000x1': more than 16777216 processors with speeds in "
        "all (one speed is kept per processor)"
    )
    assert len(parse_speed_list(f"{MAX_DETAILED_PROCESSORS - 1}x1,1")) == (
        MAX_DETAILED_PROCESSORS
    )
    result = _run("simulate", INSTANCE, "-p", "easy", "--speeds", "1000000000000x1")
    assert result.exit_code == 2
    assert "more than 16777216 processors" in result.stderr


def test_huge_smp_nodes_in_a_native_file_are_one_line(tmp_path: Path) -> None:
    def huge(data: dict) -> None:
        data["machine"]["processors"] = 2**40
        data["machine"]["nodes"] = {"count": 2**20, "cpus": 2**20}

    path = _instance(tmp_path, huge)
    for command in ("simulate", "bound"):
        args = ["-p", "easy"] if command == "simulate" else []
        result = _run(command, path, *args)
        assert result.exit_code == 2, result.output
        assert result.stderr == (
            f"optsched: error: {path}:1: machine: {2**40} processors with speeds "
            "or SMP nodes; at most 16777216 (one entry is kept per processor)\n"
        )


def test_a_processor_field_over_csvs_limit_is_read(tmp_path: Path) -> None:
    rows = simulated_rows(INSTANCE, tmp_path)
    assert rows[0][4] == "processors" and rows[1][3] == "12"
    # Job 1's 12 processors as 12 single intervals, padded with spaces to
    # pass csv's default field limit of 131,072 characters.
    first = int(rows[1][4].split("-")[0])
    rows[1][4] = (" " * 12_000).join(str(first + k) for k in range(12))
    assert len(rows[1][4]) > 131_072
    path = write_rows(tmp_path / "long.csv", rows)
    checked = _run("check", INSTANCE, path)
    assert checked.exit_code == 0, checked.output
    assert checked.stdout == "OK: 20 jobs, schedule valid\n"
    drawn = _run("plot", "gantt", path, INSTANCE, "-o", tmp_path / "g.png")
    assert drawn.exit_code == 0, drawn.output


def test_gantt_draws_a_huge_range_as_one_interval_and_refuses_it_off_machine(
    tmp_path: Path,
) -> None:
    rows = simulated_rows(INSTANCE, tmp_path)
    rows[1][4], rows[1][3] = "0-1000000000000", "1000000000001"
    path = write_rows(tmp_path / "huge.csv", rows)
    job = rows[1][0]
    # Without INSTANCE the machine is rebuilt to hold it: drawn at once.
    rebuilt = _run("plot", "gantt", path, "-o", tmp_path / "a.png")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert rebuilt.stdout.endswith("(20 jobs, m = 1000000000016)\n")
    # With the 100-processor instance: refused, not drawn off the chart.
    refused = _run("plot", "gantt", path, INSTANCE, "-o", tmp_path / "b.png")
    assert refused.exit_code == 2
    assert refused.stderr.endswith(
        f"optsched: error: {path}: job {job}: processor 1000000000000 is beyond the "
        "machine's 100 processors (0 to 99); cannot draw it\n"
    )
    assert not (tmp_path / "b.png").exists()


def test_a_busy_block_label_with_control_characters_makes_valid_svg(
    tmp_path: Path,
) -> None:
    label = "maint\x01\x1b[31m \x07x"

    def block(data: dict) -> None:
        data["machine"]["unavailable"] = [
            {"start": 0, "end": 500, "size": 4, "label": label}
        ]

    path = _instance(tmp_path, block)
    schedule = tmp_path / "s.csv"
    assert _run("simulate", path, "-p", "easy", "-o", schedule).exit_code == 0
    svg = tmp_path / "g.svg"
    result = _run("plot", "gantt", schedule, path, "-o", svg)
    assert result.exit_code == 0, result.output
    xml.dom.minidom.parse(str(svg))  # raises on invalid XML
    assert 'id="busy maint\\x01\\x1b[31m \\x07x"' in svg.read_text()


def test_a_lone_surrogate_in_a_name_is_refused_at_its_line(tmp_path: Path) -> None:
    text = INSTANCE.read_text()
    # A valid pair first (an emoji, U+1F600), then the lone escape.
    text = text.replace('"name": "KTH', '"name": "\\ud83d\\ude00 \\ud800KTH', 1)
    path = tmp_path / "s.json"
    path.write_text(text)
    result = _run("info", path)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"optsched: error: {path}:4: invalid JSON: a lone UTF-16 surrogate escape "
        "in a string ("
    )
    paired = tmp_path / "p.json"
    paired.write_text(
        INSTANCE.read_text().replace('"name": "', '"name": "\\ud83d\\ude00', 1)
    )
    assert _run("info", paired).exit_code == 0


def test_the_console_escapes_lone_surrogates() -> None:
    assert literal("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert literal("\U0001f600") == "\U0001f600"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_schedule_is_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "s.csv"
    os.mkfifo(fifo)
    result = _run("check", INSTANCE, fifo)
    assert result.exit_code == 2
    assert result.stderr == (
        f"optsched: error: {fifo}: cannot read file: not a regular file "
        "(a FIFO or a device may never end)\n"
    )
