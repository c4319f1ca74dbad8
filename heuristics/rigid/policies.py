"""The policy family: a queue order combined with a start rule.

Every policy is a small immutable class with one decision method,
``decide(sim, state)``, called once per scheduling pass: it reads the
simulator (:class:`~optsched.heuristics.engine.core.Simulator`) and calls
``sim.start(j)`` for the jobs to start now. ``new_state`` gives the per-run
memory of policies that keep some (conservative reservations). Policies
never see the event heap, the actual run times (unless ``oracle``), or the
future arrivals.

Start rules
-----------
strict (``fcfs``, ``spt``, ... as policy names)
    Only the head of the queue may start; start heads while they fit.
    Strict FCFS is the reference of Schwiegelshohn and Yahyapour, "Analysis
    of first-come-first-serve parallel job scheduling", SODA 1998.
``firstfit``
    Every waiting job that fits now starts, scanned in queue order; no
    reservation (greedy list scheduling; Garey and Graham, "Bounds for
    multiprocessor scheduling with resource constraints", SIAM J. Comput.
    4(2), 1975).
``easy`` (``backfill:depth=1``)
    EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP
    1995; Mu'alem and Feitelson, IEEE TPDS 12(6), 2001). Heads start while
    they fit. The first job that does not fit gets a reservation at the
    *shadow time*: running jobs are taken by increasing estimated end (an
    estimated end already in the past counts as now) until enough
    processors are free for it. ``extra`` = processors available at the
    shadow time minus the head's size. A candidate, scanned in queue order,
    starts if it fits now and either ends (by its estimate) by the shadow
    time, or uses no more than ``extra`` processors, in which case ``extra``
    shrinks by its size.
``backfill:depth=k``
    Backfilling with ``k`` reservations, recomputed at every pass on the
    availability profile (:class:`optsched.packing.Profile`): walking the
    queue, a job that can start without delaying the reservations already
    made starts; otherwise it gets a reservation at its earliest slot,
    until ``k`` reservations exist. The remaining jobs are candidates that
    start only if they fit now and delay no reservation. ``depth=1`` is
    exactly EASY (the profile gives the same shadow time and extra
    processors; a property test checks it). EASY itself is computed on
    the profile while busy blocks are pending: a block is then part of the
    availability profile, exactly like a running job's estimated end, and
    the head's reservation is its earliest slot in it.
``conservative`` (``backfill:depth=all``)
    Conservative backfilling (Mu'alem and Feitelson 2001): every job gets a
    reservation at its earliest slot when it arrives, behind all existing
    reservations, and starts at its reservation (the one made at
    submission is the start predicted then; ``SimulationStats`` measures
    its error). The plan holds the running jobs until their *estimated*
    ends, the busy blocks and every reservation. The rule at an instant,
    with jobs that may run past their estimates (issue 28):

    1. completions, then arrivals, then one pass; a pass also happens at
       every *current* reservation time, even when no job arrives or ends
       then (as in Mu'alem and Feitelson's simulator); a reservation that
       moved leaves no pass behind
       (:meth:`~optsched.heuristics.engine.core.Simulator.plan_wake`);
    2. a reservation due now starts if its processors are free;
    3. a due reservation that cannot start (an overrunning job holds the
       processors, a site rule or, on a contiguous machine, fragmentation
       stops it) is *void*, and so is one still waiting after its time;
       which reservations are void is decided once per pass, before
       anything moves;
    4. when a job ended before its estimate or some reservation is void,
       the plan is *compressed*: every void rectangle leaves the plan
       first, then in queue order each job is placed again, a void one at
       its earliest slot from now, a valid one at its earliest slot, which
       is never later than the one it had (valid reservations are never
       delayed; void rectangles never block anybody);
    5. the jobs that arrived get their reservations, in queue order, then
       the jobs reserved at now start if they can; one that cannot keeps
       its slot until the next pass, where it is void.

    Bookkeeping (issue 16): only the jobs that arrived since the previous
    pass are given reservations, the due ones and the earliest come from a
    heap of reservation times, and the compression skips, in ``O(1)``, the
    reservations that provably cannot move (:func:`_cannot_move`).
    ``tests/oracles/`` compares this with a plain reference written from
    the rule above, job for job.
``best-package``
    Start the subset of waiting jobs that fills the most free processors
    (exact subset sum by dynamic programming over the first ``limit`` jobs
    that fit, in queue order; ties favour jobs earlier in the queue; the
    free processors left are then filled first-fit from the rest of the
    queue). No reservation, so wide jobs can starve. The dynamic programme
    is the packing step of Shmueli and Feitelson, "Backfilling with
    lookahead to optimize the packing of parallel jobs", JPDC 65(9), 2005.

Backfill candidate selection (``select=``, finite depth)
--------------------------------------------------------
``queue`` (default) scans candidates in queue order; ``submit`` by submit
time; ``largest`` largest size first; ``largest-area`` largest size x
estimate first; ``smallest`` smallest size first; ``shortest`` smallest
estimate first (ties in queue order). ``easy:select=shortest`` (alias
``easy-sjbf``) is EASY with shortest-job-backfilled-first (Tsafrir, Etsion
and Feitelson, "Backfilling using system-generated predictions rather than
user runtime estimates", IEEE TPDS 18(6), 2007).
Because a candidate that is not eligible never becomes eligible later in
the same pass (free processors and extra processors only shrink), one scan
in selection order equals repeatedly starting the best eligible candidate.
The scan is not done job by job: a
:class:`~optsched.heuristics.engine.core.WaitingIndex` of the waiting jobs in
selection order yields the next candidate that passes the test (EASY:
fits now and ends by the shadow time or fits in the extra processors;
depth ``k``: fits the profile until its estimated end), skipping whole
ranges of jobs that cannot start, so a pass in which no candidate can
start costs ``O(log n)`` per size class, not a scan of a queue of
thousands (issue 16).

Two limits apply to largest-size-first selection (``select=largest``):
``maxwait=S`` stops backfilling while the blocked head has waited ``S``
seconds or more since its submission (the machine then drains for it), and
``maxidle=F`` (``0 <= F <= 1``) skips backfilling while more than a share
``F`` of the machine is idle (the idle processors are left to the head
instead of being filled with the widest candidates).

Jobs of zero duration: one needs its processors free at its start instant
and gives them back at once. In a profile, a reservation of zero length
would protect nothing, so reservations last at least one second (with
integer times, the jobs running at instant ``t`` are those overlapping
``[t, t + 1)``); starting such a job delays nobody.

Contiguous machines: "fits now" means a free range exists (possibly after
compaction with migration). Reservations count processors, as in the
literature; they guarantee processor counts, not ranges, so on a
fragmented contiguous machine a job can start later than its reservation.
The simulator never produces an invalid schedule; the reservation
guarantees of EASY and conservative hold on ``any`` machines with exact
estimates and no busy block with an offset.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, ClassVar

from optsched.heuristics.engine.core import WAITING, Simulator, WaitingIndex
from optsched.heuristics.rigid.orders import ORDER_NAMES, canonical_order
from optsched.heuristics.spec import (
    Family,
    Option,
    Options,
    SpecParts,
    boolean,
    integer,
    share,
    write_float,
)
from optsched.packing import Profile

SELECT_NAMES: tuple[str, ...] = (
    "queue",
    "submit",
    "largest",
    "largest-area",
    "smallest",
    "shortest",
)
"""Backfill candidate selection rules."""

DEFAULT_PACKAGE_LIMIT = 128
"""Jobs the Best Package dynamic programme looks at (queue order)."""


def _order(key: str, value: str) -> str:
    return canonical_order(value)


def _select(key: str, value: str) -> str:
    lowered = value.lower()
    if lowered not in SELECT_NAMES:
        raise ValueError(f"unknown select {value!r}; valid: {', '.join(SELECT_NAMES)}")
    return lowered


_UNBOUNDED = ("all", "inf", "infinite")


def _depth(key: str, value: str) -> int | None:
    """A number of reservations; ``None`` for ``all`` (conservative)."""
    return None if value.lower() in _UNBOUNDED else integer(key, value)


ORDER = Option("order", _order, "fcfs")
"""The queue order (every engine policy)."""
ORACLE = Option("oracle", boolean, False, flag=True)
"""Actual durations instead of estimates (every engine policy)."""
SEED = Option("seed", integer)
"""Seed of the random order (every engine policy)."""

COMMON_KEYS: tuple[str, ...] = ("order", "oracle", "seed")
"""The spec keys every engine policy takes."""

RIGID_OPTIONS = Options(
    (
        ORDER,
        Option("depth", _depth, 1),
        ORACLE,
        Option("select", _select, "queue"),
        Option("maxwait", integer),
        Option("maxidle", share, write=write_float),
        Option("limit", integer, DEFAULT_PACKAGE_LIMIT),
        SEED,
    )
)
"""The options of the engine's rigid policies, in canonical spec order:
``parse_rigid`` reads them and :attr:`Policy.spec` writes them."""


@dataclass(frozen=True)
class Policy:
    """Base class: a queue order and a start rule.

    Parameters
    ----------
    order
        Queue order name (:mod:`optsched.heuristics.rigid.orders`).
    oracle
        See actual durations instead of estimates.
    seed
        Seed of the random order; ``None`` uses the ``seed`` given to
        :func:`~optsched.heuristics.simulate`.
    """

    order: str = "fcfs"
    oracle: bool = False
    seed: int | None = None

    rule: ClassVar[str] = ""
    spec_keys: ClassVar[tuple[str, ...]] = COMMON_KEYS
    """The keys of :data:`RIGID_OPTIONS` this policy's spec writes."""

    def __post_init__(self) -> None:
        if self.order not in ORDER_NAMES:
            raise ValueError(
                f"unknown queue order {self.order!r}; valid: {', '.join(ORDER_NAMES)}"
            )
        if self.seed is not None and self.order != "random":
            raise ValueError("seed applies only to the random order")

    # -- spec --------------------------------------------------------------
    @property
    def spec(self) -> str:
        """Canonical spec string; ``parse_policy(p.spec) == p``.

        Written from :data:`RIGID_OPTIONS`: parameters with their default
        value are left out; the others come in the order ``order, depth,
        oracle, select, maxwait, maxidle, limit, seed``.
        """
        return RIGID_OPTIONS.spec(self.spec_name, self, self.spec_keys)

    @property
    def spec_name(self) -> str:
        """The name the canonical spec opens with."""
        return self.rule

    def __str__(self) -> str:
        return self.spec


