r"""Shelf-restricted optimum with CP-SAT (back-end ``"shelf"``).

A *shelf schedule* (:func:`optsched.check.is_shelf_schedule`) groups the
jobs by start time into shelves; each shelf lasts as long as its longest
job and ends before the next one starts. This back-end returns the best
shelf schedule for ``cmax`` or ``wct`` (every weight rule), or bounds
around it: its ``objective`` and ``lower_bound`` are those of the
*restricted* problem (:data:`optsched.models.RESTRICTIONS`). Every shelf
schedule is a schedule, so the shelf optimum is at least the unrestricted
one, and its schedule is also an upper bound of the unrestricted problem.

Model
-----
Jobs ``j`` (release ``r_j``, size ``q_j``, run time ``p_j``, weight
``w_j``), ``K = n`` candidate shelves ``k = 0..K-1`` in time order:

.. math::

    x_{jk} \in \{0,1\},\quad u_k \in \{0,1\},\quad
    S_k, E_k \in [0, H],\quad T_j \in [r'_j, D_j - p_j]

    \textstyle\sum_k x_{jk} = 1 \qquad \text{(one shelf per job)}

    x_{jk} \Rightarrow T_j = S_k,\qquad
    x_{jk} \Rightarrow E_k \ge T_j + p_j,\qquad E_k \ge S_k

    S_k \ge E_{k-1} \qquad \text{(shelves in time order, } k \ge 1)

    \textstyle\sum_{j : p_j > 0} q_j x_{jk} \le m \qquad \text{(the shelf fits)}

    \text{busy blocks, any:}\quad \mathrm{Cumulative}(\{([T_j, T_j + p_j), q_j)\}
        \cup \{(B_b, q_b)\}, m)

    \text{busy blocks, contiguous:}\quad
        \mathrm{NoOverlap2D}(\{[T_j, T_j + p_j) \times [O_j, O_j + q_j)\}
        \cup \{B_b \times [o_b, o_b + q_b)\})

    \text{cmax: } \min E_{K-1} \qquad
    \text{wct: } \min \textstyle\sum_j \tilde w_j (T_j + p_j)

``r'_j`` is the effective release (:func:`~optsched.models.bounds.
earliest_start_alone`), ``D_j`` the completion deadline of
:func:`~optsched.models.solution.completion_deadlines` computed from the
best *shelf* incumbent and ``H = max_j D_j``; integer weights ``\tilde w``
as in :mod:`optsched.models.cpsat`. The deadlines keep a shelf optimum: for
``cmax`` ``D_j`` is the incumbent's makespan; for ``wct`` the argument of
``completion_deadlines`` (an idle unit slot after every release and block
end lets every later job move one unit left) moves whole shelves, since a
slot where no job runs lies between two shelves, so the shifted schedule is
still a shelf schedule.

The model's schedules are exactly the shelf schedules. A model solution
gives starts ``T_j``; its shelves in the sense of the checker are the
groups of equal start, i.e. unions of model shelves with equal start, of
which all but the last have height 0, so each group ends by the next
group's start. Conversely the ``G <= n`` groups of a shelf schedule, in time
order, are model shelves ``0..G-1`` (``E_k`` = the group's latest end), the
other shelves empty. The capacity constraints are the checker's capacity
rule: without blocks, jobs of different shelves never overlap in time
(``T_j + p_j <= E_k <= S_{k+1}``) and those of one shelf all run at its
start, so the knapsack row is the whole rule; with blocks the cumulative
(``any``) or NoOverlap2D (``contiguous``) constraint *is* the rule, the
knapsack row staying as a redundant cut. Busy blocks are therefore handled
exactly, not by a conservative shelf-level rule.

Contiguous machines: without busy blocks a shelf whose sizes sum to at most
``m`` always has adjacent ranges (left to right), so offsets are not model
variables; they are assigned left to right in job-id order after the solve,
and the contiguous shelf optimum equals the ``any`` one. With busy blocks
the offsets ``O_j \in [0, m - q_j]`` are variables and NoOverlap2D keeps the
jobs' rectangles apart and off the blocks.

Symmetry breaking (each keeps at least one optimal schedule):

* used shelves first: ``u_{k} \Rightarrow u_{k-1}``, ``x_{jk} \Rightarrow
  u_k``, ``u_k \Rightarrow \bigvee_j x_{jk}``, and an unused shelf is pinned
  (``\neg u_k \Rightarrow S_k = E_{k-1} = E_k``). Shelves are ordered by
  time, so they have no labels to permute; a rule such as "the
  lowest-index job of each shelf increases" would clash with the time order
  and is *not* used.
* ``u_k = 1`` for ``k < N``, with ``N`` the bin-packing bound of
  :func:`shelf_count_bound` (every shelf schedule has at least ``N``
  shelves of running jobs).
* identical jobs (same release, size, run time, and weight for wct), in id
  order ``a < b``: ``\sum_k k\,x_{ak} \le \sum_k k\,x_{bk}`` and
  ``T_a \le T_b`` (relabel the group so that shelf indices increase in id
  order; on contiguous machines with blocks also ``T_a = T_b \Rightarrow
  O_a \le O_b``). The hint is relabelled the same way.

Incumbents: only feasible *shelf* schedules may bound the shelf optimum.
Each incumbent is checked (:func:`~optsched.models.solution.
checked_candidate`) and then tested with :func:`~optsched.check.
is_shelf_schedule`; others are rejected with the reason
(:attr:`Result.rejected`). Three first-fit shelf schedules of this module
(:func:`first_fit_shelves`: decreasing height, increasing height, release
order) are always added, so the back-end has a feasible shelf schedule when
called alone. The best candidate is the solver's hint.

Lower bounds: the unrestricted closed-form bounds of
:mod:`optsched.models.bounds` (the shelf optimum is at least the
unrestricted one), the shelf bounds :func:`shelf_height_bound` (cmax) and
:func:`shelf_order_bound` (wct), and CP-SAT's own bound.
"""

