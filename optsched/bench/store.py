"""The results store: one SQLite row per finished benchmark task.

The store is a single SQLite file in WAL mode. The parent process of a
benchmark run is its only writer: each finished task becomes one ``INSERT``
committed in its own transaction, so a run killed at any moment loses no
finished task and never leaves half a row. ``task_id`` is the primary key,
so no task is ever stored twice; a re-run asks :meth:`Store.done_ids` what to
skip.

Provisional rows. A row whose ``incomplete`` column is not NULL is kept (its
bounds and schedule are valid) but is not *done*: a resume runs its task
again and replaces it. ``incomplete`` says why:

* ``interrupted by SIGINT`` / ``interrupted by SIGTERM``: the solve was
  stopped by that signal before its time limit (``interrupted`` is 1);
  ``interrupted`` alone: a row of a schema-2 store marked interrupted.
* ``time-starved: ...``: a solver task (not deterministic) whose time limit
  ``L`` ran out (wall-clock time of the task at least ``0.9 L``) without a
  proof (status ``FEASIBLE``, ``BOUNDED`` or ``UNKNOWN``), while either the
  CP-SAT search itself (back-ends ``cpsat`` and ``shelf``) ran less than
  ``0.5 L`` or not at all (building the model and the bounds took the
  rest), or the task's process used less CPU time than
  ``0.25 x wall time x min(workers, CPUs)`` (an overloaded machine starved
  the solver threads). Its numbers follow the reason. Such a row is weaker
  than the limit allows; a resume runs it again (once per resume).

Concurrent runs. Several processes (on one host or on hosts sharing the
file) may run the same suite into one store: before running a task, a
process *claims* it in table ``claims`` (``task_id``, ``host``, ``pid``,
``owner``, ``heartbeat``: one transaction, ``BEGIN IMMEDIATE``), and skips
tasks that are stored or claimed by another live process. A claim is
released when its row is stored or its run ends; a background thread renews
the ``heartbeat`` (UNIX time) of a process's claims every
``LEASE / 6`` seconds. A claim is stale, and can be taken over, when its
process is gone (same host) or its heartbeat is older than :data:`LEASE`
seconds, so a killed run never blocks tasks for long.

Table ``tasks`` (TEXT unless said):

``task_id`` (primary key), ``suite``, ``trace`` (path as given in the
suite), ``trace_sha256``, ``window`` (:attr:`WindowSpec.key
<optsched.windows.selection.WindowSpec.key>`), ``window_index`` (INTEGER), ``kind``
(``policy`` | ``solver``), ``name`` (policy spec or back-end), ``objective``
(label), ``params`` (JSON), ``status`` (``OK`` for a policy, the
:class:`~optsched.result.SolveStatus` value for a solver, ``ERROR``
on failure), ``value`` (REAL: policy objective or solver best upper bound),
``lower`` (REAL: solver lower bound, NULL for policies), ``lower_method``,
``upper`` (REAL), ``upper_source``, ``bounds`` (JSON ``{method: value}``),
``metrics`` (JSON, :func:`optsched.metrics.summarize`), ``schedule`` (JSON,
the ``json`` schedule format of :mod:`optsched.io.schedules`, or NULL),
``error`` (NULL unless failed), ``runtime`` (REAL, seconds of simulation or
solving), ``versions`` (JSON), ``started``, ``finished`` (ISO 8601 UTC),
``host``, ``instance_sha256`` (the window's instance in table ``instances``),
``values`` (JSON ``{objective: value}`` of a policy row, whose ``objective``
is empty: a policy is simulated once per window), ``killed`` (INTEGER, jobs
a policy stopped at their estimate), ``lost_work`` (REAL, processor-seconds
those jobs did not run), ``interrupted`` (INTEGER 0/1, a solve stopped
early), ``rejected`` (JSON list of incumbents a back-end could not use),
``incomplete`` (NULL, or why the row is provisional: see above).

Table ``instances`` keeps each window's instance as native JSON
(:func:`optsched.io.native.instance_to_json`) keyed by its sha256, so a
report needs nothing but the store. Table ``schema_version`` holds one
integer, :data:`SCHEMA_VERSION`; a schema-2 store is migrated on opening
(column ``incomplete`` and table ``claims`` added; its interrupted rows
become provisional).

:class:`TaskRow` is a row decoded once into types; :func:`gap_frame` turns
rows into ratios through :func:`optsched.analysis.gap.window_reference`, the one
function that combines the bounds of a window.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import socket
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd

from optsched.analysis.gap import Candidate, LowerBound, Reference
from optsched.bench.faults import StoreError, check_store_path, reason, reported
from optsched.bench.tasks import OPTIONAL_FIELDS, TaskColumns
from optsched.errors import InputError
from optsched.instance import Instance
from optsched.result import Incumbent
from optsched.simulation import RUN_KEYS, RunOptions

SCHEMA_VERSION = 3
"""Version of the table layout; version 2 is migrated, others are refused."""

LEASE = 60.0
"""Seconds after its last heartbeat when another process's claim is stale."""

