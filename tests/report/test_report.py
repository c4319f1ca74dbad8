"""The HTML and Markdown reports of a results store, and ``optsched report``.

The store is a real :class:`optsched.bench.store.Store` filled with rows
built here in its layout: a small native JSON trace (with recorded wait
times, so that one window starts with busy blocks), three windows cut from
it and kept in the store's ``instances`` table, two list schedules per
window playing the policies (one row each, measured on every objective) and
one playing the solver (one row per objective), every schedule checked,
every objective recomputed by :mod:`optsched.metrics`. Other tests run the
real pipeline (:func:`optsched.bench.run_suite`) into a store.
"""

from __future__ import annotations

import base64
import html.parser
import io
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from PIL import Image as PILImage
from support.bench import write_suite
from support.pages import Page, parse_page

from optsched.analysis.gap import aggregate
from optsched.bench.store import (
    COLUMN_NAMES,
    Store,
    decode_rows,
    gap_frame,
    references,
)
from optsched.bench.suite import sha256_of
from optsched.bench.tasks import make_task_id, to_json
from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io import read_trace
from optsched.io.native import write_native
from optsched.io.schedules import schedule_to_dict
from optsched.metrics import summarize
from optsched.objective import Objective
from optsched.plot.charts import binding_bound_counts
from optsched.report import build_report
from optsched.report.build import (
    METRIC_COLUMNS,
    WIDE_POLICIES,
    fmt_interval,
    fmt_mean,
    fmt_ratio,
    fmt_share,
    fmt_value,
    window_section,
    window_table,
    worst_window_blocks,
)
from optsched.report.render import (
    FIGURES_MARKER,
    MARKDOWN_DPI,
    Heading,
    Image,
    Paragraph,
    Table,
    new_figure,
    render_html,
)
from optsched.schedule import Placement, Schedule
from optsched.windows.selection import WindowSpec

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WINDOWS = (
    "first=0,jobs=4,state=none",
    "first=4,jobs=4,state=recorded",
    "first=8,jobs=4,state=none",
)
OBJECTIVES = ("cmax", "wct:one")
VERSIONS = {"optsched": "0.1.0", "python": "3.11.9", "ortools": "9.15.0"}


# ---------------------------------------------------------------------------
# data factory


def trace_instance() -> Instance:
    """12 jobs on 8 processors with recorded waits.

    Jobs 5 and 6 (index 4 and 5... see below) make the recorded state of the
    window starting at job index 4 non-empty: jobs 3 and 4 run at its start.
    """
    jobs = [
        # id, release, size, runtime, wait
        Job(1, 0, 4, 50, wait=0),
        Job(2, 5, 2, 30, wait=0),
        Job(3, 10, 6, 40, wait=40),
        Job(4, 20, 2, 100, wait=30),
        Job(5, 60, 3, 20, wait=0),
        Job(6, 65, 2, 35, wait=0),
        Job(7, 70, 5, 10, wait=0),
        Job(8, 80, 1, 60, wait=0),
        Job(9, 200, 2, 10, wait=0),
        Job(10, 200, 2, 20, wait=0),
        Job(11, 205, 4, 15, wait=0),
        Job(12, 210, 1, 5, wait=0),
    ]
    return Instance(Machine(8), tuple(jobs), name="tiny-trace")


def list_schedule(instance: Instance, order: list[int], producer: str) -> Schedule:
    """Serial list scheduling with explicit processors.

    Jobs in ``order`` each start at the earliest time >= release at which
    ``size`` processors are free for the whole run (lowest indices). Busy
    blocks without an offset are first given the highest free indices, so
    that the capacity they take is respected.
    """
    m = instance.processors
    taken: list[tuple[int, int, set[int]]] = []
    for block in instance.machine.unavailable:
        if block.processors is not None:
            taken.append((block.start, block.end, set(block.processors)))
    for block in instance.machine.unavailable:
        if block.processors is None:
            busy = {
                p for s, e, ps in taken if s < block.end and block.start < e for p in ps
            }
            free = [p for p in reversed(range(m)) if p not in busy]
            taken.append((block.start, block.end, set(free[: block.size])))
    jobs = instance.jobs_by_id()
    placements = {}
    for job_id in order:
        job = jobs[job_id]
        times = sorted({job.release} | {e for _, e, _ in taken if e >= job.release})
        for t in times:
            end = t + job.runtime
            busy = {p for s, e, ps in taken if s < end and t < e for p in ps}
            free = [p for p in range(m) if p not in busy]
            if len(free) >= job.size:
                chosen = set(free[: job.size])
                taken.append((t, end, chosen))
                placements[job_id] = Placement(t, end, tuple(sorted(chosen)))
                break
    schedule = Schedule(placements, producer)
    assert check_schedule(instance, schedule) == []
    return schedule


def _orders(instance: Instance) -> dict[str, list[int]]:
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    return {
        "fcfs": [j.id for j in jobs],
        "sjf": [j.id for j in sorted(jobs, key=lambda j: (j.runtime, j.id))],
        "cpsat": [j.id for j in sorted(jobs, key=lambda j: (-j.area, j.id))],
    }