@dataclass(frozen=True)
class EnginePolicy(Policy):
    """A policy the engine runs: asked at every scheduling point which
    waiting jobs to start (:meth:`decide`). The other kind builds its whole
    schedule itself (:class:`~optsched.heuristics.engine.standalone.Standalone`).
    """

    @property
    def needs_profile(self) -> bool:
        """Whether the simulator must keep the profile of running jobs
        (:meth:`~optsched.heuristics.engine.core.Simulator.base_profile`); it
        always does when the machine has busy blocks."""
        return False

    def new_state(self, sim: Simulator) -> Any:
        """Per-run memory (``None`` for memoryless policies)."""
        return None

    def decide(self, sim: Simulator, state: Any) -> None:
        """Start the jobs that should start now (``sim.start``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Strict(EnginePolicy):
    """Only the head of the queue may start (list scheduling without skipping)."""

    rule: ClassVar[str] = "strict"
    spec_keys: ClassVar[tuple[str, ...]] = ("oracle", "seed")

    @property
    def spec_name(self) -> str:
        """The queue order's name (``spt``): it fixes the order."""
        return self.order

    def decide(self, sim: Simulator, state: Any) -> None:
        size = sim.size
        simple = sim.simple
        for j in sim.queue:
            if size[j] > sim.free or not (simple or sim.can_start(j)):
                return
            sim.start(j)


