"""Trace windows: selection, rebasing, recorded initial state, packing, errors.

Most tests use tests/data/swf/recorded.swf, a 10-processor trace whose
recorded schedule (start = submit + wait) is listed in its header:

    job  submit  recorded run  procs
     1      0     [0, 100)       4
     2     10     [15, 65)       3
     3     20     [50, 60)       2
     4     30     [70, 110)      5
     5     50     [50, 70)       1
     6     50     [65, 70)       2
     7     60     [110, 140)     6
     8     70     [70, 80)       1

The file lists job 4 before job 3 and job 6 before job 5, so submit order is
1, 2, 3, 4, 6, 5, 7, 8 (ties keep file order).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import recorded_schedule
from support.paths import DATA, swf_job, trace_path, write_swf

from optsched.check import check_schedule
from optsched.errors import InputError
from optsched.instance import BusyBlock, Instance, Job, Machine, Source, Window
from optsched.io.swf import read_swf
from optsched.schedule import Placement
from optsched.trace import Trace
from optsched.windows.selection import WindowRule, WindowSpec, select_windows
from optsched.windows.window import cut_window, wants_window

RECORDED = DATA / "swf" / "recorded.swf"


@pytest.fixture
def trace() -> Trace:
    return read_swf(RECORDED)


def _releases(instance: Instance) -> list[tuple[int, int]]:
    return [(j.id, j.release) for j in instance.jobs]


# --------------------------------------------------------------------------
# Selection and rebasing


def test_position_window(trace: Trace) -> None:
    window = cut_window(trace, first_job=2, jobs=4)
    assert _releases(window) == [(3, 0), (4, 10), (6, 30), (5, 30)]
    assert window.machine == trace.instance.machine
    assert window.name == "recorded_jobs2-5"
    assert window.source == Source(
        "recorded.swf",
        trace.instance.source.sha256,
        "swf",
        Window(first_job=2, jobs=4, shift=20, initial_state="none"),
    )
    # Everything but the release is the job of the trace.
    for job in window.jobs:
        assert job.replace(release=job.release + 20) == trace.instance.job(job.id)


def test_position_defaults(trace: Trace) -> None:
    assert [j.id for j in cut_window(trace, jobs=3).jobs] == [1, 2, 3]
    tail = cut_window(trace, first_job=5)
    assert _releases(tail) == [(5, 0), (7, 10), (8, 20)]
    assert tail.source.window == Window(first_job=5, jobs=3, shift=50)


def test_time_window(trace: Trace) -> None:
    window = cut_window(trace, start=45, end=70)
    # [45, 70): jobs 6, 5 (50) and 7 (60); job 8 (70) is outside.
    assert _releases(window) == [(6, 5), (5, 5), (7, 15)]
    assert window.source.window == Window(start=45, end=70, shift=45)
    assert window.name == "recorded_t45-70"


def test_time_window_open_ends(trace: Trace) -> None:
    head = cut_window(trace, end=30)
    assert _releases(head) == [(1, 0), (2, 10), (3, 20)]
    assert head.source.window == Window(end=30, shift=0)
    tail = cut_window(trace, start=55)
    assert _releases(tail) == [(7, 5), (8, 15)]
    assert tail.source.window == Window(start=55, shift=55)


def test_window_of_unsorted_instance_keeps_ids() -> None:
    jobs = [Job(30, 500, 1, 5), Job(10, 100, 2, 5), Job(20, 100, 1, 5)]
    instance = Instance(Machine(4), tuple(jobs), name="x")
    window = cut_window(instance, first_job=0, jobs=2)
    assert _releases(window) == [(10, 0), (20, 0)]


def test_wants_window() -> None:
    nothing = dict(first_job=None, jobs=None, start=None, end=None)
    assert not wants_window(**nothing, initial_state="none")
    assert wants_window(**nothing, initial_state="recorded")
    for key in nothing:
        assert wants_window(**{**nothing, key: 0}, initial_state="none")


# --------------------------------------------------------------------------
# Recorded initial state


def test_recorded_position_window(trace: Trace) -> None:
    window = cut_window(trace, first_job=4, jobs=3, initial_state="recorded")
    # Window start T = 50 (job 6). Running at 50: job 1 [0,100), job 2
    # [15,65), job 3 [50,60); job 4 (starts at 70) was still queued.
    assert _releases(window) == [(6, 0), (5, 0), (7, 10)]
    assert window.machine.unavailable == (
        BusyBlock(0, 50, 4, label="job 1"),
        BusyBlock(0, 15, 3, label="job 2"),
        BusyBlock(0, 10, 2, label="job 3"),
    )
    assert window.source.window == Window(
        first_job=4, jobs=3, shift=50, initial_state="recorded"
    )
    assert window.name == "recorded_jobs4-6_recorded"


def test_recorded_time_window(trace: Trace) -> None:
    window = cut_window(trace, start=55, end=75, initial_state="recorded")
    # T = 55: job 1 (to 100), job 2 (to 65), job 3 (to 60), job 5 (to 70);
    # job 6 starts at 65 and job 4 at 70: queued, not blocks.
    assert _releases(window) == [(7, 5), (8, 15)]
    assert sorted(window.machine.unavailable, key=lambda b: b.label) == [
        BusyBlock(0, 45, 4, label="job 1"),
        BusyBlock(0, 10, 3, label="job 2"),
        BusyBlock(0, 5, 2, label="job 3"),
        BusyBlock(0, 15, 1, label="job 5"),
    ]


def test_recorded_schedule_fits_window_with_blocks(trace: Trace) -> None:
    # The trace's own schedule of the window jobs, rebased, is feasible next
    # to the busy blocks: rebasing of jobs and blocks agree.
    window = cut_window(trace, start=55, end=75, initial_state="recorded")
    schedule = recorded_schedule(window)
    assert schedule[7] == Placement(55, 85) and schedule[8] == Placement(15, 25)
    assert check_schedule(window, schedule) == []


@pytest.mark.parametrize("first", [0, 500, 1_000, 1_700, 2_500, 3_100])
def test_hpc2n_recorded_windows_are_consistent(first: int) -> None:
    # HPC2N's recorded schedule never uses more than its 240 processors, so
    # every window's recorded schedule must pass the checker beside its
    # busy blocks, and each block must be a job running at the window start.
    trace = read_swf(trace_path("hpc2n.swf"))
    window = cut_window(trace, first_job=first, jobs=40, initial_state="recorded")
    assert check_schedule(window, recorded_schedule(window)) == []
    t0 = window.source.window.shift  # type: ignore[union-attr]
    running = {
        f"job {j.id}": j.release + j.wait + j.runtime - t0  # type: ignore[operator]
        for j in sorted(trace.instance.jobs, key=lambda j: j.release)[:first]
        if j.release + j.wait <= t0 < j.release + j.wait + j.runtime  # type: ignore[operator]
    }
    assert {b.label: b.end for b in window.machine.unavailable} == running


def test_recorded_contiguous_first_fit(trace: Trace) -> None:
    contiguous = trace.instance.replace(
        machine=trace.instance.machine.with_allocation("contiguous")
    )
    window = cut_window(contiguous, start=55, end=75, initial_state="recorded")
    # Longest-running block lowest: job 1 (45), job 5 (15), job 2 (10), job 3 (5).
    assert window.machine.unavailable == (
        BusyBlock(0, 45, 4, 0, "job 1"),
        BusyBlock(0, 15, 1, 4, "job 5"),
        BusyBlock(0, 10, 3, 5, "job 2"),
        BusyBlock(0, 5, 2, 8, "job 3"),
    )


def test_recorded_packing_respects_existing_blocks() -> None:
    machine = Machine(10, "contiguous", (BusyBlock(0, 1000, 2, 4, "downtime"),))
    jobs = [Job(1, 0, 3, 100, wait=0), Job(2, 5, 4, 100, wait=0), Job(3, 50, 1, 5)]
    window = cut_window(
        Instance(machine, tuple(jobs), "x"),
        first_job=2,
        jobs=1,
        initial_state="recorded",
    )
    # Free ranges at the window start: [0, 4) and [6, 10). Job 2 (ends 55
    # after the window start, 4 procs) goes first into [0, 4); job 1 (3
    # procs) then fits only at 6.
    assert window.machine.unavailable == (
        BusyBlock(0, 950, 2, 4, "downtime"),
        BusyBlock(0, 55, 4, 0, "job 2"),
        BusyBlock(0, 50, 3, 6, "job 1"),
    )


def test_recorded_packing_failure_is_clear() -> None:
    machine = Machine(10, "contiguous", (BusyBlock(0, 1000, 2, 4, "downtime"),))
    jobs = [Job(1, 0, 5, 100, wait=0), Job(3, 50, 1, 5)]
    instance = Instance(machine, tuple(jobs), "x", Source("x.swf"))
    with pytest.raises(InputError) as caught:
        cut_window(instance, first_job=1, initial_state="recorded")
    assert str(caught.value) == (
        "x.swf: cannot place busy block job 1 (5 processors) on a contiguous "
        "range of the 10-processor machine"
    )


def test_recorded_over_capacity_is_clear() -> None:
    trace = read_swf(RECORDED, processors=6)
    with pytest.raises(InputError) as caught:
        cut_window(trace, start=55, initial_state="recorded")
    assert str(caught.value) == (
        "recorded.swf: the recorded schedule has 10 processors busy at the window "
        "start (trace time 55), more than the machine's 6"
    )


def _recorded_without_waits(path: Path, unknown: Callable[[str], bool]) -> Trace:
    """:data:`RECORDED` with no recorded wait (SWF field 3 set to -1) on the
    lines ``unknown`` picks, written to ``path`` and read back."""
    text = RECORDED.read_text().splitlines()
    lines = [_set_field(line, 2, "-1") if unknown(line) else line for line in text]
    path.write_text("\n".join(lines))
    return read_swf(path)


def test_recorded_without_any_wait(tmp_path: Path) -> None:
    trace = _recorded_without_waits(
        tmp_path / "nowait.swf", lambda line: line[0] != ";"
    )
    with pytest.raises(InputError) as caught:
        cut_window(trace, first_job=4, initial_state="recorded")
    assert str(caught.value) == (
        "nowait.swf: --initial-state recorded needs recorded wait times, but the "
        "trace has none (SWF field 3 is -1 for every job)"
    )
    # No job before the window: nothing to know, no error, no blocks.
    first = cut_window(trace, first_job=0, jobs=2, initial_state="recorded")
    assert first.machine.unavailable == ()


def test_recorded_with_one_wait_missing(tmp_path: Path) -> None:
    trace = _recorded_without_waits(
        tmp_path / "onewait.swf", lambda line: line.split()[0] == "2"
    )
    with pytest.raises(InputError) as caught:
        cut_window(trace, first_job=4, initial_state="recorded")
    assert str(caught.value) == (
        "onewait.swf: --initial-state recorded: job 2 (before the window) has no "
        "recorded wait time (SWF field 3 is -1), so whether it runs at the window "
        "start is unknown (1 such jobs before the window)"
    )
    ok = cut_window(trace, first_job=1, jobs=2, initial_state="recorded")
    assert ok.machine.unavailable == (BusyBlock(0, 90, 4, label="job 1"),)


def _set_field(line: str, index: int, value: str) -> str:
    fields = line.split()
    fields[index] = value
    return " ".join(fields)


def test_lublin_has_no_waits() -> None:
    trace = read_swf(trace_path("lublin_256.swf"))
    with pytest.raises(InputError, match="needs recorded wait times"):
        cut_window(trace, first_job=100, jobs=10, initial_state="recorded")


# --------------------------------------------------------------------------
# Existing busy blocks and nested windows


def test_existing_blocks_are_rebased() -> None:
    blocks = (
        BusyBlock(0, 40, 1, label="gone"),
        BusyBlock(45, 80, 1, label="clipped"),
        BusyBlock(60, 70, 1, label="later"),
    )
    instance = Instance(Machine(4, "any", blocks), (Job(1, 50, 1, 5),), "x")
    window = cut_window(instance, first_job=0)
    assert window.machine.unavailable == (
        BusyBlock(0, 30, 1, label="clipped"),
        BusyBlock(10, 20, 1, label="later"),
    )


def test_nested_position_windows_compose(trace: Trace) -> None:
    outer = cut_window(trace, first_job=2, jobs=5)
    inner = cut_window(outer, first_job=1, jobs=2)
    direct = cut_window(trace, first_job=3, jobs=2)
    assert inner.jobs == direct.jobs
    assert inner.source == direct.source
    assert direct.source.window == Window(first_job=3, jobs=2, shift=30)


def test_nested_time_windows_compose(trace: Trace) -> None:
    outer = cut_window(trace, start=20, end=75)
    inner = cut_window(outer, start=10, end=40)
    direct = cut_window(trace, start=30, end=60)
    assert inner.jobs == direct.jobs
    assert inner.source == direct.source


def test_nested_mixed_windows_refused(trace: Trace) -> None:
    outer = cut_window(trace, start=20, end=75)
    with pytest.raises(ValueError, match="cannot cut a window by position from a"):
        cut_window(outer, first_job=1, jobs=2)
    recorded = cut_window(trace, first_job=2, initial_state="recorded")
    with pytest.raises(ValueError, match="with a recorded initial state from an"):
        cut_window(recorded, first_job=1, jobs=2)


# --------------------------------------------------------------------------
# Bad option combinations and empty windows: one-line messages.

OPTION_ERRORS = [
    (
        dict(first_job=1, start=5),
        "choose a window by position (--first-job/--jobs) or by submit time "
        "(--start/--end), not both",
    ),
    (
        dict(jobs=3, end=50),
        "choose a window by position (--first-job/--jobs) or by submit time "
        "(--start/--end), not both",
    ),
    (
        dict(initial_state="recorded"),
        "a window needs --first-job/--jobs or --start/--end (--initial-state "
        "recorded alone selects no jobs)",
    ),
    (dict(start=50, end=50), "window end 50 must be after start 50"),
    (dict(jobs=0), "window jobs 0 must be at least 1"),
    (dict(first_job=-1), "window first job -1 is negative"),
    (
        dict(first_job=0, initial_state="later"),
        "initial state 'later' is not one of none, recorded",
    ),
]


@pytest.mark.parametrize(("options", "message"), OPTION_ERRORS)
def test_bad_options(trace: Trace, options: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        cut_window(trace, **options)
    assert str(caught.value) == message


DATA_ERRORS = [
    (
        dict(first_job=8),
        "recorded.swf: window first job 8 is past the last job: the trace has 8 "
        "jobs (indices 0..7) after skipped jobs are removed",
    ),
    (
        dict(first_job=6, jobs=5),
        "recorded.swf: window asks for 5 jobs from index 6, but only 2 jobs follow "
        "it (8 in the trace after skipped jobs are removed)",
    ),
    (
        dict(start=100),
        "recorded.swf: window [100, +inf) is empty: no job is submitted in it "
        "(the trace's jobs are submitted in [0, 70])",
    ),
    (
        dict(start=21, end=30),
        "recorded.swf: window [21, 30) is empty: no job is submitted in it "
        "(the trace's jobs are submitted in [0, 70])",
    ),
]


def test_a_time_rule_selecting_nothing_names_the_trace_span(trace: Trace) -> None:
    rule = WindowRule(kind="time", start=80, end=200, step=10)
    with pytest.raises(ValueError) as caught:
        select_windows(trace, rule)
    assert str(caught.value) == (
        "no job is submitted in [80, 200) (the trace's jobs are submitted in [0, 70])"
    )


@pytest.mark.parametrize(("options", "message"), DATA_ERRORS)
def test_empty_or_out_of_range_windows(
    trace: Trace, options: dict, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        cut_window(trace, **options)
    assert str(caught.value) == message


def test_window_keeps_trace_untouched(trace: Trace) -> None:
    before = dataclasses.replace(trace)
    cut_window(trace, first_job=4, jobs=3, initial_state="recorded")
    assert trace == before


# --------------------------------------------------------------------------
# Property: on any trace whose recorded schedule is feasible, every window's
# recorded schedule is feasible beside its recorded busy blocks, and the
# window holds exactly the selected jobs.


def _usage(placed: list[tuple[int, int, int]], t: int) -> int:
    return sum(size for start, end, size in placed if start <= t < end)


def _greedy_start(placed: list[tuple[int, int, int]], job: Job, m: int) -> int:
    # Earliest start >= release where the job fits for its whole run; usage
    # only rises at starts, so checking the start and later starts suffices.
    candidates = sorted({job.release} | {e for _, e, _ in placed if e > job.release})
    for t in candidates:
        points = [t] + [s for s, _, _ in placed if t < s < t + job.runtime]
        if all(_usage(placed, u) + job.size <= m for u in points):
            return t
    raise AssertionError("unreachable: the machine empties eventually")


@st.composite
def _recorded_traces(draw: st.DrawFn) -> Instance:
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 10))
    raw = [
        (draw(st.integers(0, 30)), draw(st.integers(1, m)), draw(st.integers(0, 15)))
        for _ in range(n)
    ]
    placed: list[tuple[int, int, int]] = []
    jobs = []
    for i, (release, size, runtime) in enumerate(raw):
        job = Job(i + 1, release, size, runtime)
        start = _greedy_start(placed, job, m) if runtime > 0 else release
        placed.append((start, start + runtime, size))
        jobs.append(job.replace(wait=start - release))
    return Instance(Machine(m), tuple(jobs), "random", Source("random.swf"))


@settings(max_examples=150, deadline=None)
@given(_recorded_traces(), st.data())
def test_recorded_windows_feasible(instance: Instance, data: st.DataObject) -> None:
    n = len(instance.jobs)
    if data.draw(st.booleans()):
        first = data.draw(st.integers(0, n - 1))
        count = data.draw(st.integers(1, n - first))
        window = cut_window(
            instance, first_job=first, jobs=count, initial_state="recorded"
        )
        ordered = sorted(instance.jobs, key=lambda j: j.release)
        assert [j.id for j in window.jobs] == [j.id for j in ordered[first:][:count]]
        t0 = ordered[first].release
        before = ordered[:first]
    else:
        t0 = data.draw(st.integers(0, 30))
        span = data.draw(st.integers(1, 30))
        chosen = [j for j in instance.jobs if t0 <= j.release < t0 + span]
        if not chosen:
            with pytest.raises(InputError, match="is empty"):
                cut_window(instance, start=t0, end=t0 + span, initial_state="recorded")
            return
        window = cut_window(instance, start=t0, end=t0 + span, initial_state="recorded")
        assert sorted(j.id for j in window.jobs) == sorted(j.id for j in chosen)
        before = [j for j in instance.jobs if j.release < t0]
    running = {
        f"job {j.id}": (j.release + j.wait + j.runtime - t0, j.size)  # type: ignore[operator]
        for j in before
        if j.release + j.wait <= t0 < j.release + j.wait + j.runtime  # type: ignore[operator]
    }
    blocks = {b.label: (b.end, b.size) for b in window.machine.unavailable}
    assert blocks == running
    assert all(b.start == 0 for b in window.machine.unavailable)
    assert window.source.window is not None and window.source.window.shift == t0
    for job in window.jobs:
        assert job.release == instance.job(job.id).release - t0
    assert check_schedule(window, recorded_schedule(window)) == []


# --------------------------------------------------------------------------
# prepare(): the one preparation of the commands and the suites
# --------------------------------------------------------------------------

DAY = 86400

PREPARE_SITE = (
    '[site]\nname = "p"\nprocessors = 8\ninteractive_queues = [0]\n'
    "detect_holidays = true\n"
    '[[batch]]\ndays = ["mon", "tue", "wed", "thu", "fri"]\n'
    'from = "08:00"\nto = "20:00"\nprocessors = 4\nmax_size = 2\n'
)
"""Weekdays 08:00-20:00: 4 of the site's 8 processors, jobs of at most 2;
queue 0 is interactive, and a weekday without an interactive start is a
holiday."""


def _site_and_chained_trace(folder: Path) -> tuple[Path, Path]:
    """A 4-processor trace starting on a Monday 00:00: two interactive jobs
    (queue 0, Monday and Thursday), batch jobs on the Wednesday between, and
    a chain (job 5 follows job 4); and a site written for 8 processors."""
    lines = [
        swf_job(1, 10 * 3600, 600, 1, queue=0),
        swf_job(2, 2 * DAY + 9 * 3600, 600, 4, wait=30),
        swf_job(3, 2 * DAY + 9 * 3600 + 20, 300, 2),
        swf_job(4, 2 * DAY + 10 * 3600, 900, 3, wait=60),
        swf_job(5, 2 * DAY + 10 * 3600 + 10, 200, 1, preceding=4, think=5),
        swf_job(6, 3 * DAY + 9 * 3600, 600, 1, queue=0),
    ]
    site = folder / "site.toml"
    site.write_text(PREPARE_SITE)
    return write_swf(folder / "t.swf", lines, 4), site


def test_prepare_order_gives_what_both_old_orders_gave(tmp_path: Path) -> None:
    # The command line applied the speed-up model before the site, the
    # arrival mode and --no-chains; suites applied it after the site and the
    # arrival mode. prepare() applies it after all three: the model reads
    # only the job's size, run time and the machine size, which those steps
    # leave alone, so both old orders give the instance prepare() gives.
    from optsched.moldable.speedup import parse_model
    from optsched.site.chains import without_chains
    from optsched.site.files import apply_site, read_site
    from optsched.windows.prepare import Preparation, prepare, requested_window

    trace_file, site = _site_and_chained_trace(tmp_path)
    model = parse_model("linear:max=4")
    window = requested_window(first_job=0, jobs=6)
    chosen = Preparation(
        site=site, arrivals="window-start", chains=False, moldable=model, malleable=True
    )
    prepared = prepare(trace_file, chosen, window, notes=False)
    # The site left the interactive jobs out and found Tuesday and Wednesday
    # holidays (days 1 and 2: no interactive start between Monday and
    # Thursday), from the recorded submit times.
    assert [j.id for j in prepared.jobs] == [2, 3, 4, 5]
    assert prepared.machine.calendar is not None
    assert prepared.machine.calendar.holidays == frozenset({1, 2})
    # All released at the first submit left (job 2's; the window starts at
    # job 1's, Monday 10:00).
    assert {j.release for j in prepared.jobs} == {2 * DAY - 3600}
    assert all(j.malleable and j.moldable for j in prepared.jobs)
    assert prepared.job(5).preceding_job is None

    trace = read_swf(trace_file)

    def site_of(instance: Instance) -> Instance:
        return apply_site(instance, read_site(site), trace.header)[0]

    def window_start(instance: Instance) -> Instance:
        first = min(j.release for j in instance.jobs)
        return instance.with_jobs(j.replace(release=first) for j in instance.jobs)

    def unchained(instance: Instance) -> Instance:
        return instance.with_jobs(without_chains(instance.jobs))

    def moldable(instance: Instance) -> Instance:
        return model.apply(instance, malleable=True)

    command = unchained(window_start(site_of(moldable(window.cut(trace)))))
    suite = unchained(moldable(window_start(site_of(window.cut(trace)))))
    assert command == prepared == suite


def test_prepare_reads_a_file_as_the_commands_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from optsched.cli.options import load_trace_and_instance
    from optsched.windows.prepare import WHOLE, Preparation, prepare

    trace_file, site = _site_and_chained_trace(tmp_path)
    trace, loaded = load_trace_and_instance(
        str(trace_file), site=str(site), no_chains=True, first_job=0, n_jobs=4
    )
    command_notes = capsys.readouterr().err
    assert "optsched: note: site p: 8 processors scaled to the machine's 4" in (
        command_notes
    )
    chosen = Preparation(site=site, chains=False)
    window = WindowSpec(first_job=0, jobs=4)
    assert prepare(trace_file, chosen, window) == loaded
    assert capsys.readouterr().err == command_notes
    # A trace already read skips the reading; notes=False prints nothing.
    assert prepare(trace, chosen, window, notes=False) == loaded
    assert capsys.readouterr().err == ""
    assert prepare(trace_file) == read_swf(trace_file).instance
    assert prepare(trace, window=WHOLE, notes=False) == trace.instance


def test_preparation_refuses_options_that_cannot_apply(tmp_path: Path) -> None:
    from optsched.topology.machines import MachineShape
    from optsched.windows.prepare import (
        WHOLE,
        OptionError,
        Preparation,
        prepare,
        requested_window,
    )

    assert requested_window() == WHOLE
    assert requested_window(initial_state="recorded") == WindowSpec(
        initial_state="recorded"
    )
    with pytest.raises(OptionError, match="arrivals 'soon' is not one of"):
        Preparation(arrivals="soon")
    with pytest.raises(OptionError, match="partial runtime 'all' is not one of"):
        Preparation(partial_runtime="all")
    trace_file, _ = _site_and_chained_trace(tmp_path)
    with pytest.raises(OptionError, match="--malleable needs --moldable MODEL"):
        prepare(trace_file, Preparation(malleable=True), notes=False)
    three_nodes = Preparation(machine=MachineShape.parse("nodes=3x1"))
    with pytest.raises(OptionError, match="3 nodes x 1 processors make 3, not the"):
        prepare(trace_file, three_nodes, notes=False)
