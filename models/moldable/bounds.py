r"""Lower bounds for moldable and malleable jobs (makespan and weighted completion).

A moldable job ``j`` runs in one of its modes ``k``: ``p_{jk}`` processors
for ``T_{jk}`` seconds (work ``p_{jk} T_{jk}``), chosen by the scheduler
before it starts. A malleable job may change mode between pieces: a piece
of ``d`` seconds on mode ``k`` does the fraction ``d / T_{jk}`` of it. A
rigid job of a mixed instance is a job with one mode. Every bound here is
valid for both kinds, so for moldable, malleable and mixed instances, and
for both allocations (contiguity only removes schedules):

=================  ============  ===========================================
method             objective     function
=================  ============  ===========================================
``release``        ``cmax``      :func:`release_bound`, ``max_j E_j``
``area``           ``cmax``      :func:`area_bound`, cheapest works
``energy``         ``cmax``      :func:`energy_bound` (release dates)
``height``         ``wct``       :func:`height_bound`, ``sum_j w_j E_j``
``squashed-area``  ``wct``       :func:`squashed_area_bound` (cheapest works)
``fluid``          ``wct``       :func:`fluid_bound` (cheapest works, releases)
=================  ============  ===========================================

Notation
--------
``W_j = min_k p_{jk} T_{jk}`` (cheapest work), ``T^min_j = min_k T_{jk}``
(shortest run), ``P_j = max_k p_{jk}`` (widest mode); ``c(u) = m - B(u)``
the processors the busy blocks leave free and ``F(T) = int_0^T c(u) du``
(as in :mod:`optsched.models.rigid.bounds`). ``r'_{jk}`` is the earliest start of
job ``j`` alone in mode ``k`` beside the blocks
(:func:`~optsched.models.rigid.bounds.earliest_start_alone` of ``job.rigid(mode)``):
a moldable job run in mode ``k`` starts at or after it. A malleable job may
run in pieces around the blocks, so only its release ``r_j`` is used for it.
``E_j`` is the earliest completion: ``min_k (r'_{jk} + T_{jk})`` for a
moldable job, ``r_j + T^min_j`` for a malleable one (its pieces advance it by
at most ``1 / T^min_j`` per second, so they last at least ``T^min_j`` seconds
after ``r_j``).

Work: every mode of a moldable job does at least ``W_j`` processor-seconds.
A malleable job's piece on mode ``k`` that does the fraction ``f`` of it
holds ``p_{jk} f T_{jk} >= f W_j`` processor-seconds besides its switch, and
the fractions sum to at least 1: it too does at least ``W_j``.

Integrality: makespans are integers and are rounded up; weighted sums are
rounded up only when every weight is an integer (exact arithmetic, as in
:mod:`optsched.models.rigid.bounds`, whose helpers these bounds share: the
capacity profile, the exact weights and the fluid schedule).

The rigid bounds of :mod:`optsched.models.rigid.bounds` read the *requested* mode
of each job and are not valid here: a wider mode may finish a job sooner.
:func:`optsched.models.rigid.bounds.lower_bounds_within` dispatches to
:func:`moldable_lower_bounds` for instances with modes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from optsched.instance import Instance, Job, Mode
from optsched.models.rigid.bounds import (
    _block_segments,
    _Clock,
    _earliest_alone,
    _exact_dtype,
    _finish_wct,
    _fluid_weighted_mean_busy,
    _Profile,
    _profile,
    _require_wct,
    _segment_loads,
    _timed,
    _weights,
    bounds_in_turn,
)
from optsched.objective import Objective
from optsched.result import Bound

__all__ = [
    "area_bound",
    "energy_bound",
    "fluid_bound",
    "height_bound",
    "job_modes",
    "moldable_lower_bounds",
    "release_bound",
    "require_rigid",
    "squashed_area_bound",
]

ENERGY_TIMES = 512
"""Most candidate instants ``t`` the energy bound tries (a subset of the
releases keeps it valid: it is a maximum over ``t``)."""

ENERGY_CELLS = 20_000_000
"""Most (instant, job mode) pairs the energy bound evaluates (see
:func:`_instants`)."""


def job_modes(job: Job) -> tuple[Mode, ...]:
    """The modes of ``job``; a rigid job's only mode is its size and run time."""
    if job.modes:
        return job.modes
    return (Mode(job.size, job.runtime, job.estimate),)


