"""The analysis pipeline: window → policies and optimum → competitive ratio.

One path serves ``optsched gap`` (in memory) and ``optsched bench`` (into a
results store); both run the same task graph (:mod:`optsched.bench.tasks`):

1. per window, one **policy task** per policy: the policy is simulated once,
   its schedule checked (:func:`optsched.check.check_schedule`), and every
   objective recomputed from it (:func:`evaluate_policy`);
2. per window and objective, one **solver task** per back-end, run after the
   window's policy tasks and given their complete schedules as incumbents,
   beside the offline heuristics' schedules (:func:`evaluate_reference`);
3. per window and objective, :func:`window_reference` turns the rows into the
   **reference** ``LB <= OPT <= UB``, and :func:`gap_rows` into ratios.

A policy with objective ``v`` has competitive ratio ``v / OPT``; with only
the bounds known, ``OPT`` lies in ``[LB, UB]`` and the ratio in

.. math:: \\left[ \\frac{v}{UB}, \\frac{v}{LB} \\right],

which collapses to the exact ratio when ``LB = UB`` (optimum proven).

Soundness rules enforced here:

* A schedule in which a job was killed (stopped at its estimate) did less
  work than the window asks: it is reported, with its killed jobs and the
  work lost, but it never enters the best upper bound, never becomes a solver
  incumbent, and its ratio is *not comparable* (``NaN``).
* A schedule whose value lies below a proven lower bound is a defect of
  optsched: the window's ratios are withheld and the reference carries a
  :attr:`Reference.defect` text naming the schedule and the bound, which the
  commands print with the window saved for a bug report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.metrics import summarize
from optsched.objective import Objective
from optsched.result import Incumbent, SolveStatus
from optsched.schedule import Schedule
from optsched.simulation import RunOptions

if TYPE_CHECKING:
    from optsched.heuristics import Policy

OPTIMAL_TOLERANCE = 1e-9
"""Relative tolerance under which ``LB`` and ``UB`` count as equal (wct sums
of float weights); makespans are integers and compare exactly."""

POLICY_SEED = 0
"""Seed of every policy simulation of the pipeline (random orders)."""

ORACLE_POLICIES: tuple[str, ...] = ("fcfs", "easy", "conservative", "best-package")
"""Policies simulated with exact run times (``estimate = runtime``, so no job
is killed) as extra incumbents of the solver tasks."""


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


# --------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------


def canonical_policy(spec: str | Policy) -> str:
    """A policy's identity: its canonical spec (``sjf`` and ``spt`` are one)."""
    from optsched.heuristics import parse_policy

    return parse_policy(spec).spec


def lost_work(instance: Instance, schedule: Schedule) -> int:
    """Processor-seconds killed jobs did not run: ``sum q_j (p_j - (C_j - S_j))``."""
    jobs = instance.jobs_by_id()
    return sum(
        jobs[j].size * (jobs[j].runtime - (schedule[j].end - schedule[j].start))
        for j in schedule.killed
    )


@dataclass(frozen=True, slots=True)
class PolicyOutcome:
    """A policy's checked schedule on one window and its objective values.

    Attributes
    ----------
    policy
        Canonical spec.
    values
        Objective label to value, recomputed from ``schedule``.
    killed, lost
        Jobs stopped at their estimate and the processor-seconds they did
        not run; a schedule with ``killed > 0`` is not :attr:`complete`.
    """

    policy: str
    values: Mapping[str, float]
    metrics: Mapping[str, float]
    schedule: Schedule
    runtime: float
    killed: int = 0
    lost: int = 0

    @property
    def complete(self) -> bool:
        """Every job ran its full run time: the schedule may bound the optimum."""
        return self.killed == 0