def lower_bounds(instance: Instance, objective: str) -> dict[str, float]:
    """Valid closed-form lower bounds (they ignore busy blocks, so they hold)."""
    if objective == "cmax":
        area = sum(j.area for j in instance.jobs)
        return {
            "release-runtime": float(max(j.release + j.runtime for j in instance.jobs)),
            "area": float(math.ceil(area / instance.processors)),
        }
    return {"release-runtime": float(sum(j.release + j.runtime for j in instance.jobs))}


def _row(**fields: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(COLUMN_NAMES)
    row.update(fields)
    row["task_id"] = make_task_id(
        str(row["suite"]),
        str(row["trace_sha256"]),
        str(row["window"]),
        str(row["kind"]),
        str(row["name"]),
        str(row["objective"]),
        str(row["params"]),
    )
    return row


def _failed_row(
    suite: str,
    trace_file: Path,
    task: tuple[str, str, str],
    *,
    params: dict[str, object],
    error: str,
    **fields: object,
) -> dict[str, object]:
    """The row of a task that failed on the first window: ``task`` is its
    kind, name and objective."""
    kind, name, objective = task
    return _row(
        suite=suite,
        trace=str(trace_file),
        trace_sha256=sha256_of(trace_file),
        window=WINDOWS[0],
        window_index=0,
        kind=kind,
        name=name,
        objective=objective,
        params=to_json(params),
        status="ERROR",
        error=error,
        **fields,
    )


def window_rows(
    suite: str,
    trace: str,
    sha: str,
    index: int,
    key: str,
    instance: Instance,
    small: bool = False,
    instance_sha256: str | None = None,
) -> list[dict[str, object]]:
    """Rows of one window in the store's layout: one policy row per policy
    (fcfs, sjf), measured on every objective (``objective`` empty, the values
    in ``values``), then one solver row (cpsat) per objective; ``small``:
    fcfs and the solver, cmax only."""
    labels = OBJECTIVES[:1] if small else OBJECTIVES
    common = {
        "suite": suite,
        "trace": trace,
        "trace_sha256": sha,
        "window": key,
        "window_index": index,
        "versions": to_json(VERSIONS),
        "started": f"2026-01-01T00:00:0{index}Z",
        "finished": f"2026-01-01T00:01:0{index}Z",
        "host": "testhost",
        "runtime": 0.5,
        "instance_sha256": instance_sha256,
    }
    policies, solvers = [], []
    for name, order in _orders(instance).items():
        if small and name == "sjf":
            continue
        schedule = list_schedule(instance, order, name)
        values = {
            label: Objective.parse(label).value(instance, schedule) for label in labels
        }
        payload = {
            "schedule": to_json(schedule_to_dict(schedule)),
            "metrics": to_json(summarize(instance, schedule).as_dict()),
            "name": name,
        }
        if name != "cpsat":
            policies.append(
                _row(
                    **common,
                    **payload,
                    kind="policy",
                    objective="",
                    status="OK",
                    params=to_json({"seed": 0, "objectives": list(labels)}),
                    values=to_json(values),
                    bounds=to_json({}),
                )
            )
            continue
        for label in labels:
            bounds = lower_bounds(instance, label)
            best = max(bounds, key=lambda k: bounds[k])
            solvers.append(
                _row(
                    **common,
                    **payload,
                    kind="solver",
                    objective=label,
                    status="FEASIBLE",
                    params=to_json({"time_limit": 1.0, "workers": 1}),
                    value=values[label],
                    lower=bounds[best],
                    lower_method=best,
                    upper=values[label],
                    upper_source="cpsat",
                    bounds=to_json(bounds),
                )
            )
    return policies + solvers


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    path = tmp_path / "traces" / "tiny.json"
    path.parent.mkdir()
    write_native(trace_instance(), path)
    return path


def fill_store(
    store_path: Path,
    trace_file: Path,
    suite: str = "tiny",
    *,
    failed: bool = True,
    small: bool = False,
    instances: bool = True,
) -> Store:
    """A store with three windows, two objectives, two policies, a solver;
    ``small``: the window with busy blocks, cmax, fcfs and the solver (the
    report draws fewer figures, the tests run faster). ``instances``: keep
    each window's instance in the store, as ``optsched bench`` does (without:
    a store of rows that name no instance)."""
    trace = read_trace(trace_file)
    sha = sha256_of(trace_file)
    store = Store(store_path)
    for index, key in enumerate(WINDOWS):
        if small and index != 1:
            continue
        instance = WindowSpec.from_key(key).cut(trace)
        kept = store.add_instance(instance) if instances else None
        rows = window_rows(
            suite, str(trace_file), sha, index, key, instance, small, kept
        )
        for row in rows:
            store.insert(row)
    if failed:
        store.insert(
            _failed_row(
                suite,
                trace_file,
                ("solver", "milp", "cmax"),
                params={"time_limit": 1.0, "workers": 1},
                error="Traceback ...\nRuntimeError: solver crashed",
                versions=to_json(VERSIONS),
                runtime=0.1,
            )
        )
    return store


@pytest.fixture
def store_path(tmp_path: Path, trace_file: Path) -> Path:
    """A small store (one window, one objective, one policy)."""
    path = tmp_path / "results.sqlite"
    fill_store(path, trace_file, small=True).close()
    return path


# ---------------------------------------------------------------------------
# Images (the pages are read by support.pages.parse_page)


def assert_svg(data: bytes) -> None:
    """An SVG document with a real size and no script."""
    root = ElementTree.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert float(root.attrib["width"].removesuffix("pt")) > 100
    assert not list(root.iter("{http://www.w3.org/2000/svg}script"))
    assert b"<script" not in data and b"<dc:date>" not in data


def assert_png(data: bytes) -> None:
    assert data.startswith(PNG_SIGNATURE)
    pixels = mpimg.imread(io.BytesIO(data), format="png")
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100


def as_float(cell: str) -> float:
    return math.inf if cell == "∞" else float(cell)


# ---------------------------------------------------------------------------
# tests


@pytest.fixture(scope="module")
def html_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Page]:
    """One HTML report shared by the tests that only read it (figures are slow)."""
    folder = tmp_path_factory.mktemp("report")
    trace = folder / "tiny.json"
    write_native(trace_instance(), trace)
    store = folder / "results.sqlite"
    fill_store(store, trace).close()
    out = build_report(store, folder / "report.html")
    return store, out, parse_page(out)


