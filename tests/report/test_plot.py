"""Gantt charts, gap charts and ``optsched plot gantt``.

Rectangles are found by their ``gid`` (``"job <id>"`` / ``"busy <label>"``)
and compared, coordinate by coordinate, with the hand-made schedules below.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Rectangle

from optsched.bench.store import COLUMN_NAMES, decode_rows, references
from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io.native import write_native
from optsched.io.schedules import schedule_file_jobs, write_schedule
from optsched.plot import gantt, job_colour, processor_runs
from optsched.plot.charts import (
    binding_bound_counts,
    binding_bounds,
    bounds_per_window,
    objective_axis_label,
    policy_colours,
    ratio_distribution,
    utilisation,
    utilisation_steps,
)
from optsched.plot.gantt import (
    AUTO_HOURS_MAX,
    AUTO_SECONDS_MAX,
    choose_time_unit,
    instance_from_schedule,
    shared_time_unit,
)
from optsched.schedule import Placement, ProcessorSet, Schedule

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def tiny() -> tuple[Instance, Schedule]:
    """8 processors, two busy blocks (counts: an ``any`` machine); job 3 runs
    on processors {4, 5, 7}: two rectangles."""
    machine = Machine(
        8,
        unavailable=(
            BusyBlock(0, 30, 2, label="job 900"),
            BusyBlock(0, 50, 1, label="job 901"),
        ),
    )
    jobs = (
        Job(1, 0, 3, 40),
        Job(2, 0, 2, 20),
        Job(3, 10, 3, 30),
        Job(4, 20, 2, 45),
        Job(5, 45, 7, 10),
    )
    schedule = Schedule(
        {
            1: Placement(0, 40, (0, 1, 2)),
            2: Placement(0, 20, (4, 5)),
            3: Placement(30, 60, (4, 5, 7)),
            4: Placement(40, 85, (0, 1)),
            5: Placement(85, 95, (0, 1, 2, 3, 4, 5, 6)),
        },
        producer="hand",
    )
    instance = Instance(machine, jobs, name="tiny")
    assert check_schedule(instance, schedule) == []
    return instance, schedule


@pytest.fixture
def ax() -> Axes:
    figure = Figure(figsize=(8, 4))
    return figure.subplots()


def rectangles(ax: Axes, prefix: str) -> list[Rectangle]:
    return [
        p
        for p in ax.patches
        if isinstance(p, Rectangle) and (p.get_gid() or "").startswith(prefix)
    ]


def legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def ydata(line: Line2D) -> list[float]:
    return np.asarray(line.get_ydata(), dtype=float).tolist()


def lines(collection: object) -> LineCollection:
    assert isinstance(collection, LineCollection)
    return collection


def box(patch: Rectangle) -> tuple[float, float, float, float]:
    return (patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height())


def test_processor_runs() -> None:
    assert processor_runs((0, 1, 2, 5, 7, 8)) == [(0, 3), (5, 1), (7, 2)]
    assert processor_runs([3]) == [(3, 1)]
    assert processor_runs(()) == []
    assert processor_runs((4, 2, 3)) == [(2, 3)]


def test_gantt_draws_one_rectangle_per_processor_run(ax: Axes) -> None:
    instance, schedule = tiny()
    assert gantt(instance, schedule, ax=ax) is ax
    jobs = rectangles(ax, "job ")
    assert len(jobs) == 6  # job 3 is split in two
    assert sorted((p.get_gid(), box(p)) for p in jobs) == sorted(
        [
            ("job 1", (0, 0, 40, 3)),
            ("job 2", (0, 4, 20, 2)),
            ("job 3", (30, 4, 30, 2)),
            ("job 3", (30, 7, 30, 1)),
            ("job 4", (40, 0, 45, 2)),
            ("job 5", (85, 0, 10, 7)),
        ]
    )
    busy = {p.get_gid(): box(p) for p in rectangles(ax, "busy ")}
    # Blocks without offsets are stacked in the band above the machine (gap
    # of 1 above m = 8, height 3 = their peak total size).
    assert busy == {"busy job 900": (0, 9, 30, 2), "busy job 901": (0, 11, 50, 1)}
    assert ax.get_ylim() == (0, 12)
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_ylabel() == "processor (m = 8)"
    assert ax.get_title() == "tiny — hand (5 jobs, C_max = 95 s)"
    labels = legend_texts(ax)
    assert labels[:3] == ["C_max = 95 s", "busy block", "job (colour by id)"]
    assert "without a" in labels[3]


def test_block_with_an_offset_sits_on_its_processors(ax: Axes) -> None:
    # Contiguous machine: blocks have offsets and no band is drawn.
    machine = Machine(4, "contiguous", (BusyBlock(0, 10, 2, 2, "down"),))
    instance = Instance(machine, (Job(1, 0, 2, 5),))
    gantt(instance, Schedule({1: Placement(0, 5, (0, 1))}), ax=ax)
    busy = {p.get_gid(): box(p) for p in rectangles(ax, "busy ")}
    assert busy == {"busy down": (0, 2, 10, 2)}
    assert ax.get_ylim() == (0, 4)


def test_busy_patches_are_hatched_grey(ax: Axes) -> None:
    gantt(*tiny(), ax=ax)
    for patch in rectangles(ax, "busy "):
        assert patch.get_hatch() == "///"
        assert matplotlib.colors.to_hex(patch.get_facecolor()) == "#d9d9d9"


def test_job_colour_is_the_same_in_two_charts() -> None:
    instance, schedule = tiny()
    other = Schedule(
        {
            j: Placement(p.start + 100, p.end + 100, p.processors)
            for j, p in schedule.placements.items()
        },
        producer="shifted",
    )
    figure = Figure()
    left, right = figure.subplots(1, 2)
    gantt(instance, schedule, ax=left)
    gantt(instance, other, ax=right)
    for job_id in schedule.placements:
        colours = {
            tuple(p.get_facecolor())
            for ax in (left, right)
            for p in rectangles(ax, f"job {job_id}")
            if p.get_gid() == f"job {job_id}"
        }
        assert colours == {job_colour(job_id)}


def test_job_colours_are_deterministic_and_neighbours_differ() -> None:
    assert job_colour(17) == job_colour(17) == job_colour(37)
    hues = [job_colour(i) for i in range(20)]
    assert len(set(hues)) == 20
    for i in range(100):
        assert job_colour(i) != job_colour(i + 1)


def test_labels_only_on_wide_rectangles(ax: Axes) -> None:
    instance = Instance(Machine(4), (Job(1, 0, 4, 1000), Job(2, 0, 1, 5)))
    schedule = Schedule(
        {1: Placement(0, 1000, (0, 1, 2, 3)), 2: Placement(1000, 1005, (0,))}
    )
    gantt(instance, schedule, ax=ax)
    assert [t.get_text() for t in ax.texts] == ["1"]


def test_placements_without_processors_are_laid_out(ax: Axes) -> None:
    instance, schedule = tiny()
    counted = Schedule(
        {j: Placement(p.start, p.end) for j, p in schedule.placements.items()},
        producer="counts",
    )
    gantt(instance, counted, ax=ax)
    jobs = rectangles(ax, "job ")
    # Lowest free indices, contiguous when possible, avoiding the block on 6-7.
    assert sorted((p.get_gid(), box(p)) for p in jobs) == sorted(
        [
            ("job 1", (0, 0, 40, 3)),
            ("job 2", (0, 3, 20, 2)),
            ("job 3", (30, 3, 30, 3)),
            ("job 4", (40, 0, 45, 2)),
            ("job 5", (85, 0, 10, 7)),
        ]
    )
    legend = " ".join(legend_texts(ax))
    assert "assigned for drawing" in legend


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    ax0, ay0, aw, ah = a
    bx0, by0, bw, bh = b
    return ax0 < bx0 + bw and bx0 < ax0 + aw and ay0 < by0 + bh and by0 < ay0 + ah


@st.composite
def feasible(draw: st.DrawFn) -> tuple[Instance, Schedule]:
    """A random instance and a greedy feasible schedule with processors."""
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 8))
    jobs = [
        Job(
            i,
            draw(st.integers(0, 20)),
            draw(st.integers(1, m)),
            draw(st.integers(1, 15)),
        )
        for i in range(n)
    ]
    taken: list[tuple[int, int, set[int]]] = []
    placements = {}
    for job in jobs:
        times = sorted({job.release} | {e for _, e, _ in taken if e > job.release})
        for t in times:
            busy = {
                p for s, e, ps in taken if s < t + job.runtime and t < e for p in ps
            }
            free = [p for p in range(m) if p not in busy]
            if len(free) >= job.size:
                chosen = set(draw(st.permutations(free))[: job.size])
                taken.append((t, t + job.runtime, chosen))
                placements[job.id] = Placement(t, t + job.runtime, tuple(chosen))
                break
    instance = Instance(Machine(m), tuple(jobs))
    schedule = Schedule(placements)
    assert check_schedule(instance, schedule) == []
    return instance, schedule


@settings(max_examples=25, deadline=None)
@given(feasible())
def test_gantt_rectangles_match_runs_and_never_overlap(
    case: tuple[Instance, Schedule],
) -> None:
    instance, schedule = case
    figure = Figure()
    ax = figure.subplots()
    gantt(instance, schedule, ax=ax)
    jobs = rectangles(ax, "job ")
    assert len(jobs) == sum(
        len(processor_runs(p.processors or ())) for p in schedule.placements.values()
    )
    assert sum(p.get_width() * p.get_height() for p in jobs) == sum(
        j.area for j in instance.jobs
    )
    # Without processors, the laid-out chart of a feasible schedule has no overlap.
    counted = Schedule(
        {j: Placement(p.start, p.end) for j, p in schedule.placements.items()}
    )
    ax = figure.subplots()
    gantt(instance, counted, ax=ax)
    boxes = [box(p) for p in rectangles(ax, "job ") if p.get_width() > 0]
    assert all(y + h <= instance.processors for _, y, _, h in boxes)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not _overlap(a, b)


def test_instance_from_schedule() -> None:
    _, schedule = tiny()
    rebuilt = instance_from_schedule(schedule, name="rebuilt")
    assert rebuilt.processors == 8  # highest index 7
    assert [(j.id, j.release, j.size, j.runtime) for j in rebuilt.jobs] == [
        (1, 0, 3, 40), (2, 0, 2, 20), (3, 30, 3, 30), (4, 40, 2, 45), (5, 85, 7, 10),
    ]  # fmt: skip
    assert check_schedule(rebuilt, schedule) == []
    counted = Schedule({1: Placement(0, 10), 2: Placement(5, 15)})
    rebuilt = instance_from_schedule(counted, sizes={1: 3, 2: 2}, releases={1: 0, 2: 1})
    assert rebuilt.processors == 5  # peak use 3 + 2 in [5, 10)
    assert [j.release for j in rebuilt.jobs] == [0, 1]
    with pytest.raises(ValueError, match="job 2: the schedule lists no processors"):
        instance_from_schedule(counted, sizes={1: 3})
    with pytest.raises(ValueError, match="too small"):
        instance_from_schedule(counted, sizes={1: 3, 2: 2}, processors=4)


def test_utilisation_steps_and_chart(ax: Axes) -> None:
    instance, schedule = tiny()
    times, jobs, busy = utilisation_steps(instance, schedule)
    assert times.tolist() == [0, 20, 30, 40, 50, 60, 85, 95]
    assert jobs.tolist() == [5, 3, 6, 5, 5, 2, 7, 0]
    assert busy.tolist() == [3, 3, 1, 1, 0, 0, 0, 0]
    utilisation(instance, schedule, ax=ax)
    line = ax.get_lines()[0]
    assert np.allclose(line.get_ydata(), jobs / 8)
    assert ax.get_ylabel() == "processors in use / m  (m = 8)"
    labels = legend_texts(ax)
    assert labels[0].startswith("hand (mean ")
    assert "busy blocks" in labels
    assert ax.get_xlabel() == "time (s)"  # a 95 s span


def test_utilisation_in_the_unit_of_the_gantt_chart() -> None:
    instance, schedule = tiny()
    figure = Figure()
    ax = figure.subplots()
    utilisation(instance, schedule, ax=ax, time_unit="min")
    assert ax.get_xlabel() == "time (min)"
    times, _, _ = utilisation_steps(instance, schedule)
    assert np.allclose(ax.get_lines()[0].get_xdata(), times / 60)
    with pytest.raises(ValueError, match="unknown time unit 'week'"):
        utilisation(instance, schedule, ax=figure.subplots(), time_unit="week")


def gap_frame() -> pd.DataFrame:
    """Policy rows of two windows, one with an unknown lower bound."""
    rows = [
        # window, index, policy, objective, value, lower, upper, low, high, optimal
        ("w0", 0, "easy", "cmax", 120.0, 100.0, 110.0, 120 / 110, 1.2, False),
        ("w0", 0, "fcfs", "cmax", 110.0, 100.0, 110.0, 1.0, 1.1, False),
        ("w1", 1, "easy", "cmax", 50.0, 50.0, 50.0, 1.0, 1.0, True),
        ("w1", 1, "fcfs", "cmax", 70.0, 50.0, 50.0, 1.4, 1.4, True),
        ("w0", 0, "easy", "wct:one", 900.0, None, 800.0, 900 / 800, math.inf, False),
        ("w0", 0, "fcfs", "wct:one", 800.0, None, 800.0, 1.0, math.inf, False),
    ]
    columns = [
        "window", "window_index", "name", "objective", "value", "lower", "upper",
        "ratio_low", "ratio_high", "optimal",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def test_ratio_distribution(ax: Axes) -> None:
    ratio_distribution(gap_frame(), ax=ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [
        "easy · cmax", "fcfs · cmax",
        "easy · wct:one (1 × ∞)", "fcfs · wct:one (1 × ∞)",
    ]  # fmt: skip
    # Each label in its policy's colour, the colour of its segments.
    colours = policy_colours(["easy", "fcfs"])
    assert [t.get_color() for t in ax.get_yticklabels()] == [
        colours["easy"], colours["fcfs"], colours["easy"], colours["fcfs"],
    ]  # fmt: skip
    # one horizontal segment per (window, policy, objective); the first row
    # (easy, cmax) spans [120/110, 1.2] on w0 and [1, 1] on w1.
    segments = [lines(c).get_segments() for c in ax.collections]
    assert sum(len(s) for s in segments) == len(gap_frame())
    first = sorted((float(a[0]), float(b[0])) for a, b in segments[0])
    assert first == [(1.0, 1.0), (pytest.approx(120 / 110), 1.2)]
    # two windows per group: points only, no box
    assert not [p for p in ax.patches if isinstance(p, PathPatch)]
    assert ax.get_xlim()[1] > 1.4
    assert ax.get_xscale() == "linear"


def test_ratio_distribution_boxes_need_enough_windows() -> None:
    frame = gap_frame()
    figure = Figure()
    boxed = figure.subplots()
    ratio_distribution(frame, ax=boxed, min_box_windows=2)
    # a filled box of the low ends for each cmax group (2 windows); the wct
    # groups have one window each: points only
    assert len([p for p in boxed.patches if isinstance(p, PathPatch)]) == 2
    legend = [t.get_text() for t in boxed.get_legend().get_texts()]
    assert "box of v/UB (low end)" in legend
    assert not any(text.startswith("no box") for text in legend)


def test_ratio_distribution_goes_logarithmic_for_far_ratios(ax: Axes) -> None:
    frame = gap_frame()
    frame.loc[0, "ratio_high"] = 12.0
    ratio_distribution(frame, ax=ax)
    assert ax.get_xscale() == "log"


def test_bounds_per_window(ax: Axes) -> None:
    bounds_per_window(gap_frame(), "cmax", ax=ax)
    markers = {line.get_label(): line for line in ax.get_lines()}
    assert ydata(markers["easy"]) == [120.0, 50.0]
    assert ydata(markers["fcfs"]) == [110.0, 70.0]
    (bars,) = ax.collections
    assert [s[:, 1].tolist() for s in lines(bars).get_segments()] == [
        [100.0, 110.0],
        [50.0, 50.0],
    ]
    assert ax.get_ylabel() == "makespan C_max (s)"


def test_objective_axis_labels() -> None:
    assert objective_axis_label("cmax") == "makespan C_max (s)"
    assert objective_axis_label("wct:one") == "Σ C_j (s)"
    assert objective_axis_label("wct:size") == "Σ q_j C_j (processor·s)"
    assert (
        objective_axis_label("wct:area:relative")
        == "Σ q_j p_j (C_j − r_j) (processor·s²)"
    )


def store_rows(rows: list[dict[str, object]]) -> pd.DataFrame:
    """Store rows (:meth:`Store.rows`) with every column: the given ones, and
    the defaults of a suite ``s`` on one trace for the others."""
    full = []
    for i, fields in enumerate(rows):
        row: dict[str, object] = dict.fromkeys(COLUMN_NAMES)
        row.update(suite="s", trace="t.swf", trace_sha256="ab", killed=0)
        row.update(task_id=f"task{i}", params="{}", lost_work=0.0, interrupted=0)
        row.update(fields)
        full.append(row)
    return pd.DataFrame(full, columns=list(COLUMN_NAMES))


def task_rows() -> pd.DataFrame:
    """Two windows: on w0 the area bound and cpsat tie for the best LB; on w1
    the solver's own bound wins. UB: cpsat on w0, policy easy ties on w1.
    Policy rows measure every objective (``values``, ``objective`` empty)."""
    columns = ["window", "window_index", "objective", "kind", "name", "status",
               "value", "values", "lower", "lower_method", "upper", "upper_source",
               "bounds"]  # fmt: skip
    rows = [
        ("w0", 0, "cmax", "solver", "cpsat", "FEASIBLE", 105.0, None, 100.0, "area",
         105.0, "cpsat", '{"area": 100.0, "release-runtime": 90.0}'),
        ("w0", 0, "cmax", "solver", "milp", "ERROR", None, None, 104.0, "lp", None,
         None, None),
        ("w0", 0, "", "policy", "easy", "OK", None, '{"cmax": 120.0}', None, None,
         None, None, "{}"),
        ("w1", 1, "cmax", "solver", "cpsat", "OPTIMAL", 50.0, None, 50.0, "cpsat",
         50.0, "cpsat", '{"area": 40.0, "cpsat": 50.0}'),
        ("w1", 1, "", "policy", "easy", "OK", None, '{"cmax": 50.0}', None, None,
         None, None, "{}"),
    ]  # fmt: skip
    return store_rows([dict(zip(columns, row, strict=True)) for row in rows])


def test_binding_bound_counts() -> None:
    counts = binding_bound_counts(task_rows())
    assert [tuple(r) for r in counts.itertuples(index=False)] == [
        ("cmax", "lower", "area", 1, 0.5),
        ("cmax", "lower", "cpsat", 1, 0.5),
        ("cmax", "upper", "cpsat", 2, 1.0),
        ("cmax", "upper", "policy:easy", 1, 0.5),
    ]


def test_binding_bound_counts_use_the_store_references() -> None:
    rows = task_rows()
    known = references(decode_rows(rows))
    assert binding_bound_counts(known).equals(binding_bound_counts(rows))
    assert binding_bound_counts(decode_rows(rows)).equals(binding_bound_counts(rows))
    # The counts follow the references, whatever the rows: a reference whose
    # best upper bound comes from another source is counted under it.
    key = ("s", "ab", "w0", "cmax")
    known[key] = dataclasses.replace(
        known[key], upper=90.0, upper_source="x", candidates={"x": 90.0}
    )
    upper = binding_bound_counts(known).query("kind == 'upper'")
    assert sorted(upper["method"]) == ["cpsat", "policy:easy", "x"]


def test_a_policy_that_killed_jobs_is_never_a_binding_upper_bound() -> None:
    rows = task_rows()
    rows.loc[2, "values"] = '{"cmax": 101.0}'  # better than cpsat's 105 on w0...
    rows.loc[2, "killed"] = 1  # ...but it did less work than the window asks
    rows.loc[2, "lost_work"] = 20.0
    upper = binding_bound_counts(rows).query("kind == 'upper'")
    assert [tuple(r) for r in upper.itertuples(index=False)] == [
        ("cmax", "upper", "cpsat", 2, 1.0),
        ("cmax", "upper", "policy:easy", 1, 0.5),
    ]
    rows.loc[2, "killed"] = 0
    upper = binding_bound_counts(rows).query("kind == 'upper'")
    assert ("cmax", "upper", "policy:easy", 2, 1.0) in [
        tuple(r) for r in upper.itertuples(index=False)
    ]


def test_binding_bounds_chart(ax: Axes) -> None:
    counts = binding_bound_counts(task_rows())
    binding_bounds(counts, kind="upper", ax=ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cpsat", "policy:easy"]
    assert [p.get_width() for p in ax.patches if isinstance(p, Rectangle)] == [2, 1]
    with pytest.raises(ValueError, match="kind"):
        binding_bounds(counts, kind="middle")


def test_new_figure_when_no_axes_given() -> None:
    instance, schedule = tiny()
    for draw in (
        lambda: gantt(instance, schedule),
        lambda: utilisation(instance, schedule),
        lambda: ratio_distribution(gap_frame()),
        lambda: bounds_per_window(gap_frame(), "wct:one"),
    ):
        ax = draw()
        assert isinstance(ax, Axes)
        plt.close(ax.get_figure(root=True))


# ---------------------------------------------------------------------------
# CLI


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    instance, schedule = tiny()
    paths = {
        "instance": tmp_path / "tiny.json",
        "csv": tmp_path / "s.csv",
        "batsim": tmp_path / "out_jobs.csv",
        "json": tmp_path / "s.json",
    }
    write_native(instance, paths["instance"])
    write_schedule(schedule, paths["csv"], "csv", instance)
    write_schedule(schedule, paths["batsim"], "batsim", instance)
    counted = Schedule(
        {j: Placement(p.start, p.end) for j, p in schedule.placements.items()}
    )
    write_schedule(counted, paths["json"], "json")
    return paths


def test_cli_gantt_png_with_instance(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "g.png"
    result = CliRunner().invoke(
        main,
        ["plot", "gantt", str(files["csv"]), str(files["instance"]), "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"gantt -> {out} (5 jobs, m = 8)"
    data = out.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert mpimg.imread(io.BytesIO(data), format="png").shape[:2] == (605, 1210)


def test_cli_gantt_svg_without_instance(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "g.svg"
    for source in ("csv", "batsim"):
        result = CliRunner().invoke(
            main, ["plot", "gantt", str(files[source]), "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        assert "instance rebuilt from the schedule (m = 8" in result.output
        svg = out.read_text()
        assert len(re.findall(r'<g id="job 3"', svg)) == 2
        assert 'id="busy' not in svg  # a rebuilt instance has no busy blocks


def test_schedule_file_jobs(files: dict[str, Path]) -> None:
    sizes, releases = schedule_file_jobs(files["batsim"])
    assert sizes == {1: 3, 2: 2, 3: 3, 4: 2, 5: 7}
    assert releases == {1: 0, 2: 0, 3: 10, 4: 20, 5: 45}
    sizes, releases = schedule_file_jobs(files["csv"])
    assert sizes == {1: 3, 2: 2, 3: 3, 4: 2, 5: 7} and releases == {}
    assert schedule_file_jobs(files["json"]) == ({}, {})


def test_cli_gantt_errors_are_one_line(files: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    cases = [
        (["plot", "gantt", str(files["json"]), "-o", str(tmp_path / "g.png")],
         "lists no processors and no size; give the INSTANCE"),
        (["plot", "gantt", str(files["csv"]), str(files["instance"]), "-o",
          str(tmp_path / "g.jpg")], "must be one of .png, .svg, .pdf"),
        (["plot", "gantt", str(tmp_path / "none.csv"), "-o", str(tmp_path / "g.png")],
         "no such file"),
        (["plot", "gantt", str(files["csv"]), "--jobs", "2", "-o",
          str(tmp_path / "g.png")],
         "need an INSTANCE"),
    ]  # fmt: skip
    for args, message in cases:
        result = runner.invoke(main, args)
        assert result.exit_code == 2, result.output
        assert message in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert not list(tmp_path.glob("g.*"))


def test_cli_gantt_warns_on_invalid_schedule(
    files: dict[str, Path], tmp_path: Path
) -> None:
    instance, schedule = tiny()
    bad = Schedule({**schedule.placements, 2: Placement(0, 20, (0, 1))})
    write_schedule(bad, tmp_path / "bad.csv", "csv", instance)
    out = tmp_path / "bad.png"
    result = CliRunner().invoke(
        main,
        [
            "plot",
            "gantt",
            str(tmp_path / "bad.csv"),
            str(files["instance"]),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0
    assert "warning: the schedule has" in result.output
    assert out.exists()


def test_bounds_per_window_relative(ax: Axes) -> None:
    bounds_per_window(gap_frame(), "cmax", relative=True, ax=ax)
    markers = {line.get_label(): line for line in ax.get_lines()}
    assert ydata(markers["easy"]) == pytest.approx([120 / 110, 1.0])
    assert ydata(markers["fcfs"]) == pytest.approx([1.0, 70 / 50])
    (bars,) = ax.collections
    segments = [v for s in lines(bars).get_segments() for v in s[:, 1].tolist()]
    assert segments == pytest.approx([100 / 110, 1.0, 1.0, 1.0])
    assert ax.get_ylabel() == "value / best UB of the window (cmax)"
    assert ax.get_yscale() == "linear"


def test_binding_lower_bound_without_method_counts_under_the_solver() -> None:
    rows = task_rows()
    rows.loc[3, "lower_method"] = None
    rows.loc[3, "bounds"] = '{"area": 40.0}'
    counts = binding_bound_counts(rows)
    lower = counts[counts["kind"] == "lower"]
    assert [tuple(r) for r in lower.itertuples(index=False)] == [
        ("cmax", "lower", "area", 1, 0.5),
        ("cmax", "lower", "cpsat", 1, 0.5),
    ]


def test_migrating_job_is_drawn_stretch_by_stretch(ax: Axes) -> None:
    instance = Instance(Machine(4, "contiguous"), (Job(1, 0, 2, 30), Job(2, 0, 2, 10)))
    schedule = Schedule(
        {
            1: Placement(0, 30, (2, 3), moves=((10, (0, 1)),)),
            2: Placement(0, 10, (0, 1)),
        }
    )
    assert check_schedule(instance, schedule) == []
    gantt(instance, schedule, ax=ax)
    assert sorted(box(p) for p in rectangles(ax, "job 1")) == [
        (0, 2, 10, 2),
        (10, 0, 20, 2),
    ]
    rebuilt = instance_from_schedule(schedule)
    assert rebuilt.processors == 4


# ---------------------------------------------------------------------------
# Time axis unit and wait lines (issue 18)

HOUR, DAY = 3600, 86400


def spanning(span: int, name: str = "long $x^2$") -> tuple[Instance, Schedule]:
    """Two jobs on 4 processors; job 2 runs over the whole ``[0, span)``."""
    instance = Instance(
        Machine(4), (Job(1, 0, 2, span // 2), Job(2, 0, 2, span)), name=name
    )
    schedule = Schedule(
        {1: Placement(span // 2, span, (0, 1)), 2: Placement(0, span, (2, 3))}
    )
    assert check_schedule(instance, schedule) == []
    return instance, schedule


def drawn_axes() -> Axes:
    figure = Figure(figsize=(11, 5.5))
    FigureCanvasAgg(figure)
    return figure.subplots()


def shown_ticks(ax: Axes) -> list[tuple[float, str]]:
    """Major x ticks inside the view, with their label text (after drawing)."""
    ax.figure.canvas.draw()
    low, high = ax.get_xlim()
    return [
        (tick, label.get_text())
        for tick, label in zip(ax.get_xticks(), ax.get_xticklabels(), strict=True)
        if low <= tick <= high
    ]


def wait_lines_of(ax: Axes) -> dict[int, Line2D]:
    return {
        int(gid.removeprefix("wait ")): line
        for line in ax.get_lines()
        if (gid := line.get_gid() or "").startswith("wait ")
    }


@pytest.mark.parametrize(
    ("span", "unit", "scale", "steps"),
    [
        (HOUR, "s", 1, {1, 2, 2.5, 5}),
        (DAY, "h", HOUR, {1, 2, 3, 6}),
        (14 * DAY, "d", DAY, {1, 2, 5, 7}),
    ],
)
def test_time_axis_unit_follows_the_span(
    span: int, unit: str, scale: int, steps: set[float]
) -> None:
    instance, schedule = spanning(span)
    ax = drawn_axes()
    gantt(instance, schedule, ax=ax)
    assert ax.get_xlabel() == f"time ({unit})"
    (job2,) = rectangles(ax, "job 2")
    assert box(job2) == (0, 2, span / scale, 2)  # coordinates in the unit
    cmax_line = next(line for line in ax.get_lines() if line.get_gid() is None)
    assert np.asarray(cmax_line.get_xdata(), dtype=float).tolist() == [span / scale] * 2
    ticks = shown_ticks(ax)
    assert len(ticks) >= 3
    # Round numbers of the unit: integers, written plainly, evenly spaced by
    # 1, 2, 2.5, 5 (or the unit's own 3, 6, 7) times a power of ten.
    assert all(text == str(int(tick)) for tick, text in ticks)
    step = ticks[1][0] - ticks[0][0]
    assert {b - a for (a, _), (b, _) in itertools.pairwise(ticks)} == {step}
    assert step / 10 ** math.floor(math.log10(step)) in steps
    # Issue 17: user text still drawn as written.
    assert ax.get_title().startswith("long $x^2$ — ")
    assert not ax.title.get_parse_math()
    legend = ax.get_legend()
    assert legend is not None
    assert not any(t.get_parse_math() for t in legend.get_texts())
    cmax_label = f"C_max = {span} s" + (
        "" if unit == "s" else f" ({span // scale} {unit})"
    )
    assert cmax_label in legend_texts(ax)


def test_choose_time_unit_thresholds() -> None:
    assert choose_time_unit(AUTO_SECONDS_MAX) == "s"
    assert choose_time_unit(AUTO_SECONDS_MAX + 1) == "h"
    assert (AUTO_SECONDS_MAX, AUTO_HOURS_MAX) == (2 * HOUR, 3 * DAY)
    assert choose_time_unit(AUTO_HOURS_MAX) == "h"
    assert choose_time_unit(AUTO_HOURS_MAX + 1) == "d"
    assert choose_time_unit(14 * DAY, "min") == "min"
    with pytest.raises(ValueError, match="unknown time unit 'w'"):
        choose_time_unit(10, "w")


def test_forced_time_unit(ax: Axes) -> None:
    instance, schedule = spanning(DAY)
    gantt(instance, schedule, ax=ax, time_unit="min")
    assert ax.get_xlabel() == "time (min)"
    assert box(rectangles(ax, "job 1")[0]) == (720, 0, 720, 2)
    with pytest.raises(ValueError, match="unknown time unit"):
        gantt(instance, schedule, ax=ax, time_unit="hours")


def test_shared_time_unit_takes_the_widest_span() -> None:
    instance, short = spanning(HOUR)
    _, long = spanning(DAY)
    assert shared_time_unit(instance, short) == "s"
    assert shared_time_unit(instance, short, long) == "h"
    assert shared_time_unit(instance, short, long, requested="d") == "d"


def waiting() -> tuple[Instance, Schedule]:
    """Hours-long jobs on 6 processors: job 1 starts at its release (no line),
    job 2 waits, job 3 waits and is killed at its estimate, job 4 waits."""
    jobs = (
        Job(1, 0, 2, 2 * HOUR),
        Job(2, HOUR, 2, 3 * HOUR),
        Job(3, 0, 2, 9 * HOUR, estimate=2 * HOUR),
        Job(4, 0, 2, 4 * HOUR),
    )
    schedule = Schedule(
        {
            1: Placement(0, 2 * HOUR, (0, 1)),
            2: Placement(2 * HOUR, 5 * HOUR, (0, 1)),
            3: Placement(3 * HOUR, 5 * HOUR, (2, 3)),
            4: Placement(HOUR, 5 * HOUR, (4, 5)),
        },
        killed=frozenset({3}),
    )
    instance = Instance(Machine(6), jobs, name="waits")
    assert check_schedule(instance, schedule) == []
    return instance, schedule


def test_wait_lines_run_from_release_to_start(ax: Axes) -> None:
    instance, schedule = waiting()
    gantt(instance, schedule, ax=ax, wait_lines=True, time_unit="h")
    lines_by_job = wait_lines_of(ax)
    waited = [j.id for j in instance.jobs if schedule[j.id].start > j.release]
    assert sorted(lines_by_job) == waited == [2, 3, 4]
    extents = {
        job: (np.asarray(line.get_xdata(), dtype=float).tolist(), ydata(line))
        for job, line in lines_by_job.items()
    }
    assert extents == {
        2: ([1.0, 2.0], [1.0, 1.0]),  # [release, start] in hours, mid-rectangle
        3: ([0.0, 3.0], [3.0, 3.0]),  # killed at its estimate: drawn the same
        4: ([0.0, 1.0], [5.0, 5.0]),
    }
    assert "wait: release to start" in legend_texts(ax)


def test_wait_line_of_a_migrated_job_is_on_its_first_processors(ax: Axes) -> None:
    """Job 4 waits 1 h, starts on {4, 5} and moves to {2, 3} at 3 h; job 9,
    absent from the instance, has no release and so no line."""
    instance, schedule = waiting()
    schedule = Schedule(
        {
            1: Placement(0, 2 * HOUR, (0, 1)),
            2: Placement(2 * HOUR, 5 * HOUR, (0, 1)),
            4: Placement(HOUR, 5 * HOUR, (4, 5), moves=((3 * HOUR, (2, 3)),)),
            9: Placement(HOUR, 2 * HOUR, (2, 3)),
        }
    )
    gantt(instance, schedule, ax=ax, wait_lines=True)
    assert ax.get_xlabel() == "time (h)"
    assert sorted(box(p) for p in rectangles(ax, "job 4")) == [
        (1, 4, 2, 2),
        (3, 2, 2, 2),
    ]
    lines_by_job = wait_lines_of(ax)
    assert sorted(lines_by_job) == [2, 4]
    line = lines_by_job[4]
    assert np.asarray(line.get_xdata(), dtype=float).tolist() == [0, 1]
    assert ydata(line) == [5.0, 5.0]  # on {4, 5}, where it started


def test_no_wait_lines_unless_asked(ax: Axes) -> None:
    instance, schedule = waiting()
    gantt(instance, schedule, ax=ax)
    assert wait_lines_of(ax) == {}
    assert "wait: release to start" not in legend_texts(ax)


def test_processor_runs_of_a_processor_set_never_expand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def expanded(self: ProcessorSet) -> None:
        raise AssertionError("the processor set was expanded")

    monkeypatch.setattr(ProcessorSet, "__iter__", expanded)
    huge = ProcessorSet([(0, 10**9), (10**9 + 5, 10**9 + 6)])
    assert processor_runs(huge) == [(0, 10**9 + 1), (10**9 + 5, 2)]


def test_cli_gantt_wait_lines_and_time_unit(
    files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "w.svg"
    runner = CliRunner()
    args = ["plot", "gantt", str(files["csv"]), str(files["instance"])]
    result = runner.invoke(
        main, [*args, "--wait-lines", "--time-unit", "min", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    svg = out.read_text()
    # tiny(): jobs 3, 4 and 5 start after their release, jobs 1 and 2 do not.
    assert sorted(re.findall(r'<g id="wait (\d+)"', svg)) == ["3", "4", "5"]
    assert "time (min)" in svg
    # A Batsim out_jobs.csv records the submission times: enough on its own.
    result = runner.invoke(
        main, ["plot", "gantt", str(files["batsim"]), "--wait-lines", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(re.findall(r'<g id="wait (\d+)"', out.read_text())) == ["3", "4", "5"]


def test_cli_gantt_wait_lines_without_releases_is_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "w.png"
    result = CliRunner().invoke(
        main, ["plot", "gantt", str(files["csv"]), "--wait-lines", "-o", str(out)]
    )
    assert result.exit_code == 2
    assert result.output == (
        f"optsched: error: {files['csv']}: --wait-lines needs the jobs' "
        "releases, which the schedule file does not record; give the INSTANCE\n"
    )
    assert "Traceback" not in result.output
    assert not out.exists() and not list(tmp_path.glob("w*"))
