"""End-to-end runs with the real task function: simulator and CP-SAT.

Every stored schedule is read back with the schedule reader, checked with
:func:`optsched.check.check_schedule` against its window, and its objective
and metrics recomputed with :mod:`optsched.metrics`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from support import paths
from support.paths import REPO

from optsched.analysis.gap import lost_work
from optsched.bench import Store, run_suite
from optsched.bench.suite import load_suite
from optsched.bench.tasks import expand
from optsched.check import check_schedule
from optsched.cli import main
from optsched.io.native import instance_to_json
from optsched.io.schedules import read_schedule
from optsched.metrics import summarize
from optsched.objective import Objective

DATA = paths.DATA / "suites"
TIMING = ["runtime", "started", "finished"]


def without_timing(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=TIMING).reset_index(drop=True)


def assert_rows_verified(rows: pd.DataFrame, suite_path: Path, tmp: Path) -> None:
    """Every row has a valid schedule whose recomputed numbers are the stored ones."""
    plan = expand(load_suite(suite_path))
    assert sorted(rows["task_id"]) == sorted(t.task_id for t in plan.tasks)
    by_id = rows.set_index("task_id", drop=False)
    for task in plan.tasks:
        instance = plan.instance(task)
        row = by_id.loc[task.task_id]
        assert row["status"] in ("OK", "OPTIMAL", "FEASIBLE"), row["error"]
        # The window's instance, as kept in the store's instances table.
        sha256 = hashlib.sha256(instance_to_json(instance).encode()).hexdigest()
        assert row["instance_sha256"] == sha256
        path = tmp / "schedule.json"
        path.write_text(row["schedule"])
        schedule = read_schedule(path)
        assert check_schedule(instance, schedule) == []
        assert json.loads(row["metrics"]) == summarize(instance, schedule).as_dict()
        if task.kind == "solver":
            value = Objective.parse(task.objective).value(instance, schedule)
            assert row["value"] == value
            assert row["upper"] == value
            assert row["lower"] <= row["upper"]
            assert json.loads(row["bounds"])[row["lower_method"]] <= row["lower"]
            assert pd.isna(row["values"])
        else:
            # Simulated once: every objective of the suite from one schedule.
            assert json.loads(row["values"]) == {
                label: Objective.parse(label).value(instance, schedule)
                for label in task.params["objectives"]
            }
            assert pd.isna(row["value"]) and pd.isna(row["upper"])
            assert pd.isna(row["lower"])
            assert row["killed"] == len(schedule.killed)
            assert row["lost_work"] == lost_work(instance, schedule)


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of an uninterrupted in-process run of the tiny suite."""
    store = tmp_path_factory.mktemp("tiny") / "r.sqlite"
    summary = run_suite(DATA / "tiny.toml", store)
    # 3 windows x (2 policy tasks + 2 objectives x 1 solver task).
    assert (summary.ran, summary.failed) == (12, 0)
    return store


@pytest.fixture(scope="module")
def tiny(tiny_store: Path) -> pd.DataFrame:
    """Rows of an uninterrupted in-process run of the tiny suite."""
    with Store(tiny_store) as results:
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
        # tiny.swf's estimates exceed its run times: no job is killed.
        assert row.comparable and row.killed == 0 and pd.isna(row.defect)
    # Each solver started from the policies' schedules: the optimum is never
    # worse than the best policy of its window.
    for (window, objective), group in gap.groupby(["window", "objective"]):
        assert optimum.loc[(window, objective), "upper"] <= group["value"].min()


