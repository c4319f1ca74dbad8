"""Gap analysis end to end: hand-checked windows, brute-force cross-checks,
window rules and the ``gap`` command."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support.builders import draw_jobs, slow_settings

from optsched.analysis.gap import evaluate_policy, rows_frame
from optsched.bench.analysis import analyse_instance
from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import Instance, Job, Machine
from optsched.io.native import write_native
from optsched.io.swf import read_swf
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import Objective
from optsched.windows.selection import WindowRule, select_windows


def _fcfs_trap() -> Instance:
    # m = 2, all released at 0, submit order = id order.
    # Strict FCFS: job 1 (q=1, p=4) at [0,4); job 2 (q=2, p=1) waits for it,
    # [4,5); job 3 (q=1, p=4) [5,9) -> makespan 9.
    # Optimum: job 2 first [0,1), then jobs 1 and 3 side by side [1,5) -> 5.
    jobs = (
        Job(1, 0, 1, 4),
        Job(2, 0, 2, 1),
        Job(3, 0, 1, 4),
    )
    return Instance(Machine(2), jobs, name="fcfs-trap")


def test_hand_checked_window() -> None:
    instance = _fcfs_trap()
    found = analyse_instance(
        instance, ["fcfs", "firstfit"], ["cmax"], time_limit=10, workers=1
    )
    fcfs = found.schedules["fcfs"]
    assert {j: (p.start, p.end) for j, p in fcfs.placements.items()} == {
        1: (0, 4),
        2: (4, 5),
        3: (5, 9),
    }
    # First-fit starts jobs 1 and 3 at 0 (job 2 does not fit), job 2 at 4.
    assert found.row("firstfit", "cmax").value == 5.0
    reference = found.references["cmax"]
    assert reference.optimal and reference.upper == 5.0
    fcfs_row = found.row("fcfs", "cmax")
    assert (fcfs_row.ratio_low, fcfs_row.ratio_high) == (1.8, 1.8)
    assert found.row("firstfit", "cmax").ratio_low == 1.0


def test_flow_time_objective_uses_releases() -> None:
    instance = Instance(Machine(1), (Job(1, 0, 1, 3), Job(2, 1, 1, 1)))
    outcome = evaluate_policy(instance, "fcfs", ["wct:one:relative"])
    # FCFS: job 1 [0,3), job 2 [3,4): flows 3 + 3 = 6.
    assert outcome.values == {"wct:one:relative": 6.0}
    found = analyse_instance(
        instance, ["fcfs"], ["wct:one:relative"], time_limit=5, workers=1
    )
    # Waiting for job 2 is no better: job 2 [1,2), job 1 [2,5) gives flows
    # 1 + 5 = 6 too, so the optimum is 6.
    assert found.references["wct:one:relative"].upper == 6.0
    assert found.references["wct:one:relative"].optimal


@st.composite
def tiny_instances(draw: st.DrawFn) -> Instance:
    m = draw(st.integers(1, 4))
    jobs = draw_jobs(
        draw,
        m,
        (1, 5),
        release=5,
        runtime=6,
        estimate=lambda runtime: st.integers(runtime, runtime + 3),
    )
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    return Instance(Machine(m, allocation), tuple(jobs))


@slow_settings(25)
@given(tiny_instances(), st.sampled_from(["cmax", "wct", "wct:size"]))
def test_ratio_interval_brackets_the_brute_force_optimum(
    instance: Instance, objective_text: str
) -> None:
    objective = Objective.parse(objective_text)
    policies = ["fcfs", "easy", "conservative", "firstfit"]
    found = analyse_instance(
        instance, policies, [objective.label], time_limit=5, workers=1
    )
    exact = solve_exact(instance, objective)
    assert exact.schedule is not None
    assert check_schedule(instance, exact.schedule) == []
    optimum = objective.value(instance, exact.schedule)
    reference = found.references[objective.label]
    assert reference.lower is not None and reference.upper is not None
    assert reference.lower <= optimum + 1e-6
    assert reference.upper >= optimum - 1e-6
    for row in found.rows:
        schedule = found.schedules[row.policy]
        assert check_schedule(instance, schedule) == []
        if schedule.killed:
            # A policy that killed jobs did less work: never a ratio.
            assert not row.comparable and math.isnan(row.ratio_low)
            continue
        assert row.ratio_low >= 1.0 - 1e-9
        if optimum > 0:
            true_ratio = row.value / optimum
            assert row.ratio_low - 1e-9 <= true_ratio <= row.ratio_high + 1e-9


SWF_LINES = [
    # id submit wait run procs cpu mem req_procs req_time req_mem status
    #    user group exe queue partition prev think
    "1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1",
    "2 10 0 50 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1",
    "3 20 90 30 4 -1 -1 4 40 -1 1 1 1 -1 -1 -1 -1 -1",
    "4 30 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
    "5 40 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1",
    "6 200 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1",
]


@pytest.fixture
def small_trace(tmp_path: Path) -> Path:
    path = tmp_path / "small.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(SWF_LINES) + "\n")
    return path


WINDOWS = [
    # Two jobs a window, each shifted by its first job's submit time.
    pytest.param(
        WindowRule("consecutive", jobs=2),
        {
            "first=0,jobs=2,state=none": [(1, 0), (2, 10)],
            "first=2,jobs=2,state=none": [(3, 0), (4, 10)],
            "first=4,jobs=2,state=none": [(5, 0), (6, 160)],
        },
        id="consecutive",
    ),
    # submits 0, 10, 20 | 30, 40 | (50-200 empty) | 200: the empty time
    # windows are skipped; each window is shifted by its start.
    pytest.param(
        WindowRule("time", step=25),
        {
            "start=0,end=25,state=none": [(1, 0), (2, 10), (3, 20)],
            "start=25,end=50,state=none": [(4, 5), (5, 15)],
            "start=200,end=201,state=none": [(6, 0)],
        },
        id="time",
    ),
]
"""A window rule on the small trace, then the key of each of its windows
and the (id, release) of the window's jobs."""


