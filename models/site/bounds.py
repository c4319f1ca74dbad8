r"""Lower bounds that use the site rules themselves (calendar, sequential queues).

:func:`optsched.models.rigid.bounds.site_released` already bounds an instance
with a calendar or chains through release dates: each job released at its
earliest admissible start after its predecessors, ``r''_j`` (this is the
chain-aware release bound: ``r''_j + p_j`` with ``r''`` the predecessor
chain's release plus the run and think times along it, raised to the
calendar's first admissible start, :func:`optsched.site.chains.chain_release`).
The bounds here add what release dates cannot say.

Why the plain "area against integrated batch capacity" is not valid: only
starts are checked, and a job started before a capacity drop runs on after
it. Capacity 4 over ``[0, 5)`` and 1 over ``[5, 20)`` on 4 processors: a
job of 4 processors and 15 s starts at 0 and ends at 15 (makespan 15), yet
``\int_0^{15} c = 30 < 60``. :func:`batch_area_bound` uses a valid variant.

* :func:`batch_area_bound` (``cmax``): the batch jobs running at ``t`` all
  ran at the latest start among them, where the admission held.
* :func:`wide_jobs_window_bound` (``cmax``): jobs too wide to run
  together form a single machine with forbidden start times, sequenced
  exactly.
* :func:`sequential_queue_bound` (``cmax``) and
  :func:`sequential_queue_wct_bound` (``wct``): a sequential queue is a
  single machine.

Reference for the rules: B. Mallmann, *Untersuchung von
Scheduling-Strategien für Parallelrechner* (Jülich, 1997), §3.1.2, §3.1.5.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

from optsched.calendar import DAY, HOLIDAY, WEEK
from optsched.instance import Instance, Job
from optsched.models.rigid.bounds import earliest_start_alone, lower_bounds_within
from optsched.objective import Objective
from optsched.result import Bound
from optsched.site.chains import (
    ChainGraph,
    chain_graph,
    chain_release,
    shortest_duration,
    without_chains,
)
from optsched.topology.machines import flat_relaxation

MAX_THRESHOLDS = 24
"""Most release thresholds and run-time thresholds :func:`batch_area_bound`
tries each (evenly spread over the sorted values; any subset is valid)."""

MAX_WEEKS = 64
"""How far past the last release :func:`batch_area_bound` integrates
before it gives up (a calendar that never admits the load: no bound)."""


def _batch_jobs(instance: Instance, released: Instance) -> list[tuple[Job, int]]:
    """Positive-length jobs outside the anytime queues, with their site
    release ``r''_j`` (from ``released``, :func:`site_released`)."""
    calendar = instance.machine.calendar
    anytime = calendar.anytime_queues if calendar is not None else frozenset()
    release = {j.id: j.release for j in released.jobs}
    return [
        (j, release[j.id])
        for j in instance.jobs
        if j.runtime > 0 and j.queue not in anytime
    ]


def _spread(values: Sequence[int], count: int) -> list[int]:
    """At most ``count`` of the sorted distinct ``values``, the last included."""
    distinct = sorted(set(values))
    if len(distinct) <= count:
        return distinct
    step = len(distinct) / count
    picked = {distinct[min(len(distinct) - 1, int(k * step))] for k in range(count)}
    return sorted(picked | {distinct[-1]})


def _room_steps(
    instance: Instance, first: int, last: int
) -> tuple[list[int], list[int], list[int]]:
    """Breakpoints ``x_k`` over ``[first, last)`` with, on ``[x_k, x_{k+1})``,
    the batch room ``c - \\beta`` and the machine room ``m - \\beta``
    (``c`` the batch capacity, ``\\beta`` the busy blocks' processors)."""
    machine = instance.machine
    calendar = machine.calendar
    assert calendar is not None
    m = machine.processors
    cuts = {first}
    for b in machine.unavailable:
        if b.end > b.start:
            cuts.update(t for t in (b.start, b.end) if first < t < last)
    for a, _, _, _ in calendar.segments(first, last, m):
        cuts.add(a)
    xs = sorted(cuts)
    batch, free = [], []
    for x in xs:
        load = sum(b.size for b in machine.unavailable if b.start <= x < b.end)
        batch.append(max(0, calendar.capacity_at(x, m) - load))
        free.append(max(0, m - load))
    return xs, batch, free


def _window_max(
    xs: Sequence[int], values: Sequence[int], span: int
) -> tuple[list[int], list[int]]:
    """The step function ``g(t) = max_{s \\in (t - span, t]} f(s)`` of the
    step function ``f`` (``values[k]`` on ``[xs[k], xs[k+1])``, the last
    piece open to the right), as breakpoints and values; ``f`` is taken as
    ``-inf`` (no start) before ``xs[0]``. Sliding-window maximum with a
    monotone deque."""
    points = sorted(set(xs) | {x + span for x in xs[1:]})
    out_x: list[int] = []
    out_v: list[int] = []
    window: deque[int] = deque()  # piece indices, values decreasing
    k = 0
    for t in points:
        while k < len(xs) and xs[k] <= t:
            while window and values[window[-1]] <= values[k]:
                window.pop()
            window.append(k)
            k += 1
        # Piece j has left the window once its end x_{j+1} <= t - span.
        while window and window[0] + 1 < len(xs) and xs[window[0] + 1] <= t - span:
            window.popleft()
        value = values[window[0]] if window else 0
        if out_v and out_v[-1] == value:
            continue
        out_x.append(t)
        out_v.append(value)
    return out_x, out_v


def batch_area_bound(
    instance: Instance, released: Instance, *, deadline: float | None = None
) -> Bound | None:
    r"""Makespan bound from the batch capacity at the starts, method ``batch-area``.

    Let ``J`` be the jobs outside the anytime queues with ``p_j > 0``,
    ``r''_j`` their site releases, ``f(s) = c(s) - \beta(s)`` (batch
    capacity less the busy blocks' processors) and, for thresholds ``r``
    and ``P``, ``J_{r,P} = \{j \in J : r''_j \ge r,\ p_j \le P\}``:

    .. math::

        \kappa_P(t) = \min\bigl(m - \beta(t),\ \max_{s \in (t - P,\, t]} f(s)\bigr)

        C_{\max} \ge \min\Bigl\{C :
            \int_r^C \kappa_P(t)\,dt \ge \sum_{j \in J_{r,P}} q_j p_j\Bigr\}

    Proof. Fix ``t`` and let ``R`` be the jobs of ``J_{r,P}`` running at
    ``t`` (``S_j \le t < S_j + p_j``), ``s^*`` the latest of their starts;
    ``s^* > t - P``. Every job of ``R`` runs at ``s^*``, so the admission
    of the job started at ``s^*`` (rule 11: the processors held at a start,
    busy blocks included, are at most the capacity) gives ``\sum_R q_j +
    \beta(s^*) \le c(s^*)``; and the machine gives ``\sum_R q_j \le m -
    \beta(t)``. So the load of ``J_{r,P}`` at ``t`` is at most
    ``\kappa_P(t)``; these jobs run inside ``[r, C_{\max})``, and
    integrating gives the claim. Unlike the plain integral of ``c``, the
    window maximum lets a job run on after a drop; with ``P`` at least the
    longest low-capacity stretch the bound is the machine's area bound.
    ``r`` ranges over the site releases and ``P`` over the run times, each
    thinned to :data:`MAX_THRESHOLDS` values (any subset is valid).
    ``None`` without calendar or batch jobs, or if no ``C`` within
    :data:`MAX_WEEKS` weeks of the last release reaches the area.
    """
    began = time.perf_counter()
    if instance.machine.calendar is None:
        return None
    jobs = _batch_jobs(instance, released)
    if not jobs:
        return None
    first = min(r for _, r in jobs)
    reach = max(r for _, r in jobs) + 2 * WEEK
    releases = _spread([r for _, r in jobs], MAX_THRESHOLDS)
    spans = _spread([j.runtime for j, _ in jobs], MAX_THRESHOLDS)
    best, partial = 0, False
    while True:
        xs, batch, free = _room_steps(instance, first, reach)
        found, best_here, partial = _best_over(
            xs, batch, free, jobs, releases, spans, reach, deadline
        )
        best = max(best, best_here)
        if found or partial or reach > max(r for _, r in jobs) + MAX_WEEKS * WEEK:
            break
        reach += 4 * WEEK  # some area not reached within the steps: look further
    if best == 0:
        return None
    return Bound(best, "batch-area", time.perf_counter() - began, partial)


def _best_over(
    xs: Sequence[int],
    batch: Sequence[int],
    free: Sequence[int],
    jobs: Sequence[tuple[Job, int]],
    releases: Sequence[int],
    spans: Sequence[int],
    reach: int,
    deadline: float | None,
) -> tuple[bool, int, bool]:
    """The best bound over the thresholds; whether every area was reached
    before ``reach``, and whether the deadline cut the loop."""
    best, every = 0, True
    for span in spans:
        if deadline is not None and time.monotonic() >= deadline:
            return every, best, True
        gx, gv = _window_max(xs, batch, span)
        # kappa on the union of both functions' breakpoints, up to reach.
        points = sorted(set(gx) | set(xs))
        points = [p for p in points if p < reach] + [reach]
        kappa = [
            min(
                free[bisect.bisect_right(xs, p) - 1], gv[bisect.bisect_right(gx, p) - 1]
            )
            for p in points[:-1]
        ]
        area = [0]
        for (a, b), v in zip(itertools.pairwise(points), kappa, strict=True):
            area.append(area[-1] + v * (b - a))
        # Areas of the jobs of run time <= span released at or after each r
        # (jobs sorted by release: suffix sums, exact integers).
        ordered = sorted(
            (rr, j.size * j.runtime) for j, rr in jobs if j.runtime <= span
        )
        times = [rr for rr, _ in ordered]
        suffix = list(
            itertools.accumulate((a for _, a in reversed(ordered)), initial=0)
        )
        for r in releases:
            need = suffix[len(ordered) - bisect.bisect_left(times, r)]
            if need == 0:
                continue
            end = _reach(points, kappa, area, r, need)
            if end is None:
                every = False
                continue
            best = max(best, end)
    return every, best, False


def _reach(
    points: Sequence[int], kappa: Sequence[int], area: Sequence[int], r: int, need: int
) -> int | None:
    """The least integer ``C >= r`` with ``\\int_r^C kappa >= need``, or ``None``."""
    k = bisect.bisect_right(points, r) - 1
    if k < 0 or k >= len(kappa):
        return None
    base = area[k] + kappa[k] * (r - points[k])  # the integral up to r
    target = base + need
    j = bisect.bisect_left(area, target)  # first breakpoint with area >= target
    if j >= len(area):
        return None
    j = max(j, k + 1)
    a = points[j - 1]
    rate = kappa[j - 1]
    done = area[j - 1] if j - 1 > k else base
    start = a if j - 1 > k else r
    if rate == 0:
        return points[j]
    return start + -(-(target - done) // rate)


def sequential_queue_bound(instance: Instance, released: Instance) -> Bound | None:
    r"""Makespan bound of the sequential queues, method ``sequential-queue``.

    A sequential queue ``Q`` runs one job at a time (rule 11), so its jobs
    of positive length released (site release ``r''_j``) at or after ``r``
    run one after the other inside ``[r, C_{\max})``:

    .. math::

        C_{\max} \ge \max_Q \max_r \Bigl(r + \sum_{j \in Q,\ r''_j \ge r} p_j\Bigr)

    (Jackson's single-machine bound, ``1|r_j|C_{\max}``). ``None`` without
    sequential queues.
    """
    began = time.perf_counter()
    queues = _sequential(instance, released)
    if not queues:
        return None
    best = 0
    for jobs in queues.values():
        ordered = sorted(jobs, key=lambda jr: -jr[1])
        total = 0
        for job, r in ordered:
            total += job.runtime
            best = max(best, r + total)
    return Bound(best, "sequential-queue", time.perf_counter() - began)


def sequential_queue_wct_bound(
    instance: Instance, released: Instance, objective: Objective
) -> Bound | None:
    r"""Weighted completion bound of the sequential queues, method
    ``sequential-queue``.

    The jobs of positive length of each sequential queue ``Q`` form a
    single-machine schedule whose starts are at least ``t_Q = \min_{j \in
    Q} r''_j``; Smith's order from ``t_Q`` (ratio ``w_j / p_j``
    non-increasing) minimises their ``\sum w_j C_j`` among such schedules
    (W. E. Smith, "Various optimizers for single-stage production", Naval
    Res. Logist. Q. 3, 1956). Every other job ends at or after ``r''_j +
    p_j``. The parts are disjoint:

    .. math::

        \sum_j w_j C_j \ge \sum_Q \max\Bigl(\mathrm{Smith}_Q(t_Q),
            \sum_{j \in Q} w_j (r''_j + p_j)\Bigr)
            + \sum_{j \notin \cup Q} w_j (r''_j + p_j)

    less the objective's offset (``relative``: ``\sum w_j r_j`` with the
    original releases). ``None`` without sequential queues.
    """
    began = time.perf_counter()
    queues = _sequential(instance, released)
    if not queues:
        return None
    release = {j.id: j.release for j in released.jobs}
    weight = {j.id: objective.exact_weight(j) for j in instance.jobs}
    inside = {job.id for jobs in queues.values() for job, _ in jobs}
    total: int | float = sum(
        weight[j.id] * (release[j.id] + j.runtime)
        for j in instance.jobs
        if j.id not in inside
    )
    for jobs in queues.values():
        t = min(r for _, r in jobs)
        # Smith's order: w_i p_j > w_j p_i puts i first (exact products).
        ordered = sorted(
            (job for job, _ in jobs),
            key=_smith_key(weight),
        )
        smith: int | float = 0
        for job in ordered:
            t += job.runtime
            smith += weight[job.id] * t
        alone = sum(weight[job.id] * (r + job.runtime) for job, r in jobs)
        total += max(smith, alone)
    value = total - objective.offset(instance)
    return Bound(value, "sequential-queue", time.perf_counter() - began)


def _smith_key(weight: dict[int, int | float]) -> Callable[[Job], Any]:
    """Sort key of Smith's order (``w_i p_j > w_j p_i`` puts ``i`` first),
    compared in exact products."""

    def compare(a: Job, b: Job) -> int:
        left = weight[b.id] * a.runtime
        right = weight[a.id] * b.runtime
        return -1 if left < right else (1 if left > right else 0)

    return functools.cmp_to_key(compare)


def _sequential(
    instance: Instance, released: Instance
) -> dict[int, list[tuple[Job, int]]]:
    calendar = instance.machine.calendar
    if calendar is None or not calendar.sequential_queues:
        return {}
    release = {j.id: j.release for j in released.jobs}
    queues: dict[int, list[tuple[Job, int]]] = defaultdict(list)
    for job in instance.jobs:
        if job.queue in calendar.sequential_queues and job.runtime > 0:
            queues[job.queue].append((job, release[job.id]))
    return dict(queues)


MAX_WIDE = 10
"""Most wide jobs :func:`wide_jobs_window_bound` sequences exactly (the
longest ones; any subset gives a valid bound). Its cost grows as
``2^k k``."""


def largest_capacity(instance: Instance) -> int:
    """The largest batch capacity the calendar ever gives (``m`` where no
    period covers an hour, or a period sets none)."""
    calendar = instance.machine.calendar
    m = instance.processors
    assert calendar is not None
    best = 0
    for day in (*range(7), HOLIDAY):
        mine = sorted(
            (p for p in calendar.periods if day in p.days), key=lambda p: p.start
        )
        covered = 0
        for p in mine:
            if p.start > covered:
                return m  # an hour no period covers: the whole machine
            best = max(best, m if p.capacity is None else min(p.capacity, m))
            covered = p.end
        if covered < DAY:
            return m
    return best


def wide_jobs_window_bound(
    instance: Instance, released: Instance, *, deadline: float | None = None
) -> Bound | None:
    r"""Makespan of the wide jobs alone, method ``wide-window``.

    Two jobs outside the anytime queues with ``q_i + q_j > h``, ``h =
    \min(m, \max_t c(t))``, never run together: the later start would hold
    ``q_i + q_j`` processors, more than the machine or any batch capacity
    allows. So ``W = \{j : 2 q_j > h,\ p_j > 0\}`` run one at a time, each
    starting at or after its site release ``r''_j`` at an instant where it
    is admitted alone (``q_j \le \min(c(t), \sigma(t))``). Dropping every
    other job, the busy blocks and the chains (already in ``r''``) leaves a
    single machine with release dates and forbidden start times, whose
    optimal makespan bounds the instance's. For a fixed order, starting
    each job at its earliest admissible instant after the previous one ends
    is optimal (the earliest admissible start is non-decreasing in the
    earliest allowed time), so dynamic programming over subsets,

    .. math::

        f(\emptyset) = -\infty,\qquad
        f(S) = \min_{j \in S}
            \bigl(e_j(\max(f(S \setminus \{j\}), r''_j)) + p_j\bigr)

    with ``e_j(t)`` :meth:`~optsched.calendar.Calendar.earliest_start`,
    gives it exactly: ``C_{\max} \ge f(W)`` (Held and Karp, "A dynamic
    programming approach to sequencing problems", J. SIAM 10, 1962). Only
    the :data:`MAX_WIDE` longest wide jobs are sequenced (a subset of ``W``
    is still a clique, so its optimum is still a bound). ``None`` with fewer
    than two wide jobs, or when the deadline has passed.
    """
    began = time.perf_counter()
    calendar = instance.machine.calendar
    if calendar is None:
        return None
    m = instance.processors
    h = min(m, largest_capacity(instance))
    wide = [(j, r) for j, r in _batch_jobs(instance, released) if 2 * j.size > h]
    if len(wide) < 2 or (deadline is not None and time.monotonic() >= deadline):
        return None
    wide = sorted(wide, key=lambda jr: (-jr[0].runtime, jr[0].id))[:MAX_WIDE]
    k = len(wide)
    cache: dict[tuple[int, int], int] = {}

    def earliest(index: int, t: int) -> int:
        job, release = wide[index]
        key = (index, max(t, release))
        if key not in cache:
            found = calendar.earliest_start(job.size, key[1], m)
            if found is None:
                raise ValueError(
                    f"job {job.id} of {job.size} processors can never start under "
                    "the site calendar"
                )
            cache[key] = found + job.runtime
        return cache[key]

    done = [0] * (1 << k)
    for subset in range(1, 1 << k):
        best: int | None = None
        for index in range(k):
            bit = 1 << index
            if subset & bit:
                rest = subset ^ bit
                before = done[rest] if rest else wide[index][1]
                end = earliest(index, before)
                best = end if best is None else min(best, end)
        assert best is not None
        done[subset] = best
    return Bound(done[-1], "wide-window", time.perf_counter() - began)


def site_lower_bounds(
    instance: Instance,
    released: Instance,
    objective: Objective,
    deadline: float | None,
) -> tuple[list[Bound], list[str]]:
    """The bounds of this module that apply to ``instance`` and ``objective``.

    ``released`` is :func:`optsched.models.rigid.bounds.site_released` of
    ``instance``. Returns the bounds and notes (a bound cut short by the
    deadline).
    """
    bounds: list[Bound | None]
    if objective.kind == "cmax":
        bounds = [
            sequential_queue_bound(instance, released),
            batch_area_bound(instance, released, deadline=deadline),
            wide_jobs_window_bound(instance, released, deadline=deadline),
        ]
    else:
        bounds = [sequential_queue_wct_bound(instance, released, objective)]
    kept = [b for b in bounds if b is not None]
    notes = [f"{b.method}: cut short by the time limit" for b in kept if b.partial]
    return kept, notes


# --------------------------------------------------------------------------
# Releases and chains
# --------------------------------------------------------------------------


def site_released(instance: Instance) -> Instance:
    r"""The instance without its calendar and chains, each job released at
    the earliest start they allow.

    In topological order of the chains, ``r''_j`` is the first instant at or
    after :math:`\max(r_j, \max_{i \to j} r''_i + p_i + \theta_{ij})` at
    which the calendar admits a job of ``q_j`` processors on an otherwise
    idle machine (:meth:`~optsched.calendar.Calendar.earliest_start`;
    :func:`optsched.site.chains.chain_release` with that ``adjust``). Every
    schedule that respects the calendar and the chains starts each job at
    or after ``r''_j`` and is a schedule of the released instance, so every
    lower bound of that instance is one of the original for ``cmax`` and
    ``wct``; for ``relative`` objectives too, since ``C_j - r''_j <= C_j -
    r_j`` (weaker by ``sum w_j (r''_j - r_j)``, which is not added back).
    On a machine with speeds or SMP nodes ``p_i`` is the predecessor's
    shortest run time on any ``q_i`` processors
    (:meth:`~optsched.instance.Machine.shortest_run_time`), not its work:
    a predecessor on fast processors ends sooner than its work at speed 1.
    """
    machine = instance.machine
    calendar = machine.calendar
    m = machine.processors

    def admitted(job: Job, t: int) -> int:
        if calendar is None or job.queue in calendar.anytime_queues:
            return t
        found = calendar.earliest_start(job.size, t, m)
        if found is None:
            raise ValueError(
                f"job {job.id} of {job.size} processors can never start under "
                "the site calendar"
            )
        return found

    releases = chain_release(
        instance.jobs,
        chain_graph(instance.jobs),
        durations=shortest_durations(instance),
        adjust=admitted,
    )
    jobs = tuple(
        job.replace(release=releases[job.id]) for job in without_chains(instance.jobs)
    )
    return instance.replace(machine=machine.replace(calendar=None), jobs=jobs)


def shortest_durations(instance: Instance) -> dict[int, int]:
    """Per job the shortest time it can run: over its modes on a flat
    machine (:func:`~optsched.site.chains.shortest_duration`), on the
    fastest processors of its size at the fewest nodes' cost on a machine
    with speeds or SMP nodes
    (:meth:`~optsched.instance.Machine.shortest_run_time`). The chain
    releases read these, so that they stay below every feasible start."""
    machine = instance.machine
    if machine.flat:
        return {job.id: shortest_duration(job) for job in instance.jobs}
    return {
        job.id: machine.shortest_run_time(job.runtime, job.size)
        for job in instance.jobs
    }


def chain_lower_bound_cmax(
    jobs: Iterable[Job],
    graph: nx.DiGraph | ChainGraph,
    *,
    rule: str = "max",
    releases: Mapping[int, int] | None = None,
    durations: Mapping[int, int] | None = None,
) -> int:
    r"""Chain-aware release bound on the makespan: ``max_j (r'_j + p_j)``.

    ``r'_j`` from :func:`~optsched.site.chains.chain_release` (same ``rule``,
    ``releases`` and ``durations``). Every schedule that respects the chains
    starts job ``j`` at or after ``r'_j`` and runs it ``p_j`` seconds, so
    its makespan ``max_j C_j`` is at least ``r'_j + p_j`` for every ``j``.
    Mallmann states the chain-free case, "the last job can start at the
    earliest directly after its submission" (seed 000 §4.1 fn 1); with self-
    submission the chain's first release plus the run times (and think
    times) along the chain replaces it (seed 000 §10.2). Equal to the
    optimum on a machine wide enough for all jobs at once. 0 without jobs.
    """
    jobs = list(jobs)
    start = chain_release(
        jobs, graph, rule=rule, releases=releases, durations=durations
    )
    return max(
        (
            start[job.id]
            + (durations[job.id] if durations is not None else shortest_duration(job))
            for job in jobs
        ),
        default=0,
    )


def chain_release_bound(
    instance: Instance,
    graph: nx.DiGraph | ChainGraph | None = None,
    *,
    rule: str = "max",
) -> Bound:
    """The chain-aware release bound of an instance, method ``chain-release``.

    :func:`chain_lower_bound_cmax` with the machine taken into account:
    on a flat machine each ``r'_j`` of a rigid job is raised to its earliest
    start alone beside the busy blocks at or after it
    (:func:`optsched.models.rigid.bounds.earliest_start_alone`, valid for the same
    reason as :func:`optsched.models.rigid.bounds.release_bound`: a start feasible
    among other jobs is feasible alone); on a machine with speeds ``p_j`` is
    the shortest run time on any ``q_j`` processors
    (:meth:`optsched.instance.Machine.shortest_run_time`). ``graph``
    defaults to :func:`~optsched.site.chains.chain_graph` of the jobs. Never below
    :func:`~optsched.models.rigid.bounds.release_bound` under rule ``"max"``.
    """
    began = time.perf_counter()
    machine = instance.machine
    if graph is None:
        graph = chain_graph(instance.jobs)

    def alone(job: Job, t: int) -> int:
        if job.modes:
            return t  # the blocks' fit depends on the mode: keep the plain time
        moved = job if t == job.release else dataclasses.replace(job, release=t)
        return earliest_start_alone(moved, machine)

    durations = shortest_durations(instance)
    blocked = machine.flat and bool(machine.unavailable)
    start = chain_release(
        instance.jobs,
        graph,
        rule=rule,
        durations=durations,
        adjust=alone if blocked else None,
    )
    value = max((start[j.id] + durations[j.id] for j in instance.jobs), default=0)
    return Bound(value, "chain-release", time.perf_counter() - began)


def bounds_within(
    instance: Instance, objective: Objective, deadline: float | None
) -> tuple[list[Bound], list[str]]:
    """The bounds of a site calendar or chains (the family table's entry).

    Those of :func:`~optsched.models.rigid.bounds.lower_bounds_within` on
    :func:`site_released` (the instance without its calendar and chains,
    each job released at its earliest admissible start), and those of
    :func:`site_lower_bounds`, which read the calendar and queues. On a
    machine with speeds or SMP nodes the latter read the flat relaxation
    with the calendar kept (:func:`optsched.topology.machines.
    flat_relaxation`, each job at its shortest run time): a schedule of the
    original, each job shortened at the same start, holds no more
    processors at any instant and at any start, so it keeps every rule of
    the calendar and the chains, and its objective only falls.
    """
    released = site_released(instance)
    bounds, notes = lower_bounds_within(released, objective, deadline)
    flat = flat_relaxation(instance)
    flat_released = released if flat is instance else site_released(flat)
    more, more_notes = site_lower_bounds(flat, flat_released, objective, deadline)
    return bounds + more, notes + more_notes