from __future__ import annotations

import itertools
import math
import time
from bisect import insort
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ortools.sat.python import cp_model

from optsched.check import is_shelf_schedule
from optsched.instance import BusyBlock, Instance, Job
from optsched.models.bounds import (
    dual_feasible_functions,
    earliest_start_alone,
    lower_bounds,
)
from optsched.models.cpsat import BOUND_SUBSOLVERS, LogSink, integer_weights
from optsched.models.result import Bound, Incumbent, Result
from optsched.models.shelf_enumerate import smith_order
from optsched.models.solution import (
    Candidate,
    checked_candidate,
    completion_deadlines,
    empty_result,
    finish,
)
from optsched.models.solution import (
    assign_processors as assign_checked,
)
from optsched.objective import Objective
from optsched.packing import assign_processors
from optsched.schedule import Placement, Schedule

BACKEND = "shelf"

RESTRICTION = "shelves"
"""Name of the restriction (``Result.params["restriction"]``)."""

_DFF_BUDGET = 2_000_000
"""Largest ``jobs x thresholds x functions`` product for which the shelf
bounds try every dual-feasible function (beyond: area and count only)."""


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    incumbents: Sequence[Incumbent] = (),
    log: bool | LogSink = False,
    symmetry: bool = True,
    bound_subsolvers: Sequence[str] = BOUND_SUBSOLVERS,
    seed: int = 0,
    parameters: Mapping[str, Any] | None = None,
) -> Result:
    """Best shelf schedule of ``instance`` with CP-SAT, or bounds around it.

    Parameters
    ----------
    instance
        The problem (``any`` or ``contiguous``, releases, busy blocks).
    objective
        :class:`Objective` or its text form.
    time_limit
        Seconds for the whole call.
    workers
        CP-SAT worker threads.
    incumbents
        Starting schedules; only feasible shelf schedules are used (the best
        is the hint), the others are listed in :attr:`Result.rejected`.
    log
        ``True`` to print the search log, or a function receiving each line.
    symmetry
        Add the symmetry-breaking constraints for identical jobs.
    bound_subsolvers, seed, parameters
        As in :func:`optsched.models.cpsat.solve`.

    Returns
    -------
    Result
        ``backend="shelf"``; ``objective`` and ``lower_bound`` are those of
        the shelf-restricted problem (``params["restriction"] == "shelves"``);
        the schedule passes :func:`~optsched.check.check_schedule` and
        :func:`~optsched.check.is_shelf_schedule`.
    """
    from optsched.models.cpsat import _configure

    started = time.perf_counter()
    objective = Objective.parse(objective)
    if not instance.jobs:
        result = empty_result(objective, BACKEND, started)
        return _with_params(result, {"restriction": RESTRICTION})
    bounds = [*lower_bounds(instance, objective), *shelf_bounds(instance, objective)]
    candidates, rejected = shelf_candidates(instance, objective, incumbents=incumbents)
    model = _ShelfModel(instance, objective, candidates[0], bounds, symmetry=symmetry)
    solver = cp_model.CpSolver()
    _configure(
        solver,
        time_limit=max(0.0, time_limit - (time.perf_counter() - started)),
        workers=workers,
        log=log,
        subsolvers=bound_subsolvers,
        seed=seed,
        parameters=parameters or {},
    )
    status_name, bound, found, notes = _search(solver, model)
    params: dict[str, Any] = {
        "restriction": RESTRICTION,
        "time_limit": time_limit,
        "workers": workers,
        "objective": objective.label,
        "allocation": instance.machine.allocation,
        "cpsat_status": status_name,
        "hint_source": candidates[0].source,
        "weight_scale": model.scale,
        "shelves": model.shelves,
        "offsets_modelled": model.with_offsets,
        "symmetry_groups": model.symmetry_groups,
        "subsolvers": list(bound_subsolvers),
        **notes,
    }
    if rejected:
        params["rejected"] = rejected
    if bound is not None:
        bounds.append(bound)
    if found is not None:
        candidate, reason = _decode(instance, objective, model, found)
        if candidate is not None:
            candidates.append(candidate)
        else:
            params.setdefault("rejected", []).append(str(reason))
    return finish(
        instance, objective, backend=BACKEND, candidates=candidates,
        bounds=bounds, started=started, params=params,
    )  # fmt: skip


