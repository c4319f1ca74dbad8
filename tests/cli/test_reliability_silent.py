"""Issue 32, inputs once accepted without a word: each now refused with one
located line, or read with a documented meaning and a ``note:`` line.

Decisions (the module docstrings say the same):

* a native instance with an empty ``jobs`` list: read (it is valid and
  round-trips), with ``note: ... no jobs``;
* SWF preceding-job links naming the job itself, a job not in the file, or
  closing a cycle: read, the links dropped as
  :func:`optsched.site.chains.chain_graph` always did, with a note counting
  them;
* ``plot gantt`` without INSTANCE (nothing checks the schedule): a job that
  ends before it starts is refused; a negative start or a processor listed
  twice is drawn and noted;
* a Batsim ``execution_time`` other than ``finish_time - starting_time``:
  refused at its line;
* a co-reservation request submitted after its earliest start, a price above
  1e12 per CPU-hour: refused; a scenario's negative ``merge_below``, zero
  ``weeks`` or ``cap``: refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.csvrows import simulated_rows, write_rows
from support.paths import DATA, INSTANCES, swf_job, write_swf
from support.scenarios import SCENARIO_HEAD, write_scenario

from optsched.cli import main
from optsched.coreserve.scenario import load_scenario
from optsched.errors import InputError

INSTANCE = INSTANCES / "kth_20.json"


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_an_empty_job_list_is_read_with_a_note(tmp_path: Path) -> None:
    data = json.loads(INSTANCE.read_text())
    data["jobs"] = []
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(data))
    result = _run("simulate", path, "-p", "easy")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"optsched: note: {path}: no jobs: nothing to schedule (every value "
        "below is 0)\n"
    )


def test_preceding_job_cycles_and_self_links_are_noted(tmp_path: Path) -> None:
    lines = [
        swf_job(1, 0, 5, 1, preceding=2, think=5),  # 1 <- 2 <- 1: a cycle
        swf_job(2, 1, 5, 1, preceding=1, think=5),
        swf_job(3, 2, 5, 1, preceding=3, think=5),  # itself
        swf_job(4, 3, 5, 1, preceding=1, think=5),  # a valid link
    ]
    path = write_swf(tmp_path / "c.swf", lines, 4)
    result = _run("simulate", path, "-p", "fcfs")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"optsched: note: {path}: 2 preceding-job links ignored (1 name the job "
        "itself or a job not in the file, 1 close a cycle); chains keep the "
        "others\n"
    )
    first = swf_job(1, 0, 5, 1)
    clean = write_swf(tmp_path / "ok.swf", [first, lines[3]], 4)
    assert "preceding" not in _run("info", clean).stderr


def test_gantt_without_instance_refuses_reversed_jobs_and_notes_odd_ones(
    tmp_path: Path,
) -> None:
    rows = simulated_rows(INSTANCE, tmp_path)
    job = rows[1][0]
    reversed_rows = [list(r) for r in rows]
    reversed_rows[1][1:3] = ["5000", "100"]
    path = write_rows(tmp_path / "rev.csv", reversed_rows)
    refused = _run("plot", "gantt", path, "-o", tmp_path / "a.png")
    assert refused.exit_code == 2
    assert refused.stderr == (
        f"optsched: error: {path}: job {job}: ends at 100 before its start 5000\n"
    )
    odd = [list(r) for r in rows]
    odd[1][1] = "-50"
    odd[2][4] = "0-5 3-8"
    path = write_rows(tmp_path / "odd.csv", odd)
    drawn = _run("plot", "gantt", path, "-o", tmp_path / "b.png")
    assert drawn.exit_code == 0, drawn.output
    notes = drawn.stderr.splitlines()
    assert notes[:2] == [
        f"note: {path}: 1 job(s) start before time 0 (job {job}); unchecked "
        "(give the INSTANCE)",
        f"note: {path}: 1 job(s) list a processor twice (job {rows[2][0]}); "
        "unchecked (give the INSTANCE)",
    ]
    # With the instance the checker speaks instead (a warning, as before).
    checked = _run("plot", "gantt", path, INSTANCE, "-o", tmp_path / "c.png")
    assert checked.exit_code == 0
    assert checked.stderr.startswith("warning: the schedule has ")


def test_a_batsim_execution_time_that_disagrees_is_refused(tmp_path: Path) -> None:
    header = "job_id,submission_time,starting_time,execution_time,finish_time,"
    header += "allocated_resources,final_state\n"
    path = tmp_path / "out_jobs.csv"
    path.write_text(header + "1,0,0,10,10,0,COMPLETED_SUCCESSFULLY\n")
    bad = tmp_path / "bad_jobs.csv"
    bad.write_text(
        header
        + "1,0,0,10,10,0,COMPLETED_SUCCESSFULLY\n"
        + "2,0,10,99,15,1,COMPLETED_SUCCESSFULLY\n"
    )
    from optsched.io.schedules import read_schedule

    assert read_schedule(path)[1].end == 10
    with pytest.raises(InputError) as refused:
        read_schedule(bad)
    assert str(refused.value) == (
        f"{bad}:3: execution_time: 99 is not finish_time - starting_time = 5"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["request"].update(submit=60000),
            "request.earliest_start: 57600 is before submit 60000",
        ),
        (
            lambda d: d["clusters"][0]["prices"][0].__setitem__(3, 1e308),
            "clusters[0]: price 1e+308 must be from 0 to 1e+12",
        ),
    ],
)
def test_co_reservation_requests_out_of_range(
    tmp_path: Path, change: object, message: str
) -> None:
    data = json.loads((DATA / "coreserve" / "two_clusters.json").read_text())
    change(data)  # type: ignore[operator]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    result = _run("coreserve", "optimum", path)
    assert result.exit_code == 2
    assert result.stderr == f"optsched: error: {path}:1: {message}\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("merge_below = -5", "[workload] merge_below -5: expected an integer from 0"),
        ("weeks = 0", "[workload] weeks 0: expected an integer from 1"),
        ("cap = -1", "[workload] cap -1: expected an integer from 1"),
    ],
)
def test_scenario_counts_out_of_range(tmp_path: Path, extra: str, message: str) -> None:
    write_swf(tmp_path / "log.swf", [swf_job(1, 0, 60, 1)], 8)
    path = write_scenario(tmp_path, f"{SCENARIO_HEAD}{extra}\n")
    with pytest.raises(InputError) as refused:
        load_scenario(path)
    assert str(refused.value).startswith(f"{path}:7: {message}")


def test_a_huge_cluster_count_is_refused(tmp_path: Path) -> None:
    write_swf(tmp_path / "log.swf", [swf_job(1, 0, 60, 1)], 8)
    path = write_scenario(tmp_path, SCENARIO_HEAD.replace("= 3", "= 100000000"))
    with pytest.raises(InputError) as refused:
        load_scenario(path)
    assert str(refused.value) == (
        f"{path}:6: [workload] clusters must be from 1 to 256"
    )
