"""Issue 17: huge machines, huge values, time limits and exact bounds.

Every test here failed before the fix it guards: a machine of ``10**9``
processors built a list of ``10**9`` indices (19 GB), CP-SAT raised on a
horizon beyond ``int64``, NumPy overflowed on ends beyond ``int64``, a
relative slack of ``1e-9`` cost a bound of ``10**12`` a thousand units, the
time limit did not cover bounds and heuristics, and ``--lp-only
--schedule-out`` wrote the result before failing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from optsched.check import check_schedule
from optsched.cli import main
from optsched.cli.bound import _OutOfTime, _time_box, timed_incumbents
from optsched.heuristics.rigid.offline import ORDERS, best_heuristic
from optsched.instance import Instance, Job, Machine
from optsched.io.native import write_native
from optsched.metrics import summarize
from optsched.models import solve
from optsched.models.common.solution import (
    best_lower_bound,
    is_optimal,
    upper_bound_candidates,
)
from optsched.models.rigid.bounds import dff_bound, lower_bounds_within, wide_jobs_bound
from optsched.objective import Objective
from optsched.packing import _FreeRanges, list_schedule
from optsched.result import Bound, Incumbent, SolveStatus
from optsched.schedule import Placement, Schedule

BILLION = 10**9
CMAX, WCT = Objective("cmax"), Objective("wct")
PAST = 0.0  # a time.monotonic() deadline that has always passed


# --------------------------------------------------------------------------
# Huge machines: memory in the jobs, not in the processors
# --------------------------------------------------------------------------


def test_free_ranges_hand_out_the_lowest_processors_and_merge() -> None:
    free = _FreeRanges(BILLION)
    assert free.take(3) == [(0, 3)]
    assert free.take(2) == [(3, 5)]
    free.give([(0, 3)])
    assert (free.lows, free.highs, free.count) == ([0, 5], [3, BILLION], BILLION - 2)
    assert free.take(4) == [(0, 3), (5, 6)]
    free.give([(0, 3), (5, 6)])
    free.give([(3, 5)])
    assert (free.lows, free.highs, free.count) == ([0], [BILLION], BILLION)


@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_list_schedule_on_a_billion_processors_keeps_wide_jobs_as_intervals(
    allocation: str,
) -> None:
    jobs = [Job(1, 0, 1, 5), Job(2, 0, BILLION, 3), Job(3, 1, 7, 4), Job(4, 2, 3, 0)]
    instance = Instance(Machine(BILLION, allocation=allocation), jobs)
    schedule = list_schedule(instance, [1, 2, 3, 4])
    assert check_schedule(instance, schedule) == []
    wide = schedule[2].processors
    assert wide is not None and len(wide) == BILLION
    assert not isinstance(wide, tuple)  # intervals, not 10**9 integers
    assert schedule[1].processors == (0,)


def test_back_ends_and_simulator_run_a_billion_processors_in_little_memory(
    tmp_path: Path,
) -> None:
    # A cap of 1.5 GB address space: the old sweep needed 19 GB for m = 10**9.
    script = textwrap.dedent(
        """
        import resource
        cap = 1536 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        from optsched.check import check_schedule
        from optsched.heuristics import simulate
        from optsched.instance import Instance, Job, Machine
        from optsched.models import solve
        m = 10**9
        jobs = [Job(1, 0, 1, 5), Job(2, 0, m, 3), Job(3, 2, 10, 4), Job(4, 1, 500, 2)]
        for allocation in ("any", "contiguous"):
            instance = Instance(Machine(m, allocation=allocation), jobs)
            for backend in ("bounds-only", "cpsat", "milp", "shelf"):
                result = solve(instance, "wct", backend=backend, time_limit=5)
                assert check_schedule(instance, result.schedule) == [], backend
                print(backend, allocation, result.status.value, result.objective)
            for policy in ("easy", "best-package"):
                schedule = simulate(instance, policy).schedule
                assert check_schedule(instance, schedule) == [], policy
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split("\n")
    assert len([line for line in lines if line]) == 8
    assert "cpsat any OPTIMAL 23" in lines  # job 2 on [0, 3), then 8 + 5 + 7
    assert "cpsat contiguous OPTIMAL 23" in lines


# --------------------------------------------------------------------------
# Huge values: exact integers, models that do not fit are not built
# --------------------------------------------------------------------------


def _long_jobs(n: int, m: int, runtime: int = 2**53) -> Instance:
    return Instance(Machine(m), [Job(i, 0, 1, runtime) for i in range(1, n + 1)])


