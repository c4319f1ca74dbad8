r"""Offline optimum over a window of co-reservation requests and local jobs.

The offline problem knows every request of a window and every local job
with its actual run time, and decides which requests to accept, when each
accepted one starts and on which clusters its parts run, and when each
local job starts (issue 12; seed002.md §8.7 "offline batch optimum").

Model
-----
Clusters ``c`` with ``m_c`` processors, fixed busy blocks ``(a, b, q)``
(running jobs, granted reservations) and local jobs ``j`` (release
``r_j``, size ``q_j``, run time ``p_j``, rigid, non-preemptive, on their own
cluster only). Requests ``i`` with window ``[es_i, ls_i]`` (``ls_i =
deadline_i - d_i``), duration ``d_i`` and parts ``q_{i1}, ..., q_{in_i}``.
All times are integer seconds. Variables:

.. math::

    a_i \in \{0,1\}\ \text{(accepted)},\qquad S_i \in [es_i, ls_i],\qquad
    x_{ipc} \in \{0,1\}\ (m_c \ge q_{ip}),\qquad S_j \in [r_j, T_c - p_j]

    \sum_c x_{ipc} = a_i\ \ \forall i,p,\qquad
    \sum_p x_{ipc} \le 1\ \ \forall i,c\ \text{(distinct clusters)}

    \mathrm{Cumulative}_c\bigl(\{([a,b), q)\}_{busy}
      \cup \{([S_j, S_j + p_j), q_j)\}_{j \in c}
      \cup \{([S_i, S_i + d_i), q_{ip})\ \text{present iff}\ x_{ipc}\},\ m_c\bigr)

one optional interval per (request, part, cluster), all parts of a request
sharing its start variable (cumulative scheduling with optional intervals:
Baptiste, Le Pape, Nuijten, *Constraint-Based Scheduling*, Kluwer 2001;
Laborie, Rogerie, Shaw, Vilím, "IBM ILOG CP Optimizer for scheduling",
Constraints 23, 2018). Identical parts of a request take clusters in
increasing order, identical jobs of a cluster (same release, size, run time)
start in id order: both only relabel a solution, so an optimum survives.

Horizon
-------
``T_c = max(busy ends, request deadlines, job releases of c) + sum_{j in c} p_j``.
After ``T0_c = T_c - sum p_j`` only local jobs occupy ``c`` (busy blocks and
every part have ended, every job is released), so running the jobs of ``c``
one after another from ``T0_c`` is feasible whatever was accepted: the
horizon never makes a set of requests infeasible. It also cuts no optimum
of the wait terms: in a schedule minimising the total wait for fixed
reservations, ``[T0_c, \max_j C_j)`` has no idle instant (otherwise the
first job starting after the idle instant ``t`` could start at ``S_j - 1 \ge
t \ge r_j``, where nothing runs: a smaller wait), so every job ends by
``T0_c + \sum p_j``.

Objectives
----------
``"accepted"``
    :math:`\max \sum_i w_i a_i` (``w_i = 1`` or ``request_weight(i)``,
    positive integers). CP-SAT's best bound, floored, is a valid upper
    bound on the weighted count (:attr:`OfflineResult.accepted_bound`), to
    which the online algorithms' acceptance is compared. A second solve
    fixes :math:`\sum_i w_i a_i \ge` the count found and minimises the
    local jobs' total wait :math:`\sum_j (S_j - r_j)`, so that the schedule
    is sensible (``params["wait_status"]``; the first solve gets 95 % of the
    time limit unless it proves its count sooner).
``"weighted"``
    .. math::

        F = \sum_{i\ accepted} \Bigl(k\,\frac{cost_i}{\overline{cost}_i}
            + s\,\frac{S_i - es_i}{ls_i - es_i}\Bigr)
          + \lambda\,\frac{\sum_j (S_j - r_j)}{3600\,n}
          + P\,\#\text{rejected}

    ``cost_i`` is the sampled cost (Meltzer 2005, §4.7.3, Listing 7:
    :meth:`Tariff.cost` with ``rule="sampled"``), ``\overline{cost}_i =
    \sum_p q_{ip} \max_{c: m_c \ge q_{ip}} \max_{S} \mathrm{sampled\_sum}_c(S,
    d_i)`` the most a request could cost, so both request terms lie in
    ``[0, 1]`` like the normalised terms of Meltzer's Eq. (2) (a term is 0
    when its denominator is 0). The local term is ``\lambda`` times the
    mean wait of the ``n`` local jobs in hours. ``P`` (``reject_penalty``,
    default ``k + s + 1``) is the price of a rejection, more than an
    accepted request can cost (not a lexicographic count: with ``\lambda >
    0`` rejecting a request may pay, the trade-off this objective exists
    for).

    The sampled per-CPU cost depends on the start only through its hour
    ``H_i = \lfloor S_i / 3600 \rfloor``: ``v_{ic} =
    \mathrm{Element}(H_i, [K\,\mathrm{sampled\_sum}_c(3600 h, d_i)]_h)``
    with ``K`` the tariffs' :func:`common_scale`, and ``y_{ipc} = v_{ic}``
    if ``x_{ipc}`` else 0. CP-SAT needs integer coefficients: with ``L``
    the common denominator of the coefficients, when ``L F_{max} \le
    2^{50}`` they are used exactly (``\sigma = L``), else ``\sigma =
    \lfloor 2^{50} / \lceil F_{max} \rceil \rfloor`` (``F_{max}``: every
    term at its largest) and each coefficient is rounded down. Every term is
    non-negative, so ``\lfloor \sigma c \rfloor x \le \sigma c x`` and the
    solver's bound ``B`` gives the valid lower bound ``\lceil B \rceil /
    \sigma`` on ``F``. ``F`` itself is recomputed exactly (fractions) from
    the solution (:func:`weighted_value`), never read from the solver.

The online algorithms' competitive gap (:func:`competitive_gap`): their
accepted weight against the upper bound, their ``F`` against the lower
bound, on the same window.

A greedy solution is every model's hint and fallback: requests in submit
order, each at its earliest feasible start against the busy blocks and the
parts already placed (largest part on the freest cluster), then the local
jobs list-scheduled in release order at their earliest fit. It is checked by
:func:`optsched.coreserve.offline_check.check_offline`, as is every result.
"""

