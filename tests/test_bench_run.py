"""End-to-end runs with the real task function: simulator and CP-SAT.

Every stored schedule is read back with the schedule reader, checked with
:func:`optsched.check.check_schedule` against its window, and its objective
and metrics recomputed with :mod:`optsched.metrics`.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from optsched.bench import Store, run_suite
from optsched.bench.suite import load_suite
from optsched.bench.tasks import expand
from optsched.check import check_schedule
from optsched.cli import main
from optsched.io.schedules import read_schedule
from optsched.metrics import summarize
from optsched.objective import Objective

DATA = Path(__file__).resolve().parent / "data" / "suites"
REPO = Path(__file__).resolve().parent.parent
TIMING = ["runtime", "started", "finished"]


def without_timing(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=TIMING).reset_index(drop=True)


def assert_rows_verified(rows: pd.DataFrame, suite_path: Path, tmp: Path) -> None:
    """Every row has a valid schedule whose recomputed numbers are the stored ones."""
    plan = expand(load_suite(suite_path))
    assert sorted(rows["task_id"]) == sorted(t.task_id for t in plan.tasks)
    by_id = rows.set_index("task_id", drop=False)
    for task, instance in plan.with_instances(plan.tasks):
        row = by_id.loc[task.task_id]
        assert row["status"] in ("OK", "OPTIMAL", "FEASIBLE"), row["error"]
        path = tmp / "schedule.json"
        path.write_text(row["schedule"])
        schedule = read_schedule(path)
        assert check_schedule(instance, schedule) == []
        value = Objective.parse(task.objective).value(instance, schedule)
        assert row["value"] == value
        assert row["upper"] == value
        assert json.loads(row["metrics"]) == summarize(instance, schedule).as_dict()
        if task.kind == "solver":
            assert row["lower"] <= row["upper"]
            assert json.loads(row["bounds"])[row["lower_method"]] <= row["lower"]
        else:
            assert pd.isna(row["lower"])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """Rows of an uninterrupted in-process run of the tiny suite."""
    store = tmp_path_factory.mktemp("tiny") / "r.sqlite"
    summary = run_suite(DATA / "tiny.toml", store)
    assert (summary.ran, summary.failed) == (18, 0)
    with Store(store) as results:
        return results.rows()


def test_tiny_rows_are_verified(tiny: pd.DataFrame, tmp_path: Path) -> None:
    assert_rows_verified(tiny, DATA / "tiny.toml", tmp_path)
    # 6-job windows: CP-SAT proves every optimum.
    solvers = tiny[tiny["kind"] == "solver"]
    assert set(solvers["status"]) == {"OPTIMAL"}
    assert (solvers["lower"] == solvers["upper"]).all()


def test_tiny_gap_rows(tiny: pd.DataFrame) -> None:
    from optsched.bench.store import gap_frame

    gap = gap_frame(tiny)
    assert len(gap) == 12  # 3 windows x 2 objectives x 2 policies
    optimum = tiny[tiny["kind"] == "solver"].set_index(["window", "objective"])
    for row in gap.itertuples():
        best = optimum.loc[(row.window, row.objective), "upper"]
        assert row.optimal
        assert row.lower == row.upper == best
        assert row.ratio_low == row.ratio_high == row.value / best
        assert row.ratio_low >= 1.0


def test_process_pool_and_dask_give_the_same_rows(
    tiny: pd.DataFrame, tmp_path: Path
) -> None:
    pool = tmp_path / "pool.sqlite"
    assert run_suite(DATA / "tiny.toml", pool, workers=2).ran == 18
    dask = tmp_path / "dask.sqlite"
    assert run_suite(DATA / "tiny.toml", dask, dask_local=2).ran == 18
    with Store(pool) as a, Store(dask) as b:
        pool_rows, dask_rows = a.rows(), b.rows()
    pd.testing.assert_frame_equal(without_timing(pool_rows), without_timing(tiny))
    pd.testing.assert_frame_equal(without_timing(dask_rows), without_timing(pool_rows))


def _stored(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            (count,) = db.execute("SELECT COUNT(*) FROM tasks").fetchone()
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0  # the tables are not created yet
    return int(count)


def test_killed_run_resumes_to_the_same_rows(tmp_path: Path) -> None:
    suite = DATA / "kill.toml"
    store = tmp_path / "killed.sqlite"
    command = [
        *(str(Path(sys.executable).parent / "optsched"), "bench", str(suite)),
        *("--store", str(store), "--no-progress"),
    ]
    # A session of its own, so that the whole process group can be killed.
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while _stored(store) == 0:
            assert process.poll() is None, process.stderr.read()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "no task finished within 60 s"
            time.sleep(0.005)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    killed_at = _stored(store)
    assert 0 < killed_at < 48, "the run was not killed midway"
    with Store(store) as results:
        partial = results.rows()
    # Resume in this process; then an uninterrupted run for comparison.
    resumed = run_suite(suite, store)
    assert (resumed.skipped, resumed.ran, resumed.failed) == (
        killed_at,
        48 - killed_at,
        0,
    )
    fresh = tmp_path / "fresh.sqlite"
    assert run_suite(suite, fresh).ran == 48
    with Store(store) as a, Store(fresh) as b:
        after, expected = a.rows(), b.rows()
    assert after["task_id"].is_unique and len(after) == 48
    pd.testing.assert_frame_equal(without_timing(after), without_timing(expected))
    # The rows stored before the kill were kept as they were.
    kept = after[after["task_id"].isin(partial["task_id"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, partial)
    assert_rows_verified(after, suite, tmp_path)


def test_smoke_suite_completes(traces_dir: Path, tmp_path: Path) -> None:
    suite = REPO / "benchmarks" / "suites" / "smoke.toml"
    store = tmp_path / "smoke.sqlite"
    runner = CliRunner()
    result = runner.invoke(main, ["bench", str(suite), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("suite smoke: 24 tasks, 0 already stored, 24 run")
    assert result.stderr == ""  # no progress bar off a terminal, no failure
    again = runner.invoke(main, ["bench", str(suite), "--store", str(store)])
    assert again.exit_code == 0
    assert again.stdout.startswith("suite smoke: 24 tasks, 24 already stored, 0 run")
    with Store(store) as results:
        rows = results.rows()
        gap = results.gap_rows()
    assert_rows_verified(rows, suite, tmp_path)
    assert len(gap) == 3 * 2 * 3
    assert (gap["ratio_low"] >= 1.0).all()
    assert (gap["ratio_low"] <= gap["ratio_high"]).all()


def test_cli_reports_failed_tasks_and_exits_1(tmp_path: Path) -> None:
    # No recorded wait times in tiny.swf: windows 1 and 2 cannot be cut.
    text = (DATA / "tiny.toml").read_text()
    text = text.replace("count = 3\n", 'count = 3\ninitial_state = "recorded"\n')
    text = text.replace('path = "tiny.swf"', f'path = "{DATA / "tiny.swf"}"')
    suite = tmp_path / "recorded.toml"
    suite.write_text(text)
    store = tmp_path / "r.sqlite"
    runner = CliRunner()
    result = runner.invoke(main, ["bench", str(suite), "--store", str(store)])
    assert result.exit_code == 1
    assert result.stdout.startswith(
        "suite tiny: 18 tasks, 0 already stored, 18 run (12 failed) in "
    )
    lines = result.stderr.splitlines()
    assert (
        lines[0]
        == "12 failed tasks in the store (rerun with --retry-failed); first ones:"
    )
    assert lines[1] == (
        "  first=6,jobs=6,state=recorded policy easy cmax: cannot cut the window: "
        "InputError: tiny.swf: --initial-state recorded needs recorded wait times, "
        "but the trace has none (SWF field 3 is -1 for every job)"
    )
    assert len(lines) == 6  # the first five failures
    again = runner.invoke(main, ["bench", str(suite), "--store", str(store)])
    assert again.exit_code == 1
    assert again.stdout.startswith("suite tiny: 18 tasks, 18 already stored, 0 run")


def test_cli_refuses_two_executors(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["bench", str(DATA / "tiny.toml"), "--workers", "2", "--dask-local", "2"],
    )
    assert result.exit_code == 2
    assert "give at most one of --workers, --dask-local" in result.stderr
