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

Signals. While :func:`run_tasks` runs in the main thread, SIGINT (Ctrl-C)
and SIGTERM stop the run within a second or two and raise
:class:`Interrupted` (a ``KeyboardInterrupt`` carrying the signal number):
a thread woken by the signal stops the CP-SAT searches of this process
(:func:`optsched.models.rigid.cpsat.stop_searches`), HiGHS is cancelled by the
``KeyboardInterrupt``, and pool workers are killed. Every finished row is
kept; the task in flight is either not stored or stored as provisional
(``incomplete = "interrupted by SIGINT"``), which the next run computes
again. Pool workers ignore SIGINT (the parent decides) and die with their
parent, even when it is killed with SIGKILL.

Several processes may run one suite into one store at once: each task is
claimed first (:meth:`~optsched.bench.store.Store.claim`), so none is
computed twice; a process waits for the tasks others are running, and takes
over those of a process that died.
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
import os
import platform
import signal
import socket
import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

from optsched.bench.store import BUSY, DONE, ERROR, Store
from optsched.bench.tasks import OPTIONAL_FIELDS, RESULT_FIELDS, Task, to_json
from optsched.instance import Instance
from optsched.startup import watched_signals

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
    # A user's policy that raised: the frames of their code, not ours.
    tail = getattr(error, "user_traceback", None)
    if tail is None:
        tail = "".join(traceback.format_exception(error))
    return f"{head}\n\n{tail.rstrip()}"


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
    return _row(task, result, started)


def failed_row(task: Task, error: str) -> dict[str, Any]:
    """The row of a task that failed before or around its task function."""
    return _row(task, _failed(error), None)


def _row(task: Task, result: dict[str, Any], started: str | None) -> dict[str, Any]:
    """A task's store row: its identity, ``result``, and where and when it ran
    (``started``: ``None`` when its function never started)."""
    return {
        **task.identity(),
        **result,
        "versions": versions_json(),
        "started": started,
        "finished": _now(),
        "host": socket.gethostname(),
    }


def lost_row(task: Task, reason: str) -> dict[str, Any]:
    """The row of a task whose worker failed outside the task function."""
    row = failed_row(task, f"{reason} (run it again with --retry-failed)")
    return {**row, "versions": None, "host": None}  # unknown: not this process


@dataclass(frozen=True, slots=True)
class Execution:
    """Where and how the tasks of a run execute.

    Attributes
    ----------
    workers
        Local pool size; 1 runs in this process (no pickling, easy to debug).
    dask_address, dask_local
        Run on the Dask scheduler at this address, or on a new
        ``LocalCluster`` of this many single-threaded worker processes.
    task_function
        The task function (default :func:`optsched.bench.tasks.execute_task`);
        it must be importable by the workers.
    """

    workers: int = 1
    dask_address: str | None = None
    dask_local: int | None = None
    task_function: TaskFunction | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.dask_address is not None and self.dask_local is not None:
            raise ValueError(
                "give a Dask scheduler address or a local cluster size, not both"
            )


IN_PROCESS = Execution()
"""Every task in this process, with the default task function."""


@dataclass
class Counts:
    """Tasks finished in this run, how many of them failed, and how many
    pending tasks another process stored meanwhile (``elsewhere``)."""

    done: int = 0
    failed: int = 0
    elsewhere: int = 0


# --------------------------------------------------------------------------
# Signals
# --------------------------------------------------------------------------

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
PROVEN = frozenset({"OK", "OPTIMAL", "INFEASIBLE"})
"""Statuses of a row that a signal during its task does not weaken."""


class Interrupted(KeyboardInterrupt):
    """The run was stopped by signal ``signum`` (SIGINT or SIGTERM).

    A ``KeyboardInterrupt``, so code that stops on Ctrl-C stops on it too;
    a command exits with :attr:`exit_status` (130 or 143).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """128 + the signal number, as a shell reports a death by signal."""
        return 128 + self.signum


class _Signals:
    """SIGINT and SIGTERM handling for one run (see the module notes)."""

    def __init__(self) -> None:
        self.received: int | None = None

    def handle(self, signum: int, frame: object) -> None:
        """The Python-level handler: remember the first signal, stop the run."""
        if self.received is None:
            self.received = signum
        raise Interrupted(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[_Signals]:
    """Make SIGINT and SIGTERM raise :class:`Interrupted` and stop CP-SAT
    (:func:`optsched.startup.watched_signals`: main thread only, the previous
    handlers restored on exit)."""
    state = _Signals()
    with watched_signals(state.handle):
        yield state


def _cut_short(row: dict[str, Any], signum: int) -> dict[str, Any] | None:
    """The row of the task that ran when ``signum`` came: kept if proven or
    provisional (an unproven solve), dropped if it failed (the signal may be
    why)."""
    if row["status"] in PROVEN:
        return row
    if row["status"] == ERROR or row["kind"] != "solver":
        return None
    reason = f"interrupted by {signal.Signals(signum).name}"
    return {**row, "interrupted": 1, "incomplete": reason}


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
    return concurrent.futures.ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )


PR_SET_PDEATHSIG = 1
"""``prctl`` option (linux/prctl.h): a signal sent when the parent dies."""


def _init_worker(parent: int) -> None:
    """Set up a pool worker: it leaves signals to the parent and dies with it.

    Ctrl-C reaches the whole process group; the parent decides what stops
    (and kills the workers). A worker left without its parent (killed with
    SIGKILL) would otherwise run its solve to the end and hold its memory:
    on Linux the kernel kills it (``PR_SET_PDEATHSIG``); elsewhere a thread
    notices that the parent changed (``os.getppid``) and exits.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        _die_with_parent()
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the line above took effect
    threading.Thread(
        target=_watch_parent, args=(parent,), name="optsched-parent", daemon=True
    ).start()


