"""Charts of competitive gaps, bounds and machine use.

The DataFrames are those of :class:`optsched.bench.store.Store`:
``gap_rows`` has one row per (window, policy, objective) with the columns
``window``, ``window_index``, ``policy`` (or ``name``), ``objective``,
``value``, ``lower`` and ``upper`` (best bounds of the window), ``ratio_low``,
``ratio_high`` and ``optimal``; ``rows`` is the whole task table (policy
and solver rows, see ``docs`` of the store). No chart combines the bounds
of a window on its own: they come from the window's reference
(:func:`optsched.bench.store.references`, through
:func:`optsched.analysis.gap.window_reference`), either directly or as the ``lower``
and ``upper`` columns :func:`~optsched.bench.store.gap_frame` copies from it.

Competitive ratio of a policy with objective value ``v`` on a window whose
optimum lies in ``[LB, UB]``: ``v / OPT`` in ``[v / UB, v / LB]``
(:func:`optsched.analysis.gap.ratio_interval`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from optsched.analysis.gap import OPTIMAL_TOLERANCE
from optsched.instance import Instance
from optsched.metrics import utilisation as mean_utilisation
from optsched.plot.gantt import (
    BUSY_EDGE,
    BUSY_FACE,
    BUSY_HATCH,
    TIME_UNITS,
    choose_time_unit,
)
from optsched.plot.text import literal_texts
from optsched.schedule import Schedule

if TYPE_CHECKING:
    from optsched.analysis.gap import Reference
    from optsched.bench.store import TaskRow

_TAB10 = matplotlib.colormaps["tab10"]
_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "*")
_OBJECTIVE_SHADES = ("#505050", "#b4b4b4", "#ffffff", "#808080", "#e0e0e0")
"""Bar colours of objectives: greys, so that no objective looks like a
policy (policies have the ``tab10`` colours in every chart)."""


def _new_axes(figsize: tuple[float, float]) -> Axes:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def with_policy_column(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with a ``policy`` column (the store calls it ``name``)."""
    if "policy" in rows.columns or "name" not in rows.columns:
        return rows
    return rows.assign(policy=rows["name"])


def window_columns(rows: pd.DataFrame) -> list[str]:
    """Columns that identify a window: its key, and its trace when known
    (two traces of one suite have windows with the same key)."""
    return [c for c in ("trace_sha256", "window") if c in rows.columns]


def policy_colours(
    policies: Sequence[str],
) -> dict[str, tuple[float, float, float, float]]:
    """One ``tab10`` colour per policy, in sorted name order (stable)."""
    return {name: _TAB10(i % 10) for i, name in enumerate(sorted(set(policies)))}


def objective_axis_label(objective: str) -> str:
    """Axis label with the formula and unit of an objective label.

    ``cmax`` -> ``C_max (s)``; ``wct:one`` -> ``Σ C_j (s)``; ``wct:size`` ->
    ``Σ q_j C_j (processor·s)``; ``wct:area`` -> ``Σ q_j p_j C_j
    (processor·s²)``; ``:relative`` replaces ``C_j`` by ``C_j − r_j``.
    """
    kind, *rest = objective.split(":")
    if kind == "cmax":
        return "makespan C_max (s)"
    completion = "(C_j − r_j)" if "relative" in rest else "C_j"
    weights = next((r for r in rest if r != "relative"), "one")
    formula, unit = {
        "one": ("", "s"),
        "size": ("q_j ", "processor·s"),
        "area": ("q_j p_j ", "processor·s²"),
    }.get(weights, ("w_j ", "weight·s"))
    return f"Σ {formula}{completion} ({unit})"


# ---------------------------------------------------------------------------
# ratio distribution


