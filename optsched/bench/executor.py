"""Run benchmark tasks in-process, on a local process pool, or on Dask.

Whatever runs the tasks, the parent process writes each result to the
store as soon as it arrives (one transaction per row), so a killed run loses
no finished task. Workers never touch the store.

The function shipped to a worker is :func:`run_safely`, which wraps the task
function: an exception becomes a row with status ``ERROR`` and the error
text, and the run goes on. A worker process that dies (a segfault in a
solver, an out-of-memory kill) is handled too: in the local pool, the tasks
it took down with it run again one at a time, and only a task that kills a
worker of its own is recorded as failed; Dask retries such tasks on other
workers before reporting them (``KilledWorker``), which is recorded.
``optsched bench --retry-failed`` runs failed tasks again.

Only a few tasks are in flight at a time (twice the workers locally, at
least 16 on Dask), so instances are cut and shipped as workers free up
rather than all at once.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import datetime
import functools
import importlib.metadata
import multiprocessing
import platform
import socket
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

from optsched.bench.store import ERROR, Store
from optsched.bench.tasks import OPTIONAL_FIELDS, RESULT_FIELDS, Task, to_json
from optsched.instance import Instance

TaskFunction = Callable[[Task, Instance], dict[str, Any]]
"""Takes a task and its window's instance, returns the :data:`RESULT_FIELDS`."""

VERSIONED_PACKAGES = (
    "optsched",
    "ortools",
    "pulp",
    "highspy",
    "numpy",
    "pandas",
    "dask",
    "distributed",
)


@functools.cache
def versions_json() -> str:
    """Python and package versions of this process, as JSON (cached)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return to_json(versions)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def _failed(error: str) -> dict[str, Any]:
    result: dict[str, Any] = dict.fromkeys(RESULT_FIELDS)
    return {**result, **OPTIONAL_FIELDS, "status": ERROR, "error": error}


def _error_text(error: BaseException) -> str:
    # First line for tables; the traceback below it for whoever debugs.
    head = f"{type(error).__name__}: {error}".splitlines()[0]
    tail = "".join(traceback.format_exception(error)).rstrip()
    return f"{head}\n\n{tail}"


def run_safely(
    function: TaskFunction, task: Task, instance: Instance
) -> dict[str, Any]:
    """Run one task and return its complete store row (never raises Exception)."""
    started = _now()
    try:
        result = function(task, instance)
        keys = set(result)
        if not set(RESULT_FIELDS) <= keys <= set(RESULT_FIELDS) | set(OPTIONAL_FIELDS):
            raise ValueError(
                f"task function returned keys {sorted(result)}, expected "
                f"{sorted(RESULT_FIELDS)} and optionally {sorted(OPTIONAL_FIELDS)}"
            )
        result = {**OPTIONAL_FIELDS, **result, "error": None}
        if result["status"] == ERROR:
            result["error"] = f"{task.name} reported status {ERROR}"
    except Exception as error:
        result = _failed(_error_text(error))
    return {
        **task.identity(),
        **result,
        "versions": versions_json(),
        "started": started,
        "finished": _now(),
        "host": socket.gethostname(),
    }


def failed_row(task: Task, error: str) -> dict[str, Any]:
    """The row of a task that failed before or around its task function."""
    return {
        **task.identity(),
        **_failed(error),
        "versions": versions_json(),
        "started": None,
        "finished": _now(),
        "host": socket.gethostname(),
    }


def lost_row(task: Task, reason: str) -> dict[str, Any]:
    """The row of a task whose worker failed outside the task function."""
    row = failed_row(task, f"{reason} (run it again with --retry-failed)")
    return {**row, "versions": None, "host": None}  # unknown: not this process


@dataclass
class Counts:
    """Tasks finished in this run, and how many of them failed."""

    done: int = 0
    failed: int = 0


Work = tuple[Task, Instance]
Outcome = dict[str, Any] | Exception
"""A task's row, or the exception that lost it (its worker failed)."""


class _Backend(Protocol):
    capacity: int

    def submit(self, function: TaskFunction, items: list[Work]) -> list[Any]:
        """Start the tasks; one handle (a future) per task."""

    def wait_first(self, handles: list[Any]) -> list[tuple[Any, Outcome]]:
        """Block until some tasks end; their handles and outcomes."""

    def recover(
        self, function: TaskFunction, task: Task, instance: Instance, error: Exception
    ) -> dict[str, Any]:
        """The row of a task whose worker failed."""

    def cancel(self, handles: list[Any]) -> None:
        """Stop what can be stopped (the run is interrupted)."""


