"""Chains: the precedence graph, the matching rule, the chain release bound."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import draw_jobs
from support.paths import trace_path

from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.io.swf import read_swf
from optsched.models.rigid.bounds import release_bound
from optsched.models.site.bounds import chain_lower_bound_cmax, chain_release_bound
from optsched.site.chains import (
    ChainCounts,
    ChainViolation,
    chain_counts,
    chain_graph,
    chain_release,
    chain_violations,
    infer_chains,
    recorded_end,
    without_chains,
)


def edges(graph: nx.DiGraph) -> set[tuple[int, int, int]]:
    return {(a, b, d["think_time"]) for a, b, d in graph.edges(data=True)}


# --------------------------------------------------------------------------
# chain_graph: golden cases
# --------------------------------------------------------------------------


def test_golden_graph_with_missing_self_and_think_times() -> None:
    jobs = [
        Job(1, 0, 1, 10),
        Job(2, 20, 1, 10, preceding_job=1, think_time=10),
        Job(3, 40, 1, 10, preceding_job=2),  # think None -> 0
        Job(4, 0, 1, 10, preceding_job=99, think_time=5),  # cut off: dropped
        Job(5, 0, 1, 10, preceding_job=5),  # names itself: dropped
        Job(6, 30, 1, 10, preceding_job=1, think_time=-1),  # -1 -> 0
        Job(7, 0, 1, 10, preceding_job=-1),  # SWF missing marker: no edge
    ]
    result = chain_graph(jobs)
    assert set(result.graph.nodes) == {1, 2, 3, 4, 5, 6, 7}
    assert edges(result.graph) == {(1, 2, 10), (2, 3, 0), (1, 6, 0)}
    # One out-tree 1 -> {2 -> 3, 6}: one chain, three jobs on its longest path.
    assert result.counts == ChainCounts(
        with_predecessor=3, chains=1, longest=3, dropped_missing=2, dropped_cycles=0
    )
    assert result.edges == 3


def test_no_chains_counts_zero() -> None:
    result = chain_graph([Job(1, 0, 1, 1), Job(2, 0, 1, 1)])
    assert result.counts == ChainCounts(0, 0, 0, 0, 0)
    assert chain_graph([]).counts == ChainCounts(0, 0, 0, 0, 0)


def test_two_chains_counted_apart() -> None:
    jobs = [
        Job(1, 0, 1, 1),
        Job(2, 0, 1, 1, preceding_job=1),
        Job(3, 0, 1, 1),
        Job(4, 0, 1, 1, preceding_job=3),
        Job(5, 0, 1, 1, preceding_job=4),
        Job(6, 0, 1, 1, preceding_job=5),
    ]
    assert chain_graph(jobs).counts == ChainCounts(4, 2, 4, 0, 0)


def test_cycle_is_broken_at_its_earliest_submitted_job() -> None:
    # 1 -> 2 -> 3 -> 1, job 2 submitted first: the edge 1 -> 2 goes, 2 heads.
    # Job 4 hangs off the cycle (its walk enters the cycle from outside).
    jobs = [
        Job(1, 5, 1, 1, preceding_job=3),
        Job(2, 0, 1, 1, preceding_job=1),
        Job(3, 9, 1, 1, preceding_job=2),
        Job(4, 9, 1, 1, preceding_job=1, think_time=7),
        # A two-cycle with equal releases: the smaller id (10) heads.
        Job(10, 3, 1, 1, preceding_job=11),
        Job(11, 3, 1, 1, preceding_job=10),
    ]
    result = chain_graph(jobs)
    assert edges(result.graph) == {(2, 3, 0), (3, 1, 0), (1, 4, 7), (10, 11, 0)}
    assert result.counts == ChainCounts(4, 2, 4, 0, 2)
    assert nx.is_directed_acyclic_graph(result.graph)


def test_duplicate_ids_refused() -> None:
    with pytest.raises(ValueError, match="job 1: duplicate"):
        chain_graph([Job(1, 0, 1, 1), Job(1, 2, 1, 1)])


def test_chain_counts_of_instance_and_without_chains() -> None:
    jobs = [Job(1, 0, 1, 1), Job(2, 0, 1, 1, preceding_job=1, think_time=4)]
    instance = Instance(Machine(2), tuple(jobs))
    assert chain_counts(instance) == ChainCounts(1, 1, 2, 0, 0)
    assert chain_counts(jobs) == ChainCounts(1, 1, 2, 0, 0)
    cleared = without_chains(jobs)
    assert cleared[0] is jobs[0]
    assert cleared[1] == Job(2, 0, 1, 1)
    assert chain_counts(cleared) == ChainCounts(0, 0, 0, 0, 0)


@st.composite
def pointer_jobs(draw: st.DrawFn) -> list[Job]:
    n = draw(st.integers(1, 9))
    return [
        Job(
            i,
            draw(st.integers(0, 5)),
            1,
            1,
            preceding_job=draw(st.none() | st.integers(-1, n + 1)),
            think_time=draw(st.none() | st.integers(-1, 5)),
        )
        for i in range(1, n + 1)
    ]


@given(pointer_jobs())
@settings(max_examples=200, deadline=None)
def test_graph_properties_on_arbitrary_pointers(jobs: list[Job]) -> None:
    result = chain_graph(jobs)
    graph = result.graph
    assert nx.is_directed_acyclic_graph(graph)
    assert all(graph.in_degree(j) <= 1 for j in graph)
    ids = {j.id for j in jobs}
    named = [j for j in jobs if j.preceding_job is not None and j.preceding_job >= 0]
    missing = [
        j for j in named if j.preceding_job == j.id or j.preceding_job not in ids
    ]
    assert result.counts.dropped_missing == len(missing)
    # Every pointer is either kept, missing, or one dropped per cycle.
    assert len(named) == (
        result.edges + result.counts.dropped_missing + result.counts.dropped_cycles
    )
    for a, b, data in graph.edges(data=True):
        job = next(j for j in jobs if j.id == b)
        assert job.preceding_job == a
        assert data["think_time"] == max(0, job.think_time or 0)
    components = [c for c in nx.weakly_connected_components(graph) if len(c) > 1]
    assert result.counts.chains == len(components)
    longest = nx.dag_longest_path_length(graph) + 1 if result.edges else 0
    assert result.counts.longest == longest


# --------------------------------------------------------------------------
# infer_chains: the matching rule
# --------------------------------------------------------------------------


def q(ident: int, release: int, wait: int | None, runtime: int, **kw: int) -> Job:
    """A job of user 1 in self-submitting queue 5 unless told otherwise."""
    fields = {"user": 1, "queue": 5, **kw}
    return Job(ident, release, 1, runtime, wait=wait, **fields)  # type: ignore[arg-type]


def links(jobs: tuple[Job, ...]) -> dict[int, tuple[int, int]]:
    return {
        j.id: (j.preceding_job, j.think_time)
        for j in jobs
        if j.preceding_job is not None and j.think_time is not None
    }


def test_infer_golden() -> None:
    jobs = [
        q(1, 0, 0, 100),  # ends 100
        q(2, 130, 10, 50),  # 130 - 100 = 30 <= 60: after 1; ends 190
        q(3, 200, 0, 100),  # after 2 (ended 190, the latest); ends 300
        q(4, 200, 0, 250),  # 1 and 2 used, 3 not ended: none; ends 450
        q(5, 500, 0, 10),  # 3 ended 300 (too old), 4 ended 450: after 4
        q(6, 101, 0, 10, user=2),  # another user: 1 is not its predecessor
        q(7, 101, 0, 10, queue=6),  # queue 6 is not self-submitting
        q(8, 520, None, 10),  # no recorded wait: after 5 (ended 510) ...
        q(9, 530, 0, 10),  # ... but cannot be a predecessor itself: none
    ]
    out = infer_chains(jobs, {5})
    assert [j.id for j in out] == [j.id for j in jobs]
    assert links(out) == {2: (1, 30), 3: (2, 10), 5: (4, 50), 8: (5, 10)}
    assert out[0] is jobs[0]  # unmatched jobs come back as they are
    graph = chain_graph(out)
    assert graph.counts == ChainCounts(4, 2, 3, 0, 0)


def test_infer_picks_the_latest_end_and_respects_max_gap() -> None:
    jobs = [
        q(1, 0, 0, 1000),  # ends 1000
        q(2, 0, 10, 1000),  # ends 1010: the latest before 1020
        q(3, 1020, 0, 5),
        q(4, 1020, 0, 5),  # then 1 (ended 1000, gap 20)
        q(5, 1020, 0, 5),  # nothing left
    ]
    assert links(infer_chains(jobs, {5})) == {3: (2, 10), 4: (1, 20)}
    assert links(infer_chains(jobs, {5}, max_gap=15)) == {3: (2, 10)}
    assert links(infer_chains(jobs, {5}, max_gap=0)) == {}
    # Equal ends: the later-submitted (then larger id) predecessor first.
    tie = [q(1, 0, 0, 10), q(2, 5, 0, 5), q(3, 10, 0, 1), q(4, 10, 0, 1)]
    assert links(infer_chains(tie, {5})) == {3: (2, 0), 4: (1, 0)}


def test_infer_keeps_recorded_predecessors_and_their_claims() -> None:
    jobs = [
        q(1, 0, 0, 100),  # ends 100
        q(2, 0, 0, 90),  # ends 90
        q(3, 100, 0, 50, preceding_job=1, think_time=0),  # recorded: kept
        q(4, 110, 0, 1),  # 1 is claimed by 3: takes 2 (gap 20)
    ]
    out = infer_chains(jobs, lambda queue: queue == 5)
    assert links(out) == {3: (1, 0), 4: (2, 20)}
    assert out[2] is jobs[2]
    # A negative preceding job is SWF's "missing": the job is matched anew.
    marked = [q(1, 0, 0, 100), q(2, 110, 0, 1, preceding_job=-1)]
    assert links(infer_chains(marked, {5})) == {2: (1, 10)}


def test_infer_zero_length_jobs_never_form_a_cycle() -> None:
    jobs = [q(1, 10, 0, 0), q(2, 10, 0, 0), q(3, 10, 0, 0)]
    out = infer_chains(jobs, {5})
    assert links(out) == {2: (1, 0), 3: (2, 0)}
    assert chain_graph(out).counts.dropped_cycles == 0


def test_infer_unknown_queue_only_when_accepted() -> None:
    jobs = [q(1, 0, 0, 10, queue=None), q(2, 15, 0, 1, queue=None)]  # type: ignore[arg-type]
    assert links(infer_chains(jobs, {5})) == {}
    assert links(infer_chains(jobs, {5, None})) == {2: (1, 5)}
    assert links(infer_chains(jobs, lambda queue: True)) == {2: (1, 5)}
    # An unknown user never matches.
    anonymous = [q(1, 0, 0, 10, user=None), q(2, 15, 0, 1, user=None)]  # type: ignore[arg-type]
    assert links(infer_chains(anonymous, lambda queue: True)) == {}


def test_infer_rejects_bad_gap() -> None:
    with pytest.raises(ValueError, match="max_gap"):
        infer_chains([], {5}, max_gap=-1)


def reference_infer(
    jobs: list[Job], queues: set[int | None], max_gap: int
) -> dict[int, tuple[int, int]]:
    """The stated rule, quadratically: in (release, id) order, the unused
    earlier-taken job of the same user and queue whose recorded end is in
    [r - max_gap, r], maximising (end, release, id)."""
    order = sorted(jobs, key=lambda j: (j.release, j.id))
    used = {
        j.preceding_job
        for j in jobs
        if j.preceding_job is not None and j.preceding_job >= 0
    }
    out: dict[int, tuple[int, int]] = {}
    for k, job in enumerate(order):
        if job.user is None or job.queue not in queues:
            continue
        if job.preceding_job is not None and job.preceding_job >= 0:
            continue
        best: tuple[int, int, int] | None = None
        for other in order[:k]:
            end = recorded_end(other)
            if (
                other.user == job.user
                and other.queue == job.queue
                and other.id not in used
                and end is not None
                and job.release - max_gap <= end <= job.release
            ):
                best = max(
                    best or (end, other.release, other.id),
                    (end, other.release, other.id),
                )
        if best is not None:
            used.add(best[2])
            out[job.id] = (best[2], job.release - best[0])
    return out


@st.composite
def queue_jobs(draw: st.DrawFn) -> list[Job]:
    n = draw(st.integers(0, 12))
    return draw_jobs(
        draw,
        1,
        (n, n),
        release=40,
        runtime=15,
        wait=st.none() | st.integers(0, 10),
        user=st.sampled_from([1, 2]),
        queue=st.sampled_from([5, 6, None]),
        # Now and then a recorded predecessor (or SWF's -1 marker).
        preceding_job=st.none() | st.none() | st.integers(-1, n),
    )


@given(queue_jobs(), st.integers(0, 20), st.sampled_from([{5}, {5, None}]))
@settings(max_examples=300, deadline=None)
def test_infer_matches_the_stated_rule(
    jobs: list[Job], gap: int, queues: set[int | None]
) -> None:
    out = infer_chains(jobs, queues, max_gap=gap)
    got = links(out)
    assert got == reference_infer(jobs, queues, gap)
    by_id = {j.id: j for j in jobs}
    assert len({p for p, _ in got.values()}) == len(got)  # each used once
    for succ, (pred, think) in got.items():
        a, b = by_id[pred], by_id[succ]
        assert (a.user, a.queue) == (b.user, b.queue) and b.queue in queues
        assert think == b.release - (recorded_end(a) or 0)
        assert 0 <= think <= gap
        assert (a.release, a.id) < (b.release, b.id)  # forward: no cycle


# --------------------------------------------------------------------------
# chain_release and the bound: by hand
# --------------------------------------------------------------------------


HAND = [
    Job(1, 0, 1, 10),
    Job(2, 5, 1, 20, preceding_job=1, think_time=3),
    Job(3, 50, 1, 5, preceding_job=2),
    Job(4, 0, 1, 7, preceding_job=1, think_time=100),
    Job(5, 2, 1, 1),
]


def test_chain_release_by_hand() -> None:
    graph = chain_graph(HAND)
    # r'2 = max(5, 0 + 10 + 3) = 13; r'3 = max(50, 13 + 20 + 0) = 50;
    # r'4 = max(0, 0 + 10 + 100) = 110; 1 and 5 keep their releases.
    assert chain_release(HAND, graph) == {1: 0, 2: 13, 3: 50, 4: 110, 5: 2}
    # max(0 + 10, 13 + 20, 50 + 5, 110 + 7, 2 + 1) = 117
    assert chain_lower_bound_cmax(HAND, graph) == 117
    assert chain_lower_bound_cmax(HAND, graph.graph) == 117
    # Without chains it is the textbook max_j (r_j + p_j) = 55.
    assert chain_lower_bound_cmax(HAND, chain_graph(without_chains(HAND))) == 55
    assert chain_lower_bound_cmax([], nx.DiGraph()) == 0


def test_chain_release_overrides() -> None:
    graph = chain_graph(HAND)
    releases = {1: 4, 2: 0, 3: 0, 4: 0, 5: 0}
    durations = {1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
    # r'1 = 4; r'2 = 4 + 1 + 3 = 8; r'3 = 8 + 1 = 9; r'4 = 4 + 1 + 100 = 105.
    assert chain_release(HAND, graph, releases=releases, durations=durations) == {
        1: 4,
        2: 8,
        3: 9,
        4: 105,
        5: 0,
    }
    assert (
        chain_lower_bound_cmax(HAND, graph, releases=releases, durations=durations)
        == 106
    )


def test_moldable_predecessor_counts_its_shortest_mode() -> None:
    first = Job(1, 0, 1, 10, modes=(Mode(1, 10), Mode(2, 6)))
    jobs = [first, Job(2, 0, 1, 1, preceding_job=1)]
    assert chain_release(jobs, chain_graph(jobs)) == {1: 0, 2: 6}


def test_chain_release_refuses_cycles_and_strangers() -> None:
    cyclic = nx.DiGraph([(1, 2), (2, 1)])
    with pytest.raises(ValueError, match="cycle"):
        chain_release([Job(1, 0, 1, 1), Job(2, 0, 1, 1)], cyclic)
    with pytest.raises(ValueError, match="job 3"):
        chain_release([Job(1, 0, 1, 1)], nx.DiGraph([(1, 3)]))


def test_chain_release_bound_sees_busy_blocks() -> None:
    # Job 2 is ready at 10 (after 1), but the machine is full in [10, 20).
    machine = Machine(2, unavailable=(BusyBlock(10, 20, 2),))
    jobs = (Job(1, 0, 1, 10), Job(2, 0, 1, 5, preceding_job=1))
    instance = Instance(machine, jobs)
    assert chain_lower_bound_cmax(jobs, chain_graph(jobs)) == 15
    bound = chain_release_bound(instance)
    assert bound.method == "chain-release"
    assert bound.value == 25
    # Without the chain: job 2 alone fits in [0, 5).
    assert chain_release_bound(instance, nx.DiGraph()).value == 10


def test_chain_release_bound_with_blocks_under_the_predecessor_rule() -> None:
    # Job 2 (released at 50) may start at 10 + 1 under "predecessor"; the
    # block [100, 101) is far away.
    machine = Machine(2, unavailable=(BusyBlock(100, 101, 2),))
    jobs = (Job(1, 0, 1, 10), Job(2, 50, 1, 5, preceding_job=1, think_time=1))
    instance = Instance(machine, jobs)
    assert chain_release_bound(instance).value == 55
    assert chain_release_bound(instance, rule="predecessor").value == 16


def test_chain_release_bound_leaves_moldable_jobs_beside_blocks() -> None:
    # Requested mode 2 x 6 s cannot start before the block ends, but mode
    # 1 x 10 s can run beside it: the bound keeps the plain release 0 and
    # the shortest run time 6 (the optimum is 10).
    machine = Machine(2, unavailable=(BusyBlock(0, 10, 1),))
    job = Job(1, 0, 2, 6, modes=(Mode(1, 10), Mode(2, 6)))
    assert chain_release_bound(Instance(machine, (job,))).value == 6


def test_chain_release_bound_on_a_machine_with_speeds() -> None:
    # Speed 2 halves the work: p = 5 and 3; 5 + 3 = 8.
    machine = Machine(2, speeds=(2.0, 2.0))
    jobs = (Job(1, 0, 1, 10), Job(2, 0, 1, 6, preceding_job=1))
    assert chain_release_bound(Instance(machine, jobs)).value == 8


# --------------------------------------------------------------------------
# Checker rule
# --------------------------------------------------------------------------


def test_chain_violations_by_hand() -> None:
    graph = chain_graph(HAND)
    starts = {1: 0, 2: 12, 3: 33, 4: 110, 5: 0}
    ends = {1: 10, 2: 32, 3: 38, 4: 117, 5: 1}
    # 2 starts at 12 < 10 + 3; 3 at 33 >= 32; 4 at 110 = 10 + 100.
    assert chain_violations(graph, starts, ends) == [ChainViolation(1, 2, 12, 13)]
    assert "job 2: starts at 12" in str(chain_violations(graph, starts, ends)[0])
    del starts[2]  # unscheduled: not judged here
    assert chain_violations(graph, starts, ends) == []


# --------------------------------------------------------------------------
# The bound against chain-respecting schedules (brute force)
# --------------------------------------------------------------------------


def serial_schedule(
    jobs: list[Job],
    graph: nx.DiGraph,
    m: int,
    order: tuple[int, ...],
    rule: str = "max",
    blocks: tuple[BusyBlock, ...] = (),
) -> dict[int, int] | None:
    """Chain-respecting serial schedule generation: each job of ``order`` at
    its earliest start with at most ``m`` processors busy (the blocks
    included), at or after its predecessor's end plus think and, under rule
    "max" or without predecessor, its release; ``None`` if ``order`` puts a
    successor before its predecessor."""
    by_id = {j.id: j for j in jobs}
    start: dict[int, int] = {}
    for ident in order:
        job = by_id[ident]
        after = []
        for pred, _, data in graph.in_edges(ident, data=True):
            if pred not in start:
                return None
            after.append(start[pred] + by_id[pred].runtime + data["think_time"])
        ready = max(after) if after and rule == "predecessor" else job.release
        ready = max([ready, *after])
        placed = [(b.start, b.end, b.size) for b in blocks] + [
            (start[i], start[i] + by_id[i].runtime, by_id[i].size) for i in start
        ]
        for t in sorted({ready} | {e for _, e, _ in placed if e >= ready}):
            end = t + job.runtime
            points = {t} | {s for s, _, _ in placed if t < s < end}
            if all(
                job.size + sum(q for s, e, q in placed if s <= u < e) <= m
                for u in points
                if u < end
            ):
                start[ident] = t
                break
    return start


def test_serial_schedule_by_hand() -> None:
    # The helper itself: job 2 waits for 1 (ends 10) plus think 2; job 3
    # (2 processors) fills the hole [10, 12). With the block [0, 3) taking 1
    # of 2 processors and job 3 first, 3 runs [3, 4) and 1 after it.
    jobs = [
        Job(1, 0, 1, 10),
        Job(2, 0, 1, 4, preceding_job=1, think_time=2),
        Job(3, 0, 2, 1),
    ]
    graph = chain_graph(jobs).graph
    assert serial_schedule(jobs, graph, 2, (1, 2, 3)) == {1: 0, 2: 12, 3: 10}
    assert serial_schedule(jobs, graph, 2, (2, 1, 3)) is None
    block = (BusyBlock(0, 3, 1),)
    assert serial_schedule(jobs, graph, 2, (3, 1, 2), blocks=block) == {
        3: 3,
        1: 4,
        2: 16,
    }


def test_release_rules_by_hand() -> None:
    jobs = [Job(1, 0, 1, 10), Job(2, 50, 1, 5, preceding_job=1, think_time=1)]
    graph = chain_graph(jobs)
    assert chain_release(jobs, graph) == {1: 0, 2: 50}
    assert chain_release(jobs, graph, rule="predecessor") == {1: 0, 2: 11}
    assert chain_lower_bound_cmax(jobs, graph) == 55
    assert chain_lower_bound_cmax(jobs, graph, rule="predecessor") == 16
    # HAND under "predecessor": job 3 no longer waits for its release 50.
    assert chain_release(HAND, chain_graph(HAND), rule="predecessor") == {
        1: 0,
        2: 13,
        3: 33,
        4: 110,
        5: 2,
    }
    with pytest.raises(ValueError, match="unknown chain release rule"):
        chain_release(jobs, graph, rule="min")


@st.composite
def chained_instances(draw: st.DrawFn) -> tuple[list[Job], int, tuple[BusyBlock, ...]]:
    m = draw(st.integers(1, 3))
    n = draw(st.integers(1, 5))
    jobs = []
    for i in range(1, n + 1):
        pred = draw(st.none() | st.integers(1, i - 1)) if i > 1 else None
        jobs.append(
            Job(
                i,
                draw(st.integers(0, 8)),
                draw(st.integers(1, m)),
                draw(st.integers(0, 6)),
                preceding_job=pred,
                think_time=draw(st.none() | st.integers(0, 4)) if pred else None,
            )
        )
    blocks: tuple[BusyBlock, ...] = ()
    if draw(st.booleans()):
        begin = draw(st.integers(0, 10))
        blocks = (
            BusyBlock(begin, begin + draw(st.integers(1, 8)), draw(st.integers(1, m))),
        )
    return jobs, m, blocks


@given(chained_instances(), st.sampled_from(["max", "predecessor"]))
@settings(max_examples=200, deadline=None)
def test_bound_below_every_chain_respecting_schedule(
    case: tuple[list[Job], int, tuple[BusyBlock, ...]], rule: str
) -> None:
    jobs, m, blocks = case
    graph = chain_graph(jobs).graph
    instance = Instance(Machine(m, unavailable=blocks), tuple(jobs))
    plain = chain_lower_bound_cmax(jobs, graph, rule=rule)
    bound = chain_release_bound(instance, graph, rule=rule).value
    assert bound >= plain
    if not blocks:
        assert bound == plain
    if rule == "max":
        assert bound >= release_bound(instance).value
    by_id = {j.id: j for j in jobs}
    schedules = 0
    for order in itertools.permutations(by_id):
        start = serial_schedule(jobs, graph, m, order, rule, blocks)
        if start is None:
            continue
        schedules += 1
        ends = {i: s + by_id[i].runtime for i, s in start.items()}
        assert chain_violations(graph, start, ends) == []
        assert bound <= max(ends.values())
    assert schedules >= 1
    # On a machine wide enough for every job at once the bound is exact.
    wide = sum(j.size for j in jobs)
    order = tuple(nx.topological_sort(graph))
    start = serial_schedule(jobs, graph, wide, order, rule)
    assert start is not None
    assert start == chain_release(jobs, graph, rule=rule)
    assert max(s + by_id[i].runtime for i, s in start.items()) == plain


# --------------------------------------------------------------------------
# Real trace
# --------------------------------------------------------------------------


def test_kth_trace_has_no_recorded_chains() -> None:
    trace = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf"))
    jobs = trace.instance.jobs
    assert len(jobs) == 28475  # one line is skipped by the reader
    assert chain_counts(trace.instance) == ChainCounts(0, 0, 0, 0, 0)
    # KTH records no queue (field 15 is -1): with queues {5} nobody takes part;
    # accepting the unknown queue matches by user alone.
    assert all(j.queue is None for j in jobs)
    assert links(infer_chains(jobs, {5})) == {}
    inferred = infer_chains(jobs, lambda queue: True)
    got = links(inferred)
    by_id = {j.id: j for j in jobs}
    assert len(got) > 0
    assert len({p for p, _ in got.values()}) == len(got)
    for succ, (pred, think) in got.items():
        a, b = by_id[pred], by_id[succ]
        assert a.user == b.user
        assert think == b.release - (recorded_end(a) or 0)
        assert 0 <= think <= 60
    counts = chain_graph(inferred).counts
    assert counts.with_predecessor == len(got)
    assert (counts.dropped_missing, counts.dropped_cycles) == (0, 0)