def test_gap_and_bench_give_identical_rows(tiny_store: Path, tmp_path: Path) -> None:
    # The options of tests/data/suites/tiny.toml on the command line.
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(
        main,
        [
            "gap", str(DATA / "tiny.swf"),
            "--window-jobs", "6", "--windows", "3",
            "--policies", "fcfs,easy", "--objective", "cmax,wct",
            "--backend", "cpsat", "--time-limit", "10", "--workers", "1",
            "--no-progress", "-o", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    columns = [
        "window", "policy", "objective", "value", "lower", "upper",
        "lower_method", "upper_source", "optimal", "ratio_low", "ratio_high",
        "comparable",
    ]  # fmt: skip
    keys = ["window", "objective", "policy"]
    from_gap = pd.read_csv(out)
    with Store(tiny_store) as results:
        from_bench = results.gap_rows()
    assert len(from_gap) == len(from_bench) == 12
    assert set(from_gap["suite"]) == {"gap"} and set(from_bench["suite"]) == {"tiny"}
    pd.testing.assert_frame_equal(
        from_gap[columns].sort_values(keys).reset_index(drop=True),
        from_bench[columns].sort_values(keys).reset_index(drop=True),
        check_dtype=False,
    )


@pytest.mark.parametrize(
    "executor",
    [
        pytest.param({"workers": 2}, id="process-pool"),
        pytest.param({"dask_local": 2}, id="dask"),
    ],
)
def test_executor_gives_the_same_rows(
    executor: dict[str, int], tiny: pd.DataFrame, tmp_path: Path
) -> None:
    store = tmp_path / "executor.sqlite"
    summary = run_suite(DATA / "tiny.toml", store, **executor)
    assert (summary.ran, summary.failed) == (12, 0)
    with Store(store) as results:
        rows = results.rows()
    pd.testing.assert_frame_equal(without_timing(rows), without_timing(tiny))


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
    # 6 windows x (3 policy tasks + 2 objectives x 1 solver task) = 30.
    assert 0 < killed_at < 30, "the run was not killed midway"
    with Store(store) as results:
        partial = results.rows()
    # Resume in this process; then an uninterrupted run for comparison.
    resumed = run_suite(suite, store)
    assert (resumed.skipped, resumed.ran, resumed.failed) == (
        killed_at,
        30 - killed_at,
        0,
    )
    fresh = tmp_path / "fresh.sqlite"
    assert run_suite(suite, fresh).ran == 30
    with Store(store) as a, Store(fresh) as b:
        after, expected = a.rows(), b.rows()
    assert after["task_id"].is_unique and len(after) == 30
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
    # 3 windows x (3 policy tasks + 2 objectives x 1 solver task).
    assert result.stdout.startswith("suite smoke: 15 tasks, 0 already stored, 15 run")
    assert result.stderr.startswith("optsched: note: ")  # KTH's 1 skipped job
    assert result.stderr.count("\n") == 1  # no progress bar off a terminal, no failure
    again = runner.invoke(main, ["bench", str(suite), "--store", str(store)])
    assert again.exit_code == 0
    assert again.stdout.startswith("suite smoke: 15 tasks, 15 already stored, 0 run")
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
        "suite tiny: 12 tasks, 0 already stored, 12 run (8 failed) in "
    )
    lines = result.stderr.splitlines()
    assert (
        lines[0]
        == "8 failed tasks in the store (rerun with --retry-failed); first ones:"
    )
    # The first failure is window 1's first policy task (a policy task has no
    # objective of its own: it measures them all).
    assert re.fullmatch(
        "  first=6,jobs=6,state=recorded policy easy ?: cannot cut the window: "
        "InputError: tiny.swf: --initial-state recorded needs recorded wait times, "
        r"but the trace has none \(SWF field 3 is -1 for every job\)",
        lines[1],
    ), lines[1]
    assert len(lines) == 6  # the first five failures
    again = runner.invoke(main, ["bench", str(suite), "--store", str(store)])
    assert again.exit_code == 1
    assert again.stdout.startswith("suite tiny: 12 tasks, 12 already stored, 0 run")


def test_cli_refuses_two_executors(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["bench", str(DATA / "tiny.toml"), "--workers", "2", "--dask-local", "2"],
    )
    assert result.exit_code == 2
    assert "give at most one of --workers, --dask-local" in result.stderr