def _pool_outcome(future: concurrent.futures.Future[Any]) -> Outcome:
    error = future.exception()
    if error is None:
        row: dict[str, Any] = future.result()
        return row
    if isinstance(error, Exception):
        return error
    raise error  # KeyboardInterrupt and the like: stop the run


def _spawn_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    # spawn: a fresh interpreter per worker, never a fork of a parent that
    # runs a progress-bar thread or has solver threads alive.
    context = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(workers, mp_context=context)


class _LocalPool:
    """A ``ProcessPoolExecutor``, replaced by a fresh one if a worker dies.

    A dead worker breaks the whole pool and fails every task in flight, not
    only the one that killed it. Those tasks are run again one at a time in
    a pool of their own, so that only a task that kills its worker when
    alone is recorded as failed.
    """

    def __init__(self, workers: int) -> None:
        self.capacity = 2 * workers
        self.workers = workers
        self.pool = _spawn_pool(workers)
        self.alone: concurrent.futures.ProcessPoolExecutor | None = None

    def submit(self, function: TaskFunction, items: list[Work]) -> list[Any]:
        return [self._submit(function, *item) for item in items]

    def _submit(self, function: TaskFunction, task: Task, instance: Instance) -> Any:
        try:
            return self.pool.submit(run_safely, function, task, instance)
        except BrokenProcessPool:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = _spawn_pool(self.workers)
            return self.pool.submit(run_safely, function, task, instance)

    def wait_first(self, handles: list[Any]) -> list[tuple[Any, Outcome]]:
        done, _ = concurrent.futures.wait(
            handles, return_when=concurrent.futures.FIRST_COMPLETED
        )
        return [(future, _pool_outcome(future)) for future in done]

    def recover(
        self, function: TaskFunction, task: Task, instance: Instance, error: Exception
    ) -> dict[str, Any]:
        if not isinstance(error, BrokenProcessPool):
            return lost_row(task, f"the worker failed: {type(error).__name__}: {error}")
        if self.alone is None:
            self.alone = _spawn_pool(1)
        try:
            result: dict[str, Any] = self.alone.submit(
                run_safely, function, task, instance
            ).result()
        except BrokenProcessPool:
            self.alone.shutdown(wait=False)
            self.alone = None
            return lost_row(task, "the worker process died running this task")
        return result

    def cancel(self, futures: list[Any]) -> None:
        for pool in (self.pool, self.alone):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        for pool in (self.pool, self.alone):
            if pool is not None:
                pool.shutdown(wait=True)


@dataclass(frozen=True, slots=True)
class _Shipment:
    """A task and its instance as one Dask argument.

    Dask hashes ("tokenizes") every argument it is given, which for a whole
    instance costs milliseconds; the task id already is a content hash.
    """

    task: Task
    instance: Instance

    def __dask_tokenize__(self) -> str:
        return self.task.task_id


def _run_shipment(function: TaskFunction, shipment: _Shipment) -> dict[str, Any]:
    return run_safely(function, shipment.task, shipment.instance)


class _Dask:
    """A ``distributed.Client`` (on an address, or on its own LocalCluster)."""

    def __init__(self, client: Any) -> None:
        import distributed

        self.client = client
        # More in flight than for a local pool: each round trip to the
        # scheduler costs milliseconds, which queued tasks hide.
        threads = sum(client.nthreads().values())
        self.capacity = max(16, 4 * threads)
        self.completed = distributed.as_completed(
            loop=client.loop, with_results=True, raise_errors=False
        )

    def submit(self, function: TaskFunction, items: list[Work]) -> list[Any]:
        # One graph for the batch (one round trip), the task ids as keys.
        futures: list[Any] = self.client.map(
            functools.partial(_run_shipment, function),
            [_Shipment(task, instance) for task, instance in items],
            key=[f"optsched-{task.task_id}" for task, _ in items],
        )
        self.completed.update(futures)
        return futures

    def wait_first(self, handles: list[Any]) -> list[tuple[Any, Outcome]]:
        # Results are fetched in the background by ``as_completed``; a failed
        # future comes with (type, exception, traceback).
        return [
            (future, _dask_outcome(future, result))
            for future, result in self.completed.next_batch(block=True)
        ]

    def recover(
        self, function: TaskFunction, task: Task, instance: Instance, error: Exception
    ) -> dict[str, Any]:
        # Dask already ran the task again elsewhere before giving up on it
        # (KilledWorker after ``distributed.scheduler.allowed-failures``).
        return lost_row(task, f"the worker failed: {type(error).__name__}: {error}")

    def cancel(self, futures: list[Any]) -> None:
        self.client.cancel(futures)


