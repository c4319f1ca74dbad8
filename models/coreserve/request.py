r"""CP-SAT model of one co-reservation request (independent check of the
enumeration in :mod:`optsched.coreserve.optimum`).

Variables: the common start :math:`S \in [e, \ell]`, booleans
:math:`x_{ic}` (part ``i`` on cluster ``c``; absent when
:math:`q_i > P_c` or the cluster's fairness bound :math:`\mathrm{nb}_c > \ell`).

.. math::

    \sum_c x_{ic} = 1\ \forall i,\qquad \sum_i x_{ic} \le 1\ \forall c,\qquad
    x_{ic} \Rightarrow S \ge \mathrm{nb}_c

    \mathrm{Cumulative}_c\bigl(\{([a, b), u) : \text{busy}\} \cup
        \{([S, S + d), q_i)\ \text{present iff}\ x_{ic}\},\ P_c\bigr)

    H = \lfloor S / 3600 \rfloor,\qquad \rho_c = T_c[H - H_0],\qquad
    T_c[h] = K \sum_{j=0}^{\lfloor d/3600 \rfloor} r_c(3600 (H_0 + h) + 3600 j)

    y_{ic} = \rho_c \text{ if } x_{ic} \text{ else } 0,\qquad
    C = \sum_{i, c} q_i\, y_{ic}\quad (K C = \text{cost},\ K
    \text{ the common price scale})

``T_c`` is the study's sampled per-CPU cost (Meltzer 2005, Listing 7) for
each hour the window spans (it depends on the start's hour only), scaled to
integers by :func:`~optsched.coreserve.tariff.common_scale`; the products are
linearised with ``OnlyEnforceIf``. Cumulative resources with optional
intervals: Baptiste, Le Pape, Nuijten, *Constraint-Based Scheduling*
(2001). Only busy entries meeting :math:`[e, \ell + d)` are kept, clipped to
it.

Objectives are lexicographic, solved in phases, each phase fixing the
previous optimum: ``start`` (min S, then min C), ``cost`` (min C, then min
S), ``weighted`` (Meltzer's Eq. 2). For ``weighted`` the normalisation
constants :math:`s_{min}, s_{max}, c_{min}, c_{max}` come from four auxiliary
solves of the same model (min/max S, min/max C), then with the integers
:math:`L k, L s` (``L`` the common denominator of the weights) the phase
minimises

.. math:: L k\,(C - c_{min})\,\Delta_s + L s\,(S - s_{min})\,\Delta_c,

:math:`W` times :math:`\Delta_s \Delta_c` (a factor 1 replaces a zero
difference, whose term is dropped), then S, then C. The tie rule on cluster
indices of the enumeration is not imposed: equal objective values, possibly
another assignment. The ``prorata`` rule is refused (its cost is piecewise
linear in S over seconds, not per hour): use the enumeration.

The returned cost and objective are recomputed from the chosen start and
clusters through the tariffs, never read from the solver.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ortools.sat.python import cp_model

from optsched.coreserve.optimum import OBJECTIVES, REASONS, refusal, weighted_value
from optsched.coreserve.request import Choice, ClusterState, Request
from optsched.coreserve.tariff import HOUR, WEEK_HOURS, common_scale, exact
from optsched.models.rigid.cpsat import solve_model

_LIMIT = 2**62


@dataclass(frozen=True)
class CoreserveResult:
    """Outcome of :func:`solve`.

    ``status`` is ``optimal`` (every phase proven), ``feasible`` (a choice,
    some phase stopped by the time limit), ``infeasible`` (proven: see
    ``reason``) or ``unknown``. ``objective`` is recomputed from ``choice``:
    its start, its cost, or its Eq. 2 value with the auxiliary solves'
    ``smin..cmax`` (themselves recomputed from their choices).
    """

    status: str
    choice: Choice | None
    objective: Fraction | None
    runtime: float
    reason: str | None = None
    smin: int | None = None
    smax: int | None = None
    cmin: Fraction | None = None
    cmax: Fraction | None = None


class _Model:
    """The CP-SAT model of one request (see the module docstring)."""

    def __init__(
        self,
        request: Request,
        clusters: Sequence[ClusterState],
        not_before: Mapping[str, int] | None,
    ) -> None:
        self.request, self.clusters = request, clusters
        es, ls, d = request.earliest_start, request.latest_start, request.duration
        model = self.model = cp_model.CpModel()
        self.start = model.new_int_var(es, ls, "S")
        self.scale = common_scale(c.tariff for c in clusters)
        h0, h1 = es // HOUR, ls // HOUR
        hour = model.new_int_var(h0, h1, "H")
        model.add_division_equality(hour, self.start, HOUR)
        # Prices repeat every week: the rate table is indexed by the hour of
        # the week, not by the hour of the window, so that a window of years
        # (a deadline of 1e9 s) builds a table of 168 entries, not millions,
        # and the time limit bounds the whole solve.
        index = model.new_int_var(0, WEEK_HOURS - 1, "H mod week")
        model.add_modulo_equality(index, hour, WEEK_HOURS)
        self.x: dict[tuple[int, int], Any] = {}
        terms = []
        for c, cluster in enumerate(clusters):
            nb = (not_before or {}).get(cluster.name)
            table = [
                int(cluster.tariff.sampled_sum(h * HOUR, d) * self.scale)
                for h in range(WEEK_HOURS)
            ]
            rate = model.new_int_var(min(table), max(table), f"rate{c}")
            model.add_element(index, table, rate)
            intervals, demands = self._busy(cluster, es, ls + d)
            for i, q in enumerate(request.parts):
                if q > cluster.processors or (nb is not None and nb > ls):
                    continue
                x = self.x[i, c] = model.new_bool_var(f"x{i}_{c}")
                if nb is not None:
                    model.add(self.start >= nb).only_enforce_if(x)
                intervals.append(
                    model.new_optional_fixed_size_interval_var(
                        self.start, d, x, f"I{i}_{c}"
                    )
                )
                demands.append(q)
                y = model.new_int_var(0, max(table), f"y{i}_{c}")
                model.add(y == rate).only_enforce_if(x)
                model.add(y == 0).only_enforce_if(~x)
                terms.append(q * y)
            model.add_cumulative(intervals, demands, cluster.processors)
        for i in range(len(request.parts)):
            model.add_exactly_one([v for (j, _), v in self.x.items() if j == i])
        for c in range(len(clusters)):
            model.add_at_most_one([v for (_, k), v in self.x.items() if k == c])
        self.cost = sum(terms)

    def _busy(
        self, cluster: ClusterState, lo: int, hi: int
    ) -> tuple[list[Any], list[int]]:
        """Fixed intervals of the busy entries meeting ``[lo, hi)``, clipped."""
        intervals, demands = [], []
        for a, b, q in cluster.busy:
            a, b = max(a, lo), min(b, hi)
            if b > a and q:
                intervals.append(self.model.new_fixed_size_interval_var(a, b - a, ""))
                demands.append(q)
        return intervals, demands

    def choice(self, solver: cp_model.CpSolver) -> Choice:
        """The solver's solution, its cost recomputed through the tariffs."""
        start = int(solver.value(self.start))
        names = [""] * len(self.request.parts)
        for (i, c), x in self.x.items():
            if solver.boolean_value(x):
                names[i] = self.clusters[c].name
        by_name = {c.name: c for c in self.clusters}
        d = self.request.duration
        cost = sum(
            (
                by_name[n].tariff.cost(start, d, q)
                for n, q in zip(names, self.request.parts, strict=True)
            ),
            Fraction(0),
        )
        return Choice(start, tuple(names), cost)


