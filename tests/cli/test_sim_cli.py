"""``optsched simulate`` and ``optsched compare``."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.builders import CASE_A

from optsched.check import check_schedule
from optsched.cli import main
from optsched.cli.compare import _split_specs
from optsched.instance import Instance, Job, Machine
from optsched.io.native import write_native
from optsched.io.schedules import read_schedule
from optsched.metrics import summarize


@pytest.fixture
def instance_file(tmp_path: Path) -> tuple[Path, Instance]:
    instance = CASE_A.replace(name="case-a")
    path = tmp_path / "case-a.json"
    write_native(instance, path)
    return path, instance


def test_simulate_prints_the_metrics_and_writes_the_schedule(
    instance_file: tuple[Path, Instance], tmp_path: Path
) -> None:
    path, instance = instance_file
    out = tmp_path / "easy.csv"
    args = ["simulate", str(path), "-p", "easy", "-o", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    # EASY on case A: starts 0, 10, 1, 22, 2; ends 10, 15, 4, 24, 22.
    schedule = read_schedule(out)
    assert schedule.producer == "easy"
    assert {j: p.start for j, p in schedule.placements.items()} == {
        1: 0,
        2: 10,
        3: 1,
        4: 22,
        5: 2,
    }
    assert check_schedule(instance, schedule) == []
    summary = summarize(instance, schedule)
    rows = dict(re.findall(r"│ ([a-z][^│]*?) +│ +([^ │]+) │", result.output))
    assert rows["makespan (s)"] == "24" == f"{summary.makespan}"
    # completions 10, 15, 4, 24, 22, weights 1; releases 0, 0, 1, 2, 2
    assert rows["sum of completions (s)"] == "75"
    assert rows["mean response (s)"] == "14.00"  # (10+15+3+22+20) / 5
    assert rows["mean wait (s)"] == "6.00"  # waits 0, 10, 0, 20, 0
    assert rows["max wait (s)"] == "20"
    assert rows["jobs"] == "5"
    # max(1, (C - r) / max(p, 10)): 1, 1.5, 1, 2.2, 1 -> 1.34
    assert rows["mean bounded slowdown (10 s)"] == "1.340"
    # work 20 + 15 + 3 + 8 + 20 = 66 over 4 processors x 24 s
    assert rows["utilisation"] == "0.6875"


@pytest.mark.parametrize("fmt", ["csv", "batsim", "json"])
def test_simulate_output_formats(
    instance_file: tuple[Path, Instance], tmp_path: Path, fmt: str
) -> None:
    path, instance = instance_file
    out = tmp_path / f"schedule.{fmt}"
    args = ["simulate", str(path), "-p", "conservative", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--schedule-format", fmt])
    assert result.exit_code == 0, result.output
    schedule = read_schedule(out)
    assert check_schedule(instance, schedule) == []
    assert schedule[5].start == 17


def test_simulate_window_of_a_trace(tmp_path: Path) -> None:
    from support.paths import trace_path

    trace = trace_path("KTH-SP2-1996-2.1-cln.swf")
    args = ["simulate", str(trace), "-p", "fcfs", "--first-job", "0", "--jobs", "2000"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "37917.68" in result.output  # the golden mean wait
    assert "856.208" in result.output


def test_simulate_bad_input_is_one_line(instance_file: tuple[Path, Instance]) -> None:
    path, _ = instance_file
    runner = CliRunner()
    bad_policy = runner.invoke(main, ["simulate", str(path), "-p", "nope"])
    assert bad_policy.exit_code == 2
    assert "unknown policy 'nope'; valid names: fcfs" in bad_policy.output
    missing = runner.invoke(main, ["simulate", "no-such-file.swf"])
    assert missing.exit_code == 2
    assert "no such file" in missing.output
    migration = runner.invoke(main, ["simulate", str(path), "--migration"])
    assert migration.exit_code == 2
    assert "migration applies only to contiguous machines" in migration.output


def test_simulate_help_documents_the_specs() -> None:
    result = CliRunner().invoke(main, ["simulate", "--help"])
    assert result.exit_code == 0
    for text in ("backfill:depth=K|all", "best-package", "select=RULE", "oracle"):
        assert text in result.output


def test_simulate_reports_migrations(tmp_path: Path) -> None:
    jobs = (Job(1, 0, 1, 10), Job(2, 0, 1, 5), Job(3, 0, 1, 10), Job(4, 1, 2, 4))
    instance = Instance(Machine(4, "contiguous"), jobs, name="fragmented")
    path = tmp_path / "fragmented.json"
    write_native(instance, path)
    args = ["simulate", str(path), "-p", "fcfs", "--migration"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "migrations" in result.output
    assert "migrated processors" in result.output


def test_compare_one_row_per_policy(
    instance_file: tuple[Path, Instance], tmp_path: Path
) -> None:
    path, _ = instance_file
    out = tmp_path / "table.csv"
    policies = "fcfs,easy,conservative,spt:oracle"
    args = ["compare", str(path), "--policies", policies, "-o", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["policy"] for row in rows] == policies.split(",")
    # Makespans from the golden schedules: FCFS ends with job 5 at 37, EASY
    # with job 4 at 24, conservative with job 5 at 37, SPT with 1 at 27.
    assert [int(row["makespan"]) for row in rows] == [37, 24, 37, 27]
    # FCFS waits: 0, 10, 9, 13, 15 -> 9.4
    assert float(rows[0]["mean_wait"]) == pytest.approx(9.4)
    for name in ("fcfs", "easy", "conservative", "spt:oracle"):
        assert name in result.output
    # EASY: completions 10, 15, 4, 24, 22 (sum 75), responses sum 70
    assert rows[1]["weighted_completion"] == "75.0"
    assert float(rows[1]["mean_response"]) == pytest.approx(14.0)


def _header_cells(output: str) -> list[str]:
    header = next(line for line in output.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in header.strip("┃").split("┃")]


def test_compare_headers_name_their_units(
    instance_file: tuple[Path, Instance],
) -> None:
    path, _ = instance_file
    args = ["compare", str(path), "--policies", "fcfs,easy", "--wide"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert _header_cells(result.stdout) == [
        "policy",
        "makespan (s)",
        "sum C_j (s)",
        "mean response (s)",
        "mean wait (s)",
        "max wait (s)",
        "mean bsld",
        "utilisation",
        "killed (jobs)",
        "sim time (s)",
    ]
    easy = next(line for line in result.stdout.splitlines() if "│ easy" in line)
    cells = [cell.strip() for cell in easy.strip("│").split("│")]
    assert cells[1:4] == ["24", "75", "14.00"]


def test_weighted_completion_units(tmp_path: Path) -> None:
    # Weights equal to the sizes: sum q_j C_j is in processor-seconds.
    jobs = (Job(1, 0, 2, 10, weight=2.0), Job(2, 0, 1, 5, weight=1.0))
    path = tmp_path / "sized.json"
    write_native(Instance(Machine(4), jobs, name="sized"), path)
    runner = CliRunner()
    result = runner.invoke(main, ["compare", str(path), "--policies", "fcfs", "--wide"])
    assert result.exit_code == 0, result.output
    assert "sum w_j C_j (processor-s)" in _header_cells(result.stdout)
    result = runner.invoke(main, ["simulate", str(path), "-p", "fcfs"])
    assert result.exit_code == 0, result.output
    rows = dict(re.findall(r"│ ([a-z][^│]*?) +│ +([^ │]+) │", result.stdout))
    assert rows["sum of weighted completions (processor-s)"] == "25"  # 2*10 + 5
    # Other weights: weight-seconds.
    jobs = (Job(1, 0, 2, 10, weight=0.5), Job(2, 0, 1, 5, weight=1.0))
    write_native(Instance(Machine(4), jobs, name="weighted"), path)
    result = runner.invoke(main, ["compare", str(path), "--policies", "fcfs", "--wide"])
    assert "sum w_j C_j (weight-s)" in _header_cells(result.stdout)


def test_compare_rejects_a_bad_spec_before_simulating(
    instance_file: tuple[Path, Instance],
) -> None:
    path, _ = instance_file
    args = ["compare", str(path), "--policies", "easy,bogus"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "unknown policy 'bogus'" in result.output


def test_policy_lists_keep_spec_parameters_together() -> None:
    text = "fcfs,easy:order=spt,oracle,backfill:depth=2,select=largest"
    assert _split_specs(text) == [
        "fcfs",
        "easy:order=spt,oracle",
        "backfill:depth=2,select=largest",
    ]


def test_oracle_flag_makes_every_policy_an_oracle(tmp_path: Path) -> None:
    # m = 1; job 1 runs [0, 10). Job 2 claims 1 s but runs 5; job 3 claims
    # 50 s but runs 2. SPT by estimate runs 2 first; the oracle runs 3 first.
    jobs = (Job(1, 0, 1, 10, 10), Job(2, 1, 1, 5, 1), Job(3, 1, 1, 2, 50))
    path = tmp_path / "oracle.json"
    write_native(Instance(Machine(1), jobs, name="oracle"), path)
    out = tmp_path / "oracle.csv"
    args = ["simulate", str(path), "-p", "spt", "--oracle", "-o", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    schedule = read_schedule(out)
    assert schedule.producer == "spt:oracle"
    assert {j: p.start for j, p in schedule.placements.items()} == {1: 0, 2: 12, 3: 10}


def test_migrated_schedule_written_by_simulate_passes_check(tmp_path: Path) -> None:
    # m = 4, contiguous, first-fit: jobs 1, 2, 3 take processors 0, 1, 2 at 0.
    # Job 2 ends at 2, leaving 1 and 3 free; job 4 (2 processors) arrives at
    # 3 and only fits after compaction moves job 3 from processor 2 to 1.
    jobs = (Job(1, 0, 1, 10), Job(2, 0, 1, 2), Job(3, 0, 1, 10), Job(4, 3, 2, 5))
    instance = Instance(Machine(4, "contiguous"), jobs)
    path = tmp_path / "frag.json"
    write_native(instance, path)
    out = tmp_path / "frag.csv"
    runner = CliRunner()
    result = runner.invoke(
        main, ["simulate", str(path), "-p", "firstfit", "--migration", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    schedule = read_schedule(out)
    assert schedule[4].start == 3
    assert schedule[3].moves == ((3, (1,)),)
    assert check_schedule(instance, schedule) == []
    checked = runner.invoke(main, ["check", str(path), str(out)])
    assert checked.exit_code == 0, checked.output
