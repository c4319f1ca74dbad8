"""The SQLite results store: schema, one row per task, gap rows, export."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from support.bench import policy, row, solver

from optsched.bench.store import (
    COLUMN_NAMES,
    GAP_COLUMNS,
    SCHEMA_VERSION,
    Store,
    TaskRow,
    decode_rows,
    export_frame,
    export_store,
    references,
)
from optsched.bench.tasks import to_json
from optsched.cli import main
from optsched.errors import InputError

NEW_IN_VERSION_2 = (
    "instance_sha256",
    "values",
    "killed",
    "lost_work",
    "interrupted",
    "rejected",
)
"""The columns a version 1 store lacks (it has no ``instances`` table either)."""
NEW_IN_VERSION_3 = ("incomplete",)
"""The column a version 2 store lacks (it has no ``claims`` table either)."""

W0 = {"window": "first=0,jobs=5,state=none", "window_index": 0}
W1 = {"window": "first=5,jobs=5,state=none", "window_index": 1}
W2 = {"window": "first=10,jobs=5,state=none", "window_index": 2}


def test_new_store_schema(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        assert store.rows().empty
        assert list(store.rows().columns) == list(COLUMN_NAMES)
    assert SCHEMA_VERSION == 3
    assert COLUMN_NAMES[-7:] == NEW_IN_VERSION_2 + NEW_IN_VERSION_3
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [
        (SCHEMA_VERSION,)
    ]
    columns = [r[1] for r in db.execute("PRAGMA table_info(tasks)")]
    assert columns == list(COLUMN_NAMES)
    tables = {
        name
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert tables == {"schema_version", "tasks", "instances", "claims"}
    columns = [r[1] for r in db.execute("PRAGMA table_info(instances)")]
    assert columns == ["sha256", "instance"]
    columns = [r[1] for r in db.execute("PRAGMA table_info(claims)")]
    assert columns == ["task_id", "host", "pid", "owner", "heartbeat"]
    db.close()


def test_insert_once_per_task(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        assert store.insert(policy("a", "fcfs", {"cmax": 10.0}))
        assert store.insert(row("b", name="easy", status="ERROR", error="boom"))
        # The same task again changes nothing.
        assert not store.insert(policy("a", "fcfs", {"cmax": 99.0}))
        assert store.done_ids() == {"a", "b"}
        assert store.done_ids("s") == {"a", "b"}
        assert store.done_ids("other") == set()
        assert store.failed_ids() == {"b"}
        frame = store.rows()
        assert list(frame["task_id"]) == ["b", "a"]  # ordered by name
        got = frame.set_index("task_id").loc["a"]
        assert json.loads(got["values"]) == {"cmax": 10.0}
        assert math.isnan(got["value"])  # a policy row has no single value
        # Optional columns left NULL are stored with their defaults.
        assert (got["killed"], got["lost_work"], got["interrupted"]) == (0, 0.0, 0)
        assert frame["killed"].dtype == "int64"
        assert store.delete_failed(["a", "b"]) == 1
        assert store.done_ids() == {"a"}


def test_insert_rejects_incomplete_rows(tmp_path: Path) -> None:
    incomplete = policy("a", "fcfs", {"cmax": 1.0})
    del incomplete["host"]
    with Store(tmp_path / "r.sqlite") as store, pytest.raises(ValueError, match="host"):
        store.insert(incomplete)
    unknown = {**policy("a", "fcfs", {"cmax": 1.0}), "colour": "red"}
    with (
        Store(tmp_path / "r.sqlite") as store,
        pytest.raises(ValueError, match="colour"),
    ):
        store.insert(unknown)


def test_task_rows_are_typed(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        store.insert(
            policy(
                "p",
                "fcfs",
                {"cmax": 100.0, "wct:one": 300.0},
                killed=1,
                lost_work=12.0,
                schedule='{"jobs":[]}',
                instance_sha256="cd" * 32,
            )
        )
        store.insert(
            solver(
                "s",
                90.0,
                100.0,
                bounds=to_json({"area": 80.0, "cpsat": 90.0}),
                interrupted=1,
            )
        )
        store.insert(row("e", name="easy", status="ERROR", error="boom"))
        decoded = {r.task_id: r for r in store.task_rows("s")}
        assert decoded == {r.task_id: r for r in decode_rows(store.rows())}
    p, s, e = decoded["p"], decoded["s"], decoded["e"]
    assert isinstance(p, TaskRow)
    assert p.values == {"cmax": 100.0, "wct:one": 300.0}
    assert (p.objective, p.killed, p.lost_work, p.interrupted) == ("", 1, 12.0, False)
    assert (p.lower, p.upper, p.bounds) == (None, None, {})
    assert (p.schedule_json, p.instance_sha256) == ('{"jobs":[]}', "cd" * 32)
    assert p.window_id == ("s", "ab" * 32, "first=0,jobs=5,state=none")
    assert not p.failed
    # A solver row's one value is listed under its objective.
    assert s.values == {"cmax": 100.0}
    assert (s.lower, s.lower_method, s.upper, s.upper_source) == (
        90.0,
        "cpsat",
        100.0,
        "cpsat",
    )
    assert s.bounds == {"area": 80.0, "cpsat": 90.0}
    assert s.interrupted is True
    assert (s.schedule_json, s.instance_sha256, s.error) == (None, None, None)
    assert e.failed and e.error == "boom" and e.values == {}


def test_instances_are_kept_once_by_content(tmp_path: Path) -> None:
    from support.builders import make

    path = tmp_path / "r.sqlite"
    one = make(4, [(0, 2, 5), (1, 4, 3)])
    two = make(4, [(0, 2, 5), (1, 4, 4)])
    with Store(path) as store:
        sha_one = store.add_instance(one)
        assert store.add_instance(one) == sha_one  # stored once
        sha_two = store.add_instance(two)
        assert sha_two != sha_one
    with Store(path, create=False) as store:
        assert store.instance(sha_one) == one
        assert store.instance(sha_two) == two
        with pytest.raises(KeyError, match="no instance 000000000000"):
            store.instance("0" * 64)
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM instances").fetchone() == (2,)
    db.close()


def test_rows_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.insert(policy("a", "fcfs", {"cmax": 10.0}, suite="x"))
        store.insert(policy("b", "fcfs", {"cmax": 11.0}, suite="y"))
    with Store(path, create=False) as store:
        assert store.suites() == ["x", "y"]
        assert list(store.rows("y")["task_id"]) == ["b"]
        assert store.rows()["window_index"].dtype == "int64"


def _execute(path: Path, sql: str) -> None:
    """Run one SQL statement on the SQLite file ``path`` and commit it."""
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()


def test_refuses_what_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such results store"):
        Store(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a database\n" * 100)
    with pytest.raises(InputError, match="not a results store"):
        Store(text)
    other = tmp_path / "other.sqlite"
    _execute(other, "CREATE TABLE people (name TEXT)")
    with pytest.raises(InputError, match="not an optsched results store"):
        Store(other)
    old = tmp_path / "old.sqlite"
    Store(old).close()
    _execute(old, "UPDATE schema_version SET version = 99")
    with pytest.raises(InputError, match="schema version 99; this optsched"):
        Store(old)


def test_a_version_1_store_is_refused(tmp_path: Path) -> None:
    # A store written before policies were simulated once per window: the
    # version 1 layout, without the columns and the table added since.
    old = tmp_path / "v1.sqlite"
    db = sqlite3.connect(old)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (1)")
    v1 = [
        name for name in COLUMN_NAMES if name not in NEW_IN_VERSION_2 + NEW_IN_VERSION_3
    ]
    quoted = ", ".join(f'"{name}"' for name in v1)
    db.execute(f"CREATE TABLE tasks ({quoted})")
    db.execute(
        f"INSERT INTO tasks VALUES ({', '.join('?' * len(v1))})",
        [policy("a", "fcfs", {"cmax": 1.0})[name] for name in v1],
    )
    db.commit()
    db.close()
    expected = (
        f"{old}: results store has schema version 1; this optsched reads and "
        "writes version 3"
    )
    for create in (True, False):
        with pytest.raises(InputError) as caught:
            Store(old, create=create)
        assert str(caught.value) == expected
    # Left as it was: no table added, the row still there.
    db = sqlite3.connect(old)
    assert {n for (n,) in db.execute("SELECT name FROM sqlite_master")} == {
        "schema_version",
        "tasks",
    }
    assert db.execute("SELECT COUNT(*) FROM tasks").fetchone() == (1,)
    db.close()
    result = CliRunner().invoke(
        main, ["export", str(old), "-o", str(tmp_path / "x.csv")]
    )
    assert result.exit_code == 2
    assert result.stderr == f"optsched: error: {expected}\n"
    assert not (tmp_path / "x.csv").exists()


def _gap_store(path: Path) -> Store:
    store = Store(path)
    for r in [
        # Window 0, cmax: LB 90 (cpsat), UB min(100 cpsat, 100 fcfs, 120 easy).
        # Window 0, wct: no solver; best policy is the upper bound.
        solver("s0", 90.0, 100.0, **W0),
        policy("p0", "fcfs", {"cmax": 100.0, "wct:one": 300.0}, **W0),
        policy("q0", "easy", {"cmax": 120.0, "wct:one": 250.0}, **W0),
        # Window 1: optimum proven (LB = UB = 50); a failed policy is left out.
        solver("s1", 50.0, 50.0, status="OPTIMAL", **W1),
        policy("p1", "fcfs", {"cmax": 75.0}, **W1),
        row("q1", name="easy", status="ERROR", error="boom", **W1),
        # Window 2: the solver found a bound but no schedule; easy beats fcfs.
        solver("s2", 40.0, None, status="BOUNDED", **W2),
        policy("p2", "fcfs", {"cmax": 80.0}, **W2),
        policy("q2", "easy", {"cmax": 60.0}, **W2),
    ]:
        store.insert(r)
    return store


def test_gap_rows_by_hand(tmp_path: Path) -> None:
    with _gap_store(tmp_path / "r.sqlite") as store:
        gap = store.gap_rows("s")
        known = references(store.task_rows("s"))
    assert list(gap.columns) == list(GAP_COLUMNS)
    # Window by window, policies in the stored order (by name), each policy
    # row expanded into one row per objective it measured.
    assert list(zip(gap["task_id"], gap["objective"], strict=True)) == [
        ("q0", "cmax"),
        ("q0", "wct:one"),
        ("p0", "cmax"),
        ("p0", "wct:one"),
        ("p1", "cmax"),
        ("q2", "cmax"),
        ("p2", "cmax"),
    ]
    gap = gap.set_index(["task_id", "objective"])
    expected = {
        # lower, lower_method, upper, upper_source, ratio_low, ratio_high,
        # optimal, upper_row (a tie goes to the solver, listed first)
        ("p0", "cmax"): (90.0, "cpsat", 100.0, "cpsat", 1.0, 100 / 90, False, "s0"),
        ("q0", "cmax"): (90.0, "cpsat", 100.0, "cpsat", 1.2, 120 / 90, False, "s0"),
        ("p0", "wct:one"): (
            None, None, 250.0, "policy:easy", 300 / 250, math.inf, False, "q0",
        ),
        ("q0", "wct:one"): (
            None, None, 250.0, "policy:easy", 1.0, math.inf, False, "q0",
        ),
        ("p1", "cmax"): (50.0, "cpsat", 50.0, "cpsat", 1.5, 1.5, True, "s1"),
        ("p2", "cmax"): (40.0, "cpsat", 60.0, "policy:easy", 80 / 60, 2.0, False,
                         "q2"),
        ("q2", "cmax"): (40.0, "cpsat", 60.0, "policy:easy", 1.0, 1.5, False, "q2"),
    }  # fmt: skip
    assert sorted(gap.index) == sorted(expected)
    for key, (lo, method, up, source, r_low, r_high, opt, up_row) in expected.items():
        got = gap.loc[key]
        if lo is None:
            assert math.isnan(got["lower"])
            assert pd.isna(got["lower_method"])
        else:
            assert got["lower"] == lo
            assert got["lower_method"] == method
        assert got["upper"] == up
        assert got["upper_source"] == source
        assert got["upper_row"] == up_row
        assert got["ratio_low"] == pytest.approx(r_low, rel=1e-12)
        assert got["ratio_high"] == pytest.approx(r_high, rel=1e-12)
        assert bool(got["optimal"]) is opt
        assert bool(got["comparable"]) is True
        assert pd.isna(got["defect"])
        assert (got["killed"], got["lost_work"]) == (0, 0)
    # The references behind them: every bound and candidate of a window.
    sha = "ab" * 32
    assert sorted((k[2], k[3]) for k in known) == [
        (W0["window"], "cmax"),
        (W0["window"], "wct:one"),
        (W2["window"], "cmax"),
        (W1["window"], "cmax"),
    ]
    w0 = known[("s", sha, W0["window"], "cmax")]
    assert dict(w0.bounds) == {"cpsat": 90.0}
    assert dict(w0.candidates) == {
        "cpsat": 100.0,
        "policy:fcfs": 100.0,
        "policy:easy": 120.0,
    }
    w1 = known[("s", sha, W1["window"], "cmax")]
    assert (w1.lower, w1.upper, w1.optimal) == (50.0, 50.0, True)
    assert dict(w1.candidates) == {"cpsat": 50.0, "policy:fcfs": 75.0}  # no easy


def test_a_killed_policy_is_reported_but_never_an_upper_bound(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        # Window 0: conservative killed a job; its 95 would beat the UB 100.
        store.insert(solver("s0", 90.0, 100.0, **W0))
        store.insert(policy("p0", "fcfs", {"cmax": 110.0}, **W0))
        store.insert(
            policy("k0", "conservative", {"cmax": 95.0}, killed=1, lost_work=12.0,
                   **W0)
        )  # fmt: skip
        # Window 1: a killed schedule below the proven optimum is no defect:
        # it did less work than the window.
        store.insert(solver("s1", 100.0, 100.0, status="OPTIMAL", **W1))
        store.insert(
            policy("k1", "conservative", {"cmax": 80.0}, killed=2, lost_work=40.0,
                   **W1)
        )  # fmt: skip
        gap = store.gap_rows().set_index("task_id")
        known = references(store.task_rows())
    killed = gap.loc["k0"]
    assert (killed["value"], killed["lower"], killed["upper"]) == (95.0, 90.0, 100.0)
    assert killed["upper_source"] == "cpsat"
    assert math.isnan(killed["ratio_low"]) and math.isnan(killed["ratio_high"])
    assert bool(killed["comparable"]) is False
    assert (killed["killed"], killed["lost_work"]) == (1, 12)
    assert pd.isna(killed["defect"])
    fcfs = gap.loc["p0"]
    assert bool(fcfs["comparable"]) is True
    assert fcfs["ratio_low"] == pytest.approx(1.1, rel=1e-12)
    assert fcfs["ratio_high"] == pytest.approx(110 / 90, rel=1e-12)
    below = gap.loc["k1"]
    assert (below["lower"], below["upper"], bool(below["optimal"])) == (
        100.0,
        100.0,
        True,
    )
    assert bool(below["comparable"]) is False
    assert math.isnan(below["ratio_low"]) and math.isnan(below["ratio_high"])
    assert pd.isna(below["defect"])
    assert (below["killed"], below["lost_work"]) == (2, 40)
    for reference in known.values():
        assert "policy:conservative" not in reference.candidates
        assert reference.defect is None


def test_a_value_below_the_lower_bound_is_a_defect(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        store.insert(solver("s", 100.0, 110.0))
        store.insert(policy("p", "fcfs", {"cmax": 95.0, "wct:one": 300.0}))
        store.insert(policy("q", "easy", {"cmax": 120.0, "wct:one": 250.0}))
        gap = store.gap_rows().set_index(["task_id", "objective"])  # no exception
    defect = (
        "cmax: the schedule of policy:fcfs has value 95.0, below the lower bound "
        "100.0 (cpsat): one of them is wrong"
    )
    # Every row of that window and objective is withheld, not only fcfs's.
    for task_id in ("p", "q"):
        got = gap.loc[(task_id, "cmax")]
        assert got["defect"] == defect
        assert bool(got["comparable"]) is False
        assert bool(got["optimal"]) is False
        assert math.isnan(got["ratio_low"]) and math.isnan(got["ratio_high"])
        assert (got["lower"], got["upper"], got["upper_source"]) == (
            100.0,
            95.0,
            "policy:fcfs",
        )
    # The other objective of the window has no defect: its ratios stand.
    for task_id, value in (("p", 300.0), ("q", 250.0)):
        got = gap.loc[(task_id, "wct:one")]
        assert pd.isna(got["defect"])
        assert bool(got["comparable"]) is True
        assert got["ratio_low"] == pytest.approx(value / 250.0, rel=1e-12)
        assert got["ratio_high"] == math.inf


def test_gap_rows_of_an_empty_store(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        gap = store.gap_rows()
    assert gap.empty
    assert list(gap.columns) == list(GAP_COLUMNS)


def test_export_csv_and_parquet_read_back(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with _gap_store(path) as store:
        store.insert(policy("x", "fcfs", {"cmax": 1.0}, suite="other"))
        expected = export_frame(store.rows("s"))  # JSON spread into columns
        expected_gap = store.gap_rows("s")
    assert export_store(path, tmp_path / "out.csv", suite="s") == 9
    assert export_store(path, tmp_path / "out.parquet", suite="s") == 9
    # CSV has no NULL, and pandas may read text back as its string dtype:
    # compare values, with every missing value (and "") as NaN.
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
    # CSV writes NULL and "" (a policy row's objective) alike.
    frame = frame.astype(object)
    return frame.where(frame.notna() & (frame != ""), math.nan)


def test_export_cli(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    _gap_store(path).close()
    runner = CliRunner()
    out = tmp_path / "all.csv"
    result = runner.invoke(main, ["export", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"9 rows -> {out}\n"
    frame = pd.read_csv(out)
    assert sorted(frame["task_id"]) == sorted(
        ["s0", "p0", "q0", "s1", "p1", "q1", "s2", "p2", "q2"]
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


def test_preemptive_policy_schedules_are_no_incumbents(tmp_path: Path) -> None:
    from optsched.io.schedules import schedule_to_dict
    from optsched.schedule import Placement, Schedule

    text = to_json(schedule_to_dict(Schedule({1: Placement(0, 5, (0,))}, "x")))
    with Store(tmp_path / "r.sqlite") as store:
        store.insert(policy("a", "fcfs", {"cmax": 5.0}, schedule=text))
        store.insert(policy("b", "pbi:order=literal", {"cmax": 5.0}, schedule=text))
        found = store.incumbents(["a", "b"])
    assert [incumbent.source for incumbent in found] == ["policy:fcfs"]
