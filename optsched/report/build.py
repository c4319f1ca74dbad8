"""The report of a benchmark run: ratios, bounds, worst windows, versions.

:func:`build_report` reads a results store (:class:`optsched.bench.store.Store`)
and writes one self-contained HTML page or a Markdown file with its PNG
figures beside it. Sections:

1. the run: store, suite, traces (path, sha256, windows), tasks by status,
   policies, back-ends, objectives, time span, hosts;
2. defects, if any: windows on which a schedule beats a proven lower bound
   (:attr:`optsched.analysis.gap.Reference.defect`), whose ratios are withheld;
3. competitive ratios per policy and objective
   (:func:`optsched.analysis.gap.aggregate`) and their distribution;
4. per objective, the reference of every window with the policies' values
   and ratio intervals (a policy that killed jobs has none: its cell gives
   the jobs killed and the work lost);
5. how often each lower bound and each upper-bound source is binding;
6. per policy and objective, the worst window: the policy's schedule beside
   the best known one (Gantt charts) and their utilisation over time;
7. the version manifest of the run (from the ``versions`` column); several
   manifests in one run are flagged;
8. failed tasks.

Competitive ratio of a policy with objective ``v`` on a window whose
optimum lies in ``[LB, UB]``: the interval ``[v / UB, v / LB]``
(:func:`optsched.analysis.gap.ratio_interval`), exact when ``LB = UB``.

The report reads nothing but the store. Every window's reference comes from
:func:`optsched.bench.store.references` (through
:func:`optsched.analysis.gap.window_reference`); the Gantt charts draw the window's
instance kept in the store (:meth:`Store.instance
<optsched.bench.store.Store.instance>`, machine size and busy blocks
included), the policy's schedule from its own row and the best known
schedule from the row the reference names (:attr:`Reference.upper_row
<optsched.analysis.gap.Reference.upper_row>`, a solver or a policy row). A row
without a stored instance (a store written before instances were kept) gets
a note instead of charts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from matplotlib.figure import Figure

from optsched.errors import InputError
from optsched.instance import Instance
from optsched.io.schedules import schedule_from_json
from optsched.plot.charts import (
    MIN_BOX_WINDOWS,
    binding_bound_counts,
    binding_bounds,
    bounds_per_window,
    policy_colours,
    ratio_distribution,
    utilisation,
)
from optsched.plot.gantt import gantt, shared_time_unit
from optsched.report.render import (
    Block,
    Heading,
    Image,
    Paragraph,
    Table,
    check_figures_folder,
    figures_folder,
    new_figure,
    write_html,
    write_markdown,
)
from optsched.schedule import Schedule

if TYPE_CHECKING:
    from optsched.analysis.gap import Reference
    from optsched.bench.store import TaskRow

HTML_SUFFIXES = (".html", ".htm")
MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_FAILED_LISTED = 50
"""Failed tasks listed one by one; the rest are counted."""

MISSING = "—"

InstanceLookup = Callable[[str], Instance]
"""The instance stored under a sha256 (:meth:`optsched.bench.store.Store.instance`),
``KeyError`` when the store does not hold it."""

ReferenceKey = tuple[str, ...]
"""(suite, trace sha256, window, objective), as in
:func:`optsched.bench.store.references`."""


# ---------------------------------------------------------------------------
# number formatting (one place, so that tests can parse it back)


def _missing(x: object) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def _number(x: object) -> float | None:
    """``x`` as a float, ``None`` when missing (``None``, NaN, NA)."""
    if _missing(x):
        return None
    return float(x)  # type: ignore[arg-type]


def _formatted(x: object, finite: Callable[[float], str]) -> str:
    """``finite(x)``; ``∞`` for infinity, ``—`` when unknown."""
    value = _number(x)
    if value is None or math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞"
    return finite(value)


def fmt_ratio(x: object) -> str:
    """Ratio with 4 decimals; ``∞`` for infinity, ``—`` when unknown."""
    return _formatted(x, lambda value: f"{value:.4f}")


def fmt_value(x: object) -> str:
    """Objective value or bound: integers as integers, else 3 decimals."""
    return _formatted(
        x, lambda value: str(int(value)) if value.is_integer() else f"{value:.3f}"
    )


def fmt_interval(low: object, high: object) -> str:
    """``1.0000`` when exact, else ``[1.0000, 1.2500]``."""
    if fmt_ratio(low) == fmt_ratio(high):
        return fmt_ratio(low)
    return f"[{fmt_ratio(low)}, {fmt_ratio(high)}]"


def fmt_share(x: object) -> str:
    """Share as a percentage with one decimal."""
    value = _number(x)
    return MISSING if value is None or math.isnan(value) else f"{100 * value:.1f} %"


def _text(x: object) -> str:
    return MISSING if _missing(x) or x == "" else str(x)


# ---------------------------------------------------------------------------
# entry point


def build_report(
    store_path: str | Path,
    out_path: str | Path,
    *,
    suite: str | None = None,
) -> Path:
    """Write the report of ``suite`` in the store ``store_path``.

    Parameters
    ----------
    store_path
        A results store written by ``optsched bench``. The report reads
        nothing else: window instances and schedules come from the store.
    out_path
        ``.html``: one self-contained page (images as base64 PNG data URIs).
        ``.md``: Markdown, figures in ``<stem>_figures/`` beside it.
    suite
        The suite to report; may be omitted when the store holds one suite.

    Returns
    -------
    pathlib.Path
        ``out_path``.

    Raises
    ------
    InputError
        Missing or invalid store, missing output folder.
    ValueError
        Unknown suite, several suites and none chosen, empty store, an output
        name that is neither ``.html`` nor ``.md``.
    """
    from optsched.bench.store import Store

    out = Path(out_path)
    suffix = out.suffix.lower()
    if suffix not in HTML_SUFFIXES + MARKDOWN_SUFFIXES:
        raise ValueError(f"{out}: the report must be a .html or a .md file")
    if not out.parent.is_dir():
        raise InputError("no such folder for the report", out.parent)
    if suffix in MARKDOWN_SUFFIXES:
        check_figures_folder(figures_folder(out))  # before any work
    with Store(store_path, create=False) as store:
        name = _pick_suite(store.suites(), suite, Path(store_path))
        rows = store.rows(name)
        title = f"optsched report — suite {name}"
        blocks = report_blocks(
            rows, suite=name, store=str(store_path), instance_of=store.instance
        )
    if suffix in HTML_SUFFIXES:
        return write_html(out, title, [Heading(title, 1), *blocks])
    return write_markdown(out, title, blocks)


def _pick_suite(suites: list[str], wanted: str | None, store: Path) -> str:
    if not suites:
        raise ValueError(f"{store}: the results store holds no task yet")
    if wanted is not None:
        if wanted not in suites:
            raise ValueError(
                f"{store}: no suite {wanted!r} in the store (it holds: "
                f"{', '.join(suites)})"
            )
        return wanted
    if len(suites) > 1:
        raise ValueError(
            f"{store}: the store holds several suites ({', '.join(suites)}); "
            "choose one with --suite"
        )
    return suites[0]


def _no_instance(sha256: str) -> Instance:
    raise KeyError(sha256)


def report_blocks(
    rows: pd.DataFrame,
    *,
    suite: str,
    store: str,
    instance_of: InstanceLookup | None = None,
) -> list[Block]:
    """Every section of the report of one suite's task rows (see module doc).

    ``rows`` are :meth:`Store.rows <optsched.bench.store.Store.rows>`;
    ``instance_of`` gives a window's instance by sha256 (normally
    :meth:`Store.instance <optsched.bench.store.Store.instance>`); without
    it no Gantt chart is drawn.
    """
    from optsched.analysis.gap import aggregate
    from optsched.bench.store import decode_rows, gap_frame, references

    tasks = decode_rows(rows)
    known = references(tasks)
    gap = gap_frame(tasks)
    summary = aggregate(gap)
    by_id = {t.task_id: t for t in tasks}
    blocks: list[Block] = []
    blocks += run_section(rows, tasks, suite=suite, store=store)
    blocks += defect_section(tasks, known)
    blocks += ratio_section(gap, summary, policy_metrics_table(rows))
    blocks += preemption_section(gap)
    for objective in sorted(gap["objective"].unique()) if len(gap) else []:
        blocks += window_section(gap, objective)
    blocks += binding_section(known)
    blocks += worst_section(by_id, gap, summary, instance_of or _no_instance)
    blocks += versions_section(rows)
    blocks += failed_section(rows)
    return blocks


# ---------------------------------------------------------------------------
# 1. the run


def _params(text: object) -> str:
    """Task parameters ``{"time_limit": 8, "workers": 1}`` as ``time_limit=8,
    workers=1``."""
    if _missing(text):
        return ""
    data = json.loads(str(text)) or {}
    return ", ".join(f"{k}={v}" for k, v in sorted(data.items()))


def _several_traces(frame: pd.DataFrame) -> bool:
    return "trace_sha256" in frame and frame["trace_sha256"].nunique() > 1


def _objectives(tasks: Sequence[TaskRow]) -> list[str]:
    """Objectives of the run: solver rows' and those policy rows measured
    (a policy row's ``objective`` is empty: it measures every objective)."""
    found = {t.objective for t in tasks if t.objective}
    found.update(o for t in tasks for o in t.values)
    return sorted(found)


def run_section(
    rows: pd.DataFrame, tasks: Sequence[TaskRow], *, suite: str, store: str
) -> list[Block]:
    """Store, suite, tasks by status, what ran, when and where."""
    status = rows["status"].value_counts().sort_index()
    solvers = rows[rows["kind"] == "solver"][["name", "params"]].drop_duplicates()
    runtime = pd.to_numeric(rows["runtime"], errors="coerce").sum()
    killing = sum(1 for t in tasks if t.kind == "policy" and t.killed > 0)
    facts = [
        ("store", store),
        ("suite", suite),
        ("tasks", str(len(rows))),
        ("tasks by status", ", ".join(f"{k}: {v}" for k, v in status.items())),
        (
            "policies",
            ", ".join(sorted(rows[rows["kind"] == "policy"]["name"].unique())),
        ),
        (
            "back-ends",
            ", ".join(
                f"{n} ({_params(p)})" for n, p in solvers.itertuples(index=False)
            ),
        ),
        ("objectives", ", ".join(_objectives(tasks))),
        ("windows", str(rows.drop_duplicates(["trace_sha256", "window"]).shape[0])),
        ("policy runs that killed jobs", str(killing)),
        ("first task started (UTC)", _text(rows["started"].min())),
        ("last task finished (UTC)", _text(rows["finished"].max())),
        ("simulation and solve time, summed over tasks", f"{runtime:.1f} s"),
        ("hosts", ", ".join(sorted(str(h) for h in rows["host"].dropna().unique()))),
    ]
    traces = (
        rows.groupby(["trace", "trace_sha256"], sort=True)["window"]
        .nunique()
        .reset_index()
    )
    return [
        Heading("Run"),
        Table("run", "What was run", ("item", "value"), tuple(facts)),
        Table(
            "traces",
            "Traces (path as written in the suite file)",
            ("trace", "sha256", "windows"),
            tuple(
                (str(t), str(s), str(n)) for t, s, n in traces.itertuples(index=False)
            ),
        ),
    ]


# ---------------------------------------------------------------------------
# 2. defects


def defect_section(
    tasks: Sequence[TaskRow], known: Mapping[ReferenceKey, Reference]
) -> list[Block]:
    """The windows whose reference has a defect (none: no section)."""
    found = {key: ref for key, ref in known.items() if ref.defect is not None}
    if not found:
        return []
    where: dict[tuple[str, ...], tuple[int, str]] = {}
    for t in tasks:
        where.setdefault(t.window_id, (t.window_index, t.trace))
    several = len({key[1] for key in known}) > 1
    table_rows = []
    for key in sorted(found, key=lambda k: (k[1], where[k[:3]][0], k[2], k[3])):
        index, trace = where[key[:3]]
        window = f"{key[2]} ({trace})" if several else key[2]
        table_rows.append((str(index), window, key[3], str(found[key].defect)))
    return [
        Heading("Defects"),
        Paragraph(
            f"On {len(found)} (window, objective) pairs a schedule's value lies "
            "below a proven lower bound: one of them is wrong, which is a defect "
            "of optsched, not of the data. The ratios of these windows are "
            "withheld (not comparable); please report them.",
            note=True,
        ),
        Table(
            "defects",
            "Windows whose schedule beats a lower bound",
            ("#", "window", "objective", "defect"),
            tuple(table_rows),
        ),
    ]


# ---------------------------------------------------------------------------
# 3. ratios


AGGREGATE_COLUMNS = (
    "policy",
    "objective",
    "windows",
    "not comparable",
    "optimum proven",
    "mean v/UB",
    "mean v/LB",
    "median v/UB",
    "median v/LB",
    "max v/UB",
    "max v/LB",
    "worst window",
)


def _comparable(row: Mapping[str, Any] | pd.Series) -> bool:
    """The row's ratio means something (no killed job, no defect); frames
    without the column (hand-made) count as comparable."""
    value = row.get("comparable", True)
    return True if _missing(value) else bool(value)


def _worst_rows(gap: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    """The worst comparable row per (policy, objective), as
    :func:`optsched.analysis.gap.aggregate` picks it (largest ``ratio_high``, then
    ``ratio_low``, first in order); none when no row is comparable."""
    worst = {}
    usable = gap
    if "comparable" in gap:
        usable = gap[gap["comparable"].astype(bool)]
    for key, group in usable.groupby(["policy", "objective"], sort=False):
        ordered = group.sort_values(
            ["ratio_high", "ratio_low"], ascending=False, kind="stable"
        )
        worst[(str(key[0]), str(key[1]))] = ordered.iloc[0]
    return worst


def _window_name(row: pd.Series, several_traces: bool) -> str:
    if several_traces:
        return f"{row['window']} ({row['trace']})"
    return str(row["window"])


METRIC_COLUMNS = (
    "policy",
    "windows",
    "jobs",
    "mean wait (s)",
    "max wait (s)",
    "mean response (s)",
    "mean BSLD (τ = 10 s)",
    "max BSLD",
    "mean utilisation",
    "killed jobs",
)


def fmt_mean(x: object) -> str:
    """A mean of seconds or slowdowns: 1 decimal (3 below 10)."""
    value = _number(x)
    if value is None or math.isnan(value):
        return MISSING
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def _job_weighted_mean(group: pd.DataFrame) -> Callable[[str], float]:
    """Mean of a per-window mean column over all jobs of the windows."""
    jobs = group["jobs"].astype(float)
    return lambda column: float((group[column] * jobs).sum() / jobs.sum())


def policy_metrics_table(rows: pd.DataFrame) -> Table | None:
    """Wait, response, bounded slowdown and utilisation of every policy.

    From the stored metrics of each successful policy row
    (:func:`optsched.metrics.summarize`, one window each). Means over jobs
    are taken over every job of every window (each window's mean weighted
    by its job count), maxima over all jobs; the utilisation (jobs' area
    over ``m · [first release, C_max)`` of the window) is the plain mean
    over windows. A row whose policy killed jobs measures cut-short jobs:
    its killed jobs are counted in the last column.
    """
    from optsched.bench.store import ERROR

    mine = rows[(rows["kind"] == "policy") & (rows["status"] != ERROR)]
    per_window = []
    for name, killed, text in mine[["name", "killed", "metrics"]].itertuples(
        index=False
    ):
        metrics = json.loads(str(text)) if not _missing(text) else {}
        if metrics.get("jobs"):
            per_window.append({"policy": str(name), "killed": killed, **metrics})
    if not per_window:
        return None
    frame = pd.DataFrame(per_window)
    out = []
    for policy, group in frame.groupby("policy", sort=True):
        jobs = group["jobs"].astype(float)
        job_mean = _job_weighted_mean(group)

        out.append(
            (
                str(policy),
                str(len(group)),
                str(int(jobs.sum())),
                fmt_mean(job_mean("mean_wait")),
                fmt_value(group["max_wait"].max()),
                fmt_mean(job_mean("mean_response")),
                fmt_mean(job_mean("mean_bounded_slowdown")),
                fmt_mean(group["max_bounded_slowdown"].max()),
                f"{group['utilisation'].mean():.3f}",
                str(int(group["killed"].sum())),
            )
        )
    return Table(
        "policy-metrics",
        "Schedule metrics per policy, over the jobs of all windows (BSLD: bounded "
        "slowdown max(1, (C_j − r_j) / max(C_j − S_j, τ)); utilisation: mean over "
        "windows)",
        METRIC_COLUMNS,
        tuple(out),
    )


def ratio_section(
    gap: pd.DataFrame, summary: pd.DataFrame, metrics: Table | None = None
) -> list[Block]:
    """The aggregate table, the policies' metrics and the ratio figure."""
    blocks: list[Block] = [
        Heading("Competitive ratios"),
        Paragraph(
            "A policy with objective value v on a window whose optimum OPT lies in "
            "[LB, UB] has competitive ratio v/OPT in [v/UB, v/LB]: LB is the best "
            "lower bound of the window, UB the best known objective (solver or any "
            "policy whose schedule ran every job in full). The two ends are "
            "aggregated separately over the windows. A policy that killed jobs "
            "(stopped at their estimate) did less work than the window asks: its "
            "value is not comparable, left out of the statistics and counted under "
            "'not comparable', as are the windows with a defect."
        ),
    ]
    if gap.empty:
        return [*blocks, Paragraph("No successful policy task: no ratio.", note=True)]
    worst = _worst_rows(gap)
    several = _several_traces(gap)
    table_rows = []
    for r in summary.itertuples(index=False):
        worst_row = worst.get((str(r.policy), str(r.objective)))
        table_rows.append(
            (
                str(r.policy),
                str(r.objective),
                str(r.windows),
                str(r.not_comparable),
                fmt_share(r.optimal_share),
                fmt_ratio(r.mean_low),
                fmt_ratio(r.mean_high),
                fmt_ratio(r.median_low),
                fmt_ratio(r.median_high),
                fmt_ratio(r.max_low),
                fmt_ratio(r.max_high),
                MISSING if worst_row is None else _window_name(worst_row, several),
            )
        )
    blocks.append(
        Table(
            "aggregate",
            "Competitive-ratio interval ends per policy and objective (windows: "
            "comparable ones)",
            AGGREGATE_COLUMNS,
            tuple(table_rows),
        )
    )
    if metrics is not None:
        blocks.append(metrics)
    skipped = int(summary["not_comparable"].sum())
    if skipped:
        killed = int((gap["killed"] > 0).sum()) if "killed" in gap else 0
        blocks.append(
            Paragraph(
                f"{skipped} (window, policy, objective) rows are not comparable "
                f"({killed} of a policy that killed jobs, {skipped - killed} on "
                "windows with a defect): they have no ratio.",
                note=True,
            )
        )
    unbounded = int((gap["ratio_high"] == math.inf).sum())
    if unbounded:
        blocks.append(
            Paragraph(
                f"v/LB is infinite on {unbounded} (window, policy, objective) rows: "
                "no positive lower bound is known there, so their means and maxima "
                "of v/LB are infinite too.",
                note=True,
            )
        )
    blocks.append(ratio_figure(gap))
    return blocks


def ratio_figure(gap: pd.DataFrame) -> Image:
    """The ratio distribution, one panel per objective (own ratio scale)."""
    return Image(
        "ratio-distribution",
        "Ratio intervals per policy, one panel per objective: each window is a "
        "segment from v/UB to v/LB (a dot when the optimum is proven); with at "
        f"least {MIN_BOX_WINDOWS} windows, the filled box summarises the v/UB ends "
        "and the hollow box the v/LB ends.",
        partial(_ratio_chart, gap),
    )


def _ratio_chart(gap: pd.DataFrame) -> Figure:
    objectives = sorted(gap["objective"].unique())
    policies = gap["policy"].nunique()
    figure = new_figure(10.0, len(objectives) * (1.3 + 0.42 * policies))
    axes = figure.subplots(len(objectives), 1, squeeze=False)[:, 0]
    for ax, objective in zip(axes, objectives, strict=True):
        ratio_distribution(
            gap[gap["objective"] == objective],
            ax=ax,
            title=f"Competitive-ratio intervals per window — {objective}",
        )
    return figure


def preemption_section(gap: pd.DataFrame) -> list[Block]:
    """Preemptive policies and the price of non-preemption, when present.

    A preemptive policy's ratio is taken against the preemptive optimum
    (:func:`optsched.bench.store.gap_frame`); the price of non-preemption
    ``OPT / OPT_pmtn`` is an interval per window, aggregated end by end.
    """
    if gap.empty or "preemption_price_low" not in gap:
        return []
    from optsched.bench.store import PREEMPTION

    preemptive = sorted(gap.loc[gap["reference"] == PREEMPTION, "policy"].unique())
    blocks: list[Block] = [
        Heading("Preemption"),
        Paragraph(
            "Preemptive policies ("
            + (", ".join(preemptive) or "none in this run")
            + ") are rated against the preemptive optimum (solver back-end "
            "'preemptive'), the others against the optimum. The price of "
            "non-preemption is OPT / OPT_pmtn, an interval per window."
        ),
    ]
    windows = gap.drop_duplicates(["trace_sha256", "window", "objective"])
    rows = []
    for objective, group in windows.groupby("objective", sort=True):
        known = group.dropna(subset=["preemption_price_low"])
        high = known["preemption_price_high"]
        rows.append(
            (
                str(objective),
                str(len(known)),
                fmt_share(
                    (known["preemption_price_low"] == high).mean()
                    if len(known)
                    else math.nan
                ),
                fmt_interval(known["preemption_price_low"].mean(), high.mean()),
                fmt_interval(known["preemption_price_low"].max(), high.max()),
            )
        )
    blocks.append(
        Table(
            "price-of-non-preemption",
            "Price of non-preemption OPT / OPT_pmtn per objective (windows with a "
            "preemptive reference)",
            ("objective", "windows", "proven", "mean", "max"),
            tuple(rows),
        )
    )
    return blocks


# ---------------------------------------------------------------------------
# 4. windows


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)


def fmt_not_comparable(row: Mapping[str, Any] | pd.Series) -> str:
    """The ratio cell of a row that has none: ``2 killed, 340 processor-s
    lost`` for a policy that killed jobs, else the window's defect."""
    killed = row.get("killed", 0)
    if not _missing(killed) and int(killed) > 0:
        return (
            f"{int(killed)} killed, {fmt_value(row.get('lost_work'))} processor-s lost"
        )
    return "withheld (defect)"


WIDE_POLICIES = 3
"""With more policies than this, the per-window table is split in two
(reference and ratios; values), so that each fits a page."""


def window_table(
    gap: pd.DataFrame,
    objective: str,
    parts: tuple[str, ...] = ("reference", "value", "ratio"),
) -> Table:
    """One row per window: its reference, its sources, every policy.

    ``parts`` picks the columns after ``#`` and ``window``: ``reference``
    (best LB, its method, best UB, its source, proven), and per policy its
    ``value`` and its ``ratio`` interval. The table of the ``reference``
    part has the id ``windows-<objective>``, a values-only table
    ``values-<objective>``.
    """
    rows = gap[gap["objective"] == objective]
    policies = sorted(rows["policy"].unique())
    several = _several_traces(rows)
    keys = ["trace_sha256", "window"] if "trace_sha256" in rows else ["window"]
    columns = ["#", "window"]
    if "reference" in parts:
        columns += ["best LB", "LB method", "best UB", "UB source", "proven"]
    for policy in policies:
        columns += [f"{policy} {part}" for part in ("value", "ratio") if part in parts]
    out = []
    order = rows.sort_values([*keys[:-1], "window_index"], kind="stable")
    for _, window_rows in order.groupby(keys, sort=False):
        first = _plain_row(window_rows)
        by_policy = {str(r["policy"]): r for _, r in window_rows.iterrows()}
        cells = [str(first["window_index"]), _window_name(first, several)]
        if "reference" in parts:
            cells += _reference_cells(first)
        for policy in policies:
            cells += _policy_cells(by_policy.get(policy), parts)
        out.append(tuple(cells))
    if "reference" in parts:
        table_id = f"windows-{_anchor(objective)}"
        caption = (
            f"Bounds and policy {' and '.join(p + 's' for p in parts[1:])} per "
            f"window — {objective} (a policy that killed jobs has no ratio: its "
            "cell gives the jobs killed and the processor-seconds they did not run)"
        )
    else:
        table_id = f"values-{_anchor(objective)}"
        caption = f"Policy values per window — {objective}"
    return Table(table_id, caption, tuple(columns), tuple(out))


def _plain_row(window_rows: pd.DataFrame) -> pd.Series:
    """A row of the window rated against the (non-preemptive) optimum: the
    rows of preemptive policies carry the preemptive reference instead."""
    from optsched.bench.store import PREEMPTION

    if "reference" in window_rows:
        plain = window_rows[window_rows["reference"] != PREEMPTION]
        if len(plain):
            return plain.iloc[0]
    return window_rows.iloc[0]


def _reference_cells(first: pd.Series) -> list[str]:
    if not _missing(first.get("defect")):
        proven = "defect"
    else:
        proven = "yes" if bool(first["optimal"]) else "no"
    return [
        fmt_value(first["lower"]),
        _text(first.get("lower_method")),
        fmt_value(first["upper"]),
        _text(first.get("upper_source")),
        proven,
    ]


def _policy_cells(row: pd.Series | None, parts: tuple[str, ...]) -> list[str]:
    cells = []
    if "value" in parts:
        cells.append(MISSING if row is None else fmt_value(row["value"]))
    if "ratio" in parts:
        if row is None:
            cells.append(MISSING)
        elif not _comparable(row):
            cells.append(fmt_not_comparable(row))
        else:
            cells.append(fmt_interval(row["ratio_low"], row["ratio_high"]))
    return cells


def _bounds_chart(gap: pd.DataFrame, objective: str) -> Figure:
    figure = new_figure(10.0, 4.5)
    bounds_per_window(gap, objective, relative=True, ax=figure.subplots())
    return figure


def window_section(gap: pd.DataFrame, objective: str) -> list[Block]:
    """The bounds-per-window figure and table(s) of one objective.

    Up to :data:`WIDE_POLICIES` policies, one table holds everything;
    with more, the ratios stay beside the references and the values get
    a table of their own.
    """
    blocks: list[Block] = [
        Heading(f"Bounds per window — {objective}"),
        Image(
            f"bounds-{_anchor(objective)}",
            f"Best lower and upper bound per window with the policies' values "
            f"({objective}), each divided by the window's best upper bound; the "
            "table below gives the absolute numbers.",
            partial(_bounds_chart, gap, objective),
        ),
    ]
    policies = gap.loc[gap["objective"] == objective, "policy"].nunique()
    if policies <= WIDE_POLICIES:
        return [*blocks, window_table(gap, objective)]
    return [
        *blocks,
        window_table(gap, objective, ("reference", "ratio")),
        window_table(gap, objective, ("value",)),
    ]


# ---------------------------------------------------------------------------
# 5. binding bounds


def binding_section(known: Mapping[ReferenceKey, Reference]) -> list[Block]:
    """Counts of binding lower bounds and upper-bound sources, and charts.

    ``known`` are the windows' references
    (:func:`optsched.bench.store.references`).
    """
    counts = binding_bound_counts(known)
    blocks: list[Block] = [
        Heading("Binding bounds"),
        Paragraph(
            "On each window, the lower bound that equals the best LB is binding "
            "(closed-form bounds and solver bounds alike), and so is the source of "
            "the best known schedule (a solver, the incumbent it kept, or a policy "
            "that killed no job). Ties count for every method attaining the best "
            "value."
        ),
        Table(
            "binding",
            "How often each bound is binding",
            ("objective", "bound", "method", "windows", "share of windows"),
            tuple(
                (str(o), str(k), str(m), str(n), fmt_share(s))
                for o, k, m, n, s in counts.itertuples(index=False)
            ),
        ),
    ]
    for kind in ("lower", "upper"):
        mine = counts[counts["kind"] == kind]
        if mine.empty:
            continue
        blocks.append(
            Image(
                f"binding-{kind}",
                f"Windows on which each {kind} bound is binding.",
                partial(_binding_chart, counts, kind, 1.4 + 0.32 * len(mine)),
            )
        )
    return blocks


def _binding_chart(counts: pd.DataFrame, kind: str, height: float) -> Figure:
    figure = new_figure(8.0, height)
    binding_bounds(counts, kind=kind, ax=figure.subplots())
    return figure


# ---------------------------------------------------------------------------
# 6. worst windows


def _best_label(row: TaskRow, source: object) -> str:
    """``policy easy``, ``cpsat`` or ``cpsat (incumbent list:wspt)``."""
    if row.kind == "policy":
        return f"policy {row.name}"
    if _missing(source) or str(source) == row.name:
        return row.name
    return f"{row.name} (incumbent {source})"


def _window_instance(
    policy_row: pd.Series, instance_of: InstanceLookup
) -> tuple[Instance | None, str]:
    """The window's instance from the store, or ``None`` and why not."""
    sha = policy_row.get("instance_sha256")
    window = f"window {policy_row['window']}"
    if _missing(sha) or not sha:
        return None, (
            f"The store holds no instance for {window} (a store written before "
            "optsched kept window instances): no Gantt chart. Run the suite again "
            "into a new store to draw it."
        )
    try:
        return instance_of(str(sha)), ""
    except KeyError:
        return None, (
            f"The instance {str(sha)[:12]}... of {window} is missing from the "
            "store: no Gantt chart."
        )


def worst_window_blocks(
    tasks: Mapping[str, TaskRow],
    policy_row: pd.Series,
    instance_of: InstanceLookup,
    colours: Mapping[str, Any],
) -> list[Block]:
    """Gantt charts and utilisation of one policy's worst window.

    ``tasks`` are the store's rows by task id; ``policy_row`` is the
    policy's :func:`~optsched.bench.store.gap_frame` row on the window. The
    policy's schedule comes from its own row (``task_id``), the best known
    one from the row holding the window's best upper bound (``upper_row``),
    the instance from the store (``instance_sha256``).
    """
    policy, objective = str(policy_row["policy"]), str(policy_row["objective"])
    r = policy_row
    blocks: list[Block] = [
        Heading(f"{policy}, {objective}: window {r['window']}", 3),
        Paragraph(
            f"Trace {r['trace']}, window #{r['window_index']}. {policy}: "
            f"{objective} = {fmt_value(r['value'])}; best LB {fmt_value(r['lower'])} "
            f"({_text(r.get('lower_method'))}), best UB {fmt_value(r['upper'])} "
            f"({_text(r.get('upper_source'))}); ratio "
            f"{fmt_interval(r['ratio_low'], r['ratio_high'])}."
        ),
    ]
    if r["ratio_high"] == 1.0:
        # v = LB on the worst window, so on every window: nothing to compare.
        return [
            *blocks,
            Paragraph(
                f"{policy} is proven optimal ({objective}) on every window: no chart."
            ),
        ]
    mine_row = tasks.get(str(r.get("task_id")))
    if mine_row is None or mine_row.schedule_json is None:
        return [*blocks, Paragraph("The policy's schedule is not stored.", note=True)]
    upper_row = r.get("upper_row")
    best_row = None if _missing(upper_row) else tasks.get(str(upper_row))
    if best_row is None or best_row.schedule_json is None:
        return [
            *blocks,
            Paragraph(
                "The best known schedule of the window is not stored: no chart.",
                note=True,
            ),
        ]
    instance, why = _window_instance(r, instance_of)
    if instance is None:
        return [*blocks, Paragraph(why, note=True)]
    name = f"{policy}-{objective}-{r['window_index']}"
    mine = schedule_from_json(mine_row.schedule_json, f"store row {mine_row.task_id}")
    best = schedule_from_json(best_row.schedule_json, f"store row {best_row.task_id}")
    best_label = _best_label(best_row, r.get("upper_source"))
    unit = shared_time_unit(instance, mine, best)  # one unit: common x limits
    titles = (
        f"{policy} — {objective} = {fmt_value(r['value'])}",
        f"best known: {best_label} — {objective} = {fmt_value(r['upper'])}",
    )
    lines = (
        (mine, {"label": policy, "color": colours.get(policy)}),
        (best, {"label": f"best known ({best_label})", "color": "black",
                "linestyle": "--", "show_busy": False}),
    )  # fmt: skip
    return [
        *blocks,
        Image(
            f"gantt-{name}",
            f"{policy} (left) and the best known schedule, {best_label} (right), on "
            f"window {r['window']}; same job, same colour.",
            partial(_gantt_pair, instance, (mine, best), titles, unit),
        ),
        Image(
            f"utilisation-{name}",
            f"Processors in use / m over time, {policy} and the best known schedule.",
            partial(
                _utilisation_chart,
                instance,
                lines,
                f"Utilisation over time — window {r['window']}",
                unit,
            ),
        ),
    ]


def _gantt_pair(
    instance: Instance,
    schedules: tuple[Schedule, Schedule],
    titles: tuple[str, str],
    unit: str,
) -> Figure:
    """Two Gantt charts side by side on common axes (same unit and limits)."""
    figure = new_figure(15.0, 5.0)
    left, right = figure.subplots(1, 2, sharey=True)
    for ax, schedule, title in zip((left, right), schedules, titles, strict=True):
        gantt(instance, schedule, ax=ax, title=title, time_unit=unit)
    low = min(left.get_xlim()[0], right.get_xlim()[0])
    high = max(left.get_xlim()[1], right.get_xlim()[1])
    for ax in (left, right):
        ax.set_xlim(low, high)
    right.set_ylabel("")
    return figure


def _utilisation_chart(
    instance: Instance,
    lines: Sequence[tuple[Schedule, Mapping[str, Any]]],
    title: str,
    unit: str,
) -> Figure:
    """The utilisation of several schedules of ``instance`` on one axes."""
    figure = new_figure(11.0, 3.6)
    ax = figure.subplots()
    for schedule, style in lines:
        utilisation(instance, schedule, ax=ax, title=title, time_unit=unit, **style)
    return figure


def worst_section(
    tasks: Mapping[str, TaskRow],
    gap: pd.DataFrame,
    summary: pd.DataFrame,
    instance_of: InstanceLookup,
) -> list[Block]:
    """The worst comparable window of every (policy, objective)."""
    if gap.empty:
        return []
    worst = _worst_rows(gap)
    colours = policy_colours(list(gap["policy"].unique()))
    blocks: list[Block] = [
        Heading("Worst windows"),
        Paragraph(
            "For every policy and objective, the comparable window with the largest "
            "v/LB (ties: largest v/UB): the policy's schedule beside the best known "
            "one, on the window's instance as stored. Processors on the y axis, "
            "time on the x axis, jobs coloured by id, busy blocks hatched grey."
        ),
    ]
    for r in summary.itertuples(index=False):
        found = worst.get((str(r.policy), str(r.objective)))
        if found is None:
            blocks.append(
                Paragraph(
                    f"{r.policy}, {r.objective}: no comparable window, no chart.",
                    note=True,
                )
            )
            continue
        blocks += worst_window_blocks(tasks, found, instance_of, colours)
    return blocks


# ---------------------------------------------------------------------------
# 7. versions, 8. failures


def _manifest(text: object) -> dict[str, str]:
    if _missing(text):
        return {}
    data = json.loads(str(text))
    return {str(k): _text(v) for k, v in (data or {}).items()}


def versions_section(rows: pd.DataFrame) -> list[Block]:
    """The package and solver versions the tasks ran with."""
    manifests: dict[str, int] = {}
    for text in rows["versions"]:
        key = json.dumps(_manifest(text), sort_keys=True)
        manifests[key] = manifests.get(key, 0) + 1
    parsed = [(json.loads(k), n) for k, n in sorted(manifests.items())]
    packages = sorted({p for m, _ in parsed for p in m})
    columns = ["package"] + [
        f"manifest {i} ({n} tasks)" if len(parsed) > 1 else "version"
        for i, (_, n) in enumerate(parsed, start=1)
    ]
    table = Table(
        "versions",
        "Version manifest of the run",
        tuple(columns),
        tuple((p, *(m.get(p, MISSING) for m, _ in parsed)) for p in packages),
    )
    blocks: list[Block] = [Heading("Versions"), table]
    if len(parsed) > 1:
        blocks.insert(
            1,
            Paragraph(
                f"The tasks of this run used {len(parsed)} different version "
                "manifests: results may not be comparable across them.",
                note=True,
            ),
        )
    return blocks


def _error_line(error: object) -> str:
    """The last line of an error text (a traceback ends with the message)."""
    lines = _text(error).strip().splitlines()
    return lines[-1] if lines else MISSING


def failed_section(rows: pd.DataFrame) -> list[Block]:
    """The failed tasks (status ``ERROR``) with their error's first line."""
    failed = rows[rows["status"] == "ERROR"]
    if failed.empty:
        return []
    listed = failed.head(MAX_FAILED_LISTED)
    table = Table(
        "failed",
        f"Failed tasks ({len(failed)})",
        ("window", "kind", "name", "objective", "error"),
        tuple(
            (
                str(r["window"]),
                str(r["kind"]),
                str(r["name"]),
                str(r["objective"]),
                _error_line(r["error"]),
            )
            for _, r in listed.iterrows()
        ),
    )
    blocks: list[Block] = [Heading("Failed tasks"), table]
    if len(failed) > len(listed):
        blocks.append(
            Paragraph(f"{len(failed) - len(listed)} more failed tasks not listed.")
        )
    return blocks
