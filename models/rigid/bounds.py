"""Closed-form lower bounds on the optimal makespan and weighted completion time.

Every bound is a small public function returning a
:class:`~optsched.result.Bound`; :func:`lower_bounds` returns every
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

Instances with moldable or malleable jobs get the bounds of
:mod:`optsched.models.moldable.bounds` from :func:`lower_bounds_within`
(these read each job's requested mode, which the scheduler may change).

Each is checked against the exact optimum of small random instances
(``tests/families/rigid/test_bounds.py``,
:func:`optsched.models.rigid.enumerate.solve_exact`).

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

Cost
----
Every bound is ``O(n log n)`` per case it tries (``n`` jobs; the busy
blocks add ``O(S)`` segments): the energy bounds are prefix sums over the
jobs sorted once by release and by earliest end (:class:`_EnergyPlan`,
numpy, ``int64`` while no intermediate can reach 2**62 and exact Python
integers beyond), and the fluid bounds run one heap-driven preemptive
schedule in integer "work time" with one exact rational sum at the end
(:func:`_fluid_weighted_mean_busy`). The values are those of the direct
formulas, exactly (``tests/families/rigid/test_bounds_scale.py``); at 20,000
jobs all the makespan bounds take about 0.1 s and all the ``wct`` bounds
about 0.3 s (benchmarks/README.md, issue 16).
"""

from __future__ import annotations

import heapq
import math
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from optsched.families import first_with, load
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.objective import Objective
from optsched.result import Bound

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


_SAFE = 2**62
"""Largest magnitude an ``int64`` intermediate may reach; beyond it the
vectorised arithmetic runs on Python integers (``dtype=object``), exact at
any size."""


def _exact_dtype(peak: int) -> type:
    """``np.int64`` if every intermediate stays below :data:`_SAFE`, else ``object``."""
    return np.int64 if peak < _SAFE else object


def _prefix(values: np.ndarray) -> np.ndarray:
    """``[0, v_0, v_0 + v_1, ...]``, exact (on Python integers when large)."""
    if len(values) and values.dtype != object:
        peak = max(abs(int(values.max())), abs(int(values.min()))) * len(values)
        values = values.astype(_exact_dtype(peak))
    out = np.zeros(len(values) + 1, dtype=values.dtype)
    np.cumsum(values, out=out[1:])
    return out