COLUMNS: tuple[tuple[str, str], ...] = (
    ("task_id", "TEXT PRIMARY KEY"),
    ("suite", "TEXT NOT NULL"),
    ("trace", "TEXT NOT NULL"),
    ("trace_sha256", "TEXT NOT NULL"),
    ("window", "TEXT NOT NULL"),
    ("window_index", "INTEGER NOT NULL"),
    ("kind", "TEXT NOT NULL CHECK (kind IN ('policy', 'solver'))"),
    ("name", "TEXT NOT NULL"),
    ("objective", "TEXT NOT NULL"),
    ("params", "TEXT NOT NULL"),
    ("status", "TEXT NOT NULL"),
    ("value", "REAL"),
    ("lower", "REAL"),
    ("lower_method", "TEXT"),
    ("upper", "REAL"),
    ("upper_source", "TEXT"),
    ("bounds", "TEXT"),
    ("metrics", "TEXT"),
    ("schedule", "TEXT"),
    ("error", "TEXT"),
    ("runtime", "REAL"),
    ("versions", "TEXT"),
    ("started", "TEXT"),
    ("finished", "TEXT"),
    ("host", "TEXT"),
    ("instance_sha256", "TEXT"),
    ("values", "TEXT"),
    ("killed", "INTEGER NOT NULL DEFAULT 0"),
    ("lost_work", "REAL NOT NULL DEFAULT 0"),
    ("interrupted", "INTEGER NOT NULL DEFAULT 0"),
    ("rejected", "TEXT"),
    ("incomplete", "TEXT"),
)
COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in COLUMNS)
_DTYPES = {"value": "float64", "lower": "float64", "upper": "float64"} | {
    "runtime": "float64",
    "window_index": "int64",
    "killed": "int64",
    "lost_work": "float64",
    "interrupted": "int64",
}

ERROR = "ERROR"
"""``status`` of a task that failed."""

WINDOW_KEY = ["suite", "trace_sha256", "window", "objective"]
"""The rows that describe one instance and objective: their bounds combine."""

_CREATE_INSTANCES = (
    "CREATE TABLE IF NOT EXISTS instances ("
    '"sha256" TEXT PRIMARY KEY, "instance" TEXT NOT NULL)'
)
_CREATE_CLAIMS = (
    "CREATE TABLE IF NOT EXISTS claims ("
    '"task_id" TEXT PRIMARY KEY, "host" TEXT NOT NULL, "pid" INTEGER NOT NULL, '
    '"owner" TEXT NOT NULL, "heartbeat" REAL NOT NULL)'
)

CLAIMED, DONE, BUSY = "claimed", "done", "busy"
"""What :meth:`Store.claim` found: the task is now ours, already stored, or
claimed by another live process."""


def _quoted(names: Iterable[str]) -> str:
    # ``window`` is an SQL keyword (window functions): every name is quoted.
    return ", ".join(f'"{name}"' for name in names)


_QUOTED = _quoted(COLUMN_NAMES)
_DEFAULTS = {"instance_sha256": None, **OPTIONAL_FIELDS}
"""Values of the columns a row may leave out: those a task function may leave
out, and the instance the executor adds."""
_INSERT = (
    f"INSERT INTO tasks ({_QUOTED}) VALUES ({', '.join('?' * len(COLUMN_NAMES))}) "
    # A provisional row is replaced by the next run's; a final one never.
    "ON CONFLICT (task_id) DO UPDATE SET "
    + ", ".join(f'"{name}" = excluded."{name}"' for name in COLUMN_NAMES[1:])
    + ' WHERE tasks."incomplete" IS NOT NULL'
)
_CREATE = (
    "CREATE TABLE IF NOT EXISTS tasks ("
    + ", ".join(f'"{name}" {kind}' for name, kind in COLUMNS)
    + ")"
)


