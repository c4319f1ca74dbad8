"""Closed-form lower bounds on the optimal makespan and weighted completion time.

Every bound is a small public function returning a
:class:`~optsched.models.result.Bound`; :func:`lower_bounds` returns every
bound that applies to an objective and :func:`best_lower_bound` the largest.

=================  ============  ===========================================
method             objective     function
=================  ============  ===========================================
``release``        ``cmax``      :func:`release_bound`, ``max_j r'_j + p_j``
``area``           ``cmax``      :func:`area_bound`
``energy``         ``cmax``      :func:`energy_bound` (release dates)
``wide-jobs``      ``cmax``      :func:`wide_jobs_bound` (``k`` machines,
                                 conflict cliques)
``dff``            ``cmax``      :func:`dff_bound` (dual-feasible functions)
``height``         ``wct``       :func:`height_bound`
``squashed-area``  ``wct``       :func:`squashed_area_bound` (strengthened)
``fluid``          ``wct``       :func:`fluid_bound` (release dates)
``wide-jobs``      ``wct``       :func:`wide_jobs_wct_bound` (partitions)
=================  ============  ===========================================

Each is checked against the exact optimum of small random instances
(``tests/test_bounds.py``, :func:`optsched.models.enumerate.solve_exact`).

Notation
--------
``m`` processors; job ``j`` has release ``r_j``, size ``q_j`` (processors),
runtime ``p_j``, weight ``w_j`` (from the objective's weight rule) and area
``a_j = q_j p_j``. ``S_j`` and ``C_j = S_j + p_j`` are its start and end in a
schedule.

Busy blocks
-----------
Busy blocks (``instance.machine.unavailable``) are fixed occupancy. Every bound
below sees them in two ways, both valid for every feasible schedule:

* the free capacity ``c(u) = m - B(u)``, where ``B(u)`` is the number of
  processors the blocks take at time ``u``: the running jobs use at most
  ``c(u)`` processors;
* the *effective release* ``r'_j >= r_j``: the earliest time at which job
  ``j`` could start if it were alone on the machine with the blocks (on a
  contiguous machine it needs ``q_j`` adjacent processors free of blocks for
  ``p_j`` seconds). Any feasible schedule has ``S_j >= r'_j``, because a
  start that is feasible among other jobs is feasible alone. Without blocks
  ``r'_j = r_j``.

Integrality
-----------
Times are integers, so the makespan of every schedule is an integer and the
makespan bounds are rounded up. A weighted completion bound is rounded up
only when every weight is an integer (then ``sum w_j C_j`` is an integer);
all its arithmetic is exact (:class:`fractions.Fraction`) so that rounding up
never overshoots.

Every bound here is valid for both allocations (``any`` and
``contiguous``): contiguity only removes schedules, except for the effective
releases, which are computed for the machine's own allocation.
"""

from __future__ import annotations

import heapq
import math
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate

from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.result import Bound
from optsched.objective import Objective

__all__ = [
    "DualFeasibleFunction",
    "area_bound",
    "best_lower_bound",
    "dff_bound",
    "dual_feasible_functions",
    "earliest_start_alone",
    "energy_bound",
    "fluid_bound",
    "height_bound",
    "lower_bounds",
    "lower_bounds_within",
    "release_bound",
    "squashed_area_bound",
    "wide_jobs_bound",
    "wide_jobs_wct_bound",
]


