"""The grid reservation service: Meltzer's algorithms A1-A5 (§4).

Every algorithm builds partial-reservation variants (TRs: a part, a
cluster, a start from a discretised grid), filters them, arranges the
complete co-reservation variants as a tree (one level per part, largest
part first, children sharing their parent's start on clusters not yet on
the path) and reserves depth first with rollback (§4.2.3).

==========  ===========================================================
algorithm   TR filter (cumulative) and order
==========  ===========================================================
``a1``      cluster CPUs >= part; random order (§4.2)
``a2``      + free CPUs over ``[s, s + d)`` >= part (status query, §4.3)
``a3``      + ``s >= now + backlog time`` (fairness, §4.4)
``a3bf``    as ``a3``, except TRs ending before the cluster's next
            scheduling event (backfill reservations, §4.5)
``a4``      as ``a3bf``, sorted by start (§4.6)
``a5``      as ``a3bf``, sorted bottom-up by ``k * normalised cost +
            s * normalised start`` (Eq. 2), re-sorted after failures (§4.7)
==========  ===========================================================

Readings where the thesis is open (each an option where cheap):

* Start grid (Listing 1): increment ``max(minsize, span / windows)``,
  starts ``earliest + i * increment`` for ``i = 0 .. windows - 1`` while
  ``<= latest`` (``windows`` points, the thesis's count: 8,400 variants for
  200 windows, 7 clusters, 2 parts), rounded down to whole seconds.
* A2's test is ``free >= part`` (Listing 3 prints ``>``, A1 ``>=``;
  ``strict=True`` gives ``>``).
* The backlog time of A3 is evaluated per TR start (reservations starting
  before it count, Listing 4); the backfill exemption needs ``s + d <
  t_sched`` strictly (§4.5).
* A5's re-sorting after a failed reservation: the failed subtree is
  dropped, values are propagated again and children re-sorted; the reserved
  path is kept if its best completion is within ``start_tolerance`` seconds
  and ``cost_tolerance`` of the best remaining variant, else it is rolled
  back to the deepest node on the best variant's path (§4.7.5; the thesis
  gives no tolerance values, 0 by default).

Reference: J. Meltzer, *Vergleich von Co-Reservierungs-Algorithmen in
Grid-Umgebungen*, Diplomarbeit, FU Berlin / ZIB (about 2005).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from optsched.coreserve.cluster import LocalCluster, Messages
from optsched.coreserve.request import Request

ALGORITHMS = ("a1", "a2", "a3", "a3bf", "a4", "a5")
SORTS = ("random", "start", "weighted")


@dataclass(frozen=True)
class ServiceConfig:
    """Parameters of the grid reservation service.

    Parameters
    ----------
    algorithm
        One of :data:`ALGORITHMS`.
    minsize, windows
        The start-time grid (Listing 1): smallest increment and number of
        starts (the study's defaults: 300 s and 20).
    k, s
        A5's weights of normalised cost and start (Eq. 2).
    accuracy
        Wallclock accuracy of the backlog time: ``None`` for each cluster's
        own mean (A3), ``1.0`` for the pessimistic A3*.
    strict
        A2's strict ``free > part`` test.
    cost_rule
        ``sampled`` (the study's) or ``prorata``.
    start_tolerance, cost_tolerance
        A5's re-sorting tolerances.
    sort
        Order of the variants: ``random``, ``start`` (earliest first, ties
        random) or ``weighted`` (Eq. 2); ``None``: the algorithm's own
        (``start`` for A4, ``weighted`` for A5, else ``random``). §6.8 runs
        A2 and A3 start-sorted.
    """

    algorithm: str = "a4"
    minsize: int = 300
    windows: int = 20
    k: float = 0.0
    s: float = 1.0
    accuracy: float | None = None
    strict: bool = False
    cost_rule: str = "sampled"
    start_tolerance: int = 0
    cost_tolerance: float = 0.0
    sort: str | None = None

    def __post_init__(self) -> None:
        if self.sort is not None and self.sort not in SORTS:
            raise ValueError(f"unknown sort {self.sort!r}; valid: {', '.join(SORTS)}")
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"unknown algorithm {self.algorithm!r}; valid: {', '.join(ALGORITHMS)}"
            )
        if self.minsize < 1 or self.windows < 1:
            raise ValueError("minsize and windows must be at least 1")
        if not (0 <= self.k <= 1 and 0 <= self.s <= 1):
            raise ValueError(f"k and s must lie in [0, 1], got k={self.k}, s={self.s}")
        if self.accuracy is not None and not 0 < self.accuracy <= 1:
            raise ValueError(f"accuracy must lie in (0, 1], got {self.accuracy}")

    @property
    def order(self) -> str:
        """The variant order in force (see ``sort``)."""
        if self.sort is not None:
            return self.sort
        return {"a4": "start", "a5": "weighted"}.get(self.algorithm, "random")

    @property
    def checks_capacity(self) -> bool:
        return self.algorithm != "a1"

    @property
    def fair(self) -> bool:
        return self.algorithm in ("a3", "a3bf", "a4", "a5")

    @property
    def backfill(self) -> bool:
        return self.algorithm in ("a3bf", "a4", "a5")


def start_grid(request: Request, minsize: int, windows: int) -> list[int]:
    """The discretised starts of Listing 1 (see the module notes).

    Examples
    --------
    >>> r = Request(0, 1000, 1000 + 3600 + 6000, 3600, (4,))
    >>> start_grid(r, 300, 20)[:4], len(start_grid(r, 300, 20))
    ([1000, 1300, 1600, 1900], 20)
    >>> start_grid(r, 1, 3)
    [1000, 3000, 5000]
    """
    span = request.span
    if span < 0:
        return []
    increment = max(Fraction(minsize), Fraction(span, windows))
    starts = []
    for i in range(windows):
        offset = math.floor(i * increment)
        if offset > span:
            break
        starts.append(request.earliest_start + offset)
    return starts


@dataclass
class Node:
    """A node of the variant tree: part ``depth`` on ``cluster`` at ``start``."""

    cluster: int
    start: int
    depth: int
    cost: Fraction = Fraction(0)
    children: list[Node] = field(default_factory=list)
    best: Fraction = Fraction(0)  # lowest total cost of a variant below
    value: float = 0.0  # A5's Eq. 2 value of the best variant below


@dataclass
class Outcome:
    """What the service did with one request."""

    request: Request
    accepted: bool
    start: int | None = None
    clusters: tuple[int, ...] | None = None  # per part, in the client's order
    cost: Fraction | None = None
    messages: Messages = field(default_factory=Messages)
    variants: int = 0  # complete variants formed (after filtering)
    worst_case: int = 0  # the thesis's N for this request (§3.6)
    unfiltered: list[int] = field(default_factory=list)  # A1's TRs per cluster
    filtered: list[int] = field(default_factory=list)  # TRs removed per cluster
    start_range: tuple[int, int] | None = None  # formed variants' min/max start
    cost_range: tuple[Fraction, Fraction] | None = None
    waiting: dict[int, list[int]] = field(default_factory=dict)  # cluster -> jobs

    def filter_degree(self, c: int) -> float:
        """Removed / unfiltered TRs at cluster ``c`` (1: it cannot go there)."""
        total = self.unfiltered[c]
        return 1.0 if total == 0 else self.filtered[c] / total


@dataclass(frozen=True)
class Eq2:
    """Meltzer's Eq. 2 over the formed variants: ``k * (cost - min) /
    (max - min) + s * (start - min) / (max - min)``, a term 0 when its
    range is empty (lower is better)."""

    low_start: int
    high_start: int
    low_cost: Fraction
    high_cost: Fraction
    k: float
    s: float

    def __call__(self, cost: Fraction, start: int) -> float:
        value = 0.0
        if self.high_cost > self.low_cost:
            share = (cost - self.low_cost) / (self.high_cost - self.low_cost)
            value += self.k * float(share)
        if self.high_start > self.low_start:
            share_s = (start - self.low_start) / (self.high_start - self.low_start)
            value += self.s * share_s
        return value


class GridService:
    """The grid reservation service over a list of clusters."""

    def __init__(
        self, clusters: Sequence[LocalCluster], config: ServiceConfig, seed: int = 0
    ) -> None:
        self.clusters = list(clusters)
        self.config = config
        self.rng = random.Random(seed)
        self._scale = Eq2(0, 0, Fraction(0), Fraction(0), config.k, config.s)

    # -- one request --------------------------------------------------------------
    def process(self, request: Request, now: int) -> Outcome:
        """Handle ``request`` at time ``now`` (the clusters are simulated up to it)."""
        config = self.config
        outcome = Outcome(request, accepted=False)
        order = sorted(range(len(request.parts)), key=lambda i: (-request.parts[i], i))
        sizes = [request.parts[i] for i in order]
        # A start already past cannot be reserved (a request submitted
        # after its earliest start).
        starts = [
            t for t in start_grid(request, config.minsize, config.windows) if t >= now
        ]
        trs = self._admissible(request, sizes, starts, now, outcome)
        # A5's formula for its re-sorting step, whatever the filters.
        reservation = "a5" if config.order == "weighted" else config.algorithm
        outcome.worst_case = worst_case_messages(
            len(starts), len(self.clusters), len(sizes), reservation
        )
        self.rng.shuffle(trs)
        if config.order == "start":
            trs.sort(key=lambda tr: tr[2])  # stable: ties stay random
        roots = self._tree(request, sizes, trs)
        variants = _variants(roots, len(sizes))
        outcome.variants = len(variants)
        if variants:
            starts_formed = [leaf.start for leaf, _ in variants]
            totals = [total for _, total in variants]
            outcome.start_range = (min(starts_formed), max(starts_formed))
            outcome.cost_range = (min(totals), max(totals))
        if config.order == "weighted" and roots:
            self._sort_weighted(roots, outcome)
        path = self._reserve(request, roots, sizes, outcome)
        if path is None:
            return outcome
        for node in path:
            self.clusters[node.cluster].commit(request.id)
        mapped = [0] * len(order)
        for depth, node in enumerate(path):
            mapped[order[depth]] = node.cluster
        outcome.accepted = True
        outcome.start = path[0].start
        outcome.clusters = tuple(mapped)
        outcome.cost = sum((node.cost for node in path), Fraction(0))
        for node in path:
            outcome.waiting[node.cluster] = self.clusters[node.cluster].waiting_jobs()
        return outcome

    # -- TRs --------------------------------------------------------------
    def _admissible(
        self,
        request: Request,
        sizes: list[int],
        starts: list[int],
        now: int,
        outcome: Outcome,
    ) -> list[tuple[int, int, int]]:
        """The TRs ``(depth, cluster, start)`` that pass the algorithm's filters."""
        config = self.config
        d = request.duration
        out: list[tuple[int, int, int]] = []
        for c, cluster in enumerate(self.clusters):
            unfiltered = removed = 0
            if config.checks_capacity:
                outcome.messages.status += len(sizes)  # one query per part (§6.5)
            t_sched = cluster.next_scheduling_event(now) if config.backfill else None
            for s in starts:
                free = None
                fair: bool | None = None
                for depth, q in enumerate(sizes):
                    if cluster.processors < q:
                        continue
                    unfiltered += 1
                    if config.checks_capacity:
                        if free is None:
                            free = cluster.processors - cluster.occupied(s, s + d)
                        if free < q or (config.strict and free == q):
                            removed += 1
                            continue
                    if config.fair:
                        if fair is None:
                            exempt = t_sched is not None and s + d < t_sched
                            fair = exempt or s >= now + cluster.backlog_time(
                                now, s, accuracy=config.accuracy
                            )
                        if not fair:
                            removed += 1
                            continue
                    out.append((depth, c, s))
            outcome.unfiltered.append(unfiltered)
            outcome.filtered.append(removed)
        return out

    def _tree(
        self, request: Request, sizes: list[int], trs: list[tuple[int, int, int]]
    ) -> list[Node]:
        """The pruned variant tree (Listing 2): children in TR-list order."""
        by_start: dict[int, list[tuple[int, int]]] = {}
        for depth, c, s in trs:
            by_start.setdefault(s, []).append((depth, c))
        rule = self.config.cost_rule
        per_cpu: dict[tuple[int, int], Fraction] = {}

        def cost_of(c: int, start: int, cpus: int) -> Fraction:
            # Costs are linear in the CPUs: one tariff sum per (cluster, start).
            key = (c, start)
            if key not in per_cpu:
                tariff = self.clusters[c].tariff
                per_cpu[key] = tariff.cost(start, request.duration, 1, rule)
            return cpus * per_cpu[key]

        def grow(depth: int, start: int, used: frozenset[int]) -> list[Node]:
            nodes = []
            for dd, c in by_start[start]:
                if dd != depth or c in used:
                    continue
                node = Node(c, start, depth, cost_of(c, start, sizes[depth]))
                if depth + 1 < len(sizes):
                    node.children = grow(depth + 1, start, used | {c})
                    if not node.children:
                        continue  # an incomplete path is pruned
                nodes.append(node)
            return nodes

        roots = []
        for depth, c, s in trs:
            if depth != 0:
                continue
            node = Node(c, s, 0, cost_of(c, s, sizes[0]))
            if len(sizes) > 1:
                node.children = grow(1, s, frozenset({c}))
                if not node.children:
                    continue
            roots.append(node)
        return roots

    # -- A5's ordering -----------------------------------------------------
    def _sort_weighted(self, roots: list[Node], outcome: Outcome) -> None:
        """Bottom-up sorting by Eq. 2 (§4.7.4): a node's value is its best
        variant's, the best being the lowest total cost below it (cost is
        accumulated down the path; a subtree shares one start)."""
        assert outcome.start_range is not None and outcome.cost_range is not None
        self._scale = Eq2(
            *outcome.start_range, *outcome.cost_range, self.config.k, self.config.s
        )

        def settle(node: Node, above: Fraction) -> None:
            total = above + node.cost
            if not node.children:
                node.best = total
            else:
                for child in node.children:
                    settle(child, total)
                node.children.sort(key=lambda n: n.value)
                node.best = node.children[0].best
            node.value = self._scale(node.best, node.start)

        for root in roots:
            settle(root, Fraction(0))
        roots.sort(key=lambda n: n.value)

    # -- reservation step --------------------------------------------------
    def _reserve(
        self, request: Request, roots: list[Node], sizes: list[int], outcome: Outcome
    ) -> list[Node] | None:
        if self.config.order == "weighted":
            return self._reserve_resorting(request, roots, sizes, outcome)
        return self._dfs(request, roots, sizes, [], outcome)

    def _try(
        self, request: Request, node: Node, sizes: list[int], outcome: Outcome
    ) -> bool:
        outcome.messages.reserve += 1
        return self.clusters[node.cluster].reserve(
            request.id,
            node.depth,
            node.start,
            node.start + request.duration,
            sizes[node.depth],
        )

    def _undo(self, request: Request, node: Node, outcome: Outcome) -> None:
        outcome.messages.rollback += 1
        self.clusters[node.cluster].rollback(request.id, node.depth)

    def _dfs(
        self,
        request: Request,
        nodes: list[Node],
        sizes: list[int],
        path: list[Node],
        outcome: Outcome,
    ) -> list[Node] | None:
        """Plain depth-first reservation with rollback (§4.2.3)."""
        for node in nodes:
            if not self._try(request, node, sizes, outcome):
                continue  # the whole subtree is discarded
            if node.depth == len(sizes) - 1:
                return [*path, node]
            found = self._dfs(request, node.children, sizes, [*path, node], outcome)
            if found is not None:
                return found
            self._undo(request, node, outcome)
        return None

    def _reserve_resorting(
        self, request: Request, roots: list[Node], sizes: list[int], outcome: Outcome
    ) -> list[Node] | None:
        """A5's reservation step with re-sorting after failures (§4.7.5).

        Always descend to the first (best) child. When a reservation fails,
        its subtree leaves the tree, values are propagated again up to the
        root and the lists re-sorted; the best remaining variant ``B``
        follows the first children from the root. Reserved nodes not on
        ``B`` are examined from the most recent: one whose best completion
        starts less than ``start_tolerance`` after ``B`` and costs less than
        ``cost_tolerance`` more is kept (with every node above it), the
        others are rolled back (they stay in the tree, sorted).
        """
        leaf = len(sizes) - 1
        tolerance_s = self.config.start_tolerance
        tolerance_c = Fraction(str(self.config.cost_tolerance))
        path: list[Node] = []
        if not roots:
            return None
        while True:
            frontier = path[-1].children if path else roots
            node = frontier[0]
            if self._try(request, node, sizes, outcome):
                path.append(node)
                if node.depth == leaf:
                    return path
                continue
            # Drop the failed subtree; ancestors left without children go
            # too (a reserved one is rolled back first).
            gone = node
            while True:
                parent = path[gone.depth - 1] if gone.depth else None
                siblings = parent.children if parent is not None else roots
                siblings.remove(gone)
                if parent is None or parent.children:
                    break
                path.pop()
                self._undo(request, parent, outcome)
                gone = parent
            for ancestor in reversed(path):
                ancestor.children.sort(key=lambda n: n.value)
                ancestor.best = ancestor.children[0].best
                ancestor.value = self._scale(ancestor.best, ancestor.start)
            roots.sort(key=lambda n: n.value)
            if not roots:
                return None
            best = _best_path(roots)
            common = 0
            while common < len(path) and path[common] is best[common]:
                common += 1
            target = best[-1]
            while len(path) > common:
                u = path[-1]
                close = (
                    u.start - target.start < tolerance_s
                    and u.best - target.best < tolerance_c
                )
                if close:
                    break
                path.pop()
                self._undo(request, u, outcome)


def _best_path(roots: list[Node]) -> list[Node]:
    """The first children from the root down: the best remaining variant."""
    path = [roots[0]]
    while path[-1].children:
        path.append(path[-1].children[0])
    return path


def _variants(roots: list[Node], parts: int) -> list[tuple[Node, Fraction]]:
    """Every complete variant as ``(leaf, total cost)``."""
    out: list[tuple[Node, Fraction]] = []
    stack = [(node, node.cost) for node in roots]
    while stack:
        node, total = stack.pop()
        if node.depth == parts - 1:
            out.append((node, total))
        else:
            stack.extend((child, total + child.cost) for child in node.children)
    return out


def worst_case_messages(starts: int, clusters: int, parts: int, algorithm: str) -> int:
    """The thesis's worst-case message count ``N`` (§3.6).

    A1-A4: ``N = C + 2 * sum_{i=1}^{r-1} C_i`` with ``C = z * P(c, r)`` the
    variants (Eq. 1) and ``C_i = z * P(c, i)`` the nodes at depth ``i``.
    A5, as printed: ``N = C + 2 * C^(r-1)``.
    """
    total = starts * math.perm(clusters, parts) if parts <= clusters else 0
    if algorithm == "a5":
        return total + 2 * total ** (parts - 1)
    inner = sum(starts * math.perm(clusters, i) for i in range(1, parts))
    return total + 2 * inner