class Store:
    """A results store file.

    Parameters
    ----------
    path
        The SQLite file.
    create
        Create the file (and its tables) when absent. Readers pass ``False``
        so that a mistyped path is an error rather than a new empty store.

    Raises
    ------
    InputError
        The file is missing (with ``create=False``), is not SQLite, or holds
        another schema version.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        """Names this store object's claims (see the module notes)."""
        self._heart: _Heartbeat | None = None
        check_store_path(self.path)
        if not create and not self.path.is_file():
            raise InputError("no such results store", self.path)
        try:
            # Autocommit mode: every write below opens its own transaction.
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as error:
            raise StoreError(reason(error), self.path) from None
        try:
            self._prepare(create)
        except BaseException:
            self._db.close()
            raise

    @reported
    def _prepare(self, create: bool) -> None:
        # Nothing is written (not even the journal mode, which rewrites the
        # file's header) before the file is known to be a results store.
        try:
            tables = {
                row[0]
                for row in self._db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
        except sqlite3.OperationalError:
            raise  # the file could not be opened or locked: @reported says so
        except sqlite3.DatabaseError as error:
            raise StoreError(f"not a results store: {error}", self.path) from None
        if "schema_version" not in tables:
            if tables or not create:
                raise InputError(
                    "not an optsched results store (no schema_version table)", self.path
                )
            self._set_journal()
            self._create()
            return
        found = self._db.execute("SELECT version FROM schema_version").fetchall()
        if len(found) != 1:
            raise StoreError(
                f"not an optsched results store ({len(found)} schema_version rows)",
                self.path,
            )
        (version,) = found[0]
        if version in (2, SCHEMA_VERSION):
            self._set_journal()
        if version == 2:
            self._migrate_from_2()
        elif version != SCHEMA_VERSION:
            raise InputError(
                f"results store has schema version {version}; this optsched reads "
                f"and writes version {SCHEMA_VERSION}",
                self.path,
            )

    def _set_journal(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed row survives any crash of this
        # process (the kill the resume logic is about); a power cut may
        # lose the last commits, which a re-run recomputes, but never
        # corrupts the file. FULL would fsync every row (5-15 ms each).
        self._db.execute("PRAGMA synchronous=NORMAL")

    def _migrate_from_2(self) -> None:
        """Version 2 to 3: column ``incomplete``, table ``claims``.

        Its interrupted rows (solves stopped by Ctrl-C, stored as if done)
        become provisional, so the next run computes them again.
        """
        try:
            with self._transaction():
                # Another process may have migrated it since we looked.
                (version,) = self._db.execute(
                    "SELECT version FROM schema_version"
                ).fetchone()
                if version != 2:
                    return
                self._db.execute('ALTER TABLE tasks ADD COLUMN "incomplete" TEXT')
                self._db.execute(
                    "UPDATE tasks SET \"incomplete\" = 'interrupted' "
                    'WHERE "interrupted" != 0'
                )
                self._db.execute(_CREATE_CLAIMS)
                self._db.execute(
                    "UPDATE schema_version SET version = ?", (SCHEMA_VERSION,)
                )
        except sqlite3.Error as error:
            raise InputError(
                f"cannot migrate results store from schema version 2 to "
                f"{SCHEMA_VERSION}: {error}",
                self.path,
            ) from None

    def _create(self) -> None:
        with self._transaction():
            self._db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            self._db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            self._db.execute(_CREATE)
            self._db.execute(_CREATE_INSTANCES)
            self._db.execute(_CREATE_CLAIMS)
            self._db.execute('CREATE INDEX tasks_suite ON tasks ("suite")')

    def _transaction(self) -> sqlite3.Connection:
        # ``with connection`` commits or rolls back, but in autocommit mode
        # it needs an explicit BEGIN; IMMEDIATE takes the write lock at once.
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def close(self) -> None:
        """Release this object's claims and close the database connection."""
        try:
            self.release_claims()
        except sqlite3.Error:
            pass  # stale claims expire (LEASE) or die with this process
        finally:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    @reported
    def add_instance(self, instance: Instance) -> str:
        """Keep a window's instance (once per content); return its sha256."""
        from optsched.io.native import instance_to_json

        text = instance_to_json(instance)
        sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._transaction():
            self._db.execute(
                "INSERT INTO instances VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
                (sha256, text),
            )
        return sha256

    @reported
    def instance(self, sha256: str) -> Instance:
        """The instance stored under ``sha256`` (``KeyError`` if absent)."""
        from optsched.io.native import instance_from_dict

        found = self._db.execute(
            'SELECT "instance" FROM instances WHERE "sha256" = ?', (sha256,)
        ).fetchone()
        if found is None:
            raise KeyError(f"no instance {sha256[:12]}... in {self.path}")
        return instance_from_dict(json.loads(found[0]))

    @reported
    def incumbents(self, task_ids: Iterable[str]) -> list[Incumbent]:
        """The complete policy schedules among the rows ``task_ids``.

        Rows that failed, have no schedule, or killed a job are left out: a
        schedule that did less work than the window never bounds its optimum;
        so are preemptive policies, whose schedules are not schedules of the
        non-preemptive problem.
        """
        from optsched.heuristics.preempt.policies import preempts
        from optsched.io.schedules import schedule_from_json

        ids = list(task_ids)
        out = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            query = (
                'SELECT "name", "schedule", "task_id" FROM tasks WHERE "kind" = ? '
                'AND "status" != ? AND "killed" = 0 AND "schedule" IS NOT NULL '
                f'AND "task_id" IN ({", ".join("?" * len(chunk))}) ORDER BY "name"'
            )
            for name, text, task_id in self._db.execute(
                query, ["policy", ERROR, *chunk]
            ):
                if preempts(name):
                    continue  # a preemptive schedule bounds only its relaxation
                out.append(
                    Incumbent(
                        f"policy:{name}", schedule_from_json(text, f"row {task_id}")
                    )
                )
        return out

    @reported
    def insert(self, row: Mapping[str, Any]) -> bool:
        """Store one finished task in its own transaction.

        ``row`` has exactly the keys :data:`COLUMN_NAMES`. Returns ``False``
        (and changes nothing) when the task is already stored.
        """
        row = dict(row)
        for key, default in _DEFAULTS.items():
            if row.get(key) is None:
                row[key] = default
        if row["interrupted"] and row["incomplete"] is None:
            row["incomplete"] = "interrupted"  # never stored as if done
        missing = set(COLUMN_NAMES) - set(row)
        extra = set(row) - set(COLUMN_NAMES)
        if missing or extra:
            raise ValueError(
                f"task row: missing columns {sorted(missing)}, "
                f"unknown columns {sorted(extra)}"
            )
        with self._transaction():
            cursor = self._db.execute(_INSERT, [row[name] for name in COLUMN_NAMES])
            self._db.execute(
                "DELETE FROM claims WHERE task_id = ? AND owner = ?",
                (row["task_id"], self.owner),
            )
        return cursor.rowcount == 1

    @reported
    def done_ids(self, suite: str | None = None) -> set[str]:
        """Ids of the tasks stored for good (failed ones included, provisional
        ones not), of one suite or all."""
        return self._task_ids(suite, also='"incomplete" IS NULL')

    @reported
    def provisional_ids(self, suite: str | None = None) -> set[str]:
        """Ids of the stored provisional tasks (``incomplete`` is not NULL)."""
        return self._task_ids(suite, also='"incomplete" IS NOT NULL')

    def _task_ids(
        self, suite: str | None, status: str | None = None, also: str = ""
    ) -> set[str]:
        """Ids of the stored tasks of ``suite`` (or all) with ``status`` (or
        any) that meet the SQL condition ``also`` (if any)."""
        query, args = _where("SELECT task_id FROM tasks", suite, status)
        if also:
            query += (" AND " if args else " WHERE ") + also
        return {task_id for (task_id,) in self._db.execute(query, args)}

    @property
    def shared(self) -> bool:
        """A file other processes may open (not an in-memory store)."""
        return str(self.path) != ":memory:"

    @reported
    def claim(self, task_id: str) -> str:
        """Claim a task before running it: :data:`CLAIMED`, :data:`DONE` or
        :data:`BUSY` (another live process claimed it).

        One ``BEGIN IMMEDIATE`` transaction, so two processes never both
        claim a task. A stale claim (module notes) is taken over.
        """
        if not self.shared:
            return CLAIMED  # nobody else sees an in-memory store
        self._start_heartbeat()
        with self._transaction():
            done = self._db.execute(
                'SELECT 1 FROM tasks WHERE task_id = ? AND "incomplete" IS NULL',
                (task_id,),
            ).fetchone()
            if done:
                return DONE
            held = self._db.execute(
                "SELECT host, pid, owner, heartbeat FROM claims WHERE task_id = ?",
                (task_id,),
            ).fetchone()
            if held is not None and held[2] != self.owner:
                host, pid, _, heartbeat = held
                if not _stale(host, pid, heartbeat, time.time()):
                    return BUSY
            self._db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                (task_id, socket.gethostname(), os.getpid(), self.owner, time.time()),
            )
        return CLAIMED

    @reported
    def release_claims(self) -> None:
        """Drop this object's claims (its run ends) and stop their heartbeat."""
        if self._heart is None:
            return  # never claimed anything
        self._heart.stop()
        self._heart = None
        with self._transaction():
            self._db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))

    def _start_heartbeat(self) -> None:
        if self._heart is None:
            self._heart = _Heartbeat(self.path, self.owner)

    @reported
    def failed_ids(self, suite: str | None = None) -> set[str]:
        """Ids of the stored tasks with status ``ERROR``."""
        return self._task_ids(suite, ERROR)

    @reported
    def delete_failed(self, task_ids: Iterable[str]) -> int:
        """Remove the ``ERROR`` rows among ``task_ids`` (to run them again)."""
        ids = list(task_ids)
        with self._transaction():
            deleted = 0
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                deleted += self._db.execute(
                    f"DELETE FROM tasks WHERE status = ? AND task_id IN "
                    f"({', '.join('?' * len(chunk))})",
                    [ERROR, *chunk],
                ).rowcount
        return deleted

    @reported
    def suites(self) -> list[str]:
        """Names of the suites with rows in the store, sorted."""
        query = 'SELECT DISTINCT "suite" FROM tasks ORDER BY "suite"'
        return [name for (name,) in self._db.execute(query)]

    @reported
    def rows(self, suite: str | None = None) -> pd.DataFrame:
        """The ``tasks`` table (of one suite, or all), one row per task.

        Columns are :data:`COLUMN_NAMES`; JSON columns stay JSON text. Rows
        are ordered by suite, trace, window index, objective, kind, name so
        that two stores with the same results give equal frames.
        """
        query, args = _where(f"SELECT {_QUOTED} FROM tasks", suite)
        query += (
            ' ORDER BY "suite", "trace_sha256", "window_index", "window",'
            ' "objective", "kind", "name", "params"'
        )
        records = self._db.execute(query, args).fetchall()
        values = list(zip(*records, strict=True)) or [()] * len(COLUMN_NAMES)
        # Fixed dtypes whatever the rows hold: text stays ``object`` with
        # ``None`` for NULL (pandas would otherwise infer per column).
        return pd.DataFrame(
            {
                name: pd.Series(list(column), dtype=_DTYPES.get(name, object))
                for name, column in zip(COLUMN_NAMES, values, strict=True)
            }
        )

    @reported
    def failures(
        self, suite: str | None = None, limit: int = 5
    ) -> list[dict[str, str]]:
        """The first ``limit`` failed tasks (window, kind, name, objective, error)."""
        names = ("window", "kind", "name", "objective", "error")
        query, args = _where(f"SELECT {_quoted(names)} FROM tasks", suite, ERROR)
        query += ' ORDER BY "window_index", "objective", "kind", "name" LIMIT ?'
        found = self._db.execute(query, [*args, limit]).fetchall()
        return [dict(zip(names, row, strict=True)) for row in found]

    def task_rows(self, suite: str | None = None) -> list[TaskRow]:
        """The rows of one suite (or all), decoded into :class:`TaskRow`."""
        return decode_rows(self.rows(suite))

    def gap_rows(self, suite: str | None = None) -> pd.DataFrame:
        """Policy rows joined with their window's reference: the ratios.

        See :func:`gap_frame`.
        """
        return gap_frame(self.rows(suite))