def _dask_outcome(future: Any, result: Any) -> Outcome:
    if isinstance(result, dict):
        return result
    if future.status == "error":
        error: Exception = result[1]  # (type, exception, traceback)
        return error
    return RuntimeError(f"Dask future {future.status}: {result!r}")


@contextlib.contextmanager
def _dask_backend(address: str | None, local_workers: int | None) -> Iterator[_Dask]:
    import logging

    from optsched.extras import require

    distributed = require("distributed", "dask", "bench --dask")

    if address is not None:
        with distributed.Client(address) as client:
            yield _Dask(client)
        return
    with (
        distributed.LocalCluster(
            n_workers=local_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield _Dask(client)


@contextlib.contextmanager
def _pool_backend(workers: int) -> Iterator[_LocalPool]:
    pool = _LocalPool(workers)
    try:
        yield pool
    except BaseException:
        # Interrupted or failing to store: do not wait for running tasks.
        pool.cancel([])
        raise
    pool.close()


class Progress(Protocol):
    """What the executor tells about every finished task."""

    def advance(self, failed: bool, row: dict[str, Any] | None = None) -> None: ...


class _Silent:
    def advance(self, failed: bool, row: dict[str, Any] | None = None) -> None:
        pass


class ProgressBar:
    """A rich progress bar: done, failed, remaining and ETA, on stderr.

    It draws nothing unless ``enabled`` and stderr (or ``console``, a
    ``rich.console.Console``) is a terminal, so logs and pipes stay clean.
    Use as a context manager.
    """

    def __init__(
        self,
        total: int,
        *,
        label: str = "",
        enabled: bool = True,
        console: Any = None,
    ) -> None:
        from optsched.cli.console import stderr_console

        self.total = total
        self.done = 0
        self.failed = 0
        self.label = label
        console = console or stderr_console()
        self._bar = self._make_bar(console) if enabled and console.is_terminal else None

    def _make_bar(self, console: Any) -> Any:
        from rich import progress

        return progress.Progress(
            progress.TextColumn("{task.description}"),
            progress.BarColumn(),
            progress.TextColumn(
                "{task.completed:.0f}/{task.total:.0f} done, "
                "[red]{task.fields[failed]} "
                "failed[/], {task.fields[remaining]} remaining"
            ),
            progress.TimeElapsedColumn(),
            progress.TextColumn("ETA"),
            progress.TimeRemainingColumn(),
            console=console,
        )

    def __enter__(self) -> ProgressBar:
        if self._bar is not None:
            self._bar.start()
            self._id = self._bar.add_task(
                self.label, total=self.total, failed=0, remaining=self.total
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, failed: bool, row: dict[str, Any] | None = None) -> None:
        """Count one finished task."""
        self.done += 1
        self.failed += failed
        if self._bar is not None:
            self._bar.update(
                self._id,
                advance=1,
                failed=self.failed,
                remaining=self.total - self.done,
            )


class InstanceSource(Protocol):
    """Cuts the instance of a task's window (``ValueError`` when it cannot)."""

    def instance(self, task: Task) -> Instance: ...


class _Ready:
    """Tasks in plan order, released once the tasks they come after are stored.

    A solver task waits for its window's policy tasks; when it becomes ready
    it receives their complete schedules from the store as incumbents. Tasks
    whose window cannot be cut are recorded as failed without running.
    """

    LOOKAHEAD = 256
    """Blocked tasks looked past for a ready one (tasks come window by
    window, so a blocked solver task is passed by the next window's policy
    tasks only)."""

    def __init__(
        self,
        tasks: Iterable[Task],
        source: InstanceSource,
        store: Store,
        record: Callable[[dict[str, Any], str | None], None],
    ) -> None:
        self.waiting: collections.deque[Task] = collections.deque(tasks)
        self.source = source
        self.store = store
        self.record = record
        self.stored = store.done_ids()
        self.shas: dict[tuple[str, str], str] = {}

    def stored_now(self, task_id: str) -> None:
        self.stored.add(task_id)

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def take(self, limit: int) -> list[tuple[Task, Instance, str | None]]:
        """Up to ``limit`` ready tasks with their instances (plan order)."""
        out: list[tuple[Task, Instance, str | None]] = []
        skipped: list[Task] = []
        looked = 0
        while self.waiting and len(out) < limit and looked < self.LOOKAHEAD:
            task = self.waiting.popleft()
            if not all(dep in self.stored for dep in task.after):
                skipped.append(task)
                looked += 1
                continue
            ready = self._prepare(task)
            if ready is not None:
                out.append(ready)
        self.waiting.extendleft(reversed(skipped))
        return out

    def _prepare(self, task: Task) -> tuple[Task, Instance, str | None] | None:
        try:
            instance = self.source.instance(task)
        except ValueError as error:
            self.record(
                failed_row(task, f"cannot cut the window: {_error_text(error)}"), None
            )
            return None
        key = (task.trace_sha256, task.window)
        if key not in self.shas:
            self.shas[key] = self.store.add_instance(instance)
        if task.after:
            task = dataclasses.replace(
                task, incumbents=tuple(self.store.incumbents(task.after))
            )
        return task, instance, self.shas[key]


def run_tasks(
    tasks: Iterable[Task],
    source: InstanceSource,
    store: Store,
    *,
    workers: int = 1,
    dask_address: str | None = None,
    dask_local: int | None = None,
    task_function: TaskFunction | None = None,
    progress: Progress | None = None,
) -> Counts:
    """Run every task; store each row as it finishes.

    Parameters
    ----------
    tasks
        Tasks in plan order. A task runs once every task of its
        :attr:`~optsched.bench.tasks.Task.after` is in the store, with their
        complete schedules as incumbents.
    source
        Cuts each task's instance (:class:`optsched.bench.tasks.Plan`); a
        window that cannot be cut fails its tasks, not the run. Each
        window's instance is kept in the store.
    store
        Where rows go, written by this (parent) process only.
    workers
        Local pool size; 1 runs in this process (no pickling, easy to debug).
    dask_address, dask_local
        Run on the Dask scheduler at this address, or on a new
        ``LocalCluster`` of this many single-threaded worker processes.
    task_function
        The task function (default :func:`optsched.bench.tasks.execute_task`);
        it must be importable by the workers.
    progress
        Told about every finished task.
    """
    if task_function is None:
        from optsched.bench.tasks import execute_task

        task_function = execute_task
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if dask_address is not None and dask_local is not None:
        raise ValueError(
            "give a Dask scheduler address or a local cluster size, not both"
        )
    counts = Counts()
    reporter = progress or _Silent()

    def record(row: dict[str, Any], sha256: str | None) -> None:
        row = {**row, "instance_sha256": sha256}
        store.insert(row)
        ready.stored_now(row["task_id"])
        failed = row["status"] == ERROR
        counts.done += 1
        counts.failed += failed
        reporter.advance(failed, row)

    ready = _Ready(tasks, source, store, record)
    if not ready:
        return counts  # nothing to run: do not start a pool or a cluster
    if dask_address is not None or dask_local is not None:
        with _dask_backend(dask_address, dask_local) as dask:
            _run_bounded(dask, task_function, ready, record)
    elif workers == 1:
        while ready:
            batch = ready.take(1)
            for task, instance, sha256 in batch:
                record(run_safely(task_function, task, instance), sha256)
            if not batch and ready:
                _stuck(ready)
    else:
        with _pool_backend(workers) as pool:
            _run_bounded(pool, task_function, ready, record)
    return counts


def _stuck(ready: _Ready) -> None:
    task = ready.waiting[0]
    missing = [dep for dep in task.after if dep not in ready.stored]
    raise RuntimeError(
        f"task {task.task_id} waits for tasks {missing[:3]} that are not planned "
        "(a bug in the task graph)"
    )


def _run_bounded(
    backend: _Backend,
    function: TaskFunction,
    ready: _Ready,
    record: Callable[[dict[str, Any], str | None], None],
) -> None:
    """Keep ``backend.capacity`` tasks in flight; record each as it completes."""
    pending: dict[Any, tuple[Task, Instance, str | None]] = {}
    try:
        while True:
            batch = ready.take(backend.capacity - len(pending))
            if batch:
                work = [(task, instance) for task, instance, _ in batch]
                pending.update(zip(backend.submit(function, work), batch, strict=True))
            if not pending:
                if ready:
                    _stuck(ready)
                return
            for handle, outcome in backend.wait_first(list(pending)):
                task, instance, sha256 = pending.pop(handle)
                if isinstance(outcome, Exception):
                    outcome = backend.recover(function, task, instance, outcome)
                record(outcome, sha256)
    except BaseException:
        backend.cancel(list(pending))
        raise
