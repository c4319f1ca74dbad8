"""SWF in, the rest of the standard: partial executions, statuses, estimates."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import INSTANCES, trace_path
from support.refusals import refusal

from optsched.cli import main
from optsched.io.native import read_native, write_native
from optsched.io.swf import (
    SKIP_RUNTIME,
    SKIP_SIZE,
    SKIP_STATUS,
    STATUS_CODES,
    _fold_partial,
    parse_statuses,
    read_swf,
)
from optsched.trace import FoldReport

HEADER = "; Version: 2.2\n; MaxProcs: 8\n"


def line(job: int, submit: int, wait: int, run: int, size: int, **kw: int) -> str:
    """One SWF line; ``estimate`` (field 9) and ``status`` (field 11) by name."""
    fields = [job, submit, wait, run, size, -1, -1, size, kw.get("estimate", 100)]
    fields += [-1, kw.get("status", 1), 7, 3, -1, -1, -1, -1, -1]
    return " ".join(map(str, fields))


def swf(tmp_path: Path, *lines: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "\n".join(lines) + "\n")
    return path


def run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


# A checkpointed job 2 (summary line first, then three partial executions:
# 10 s, 20 s and 5 s of run time), between two ordinary jobs.
CHECKPOINTED = (
    line(1, 0, 0, 30, 2),
    line(2, 5, 10, 50, 4, status=1),  # summary: run time 50 (from first start)
    line(2, 5, 10, 10, 4, status=2),
    line(2, 5, 30, 20, 4, status=2),
    line(2, 5, 50, 5, 4, status=3),
    line(3, 8, 0, 12, 1),
)


def test_partial_lines_are_one_job_with_the_summary_run_time(tmp_path: Path) -> None:
    trace = read_swf(swf(tmp_path, *CHECKPOINTED))
    jobs = {j.id: j for j in trace.instance.jobs}
    assert [j.id for j in trace.instance.jobs] == [1, 2, 3]
    job = jobs[2]
    fields = (job.release, job.wait, job.runtime, job.size, job.status)
    assert fields == (5, 10, 50, 4, 1)
    assert trace.records == 3
    assert trace.folded == FoldReport(1, 3, 1, "summary")
    assert trace.folded.lines_merged == 3
    assert trace.skipped.total == 0


def test_partial_rule_sum_adds_the_partial_run_times(tmp_path: Path) -> None:
    trace = read_swf(swf(tmp_path, *CHECKPOINTED), partial="sum")
    job = trace.instance.job(2)
    assert (job.release, job.wait, job.runtime, job.status) == (5, 10, 35, 1)
    assert trace.folded.rule == "sum"


def test_partial_lines_without_summary(tmp_path: Path) -> None:
    # Parts only, last one failed: submit the earliest, wait to the first
    # start, run time summed, status the last part's.
    path = swf(
        tmp_path,
        line(4, 20, 40, 7, 2, status=2),
        line(4, 12, 70, 9, 2, status=4),
        line(5, 30, 0, 1, 1),
    )
    for rule in ("summary", "sum"):
        trace = read_swf(path, partial=rule)
        job = trace.instance.job(4)
        assert (job.release, job.wait, job.runtime, job.status) == (12, 48, 16, 4)
        assert trace.folded == FoldReport(1, 2, 0, rule)
        assert [j.id for j in trace.instance.jobs] == [4, 5]


def test_missing_part_runtime_is_skipped_under_sum_only(tmp_path: Path) -> None:
    path = swf(
        tmp_path,
        line(1, 0, 0, 30, 2),
        line(2, 5, 0, 40, 2, status=0),
        line(2, 5, 0, -1, 2, status=4),
    )
    assert read_swf(path).instance.job(2).runtime == 40
    summed = read_swf(path, partial="sum")
    assert [j.id for j in summed.instance.jobs] == [1]
    # Reported at the summary line, the one that stands for the job.
    assert summed.skipped.counts == {SKIP_RUNTIME: 1}
    assert summed.skipped.lines[SKIP_RUNTIME] == (4,)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        # Two summaries of one job: still a duplicate job number.
        (
            (line(1, 0, 0, 5, 1), line(2, 0, 0, 5, 1), line(1, 3, 0, 5, 1)),
            "t.swf:5: duplicate job number 1 (first on line 3)",
        ),
        (
            (
                line(9, 0, 0, 5, 1, status=2),
                line(9, 0, 0, 5, 1, status=1),
                line(9, 0, 0, 5, 1, status=5),
            ),
            "t.swf:5: duplicate job number 9 (first on line 4)",
        ),
    ],
)
def test_true_duplicates_are_still_refused(
    tmp_path: Path, lines: tuple[str, ...], message: str
) -> None:
    path = swf(tmp_path, *lines)
    assert refusal(read_swf, path).endswith(message)
    result = run("info", path)
    assert result.exit_code == 2
    assert result.output.strip().endswith(message)
    assert "Traceback" not in result.output


def test_fold_leaves_files_without_repeats_untouched() -> None:
    # The common case costs one numpy.unique: the very same table comes back.
    table = np.array([[1.0] + [0.0] * 17, [2.0] + [0.0] * 17])
    numbers = [1, 2]
    out, out_numbers, report = _fold_partial(Path("x"), table, numbers, "summary")
    assert out is table and out_numbers is numbers and report == FoldReport()


def test_info_and_simulate_read_partial_lines(tmp_path: Path) -> None:
    path = swf(tmp_path, *CHECKPOINTED)
    result = run("info", path, "--wide")  # each row on one line
    assert result.exit_code == 0, result.output
    assert re.search(
        r"partial executions\s+│ 3 partial-execution lines folded into 1 jobs "
        r"\(summary run time\)",
        result.output,
    )
    summed = run("info", path, "--partial-runtime", "sum", "--wide")
    assert "folded into 1 jobs (run times summed)" in summed.output
    simulated = run("simulate", path, "-p", "fcfs")
    assert simulated.exit_code == 0, simulated.output


# --------------------------------------------------------------------------
# Status filter


def test_parse_statuses() -> None:
    assert parse_statuses("completed,failed") == {1, 0}
    assert parse_statuses(" Cancelled , canceled ") == {5}
    assert parse_statuses("partial,partial-completed,partial-failed") == {2, 3, 4}
    assert parse_statuses("all") == frozenset(STATUS_CODES.values())
    with pytest.raises(ValueError, match=r"unknown status 'done'; expected names"):
        parse_statuses("completed,done")
    with pytest.raises(ValueError, match="no status given"):
        parse_statuses(" , ")


def test_status_filter_in_the_reader(tmp_path: Path) -> None:
    path = swf(
        tmp_path,
        line(1, 0, 0, 5, 1, status=1),
        line(2, 1, 0, 5, 1, status=0),
        line(3, 2, 0, 5, 1, status=5),
        line(4, 3, 0, 5, 1, status=-1),
        line(5, 4, 0, 5, 0, status=5),  # no size: counted once, under status
    )
    everything = read_swf(path)
    assert [j.id for j in everything.instance.jobs] == [1, 2, 3, 4]
    assert everything.statuses == {-1: 1, 0: 1, 1: 1, 5: 2}
    done = read_swf(path, status={1, 0})
    assert [j.id for j in done.instance.jobs] == [1, 2]
    assert done.skipped.counts == {SKIP_STATUS: 3}
    assert done.skipped.lines[SKIP_STATUS] == (5, 6, 7)
    assert [j.id for j in read_swf(path, status={-1}).instance.jobs] == [4]
    cancelled = read_swf(path, status={5})
    assert cancelled.skipped.counts == {SKIP_STATUS: 3, SKIP_SIZE: 1}


def test_status_option_on_the_command_line(tmp_path: Path) -> None:
    path = swf(tmp_path, line(1, 0, 0, 5, 1, status=1), line(2, 1, 0, 5, 1, status=5))
    result = run("info", path, "--status", "completed")
    assert result.exit_code == 0, result.output
    assert "skipped 1 of 2 job records (1 status not selected)" in result.output
    assert re.search(r"cancelled\s+│\s+5 │\s+1 │\s+0 │", result.output)
    bad = run("simulate", path, "--status", "finished")
    assert bad.exit_code == 2
    assert "Invalid value for '--status': unknown status 'finished'" in bad.output
    assert "Traceback" not in bad.output


def test_status_filter_on_a_json_instance(tmp_path: Path) -> None:
    instance = read_native(INSTANCES / "kth_20.json").instance
    statuses = [j.status for j in instance.jobs]
    assert 0 in statuses and 1 in statuses
    path = tmp_path / "i.json"
    write_native(instance, path)
    result = run("info", path, "--status", "failed")
    assert result.exit_code == 0, result.output
    failed = statuses.count(0)
    assert re.search(rf"│ jobs\s+│ {failed}\s+│", result.output)
    assert f"skipped {20 - failed} of 20 job records (" in result.output


def test_llnl_cancelled_jobs_are_kept_by_default_and_can_be_filtered() -> None:
    path = trace_path("LLNL-Atlas-2006-2.1-cln.swf")
    # Today's behaviour, kept as the default: every status. 11,432 cancelled
    # lines, 4,533 of them without processors (skipped), leave 6,899
    # cancelled jobs in the instance (an awk count over field 11 agrees).
    default = read_swf(path)
    assert default.statuses == {0: 10_431, 1: 21_915, 5: 11_432}
    assert sum(j.status == 5 for j in default.instance.jobs) == 6_899
    done = read_swf(path, status=parse_statuses("completed,failed"))
    assert len(done.instance.jobs) == 39_207 - 6_899
    assert not any(j.status == 5 for j in done.instance.jobs)
    assert done.skipped.counts[SKIP_STATUS] == 11_432


# --------------------------------------------------------------------------
# Estimates falling back to run times


def test_missing_estimates_are_counted_and_announced(tmp_path: Path) -> None:
    path = swf(
        tmp_path,
        line(1, 0, 0, 5, 1, estimate=-1),
        line(2, 1, 0, 5, 1, estimate=60),
        line(3, 2, 0, 5, 1, estimate=0),
    )
    trace = read_swf(path)
    assert trace.estimates_missing == 2
    assert read_swf(path, estimate_rule="runtime").estimates_missing == 0
    assert trace.estimate_note("t.swf") == (
        "t.swf: estimates missing for 2 of 3 jobs (SWF field 9): their run time "
        "is used, so backfilling policies such as EASY know it exactly; see "
        "'optsched info t.swf'"
    )
    result = run("simulate", path, "-p", "easy")
    assert result.exit_code == 0, result.output
    notes = [x for x in result.output.splitlines() if x.startswith("optsched: note:")]
    assert len(notes) == 1 and "estimates missing for 2 of 3 jobs" in notes[0]
    info = run("info", path)
    assert re.search(r"estimates missing\s+│ 2 jobs, run time used", info.output)


def test_no_estimate_note_when_every_estimate_is_known(tmp_path: Path) -> None:
    result = run("info", swf(tmp_path, line(1, 0, 0, 5, 1)))
    assert result.exit_code == 0
    assert "optsched: note:" not in result.output
    assert "estimates missing" not in result.output


def test_summary_after_its_parts_keeps_the_summary_place(tmp_path: Path) -> None:
    # Job 2's parts come first, its summary after job 3: the job sits at the
    # summary's place (file order) and is reported at the summary's line.
    path = swf(
        tmp_path,
        line(2, 5, 10, 10, 0, status=2),
        line(2, 5, 30, 20, 0, status=3),
        line(3, 6, 0, 12, 1),
        line(2, 5, 10, 40, 0, status=1),
    )
    trace = read_swf(path)
    assert trace.records == 2 and [j.id for j in trace.instance.jobs] == [3]
    assert trace.skipped.lines[SKIP_SIZE] == (6,)


def test_read_trace_allocation_override_keeps_the_reports(tmp_path: Path) -> None:
    from optsched.io import read_trace

    path = swf(tmp_path, *CHECKPOINTED[:5], line(3, 8, 0, 12, 1, estimate=-1))
    trace = read_trace(path, allocation="contiguous")
    assert trace.instance.machine.allocation == "contiguous"
    assert trace.estimates_missing == 1
    assert trace.folded.jobs == 1 and trace.statuses == {1: 3}


def _reference_fold(lines: list[list[int]], rule: str) -> dict[int, tuple[int, ...]]:
    """The module docstring's rules, one job at a time (slow and plain)."""
    by_job: dict[int, list[list[int]]] = {}
    for fields in lines:
        by_job.setdefault(fields[0], []).append(fields)
    out = {}
    for job, rows in by_job.items():
        parts = [r for r in rows if r[10] in (2, 3, 4)]
        summary = [r for r in rows if r[10] not in (2, 3, 4)]
        runs = [r[3] for r in parts]
        total = -1 if any(x < 0 for x in runs) else sum(runs)
        if summary:
            row = summary[0]
            run = total if rule == "sum" and parts else row[3]
            out[job] = (row[1], row[2], run, row[10])
        else:
            submit = min(r[1] for r in parts)
            wait = min(r[1] + r[2] for r in parts) - submit
            if any(r[2] < 0 for r in parts):
                wait = -1
            out[job] = (submit, wait, total, parts[-1][10])
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 6),  # job number
            st.integers(0, 50),  # submit
            st.integers(-1, 30),  # wait
            st.integers(-1, 40),  # run time
            st.sampled_from([2, 3, 4, 2, 3, 4, 1]),  # status, partial mostly
        ),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from(["summary", "sum"]),
)
def test_vectorised_fold_matches_the_rules(
    raw: list[tuple[int, int, int, int, int]], rule: str
) -> None:
    lines: list[list[int]] = []
    for job, submit, wait, run, status in raw:
        if status == 1 and any(f[0] == job and f[10] == 1 for f in lines):
            continue  # a second summary is an error, tested elsewhere
        lines.append([job, submit, wait, run, 1, -1, -1, 1, 100, -1, status]
                     + [-1] * 7)  # fmt: skip
    text = HEADER + "\n".join(" ".join(map(str, f)) for f in lines) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "h.swf"
        path.write_text(text)
        trace = read_swf(path, partial=rule)
    expected = _reference_fold(lines, rule)
    kept = {
        j.id: (j.release, -1 if j.wait is None else j.wait, j.runtime, j.status)
        for j in trace.instance.jobs
    }
    assert trace.records == len(expected)
    for job, value in expected.items():
        if value[0] >= 0 and value[2] >= 0:
            assert kept[job] == value
        else:
            assert job not in kept


def test_read_trace_processor_override_keeps_the_reports(tmp_path: Path) -> None:
    """The --processors override rebuilt the trace field by field and lost
    the reports added later; like the allocation override, it keeps them."""
    import json

    from optsched.io import read_trace, write_batsim_workload

    path = tmp_path / "w.json"
    write_batsim_workload(read_trace(INSTANCES / "kth_20.json").instance, path)
    workload = json.loads(path.read_text())
    workload["jobs"][0]["walltime"] = -1  # no estimate: the run time is used
    path.write_text(json.dumps(workload))
    plain = read_trace(path)
    wider = read_trace(path, processors=200)
    assert plain.estimates_missing == 1
    assert wider.instance.processors == 200
    assert (wider.records, wider.estimates_missing) == (plain.records, 1)
