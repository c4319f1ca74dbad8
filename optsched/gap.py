"""Competitive gap of online policies against the offline optimum.

For a window and an objective, the *reference* is the best lower bound
``LB`` (closed-form bounds, LP, solver) and the best known objective ``UB``
(the solver's schedule or any policy's schedule, whichever is better). A
policy with objective ``v`` has competitive ratio ``v / OPT``; with only the
bounds known, ``OPT`` lies in ``[LB, UB]`` and the ratio in the interval

.. math:: \\left[ \\frac{v}{UB}, \\frac{v}{LB} \\right],

which collapses to the exact ratio when ``LB = UB`` (optimum proven).

Every schedule used here, policy or solver, passes
:func:`optsched.check.check_schedule` first; an invalid one raises.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.metrics import summarize
from optsched.objective import Objective
from optsched.schedule import Schedule

OPTIMAL_TOLERANCE = 1e-9
"""Relative tolerance under which ``LB`` and ``UB`` count as equal (wct sums
of float weights); makespans are integers and compare exactly."""


class InvalidScheduleError(RuntimeError):
    """A producer returned a schedule the checker rejects: a bug, never data."""


def _verified(instance: Instance, schedule: Schedule, producer: str) -> Schedule:
    violations = check_schedule(instance, schedule)
    if violations:
        raise InvalidScheduleError(
            f"{producer} produced an invalid schedule on {instance.name or 'window'}:"
            f" {violations[0]} (and {len(violations) - 1} more)"
        )
    return schedule


@dataclass(frozen=True, slots=True)
class PolicyOutcome:
    """A policy's checked schedule on one window and its objective value."""

    policy: str
    objective: str
    value: float
    metrics: dict[str, float]
    schedule: Schedule
    runtime: float


@dataclass(frozen=True, slots=True)
class Reference:
    """What is known of the optimum of one window: ``LB <= OPT <= UB``."""

    objective: str
    lower: float | None
    lower_method: str | None
    upper: float | None
    upper_source: str | None
    status: str
    runtime: float
    bounds: dict[str, float] = field(default_factory=dict)
    schedule: Schedule | None = None
    error: str | None = None
    """The back-end's error text when its status is ``ERROR``."""

    @property
    def optimal(self) -> bool:
        """``True`` when ``LB = UB`` (the optimum is proven)."""
        return is_optimal(self.lower, self.upper)


def is_optimal(lower: float | None, upper: float | None) -> bool:
    """``LB = UB`` up to :data:`OPTIMAL_TOLERANCE` (relative)."""
    if lower is None or upper is None:
        return False
    return upper - lower <= OPTIMAL_TOLERANCE * max(1.0, abs(upper))


def evaluate_policy(
    instance: Instance, policy: str, objective: Objective | str, *, seed: int = 0
) -> PolicyOutcome:
    """Simulate ``policy`` on ``instance``, check the schedule, measure it."""
    from optsched.heuristics import simulate

    objective = Objective.parse(objective)
    began = time.perf_counter()
    result = simulate(instance, policy, seed=seed)
    runtime = time.perf_counter() - began
    schedule = _verified(instance, result.schedule, f"policy {policy}")
    return PolicyOutcome(
        policy=policy,
        objective=objective.label,
        value=objective.value(instance, schedule),
        metrics=summarize(instance, schedule).as_dict(),
        schedule=schedule,
        runtime=runtime,
    )


def evaluate_reference(
    instance: Instance,
    objective: Objective | str,
    *,
    backend: str = "cpsat",
    time_limit: float = 10.0,
    workers: int = 1,
    hints: Sequence[Schedule] = (),
) -> Reference:
    """Solve (or bound) the window offline; check and re-measure the schedule.

    ``hints`` are extra upper-bound candidates (e.g. the policies' schedules);
    the best one by objective is passed to the solver as its hint.
    """
    from optsched.models import solve

    objective = Objective.parse(objective)
    hint = min(hints, key=lambda s: objective.value(instance, s), default=None)
    result = solve(
        instance,
        objective,
        backend=backend,
        time_limit=time_limit,
        workers=workers,
        hint=hint,
    )
    schedule = result.schedule
    upper = None
    if schedule is not None:
        _verified(instance, schedule, f"back-end {backend}")
        upper = objective.value(instance, schedule)
    binding = result.binding_bound
    return Reference(
        objective=objective.label,
        lower=result.lower_bound,
        lower_method=binding.method if binding is not None else None,
        upper=upper,
        upper_source=result.upper_bound_source or backend,
        status=result.status.value,
        runtime=result.runtime,
        bounds={b.method: b.value for b in result.bounds},
        schedule=schedule,
        error=(
            str(result.params.get("error", "the back-end reported status ERROR"))
            if result.status.value == "ERROR"
            else None
        ),
    )


