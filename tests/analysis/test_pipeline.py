"""The one analysis pipeline: soundness rules and the ``gap`` command.

Regression tests of issue 9: a schedule with a killed job is never an upper
bound; a value below a lower bound is reported as a defect with the window
saved, not a traceback; policies are identified by their canonical spec and
split by one parser; ``--allocation`` applies before the window is cut;
Ctrl-C keeps the finished windows.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from support.paths import DATA, REPO

import optsched.bench.tasks as tasks_module
from optsched.bench.analysis import analyse_instance
from optsched.bench.store import Store
from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import Instance
from optsched.io.native import instance_from_dict

RECORDED = DATA / "swf" / "recorded.swf"

# The instance of the issue: job 1 (estimate 8 < run time 12) would overrun
# into the reservation [10, 20) of 3 processors, so the simulator kills it at
# its estimate; FCFS then "finishes" at 28, below the true optimum 32.
ADVANCE_RESERVATION = {
    "format": "optsched-instance",
    "version": 1,
    "name": "adv_reservation",
    "machine": {
        "processors": 4,
        "allocation": "any",
        "unavailable": [{"start": 10, "end": 20, "size": 3}],
    },
    "jobs": [
        {"id": 1, "release": 0, "size": 2, "runtime": 12, "estimate": 8},
        {"id": 2, "release": 0, "size": 2, "runtime": 5, "estimate": 15},
        {"id": 3, "release": 1, "size": 1, "runtime": 4, "estimate": 4},
        {"id": 4, "release": 2, "size": 4, "runtime": 3, "estimate": 3},
    ],
}


def _reservation() -> Instance:
    return instance_from_dict(ADVANCE_RESERVATION)


@pytest.fixture
def reservation_file(tmp_path: Path) -> str:
    """:data:`ADVANCE_RESERVATION` written as an instance file."""
    path = tmp_path / "adv.json"
    path.write_text(json.dumps(ADVANCE_RESERVATION))
    return str(path)


def _gap(*args: str) -> Any:
    return CliRunner().invoke(
        main, ["gap", *args, "--time-limit", "5", "--workers", "1", "--no-progress"]
    )


def _gap_rows(folder: Path, status: int, *args: str) -> tuple[str, pd.DataFrame]:
    """The output and the rows (``-o rows.csv`` in ``folder``) of a ``gap``
    run that ends with exit status ``status``."""
    out = folder / "rows.csv"
    result = _gap(*args, "-o", str(out))
    assert result.exit_code == status, result.output
    return result.output, pd.read_csv(out)


def test_killed_schedule_is_never_an_upper_bound() -> None:
    found = analyse_instance(_reservation(), ["fcfs"], ["cmax"], workers=1)
    row = found.row("fcfs", "cmax")
    # The simulator stopped job 1 at its estimate: 8 of its 12 s, 2 procs.
    assert found.schedules["fcfs"].killed == frozenset({1})
    assert check_schedule(_reservation(), found.schedules["fcfs"]) == []
    assert (row.value, row.killed, row.lost_work) == (28.0, 1, 8)
    assert not row.comparable and math.isnan(row.ratio_low)
    reference = found.references["cmax"]
    # Hand-checked optimum: jobs 1 and 2 at 0 cannot both finish before the
    # reservation; job 1 (12 s) must avoid [10, 20) on 2 processors with 1
    # free there, so it runs [20, 32): makespan 32, proven.
    assert reference.optimal and reference.upper == 32.0
    assert not reference.upper_source.startswith("policy:fcfs")
    assert "policy:fcfs" not in reference.candidates


def test_gap_command_on_the_killing_instance_reports_not_comparable(
    tmp_path: Path, reservation_file: str
) -> None:
    output, frame = _gap_rows(
        tmp_path, 0, reservation_file, "--policies", "fcfs", "--objective", "cmax"
    )
    assert "not comparable: 1 killed" in output
    assert list(frame["comparable"]) == [False]
    assert list(frame["upper"]) == [32.0]


def test_a_value_below_the_lower_bound_is_a_saved_defect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reservation_file: str
) -> None:
    real = tasks_module.execute_task

    def lying_bound(task: tasks_module.Task, instance: Instance) -> dict[str, Any]:
        row = real(task, instance)
        if task.kind == "solver":
            # A broken bound formula: 10 above the optimum.
            row = {**row, "lower": row["upper"] + 10, "lower_method": "broken"}
        return row

    monkeypatch.setattr(tasks_module, "execute_task", lying_bound)
    monkeypatch.chdir(tmp_path)
    result = _gap(reservation_file, "--policies", "easy:oracle", "--objective", "cmax")
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    assert "optsched: defect: window whole: cmax: the schedule of" in result.output
    assert "below the lower bound 42.0 (broken)" in result.output
    assert "withheld (defect)" in result.output
    saved = json.loads((tmp_path / "optsched-defect-whole.json").read_text())
    assert saved["instance"]["machine"]["unavailable"][0]["size"] == 3
    assert {r["kind"] for r in saved["rows"]} == {"policy", "solver"}


def test_policy_specs_with_parameters_and_aliases(
    tmp_path: Path, reservation_file: str
) -> None:
    _, frame = _gap_rows(
        tmp_path, 0, reservation_file, "--policies", "easy:order=sjf,oracle,fcfs",
        "--objective", "cmax",
    )  # fmt: skip
    assert list(frame["policy"]) == ["easy:order=spt,oracle", "fcfs"]
    twice = _gap(reservation_file, "--policies", "sjf,spt", "--objective", "cmax")
    assert twice.exit_code == 2
    assert "'sjf' and 'spt' are one policy (spt)" in twice.output


def test_recorded_state_on_a_contiguous_machine(tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    result = _gap(
        str(RECORDED), "--window-jobs", "2", "--first-job", "2", "--windows", "1",
        "--initial-state", "recorded", "--allocation", "contiguous",
        "--policies", "fcfs", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with Store(store, create=False) as results:
        rows = results.task_rows()
        instance = results.instance(str(rows[0].instance_sha256))
    # At submit time 20 of job 3 (window start), jobs 1 [0,100) and 2 [15,65)
    # run: two blocks with offsets on the contiguous machine.
    assert instance.machine.allocation == "contiguous"
    blocks = sorted((b.start, b.end, b.size) for b in instance.machine.unavailable)
    assert blocks == [(0, 45, 3), (0, 80, 4)]
    assert all(b.offset is not None for b in instance.machine.unavailable)
    assert all(r.status != "ERROR" for r in rows)


def test_ctrl_c_keeps_the_finished_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tasks_module.execute_task
    calls = {"n": 0}

    def interrupted(task: tasks_module.Task, instance: Instance) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] > 3:  # window 0: 1 policy + 2 solver tasks, then Ctrl-C
            raise KeyboardInterrupt
        return real(task, instance)

    monkeypatch.setattr(tasks_module, "execute_task", interrupted)
    output, frame = _gap_rows(
        tmp_path, 130, str(RECORDED), "--window-jobs", "2", "--policies", "fcfs"
    )
    assert "interrupted: 1 of 4 window(s) finished" in output
    assert set(frame["window"]) == {"first=0,jobs=2,state=none"}
    assert len(frame) == 2  # fcfs x (cmax, wct)


def test_progress_is_a_line_per_window_off_a_terminal(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["gap", str(RECORDED), "--window-jobs", "4", "--policies", "fcfs",
         "--objective", "cmax", "--time-limit", "5", "--workers", "1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "window 0 (first=0,jobs=4,state=none) done, 1 window(s)" in result.output
    assert "window 1 (first=4,jobs=4,state=none) done, 2 window(s)" in result.output


def test_objective_labels_print_literally(reservation_file: str) -> None:
    result = _gap(
        reservation_file, "--policies", "easy:oracle", "--objective", "wct:one"
    )
    assert result.exit_code == 0, result.output
    assert "wct:one (job-s)" in result.output


def test_gap_with_shelves_reports_the_price_of_shelves(tmp_path: Path) -> None:
    # pp_g_10: a perfect packing of height 20 (the optimum by construction);
    # the best shelf schedule is 21 (proven by the shelf back-end, and equal
    # to FFDH's makespan here), so the price of shelves is 21 / 20.
    output, frame = _gap_rows(
        tmp_path, 0,
        str(DATA.parent.parent / "instances" / "perfect" / "pp_g_10.json"),
        "--policies", "ffdh", "--objective", "cmax", "--shelves", "--wide",
    )  # fmt: skip
    assert "price of shelves" in output
    row = frame.iloc[0]
    assert (row["value"], row["upper"], row["shelves_upper"]) == (21, 20, 21)
    assert row["shelves_lower"] == 21 and row["lower"] == 20
    assert row["shelves_ratio_low"] == row["shelves_ratio_high"] == 1.0
    assert row["shelves_price_low"] == row["shelves_price_high"] == 1.05


def test_gap_leaves_out_default_policies_that_do_not_run_on_the_machine() -> None:
    # Speeds: conservative and best-package do not run there. The default
    # list adapts (each left out with its reason); a list the user names is
    # refused before any work, exit 2, one line naming the policy.
    kth = REPO / "instances" / "kth_20.json"
    adapted = _gap(str(kth), "--speeds", "50x1,50x2", "--time-limit", "1")
    assert adapted.exit_code == 0, adapted.output
    assert "left out conservative: policy 'conservative' does not run" in (
        adapted.output
    )
    assert "policies fcfs, firstfit, easy," in adapted.output
    named = _gap(str(kth), "--speeds", "50x1,50x2", "--policies", "easy,conservative")
    assert named.exit_code == 2
    assert (
        "--policies: policy 'conservative' does not run on a machine with speeds"
        in (named.output)
    )