def evaluate_policy(
    instance: Instance,
    policy: str | Policy,
    objectives: Objective | str | Sequence[Objective | str],
    *,
    seed: int = POLICY_SEED,
    run: RunOptions | None = None,
) -> PolicyOutcome:
    """Simulate ``policy`` once, check the schedule, measure every objective.

    ``objectives`` is one objective or several (labels or
    :class:`~optsched.objective.Objective`); ``run`` holds the simulation
    options (kill at estimate, allocation rule, migration).
    """
    from optsched.heuristics import simulate

    options = run or RunOptions()
    began = time.perf_counter()
    result = simulate(
        instance,
        policy,
        seed=seed,
        kill_at_estimate=options.kill_at_estimate,
        allocation_rule=options.allocation_rule,
        migration=options.migration,
    )
    runtime = time.perf_counter() - began
    schedule = _verified(instance, result.schedule, f"policy {policy}")
    if isinstance(objectives, str | Objective):
        objectives = [objectives]
    parsed = [Objective.parse(o) for o in objectives]
    return PolicyOutcome(
        policy=canonical_policy(policy),
        values={o.label: o.value(instance, schedule) for o in parsed},
        metrics=summarize(instance, schedule).as_dict(),
        schedule=schedule,
        runtime=runtime,
        killed=len(schedule.killed),
        lost=lost_work(instance, schedule),
    )


# --------------------------------------------------------------------------
# The offline reference of one window
# --------------------------------------------------------------------------


def exact_estimates(instance: Instance) -> Instance:
    """The instance with ``estimate = runtime``: simulated policies then kill nobody."""
    return instance.with_jobs(j.with_exact_estimates() for j in instance.jobs)


def oracle_policies(instance: Instance) -> tuple[str, ...]:
    """The :data:`ORACLE_POLICIES` that run on ``instance``'s machine.

    Machines with speeds or SMP nodes run only the policies mapped onto
    their simulator (:func:`optsched.heuristics.simulate`): FCFS and EASY.
    """
    if instance.machine.flat:
        return ORACLE_POLICIES
    return tuple(p for p in ORACLE_POLICIES if p in ("fcfs", "easy"))