def _groups(gap_rows: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(objective, policy, rows) in objective order, then policy name order."""
    rows = with_policy_column(gap_rows)
    out = []
    for objective in sorted(rows["objective"].unique()):
        of_objective = rows[rows["objective"] == objective]
        for policy in sorted(of_objective["policy"].unique()):
            out.append(
                (objective, policy, of_objective[of_objective["policy"] == policy])
            )
    return out


def _finite_top(gap_rows: pd.DataFrame) -> float:
    values = pd.concat([gap_rows["ratio_low"], gap_rows["ratio_high"]])
    finite = values[np.isfinite(values.to_numpy(dtype=float))]
    return float(finite.max()) if len(finite) else 1.0


MIN_BOX_WINDOWS = 8
"""Fewest windows for which a box plot is drawn: with fewer, quartiles say
less than the points themselves, so only the points are shown."""

LOG_RATIO_ABOVE = 4.0
"""The ratio axis is logarithmic when some finite ratio exceeds this: one
bad policy (ratio 12) must not squash the others (1.00-1.05) into a line."""


def ratio_distribution(
    gap_rows: pd.DataFrame,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    min_box_windows: int = MIN_BOX_WINDOWS,
) -> Axes:
    """Competitive-ratio intervals per policy and objective, one row each.

    Rows are (objective, policy) groups, top to bottom; the x axis is the
    ratio. Each window is a horizontal segment from ``v / UB`` to
    ``v / LB`` (a dot when the optimum is proven), spread over the row.
    A group of at least ``min_box_windows`` windows also gets a box of
    the low ends (filled) above its segments and one of the high ends
    (hollow) below; smaller groups show the points only. Infinite high
    ends (no positive lower bound) are drawn as triangles at the right
    edge and counted in the row's label. Policy names are written in the
    policy's colour (:func:`policy_colours`), the colour of its markers
    in every chart of a report. The dotted line ``ratio = 1`` is
    optimality; the x axis is logarithmic beyond :data:`LOG_RATIO_ABOVE`.
    """
    groups = _groups(gap_rows)
    if ax is None:
        ax = _new_axes((8.0, 1.4 + 0.45 * max(1, len(groups))))
    colours = policy_colours([policy for _, policy, _ in groups])
    top = _finite_top(gap_rows)
    clip = 1 + (top - 1) * 1.08 if top > 1 else 1.05
    several = len({objective for objective, _, _ in groups}) > 1
    labels, boxed = [], False
    for y, (objective, policy, group) in enumerate(groups):
        infinite, box = _draw_ratio_group(
            ax, float(y), group, colours[policy], clip, min_box_windows
        )
        boxed |= box
        label = f"{policy} · {objective}" if several else policy
        labels.append(label + (f" ({infinite} × ∞)" if infinite else ""))
    ax.axvline(1.0, color="black", linestyle=":", linewidth=0.9)
    ax.set_yticks(range(len(groups)), labels, fontsize=8)
    for tick, (_, policy, _) in zip(ax.get_yticklabels(), groups, strict=True):
        tick.set_color(colours[policy])
    ax.set_ylim(len(groups) - 0.5, -0.5)  # first group on top
    if top > LOG_RATIO_ABOVE:
        ax.set_xscale("log")
    ax.set_xlim(min(0.98, ax.get_xlim()[0]), clip * 1.04 if clip > 1 else 1.1)
    ax.set_xlabel("competitive ratio  v / OPT  (interval [v/UB, v/LB])")
    ax.set_title(title or "Competitive-ratio intervals per window")
    ax.legend(
        handles=_ratio_legend(boxed, min_box_windows),
        fontsize=7.5,
        loc="upper left",
        bbox_to_anchor=(1.005, 1.0),
        frameon=False,
    )
    return literal_texts(ax)


def _ratio_legend(boxed: bool, min_box_windows: int) -> list[Any]:
    handles: list[Any] = []
    if boxed:
        handles += [
            Patch(facecolor="#999999", alpha=0.5, label="box of v/UB (low end)"),
            Patch(facecolor="none", edgecolor="black", label="box of v/LB (high end)"),
        ]
    handles += [
        Line2D([], [], color="#555555", label="one window: [v/UB, v/LB]"),
        Line2D([], [], color="#555555", marker=".", ls="", label="proven: v/UB = v/LB"),
        Line2D([], [], color="#555555", marker=">", ls="", label="v/LB = ∞"),
        Line2D([], [], color="black", ls=":", label="ratio 1 (optimal)"),
    ]
    if not boxed:
        handles.append(
            Patch(facecolor="none", edgecolor="none",
                  label=f"no box: fewer than {min_box_windows} windows")
        )  # fmt: skip
    return handles


def _draw_ratio_group(
    ax: Axes,
    y: float,
    group: pd.DataFrame,
    colour: Any,
    clip: float,
    min_box_windows: int,
) -> tuple[int, bool]:
    """Draw one group at row ``y``; (infinite high ends, box drawn)."""
    low = group["ratio_low"].to_numpy(dtype=float)
    high = group["ratio_high"].to_numpy(dtype=float)
    known = ~np.isnan(low)
    low, high = low[known], high[known]
    infinite = np.isinf(high)
    boxed = len(low) >= min_box_windows
    if boxed:
        box = ax.boxplot(
            [low], positions=[y - 0.27], widths=0.16, patch_artist=True,
            showfliers=False, manage_ticks=False, orientation="horizontal",
        )  # fmt: skip
        for patch in box["boxes"]:
            patch.set(facecolor=colour, alpha=0.5)
        if (~infinite).any():
            ax.boxplot(
                [high[~infinite]], positions=[y + 0.27], widths=0.16,
                showfliers=False, manage_ticks=False, orientation="horizontal",
                medianprops={"color": colour},
            )  # fmt: skip
    # Deterministic spread of the windows over the middle of the row.
    n = len(low)
    offsets = np.linspace(-0.15, 0.15, n) if n > 1 else np.zeros(n)
    rows = y + offsets
    shown_high = np.where(infinite, clip, high)
    ax.hlines(rows, low, shown_high, color=colour, linewidth=0.9, alpha=0.75)
    ax.plot(low, rows, "|", color=colour, markersize=5)
    finite = ~infinite
    ax.plot(high[finite], rows[finite], "|", color=colour, markersize=5)
    exact = low == high
    ax.plot(low[exact], rows[exact], ".", color=colour, markersize=4, alpha=0.9)
    if infinite.any():
        ax.plot(
            np.full(int(infinite.sum()), clip), rows[infinite], ">", color=colour,
            markersize=4,
        )  # fmt: skip
    return int(infinite.sum()), boxed


# ---------------------------------------------------------------------------
# bounds per window


def bounds_per_window(
    gap_rows: pd.DataFrame,
    objective: str,
    *,
    relative: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Best lower and upper bound of every window, with the policies' values.

    A grey bar spans ``[LB, UB]`` (a black tick when ``LB = UB``, the proven
    optimum); each policy's objective value is a marker. Windows are placed
    by ``window_index``. With ``relative``, every number of a window is
    divided by its best upper bound, so that windows of very different
    sizes share one scale: the bar spans ``[LB / UB, 1]`` and a policy sits
    at ``v / UB`` (the low end of its ratio interval). Otherwise the y axis
    is logarithmic when values span more than a factor 20.
    """
    rows = with_policy_column(gap_rows)
    rows = rows[rows["objective"] == objective]
    rows = rows.assign(x=window_positions(rows)) if len(rows) else rows.assign(x=[])
    if relative:
        rows = _relative_to_upper(rows)
    if ax is None:
        ax = _new_axes((9.0, 4.5))
    per_window = _window_bounds(rows)
    x = per_window["x"].to_numpy(dtype=float)
    lower = per_window["lower"].to_numpy(dtype=float)
    upper = per_window["upper"].to_numpy(dtype=float)
    has_lower = ~np.isnan(lower)
    # Bars and markers thin out as windows get many (KTH: hundreds).
    bar_width = max(1.5, min(6.0, 240 / max(1, len(x))))
    ax.vlines(
        x[has_lower],
        lower[has_lower],
        upper[has_lower],
        color="#b0b0b0",
        linewidth=bar_width,
        label="[best LB, best UB]",
    )
    proven = has_lower & np.isclose(lower, upper, rtol=OPTIMAL_TOLERANCE, atol=0)
    ax.plot(x[proven], upper[proven], "_", color="black", markersize=12, mew=2)
    if (~has_lower).any():
        ax.plot(x[~has_lower], upper[~has_lower], "v", color="#b0b0b0", ms=7)
    policies = sorted(rows["policy"].unique())
    colours = policy_colours(policies)
    width = 0.3 / max(1, len(policies))
    for i, policy in enumerate(policies):
        mine = rows[rows["policy"] == policy]
        shift = (i - (len(policies) - 1) / 2) * width
        ax.plot(
            mine["x"].to_numpy(dtype=float) + shift,
            mine["value"].to_numpy(dtype=float),
            _MARKERS[i % len(_MARKERS)],
            color=colours[policy],
            markersize=4 if len(x) <= 60 else 2.5,
            linestyle="",
            label=policy,
        )
    if relative:
        ax.set_ylabel(f"value / best UB of the window ({objective})")
    else:
        _maybe_log(ax, rows, per_window)
        ax.set_ylabel(objective_axis_label(objective))
    ax.set_xlabel("window (index in the suite)")
    ax.set_title(title or f"Bounds and policy values per window — {objective}")
    handles, _ = ax.get_legend_handles_labels()
    handles += [
        Line2D([], [], color="black", marker="_", ls="", ms=10, mew=2, label="LB = UB"),
    ]
    if (~has_lower).any():
        handles.append(
            Line2D([], [], color="#b0b0b0", marker="v", ls="", label="UB, no LB")
        )
    ax.legend(
        handles=handles,
        fontsize=7.5,
        loc="upper left",
        bbox_to_anchor=(1.005, 1.0),
        frameon=False,
    )
    if len(x) and len(x) <= 30:
        ax.set_xticks(sorted(set(x.astype(int).tolist())))
    return literal_texts(ax)


def _relative_to_upper(rows: pd.DataFrame) -> pd.DataFrame:
    """``value``, ``lower`` and ``upper`` divided by the row's best UB (1 when
    the UB is 0 or unknown, so nothing is divided by zero)."""
    upper = rows["upper"].astype(float)
    scale = upper.where((upper > 0) & upper.notna(), 1.0)
    return rows.assign(
        value=rows["value"].astype(float) / scale,
        lower=rows["lower"].astype(float) / scale,
        upper=upper / scale,
    )


def window_positions(rows: pd.DataFrame) -> pd.Series:
    """x position of every row's window: its ``window_index`` when the rows
    come from one trace, else the rank of (trace, window_index)."""
    ids = window_columns(rows)
    if "trace_sha256" not in ids or rows["trace_sha256"].nunique() <= 1:
        return rows["window_index"].astype(float)
    order = (
        rows[[*ids, "window_index"]]
        .drop_duplicates()
        .sort_values(["trace_sha256", "window_index"], kind="stable")
    )
    rank = {tuple(r[ids]): float(i) for i, (_, r) in enumerate(order.iterrows())}
    return rows[ids].apply(lambda r: rank[tuple(r)], axis=1).astype(float)


def _window_bounds(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per window: position, best LB and best UB.

    Nothing is combined here: ``lower`` and ``upper`` of a
    :func:`~optsched.bench.store.gap_frame` row are its window's reference
    (:func:`optsched.bench.store.references`), the same on every policy row
    of the window, so the first row's are taken."""
    columns = ["x", "lower", "upper"]
    if rows.empty:
        return pd.DataFrame(columns=columns, dtype=float)
    first = rows.drop_duplicates(window_columns(rows))
    return first[columns].astype(float).sort_values("x", kind="stable")


def _maybe_log(ax: Axes, rows: pd.DataFrame, per_window: pd.DataFrame) -> None:
    values = pd.concat([rows["value"], per_window["lower"], per_window["upper"]])
    values = values.dropna().astype(float)
    values = values[values > 0]
    if len(values) and values.max() / values.min() > 20:
        ax.set_yscale("log")


# ---------------------------------------------------------------------------
# binding bounds


ReferenceKey = tuple[str, ...]
"""(suite, trace sha256, window, objective): a key of
:func:`optsched.bench.store.references`."""


def window_references(
    rows: pd.DataFrame | Sequence[TaskRow] | Mapping[ReferenceKey, Reference],
) -> Mapping[ReferenceKey, Reference]:
    """The reference of every window and objective of ``rows``.

    ``rows`` are store rows (:meth:`Store.rows
    <optsched.bench.store.Store.rows>`, or decoded
    :class:`~optsched.bench.store.TaskRow`), whose references
    :func:`optsched.bench.store.references` computes, or those references
    already. No chart combines bounds on its own.
    """
    from optsched.bench.store import decode_rows, references

    if isinstance(rows, Mapping):
        return rows
    if isinstance(rows, pd.DataFrame):
        return references(decode_rows(rows))
    return references(rows)


def _ties(value: float, best: float) -> bool:
    return abs(value - best) <= OPTIMAL_TOLERANCE * max(1.0, abs(best))


def _binding_lower(reference: Reference) -> list[str]:
    """The methods of ``reference.bounds`` attaining its best lower bound."""
    best = reference.lower
    if best is None:
        return ["(no lower bound)"]
    return sorted(m for m, value in reference.bounds.items() if _ties(value, best))


def _binding_upper(reference: Reference) -> list[str]:
    """The sources of ``reference.candidates`` attaining its best upper bound."""
    best = reference.upper
    if best is None:
        return ["(no upper bound)"]
    return sorted(s for s, value in reference.candidates.items() if _ties(value, best))


def binding_bound_counts(
    rows: pd.DataFrame | Sequence[TaskRow] | Mapping[ReferenceKey, Reference],
) -> pd.DataFrame:
    """How often each bound is the best one, per objective.

    The reference of every (window, objective) comes from
    :func:`optsched.bench.store.references` (see :func:`window_references`;
    ``rows`` may be those references already): its best lower bound is
    :attr:`~optsched.analysis.gap.Reference.lower` among the methods of
    :attr:`~optsched.analysis.gap.Reference.bounds` (each successful solver row's
    ``lower`` and every method in its ``bounds``), its best upper bound
    :attr:`~optsched.analysis.gap.Reference.upper` among the sources of
    :attr:`~optsched.analysis.gap.Reference.candidates` (the solver rows' ``upper``
    and the values of the policies that killed no job). A method or source
    is *binding* on a window when it attains the best value (relative
    tolerance :data:`optsched.analysis.gap.OPTIMAL_TOLERANCE`); ties count for all of
    them. Rows with status ``ERROR`` are ignored.

    Returns
    -------
    pandas.DataFrame
        Columns ``objective``, ``kind`` (``"lower"`` | ``"upper"``),
        ``method``, ``windows`` (count), ``share`` (of the windows of that
        objective), sorted by objective, kind, count descending, method.
    """
    columns = ["objective", "kind", "method", "windows", "share"]
    counts: dict[tuple[str, str, str], int] = {}
    totals: dict[str, int] = {}
    for key, reference in window_references(rows).items():
        objective = key[3]
        totals[objective] = totals.get(objective, 0) + 1
        for kind, methods in (
            ("lower", _binding_lower(reference)),
            ("upper", _binding_upper(reference)),
        ):
            for method in methods:
                counted = (objective, kind, method)
                counts[counted] = counts.get(counted, 0) + 1
    table = pd.DataFrame(
        [
            [objective, kind, method, n, n / totals[objective]]
            for (objective, kind, method), n in counts.items()
        ],
        columns=columns,
    )
    if table.empty:
        return table
    table = table.sort_values(
        ["objective", "kind", "windows", "method"],
        ascending=[True, True, False, True],
        kind="stable",
    )
    return table.reset_index(drop=True)


def binding_bounds(
    counts: pd.DataFrame,
    *,
    kind: str = "lower",
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Horizontal bars: on how many windows each bound is binding.

    ``counts`` is :func:`binding_bound_counts`; ``kind`` picks lower bounds
    (which formula or solver gives the best LB) or upper bounds (which
    solver or policy gives the best known schedule). One bar per (method,
    objective); ties count for every method attaining the best value, so
    the bars of one objective may add up to more than its windows.
    """
    if kind not in ("lower", "upper"):
        raise ValueError(f"kind {kind!r} must be 'lower' or 'upper'")
    mine = counts[counts["kind"] == kind]
    methods = sorted(mine["method"].unique())
    objectives = sorted(mine["objective"].unique())
    if ax is None:
        ax = _new_axes((7.5, 1.2 + 0.35 * max(1, len(methods) * len(objectives))))
    height = 0.8 / max(1, len(objectives))
    for j, objective in enumerate(objectives):
        of_objective = mine[mine["objective"] == objective].set_index("method")
        values = [int(of_objective["windows"].get(m, 0)) for m in methods]
        y = np.arange(len(methods)) + (j - (len(objectives) - 1) / 2) * height
        bars = ax.barh(
            y, values, height=height, label=objective, edgecolor="black",
            linewidth=0.5, color=_OBJECTIVE_SHADES[j % len(_OBJECTIVE_SHADES)],
        )  # fmt: skip
        ax.bar_label(bars, fontsize=7, padding=2)
    ax.set_yticks(np.arange(len(methods)), methods, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("windows where the bound is binding (ties count for each)")
    what = "lower bound" if kind == "lower" else "upper bound (best known schedule)"
    ax.set_title(title or f"Binding {what}")
    if objectives:
        ax.legend(
            title="objective",
            fontsize=7.5,
            title_fontsize=8,
            frameon=False,
            loc="upper left",
            bbox_to_anchor=(1.005, 1.0),
        )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(x=0.12)
    return literal_texts(ax)


# ---------------------------------------------------------------------------
# utilisation


def _steps(
    intervals: Sequence[tuple[int, int, int]],
) -> tuple[np.ndarray, np.ndarray]:
    """Times and processors in use from each time on (half-open intervals)."""
    delta: dict[int, int] = {}
    for start, end, size in intervals:
        if end > start:
            delta[start] = delta.get(start, 0) + size
            delta[end] = delta.get(end, 0) - size
    times = np.array(sorted(delta), dtype=np.int64)
    used = np.cumsum([delta[t] for t in times]).astype(np.int64)
    return times, used


def utilisation_steps(
    instance: Instance, schedule: Schedule
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Processors used by jobs and by busy blocks, as step functions.

    Returns ``(times, jobs, busy)``: from ``times[i]`` until ``times[i + 1]``
    the jobs use ``jobs[i]`` processors and the busy blocks ``busy[i]``.
    The last entries are 0 (everything has ended). A job's size is the
    number of its processor indices, or its size in the instance.
    """
    sizes = {j.id: j.size for j in instance.jobs}
    job_intervals = [
        (p.start, p.end, len(p.processors) if p.processors else sizes[job_id])
        for job_id, p in schedule.placements.items()
    ]
    busy_intervals = [(b.start, b.end, b.size) for b in instance.machine.unavailable]
    job_t, job_used = _steps(job_intervals)
    busy_t, busy_used = _steps(busy_intervals)
    times = np.union1d(job_t, busy_t)
    return times, _at(times, job_t, job_used), _at(times, busy_t, busy_used)


def _at(times: np.ndarray, step_t: np.ndarray, step_v: np.ndarray) -> np.ndarray:
    """Value of a right-continuous step function at ``times``."""
    if len(step_t) == 0:
        return np.zeros(len(times), dtype=np.int64)
    index = np.searchsorted(step_t, times, side="right") - 1
    return np.where(index >= 0, step_v[np.maximum(index, 0)], 0)


def utilisation(
    instance: Instance,
    schedule: Schedule,
    *,
    ax: Axes | None = None,
    label: str | None = None,
    color: Any = None,
    linestyle: str = "-",
    show_busy: bool = True,
    title: str | None = None,
    time_unit: str = "auto",
) -> Axes:
    """Share of the machine used by jobs over time, ``(Σ running q_j) / m``.

    A step line (right-continuous, half-open intervals). With ``show_busy``
    the share taken by busy blocks is hatched grey, drawn down from 1 so
    that the line of a feasible schedule stays under it. The legend gives
    the mean utilisation of :func:`optsched.metrics.utilisation` (jobs only,
    over ``[min_j r_j, C_max)``). Call it twice on one ``ax`` to compare
    two schedules of the same instance (``show_busy=False`` the second time).
    ``time_unit`` is that of :func:`optsched.plot.gantt.choose_time_unit`
    (``"auto"`` picks it from the span; pass the Gantt charts' unit, e.g.
    :func:`~optsched.plot.gantt.shared_time_unit`, to draw both alike).
    """
    if ax is None:
        ax = _new_axes((9.0, 3.5))
    m = instance.processors
    times, jobs, busy = utilisation_steps(instance, schedule)
    span = float(times[-1] - times[0]) if len(times) else 0.0
    unit = choose_time_unit(span, time_unit)
    scale = TIME_UNITS[unit]
    name = label or schedule.producer or "schedule"
    mean = mean_utilisation(instance, schedule)
    if len(times):
        ax.step(
            times / scale,
            jobs / m,
            where="post",
            color=color,
            linestyle=linestyle,
            linewidth=1.6 if linestyle == "-" else 1.2,
            label=f"{name} (mean {mean:.3f})",
        )
        if show_busy and busy.any():
            ax.fill_between(
                times / scale,
                1 - busy / m,
                1,
                step="post",
                facecolor=BUSY_FACE,
                edgecolor=BUSY_EDGE,
                hatch=BUSY_HATCH,
                linewidth=0,
                label="busy blocks",
            )
    ax.set_ylim(0, 1.05)
    ax.set_xlim(left=min(0.0, float(times[0]) / scale) if len(times) else 0)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(f"processors in use / m  (m = {m})")
    ax.set_title(title or "Utilisation over time")
    ax.legend(
        fontsize=7.5,
        loc="upper left",
        bbox_to_anchor=(1.005, 1.0),
        frameon=False,
        title="mean over [first release, C_max)",
        title_fontsize=7.5,
    )
    return literal_texts(ax)
