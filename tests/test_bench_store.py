"""The SQLite results store: schema, one row per task, gap rows, export."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from optsched.bench.store import COLUMN_NAMES, SCHEMA_VERSION, Store, export_store
from optsched.cli import main
from optsched.errors import InputError
from optsched.gap import InvalidScheduleError


def row(task_id: str, **fields: Any) -> dict[str, Any]:
    """A complete task row with neutral defaults."""
    base: dict[str, Any] = dict.fromkeys(COLUMN_NAMES)
    base.update(
        task_id=task_id,
        suite="s",
        trace="t.swf",
        trace_sha256="ab" * 32,
        window="first=0,jobs=5,state=none",
        window_index=0,
        kind="policy",
        name="fcfs",
        objective="cmax",
        params='{"seed":0}',
        status="OK",
        runtime=0.01,
    )
    base.update(fields)
    return base


def policy(task_id: str, name: str, value: float, **fields: Any) -> dict[str, Any]:
    fields.setdefault("status", "OK")
    return row(
        task_id,
        name=name,
        value=value,
        upper=value,
        upper_source=f"policy:{name}",
        **fields,
    )


def solver(
    task_id: str, lower: float | None, upper: float | None, **fields: Any
) -> dict[str, Any]:
    fields.setdefault("status", "FEASIBLE")
    return row(
        task_id,
        kind="solver",
        name="cpsat",
        params='{"time_limit":5.0,"workers":1}',
        value=upper,
        lower=lower,
        lower_method="cpsat" if lower is not None else None,
        upper=upper,
        upper_source="cpsat" if upper is not None else None,
        **fields,
    )


def test_new_store_schema(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        assert store.rows().empty
        assert list(store.rows().columns) == list(COLUMN_NAMES)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [
        (SCHEMA_VERSION,)
    ]
    columns = [r[1] for r in db.execute("PRAGMA table_info(tasks)")]
    assert columns == list(COLUMN_NAMES)
    db.close()


def test_insert_once_per_task(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        assert store.insert(policy("a", "fcfs", 10.0))
        assert store.insert(row("b", name="easy", status="ERROR", error="boom"))
        # The same task again changes nothing.
        assert not store.insert(policy("a", "fcfs", 99.0))
        assert store.done_ids() == {"a", "b"}
        assert store.done_ids("s") == {"a", "b"}
        assert store.done_ids("other") == set()
        assert store.failed_ids() == {"b"}
        frame = store.rows()
        assert list(frame["task_id"]) == ["b", "a"]  # ordered by name
        assert frame.set_index("task_id").loc["a", "value"] == 10.0
        assert store.delete_failed(["a", "b"]) == 1
        assert store.done_ids() == {"a"}


def test_insert_rejects_incomplete_rows(tmp_path: Path) -> None:
    incomplete = policy("a", "fcfs", 1.0)
    del incomplete["host"]
    with Store(tmp_path / "r.sqlite") as store, pytest.raises(ValueError, match="host"):
        store.insert(incomplete)


def test_rows_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.insert(policy("a", "fcfs", 10.0, suite="x"))
        store.insert(policy("b", "fcfs", 11.0, suite="y"))
    with Store(path, create=False) as store:
        assert store.suites() == ["x", "y"]
        assert list(store.rows("y")["task_id"]) == ["b"]
        assert store.rows()["window_index"].dtype == "int64"


def test_refuses_what_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such results store"):
        Store(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a database\n" * 100)
    with pytest.raises(InputError, match="not a results store"):
        Store(text)
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE people (name TEXT)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="not an optsched results store"):
        Store(other)
    old = tmp_path / "old.sqlite"
    Store(old).close()
    db = sqlite3.connect(old)
    db.execute("UPDATE schema_version SET version = 99")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="schema version 99; this optsched"):
        Store(old)


def _gap_store(path: Path) -> Store:
    store = Store(path)
    w0 = {"window": "first=0,jobs=5,state=none", "window_index": 0}
    w1 = {"window": "first=5,jobs=5,state=none", "window_index": 1}
    w2 = {"window": "first=10,jobs=5,state=none", "window_index": 2}
    for r in [
        # Window 0, cmax: LB 90 (cpsat), UB min(100 cpsat, 100 fcfs, 120 easy).
        solver("s0", 90.0, 100.0, **w0),
        policy("p0", "fcfs", 100.0, **w0),
        policy("q0", "easy", 120.0, **w0),
        # Window 0, wct: no solver; best policy is the upper bound.
        policy("p0w", "fcfs", 300.0, objective="wct:one", **w0),
        policy("q0w", "easy", 250.0, objective="wct:one", **w0),
        # Window 1: optimum proven (LB = UB = 50); a failed policy is left out.
        solver("s1", 50.0, 50.0, status="OPTIMAL", **w1),
        policy("p1", "fcfs", 75.0, **w1),
        policy("q1", "easy", float("nan"), status="ERROR", error="boom", **w1),
        # Window 2: the solver found a bound but no schedule; easy beats fcfs.
        solver("s2", 40.0, None, status="BOUNDED", **w2),
        policy("p2", "fcfs", 80.0, **w2),
        policy("q2", "easy", 60.0, **w2),
    ]:
        store.insert(r)
    return store


def test_gap_rows_by_hand(tmp_path: Path) -> None:
    with _gap_store(tmp_path / "r.sqlite") as store:
        gap = store.gap_rows("s")
    gap = gap.set_index("task_id")
    assert sorted(gap.index) == ["p0", "p0w", "p1", "p2", "q0", "q0w", "q2"]
    expected = {
        # task: lower, lower_method, upper, upper_source, ratio_low, ratio_high
        "p0": (90.0, "cpsat", 100.0, "cpsat", 1.0, 100 / 90, False),
        "q0": (90.0, "cpsat", 100.0, "cpsat", 1.2, 120 / 90, False),
        "p0w": (None, None, 250.0, "policy:easy", 300 / 250, math.inf, False),
        "q0w": (None, None, 250.0, "policy:easy", 1.0, math.inf, False),
        "p1": (50.0, "cpsat", 50.0, "cpsat", 1.5, 1.5, True),
        "p2": (40.0, "cpsat", 60.0, "policy:easy", 80 / 60, 2.0, False),
        "q2": (40.0, "cpsat", 60.0, "policy:easy", 1.0, 1.5, False),
    }
    for task_id, (lo, method, up, source, r_low, r_high, opt) in expected.items():
        got = gap.loc[task_id]
        if lo is None:
            assert math.isnan(got["lower"])
            assert pd.isna(got["lower_method"])
        else:
            assert got["lower"] == lo
            assert got["lower_method"] == method
        assert got["upper"] == up
        assert got["upper_source"] == source
        assert got["ratio_low"] == pytest.approx(r_low, rel=1e-12)
        assert got["ratio_high"] == pytest.approx(r_high, rel=1e-12)
        assert bool(got["optimal"]) is opt


def test_gap_rows_refuse_a_value_below_the_lower_bound(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        store.insert(solver("s", 100.0, 110.0))
        store.insert(policy("p", "fcfs", 95.0))
        with pytest.raises(InvalidScheduleError, match=r"beats the lower bound 100\.0"):
            store.gap_rows()


def test_gap_rows_of_an_empty_store(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        gap = store.gap_rows()
    assert gap.empty
    assert {"ratio_low", "ratio_high", "optimal", "lower", "upper"} <= set(gap.columns)


def test_export_csv_and_parquet_read_back(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with _gap_store(path) as store:
        store.insert(policy("x", "fcfs", 1.0, suite="other"))
        expected = store.rows("s")
        expected_gap = store.gap_rows("s")
    assert export_store(path, tmp_path / "out.csv", suite="s") == 11
    assert export_store(path, tmp_path / "out.parquet", suite="s") == 11
    # CSV has no NULL, and pandas may read text back as its string dtype:
    # compare values, with every missing value as NaN.
    for frame in (
        pd.read_csv(tmp_path / "out.csv"),
        pd.read_parquet(tmp_path / "out.parquet"),
    ):
        pd.testing.assert_frame_equal(
            missing_as_nan(frame), missing_as_nan(expected), check_dtype=False
        )
    assert export_store(path, tmp_path / "gap.parquet", table="gap", suite="s") == 7
    pd.testing.assert_frame_equal(
        missing_as_nan(pd.read_parquet(tmp_path / "gap.parquet")),
        missing_as_nan(expected_gap),
        check_dtype=False,
    )


def missing_as_nan(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(object).where(frame.notna(), math.nan)


def test_export_cli(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    _gap_store(path).close()
    runner = CliRunner()
    out = tmp_path / "all.csv"
    result = runner.invoke(main, ["export", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"11 rows -> {out}\n"
    frame = pd.read_csv(out)
    assert sorted(frame["task_id"]) == sorted(
        ["s0", "p0", "q0", "p0w", "q0w", "s1", "p1", "q1", "s2", "p2", "q2"]
    )
    assert frame.set_index("task_id").loc["q1", "error"] == "boom"
    for args, message in [
        (["-o", str(tmp_path / "x.xlsx")], "use .csv or .parquet"),
        (["-o", str(tmp_path / "x.csv"), "--suite", "nope"], "no suite 'nope'"),
    ]:
        result = runner.invoke(main, ["export", str(path), *args])
        assert result.exit_code == 2
        assert message in result.stderr
        assert len(result.stderr.splitlines()) == 1
    result = runner.invoke(main, ["export", str(tmp_path / "no.sqlite"), "-o", "x.csv"])
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"optsched: error: {tmp_path / 'no.sqlite'}: no such results store\n"
    )
    assert not (tmp_path / "x.xlsx").exists()
    assert not (tmp_path / "no.sqlite").exists()