Objective = Callable[[_Model], Any]
"""A linear expression of a model (built afresh for each run)."""


def _start(m: _Model) -> Any:
    return m.start


def _cost(m: _Model) -> Any:
    return m.cost


class _Phases:
    """Lexicographic optimisation: solve, fix the optimum, solve the next.

    Each :meth:`run` builds the model afresh (the auxiliary solves of
    ``weighted`` must not inherit each other's fixings).
    """

    def __init__(
        self,
        request: Request,
        clusters: Sequence[ClusterState],
        not_before: Mapping[str, int] | None,
        time_limit: float,
        workers: int,
    ) -> None:
        self.build = lambda: _Model(request, clusters, not_before)
        self.workers = workers
        self.deadline = time.monotonic() + time_limit

    def run(
        self, phases: Sequence[tuple[Objective, bool]]
    ) -> tuple[str, Choice | None]:
        """Optimise each ``(expression, maximise)`` in turn, fixing each optimum.

        Returns the status (``optimal`` only if every phase is proven) and
        the last solution.
        """
        m = self.build()
        choice = None
        for objective, maximise in phases:
            expr = objective(m)
            if maximise:
                m.model.maximize(expr)
            else:
                m.model.minimize(expr)
            solver = cp_model.CpSolver()
            solver.parameters.max_time_in_seconds = max(
                0.0, self.deadline - time.monotonic()
            )
            solver.parameters.num_workers = self.workers
            result = solve_model(solver, m.model)
            if result == cp_model.INFEASIBLE:
                return "infeasible", None
            if result not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                return ("unknown" if choice is None else "feasible"), choice
            choice = m.choice(solver)
            if result != cp_model.OPTIMAL:
                return "feasible", choice
            m.model.add(expr == solver.value(expr))
        return "optimal", choice