@pytest.mark.parametrize(("rule", "windows"), WINDOWS)
def test_windows_of_a_rule(
    small_trace: Path, rule: WindowRule, windows: dict[str, list[tuple[int, int]]]
) -> None:
    trace = read_swf(small_trace)
    specs = select_windows(trace, rule)
    assert [s.key for s in specs] == list(windows)
    for spec, jobs in zip(specs, windows.values(), strict=True):
        assert [(j.id, j.release) for j in spec.cut(trace).jobs] == jobs


def test_random_windows_and_too_many_consecutive(small_trace: Path) -> None:
    trace = read_swf(small_trace)
    again = select_windows(trace, WindowRule("random", jobs=3, count=2, seed=7))
    assert again == select_windows(trace, WindowRule("random", jobs=3, count=2, seed=7))
    assert len({s.first_job for s in again}) == 2
    assert all(0 <= s.first_job <= 3 for s in again)  # type: ignore[operator]
    with pytest.raises(ValueError, match="4 windows of 2 jobs from job 0 do not fit"):
        select_windows(trace, WindowRule("consecutive", jobs=2, count=4))


def test_simulated_initial_state_hands_over_running_jobs(small_trace: Path) -> None:
    trace = read_swf(small_trace)
    (spec,) = select_windows(
        trace,
        WindowRule(
            "consecutive", jobs=2, count=1, first=3, initial_state="simulated:fcfs"
        ),
    )
    window = spec.cut(trace)
    # FCFS on jobs 1-3 (m = 4): job 1 [0,100) on 2 procs, job 2 [10,60),
    # job 3 (4 procs) waits for both: [100,130). Window starts at t0 = 30
    # (job 4's submit): jobs 1 and 2 run, job 3 has not started.
    blocks = sorted(
        (b.label, b.start, b.end, b.size) for b in window.machine.unavailable
    )
    assert blocks == [("job 1", 0, 70, 2), ("job 2", 0, 30, 1)]
    assert window.source.window is not None
    assert window.source.window.initial_state == "simulated:fcfs"
    outcome = evaluate_policy(window, "fcfs", "cmax")
    assert check_schedule(window, outcome.schedule) == []


def test_bad_initial_state_is_refused() -> None:
    with pytest.raises(ValueError, match="expected none, recorded or simulated"):
        WindowRule("consecutive", jobs=2, initial_state="simulated:")


def test_gap_command_prints_exact_ratio(tmp_path: Path) -> None:
    path = tmp_path / "trap.json"
    write_native(_fcfs_trap(), path)
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(
        main,
        [
            "gap",
            str(path),
            "--policies",
            "fcfs,firstfit",
            "--objective",
            "cmax",
            "--time-limit",
            "5",
            "--workers",
            "1",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1.8000" in result.output
    import pandas as pd

    frame = pd.read_csv(out)
    assert list(frame["policy"]) == ["fcfs", "firstfit"]
    assert list(frame["ratio_low"]) == [1.8, 1.0]


def test_gap_command_several_windows_prints_aggregate(small_trace: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "gap",
            str(small_trace),
            "--window-jobs",
            "2",
            "--policies",
            "fcfs,easy",
            "--objective",
            "cmax",
            "--time-limit",
            "2",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "competitive ratio over windows" in result.output


def test_gap_command_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 0 x 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
    result = CliRunner().invoke(main, ["gap", str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "bad.swf:2:" in result.output


def test_rows_frame_of_nothing_keeps_the_columns() -> None:
    frame = rows_frame([])
    assert frame.empty
    assert {"ratio_low", "ratio_high", "comparable", "killed"} <= set(frame.columns)


def test_window_rule_numbers_must_be_integers() -> None:
    with pytest.raises(ValueError, match=r"window jobs must be an integer, got 2\.5"):
        WindowRule.from_mapping({"kind": "consecutive", "jobs": 2.5})
    with pytest.raises(ValueError, match=r"unknown window key.*size"):
        WindowRule.from_mapping({"kind": "consecutive", "size": 2})
