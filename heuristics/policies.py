"""The policy family: a queue order combined with a start rule.

Every policy is a small immutable class with one decision method,
``decide(sim, state)``, called once per scheduling pass: it reads the
simulator (:class:`~optsched.heuristics.engine.Simulator`) and calls
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
    its error). When a job ends earlier
    than its estimate the schedule is *compressed*: in queue order, each
    reservation is moved to its earliest slot, which is never later than
    the current one. As in their simulator, a pass happens at every
    reservation time, even when no job arrives or ends then. A reservation
    that could not be honoured (an overrun still holds the processors, or
    no contiguous range exists) is placed again from now on.
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
estimate first; ``smallest`` smallest size first (ties in queue order).
Because a candidate that is not eligible never becomes eligible later in
the same pass (free processors and extra processors only shrink), one scan
in selection order equals repeatedly starting the best eligible candidate.

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

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from optsched.heuristics.engine import WAITING, Simulator
from optsched.heuristics.orders import ORDER_NAMES
from optsched.packing import Profile

SELECT_NAMES: tuple[str, ...] = (
    "queue",
    "submit",
    "largest",
    "largest-area",
    "smallest",
)
"""Backfill candidate selection rules."""

_SPEC_KEYS = (
    "order",
    "depth",
    "oracle",
    "select",
    "maxwait",
    "maxidle",
    "limit",
    "seed",
)

DEFAULT_PACKAGE_LIMIT = 128
"""Jobs the Best Package dynamic programme looks at (queue order)."""


@dataclass(frozen=True)
class Policy:
    """Base class: a queue order and a start rule.

    Parameters
    ----------
    order
        Queue order name (:mod:`optsched.heuristics.orders`).
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

        Parameters with their default value are left out; the others come
        in the order ``order, depth, oracle, select, maxwait, maxidle,
        limit, seed``.
        """
        name, params = self._name_and_params()
        if self.oracle:
            params["oracle"] = ""
        if self.seed is not None:
            params["seed"] = str(self.seed)
        items = [
            key if value == "" else f"{key}={value}"
            for key in _SPEC_KEYS
            if (value := params.get(key)) is not None
        ]
        return name + (":" + ",".join(items) if items else "")

    def _name_and_params(self) -> tuple[str, dict[str, str]]:
        params = {} if self.order == "fcfs" else {"order": self.order}
        return self.rule, params

    def __str__(self) -> str:
        return self.spec

    # -- decisions ---------------------------------------------------------
    @property
    def needs_profile(self) -> bool:
        """Whether the simulator must keep the profile of running jobs
        (:meth:`~optsched.heuristics.engine.Simulator.base_profile`); it
        always does when the machine has busy blocks."""
        return False

    def new_state(self, sim: Simulator) -> Any:
        """Per-run memory (``None`` for memoryless policies)."""
        return None

    def decide(self, sim: Simulator, state: Any) -> None:
        """Start the jobs that should start now (``sim.start``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Strict(Policy):
    """Only the head of the queue may start (list scheduling without skipping)."""

    rule: ClassVar[str] = "strict"

    def _name_and_params(self) -> tuple[str, dict[str, str]]:
        return self.order, {}

    def decide(self, sim: Simulator, state: Any) -> None:
        size = sim.size
        simple = sim.simple
        for j in sim.queue:
            if size[j] > sim.free or not (simple or sim.can_start(j)):
                return
            sim.start(j)


@dataclass(frozen=True)
class FirstFit(Policy):
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
class Backfill(Policy):
    """Backfilling with ``depth`` reservations recomputed at every pass.

    ``depth=1`` is EASY. See the module docstring for the rules, the
    selection variants and the two limits.
    """

    depth: int = 1
    select: str = "queue"
    maxwait: int | None = None
    maxidle: float | None = None

    rule: ClassVar[str] = "backfill"

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

    def _name_and_params(self) -> tuple[str, dict[str, str]]:
        name, params = super()._name_and_params()
        if self.depth != 1:
            name, params["depth"] = "backfill", str(self.depth)
        else:
            name = "easy"
        if self.select != "queue":
            params["select"] = self.select
        if self.maxwait is not None:
            params["maxwait"] = str(self.maxwait)
        if self.maxidle is not None:
            params["maxidle"] = str(float(self.maxidle))
        return name, params

    # -- decisions ---------------------------------------------------------
    def decide(self, sim: Simulator, state: Any) -> None:
        if self.depth == 1 and not sim.blocks_pending:
            self._decide_easy(sim)
        else:
            self._decide_with_profile(sim)

    def _decide_easy(self, sim: Simulator) -> None:
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
        estimate = sim.estimate
        now = sim.now
        for c in self._candidates(sim, queue, i + 1):
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

    def _decide_with_profile(self, sim: Simulator) -> None:
        profile = sim.base_profile()
        queue = sim.queue
        now = sim.now
        size, estimate = sim.size, sim.estimate
        reserved = 0
        head: int | None = None
        stop = len(queue)
        end_time = sim.end_time
        for pos, j in enumerate(queue):
            if reserved == self.depth:
                stop = pos
                break
            q, d = size[j], estimate[j]
            # A job of zero duration that starts now delays nobody: it gives
            # its processors back at once.
            if (
                q <= sim.free
                and (d == 0 or profile.fits(now, d, q))
                and sim.can_start(j)
            ):
                sim.start(j)
                if end_time[j] > now:  # else it already ended
                    profile.add(now, now + d, -q)
                continue
            span = planned(d)
            t = profile.earliest(q, span)
            assert t is not None, "a job larger than the machine"
            profile.add(t, t + span, -q)
            sim.reserve(j, t)
            reserved += 1
            if head is None:
                head = j
        if stop >= len(queue) or sim.free == 0:
            return
        if head is not None and self._limited(sim, head):
            return
        for c in self._candidates(sim, queue, stop):
            q, d = size[c], estimate[c]
            if (
                q <= sim.free
                and (d == 0 or profile.fits(now, d, q))
                and sim.can_start(c)
            ):
                sim.start(c)
                if end_time[c] > now:  # else it already ended
                    profile.add(now, now + d, -q)
                if sim.free == 0:
                    return

    def _candidates(self, sim: Simulator, queue: list[int], first: int) -> list[int]:
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
        return sorted(rest, key=lambda j: (-size[j] * estimate[j], position[j]))

    def _limited(self, sim: Simulator, head: int) -> bool:
        if self.maxwait is not None and sim.now - sim.release[head] >= self.maxwait:
            return True
        return self.maxidle is not None and sim.free > self.maxidle * sim.processors


def planned(estimate: int) -> int:
    """Length a reservation holds in the profile: the estimate, at least 1.

    A job of zero duration still needs its processors at its start instant
    ``t``; with integer times, the jobs running at ``t`` are exactly those
    overlapping ``[t, t + 1)``, so reserving ``[t, t + 1)`` protects the
    instant (and wastes nothing: the reservation is released when the job
    starts).
    """
    return estimate if estimate > 0 else 1


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
    profile: Profile
    start: dict[int, int]


@dataclass(frozen=True)
class Conservative(Policy):
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
        size = sim.size
        early = False
        for j, ended, estimated_end in sim.finished:
            if ended < estimated_end:
                profile.add(ended, estimated_end, size[j])
                early = True
        reserved = state.start
        # A reservation in the past was not honoured (an overrun kept its
        # processors, or no contiguous range was free): place it again.
        compress = early or (reserved and min(reserved.values()) < now)
        while True:
            if compress:
                self._compress(sim, state)
            self._reserve_arrivals(sim, state)
            # A job of zero duration ends as it starts: its planned instant
            # frees up, which may let others move to now (compress again).
            compress = self._start_due(sim, state)
            if not compress:
                break
        if reserved:
            # As in Mu'alem and Feitelson's simulator, a job starts at its
            # reservation even when no job arrives or ends then (e.g. the
            # reservation was set by an estimate that a job overran).
            sim.wake_at(min(reserved.values()))

    @staticmethod
    def _reserve_arrivals(sim: Simulator, state: _Reservations) -> None:
        profile, reserved = state.profile, state.start
        size, estimate, job_state = sim.size, sim.estimate, sim.state
        for j in sim.queue:
            if j not in reserved and job_state[j] == WAITING:
                q, span = size[j], planned(estimate[j])
                t = profile.earliest(q, span)
                assert t is not None, "a job larger than the machine"
                profile.add(t, t + span, -q)
                reserved[j] = t
                sim.reserve(j, t)
                sim.predict(j, t)  # the start announced at submission

    @staticmethod
    def _start_due(sim: Simulator, state: _Reservations) -> bool:
        # Start the jobs reserved at now; True if one ended at once.
        now = sim.now
        profile, reserved = state.profile, state.start
        ended_at_once = False
        for j in sim.queue:
            if reserved.get(j) == now and sim.can_start(j):
                sim.start(j)
                del reserved[j]
                if sim.end_time[j] == now:
                    span = planned(sim.estimate[j])
                    profile.add(now, now + span, sim.size[j])
                    ended_at_once = True
        return ended_at_once

    @staticmethod
    def _compress(sim: Simulator, state: _Reservations) -> None:
        # Mu'alem and Feitelson's compression: each reservation, in queue
        # order, moves to its earliest slot given all the others. The old
        # slot stays feasible, so nobody is delayed (stale reservations,
        # already in the past, are placed again from now).
        now = sim.now
        profile = state.profile
        reserved = state.start
        size, estimate = sim.size, sim.estimate
        times, free = profile.times, profile.free
        for j in sim.queue:
            old = reserved.get(j)
            if old is None or old == now:
                continue
            q, span = size[j], planned(estimate[j])
            if old > now:
                # Cheap necessary condition, in C: some instant before the
                # reservation has q processors free.
                if max(free[: bisect_left(times, old)]) < q:
                    continue
                t = profile.earliest_before(q, span, old)
                if t is None:
                    continue
            else:
                t = None  # stale: place it again from now
            profile.add(old, old + span, q)
            if t is None:
                t = profile.earliest(q, span)
                assert t is not None
            profile.add(t, t + span, -q)
            reserved[j] = t


@dataclass(frozen=True)
class BestPackage(Policy):
    """Start the subset of waiting jobs that fills the most free processors."""

    limit: int = DEFAULT_PACKAGE_LIMIT

    rule: ClassVar[str] = "best-package"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.limit, int) or self.limit < 1:
            raise ValueError(f"limit must be a positive integer, got {self.limit!r}")

    def _name_and_params(self) -> tuple[str, dict[str, str]]:
        name, params = super()._name_and_params()
        if self.limit != DEFAULT_PACKAGE_LIMIT:
            params["limit"] = str(self.limit)
        return name, params

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