@dataclass(frozen=True)
class FirstFit(EnginePolicy):
    """Every waiting job that fits now starts, in queue order; no reservation."""

    rule: ClassVar[str] = "firstfit"

    def decide(self, sim: Simulator, state: Any) -> None:
        size = sim.size
        simple = sim.simple
        for j in sim.queue:
            free = sim.free
            if free == 0:
                return
            if size[j] <= free and (simple or sim.can_start(j)):
                sim.start(j)


@dataclass(frozen=True)
class Backfill(EnginePolicy):
    """Backfilling with ``depth`` reservations recomputed at every pass.

    ``depth=1`` is EASY. See the module docstring for the rules, the
    selection variants and the two limits.
    """

    depth: int = 1
    select: str = "queue"
    maxwait: int | None = None
    maxidle: float | None = None

    rule: ClassVar[str] = "backfill"
    spec_keys: ClassVar[tuple[str, ...]] = (
        *COMMON_KEYS,
        "depth",
        "select",
        "maxwait",
        "maxidle",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.depth, int) or self.depth < 1:
            raise ValueError(
                f"depth must be a positive integer or 'all', got {self.depth!r}"
            )
        if self.select not in SELECT_NAMES:
            raise ValueError(
                f"unknown select {self.select!r}; valid: {', '.join(SELECT_NAMES)}"
            )
        limited = self.maxwait is not None or self.maxidle is not None
        if limited and self.select != "largest":
            raise ValueError("maxwait and maxidle apply only to select=largest")
        if self.maxwait is not None and self.maxwait < 0:
            raise ValueError(f"maxwait must be >= 0 seconds, got {self.maxwait}")
        if self.maxidle is not None and not 0 <= self.maxidle <= 1:
            raise ValueError(f"maxidle must be a share in [0, 1], got {self.maxidle}")

    @property
    def needs_profile(self) -> bool:
        return self.depth > 1

    @property
    def spec_name(self) -> str:
        """``easy`` (one reservation) or ``backfill``."""
        return "easy" if self.depth == 1 else "backfill"

    # -- decisions ---------------------------------------------------------
    def new_state(self, sim: Simulator) -> _Candidates:
        """The waiting jobs indexed in candidate selection order (the
        index is kept up to date only while the queue is long)."""
        # Selection order: a static key per job, ties in queue order (the
        # order of the sorted scans of _scan_candidates).
        size, estimate = sim.size, sim.estimate
        keys: list[int] | None
        if self.select == "queue":
            keys = None
        elif self.select == "submit":
            keys = list(range(len(size)))  # job numbers are in submit order
        elif self.select == "largest":
            keys = [-q for q in size]
        elif self.select == "smallest":
            keys = list(size)
        elif self.select == "shortest":
            keys = list(estimate)
        else:
            keys = [-q * d for q, d in zip(size, estimate, strict=True)]
        return _Candidates(sim.index_waiting(keys))

    def decide(self, sim: Simulator, state: _Candidates) -> None:
        index = state.use(sim)
        if self.depth == 1 and not sim.blocks_pending:
            self._decide_easy(sim, index)
        else:
            self._decide_with_profile(sim, index)

    def _decide_easy(self, sim: Simulator, index: WaitingIndex | None = None) -> None:
        # EASY exactly as in Lifka 1995 / Mu'alem and Feitelson 2001.
        queue = sim.queue
        n = len(queue)
        size = sim.size
        simple = sim.simple  # then "fits now" is just size <= free
        i = 0
        while i < n:
            j = queue[i]
            if size[j] > sim.free or not (simple or sim.can_start(j)):
                break
            sim.start(j)
            i += 1
        if i >= n:
            return
        head = queue[i]
        free = sim.free
        no_candidates = i == n - 1 or free == 0
        if no_candidates and head in sim.first_reservation:
            return  # nothing to backfill, and the head's shadow is recorded
        shadow, extra = easy_shadow(sim, size[head])
        sim.reserve(head, shadow)
        if no_candidates or self._limited(sim, head):
            return
        candidates: Iterable[int]
        if index is None:
            candidates = self._scan_candidates(sim, queue, i + 1)
        else:
            candidates = self._indexed_easy(sim, index, head, shadow, extra)
        # Candidates that fail the test are left alone (the index does not
        # even yield them): free and extra only shrink during the pass.
        estimate = sim.estimate
        now = sim.now
        for c in candidates:
            q = size[c]
            if q > free:
                continue
            if now + estimate[c] <= shadow:
                if simple or sim.can_start(c):
                    sim.start(c)
                    free = sim.free
            elif q <= extra and (simple or sim.can_start(c)):
                sim.start(c)
                free = sim.free
                if sim.end_time[c] > now:  # else it already ended
                    extra -= q
            if free == 0:
                return

    def _indexed_easy(
        self, sim: Simulator, index: WaitingIndex, head: int, shadow: int, extra: int
    ) -> Iterator[int]:
        # The candidates in selection order are the waiting jobs other than
        # the head (the jobs before it in the queue have started). Only
        # those that pass EASY's test with the current free and extra
        # processors are yielded; the caller's starts update both (a
        # generator: each next candidate is searched after the previous
        # one was decided).
        size = sim.size
        now = sim.now
        horizon = shadow - now  # ends by the shadow time: estimate <= horizon
        end_time = sim.end_time
        position = index.position
        p = position[head] + 1 if self.select == "queue" else 0
        while (c := index.next_easy(p, sim.free, extra, horizon)) is not None:
            p = position[c] + 1
            if c == head:
                continue
            yield c
            # Started on the extra processors (it ends after the shadow
            # time) and still running: the caller's extra shrank too.
            started = sim.state[c] != WAITING
            if started and sim.estimate[c] > horizon and end_time[c] > now:
                extra -= size[c]

    def _decide_with_profile(
        self, sim: Simulator, index: WaitingIndex | None = None
    ) -> None:
        profile = sim.base_profile()
        queue = sim.queue
        size, estimate = sim.size, sim.estimate
        reserved = 0
        head: int | None = None
        stop = len(queue)
        holders: set[int] = set()  # the jobs reserved in this pass
        for pos, j in enumerate(queue):
            if reserved == self.depth:
                stop = pos
                break
            if _start_within(sim, profile, j):
                continue
            q, span = size[j], planned(estimate[j])
            t = profile.earliest(q, span)
            assert t is not None, "a job larger than the machine"
            profile.add(t, t + span, -q)
            sim.reserve(j, t)
            holders.add(j)
            reserved += 1
            if head is None:
                head = j
        if stop >= len(queue) or sim.free == 0:
            return
        if head is not None and self._limited(sim, head):
            return
        candidates: Iterable[int]
        if index is None:
            candidates = self._scan_candidates(sim, queue, stop)
        else:
            candidates = self._indexed_fitting(
                sim, index, profile, queue[stop - 1], holders
            )
        for c in candidates:
            if _start_within(sim, profile, c) and sim.free == 0:
                return

    def _indexed_fitting(
        self,
        sim: Simulator,
        index: WaitingIndex,
        profile: Profile,
        last: int,
        holders: set[int],
    ) -> Iterator[int]:
        # The candidates are the waiting jobs other than the holders (the
        # others before `last`, the last holder, in the queue have started).
        # A job fits iff size <= free and size <= fewest(estimate), the
        # fewest processors free over [now, now + estimate) (non-increasing
        # in the estimate: a prefix minimum of the profile); only those are
        # yielded, searched again after each one the caller decided.
        position = index.position
        p = position[last] + 1 if self.select == "queue" else 0
        fewest = _fewest_free(profile)
        while (c := index.next_fitting(p, sim.free, fewest)) is not None:
            p = position[c] + 1
            if c in holders:
                continue
            yield c
            if sim.state[c] != WAITING:  # started: the caller booked it
                fewest = _fewest_free(profile)

    def _scan_candidates(
        self, sim: Simulator, queue: list[int], first: int
    ) -> list[int]:
        # Every candidate, in selection order (short queues).
        rest = queue[first:]
        if self.select == "queue":
            return rest
        if self.select == "submit":
            return sorted(rest)  # job numbers are in submit order
        size, estimate = sim.size, sim.estimate
        position = {j: k for k, j in enumerate(rest)}
        if self.select == "largest":
            return sorted(rest, key=lambda j: (-size[j], position[j]))
        if self.select == "smallest":
            return sorted(rest, key=lambda j: (size[j], position[j]))
        if self.select == "shortest":
            return sorted(rest, key=lambda j: (estimate[j], position[j]))
        return sorted(rest, key=lambda j: (-size[j] * estimate[j], position[j]))

    def _limited(self, sim: Simulator, head: int) -> bool:
        if self.maxwait is not None and sim.now - sim.release[head] >= self.maxwait:
            return True
        return self.maxidle is not None and sim.free > self.maxidle * sim.processors