from __future__ import annotations

import bisect
import itertools
import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from types import MappingProxyType
from typing import Any

from ortools.sat.python import cp_model

from optsched.coreserve.offline_check import check_offline
from optsched.coreserve.request import Choice, ClusterState, Request
from optsched.coreserve.tariff import HOUR, Tariff, common_scale, exact
from optsched.instance import Job
from optsched.models.common.solution import round_up_bound
from optsched.models.rigid.cpsat import run_search
from optsched.result import SolveStatus

BACKEND = "cpsat-coreserve-offline"
OBJECTIVES = ("accepted", "weighted")

_EXACT_LIMIT = 2**50
_SECOND_SOLVE_SHARE = 0.05
"""Share of the time limit kept for the wait-minimising second solve of
``"accepted"`` (it is skipped, keeping the greedy job schedule, when less
than half of that share is left)."""

JobKey = tuple[str, int]


@dataclass(frozen=True)
class OfflineCluster:
    """A cluster of the offline window.

    Parameters
    ----------
    name
        Unique within the window.
    processors
        CPUs of the cluster.
    tariff
        Its price table.
    busy
        Fixed ``(start, end, cpus)`` blocks over ``[start, end)``: jobs
        already running at the window start, reservations already granted
        (together within ``processors``, checked).
    jobs
        Its local jobs in the window (rigid :class:`~optsched.instance.Job`,
        actual run times, unique ids, ``size <= processors``).
    """

    name: str
    processors: int
    tariff: Tariff = field(default_factory=Tariff)
    busy: tuple[tuple[int, int, int], ...] = ()
    jobs: tuple[Job, ...] = ()

    def __post_init__(self) -> None:
        # ClusterState validates the name, processors and busy blocks.
        state = ClusterState(self.name, self.processors, self.busy, self.tariff)
        object.__setattr__(self, "busy", state.busy)
        jobs = tuple(self.jobs)
        seen: set[int] = set()
        for job in jobs:
            if not isinstance(job, Job):
                raise ValueError(f"cluster {self.name}: jobs must be Job objects")
            if job.modes:
                raise ValueError(f"cluster {self.name}: job {job.id} is not rigid")
            if job.size > self.processors:
                raise ValueError(
                    f"cluster {self.name}: job {job.id} needs {job.size} processors, "
                    f"more than the cluster's {self.processors}"
                )
            if job.id in seen:
                raise ValueError(f"cluster {self.name}: duplicate job id {job.id}")
            seen.add(job.id)
        object.__setattr__(self, "jobs", jobs)

    @property
    def state(self) -> ClusterState:
        """The cluster as a request sees it (busy blocks only)."""
        return ClusterState(self.name, self.processors, self.busy, self.tariff)


@dataclass(frozen=True)
class OfflineSolution:
    """Accepted requests (id -> :class:`Choice`) and local job starts.

    ``job_starts`` maps ``(cluster name, job id)`` to the start. The online
    algorithms' outcome over a window, put in this form, is evaluated with
    :func:`weighted_value` and checked with
    :func:`~optsched.coreserve.offline_check.check_offline` like the optimum.
    """

    accepted: Mapping[int, Choice]
    job_starts: Mapping[JobKey, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "accepted", MappingProxyType(dict(self.accepted)))
        object.__setattr__(self, "job_starts", MappingProxyType(dict(self.job_starts)))


@dataclass(frozen=True)
class OfflineResult:
    """Outcome of :func:`solve_offline`.

    Attributes
    ----------
    status
        ``OPTIMAL`` when ``value`` meets the bound (``accepted_bound`` for
        ``"accepted"``, ``lower_bound`` for ``"weighted"``), else
        ``FEASIBLE`` (a checked solution always exists).
    objective
        ``"accepted"`` or ``"weighted"``.
    accepted, job_starts
        The solution (as :class:`OfflineSolution`).
    accepted_count, accepted_weight
        Number and total weight of the accepted requests.
    value
        The objective recomputed exactly from the solution: the accepted
        weight, or ``F`` (:func:`weighted_value`).
    accepted_bound
        ``"accepted"``: a valid upper bound on the accepted weight (the
        count when unweighted); ``None`` for ``"weighted"``.
    lower_bound
        ``"weighted"``: a valid lower bound on ``F``; ``None`` for
        ``"accepted"``.
    local_wait
        ``sum_j (S_j - r_j)`` in seconds.
    runtime
        Seconds of the whole call.
    params
        Model facts: ``hint`` (the greedy's accepted count), ``scale``
        (``sigma``), ``exact_scale``, ``wait_status``, ``skipped``, ...
    """

    status: SolveStatus
    objective: str
    accepted: Mapping[int, Choice]
    job_starts: Mapping[JobKey, int]
    accepted_count: int
    accepted_weight: int
    value: Fraction
    accepted_bound: int | None
    lower_bound: Fraction | None
    local_wait: int
    runtime: float
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "accepted", MappingProxyType(dict(self.accepted)))
        object.__setattr__(self, "job_starts", MappingProxyType(dict(self.job_starts)))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def solution(self) -> OfflineSolution:
        """The accepted requests and job starts."""
        return OfflineSolution(self.accepted, self.job_starts)