def _ceil_div(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``ceil(a / b)`` elementwise for integers, ``b > 0``."""
    return -((-numerator) // denominator)


@dataclass(frozen=True, slots=True, eq=False)
class _Profile:
    """A step function ``cap(u) >= 0`` on ``[0, inf)`` with integer breakpoints.

    ``cap(u) = caps[i]`` on ``[times[i], times[i+1])``; the last value holds
    forever and is positive. ``cumulative[i] = F(times[i])`` with
    ``F(T) = integral of cap over [0, T)``. The ``_t``, ``_c``, ``_f``
    arrays hold the same three sequences for the vectorised queries
    (:meth:`integrals`, :meth:`earliest_ends`).
    """

    times: tuple[int, ...]
    caps: tuple[int, ...]
    cumulative: tuple[int, ...]
    _t: np.ndarray
    _c: np.ndarray
    _f: np.ndarray

    @classmethod
    def from_steps(cls, times: Sequence[int], caps: Sequence[int]) -> _Profile:
        if caps[-1] <= 0:
            raise ValueError("capacity profile: the last capacity must be positive")
        cumulative = [0]
        for i in range(1, len(times)):
            cumulative.append(cumulative[-1] + caps[i - 1] * (times[i] - times[i - 1]))
        dtype = _exact_dtype(max(cumulative[-1], max(caps), max(times)))
        return cls(
            tuple(times),
            tuple(caps),
            tuple(cumulative),
            np.array(times, dtype=dtype),
            np.array(caps, dtype=dtype),
            np.array(cumulative, dtype=dtype),
        )

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

    def peak(self, t: int) -> int:
        """A bound on ``|F(u)|`` and ``|u|`` for ``0 <= u <= t`` (dtype choice)."""
        return max(self.integral(max(t, 0)), self.times[-1], t)

    def integrals(self, t: np.ndarray) -> np.ndarray:
        """:meth:`integral` of every element of ``t`` (same dtype rules)."""
        i = np.searchsorted(self._t, t, side="right") - 1
        return self._f[i] + self._c[i] * (t - self._t[i])

    def earliest_ends(self, t: np.ndarray, energy: np.ndarray) -> np.ndarray:
        """:meth:`earliest_end` of every pair ``(t[i], energy[i])``.

        The caller picks the dtype of ``t`` and ``energy`` (``int64`` when
        ``F(t) + energy`` and the result stay below :data:`_SAFE`).
        """
        target = self.integrals(t) + energy
        s = np.maximum(np.searchsorted(self._f, target, side="left") - 1, 0)
        caps = self._c[s]
        ends = self._t[s] + _ceil_div(target - self._f[s], np.where(caps > 0, caps, 1))
        return np.where(energy > 0, ends, t)


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
    loads: tuple[list[int], list[int]] | None = None,
) -> int:
    if job.runtime == 0 or not blocks or job.release >= segments[-1][0]:
        return job.release  # nothing to avoid (the last segment has no block)
    if machine.allocation == "contiguous":
        return _earliest_contiguous_alone(job, machine.processors, blocks)
    return _earliest_count_alone(job, machine.processors, segments, loads)


def _segment_loads(
    segments: Sequence[tuple[int, tuple[int, ...]]],
) -> tuple[list[int], list[int]]:
    """Breakpoints and ``B(u)`` of each segment, shared by all jobs."""
    return [t for t, _ in segments], [sum(sizes) for _, sizes in segments]


def _earliest_count_alone(
    job: Job,
    m: int,
    segments: Sequence[tuple[int, tuple[int, ...]]],
    loads: tuple[list[int], list[int]] | None = None,
) -> int:
    times, busy = loads if loads is not None else _segment_loads(segments)
    limit = m - job.size
    t = job.release
    # Segments ending at or before the release never matter: start at the
    # one holding it (a bisection, so all jobs cost O(n log S), not O(n S)).
    for i in range(max(bisect_right(times, t) - 1, 0), len(times) - 1):
        end = times[i + 1]
        if end <= t or busy[i] <= limit:
            continue
        if times[i] >= t + job.runtime:
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


@dataclass(frozen=True, slots=True, eq=False)
class _Context:
    m: int
    jobs: tuple[Job, ...]
    releases: tuple[int, ...]
    """Effective releases ``r'_j`` in job order."""
    segments: tuple[tuple[int, tuple[int, ...]], ...]
    free: _Profile
    """``c(u) = m - B(u)``."""
    size: np.ndarray
    """``q_j`` in job order (``int64``: the core caps every integer at 2**53)."""
    runtime: np.ndarray
    """``p_j`` in job order."""
    release: np.ndarray
    """``r'_j`` in job order."""
    plan: _EnergyPlan
    """The sorting of all jobs for the energy bounds (:class:`_EnergyPlan`)."""
    area: np.ndarray
    """``a_j = q_j p_j`` (``object`` when some area reaches 2**62)."""


class _InstanceCache:
    """The last few :class:`_Context` objects, found by instance *identity*.

    ``functools.lru_cache`` hashes its key on every call, and hashing an
    instance hashes all its jobs (5 ms at 20,000 jobs, paid by every bound);
    the bounds of one call all receive the same object. Instances are
    immutable, so an identical object has the same context.
    """

    def __init__(self, build: Callable[[Instance], _Context], size: int = 16) -> None:
        self.build = build
        self.size = size
        self.entries: list[tuple[Instance, _Context]] = []

    def __call__(self, instance: Instance) -> _Context:
        for known, ctx in self.entries:
            if known is instance:
                return ctx
        ctx = self.build(instance)
        self.entries = [(instance, ctx), *self.entries[: self.size - 1]]
        return ctx

    def cache_clear(self) -> None:
        """Forget every context (benchmarks time the preprocessing too)."""
        self.entries = []


def _build_context(instance: Instance) -> _Context:
    machine = instance.machine
    segments = _block_segments(machine)
    blocks = [b for b in machine.unavailable if b.end > b.start]
    m = machine.processors
    if blocks:
        loads = _segment_loads(segments)
        releases = tuple(
            _earliest_alone(j, machine, blocks, segments, loads) for j in instance.jobs
        )
    else:
        releases = tuple(j.release for j in instance.jobs)
    return _Context(
        m=m,
        jobs=instance.jobs,
        releases=releases,
        segments=tuple(segments),
        free=_profile(segments, lambda sizes: m - sum(sizes)),
        size=np.array([j.size for j in instance.jobs], dtype=np.int64),
        runtime=np.array([j.runtime for j in instance.jobs], dtype=np.int64),
        release=np.array(releases, dtype=np.int64),
        area=_areas(instance.jobs),
        plan=_EnergyPlan.of(
            np.array(releases, dtype=np.int64),
            np.array([j.runtime for j in instance.jobs], dtype=np.int64),
        ),
    )


def _areas(jobs: Sequence[Job]) -> np.ndarray:
    areas = [j.size * j.runtime for j in jobs]
    return np.array(areas, dtype=_exact_dtype(max(areas, default=0)))


_context = _InstanceCache(_build_context)


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


@dataclass(frozen=True, slots=True, eq=False)
class _EnergyPlan:
    """The sorting shared by every energy bound over one set of jobs.

    :func:`_energy_makespan` needs the jobs sorted by release and by earliest
    end ``r_j + p_j`` and, for each candidate ``t``, how many jobs are
    released before ``t`` and how many end by ``t``. These depend on the
    releases and run times only, so the dual-feasible functions (one demand
    vector each) share one plan: each then costs a few prefix sums.
    """

    releases: np.ndarray
    durations: np.ndarray
    by_release: np.ndarray
    by_end: np.ndarray
    ends_sorted: np.ndarray
    ts: np.ndarray
    """The candidates ``{0} ∪ {r_j}``, sorted, without repeats."""
    released: np.ndarray
    """Jobs released before each candidate (``bisect_left``)."""
    ended: np.ndarray
    """Jobs whose earliest end is at or before each candidate (``bisect_right``)."""

    @classmethod
    def of(cls, releases: np.ndarray, durations: np.ndarray) -> _EnergyPlan:
        releases = np.asarray(releases, dtype=np.int64)
        durations = np.asarray(durations, dtype=np.int64)
        ends = releases + durations  # < 2**54: the core caps times at 2**53
        by_release = np.argsort(releases, kind="stable")
        by_end = np.argsort(ends, kind="stable")
        ends_sorted = ends[by_end]
        ts = np.unique(np.concatenate(([0], releases)))
        return cls(
            releases,
            durations,
            by_release,
            by_end,
            ends_sorted,
            ts,
            np.searchsorted(releases[by_release], ts, side="left"),
            np.searchsorted(ends_sorted, ts, side="right"),
        )

    def makespan(self, demands: np.ndarray, capacity: _Profile) -> int:
        r"""``max_t min{T >= t : F(T) - F(t) >= E(t)}`` over ``t in {0} ∪ {r_j}``.

        ``E(t) = sum_j d_j max(0, min(p_j, r_j + p_j - t))`` is the demand
        that must be served after ``t`` (job ``j`` runs at most
        ``max(0, t - r_j)`` of its ``p_j`` seconds before ``t``). With the
        jobs sorted by release (prefix sums ``A``, ``AE``, ``AP`` of ``d_j``,
        ``d_j (r_j + p_j)``, ``d_j p_j``) and by earliest end (``B``, ``BE``
        of ``d_j``, ``d_j e_j``), ``i`` jobs released before ``t`` and ``k``
        ended by ``t``:

        .. math:: E(t) = (AP_n - AP_i) + (AE_i - t A_i) - (BE_k - t B_k)

        (the jobs released before ``t`` minus those already over). Exact
        integers: ``int64`` when every intermediate stays below
        :data:`_SAFE`, Python integers otherwise.
        """
        if len(demands) == 0:
            return 0
        demands = np.asarray(demands, dtype=np.int64)
        ends = self.releases + self.durations
        top = int(self.ends_sorted[-1]) + 1
        peak = (len(demands) + 2) * max(int(demands.max()), 1) * 2 * top
        dtype = _exact_dtype(peak + capacity.peak(top) + top)
        d: np.ndarray = demands.astype(dtype)
        ts: np.ndarray = self.ts.astype(dtype)
        d_r = d[self.by_release]
        pre_a = _prefix(d_r)
        pre_ad = _prefix(d_r * ends[self.by_release].astype(dtype))
        pre_ap = _prefix(d_r * self.durations[self.by_release].astype(dtype))
        d_e = d[self.by_end]
        end_a = _prefix(d_e)
        end_ad = _prefix(d_e * self.ends_sorted.astype(dtype))
        i, k = self.released, self.ended
        started = (pre_ad[i] - ts * pre_a[i]) - (end_ad[k] - ts * end_a[k])
        energy = (pre_ap[-1] - pre_ap[i]) + started
        return max(0, int(capacity.earliest_ends(ts, energy).max()))


def _energy_makespan(
    demands: Sequence[int] | np.ndarray,
    releases: Sequence[int] | np.ndarray,
    durations: Sequence[int] | np.ndarray,
    capacity: _Profile,
) -> int:
    r"""``max_t min{T >= t : F(T) - F(t) >= E(t)}`` over ``t in {0} ∪ {r_j}``.

    ``E(t) = sum_j d_j max(0, min(p_j, r_j + p_j - t))`` is the demand that
    must be served after ``t`` (job ``j`` runs at most ``max(0, t - r_j)`` of
    its ``p_j`` seconds before ``t``). Computed by :meth:`_EnergyPlan.makespan`
    in ``O(n log n)`` (two sorts, prefix sums, one bisection per candidate).
    """
    if len(demands) == 0:
        return 0
    plan = _EnergyPlan.of(np.asarray(releases), np.asarray(durations))
    return plan.makespan(np.asarray(demands), capacity)


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
        return ctx.plan.makespan(ctx.size, ctx.free)

    return _timed("energy", compute)


def _count_profile(ctx: _Context, count: Callable[[int], int]) -> _Profile:
    """``k(u) = count(c(u))``: how many jobs of a set fit beside the blocks."""
    return _profile(list(ctx.segments), lambda sizes: count(ctx.m - sum(sizes)))


def _count_capacity(sizes: Sequence[int] | np.ndarray) -> Callable[[int], int]:
    """How many jobs of ``sizes`` at most run together on ``free`` processors."""
    prefix = _prefix(np.sort(np.asarray(sizes, dtype=np.int64)))[1:]
    return lambda free: int(np.searchsorted(prefix, free, side="right"))


def _parallel_counts(sizes: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct sizes ``θ`` (decreasing) and, for each, ``k_θ(∞)``.

    ``k_θ(∞)`` is how many jobs of ``{j : q_j >= θ}`` fit side by side on
    the whole machine: the largest ``n`` whose ``n`` smallest sizes of that
    set sum to at most ``m``. With all sizes sorted (prefix sums ``P``) and
    ``i`` the first position of size ``>= θ``, it is the largest ``n`` with
    ``P[i + n] - P[i] <= m``: one bisection per threshold.
    """
    ordered = np.sort(sizes)
    prefix = _prefix(ordered)
    thetas = np.unique(ordered)[::-1]
    first = np.searchsorted(ordered, thetas, side="left")
    counts = np.searchsorted(prefix, prefix[first] + m, side="right") - 1 - first
    return thetas, counts


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

    Cost: ``O(n log n)`` per threshold (one :class:`_EnergyPlan` of the
    chosen jobs) and ``O(n log n)`` for all the cliques together
    (:func:`_conflict_cliques`).

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
        thetas, counts = _parallel_counts(ctx.size, ctx.m)
        for theta, parallel in zip(thetas.tolist(), counts.tolist(), strict=True):
            if parallel > max_parallel or clock.expired():
                break  # smaller thresholds only allow more parallel jobs
            chosen = np.flatnonzero(ctx.size >= theta)
            count = _count_capacity(ctx.size[chosen])
            capacity = _count_profile(ctx, count)
            best = max(best, _sequence_end(ctx, chosen, capacity))
        for value, _ in _conflict_cliques(ctx, 1, clock):
            best = max(best, value)
        return best

    return _timed("wide-jobs", compute, clock)


def _sequence_end(
    ctx: _Context, chosen: Sequence[int] | np.ndarray, capacity: _Profile | None = None
) -> int:
    """The count-energy bound of ``chosen`` (one unit per running job)."""
    chosen = np.asarray(chosen, dtype=np.int64)
    if capacity is None:
        capacity = _count_profile(ctx, _count_capacity(ctx.size[chosen]))
    if len(chosen) == 0:
        return 0
    plan = _EnergyPlan.of(ctx.release[chosen], ctx.runtime[chosen])
    return plan.makespan(np.ones(len(chosen), dtype=np.int64), capacity)


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
    14 s, against 0.3 s for scoring them all here (0.02 s vectorised);
    ``max_weight_clique`` (weights ``p_j``) does not finish in 14 minutes
    there, and on 1,000-job windows it returns the clique of largest
    ``sum p_j``, which this list holds, while another clique has the larger
    release-date bound (e.g. 847,406 against 875,526).

    Scoring each clique ``{j} ∪ K`` with :func:`_sequence_end` costs
    ``O(|K| log |K|)``; the narrow jobs of one size share ``K`` and the count
    profile, and :func:`_plus_one_scorer` gives all of them their values in
    one vectorised pass, ``O(log |K|)`` each.
    """
    m = ctx.m
    runs = np.flatnonzero(ctx.runtime > 0)
    wide = runs[2 * ctx.size[runs] > m]
    big = wide[np.argsort(ctx.size[wide], kind="stable")]  # ties in job order
    big_sizes = ctx.size[big]

    def wider(size: int) -> np.ndarray:
        return big[np.searchsorted(big_sizes, m - size, side="right") :]

    scores: list[np.ndarray] = []
    owners: list[np.ndarray] = []  # job index, -1 for the jobs wider than m/2
    if len(big) >= 2:
        scores.append(np.array([_sequence_end(ctx, big)], dtype=object))
        owners.append(np.array([-1], dtype=np.int64))
    narrow = runs[2 * ctx.size[runs] <= m]
    for size in np.unique(ctx.size[narrow]).tolist():
        if clock is not None and clock.expired():
            break
        members = wider(size)
        if len(members):
            same = narrow[ctx.size[narrow] == size]
            scores.append(_plus_one_scorer(ctx, members, size)(same).astype(object))
            owners.append(same)
    if not scores:
        return []
    value = np.concatenate(scores)
    owner = np.concatenate(owners)
    # Decreasing bound, ties by job index (-1, the wide set, first): the
    # order of sorted((-bound, job)) of a list of tuples.
    if max(abs(int(v)) for v in (value.max(), value.min())) < _SAFE:
        order = np.lexsort((owner, -value.astype(np.int64))).tolist()
    else:
        order = sorted(range(len(owner)), key=lambda x: (-value[x], owner[x]))
    if limit is not None:
        order = order[:limit]
    out = []
    for x in order:
        i = int(owner[x])
        clique = big if i < 0 else np.concatenate(([i], wider(int(ctx.size[i]))))
        out.append((int(value[x]), [int(c) for c in clique]))
    return out


def _plus_one_scorer(
    ctx: _Context, clique: np.ndarray, size: int
) -> Callable[[np.ndarray], np.ndarray]:
    r"""``js -> [_sequence_end(ctx, [j, *clique]) for j in js]`` (``q_j = size``).

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
    ``O(log |K|)``, all the jobs ``js`` in one vectorised pass.
    """
    capacity = _count_profile(ctx, _count_capacity([size, *ctx.size[clique].tolist()]))
    releases = ctx.release[clique]
    order = np.argsort(releases, kind="stable")
    r_sorted = releases[order]
    p_sorted = ctx.runtime[clique][order]
    e_sorted = np.sort(r_sorted + p_sorted)
    top = int(max(e_sorted[-1], ctx.release.max() + ctx.runtime.max())) + 1
    dtype = _exact_dtype((len(clique) + 2) * 4 * top + capacity.peak(top))
    pre_p = _prefix(p_sorted.astype(dtype))
    pre_end = _prefix((r_sorted + p_sorted).astype(dtype))
    end_sum = _prefix(e_sorted.astype(dtype))

    def left(t: np.ndarray) -> np.ndarray:
        """``E_K(t)``, as in :meth:`_EnergyPlan.makespan` with demand 1."""
        i = np.searchsorted(r_sorted, t, side="left")  # released before t
        k = np.searchsorted(e_sorted, t, side="right")  # ended by t
        return pre_p[-1] - pre_p[i] + (pre_end[i] - t * i) - (end_sum[k] - t * k)

    times: np.ndarray = np.unique(np.concatenate(([0], r_sorted))).astype(dtype)
    reach = capacity.integrals(times) + left(times)
    prefix = np.maximum.accumulate(reach)
    suffix = np.maximum.accumulate(reach[::-1])[::-1]

    def score(js: np.ndarray) -> np.ndarray:
        r = ctx.release[js].astype(dtype)
        p = ctx.runtime[js].astype(dtype)
        target = capacity.integrals(r) + left(r) + p
        a = np.searchsorted(times, r, side="right")  # times[:a] <= r
        b = np.searchsorted(times, r + p, side="left")  # times[b:] >= r + p
        before = np.where(a > 0, prefix[np.maximum(a - 1, 0)] + p, target)
        after = np.where(b < len(times), suffix[np.minimum(b, len(times) - 1)], target)
        target = np.maximum(np.maximum(target, before), after)
        return capacity.earliest_ends(np.zeros(len(js), dtype=dtype), target)

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
        sizes, where = np.unique(ctx.size, return_inverse=True)
        best = 0
        seen: set[tuple[int, bytes]] = set()
        for f in dual_feasible_functions(ctx.m, sizes.tolist()):
            if clock.expired():
                break
            # f on the distinct sizes only, spread to the jobs.
            values = np.array([f(q) for q in sizes.tolist()], dtype=np.int64)
            demands = values[where]
            key = (f.scale, demands.tobytes())
            if key in seen or not demands.any():
                continue
            seen.add(key)
            capacity = _dff_profile(ctx, f)
            best = max(best, ctx.plan.makespan(demands, capacity))
        return best

    return _timed("dff", compute, clock)


# --------------------------------------------------------------------------
# Weighted completion: fluid machinery
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class _Weights:
    """Exact weights ``w_j = num[j] / den`` with one power-of-two ``den``.

    Integer weights have ``den = 1``. A float weight is a dyadic rational
    (``Fraction(w).denominator`` is a power of two), so every weight of an
    instance shares the largest of these denominators: all the bound
    arithmetic then runs on integers, divided once at the end.
    """

    num: list[int]
    den: int
    array: np.ndarray
    """``num`` as ``int64`` when every entry is below 2**53, else ``object``."""
    floats: np.ndarray
    """``w_j`` as floats (only to sort the ratios; exact ties are resolved)."""
    ranks: dict[str, list[int]]
    """Global Smith ranks by work kind (``"area"``, ``"runtime"``), filled lazily."""

    @classmethod
    def of(cls, instance: Instance, objective: Objective) -> _Weights:
        exact = [Fraction(objective.exact_weight(j)) for j in instance.jobs]
        den = max((w.denominator for w in exact), default=1)
        num = [w.numerator * (den // w.denominator) for w in exact]
        small = all(abs(w) < 2**53 for w in num)
        return cls(
            num,
            den,
            np.array(num, dtype=np.int64 if small else object),
            np.array([float(w) for w in exact], dtype=float),
            {},
        )

    def dot(self, chosen: np.ndarray, values: np.ndarray) -> int:
        """``sum_{i in chosen} num[i] * values[i]`` exactly (``values`` per job)."""
        if len(chosen) == 0:
            return 0
        w, v = self.array[chosen], values[chosen]
        if w.dtype != object and v.dtype != object:
            top = max(abs(int(v.max())), abs(int(v.min())), 1)
            if int(np.abs(w).max()) * top * len(chosen) < _SAFE:
                return int(np.dot(w, v))
        return sum(a * b for a, b in zip(w.tolist(), v.tolist(), strict=True))

    def rank(self, kind: str, works: np.ndarray) -> list[int]:
        """Position of each job in Smith's order by ``w_j / works_j`` (cached)."""
        if kind not in self.ranks:
            self.ranks[kind] = _smith_ranks(self.num, self.floats, works)
        return self.ranks[kind]


def _smith_ranks(num: list[int], floats: np.ndarray, works: np.ndarray) -> list[int]:
    """Ranks of the jobs by non-increasing ``num_j / works_j``, ties by index.

    The order of the heap of :func:`_fluid_weighted_mean_busy` (key
    ``(-w_j / a_j, j)``), for all the jobs of the instance; a subset keeps
    their relative order. Sorted on float ratios first; runs of neighbours
    whose floats are within a relative ``1e-9`` (where float rounding could
    misorder them) are re-sorted on exact ratios. Jobs of work 0 rank
    first (they are never in the heap).
    """
    n = len(num)
    if n == 0:
        return []
    positive = works > 0
    ratio = np.where(
        positive, floats / np.where(positive, works, 1).astype(float), np.inf
    )
    order = np.lexsort((np.arange(n), -ratio))
    sorted_ratio = ratio[order]
    close = np.flatnonzero(sorted_ratio[1:] >= sorted_ratio[:-1] * (1 - 1e-9))
    if len(close):
        order = order.tolist()
        work = works.tolist()
        # Maximal runs of consecutive "close" pairs: [start, stop) in the order.
        breaks = np.flatnonzero(np.diff(close) != 1)
        starts = np.concatenate(([close[0]], close[breaks + 1]))
        stops = np.concatenate((close[breaks], [close[-1]])) + 2
        for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
            members = order[start:stop]
            first = members[0]
            w0, a0 = num[first], work[first]
            if a0 > 0 and all(num[x] * a0 == w0 * work[x] for x in members):
                members.sort()  # equal ratios: by index
            else:
                members.sort(key=lambda x: (-_exact_ratio(num[x], work[x]), x))
            order[start:stop] = members
    else:
        order = order.tolist()
    rank = [0] * n
    for position, job in enumerate(order):
        rank[job] = position
    return rank


def _exact_ratio(weight: int, work: int) -> Fraction:
    return Fraction(weight, work) if work > 0 else Fraction(2**1100)


def _work_moment(capacity: _Profile) -> tuple[Callable[[int], int] | None, int]:
    r"""``L Φ(W)`` with ``Φ(W) = ∫_0^W F^{-1}(V) dV``, and the integer ``L``.

    A resource of rate ``c(u)`` has served ``F(t)`` units of work by time
    ``t``; the unit served at "work time" ``V`` is served at the real time
    ``F^{-1}(V)``. On a segment ``[t_s, t_{s+1})`` of rate ``c_s > 0``,
    ``F^{-1}(V) = t_s + (V - F_s) / c_s``, so

    .. math:: Φ(W) = Φ(F_s) + t_s (W - F_s) + (W - F_s)^2 / (2 c_s),

    an integer once multiplied by ``L = 2 lcm(c_s)``. Segments of rate 0
    serve nothing (zero length in work time). ``None`` stands for the common
    case of one segment of rate ``c`` from time 0: ``L = 2c`` and
    ``L Φ(W) = W^2``.
    """
    if len(capacity.times) == 1:
        return None, 2 * capacity.caps[0]
    positive = [s for s, c in enumerate(capacity.caps) if c > 0]
    scale = 2 * math.lcm(*(capacity.caps[s] for s in positive))
    starts: list[int] = []
    moments: list[int] = []
    slopes: list[int] = []
    halves: list[int] = []
    moment = 0
    for k, s in enumerate(positive):
        f, t, c = capacity.cumulative[s], capacity.times[s], capacity.caps[s]
        starts.append(f)
        moments.append(moment)
        slopes.append(scale * t)
        halves.append(scale // (2 * c))
        if k + 1 < len(positive):
            width = capacity.cumulative[s + 1] - f
            moment += scale * t * width + (scale // (2 * c)) * width * width

    def phi(w: int) -> int:
        s = bisect_right(starts, w) - 1
        d = w - starts[s]
        return moments[s] + slopes[s] * d + halves[s] * d * d

    return phi, scale


def _preemptive_moments(
    releases: list[int],
    works: list[int],
    rank: list[int],
    phi: Callable[[int], int] | None,
) -> list[int]:
    """``L ∫ F^{-1}(V) dV`` over the work times serving each job.

    The largest-ratio-first fluid schedule, in work time: jobs of work
    ``works[j] > 0`` released at ``releases[j]`` (already ``F(r_j)``) on a
    resource of rate 1; at every moment the released unfinished job of
    smallest ``rank`` is served (preemptive priority). All event times are
    integers. A heap of ranks and one pass over the releases: ``O(n log n)``
    with at most ``2n`` pieces (each piece ends at a completion or at a
    release).
    """
    n = len(works)
    # Everything indexed by rank (the heap holds ranks): one lookup per step.
    job_of = [0] * n
    for j, k in enumerate(rank):
        job_of[k] = j
    remaining = [works[j] for j in job_of]
    by_release = sorted(range(n), key=releases.__getitem__)
    arrivals = [releases[j] for j in by_release] + [None]
    arrival_ranks = [rank[j] for j in by_release]
    acc = [0] * n
    heap: list[int] = []
    push, pop = heapq.heappush, heapq.heappop
    now = 0
    nxt = 0
    upcoming = arrivals[0]
    while upcoming is not None or heap:
        if not heap:
            assert upcoming is not None  # else the loop has ended
            now = max(now, upcoming)
        while upcoming is not None and upcoming <= now:
            push(heap, arrival_ranks[nxt])
            nxt += 1
            upcoming = arrivals[nxt]
        k = heap[0]
        end = now + remaining[k]
        if upcoming is not None and upcoming < end:
            end = upcoming
            remaining[k] -= end - now
        else:
            pop(heap)
        acc[k] += end * end - now * now if phi is None else phi(end) - phi(now)
        now = end
    moments = [0] * n
    for k, j in enumerate(job_of):
        moments[j] = acc[k]
    return moments


def _ratio_sum(weights: list[int], moments: list[int], works: list[int]) -> Fraction:
    """``sum_j weights[j] * moments[j] / works[j]``, exact.

    Integer parts add as integers; the remainders are grouped by their
    denominator and added in a balanced tree on ``lcm`` denominators, so
    that the exact sum of thousands of distinct fractions costs a few
    big-integer products instead of one normalisation per term.
    """
    whole = 0
    groups: dict[int, int] = {}
    for w, x, a in zip(weights, moments, works, strict=True):
        q, r = divmod(w * x, a)
        whole += q
        if r:
            groups[a] = groups.get(a, 0) + r
    pairs = [(num, den) for den, num in groups.items()]
    while len(pairs) > 1:
        merged = []
        for k in range(0, len(pairs) - 1, 2):
            (n1, d1), (n2, d2) = pairs[k], pairs[k + 1]
            d = math.lcm(d1, d2)
            merged.append((n1 * (d // d1) + n2 * (d // d2), d))
        if len(pairs) % 2:
            merged.append(pairs[-1])
        pairs = merged
    if not pairs:
        return Fraction(whole)
    return whole + Fraction(*pairs[0])


def _fluid_weighted_mean_busy(
    releases: np.ndarray,
    works: np.ndarray,
    weights: _Weights,
    jobs: np.ndarray,
    rank: list[int],
    capacity: _Profile,
) -> Fraction:
    r"""``sum_j w_j M_j`` of the preemptive largest-ratio-first fluid schedule.

    A single resource of rate ``cap(u)`` serves jobs of work ``a_j > 0``
    released at ``r_j``; at every moment all the rate goes to the released,
    unfinished job with the largest ``w_j / a_j`` (``rank``: Smith's order,
    :func:`_smith_ranks`). ``M_j = (1/a_j) ∫ u x_j(u) du`` is the mean busy
    time of job ``j`` (``x_j`` its rate). Exact arithmetic.

    Computed in *work time* ``W = F(u)`` (``F`` the integral of ``cap``):
    there the resource has rate 1, job ``j`` is released at ``F(r_j)``, and
    the same priority rule gives the same schedule (a job released while the
    rate is 0 is available when service resumes in both views). As
    ``x_j(u) du = dW`` while ``j`` is served, ``∫ u x_j(u) du`` is the
    integral of ``F^{-1}`` over the work times serving ``j``
    (:func:`_work_moment`, :func:`_preemptive_moments`); the result is
    ``sum_j (w_j / a_j)`` times it (:func:`_ratio_sum`). ``O(n log n)``
    integer operations instead of one rational operation per event.
    """
    if len(works) == 0:
        return Fraction(0)
    top = int(releases.max())
    starts = capacity.integrals(releases.astype(_exact_dtype(capacity.peak(top))))
    phi, scale = _work_moment(capacity)
    work = works.tolist()
    # The heap holds positions in Smith's order among these jobs.
    local = np.empty(len(jobs), dtype=np.int64)
    local[np.argsort(np.array(rank, dtype=np.int64)[jobs], kind="stable")] = np.arange(
        len(jobs)
    )
    moments = _preemptive_moments(starts.tolist(), work, local.tolist(), phi)
    weight = [weights.num[i] for i in jobs.tolist()]
    return _ratio_sum(weight, moments, work) / scale


def _weights(instance: Instance, objective: Objective) -> _Weights:
    """The exact weights of ``objective`` on ``instance`` (cached by identity)."""
    return _weight_cache(instance, objective)


class _WeightCache:
    """:class:`_Weights` of the last few (instance, objective) pairs, by identity."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: list[tuple[Instance, Objective, _Weights]] = []

    def __call__(self, instance: Instance, objective: Objective) -> _Weights:
        for known, obj, weights in self.entries:
            if known is instance and obj == objective:
                return weights
        weights = _Weights.of(instance, objective)
        self.entries = [(instance, objective, weights), *self.entries[: self.size - 1]]
        return weights


_weight_cache = _WeightCache()


def _finish_wct(value: Fraction, instance: Instance, objective: Objective) -> float:
    """Subtract the ``relative`` offset; round up when the objective is integral.

    ``value`` is in the unit of the weights (already divided by their
    common denominator). An integral result is an exact ``int`` (no float
    rounding beyond ``2**53``); otherwise the nearest float, which may
    exceed the exact bound by half a unit in the last place (see
    :func:`optsched.models.common.solution.best_lower_bound`).
    """
    weights = _weights(instance, objective)
    if objective.relative:
        everyone = np.arange(len(instance.jobs))
        releases = np.array([j.release for j in instance.jobs], dtype=np.int64)
        value -= Fraction(weights.dot(everyone, releases), weights.den)
    if weights.den == 1:
        return math.ceil(value)
    return float(value)


def _require_wct(objective: Objective, name: str) -> None:
    if objective.kind != "wct":
        raise ValueError(
            f"{name}: needs a weighted completion objective, got {objective.label}"
        )


def _fluid_part(
    ctx: _Context,
    weights: _Weights,
    chosen: Sequence[int] | np.ndarray,
    *,
    use_releases: bool = True,
) -> Fraction:
    """Fluid bound on ``sum_{j in chosen} w_j C_j`` on the free capacity."""
    chosen = np.asarray(chosen, dtype=np.int64)
    positive = chosen[ctx.runtime[chosen] > 0]
    zero = chosen[ctx.runtime[chosen] == 0]
    mean_busy = _fluid_weighted_mean_busy(
        ctx.release[positive] if use_releases else np.zeros(len(positive), np.int64),
        ctx.area[positive],
        weights,
        positive,
        weights.rank("area", ctx.area),
        ctx.free,
    )
    half_runs = Fraction(weights.dot(positive, ctx.runtime), 2 * weights.den)
    zero_jobs = Fraction(weights.dot(zero, ctx.release), weights.den)
    return mean_busy / weights.den + half_runs + zero_jobs


def _height_part(
    ctx: _Context, weights: _Weights, chosen: Sequence[int] | np.ndarray
) -> Fraction:
    chosen = np.asarray(chosen, dtype=np.int64)
    return Fraction(weights.dot(chosen, ctx.release + ctx.runtime), weights.den)


def _every_job_bound(
    method: str,
    part: Callable[[_Context, _Weights, np.ndarray], Fraction],
    instance: Instance,
    objective: Objective,
) -> Bound:
    """The ``wct`` bound ``method`` of a ``part`` over every job, timed."""
    _require_wct(objective, f"{method} bound")

    def compute() -> float:
        ctx = _context(instance)
        value = part(ctx, _weights(instance, objective), np.arange(len(ctx.jobs)))
        return _finish_wct(value, instance, objective)

    return _timed(method, compute)


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
    return _every_job_bound("height", _height_part, instance, objective)


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
        everyone = np.arange(len(ctx.jobs))
        value = _fluid_part(ctx, weights, everyone, use_releases=False)
        if not strengthened:
            # ½ sum_j w_j p_j (m - q_j) / m, exact.
            value -= Fraction(
                weights.dot(everyone, _product(ctx.runtime, ctx.m - ctx.size)),
                2 * ctx.m * weights.den,
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
    return _every_job_bound("fluid", _fluid_part, instance, objective)


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
        everyone = np.arange(len(ctx.jobs))
        best: Fraction | None = None
        parts = [
            np.flatnonzero(ctx.size >= theta)
            for theta in _widest_thresholds(ctx, max_parallel)
        ]
        parts += [
            np.array(clique, dtype=np.int64)
            for _, clique in _conflict_cliques(ctx, cliques, clock)
        ]
        for wide in parts:
            if clock.expired():
                break
            outside = np.ones(len(ctx.jobs), dtype=bool)
            outside[wide] = False
            narrow = everyone[outside]
            count = _count_capacity(ctx.size[wide])
            value = _wide_part(ctx, weights, wide, count) + max(
                _fluid_part(ctx, weights, narrow), _height_part(ctx, weights, narrow)
            )
            best = value if best is None else max(best, value)
        if best is None:  # every job fits more than max_parallel times
            best = max(
                _fluid_part(ctx, weights, everyone),
                _height_part(ctx, weights, everyone),
            )
        return _finish_wct(best, instance, objective)

    return _timed("wide-jobs", compute, clock)


def _widest_thresholds(ctx: _Context, max_parallel: int) -> list[int]:
    """For ``k = 1..max_parallel``, the smallest size threshold whose jobs run
    at most ``k`` at a time on the whole machine (the largest such set)."""
    out: list[int] = []
    thetas, counts = _parallel_counts(ctx.size, ctx.m)  # thresholds decreasing
    for k in range(1, max_parallel + 1):
        fitting = thetas[counts <= k]
        if len(fitting) and int(fitting[-1]) not in out:
            out.append(int(fitting[-1]))
    return out


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * b`` elementwise, exact (Python integers when it may overflow)."""
    top = max(abs(int(a.max(initial=0))), abs(int(a.min(initial=0))), 1) * max(
        abs(int(b.max(initial=0))), abs(int(b.min(initial=0))), 1
    )
    dtype = _exact_dtype(top)
    return a.astype(dtype) * b.astype(dtype)


def _wide_part(
    ctx: _Context,
    weights: _Weights,
    wide: np.ndarray,
    count: Callable[[int], int],
) -> Fraction:
    positive = wide[ctx.runtime[wide] > 0]
    zero = wide[ctx.runtime[wide] == 0]
    machines = _count_profile(ctx, count)
    mean_busy = _fluid_weighted_mean_busy(
        ctx.release[positive],
        ctx.runtime[positive],
        weights,
        positive,
        weights.rank("runtime", ctx.runtime),
        machines,
    )
    one_machine = (
        mean_busy / weights.den
        + Fraction(weights.dot(positive, ctx.runtime), 2 * weights.den)
        + Fraction(weights.dot(zero, ctx.release), weights.den)
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
        An instance with a feature whose row of the family table
        (:data:`optsched.families.FEATURES`) names bounds of its own gets
        those of the first such feature: site calendars and chains
        :func:`optsched.models.site.bounds.bounds_within`, speeds and SMP
        nodes :func:`optsched.models.topology.bounds.topology_lower_bounds`,
        moldable and malleable jobs
        :func:`optsched.models.moldable.bounds.moldable_lower_bounds` (the
        ones here read each job's requested mode).
        The first (cheapest) bound is always computed, so that a result has
        a bound; a later one is skipped when the deadline has passed, and
        the long ones stop at the deadline with the best value of the cases
        examined (:attr:`Bound.partial`). ``notes`` has one line per bound
        skipped or cut short.
    """
    objective = Objective.parse(objective)
    row = first_with("bounds", instance)
    if row is not None:
        # The first feature with bounds of its own (the family table).
        assert row.bounds is not None
        return load(row.bounds)(instance, objective, deadline)
    if objective.kind == "cmax":
        table: Sequence[Callable[..., Bound]] = MAKESPAN_BOUNDS
        args: tuple[object, ...] = (instance,)
    else:
        table, args = WCT_BOUNDS, (instance, objective)
    return bounds_in_turn(table, args, deadline, _METHODS, _STOPPABLE)


def bounds_in_turn(
    table: Sequence[Callable[..., Bound]],
    args: tuple[object, ...],
    deadline: float | None,
    names: Mapping[Callable[..., Bound], str],
    stoppable: Collection[Callable[..., Bound]],
) -> tuple[list[Bound], list[str]]:
    """Compute the bounds of ``table`` in order on ``args`` until ``deadline``.

    The first is always computed; a later one is skipped once the deadline
    has passed (a note names it, by ``names``), and those in ``stoppable``
    get the deadline and may stop early (a note says they were cut short).
    """
    bounds: list[Bound] = []
    notes: list[str] = []
    for k, bound in enumerate(table):
        if k > 0 and deadline is not None and time.monotonic() >= deadline:
            notes.append(f"{names[bound]}: skipped (time limit)")
            continue
        extra = {"deadline": deadline} if bound in stoppable else {}
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
