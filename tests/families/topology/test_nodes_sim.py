"""The node simulator: placements, speeds, SMP span limits, inflation, and
agreement with a naive reference simulator of Rassmann's pseudo-code."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import trace_path
from support.simulation import checked, run_checked, runs_of

from optsched.heuristics import simulate
from optsched.heuristics.topology.combinators import (
    BASE_ORDERS,
    KINDS,
    CombinatorSpec,
    base_ranks,
    run_combinator,
    selection,
)
from optsched.heuristics.topology.simulator import (
    NodeSimulator,
    Pool,
    resolve_placement,
)
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.nodes import Nodes, ceiling, exact_run_time


# -- placements -------------------------------------------------------------
def test_auto_placement_follows_the_machine() -> None:
    assert resolve_placement("auto", Machine(4)) == "lowest"
    assert resolve_placement("auto", Machine(2, speeds=(1, 2))) == "fastest"
    nodes = Machine(4, speeds=(1, 1, 2, 2), nodes=Nodes(2, 2, tight=0))
    assert resolve_placement("auto", nodes) == "smp"
    assert resolve_placement("lowest", Machine(4, nodes=Nodes(2, 2))) == "lowest"


@pytest.mark.parametrize(
    ("placement", "machine", "message"),
    [
        ("smp", Machine(4), "needs a machine with SMP nodes"),
        ("lowest", Machine(4, nodes=Nodes(2, 2, tight=1)), "span limit"),
        ("fastest", Machine(4, nodes=Nodes(2, 2, tight=0)), "span limit"),
        ("best", Machine(4), "unknown placement"),
    ],
)
def test_placements_refused_where_they_do_not_apply(
    placement: str, machine: Machine, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_placement(placement, machine)


def test_fastest_takes_speed_descending_then_lowest_id() -> None:
    pool = Pool(Machine(5, speeds=(1, 3, 2, 3, 1)), "fastest")
    assert pool.choose(1) == (1,)
    assert pool.choose(3) == (1, 2, 3)
    assert pool.choose(4) == (0, 1, 2, 3)
    assert pool.factor(3) == Fraction(1, 8)  # 1 / (3 + 3 + 2)
    pool.take((1, 3))
    assert pool.choose(2) == (0, 2)
    pool.give((3,))
    assert pool.choose(1) == (3,)
    assert pool.choose(5) is None


def test_lowest_takes_the_lowest_free_ids() -> None:
    pool = Pool(Machine(4, speeds=(1, 3, 2, 3)), "lowest")
    pool.take((0, 2))
    assert pool.choose(2) == (1, 3)
    assert pool.factor(2) == Fraction(1, 6)


def test_smp_takes_the_fullest_nodes_first_and_obeys_the_span_limit() -> None:
    # 3 nodes of 4 CPUs; node 0 keeps 1 free, node 1 keeps 3, node 2 keeps 2.
    pool = Pool(Machine(12, nodes=Nodes(3, 4, tight=0)), "smp")
    pool.take((0, 1, 2, 4, 8, 9))
    assert pool.group_free == [1, 3, 2]
    assert pool.choose(3) == (5, 6, 7)  # one node: node 1
    assert pool.choose(2) == (5, 6)
    # 4 CPUs need 1 node at tight 0: no node has 4 free, although 6 are.
    assert pool.choose(4) is None
    assert not pool.fits(4)
    # 5 CPUs may span 2 nodes: nodes 1 and 2 (3 + 2).
    assert pool.choose(5) == (5, 6, 7, 10, 11)
    assert pool.fits(5)
    loose = Pool(Machine(12, nodes=Nodes(3, 4, tight=1)), "smp")
    loose.take((0, 1, 2, 4, 8, 9))
    assert loose.choose(4) == (5, 6, 7, 10)  # node 1, then node 2 (more free)


def test_smp_ties_go_to_the_lower_node() -> None:
    pool = Pool(Machine(6, nodes=Nodes(3, 2)), "smp")
    assert pool.choose(1) == (0,)
    assert pool.choose(3) == (0, 1, 2)
    pool.take((0,))
    assert pool.choose(1) == (2,)  # node 1 has 2 free, node 0 only 1


# -- hand-checked schedules ------------------------------------------------
def test_speeds_run_ceil_work_over_the_fastest_free_speeds() -> None:
    # Speeds 1, 2, 3. A (work 12, 2 CPUs) gets CPUs 2 and 1: 12 / 5 -> 3 s.
    # B (work 5, 1 CPU) gets CPU 0: 5 s. C (work 6, 1 CPU, released at 1)
    # waits for CPU 2 (speed 3) at 3: 6 / 3 = 2 s.
    instance = Instance(
        Machine(3, speeds=(1, 2, 3)),
        (Job(1, 0, 2, 12), Job(2, 0, 1, 5), Job(3, 1, 1, 6)),
    )
    schedule = checked(instance, run_combinator(instance, "blocking:f=fifo"))
    assert runs_of(schedule) == {1: (0, 3, (1, 2)), 2: (0, 5, (0,)), 3: (3, 5, (2,))}
    assert schedule.producer == "blocking:f=fifo"
    lowest = checked(
        instance, run_combinator(instance, "blocking:f=fifo,placement=lowest")
    )
    # A on CPUs 0 and 1: 12 / 3 = 4 s; B on CPU 2: ceil(5 / 3) = 2 s; C at
    # 2 on CPU 2: 2 s.
    assert runs_of(lowest) == {1: (0, 4, (0, 1)), 2: (0, 2, (2,)), 3: (2, 4, (2,))}


def test_backfill_reads_est_on_the_set_the_placement_gives_now() -> None:
    # Speeds 4, 1, 1. A (work 8, 1 CPU) runs on CPU 0: 2 s, estimated 2.
    # Head H (3 CPUs) waits for t* = 2. Candidate C (work 2, 1 CPU) gets
    # CPU 1 (speed 1): est = 2 <= gap 2, so it backfills; D (work 3) would
    # need 3 > 2 s: time-only backfilling refuses it, optimistic too (no
    # extra CPU at t*).
    instance = Instance(
        Machine(3, speeds=(4, 1, 1)),
        (Job(1, 0, 1, 8), Job(2, 0, 3, 6), Job(3, 0, 1, 3), Job(4, 0, 1, 2)),
    )
    for spec in ("afkt-backfill:f=fifo", "optimistic:f=fifo"):
        schedule = checked(instance, run_combinator(instance, spec))
        assert runs_of(schedule) == {
            1: (0, 2, (0,)),
            2: (2, 3, (0, 1, 2)),  # 6 / 6
            3: (3, 4, (0,)),  # ceil(3 / 4)
            4: (0, 2, (1,)),
        }


def test_span_limit_blocks_a_job_despite_enough_free_cpus() -> None:
    # 2 nodes of 2 CPUs. A and B (1 CPU, 10 s) land on different nodes
    # (fullest node first), so C (2 CPUs) finds 2 free CPUs on 2 nodes:
    # at tight 0 it may touch 1 node and waits until 10; at tight 1 it
    # starts at once on CPUs 1 and 3.
    jobs = (Job(1, 0, 1, 10), Job(2, 0, 1, 10), Job(3, 0, 2, 10))
    tight = Instance(Machine(4, nodes=Nodes(2, 2, tight=0)), jobs)
    schedule = run_checked(tight, "fcfs")
    assert runs_of(schedule) == {
        1: (0, 10, (0,)),
        2: (0, 10, (2,)),
        3: (10, 20, (0, 1)),
    }
    assert schedule.producer == "fcfs"
    loose = Instance(Machine(4, nodes=Nodes(2, 2, tight=1)), jobs)
    schedule = run_checked(loose, "fcfs")
    assert runs_of(schedule)[3] == (0, 10, (1, 3))


def test_inflation_grows_with_the_span_at_level_two() -> None:
    # Level 2, base 0.05: span 1 costs x1.1, span 2 x1.2 ("ratio").
    jobs = (Job(1, 0, 1, 10), Job(2, 0, 1, 10), Job(3, 0, 2, 10))
    tight = Instance(Machine(4, nodes=Nodes(2, 2, tight=0, level=2)), jobs)
    assert runs_of(run_checked(tight, "easy")) == {
        1: (0, 11, (0,)),
        2: (0, 11, (2,)),
        3: (11, 22, (0, 1)),
    }
    loose = Instance(Machine(4, nodes=Nodes(2, 2, tight=1, level=2)), jobs)
    assert runs_of(run_checked(loose, "easy"))[3] == (0, 12, (1, 3))
    # "excess": only the node beyond the minimum pays: 1 + 0.05*2*1.
    excess = Instance(
        Machine(4, nodes=Nodes(2, 2, tight=1, level=2, cost="excess")), jobs
    )
    runs = runs_of(run_checked(excess, "easy"))
    assert runs[1] == (0, 10, (0,))
    assert runs[3] == (0, 11, (1, 3))


def test_topology_aware_easy_backfills_by_the_span_rule() -> None:
    # 2 nodes of 2 CPUs, tight 0. A (1 CPU, 10 s) on CPU 0, B (2 CPUs, 4 s)
    # on node 1. Head H (2 CPUs) fits on one node when B ends: t* = 4; node
    # 0 then still has 1 free CPU, so a 1-CPU job of 20 s may start now on
    # CPU 1: H still fits on node 1 at t* (the extra rule on per-node
    # counts). AFKT's time-only rule refuses it (20 > 4).
    jobs = (
        Job(1, 0, 1, 10),
        Job(2, 0, 2, 4),
        Job(3, 1, 2, 5),
        Job(4, 1, 1, 20),
    )
    instance = Instance(Machine(4, nodes=Nodes(2, 2, tight=0)), jobs)
    easy = runs_of(run_checked(instance, "easy"))
    assert easy[4] == (1, 21, (1,))
    assert easy[3] == (4, 9, (2, 3))
    afkt = runs_of(run_checked(instance, "fifo-back"))
    assert afkt[3] == (4, 9, (2, 3))
    assert afkt[4] == (4, 24, (1,))


def test_a_job_without_run_time_gives_its_processors_back_at_once() -> None:
    instance = Instance(Machine(1, speeds=(2,)), (Job(1, 0, 1, 0), Job(2, 0, 1, 4)))
    schedule = checked(instance, run_combinator(instance, "blocking:f=fifo"))
    assert runs_of(schedule) == {1: (0, 0, (0,)), 2: (0, 2, (0,))}


def test_a_job_overrunning_its_estimate_keeps_running() -> None:
    # A's estimate is 2 but it runs 6: from time 2 on the shadow of H (2
    # CPUs) counts A's end as "now", so C (released at 2, 3 s) may not
    # backfill (gap 0) and waits for H.
    jobs = (Job(1, 0, 1, 6, 2), Job(2, 0, 2, 1), Job(3, 2, 1, 3))
    instance = Instance(Machine(2, speeds=(1, 1)), jobs)
    for spec in ("afkt-backfill:f=fifo", "optimistic:f=fifo"):
        runs = runs_of(checked(instance, run_combinator(instance, spec)))
        assert runs == {1: (0, 6, (0,)), 2: (6, 7, (0, 1)), 3: (7, 10, (0,))}


def test_an_estimated_end_in_the_past_counts_as_now() -> None:
    # 4 CPUs. A, B, C (1 CPU, 10 s) were estimated to end at 1, 2 and 10.
    # At 5, H (2 CPUs) waits with 1 CPU free. A and B are overdue: both
    # count as ending "now", so t* = 5 and 3 CPUs are free then (extra 1):
    # optimistic backfilling starts D (1 CPU, estimate 100) at 5, as the
    # flat engine's EASY does. Taking their past ends as they are would give
    # t* = 1 (B's end 2 is not t*) and extra 0.
    jobs = (
        Job(1, 0, 1, 10, 1),
        Job(2, 0, 1, 10, 2),
        Job(3, 0, 1, 10, 10),
        Job(4, 5, 2, 1),
        Job(5, 5, 1, 100),
    )
    instance = Instance(Machine(4, speeds=(1, 1, 1, 1)), jobs)
    runs = runs_of(checked(instance, run_combinator(instance, "optimistic:f=fifo")))
    assert runs[5] == (5, 105, (3,))
    assert runs[4] == (10, 11, (0, 1))
    flat = Instance(Machine(4), jobs)
    assert simulate(flat, "easy").schedule[5].start == 5
    # The gap is 0, not negative: a job with estimate 0 still backfills.
    zero = (*jobs[:4], Job(5, 5, 1, 3, 0))
    instance = Instance(Machine(4, speeds=(1, 1, 1, 1)), zero)
    runs = runs_of(checked(instance, run_combinator(instance, "afkt-backfill:f=fifo")))
    assert runs[5] == (5, 8, (3,))


def test_busy_blocks_are_refused() -> None:
    instance = Instance(
        Machine(2, unavailable=(BusyBlock(0, 5, 1),)), (Job(1, 0, 1, 1),)
    )
    with pytest.raises(ValueError, match="busy blocks"):
        run_combinator(instance, "fit:f=fifo")


# -- the EASY guarantee on SMP nodes ----------------------------------------
@st.composite
def machines(draw: st.DrawFn) -> Machine:
    """Flat, speeds, SMP nodes or both; at most 6 processors."""
    kind = draw(st.sampled_from(["flat", "speeds", "nodes", "both"]))
    if kind in ("nodes", "both"):
        count, cpus = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        nodes: Nodes | None = Nodes(
            count,
            cpus,
            tight=draw(st.sampled_from([None, 0, 1])),
            level=draw(st.integers(0, 3)),
            cost=draw(st.sampled_from(["ratio", "excess"])),
        )
        m = count * cpus
    else:
        nodes, m = None, draw(st.integers(1, 6))
    speeds = None
    if kind in ("speeds", "both"):
        speeds = tuple(
            draw(st.lists(st.sampled_from([0.5, 1, 1.5, 2, 3]), min_size=m, max_size=m))
        )
    return Machine(m, speeds=speeds, nodes=nodes)


@st.composite
def instances(draw: st.DrawFn, exact: bool = False) -> Instance:
    machine = draw(machines())
    jobs = []
    for k in range(draw(st.integers(1, 7))):
        work = draw(st.integers(0, 12))
        estimate = work if exact else draw(st.integers(0, 15))
        size = draw(st.integers(1, machine.processors))
        jobs.append(Job(k, draw(st.integers(0, 8)), size, work, estimate))
    return Instance(machine, tuple(jobs))


@settings(max_examples=60, deadline=None)
@given(instance=instances(exact=True))
def test_a_topology_aware_easy_head_starts_by_its_first_shadow_time(
    instance: Instance,
) -> None:
    spec = CombinatorSpec("optimistic", "fifo", "fifo")
    sim = NodeSimulator(instance, "auto")
    sim.add_order("fifo", base_ranks("fifo", sim.jobs))
    choose = selection(spec)
    promised: dict[int, int] = {}

    def spy(sim: NodeSimulator) -> int | None:
        head = sim.head("fifo")
        if head is not None and not sim.fits(head) and head not in promised:
            promised[head] = sim.shadow(head).time
        return choose(sim)

    sim.run(spy)
    checked(instance, sim.schedule("optimistic:f=fifo"))
    for j, time in promised.items():
        assert sim.start_time[j] <= time


# -- a naive reference of Rassmann's pseudo-code ----------------------------
def _reference(instance: Instance, spec: CombinatorSpec) -> dict:
    """Rassmann's §A2.2/§A2.3 written out plainly: processor sets instead of
    counts, exact fractions, the queue scanned in full, brute-force span
    feasibility."""
    machine = instance.machine
    speeds, nodes = machine.exact_speeds(), machine.nodes
    placement = resolve_placement(spec.placement, machine)
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    draws = random.Random(spec.seed or 0)
    draw = {job.id: draws.random() for job in jobs}

    def key(order: str, job: Job) -> tuple:
        # Work per processor: the estimate is the work on speeds, a run
        # time (work / size) on identical processors.
        per = job.size if speeds is not None else 1
        ratio = Fraction(job.requested, per)
        return {
            "fifo": (job.release, job.id),
            "fid": (job.id,),
            "spt": (ratio, job.id),
            "lpt": (-ratio, -job.id),
            "random": (draw[job.id], job.id),
        }[order]

    def place(size: int, free: set[int]) -> tuple[int, ...] | None:
        if placement == "smp":
            assert nodes is not None
            per = {
                g: sorted(p for p in free if p // nodes.cpus == g)
                for g in range(nodes.count)
            }
            limit = nodes.span_limit(size)
            feasible = any(
                sum(len(per[g]) for g in chosen) >= size
                for k in range(1, limit + 1)
                for chosen in combinations(range(nodes.count), k)
            )
            taken: list[int] = []
            for g in sorted(per, key=lambda g: (-len(per[g]), g)):
                taken += per[g][: size - len(taken)]
            if len(taken) < size or nodes.span(taken) > limit:
                assert not feasible, "greedy missed a feasible set"
                return None
            assert feasible
            return tuple(sorted(taken))
        if placement == "fastest" and speeds is not None:
            ranked = sorted(free, key=lambda p: (-speeds[p], p))
        else:
            ranked = sorted(free)
        return tuple(sorted(ranked[:size])) if len(ranked) >= size else None

    def run_time(work: int, procs: tuple[int, ...]) -> Fraction:
        return exact_run_time(work, procs, speeds, nodes)

    free = set(range(machine.processors))
    running: list[tuple[int, int, Job, tuple[int, ...]]] = []  # end, c_hat
    queue: list[Job] = []
    pending = list(jobs)
    out = {}
    t = 0

    def select() -> Job | None:
        def first(order: str, candidates: list[Job]) -> Job | None:
            return min(candidates, key=lambda j: key(order, j), default=None)

        fitting = [j for j in queue if place(j.size, free) is not None]
        h = first(spec.f, queue)
        if spec.kind == "blocking":
            return h if h in fitting else None
        if spec.kind == "fit":
            return first(spec.f, fitting)
        if h is None or h in fitting:
            return h
        if spec.kind == "fit2":
            return first(spec.g, fitting)
        later = set(free)
        shadow = None
        for _, c_hat, _, procs in sorted(
            running, key=lambda r: (max(r[1], t), r[2].id)
        ):
            c_hat = max(c_hat, t)
            if shadow is None or c_hat == shadow or place(h.size, later) is None:
                later |= set(procs)
                shadow = c_hat
            else:
                break
        assert shadow is not None
        gap = shadow - t
        allowed = []
        for j in fitting:
            procs = place(j.size, free)
            assert procs is not None
            if run_time(j.requested, procs) <= gap or (
                spec.kind == "optimistic"
                and place(h.size, later - set(procs)) is not None
            ):
                allowed.append(j)
        return first(spec.g, allowed)

    while pending or queue or running:
        for run in [r for r in running if r[0] <= t]:
            running.remove(run)
            free |= set(run[3])
        while pending and pending[0].release <= t:
            queue.append(pending.pop(0))
        while queue and (job := select()) is not None:
            procs = place(job.size, free)
            assert procs is not None
            end = t + ceiling(run_time(job.runtime, procs))
            c_hat = t + ceiling(run_time(job.requested, procs))
            queue.remove(job)
            out[job.id] = (t, end, procs)
            if end > t:
                free -= set(procs)
                running.append((end, c_hat, job, procs))
        t = min([r[0] for r in running] + [j.release for j in pending[:1]], default=t)
    return out


@settings(max_examples=150, deadline=None)
@given(
    instance=instances(),
    kind=st.sampled_from(KINDS),
    f=st.sampled_from(BASE_ORDERS),
    g=st.sampled_from(BASE_ORDERS),
    seed=st.integers(0, 3),
)
def test_every_combinator_matches_the_naive_reference(
    instance: Instance, kind: str, f: str, g: str, seed: int
) -> None:
    if kind in ("blocking", "fit"):
        g = f
    random_order = "random" in (f, g)
    spec = CombinatorSpec(kind, f, g, seed=seed if random_order else None)
    schedule = checked(instance, run_combinator(instance, spec))
    assert schedule.producer == spec.canonical
    assert runs_of(schedule) == _reference(instance, spec)


@settings(max_examples=40, deadline=None)
@given(instance=instances(), kind=st.sampled_from(KINDS))
def test_counting_placements_match_the_reference(instance: Instance, kind: str) -> None:
    nodes = instance.machine.nodes
    if nodes is not None and nodes.tight is not None:
        instance = instance.replace(
            machine=instance.machine.replace(
                nodes=Nodes(nodes.count, nodes.cpus, level=nodes.level)
            )
        )
    for placement in ("lowest", "fastest"):
        spec = CombinatorSpec(kind, "spt", "spt", placement=placement)
        schedule = checked(instance, run_combinator(instance, spec))
        assert runs_of(schedule) == _reference(instance, spec)


# -- the KTH trace on Wang's 10 x 10 cluster --------------------------------
def test_a_kth_window_on_smp_nodes_passes_the_checker() -> None:
    from optsched.io.swf import read_swf

    trace = read_swf(trace_path("KTH-SP2-1996-2.1-cln.swf"))
    jobs = trace.instance.jobs[:1500]
    machine = Machine(100, nodes=Nodes(10, 10, tight=2, level=3))
    instance = Instance(machine, jobs)
    for spec in ("easy", "fcfs", "lpt-fifo-optim"):
        schedule = run_checked(instance, spec)
        assert len(schedule.placements) == len(jobs)