# --------------------------------------------------------------------------
# Per-job data (computed once per instance)
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class _Data:
    """Per job: cheapest work, shortest run, widest mode, earliest starts."""

    m: int
    free: _Profile
    works: list[int]
    """``W_j``."""
    shortest: list[int]
    """``T^min_j``."""
    widest: list[int]
    """``P_j``."""
    starts: list[list[int]]
    """``r'_{jk}`` per mode (moldable, rigid), ``[r_j, ...]`` (malleable)."""
    completions: list[int]
    """``E_j``."""


_LAST: list[tuple[Instance, _Data]] = []
"""The data of the last instance (found by identity: every bound of one
call receives the same object, and hashing an instance hashes all its jobs)."""


def _data(instance: Instance) -> _Data:
    for known, data in _LAST:
        if known is instance:
            return data
    data = _build_data(instance)
    _LAST[:] = [(instance, data)]
    return data


def _build_data(instance: Instance) -> _Data:
    machine = instance.machine
    m = machine.processors
    segments = _block_segments(machine)
    blocks = [b for b in machine.unavailable if b.end > b.start]
    loads = _segment_loads(segments)
    works, shortest, widest, starts, completions = [], [], [], [], []
    for job in instance.jobs:
        modes = job_modes(job)
        works.append(min(mode.work for mode in modes))
        shortest.append(min(mode.runtime for mode in modes))
        widest.append(max(mode.processors for mode in modes))
        if job.malleable or not blocks or job.release >= segments[-1][0]:
            # Malleable: module notes. Otherwise no block lies ahead: every
            # mode can start at the release (and building one rigid job per
            # mode costs seconds on windows with millions of modes).
            mode_starts = [job.release] * len(modes)
        else:
            mode_starts = [
                _earliest_alone(job.rigid(mode), machine, blocks, segments, loads)
                for mode in modes
            ]
        if job.malleable:
            completions.append(job.release + shortest[-1])
        else:
            completions.append(
                min(
                    s + mode.runtime for s, mode in zip(mode_starts, modes, strict=True)
                )
            )
        starts.append(mode_starts)
    free = _profile(segments, lambda sizes: m - sum(sizes))
    return _Data(m, free, works, shortest, widest, starts, completions)


# --------------------------------------------------------------------------
# Makespan
# --------------------------------------------------------------------------


def release_bound(instance: Instance) -> Bound:
    r"""``C_max >= max_j E_j`` (earliest completion over the modes).

    .. math:: C_{\max} \ge \max_j \min_k (r'_{jk} + T_{jk})
              \quad(\text{malleable } j: r_j + T^{\min}_j)

    Job ``j`` run in mode ``k`` starts at or after ``r'_{jk}`` and lasts
    ``T_{jk}``; the makespan is at least its completion, whichever mode the
    schedule picks. The moldable form of the rigid ``max_j (r_j + p_j)``
    (e.g. K. Jansen, L. Porkolab, "Linear-time approximation schemes for
    scheduling malleable parallel tasks", Algorithmica 32, 2002, where
    ``max_j min_k T_{jk}`` bounds the optimum).
    """

    def compute() -> float:
        return max(_data(instance).completions, default=0)

    return _timed("release", compute)


def area_bound(instance: Instance) -> Bound:
    r"""Area bound with each job's cheapest work.

    .. math:: C_{\max} \ge \min\{T \in \mathbb{Z} :
              F(T) \ge \textstyle\sum_j W_j\}

    (``ceil(sum_j W_j / m)`` without busy blocks). Every job does at least
    ``W_j`` processor-seconds (module notes) inside ``[0, C_max)`` on the
    processors the blocks leave free. ``C_max`` is an integer. Reference:
    the work bound of moldable scheduling, e.g. J. Turek, J. L. Wolf,
    P. S. Yu, "Approximate algorithms for scheduling parallelizable tasks",
    SPAA 1992; G. Mounié, C. Rapine, D. Trystram, "A 3/2-approximation
    algorithm for scheduling independent monotonic malleable tasks", SIAM J.
    Computing 37(2), 2007.
    """

    def compute() -> float:
        data = _data(instance)
        return data.free.earliest_end(0, sum(data.works))

    return _timed("area", compute)