def _with_params(result: Result, extra: Mapping[str, Any]) -> Result:
    from dataclasses import replace

    return replace(result, params={**result.params, **extra})


# --------------------------------------------------------------------------
# Shelf candidates
# --------------------------------------------------------------------------


def shelf_candidates(
    instance: Instance, objective: Objective, *, incumbents: Sequence[Incumbent] = ()
) -> tuple[list[Candidate], list[str]]:
    """Checked shelf schedules: three first-fit ones and the given incumbents.

    An incumbent must pass :func:`~optsched.models.solution.checked_candidate`
    (feasible, no kills, no migration) *and*
    :func:`~optsched.check.is_shelf_schedule`; a feasible schedule that is
    not a shelf schedule bounds the unrestricted optimum but not the shelf
    one, and is rejected with ``"<source>: not a shelf schedule: <why>"``.

    Returns
    -------
    candidates, rejected
        Best first; one line per rejected schedule.
    """
    raw = [
        (f"shelf:{name}", first_fit_shelves(instance, objective, name))
        for name in FIRST_FIT_ORDERS
    ]
    raw += [(incumbent.source, incumbent.schedule) for incumbent in incumbents]
    candidates: list[Candidate] = []
    rejected: list[str] = []
    for source, schedule in raw:
        candidate, reason = checked_candidate(instance, objective, source, schedule)
        if candidate is not None:
            why = is_shelf_schedule(instance, candidate.schedule)
            if why is not None:
                candidate, reason = None, f"{source}: not a shelf schedule: {why}"
        if candidate is None:
            rejected.append(str(reason))
        else:
            candidates.append(candidate)
    if not candidates:  # the first-fit schedules are shelf schedules
        raise RuntimeError(f"no feasible shelf schedule: {'; '.join(rejected)}")
    candidates.sort(key=lambda c: c.value)
    return candidates, rejected


FIRST_FIT_ORDERS = ("decreasing-height", "increasing-height", "release")
"""Job orders of :func:`first_fit_shelves`."""


def first_fit_shelves(instance: Instance, objective: Objective, order: str) -> Schedule:
    """A shelf schedule: first-fit by size, shelves sequenced, placed greedily.

    Jobs in the given ``order`` (``decreasing-height``: longest first;
    ``increasing-height``; ``release``: by release, then longest first; ties
    in instance order) join the first shelf whose running sizes leave room
    (else open one). The shelves are sequenced by Smith's rule on
    (height, weight) for ``wct`` without releases and blocks, otherwise by
    release (``R_k``, the latest release of the shelf's jobs); each starts at
    the first time ``>= max(previous end, R_k)`` at which it fits beside the
    busy blocks (checked at that time and each later block end; after the
    last block end every shelf fits). On a contiguous machine the shelf's
    jobs take the lowest free offsets, widest first.

    Only a starting point for :func:`solve`; the issue's SMART, NFDH and
    FFDH policies live in :mod:`optsched.heuristics`.
    """
    jobs = list(instance.jobs)
    if order == "decreasing-height":
        jobs.sort(key=lambda j: -j.runtime)
    elif order == "increasing-height":
        jobs.sort(key=lambda j: j.runtime)
    elif order == "release":
        jobs.sort(key=lambda j: (j.release, -j.runtime))
    else:
        raise ValueError(f"order {order!r} is not one of {', '.join(FIRST_FIT_ORDERS)}")
    m = instance.processors
    parts: list[list[Job]] = []
    used: list[int] = []
    for job in jobs:
        need = job.size if job.runtime > 0 else 0
        i = next((i for i, u in enumerate(used) if u + need <= m), None)
        if i is None:
            parts.append([job])
            used.append(need)
        else:
            parts[i].append(job)
            used[i] += need
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    releases = [max(j.release for j in part) for part in parts]
    if (
        objective.kind == "wct"
        and not blocks
        and all(j.release == 0 for j in instance.jobs)
    ):
        sequence = smith_order(
            [
                (
                    max(j.runtime for j in part),
                    sum((Fraction(objective.weight(j)) for j in part), Fraction(0)),
                )
                for part in parts
            ]
        )
    else:
        sequence = sorted(range(len(parts)), key=lambda i: releases[i])
    contiguous = instance.machine.allocation == "contiguous"
    ready = 0
    starts: dict[int, int] = {}
    offsets: dict[int, int] = {}
    for i in sequence:
        part = parts[i]
        start, where = _earliest_fit(
            part, max(ready, releases[i]), blocks, m, contiguous
        )
        for job in part:
            starts[job.id] = start
        offsets.update(where)
        ready = start + max(j.runtime for j in part)
    producer = f"shelf:{order}"
    if contiguous:
        return Schedule(
            {
                j.id: Placement.contiguous(
                    starts[j.id], starts[j.id] + j.runtime, offsets[j.id], j.size
                )
                for j in instance.jobs
            },
            producer,
        )
    return assign_processors(instance, starts, producer=producer)