INDEX_FROM = 128
"""Waiting jobs from which backfilling keeps a :class:`WaitingIndex`."""

INDEX_UNTIL = 32
"""Waiting jobs down to which it keeps it (below, candidates are scanned:
the index's upkeep, two ``O(log n)`` updates per job, costs more than a
scan of a short queue; the gap between the two avoids rebuilding it at
every pass)."""


@dataclass
class _Candidates:
    """Backfilling's per-run state: the index and whether it is kept."""

    index: WaitingIndex
    kept: bool = False

    def use(self, sim: Simulator) -> WaitingIndex | None:
        """The index for this pass, or ``None`` to scan (short queue, or a
        queue whose order changes during the run)."""
        if sim.reorders_queue:
            return None
        waiting = len(sim.queue)
        if not self.kept and waiting >= INDEX_FROM:
            sim.track(self.index, True)
            self.kept = True
        elif self.kept and waiting <= INDEX_UNTIL:
            sim.track(self.index, False)
            self.kept = False
        return self.index if self.kept else None


def planned(estimate: int) -> int:
    """Length a reservation holds in the profile: the estimate, at least 1.

    A job of zero duration still needs its processors at its start instant
    ``t``; with integer times, the jobs running at ``t`` are exactly those
    overlapping ``[t, t + 1)``, so reserving ``[t, t + 1)`` protects the
    instant (and wastes nothing: the reservation is released when the job
    starts).
    """
    return estimate if estimate > 0 else 1


