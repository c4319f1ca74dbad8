"""Job chains: the precedence graph of self-submitting jobs, and its bounds.

A *chain* is a sequence of jobs each submitted by its predecessor when that
one ended (SWF fields 17 "preceding job number" and 18 "think time", D. G.
Feitelson, *Standard Workload Format*, version 2.2, 2006: the think time is
"the number of seconds that should elapse between the termination of the
preceding job and the submittal of this one"). Mallmann's simulator submits a
successor only when its predecessor ends (seed 000 §4.3: "submit :=
predecessor end"), so that no strategy gains utilisation by running a chain's
jobs side by side. One graph serves the simulator, the exact models, the
bounds and the checker:

* :func:`chain_graph` builds it from the jobs' recorded fields, validated
  (:class:`ChainGraph` reports what was dropped and why);
* :func:`infer_chains` is our stated matching rule for self-submitting
  queues, whose predecessors the traces do not record (the study gives no
  rule, seed 000 §11 item 10);
* :func:`chain_release` gives the chain-aware releases behind the
  chain-aware release bound (seed 000 §10.2), whose bound functions live
  with the site bounds (:mod:`optsched.models.site.bounds`);
* :func:`chain_violations` is the checker's rule: a successor never starts
  before its predecessor ends plus the think time;
* :func:`chain_counts` is what ``optsched info`` reports.

Rule of the graph
-----------------
Node ``j`` for every job; edge ``i -> j`` (attribute ``think_time``) when job
``j`` names ``i`` as its preceding job. A successor may start at the
earliest at ``C_i + think(i, j)``, where ``C_i`` is its predecessor's end in
the same schedule. SWF gives one predecessor per job, so every node has at
most one incoming edge and the graph is a forest of out-trees (a job may
have several successors). A think time that is missing (``None``) or
negative (SWF's "missing" marker) counts as 0.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from optsched.instance import Instance, Job

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "DEFAULT_MAX_GAP",
    "RELEASE_RULES",
    "ChainCounts",
    "ChainGraph",
    "ChainViolation",
    "chain_counts",
    "chain_graph",
    "chain_release",
    "chain_violations",
    "infer_chains",
    "recorded_end",
    "without_chains",
]

DEFAULT_MAX_GAP = 60
"""Default largest gap (seconds) between a predecessor's recorded end and its
successor's submit in :func:`infer_chains`."""

RELEASE_RULES = ("max", "predecessor")
"""When a successor ``j`` of ``i`` may start, ``C_i`` its predecessor's end:

* ``"max"``: at ``max(r_j, C_i + think(i, j))``: never before its recorded
  submit either (a trace's arrivals stay floors);
* ``"predecessor"``: at ``C_i + think(i, j)`` only, the study's "submit :=
  predecessor end" (seed 000 §4.3) with SWF's think time: a successor may
  start before its recorded submit when its predecessor ends earlier than
  in the trace. Its own ``r_j`` is then no constraint (a checker must not
  apply the release rule to it).

The simulator, the models, the bounds and the checker must use one rule."""


# --------------------------------------------------------------------------
# The graph
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChainCounts:
    """What the chain fields of a job set amount to (``optsched info``).

    Attributes
    ----------
    with_predecessor
        Jobs with a kept predecessor edge (= number of edges).
    chains
        Chains: weakly connected components with at least one edge (each
        is an out-tree: one first job, every other job with one predecessor).
    longest
        Jobs on the longest chain, 0 when there is no edge.
    dropped_missing
        Predecessors named but absent from the jobs (cut off by a window,
        skipped by the reader), and jobs naming themselves.
    dropped_cycles
        Edges removed to break cycles (see :func:`chain_graph`).
    """

    with_predecessor: int
    chains: int
    longest: int
    dropped_missing: int = 0
    dropped_cycles: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class ChainGraph:
    """A validated precedence graph and the counts of :func:`chain_graph`.

    ``graph`` is a :class:`networkx.DiGraph` with one node per job id and an
    edge ``pred -> succ`` with integer attribute ``think_time >= 0`` for
    every kept chain link; it is acyclic and every in-degree is at most 1.
    """

    graph: nx.DiGraph
    counts: ChainCounts

    @property
    def edges(self) -> int:
        """Number of kept edges (jobs with a predecessor)."""
        return self.counts.with_predecessor


def _think(value: int | None) -> int:
    # SWF writes -1 (any negative) for "missing"; no think time is 0 s.
    return value if value is not None and value > 0 else 0


