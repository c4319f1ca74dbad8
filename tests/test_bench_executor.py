"""The executor with stub task functions.

The stubs stand in for simulation and solving so that these tests check the
harness alone: one row per task, failures recorded (a task that raises, a
worker process that dies), interrupted runs resumed. The real task function,
the process pool and Dask run in tests/test_bench_run.py.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from optsched.bench import Store, run_suite
from optsched.bench.executor import run_safely
from optsched.bench.suite import load_suite
from optsched.bench.tasks import RESULT_FIELDS, Task, expand, to_json
from optsched.instance import Instance

SUITE = Path(__file__).resolve().parent / "data" / "suites" / "tiny.toml"
TIMING = ["runtime", "started", "finished"]


def fake(task: Task, instance: Instance) -> dict[str, Any]:
    """Numbers that depend on the task and its instance only."""
    work = float(sum(j.runtime for j in instance.jobs))
    if task.kind == "solver":
        lower, upper, status = work, work + 10, "FEASIBLE"
    else:
        lower, upper, status = None, work + 10 + len(task.name), "OK"
    return {
        "status": status,
        "value": upper,
        "lower": lower,
        "lower_method": "sum" if lower is not None else None,
        "upper": upper,
        "upper_source": task.name,
        "bounds": to_json({"sum": work} if lower is not None else {}),
        "metrics": to_json({"jobs": len(instance.jobs)}),
        "schedule": None,
        "runtime": 0.0,
    }


def failing_on_easy(task: Task, instance: Instance) -> dict[str, Any]:
    """Fails on the second window's easy tasks."""
    if task.name == "easy" and task.window_index == 1:
        raise RuntimeError(f"easy cannot do {task.window}")
    return fake(task, instance)


def dying_on_easy(task: Task, instance: Instance) -> dict[str, Any]:
    """Kills its worker process on the second window's easy cmax task."""
    if task.name == "easy" and task.window_index == 1 and task.objective == "cmax":
        os._exit(3)
    return fake(task, instance)


class Interrupting:
    """Raises KeyboardInterrupt (like Ctrl-C) when asked for task ``after``."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.calls = 0

    def __call__(self, task: Task, instance: Instance) -> dict[str, Any]:
        self.calls += 1
        if self.calls > self.after:
            raise KeyboardInterrupt
        return fake(task, instance)


def without_timing(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=TIMING).reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The rows of an uninterrupted in-process run of the tiny suite."""
    store = tmp_path_factory.mktemp("reference") / "r.sqlite"
    summary = run_suite(SUITE, store, task_function=fake)
    assert (summary.total, summary.skipped, summary.ran, summary.failed) == (
        18,
        0,
        18,
        0,
    )
    with Store(store) as results:
        return results.rows()


def test_rows_of_the_stub(reference: pd.DataFrame) -> None:
    plan = expand(load_suite(SUITE))
    assert list(reference["task_id"]) != []
    assert sorted(reference["task_id"]) == sorted(t.task_id for t in plan.tasks)
    by_id = reference.set_index("task_id")
    for task, instance in plan.with_instances(plan.tasks):
        got = by_id.loc[task.task_id]
        expected = fake(task, instance)
        for column in ("status", "lower_method", "upper_source", "bounds", "metrics"):
            assert got[column] == expected[column]
        for column in ("value", "upper"):
            assert got[column] == expected[column]
        assert got["window"] == task.window
        assert got["window_index"] == task.window_index
        assert got["params"] == task.params_json
        assert got["trace_sha256"] == task.trace_sha256
        assert pd.isna(got["error"])
        versions = json.loads(got["versions"])
        assert {"python", "optsched", "ortools", "dask"} <= set(versions)
        assert got["started"] <= got["finished"]
        assert got["started"].endswith("+00:00")


def test_run_safely_turns_exceptions_into_error_rows() -> None:
    plan = expand(load_suite(SUITE))
    task, instance = next(
        (t, i)
        for t, i in plan.with_instances(plan.tasks)
        if t.name == "easy" and t.window_index == 1
    )
    row = run_safely(failing_on_easy, task, instance)
    assert row["status"] == "ERROR"
    assert row["error"].startswith(
        "RuntimeError: easy cannot do first=6,jobs=6,state=none\n\nTraceback"
    )
    assert all(row[f] is None for f in RESULT_FIELDS if f != "status")
    assert row["task_id"] == task.task_id


def test_run_safely_checks_the_result_keys() -> None:
    plan = expand(load_suite(SUITE))
    task, instance = next(plan.with_instances(plan.tasks))
    row = run_safely(lambda t, i: {"status": "OK"}, task, instance)
    assert row["status"] == "ERROR"
    assert row["error"].startswith("ValueError: task function returned keys")