def heuristic_incumbents(instance: Instance, objective: Objective) -> list[Incumbent]:
    """Offline starting schedules of a solver task.

    The best offline list/shelf heuristic for ``objective``
    (:func:`optsched.heuristics.rigid.offline.best_heuristic`) and the
    :data:`ORACLE_POLICIES` simulated with exact run times. The back-ends
    check each before use.
    """
    from optsched.heuristics import simulate
    from optsched.heuristics.rigid.offline import best_heuristic

    best = best_heuristic(instance, objective)
    out = [Incumbent(best.producer or "heuristic", best)]
    exact = exact_estimates(instance)
    for policy in oracle_policies(instance):
        out.append(
            Incumbent(
                f"oracle:{policy}", simulate(exact, policy, seed=POLICY_SEED).schedule
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class SolverOutcome:
    """One back-end run on one window and objective (typed, checked).

    ``upper`` is recomputed from ``schedule`` (never read from the solver).
    """

    backend: str
    objective: str
    status: SolveStatus
    lower: float | None
    lower_method: str | None
    upper: float | None
    upper_source: str | None
    bounds: Mapping[str, float]
    schedule: Schedule | None
    runtime: float
    error: str | None = None
    interrupted: bool = False
    rejected: tuple[str, ...] = ()


def evaluate_reference(
    instance: Instance,
    objective: Objective | str,
    *,
    backend: str = "cpsat",
    time_limit: float = 10.0,
    workers: int = 1,
    incumbents: Sequence[Incumbent] = (),
) -> SolverOutcome:
    """Solve (or bound) the window offline; check and re-measure the schedule.

    ``incumbents`` are the window's complete policy schedules; the offline
    heuristics' schedules (:func:`heuristic_incumbents`) are added here, so
    every back-end starts from the best of them.
    """
    from optsched.models import solve

    objective = Objective.parse(objective)
    given = [*incumbents, *heuristic_incumbents(instance, objective)]
    result = solve(
        instance,
        objective,
        backend=backend,
        time_limit=time_limit,
        workers=workers,
        incumbents=given,
    )
    upper = None
    if result.schedule is not None:
        _verified(instance, result.schedule, f"back-end {backend}")
        upper = objective.value(instance, result.schedule)
    binding = result.binding_bound
    return SolverOutcome(
        backend=backend,
        objective=objective.label,
        status=result.status,
        lower=result.lower_bound,
        lower_method=binding.method if binding is not None else None,
        upper=upper,
        upper_source=(result.upper_bound_source or backend)
        if upper is not None
        else None,
        bounds={b.method: b.value for b in result.bounds},
        schedule=result.schedule,
        runtime=result.runtime,
        error=result.error,
        interrupted=result.interrupted,
        rejected=result.rejected,
    )


# --------------------------------------------------------------------------
# Reference and ratios: one function each
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """An upper-bound candidate of a window: a complete schedule's value.

    ``row`` names the stored row that holds the schedule (a task id), so that
    a report can draw the best known schedule.
    """

    value: float
    source: str
    row: str | None = None


@dataclass(frozen=True, slots=True)
class LowerBound:
    """A lower bound of a window and the method (or back-end) that proved it."""

    value: float
    method: str


@dataclass(frozen=True, slots=True)
class Reference:
    """What is known of the optimum of one window: ``LB <= OPT <= UB``.

    Attributes
    ----------
    lower, lower_method
        Best lower bound and the formula or back-end that gives it.
    upper, upper_source, upper_row
        Best complete schedule's value, its producer and the row holding it.
    bounds
        Every lower bound known, by method (the largest value per method).
    candidates
        Every upper-bound candidate, by source (the smallest per source).
    defect
        Set when a schedule's value beats a lower bound: one of them is
        wrong, which is a defect of optsched. Ratios are then withheld.
    """

    objective: str
    lower: float | None
    lower_method: str | None
    upper: float | None
    upper_source: str | None
    upper_row: str | None = None
    bounds: Mapping[str, float] = field(default_factory=dict)
    candidates: Mapping[str, float] = field(default_factory=dict)
    defect: str | None = None

    @property
    def optimal(self) -> bool:
        """``True`` when ``LB = UB`` (the optimum is proven)."""
        return self.defect is None and is_optimal(self.lower, self.upper)


def is_optimal(lower: float | None, upper: float | None) -> bool:
    """``LB = UB``: exactly when both are integers, else up to
    :data:`OPTIMAL_TOLERANCE` (relative).

    Integer values (makespans, integral ``wct``) are exact up to ``2**53``
    in a float; a relative tolerance there would call ``10**12`` optimal
    against a bound ``1000`` lower (issue 17).
    """
    if lower is None or upper is None:
        return False
    return upper - lower <= _slack(upper, lower)


def _slack(value: float, other: float) -> float:
    """Float noise allowed between ``value`` and ``other``: none between
    integers, :data:`OPTIMAL_TOLERANCE` relative otherwise."""
    if float(value).is_integer() and float(other).is_integer():
        return 0.0
    return OPTIMAL_TOLERANCE * max(1.0, abs(value))


def window_reference(
    objective: str,
    lower_bounds: Iterable[LowerBound],
    candidates: Iterable[Candidate],
) -> Reference:
    """The reference of one window and objective, from everything known of it.

    The best lower bound is the largest; the best upper bound the smallest
    candidate value (on ties the first given: callers list solver rows before
    policy rows, so a proof-carrying schedule names the bound). Only complete
    schedules may be candidates: callers leave out killed ones.

    This is the only place where bounds of a window are combined: the
    in-memory ``gap`` run, the results store, the report and its charts all
    call it.
    """
    bounds: dict[str, float] = {}
    for bound in lower_bounds:
        if bound.value > bounds.get(bound.method, -math.inf):
            bounds[bound.method] = bound.value
    best_lower = max(bounds.items(), key=lambda kv: kv[1], default=None)
    best: Candidate | None = None
    values: dict[str, float] = {}
    for candidate in candidates:
        if candidate.value < values.get(candidate.source, math.inf):
            values[candidate.source] = candidate.value
        if best is None or candidate.value < best.value:
            best = candidate
    lower = best_lower[1] if best_lower else None
    defect = None
    if (
        best is not None
        and lower is not None
        and best.value < lower - _slack(lower, best.value)
    ):
        assert best_lower is not None
        defect = (
            f"{objective}: the schedule of {best.source} has value {best.value}, "
            f"below the lower bound {lower} ({best_lower[0]}): one of them is wrong"
        )
    return Reference(
        objective=objective,
        lower=lower,
        lower_method=best_lower[0] if best_lower else None,
        upper=best.value if best else None,
        upper_source=best.source if best else None,
        upper_row=best.row if best else None,
        bounds=bounds,
        candidates=values,
        defect=defect,
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


def price_interval(restricted: Reference, plain: Reference) -> tuple[float, float]:
    """Price of a restriction: restricted optimum / optimum, as an interval.

    With ``OPT_R`` in ``[LB_R, UB_R]`` and ``OPT`` in ``[LB, UB]``, the price
    ``OPT_R / OPT`` lies in ``[max(1, LB_R / UB), UB_R / LB]``: every
    restricted schedule is a schedule, so ``OPT_R >= OPT`` and the price is
    at least 1. Exact when both optima are proven. ``NaN`` ends where a bound
    is unknown; ``inf`` when ``LB = 0 < UB_R``.
    """
    low = math.nan
    if restricted.lower is not None and plain.upper is not None:
        low = 1.0 if plain.upper == 0 else max(1.0, restricted.lower / plain.upper)
    high = math.nan
    if restricted.upper is not None and plain.lower is not None:
        if plain.lower > 0:
            high = restricted.upper / plain.lower
        else:
            high = 1.0 if restricted.upper == 0 else math.inf
    if restricted.optimal and plain.optimal and plain.upper:
        low = high = max(1.0, float(restricted.upper or 0) / plain.upper)
    return low, high


@dataclass(frozen=True, slots=True)
class GapRow:
    """One policy on one window for one objective.

    ``comparable`` is ``False`` when the ratio means nothing: the policy
    killed jobs (``killed > 0``, its schedule did less work than the
    window), or the window's reference has a defect. Its ratio ends are then
    ``NaN`` and aggregates leave the row out.
    """

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
    comparable: bool = True
    killed: int = 0
    lost_work: int = 0
    defect: str | None = None


def gap_row(
    window: str,
    policy: str,
    value: float,
    reference: Reference,
    *,
    killed: int = 0,
    lost: int = 0,
) -> GapRow:
    """A policy's value on a window against the window's reference."""
    comparable = killed == 0 and reference.defect is None
    low, high = (
        ratio_interval(value, reference.lower, reference.upper)
        if comparable
        else (math.nan, math.nan)
    )
    return GapRow(
        window=window,
        policy=policy,
        objective=reference.objective,
        value=value,
        lower=reference.lower,
        upper=reference.upper,
        lower_method=reference.lower_method,
        upper_source=reference.upper_source,
        optimal=reference.optimal,
        ratio_low=low,
        ratio_high=high,
        comparable=comparable,
        killed=killed,
        lost_work=lost,
        defect=reference.defect,
    )


def rows_frame(rows: Iterable[GapRow]) -> pd.DataFrame:
    """Gap rows as a DataFrame (one row each, columns = GapRow fields)."""
    columns = list(GapRow.__dataclass_fields__)
    return pd.DataFrame(
        [[getattr(r, c) for c in columns] for r in rows], columns=columns
    )


AGGREGATE_COLUMNS = [
    "policy", "objective", "windows", "not_comparable", "optimal_share",
    "mean_low", "mean_high", "median_low", "median_high",
    "max_low", "max_high", "worst_window",
]  # fmt: skip


def aggregate(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, objective): windows, mean/median/max of both ratio ends.

    Only comparable rows enter the statistics; ``not_comparable`` counts the
    others (killed jobs, defects). ``worst_window`` is the window with the
    largest ``ratio_high`` (ties: the largest ``ratio_low``, then the first
    in order); ``optimal_share`` the share of comparable windows whose
    optimum is proven.
    """
    if rows.empty:
        return pd.DataFrame(columns=AGGREGATE_COLUMNS)
    out = []
    for (policy, objective), group in rows.groupby(["policy", "objective"], sort=False):
        usable = group[group["comparable"].astype(bool)]
        skipped = len(group) - len(usable)
        if usable.empty:
            out.append([policy, objective, 0, skipped] + [math.nan] * 7 + [None])
            continue
        worst = usable.sort_values(
            ["ratio_high", "ratio_low"], ascending=False, kind="stable"
        ).iloc[0]
        out.append(
            [
                policy,
                objective,
                len(usable),
                skipped,
                float(usable["optimal"].astype(bool).mean()),
                float(usable["ratio_low"].mean()),
                float(usable["ratio_high"].mean()),
                float(usable["ratio_low"].median()),
                float(usable["ratio_high"].median()),
                float(usable["ratio_low"].max()),
                float(usable["ratio_high"].max()),
                worst["window"],
            ]
        )
    return pd.DataFrame(out, columns=AGGREGATE_COLUMNS)
