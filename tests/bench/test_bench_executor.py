"""The executor with stub task functions.

The stubs stand in for simulation and solving so that these tests check the
harness alone: one row per task, failures recorded (a task that raises, a
worker process that dies), interrupted runs resumed. The real task function,
the process pool and Dask run in tests/bench/test_bench_run.py.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from support.bench import fake
from support.paths import DATA

from optsched.bench import Store, run_suite
from optsched.bench.executor import run_safely
from optsched.bench.store import gap_frame
from optsched.bench.suite import load_suite
from optsched.bench.tasks import (
    OPTIONAL_FIELDS,
    RESULT_FIELDS,
    Task,
    execute_task,
    expand,
    to_json,
)
from optsched.instance import Instance

SUITE = DATA / "suites" / "tiny.toml"
TIMING = ["runtime", "started", "finished"]


def failing_on_easy(task: Task, instance: Instance) -> dict[str, Any]:
    """Fails on the second window's easy tasks."""
    if task.name == "easy" and task.window_index == 1:
        raise RuntimeError(f"easy cannot do {task.window}")
    return fake(task, instance)


def dying_on_easy(task: Task, instance: Instance) -> dict[str, Any]:
    """Kills its worker process on the second window's easy task."""
    if task.name == "easy" and task.window_index == 1:
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
    # 3 windows x (2 policy tasks + 2 objectives x 1 solver task).
    assert (summary.total, summary.skipped, summary.ran, summary.failed) == (
        12,
        0,
        12,
        0,
    )
    with Store(store) as results:
        return results.rows()


def test_rows_of_the_stub(reference: pd.DataFrame) -> None:
    plan = expand(load_suite(SUITE))
    assert list(reference["task_id"]) != []
    assert sorted(reference["task_id"]) == sorted(t.task_id for t in plan.tasks)
    by_id = reference.set_index("task_id")
    for task in plan.tasks:
        instance = plan.instance(task)
        got = by_id.loc[task.task_id]
        expected = fake(task, instance)
        for column in ("status", "bounds", "metrics"):
            assert got[column] == expected[column]
        for column in ("value", "upper", "lower", "lower_method", "upper_source"):
            if expected[column] is None:
                assert pd.isna(got[column])
            else:
                assert got[column] == expected[column]
        if task.kind == "policy":
            assert got["values"] == expected["values"]
            assert task.objective == ""
        else:
            assert pd.isna(got["values"])
        # Optional fields the stub leaves out get their defaults.
        assert (got["killed"], got["lost_work"], got["interrupted"]) == (0, 0.0, 0)
        assert pd.isna(got["rejected"])
        assert got["window"] == task.window
        assert got["window_index"] == task.window_index
        assert got["params"] == task.params_json
        assert got["trace_sha256"] == task.trace_sha256
        assert pd.isna(got["error"])
        versions = json.loads(got["versions"])
        assert {"python", "optsched", "ortools", "dask"} <= set(versions)
        assert got["started"] <= got["finished"]
        assert got["started"].endswith("+00:00")


def test_gap_rows_of_the_stub_by_hand(reference: pd.DataFrame) -> None:
    # Work per window (tiny.swf run times): 25+6+33+9+29+13, 11+16+23+14+4+19,
    # 24+33+33+4+38+40. fcfs and easy both have 4 letters: every policy has
    # cmax = W + 14 and wct = 2 (W + 14); the solver gives [W, W + 10].
    gap = gap_frame(reference)
    assert len(gap) == 3 * 2 * 2  # windows x policies x objectives
    for row in gap.itertuples():
        work = (115.0, 87.0, 172.0)[row.window_index]
        value = (work + 14) * (1 if row.objective == "cmax" else 2)
        assert row.policy in ("fcfs", "easy")
        assert row.value == value
        assert (row.lower, row.upper) == (work, work + 10)
        assert (row.lower_method, row.upper_source) == ("sum", "cpsat")
        assert row.ratio_low == pytest.approx(value / (work + 10), rel=1e-12)
        assert row.ratio_high == pytest.approx(value / work, rel=1e-12)
        assert row.comparable and not row.optimal


def test_run_safely_turns_exceptions_into_error_rows() -> None:
    plan = expand(load_suite(SUITE))
    task = next(t for t in plan.tasks if t.name == "easy" and t.window_index == 1)
    row = run_safely(failing_on_easy, task, plan.instance(task))
    assert row["status"] == "ERROR"
    assert row["error"].startswith(
        "RuntimeError: easy cannot do first=6,jobs=6,state=none\n\nTraceback"
    )
    assert all(row[f] is None for f in RESULT_FIELDS if f != "status")
    assert {f: row[f] for f in OPTIONAL_FIELDS} == OPTIONAL_FIELDS
    assert row["task_id"] == task.task_id