def _die_with_parent() -> None:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the getppid watcher still works


def _watch_parent(parent: int, period: float = 0.5) -> None:
    while os.getppid() == parent:
        time.sleep(period)
    os._exit(1)  # stops a running solve too: nothing here is worth keeping


def _kill_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill the pool's worker processes (their tasks are abandoned)."""
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.kill()


class _LocalPool:
    """A ``ProcessPoolExecutor``, replaced by a fresh one if a worker dies.

    A dead worker breaks the whole pool and fails every task in flight, not
    only the one that killed it. Those tasks are run again one at a time in
    a pool of their own, so that only a task that kills its worker when
    alone is recorded as failed.

    Why not a library that respawns workers: loky breaks the same way
    (``TerminatedWorkerError`` is a ``BrokenProcessPool``) and
    ``multiprocessing.Pool`` respawns a dead worker but never completes
    its task; Dask, which re-runs only the dead worker's tasks, is the
    ``--dask-local`` back-end and measured three times slower per task and
    no faster after a death (benchmarks/README.md, "A worker that dies
    mid-solve").
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
        # Kill the workers: a running solve would otherwise hold the exit of
        # this process (concurrent.futures joins its workers) until it ends.
        for pool in (self.pool, self.alone):
            if pool is not None:
                _kill_workers(pool)
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


LOCAL_CLUSTER_CONFIG = {
    # A worker holds only the task it runs, so that a worker's death makes
    # only that task suspect: with the default (1.1) a task queued behind a
    # task that kills its worker dies with it and is failed (KilledWorker)
    # after 3 deaths it did not cause.
    "distributed.scheduler.worker-saturation": 1.0,
    # A lost worker's nanny is closed for good when no worker of its name is
    # back after this delay; a task that kills every worker it runs on makes
    # that happen (the restarts are a few seconds apart), and the cluster was
    # left with no worker and the run waiting for ever. Nannies restart their
    # workers; the cluster is closed when the run ends.
    "distributed.deploy.lost-worker-timeout": "1 day",
}
"""Dask settings of ``--dask-local`` (benchmarks/README.md, "A worker that
dies mid-solve")."""


@contextlib.contextmanager
def _dask_backend(address: str | None, local_workers: int | None) -> Iterator[_Dask]:
    import logging

    from optsched.extras import require

    distributed = require("distributed", "dask", "bench --dask")

    if address is not None:
        with distributed.Client(address) as client:
            yield _Dask(client)
        return
    import dask

    with (
        dask.config.set(LOCAL_CLUSTER_CONFIG),
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
        from optsched.console import stderr_console

        self.total = total
        self.done = 0
        self.failed = 0
        self.label = label
        console = console or stderr_console()
        self._bar = self._make_bar(console) if enabled and console.is_terminal else None

    def _make_bar(self, console: Any) -> Any:
        from rich import progress

        return progress.Progress(
            progress.TextColumn("{task.description}", markup=False),
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
            from optsched.console import literal

            self._bar.start()
            self._id = self._bar.add_task(
                literal(self.label), total=self.total, failed=0, remaining=self.total
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
    whose window cannot be cut are recorded as failed without running. A
    task is claimed in the store before it is handed out: one stored or
    claimed by another process meanwhile is not run here (module notes).
    """

    LOOKAHEAD = 256
    """Blocked tasks looked past for a ready one (tasks come window by
    window, so a blocked solver task is passed by the next window's policy
    tasks only)."""

    RETRY = 1.0
    """Seconds before a task claimed by another process is looked at again."""

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
        self.planned = self.stored | {task.task_id for task in self.waiting}
        self.shas: dict[tuple[str, str], str] = {}
        self.busy: dict[str, float] = {}
        """Tasks another process claimed, and when to look at them again."""
        self.elsewhere = 0
        """Tasks found stored by another process instead of run here."""

    def stored_now(self, task_id: str) -> None:
        self.stored.add(task_id)

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def take(self, limit: int) -> list[tuple[Task, Instance, str | None]]:
        """Up to ``limit`` ready tasks with their instances (plan order)."""
        out: list[tuple[Task, Instance, str | None]] = []
        skipped: list[Task] = []
        looked = 0
        now = time.monotonic()
        while self.waiting and len(out) < limit and looked < self.LOOKAHEAD:
            task = self.waiting.popleft()
            if self.busy.get(task.task_id, 0.0) > now or not all(
                dep in self.stored for dep in task.after
            ):
                skipped.append(task)
                looked += 1
                continue
            claim = self.store.claim(task.task_id)
            if claim == DONE:
                self.stored.add(task.task_id)
                self.elsewhere += 1
                continue
            if claim == BUSY:
                self.busy[task.task_id] = now + self.RETRY
                skipped.append(task)
                looked += 1
                continue
            ready = self._prepare(task)
            if ready is not None:
                out.append(ready)
        self.waiting.extendleft(reversed(skipped))
        return out

    def wait_for_others(self) -> None:
        """Nothing is ready here: wait for what other processes run.

        Raises ``RuntimeError`` when a task waits for one that is not
        planned at all (a bug in the task graph), which would wait forever.
        """
        task = self.waiting[0]
        missing = [dep for dep in task.after if dep not in self.planned]
        if missing:
            raise RuntimeError(
                f"task {task.task_id} waits for tasks {missing[:3]} that are not "
                "planned (a bug in the task graph)"
            )
        time.sleep(min(self.RETRY, 0.25 + 0.25 * len(self.busy)))
        self.stored = self.store.done_ids()

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
    execution: Execution = IN_PROCESS,
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
    execution
        Where the tasks run and with which task function.
    progress
        Told about every finished task.

    Raises
    ------
    Interrupted
        SIGINT or SIGTERM stopped the run (module notes); the rows stored
        until then stay.
    """
    task_function = execution.task_function
    if task_function is None:
        from optsched.bench.tasks import execute_task

        task_function = execute_task
    counts = Counts()
    reporter = progress or _Silent()

    def record(row: dict[str, Any], sha256: str | None) -> None:
        row = {**row, "instance_sha256": sha256}
        store.insert(row)
        if not row.get("incomplete"):
            ready.stored_now(row["task_id"])
        failed = row["status"] == ERROR
        counts.done += 1
        counts.failed += failed
        reporter.advance(failed, row)

    ready = _Ready(tasks, source, store, record)
    if not ready:
        return counts  # nothing to run: do not start a pool or a cluster
    try:
        with stop_on_signals() as signals:
            _run(ready, task_function, record, signals, execution)
    finally:
        counts.elsewhere = ready.elsewhere
        with contextlib.suppress(sqlite3.Error):  # stale claims expire anyway
            store.release_claims()
    return counts


def _run(
    ready: _Ready,
    function: TaskFunction,
    record: Callable[[dict[str, Any], str | None], None],
    signals: _Signals,
    execution: Execution,
) -> None:
    if execution.dask_address is not None or execution.dask_local is not None:
        with _dask_backend(execution.dask_address, execution.dask_local) as dask:
            _run_bounded(dask, function, ready, record)
    elif execution.workers == 1:
        _run_here(ready, function, record, signals)
    else:
        with _pool_backend(execution.workers) as pool:
            _run_bounded(pool, function, ready, record)


def _run_here(
    ready: _Ready,
    function: TaskFunction,
    record: Callable[[dict[str, Any], str | None], None],
    signals: _Signals,
) -> None:
    """Run the tasks one by one in this process.

    A signal during a solve stops the solver, which returns its best so far;
    the row is stored as provisional (:func:`_cut_short`) before the run
    stops, at this safe point.
    """
    while ready:
        batch = ready.take(1)
        for task, instance, sha256 in batch:
            row = run_safely(function, task, instance)
            if signals.received is not None:
                kept = _cut_short(row, signals.received)
                if kept is not None:
                    record(kept, sha256)
                raise Interrupted(signals.received)
            record(row, sha256)
        if not batch and ready:
            ready.wait_for_others()


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
                if not ready:
                    return
                ready.wait_for_others()
                continue
            for handle, outcome in backend.wait_first(list(pending)):
                task, instance, sha256 = pending.pop(handle)
                if isinstance(outcome, Exception):
                    outcome = backend.recover(function, task, instance, outcome)
                record(outcome, sha256)
    except BaseException:
        backend.cancel(list(pending))
        raise