def test_every_image_is_an_embedded_svg(html_report: tuple[Path, Path, Page]) -> None:
    _, out, page = html_report
    # ratio distribution, 2 x bounds per window, 2 binding charts, and a Gantt
    # pair plus a utilisation chart for each of 2 policies x 2 objectives.
    assert len(page.images) == 1 + 2 + 2 + 2 * 2 * 2
    for image in page.images:
        prefix = "data:image/svg+xml;base64,"
        assert image["src"].startswith(prefix)
        assert_svg(base64.b64decode(image["src"][len(prefix) :], validate=True))
        assert image["alt"]
    assert not re.search(r"""(src|href)=["'](?!data:)""", out.read_text())


def test_html_report_is_reproducible(html_report: tuple[Path, Path, Page]) -> None:
    """Same store, same bytes: SVG ids use a fixed salt and carry no date."""
    store, out, _ = html_report
    again = out.with_name("again.html")
    build_report(store, again)
    assert again.read_bytes() == out.read_bytes()


def test_aggregate_table_equals_gap_aggregate(
    html_report: tuple[Path, Path, Page],
) -> None:
    store, _, page = html_report
    with Store(store, create=False) as s:
        gap = gap_frame(s.rows())
    expected = aggregate(gap)
    table = page.tables["aggregate"]
    assert table["columns"][:5] == [
        "policy", "objective", "windows", "not comparable", "optimum proven",
    ]  # fmt: skip
    assert len(table["rows"]) == len(expected) == 2 * 2  # (fcfs, sjf) x 2 objectives
    for row, want in zip(table["rows"], expected.itertuples(index=False), strict=True):
        assert row[0] == want.policy and row[1] == want.objective
        assert int(row[2]) == want.windows == 3
        assert int(row[3]) == want.not_comparable == 0
        assert row[4] == fmt_share(want.optimal_share)
        wanted = [
            want.mean_low, want.mean_high, want.median_low,
            want.median_high, want.max_low, want.max_high,
        ]  # fmt: skip
        assert row[5:11] == [fmt_ratio(x) for x in wanted]
        assert [as_float(c) for c in row[5:11]] == pytest.approx(wanted, abs=1e-4)
        assert row[11] == want.worst_window


def test_window_tables_have_one_row_per_window(
    html_report: tuple[Path, Path, Page],
) -> None:
    store, _, page = html_report
    with Store(store, create=False) as s:
        tasks = s.task_rows()
    for objective in OBJECTIVES:
        table = page.tables[f"windows-{objective.replace(':', '-')}"]
        assert [r[1] for r in table["rows"]] == list(WINDOWS)
        assert table["columns"][-4:] == [
            "fcfs value", "fcfs ratio", "sjf value", "sjf ratio",
        ]  # fmt: skip
        for index, row in enumerate(table["rows"]):
            mine = [t for t in tasks if t.window_index == index and not t.failed]
            solver = [t for t in mine if t.objective == objective]
            policies = {t.name: t.values[objective] for t in mine if t.kind == "policy"}
            best_ub = min([*(t.upper for t in solver), *policies.values()])
            assert row[2] == fmt_value(max(t.lower for t in solver))
            assert row[4] == fmt_value(best_ub)
            assert row[7] == fmt_value(policies["fcfs"])
            assert row[9] == fmt_value(policies["sjf"])


