"""Rating a schedule made elsewhere (``gap --schedule NAME=FILE``), and the
run options ``gap`` and suites share with ``simulate``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from support.bench import write_suite
from support.paths import INSTANCES

from optsched.cli import main
from optsched.io.native import read_native

KTH_20 = INSTANCES / "kth_20.json"

BATSIM_HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,"
    "metadata"
)


def serial_schedule() -> dict[int, tuple[int, int]]:
    """Every job alone on processors 0.., one after the other in submit
    order: feasible, and simple enough to check by hand."""
    instance = read_native(KTH_20).instance
    t, out = 0, {}
    for job in sorted(instance.jobs, key=lambda j: (j.release, j.id)):
        start = max(t, job.release)
        out[job.id] = (start, start + job.runtime)
        t = start + job.runtime
    return out


def write_batsim(path: Path, starts: dict[int, tuple[int, int]]) -> Path:
    """An ``out_jobs.csv`` as Batsim writes it (written here by hand)."""
    jobs = read_native(KTH_20).instance.jobs_by_id()
    lines = [BATSIM_HEADER]
    for jid, (start, end) in starts.items():
        job = jobs[jid]
        wait, turnaround = start - job.release, end - job.release
        stretch = turnaround / max(end - start, 1)
        lines.append(
            f"w0!{jid},w0,p{jid},{job.release},{job.size},{job.requested},1,"
            f"COMPLETED_SUCCESSFULLY,{start},{end - start},{end},{wait},"
            f"{turnaround},{stretch:.6f},0-{job.size - 1},0,"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def gap(*args: str) -> tuple[int, str, Path]:
    out = Path(args[-1])
    result = CliRunner().invoke(
        main,
        ["gap", str(KTH_20), "--backend", "bounds-only", "--no-progress", *args[:-1],
         "-o", str(out)],
    )  # fmt: skip
    return result.exit_code, result.output, out


def test_a_batsim_schedule_is_rated(tmp_path: Path) -> None:
    starts = serial_schedule()
    file = write_batsim(tmp_path / "out_jobs.csv", starts)
    status, output, out = gap(
        "--policies", "fcfs", "--schedule", f"mine={file}", str(tmp_path / "r.csv")
    )
    assert status == 0, output
    rows = pd.read_csv(out)
    mine = rows[rows["policy"] == f"schedule:name=mine,file={file}"]
    values = dict(zip(mine["objective"], mine["value"], strict=True))
    assert values["cmax"] == max(end for _, end in starts.values())
    assert values["wct:one"] == sum(end for _, end in starts.values())


def test_an_infeasible_schedule_is_refused(tmp_path: Path) -> None:
    starts = serial_schedule()
    first = min(starts, key=lambda j: starts[j][0])
    second = sorted(starts, key=lambda j: starts[j][0])[1]
    # The second job now starts before the first ends, on the same processors.
    starts[second] = (starts[first][0] + 1, starts[first][0] + 1 + 10)
    jobs = read_native(KTH_20).instance.jobs_by_id()
    starts[second] = (starts[second][0], starts[second][0] + jobs[second].runtime)
    file = write_batsim(tmp_path / "bad_jobs.csv", starts)
    status, output, _ = gap(
        "--policies", "fcfs", "--schedule", f"bad={file}", str(tmp_path / "r.csv")
    )
    assert status == 2, output
    last = output.strip().splitlines()[-1]
    assert last.startswith(
        "optsched: error: window whole: schedule 'bad' is infeasible: "
    )
    assert f"job {second}" in last


def test_an_incomplete_schedule_is_refused(tmp_path: Path) -> None:
    starts = serial_schedule()
    dropped = max(starts)
    del starts[dropped]
    file = write_batsim(tmp_path / "some_jobs.csv", starts)
    status, output, _ = gap(
        "--policies", "fcfs", "--schedule", f"part={file}", str(tmp_path / "r.csv")
    )
    assert status == 2, output
    assert output.strip().splitlines()[-1] == (
        "optsched: error: window whole: schedule 'part' is incomplete on this "
        f"window: 1 of its 20 jobs have no placement, e.g. job {dropped}"
    )


def test_trace_clock_schedule_rates_every_window(tmp_path: Path) -> None:
    # A schedule of the whole file rates windows cut from it: the window's
    # shift is subtracted (clock=auto reads the times in the file's clock).
    starts = serial_schedule()
    file = write_batsim(tmp_path / "whole_jobs.csv", starts)
    status, output, out = gap(
        "--policies", "fcfs", "--window-jobs", "10", "--schedule", f"mine={file}",
        str(tmp_path / "r.csv"),
    )  # fmt: skip
    assert status == 0, output
    rows = pd.read_csv(out)
    mine = rows[
        (rows["policy"].str.startswith("schedule:")) & (rows["objective"] == "cmax")
    ]
    instance = read_native(KTH_20).instance
    ordered = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    for index, window in enumerate((ordered[:10], ordered[10:])):
        shift = window[0].release
        expected = max(starts[j.id][1] for j in window) - shift
        assert mine.iloc[index]["value"] == expected


@pytest.mark.parametrize(
    ("options", "killed"),
    [(("--kill-at-estimate",), True), (("--allocation-rule", "best-fit"), False)],
)
def test_gap_takes_the_run_options(
    tmp_path: Path, options: tuple[str, ...], killed: bool
) -> None:
    from optsched.heuristics import simulate

    status, output, out = gap(
        "--policies", "easy", "--allocation", "contiguous", *options,
        str(tmp_path / "r.csv"),
    )  # fmt: skip
    assert status == 0, output
    rows = pd.read_csv(out)
    plain = read_native(KTH_20).instance
    instance = plain.replace(machine=plain.machine.with_allocation("contiguous"))
    flags = {
        "kill_at_estimate": "--kill-at-estimate" in options,
        "allocation_rule": "best-fit" if "best-fit" in options else "first-fit",
    }
    schedule = simulate(instance, "easy", **flags).schedule  # type: ignore[arg-type]
    cmax = rows[rows["objective"] == "cmax"].iloc[0]
    assert cmax["value"] == max(p.end for p in schedule.placements.values())
    assert bool(schedule.killed) == killed
    assert bool(cmax["comparable"]) is not killed
    # The rows record how the policy was simulated.
    assert bool(cmax["kill_at_estimate"]) == flags["kill_at_estimate"]
    assert cmax["allocation_rule"] == flags["allocation_rule"]


def test_suite_run_table(tmp_path: Path) -> None:
    from optsched.bench.suite import load_suite
    from optsched.errors import InputError

    suite = write_suite(
        tmp_path / "s.toml",
        KTH_20,
        ["easy"],
        trace_options='allocation = "contiguous"',
        tables="""
            [run]
            allocation_rule = "best-fit"
            migration = true
            """,
    )
    body = suite.read_text()
    loaded = load_suite(suite)
    assert loaded.run.params() == {"allocation_rule": "best-fit", "migration": True}
    suite.write_text(body.replace("migration = true", "migration = 1"))
    with pytest.raises(InputError, match=r"\[run\] migration must be true or false"):
        load_suite(suite)


@pytest.mark.parametrize("suffix", [".csv", ".json", ".swf"])
def test_our_own_formats_round_trip(tmp_path: Path, suffix: str) -> None:
    # simulate -o writes the window's schedule; rated back, it is EASY's.
    file = tmp_path / f"easy{suffix}"
    written = CliRunner().invoke(
        main, ["simulate", str(KTH_20), "-p", "easy", "-o", str(file)]
    )
    assert written.exit_code == 0, written.output
    status, output, out = gap(
        "--policies", "easy", "--schedule", f"copy={file}", str(tmp_path / "r.csv")
    )
    assert status == 0, output
    rows = pd.read_csv(out)
    for _, pair in rows.groupby("objective"):
        assert pair["value"].nunique() == 1, pair


def test_suite_schedules_table(tmp_path: Path) -> None:
    from optsched.bench.suite import load_suite

    file = write_batsim(tmp_path / "out_jobs.csv", serial_schedule())
    suite = write_suite(
        tmp_path / "s.toml",
        KTH_20,
        ["fcfs"],
        tables="""
            [schedules]
            mine = "out_jobs.csv"
            """,
    )
    assert load_suite(suite).policies == (
        "fcfs",
        f"schedule:name=mine,file={file.resolve()}",
    )


def test_suite_kill_at_estimate_runs(tmp_path: Path) -> None:
    from optsched.bench import run_suite
    from optsched.bench.analysis import analyse
    from optsched.bench.suite import load_suite
    from optsched.heuristics import simulate

    suite = write_suite(
        tmp_path / "k.toml",
        KTH_20,
        ["easy"],
        tables="""
            [run]
            kill_at_estimate = true
            """,
    )
    store = tmp_path / "k.sqlite"
    assert run_suite(suite, store).failed == 0
    rows = analyse(load_suite(suite), store=store).rows
    instance = read_native(KTH_20).instance
    killed = simulate(instance, "easy", kill_at_estimate=True).schedule.killed
    assert len(killed) > 0
    (row,) = rows.to_dict("records")
    assert row["killed"] == len(killed) and row["kill_at_estimate"]
    assert not row["comparable"]