def _stale(host: str, pid: int, heartbeat: float, now: float) -> bool:
    """Is a claim abandoned: its process gone, or its heartbeat too old?"""
    if now - heartbeat > LEASE:
        return True
    return host == socket.gethostname() and not _alive(pid)


def _alive(pid: int) -> bool:
    """Is process ``pid`` of this host running (a zombie is not)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    if sys.platform.startswith("linux"):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        # The state follows the command name in parentheses: Z is a zombie.
        return stat.rpartition(")")[2].split()[:1] != ["Z"]
    return True


class _Heartbeat:
    """A thread renewing a store object's claims every ``LEASE / 6`` seconds.

    It has its own connection (SQLite connections stay in their thread).
    """

    def __init__(self, path: Path, owner: str) -> None:
        self._path = path
        self._owner = owner
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="optsched-claims-heartbeat", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        db = sqlite3.connect(self._path, timeout=30.0, isolation_level=None)
        try:
            while not self._stop.wait(LEASE / 6):
                try:
                    db.execute(
                        "UPDATE claims SET heartbeat = ? WHERE owner = ?",
                        (time.time(), self._owner),
                    )
                except sqlite3.Error:
                    continue  # busy or gone: try again next beat
        finally:
            db.close()

    def stop(self) -> None:
        self._stop.set()
        # A beat may wait for the write lock; the claims go anyway.
        self._thread.join(timeout=1.0)


def _where(
    query: str, suite: str | None, status: str | None = None
) -> tuple[str, list[str]]:
    """``query`` restricted to one suite and/or one status."""
    conditions = {"suite": suite, "status": status}
    given = {name: value for name, value in conditions.items() if value is not None}
    if not given:
        return query, []
    where = " AND ".join(f'"{name}" = ?' for name in given)
    return f"{query} WHERE {where}", list(given.values())


@dataclass(frozen=True, slots=True)
class TaskRow(TaskColumns):
    """One stored task, decoded once into types (JSON columns parsed).

    ``values`` holds a policy row's objective values (a solver row's one
    value under its objective); ``schedule_json`` stays text until asked
    for, since most consumers never draw it.
    """

    status: str
    values: Mapping[str, float]
    lower: float | None
    lower_method: str | None
    upper: float | None
    upper_source: str | None
    bounds: Mapping[str, float]
    killed: int
    lost_work: float
    interrupted: bool
    instance_sha256: str | None
    schedule_json: str | None
    error: str | None
    incomplete: str | None = None
    run: RunOptions = field(default_factory=RunOptions)
    """How a policy row's policy was simulated."""

    @property
    def failed(self) -> bool:
        """The task failed (status ``ERROR``)."""
        return self.status == ERROR

    @property
    def window_id(self) -> tuple[str, str, str]:
        """(suite, trace sha256, window key): the rows of one window."""
        return (self.suite, self.trace_sha256, self.window)