# --------------------------------------------------------------------------
# Helpers shared by the greedy and the model
# --------------------------------------------------------------------------


def horizon(cluster: OfflineCluster, requests: Sequence[Request]) -> int:
    """``T_c``: every local job of ``cluster`` can end by it (module docstring)."""
    t0 = max(
        [0]
        + [b[1] for b in cluster.busy]
        + [r.deadline for r in requests]
        + [j.release for j in cluster.jobs]
    )
    return t0 + sum(j.runtime for j in cluster.jobs)


def choice_cost(
    clusters: Mapping[str, OfflineCluster],
    request: Request,
    start: int,
    names: Sequence[str],
) -> Fraction:
    """Sampled cost of ``request`` started at ``start`` on ``names`` (part order)."""
    return sum(
        (
            clusters[c].tariff.cost(start, request.duration, q, "sampled")
            for q, c in zip(request.parts, names, strict=True)
        ),
        Fraction(0),
    )


def local_wait(
    clusters: Sequence[OfflineCluster], job_starts: Mapping[JobKey, int]
) -> int:
    """``sum_j (S_j - r_j)`` over every local job."""
    return sum(job_starts[(c.name, j.id)] - j.release for c in clusters for j in c.jobs)


def max_cost(clusters: Sequence[OfflineCluster], request: Request) -> Fraction:
    r"""``\overline{cost}_i``: the most ``request`` could cost (0 if nothing fits)."""
    if request.latest_start < request.earliest_start:
        return Fraction(0)
    hours = range(request.earliest_start // HOUR, request.latest_start // HOUR + 1)
    total = Fraction(0)
    for q in request.parts:
        total += q * max(
            (
                c.tariff.sampled_sum(h * HOUR, request.duration)
                for c in clusters
                if c.processors >= q
                for h in hours
            ),
            default=Fraction(0),
        )
    return total


@dataclass(frozen=True)
class WeightedTerms:
    """Parameters of the ``"weighted"`` objective ``F`` (module docstring)."""

    k: Fraction
    s: Fraction
    local_weight: Fraction
    reject_penalty: Fraction

    @classmethod
    def of(
        cls,
        k: float | Fraction,
        s: float | Fraction,
        local_weight: float | Fraction,
        reject_penalty: float | Fraction | None,
    ) -> WeightedTerms:
        """Exact, validated terms (``reject_penalty`` defaults to ``k + s + 1``)."""
        kk, ss, lam = exact(k), exact(s), exact(local_weight)
        pen = kk + ss + 1 if reject_penalty is None else exact(reject_penalty)
        for name, v in (
            ("k", kk),
            ("s", ss),
            ("local_weight", lam),
            ("reject_penalty", pen),
        ):
            if v < 0:
                raise ValueError(f"{name} must be >= 0, got {float(v)}")
        return cls(kk, ss, lam, pen)


def weighted_value(
    clusters: Sequence[OfflineCluster],
    requests: Sequence[Request],
    solution: OfflineSolution | OfflineResult,
    *,
    k: float | Fraction = 1,
    s: float | Fraction = 0,
    local_weight: float | Fraction = 0,
    reject_penalty: float | Fraction | None = None,
) -> Fraction:
    """``F`` of a solution, exactly (costs recomputed from the tariffs)."""
    terms = WeightedTerms.of(k, s, local_weight, reject_penalty)
    by_name = {c.name: c for c in clusters}
    total = Fraction(0)
    for r in requests:
        choice = solution.accepted.get(r.id)
        if choice is None:
            total += terms.reject_penalty
            continue
        top = max_cost(clusters, r)
        if terms.k and top:
            total += (
                terms.k * choice_cost(by_name, r, choice.start, choice.clusters) / top
            )
        if terms.s and r.span:
            total += terms.s * Fraction(choice.start - r.earliest_start, r.span)
    n = sum(len(c.jobs) for c in clusters)
    if n and terms.local_weight:
        total += terms.local_weight * Fraction(
            local_wait(clusters, solution.job_starts), HOUR * n
        )
    return total


@dataclass(frozen=True)
class Gap:
    """An online outcome against the offline optimum of the same window.

    ``accepted_gap = accepted_bound - online_accepted`` (>= 0, the requests,
    or weight, that the online algorithm may have lost at most) and
    ``value_gap = online_value - lower_bound`` (>= 0 for ``F``); the
    ``offline_*`` fields are the solution found, which the online outcome
    may not reach.
    """

    online_accepted: int
    offline_accepted: int
    accepted_bound: int | None
    online_value: Fraction
    offline_value: Fraction
    lower_bound: Fraction | None

    @property
    def accepted_gap(self) -> int | None:
        """``accepted_bound - online_accepted`` (``"accepted"`` results)."""
        if self.accepted_bound is None:
            return None
        return self.accepted_bound - self.online_accepted

    @property
    def value_gap(self) -> Fraction | None:
        """``online_value - lower_bound`` (``"weighted"`` results)."""
        if self.lower_bound is None:
            return None
        return self.online_value - self.lower_bound


def competitive_gap(
    clusters: Sequence[OfflineCluster],
    requests: Sequence[Request],
    online: OfflineSolution,
    offline: OfflineResult,
    *,
    k: float | Fraction = 1,
    s: float | Fraction = 0,
    local_weight: float | Fraction = 0,
    reject_penalty: float | Fraction | None = None,
    request_weight: Callable[[Request], int] | None = None,
) -> Gap:
    """The online outcome ``online`` against ``offline`` (same window).

    ``online`` is checked first (:func:`check_offline`; ``ValueError`` with
    the problems when invalid); pass the weights ``offline`` was solved
    with. For an ``"accepted"`` result the values are accepted weights,
    for a ``"weighted"`` one they are ``F``.
    """
    problems = check_offline(clusters, requests, online)
    if problems:
        raise ValueError("online solution invalid: " + "; ".join(problems[:5]))
    weights = _weights(requests, request_weight)
    accepted = _weight_of(online, weights)
    if offline.objective == "accepted":
        online_value = Fraction(accepted)
    else:
        online_value = weighted_value(
            clusters, requests, online, k=k, s=s, local_weight=local_weight,
            reject_penalty=reject_penalty,
        )  # fmt: skip
    return Gap(
        online_accepted=accepted,
        offline_accepted=offline.accepted_weight,
        accepted_bound=offline.accepted_bound,
        online_value=online_value,
        offline_value=offline.value,
        lower_bound=offline.lower_bound,
    )


class _Profile:
    """Committed CPUs of one cluster as a step function (greedy only)."""

    def __init__(
        self, capacity: int, blocks: Sequence[tuple[int, int, int]] = ()
    ) -> None:
        self.capacity = capacity
        self._delta: dict[int, int] = defaultdict(int)
        self._steps: tuple[list[int], list[int]] | None = None
        for a, b, q in blocks:
            self.add(a, b, q)

    def add(self, start: int, end: int, cpus: int) -> None:
        if end > start and cpus:
            self._delta[start] += cpus
            self._delta[end] -= cpus
            self._steps = None

    def steps(self) -> tuple[list[int], list[int]]:
        if self._steps is None:
            times, used, run = [], [], 0
            for t in sorted(self._delta):
                run += self._delta[t]
                times.append(t)
                used.append(run)
            self._steps = (times, used)
        return self._steps

    def peak(self, start: int, end: int) -> int:
        """Most CPUs committed at one instant of ``[start, end)``."""
        times, used = self.steps()
        if end <= start:
            return 0
        i = bisect.bisect_right(times, start) - 1
        best = used[i] if i >= 0 else 0
        i += 1
        while i < len(times) and times[i] < end:
            best = max(best, used[i])
            i += 1
        return best

    def releases(self, after: int, upto: int) -> list[int]:
        """Times in ``(after, upto]`` at which the committed CPUs fall."""
        times, used = self.steps()
        return [
            t
            for i, t in enumerate(times)
            if after < t <= upto and used[i] < (used[i - 1] if i else 0)
        ]

    def earliest_fit(self, release: int, duration: int, cpus: int) -> int:
        """Earliest ``t >= release`` with ``cpus`` free over ``[t, t + duration)``."""
        if duration <= 0 or cpus <= 0:
            return release
        limit = self.capacity - cpus
        times, used = self.steps()
        t = release
        i = bisect.bisect_right(times, t) - 1
        # Walk the segments [times[i], times[i+1]) from the one holding t;
        # a segment over the limit moves the candidate to its end.
        while True:
            level = used[i] if i >= 0 else 0
            seg_end = times[i + 1] if i + 1 < len(times) else math.inf
            if level > limit:
                t = int(seg_end)  # finite: the profile ends at 0 CPUs
            elif seg_end >= t + duration:
                return t
            i += 1


def _match(parts: Sequence[int], free: Mapping[str, int]) -> tuple[str, ...] | None:
    """Clusters for ``parts`` (part order), largest part on the freest cluster."""
    order = sorted(range(len(parts)), key=lambda p: -parts[p])
    names = sorted(free, key=lambda c: (-free[c], c))
    if len(names) < len(parts):
        return None
    out: dict[int, str] = {}
    for rank, p in enumerate(order):
        if free[names[rank]] < parts[p]:
            return None
        out[p] = names[rank]
    return tuple(out[p] for p in range(len(parts)))


def greedy(
    clusters: Sequence[OfflineCluster], requests: Sequence[Request]
) -> OfflineSolution:
    """First come, first served: the hint and fallback of every model.

    Requests in submit order (then id) at their earliest feasible start
    against the busy blocks and earlier parts: the earliest start is
    ``es_i`` or an instant at which some cluster's committed CPUs fall, so
    only those are tried; at a start the parts fit iff the ``l``-th largest
    part fits the ``l``-th freest cluster. Then the local jobs of each
    cluster in release order (then id), each at its earliest fit (list
    scheduling, Graham 1969).
    """
    by_name = {c.name: c for c in clusters}
    profiles = {c.name: _Profile(c.processors, c.busy) for c in clusters}
    accepted: dict[int, Choice] = {}
    for r in sorted(requests, key=lambda r: (r.submit, r.id)):
        es, ls, d = r.earliest_start, r.latest_start, r.duration
        if ls < es:
            continue
        starts = sorted(
            {es} | {t for p in profiles.values() for t in p.releases(es, ls)}
        )
        for start in starts:
            free = {
                name: p.capacity - p.peak(start, start + d)
                for name, p in profiles.items()
            }
            names = _match(r.parts, free)
            if names is not None:
                for q, c in zip(r.parts, names, strict=True):
                    profiles[c].add(start, start + d, q)
                accepted[r.id] = Choice(
                    start, names, choice_cost(by_name, r, start, names)
                )
                break
    job_starts = _list_schedule(clusters, profiles)
    return OfflineSolution(accepted, job_starts)


def _list_schedule(
    clusters: Sequence[OfflineCluster], profiles: Mapping[str, _Profile]
) -> dict[JobKey, int]:
    """Local jobs in release order at their earliest fit (``profiles`` grow)."""
    starts: dict[JobKey, int] = {}
    for c in clusters:
        prof = profiles[c.name]
        for j in sorted(c.jobs, key=lambda j: (j.release, j.id)):
            t = prof.earliest_fit(j.release, j.runtime, j.size)
            prof.add(t, t + j.runtime, j.size)
            starts[(c.name, j.id)] = t
    return starts


def _reschedule_jobs(
    clusters: Sequence[OfflineCluster],
    accepted: Mapping[int, Choice],
    requests: Mapping[int, Request],
) -> dict[JobKey, int]:
    """Greedy job schedule around fixed accepted requests."""
    profiles = {c.name: _Profile(c.processors, c.busy) for c in clusters}
    for rid, ch in accepted.items():
        r = requests[rid]
        for q, c in zip(r.parts, ch.clusters, strict=True):
            profiles[c].add(ch.start, ch.start + r.duration, q)
    return _list_schedule(clusters, profiles)


# --------------------------------------------------------------------------
# The CP-SAT model
# --------------------------------------------------------------------------


class _Model:
    """Variables and constraints common to both objectives."""

    def __init__(
        self, clusters: Sequence[OfflineCluster], requests: Sequence[Request]
    ) -> None:
        self.clusters = clusters
        self.requests = requests
        self.model = cp_model.CpModel()
        self.accept: dict[int, Any] = {}
        self.start: dict[int, Any] = {}
        self.x: dict[tuple[int, int, str], Any] = {}
        self.job_start: dict[JobKey, Any] = {}
        self.wait: dict[JobKey, Any] = {}
        # Auxiliary variables with their value in a hinted solution, so that
        # every hint is complete.
        self.aux: list[tuple[Any, Callable[[OfflineSolution], int]]] = []
        intervals: dict[str, list[tuple[Any, int]]] = {c.name: [] for c in clusters}
        index = {c.name: n for n, c in enumerate(clusters)}
        for r in requests:
            self._add_request(r, index, intervals)
        for c in clusters:
            self._add_cluster(c, intervals[c.name])
        self.index = index

    def _add_request(
        self,
        r: Request,
        index: dict[str, int],
        intervals: dict[str, list[tuple[Any, int]]],
    ) -> None:
        """Request ``r``: accepted or not, its start, one cluster per part."""
        m = self.model
        clusters = self.clusters
        eligible = [[c.name for c in clusters if c.processors >= q] for q in r.parts]
        a = self.accept[r.id] = m.new_bool_var(f"a{r.id}")
        if r.latest_start < r.earliest_start or not _matchable(r.parts, eligible):
            m.add(a == 0)
            return
        st = self.start[r.id] = m.new_int_var(
            r.earliest_start, r.latest_start, f"S{r.id}"
        )
        per_cluster: dict[str, list[Any]] = defaultdict(list)
        for p, q in enumerate(r.parts):
            lits = []
            for cn in eligible[p]:
                x = self.x[(r.id, p, cn)] = m.new_bool_var(f"x{r.id}_{p}_{cn}")
                iv = m.new_optional_fixed_size_interval_var(
                    st, r.duration, x, f"I{r.id}_{p}_{cn}"
                )
                intervals[cn].append((iv, q))
                per_cluster[cn].append(x)
                lits.append(x)
            m.add(sum(lits) == a)
        for lits in per_cluster.values():
            if len(lits) > 1:
                m.add_at_most_one(lits)
        # Identical parts take clusters in increasing order (relabelling).
        for p in range(len(r.parts)):
            for p2 in range(p + 1, len(r.parts)):
                if r.parts[p] == r.parts[p2]:
                    m.add(
                        sum(index[cn] * self.x[(r.id, p, cn)] for cn in eligible[p])
                        < sum(index[cn] * self.x[(r.id, p2, cn)] for cn in eligible[p2])
                    ).only_enforce_if(a)
                    break  # the chain p < p2 < ... suffices

    def _add_cluster(self, c: OfflineCluster, intervals: list[tuple[Any, int]]) -> None:
        """Cluster ``c``'s local jobs and busy blocks, and its capacity."""
        m = self.model
        requests = self.requests
        top = horizon(c, requests)
        groups: dict[tuple[int, int, int], list[Any]] = defaultdict(list)
        for j in sorted(c.jobs, key=lambda j: j.id):
            v = self.job_start[(c.name, j.id)] = m.new_int_var(
                j.release, top - j.runtime, f"J{c.name}_{j.id}"
            )
            intervals.append(
                (
                    m.new_fixed_size_interval_var(v, j.runtime, f"JI{c.name}_{j.id}"),
                    j.size,
                )
            )
            groups[(j.release, j.size, j.runtime)].append(v)
            # The wait as its own variable: objectives without a
            # constant offset keep CP-SAT's bound an exact integer.
            w = self.wait[(c.name, j.id)] = m.new_int_var(
                0, top - j.runtime - j.release, f"W{c.name}_{j.id}"
            )
            m.add(w == v - j.release)
        for group in groups.values():
            for u, v in itertools.pairwise(group):
                m.add(u <= v)
        for a_, b_, q in c.busy:
            if b_ > a_ and q:
                intervals.append(
                    (
                        m.new_fixed_size_interval_var(a_, b_ - a_, f"B{c.name}_{a_}"),
                        q,
                    )
                )
        if intervals:
            m.add_cumulative(
                [iv for iv, _ in intervals],
                [q for _, q in intervals],
                c.processors,
            )

    def wait_expr(self) -> Any:
        return sum(self.wait.values())

    def add_hint(self, sol: OfflineSolution) -> None:
        m = self.model
        m.clear_hints()
        for r in self.requests:
            ch = sol.accepted.get(r.id)
            m.add_hint(self.accept[r.id], ch is not None)
            if r.id not in self.start:
                continue
            m.add_hint(self.start[r.id], ch.start if ch else r.earliest_start)
            names = _relabel_parts(r.parts, ch.clusters, self.index) if ch else ()
            for (rid, p, cn), x in self.x.items():
                if rid == r.id:
                    m.add_hint(x, bool(names) and names[p] == cn)
        for c in self.clusters:
            groups: dict[tuple[int, int, int], list[Job]] = defaultdict(list)
            for j in sorted(c.jobs, key=lambda j: j.id):
                groups[(j.release, j.size, j.runtime)].append(j)
            for group in groups.values():
                ordered = sorted(sol.job_starts[(c.name, j.id)] for j in group)
                for j, t in zip(group, ordered, strict=True):
                    m.add_hint(self.job_start[(c.name, j.id)], t)
                    m.add_hint(self.wait[(c.name, j.id)], t - j.release)
        for var, value in self.aux:
            m.add_hint(var, value(sol))

    def hinted_start(self, sol: OfflineSolution, r: Request) -> int:
        """``S_i`` in the hint of ``sol`` (``es_i`` when rejected)."""
        ch = sol.accepted.get(r.id)
        return ch.start if ch else r.earliest_start

    def hinted_delay(self, r: Request, sol: OfflineSolution) -> int:
        """``S_i - es_i`` if accepted in ``sol``, else 0."""
        ch = sol.accepted.get(r.id)
        return ch.start - r.earliest_start if ch else 0

    def hinted_hour(self, r: Request, sol: OfflineSolution) -> int:
        """``H_i`` in the hint of ``sol``."""
        return self.hinted_start(sol, r) // HOUR

    def hinted_cost(
        self,
        r: Request,
        table: Sequence[int],
        p: int | None,
        cn: str,
        sol: OfflineSolution,
    ) -> int:
        """``v_{ic}`` (``p`` None) or ``y_{ipc}`` in the hint of ``sol``."""
        value = table[self.hinted_hour(r, sol) - r.earliest_start // HOUR]
        if p is None:
            return value
        ch = sol.accepted.get(r.id)
        if ch is None:
            return 0
        return value if _relabel_parts(r.parts, ch.clusters, self.index)[p] == cn else 0

    def read(
        self, value: Callable[[Any], int]
    ) -> tuple[dict[int, tuple[int, tuple[str, ...]]], dict[JobKey, int]]:
        acc: dict[int, tuple[int, tuple[str, ...]]] = {}
        for r in self.requests:
            if r.id in self.start and value(self.accept[r.id]):
                names = tuple(
                    next(
                        cn
                        for cn in self.index
                        if (r.id, p, cn) in self.x and value(self.x[(r.id, p, cn)])
                    )
                    for p in range(len(r.parts))
                )
                acc[r.id] = (int(value(self.start[r.id])), names)
        jobs = {key: int(value(v)) for key, v in self.job_start.items()}
        return acc, jobs


def _hinted_rejection(rid: int, sol: OfflineSolution) -> int:
    return 0 if rid in sol.accepted else 1


def _matchable(parts: Sequence[int], eligible: Sequence[Sequence[str]]) -> bool:
    """Whether the parts can go to distinct clusters by size alone."""
    sizes = sorted(range(len(parts)), key=lambda p: -parts[p])
    # Eligible sets are nested (by processors), so Hall's condition reduces
    # to: the l largest parts have at least l eligible clusters.
    return all(len(eligible[p]) >= rank + 1 for rank, p in enumerate(sizes))


def _relabel_parts(
    parts: Sequence[int], names: Sequence[str], index: Mapping[str, int]
) -> tuple[str, ...]:
    """Clusters of identical parts sorted by cluster index (the model's order)."""
    out = list(names)
    for q in set(parts):
        pos = [p for p, qq in enumerate(parts) if qq == q]
        for p, c in zip(
            pos, sorted((out[p] for p in pos), key=lambda c: index[c]), strict=True
        ):
            out[p] = c
    return tuple(out)


def _configure(
    solver: cp_model.CpSolver, time_limit: float, workers: int, seed: int
) -> None:
    p = solver.parameters
    p.max_time_in_seconds = max(0.0, time_limit)
    p.num_workers = max(1, workers)
    p.random_seed = seed


def _validate(
    clusters: Sequence[OfflineCluster], requests: Sequence[Request], objective: str
) -> None:
    if objective not in OBJECTIVES:
        raise ValueError(
            f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}"
        )
    names = [c.name for c in clusters]
    if len(set(names)) != len(names):
        raise ValueError("cluster names must be unique")
    ids = [r.id for r in requests]
    if len(set(ids)) != len(ids):
        raise ValueError("request ids must be unique")


def _weights(
    requests: Sequence[Request], request_weight: Callable[[Request], int] | None
) -> dict[int, int]:
    out = {}
    for r in requests:
        w = 1 if request_weight is None else request_weight(r)
        if not isinstance(w, int) or isinstance(w, bool) or w < 1:
            raise ValueError(f"request {r.id}: weight {w!r} must be an integer >= 1")
        out[r.id] = w
    return out


def solve_offline(
    clusters: Sequence[OfflineCluster],
    requests: Sequence[Request],
    objective: str = "accepted",
    *,
    k: float | Fraction = 1,
    s: float | Fraction = 0,
    local_weight: float | Fraction = 0,
    reject_penalty: float | Fraction | None = None,
    request_weight: Callable[[Request], int] | None = None,
    time_limit: float = 30.0,
    workers: int = 1,
    seed: int = 0,
) -> OfflineResult:
    """The offline optimum over a window (module docstring for the model).

    Parameters
    ----------
    clusters, requests
        The window; cluster names and request ids unique.
    objective
        ``"accepted"`` (max weighted count, then min local wait) or
        ``"weighted"`` (min ``F``).
    k, s, local_weight, reject_penalty
        Weights of ``F`` (``"weighted"`` only): cost, start, local mean wait
        in hours, rejection (default ``k + s + 1``).
    request_weight
        ``"accepted"``: integer weight of a request (default 1; e.g.
        ``lambda r: r.area``).
    time_limit
        Seconds for the whole call (both solves of ``"accepted"``).
    workers, seed
        CP-SAT threads and random seed.

    Returns
    -------
    OfflineResult
        Always a solution that passes :func:`check_offline` (the greedy
        one at worst) with its objective recomputed exactly.
    """
    began = time.perf_counter()
    _validate(clusters, requests, objective)
    terms = WeightedTerms.of(k, s, local_weight, reject_penalty)
    weights = _weights(requests, request_weight)
    hint = greedy(clusters, requests)
    _assert_valid(clusters, requests, hint, "greedy")
    run = _Run(clusters, requests, weights, terms, began, time_limit, workers, seed)
    run.params["hint_accepted"] = len(hint.accepted)
    if objective == "accepted":
        return run.accepted(hint)
    return run.weighted(hint)


class _Run:
    """One call of :func:`solve_offline`: the model, the clock, the notes."""

    def __init__(
        self,
        clusters: Sequence[OfflineCluster],
        requests: Sequence[Request],
        weights: Mapping[int, int],
        terms: WeightedTerms,
        began: float,
        time_limit: float,
        workers: int,
        seed: int,
    ) -> None:
        self.clusters, self.requests = clusters, requests
        self.weights, self.terms = weights, terms
        self.began, self.time_limit = began, time_limit
        self.workers, self.seed = workers, seed
        self.by_id = {r.id: r for r in requests}
        self.by_name = {c.name: c for c in clusters}
        self.model = _Model(clusters, requests)
        self.params: dict[str, Any] = {"backend": BACKEND, "skipped": []}

    def left(self) -> float:
        return self.time_limit - (time.perf_counter() - self.began)

    def search(
        self, limit: float, what: str
    ) -> tuple[OfflineSolution | None, float | None, str]:
        """One CP-SAT run: its checked solution, raw bound and status name."""
        solver = cp_model.CpSolver()
        _configure(solver, limit, self.workers, self.seed)
        out = run_search(
            solver, self.model.model, self.model.read, float, f"{what} model infeasible"
        )
        if out.notes.get("interrupted"):
            self.params["interrupted"] = True
        if "error" in out.notes:
            self.params.setdefault("errors", []).append(out.notes["error"])
        if out.found is None or out.bound is None:
            return None, None, out.status_name
        acc, jobs = out.found
        sol = OfflineSolution(
            {
                rid: Choice(
                    st, names, choice_cost(self.by_name, self.by_id[rid], st, names)
                )
                for rid, (st, names) in acc.items()
            },
            jobs,
        )
        _assert_valid(self.clusters, self.requests, sol, f"cpsat {what}")
        return sol, out.bound.value, out.status_name

    def value(self, sol: OfflineSolution) -> Fraction:
        t = self.terms
        return weighted_value(
            self.clusters, self.requests, sol, k=t.k, s=t.s,
            local_weight=t.local_weight, reject_penalty=t.reject_penalty,
        )  # fmt: skip

    def less_wait(self, sol: OfflineSolution) -> OfflineSolution:
        """``sol`` with the greedy job schedule around its reservations when
        that waits less (no objective gets worse: the requests are kept)."""
        jobs = _reschedule_jobs(self.clusters, sol.accepted, self.by_id)
        if local_wait(self.clusters, jobs) < local_wait(self.clusters, sol.job_starts):
            return OfflineSolution(sol.accepted, jobs)
        return sol

    def accepted(self, hint: OfflineSolution) -> OfflineResult:
        """Max weighted count, then min local wait with the count kept."""
        model, weights = self.model, self.weights
        has_jobs = any(c.jobs for c in self.clusters)
        model.add_hint(hint)
        total = sum(weights[r.id] * model.accept[r.id] for r in self.requests)
        model.model.maximize(total)
        # Leave the wait step a share of the time unless the count is proven.
        share = (1 - _SECOND_SOLVE_SHARE) if has_jobs else 1.0
        found, bound, status = self.search(share * self.left(), "offline")
        self.params["search_status"] = status
        best = hint
        # Trivial bound: every request that fits the clusters by size.
        upper = sum(weights[rid] for rid in model.start)
        if found is not None and bound is not None:
            if _weight_of(found, weights) >= _weight_of(best, weights):
                best = found
            upper = min(upper, -round_up_bound(-bound))
        count = _weight_of(best, weights)
        if count > upper:
            raise AssertionError(f"accepted weight {count} above its bound {upper}")
        best = self.less_wait(best)
        self.params["wait_status"] = "greedy"
        if has_jobs and self.left() > 0.5 * _SECOND_SOLVE_SHARE * self.time_limit:
            model.model.clear_objective()
            model.model.add(total >= count)
            model.model.minimize(model.wait_expr())
            model.add_hint(best)
            found, bound, status = self.search(self.left(), "wait")
            self.params["wait_status"] = status
            if found is not None and bound is not None:
                if _weight_of(found, weights) >= count and local_wait(
                    self.clusters, found.job_starts
                ) <= local_wait(self.clusters, best.job_starts):
                    best = found
                self.params["wait_lower_bound"] = round_up_bound(bound)
        elif has_jobs:
            self.params["skipped"].append("wait minimisation: no time left")
        value = Fraction(_weight_of(best, weights))
        status_ = SolveStatus.OPTIMAL if value == upper else SolveStatus.FEASIBLE
        return self.result(status_, "accepted", best, value, upper, None)

    def weighted(self, hint: OfflineSolution) -> OfflineResult:
        """Min ``F`` (module docstring)."""
        model = self.model
        coeffs = _weighted_objective(model, self.clusters, self.requests, self.terms)
        model.add_hint(hint)
        sigma, exact_scale = _scale(coeffs)
        self.params["scale"] = sigma
        self.params["exact_scale"] = exact_scale
        model.model.minimize(
            sum(
                math.floor(sigma * c) * e for c, e, _ in coeffs if math.floor(sigma * c)
            )
        )
        found, bound, status = self.search(self.left(), "offline")
        self.params["search_status"] = status
        best, lower = hint, Fraction(0)
        if found is not None and bound is not None:
            if self.value(found) <= self.value(best):
                best = found
            # The scaled objective is an integer: round its bound up.
            lower = max(lower, Fraction(round_up_bound(bound)) / sigma)
        best = self.less_wait(best)
        value = self.value(best)
        if lower > value:
            raise AssertionError(f"lower bound {lower} above the value {value}")
        status_ = SolveStatus.OPTIMAL if value == lower else SolveStatus.FEASIBLE
        return self.result(status_, "weighted", best, value, None, lower)

    def result(
        self,
        status: SolveStatus,
        objective: str,
        sol: OfflineSolution,
        value: Fraction,
        upper: int | None,
        lower: Fraction | None,
    ) -> OfflineResult:
        return OfflineResult(
            status=status,
            objective=objective,
            accepted=sol.accepted,
            job_starts=sol.job_starts,
            accepted_count=len(sol.accepted),
            accepted_weight=_weight_of(sol, self.weights),
            value=value,
            accepted_bound=upper,
            lower_bound=lower,
            local_wait=local_wait(self.clusters, sol.job_starts),
            runtime=time.perf_counter() - self.began,
            params=self.params,
        )


def _weighted_objective(
    model: _Model,
    clusters: Sequence[OfflineCluster],
    requests: Sequence[Request],
    terms: WeightedTerms,
) -> list[tuple[Fraction, Any, int]]:
    """``F`` as ``(coefficient, non-negative expression, its maximum)`` terms."""
    m = model.model
    out: list[tuple[Fraction, Any, int]] = []
    scale = common_scale(c.tariff for c in clusters)
    by_name = {c.name: c for c in clusters}
    for r in requests:
        a = model.accept[r.id]
        if terms.reject_penalty:
            rejected = m.new_bool_var(f"R{r.id}")
            m.add(a + rejected == 1)
            model.aux.append((rejected, partial(_hinted_rejection, r.id)))
            out.append((terms.reject_penalty, rejected, 1))
        if r.id not in model.start:
            continue
        st = model.start[r.id]
        if terms.s and r.span:
            dv = m.new_int_var(0, r.span, f"D{r.id}")
            model.aux.append((dv, partial(model.hinted_delay, r)))
            m.add(dv == st - r.earliest_start).only_enforce_if(a)
            m.add(dv == 0).only_enforce_if(~a)
            out.append((terms.s / r.span, dv, r.span))
        most = max_cost(clusters, r)
        if not (terms.k and most):
            continue
        h0, h1 = r.earliest_start // HOUR, r.latest_start // HOUR
        hv = m.new_int_var(h0, h1, f"H{r.id}")
        model.aux.append((hv, partial(model.hinted_hour, r)))
        m.add(HOUR * hv <= st)
        m.add(st <= HOUR * hv + HOUR - 1)
        used = {cn for (rid, _, cn) in model.x if rid == r.id}
        for cn in sorted(used):
            # K * sampled_sum is an integer: K clears every price's denominator.
            table = [
                int(scale * by_name[cn].tariff.sampled_sum(h * HOUR, r.duration))
                for h in range(h0, h1 + 1)
            ]
            if not any(table):
                continue
            v = m.new_int_var(min(table), max(table), f"V{r.id}_{cn}")
            model.aux.append((v, partial(model.hinted_cost, r, table, None, cn)))
            m.add_element(hv - h0, table, v)
            for p, q in enumerate(r.parts):
                x = model.x.get((r.id, p, cn))
                if x is None:
                    continue
                y = m.new_int_var(0, max(table), f"Y{r.id}_{p}_{cn}")
                model.aux.append((y, partial(model.hinted_cost, r, table, p, cn)))
                m.add(y == v).only_enforce_if(x)
                m.add(y == 0).only_enforce_if(~x)
                out.append((terms.k * q / (scale * most), y, max(table)))
    n = sum(len(c.jobs) for c in clusters)
    if n and terms.local_weight:
        gamma = terms.local_weight / (HOUR * n)
        for c in clusters:
            end = horizon(c, requests)
            for j in c.jobs:
                out.append(
                    (
                        gamma,
                        model.wait[(c.name, j.id)],
                        end - j.runtime - j.release,
                    )
                )
    return out


def _scale(coeffs: Sequence[tuple[Fraction, Any, int]]) -> tuple[Fraction, bool]:
    """``sigma`` and whether it makes every coefficient an integer."""
    fmax = sum((c * hi for c, _, hi in coeffs), Fraction(0))
    lcm = math.lcm(1, *(c.denominator for c, _, _ in coeffs))
    if fmax == 0 or lcm * fmax <= _EXACT_LIMIT:
        return Fraction(lcm), True
    if fmax <= _EXACT_LIMIT:
        # An integer scale keeps the rounded model readable.
        return Fraction(_EXACT_LIMIT // math.ceil(fmax)), False
    return Fraction(_EXACT_LIMIT) / fmax, False


def _weight_of(sol: OfflineSolution, weights: Mapping[int, int]) -> int:
    return sum(weights[rid] for rid in sol.accepted)


def _assert_valid(
    clusters: Sequence[OfflineCluster],
    requests: Sequence[Request],
    sol: OfflineSolution,
    source: str,
) -> None:
    problems = check_offline(clusters, requests, sol)
    if problems:
        raise AssertionError(f"{source} solution invalid: " + "; ".join(problems[:5]))