def _earliest_fit(
    part: Sequence[Job], t: int, blocks: Sequence[BusyBlock], m: int, contiguous: bool
) -> tuple[int, dict[int, int]]:
    last = max((b.end for b in blocks), default=0)
    while True:
        where = (
            _offsets_at(part, t, blocks, m)
            if contiguous
            else ({j.id: 0 for j in part} if _count_fits(part, t, blocks, m) else None)
        )
        if where is not None:
            return t, where
        later = [b.end for b in blocks if b.end > t]
        if not later:  # no block left: the shelf fits (sizes <= m)
            raise AssertionError(f"shelf of size <= {m} does not fit at {t} >= {last}")
        t = min(later)


def _count_fits(
    part: Sequence[Job], t: int, blocks: Sequence[BusyBlock], m: int
) -> bool:
    # Jobs running plus blocks, at the shelf start and at every block start
    # inside the shelf: the load only rises there (it falls at ends).
    height = max((j.runtime for j in part), default=0)
    points = [t] + [b.start for b in blocks if t < b.start < t + height]
    for u in points:
        load = sum(j.size for j in part if j.runtime > 0 and t + j.runtime > u)
        load += sum(b.size for b in blocks if b.start <= u < b.end)
        if load > m:
            return False
    return True


def _offsets_at(
    part: Sequence[Job], t: int, blocks: Sequence[BusyBlock], m: int
) -> dict[int, int] | None:
    """Lowest free offsets, widest job first; ``None`` if some job finds none."""
    taken: list[tuple[int, int]] = []  # processor ranges of the shelf's jobs
    where = {j.id: 0 for j in part}
    for job in sorted(part, key=lambda j: -j.size):
        if job.runtime == 0:
            continue
        obstacles = taken + [
            (b.offset or 0, (b.offset or 0) + b.size)
            for b in blocks
            if b.start < t + job.runtime and b.end > t
        ]
        spot = next(
            (
                o
                for o in sorted({0} | {hi for _, hi in obstacles})
                if o + job.size <= m
                and all(o + job.size <= lo or o >= hi for lo, hi in obstacles)
            ),
            None,
        )
        if spot is None:
            return None
        taken.append((spot, spot + job.size))
        where[job.id] = spot
    return where


# --------------------------------------------------------------------------
# Shelf lower bounds
# --------------------------------------------------------------------------