def _float(x: object) -> float | None:
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(x)  # type: ignore[arg-type]


def _text(x: object) -> str | None:
    return (
        None
        if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))
        else str(x)
    )


def _object(x: object) -> dict[str, Any]:
    text = _text(x)
    return dict(json.loads(text)) if text else {}


def decode_rows(rows: pd.DataFrame) -> list[TaskRow]:
    """Store rows (:meth:`Store.rows`) as :class:`TaskRow` objects."""
    out = []
    for r in rows.to_dict("records"):
        values = {k: float(v) for k, v in _object(r["values"]).items()}
        value = _float(r["value"])
        if r["kind"] == "solver" and value is not None:
            values = {str(r["objective"]): value}
        out.append(
            TaskRow(
                task_id=str(r["task_id"]),
                suite=str(r["suite"]),
                trace=str(r["trace"]),
                trace_sha256=str(r["trace_sha256"]),
                window=str(r["window"]),
                window_index=int(r["window_index"]),
                kind=str(r["kind"]),
                name=str(r["name"]),
                objective=str(r["objective"]),
                status=str(r["status"]),
                values=values,
                lower=_float(r["lower"]),
                lower_method=_text(r["lower_method"]),
                upper=_float(r["upper"]),
                upper_source=_text(r["upper_source"]),
                bounds={k: float(v) for k, v in _object(r["bounds"]).items()},
                killed=int(r["killed"]),
                lost_work=float(r["lost_work"]),
                interrupted=bool(r["interrupted"]),
                instance_sha256=_text(r["instance_sha256"]),
                run=RunOptions.of(_object(r.get("params"))),
                schedule_json=_text(r["schedule"]),
                error=_text(r["error"]),
                incomplete=_text(r["incomplete"]),
            )
        )
    return out


def references(rows: Sequence[TaskRow]) -> dict[tuple[str, ...], Reference]:
    """The reference of every (suite, trace, window, objective) of ``rows``.

    Lower bounds: each successful solver row's ``lower`` (named by its
    binding method) and every bound it lists, except the rows of back-ends
    that solve a restricted problem (:data:`optsched.models.RESTRICTIONS`,
    e.g. shelf schedules), whose bounds do not bound the unrestricted
    optimum. Upper-bound candidates: each successful solver row's ``upper``
    (restricted ones included: their schedules are feasible), then each
    successful policy row's value under the objective, complete schedules
    only (a row that killed jobs is never a candidate).
    :func:`optsched.analysis.gap.window_reference` combines them.

    Relaxations (:data:`optsched.models.RELAXATIONS`, e.g. the preemptive
    optimum): a relaxed back-end's lower bounds bound the optimum too
    (``OPT_relaxed <= OPT``) and are kept; its schedules, like those of the
    preemptive policies (:func:`optsched.heuristics.preempt.policies.preempts`),
    are not schedules of the problem and are never candidates.
    """
    return _references(rows, None)


def relaxed_references(rows: Sequence[TaskRow]) -> dict[tuple[str, ...], Reference]:
    """The reference of every relaxed problem of ``rows`` (e.g. ``preemption``).

    Keyed by (suite, trace, window, objective, relaxation). Lower bounds:
    the relaxed back-ends' only (the others bound the unrelaxed optimum,
    which may be larger). Upper-bound candidates: every successful solver
    row's ``upper`` and every complete policy schedule, preemptive or not (a
    schedule of the problem is a schedule of its relaxation). Present for
    every window with a relaxed back-end row or a preemptive policy row.
    """
    return _relaxed_references(rows)


def restricted_references(rows: Sequence[TaskRow]) -> dict[tuple[str, ...], Reference]:
    """The reference of every restricted problem of ``rows``.

    Keyed by (suite, trace, window, objective, restriction): the bounds and
    schedules of the back-ends that solve that restriction only (policy
    schedules are not candidates: they need not obey the restriction).
    """
    return _references(rows, "restricted")