def _start_within(sim: Simulator, profile: Profile, j: int) -> bool:
    """Start job ``j`` now if the machine lets it and it fits ``profile``
    for its estimate (so it delays no reservation there), then take its
    processors out of the profile until its estimate; whether it started.

    A job of zero duration that starts now delays nobody: it gives its
    processors back at once (nothing to fit, nothing to take out).
    """
    q, d, now = sim.size[j], sim.estimate[j], sim.now
    if q > sim.free or not (d == 0 or profile.fits(now, d, q)):
        return False
    if not sim.can_start(j):
        return False
    sim.start(j)
    if sim.end_time[j] > now:  # else it already ended
        profile.add(now, now + d, -q)
    return True


def _fewest_free(profile: Profile) -> Callable[[float], float]:
    """``d -> profile.min_free(now, now + d)`` for ``d > 0``, in ``O(log P)``.

    The profile starts at ``now``; the segments overlapping ``[now, now +
    d)`` are those starting before ``now + d``, so the answer is a prefix
    minimum of the free counts, found by bisection.
    """
    times = profile.times
    lowest = list(accumulate(profile.free, min))
    now = times[0]

    def fewest(d: float) -> float:
        return lowest[bisect_left(times, now + d) - 1]

    return fewest


def easy_shadow(sim: Simulator, need: int) -> tuple[int, int]:
    """EASY's shadow time and extra processors for a head of size ``need``.

    Running jobs are taken by increasing estimated end, an end already in
    the past counting as ``now``, until ``need`` processors are available;
    the shadow time is the end reached. ``extra`` is every processor
    available at the shadow time (all jobs ending by then included) minus
    ``need``.
    """
    now = sim.now
    available = sim.free
    ends = sim.running_ends
    size = sim.size
    k = 0
    count = len(ends)
    shadow = now
    while available < need:
        if k >= count:
            raise RuntimeError(f"a job of {need} processors can never fit")
        end, j = ends[k]
        available += size[j]
        k += 1
        shadow = end if end > now else now
    while k < count and ends[k][0] <= shadow:
        available += size[ends[k][1]]
        k += 1
    return shadow, available - need


@dataclass
class _Reservations:
    """Conservative backfilling's plan.

    ``profile`` holds running jobs, busy blocks and every reservation;
    ``start`` maps each waiting job to its reserved start; ``times`` is a
    heap of ``(start, job)`` pairs, one pushed at every reservation and
    dropped lazily once it no longer matches ``start`` (so the earliest
    reservation and the jobs due now are found without a scan of the
    queue).
    """

    profile: Profile
    start: dict[int, int]
    times: list[tuple[int, int]] = field(default_factory=list)

    def place(self, j: int, t: int) -> None:
        """Reserve ``t`` for ``j`` (its rectangle is added by the caller)."""
        self.start[j] = t
        heapq.heappush(self.times, (t, j))
        if len(self.times) > 2 * len(self.start) + 64:
            # Mostly stale entries (compressions move reservations all the
            # time): rebuild from the live ones, amortised O(1) per push.
            self.times = [(time, job) for job, time in self.start.items()]
            heapq.heapify(self.times)

    def earliest(self) -> int | None:
        """The earliest reserved start, or ``None`` without reservations."""
        times, start = self.times, self.start
        while times and start.get(times[0][1]) != times[0][0]:
            heapq.heappop(times)  # stale: moved or started since
        return times[0][0] if times else None

    def earliest_after(self, now: int) -> int | None:
        """The earliest reserved start later than ``now`` (``None``: none)."""
        times = self.times
        held = []
        while (t := self.earliest()) is not None and t <= now:
            held.append(heapq.heappop(times))
        later = self.earliest()
        for entry in held:
            heapq.heappush(times, entry)
        return later

    def due(self, now: int) -> list[int]:
        """The jobs reserved at ``now`` or before (their entries stay)."""
        found: set[int] = set()
        times, start = self.times, self.start
        while (t := self.earliest()) is not None and t <= now:
            _, j = heapq.heappop(times)
            found.add(j)
        for j in found:
            heapq.heappush(times, (start[j], j))
        return list(found)