def _cost_bound(request: Request, clusters: Sequence[ClusterState], scale: int) -> int:
    """An upper bound on the scaled cost ``C`` of any choice."""
    d = request.duration
    hours = range(request.earliest_start // HOUR, request.latest_start // HOUR + 1)
    dearest = max(c.tariff.sampled_sum(h * HOUR, d) for c in clusters for h in hours)
    return int(sum(request.parts) * dearest * scale)


def solve(
    request: Request,
    clusters: Sequence[ClusterState],
    objective: str = "start",
    *,
    k: float | Fraction = 1,
    s: float | Fraction = 1,
    not_before: Mapping[str, int] | None = None,
    cost_rule: str = "sampled",
    time_limit: float = 10.0,
    workers: int = 1,
) -> CoreserveResult:
    """Optimum of one request with CP-SAT (module docstring).

    Parameters
    ----------
    request, clusters, objective, k, s, not_before
        As :func:`optsched.coreserve.optimum.optimum`.
    cost_rule
        ``sampled`` only; ``prorata`` raises ``ValueError``.
    time_limit
        Seconds for all phases together.
    workers
        CP-SAT worker threads.
    """
    began = time.monotonic()
    if objective not in OBJECTIVES:
        raise ValueError(
            f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}"
        )
    if cost_rule != "sampled":
        raise ValueError("prorata: use the enumeration (--method enumerate)")
    kk, ss = exact(k), exact(s)
    if kk < 0 or ss < 0:
        raise ValueError("weights k and s must be >= 0")
    reason = refusal(request, clusters)
    if reason is not None:
        return CoreserveResult(
            "infeasible", None, None, time.monotonic() - began, reason
        )
    phases = _Phases(request, clusters, not_before, time_limit, workers)
    S, C = _start, _cost

    def done(
        status: str, choice: Choice | None, value: Fraction | None, **extra: Any
    ) -> CoreserveResult:
        why = REASONS["none"] if status == "infeasible" else None
        return CoreserveResult(
            status, choice, value, time.monotonic() - began, why, **extra
        )

    if objective == "start":
        status, choice = phases.run([(S, False), (C, False)])
        return done(status, choice, None if choice is None else Fraction(choice.start))
    if objective == "cost":
        status, choice = phases.run([(C, False), (S, False)])
        return done(status, choice, None if choice is None else choice.cost)
    extremes = [
        phases.run([(e, top)])
        for e, top in ((S, False), (S, True), (C, False), (C, True))
    ]
    statuses = {st for st, _ in extremes}
    if "infeasible" in statuses:
        return done("infeasible", None, None)
    if any(ch is None for _, ch in extremes):
        return done("unknown", None, None)
    smin, smax = extremes[0][1].start, extremes[1][1].start  # type: ignore[union-attr]
    cmin, cmax = extremes[2][1].cost, extremes[3][1].cost  # type: ignore[union-attr]
    scale = common_scale(c.tariff for c in clusters)
    ds, dc = (smax - smin), int((cmax - cmin) * scale)
    denominator = math.lcm(kk.denominator, ss.denominator)
    a = int(kk * denominator) * (ds or 1) if dc else 0
    b = int(ss * denominator) * (dc or 1) if ds else 0
    if a * _cost_bound(request, clusters, scale) + b * request.latest_start >= _LIMIT:
        raise ValueError(
            "weighted: the scaled objective exceeds 2**62; use the enumeration"
        )

    def weighted(m: _Model) -> Any:
        return a * m.cost + b * m.start

    status, choice = phases.run([(weighted, False), (S, False), (C, False)])
    if statuses != {"optimal"} and status == "optimal":
        status = "feasible"  # the normalisation itself is not proven
    value = None
    if choice is not None:
        value = weighted_value(
            choice.start, choice.cost, kk, ss, smin, smax, cmin, cmax
        )
    return done(status, choice, value, smin=smin, smax=smax, cmin=cmin, cmax=cmax)