def _break_cycles(pred: dict[int, int], key: Callable[[int], tuple[int, int]]) -> int:
    """Remove one edge of every cycle of ``pred`` (job -> its predecessor),
    in place; return how many were removed.

    Each job has at most one predecessor, so each weakly connected component
    holds at most one cycle, and following predecessor links from any job
    either ends or enters that cycle: one walk per job, each job visited
    once (``O(n)``). In a cycle the edge *entering* the job with the
    smallest ``key`` (release, id), the earliest-submitted one, goes: in a
    real trace a predecessor is submitted before its successor, so that job
    is the most plausible chain head.
    """
    state: dict[int, int] = {}  # 1: on the current walk, 2: finished
    removed = 0
    for start in list(pred):
        if start in state:
            continue
        walk: list[int] = []
        node: int | None = start
        while node is not None and node not in state:
            state[node] = 1
            walk.append(node)
            node = pred.get(node)
        if node is not None and state[node] == 1:
            cycle = walk[walk.index(node) :]
            del pred[min(cycle, key=key)]
            removed += 1
        for visited in walk:
            state[visited] = 2
    return removed


def chain_graph(jobs: Iterable[Job]) -> ChainGraph:
    """The validated precedence graph of the jobs' ``preceding_job`` fields.

    Parameters
    ----------
    jobs
        Jobs with unique ids (``ValueError`` otherwise).

    Returns
    -------
    ChainGraph
        Edge ``preceding_job -> id`` with ``think_time = max(0, think)``
        (``None`` -> 0) for every job whose ``preceding_job`` is set, except:

        * a predecessor that is not among ``jobs`` (cut off by a window,
          skipped by the reader) or the job itself: the edge is dropped and
          counted in ``dropped_missing``;
        * cycles (impossible in a real trace, where a successor is submitted
          after its predecessor ends): each is *broken*, not refused, by
          dropping the edge that enters its earliest-submitted job (smallest
          ``(release, id)``), which then heads the chain; counted in
          ``dropped_cycles``. Breaking keeps a damaged trace usable and
          loses one link per cycle, which only weakens the chain constraints
          (the bounds stay valid for the remaining graph).

        A negative ``preceding_job`` is SWF's missing marker: no edge.
        ``O(n)`` time and memory.
    """
    by_id: dict[int, Job] = {}
    for job in jobs:
        if job.id in by_id:
            raise ValueError(f"job {job.id}: duplicate job id")
        by_id[job.id] = job
    pred: dict[int, int] = {}
    missing = 0
    for job in by_id.values():
        named = job.preceding_job
        if named is None or named < 0:
            continue
        if named == job.id or named not in by_id:
            missing += 1
            continue
        pred[job.id] = named
    cycles = _break_cycles(pred, lambda i: (by_id[i].release, i))
    import networkx as nx  # a fifth of a second: only where chains are built

    graph = nx.DiGraph()
    graph.add_nodes_from(by_id)
    graph.add_edges_from(
        (p, s, {"think_time": _think(by_id[s].think_time)}) for s, p in pred.items()
    )
    chains, longest = _shape(graph)
    counts = ChainCounts(len(pred), chains, longest, missing, cycles)
    return ChainGraph(graph, counts)


def _shape(graph: nx.DiGraph) -> tuple[int, int]:
    """Number of chains (components with an edge) and jobs on the longest
    path (0 without edges) of an acyclic graph."""
    if graph.number_of_edges() == 0:
        return 0, 0
    import networkx as nx

    depth: dict[int, int] = {}
    for node in nx.topological_sort(graph):
        depth[node] = 1 + max((depth[p] for p in graph.predecessors(node)), default=0)
    chains = nx.number_weakly_connected_components(
        graph.edge_subgraph(graph.edges).copy()
    )
    return chains, max(depth.values())


def chain_counts(instance: Instance | Iterable[Job]) -> ChainCounts:
    """:class:`ChainCounts` of an instance's (or a job list's) recorded chains."""
    if isinstance(instance, Instance):
        if all(job.preceding_job is None for job in instance.jobs):
            # No link at all (ids are unique in an instance): no graph to
            # build, so ``optsched info`` does not import networkx.
            return ChainCounts(0, 0, 0, 0, 0)
        return chain_graph(instance.jobs).counts
    return chain_graph(instance).counts


def without_chains(jobs: Iterable[Job]) -> tuple[Job, ...]:
    """The jobs with ``preceding_job`` and ``think_time`` cleared
    (``--no-chains``); unchained jobs are returned as they are."""
    return tuple(
        job
        if job.preceding_job is None and job.think_time is None
        else dataclasses.replace(job, preceding_job=None, think_time=None)
        for job in jobs
    )


# --------------------------------------------------------------------------
# Matching rule for self-submitting queues
# --------------------------------------------------------------------------


def recorded_end(job: Job) -> int | None:
    """``r_j + w_j + p_j``: the job's end in the recorded schedule (start =
    submit + recorded wait, SWF field 3), ``None`` without a recorded wait."""
    if job.wait is None or job.wait < 0:
        return None
    return job.release + job.wait + job.runtime