@dataclass(frozen=True)
class Conservative(EnginePolicy):
    """Conservative backfilling: every job keeps a reservation (see module)."""

    rule: ClassVar[str] = "conservative"

    def new_state(self, sim: Simulator) -> _Reservations:
        profile = Profile(0, sim.processors)
        for block in sim.blocks:
            profile.add(block.start, block.end, -block.size)
        return _Reservations(profile, {})

    def decide(self, sim: Simulator, state: _Reservations) -> None:
        now = sim.now
        profile = state.profile
        profile.advance(now)
        if sim.added_blocks:
            for block in sim.added_blocks:
                profile.add(block.start, block.end, -block.size)
            self._replan(sim, state)
        size = sim.size
        early = False
        for j, ended, estimated_end in sim.finished:
            if ended < estimated_end:
                profile.add(ended, estimated_end, size[j])
                early = True
        demoted = [j for j in sim.demoted if j in state.start]
        for j in demoted:
            # NQS's user limit demoted it: its reservation goes, and it is
            # placed again behind every other one (below).
            t = state.start.pop(j)
            profile.add(t, t + planned(sim.estimate[j]), size[j])
            early = True
        # The reservations due now start if they can; the others due are
        # void (their rectangles have left the plan).
        void, ended_at_once = self._start_due(sim, state, decide_void=True)
        compress = early or ended_at_once or bool(void)
        arrivals = sorted(sim.arrived, key=sim.rank.__getitem__)  # queue order
        while True:
            if compress:
                self._compress(sim, state, void)
                void = set()
            self._reserve_arrivals(sim, state, arrivals)
            arrivals = []
            self._reserve_last(sim, state, demoted)
            demoted = []
            # Jobs moved to now start. A job of zero duration ends as it
            # starts: its planned instant frees up, which may let others
            # move to now (compress again). One placed at now that cannot
            # start keeps its slot: it is void at the next pass.
            _, compress = self._start_due(sim, state, decide_void=False)
            if not compress:
                break
        # As in Mu'alem and Feitelson's simulator, a pass happens at every
        # reservation time, even when no job arrives or ends then; only the
        # current earliest one is asked for, so a reservation that moved
        # leaves no pass behind (jobs held at now need none: what holds them,
        # an overrun's end or a site rule's change, makes an instant).
        sim.plan_wake(state.earliest_after(now))

    @staticmethod
    def _replan(sim: Simulator, state: _Reservations) -> None:
        # Blocks granted during the run (advance reservations) may cover
        # planned slots: every reservation is placed again, in the order of
        # the old plan (ties in queue order), each at its earliest slot
        # given the blocks and the reservations placed before it.
        profile, reserved = state.profile, state.start
        size, estimate = sim.size, sim.estimate
        order = sorted(reserved, key=lambda j: (reserved[j], sim.rank[j]))
        for j in order:
            old = reserved[j]
            profile.add(old, old + planned(estimate[j]), size[j])
        reserved.clear()
        state.times.clear()
        for j in order:
            q, span = size[j], planned(estimate[j])
            found = profile.earliest(q, span)
            assert found is not None, "a job larger than the machine"
            t = found
            profile.add(t, t + span, -q)
            state.place(j, t)
            sim.reserve(j, t)

    @staticmethod
    def _reserve_arrivals(
        sim: Simulator, state: _Reservations, arrivals: list[int]
    ) -> None:
        # Only the jobs that arrived since the previous pass lack a
        # reservation (a job keeps one until it starts), so they are the
        # only ones looked at, in queue order.
        profile, reserved = state.profile, state.start
        size, estimate, job_state = sim.size, sim.estimate, sim.state
        for j in arrivals:
            if j not in reserved and job_state[j] == WAITING:
                q, span = size[j], planned(estimate[j])
                t = profile.earliest(q, span)
                assert t is not None, "a job larger than the machine"
                profile.add(t, t + span, -q)
                state.place(j, t)
                sim.reserve(j, t)
                sim.predict(j, t)  # the start announced at submission

    @staticmethod
    def _reserve_last(sim: Simulator, state: _Reservations, jobs: list[int]) -> None:
        # Demoted jobs: each at its earliest slot from the latest reserved
        # start on, behind every other reservation.
        profile = state.profile
        for j in jobs:
            q, span = sim.size[j], planned(sim.estimate[j])
            after = max(state.start.values(), default=sim.now)
            t = profile.earliest_from(after, q, span)
            assert t is not None, "a job larger than the machine"
            profile.add(t, t + span, -q)
            state.place(j, t)

    @staticmethod
    def _start_due(
        sim: Simulator, state: _Reservations, decide_void: bool
    ) -> tuple[set[int], bool]:
        # Start the jobs reserved at now that can start, in queue order.
        # With decide_void (once per pass, before any compression) the due
        # reservations that do not start are void: a reservation before now
        # (it did not start at its own pass) or one at now whose processors
        # are not free (an overrun holds them, a site rule or fragmentation
        # stops it). Their rectangles leave the plan and their jobs are
        # returned, to be placed again by the compression. Also returns
        # whether a started job ended at once (zero duration).
        now = sim.now
        profile, reserved = state.profile, state.start
        size, estimate = sim.size, sim.estimate
        void: set[int] = set()
        ended_at_once = False
        due = state.due(now)
        for j in sorted(due, key=sim.rank.__getitem__):
            t = reserved[j]
            if t == now and sim.can_start(j):
                sim.start(j)
                del reserved[j]
                if sim.end_time[j] == now:
                    profile.add(now, now + planned(estimate[j]), size[j])
                    ended_at_once = True
            elif decide_void:
                del reserved[j]
                profile.add(t, t + planned(estimate[j]), size[j])
                void.add(j)
        return void, ended_at_once

    @staticmethod
    def _compress(sim: Simulator, state: _Reservations, void: set[int]) -> None:
        # Mu'alem and Feitelson's compression: each reservation, in queue
        # order, moves to its earliest slot given all the others. The old
        # slot stays feasible, so nobody is delayed. A void job (its
        # rectangle already left the plan) is placed at its earliest slot
        # from now, at its queue position.
        now = sim.now
        profile = state.profile
        reserved = state.start
        size, estimate = sim.size, sim.estimate
        times, free = profile.times, profile.free
        # Jobs that could not move since the profile last changed, as
        # (size, span, end): the earliest window of that size and span in
        # the profile ends at `end`.
        stuck: list[tuple[int, int, float]] = []
        for j in sim.queue:
            q, span = size[j], planned(estimate[j])
            if j in void:
                t = profile.earliest(q, span)
                assert t is not None, "a job larger than the machine"
                stuck.clear()  # the profile changes
                profile.add(t, t + span, -q)
                state.place(j, t)
                continue
            old = reserved.get(j)
            if old is None or old <= now:
                continue  # started, new, or held at now
            k = bisect_left(times, old)
            if free[k - 1] >= q:
                # The window starting where the run of segments with q
                # free that ends at `old` starts fits: the job moves.
                t = profile.earliest_before(q, span, old)
            else:
                last = times[k - 1]  # the window must end by `last`
                if _cannot_move(q, span, last, times[0], stuck):
                    continue
                # Some instant before the reservation has q processors
                # free (cheap, in C).
                if max(free[:k]) < q:
                    continue
                t = profile.earliest(q, span)
                end = _INF if t is None else t + span
                if end > last:
                    stuck.append((q, span, end))
                    if len(stuck) > _STUCK_KEPT:
                        del stuck[0]
                    continue
            if t is None:
                continue  # no earlier window after all
            stuck.clear()  # the profile changes
            profile.add(old, old + span, q)
            profile.add(t, t + span, -q)
            state.place(j, t)


