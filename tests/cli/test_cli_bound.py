"""``optsched bound`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import trace_path

from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import Instance, Job, Machine
from optsched.io import read, read_schedule
from optsched.io.native import write_native
from optsched.objective import Objective


@pytest.fixture
def golden_file(tmp_path: Path) -> Path:
    """test_solve.golden_instance: cmax optimum 7, total completion 15."""
    jobs = [Job(1, 0, 2, 3), Job(2, 0, 1, 2), Job(3, 2, 1, 4)]
    path = tmp_path / "golden.json"
    write_native(Instance(Machine(2), jobs, name="golden"), path)
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["bound", *args])
    return result.exit_code, result.stdout, result.stderr


def test_prints_bounds_status_and_writes_files(
    golden_file: Path, tmp_path: Path
) -> None:
    out, sched = tmp_path / "r.json", tmp_path / "s.csv"
    code, stdout, _ = run(
        str(golden_file), "--objective", "wct", "--time-limit", "10",
        "-o", str(out), "--schedule-out", str(sched),
    )  # fmt: skip
    assert code == 0, stdout
    assert "best lower bound  15" in stdout
    assert "best upper bound  15" in stdout
    assert "status            OPTIMAL" in stdout
    assert "relative gap      0.0000%" in stdout
    for method in ("height", "fluid", "cpsat"):
        assert method in stdout
    record = json.loads(out.read_text())
    assert record["status"] == "OPTIMAL"
    assert record["objective"] == "wct:one"
    assert record["objective_value"] == record["lower_bound"] == 15
    assert record["gap"] == 0
    assert {b["method"] for b in record["bounds"]} >= {"height", "cpsat"}
    instance = read(golden_file)
    schedule = read_schedule(sched)
    assert check_schedule(instance, schedule) == []
    assert Objective("wct").value(instance, schedule) == 15


@pytest.mark.parametrize(
    ("args", "value"),
    [
        (["--backend", "milp"], "7"),
        (["--backend", "milp", "--solver", "cbc"], "7"),
        (["--backend", "milp", "--grid", "2"], None),
        (["--backend", "bounds-only"], None),
        (["--allocation", "contiguous"], "7"),
    ],
)
def test_backends_and_options(
    golden_file: Path, args: list[str], value: str | None
) -> None:
    code, stdout, stderr = run(str(golden_file), "--time-limit", "10", *args)
    assert code == 0, stderr
    if value is not None:
        assert f"best upper bound  {value}" in stdout
        assert "status            OPTIMAL" in stdout


def test_lp_only_prints_a_bound_without_schedule(
    golden_file: Path, tmp_path: Path
) -> None:
    code, stdout, _ = run(str(golden_file), "--backend", "milp", "--lp-only")
    assert code == 0
    assert "lp:highs" in stdout
    assert "status            BOUNDED" in stdout
    assert "best upper bound  -" in stdout
    code, _, stderr = run(
        str(golden_file), "--backend", "milp", "--lp-only",
        "--schedule-out", str(tmp_path / "s.csv"),
    )  # fmt: skip
    assert code == 2
    assert "no schedule to write" in stderr


def test_weights_and_relative(golden_file: Path) -> None:
    code, stdout, _ = run(
        str(golden_file), "--objective", "wct", "--weights", "size", "--relative"
    )
    assert code == 0
    # Optimal by hand with weights (2, 1, 1): C = (3, 5, 7), flow from
    # releases (0, 0, 2): 2*3 + 5 + 5 = 16.
    assert "best upper bound  16" in stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lp-only"], "--lp-only: only for --backend milp"),
        (["--grid", "5", "--backend", "cpsat"], "--grid: only for --backend milp"),
        (["--relative"], "--weights and --relative apply to --objective wct only"),
        (["--backend", "gurobi"], "'gurobi' is not one of"),
    ],
)
def test_usage_errors(golden_file: Path, args: list[str], message: str) -> None:
    code, _, stderr = run(str(golden_file), *args)
    assert code == 2
    assert message in stderr


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    code, _, stderr = run(str(tmp_path / "nope.json"))
    assert code == 2
    assert stderr.strip().count("\n") == 0
    assert "no such file" in stderr


def test_swf_window(tmp_path: Path) -> None:
    path = trace_path("KTH-SP2-1996-2.1-cln.swf")
    out = tmp_path / "r.json"
    code, _, stderr = run(
        str(path), "--first-job", "9000", "--jobs", "30",
        "--backend", "bounds-only", "-o", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    record = json.loads(out.read_text())
    assert record["jobs"] == 30
    assert record["backend"] == "bounds-only"
    assert record["lower_bound"] <= record["objective_value"]
    assert record["source"]["file"].endswith("KTH-SP2-1996-2.1-cln.swf")