def _queue_rule(
    queues: Callable[[int | None], bool] | Collection[int | None],
) -> Callable[[int | None], bool]:
    if callable(queues):
        return queues
    chosen = frozenset(queues)
    return lambda queue: queue in chosen


def infer_chains(
    jobs: Sequence[Job],
    queues: Callable[[int | None], bool] | Collection[int | None],
    *,
    max_gap: int = DEFAULT_MAX_GAP,
) -> tuple[Job, ...]:
    """Predecessors for the jobs of self-submitting queues, by a stated rule.

    The study's simulator looks for each such job's predecessor but does not
    say how (seed 000 §4.3, §11 item 10). Our rule, greedy in submit order:

    * only jobs whose queue satisfies ``queues`` (a predicate on the queue
      number, or a collection of queue numbers; the T3E allowed
      self-submission from every queue: ``lambda q: True``) and whose
      ``user`` is known take part, as successors and as predecessors. An
      unknown queue (``None``, SWF -1) is one queue of its own, taking part
      only if ``queues`` accepts ``None`` (``lambda q: True`` on a trace
      without queues matches by user alone);
    * jobs are taken in ``(release, id)`` order; the predecessor of job
      ``j`` is a job ``i`` taken before it, of the same user and the same
      queue, with a recorded end ``e_i = r_i + w_i + p_i``
      (:func:`recorded_end`; jobs without a recorded wait cannot be
      predecessors) in ``[r_j - max_gap, r_j]``, not yet anyone's
      predecessor: the one that ended last (ties: the latest in
      ``(release, id)`` order). Then ``think(i, j) = r_j - e_i >= 0``;
    * a job that already names a predecessor (SWF field 17) keeps it, and
      that predecessor is not offered to other jobs.

    So a job submitted within ``max_gap`` seconds after the end of one of
    its user's jobs in the same queue is taken as that job's successor, each
    job continuing at most one chain. The result is acyclic: every edge
    goes forward in ``(release, id)`` order. ``O(n log n)``.

    Parameters
    ----------
    jobs
        The jobs (unique ids).
    queues
        Which queues are self-submitting.
    max_gap
        Largest ``r_j - e_i`` accepted, seconds (``>= 0``).

    Returns
    -------
    tuple[Job, ...]
        The jobs in the given order, matched successors with
        ``preceding_job`` and ``think_time`` set.
    """
    if isinstance(max_gap, bool) or not isinstance(max_gap, int) or max_gap < 0:
        raise ValueError(
            f"infer_chains: max_gap must be an integer >= 0, not {max_gap!r}"
        )
    chosen = _queue_rule(queues)
    # A negative preceding job is SWF's missing marker, as in chain_graph.
    recorded = {
        j.id for j in jobs if j.preceding_job is not None and j.preceding_job >= 0
    }
    taken_ids = {j.preceding_job for j in jobs if j.id in recorded}
    # Per (user, queue): jobs taken but not yet ended by the current submit
    # (heap by end), and ended ones not yet used (a stack, ends increasing:
    # a job taken later is submitted, so ends, no earlier than r_j).
    pending: dict[tuple[int, int | None], list[tuple[int, int, int]]] = {}
    ended: dict[tuple[int, int | None], list[tuple[int, int]]] = {}
    found: dict[int, tuple[int, int]] = {}
    for job in sorted(jobs, key=lambda j: (j.release, j.id)):
        if job.user is None or not chosen(job.queue):
            continue
        key = (job.user, job.queue)
        heap = pending.setdefault(key, [])
        stack = ended.setdefault(key, [])
        while heap and heap[0][0] <= job.release:
            end, _, ident = heapq.heappop(heap)
            stack.append((end, ident))
        if job.id not in recorded:
            while stack and (
                stack[-1][1] in taken_ids or stack[-1][0] < job.release - max_gap
            ):
                if stack[-1][0] < job.release - max_gap:
                    stack.clear()  # everything below ended even earlier
                else:
                    stack.pop()
            if stack:
                end, ident = stack.pop()
                taken_ids.add(ident)
                found[job.id] = (ident, job.release - end)
        own_end = recorded_end(job)
        if own_end is not None:
            # Ties of end pop in (release, id) order, so the latest is on top.
            heapq.heappush(heap, (own_end, job.release, job.id))
    return tuple(
        dataclasses.replace(
            job, preceding_job=found[job.id][0], think_time=found[job.id][1]
        )
        if job.id in found
        else job
        for job in jobs
    )


# --------------------------------------------------------------------------
# Chain-aware release bound
# --------------------------------------------------------------------------


def shortest_duration(job: Job) -> int:
    """``p_j``, or the shortest run time over a moldable job's modes."""
    return min(mode.runtime for mode in job.modes) if job.modes else job.runtime