def energy_bound(instance: Instance, *, deadline: float | None = None) -> Bound:
    r"""Release-date energy bound with the cheapest remaining work.

    For an instant ``t``, a moldable job run in mode ``k`` starts at
    ``S_j >= r'_{jk}`` and holds ``p_{jk}`` processors on
    ``[S_j, S_j + T_{jk})``, so it still needs
    ``p_{jk} max(0, min(T_{jk}, r'_{jk} + T_{jk} - t))`` processor-seconds
    after ``t``; a malleable job does at most the fraction ``(t - r_j) /
    T^min_j`` of itself before ``t`` and needs at least
    ``floor(W_j max(0, min(T^min_j, r_j + T^min_j - t)) / T^min_j)`` after
    (the remaining fraction costs at least its share of ``W_j``; rounded
    down to an integer). With ``e_j(t)`` the least of these over the modes,

    .. math:: C_{\max} \ge \max_t \min\{T \ge t : F(T) - F(t) \ge
              \textstyle\sum_j e_j(t)\}

    over the instants ``t`` with ``sum_j e_j(t) > 0`` (then some work is
    done in ``[t, C_max)``, so ``C_max`` is at least that ``T``), at most
    :data:`ENERGY_TIMES` of them (fewer with millions of modes, see
    :func:`_instants`) among ``0`` and the ``r'_{jk}`` (any subset is
    valid: each ``t`` gives a bound). Unlike the rigid bound, ``t`` alone
    is no bound: ``t = r'_{jk}`` for a mode the schedule need not pick. At
    ``t = 0`` this is :func:`area_bound`. Reference: the energetic reasoning
    of :func:`optsched.models.rigid.bounds.energy_bound` (Baptiste, Le Pape,
    Nuijten 2001), with the work of each job minimised over its modes.

    With a ``deadline`` (``time.monotonic``) the instants not yet tried are
    left out (:attr:`Bound.partial`).
    """
    clock = _Clock(deadline)

    def compute() -> float:
        return _energy(instance, _data(instance), clock)

    return _timed("energy", compute, clock)


