"""The results store: one SQLite row per finished benchmark task.

The store is a single SQLite file in WAL mode. The parent process of a
benchmark run is its only writer: each finished task becomes one ``INSERT``
committed in its own transaction, so a run killed at any moment loses no
finished task and never leaves half a row. ``task_id`` is the primary key,
so no task is ever stored twice; a re-run asks :meth:`Store.done_ids` what to
skip.

Table ``tasks`` (TEXT unless said):

``task_id`` (primary key), ``suite``, ``trace`` (path as given in the
suite), ``trace_sha256``, ``window`` (:attr:`WindowSpec.key
<optsched.selection.WindowSpec.key>`), ``window_index`` (INTEGER), ``kind``
(``policy`` | ``solver``), ``name`` (policy spec or back-end), ``objective``
(label), ``params`` (JSON), ``status`` (``OK`` for a policy, the
:class:`~optsched.models.result.SolveStatus` value for a solver, ``ERROR``
on failure), ``value`` (REAL: policy objective or solver best upper bound),
``lower`` (REAL: solver lower bound, NULL for policies), ``lower_method``,
``upper`` (REAL), ``upper_source``, ``bounds`` (JSON ``{method: value}``),
``metrics`` (JSON, :func:`optsched.metrics.summarize`), ``schedule`` (JSON,
the ``json`` schedule format of :mod:`optsched.io.schedules`, or NULL),
``error`` (NULL unless failed), ``runtime`` (REAL, seconds of simulation or
solving), ``versions`` (JSON), ``started``, ``finished`` (ISO 8601 UTC),
``host``.

Table ``schema_version`` holds one integer, :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd

from optsched.errors import InputError

SCHEMA_VERSION = 1
"""Version of the table layout; a store of another version is refused."""

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
)
COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in COLUMNS)
_DTYPES = {"value": "float64", "lower": "float64", "upper": "float64"} | {
    "runtime": "float64",
    "window_index": "int64",
}

ERROR = "ERROR"
"""``status`` of a task that failed."""

WINDOW_KEY = ["suite", "trace_sha256", "window", "objective"]
"""The rows that describe one instance and objective: their bounds combine."""


def _quoted(names: Iterable[str]) -> str:
    # ``window`` is an SQL keyword (window functions): every name is quoted.
    return ", ".join(f'"{name}"' for name in names)


_QUOTED = _quoted(COLUMN_NAMES)
_INSERT = (
    f"INSERT INTO tasks ({_QUOTED}) VALUES ({', '.join('?' * len(COLUMN_NAMES))}) "
    "ON CONFLICT (task_id) DO NOTHING"
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
        if not create and not self.path.is_file():
            raise InputError("no such results store", self.path)
        try:
            # Autocommit mode: every write below opens its own transaction.
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as error:
            raise InputError(f"cannot open results store: {error}", self.path) from None
        try:
            self._prepare(create)
        except BaseException:
            self._db.close()
            raise

    def _prepare(self, create: bool) -> None:
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed row survives any crash of this
            # process (the kill the resume logic is about); a power cut may
            # lose the last commits, which a re-run recomputes, but never
            # corrupts the file. FULL would fsync every row (5-15 ms each).
            self._db.execute("PRAGMA synchronous=NORMAL")
            tables = {
                row[0]
                for row in self._db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
        except sqlite3.DatabaseError as error:
            raise InputError(f"not a results store: {error}", self.path) from None
        if "schema_version" not in tables:
            if tables or not create:
                raise InputError(
                    "not an optsched results store (no schema_version table)", self.path
                )
            self._create()
            return
        (version,) = self._db.execute("SELECT version FROM schema_version").fetchone()
        if version != SCHEMA_VERSION:
            raise InputError(
                f"results store has schema version {version}; this optsched reads "
                f"and writes version {SCHEMA_VERSION}",
                self.path,
            )

    def _create(self) -> None:
        with self._transaction():
            self._db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            self._db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            self._db.execute(_CREATE)
            self._db.execute('CREATE INDEX tasks_suite ON tasks ("suite")')

    def _transaction(self) -> sqlite3.Connection:
        # ``with connection`` commits or rolls back, but in autocommit mode
        # it needs an explicit BEGIN; IMMEDIATE takes the write lock at once.
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def close(self) -> None:
        """Close the database connection."""
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

    def insert(self, row: Mapping[str, Any]) -> bool:
        """Store one finished task in its own transaction.

        ``row`` has exactly the keys :data:`COLUMN_NAMES`. Returns ``False``
        (and changes nothing) when the task is already stored.
        """
        missing = set(COLUMN_NAMES) - set(row)
        extra = set(row) - set(COLUMN_NAMES)
        if missing or extra:
            raise ValueError(
                f"task row: missing columns {sorted(missing)}, "
                f"unknown columns {sorted(extra)}"
            )
        with self._transaction():
            cursor = self._db.execute(_INSERT, [row[name] for name in COLUMN_NAMES])
        return cursor.rowcount == 1

    def done_ids(self, suite: str | None = None) -> set[str]:
        """Ids of the stored tasks (failed ones included), of one suite or all."""
        query, args = _where("SELECT task_id FROM tasks", suite)
        return {task_id for (task_id,) in self._db.execute(query, args)}

    def failed_ids(self, suite: str | None = None) -> set[str]:
        """Ids of the stored tasks with status ``ERROR``."""
        query, args = _where("SELECT task_id FROM tasks", suite, ERROR)
        return {task_id for (task_id,) in self._db.execute(query, args)}

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

    def suites(self) -> list[str]:
        """Names of the suites with rows in the store, sorted."""
        query = 'SELECT DISTINCT "suite" FROM tasks ORDER BY "suite"'
        return [name for (name,) in self._db.execute(query)]

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

    def failures(
        self, suite: str | None = None, limit: int = 5
    ) -> list[dict[str, str]]:
        """The first ``limit`` failed tasks (window, kind, name, objective, error)."""
        names = ("window", "kind", "name", "objective", "error")
        query, args = _where(f"SELECT {_quoted(names)} FROM tasks", suite, ERROR)
        query += ' ORDER BY "window_index", "objective", "kind", "name" LIMIT ?'
        found = self._db.execute(query, [*args, limit]).fetchall()
        return [dict(zip(names, row, strict=True)) for row in found]

    def gap_rows(self, suite: str | None = None) -> pd.DataFrame:
        """Policy rows with the best bounds of their window and their ratio.

        For every (suite, trace, window, objective), the best lower bound is
        the largest ``lower`` of the solver rows; the best upper bound the
        smallest of the solver rows' ``upper`` and every policy row's
        ``value``. Each successful policy row then gets ``lower``,
        ``lower_method``, ``upper``, ``upper_source`` replaced by those, the
        ratio interval ``[value / UB, value / LB]``
        (:func:`optsched.gap.ratio_interval`) as ``ratio_low``,
        ``ratio_high``, and ``optimal`` (``LB = UB``). Failed rows are left
        out (see :meth:`rows`).

        Raises
        ------
        optsched.gap.InvalidScheduleError
            A stored schedule value beats a stored lower bound: one of them
            is wrong, and no ratio is printed below 1.
        """
        return gap_frame(self.rows(suite))


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


def gap_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """:meth:`Store.gap_rows` on a frame of task rows (see there)."""
    from optsched.gap import (
        OPTIMAL_TOLERANCE,
        InvalidScheduleError,
        is_optimal,
        ratio_interval,
    )

    ok = rows[rows["status"] != ERROR]
    policies = ok[ok["kind"] == "policy"].drop(
        columns=["lower", "lower_method", "upper", "upper_source"]
    )
    best = _best_bounds(ok)
    out = policies.merge(best, on=WINDOW_KEY, how="left", validate="many_to_one")
    out = out.astype({"lower": float, "upper": float}).reset_index(drop=True)
    lowers = [None if math.isnan(v) else float(v) for v in out["lower"]]
    uppers = [None if math.isnan(v) else float(v) for v in out["upper"]]
    for lower, upper, row in zip(lowers, uppers, out.itertuples(), strict=True):
        slack = OPTIMAL_TOLERANCE * max(1.0, abs(lower or 0.0))
        if lower is not None and upper is not None and upper < lower - slack:
            raise InvalidScheduleError(
                f"window {row.window} of {row.trace}, {row.objective}: a "
                f"schedule of value {upper} ({row.upper_source}) beats the "
                f"lower bound {lower} ({row.lower_method})"
            )
    ratios = [
        ratio_interval(float(v), lo, up)
        for v, lo, up in zip(out["value"], lowers, uppers, strict=True)
    ]
    out["ratio_low"] = [low for low, _ in ratios]
    out["ratio_high"] = [high for _, high in ratios]
    out["optimal"] = [is_optimal(lo, up) for lo, up in zip(lowers, uppers, strict=True)]
    # The policy spec under the name optsched.gap.aggregate groups by.
    out["policy"] = out["name"]
    return out


def _best_bounds(ok: pd.DataFrame) -> pd.DataFrame:
    """Best ``lower`` / ``upper`` (and where each comes from) per window key."""
    solvers = ok[(ok["kind"] == "solver") & ok["lower"].notna()]
    lower = solvers.sort_values("lower", ascending=False, kind="stable")
    lower = lower.drop_duplicates(WINDOW_KEY)[[*WINDOW_KEY, "lower", "lower_method"]]
    solver_upper = ok[(ok["kind"] == "solver") & ok["upper"].notna()]
    solver_upper = solver_upper[[*WINDOW_KEY, "upper", "upper_source"]]
    policy_upper = ok[(ok["kind"] == "policy") & ok["value"].notna()]
    policy_upper = pd.DataFrame(
        {
            **{key: policy_upper[key] for key in WINDOW_KEY},
            "upper": policy_upper["value"],
            "upper_source": "policy:" + policy_upper["name"],
        }
    )
    # Solver rows first: on a tie the solver's proof-carrying schedule names
    # the upper bound.
    candidates = pd.concat([solver_upper, policy_upper], ignore_index=True)
    upper = candidates.sort_values("upper", kind="stable").drop_duplicates(WINDOW_KEY)
    return lower.merge(upper, on=WINDOW_KEY, how="outer")


EXPORT_FORMATS = {".csv": "csv", ".parquet": "parquet"}
TABLES = ("tasks", "gap")


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
        ``tasks`` (:meth:`Store.rows`) or ``gap`` (:meth:`Store.gap_rows`).

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
        frame = store.rows(suite) if table == "tasks" else store.gap_rows(suite)
    if fmt == "csv":
        with atomic_write(output, "w", newline="", encoding="utf-8") as handle:
            frame.to_csv(handle, index=False)
    else:
        with atomic_write(output, "wb") as handle:
            frame.to_parquet(handle, index=False)
    return len(frame)


def _require_pyarrow() -> None:
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise ImportError(
            "Parquet export needs pyarrow: pip install 'optsched[parquet]'"
        )