@pytest.mark.parametrize("backend", ["cpsat", "milp", "shelf", "bounds-only"])
@pytest.mark.parametrize("objective", [CMAX, WCT])
def test_a_horizon_beyond_the_solvers_integers_gives_bounds_and_a_note(
    backend: str, objective: Objective
) -> None:
    # 64 jobs of 2**53 s on 4 processors: horizon 2**57, and 65 variables
    # of that range sum beyond int64 (CP-SAT used to raise TypeError).
    instance = _long_jobs(64, 4)
    result = solve(instance, objective, backend=backend, time_limit=10)
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    if objective.kind == "cmax":
        assert result.objective == result.lower_bound == 16 * 2**53
        assert isinstance(result.objective, int)
    assert result.status is SolveStatus.OPTIMAL  # equal-length jobs: list is optimal
    notes = result.params.get("skipped", [])
    if backend == "bounds-only":
        assert notes == []
    else:
        assert any(f"{backend}: model not built" in note for note in notes), notes


def test_metrics_survive_ends_beyond_int64() -> None:
    # 1030 jobs of 2**53 s one after another: the last ends past 2**63.
    n, p = 1030, 2**53
    instance = _long_jobs(n, 1, p)
    schedule = Schedule(
        {i: Placement((i - 1) * p, i * p, (0,)) for i in range(1, n + 1)}
    )
    assert check_schedule(instance, schedule) == []
    summary = summarize(instance, schedule)
    assert summary.makespan == n * p
    assert summary.utilisation == 1.0
    assert summary.max_wait == (n - 1) * p
    assert CMAX.value(instance, schedule) == n * p
    assert WCT.value(instance, schedule) == p * n * (n + 1) // 2  # exact int


def test_objective_values_are_exact_integers_beyond_2_53() -> None:
    # Two jobs of 2**53 - 1 s in a row end at 2**54 - 2, which no float holds.
    p = 2**53 - 1
    instance = Instance(Machine(1), [Job(1, 0, 1, p), Job(2, 0, 1, p)])
    schedule = Schedule({1: Placement(0, p, (0,)), 2: Placement(p, 2 * p, (0,))})
    assert CMAX.value(instance, schedule) == 2 * p  # a float gives 2**54
    assert Objective("wct", "area").value(instance, schedule) == p * p + p * 2 * p


# --------------------------------------------------------------------------
# Exact bounds and status
# --------------------------------------------------------------------------


def test_integer_bounds_are_not_lowered_by_a_relative_slack() -> None:
    inst = Instance(Machine(4), [])
    assert best_lower_bound(inst, CMAX, [Bound(10**12 + 7, "area")]) == 10**12 + 7
    assert best_lower_bound(
        inst, CMAX, [Bound(2**60 + 1, "a"), Bound(2.0**60, "b")]
    ) == (2**60 + 1)
    # A float bound loses a few ulps only: float noise, not 1000 units.
    assert best_lower_bound(inst, CMAX, [Bound(1101.0000000000002, "lp")]) == 1101
    assert best_lower_bound(inst, CMAX, [Bound(1e12 + 0.5, "lp")]) == 10**12 + 1


def test_is_optimal_compares_integers_exactly() -> None:
    assert not is_optimal(CMAX, 2**60 + 1, 2**60)
    assert is_optimal(CMAX, 2**60 + 1, 2**60 + 1)
    # The relative tolerance 1e-9 would call these equal (10**6 apart).
    assert not is_optimal(WCT, 10**15 + 1, 10**15)


@pytest.mark.parametrize("backend", ["bounds-only", "cpsat", "shelf"])
def test_run_times_of_1e12_are_proven_optimal_with_the_exact_bound(
    backend: str,
) -> None:
    jobs = [
        Job(1, 0, 2, 10**12 + 1),
        Job(2, 0, 2, 10**12 + 3),
        Job(3, 0, 4, 10**12 + 7),
    ]
    instance = Instance(Machine(4), jobs)
    result = solve(instance, CMAX, backend=backend, time_limit=10)
    assert result.status is SolveStatus.OPTIMAL
    assert result.lower_bound == result.objective == 2 * 10**12 + 10


# --------------------------------------------------------------------------
# Time limits: bounds, heuristics and checks stop at the deadline
# --------------------------------------------------------------------------


def _window(n: int = 40) -> Instance:
    jobs = [Job(i, i % 7, 1 + i % 5, 3 + (i * 7) % 11) for i in range(1, n + 1)]
    return Instance(Machine(8), jobs)


