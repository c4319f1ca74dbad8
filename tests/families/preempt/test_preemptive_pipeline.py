"""Preemptive policies and the preemptive optimum in the analysis pipeline.

The window used by hand (m = 2, Σ C_j): job 1 (2 processors, 10 s, r = 0),
job 2 (2 processors, 1 s, r = 1). Without preemption the best is job 2 at
[1, 2) and job 1 at [2, 12): Σ C_j = 2 + 12 = 14. With preemption, job 1
runs [0, 1), job 2 [1, 2), job 1 again [2, 11): Σ C_j = 2 + 11 = 13. A
preemptive schedule beats the non-preemptive optimum: counted as an upper
bound of it, it would flag a "defect" (a value below a proven lower bound).
"""

from __future__ import annotations

import math
from pathlib import Path

from optsched.bench.store import (
    TaskRow,
    gap_frame,
    references,
    relaxed_references,
)
from optsched.heuristics import simulate
from optsched.heuristics.preempt.policies import Preemptive, preempts
from optsched.heuristics.spec import parse_policy
from optsched.instance import Instance, Job, Machine
from optsched.models.common.solution import checked_candidate
from optsched.objective import Objective
from optsched.schedule import Piece, Placement, Schedule

WINDOW = ("s", "h", "w")


def row(kind: str, name: str, value: float, **extra: object) -> TaskRow:
    fields: dict = dict(
        task_id=f"{kind}-{name}", suite="s", trace="t", trace_sha256="h",
        window="w", window_index=0, kind=kind, name=name,
        objective="wct" if kind == "solver" else "", status="OK",
        values={"wct": value}, lower=None, lower_method=None, upper=None,
        upper_source=None, bounds={}, killed=0, lost_work=0.0,
        interrupted=False, instance_sha256=None, schedule_json=None, error=None,
    )  # fmt: skip
    fields.update(extra)
    return TaskRow(**fields)


def rows_of_the_window() -> list[TaskRow]:
    return [
        row("solver", "cpsat", 14.0, lower=14.0, lower_method="cpsat", upper=14.0,
            upper_source="cpsat", status="OPTIMAL"),
        row("solver", "preemptive", 13.0, lower=13.0, lower_method="configuration-lp",
            upper=13.0, upper_source="preemptive", status="OPTIMAL"),
        row("policy", "fcfs", 21.0),
        row("policy", "pbi", 13.0),
        row("policy", "psrs", 15.0),
    ]  # fmt: skip


def test_preemptive_values_never_bound_the_non_preemptive_optimum() -> None:
    plain = references(rows_of_the_window())[(*WINDOW, "wct")]
    # pbi's 13 and the preemptive optimum's schedule are no schedules of the
    # problem: UB stays 14, and no defect is raised. The preemptive optimum's
    # lower bound 13 is valid (it is below) but not the best.
    assert (plain.lower, plain.upper, plain.upper_source) == (14.0, 14.0, "cpsat")
    assert plain.defect is None and plain.optimal
    assert plain.bounds == {"cpsat": 14.0, "configuration-lp": 13.0}


def test_preemptive_reference_and_price_of_non_preemption() -> None:
    rows = rows_of_the_window()
    relaxed = relaxed_references(rows)[(*WINDOW, "wct", "preemption")]
    # LB of the relaxation only; every complete schedule is a candidate.
    assert (relaxed.lower, relaxed.upper) == (13.0, 13.0)
    assert relaxed.bounds == {"configuration-lp": 13.0}
    assert relaxed.candidates["cpsat"] == 14.0
    frame = gap_frame(rows).set_index("policy")
    assert frame.loc["pbi", "reference"] == "preemption"
    assert (frame.loc["pbi", "ratio_low"], frame.loc["pbi", "ratio_high"]) == (1, 1)
    assert frame.loc["psrs", "ratio_low"] == 15 / 13
    assert frame.loc["fcfs", "reference"] == ""
    assert frame.loc["fcfs", "ratio_low"] == 21 / 14
    # price of non-preemption: 14 / 13, proven, the same on every row
    assert set(frame["preemption_price_low"]) == {14 / 13}
    assert set(frame["preemption_price_high"]) == {14 / 13}
    assert not frame["comparable"].eq(False).any()


def test_without_a_preemptive_solver_the_ratio_has_no_upper_end() -> None:
    rows = [r for r in rows_of_the_window() if r.name != "preemptive"]
    frame = gap_frame(rows).set_index("policy")
    # the non-preemptive optimum 14 is no lower bound of the preemptive one
    assert frame.loc["pbi", "lower"] != frame.loc["pbi", "lower"]  # NaN
    assert frame.loc["pbi", "ratio_low"] == 1.0
    assert math.isinf(frame.loc["pbi", "ratio_high"])


def test_preemptive_policies_parse_and_simulate() -> None:
    policy = parse_policy("PBI: order=literal ")
    assert isinstance(policy, Preemptive) and policy.spec == "pbi:order=literal"
    assert parse_policy(policy.spec) == policy
    assert preempts("psrs") and preempts("pbi:order=smith") and not preempts("easy")
    instance = Instance(Machine(2), (Job(1, 0, 2, 10), Job(2, 1, 2, 1)))
    result = simulate(instance, "psrs")
    assert result.schedule.producer == "psrs"
    assert {j: p.work for j, p in result.schedule.placements.items()} == {1: 10, 2: 1}


def test_solvers_refuse_preempted_incumbents() -> None:
    instance = Instance(Machine(2), (Job(1, 0, 2, 10), Job(2, 1, 2, 1)))
    preempted = Schedule(
        {
            1: Placement.of_pieces([Piece(0, 1, (0, 1)), Piece(2, 11, (0, 1))]),
            2: Placement(1, 2, (0, 1)),
        }
    )
    candidate, reason = checked_candidate(
        instance, Objective.parse("wct"), "policy:pbi", preempted
    )
    assert candidate is None and reason == "policy:pbi: preempts jobs [1]"