class _BinBound:
    """Lower bounds on the number of bins of capacity ``m`` for a multiset.

    Items are added one at a time; :meth:`bins` is the maximum of the area
    bound ``ceil(sum q / m)``, the dual-feasible-function bounds
    ``ceil(sum f(q) / f(m))`` (:class:`~optsched.models.bounds.
    DualFeasibleFunction`: items of one bin have ``sum q <= m`` hence
    ``sum f(q) <= f(m)``) and the count bound ``ceil(count / K)`` with ``K``
    the most items that fit in one bin (the smallest ones).
    """

    def __init__(self, m: int, sizes: Sequence[int], use_dff: bool) -> None:
        self.m = m
        self.functions = (
            [f for f in dual_feasible_functions(m, sizes) if f.scale > 0]
            if use_dff
            else []
        )
        self.area = 0
        self.transformed = [0] * len(self.functions)
        self.sorted_sizes: list[int] = []

    def add(self, size: int) -> None:
        self.area += size
        for i, f in enumerate(self.functions):
            self.transformed[i] += f(size)
        insort(self.sorted_sizes, size)

    def bins(self) -> int:
        if not self.sorted_sizes:
            return 0
        best = -(-self.area // self.m)
        for f, total in zip(self.functions, self.transformed, strict=True):
            best = max(best, -(-total // f.scale))
        fit, used = 0, 0
        for size in self.sorted_sizes:
            if used + size > self.m:
                break
            used, fit = used + size, fit + 1
        return max(best, -(-len(self.sorted_sizes) // max(1, fit)))


def _heights_integral(m: int, jobs: Sequence[Job], use_dff: bool) -> int:
    r"""``\int_0^\infty BP(\{q_j : p_j > u\})\,du`` with :class:`_BinBound`."""
    running = sorted((j for j in jobs if j.runtime > 0), key=lambda j: -j.runtime)
    counter = _BinBound(m, [j.size for j in running], use_dff)
    total = 0
    for i, job in enumerate(running):
        counter.add(job.size)
        below = running[i + 1].runtime if i + 1 < len(running) else 0
        if below < job.runtime:  # [below, p) has exactly the jobs added so far
            total += (job.runtime - below) * counter.bins()
    return total


def shelf_count_bound(instance: Instance) -> int:
    """Fewest shelves of a shelf schedule: the bin bound of the running jobs.

    The running jobs of one shelf all run at its start, so their sizes sum to
    at most ``m``: the shelves holding jobs of positive run time are bins.
    """
    jobs = [j for j in instance.jobs if j.runtime > 0]
    counter = _BinBound(instance.processors, [j.size for j in jobs], True)
    for job in jobs:
        counter.add(job.size)
    return counter.bins()


def shelf_height_bound(instance: Instance) -> Bound:
    r"""Makespan of every shelf schedule: shelf heights summed by height class.

    .. math:: C_{\max} \ge \max_{t \in \{0\} \cup \{r'_j\}} \Bigl(t +
              \int_0^\infty BP\bigl(\{q_j : r'_j \ge t,\ p_j > u\}\bigr)\,du
              \Bigr)

    with ``BP`` a lower bound on the number of bins of capacity ``m``
    (:class:`_BinBound`: area, dual-feasible functions, count) and ``r'_j``
    the effective release (:func:`~optsched.models.bounds.
    earliest_start_alone`). The integral is a finite sum over the distinct
    run times: on ``[p_{(i+1)}, p_{(i)})`` the set is the jobs with
    ``p_j >= p_{(i)}``.

    Proof. Fix ``t`` and let ``X`` be the jobs with ``r'_j >= t`` (all jobs
    for ``t = 0``). Let ``s_1, ..., s_L`` be the shelves holding a job of
    ``X``, in time order, and ``η_i`` the longest run time among the
    ``X``-jobs of ``s_i``. Each ``s_i`` starts at or after ``t`` (a shelf
    starts with each of its jobs, and job ``j`` cannot start before
    ``r'_j``), lasts at least ``η_i``, and the shelves do not overlap, so the
    makespan is at least ``t + sum_i η_i = t + ∫_0^∞ #{i : η_i > u} du``.
    For each ``u`` the shelves with ``η_i > u`` hold every job of ``X`` with
    ``p_j > u``; those jobs run at the start of their shelf, so each shelf's
    share sums to at most ``m`` processors: they are bins, at least
    ``BP({q_j : j in X, p_j > u})`` of them. Busy blocks only take
    capacity, so the bound holds with them. Without shelves the bound fails
    (jobs of different heights may then share processors one after the
    other); with ``BP = ceil(sum q / m)`` it is never below the area bound.

    This is the "height classes" argument: ``ceil(Q_T / m)`` shelves have
    height above ``T`` if the jobs longer than ``T`` have total size
    ``Q_T``. Reference for the level view: E. G. Coffman, M. R. Garey,
    D. S. Johnson, R. E. Tarjan, "Performance bounds for level-oriented
    two-dimensional packing algorithms", SIAM J. Comput. 9(4), 1980.
    """
    began = time.perf_counter()
    m = instance.processors
    machine = instance.machine
    releases = {j.id: earliest_start_alone(j, machine) for j in instance.jobs}
    times = sorted({0, *releases.values()})
    functions = len(dual_feasible_functions(m, [j.size for j in instance.jobs]))
    use_dff = len(instance.jobs) * len(times) * max(1, functions) <= _DFF_BUDGET
    best = 0
    for t in times:
        chosen = [j for j in instance.jobs if releases[j.id] >= t]
        best = max(best, t + _heights_integral(m, chosen, use_dff or t == 0))
    return Bound(float(best), "shelf-heights", time.perf_counter() - began)


def shelf_order_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Weighted completion of every shelf schedule: the i-th completion's bound.

    With ``C_{(1)} <= ... <= C_{(n)}`` the completion times in order,

    .. math:: \sum_j w_j C_j \ge \sum_{i=1}^n w_{[i]} G_i, \qquad
              G_i = \int_0^\infty \max_{\beta}\,
              \beta\bigl(\text{the } (i - z(u))^+ \text{ smallest items of }
              Y_u\bigr)\,du

    where ``w_{[1]} >= w_{[2]] >= ...`` are the weights sorted decreasingly,
    ``Y_u = {j : p_j > u}``, ``z(u) = n - |Y_u|`` (jobs with ``p_j <= u``)
    and ``β`` ranges over the bin bounds of :class:`_BinBound` (area,
    dual-feasible functions ``f``, each taking the smallest items for its
    own measure ``q`` or ``f(q)``; count ``ceil(k / K(Y_u))``). ``relative``
    subtracts ``sum_j w_j r_j``.

    Proof. (1) For a set ``X`` of jobs, the argument of
    :func:`shelf_height_bound` (with ``t = 0``) gives
    ``max_{j in X} C_j >= g(X) = ∫_0^∞ BP({q_j : j in X, p_j > u}) du``:
    the shelves holding ``X``-jobs are disjoint, the last one's ``X``-jobs
    end at least ``max η`` after its start, and the earlier ones last at
    least their ``η_i``. (2) The first ``i`` jobs to complete form a set
    ``X_i`` of size ``i`` with ``C_{(i)} = max_{X_i} C_j >= g(X_i)``. For
    every ``u``, ``X_i`` has at least ``i - z(u)`` jobs in ``Y_u``, and each
    bin bound ``β`` is monotone (sums of non-negative item values; the count
    bound with the ``K`` of the superset ``Y_u``), so it is at least ``β``
    of the ``i - z(u)`` smallest items of ``Y_u``; hence
    ``C_{(i)} >= G_i`` whatever ``X_i`` is (``max`` of minima ``<=`` minimum
    of maxima). (3) ``sum_j w_j C_j = sum_i w_{(i)} C_{(i)} >=
    sum_i w_{(i)} G_i >= sum_i w_{[i]} G_i`` by the rearrangement
    inequality, since ``G_i`` is non-decreasing in ``i``.

    A shelf makes its short jobs wait for the next shelf behind its longest
    job; this bound sees it (e.g. one job of 10 s and three of 1 s, all of
    one processor, on 2 processors: ``G = 1, 1, 2, 11``, total 15, where
    the height and squashed-area bounds give 13 and 12.75).
    """
    if objective.kind != "wct":
        raise ValueError(
            f"shelf order bound: needs a weighted completion objective, got "
            f"{objective.label}"
        )
    began = time.perf_counter()
    m = instance.processors
    jobs = instance.jobs
    n = len(jobs)
    running = sorted((j for j in jobs if j.runtime > 0), key=lambda j: -j.runtime)
    heights = sorted({j.runtime for j in running}, reverse=True)
    functions = (
        [f for f in dual_feasible_functions(m, [j.size for j in jobs]) if f.scale > 0]
        if n * len(heights) * 50 <= _DFF_BUDGET
        else []
    )
    measures: list[tuple[Callable[[int], int], int]] = [(lambda q: q, m)]
    measures += [(f, f.scale) for f in functions]
    g = [0] * (n + 1)  # g[i] for i = 0..n
    for index, height in enumerate(heights):
        below = heights[index + 1] if index + 1 < len(heights) else 0
        members = [j for j in running if j.runtime >= height]  # Y_u on [below, height)
        zero = n - len(members)
        sizes = sorted(j.size for j in members)
        fit = len(
            list(itertools.takewhile(lambda s: s <= m, itertools.accumulate(sizes)))
        )
        prefixes = [
            [0, *itertools.accumulate(sorted(measure(q) for q in sizes))]
            for measure, _ in measures
        ]
        for i in range(zero + 1, n + 1):
            k = i - zero
            bins = -(-k // max(1, fit))
            for (_, scale), prefix in zip(measures, prefixes, strict=True):
                bins = max(bins, -(-prefix[k] // scale))
            g[i] += (height - below) * bins
    weights = sorted((Fraction(objective.weight(j)) for j in jobs), reverse=True)
    value = sum((w * g[i + 1] for i, w in enumerate(weights)), Fraction(0))
    if objective.relative:
        value -= sum(
            (Fraction(objective.weight(j)) * j.release for j in jobs), Fraction(0)
        )
    if all(w.denominator == 1 for w in weights):
        result = float(math.ceil(value))
    else:
        result = float(value)
    return Bound(result, "shelf-order", time.perf_counter() - began)


def shelf_bounds(instance: Instance, objective: Objective | str) -> list[Bound]:
    """The shelf-specific lower bounds that apply to ``objective``."""
    objective = Objective.parse(objective)
    if objective.kind == "cmax":
        return [shelf_height_bound(instance)]
    return [shelf_order_bound(instance, objective)]


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class _ShelfModel:
    """CP-SAT variables and constraints of the shelf-restricted problem."""

    def __init__(
        self,
        instance: Instance,
        objective: Objective,
        incumbent: Candidate,
        bounds: Sequence[Bound],
        *,
        symmetry: bool,
    ) -> None:
        self.instance = instance
        self.objective = objective
        self.model = cp_model.CpModel()
        machine = instance.machine
        self.blocks = [b for b in machine.unavailable if b.end > b.start]
        self.with_offsets = machine.allocation == "contiguous" and bool(self.blocks)
        self.deadlines = completion_deadlines(instance, objective, incumbent.schedule)
        self.horizon = max(self.deadlines.values())
        self.shelves = len(instance.jobs)
        self.scale = 1.0
        self.starts: dict[int, cp_model.IntVar] = {}
        self.offsets: dict[int, cp_model.IntVar] = {}
        self.assign: dict[tuple[int, int], cp_model.IntVar] = {}
        self.shelf_start: list[cp_model.IntVar] = []
        self.shelf_end: list[cp_model.IntVar] = []
        self.used: list[cp_model.IntVar] = []
        self._add_variables()
        self._add_shelves()
        self._add_capacity()
        groups = _identical_groups(instance, objective) if symmetry else []
        self.symmetry_groups = len(groups)
        for group in groups:
            self._order_group(group)
        self._add_objective(bounds)
        self._add_hint(_relabel(incumbent.schedule, groups))

    def _add_variables(self) -> None:
        m, model = self.instance.processors, self.model
        for job in self.instance.jobs:
            earliest = earliest_start_alone(job, self.instance.machine)
            latest = self.deadlines[job.id] - job.runtime
            self.starts[job.id] = model.new_int_var(earliest, latest, f"T{job.id}")
            if self.with_offsets:
                self.offsets[job.id] = model.new_int_var(0, m - job.size, f"O{job.id}")
            for k in range(self.shelves):
                self.assign[job.id, k] = model.new_bool_var(f"x{job.id}_{k}")
        for k in range(self.shelves):
            self.shelf_start.append(model.new_int_var(0, self.horizon, f"S{k}"))
            self.shelf_end.append(model.new_int_var(0, self.horizon, f"E{k}"))
            self.used.append(model.new_bool_var(f"u{k}"))

    def _add_shelves(self) -> None:
        model, jobs = self.model, self.instance.jobs
        starts, ends, used = self.shelf_start, self.shelf_end, self.used
        for job in jobs:
            model.add_exactly_one(self.assign[job.id, k] for k in range(self.shelves))
        for k in range(self.shelves):
            model.add(ends[k] >= starts[k])
            if k:
                model.add(starts[k] >= ends[k - 1])
                model.add_implication(used[k], used[k - 1])
                model.add(starts[k] == ends[k - 1]).only_enforce_if(~used[k])
            model.add(ends[k] == starts[k]).only_enforce_if(~used[k])
            members = [self.assign[j.id, k] for j in jobs]
            model.add_bool_or(members).only_enforce_if(used[k])
            for job, x in zip(jobs, members, strict=True):
                model.add_implication(x, used[k])
                model.add(self.starts[job.id] == starts[k]).only_enforce_if(x)
                if job.runtime > 0:
                    model.add(
                        ends[k] >= self.starts[job.id] + job.runtime
                    ).only_enforce_if(x)
        for k in range(min(self.shelves, shelf_count_bound(self.instance))):
            model.add(used[k] == 1)
        model.add(used[0] == 1)

    def _add_capacity(self) -> None:
        m, model = self.instance.processors, self.model
        running = [j for j in self.instance.jobs if j.runtime > 0]
        for k in range(self.shelves):
            model.add(sum(j.size * self.assign[j.id, k] for j in running) <= m)
        if not self.blocks:
            return  # shelves are disjoint in time: the knapsack rows are the rule
        time_iv = [
            model.new_fixed_size_interval_var(self.starts[j.id], j.runtime, f"I{j.id}")
            for j in running
        ]
        block_iv = [
            model.new_fixed_size_interval_var(b.start, b.end - b.start, "busy")
            for b in self.blocks
        ]
        model.add_cumulative(
            time_iv + block_iv,
            [j.size for j in running] + [b.size for b in self.blocks],
            m,
        )
        if not self.with_offsets:
            return
        proc_iv = [
            model.new_fixed_size_interval_var(self.offsets[j.id], j.size, f"P{j.id}")
            for j in running
        ]
        block_proc = [
            model.new_fixed_size_interval_var(int(b.offset or 0), b.size, "busyP")
            for b in self.blocks
        ]
        model.add_no_overlap_2d(time_iv + block_iv, proc_iv + block_proc)

    def shelf_index(self, job: Job) -> cp_model.LinearExprT:
        return sum(k * self.assign[job.id, k] for k in range(1, self.shelves))

    def _order_group(self, group: Sequence[Job]) -> None:
        model = self.model
        for first, second in itertools.pairwise(group):
            model.add(self.shelf_index(first) <= self.shelf_index(second))
            a, b = self.starts[first.id], self.starts[second.id]
            model.add(a <= b)
            if self.with_offsets:
                same = model.new_bool_var(f"same{first.id}_{second.id}")
                model.add(a == b).only_enforce_if(same)
                model.add(a < b).only_enforce_if(~same)
                model.add(
                    self.offsets[first.id] <= self.offsets[second.id]
                ).only_enforce_if(same)

    def _add_objective(self, bounds: Sequence[Bound]) -> None:
        jobs = self.instance.jobs
        if self.objective.kind == "cmax":
            best = max((b.value for b in bounds), default=0.0)
            lowest = max(0, math.ceil(best - 1e-9))
            last = self.shelf_end[-1]
            model = self.model
            model.add(last >= min(lowest, self.horizon))
            for job in jobs:
                model.add(last >= self.starts[job.id] + job.runtime)
            model.minimize(last)
            return
        weights = [self.objective.weight(j) for j in jobs]
        integer, self.scale = integer_weights(weights, self.horizon)
        self.model.minimize(
            sum(
                w * (self.starts[j.id] + j.runtime)
                for w, j in zip(integer, jobs, strict=True)
            )
        )

    def _add_hint(self, schedule: Schedule) -> None:
        model = self.model
        groups = _shelves_of(self.instance, schedule)
        index = {jid: k for k, group in enumerate(groups) for jid in group}
        end = 0
        for k in range(self.shelves):
            if k < len(groups):
                start = schedule[groups[k][0]].start
                end = max(schedule[jid].end for jid in groups[k])
                model.add_hint(self.shelf_start[k], start)
                model.add_hint(self.shelf_end[k], end)
                model.add_hint(self.used[k], 1)
            else:
                model.add_hint(self.shelf_start[k], end)
                model.add_hint(self.shelf_end[k], end)
                model.add_hint(self.used[k], 0)
        for job in self.instance.jobs:
            placement = schedule[job.id]
            model.add_hint(self.starts[job.id], placement.start)
            for k in range(self.shelves):
                model.add_hint(self.assign[job.id, k], int(index[job.id] == k))
            if self.with_offsets:
                model.add_hint(self.offsets[job.id], int(placement.offset or 0))

    def solver_bound(self, raw: float) -> float:
        """The solver's objective bound in the objective's units."""
        if self.objective.kind == "cmax":
            return float(raw)
        value = raw / self.scale
        if self.scale != 1.0:
            value *= 1.0 - 1e-12  # one division's rounding, in the safe direction
        return value - self.objective.offset(self.instance)


def _shelves_of(instance: Instance, schedule: Schedule) -> list[list[int]]:
    """Job ids grouped by start time, groups in time order, ids sorted."""
    by_start: dict[int, list[int]] = defaultdict(list)
    for job in instance.jobs:
        by_start[schedule[job.id].start].append(job.id)
    return [sorted(by_start[s]) for s in sorted(by_start)]


def _identical_groups(instance: Instance, objective: Objective) -> list[list[Job]]:
    groups: dict[tuple[Any, ...], list[Job]] = defaultdict(list)
    for job in instance.jobs:
        key: tuple[Any, ...] = (job.release, job.size, job.runtime)
        if objective.kind == "wct":
            key += (objective.weight(job),)
        groups[key].append(job)
    return [sorted(g, key=lambda j: j.id) for g in groups.values() if len(g) > 1]


def _relabel(schedule: Schedule, groups: Sequence[Sequence[Job]]) -> Schedule:
    """Hand each group's placements out in (start, offset) order to ids in order."""
    placements = dict(schedule.placements)
    for group in groups:
        ordered = sorted(
            (placements[j.id] for j in group), key=lambda p: (p.start, p.offset or 0)
        )
        for job, placement in zip(group, ordered, strict=True):
            placements[job.id] = placement
    return Schedule(placements, schedule.producer)


# --------------------------------------------------------------------------
# Solving and decoding
# --------------------------------------------------------------------------


def _search(
    solver: cp_model.CpSolver, model: _ShelfModel
) -> tuple[str, Bound | None, dict[int, tuple[int, int]] | None, dict[str, Any]]:
    """Run CP-SAT: status name, its bound, the solution ``{job: (start, offset)}``,
    notes (``interrupted``, ``error``). Ctrl-C stops it as a time limit would."""
    began = time.perf_counter()
    try:
        status = solver.solve(model.model)
    except KeyboardInterrupt:  # only if CP-SAT did not catch SIGINT itself
        return "INTERRUPTED", None, None, {"interrupted": True}
    elapsed = time.perf_counter() - began
    notes: dict[str, Any] = {}
    allotted = solver.parameters.max_time_in_seconds
    if (
        status in (cp_model.FEASIBLE, cp_model.UNKNOWN)
        and elapsed < 0.9 * allotted - 0.5
    ):
        notes["interrupted"] = True
    if status == cp_model.MODEL_INVALID:
        notes["error"] = f"CP-SAT model invalid: {model.model.validate()}"
    elif status == cp_model.INFEASIBLE:
        notes["error"] = (
            "CP-SAT proved the shelf model infeasible (a model bug: the hint is "
            "a feasible shelf schedule)"
        )
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return name, None, None, notes
    bound = Bound(model.solver_bound(solver.best_objective_bound), "cpsat", elapsed)
    found = {
        jid: (
            int(solver.value(var)),
            int(solver.value(model.offsets[jid])) if model.offsets else 0,
        )
        for jid, var in model.starts.items()
    }
    return name, bound, found, notes


def _decode(
    instance: Instance,
    objective: Objective,
    model: _ShelfModel,
    found: Mapping[int, tuple[int, int]],
) -> tuple[Candidate | None, str | None]:
    jobs = instance.jobs_by_id()
    starts = {jid: start for jid, (start, _) in found.items()}
    if instance.machine.allocation == "contiguous":
        offsets = {jid: offset for jid, (_, offset) in found.items()}
        if not model.with_offsets:
            # Without blocks a shelf's jobs go left to right (sizes sum <= m).
            for group in _shelves_of(instance, Schedule(
                {jid: Placement(s, s + jobs[jid].runtime) for jid, s in starts.items()}
            )):  # fmt: skip
                edge = 0
                for jid in group:
                    offsets[jid] = edge if jobs[jid].runtime > 0 else 0
                    edge += jobs[jid].size if jobs[jid].runtime > 0 else 0
        schedule = Schedule(
            {
                jid: Placement.contiguous(
                    s, s + jobs[jid].runtime, offsets[jid], jobs[jid].size
                )
                for jid, s in starts.items()
            },
            BACKEND,
        )
    else:
        # Count-feasible starts; a broken vector gets processors that the
        # checker then rejects (see solution.assign_processors).
        schedule = assign_checked(instance, starts)
    candidate, reason = checked_candidate(instance, objective, BACKEND, schedule)
    if candidate is not None:
        why = is_shelf_schedule(instance, candidate.schedule)
        if why is not None:
            return None, f"{BACKEND}: not a shelf schedule (a model bug): {why}"
    return candidate, reason
