"""``worst-case`` on contiguous machines (``--allocation contiguous``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from optsched.check import check_schedule
from optsched.cli import main
from optsched.io import read
from optsched.worstcase.measure import Space, optimum_key, to_instance
from optsched.worstcase.search import RatioEvaluator, search_worst_case
from optsched.worstcase.theory import bound_label
from optsched.worstcase.versus import find_counterexample


def test_space_and_instances_carry_the_allocation() -> None:
    assert Space(3, 4).allocation == "any"
    with pytest.raises(ValueError, match="allocation 'strip'"):
        Space(3, 4, allocation="strip")
    genome = ((0, 2, 3, 3), (0, 1, 2, 2))
    flat = to_instance(genome, 3)
    strip = to_instance(genome, 3, allocation="contiguous")
    assert flat.machine.allocation == "any"
    assert strip.machine.allocation == "contiguous"
    # The optimum cache never mixes the two machines.
    assert optimum_key(flat, "cmax") != optimum_key(strip, "cmax")


def test_evaluator_uses_contiguous_instances() -> None:
    space = Space(4, 3, allocation="contiguous")
    evaluate = RatioEvaluator("firstfit", "cmax", space)
    assert evaluate(((0, 2, 3, 3), (0, 2, 3, 3), (0, 4, 1, 1))) >= 1.0
    (key,) = evaluate._optima  # the cache key names the machine
    assert "contiguous" in key


def test_search_on_contiguous_machines() -> None:
    space = Space(4, 4, max_runtime=5, allocation="contiguous")
    result = search_worst_case("firstfit", "cmax", space, seed=1, max_evaluations=60)
    instance = result.instance
    assert instance.machine.allocation == "contiguous"
    assert "-m4c-" in instance.name
    assert "contiguous" in result.summary()
    assert result.ratio >= 1.0
    for schedule in (result.policy_schedule, result.optimum_schedule):
        assert check_schedule(instance, schedule) == []
        assert all(p.processors is not None for p in schedule.placements.values())
    # Garey and Graham's 2 - 1/m is proved for any processors only.
    assert bound_label("firstfit", "cmax", online=False, processors=4) != "none known"
    assert (
        bound_label(
            "firstfit", "cmax", online=False, processors=4, allocation="contiguous"
        )
        == "none known"
    )


def test_counterexample_search_keeps_the_allocation() -> None:
    space = Space(3, 4, allocation="contiguous")
    found = find_counterexample(
        "fcfs", "firstfit", "cmax", space, seed=0, examples=40, evaluations=200
    )
    assert found is not None
    assert found.instance.machine.allocation == "contiguous"
    assert found.policy_value > found.other_value


def test_cli_allocation_contiguous(tmp_path: Path) -> None:
    out = tmp_path / "worst"
    result = CliRunner().invoke(
        main,
        [
            "worst-case", "--policy", "firstfit", "--processors", "3", "--jobs",
            "3", "--allocation", "contiguous", "--evaluations", "40", "-o", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "contiguous" in result.output
    (summary_path,) = out.glob("*.summary.json")
    summary = json.loads(summary_path.read_text())
    assert summary["allocation"] == "contiguous"
    assert summary["theory"] == "none known"
    (instance_path,) = (p for p in out.glob("*.json") if ".summary" not in p.name)
    assert read(instance_path).machine.allocation == "contiguous"