# --------------------------------------------------------------------------
# Capacity profiles
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Profile:
    """A step function ``cap(u) >= 0`` on ``[0, inf)`` with integer breakpoints.

    ``cap(u) = caps[i]`` on ``[times[i], times[i+1])``; the last value holds
    forever and is positive. ``cumulative[i] = F(times[i])`` with
    ``F(T) = integral of cap over [0, T)``.
    """

    times: tuple[int, ...]
    caps: tuple[int, ...]
    cumulative: tuple[int, ...]

    @classmethod
    def from_steps(cls, times: Sequence[int], caps: Sequence[int]) -> _Profile:
        if caps[-1] <= 0:
            raise ValueError("capacity profile: the last capacity must be positive")
        cumulative = [0]
        for i in range(1, len(times)):
            cumulative.append(cumulative[-1] + caps[i - 1] * (times[i] - times[i - 1]))
        return cls(tuple(times), tuple(caps), tuple(cumulative))

    def integral(self, t: int) -> int:
        """``F(t)``, the capacity available in ``[0, t)``."""
        i = bisect_right(self.times, t) - 1
        return self.cumulative[i] + self.caps[i] * (t - self.times[i])

    def earliest_end(self, t: int, energy: int) -> int:
        """Smallest integer ``T >= t`` with ``F(T) - F(t) >= energy``."""
        if energy <= 0:
            return t
        target = self.integral(t) + energy
        k = bisect_left(self.cumulative, target)
        # cumulative[k-1] < target <= cumulative[k]: segment k-1 has cap > 0
        # (or k-1 is the last, open-ended, positive segment).
        s = k - 1
        return self.times[s] + -(-(target - self.cumulative[s]) // self.caps[s])


def _block_segments(machine: Machine) -> list[tuple[int, tuple[int, ...]]]:
    """Breakpoints of the busy blocks with the sizes of the blocks active there.

    Returns ``[(t_0 = 0, sizes_0), (t_1, sizes_1), ...]``: on ``[t_i, t_{i+1})``
    exactly the blocks of sizes ``sizes_i`` are active; the last entry has no
    active block.
    """
    blocks = [b for b in machine.unavailable if b.end > b.start]
    cuts = sorted({0} | {b.start for b in blocks} | {b.end for b in blocks})
    return [(t, tuple(b.size for b in blocks if b.start <= t < b.end)) for t in cuts]


def _profile(
    segments: list[tuple[int, tuple[int, ...]]], cap: Callable[[tuple[int, ...]], int]
) -> _Profile:
    times = [t for t, _ in segments]
    return _Profile.from_steps(times, [max(0, cap(sizes)) for _, sizes in segments])


# --------------------------------------------------------------------------
# Effective releases
# --------------------------------------------------------------------------


def earliest_start_alone(job: Job, machine: Machine) -> int:
    """Earliest start ``r'_j >= r_j`` of ``job`` alone on ``machine`` with its blocks.

    ``any`` allocation: the earliest ``t >= r_j`` with
    ``B(u) <= m - q_j`` for all ``u`` in ``[t, t + p_j)``. ``contiguous``: the
    earliest ``t`` at which some range of ``q_j`` adjacent processors is free
    of blocks during ``[t, t + p_j)``. Every feasible schedule starts the job
    at or after this time.
    """
    blocks = [b for b in machine.unavailable if b.end > b.start]
    return _earliest_alone(job, machine, blocks, _block_segments(machine))


def _earliest_alone(
    job: Job,
    machine: Machine,
    blocks: list[BusyBlock],
    segments: Sequence[tuple[int, tuple[int, ...]]],
) -> int:
    if job.runtime == 0 or not blocks or job.release >= segments[-1][0]:
        return job.release  # nothing to avoid (the last segment has no block)
    if machine.allocation == "contiguous":
        return _earliest_contiguous_alone(job, machine.processors, blocks)
    return _earliest_count_alone(job, machine.processors, segments)


def _earliest_count_alone(
    job: Job, m: int, segments: Sequence[tuple[int, tuple[int, ...]]]
) -> int:
    limit = m - job.size
    t = job.release
    for i, (start, sizes) in enumerate(segments[:-1]):
        end = segments[i + 1][0]
        if end <= t or sum(sizes) <= limit:
            continue
        if start >= t + job.runtime:
            break
        t = end  # every start before `end` overlaps this overloaded segment
    return t


def _earliest_contiguous_alone(job: Job, m: int, blocks: list[BusyBlock]) -> int:
    t = job.release
    while True:
        overlapping = [b for b in blocks if b.start < t + job.runtime and b.end > t]
        if _has_gap(overlapping, job.size, m):
            return t
        # Until the first overlapping block ends, all of them still overlap.
        t = min(b.end for b in overlapping)


def _has_gap(blocks: list[BusyBlock], width: int, m: int) -> bool:
    reach = 0
    for block in sorted(blocks, key=lambda b: b.offset or 0):
        assert block.offset is not None
        if block.offset - reach >= width:
            return True
        reach = max(reach, block.offset + block.size)
    return m - reach >= width


# --------------------------------------------------------------------------
# Shared context (computed once per instance)
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Context:
    m: int
    jobs: tuple[Job, ...]
    releases: tuple[int, ...]
    """Effective releases ``r'_j`` in job order."""
    segments: tuple[tuple[int, tuple[int, ...]], ...]
    free: _Profile
    """``c(u) = m - B(u)``."""


@lru_cache(maxsize=16)
def _context(instance: Instance) -> _Context:
    machine = instance.machine
    segments = _block_segments(machine)
    blocks = [b for b in machine.unavailable if b.end > b.start]
    m = machine.processors
    return _Context(
        m=m,
        jobs=instance.jobs,
        releases=tuple(
            _earliest_alone(j, machine, blocks, segments) for j in instance.jobs
        ),
        segments=tuple(segments),
        free=_profile(segments, lambda sizes: m - sum(sizes)),
    )


class _Clock:
    """A ``time.monotonic`` deadline that a long bound polls between cases.

    Bounds that take the maximum over many cases (functions, thresholds,
    cliques) stop at the deadline and keep the maximum so far, which is still
    a valid bound; :attr:`hit` records that they stopped.
    """

    __slots__ = ("deadline", "hit")

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.hit = False

    def expired(self) -> bool:
        """Has the deadline passed (remembered in :attr:`hit`)?"""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.hit = True
        return self.hit


def _timed(
    method: str, compute: Callable[[], float], clock: _Clock | None = None
) -> Bound:
    began = time.perf_counter()
    value = compute()
    partial = clock is not None and clock.hit
    return Bound(value, method, time.perf_counter() - began, partial)


# --------------------------------------------------------------------------
# Makespan: energy machinery
# --------------------------------------------------------------------------


def _energy_makespan(
    demands: Sequence[int],
    releases: Sequence[int],
    durations: Sequence[int],
    capacity: _Profile,
) -> int:
    r"""``max_t min{T >= t : F(T) - F(t) >= E(t)}`` over ``t in {0} ∪ {r_j}``.

    ``E(t) = sum_j d_j max(0, min(p_j, r_j + p_j - t))`` is the demand that
    must be served after ``t`` (job ``j`` runs at most ``max(0, t - r_j)`` of
    its ``p_j`` seconds before ``t``).
    """
    if not demands:
        return 0
    by_release = sorted(zip(releases, demands, durations, strict=True))
    r_sorted = [r for r, _, _ in by_release]
    pre_a = [0, *accumulate(d for _, d, _ in by_release)]
    pre_ad = [0, *accumulate(d * (r + p) for r, d, p in by_release)]
    pre_ap = [0, *accumulate(d * p for _, d, p in by_release)]
    by_end = sorted((r + p, d) for r, d, p in by_release)
    e_sorted = [e for e, _ in by_end]
    end_a = [0, *accumulate(d for _, d in by_end)]
    end_ad = [0, *accumulate(d * e for e, d in by_end)]
    best = 0
    for t in sorted({0, *releases}):
        i = bisect_left(r_sorted, t)  # jobs released before t
        k = bisect_right(e_sorted, t)  # jobs whose earliest end is <= t
        started = (pre_ad[i] - t * pre_a[i]) - (end_ad[k] - t * end_a[k])
        energy = (pre_ap[-1] - pre_ap[i]) + started
        best = max(best, capacity.earliest_end(t, energy))
    return best


# --------------------------------------------------------------------------
# Makespan bounds
# --------------------------------------------------------------------------


def area_bound(instance: Instance) -> Bound:
    r"""Area bound: the earliest time the free capacity covers all job areas.

    .. math:: C_{\max} \ge \min\{T \in \mathbb{Z} :
              \textstyle\int_0^T c(u)\,du \ge \sum_j q_j p_j\}

    with ``c(u) = m - B(u)`` the processors left free by busy blocks. Without
    blocks this is ``ceil(sum_j q_j p_j / m)``. Valid because every job runs
    inside ``[0, C_max)`` on processors the blocks leave free; rounding up is
    valid because ``C_max`` is an integer. Releases are ignored here (see
    :func:`energy_bound`).

    Reference: the classical volume bound of strip packing / ``P|size_j|C_max``,
    e.g. J. Błażewicz, M. Drabowski, J. Węglarz, "Scheduling multiprocessor
    tasks to minimize schedule length", IEEE Trans. Computers 35(5), 1986.
    """

    def compute() -> float:
        ctx = _context(instance)
        area = sum(j.size * j.runtime for j in ctx.jobs)
        return ctx.free.earliest_end(0, area)

    return _timed("area", compute)


def release_bound(instance: Instance) -> Bound:
    r"""Longest job with its release: ``C_max >= max_j (r'_j + p_j)``.

    ``r'_j`` is the effective release (:func:`earliest_start_alone`): the
    earliest start of job ``j`` alone on the machine with its busy blocks; it
    equals ``r_j`` without blocks, giving the textbook ``max_j (r_j + p_j)``.
    Every job ends at or after ``r'_j + p_j``, and the makespan is at least the
    latest end.
    """

    def compute() -> float:
        ctx = _context(instance)
        return max(
            (r + j.runtime for r, j in zip(ctx.releases, ctx.jobs, strict=True)),
            default=0,
        )

    return _timed("release", compute)


def energy_bound(instance: Instance) -> Bound:
    r"""Release-date energy bound.

    For every ``t`` in ``{0} ∪ {r'_j}``, job ``j`` must still run
    ``max(0, min(p_j, r'_j + p_j - t))`` seconds after ``t``, so

    .. math:: C_{\max} \ge \max_t \min\{T \ge t :
              \textstyle\int_t^T c(u)\,du \ge
              \sum_j q_j \max(0, \min(p_j, r'_j + p_j - t))\}

    (``t`` itself is a valid bound: ``t = 0`` or some job ends after
    ``r'_j``). With ``t = 0`` this is :func:`area_bound`. ``C_max`` is an
    integer, so the smallest integer ``T`` is taken.

    Reference: the energetic reasoning of J. Carlier, E. Pinson, "Adjustment
    of heads and tails for the job-shop problem", EJOR 78, 1994, and
    P. Baptiste, C. Le Pape, W. Nuijten, "Constraint-based scheduling",
    Kluwer 2001, ch. 3 (here with heads only).
    """

    def compute() -> float:
        ctx = _context(instance)
        return _energy_makespan(
            [j.size for j in ctx.jobs],
            ctx.releases,
            [j.runtime for j in ctx.jobs],
            ctx.free,
        )

    return _timed("energy", compute)


def _count_profile(ctx: _Context, count: Callable[[int], int]) -> _Profile:
    """``k(u) = count(c(u))``: how many jobs of a set fit beside the blocks."""
    return _profile(list(ctx.segments), lambda sizes: count(ctx.m - sum(sizes)))


def _count_capacity(sizes: Sequence[int]) -> Callable[[int], int]:
    """How many jobs of ``sizes`` at most run together on ``free`` processors."""
    prefix = list(accumulate(sorted(sizes)))
    return lambda free: bisect_right(prefix, free)


def wide_jobs_bound(
    instance: Instance, *, max_parallel: int = 16, deadline: float | None = None
) -> Bound:
    r"""Wide-jobs bound: jobs too wide to run many at once, as ``k`` machines.

    For a size threshold ``θ`` let ``J_θ = {j : q_j >= θ}`` and, at time
    ``u``, ``k_θ(u)`` the largest ``n`` such that the ``n`` smallest sizes of
    ``J_θ`` sum to at most ``c(u)``. At most ``k_θ(u)`` jobs of ``J_θ`` run at
    time ``u``. Jobs wider than ``m/2`` give ``k = 1`` (they pairwise cannot
    overlap: a one-machine problem with release dates); jobs wider than
    ``m/(k+1)`` give at most ``k`` "machines".

    The relaxation is ``P_k | r_j, pmtn | C_max`` with a time-varying number
    of machines: count each running job of ``J_θ`` as one unit of a resource
    of capacity ``k_θ(u)`` and apply the energy argument of
    :func:`energy_bound` to it (demand 1 per job, effective releases):

    .. math:: C_{\max} \ge \max_t \min\{T \ge t :
              \textstyle\int_t^T k_\theta(u)\,du \ge
              \sum_{j \in J_\theta} \max(0, \min(p_j, r'_j + p_j - t))\}.

    The bound is the maximum over the thresholds ``θ`` among the job sizes
    for which ``k_θ(inf) <= max_parallel`` (wider sets are no better than the
    area bound in practice). Without blocks and with ``k = 1`` this is the
    optimal preemptive one-machine makespan with release dates
    ``max_t (t + sum_{r_j >= t} p_j)``.

    Conflict cliques: a narrow job can also exclude wide ones (``q_i + q_j >
    m``, e.g. 17 and 84 processors on 100). Every set of pairwise
    conflicting jobs (a clique of this threshold graph: the jobs wider than
    ``m/2`` plus at most one narrower job ``j`` and then only jobs wider than
    ``m - q_j``) runs one job at a time, so the same energy argument with
    ``k(u) <= 1`` applies to it; every maximal clique is tried.

    Reference: the "big jobs" argument of strip packing and multiprocessor
    task scheduling, e.g. M. Drozdowski, "Scheduling for parallel
    processing", Springer 2009, sec. 3.3; preemptive ``P|r_j,pmtn|C_max``:
    W. A. Horn, "Some simple scheduling algorithms", NRLQ 21, 1974.

    With a ``deadline`` (``time.monotonic``), thresholds and cliques not yet
    examined when it passes are left out (:attr:`Bound.partial`).
    """
    clock = _Clock(deadline)

    def compute() -> float:
        ctx = _context(instance)
        best = 0
        for theta in sorted({j.size for j in ctx.jobs}, reverse=True):
            chosen = [i for i, j in enumerate(ctx.jobs) if j.size >= theta]
            count = _count_capacity([ctx.jobs[i].size for i in chosen])
            if count(ctx.m) > max_parallel or clock.expired():
                break  # smaller thresholds only allow more parallel jobs
            capacity = _count_profile(ctx, count)
            best = max(best, _sequence_end(ctx, chosen, capacity))
        for value, _ in _conflict_cliques(ctx, 1, clock):
            best = max(best, value)
        return best

    return _timed("wide-jobs", compute, clock)


def _sequence_end(
    ctx: _Context, chosen: Sequence[int], capacity: _Profile | None = None
) -> int:
    """The count-energy bound of ``chosen`` (one unit per running job)."""
    if capacity is None:
        capacity = _count_profile(
            ctx, _count_capacity([ctx.jobs[i].size for i in chosen])
        )
    return _energy_makespan(
        [1] * len(chosen),
        [ctx.releases[i] for i in chosen],
        [ctx.jobs[i].runtime for i in chosen],
        capacity,
    )


def _conflict_cliques(
    ctx: _Context, limit: int | None = None, clock: _Clock | None = None
) -> list[tuple[int, list[int]]]:
    r"""Sets of jobs of which no two fit side by side, with their one-machine bound.

    Two jobs conflict when ``q_i + q_j > m``. This conflict graph is a
    threshold graph: a set of pairwise conflicting jobs holds at most one
    job with ``q_j <= m/2``, and then only jobs wider than ``m - q_j``. The
    sets returned are the jobs wider than ``m/2`` and, for each narrower job
    ``j`` that conflicts with some of them, ``j`` with all the jobs wider than
    ``m - q_j`` (the maximal such sets). Jobs of runtime 0 are left out.
    Sorted by decreasing bound (:func:`_sequence_end`), ties in job order
    (the jobs wider than ``m/2`` first); only the first ``limit`` are
    returned (all of them if ``None``). When ``clock`` expires, the cliques
    not yet scored are left out.

    These closed forms are every maximal clique, so no general clique search
    is needed: on a 20,000-job KTH window, building the graph in networkx
    (895,000 edges) and listing its cliques with ``find_cliques`` takes about
    14 s, against 0.3 s for scoring them all here; ``max_weight_clique``
    (weights ``p_j``) does not finish in 14 minutes there, and on 1,000-job
    windows it returns the clique of largest ``sum p_j``, which this list
    holds, while another clique has the larger release-date bound (e.g.
    847,406 against 875,526).

    Scoring each clique ``{j} ∪ K`` with :func:`_sequence_end` costs
    ``O(|K| log |K|)``; the narrow jobs of one size share ``K`` and the count
    profile, and :func:`_plus_one_scorer` gives each the same value in
    ``O(log |K|)``.
    """
    m = ctx.m
    runs = [i for i, j in enumerate(ctx.jobs) if j.runtime > 0]
    big = sorted(
        (i for i in runs if 2 * ctx.jobs[i].size > m), key=lambda i: ctx.jobs[i].size
    )
    big_sizes = [ctx.jobs[i].size for i in big]

    def wider(size: int) -> list[int]:
        return big[bisect_right(big_sizes, m - size) :]

    scored = [(-_sequence_end(ctx, big), -1)] if len(big) >= 2 else []  # -bound, job
    narrow: dict[int, list[int]] = {}
    for i in runs:
        if 2 * ctx.jobs[i].size <= m:
            narrow.setdefault(ctx.jobs[i].size, []).append(i)
    for size, same in narrow.items():
        if clock is not None and clock.expired():
            break
        members = wider(size)
        if members:
            score = _plus_one_scorer(ctx, members, size)
            scored += [(-score(i), i) for i in same]
    best = sorted(scored) if limit is None else heapq.nsmallest(limit, scored)
    return [(-neg, big if i < 0 else [i, *wider(ctx.jobs[i].size)]) for neg, i in best]


def _plus_one_scorer(
    ctx: _Context, clique: Sequence[int], size: int
) -> Callable[[int], int]:
    r"""``j -> _sequence_end(ctx, [j, *clique])`` for the jobs ``j`` of size ``size``.

    The jobs of ``clique`` and ``j`` must have positive runtimes. All the sets
    ``K ∪ {j}`` (``K`` = ``clique``) share the count profile ``k(u)`` of
    :func:`_sequence_end` (it depends on the sizes only); let ``F`` be its
    integral and ``F^{-1}(x) = min{T : F(T) >= x}``. With
    ``E_K(t) = sum_{i in K} max(0, min(p_i, r'_i + p_i - t))`` and
    ``e_j(t)`` the same term of ``j``, :func:`_energy_makespan` of ``K ∪ {j}``
    is ``max_t F^{-1}(F(t) + E_K(t) + e_j(t))`` over
    ``t in {0} ∪ {r'_i : i in K} ∪ {r'_j}`` (``E > 0`` there, so the
    earliest end after ``t`` is ``F^{-1}``), i.e. ``F^{-1}`` of the largest
    target, which for ``H(t) = F(t) + E_K(t)`` on the candidates ``t_x`` of
    ``K`` is

    .. math:: \max\bigl(H(r'_j) + p_j,\;
              \max_{t_x \le r'_j} H(t_x) + p_j,\;
              \max_{t_x \ge r'_j + p_j} H(t_x)\bigr)

    since ``e_j(t) = p_j`` up to ``r'_j``, ``r'_j + p_j - t`` until
    ``r'_j + p_j`` and 0 after. The candidates in ``(r'_j, r'_j + p_j)``
    never bind: the sizes of a clique give ``k(u) <= 1``, so ``F(t) - t``
    and ``E_K(t)`` do not increase and ``H(t) + r'_j + p_j - t <=
    H(r'_j) + p_j``. Prefix and suffix maxima of ``H`` give each score in
    ``O(log |K|)``.
    """
    jobs = ctx.jobs
    capacity = _count_profile(
        ctx, _count_capacity([size, *(jobs[i].size for i in clique)])
    )
    by_release = sorted((ctx.releases[i], jobs[i].runtime) for i in clique)
    r_sorted = [r for r, _ in by_release]
    pre_p = [0, *accumulate(p for _, p in by_release)]
    pre_end = [0, *accumulate(r + p for r, p in by_release)]
    e_sorted = sorted(r + p for r, p in by_release)
    end_sum = [0, *accumulate(e_sorted)]

    def left(t: int) -> int:
        """``E_K(t)``, as in :func:`_energy_makespan` with demand 1."""
        i = bisect_left(r_sorted, t)  # released before t
        k = bisect_right(e_sorted, t)  # ended by t (so released before t)
        return pre_p[-1] - pre_p[i] + (pre_end[i] - t * i) - (end_sum[k] - t * k)

    times = sorted({0, *r_sorted})
    reach = [capacity.integral(t) + left(t) for t in times]
    prefix = list(accumulate(reach, max))
    suffix = list(accumulate(reversed(reach), max))[::-1]

    def score(j: int) -> int:
        r, p = ctx.releases[j], jobs[j].runtime
        target = capacity.integral(r) + left(r) + p
        a = bisect_right(times, r)  # times[:a] <= r
        b = bisect_left(times, r + p, a)  # times[b:] >= r + p
        if a:
            target = max(target, prefix[a - 1] + p)
        if b < len(times):
            target = max(target, suffix[b])
        return capacity.earliest_end(0, target)

    return score


# --------------------------------------------------------------------------
# Dual-feasible functions
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DualFeasibleFunction:
    r"""An integer dual-feasible function ``f: {0..C} -> N`` with ``f(0) = 0``.

    Dual feasibility: ``sum_i x_i <= C`` implies ``sum_i f(x_i) <= f(C)``.
    Families (integer forms, ``C`` the capacity):

    ``fs`` (Fekete–Schepers ``f_k``, scaled by ``kC``), ``k >= 1``:
        ``f(x) = k x`` if ``(k+1) x / C`` is an integer, else
        ``C floor((k+1) x / C)``; ``f(C) = k C``.
    ``ccm`` (Carlier–Clautiaux–Moukrim ``f_CCM,1``), ``1 <= λ <= C/2``:
        ``2 (floor(C/λ) - floor((C-x)/λ))`` if ``x > C/2``; ``floor(C/λ)`` if
        ``x = C/2``; ``2 floor(x/λ)`` if ``x < C/2``; ``f(C) = 2 floor(C/λ)``.
    ``f0`` (the "large items" function), ``1 <= ε <= C/2``:
        ``C`` if ``x > C - ε``; ``x`` if ``ε <= x <= C - ε``; ``0`` if
        ``x < ε``; ``f(C) = C``.

    References: S. P. Fekete, J. Schepers, "New classes of fast lower bounds
    for bin packing problems", Math. Programming 91, 2001; J. Carlier,
    F. Clautiaux, A. Moukrim, "New reduction procedures and lower bounds for
    the two-dimensional bin packing problem with fixed orientation", C&OR 34,
    2007; F. Clautiaux, C. Alves, J. Valério de Carvalho, "A survey of
    dual-feasible and superadditive functions", Ann. OR 179, 2010.
    """

    family: str
    param: int
    capacity: int

    def __call__(self, x: int) -> int:
        c, k = self.capacity, self.param
        if self.family == "fs":
            return k * x if (k + 1) * x % c == 0 else c * ((k + 1) * x // c)
        if self.family == "ccm":
            if 2 * x > c:
                return 2 * (c // k - (c - x) // k)
            if 2 * x == c:
                return c // k
            return 2 * (x // k)
        if self.family == "f0":
            if x > c - k:
                return c
            return x if x >= k else 0
        raise ValueError(f"unknown dual-feasible family {self.family!r}")

    @property
    def scale(self) -> int:
        """``f(C)``, the capacity after the transformation."""
        return self(self.capacity)

    @property
    def label(self) -> str:
        """E.g. ``"fs(k=2)"``."""
        name = {"fs": "k", "ccm": "λ", "f0": "ε"}[self.family]
        return f"{self.family}({name}={self.param})"


def dual_feasible_functions(
    capacity: int, sizes: Sequence[int], *, max_per_family: int = 20
) -> list[DualFeasibleFunction]:
    """The dual-feasible functions :func:`dff_bound` tries.

    ``fs`` with ``k = 1..min(10, C)``; ``ccm`` and ``f0`` with parameters
    among the distinct sizes in ``[1, C/2]`` (at most ``max_per_family``
    each, evenly spread), the values where these step functions change.
    """
    c = capacity
    small = sorted({s for s in sizes if 1 <= 2 * s <= c})
    if len(small) > max_per_family:
        step = len(small) / max_per_family
        small = sorted({small[int(i * step)] for i in range(max_per_family)})
    out = [DualFeasibleFunction("fs", k, c) for k in range(1, min(10, c) + 1)]
    out += [DualFeasibleFunction("ccm", lam, c) for lam in small]
    out += [DualFeasibleFunction("f0", eps, c) for eps in small]
    return out


def _dff_profile(ctx: _Context, f: DualFeasibleFunction) -> _Profile:
    """``c_f(u) = f(m) - max(f(B(u)), sum_b f(b))``."""

    def cap(sizes: tuple[int, ...]) -> int:
        return f.scale - max(f(sum(sizes)), sum(f(b) for b in sizes))

    return _profile(list(ctx.segments), cap)


def dff_bound(instance: Instance, *, deadline: float | None = None) -> Bound:
    r"""Dual-feasible-function bounds: the energy bound on transformed sizes.

    For a dual-feasible function ``f`` (:class:`DualFeasibleFunction`) the jobs
    running at time ``u`` together with the busy blocks active at ``u`` have
    sizes summing to at most ``m``, hence

    .. math:: \sum_{j \text{ running at } u} f(q_j) \le
              f(m) - \max\big(f(B(u)), \textstyle\sum_b f(b)\big) =: c_f(u)

    (the blocks counted as one item of size ``B(u)``, or one item each; both
    are valid). Applying the release-date energy argument of
    :func:`energy_bound` with demands ``f(q_j)`` and capacity ``c_f``:

    .. math:: C_{\max} \ge \max_f \max_t \min\{T \ge t :
              \textstyle\int_t^T c_f(u)\,du \ge
              \sum_j f(q_j) \max(0, \min(p_j, r'_j + p_j - t))\}.

    Without blocks and releases this is the strip-packing bound
    ``ceil(sum_j f(q_j) p_j / f(m))``. It holds for both allocations (only
    the sizes of simultaneously running jobs are used).

    References: S. P. Fekete, J. Schepers, "A general framework for bounds
    for higher-dimensional orthogonal packing problems", Math. Methods of
    OR 60, 2004; J. Carlier, F. Clautiaux, A. Moukrim (2007), see
    :class:`DualFeasibleFunction`.

    With a ``deadline`` (``time.monotonic``), the functions not yet tried
    when it passes are left out (:attr:`Bound.partial`).
    """
    clock = _Clock(deadline)

    def compute() -> float:
        ctx = _context(instance)
        if not ctx.jobs:
            return 0
        sizes = [j.size for j in ctx.jobs]
        durations = [j.runtime for j in ctx.jobs]
        best = 0
        seen: set[tuple[int, ...]] = set()
        for f in dual_feasible_functions(ctx.m, sizes):
            if clock.expired():
                break
            demands = [f(q) for q in sizes]
            key = (f.scale, *demands)
            if key in seen or not any(demands):
                continue
            seen.add(key)
            capacity = _dff_profile(ctx, f)
            best = max(
                best, _energy_makespan(demands, ctx.releases, durations, capacity)
            )
        return best

    return _timed("dff", compute, clock)


# --------------------------------------------------------------------------
# Weighted completion: fluid machinery
# --------------------------------------------------------------------------


def _fluid_weighted_mean_busy(
    releases: Sequence[int],
    works: Sequence[int],
    weights: Sequence[Fraction],
    capacity: _Profile,
) -> Fraction:
    r"""``sum_j w_j M_j`` of the preemptive largest-ratio-first fluid schedule.

    A single resource of rate ``cap(u)`` serves jobs of work ``a_j > 0``
    released at ``r_j``; at every moment all the rate goes to the released,
    unfinished job with the largest ``w_j / a_j``. ``M_j = (1/a_j) ∫ u x_j(u) du``
    is the mean busy time of job ``j`` (``x_j`` its rate). Exact arithmetic.
    """
    order = sorted(range(len(works)), key=lambda i: releases[i])
    heap: list[tuple[Fraction, int]] = []
    remaining = [Fraction(a) for a in works]
    total = Fraction(0)
    now: Fraction = Fraction(0)
    nxt = 0
    times = capacity.times
    while nxt < len(order) or heap:
        while nxt < len(order) and releases[order[nxt]] <= now:
            i = order[nxt]
            heapq.heappush(heap, (-Fraction(weights[i]) / works[i], i))
            nxt += 1
        next_release = releases[order[nxt]] if nxt < len(order) else None
        if not heap:
            assert next_release is not None
            now = Fraction(next_release)
            continue
        seg = bisect_right(times, now) - 1
        next_break = times[seg + 1] if seg + 1 < len(times) else None
        cap = capacity.caps[seg]
        if cap == 0:
            assert next_break is not None  # the last capacity is positive
            now = Fraction(next_break)
            continue
        neg_ratio, i = heap[0]
        end = now + remaining[i] / cap
        for limit in (next_release, next_break):
            if limit is not None and limit < end:
                end = Fraction(limit)
        # ∫_now^end u * cap du, weighted by w_i / a_i
        total += -neg_ratio * cap * (end * end - now * now) / 2
        remaining[i] -= cap * (end - now)
        if remaining[i] == 0:
            heapq.heappop(heap)
        now = end
    return total


def _weights(instance: Instance, objective: Objective) -> list[Fraction]:
    # Exact weights: a float area weight beyond 2**53 may be rounded up.
    return [Fraction(objective.exact_weight(j)) for j in instance.jobs]


def _finish_wct(value: Fraction, instance: Instance, objective: Objective) -> float:
    """Subtract the ``relative`` offset; round up when the objective is integral.

    An integral result is an exact ``int`` (no float rounding beyond
    ``2**53``); otherwise the nearest float, which may exceed the exact
    bound by half a unit in the last place (see
    :func:`optsched.models.solution.best_lower_bound`).
    """
    weights = _weights(instance, objective)
    if objective.relative:
        value -= sum(
            (w * j.release for w, j in zip(weights, instance.jobs, strict=True)),
            Fraction(0),
        )
    if all(w.denominator == 1 for w in weights):
        return math.ceil(value)
    return float(value)


def _require_wct(objective: Objective, name: str) -> None:
    if objective.kind != "wct":
        raise ValueError(
            f"{name}: needs a weighted completion objective, got {objective.label}"
        )


def _fluid_part(
    ctx: _Context,
    weights: Sequence[Fraction],
    chosen: Sequence[int],
    *,
    use_releases: bool = True,
) -> Fraction:
    """Fluid bound on ``sum_{j in chosen} w_j C_j`` on the free capacity."""
    positive = [i for i in chosen if ctx.jobs[i].runtime > 0]
    zero = [i for i in chosen if ctx.jobs[i].runtime == 0]
    mean_busy = _fluid_weighted_mean_busy(
        [ctx.releases[i] if use_releases else 0 for i in positive],
        [ctx.jobs[i].area for i in positive],
        [weights[i] for i in positive],
        ctx.free,
    )
    half_runs = (
        sum((weights[i] * ctx.jobs[i].runtime for i in positive), Fraction(0)) / 2
    )
    zero_jobs = sum((weights[i] * ctx.releases[i] for i in zero), Fraction(0))
    return mean_busy + half_runs + zero_jobs


def _height_part(
    ctx: _Context, weights: Sequence[Fraction], chosen: Sequence[int]
) -> Fraction:
    return sum(
        (weights[i] * (ctx.releases[i] + ctx.jobs[i].runtime) for i in chosen),
        Fraction(0),
    )


# --------------------------------------------------------------------------
# Weighted completion bounds
# --------------------------------------------------------------------------


def height_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Height bound: ``sum_j w_j C_j >= sum_j w_j (r'_j + p_j)``.

    Each job ends at or after its effective release plus its runtime
    (``r'_j = r_j`` without busy blocks). With ``relative`` the constant
    ``sum_j w_j r_j`` is subtracted. Folklore; see e.g. U. Schwiegelshohn et
    al. (1998), cited in :func:`squashed_area_bound`.
    """
    _require_wct(objective, "height bound")

    def compute() -> float:
        ctx = _context(instance)
        value = _height_part(ctx, _weights(instance, objective), range(len(ctx.jobs)))
        return _finish_wct(value, instance, objective)

    return _timed("height", compute)


def squashed_area_bound(
    instance: Instance, objective: Objective, *, strengthened: bool = True
) -> Bound:
    r"""Squashed-area bound, strengthened by the mean-busy-time argument.

    Squash each job into a full-width job of length ``a_j / m`` and order them
    by Smith's rule (largest ``w_j / a_j`` first) on one machine; with
    ``C^sq_j`` the resulting completion times,
    ``A_sq = sum_j w_j C^sq_j`` is a lower bound (Schwiegelshohn et al.
    1998). Releases are ignored. The strengthened form, returned by default,
    is

    .. math:: \sum_j w_j C_j \ge A_{sq} +
              \tfrac12 \sum_j w_j p_j (1 - q_j / m).

    Proof. Let ``M_j = S_j + p_j/2`` be the mean busy time of job ``j`` in any
    feasible schedule, so ``C_j = M_j + p_j/2``. View job ``j`` as a fluid of
    ``a_j = q_j p_j`` units served at rate ``x_j(u)`` (``q_j`` on
    ``[S_j, C_j)``) by one resource of rate ``c(u) <= m``; then
    ``M_j = (1/a_j) ∫ u x_j(u) du``. Among all fluid schedules with
    ``sum_j x_j(u) <= c(u)``, ``sum_j w_j M_j = ∫ u sum_j (w_j/a_j) x_j(u) du``
    is minimised by serving the jobs in order of non-increasing ``w_j / a_j``
    (exchange argument: moving ``ε`` units of a higher-ratio job ``i`` from
    ``u' `` to an earlier ``u`` where a lower-ratio job ``j`` is served, and
    ``ε`` of ``j`` the other way, changes the objective by
    ``ε (u' - u)(w_j/a_j - w_i/a_i) <= 0``; idle capacity is never better).
    Without blocks this order serves job ``j`` during
    ``[C^sq_j - a_j/m, C^sq_j)`` at rate ``m``, so its mean busy time is
    ``C^sq_j - a_j/(2m)``. Hence
    ``sum_j w_j C_j = sum_j w_j M_j + ½ sum_j w_j p_j
    >= A_sq - ½ sum_j w_j q_j p_j / m + ½ sum_j w_j p_j``, which is the
    formula. For ``q_j = m`` it is tight (``p_j (1 - q_j/m) = 0``); for a
    single job of size 1 on ``m`` processors it gives exactly ``p_j``.

    Busy blocks: the fluid runs on ``c(u) = m - B(u)`` instead of ``m``
    (the same exchange argument; the formula above is the block-free case).
    Without ``strengthened`` the term ``½ sum_j w_j p_j (1 - q_j/m)`` is taken
    off again: exactly the plain ``A_sq`` without blocks. (With blocks the
    plain Smith-order value on ``c(u)`` is not computed directly: the squashed
    completion times are then a nonlinear function of the prefix areas, for
    which Smith's order need not be the minimiser.)

    References: U. Schwiegelshohn, W. Ludwig, J. L. Wolf, J. Turek, P. S. Yu,
    "Smart SMART bounds for weighted response time scheduling", SIAM J.
    Computing 28(1), 1998; W. L. Eastman, S. Even, I. M. Isaacs, "Bounds for
    the optimal scheduling of n jobs on m processors", Management Science
    11(2), 1964; M. X. Goemans, "Improved approximation algorithms for
    scheduling with release dates", SODA 1997.
    """
    _require_wct(objective, "squashed-area bound")

    def compute() -> float:
        ctx = _context(instance)
        weights = _weights(instance, objective)
        value = _fluid_part(ctx, weights, range(len(ctx.jobs)), use_releases=False)
        if not strengthened:
            value -= (
                sum(
                    (
                        w * j.runtime * Fraction(ctx.m - j.size, ctx.m)
                        for w, j in zip(weights, ctx.jobs, strict=True)
                    ),
                    Fraction(0),
                )
                / 2
            )
        return _finish_wct(value, instance, objective)

    return _timed("squashed-area", compute)


def fluid_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Fluid bound with release dates (preemptive rate-``m`` WSPT by ratio).

    Serve the jobs as fluids on one resource of rate ``c(u) = m - B(u)``:
    job ``j`` is ``a_j = q_j p_j`` units, available from its effective release
    ``r'_j``; at every moment the whole rate goes to the available unfinished
    job with the largest ``w_j / a_j``. With ``M^F_j`` the mean busy time of
    job ``j`` in this schedule,

    .. math:: \sum_j w_j C_j \ge \sum_j w_j (M^F_j + p_j / 2).

    Proof. In any feasible schedule job ``j`` is served at rate ``q_j`` on
    ``[S_j, C_j)`` with ``S_j >= r'_j``, and the jobs together use at most
    ``c(u)`` processors: this is a feasible fluid schedule, in which the mean
    busy time of ``j`` is ``M_j = S_j + p_j / 2 = C_j - p_j / 2``. The
    objective ``sum_j w_j M_j = ∫ u sum_j (w_j / a_j) x_j(u) du`` of fluid
    schedules is minimised by the greedy rule above: if some optimal fluid
    schedule serves at time ``u`` a job ``j`` (or nothing) while an
    available job ``i`` with ``w_i / a_i > w_j / a_j`` is served at a later
    ``u'``, exchanging ``ε`` units (``i`` to ``u``, ``j`` to ``u'``, both
    released by then) keeps the rates within ``c`` and changes the objective
    by ``ε (u' - u)(w_j/a_j - w_i/a_i) <= 0``. This is the preemptive
    WSPT rule that solves the mean-busy-time relaxation of
    ``1|r_j, pmtn|sum w_j C_j`` (Goemans 1997), on a machine of speed
    ``c(u)``. Jobs with ``p_j = 0`` contribute ``w_j r'_j``. The bound
    dominates :func:`squashed_area_bound` (same relaxation plus releases).
    With ``relative`` the constant ``sum_j w_j r_j`` is subtracted.

    References: M. X. Goemans, "Improved approximation algorithms for
    scheduling with release dates", SODA 1997; M. X. Goemans, M. Queyranne,
    A. S. Schulz, M. Skutella, Y. Wang, "Single machine scheduling with
    release dates", SIAM J. Discrete Math. 15(2), 2002.
    """
    _require_wct(objective, "fluid bound")

    def compute() -> float:
        ctx = _context(instance)
        value = _fluid_part(ctx, _weights(instance, objective), range(len(ctx.jobs)))
        return _finish_wct(value, instance, objective)

    return _timed("fluid", compute)


def wide_jobs_wct_bound(
    instance: Instance,
    objective: Objective,
    *,
    max_parallel: int = 3,
    cliques: int = 3,
    deadline: float | None = None,
) -> Bound:
    r"""Wide-jobs bound for weighted completion: split the jobs, bound each part.

    For a partition of the jobs into ``W`` and ``N``,
    ``sum_j w_j C_j = sum_W w_j C_j + sum_N w_j C_j`` and each part is at
    least any lower bound of the sub-instance made of that part alone (fewer
    jobs only help). With ``W = {j : q_j >= θ}`` and ``k_θ(u)`` as in
    :func:`wide_jobs_bound`, at most ``k_θ(u)`` jobs of ``W`` run at time
    ``u``; counting each running job of ``W`` as one unit of a resource of
    rate ``k_θ(u)`` gives the fluid relaxation of :func:`fluid_bound` with
    works ``p_j`` and ratios ``w_j / p_j``:

    .. math:: \sum_{j\in W} w_j C_j \ge \sum_{j \in W} w_j (M^{k}_j + p_j/2)

    (for ``k_θ = 1`` this is the preemptive one-machine WSPT bound with
    release dates of Goemans 1997, exact for the preemptive relaxation). Each
    part takes the maximum of its applicable bounds (that one, the fluid
    bound and the height bound of the part); the result is the maximum over
    ``k = 1..max_parallel`` of the partition with the largest ``W`` that runs
    at most ``k`` jobs at a time on the whole machine, and over the
    ``cliques`` sets of pairwise conflicting jobs with the largest one-machine
    makespan bound (see :func:`wide_jobs_bound`; they run one at a time).

    References: see :func:`fluid_bound` and :func:`wide_jobs_bound`.

    With a ``deadline`` (``time.monotonic``), the partitions not yet tried
    when it passes are left out (:attr:`Bound.partial`).
    """
    _require_wct(objective, "wide-jobs bound")
    clock = _Clock(deadline)

    def compute() -> float:
        ctx = _context(instance)
        weights = _weights(instance, objective)
        best: Fraction | None = None
        parts = [
            [i for i, j in enumerate(ctx.jobs) if j.size >= theta]
            for theta in _widest_thresholds(ctx, max_parallel)
        ]
        parts += [clique for _, clique in _conflict_cliques(ctx, cliques, clock)]
        for wide in parts:
            if clock.expired():
                break
            chosen = set(wide)
            narrow = [i for i in range(len(ctx.jobs)) if i not in chosen]
            count = _count_capacity([ctx.jobs[i].size for i in wide])
            value = _wide_part(ctx, weights, wide, count) + max(
                _fluid_part(ctx, weights, narrow), _height_part(ctx, weights, narrow)
            )
            best = value if best is None else max(best, value)
        if best is None:  # every job fits more than max_parallel times
            best = max(
                _fluid_part(ctx, weights, range(len(ctx.jobs))),
                _height_part(ctx, weights, range(len(ctx.jobs))),
            )
        return _finish_wct(best, instance, objective)

    return _timed("wide-jobs", compute, clock)


def _widest_thresholds(ctx: _Context, max_parallel: int) -> list[int]:
    """For ``k = 1..max_parallel``, the smallest size threshold whose jobs run
    at most ``k`` at a time on the whole machine (the largest such set)."""
    out: list[int] = []
    sizes = sorted({j.size for j in ctx.jobs}, reverse=True)
    for k in range(1, max_parallel + 1):
        fitting = [
            theta
            for theta in sizes
            if _count_capacity([j.size for j in ctx.jobs if j.size >= theta])(ctx.m)
            <= k
        ]
        if fitting and fitting[-1] not in out:
            out.append(fitting[-1])
    return out


def _wide_part(
    ctx: _Context,
    weights: Sequence[Fraction],
    wide: Sequence[int],
    count: Callable[[int], int],
) -> Fraction:
    positive = [i for i in wide if ctx.jobs[i].runtime > 0]
    zero = [i for i in wide if ctx.jobs[i].runtime == 0]
    machines = _count_profile(ctx, count)
    mean_busy = _fluid_weighted_mean_busy(
        [ctx.releases[i] for i in positive],
        [ctx.jobs[i].runtime for i in positive],
        [weights[i] for i in positive],
        machines,
    )
    one_machine = (
        mean_busy
        + sum((weights[i] * ctx.jobs[i].runtime for i in positive), Fraction(0)) / 2
        + sum((weights[i] * ctx.releases[i] for i in zero), Fraction(0))
    )
    return max(
        one_machine, _fluid_part(ctx, weights, wide), _height_part(ctx, weights, wide)
    )


# --------------------------------------------------------------------------
# All bounds
# --------------------------------------------------------------------------

MAKESPAN_BOUNDS: tuple[Callable[[Instance], Bound], ...] = (
    release_bound,
    area_bound,
    energy_bound,
    wide_jobs_bound,
    dff_bound,
)
"""Makespan bounds, cheapest first."""

WCT_BOUNDS: tuple[Callable[[Instance, Objective], Bound], ...] = (
    height_bound,
    squashed_area_bound,
    fluid_bound,
    wide_jobs_wct_bound,
)
"""Weighted completion bounds, cheapest first."""


_STOPPABLE: frozenset[Callable[..., Bound]] = frozenset(
    {wide_jobs_bound, dff_bound, wide_jobs_wct_bound}
)
"""Bounds that take a ``deadline`` and stop early with a partial value."""


def lower_bounds(
    instance: Instance, objective: Objective | str, *, deadline: float | None = None
) -> list[Bound]:
    """Every closed-form lower bound that applies to ``objective``.

    Each :class:`Bound` carries its value (in the objective's unit, already
    corrected for ``relative``), its method name and the seconds it took.
    With a ``deadline``, see :func:`lower_bounds_within`.
    """
    return lower_bounds_within(instance, objective, deadline)[0]


def lower_bounds_within(
    instance: Instance, objective: Objective | str, deadline: float | None
) -> tuple[list[Bound], list[str]]:
    """The bounds of :func:`lower_bounds` that fit before ``deadline``.

    Parameters
    ----------
    instance, objective
        The problem.
    deadline
        A :func:`time.monotonic` instant, or ``None`` for no limit.

    Returns
    -------
    bounds, notes
        The first (cheapest) bound is always computed, so that a result has
        a bound; a later one is skipped when the deadline has passed, and
        the long ones stop at the deadline with the best value of the cases
        examined (:attr:`Bound.partial`). ``notes`` has one line per bound
        skipped or cut short.
    """
    objective = Objective.parse(objective)
    if objective.kind == "cmax":
        table: Sequence[Callable[..., Bound]] = MAKESPAN_BOUNDS
        args: tuple[object, ...] = (instance,)
    else:
        table, args = WCT_BOUNDS, (instance, objective)
    bounds: list[Bound] = []
    notes: list[str] = []
    for k, bound in enumerate(table):
        if k > 0 and deadline is not None and time.monotonic() >= deadline:
            notes.append(f"{_METHODS[bound]}: skipped (time limit)")
            continue
        extra = {"deadline": deadline} if bound in _STOPPABLE else {}
        bounds.append(bound(*args, **extra))
        if bounds[-1].partial:
            notes.append(f"{bounds[-1].method}: cut short by the time limit")
    return bounds, notes


_METHODS: dict[Callable[..., Bound], str] = {
    release_bound: "release",
    area_bound: "area",
    energy_bound: "energy",
    wide_jobs_bound: "wide-jobs",
    dff_bound: "dff",
    height_bound: "height",
    squashed_area_bound: "squashed-area",
    fluid_bound: "fluid",
    wide_jobs_wct_bound: "wide-jobs",
}
"""Method name of each bound function (for the notes of skipped bounds)."""


def best_lower_bound(instance: Instance, objective: Objective | str) -> Bound:
    """The largest of :func:`lower_bounds` (the first one on ties).

    Its ``runtime`` is the time of all bounds together, since all had to be
    computed to know which one binds.
    """
    bounds = lower_bounds(instance, objective)
    best = max(bounds, key=lambda b: b.value)
    return Bound(best.value, best.method, sum(b.runtime for b in bounds))