def test_window_ratio_cells_are_value_over_bounds(
    html_report: tuple[Path, Path, Page],
) -> None:
    _, _, page = html_report
    for row in page.tables["windows-cmax"]["rows"]:
        lower, upper = float(row[2]), float(row[4])
        for value_cell, ratio_cell in ((row[7], row[8]), (row[9], row[10])):
            value = float(value_cell)
            if lower == upper:
                assert ratio_cell == fmt_ratio(value / upper)
            else:
                assert (
                    ratio_cell
                    == f"[{fmt_ratio(value / upper)}, {fmt_ratio(value / lower)}]"
                )


def test_binding_and_version_and_failure_tables(
    html_report: tuple[Path, Path, Page],
) -> None:
    store, _, page = html_report
    with Store(store, create=False) as s:
        rows = s.rows()
    counts = binding_bound_counts(rows)
    assert counts.equals(binding_bound_counts(references(decode_rows(rows))))
    table = page.tables["binding"]["rows"]
    assert [(r[0], r[1], r[2], int(r[3])) for r in table] == [
        (o, k, m, n) for o, k, m, n, _ in counts.itertuples(index=False)
    ]
    # every (window, objective) has one best lower bound source at least
    for objective in OBJECTIVES:
        lower = counts[(counts["objective"] == objective) & (counts["kind"] == "lower")]
        assert lower["windows"].sum() >= len(WINDOWS)
    assert page.tables["versions"]["rows"] == [
        [k, VERSIONS[k]] for k in sorted(VERSIONS)
    ]
    failed = page.tables["failed"]["rows"]
    assert failed == [
        [WINDOWS[0], "solver", "milp", "cmax", "RuntimeError: solver crashed"]
    ]
    run = dict(page.tables["run"]["rows"])
    # per window: 2 policy rows (every objective) and 2 solver rows (one each)
    assert run["tasks"] == str(len(rows)) == str(3 * (2 + 2) + 1)
    assert run["tasks by status"] == "ERROR: 1, FEASIBLE: 6, OK: 6"
    assert run["objectives"] == ", ".join(sorted(OBJECTIVES))
    assert run["policy runs that killed jobs"] == "0"
    assert "defects" not in page.tables
    assert "Defects" not in page.headings


def test_worst_windows_are_drawn_from_the_stored_instances(
    html_report: tuple[Path, Path, Page],
) -> None:
    _, out, page = html_report
    text = out.read_text()
    assert "Instance rebuilt" not in text
    assert "no Gantt chart" not in text
    worst = [h for h in page.headings if h.startswith(("fcfs,", "sjf,"))]
    assert len(worst) == 4