def test_report_rates_preemptive_policies_against_the_preemptive_optimum(
    tmp_path: Path,
) -> None:
    from support.bench import policy, row, solver
    from support.pages import parse_page

    from optsched.bench.store import Store
    from optsched.report import build_report

    with Store(tmp_path / "r.sqlite") as store:
        store.insert(solver("c", 14.0, 14.0, objective="wct", status="OPTIMAL"))
        store.insert(
            row("p", kind="solver", name="preemptive", objective="wct",
                status="OPTIMAL", params='{"time_limit":5.0,"workers":1}',
                value=13.0, lower=13.0, lower_method="configuration-lp",
                upper=13.0, upper_source="preemptive")
        )  # fmt: skip
        store.insert(policy("a", "pbi", {"wct": 13.0}))
        store.insert(policy("b", "fcfs", {"wct": 21.0}))
    page = parse_page(build_report(tmp_path / "r.sqlite", tmp_path / "r.html"))
    (window,) = page.tables["windows-wct"]["rows"]
    # the window's reference is the non-preemptive one, whatever the row order
    assert window[2:7] == ["14", "cpsat", "14", "cpsat", "yes"]
    columns = page.tables["windows-wct"]["columns"]
    assert window[columns.index("pbi ratio")] == "1.0000"  # 13 / 13
    assert window[columns.index("fcfs ratio")] == "1.5000"  # 21 / 14
    (price,) = page.tables["price-of-non-preemption"]["rows"]
    assert price == ["wct", "1", "100.0 %", "1.0769", "1.0769"]  # 14 / 13


def test_gang_is_a_preemptive_policy() -> None:
    from optsched.check import check_schedule, migrations

    instance = Instance(
        Machine(4), (Job(1, 0, 4, 1000), Job(2, 10, 4, 50), Job(3, 20, 2, 30))
    )
    policy = parse_policy("gang: quantum=100 ,packing=buddy")
    assert isinstance(policy, Preemptive) and preempts(policy.spec)
    assert policy.spec == "gang:packing=buddy,quantum=100"
    result = simulate(instance, policy)
    assert check_schedule(instance, result.schedule) == []
    assert migrations(result.schedule) == []
    # job 1 is sliced: job 2 (the whole machine) runs in its own row
    assert len(result.schedule[1].pieces) >= 2
    assert result.schedule.producer == "gang:packing=buddy,quantum=100"


def test_engine_options_do_not_apply_to_preemptive_policies() -> None:
    import pytest

    instance = Instance(Machine(2), (Job(1, 0, 2, 10),))
    for options in ({"kill_at_estimate": True}, {"allocation_rule": "best-fit"}):
        with pytest.raises(ValueError, match="builds its own schedule"):
            simulate(instance, "psrs", **options)


def test_a_suite_with_the_preemptive_back_end(tmp_path: Path) -> None:
    """End to end: CP-SAT and the preemptive optimum on random windows; the
    preemptive policies never beat the preemptive lower bound, the others
    never beat the non-preemptive one, and the preemptive optimum is at most
    the non-preemptive one."""
    import json

    from optsched.bench import run_suite
    from optsched.bench.store import Store
    from optsched.io.native import write_native

    jobs = tuple(
        Job(k, 3 * (k % 4), 1 + (5 * k) % 4, 2 + (7 * k) % 9) for k in range(1, 13)
    )
    write_native(Instance(Machine(4), jobs, name="tiny"), tmp_path / "tiny.json")
    solvers = "".join(
        f'[[solvers]]\nbackend = "{b}"\ntime_limit = 10\nworkers = 1\n'
        for b in ("cpsat", "preemptive")
    )
    (tmp_path / "s.toml").write_text(
        f"policies = {json.dumps(['fcfs', 'easy', 'pbi', 'psrs', 'gang'])}\n"
        'objectives = ["cmax", "wct"]\n[suite]\nname = "pre"\n'
        '[[traces]]\npath = "tiny.json"\n'
        '[windows]\nkind = "consecutive"\njobs = 6\ncount = 2\n'
        'initial_state = "none"\n' + solvers
    )
    summary = run_suite(tmp_path / "s.toml", tmp_path / "r.sqlite")
    assert summary.failed == 0
    with Store(tmp_path / "r.sqlite", create=False) as store:
        frame = gap_frame(store.rows())
    assert frame["defect"].isna().all()
    assert (frame["ratio_low"] >= 1).all()
    preemptive = frame["reference"] == "preemption"
    assert set(frame.loc[preemptive, "policy"]) == {"pbi", "psrs", "gang"}
    assert (frame.loc[preemptive, "lower"] <= frame.loc[preemptive, "value"]).all()
    # OPT_p <= OPT: the price of non-preemption is at least 1
    assert (frame["preemption_price_low"] >= 1).all()
    assert (frame["preemption_upper"].notna()).all()


def test_gap_solves_the_preemptive_optimum_for_preemptive_policies() -> None:
    from click.testing import CliRunner

    from optsched.cli import main

    args = ["gap", "instances/kth_20.json", "--time-limit", "5"]
    result = CliRunner().invoke(main, [*args, "--policies", "easy,pbi"])
    assert result.exit_code == 0, result.output
    # the preemptive cmax optimum of this window is proven: 50,686 (< 50,693)
    pbi = [line for line in result.output.splitlines() if line.startswith("│ pbi")]
    assert "50,686 preemptive" in pbi[0]
    assert "[?," not in result.output
