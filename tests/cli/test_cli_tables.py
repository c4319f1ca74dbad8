"""Tables that fit 80 columns without cutting a number; --wide; --json."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.table import Table
from support.paths import INSTANCES

from optsched.cli import main
from optsched.console import console, print_table

NUMBERS = ("[1.0000, 1.0294]", "[1.1000, 1.2294]", "[1.3000, 1.4294]", "60%")


def _table() -> Table:
    table = Table(title="ratios")
    for name in ("policy", "objective", "windows", "not comparable", "proven",
                 "mean", "median", "max", "worst window"):  # fmt: skip
        left = name in ("policy", "objective", "worst window")
        table.add_column(name, justify="left" if left else "right")
    for policy in ("fcfs", "conservative"):
        table.add_row(policy, "wct:one", "10", "0", NUMBERS[3], *NUMBERS[:3],
                      "first=5090,jobs=100,state=simulated:easy")  # fmt: skip
    return table


def _printed(width: int, **options: object) -> str:
    out = io.StringIO()
    print_table(console(file=out, width=width), _table(), **options)  # type: ignore[arg-type]
    return out.getvalue()


OPTIONAL = ("median", "not comparable", "windows", "worst window")


@pytest.mark.parametrize("width", [80, 100, 130])
def test_a_table_fits_its_width_and_cuts_no_number(width: int) -> None:
    text = _printed(width, optional=OPTIONAL)
    assert max(map(len, text.splitlines())) <= width
    assert "…" not in text
    kept = [n for n in NUMBERS if n in text]
    assert kept and "[1.0000, 1.0294]" in kept  # the mean is never left out
    for line in text.splitlines():
        if "fcfs" in line or "conservative" in line:
            assert line.count("[") == line.count("]")  # no interval is split


def test_left_out_columns_are_named_in_order() -> None:
    text = _printed(80, optional=OPTIONAL)
    flat = " ".join(text.split())
    assert "left out to fit: median, not comparable, windows, worst window" in flat
    assert "┃ policy" in text and "max ┃" in text
    # 130 columns leave room for all but the median.
    assert "left out to fit: median (--wide shows them)" in _printed(
        130, optional=OPTIONAL
    )


def test_wide_prints_every_column_at_its_width() -> None:
    text = _printed(80, optional=OPTIONAL, wide=True)
    assert "left out" not in text
    assert text.count("first=5090,jobs=100,state=simulated:easy") == 2
    assert all(n in text for n in NUMBERS)


def test_numbers_wider_than_the_console_are_printed_wider_not_cut() -> None:
    text = _printed(40)
    assert max(map(len, text.splitlines())) > 40
    assert all(text.count(n) == 2 for n in NUMBERS[:3])


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_compare_fits_80_columns_and_json_matches_csv(tmp_path: Path) -> None:
    kth = INSTANCES / "kth_20.json"
    table = _run("compare", kth)
    assert table.exit_code == 0
    assert max(map(len, table.stdout.splitlines())) <= 80
    assert "…" not in table.stdout
    out = tmp_path / "rows.csv"
    as_json = _run("compare", kth, "--json", "-o", out)
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)  # nothing else on stdout
    assert as_json.stderr == f"table written to {out}\n"
    rows = list(csv.DictReader(out.open()))
    assert [r["policy"] for r in data["rows"]] == [r["policy"] for r in rows]
    assert list(data["rows"][0]) == list(rows[0])  # one naming scheme
    for got, written in zip(data["rows"], rows, strict=True):
        assert got["makespan"] == int(written["makespan"])
        assert got["mean_bounded_slowdown"] == float(written["mean_bounded_slowdown"])
        assert str(got["makespan"]) in table.stdout


def test_simulate_json_names_the_export_metrics(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    result = _run(
        "simulate", INSTANCES / "kth_20.json", "-p", "fcfs", "--json", "-o", out
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["policy"] == "fcfs"
    assert data["metrics"]["jobs"] == 20
    assert {"makespan", "mean_wait", "mean_bounded_slowdown", "utilisation"} <= set(
        data["metrics"]
    )
    assert data["simulation"]["killed"] == 0
    assert result.stderr.startswith(f"schedule written to {out}")
    table = _run("simulate", INSTANCES / "kth_20.json", "-p", "fcfs")
    assert re.search(rf"│ +{data['metrics']['makespan']} │", table.stdout)


def test_info_fits_80_columns() -> None:
    result = _run("info", INSTANCES / "kth_20_recorded.json")
    assert result.exit_code == 0
    assert max(map(len, result.stdout.splitlines())) <= 80
    assert "…" not in result.stdout
