"""``optsched coreserve simulate`` and the scenario files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import swf_job, write_swf
from support.scenarios import SCENARIO_HEAD, write_scenario

from optsched.cli import main
from optsched.coreserve.scenario import load_scenario
from optsched.errors import InputError


def _swf(path: Path, seed: int = 1) -> Path:
    """A synthetic SWF log of 4 weeks on 32 processors."""
    rng = random.Random(seed)
    lines = []
    t = 0
    for k in range(1, 700):
        t += rng.randrange(0, 3_000)
        estimate = rng.randrange(300, 20_000)
        run = rng.randrange(60, estimate + 1)
        lines.append(swf_job(k, t, run, rng.randrange(1, 33), estimate=estimate))
    return write_swf(path, lines, 32)


SCENARIO = (
    SCENARIO_HEAD
    + """\
cap = 32

[requests]
kind = "R1"
seed = 0
probability = 0.3

[prices]
scenario = "cheap-weekends"
"""
)


def _scenario(tmp_path: Path, text: str = SCENARIO) -> Path:
    _swf(tmp_path / "log.swf")
    return write_scenario(tmp_path, text)


def test_simulate_prints_the_measures_and_writes_json(tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    out = tmp_path / "m.json"
    args = [
        "--algorithm",
        "a5",
        "--k",
        "1",
        "--s",
        "0",
        "--optimum",
        "--json",
        str(out),
    ]
    result = CliRunner().invoke(main, ["coreserve", "simulate", str(path), *args])
    assert result.exit_code == 0, result.output
    assert "failure rate" in result.output and "BM2" in result.output
    data = json.loads(out.read_text())
    assert data["requests"] >= data["accepted"] > 0
    assert data["failure_rate"] == pytest.approx(
        1 - data["accepted"] / data["requests"]
    )
    assert data["cost_gap"] >= 0 and data["start_gap"] >= 0
    assert len(data["clusters"]) == 3


def test_scenario_defaults_and_overrides(tmp_path: Path) -> None:
    scenario = load_scenario(_scenario(tmp_path))
    assert scenario.service.algorithm == "a4"
    assert (scenario.service.minsize, scenario.service.windows) == (300, 20)
    changed = scenario.with_service(algorithm="a3", accuracy=1.0, k=None)
    assert changed.service.algorithm == "a3" and changed.service.accuracy == 1.0
    clusters, requests = changed.build()
    assert [c.name for c in clusters] == ["BM0", "BM1", "BM2"]
    assert requests and all(len(r.parts) == 2 for r in requests)
    assert all(r.submit <= r.earliest_start for r in requests)


@pytest.mark.parametrize(
    ("change", "message", "line"),
    [
        (("clusters = 3", "clusters = 3\nnodes = 2"), "unknown key 'nodes'", 7),
        (('kind = "R1"', 'kind = "R1"\nvariant = "6.9"'), "variant '6.9'", 11),
        (('scenario = "cheap-weekends"', 'scenario = "free"'), "scenario 'free'", 15),
        (("cap = 32", "cap = true"), "cap: expected a number", 7),
        (('trace = "log.swf"', 'trace = "none.swf"'), "trace 'none.swf' not found", 5),
        (("[prices]", "[price]"), "unknown table [price]", None),
        (("clusters = 3", "clusters = "), "invalid TOML", 6),
    ],
)
def test_bad_scenarios_give_one_line(
    tmp_path: Path, change: tuple[str, str], message: str, line: int | None
) -> None:
    path = _scenario(tmp_path, SCENARIO.replace(*change))
    with pytest.raises(InputError) as caught:
        load_scenario(path)
    assert message in str(caught.value)
    assert caught.value.line == line
    result = CliRunner().invoke(main, ["coreserve", "simulate", str(path)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_service_value_in_scenario(tmp_path: Path) -> None:
    path = _scenario(tmp_path, SCENARIO + '\n[service]\nalgorithm = "a9"\n')
    result = CliRunner().invoke(main, ["coreserve", "simulate", str(path)])
    assert result.exit_code == 2
    assert "algorithm 'a9'" in result.stderr