def ratio_interval(
    value: float, lower: float | None, upper: float | None
) -> tuple[float, float]:
    """Competitive-ratio interval ``[value / UB, value / LB]``.

    ``high`` is ``inf`` when ``LB`` is unknown or 0 while ``value > 0``; the
    ratio is exactly 1 when ``value = UB = 0``. ``low`` is ``nan`` when no
    upper bound is known.
    """
    if upper is None:
        low = math.nan
    elif upper == 0:
        low = 1.0 if value == 0 else math.inf
    else:
        low = value / upper
    if lower is None or lower <= 0:
        high = 1.0 if value == 0 else math.inf
    else:
        high = value / lower
    if is_optimal(lower, upper):
        high = low
    return low, high


@dataclass(frozen=True, slots=True)
class GapRow:
    """One policy on one window for one objective."""

    window: str
    policy: str
    objective: str
    value: float
    lower: float | None
    upper: float | None
    lower_method: str | None
    upper_source: str | None
    optimal: bool
    ratio_low: float
    ratio_high: float


def gap_rows(
    window: str,
    outcomes: Iterable[PolicyOutcome],
    reference: Reference,
) -> list[GapRow]:
    """Join policy outcomes with the reference of their window and objective.

    The best upper bound is the smallest of the reference's and every
    policy's value. A policy value below the lower bound means a bound is
    wrong: that raises instead of printing a ratio below 1.
    """
    outcomes = [o for o in outcomes if o.objective == reference.objective]
    upper, source = reference.upper, reference.upper_source
    for outcome in outcomes:
        if upper is None or outcome.value < upper:
            upper, source = outcome.value, f"policy:{outcome.policy}"
    lower = reference.lower
    if lower is not None and upper is not None and upper < lower - _slack(lower):
        raise InvalidScheduleError(
            f"window {window}, {reference.objective}: a schedule of value {upper} "
            f"({source}) beats the lower bound {lower} ({reference.lower_method})"
        )
    rows = []
    for outcome in outcomes:
        low, high = ratio_interval(outcome.value, lower, upper)
        rows.append(
            GapRow(
                window=window,
                policy=outcome.policy,
                objective=reference.objective,
                value=outcome.value,
                lower=lower,
                upper=upper,
                lower_method=reference.lower_method,
                upper_source=source,
                optimal=is_optimal(lower, upper),
                ratio_low=low,
                ratio_high=high,
            )
        )
    return rows


def _slack(value: float) -> float:
    return OPTIMAL_TOLERANCE * max(1.0, abs(value))


def analyse_window(
    instance: Instance,
    window: str,
    policies: Sequence[str],
    objectives: Sequence[Objective | str],
    *,
    backend: str = "cpsat",
    time_limit: float = 10.0,
    workers: int = 1,
) -> tuple[list[GapRow], dict[str, Reference], dict[tuple[str, str], PolicyOutcome]]:
    """Every policy and the reference on one window, for every objective.

    Returns the gap rows, the references by objective label, and the policy
    outcomes by (policy, objective label).
    """
    rows: list[GapRow] = []
    references: dict[str, Reference] = {}
    outcomes: dict[tuple[str, str], PolicyOutcome] = {}
    parsed = [Objective.parse(o) for o in objectives]
    if not parsed:
        raise ValueError("no objective given")
    # A policy's schedule does not depend on the objective: simulate once.
    simulated = [evaluate_policy(instance, p, parsed[0]) for p in policies]
    for objective in parsed:
        found = [
            replace(
                o,
                objective=objective.label,
                value=objective.value(instance, o.schedule),
            )
            for o in simulated
        ]
        outcomes.update({(o.policy, o.objective): o for o in found})
        reference = evaluate_reference(
            instance,
            objective,
            backend=backend,
            time_limit=time_limit,
            workers=workers,
            hints=[o.schedule for o in found],
        )
        references[objective.label] = reference
        rows += gap_rows(window, found, reference)
    return rows, references, outcomes


def rows_frame(rows: Iterable[GapRow]) -> pd.DataFrame:
    """Gap rows as a DataFrame (one row each, columns = GapRow fields)."""
    columns = list(GapRow.__dataclass_fields__)
    return pd.DataFrame(
        [[getattr(r, c) for c in columns] for r in rows], columns=columns
    )


def aggregate(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, objective): windows, mean/median/max of both ratio ends.

    ``worst_window`` is the window with the largest ``ratio_high`` (ties: the
    largest ``ratio_low``, then the first in order); ``optimal_share`` the
    share of windows whose optimum is proven.
    """
    columns = [
        "policy", "objective", "windows", "optimal_share",
        "mean_low", "mean_high", "median_low", "median_high",
        "max_low", "max_high", "worst_window",
    ]  # fmt: skip
    if rows.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for (policy, objective), group in rows.groupby(["policy", "objective"], sort=False):
        worst = group.sort_values(
            ["ratio_high", "ratio_low"], ascending=False, kind="stable"
        ).iloc[0]
        out.append(
            [
                policy,
                objective,
                len(group),
                float(group["optimal"].mean()),
                float(group["ratio_low"].mean()),
                float(group["ratio_high"].mean()),
                float(group["ratio_low"].median()),
                float(group["ratio_high"].median()),
                float(group["ratio_low"].max()),
                float(group["ratio_high"].max()),
                worst["window"],
            ]
        )
    return pd.DataFrame(out, columns=columns)
