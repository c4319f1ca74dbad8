"""Every CSV optsched writes opens with ``pandas.read_csv(path)``, no options.

Numbers come back as numbers and ids as integers; provenance lives in a
sidecar ``X.csv.json`` (never a ``#`` first line); an export spreads the
store's JSON columns into one column per objective, metric and bound.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result
from support.paths import DATA, REPO
from support.refusals import refusal

from optsched.bench import Store, run_suite
from optsched.check import check_schedule
from optsched.cli import main
from optsched.io import read
from optsched.io.schedules import (
    provenance_path,
    provenance_text,
    read_schedule,
    write_schedule,
)
from optsched.metrics import summarize
from optsched.objective import Objective
from optsched.schedule import Placement, Schedule

KTH = REPO / "instances" / "kth_20.json"
SUITES = DATA / "suites"
SCHEDULE_DTYPES = {
    "job_id": "int64",
    "start": "int64",
    "end": "int64",
    "size": "int64",
}


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _assert_plain_schedule_csv(path: Path, producer: str) -> pd.DataFrame:
    """Read by pandas as it is; the producer is in the sidecar only."""
    frame = pd.read_csv(path)
    assert list(frame.columns) == ["job_id", "start", "end", "size", "processors"]
    assert {c: str(frame[c].dtype) for c in SCHEDULE_DTYPES} == SCHEDULE_DTYPES
    assert not path.read_text().startswith("#")
    sidecar = json.loads(provenance_path(path).read_text())
    assert sidecar["format"] == "optsched-provenance"
    assert sidecar["file"] == path.name
    assert sidecar["producer"] == producer
    assert read_schedule(path).producer == producer
    return frame


def test_simulate_csv_reads_in_pandas_with_producer_in_sidecar(
    tmp_path: Path,
) -> None:
    out = tmp_path / "easy.csv"
    result = _run("simulate", str(KTH), "--policy", "easy", "-o", str(out))
    assert result.exit_code == 0, result.output
    frame = _assert_plain_schedule_csv(out, "easy")
    instance = read(KTH)
    assert sorted(frame["job_id"]) == sorted(job.id for job in instance.jobs)
    assert int(frame["end"].max()) == summarize(instance, read_schedule(out)).makespan
    assert check_schedule(instance, read_schedule(out)) == []
    assert provenance_path(out) == tmp_path / "easy.csv.json"


def test_batsim_and_layout_csvs_read_in_pandas(tmp_path: Path) -> None:
    jobs = tmp_path / "b.csv"
    result = _run("simulate", str(KTH), "--schedule-format", "batsim", "-o", str(jobs))
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(jobs)
    for column in ("job_id", "submission_time", "starting_time", "finish_time"):
        assert frame[column].dtype == "int64", column
    assert frame["stretch"].dtype == "float64"
    assert len(frame) == len(read(KTH).jobs)
    layout, instance = tmp_path / "layout.csv", tmp_path / "p.json"
    result = _run(
        "generate", "perfect-packing", "--width", "8", "--height", "10",
        "--items", "5", "-o", str(instance), "--layout", str(layout),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    frame = _assert_plain_schedule_csv(layout, read_schedule(layout).producer)
    assert len(frame) == 5 and int(frame["end"].max()) == 10


def test_bound_schedule_out_csv_reads_in_pandas(tmp_path: Path) -> None:
    out = tmp_path / "best.csv"
    result = _run(
        "bound", str(KTH), "--backend", "bounds-only", "--schedule-out", str(out)
    )
    assert result.exit_code == 0, result.output
    frame = _assert_plain_schedule_csv(out, read_schedule(out).producer)
    assert read_schedule(out).producer  # the heuristic that made it
    assert len(frame) == len(read(KTH).jobs)
    assert check_schedule(read(KTH), read_schedule(out)) == []


def test_compare_csv_reads_in_pandas(tmp_path: Path) -> None:
    out = tmp_path / "compare.csv"
    result = _run("compare", str(KTH), "--policies", "fcfs,easy", "-o", str(out))
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert list(frame["policy"]) == ["fcfs", "easy"]
    for column in ("makespan", "max_wait", "killed"):
        assert frame[column].dtype == "int64", column
    for column in ("weighted_completion", "mean_wait", "mean_bounded_slowdown",
                   "utilisation"):  # fmt: skip
        assert frame[column].dtype == "float64", column
    easy = Objective.parse("cmax").value(read(KTH), read_schedule_of(tmp_path, "easy"))
    assert frame.loc[1, "makespan"] == easy == 51488


def read_schedule_of(tmp_path: Path, policy: str) -> Schedule:
    out = tmp_path / f"{policy}.json"
    assert _run("simulate", str(KTH), "-p", policy, "-o", str(out)).exit_code == 0
    return read_schedule(out)


def test_gap_csv_is_utf8_and_reads_in_pandas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # UTF-8 whatever the locale (pandas reads UTF-8): the file is opened
    # with an explicit encoding, not the locale's.
    import optsched.io.atomic as atomic

    opened: list[object] = []
    real = atomic.atomic_write

    def recording(path: Path, mode: str = "w", **kwargs: object) -> object:
        opened.append(kwargs.get("encoding"))
        return real(path, mode, **kwargs)

    monkeypatch.setattr(atomic, "atomic_write", recording)
    named = tmp_path / "fenêtre_é.json"
    shutil.copy(KTH, named)
    out = tmp_path / "gap.csv"
    result = _run(
        "gap", str(named), "--policies", "fcfs,easy", "--objective", "cmax",
        "--backend", "bounds-only", "--no-progress", "-o", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert list(frame["policy"]) == ["fcfs", "easy"]
    assert set(frame["trace"]) == {str(named)}
    assert frame["window_index"].dtype == "int64"
    assert frame["killed"].dtype == "int64"
    for column in ("value", "lower", "upper", "ratio_low", "ratio_high"):
        assert frame[column].dtype == "float64", column
    assert frame["optimal"].dtype == bool and frame["comparable"].dtype == bool
    assert list(frame["value"]) == [51488.0, 51488.0]
    assert opened == ["utf-8"]
    assert pd.read_csv(out, encoding="utf-8").equals(frame)


def test_old_comment_line_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text("# producer: easy\njob_id,start,end,size,processors\n1,0,5,1,0\n")
    schedule = read_schedule(path)
    assert schedule.producer == "easy"
    assert dict(schedule.placements) == {1: Placement(0, 5, (0,))}


def _one_job() -> Schedule:
    return Schedule({1: Placement(0, 5, (0,))}, "hand")


def test_sidecar_of_an_edited_csv_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    write_schedule(_one_job(), path)
    assert read_schedule(path).producer == "hand"
    # Edited since: the recorded producer no longer made it.
    path.write_text(path.read_text().replace("0,5", "0,6"))
    assert read_schedule(path).producer == ""
    # Someone else's JSON of that name is not ours: ignored too.
    provenance_path(path).write_text('{"producer": "x"}')
    assert read_schedule(path).producer == ""


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{", "provenance file: not JSON"),
        (None, "provenance file: producer: expected a string"),
        ("x" * (1 << 20 | 1), "provenance file: larger than 1 MiB"),
    ],
)
def test_bad_sidecar_is_one_line_error(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "s.csv"
    write_schedule(_one_job(), path)
    sidecar = provenance_path(path)
    if content is None:
        data = json.loads(provenance_text(path, path.read_text(), "x"))
        content = json.dumps(data | {"producer": 7})
    sidecar.write_text(content)
    assert refusal(read_schedule, path) == f"{sidecar}: {reason}"
    result = _run("check", str(KTH), str(path))
    assert result.exit_code == 2
    assert result.stderr == f"optsched: error: {sidecar}: {reason}\n"


def test_failed_write_leaves_neither_file(tmp_path: Path) -> None:
    # The CSV cannot replace a folder: its sidecar, renamed first, goes too.
    target = tmp_path / "d.csv"
    target.mkdir()
    with pytest.raises(OSError):
        write_schedule(_one_job(), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]
    # The sidecar cannot be written: the CSV is not written either.
    out = tmp_path / "s.csv"
    provenance_path(out).mkdir()
    result = _run("simulate", str(KTH), "-o", str(out))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"optsched: error: {provenance_path(out)}: ")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "s.csv.json"]


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny")
    for name in ("tiny.toml", "tiny.swf"):
        shutil.copy(SUITES / name, folder / name)
    store = folder / "r.sqlite"
    run_suite(folder / "tiny.toml", store)
    return store


def _snake(key: str) -> str:
    """The exported column name of a key, written out: ``:`` and ``-`` are
    ``_`` (the keys here hold no other punctuation)."""
    return key.replace(":", "_").replace("-", "_")


def test_export_spreads_values_and_metrics_into_columns(
    tiny_store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rows.csv"
    result = _run("export", str(tiny_store), "-o", str(out))
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    for gone in ("values", "metrics", "bounds", "params", "versions"):
        assert gone not in frame.columns
    for column in ("value_cmax", "value_wct_one", "metric_mean_wait",
                   "metric_utilisation", "bound_area", "param_time_limit"):  # fmt: skip
        assert frame[column].dtype == "float64", column
    # One naming scheme: snake_case, nothing SQL, R or pandas would quote.
    assert all(re.fullmatch(r"[a-z0-9_]+", column) for column in frame.columns)
    assert frame["window_index"].dtype == "int64"
    # No JSON in any cell but the schedule's.
    cells = frame.drop(columns=["schedule"]).map(str)
    assert not cells.map(lambda cell: cell.startswith(("{", "["))).any().any()
    with Store(tiny_store, create=False) as store:
        stored = store.rows()
    assert len(frame) == len(stored) == 12
    by_id = frame.set_index("task_id")
    for row in stored.to_dict("records"):
        exported = by_id.loc[row["task_id"]]
        if row["kind"] == "policy":
            values = json.loads(row["values"])
            assert values == {"cmax": exported["value_cmax"],
                              "wct:one": exported["value_wct_one"]}  # fmt: skip
            assert exported["param_objectives"] == "cmax,wct:one"
        else:
            assert exported[f"value_{_snake(row['objective'])}"] == row["value"]
            other = "wct_one" if row["objective"] == "cmax" else "cmax"
            assert math.isnan(exported[f"value_{other}"])
            for method, bound in json.loads(row["bounds"]).items():
                assert exported[f"bound_{_snake(method)}"] == bound
        for name, value in json.loads(row["metrics"]).items():
            assert exported[f"metric_{name}"] == pytest.approx(value, rel=1e-12)


def test_parquet_export_has_the_same_columns(tiny_store: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    csv_path, parquet = tmp_path / "rows.csv", tmp_path / "rows.parquet"
    assert _run("export", str(tiny_store), "-o", str(csv_path)).exit_code == 0
    assert _run("export", str(tiny_store), "-o", str(parquet)).exit_code == 0
    from_csv, from_parquet = pd.read_csv(csv_path), pd.read_parquet(parquet)
    assert list(from_parquet.columns) == list(from_csv.columns)
    assert from_parquet["value_cmax"].dtype == "float64"
    pd.testing.assert_series_equal(from_parquet["value_cmax"], from_csv["value_cmax"])