def _references(
    rows: Sequence[TaskRow], which: str | None
) -> dict[tuple[str, ...], Reference]:
    from optsched.analysis.gap import window_reference
    from optsched.models import RESTRICTIONS

    lowers: dict[tuple[str, ...], list[LowerBound]] = {}
    solver_uppers: dict[tuple[str, ...], list[Candidate]] = {}
    policy_uppers: dict[tuple[str, ...], list[Candidate]] = {}
    for row in rows:
        if row.failed:
            continue
        if which is None and row.kind == "solver" and _relaxation(row) is not None:
            lowers.setdefault((*row.window_id, row.objective), []).extend(
                _solver_bounds(row)
            )
            continue  # its schedule is a relaxed one: no candidate
        restriction = RESTRICTIONS.get(row.name) if row.kind == "solver" else None
        if row.kind == "solver" and (which is None or restriction is not None):
            key: tuple[str, ...] = (*row.window_id, row.objective)
            if which is not None:
                key = (*key, str(restriction))
            found = lowers.setdefault(key, [])
            if which is not None or restriction is None:
                found += _solver_bounds(row)
            if row.upper is not None:
                solver_uppers.setdefault(key, []).append(_solver_candidate(row))
        elif row.kind == "policy" and which is None:
            for objective, value in row.values.items():
                key = (*row.window_id, objective)
                lowers.setdefault(key, [])
                if row.killed == 0 and not _preemptive_policy(row):
                    policy_uppers.setdefault(key, []).append(
                        Candidate(value, f"policy:{row.name}", row.task_id)
                    )
    return {
        key: window_reference(
            key[3], found, [*solver_uppers.get(key, []), *policy_uppers.get(key, [])]
        )
        for key, found in lowers.items()
    }


PREEMPTION = "preemption"
"""The relaxation of :data:`optsched.models.RELAXATIONS` that gap rows name
in their ``reference`` (a preemptive policy's) and column prefixes
(``preemption_lower``, ``preemption_price_low``, ...)."""


def _solver_bounds(row: TaskRow) -> list[LowerBound]:
    """Every lower bound a solver row lists, its binding ``lower`` included."""
    found = [LowerBound(v, m) for m, v in row.bounds.items()]
    if row.lower is not None:
        found.append(LowerBound(row.lower, row.lower_method or row.name))
    return found


def _solver_candidate(row: TaskRow) -> Candidate:
    """A solver row's schedule as an upper-bound candidate (``upper`` set)."""
    assert row.upper is not None
    return Candidate(row.upper, row.upper_source or row.name, row.task_id)


def _relaxation(row: TaskRow) -> str | None:
    """The relaxation a solver row solves (``None``: the problem itself)."""
    from optsched.models import RELAXATIONS

    return RELAXATIONS.get(row.name) if row.kind == "solver" else None


def _preemptive_policy(row: TaskRow) -> bool:
    from optsched.heuristics.preempt.policies import preempts

    return row.kind == "policy" and preempts(row.name)


def _relaxed_references(
    rows: Sequence[TaskRow],
) -> dict[tuple[str, ...], Reference]:
    """:func:`relaxed_references` (one relaxation: preemption)."""
    from optsched.analysis.gap import window_reference

    name = PREEMPTION
    wanted = {
        row.window_id
        for row in rows
        if not row.failed and (_relaxation(row) == name or _preemptive_policy(row))
    }
    lowers: dict[tuple[str, ...], list[LowerBound]] = {}
    uppers: dict[tuple[str, ...], list[Candidate]] = {}
    for row in rows:
        if row.failed or row.window_id not in wanted:
            continue
        if row.kind == "solver":
            key = (*row.window_id, row.objective, name)
            found = lowers.setdefault(key, [])
            if _relaxation(row) == name:
                found += _solver_bounds(row)
            if row.upper is not None:
                uppers.setdefault(key, []).append(_solver_candidate(row))
        elif row.kind == "policy" and row.killed == 0:
            for objective, value in row.values.items():
                key = (*row.window_id, objective, name)
                lowers.setdefault(key, [])
                uppers.setdefault(key, []).append(
                    Candidate(value, f"policy:{row.name}", row.task_id)
                )
    return {
        key: window_reference(key[3], found, uppers.get(key, []))
        for key, found in lowers.items()
    }


GAP_COLUMNS = (
    "suite", "trace", "trace_sha256", "window", "window_index", "policy",
    "objective", "value", "lower", "lower_method", "upper", "upper_source",
    "optimal", "ratio_low", "ratio_high", "comparable", "killed", "lost_work",
    "defect", "task_id", "instance_sha256", "upper_row", "reference",
)  # fmt: skip