def _ordered(graph: nx.DiGraph) -> list[int]:
    import networkx as nx

    try:
        return list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        raise ValueError("chain graph has a cycle") from None


def _check_rule(rule: str) -> None:
    if rule not in RELEASE_RULES:
        raise ValueError(
            f"unknown chain release rule {rule!r}: use one of "
            f"{', '.join(RELEASE_RULES)}"
        )


def chain_release(
    jobs: Iterable[Job],
    graph: nx.DiGraph | ChainGraph,
    *,
    rule: str = "max",
    releases: Mapping[int, int] | None = None,
    durations: Mapping[int, int] | None = None,
    adjust: Callable[[Job, int], int] | None = None,
) -> dict[int, int]:
    r"""Earliest start of every job when each chain runs back to back.

    In topological order of ``graph``, for a job without predecessor
    ``r'_j = r_j``, and for a successor

    .. math::  r'_j = \max\bigl(r_j,\ \max_{i \to j} (r'_i + p_i + \theta_{ij})\bigr)

    under rule ``"max"``, or without the term ``r_j`` under rule
    ``"predecessor"`` (``theta`` the edge's ``think_time``, 0 when absent):
    the start of job ``j`` on an empty, infinitely wide machine when every
    chain runs back to back (seed 000 §4.3, §10.2). Any schedule respecting
    the chains under the same rule (:data:`RELEASE_RULES`) has ``S_j >=
    r'_j``, by induction along the order: ``S_j >= C_i + theta_ij >= r'_i +
    p_i + theta_ij``, and under ``"max"`` also ``S_j >= r_j``.

    Parameters
    ----------
    jobs
        Every node of ``graph`` must be one of them (``ValueError``).
    graph
        An acyclic precedence graph (:func:`chain_graph`; ``ValueError`` on
        a cycle).
    rule
        ``"max"`` or ``"predecessor"``, see :data:`RELEASE_RULES`.
    releases
        ``r_j`` per job id, default ``job.release`` (e.g. effective
        releases beside busy blocks).
    durations
        ``p_j`` per job id, default the job's run time (the shortest over a
        moldable job's modes, so the bound holds whichever mode runs).
    adjust
        Optional ``(job, t) -> t' >= t``: the earliest start at or after
        ``t`` that is possible at all (e.g. beside busy blocks), applied to
        each ``r'_j``; it must never return a time after a feasible start.

    Returns
    -------
    dict[int, int]
        ``r'_j`` for every job.
    """
    _check_rule(rule)
    if isinstance(graph, ChainGraph):
        graph = graph.graph
    by_id = {job.id: job for job in jobs}
    base = {
        i: (releases[i] if releases is not None else job.release)
        for i, job in by_id.items()
    }
    length = {
        i: (durations[i] if durations is not None else shortest_duration(job))
        for i, job in by_id.items()
    }
    unknown = [node for node in graph if node not in by_id]
    if unknown:
        raise ValueError(f"chain graph names job {unknown[0]}, which is not given")
    out = dict(base)
    floor = rule == "max"
    for node in _ordered(graph):
        ready: int | None = base[node] if floor else None
        for pred, _, data in graph.in_edges(node, data=True):
            after = out[pred] + length[pred] + data.get("think_time", 0)
            ready = after if ready is None else max(ready, after)
        if ready is None:  # no predecessor: its own release
            ready = base[node]
        out[node] = adjust(by_id[node], ready) if adjust is not None else ready
    return out


# --------------------------------------------------------------------------
# Checker rule
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChainViolation:
    """Successor ``successor`` starts at ``start``, before ``earliest`` =
    its predecessor's end plus the think time."""

    predecessor: int
    successor: int
    start: int
    earliest: int

    def __str__(self) -> str:
        return (
            f"job {self.successor}: starts at {self.start}, before its predecessor "
            f"job {self.predecessor} ends plus think time ({self.earliest})"
        )


def chain_violations(
    graph: nx.DiGraph | ChainGraph,
    starts: Mapping[int, int],
    ends: Mapping[int, int],
) -> list[ChainViolation]:
    """Every edge ``i -> j`` with ``S_j < C_i + think(i, j)``.

    Edges with a job absent from ``starts``/``ends`` (unscheduled) are not
    judged here. In edge order of ``graph``.
    """
    if isinstance(graph, ChainGraph):
        graph = graph.graph
    out: list[ChainViolation] = []
    for pred, succ, data in graph.edges(data=True):
        if pred not in ends or succ not in starts:
            continue
        earliest = ends[pred] + data.get("think_time", 0)
        if starts[succ] < earliest:
            out.append(ChainViolation(pred, succ, starts[succ], earliest))
    return out
