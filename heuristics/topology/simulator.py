"""An exact event simulator for machines with node speeds and SMP nodes.

The flat engine (:mod:`optsched.heuristics.engine.core`) knows identical
processors only. This simulator runs on *any* machine without busy blocks:
flat, with a speed per processor (Rassmann 2020, after Arndt et al. 2000),
with SMP nodes and a span limit (Wang, seed 004), or both. It is driven by a
*selection function* (:mod:`optsched.heuristics.topology.combinators`) that names at
most one waiting job to start now.

Step semantics (Rassmann §2.4, §3.1.1; the engine's convention)
---------------------------------------------------------------
At each event time ``t``: finish every running job whose actual end is
``<= t``; admit the arrivals with release ``<= t``; then call the selection
function repeatedly at ``t``, starting the job it names, until it names
none; jump to the next arrival or completion. Intervals are half-open.

A job started on the processor set ``S`` runs
``machine.run_time(runtime, S) = ceil(p / sum_{k in S} s_k * inflation(span))``
seconds (:mod:`optsched.nodes`); it is never killed, even when it overruns
its estimate. Schedulers see estimates only:

- a running job's estimated end ``c_hat = s + ceil(p_hat * f(S))``, with
  ``f(S) = inflation(|S|, span(S)) / sum_{k in S} s_k``;
- a waiting job's ``est(j) = p_hat_j * f(S_j)``, *unrounded* (an exact
  fraction), where ``S_j`` is the set the placement would give it now
  (``est(j) = p_hat_j`` on a flat machine).

A job whose actual run time is 0 gives its processors back at once (the
engine's rule), so a job selected next at the same instant may use them.

Moldable jobs
-------------
A moldable job runs in its requested mode unless the selection function
chose another before starting it, through :meth:`NodeSimulator.choose_mode`,
the engine's "choose a mode at start" hook
(:meth:`optsched.heuristics.engine.core.Simulator.choose_mode`): the
combinators start the request, the mode-choosing policies
(:mod:`optsched.heuristics.topology.modes`) choose. A mode ``(q, t)`` has
the work :func:`~optsched.topology.machines.mode_work` (``q t`` with
speeds, its run time being on speed-1 processors) and starts on the ``q``
processors the placement gives, within the span limit.

Site calendars and the user limit
---------------------------------
On a machine with a site calendar a job fits only when the site's rules
let it start too (:class:`optsched.heuristics.site.gate.SiteGate`, the
engine's implementation of them: sequential queues, the batch capacity and
largest job by time of week, counted in processors on every machine, and
NQS's user limit), tested after the processors, as the engine's
``can_start`` does. The calls to the selection function at one instant
make one *pass*, as the engine's one call of a policy: a job the user
limit refused in the pass is not tried again in it (the engine's policies
try each job once per pass); when the pass ends those jobs move to the end
of every base order and the selection function is called again, until no
job moves; a job gets its ranks back when its user's account is emptied.
While jobs wait, the simulator wakes when the calendar next changes. A
head held back by the rules while it fits on the processors has the
shadow time now (the engine's EASY: :func:`~optsched.heuristics.rigid.
policies.easy_shadow`). The waiting jobs are then kept in order by
:class:`~optsched.heuristics.topology.ranked.RankedOrder` and scanned (the
buckets below answer by size, and admission reads queues and users too).

Placement plug-ins (``placement=``)
-----------------------------------
``fastest``
    The ``pi`` fastest free processors, speed descending then id ascending
    (Arndt et al. 2000 §3.2; Rassmann's ``Simulation.py``).
``lowest``
    The lowest free processor ids (what the flat engine does).
``smp``
    Nodes with the most free processors first (ties: the lower node id),
    the lowest free CPU ids inside a node, until ``pi`` are taken. Taking
    the fullest nodes first reaches the fewest nodes any set can touch, so
    the job may start iff the ``k = span_limit(pi)`` nodes with the most
    free processors hold ``pi`` together (:meth:`optsched.nodes.Nodes.fits`;
    Wang §3, the seed notes' B4).
``auto``
    ``smp`` when the machine has nodes, else ``fastest`` when it has speeds,
    else ``lowest``.

``fastest`` and ``lowest`` count processors only, so they are refused on
SMP nodes with a span limit (they may pick a set beyond the limit).

Fits tests are *grouped*: ``smp`` counts free processors per node and a
job of ``n`` may use its ``k(n) = span_limit(n)`` fullest nodes; the other
placements see the machine as one group (``k = 1``). Every "fits now" and
"fits at the shadow time" test is this one rule on per-group free counts.

Cost per decision
-----------------
The waiting jobs of every base order are kept in buckets by size; a bucket
is a segment tree over its jobs in that order holding each waiting job's
estimate (:class:`_Bucket`). All jobs of one size get the same processor
set ``S_n`` now, so ``est(j) <= gap`` reads ``p_hat_j <= H_n =
floor(gap / f(S_n))`` inside a bucket, one tree descent. A search visits
the sizes ``<= free`` that are waiting (at most one bucket per size), so a
pass in which nothing can start costs ``O(sizes * log n)``, not a scan of a
long queue.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from optsched.families import feature
from optsched.heuristics.site.gate import SiteGate
from optsched.heuristics.topology.ranked import RankedOrder
from optsched.instance import Instance, Job, Machine, Mode
from optsched.schedule import Placement, Schedule
from optsched.site.chains import chain_graph
from optsched.topology.machines import mode_work, request_work

PLACEMENTS: tuple[str, ...] = ("auto", "fastest", "lowest", "smp")
"""Names of the placement plug-ins (``placement=``)."""

_INF = float("inf")
_ONE = Fraction(1)
_LONGEST = 2**63  # above every estimate (at most 2**53), below infinity

# Job states.
PENDING, WAITING, RUNNING, DONE = 0, 1, 2, 3


def resolve_placement(placement: str, machine: Machine) -> str:
    """The concrete placement ``placement`` names on ``machine``.

    Raises
    ------
    ValueError
        An unknown name, ``smp`` on a machine without nodes, or ``fastest``
        / ``lowest`` on nodes with a span limit (they count processors and
        may break it).
    """
    if placement not in PLACEMENTS:
        raise ValueError(
            f"unknown placement {placement!r}; valid: {', '.join(PLACEMENTS)}"
        )
    nodes = machine.nodes
    if placement == "auto":
        if nodes is not None:
            return "smp"
        return "fastest" if machine.speeds is not None else "lowest"
    if placement == "smp" and nodes is None:
        raise ValueError("placement smp needs a machine with SMP nodes")
    if placement != "smp" and nodes is not None and nodes.tight is not None:
        raise ValueError(
            f"placement {placement} counts processors only: on SMP nodes with a "
            "span limit use placement smp (or auto)"
        )
    return placement


def check_machine(instance: Instance) -> None:
    """Refuse what this simulator does not model: busy blocks, contiguous
    allocation (``ValueError``, one line: the family table's words, which
    ``simulate`` gives before it gets here)."""
    for name in ("busy-blocks", "contiguous"):
        row = feature(name)
        if row.present(instance):
            assert row.unsimulated is not None
            raise ValueError(row.unsimulated("", "nodes"))


class Pool:
    """The free processors of a machine and one placement plug-in.

    Groups are the units of the fits rule: the nodes under ``smp``, one
    group holding the whole machine otherwise. ``group_free[g]`` counts the
    free processors of group ``g``. Answers that depend only on the free
    set (:meth:`choose`, :meth:`factor`, :meth:`fits`) are cached until the
    next :meth:`take` or :meth:`give`.
    """

    def __init__(self, machine: Machine, placement: str) -> None:
        self.machine = machine
        self.placement = resolve_placement(placement, machine)
        self.processors = machine.processors
        self.free = machine.processors
        speeds = machine.exact_speeds()
        self._speeds = speeds
        # Speeds as integers over one denominator: sums of speeds stay
        # integers (a sum of 100 fractions per decision would dominate).
        self._scale = math.lcm(*(s.denominator for s in speeds)) if speeds else 1
        self._scaled = (
            [int(s * self._scale) for s in speeds] if speeds is not None else None
        )
        self._nodes = machine.nodes
        self._smp = self.placement == "smp"
        if self._smp:
            assert self._nodes is not None
            cpus = self._nodes.cpus
            self._cpus = cpus
            self.group_free = [cpus] * self._nodes.count
            self._node_cpus = [
                list(range(g * cpus, (g + 1) * cpus)) for g in range(self._nodes.count)
            ]
        else:
            self._cpus = self.processors
            self.group_free = [self.processors]
            if self.placement == "fastest" and speeds is not None:
                order = sorted(range(self.processors), key=lambda p: (-speeds[p], p))
            else:
                order = list(range(self.processors))
            self._order = order  # processor of each priority
            self._priority = [0] * self.processors
            for r, p in enumerate(order):
                self._priority[p] = r
            self._free_priorities = list(range(self.processors))
        self._limits = [self._limit(n) for n in range(self.processors + 1)]
        # Answers for the current free set, dropped at every take and give.
        self._chosen: dict[int, tuple[int, ...] | None] = {}
        self._groups: dict[int, list[tuple[int, int]]] = {}
        self._factors: dict[int, Fraction] = {}
        self._ranked: tuple[list[int], list[int]] | None = None
        self._speed_prefix: list[int] | None = None

    # -- the fits rule -------------------------------------------------
    def _limit(self, size: int) -> int:
        # Groups a job of `size` may use: span_limit under smp, else 1.
        if self._smp:
            assert self._nodes is not None
            return self._nodes.span_limit(size)
        return 1

    def _nodes_ranked(self) -> tuple[list[int], list[int]]:
        # smp: the nodes in placement order (most free first, then the
        # lower id) and the prefix sums of their free counts.
        ranked = self._ranked
        if ranked is None:
            free = self.group_free
            order = sorted(range(len(free)), key=lambda g: (-free[g], g))
            prefix = [0]
            for g in order:
                prefix.append(prefix[-1] + free[g])
            ranked = self._ranked = (order, prefix)
        return ranked

    def fits(self, size: int) -> bool:
        """Whether a job of ``size`` may start now (count and span rule)."""
        if size > self.free:
            return False
        if not self._smp:
            return True
        return self._nodes_ranked()[1][self._limits[size]] >= size

    def fits_counts(self, size: int, counts: Sequence[int], total: int) -> bool:
        """The fits rule on other per-group free counts (a future instant);
        ``total`` is their sum."""
        if total < size:
            return False
        k = self._limits[size]
        if k >= len(counts):
            return True
        return sum(sorted(counts, reverse=True)[:k]) >= size

    # -- placement ------------------------------------------------------
    def groups(self, size: int) -> list[tuple[int, int]]:
        """``(group, processors)`` pairs of the set :meth:`choose` gives a
        job of ``size`` (which must fit); no set is built for them."""
        if not self._smp:
            return [(0, size)]
        groups = self._groups.get(size)
        if groups is None:
            free = self.group_free
            groups = []
            need = size
            for g in self._nodes_ranked()[0]:
                k = free[g] if free[g] < need else need
                groups.append((g, k))
                need -= k
                if not need:
                    break
            self._groups[size] = groups
        return groups

    def choose(self, size: int) -> tuple[int, ...] | None:
        """The processors a job of ``size`` gets now (sorted), or ``None``
        when it may not start."""
        chosen = self._chosen
        if size in chosen:
            return chosen[size]
        procs: tuple[int, ...] | None = None
        if not self.fits(size):
            pass
        elif self._smp:
            cpus = self._node_cpus
            procs = tuple(sorted(p for g, k in self.groups(size) for p in cpus[g][:k]))
        else:
            order = self._order
            procs = tuple(sorted(order[r] for r in self._free_priorities[:size]))
        chosen[size] = procs
        return procs

    def factor(self, size: int) -> Fraction:
        """``f(S) = inflation(size, span(S)) / sum_{k in S} s_k`` of the set
        :meth:`choose` gives (the job must fit): its run time is
        ``ceil(work * f)`` and its ``est`` is ``p_hat * f``."""
        factor = self._factors.get(size)
        if factor is not None:
            return factor
        factor = _ONE
        nodes = self._nodes
        if nodes is not None and nodes.level:
            if self._smp:
                span = len(self.groups(size))
            else:
                procs = self.choose(size)
                assert procs is not None, "factor of a job that does not fit"
                span = nodes.span(procs)
            factor = nodes.inflation(size, span)
        if self._scaled is not None:
            factor = factor * Fraction(self._scale, self._speed_of(size))
        self._factors[size] = factor
        return factor

    def _speed_of(self, size: int) -> int:
        # The scaled speed sum of the set choose(size) gives.
        scaled = self._scaled
        assert scaled is not None
        if self._smp:
            procs = self.choose(size)
            assert procs is not None, "speed of a job that does not fit"
            return sum(scaled[p] for p in procs)
        # The first `size` free processors in priority order: a prefix sum.
        prefix = self._speed_prefix
        if prefix is None:
            prefix = [0]
            order = self._order
            for r in self._free_priorities:
                prefix.append(prefix[-1] + scaled[order[r]])
            self._speed_prefix = prefix
        return prefix[size]

    def group_counts(self, procs: Sequence[int]) -> list[tuple[int, int]]:
        """``(group, processors)`` pairs of any processor set."""
        if not self._smp:
            return [(0, len(procs))]
        counts: dict[int, int] = {}
        cpus = self._cpus
        for p in procs:
            g = p // cpus
            counts[g] = counts.get(g, 0) + 1
        return list(counts.items())

    def take(self, procs: Sequence[int]) -> None:
        """Mark ``procs`` busy (they must be free)."""
        self._changed()
        self.free -= len(procs)
        if self._smp:
            cpus = self._cpus
            for p in procs:
                g = p // cpus
                line = self._node_cpus[g]
                del line[bisect_left(line, p)]
                self.group_free[g] -= 1
            return
        self.group_free[0] -= len(procs)
        line, priority = self._free_priorities, self._priority
        for p in procs:
            del line[bisect_left(line, priority[p])]

    def give(self, procs: Sequence[int]) -> None:
        """Mark ``procs`` free again."""
        self._changed()
        self.free += len(procs)
        if self._smp:
            cpus = self._cpus
            for p in procs:
                g = p // cpus
                insort(self._node_cpus[g], p)
                self.group_free[g] += 1
            return
        self.group_free[0] += len(procs)
        for p in procs:
            insort(self._free_priorities, self._priority[p])

    def _changed(self) -> None:
        if self._chosen:
            self._chosen = {}
        if self._groups:
            self._groups = {}
        if self._factors:
            self._factors = {}
        self._ranked = None
        self._speed_prefix = None


def _ceil_times(work: int, factor: Fraction) -> int:
    # ceil(work * factor) in integers.
    return -(-work * factor.numerator // factor.denominator)


class _Bucket:
    """The jobs of one size in one base order: a segment tree of minima.

    Slot ``i`` is the ``i``-th job of the size in the order; a waiting job's
    leaf holds its estimate, any other job's infinity; an inner node holds
    the minimum of its subtree. :meth:`first_within` descends to the first
    waiting job whose estimate is at most a bound (segment trees: Bentley
    1977).
    """

    __slots__ = ("jobs", "leaves", "tree")

    def __init__(self, jobs: list[int]) -> None:
        self.jobs = jobs
        self.leaves = 1 << max(len(jobs) - 1, 0).bit_length()
        self.tree: list[float] = [_INF] * (2 * self.leaves)

    def set(self, slot: int, value: float) -> None:
        """Slot ``slot`` holds ``value`` (infinity: not waiting)."""
        tree = self.tree
        v = self.leaves + slot
        tree[v] = value
        v >>= 1
        while v:
            a, b = tree[2 * v], tree[2 * v + 1]
            low = a if a < b else b
            if tree[v] == low:
                return
            tree[v] = low
            v >>= 1

    def first_within(self, bound: float) -> int | None:
        """The first waiting job (in the order) with estimate ``<= bound``."""
        tree = self.tree
        if bound > _LONGEST:
            bound = _LONGEST  # "any estimate": still below an empty leaf
        if tree[1] > bound:
            return None
        v = 1
        leaves = self.leaves
        while v < leaves:
            v *= 2
            if tree[v] > bound:
                v += 1
        return self.jobs[v - leaves]


class OrderIndex:
    """The waiting jobs in one base order (``rank``: smaller is earlier).

    :meth:`head` is the first waiting job (a heap with lazy deletion);
    :meth:`bucket` holds the jobs of one size (:class:`_Bucket`).
    """

    def __init__(
        self, rank: Sequence[int], size: Sequence[int], estimate: Sequence[int]
    ) -> None:
        self.rank = rank
        self._estimate = estimate
        # The sizes the buckets were built with: a mode chosen later
        # (NodeSimulator.choose_mode) leaves the job in its request's
        # bucket, which only the combinators, who never choose, search.
        size = list(size)
        members: dict[int, list[int]] = {}
        for j in sorted(range(len(rank)), key=rank.__getitem__):
            members.setdefault(size[j], []).append(j)
        self._buckets = {q: _Bucket(jobs) for q, jobs in members.items()}
        self._slot = [0] * len(rank)
        for jobs in members.values():
            for i, j in enumerate(jobs):
                self._slot[j] = i
        self._size = size
        self._heap: list[tuple[int, int]] = []

    def add(self, j: int) -> None:
        """Job ``j`` starts waiting."""
        self._buckets[self._size[j]].set(self._slot[j], self._estimate[j])
        heapq.heappush(self._heap, (self.rank[j], j))

    def remove(self, j: int) -> None:
        """Job ``j`` no longer waits (the heap forgets it lazily)."""
        self._buckets[self._size[j]].set(self._slot[j], _INF)

    def head(self, state: Sequence[int]) -> int | None:
        """The first waiting job, or ``None``."""
        heap = self._heap
        while heap and state[heap[0][1]] != WAITING:
            heapq.heappop(heap)
        return heap[0][1] if heap else None

    def bucket(self, size: int) -> _Bucket:
        """The jobs of ``size`` (it must be some job's size)."""
        return self._buckets[size]


@dataclass
class Shadow:
    """The shadow time of a blocked head and the free counts then.

    ``time`` is ``t*``; ``counts[g]`` is what group ``g`` has free at
    ``t*`` (free now plus the processors of every running job accumulated
    by the shadow loop); ``total`` is their sum; ``need`` is the head's
    size.
    """

    time: int
    counts: list[int]
    total: int
    need: int


class NodeSimulator:
    """State of one run and the interface selection functions use.

    Jobs are numbered ``0 .. n-1`` by ``(release, id)``; ``size``,
    ``estimate``, ``release``, ``job_id`` are lists indexed by that number.

    Parameters
    ----------
    instance
        Jobs and a machine without busy blocks.
    placement
        A name of :data:`PLACEMENTS`.
    orders
        Named base orders: per job its rank (smaller is earlier; ranks are
        distinct). Selection functions query them by name.
    """

    def __init__(
        self,
        instance: Instance,
        placement: str,
        orders: dict[str, Sequence[int]] | None = None,
    ) -> None:
        check_machine(instance)
        self.machine = instance.machine
        self.pool = Pool(self.machine, placement)
        jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
        self.jobs: list[Job] = jobs
        self.job_id = [j.id for j in jobs]
        self.release = [j.release for j in jobs]
        self.size = [j.size for j in jobs]
        works = [request_work(self.machine, j) for j in jobs]
        self.estimate = [estimated for _, estimated in works]
        self.runtime = [work for work, _ in works]
        # What the user limit charges per processor: the requested time of
        # the job's mode (a rigid job's estimate, its work with speeds), as
        # the checker's rule 14 reads it, not the mode's work.
        self._charged = [j.requested for j in jobs]
        n = len(jobs)
        self.state = [PENDING] * n
        self.start_time = [-1] * n
        self.end_time = [-1] * n
        self.estimated_end = [-1] * n
        self.held: list[tuple[int, ...]] = [()] * n
        self._groups: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.now = 0
        self.waiting = 0
        self.running: list[tuple[int, int]] = []
        """Sorted ``(estimated end c_hat, job)`` of the running jobs."""
        self._sizes: list[int] = []  # sizes with a waiting job, ascending
        self._size_count: dict[int, int] = {}
        calendar = self.machine.calendar
        self._gate = (
            None
            if calendar is None
            else SiteGate(
                calendar,
                self.machine.processors,
                self.size,
                [j.queue for j in jobs],
                [j.user for j in jobs],
                self._charged,
            )
        )
        self._wakes: list[int] = []  # instants the calendar may change at
        self._next_rank = n  # a demoted job's rank: after every other
        self._orders: dict[str, OrderIndex | RankedOrder] = {}
        for name, rank in (orders or {}).items():
            self.add_order(name, rank)
        self._chains(jobs)

    def add_order(self, name: str, rank: Sequence[int]) -> None:
        """Register a base order (before :meth:`run`)."""
        self._orders[name] = (
            OrderIndex(rank, self.size, self.estimate)
            if self._gate is None
            else RankedOrder(rank)
        )

    # -- the event loop -----------------------------------------------
    def run(self, select: Callable[[NodeSimulator], int | None]) -> None:
        """Simulate every job; ``select(self)`` names the next job to start
        now (it must fit) or ``None``.

        A job with a predecessor (job chains) arrives at its predecessor's
        end plus the think time, never before its own release, as in the
        engine (:mod:`optsched.heuristics.engine.core`); under a site
        calendar, see the module notes."""
        release = self.release
        first = [j for j in range(len(release)) if j not in self._predecessor]
        completions: list[tuple[int, int]] = []
        arrivals, wakes = self._arrivals, self._wakes
        upcoming = 0
        while upcoming < len(first) or completions or arrivals or wakes:
            now = min(
                completions[0][0] if completions else math.inf,
                release[first[upcoming]] if upcoming < len(first) else math.inf,
                arrivals[0][0] if arrivals else math.inf,
                wakes[0] if wakes else math.inf,
            )
            assert now != math.inf
            self.now = int(now)
            while completions and completions[0][0] <= now:
                self._finish(heapq.heappop(completions)[1])
            while upcoming < len(first) and release[first[upcoming]] <= now:
                self._arrive(first[upcoming])
                upcoming += 1
            while arrivals and arrivals[0][0] <= now:
                self._arrive(heapq.heappop(arrivals)[1])
            while wakes and wakes[0] <= now:
                heapq.heappop(wakes)
            if self._gate is None:
                self._pass(select, completions)
            else:
                self._site_passes(select, completions)
        if self.waiting:
            raise RuntimeError(f"node simulation stalled at {self.now}")

    def _pass(
        self, select: Callable[[NodeSimulator], int | None], completions: list
    ) -> None:
        # Start what `select` names now, until it names nobody.
        now = self.now
        while self.waiting:
            j = select(self)
            if j is None:
                break
            end = self._start(j)
            if end > now:
                heapq.heappush(completions, (end, j))

    def _site_passes(
        self, select: Callable[[NodeSimulator], int | None], completions: list
    ) -> None:
        # The engine's instant under a calendar (module notes): settle the
        # user accounts, one pass, a pass again after each demotion, and a
        # wake when the calendar changes while jobs wait.
        gate = self._gate
        assert gate is not None
        self._restore(gate.close_instant(self.now))
        if not self.waiting:
            return
        self._pass(select, completions)
        while gate.refused and self._demote():
            self._pass(select, completions)
        if self.waiting:
            wake = gate.next_change(self.now)
            if wake > self.now and wake not in self._wakes:
                heapq.heappush(self._wakes, wake)

    def _ranked(self) -> list[RankedOrder]:
        # The orders under a calendar, by name (a fixed order).
        orders = [self._orders[name] for name in sorted(self._orders)]
        assert all(isinstance(o, RankedOrder) for o in orders)
        return orders  # type: ignore[return-value]

    def _demote(self) -> bool:
        """Move the jobs the user limit refused in the pass to the end of
        every order (:meth:`SiteGate.demote`); whether any moved."""
        gate = self._gate
        assert gate is not None
        orders = self._ranked()
        moved = gate.demote(
            lambda j: self.state[j] == WAITING,
            lambda j: tuple(o.rank[j] for o in orders),
            lambda j: tuple(o.rank[j] for o in orders),
        )
        for j in moved:
            for order in orders:
                order.move(j, self._next_rank, True)
            self._next_rank += 1
        return bool(moved)

    def _restore(self, back: list[tuple[int, tuple[int, ...]]]) -> None:
        """Give demoted jobs whose users' accounts were emptied their ranks
        back."""
        orders = self._ranked() if back else []
        for j, ranks in back:
            for order, rank in zip(orders, ranks, strict=True):
                order.move(j, rank, self.state[j] == WAITING)

    def _chains(self, jobs: list[Job]) -> None:
        """The precedence graph of :func:`optsched.site.chains.chain_graph`
        (the one the checker and the engine read), by job number."""
        self._predecessor: dict[int, int] = {}
        self._successors: dict[int, list[tuple[int, int]]] = {}
        self._arrivals: list[tuple[int, int]] = []  # (time, job) released
        if not any(job.preceding_job is not None for job in jobs):
            return
        number = {job.id: k for k, job in enumerate(jobs)}
        for before, after, data in chain_graph(jobs).graph.edges(data=True):
            p, j = number[before], number[after]
            self._predecessor[j] = p
            self._successors.setdefault(p, []).append((j, data["think_time"]))

    def _release_successors(self, j: int) -> None:
        for successor, think in self._successors.get(j, ()):
            ready = max(self.release[successor], self.end_time[j] + think)
            heapq.heappush(self._arrivals, (ready, successor))

    def _arrive(self, j: int) -> None:
        self.state[j] = WAITING
        self.waiting += 1
        if self._gate is not None:
            self._gate.arrive(j)
        for index in self._orders.values():
            index.add(j)
        self._count_size(self.size[j], 1)

    def choose_mode(self, j: int, mode: Mode) -> None:
        """Run waiting job ``j`` in ``mode`` from its next start (module
        notes): its size, work and estimated work become the mode's, so
        that :meth:`fits`, :meth:`est`, the site's rules and its start see
        the mode.

        Raises
        ------
        ValueError
            ``j`` is not waiting, or ``mode`` is not one of its modes.
        """
        job = self.jobs[j]
        if not job.modes and mode == job.mode(job.size):
            return  # a rigid job's only mode (its runtime is its work)
        if self.state[j] != WAITING or job.mode(mode.processors) != mode:
            raise ValueError(
                f"job {job.id}: a mode is chosen among its own, while it waits"
            )
        old, new = self.size[j], mode.processors
        if new != old:
            self._count_size(old, -1)
            self._count_size(new, 1)
            self.size[j] = new
        self.runtime[j], self.estimate[j] = mode_work(self.machine, mode)
        self._charged[j] = mode.requested
        if self._gate is not None:
            self._gate.resized(j)

    def _count_size(self, size: int, change: int) -> None:
        # One more (or fewer) waiting job of `size` in `_sizes`.
        count = self._size_count.get(size, 0) + change
        self._size_count[size] = count
        if count == 1 and change > 0:
            insort(self._sizes, size)
        elif not count:
            del self._sizes[bisect_left(self._sizes, size)]

    def _start(self, j: int) -> int:
        # The job takes the placement's set; returns its actual end.
        if self.state[j] != WAITING:
            raise RuntimeError(f"job {self.job_id[j]} is not waiting")
        size = self.size[j]
        pool = self.pool
        procs = pool.choose(size)
        if procs is None:
            raise RuntimeError(f"job {self.job_id[j]} cannot start at {self.now}")
        factor = pool.factor(size)
        groups = pool.groups(size)
        pool.take(procs)
        now = self.now
        self.state[j] = RUNNING
        self.waiting -= 1
        for index in self._orders.values():
            index.remove(j)
        self._count_size(size, -1)
        self.held[j] = procs
        self.start_time[j] = now
        end = now + _ceil_times(self.runtime[j], factor)
        self.end_time[j] = end
        if self._gate is not None:
            self._gate.started(j)
        if end == now:  # no run time: its processors come back at once
            self.state[j] = DONE
            pool.give(procs)
            if self._gate is not None:
                self._gate.ended(j)
            self._release_successors(j)
            return end
        self._groups[j] = groups
        estimated = now + _ceil_times(self.estimate[j], factor)
        self.estimated_end[j] = estimated
        insort(self.running, (estimated, j))
        return end

    def _finish(self, j: int) -> None:
        self.state[j] = DONE
        self.pool.give(self.held[j])
        if self._gate is not None:
            self._gate.ended(j)
        key = (self.estimated_end[j], j)
        del self.running[bisect_left(self.running, key)]
        self._release_successors(j)

    def schedule(self, producer: str) -> Schedule:
        """The schedule (every job must be done), explicit processors."""
        return Schedule(
            {
                jid: Placement(self.start_time[j], self.end_time[j], self.held[j])
                for j, jid in enumerate(self.job_id)
            },
            producer=producer,
        )

    # -- what selection functions call ----------------------------------
    def head(self, order: str) -> int | None:
        """``f(Q)``: the first waiting job in ``order``."""
        return self._orders[order].head(self.state)

    def queue(self, order: str) -> list[int]:
        """The waiting jobs in ``order`` (under a user limit, the demoted
        ones last): a scan of every job, ``O(n log n)``, for the policies
        that look past the head."""
        index = self._orders[order]
        if isinstance(index, RankedOrder):
            return list(index)
        state, rank = self.state, index.rank
        return sorted(
            (j for j in range(len(state)) if state[j] == WAITING), key=rank.__getitem__
        )

    def fits(self, j: int) -> bool:
        """Whether waiting job ``j`` may start now (count and span rule,
        then the site's rules: module notes)."""
        return self.pool.fits(self.size[j]) and self._site_allows(j)

    def _site_allows(self, j: int) -> bool:
        # The site's rules (no calendar: none); a job the user limit refused
        # in this pass is not tried again in it.
        gate = self._gate
        if gate is None:
            return True
        if j in gate.refused:
            return False
        return gate.allows(j, self.pool.processors - self.pool.free, self.now)

    def est(self, j: int) -> Fraction:
        """``est(j) = p_hat_j * f(S_j)``, unrounded, on the set the placement
        would give ``j`` now (``j`` must fit)."""
        return self.estimate[j] * self.pool.factor(self.size[j])

    def first_fitting(self, order: str) -> int | None:
        """``g({j in Q : j fits now})`` for the base order ``g``."""
        return self._first(order, None, None)

    def shadow(self, head: int, need: int | None = None) -> Shadow:
        """The shadow time of ``head`` (which does not fit now), on
        ``need`` processors (default: its size; a mode-choosing policy asks
        for each of its modes).

        Rassmann's loop (seed notes §A2.2): running jobs by estimated end
        ``c_hat`` ascending; a job is accumulated (its processors return to
        the free counts, ``t* = c_hat``) while the head does not fit on the
        counts, and so is every further job with ``c_hat == t*``. An
        estimated end already in the past counts as now, as in the flat
        engine's EASY (:func:`optsched.heuristics.rigid.policies.easy_shadow`):
        an overrunning job is expected to end any moment, so ``gap = t* -
        now >= 0`` and every overdue job is accumulated together.
        """
        if need is None:
            need = self.size[head]
        pool = self.pool
        counts = list(pool.group_free)
        total = pool.free
        groups = self._groups
        now = self.now
        fits = pool.fits_counts
        # A head the site's rules hold back may fit now (module notes).
        time: int | None = now if fits(need, counts, total) else None
        for end, j in self.running:
            if end < now:
                end = now
            if time is None or end == time or not fits(need, counts, total):
                for g, k in groups[j]:
                    counts[g] += k
                    total += k
                time = end
            else:
                break
        if time is None or not fits(need, counts, total):
            raise RuntimeError(f"job {self.job_id[head]} can never fit")
        return Shadow(time, counts, total, need)

    def admits(self, shadow: Shadow, size: int) -> bool:
        """Whether the head still fits at ``t*`` when a job of ``size``
        takes, from the counts at ``t*``, the processors it would get now
        (``size <= extra`` on a machine seen as one group)."""
        pool = self.pool
        if shadow.total - size < shadow.need:
            return False  # not even the count is left
        counts = list(shadow.counts)
        for g, k in pool.groups(size):
            counts[g] -= k
        return pool.fits_counts(shadow.need, counts, shadow.total - size)

    def first_backfill(
        self, order: str, shadow: Shadow, optimistic: bool
    ) -> int | None:
        """``g({j in Q : j fits now and (est(j) <= gap or (optimistic and
        the head still fits at t* without S_j))})``, ``gap = t* - now``."""
        gap = shadow.time - self.now
        pool = self.pool

        def horizon(size: int) -> int:
            # Largest estimate with est = estimate * f <= gap (f = a / b).
            factor = pool.factor(size)
            return gap * factor.denominator // factor.numerator

        def extra(size: int) -> bool:
            return self.admits(shadow, size)

        return self._first(order, horizon, extra if optimistic else None)

    def _first(
        self,
        order: str,
        horizon: Callable[[int], int] | None,
        extra: Callable[[int], bool] | None,
    ) -> int | None:
        # The first job in `order` among, for every waiting size q that fits
        # now, the jobs of size q with estimate <= horizon(q) (any estimate
        # without a horizon, or when extra(q) holds).
        index = self._orders[order]
        if isinstance(index, RankedOrder):
            return self._first_admitted(index, horizon, extra)
        rank = index.rank
        pool = self.pool
        free = pool.free
        best: int | None = None
        best_rank = _INF
        for q in self._sizes:
            if q > free:
                break
            bucket = index.bucket(q)
            top = bucket.first_within(_INF)
            if top is None or rank[top] >= best_rank or not pool.fits(q):
                continue
            found: int | None = top
            if horizon is not None:
                found = bucket.first_within(horizon(q))
                if found != top and extra is not None and extra(q):
                    found = top
            if found is not None and rank[found] < best_rank:
                best, best_rank = found, rank[found]
        return best

    def _first_admitted(
        self,
        index: RankedOrder,
        horizon: Callable[[int], int] | None,
        extra: Callable[[int], bool] | None,
    ) -> int | None:
        # :meth:`_first` under a calendar: the waiting jobs in order, each
        # tested as the engine's policies test a candidate (processors, the
        # time or extra rule, then the site's rules).
        pool, size, estimate = self.pool, self.size, self.estimate
        for j in index:
            q = size[j]
            if not pool.fits(q):
                continue
            if (
                horizon is not None
                and estimate[j] > horizon(q)
                and not (extra is not None and extra(q))
            ):
                continue
            if self._site_allows(j):
                return j
        return None