def test_run_safely_checks_the_result_keys() -> None:
    plan = expand(load_suite(SUITE))
    task = plan.tasks[0]
    instance = plan.instance(task)
    row = run_safely(lambda t, i: {"status": "OK"}, task, instance)
    assert row["status"] == "ERROR"
    assert row["error"].startswith("ValueError: task function returned keys")
    # Optional fields may be added, nothing else.
    extra = {**fake(task, instance), "colour": "red"}
    row = run_safely(lambda t, i: extra, task, instance)
    assert row["status"] == "ERROR"
    assert "'colour'" in row["error"].splitlines()[0]
    optional = {**fake(task, instance), "killed": 2, "lost_work": 7.0}
    row = run_safely(lambda t, i: optional, task, instance)
    assert (row["status"], row["error"]) == ("OK", None)
    assert (row["killed"], row["lost_work"], row["interrupted"]) == (2, 7.0, 0)


def test_a_failing_task_is_recorded_and_the_suite_goes_on(
    tmp_path: Path, reference: pd.DataFrame
) -> None:
    store = tmp_path / "r.sqlite"
    summary = run_suite(SUITE, store, task_function=failing_on_easy)
    assert (summary.ran, summary.failed, summary.failed_total) == (12, 1, 1)
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
    ) == [("easy", 1, "")]  # one policy task per window, both objectives
    pd.testing.assert_frame_equal(
        without_timing(rows[~failed]), without_timing(reference[~failed])
    )
    # A plain re-run keeps the failures; --retry-failed runs them again.
    again = run_suite(SUITE, store, task_function=failing_on_easy)
    assert (again.skipped, again.ran, again.failed_total) == (12, 0, 1)
    retried = run_suite(SUITE, store, task_function=fake, retry_failed=True)
    assert (retried.skipped, retried.ran, retried.failed, retried.failed_total) == (
        11,
        1,
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
    # The 7 tasks finished before the interrupt are stored, in task order
    # (window 0's four tasks, window 1's policies and its cmax solver task).
    plan = expand(load_suite(SUITE))
    assert sorted(partial["task_id"]) == sorted(t.task_id for t in plan.tasks[:7])
    summary = run_suite(SUITE, store, task_function=fake)
    assert (summary.skipped, summary.ran, summary.failed) == (7, 5, 0)
    with Store(store) as results:
        resumed = results.rows()
    assert resumed["task_id"].is_unique
    pd.testing.assert_frame_equal(without_timing(resumed), without_timing(reference))
    # The rows stored before the interrupt were not rewritten.
    pd.testing.assert_frame_equal(
        resumed[resumed["task_id"].isin(partial["task_id"])].reset_index(drop=True),
        partial,
    )


@pytest.mark.parametrize(
    ("executor", "error"),
    [
        pytest.param(
            {"workers": 2},
            "the worker process died running this task "
            "(run it again with --retry-failed)",
            id="process-pool",
        ),
        # Dask restarts the dead worker and tries the task on 3 more before
        # giving up; none of the other tasks may be failed with it, and the
        # run must end (it once waited for ever, with no worker left).
        pytest.param(
            {"dask_local": 2},
            "the worker failed: KilledWorker: Attempted to run task",
            id="dask",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_dead_worker_is_recorded_and_the_suite_goes_on(
    executor: dict[str, int], error: str, tmp_path: Path, reference: pd.DataFrame
) -> None:
    store = tmp_path / "r.sqlite"
    summary = run_suite(SUITE, store, task_function=dying_on_easy, **executor)
    assert (summary.ran, summary.failed) == (12, 1)
    with Store(store) as results:
        rows = results.rows()
    # Only the task that kills its worker fails; the tasks in flight beside
    # it ran again (in the pool: alone) and succeeded.
    killer = (rows["name"] == "easy") & (rows["window_index"] == 1)
    assert list(rows.loc[killer, "status"]) == ["ERROR"]
    (text,) = rows.loc[killer, "error"]
    assert text.startswith(error)
    assert text.endswith("(run it again with --retry-failed)")
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
            bar.advance(failed, {"task_id": "x", "status": "OK"})
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


def _edited_suite(path: Path, old: str, new: str) -> Path:
    """:data:`SUITE` with ``old`` replaced by ``new`` and its trace path made
    absolute, written to ``path``."""
    text = SUITE.read_text().replace(old, new)
    path.write_text(
        text.replace('path = "tiny.swf"', f'path = "{SUITE.parent}/tiny.swf"')
    )
    return path


def test_a_window_that_cannot_be_cut_fails_its_tasks_only(tmp_path: Path) -> None:
    # tiny.swf has no recorded wait times: only the first window, with no
    # job before it, can start from the recorded state.
    suite = _edited_suite(
        tmp_path / "recorded.toml",
        "count = 3\n",
        'count = 3\ninitial_state = "recorded"\n',
    )
    store = tmp_path / "r.sqlite"
    summary = run_suite(suite, store, task_function=fake)
    # Windows 1 and 2: their 2 policy and 2 solver tasks each.
    assert (summary.ran, summary.failed) == (12, 8)
    with Store(store) as results:
        rows = results.rows()
    failed = rows["status"] == "ERROR"
    assert set(rows.loc[~failed, "window_index"]) == {0}
    assert set(rows.loc[failed, "window_index"]) == {1, 2}
    # Only the window that was cut is kept in the store.
    assert rows.loc[failed, "instance_sha256"].isna().all()
    assert rows.loc[~failed, "instance_sha256"].nunique() == 1
    assert all(
        e.startswith(
            "cannot cut the window: InputError: tiny.swf: --initial-state recorded "
            "needs recorded wait times"
        )
        for e in rows.loc[failed, "error"]
    )


def with_incumbents(task: Task, instance: Instance) -> dict[str, Any]:
    """Real policy schedules (conservative's marked as killing a job); solver
    tasks write the incumbents they were given into their metrics."""
    if task.kind == "policy":
        result = execute_task(task, instance)
        if task.name == "conservative":
            result["killed"] = 1  # as if a job had been stopped at its estimate
        return result
    from optsched.io.schedules import schedule_to_dict

    given = [[i.source, schedule_to_dict(i.schedule)] for i in task.incumbents]
    return {**fake(task, instance), "metrics": to_json({"incumbents": given})}


@pytest.mark.parametrize("workers", [1, 2])
def test_solver_tasks_get_the_complete_policy_schedules_of_their_window(
    tmp_path: Path, workers: int
) -> None:
    suite = _edited_suite(
        tmp_path / "three.toml",
        'policies = ["fcfs", "easy"]',
        'policies = ["fcfs", "easy", "conservative"]',
    )
    store = tmp_path / "r.sqlite"
    # In a pool of two, solver tasks could overtake the policy tasks if the
    # executor did not hold them back.
    summary = run_suite(suite, store, workers=workers, task_function=with_incumbents)
    assert (summary.ran, summary.failed) == (3 * (3 + 2), 0)
    with Store(store) as results:
        rows = results.rows()
    policies = rows[rows["kind"] == "policy"]
    killed = policies[policies["name"] == "conservative"]
    assert list(killed["killed"]) == [1, 1, 1]
    assert killed["schedule"].notna().all()  # a schedule, but not a complete one
    solvers = rows[rows["kind"] == "solver"]
    assert len(solvers) == 3 * 2
    for solver in solvers.to_dict("records"):
        window = policies[policies["window"] == solver["window"]]
        # Run after every policy task of its window was stored...
        assert (solver["started"] >= window["finished"]).all()
        # ...and given the complete ones: easy and fcfs, not conservative.
        given = json.loads(solver["metrics"])["incumbents"]
        assert [source for source, _ in given] == ["policy:easy", "policy:fcfs"]
        stored = {
            f"policy:{r['name']}": r["schedule"] for r in window.to_dict("records")
        }
        for source, schedule in given:
            assert schedule == json.loads(stored[source])  # this window's schedule


def test_the_store_keeps_every_window_instance(tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    run_suite(SUITE, store, task_function=fake)
    plan = expand(load_suite(SUITE))
    with Store(store) as results:
        rows = {r.task_id: r for r in results.task_rows()}
        assert len(rows) == len(plan.tasks)
        for task in plan.tasks:
            sha256 = rows[task.task_id].instance_sha256
            assert sha256 is not None
            assert results.instance(sha256) == plan.instance(task)
    # One instance per window, shared by the window's tasks.
    by_window: dict[int, set[str | None]] = {}
    for r in rows.values():
        by_window.setdefault(r.window_index, set()).add(r.instance_sha256)
    assert [len(shas) for _, shas in sorted(by_window.items())] == [1, 1, 1]
    assert len(set.union(*by_window.values())) == 3


class Recording:
    """A progress reporter that keeps what it is told."""

    def __init__(self) -> None:
        self.calls: list[tuple[bool, dict[str, Any] | None]] = []

    def advance(self, failed: bool, row: dict[str, Any] | None = None) -> None:
        self.calls.append((failed, row))


def test_progress_is_told_each_stored_row(tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    progress = Recording()
    run_suite(SUITE, store, task_function=failing_on_easy, progress=progress)
    assert len(progress.calls) == 12
    with Store(store) as results:
        stored = results.rows().set_index("task_id", drop=False)
    assert sorted(row["task_id"] for _, row in progress.calls if row) == sorted(
        stored["task_id"]
    )
    for failed, row in progress.calls:
        assert row is not None
        assert failed is (row["status"] == "ERROR")
        expected = stored.loc[row["task_id"]]
        for column in ("window", "window_index", "kind", "name", "status", "values"):
            assert row[column] == expected[column] or (
                row[column] is None and pd.isna(expected[column])
            )
    assert [row["name"] for failed, row in progress.calls if failed] == ["easy"]