def gap_frame(rows: pd.DataFrame | Sequence[TaskRow]) -> pd.DataFrame:
    """One row per (window, policy, objective): value, reference, ratio.

    Each successful policy row is expanded into one row per objective it
    measured and joined with the reference of its window and objective
    (:func:`references`); ``ratio_low``, ``ratio_high`` are ``[v / UB,
    v / LB]`` (:func:`optsched.analysis.gap.ratio_interval`), ``NaN`` when not
    ``comparable`` (the policy killed jobs, or the window has a ``defect``:
    a schedule beats a lower bound, which the commands report as a defect of
    optsched instead of printing a ratio below 1). Failed rows are left out.
    Rows come window by window, policies in the stored order.
    """
    from optsched.analysis.gap import gap_row

    decoded = decode_rows(rows) if isinstance(rows, pd.DataFrame) else list(rows)
    known = references(decoded)
    relaxed = relaxed_references(decoded)
    out = []
    for row in decoded:
        if row.kind != "policy" or row.failed:
            continue
        preemptive = _preemptive_policy(row)
        for objective, value in row.values.items():
            reference = known[(*row.window_id, objective)]
            if preemptive:  # measured against the preemptive optimum
                reference = relaxed[(*row.window_id, objective, PREEMPTION)]
            gap = gap_row(
                row.window, row.name, value, reference,
                killed=row.killed, lost=int(row.lost_work),
            )  # fmt: skip
            out.append(
                [
                    row.suite, row.trace, row.trace_sha256, row.window,
                    row.window_index, row.name, objective, value, gap.lower,
                    gap.lower_method, gap.upper, gap.upper_source, gap.optimal,
                    gap.ratio_low, gap.ratio_high, gap.comparable, gap.killed,
                    gap.lost_work, gap.defect, row.task_id, row.instance_sha256,
                    reference.upper_row, PREEMPTION if preemptive else "",
                ]
            )  # fmt: skip
    frame = pd.DataFrame(out, columns=list(GAP_COLUMNS))
    frame = frame.astype(
        {"lower": float, "upper": float, "ratio_low": float, "ratio_high": float}
    )
    frame = _with_restrictions(frame, restricted_references(decoded), known)
    frame = _with_run_options(frame, decoded)
    return _with_relaxation(frame, relaxed, known)


def _with_run_options(frame: pd.DataFrame, rows: Sequence[TaskRow]) -> pd.DataFrame:
    """Columns ``kill_at_estimate``, ``allocation_rule`` and ``migration``
    (how each policy was simulated), when some policy row was simulated
    with an option that is not the default."""
    options = {row.task_id: row.run for row in rows if row.kind == "policy"}
    default = RunOptions()
    if all(run == default for run in options.values()):
        return frame
    frame = frame.copy()
    for key in RUN_KEYS:
        frame[key] = [
            getattr(options.get(task, default), key) for task in frame["task_id"]
        ]
    return frame


def _with_relaxation(
    frame: pd.DataFrame,
    relaxed: Mapping[tuple[str, ...], Reference],
    known: Mapping[tuple[str, ...], Reference],
) -> pd.DataFrame:
    """Columns of the preemptive optimum, when a window has one.

    ``preemption_lower``, ``preemption_upper`` (the preemptive reference)
    and ``preemption_price_low``, ``preemption_price_high``: the price of
    non-preemption, optimum / preemptive optimum, as an interval
    (:func:`optsched.analysis.gap.price_interval` with the non-preemptive problem as
    the restricted one: every non-preemptive schedule is preemptive).
    """
    from optsched.analysis.gap import price_interval

    if not relaxed:
        return frame
    columns: dict[str, list[float]] = {
        f"preemption_{c}": [] for c in ("lower", "upper", "price_low", "price_high")
    }
    for record in frame.to_dict("records"):
        window = (record["suite"], record["trace_sha256"], record["window"])
        ref = relaxed.get((*window, record["objective"], PREEMPTION))
        plain = known[(*window, record["objective"])]
        lower = upper = low = high = math.nan
        if ref is not None:
            lower = math.nan if ref.lower is None else ref.lower
            upper = math.nan if ref.upper is None else ref.upper
            if ref.defect is None and plain.defect is None:
                low, high = price_interval(plain, ref)
        for column, value in zip(columns, (lower, upper, low, high), strict=True):
            columns[column].append(value)
    return frame.assign(**columns)


def _with_restrictions(
    frame: pd.DataFrame,
    restricted: Mapping[tuple[str, ...], Reference],
    known: Mapping[tuple[str, ...], Reference],
) -> pd.DataFrame:
    """Columns against each restricted optimum present (e.g. ``shelves``).

    For restriction ``R``: ``R_lower``, ``R_upper`` (the restricted
    reference), ``R_ratio_low``, ``R_ratio_high`` (the policy's value against
    the restricted optimum, :func:`optsched.analysis.gap.ratio_interval`) and
    ``R_price_low``, ``R_price_high``: the price of the restriction,
    restricted optimum / optimum (:func:`optsched.analysis.gap.price_interval`).
    """
    from optsched.analysis.gap import price_interval, ratio_interval

    names = sorted({key[4] for key in restricted})
    for name in names:
        columns: dict[str, list[float]] = {
            f"{name}_{c}": []
            for c in ("lower", "upper", "ratio_low", "ratio_high", "price_low",
                      "price_high")
        }  # fmt: skip
        for record in frame.to_dict("records"):
            window = (record["suite"], record["trace_sha256"], record["window"])
            ref = restricted.get((*window, record["objective"], name))
            plain = known[(*window, record["objective"])]
            if ref is None or ref.defect is not None or not record["comparable"]:
                low = high = p_low = p_high = math.nan
            else:
                low, high = ratio_interval(record["value"], ref.lower, ref.upper)
                p_low, p_high = price_interval(ref, plain)
            lower = math.nan if ref is None or ref.lower is None else ref.lower
            upper = math.nan if ref is None or ref.upper is None else ref.upper
            for column, value in zip(
                columns, (lower, upper, low, high, p_low, p_high), strict=True
            ):
                columns[column].append(value)
        frame = frame.assign(**columns)
    return frame


EXPORT_FORMATS = {".csv": "csv", ".parquet": "parquet"}
TABLES = ("tasks", "gap")

EXPANDED = {
    "values": "value_",
    "metrics": "metric_",
    "bounds": "bound_",
    "params": "param_",
    "versions": "version_",
}
"""JSON columns of table ``tasks`` that an export spreads into one column per
key, and the prefix of those columns (``value_cmax``, ``metric_mean_wait``,
``bound_area``, ``param_time_limit``, ``version_ortools``); the key follows
in :func:`snake_case` (``value_wct_one``, ``bound_squashed_area``)."""


