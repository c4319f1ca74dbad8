"""``optsched coreserve optimum`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import paths

from optsched.cli import main
from optsched.coreserve.io import read_coreserve

DATA = paths.DATA / "coreserve"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["coreserve", "optimum", *args])
    return result.exit_code, result.stdout, result.stderr


def test_start_objective_to_file(tmp_path: Path) -> None:
    # Two clusters, day/night (see test_coreserve_optimum.py beside this file):
    # at 16:00 parts 4 on A (day 2) and 2 on B (day 3): 8 + 6 = 14.
    out = tmp_path / "r.json"
    code, stdout, stderr = run(str(DATA / "two_clusters.json"), "-o", str(out))
    assert code == 0, stderr
    record = json.loads(out.read_text())
    assert (record["start"], record["cost"], record["clusters"]) == (
        57600,
        14.0,
        ["A", "B"],
    )
    assert record["status"] == "optimal" and "pareto" not in record
    assert stdout == ""
    assert "start 57600, cost 14" in stderr and len(stderr.splitlines()) == 1


@pytest.mark.parametrize("method", ["enumerate", "cpsat"])
def test_cost_weighted_and_pareto_to_stdout(method: str) -> None:
    # Night from 18:00: 4 on B (1/2) and 2 on A (1): 2 + 2 = 4. Weighted
    # k = s = 1: W(16:00) = (14-4)/(16-4) = 5/6 > W(18:00) = 7200/9000 = 4/5.
    path = str(DATA / "two_clusters.json")
    code, stdout, _ = run(path, "--objective", "cost", "--method", method)
    assert code == 0
    record = json.loads(stdout)
    assert (record["start"], record["cost"], record["clusters"]) == (
        64800,
        4.0,
        ["B", "A"],
    )
    code, stdout, _ = run(
        path, "--objective", "weighted", "--k", "1", "--s", "1", "--pareto",
        "--method", method, "-o", "-",
    )  # fmt: skip
    assert code == 0
    record = json.loads(stdout)
    assert (record["start"], record["value"]) == (64800, 0.8)
    assert record["pareto"] == [
        {"start": 57600, "cost": 14.0, "clusters": ["A", "B"]},
        {"start": 64800, "cost": 4.0, "clusters": ["B", "A"]},
    ]


def test_prorata_rule() -> None:
    # 16:00 day: 0.5 h * (4 * 2 + 2 * 3) = 7.
    code, stdout, _ = run(str(DATA / "two_clusters.json"), "--cost-rule", "prorata")
    assert code == 0
    assert json.loads(stdout)["cost"] == 7.0
    code, _, stderr = run(
        str(DATA / "two_clusters.json"), "--cost-rule", "prorata", "--method", "cpsat"
    )
    assert code == 2 and "prorata" in stderr


@pytest.mark.parametrize("method", ["enumerate", "cpsat"])
def test_infeasible_is_null_with_reason(tmp_path: Path, method: str) -> None:
    # A has 1 CPU free, B has 2: the 4-CPU part fits nowhere.
    out = tmp_path / "r.json"
    code, _, stderr = run(
        str(DATA / "infeasible.json"), "-o", str(out), "--pareto", "--method", method
    )
    assert code == 0
    record = json.loads(out.read_text())
    assert (
        record["start"] is None
        and record["cost"] is None
        and record["clusters"] is None
    )
    assert (
        record["reason"]
        == "no start in the window has enough free CPUs on distinct clusters"
    )
    assert record["pareto"] == []
    assert "no placement" in stderr


def _problem(**changes: Any) -> dict[str, Any]:
    data = json.loads((DATA / "two_clusters.json").read_text())
    for key, value in changes.items():
        target = data
        *path, last = key.split(".")
        for part in path:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is _DELETE:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return data


_DELETE = object()
_WEEK_BUT_SUNDAY_NIGHT = [[d, 0, 24, 1] for d in range(6)] + [[6, 0, 23, 1]]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('{"clusters": [\n  {"name": "a",, }]}', 2, "invalid JSON"),
        (_problem(**{"request": _DELETE}), 1, "missing key 'request'"),
        (_problem(**{"request.duration": "1h"}), None, "duration: expected an integer"),
        (_problem(**{"request.duration": -5}), None, "duration -5 must be at least 1"),
        (_problem(**{"clusters.1.name": "A"}), None, "repeats clusters[0]"),
        (_problem(**{"clusters.0.busy": [[0, 10, 5], [5, 20, 5]]}), None,
         "more than the cluster's 8"),
        (_problem(**{"clusters.0.busy": [[0, 10]]}), None, "[start, end, processors]"),
        (_problem(**{"clusters.0.prices": [[0, 0, 24, 1], [0, 12, 13, 2]]}), None,
         "prices overlap on Monday at 12:00"),
        (_problem(**{"clusters.0.prices": _WEEK_BUT_SUNDAY_NIGHT}), None,
         "do not cover Sunday at 23:00"),
        (_problem(**{"clusters.0.prices.0": [7, 0, 8, 1]}), None, "weekday 7"),
        (_problem(**{"clusters.0.processors": True}), None,
         "processors: expected an integer"),
        (_problem(**{"clusters.0.colour": "red"}), None, "unknown key 'colour'"),
        (_problem(**{"request.parts": [2, 0]}), None, "parts[1]"),
    ],
)  # fmt: skip
def test_malformed_file_one_line_exit_2(
    tmp_path: Path, text: str | dict[str, Any], line: int | None, words: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text if isinstance(text, str) else json.dumps(text, indent=2))
    out = tmp_path / "r.json"
    code, stdout, stderr = run(str(path), "-o", str(out))
    assert code == 2
    assert len(stderr.strip().splitlines()) == 1 and stdout == ""
    assert words in stderr
    assert f"{path}:" in stderr
    if line is not None:
        assert f"{path}:{line}:" in stderr
    assert not out.exists()


def test_error_line_points_at_the_bad_value(tmp_path: Path) -> None:
    data = _problem(**{"clusters.1.busy": [[0, 10, 1], [0, 10, 99]]})
    path = tmp_path / "bad.json"
    text = json.dumps(data, indent=2)
    path.write_text(text)
    code, _, stderr = run(str(path))
    assert code == 2
    line = int(stderr.split(f"{path}:")[1].split(":")[0])
    assert '"busy"' in text.splitlines()[line - 1]
    assert "busy[1]: 99 processors exceed" in stderr


def test_busy_and_prices_may_be_omitted() -> None:
    request, clusters = read_coreserve(DATA / "infeasible.json")
    assert clusters[1].busy == () and clusters[1].tariff.free
    assert request.parts == (4, 2)