_STUCK_KEPT = 8
"""Jobs that could not move, remembered by :func:`_cannot_move`."""

_INF = float("inf")


def _cannot_move(
    size: int, span: int, last: int, now: int, stuck: list[tuple[int, int, float]]
) -> bool:
    """Whether a reservation provably cannot move earlier, in ``O(1)``.

    For a job whose reservation is at ``old``, when the profile segment
    just before ``old`` (starting at ``last``) has fewer than ``size``
    processors free, a window ``[t, min(t + span, old))`` that fits must
    end by ``last``: it is ``[t, t + span)`` with ``t + span <= last`` and
    ``size`` processors free throughout (the job's own rectangle, at
    ``old`` and later, plays no part). So the job moves iff the earliest
    window of ``size`` and ``span`` in the profile ends by ``last``
    (:meth:`Profile.earliest`, the same start as
    :meth:`Profile.earliest_before`). It cannot when

    - ``now + span > last``: no room before ``last``; or
    - on the same profile, the earliest window of some ``(q', s')`` with
      ``q' <= size`` and ``s' <= span`` ends after ``last``: the first
      ``s'`` of a window for this job would be one for ``(q', s')``
      (dominance).
    """
    if now + span > last:
        return True
    return any(q <= size and s <= span and last < end for q, s, end in stuck)


@dataclass(frozen=True)
class BestPackage(EnginePolicy):
    """Start the subset of waiting jobs that fills the most free processors."""

    limit: int = DEFAULT_PACKAGE_LIMIT

    rule: ClassVar[str] = "best-package"
    spec_keys: ClassVar[tuple[str, ...]] = (*COMMON_KEYS, "limit")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.limit, int) or self.limit < 1:
            raise ValueError(f"limit must be a positive integer, got {self.limit!r}")

    def decide(self, sim: Simulator, state: Any) -> None:
        free = sim.free
        if free == 0:
            return
        size = sim.size
        fitting = [j for j in sim.queue if size[j] <= free and sim.can_start(j)]
        if not fitting:
            return
        package = best_package([size[j] for j in fitting[: self.limit]], free)
        for k in package:
            if sim.can_start(fitting[k]):
                sim.start(fitting[k])
        # Fill what is left first-fit: jobs beyond the limit, or room a
        # chosen job could not take (no contiguous range).
        for j in fitting:
            if sim.free == 0:
                return
            if sim.state[j] == WAITING and sim.can_start(j):
                sim.start(j)


BITSET_CAPACITY = 1 << 16
"""Up to this capacity :func:`best_package` uses bitsets (fast, ``n`` bitsets
of ``capacity`` bits); beyond it, a table of the reachable sums."""

SPARSE_SUMS = 1 << 16
"""Most reachable sums the sparse table holds before :func:`best_package`
falls back to bitsets."""