def test_bounds_after_the_deadline_are_skipped_and_listed() -> None:
    bounds, notes = lower_bounds_within(_window(), CMAX, PAST)
    assert [b.method for b in bounds] == ["release"]  # the first one always runs
    assert notes == [
        "area: skipped (time limit)",
        "energy: skipped (time limit)",
        "wide-jobs: skipped (time limit)",
        "dff: skipped (time limit)",
    ]
    bounds, notes = lower_bounds_within(_window(), WCT, None)
    assert len(bounds) == 4 and notes == []


def test_long_bounds_stop_at_the_deadline_with_a_valid_partial_value() -> None:
    instance = _window()
    for bound in (
        dff_bound(instance, deadline=PAST),
        wide_jobs_bound(instance, deadline=PAST),
    ):
        assert bound.partial
        assert (
            0
            <= bound.value
            <= dff_bound(instance).value + wide_jobs_bound(instance).value
        )
    assert not dff_bound(instance).partial


def test_heuristics_and_incumbent_checks_stop_at_the_deadline() -> None:
    instance = _window()
    best = best_heuristic(instance, CMAX, deadline=PAST)
    assert best.producer == f"list:{next(iter(ORDERS))}"  # only the first ran
    # The command's incumbents run in time boxes: none starts after the
    # deadline (the back-end has its own list schedule).
    incumbents, skipped = timed_incumbents(instance, CMAX, PAST)
    assert incumbents == []
    assert skipped == [
        "heuristics release-lpt, lpt, wspt, release-wspt, largest-size, "
        "largest-area, spt, nfdh, ffdh: skipped (time limit)",
        *(
            f"oracle:{p}: skipped (time limit)"
            for p in ("fcfs", "easy", "conservative", "best-package")
        ),
    ]
    given = [Incumbent(f"copy{k}", best) for k in range(3)]
    candidates, rejected = upper_bound_candidates(
        instance, CMAX, incumbents=given, deadline=PAST
    )
    assert [c.source for c in candidates][:0] == []
    assert {c.source for c in candidates} == {"list:submit", "copy0"}
    assert rejected == [
        "copy1: not checked (time limit)",
        "copy2: not checked (time limit)",
    ]


def test_time_box_stops_a_computation_without_a_clock() -> None:
    began = time.monotonic()
    with pytest.raises(_OutOfTime), _time_box(began + 0.05):
        while True:
            pass
    with pytest.raises(_OutOfTime), _time_box(PAST):
        raise AssertionError("the body of an expired box must not run")


@pytest.mark.parametrize("backend", ["cpsat", "milp", "shelf", "bounds-only"])
def test_a_zero_time_limit_still_gives_a_checked_schedule(backend: str) -> None:
    instance = _window()
    result = solve(instance, CMAX, backend=backend, time_limit=0)
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    assert result.lower_bound is not None
    notes = result.params["skipped"]
    if backend != "bounds-only":
        assert f"{backend}: " in notes[-1] and "skipped (time limit)" in notes[-1]


# --------------------------------------------------------------------------
# The bound command
# --------------------------------------------------------------------------


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.json"
    write_native(Instance(Machine(2), [Job(1, 0, 2, 3), Job(2, 0, 1, 2)]), path)
    return path


def test_lp_only_with_schedule_out_is_refused_before_anything_is_written(
    small_file: Path, tmp_path: Path
) -> None:
    out, sched = tmp_path / "r.json", tmp_path / "s.csv"
    result = CliRunner().invoke(
        main,
        ["bound", str(small_file), "--backend", "milp", "--lp-only",
         "-o", str(out), "--schedule-out", str(sched)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.strip().split("\n") == [
        "optsched: error: --schedule-out: --lp-only computes a lower bound only, "
        "there is no schedule to write"
    ]
    assert "Traceback" not in result.output
    assert not out.exists() and not sched.exists()


def test_bound_on_a_billion_processors_writes_a_checked_schedule(
    tmp_path: Path,
) -> None:
    path, out, sched = tmp_path / "m.json", tmp_path / "r.json", tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {"format": "optsched-instance", "version": 1, "name": "x",
             "machine": {"processors": BILLION},
             "jobs": [{"id": 1, "release": 0, "size": 1, "runtime": 5}]}
        )
    )  # fmt: skip
    result = CliRunner().invoke(
        main,
        ["bound", str(path), "--backend", "bounds-only", "--time-limit", "5",
         "-o", str(out), "--schedule-out", str(sched)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    assert record["status"] == "OPTIMAL" and record["lower_bound"] == 5
    assert "status            OPTIMAL" in result.stdout
    assert sched.exists()