def test_cli_markdown_writes_and_links_its_figures(
    store_path: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "out" / "report_figures"
    folder.mkdir(parents=True)
    # An older report's folder: marked, holding only what it lists.
    (folder / "99-stale.png").write_bytes(b"left by an older report")
    (folder / FIGURES_MARKER).write_text("# older report\n99-stale.png\n")
    out = tmp_path / "out" / "report.md"
    old_mask = os.umask(0o022)
    try:
        result = CliRunner().invoke(main, ["report", str(store_path), "-o", str(out)])
    finally:
        os.umask(old_mask)
    assert result.exit_code == 0, result.output
    assert result.output == f"report -> {out}\n"
    text = out.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    # ratios, bounds (cmax), binding lower and upper, the worst window's
    # Gantt pair and utilisation
    assert len(links) == 6
    # The folder was replaced: no stale figure, no temporary folder left;
    # the new marker lists the figures written.
    figures = sorted(Path(link).name for link in links)
    assert sorted(p.name for p in folder.iterdir()) == [FIGURES_MARKER, *figures]
    marked = (folder / FIGURES_MARKER).read_text().splitlines()
    assert [line for line in marked if not line.startswith("#")] == figures
    for link in links:
        assert link.startswith("report_figures/")
        assert_png((tmp_path / "out" / link).read_bytes())
        with PILImage.open(tmp_path / "out" / link) as picture:  # print quality
            assert picture.info["dpi"] == pytest.approx((MARKDOWN_DPI,) * 2, abs=0.1)
    assert "| policy | objective | windows | not comparable |" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "report.md",
        "report_figures",
    ]
    # Shared files despite the private temporary files behind atomic writes.
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_cli_trace_dir_is_a_deprecated_no_op(store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        main,
        ["report", str(store_path), "-o", str(out), "--trace-dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert "--trace-dir is deprecated and ignored" in result.stderr
    assert result.stdout == f"report -> {out}\n"
    assert len(parse_page(out).images) == 6


def test_suite_choice(tmp_path: Path, trace_file: Path) -> None:
    path = tmp_path / "two.sqlite"
    fill_store(path, trace_file, "one", failed=False).close()
    fill_store(path, trace_file, "two", failed=False).close()
    with pytest.raises(ValueError, match="several suites \\(one, two\\)"):
        build_report(path, tmp_path / "r.html")
    with pytest.raises(ValueError, match="no suite 'three'"):
        build_report(path, tmp_path / "r.html", suite="three")
    with pytest.raises(ValueError, match=r"must be a \.html or a \.md"):
        build_report(path, tmp_path / "r.pdf", suite="one")
    assert not (tmp_path / "r.html").exists()


def test_report_needs_no_trace_file(tmp_path: Path, trace_file: Path) -> None:
    path = tmp_path / "results.sqlite"
    fill_store(path, trace_file, failed=False, small=True).close()
    trace_file.unlink()
    out = build_report(path, tmp_path / "report.html")
    page = parse_page(out)
    assert len(page.images) == 6
    assert "note" not in out.read_text().split("Worst windows")[1]


def test_store_keeps_the_window_instance_with_its_busy_blocks(
    tmp_path: Path, trace_file: Path
) -> None:
    path = tmp_path / "results.sqlite"
    with fill_store(path, trace_file, failed=False, small=True) as store:
        (sha,) = {t.instance_sha256 for t in store.task_rows()}
        assert sha is not None
        instance = store.instance(sha)
    assert instance == WindowSpec.from_key(WINDOWS[1]).cut(read_trace(trace_file))
    assert [j.id for j in instance.jobs] == [5, 6, 7, 8]
    # jobs 3 (started 50, ends 90) and 4 (started 50, ends 150) run at t = 60
    assert instance.machine.unavailable == (
        BusyBlock(0, 30, 6, label="job 3"),
        BusyBlock(0, 90, 2, label="job 4"),
    )


def test_rows_without_a_stored_instance_get_a_note(
    tmp_path: Path, trace_file: Path
) -> None:
    path = tmp_path / "old.sqlite"
    fill_store(path, trace_file, failed=False, small=True, instances=False).close()
    out = build_report(path, tmp_path / "report.html")
    page = parse_page(out)
    text = out.read_text()
    assert "The store holds no instance for window" in text
    assert '<p class="note">The store holds no instance' in text
    # ratios, bounds, 2 binding charts; no Gantt, no utilisation
    assert len(page.images) == 4
    assert not [i for i in page.images if "best known" in i["alt"]]
    assert "Instance rebuilt" not in text


def test_defects_are_listed_and_their_ratios_withheld(
    tmp_path: Path, trace_file: Path
) -> None:
    path = tmp_path / "defect.sqlite"
    with fill_store(path, trace_file, failed=False, small=True) as store:
        (fcfs,) = [t for t in store.task_rows() if t.kind == "policy"]
        # A lower bound above the policy's schedule: one of them is wrong.
        store.insert(
            _row(
                suite="tiny", trace=fcfs.trace, trace_sha256=fcfs.trace_sha256,
                window=fcfs.window, window_index=fcfs.window_index, kind="solver",
                name="milp", objective="cmax", status="FEASIBLE",
                params=to_json({"time_limit": 1.0, "workers": 1}),
                lower=fcfs.values["cmax"] + 100, lower_method="milp",
                bounds=to_json({}), instance_sha256=fcfs.instance_sha256,
            )
        )  # fmt: skip
    page = parse_page(build_report(path, tmp_path / "report.html"))
    assert "Defects" in page.headings
    (defect,) = page.tables["defects"]["rows"]
    assert defect[:3] == ["1", WINDOWS[1], "cmax"]
    assert "below the lower bound" in defect[3]
    (window,) = page.tables["windows-cmax"]["rows"]
    assert window[6] == "defect"
    assert window[-1] == "withheld (defect)"
    (aggregate_row,) = page.tables["aggregate"]["rows"]
    assert aggregate_row[2:4] == ["0", "1"]
    assert aggregate_row[-1] == "—"


@pytest.mark.parametrize(
    "key",
    ["whole", "first=200,jobs=100,state=none", "start=10,end=99,state=simulated:easy"],
)
def test_window_keys_parse_back(key: str) -> None:
    assert WindowSpec.from_key(key).key == key


def test_cli_report_bad_store_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "cli.html"
    result = CliRunner().invoke(
        main, ["report", str(tmp_path / "nope.sqlite"), "-o", str(out)]
    )
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "no such results store" in result.output
    assert not out.exists()
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    result = CliRunner().invoke(main, ["report", str(junk), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0


def test_empty_gap_still_reports(tmp_path: Path, trace_file: Path) -> None:
    path = tmp_path / "failed.sqlite"
    with Store(path) as store:
        store.insert(
            _failed_row(
                "s",
                trace_file,
                ("policy", "fcfs", ""),
                params={"seed": 0, "objectives": ["cmax"]},
                error="boom",
            )
        )
    page = parse_page(build_report(path, tmp_path / "r.html"))
    assert "aggregate" not in page.tables
    assert page.tables["failed"]["rows"] == [[WINDOWS[0], "policy", "fcfs", "", "boom"]]
    assert page.tables["versions"]["rows"] == []


def test_frames_are_consistent_with_the_store(store_path: Path) -> None:
    with Store(store_path, create=False) as s:
        rows = s.rows()
    assert isinstance(rows, pd.DataFrame)
    for schedule_json in rows["schedule"].dropna():
        assert json.loads(schedule_json)["format"] == "optsched-schedule"


def test_no_chart_for_a_policy_optimal_on_every_window(store_path: Path) -> None:
    with Store(store_path, create=False) as s:
        tasks = s.task_rows()
        gap = gap_frame(tasks)
        row = gap.iloc[0].copy()
        row["ratio_low"] = row["ratio_high"] = 1.0
        blocks = worst_window_blocks({t.task_id: t for t in tasks}, row, s.instance, {})
    assert not [b for b in blocks if isinstance(b, Image)]
    last = blocks[-1]
    assert isinstance(last, Paragraph)
    assert "proven optimal (cmax) on every window" in last.text


def test_worst_window_draws_the_row_the_reference_names(store_path: Path) -> None:
    with Store(store_path, create=False) as s:
        tasks = s.task_rows()
        (row,) = gap_frame(tasks).itertuples(index=False)
        (solver,) = [t for t in tasks if t.kind == "solver" and not t.failed]
        assert row.upper_row == solver.task_id
        blocks = worst_window_blocks(
            {t.task_id: t for t in tasks}, gap_frame(tasks).iloc[0], s.instance, {}
        )
    (gantt_image,) = [b for b in blocks if isinstance(b, Image) and "gantt" in b.name]
    assert "best known schedule, cpsat (right)" in gantt_image.caption


def _tiny_suite(folder: Path, name: str, policies: list[str]) -> Path:
    """A suite of 4-job windows of ``tiny.json`` (beside it) with recorded
    initial state, solved by CP-SAT."""
    return write_suite(
        folder / f"{name}.toml",
        Path("tiny.json"),
        policies,
        tables='[windows]\nkind = "consecutive"\njobs = 4\ncount = 3\n'
        'initial_state = "recorded"\n',
        solver='backend = "cpsat"\ntime_limit = 5\nworkers = 1',
    )


def test_report_of_a_real_bench_run(tmp_path: Path) -> None:
    """End to end: the simulator and CP-SAT fill a store, the report reads it."""
    from optsched.bench import run_suite

    write_native(trace_instance(), tmp_path / "tiny.json")
    suite = _tiny_suite(tmp_path, "real", ["fcfs", "easy", "conservative"])
    summary = run_suite(suite, tmp_path / "results.sqlite")
    assert summary.ran == 3 * (3 + 1)
    out = build_report(tmp_path / "results.sqlite", tmp_path / "report.html")
    page = parse_page(out)
    with Store(tmp_path / "results.sqlite", create=False) as s:
        rows = s.rows()
    expected = aggregate(gap_frame(rows))
    table = page.tables["aggregate"]["rows"]
    assert [r[:4] for r in table] == [
        [p, o, str(n), str(k)]
        for p, o, n, k in expected[
            ["policy", "objective", "windows", "not_comparable"]
        ].values
    ]
    assert [r[5:11] for r in table] == [
        [fmt_ratio(x) for x in r[5:11]] for r in expected.itertuples(index=False)
    ]
    assert len(page.tables["windows-cmax"]["rows"]) == 3
    failed = rows[rows["status"] == "ERROR"]
    listed = page.tables["failed"]["rows"] if "failed" in page.tables else []
    assert [r[:3] for r in listed] == failed[["window", "kind", "name"]].values.tolist()
    assert "Instance rebuilt" not in out.read_text()
    for image in page.images:
        assert_svg(base64.b64decode(image["src"].partition(",")[2]))


def test_report_from_elsewhere_draws_the_stored_instances(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the worst windows are drawn on the instances the store
    keeps (machine size, busy blocks), whatever the working directory and
    even with the trace gone; no trace is searched, no instance rebuilt."""
    import optsched.report.build as build
    from optsched.bench import run_suite

    run = tmp_path / "run"
    run.mkdir()
    write_native(trace_instance(), run / "tiny.json")
    suite = _tiny_suite(run, "moved", ["fcfs", "easy"])
    run_suite(suite, run / "results.sqlite")
    trace = read_trace(run / "tiny.json")
    (run / "tiny.json").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    drawn: list[tuple[str, Instance]] = []

    def recording(name: str, draw: Any) -> Any:
        def wrapper(instance: Instance, *args: Any, **kwargs: Any) -> Any:
            drawn.append((name, instance))
            return draw(instance, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(build, "gantt", recording("gantt", build.gantt))
    monkeypatch.setattr(build, "utilisation", recording("util", build.utilisation))
    out = build_report(run / "results.sqlite", Path("report.html"))
    text = (elsewhere / "report.html").read_text()
    assert out == Path("report.html")
    assert "Instance rebuilt" not in text
    assert "not found" not in text and "--trace-dir" not in text
    assert "no Gantt chart" not in text

    with Store(run / "results.sqlite", create=False) as store:
        tasks = store.task_rows()
        gap = gap_frame(tasks)
        stored = {
            t.instance_sha256: store.instance(t.instance_sha256)
            for t in tasks
            if t.instance_sha256
        }
    worst = aggregate(gap)
    charts = sum(1 for r in worst.itertuples(index=False) if r.max_high != 1.0)
    assert charts > 0
    # each chart: 2 Gantt charts and 2 utilisation curves
    assert len(drawn) == 4 * charts
    for _, instance in drawn:
        assert any(instance == kept for kept in stored.values())
        assert instance.processors == 8
    # The stored instances are the windows as cut from the trace, with the
    # busy blocks of the recorded state.
    for t in tasks:
        assert t.instance_sha256 is not None
        cut = WindowSpec.from_key(t.window).cut(trace)
        assert stored[t.instance_sha256] == cut
    assert any(kept.machine.unavailable for kept in stored.values())
    # The worst window drawn is the one that starts with busy blocks (a
    # rebuilt instance would have none).
    assert all(instance.machine.unavailable for _, instance in drawn)


def test_policies_that_killed_jobs_are_not_comparable(tmp_path: Path) -> None:
    """A reservation the under-estimated job 2 runs into: the policies kill it;
    the window table says so instead of giving a ratio."""
    from optsched.bench import run_suite

    machine = Machine(4, unavailable=(BusyBlock(20, 60, 4, label="reservation"),))
    jobs = (Job(1, 0, 2, 15), Job(2, 0, 2, 30, estimate=10), Job(3, 5, 1, 10))
    write_native(Instance(machine, jobs, name="kill"), tmp_path / "kill.json")
    (tmp_path / "kill.toml").write_text(
        'policies = ["fcfs", "easy"]\nobjectives = ["cmax"]\n'
        '[suite]\nname = "kill"\n[[traces]]\npath = "kill.json"\n'
        '[windows]\nkind = "whole"\n'
        '[[solvers]]\nbackend = "cpsat"\ntime_limit = 5\nworkers = 1\n'
    )
    run_suite(tmp_path / "kill.toml", tmp_path / "kill.sqlite")
    with Store(tmp_path / "kill.sqlite", create=False) as store:
        gap = store.gap_rows()
    assert (gap["killed"] == 1).all() and (gap["lost_work"] == 40).all()
    page = parse_page(build_report(tmp_path / "kill.sqlite", tmp_path / "r.html"))
    (window,) = page.tables["windows-cmax"]["rows"]
    assert window[-4:] == [
        "20", "1 killed, 40 processor-s lost", "20", "1 killed, 40 processor-s lost",
    ]  # fmt: skip
    assert [r[2:4] for r in page.tables["aggregate"]["rows"]] == [["0", "1"]] * 2
    run = dict(page.tables["run"]["rows"])
    assert run["policy runs that killed jobs"] == "2"
    # Killed schedules never bound the optimum: the upper bound is the solver's.
    binding = page.tables["binding"]["rows"]
    assert not [r for r in binding if r[1] == "upper" and r[2].startswith("policy:")]


def test_window_table_of_two_traces_names_the_trace() -> None:
    columns = [
        "trace", "trace_sha256", "window", "window_index", "policy", "objective",
        "value", "lower", "lower_method", "upper", "upper_source", "ratio_low",
        "ratio_high", "optimal",
    ]  # fmt: skip
    key = "first=0,jobs=4,state=none"
    gap = pd.DataFrame(
        [
            ["b.swf", "bb", key, 0, "fcfs", "cmax", 12.0, 10.0, "area", 12.0,
             "policy:fcfs", 1.0, 1.2, False],
            ["a.swf", "aa", key, 0, "fcfs", "cmax", 7.0, 7.0, "cpsat", 7.0,
             "cpsat", 1.0, 1.0, True],
        ],
        columns=columns,
    )  # fmt: skip
    table = window_table(gap, "cmax")
    assert table.rows == (
        ("0", f"{key} (a.swf)", "7", "cpsat", "7", "cpsat", "yes", "7", "1.0000"),
        ("0", f"{key} (b.swf)", "10", "area", "12", "policy:fcfs", "no", "12",
         "[1.0000, 1.2000]"),
    )  # fmt: skip


# ---------------------------------------------------------------------------
# layout for readers: metrics per policy, tables that fit, split wide tables


def test_policy_metrics_table_recomputed_from_the_schedules(
    html_report: tuple[Path, Path, Page],
) -> None:
    """Every cell equals the metric recomputed over all jobs of all windows
    from the stored instances and schedules (not from the stored metrics)."""
    from optsched.io.schedules import schedule_from_json
    from optsched.metrics import bounded_slowdowns, utilisation, waits

    store, _, page = html_report
    table = page.tables["policy-metrics"]
    assert table["columns"] == list(METRIC_COLUMNS)
    with Store(store, create=False) as s:
        rows = s.rows()
        by_policy: dict[str, list[tuple[Any, Any]]] = {}
        for r in rows[
            (rows["kind"] == "policy") & (rows["status"] != "ERROR")
        ].itertuples():
            instance = s.instance(r.instance_sha256)
            schedule = schedule_from_json(r.schedule, "row")
            by_policy.setdefault(r.name, []).append((instance, schedule))
    assert [row[0] for row in table["rows"]] == sorted(by_policy)
    for row in table["rows"]:
        pairs = by_policy[row[0]]
        wait = np.concatenate([waits(i, s) for i, s in pairs])
        bsld = np.concatenate([bounded_slowdowns(i, s) for i, s in pairs])
        assert row[1:3] == [str(len(pairs)), str(len(wait))]
        assert row[3] == fmt_mean(wait.mean())
        assert row[4] == str(int(wait.max()))
        assert row[6] == fmt_mean(bsld.mean())
        assert row[7] == fmt_mean(bsld.max())
        assert row[8] == f"{np.mean([utilisation(i, s) for i, s in pairs]):.3f}"
        assert row[9] == "0"


def test_html_tables_scroll_inside_their_box(
    html_report: tuple[Path, Path, Page],
) -> None:
    _, out, page = html_report
    text = out.read_text()
    # every table sits in a scrolling box, none widens the page
    assert text.count('<div class="table"><table') == len(page.tables) > 0
    assert "div.table { overflow-x: auto;" in text


def test_many_policies_split_the_window_table() -> None:
    policies = [f"p{k}" for k in range(WIDE_POLICIES + 1)]
    gap = pd.DataFrame(
        [
            ("w0", 0, p, "cmax", 110.0 + k, 100.0, 110.0, (110 + k) / 110,
             (110 + k) / 100, False)
            for k, p in enumerate(policies)
        ],
        columns=[
            "window", "window_index", "policy", "objective", "value", "lower",
            "upper", "ratio_low", "ratio_high", "optimal",
        ],
    )  # fmt: skip
    tables = [b for b in window_section(gap, "cmax") if isinstance(b, Table)]
    assert [t.id for t in tables] == ["windows-cmax", "values-cmax"]
    ratios, values = tables
    assert ratios.columns == (
        "#", "window", "best LB", "LB method", "best UB", "UB source", "proven",
        *(f"{p} ratio" for p in policies),
    )  # fmt: skip
    assert ratios.rows[0][7:] == tuple(
        fmt_interval((110 + k) / 110, (110 + k) / 100) for k in range(len(policies))
    )
    assert values.columns == ("#", "window", *(f"{p} value" for p in policies))
    assert values.rows[0][2:] == tuple(str(110 + k) for k in range(len(policies)))
    # up to WIDE_POLICIES, one table as before
    few = gap[gap["policy"].isin(policies[:WIDE_POLICIES])]
    (table,) = [b for b in window_section(few, "cmax") if isinstance(b, Table)]
    assert table.id == "windows-cmax" and table.columns[7] == "p0 value"


HOSTILE = "a<b>&\"x'\x1b[2J\u202e</td><script>alert(1)</script>"
"""User text with markup, quotes, an escape sequence and a bidi override."""
SHOWN = "a<b>&\"x'\\x1b[2J\\u202e</td><script>alert(1)</script>"
"""HOSTILE as a reader sees it: markup as text, control characters escaped."""


class Elements(html.parser.HTMLParser):
    """Every element of a page in order: tag, attributes, and its own text."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None], list[str]]] = []

        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._text = []
        self.found.append((tag, dict(attrs), self._text))

    def handle_endtag(self, tag: str) -> None:
        self._text = None  # text after an end tag is no element's own

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def _small_figure() -> Any:
    figure = new_figure(2.0, 1.0)
    figure.subplots().plot([0, 1], [0, 1])
    return figure


def test_html_shows_user_text_as_text_with_control_characters_escaped() -> None:
    blocks = [
        Heading(HOSTILE, 9),  # levels are clamped to h1..h6
        Paragraph(HOSTILE, note=True),
        Table(HOSTILE, HOSTILE, (HOSTILE, "n"), ((HOSTILE, "1"),)),
        Image(HOSTILE, HOSTILE, _small_figure),
    ]
    page = render_html(HOSTILE, blocks)
    assert "\x1b" not in page and "\u202e" not in page
    parser = Elements()
    parser.feed(page)
    parser.close()
    tags = [tag for tag, _, _ in parser.found]
    assert tags == [
        "html", "head", "meta", "title", "style", "body", "h6", "p", "div",
        "table", "caption", "thead", "tr", "th", "th", "tbody", "tr", "td", "td",
        "figure", "img", "figcaption",
    ]  # fmt: skip
    text = {i: "".join(found[2]) for i, found in enumerate(parser.found)}
    attributes = [found[1] for found in parser.found]
    for index in (3, 6, 7, 10, 13, 17, 21):  # title, h6, p, caption, th, td, ...
        assert text[index] == SHOWN, tags[index]
    assert attributes[7] == {"class": "note"}
    assert attributes[9]["id"] == attributes[19]["id"] == SHOWN  # table, figure
    # a cell longer than LONG_CELL may wrap; a number stays on one line
    assert (attributes[17], attributes[18]) == ({"class": "text"}, {})
    assert text[18] == "1"
    assert attributes[20]["alt"] == SHOWN
    assert str(attributes[20]["src"]).startswith("data:image/svg+xml;base64,")
