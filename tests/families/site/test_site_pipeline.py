"""Site rules through the analysis pipeline: suites, ``optsched gap``, the
native format."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from support.paths import swf_job, write_swf

from optsched.bench.suite import load_suite
from optsched.bench.tasks import expand
from optsched.cli import main

# Weekdays 08:00-18:00: 2 of the 4 processors for batch jobs, jobs of at most
# 2 processors; time 0 of the trace is Monday 07:00.
SITE = """[site]
name = "small"
processors = 4
monday_offset = 25200

[[batch]]
days = ["mon", "tue", "wed", "thu", "fri"]
from = "08:00"
to = "18:00"
processors = 2
max_size = 2

[[outage]]
start = 7000
duration = 600
"""


def _files(tmp_path: Path) -> tuple[Path, Path]:
    jobs = [
        swf_job(1, 0, 3000, 4, estimate=3600),
        swf_job(2, 100, 2000, 2, estimate=3000),
        swf_job(3, 200, 4000, 4, estimate=5000),
        swf_job(4, 300, 500, 1, estimate=900),
    ]
    trace = write_swf(tmp_path / "t.swf", jobs, 4)
    site = tmp_path / "site.toml"
    site.write_text(SITE)
    return trace, site


def test_suite_windows_get_the_site_and_the_arrival_mode(tmp_path: Path) -> None:
    _, site = _files(tmp_path)
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(
        'policies = ["fcfs"]\nobjectives = ["cmax"]\n[suite]\nname = "s"\n'
        '[[traces]]\npath = "t.swf"\nsite = "site.toml"\narrivals = "window-start"\n'
    )
    suite = load_suite(suite_file)
    (ref,) = suite.traces
    assert ref.arrivals == "window-start" and ref.site == str(site.resolve())
    assert ref.read_options()["site"] == ref.site_sha256
    plan = expand(suite)
    instance = plan.instance(plan.tasks[0])
    calendar = instance.machine.calendar
    assert calendar is not None and calendar.capacity_at(3600, 4) == 2
    assert {job.release for job in instance.jobs} == {0}
    assert [(o.start, o.end, o.size) for o in instance.machine.outages] == [
        (7000, 7600, 4)
    ]


def test_a_bad_site_in_a_suite_names_its_line(tmp_path: Path) -> None:
    _files(tmp_path)
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(
        'policies = ["fcfs"]\nobjectives = ["cmax"]\n[suite]\nname = "s"\n'
        '[[traces]]\npath = "t.swf"\nsite = "nowhere.toml"\n'
    )
    result = CliRunner().invoke(main, ["bench", str(suite_file)])
    assert result.exit_code == 2
    assert f"{suite_file}:7: [[traces]] site file not found" in result.output


def test_gap_with_a_site_solves_under_the_rules(tmp_path: Path) -> None:
    # Job 1 (4 processors) may start only before 08:00 (time 3600) or
    # after 18:00; FCFS starts it at 0, it ends at 3000. The outage at
    # 7000 (whole machine, 600 s) kills what runs then. Every policy's
    # schedule and the optimum pass the checker inside the pipeline; the
    # optimum is proven on 4 jobs, and no ratio is below 1.
    trace, site = _files(tmp_path)
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(
        main,
        [
            "gap", str(trace), "--site", str(site), "--policies",
            "fcfs,easy,conservative,mallmann:variant=bs,strict-backfill",
            "--objective", "cmax", "--time-limit", "20", "--workers", "1",
            "--no-progress", "-o", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    import pandas as pd

    rows = pd.read_csv(out)
    assert len(rows) == 5
    assert rows["optimal"].all()
    assert (rows["ratio_low"] >= 1).all()
    # Job 3 (4 processors) cannot start in batch hours with their size cap;
    # the offline optimum plans around the outage it cannot see online.
    assert rows["lower"].iloc[0] > 3000
