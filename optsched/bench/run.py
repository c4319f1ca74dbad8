"""Run a benchmark suite into a results store (the library side of ``bench``)."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.bench.executor import (
    IN_PROCESS,
    Execution,
    Progress,
    ProgressBar,
    TaskFunction,
    run_tasks,
)
from optsched.bench.store import Store
from optsched.bench.suite import Suite, load_suite
from optsched.bench.tasks import Plan, expand


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What one run of a suite did.

    Attributes
    ----------
    suite
        The suite's name.
    store
        The results store written.
    total
        Tasks of the suite.
    skipped
        Tasks already in the store before this run (not run again).
    ran
        Tasks finished (and stored) by this run.
    failed
        Of those, the ones that failed.
    failed_total
        Failed tasks of the suite in the store after the run (earlier runs'
        included).
    elsewhere
        Pending tasks that another process running the same suite into the
        store finished meanwhile (not run here).
    provisional
        Tasks of the suite stored as provisional after the run (interrupted
        or time-starved solves, :mod:`optsched.bench.store`): the next run
        computes them again.
    unpinned
        Traces the suite gives without a sha256: path (as in the suite) to
        the computed digest, which every row records.
    elapsed
        Wall-clock seconds of the run, reading the suite included.
    """

    suite: str
    store: Path
    total: int
    skipped: int
    ran: int
    failed: int
    failed_total: int
    unpinned: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0
    elsewhere: int = 0
    provisional: int = 0

    @property
    def remaining(self) -> int:
        """Tasks neither stored before nor finished now (an interrupted run)."""
        return self.total - self.skipped - self.ran - self.elsewhere


def run_suite(
    suite_path: str | Path,
    store_path: str | Path,
    *,
    workers: int = 1,
    dask_address: str | None = None,
    dask_local: int | None = None,
    progress: bool | Progress = False,
    retry_failed: bool = False,
    task_function: TaskFunction | None = None,
    deterministic: bool = False,
) -> RunSummary:
    """Run every task of a suite not yet in the store; store each as it ends.

    Parameters
    ----------
    suite_path
        The suite TOML file (:func:`optsched.bench.suite.load_suite`).
    store_path
        The SQLite results store, created when absent.
    workers
        Local process pool size; 1 runs the tasks in this process.
    dask_address, dask_local
        Run on a Dask scheduler (``tcp://host:8786``) or on a new
        ``distributed.LocalCluster`` of that many workers instead.
    progress
        Draw a progress bar on stderr (only when it is a terminal), or a
        :class:`~optsched.bench.executor.Progress` told of every row.
    retry_failed
        Run again the suite's tasks stored with status ``ERROR``.
    task_function
        Replaces :func:`optsched.bench.tasks.execute_task` (tests, the
        harness-overhead benchmark).
    deterministic
        Run the CP-SAT back-ends in deterministic mode
        (:func:`optsched.models.rigid.cpsat.deterministic`).

    Returns
    -------
    RunSummary

    Raises
    ------
    optsched.bench.executor.Interrupted
        SIGINT or SIGTERM stopped the run; finished rows stay stored.
    """
    began = time.perf_counter()
    suite = load_suite(suite_path)
    with Store(store_path) as store:
        summary = run_plan(
            suite,
            store,
            execution=Execution(workers, dask_address, dask_local, task_function),
            progress=progress,
            retry_failed=retry_failed,
            plan=expand(suite, deterministic=deterministic),
        )
    return dataclasses.replace(summary, elapsed=time.perf_counter() - began)


def run_plan(
    suite: Suite,
    store: Store,
    *,
    execution: Execution = IN_PROCESS,
    progress: bool | Progress = False,
    retry_failed: bool = False,
    plan: Plan | None = None,
) -> RunSummary:
    """Expand ``suite`` and run its pending tasks into an open ``store``.

    The one path from windows to rows: ``optsched bench`` runs it into a
    results file, ``optsched gap`` into an in-memory store (see
    :func:`run_suite` for the parameters; ``execution`` holds its workers,
    Dask options and task function; ``plan`` is ``expand(suite)`` when
    the caller has it already).
    """
    began = time.perf_counter()
    plan = plan if plan is not None else expand(suite)
    ids = {task.task_id for task in plan.tasks}
    if retry_failed:
        store.delete_failed(ids)
    done = store.done_ids(suite.name) & ids
    pending = [task for task in plan.tasks if task.task_id not in done]
    if isinstance(progress, bool):
        bar: contextlib.AbstractContextManager[Any] = ProgressBar(
            len(pending), label=suite.name, enabled=progress
        )
    else:
        bar = contextlib.nullcontext(progress)
    with bar as reporter:
        counts = run_tasks(pending, plan, store, execution=execution, progress=reporter)
    failed_total = len(store.failed_ids(suite.name) & ids)
    provisional = len(store.provisional_ids(suite.name) & ids)
    return RunSummary(
        suite=suite.name,
        store=store.path,
        total=len(plan.tasks),
        skipped=len(done),
        ran=counts.done,
        failed=counts.failed,
        failed_total=failed_total,
        unpinned={t.path: t.sha256 for t in suite.traces if not t.pinned},
        elapsed=time.perf_counter() - began,
        elsewhere=counts.elsewhere,
        provisional=provisional,
    )