def test_a_failing_task_is_recorded_and_the_suite_goes_on(
    tmp_path: Path, reference: pd.DataFrame
) -> None:
    store = tmp_path / "r.sqlite"
    summary = run_suite(SUITE, store, task_function=failing_on_easy)
    assert (summary.ran, summary.failed, summary.failed_total) == (18, 2, 2)
    with Store(store) as results:
        rows = results.rows()
    failed = rows["status"] == "ERROR"
    assert sorted(
        zip(
            rows["name"][failed],
            rows["window_index"][failed],
            rows["objective"][failed],
            strict=True,
        )
    ) == [("easy", 1, "cmax"), ("easy", 1, "wct:one")]
    pd.testing.assert_frame_equal(
        without_timing(rows[~failed]), without_timing(reference[~failed])
    )
    # A plain re-run keeps the failures; --retry-failed runs them again.
    again = run_suite(SUITE, store, task_function=failing_on_easy)
    assert (again.skipped, again.ran, again.failed_total) == (18, 0, 2)
    retried = run_suite(SUITE, store, task_function=fake, retry_failed=True)
    assert (retried.skipped, retried.ran, retried.failed, retried.failed_total) == (
        16,
        2,
        0,
        0,
    )
    with Store(store) as results:
        pd.testing.assert_frame_equal(
            without_timing(results.rows()), without_timing(reference)
        )


def test_interrupted_run_resumes_without_repeating_a_task(
    tmp_path: Path, reference: pd.DataFrame
) -> None:
    store = tmp_path / "r.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run_suite(SUITE, store, task_function=Interrupting(after=7))
    with Store(store) as results:
        partial = results.rows()
    # The 7 tasks finished before the interrupt are stored, in task order.
    plan = expand(load_suite(SUITE))
    assert sorted(partial["task_id"]) == sorted(t.task_id for t in plan.tasks[:7])
    summary = run_suite(SUITE, store, task_function=fake)
    assert (summary.skipped, summary.ran, summary.failed) == (7, 11, 0)
    with Store(store) as results:
        resumed = results.rows()
    assert resumed["task_id"].is_unique
    pd.testing.assert_frame_equal(without_timing(resumed), without_timing(reference))
    # The rows stored before the interrupt were not rewritten.
    pd.testing.assert_frame_equal(
        resumed[resumed["task_id"].isin(partial["task_id"])].reset_index(drop=True),
        partial,
    )


def test_a_dead_worker_is_recorded_and_the_suite_goes_on(
    tmp_path: Path, reference: pd.DataFrame
) -> None:
    store = tmp_path / "r.sqlite"
    summary = run_suite(SUITE, store, workers=2, task_function=dying_on_easy)
    assert (summary.ran, summary.failed) == (18, 1)
    with Store(store) as results:
        rows = results.rows()
    # Only the task that kills its worker fails; the tasks in flight in the
    # same pool were run again, alone, and succeeded.
    killer = (
        (rows["name"] == "easy")
        & (rows["window_index"] == 1)
        & (rows["objective"] == "cmax")
    )
    assert list(rows.loc[killer, "status"]) == ["ERROR"]
    assert list(rows.loc[killer, "error"]) == [
        "the worker process died running this task (run it again with --retry-failed)"
    ]
    pd.testing.assert_frame_equal(
        without_timing(rows[~killer]), without_timing(reference[~killer])
    )


def test_progress_bar_counts_and_draws_only_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from optsched.bench.executor import ProgressBar

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120)
    with ProgressBar(3, label="tiny", console=terminal) as bar:
        for failed in (False, True, False):
            bar.advance(failed)
    assert (bar.done, bar.failed) == (3, 1)
    # The last frame drawn (ANSI control sequences removed).
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert last.startswith("tiny ")
    assert "3/3 done, 1 failed, 0 remaining" in last
    assert "ETA" in last
    piped = io.StringIO()
    with ProgressBar(3, console=Console(file=piped, force_terminal=False)) as bar:
        bar.advance(False)
    assert piped.getvalue() == ""
    assert bar.done == 1


def test_a_window_that_cannot_be_cut_fails_its_tasks_only(tmp_path: Path) -> None:
    # tiny.swf has no recorded wait times: only the first window, with no
    # job before it, can start from the recorded state.
    text = SUITE.read_text().replace(
        "count = 3\n", 'count = 3\ninitial_state = "recorded"\n'
    )
    suite = tmp_path / "recorded.toml"
    suite.write_text(
        text.replace('path = "tiny.swf"', f'path = "{SUITE.parent}/tiny.swf"')
    )
    store = tmp_path / "r.sqlite"
    summary = run_suite(suite, store, task_function=fake)
    assert (summary.ran, summary.failed) == (18, 12)
    with Store(store) as results:
        rows = results.rows()
    failed = rows["status"] == "ERROR"
    assert set(rows.loc[~failed, "window_index"]) == {0}
    assert set(rows.loc[failed, "window_index"]) == {1, 2}
    assert all(
        e.startswith(
            "cannot cut the window: InputError: tiny.swf: --initial-state recorded "
            "needs recorded wait times"
        )
        for e in rows.loc[failed, "error"]
    )