def snake_case(key: str) -> str:
    """``key`` as a column name every tool takes unquoted (SQL, R, pandas
    attributes): runs of other characters than letters and digits become
    one ``_``, e.g. ``wct:one`` -> ``wct_one``, ``squashed-area`` ->
    ``squashed_area``.

    Examples
    --------
    >>> snake_case("wct:one:relative"), snake_case("squashed-area")
    ('wct_one_relative', 'squashed_area')
    """
    return re.sub(r"[^0-9A-Za-z]+", "_", key).strip("_").lower()


def _scalar(value: object) -> object:
    """A JSON value as one cell: lists of plain values joined by commas."""
    if isinstance(value, list) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
    ):
        return ",".join(str(v) for v in value)
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def export_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """The ``tasks`` rows as exported: JSON objects spread into columns.

    Each column of :data:`EXPANDED` becomes one column per key found in
    any row, named with its prefix and sorted by name, after the plain
    columns: ``value_<objective>`` holds a row's value under each objective
    (a policy row's every objective, a solver row's one, from ``value``),
    ``metric_<name>`` the schedule's metrics
    (:func:`optsched.metrics.summarize`), ``bound_<method>`` a solver's
    lower bounds, ``param_<key>`` the task's parameters (a list of values
    joined by commas: ``cmax,wct:one``), ``version_<package>`` the versions
    of the run. A row without a key has a missing value there. ``rejected``
    (a list of lines) becomes one text cell, lines joined by ``"; "``.
    ``schedule`` stays the one JSON cell: a whole schedule in the ``json``
    format of :mod:`optsched.io.schedules`
    (:func:`~optsched.io.schedules.schedule_from_json` reads it).

    Parameters
    ----------
    rows
        :meth:`Store.rows`.

    Returns
    -------
    pandas.DataFrame
        One row per task, in the order of ``rows``.
    """
    records = rows.to_dict("records")
    plain = rows.drop(columns=[c for c in EXPANDED if c in rows.columns])
    rejected = [_lines(r) for r in rows["rejected"]]
    plain = plain.assign(rejected=pd.Series(rejected, index=rows.index, dtype=object))
    spread: dict[str, list[object]] = {}
    for index, record in enumerate(records):
        for column, prefix in EXPANDED.items():
            found = _object(record[column])
            if column == "values" and record["kind"] == "solver":
                value = _float(record["value"])
                found = {} if value is None else {str(record["objective"]): value}
            for key, value in found.items():
                name = prefix + snake_case(str(key))
                cells = spread.setdefault(name, [None] * len(records))
                cells[index] = _scalar(value)
    extra = pd.DataFrame(
        {name: spread[name] for name in sorted(spread, key=_expanded_order)},
        index=plain.index,
    )
    # Numbers stay numbers (float64 with NaN for a missing value).
    extra = extra.apply(_numeric_if_possible)
    return pd.concat([plain, extra], axis=1)


def _lines(cell: object) -> str | None:
    """A JSON list of lines (column ``rejected``) as one text cell."""
    text = _text(cell)
    return None if text is None else "; ".join(str(x) for x in json.loads(text))


def _expanded_order(name: str) -> tuple[int, str]:
    prefixes = list(EXPANDED.values())
    return next(i for i, p in enumerate(prefixes) if name.startswith(p)), name


def _numeric_if_possible(column: pd.Series) -> pd.Series:
    present = column.dropna()
    if len(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    ):
        return column.astype("float64")
    return column.astype(object)


def export_store(
    store_path: str | Path,
    output: str | Path,
    *,
    suite: str | None = None,
    table: str = "tasks",
) -> int:
    """Write a store's rows to CSV or Parquet (by ``output``'s suffix), atomically.

    Parameters
    ----------
    store_path
        An existing results store.
    output
        ``*.csv`` or ``*.parquet`` (Parquet needs pyarrow: the ``parquet``
        extra).
    suite
        Only this suite's rows (it must be in the store).
    table
        ``tasks`` (:meth:`Store.rows` with its JSON columns spread into
        columns: :func:`export_frame`) or ``gap`` (:meth:`Store.gap_rows`).

    Returns
    -------
    int
        Number of rows written.
    """
    from optsched.io.atomic import atomic_write

    output = Path(output)
    fmt = EXPORT_FORMATS.get(output.suffix.lower())
    if fmt is None:
        raise InputError(
            f"cannot tell the export format from the suffix {output.suffix!r}: "
            f"use {' or '.join(EXPORT_FORMATS)}",
            output,
        )
    if table not in TABLES:
        raise ValueError(f"table {table!r} is not one of {', '.join(TABLES)}")
    if fmt == "parquet":
        _require_pyarrow()
    with Store(store_path, create=False) as store:
        if suite is not None and suite not in store.suites():
            known = ", ".join(store.suites()) or "none"
            raise InputError(
                f"no suite {suite!r} in the store (suites: {known})", store_path
            )
        if table == "tasks":
            frame = export_frame(store.rows(suite))
        else:
            frame = store.gap_rows(suite)
    if fmt == "csv":
        from optsched.io.spreadsheet import safe_frame

        with atomic_write(output, "w", newline="", encoding="utf-8") as handle:
            safe_frame(frame).to_csv(handle, index=False)
    else:
        with atomic_write(output, "wb") as handle:
            frame.to_parquet(handle, index=False)
    return len(frame)


def _require_pyarrow() -> None:
    from optsched.extras import require

    require("pyarrow", "parquet", "export to .parquet")