def _energy(instance: Instance, data: _Data, clock: _Clock) -> int:
    # One row per (job, mode): demand, run time, earliest start; malleable
    # jobs one row in "fraction" form (work W over T^min seconds).
    demand: list[int] = []
    length: list[int] = []
    first: list[int] = []
    owner: list[int] = []
    malleable = np.zeros(len(instance.jobs), dtype=bool)
    for j, job in enumerate(instance.jobs):
        if job.malleable:
            malleable[j] = True
            demand.append(data.works[j])
            length.append(data.shortest[j])
            first.append(job.release)
            owner.append(j)
            continue
        for mode, start in zip(job_modes(job), data.starts[j], strict=True):
            demand.append(mode.processors)
            length.append(mode.runtime)
            first.append(start)
            owner.append(j)
    if not demand:
        return 0
    top = max(first) + max(length) + 1
    dtype = _exact_dtype(max(demand) * top * (len(demand) + 1))
    d: np.ndarray = np.array(demand, dtype=dtype)
    p: np.ndarray = np.array(length, dtype=dtype)
    r: np.ndarray = np.array(first, dtype=dtype)
    rows = np.array(owner, dtype=np.int64)
    fraction = malleable[rows]
    # Rows are grouped by job in order: the first row of each job.
    heads = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    ts = _instants(sorted(set(first) | {0}), len(demand))
    best = 0
    for t in ts:
        if clock.expired():
            break
        left = np.maximum(np.minimum(p, r + p - t), 0)
        need = np.where(fraction, (d * left) // np.where(p > 0, p, 1), d * left)
        least = np.minimum.reduceat(need, heads)
        # int64 sums are safe: the dtype was chosen for (rows + 1) * peak.
        energy = int(least.sum()) if least.dtype != object else sum(least.tolist())
        if energy > 0:
            # Not t itself when nothing is left: unlike a rigid job, a job
            # whose slowest start is t may pick a mode that ends before t.
            best = max(best, data.free.earliest_end(t, energy))
    return best


def _instants(times: Sequence[int], rows: int) -> list[int]:
    """Some of ``times``, spread evenly (0 kept): at most :data:`ENERGY_TIMES`,
    and at most :data:`ENERGY_CELLS` ``/ rows`` (but 16) with ``rows``
    (job, mode) pairs, so that millions of modes stay within seconds."""
    most = max(16, min(ENERGY_TIMES, ENERGY_CELLS // max(rows, 1)))
    if len(times) <= most:
        return list(times)
    picks = np.linspace(0, len(times) - 1, most).round().astype(int)
    return [times[i] for i in sorted(set(picks.tolist()))]


# --------------------------------------------------------------------------
# Weighted completion
# --------------------------------------------------------------------------


def height_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Height bound: ``sum_j w_j C_j >= sum_j w_j E_j``.

    Every job completes at or after its earliest completion ``E_j`` (module
    notes), whichever modes it runs in. With ``relative`` the constant
    ``sum_j w_j r_j`` is subtracted. The moldable form of the folklore
    height bound (U. Schwiegelshohn et al., "Smart SMART bounds for weighted
    response time scheduling", SIAM J. Computing 28(1), 1998).
    """
    _require_wct(objective, "height bound")

    def compute() -> float:
        weights = _weights(instance, objective)
        value = Fraction(
            sum(
                w * e
                for w, e in zip(weights.num, _data(instance).completions, strict=True)
            ),
            weights.den,
        )
        return _finish_wct(value, instance, objective)

    return _timed("height", compute)


def squashed_area_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Squashed-area bound with each job's cheapest work (releases ignored).

    :func:`fluid_bound` with every release taken as 0: Smith's order by
    ``w_j / W_j`` of the jobs squashed to the full free capacity, plus the
    half-run terms ``h_j``,

    .. math:: \sum_j w_j C_j \ge \sum_j w_j (M^{sq}_j + h_j)

    (without blocks ``M^{sq}_j = C^{sq}_j - W_j / (2m)``, with ``C^{sq}_j``
    the squashed completion times of Schwiegelshohn et al. 1998 on works
    ``W_j``). Dropping releases only enlarges the set of fluid schedules the
    proof of :func:`fluid_bound` minimises over. Reference: U.
    Schwiegelshohn, W. Ludwig, J. L. Wolf, J. Turek, P. S. Yu, "Smart SMART
    bounds for weighted response time scheduling", SIAM J. Computing 28(1),
    1998 (moldable jobs with the minimum work, as in their malleable case).
    """
    _require_wct(objective, "squashed-area bound")

    def compute() -> float:
        return _finish_wct(
            _fluid(instance, objective, releases=False), instance, objective
        )

    return _timed("squashed-area", compute)


def fluid_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Fluid bound with cheapest works and release dates.

    One resource of rate ``c(u)`` serves ``W_j`` units of each job with
    ``W_j > 0``, available from ``ρ_j = min_k r'_{jk}`` (``r_j`` for a
    malleable job), always to the available unfinished job with the largest
    ``w_j / W_j``; ``M^F_j`` is the mean busy time of job ``j`` in this
    greedy schedule (computed exactly by
    :func:`optsched.models.rigid.bounds._fluid_weighted_mean_busy`). Then

    .. math:: \sum_j w_j C_j \ge \sum_{W_j > 0} w_j (M^F_j + h_j)
              + \sum_{W_j = 0} w_j E_j,

    ``h_j = T^min_j / 2`` for a moldable (or rigid) job and
    ``h_j = W_j / (2 P_j)`` for a malleable one.

    Proof. In a feasible schedule job ``j`` occupies ``x_j(u)`` processors at
    time ``u`` (``p_{jk}`` on ``[S_j, C_j)`` for a moldable job in mode
    ``k``), at least ``W_j`` processor-seconds in all (module notes), none
    before ``ρ_j``, with ``sum_j x_j(u) <= c(u)``. Keep only the *first*
    ``W_j`` units each job receives: a fluid schedule of works ``W_j`` with
    releases ``ρ_j`` within the capacity, whose mean busy times ``M'_j``
    satisfy ``sum_j w_j M'_j >= sum_j w_j M^F_j`` because the greedy rule
    minimises ``sum_j (w_j / W_j) ∫ u x_j(u) du`` over all such fluid
    schedules (exchange argument of :func:`optsched.models.rigid.bounds.
    fluid_bound`; Goemans 1997). The first ``W_j`` units end by ``C_j``:

    * moldable, mode ``k``: they are served at the constant rate ``p_{jk}``
      from ``S_j``, so ``M'_j = S_j + W_j / (2 p_{jk}) <= S_j + T_{jk}/2``
      and ``C_j = S_j + T_{jk} >= M'_j + T_{jk}/2 >= M'_j + T^min_j / 2``;
    * malleable: served at rate at most ``P_j``, they fill at least
      ``W_j / P_j`` seconds before ``C_j``, so ``C_j >= M'_j + W_j/(2 P_j)``.

    A job with ``W_j = 0`` completes at ``E_j`` at the earliest. With
    ``relative`` the constant ``sum_j w_j r_j`` is subtracted. References:
    M. X. Goemans, "Improved approximation algorithms for scheduling with
    release dates", SODA 1997; Schwiegelshohn et al. 1998 (see
    :func:`squashed_area_bound`).
    """
    _require_wct(objective, "fluid bound")

    def compute() -> float:
        return _finish_wct(
            _fluid(instance, objective, releases=True), instance, objective
        )

    return _timed("fluid", compute)


def _fluid(instance: Instance, objective: Objective, *, releases: bool) -> Fraction:
    """``sum_j w_j (M^F_j + h_j)`` (+ the zero-work jobs), exact, in weight units."""
    data = _data(instance)
    weights = _weights(instance, objective)
    jobs = instance.jobs
    positive = [j for j in range(len(jobs)) if data.works[j] > 0]
    zero = [j for j in range(len(jobs)) if data.works[j] == 0]
    halves = Fraction(0)
    for j in positive:
        if jobs[j].malleable:
            halves += Fraction(weights.num[j] * data.works[j], 2 * data.widest[j])
        else:
            halves += Fraction(weights.num[j] * data.shortest[j], 2)
    zero_jobs = sum(weights.num[j] * data.completions[j] for j in zero)
    value = (halves + zero_jobs) / weights.den
    if not positive:
        return value
    works_all: np.ndarray = np.array(data.works, dtype=_exact_dtype(max(data.works)))
    chosen = np.array(positive, dtype=np.int64)
    starts = [min(s) if releases else 0 for s in data.starts]
    # Cached under its own key: the rigid bounds cache the ranks of the
    # requested areas as "area" on the same weights object.
    rank = weights.rank("moldable-work", works_all)
    mean_busy = _fluid_weighted_mean_busy(
        np.array([starts[j] for j in positive], dtype=np.int64),
        works_all[chosen],
        weights,
        chosen,
        rank,
        data.free,
    )
    return value + mean_busy / weights.den


# --------------------------------------------------------------------------
# All bounds
# --------------------------------------------------------------------------

MAKESPAN_BOUNDS: tuple[Callable[..., Bound], ...] = (
    release_bound,
    area_bound,
    energy_bound,
)
"""Makespan bounds for moldable and malleable jobs, cheapest first."""

WCT_BOUNDS: tuple[Callable[..., Bound], ...] = (
    height_bound,
    squashed_area_bound,
    fluid_bound,
)
"""Weighted completion bounds for moldable and malleable jobs, cheapest first."""

_METHODS: dict[Callable[..., Bound], str] = {
    release_bound: "release",
    area_bound: "area",
    energy_bound: "energy",
    height_bound: "height",
    squashed_area_bound: "squashed-area",
    fluid_bound: "fluid",
}


def moldable_lower_bounds(
    instance: Instance, objective: Objective | str, deadline: float | None = None
) -> tuple[list[Bound], list[str]]:
    """Every moldable bound of ``objective``, within ``deadline``.

    Same contract as :func:`optsched.models.rigid.bounds.lower_bounds_within`:
    the first (cheapest) bound is always computed; a later one is skipped
    once ``deadline`` (``time.monotonic``) has passed, and the energy bound
    stops there with its best value so far. ``notes`` has one line per bound
    skipped or cut short.
    """
    objective = Objective.parse(objective)
    table = MAKESPAN_BOUNDS if objective.kind == "cmax" else WCT_BOUNDS
    args: tuple[object, ...] = (
        (instance,) if objective.kind == "cmax" else (instance, objective)
    )
    return bounds_in_turn(table, args, deadline, _METHODS, (energy_bound,))


def require_rigid(backend: str, instance: Instance) -> None:
    """Refuse ``instance`` in a back-end that schedules rigid jobs only.

    Raises
    ------
    ValueError
        When some job has modes (moldable or malleable), naming how many and
        the back-ends that handle them.
    """
    count = sum(1 for job in instance.jobs if job.modes)
    if count:
        kind = "malleable" if instance.malleable else "moldable"
        raise ValueError(
            f"back-end {backend} schedules rigid jobs only; the instance has "
            f"{count} {kind} job{'s' if count != 1 else ''}: use cpsat or bounds-only"
        )