def best_package(sizes: list[int], capacity: int) -> list[int]:
    """Indices of a subset of ``sizes`` with the largest sum ``<= capacity``.

    Exact subset sum. ``reach[i]`` is the set of sums of subsets of the first
    ``i`` sizes; backtracking from the best sum leaves out the latest item
    whenever the sum is reachable without it, so ties favour earlier items.

    Two representations of ``reach``, with the same answer:

    - bitsets (bit ``s`` of ``reach[i]`` set when ``s`` is reachable), time
      ``O(n * capacity / w)`` for machine word ``w``, memory ``n * capacity``
      bits: the choice for capacities up to :data:`BITSET_CAPACITY`;
    - beyond it, a table mapping each reachable sum to the shortest prefix
      reaching it (``s in reach[i]`` iff ``first[s] <= i``), memory in the
      number of reachable sums (at most ``2**n``), not in the capacity: a
      machine of ``10**9`` processors costs what its jobs cost (issue 17).
      When more than :data:`SPARSE_SUMS` sums are reachable the bitsets are
      used after all (subset sum is pseudo-polynomial: no exact method is
      small in both).
    """
    capacity = min(capacity, sum(sizes))  # bitsets in the sizes, not in m
    if capacity > BITSET_CAPACITY:
        first = _reachable_sums(sizes, capacity, SPARSE_SUMS)
        if first is not None:
            return _backtrack(sizes, max(first), lambda i, t: first[t] <= i)
    mask = (1 << (capacity + 1)) - 1
    reach = [1]
    bits = 1
    for s in sizes:
        bits = (bits | (bits << s)) & mask
        reach.append(bits)
    return _backtrack(
        sizes, bits.bit_length() - 1, lambda i, t: bool((reach[i] >> t) & 1)
    )


def _reachable_sums(
    sizes: list[int], capacity: int, limit: int
) -> dict[int, int] | None:
    """Each subset sum ``<= capacity`` with the length of the shortest prefix
    of ``sizes`` reaching it; ``None`` past ``limit`` sums."""
    first = {0: 0}
    for i, size in enumerate(sizes):
        new = [t + size for t in first if t + size <= capacity]
        for total in new:
            first.setdefault(total, i + 1)
        if len(first) > limit:
            return None
    return first


def _backtrack(
    sizes: list[int], total: int, reachable: Callable[[int, int], bool]
) -> list[int]:
    """The subset summing to ``total``: item ``i`` is left out whenever
    ``reachable(i, total)`` (the sum is reached by the first ``i`` items)."""
    chosen: list[int] = []
    for i in range(len(sizes) - 1, -1, -1):
        if reachable(i, total):
            continue
        chosen.append(i)
        total -= sizes[i]
    chosen.reverse()
    return chosen


# --------------------------------------------------------------------------
# Specs: the family record of the engine's rigid policies
# --------------------------------------------------------------------------

RIGID_NAMES: tuple[str, ...] = (
    *ORDER_NAMES,
    "firstfit",
    "easy",
    "conservative",
    "best-package",
)
"""The engine's rigid policies that a plain name gives (the queue orders
are strict list scheduling in that order)."""

_ALIASES: dict[str, str] = {
    "fifo": "fcfs",
    "sjf": "spt",
    "ljf": "lpt",
    "first-fit": "firstfit",
    "greedy": "firstfit",
    "bestpackage": "best-package",
    "package": "best-package",
}

_KEYS: dict[str, tuple[str, ...]] = {
    "strict": COMMON_KEYS,
    "firstfit": COMMON_KEYS,
    "easy": (*COMMON_KEYS, "select", "maxwait", "maxidle"),
    "backfill": Backfill.spec_keys,
    "conservative": COMMON_KEYS,
    "best-package": BestPackage.spec_keys,
    "easy-sjbf": COMMON_KEYS,
}
"""The keys each name takes (listed in this order in the errors)."""

_CLASSES: dict[str, type[Policy]] = {
    "strict": Strict,
    "firstfit": FirstFit,
    "easy": Backfill,
    "backfill": Backfill,
    "conservative": Conservative,
    "best-package": BestPackage,
}


def parse_rigid(parts: SpecParts) -> Policy:
    """The engine policy named by a spec's tokens (:data:`FAMILY`).

    Raises
    ------
    ValueError
        A key the policy does not take, a bad value.
    """
    name = _ALIASES.get(parts.name, parts.name)
    keys = _KEYS["strict" if name in ORDER_NAMES else name]
    RIGID_OPTIONS.check(parts, keys)
    if name in ORDER_NAMES:
        if "order" in parts.params:
            raise parts.error(
                f"the name {name!r} fixes the order; use strict:order=NAME"
            )
        return Strict(**RIGID_OPTIONS.read(parts, ("oracle", "seed"), order=name))
    if name == "easy-sjbf":
        return Backfill(**RIGID_OPTIONS.read(parts, keys, select="shortest"))
    values = RIGID_OPTIONS.read(parts, keys)
    if values.get("depth", 1) is None:
        if any(k in parts.params for k in ("select", "maxwait", "maxidle")):
            raise ValueError("select, maxwait and maxidle need a finite depth")
        return Conservative(**{key: values[key] for key in COMMON_KEYS})
    return _CLASSES[name](**values)


FAMILY = Family(
    parse_rigid,
    names=RIGID_NAMES,
    generic=("strict", "backfill"),
    presets=("easy-sjbf",),
    aliases=tuple(_ALIASES),
)
"""The engine's rigid policies in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
