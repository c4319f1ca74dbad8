"""Moldable and malleable windows through the analysis pipeline.

Every policy's schedule is checked against the moldable instance, the
reference is the moldable optimum (CP-SAT) with the moldable bounds, and
each ratio interval is recomputed here from the values."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import REPO

from optsched.bench.analysis import analyse_instance
from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import Instance, Job, Machine, Mode
from optsched.metrics import makespan, weighted_completion
from optsched.models.rigid.cpsat import deterministic
from optsched.moldable.speedup import parse_model

ROOT = REPO
KTH_20 = ROOT / "instances" / "kth_20.json"

POLICIES = ["fcfs", "easy", "adaptive", "easy-scaling"]


def small_moldable(malleable: bool = False) -> Instance:
    """Six jobs on 8 processors, linear speed-up up to 8 (hand-sized)."""
    requests = [(1, 0, 4, 10), (2, 0, 2, 12), (3, 1, 8, 3), (4, 2, 1, 20),
                (5, 3, 4, 6), (6, 5, 2, 8)]  # fmt: skip
    rigid = Instance(Machine(8), tuple(Job(*r) for r in requests))
    return parse_model("linear:max=8").apply(rigid, malleable=malleable)


@pytest.mark.parametrize("malleable", [False, True])
def test_every_policy_is_checked_and_rated_against_the_moldable_optimum(
    malleable: bool,
) -> None:
    instance = small_moldable(malleable)
    policies = POLICIES + (["deq"] if malleable else [])
    found = analyse_instance(instance, policies, ["cmax", "wct:one"], workers=1)
    for policy in policies:
        schedule = found.schedules[policy]
        assert check_schedule(instance, schedule) == [], policy
        for objective, value in (
            ("cmax", makespan(instance, schedule)),
            ("wct:one", weighted_completion(instance, schedule)),
        ):
            row = found.row(policy, objective)
            reference = found.references[objective]
            assert row.value == value  # recomputed from the schedule
            assert reference.lower is not None and reference.upper is not None
            assert reference.lower <= value  # no schedule beats a lower bound
            assert (row.ratio_low, row.ratio_high) == (
                value / reference.upper,
                value / reference.lower,
            )
    cmax = found.references["cmax"]
    # Works 40, 24, 24, 20, 24, 16 = 148 on 8 processors: at least 19 s
    # (ceil 18.5), reached only if the optimum is proven there.
    assert cmax.lower >= 19
    if not malleable:
        assert cmax.optimal  # the moldable model closes this window
    rigid = analyse_instance(instance.rigid(), ["fcfs"], ["cmax"], workers=1)
    # Choosing modes never hurts: the moldable optimum is at most the rigid one.
    assert cmax.upper <= rigid.references["cmax"].upper


def test_gap_command_on_a_moldable_trace_window() -> None:
    result = CliRunner().invoke(
        main,
        ["gap", str(KTH_20), "--moldable", "amdahl:f=0.05", "--policies",
         "easy,easy-scaling", "--objective", "cmax", "--time-limit", "5",
         "--workers", "1", "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "easy-scaling" in result.output


def _bound_rows(*options: str) -> dict[str, int]:
    result = CliRunner().invoke(
        main, ["bound", str(KTH_20), "--time-limit", "1", "--workers", "1", *options]
    )
    assert result.exit_code == 0, result.output
    rows = {}
    for line in result.output.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 3 and cells[0] in ("release", "area"):
            rows[cells[0]] = int(cells[1].replace(",", ""))
        if line.startswith("best "):
            rows[line.split("  ")[0]] = int(line.split()[3].replace(",", ""))
    return rows


def test_bound_command_uses_the_moldable_bounds() -> None:
    # The rigid optimum must be proven: CP-SAT in deterministic mode (one
    # unit of its work count) proves it whatever the machine's load, where a
    # one-second wall-clock limit did not always do so on a loaded machine
    # (the later --time-limit wins; it only leaves the search its time).
    with deterministic(1.0):
        rigid = _bound_rows("--time-limit", "60")
    moldable = _bound_rows("--moldable", "linear:max=100")
    # Linear speed-up keeps each job's least work (its request's, rounded
    # up elsewhere), so the area bound is the same; the release bound falls
    # (each job may run on up to 100 processors), and so does the optimum:
    # the rigid window is proven at 50,693, the moldable one ends by 41,245.
    assert moldable["area"] == rigid["area"] == 39_364
    assert moldable["release"] < rigid["release"] == 22_361
    assert rigid["best lower bound"] == rigid["best upper bound"] == 50_693
    assert moldable["best lower bound"] <= moldable["best upper bound"] < 50_693


def test_mode_list_with_one_mode_is_a_rigid_job_in_disguise() -> None:
    # A moldable job with one mode: the moldable optimum equals the rigid one.
    jobs = (Job(1, 0, 2, 5, modes=(Mode(2, 5),)), Job(2, 0, 2, 3, modes=(Mode(2, 3),)))
    instance = Instance(Machine(2), jobs)
    found = analyse_instance(instance, ["fcfs"], ["wct:one"], workers=1)
    assert found.references["wct:one"].upper == 3 + 8  # shortest first
    assert found.references["wct:one"].optimal


def test_info_counts_moldable_jobs_and_bounds_their_cheapest_modes() -> None:
    rigid = CliRunner().invoke(main, ["info", str(KTH_20)])
    moldable = CliRunner().invoke(
        main, ["info", str(KTH_20), "--moldable", "linear:max=100", "--malleable"]
    )
    assert rigid.exit_code == moldable.exit_code == 0
    assert "moldable jobs" not in rigid.output
    assert (
        "│ moldable jobs" in moldable.output and "20 (20 malleable)" in moldable.output
    )
    # The same least work (linear speed-up), so the same area bound 39,364;
    # the makespan bound is the area bound in both (the longest job, 19,493 s
    # on its request, is shorter than it anyway).
    for output in (rigid.output, moldable.output):
        assert "39,364 s after the first release" in output


def test_generate_moldable_writes_the_thesis_batches(tmp_path: Path) -> None:
    from optsched.generate.moldable import figure_5_10, table_6_5
    from optsched.io.native import read_native

    out = tmp_path / "t65.json"
    result = CliRunner().invoke(
        main, ["generate", "moldable", "--seed", "3", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert read_native(out).instance.jobs == table_6_5(3).jobs
    out = tmp_path / "f510.json"
    options = ["--jobs", "12", "--share", "0.25", "--seed", "5", "-o", str(out)]
    assert CliRunner().invoke(main, ["generate", "moldable", *options]).exit_code == 0
    jobs = read_native(out).instance.jobs
    assert jobs == figure_5_10(0.25, 5).jobs
    assert sum(1 for j in jobs if j.modes) == 3
