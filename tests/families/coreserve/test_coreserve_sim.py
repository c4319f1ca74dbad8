"""The grid simulation: online reservations in the engine, the local
reservation service, Meltzer's algorithms A1-A5 and the measures."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.coreserve.cluster import LocalCluster
from optsched.coreserve.metrics import measure
from optsched.coreserve.request import Request
from optsched.coreserve.service import (
    GridService,
    ServiceConfig,
    start_grid,
    worst_case_messages,
)
from optsched.coreserve.simulate import simulate_grid
from optsched.coreserve.tariff import HOUR, Tariff
from optsched.heuristics.engine.core import Simulator
from optsched.heuristics.rigid.orders import order_ranks
from optsched.heuristics.spec import parse_policy
from optsched.instance import BusyBlock, Instance, Job, Machine


def _instance(processors: int, jobs: list[tuple[int, int, int, int]]) -> Instance:
    """Jobs as ``(release, size, runtime, estimate)``, ids from 1."""
    return Instance(
        Machine(processors),
        tuple(
            Job(k + 1, release, size, runtime, estimate)
            for k, (release, size, runtime, estimate) in enumerate(jobs)
        ),
    )


def _with_blocks(instance: Instance, blocks: list[BusyBlock]) -> Instance:
    machine = dataclasses.replace(instance.machine, unavailable=tuple(blocks))
    return instance.replace(machine=machine)


def _stepped(instance: Instance, policy: str, kill: bool = False) -> Simulator:
    chosen = parse_policy(policy)
    sim = Simulator(instance, kill_at_estimate=kill, keep_profile=True)
    sim.begin(chosen, order_ranks(chosen.order, sim.size, sim.estimate))
    return sim


# -- the engine: blocks granted during a run ---------------------------
def test_block_added_online_is_respected_golden() -> None:
    # 4 CPUs. A (2 CPUs, 100 s) starts at 0. At time 5 a reservation of 2
    # CPUs over [20, 60) is granted. B (4 CPUs) arrives at 10 and waits for
    # A; C (2 CPUs, 30 s) arrives at 15: [15, 45) would collide with the
    # reservation, so it waits until 60 and backfills (ends 90 <= B's
    # shadow time 100). B starts at 100.
    instance = _instance(4, [(0, 2, 100, 100), (10, 4, 50, 50), (15, 2, 30, 30)])
    sim = _stepped(instance, "easy")
    sim.advance(5)
    block = BusyBlock(20, 60, 2)
    assert sim.add_block(block) == 0
    sim.advance(None)
    sim.finish()
    schedule = sim.schedule("easy")
    starts = {j: p.start for j, p in schedule.placements.items()}
    assert starts == {1: 0, 2: 100, 3: 60}
    assert check_schedule(_with_blocks(instance, [block]), schedule) == []


def test_stepping_without_blocks_equals_one_run() -> None:
    instance = _instance(
        8,
        [(0, 4, 50, 80), (3, 8, 20, 20), (4, 2, 10, 40), (9, 3, 70, 70), (30, 5, 5, 9)],
    )
    for policy in ("easy", "conservative", "fcfs"):
        whole = Simulator(instance, keep_profile=True)
        chosen = parse_policy(policy)
        whole.run(chosen, order_ranks(chosen.order, whole.size, whole.estimate))
        stepped = _stepped(instance, policy)
        for until in (1, 4, 4, 10, 31, 200):
            stepped.advance(until)
        stepped.advance(None)
        stepped.finish()
        assert stepped.schedule(policy).placements == whole.schedule(policy).placements


def test_overrunning_job_is_stopped_at_its_estimate() -> None:
    # A job estimated at 100 s runs 200 s. A reservation over [120, 150),
    # granted at 50, lies in its overrun: it is stopped at its estimate,
    # 100 (killed), as for blocks known in advance. Even on 4 CPUs, where
    # the block leaves room now: the scheduler, not knowing the overrun,
    # could give that room to another job.
    for processors in (2, 4):
        sim = _stepped(_instance(processors, [(0, 2, 200, 100)]), "easy")
        sim.advance(50)
        assert sim.add_block(BusyBlock(120, 150, 2)) == 1
        sim.advance(None)
        sim.finish()
        placement = sim.schedule("easy").placements[1]
        assert (placement.start, placement.end) == (0, 100)
        assert sim.killed == {0}
    # A reservation after the actual end leaves it alone.
    late = _stepped(_instance(2, [(0, 2, 200, 100)]), "easy")
    late.advance(50)
    assert late.add_block(BusyBlock(200, 250, 2)) == 0
    late.advance(None)
    late.finish()
    assert late.schedule("easy").placements[1].end == 200


def test_the_room_beside_a_reservation_is_not_given_away() -> None:
    # Found by Hypothesis: B (est 21, runs 22) would overrun into the
    # reservation [24, 25); had it been left running, C (5 CPUs) would have
    # started at 23 in the room the profile shows, and the reservation
    # would have found its CPU taken.
    instance = _instance(6, [(0, 1, 23, 1), (3, 1, 22, 21), (3, 5, 2, 2)])
    cluster = LocalCluster("c", instance, policy="easy", kill_at_estimate=False)
    cluster.advance(4)
    assert cluster.reserve(0, 0, 24, 25, 1)
    cluster.commit(0)
    cluster.sim.advance(None)
    cluster.sim.finish()
    schedule = cluster.sim.schedule("easy")
    blocked = _with_blocks(instance, [BusyBlock(24, 25, 1)])
    assert check_schedule(blocked, schedule) == []
    assert schedule.placements[2].end == 24  # stopped at its estimate


def test_job_past_its_estimate_holds_its_cpus_for_the_lrs() -> None:
    # At 110 the job (estimate 100, run 200) is still running: its end is
    # unknown, so the LRS counts its CPUs as busy from now on and refuses a
    # reservation that would need them; the engine refuses to cut it.
    cluster = LocalCluster(
        "c", _instance(2, [(0, 2, 200, 100)]), kill_at_estimate=False
    )
    cluster.advance(110)
    assert cluster.occupied(120, 150) == 2
    assert not cluster.reserve(1, 0, 120, 150, 1)
    with pytest.raises(RuntimeError, match="running past its estimate"):
        cluster.sim.add_block(BusyBlock(120, 150, 2), granted_at=110)
    cluster.advance(201)
    assert cluster.reserve(2, 0, 300, 400, 2)


def test_block_in_the_past_is_refused() -> None:
    sim = _stepped(_instance(2, [(0, 1, 10, 10), (20, 1, 10, 10)]), "easy")
    sim.advance(21)
    with pytest.raises(ValueError, match="must start later"):
        sim.add_block(BusyBlock(20, 30, 1))


_jobs = st.lists(
    st.tuples(
        st.integers(0, 60),
        st.integers(1, 6),
        st.integers(1, 40),
        st.integers(1, 40),
    ),
    min_size=1,
    max_size=12,
)
_grants = st.lists(
    st.tuples(
        st.integers(0, 80), st.integers(0, 40), st.integers(1, 30), st.integers(1, 6)
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(
    jobs=_jobs,
    grants=_grants,
    policy=st.sampled_from(["easy", "conservative", "fcfs", "firstfit"]),
    kill=st.booleans(),
)
def test_reservations_are_never_overrun(
    jobs: list[tuple[int, int, int, int]],
    grants: list[tuple[int, int, int, int]],
    policy: str,
    kill: bool,
) -> None:
    # Reservations granted at random instants (only when the status query
    # says they fit, as the LRS does) are busy blocks of the final schedule:
    # the independent checker sees every job beside every block.
    instance = _instance(6, jobs)
    cluster = LocalCluster("c", instance, policy=policy, kill_at_estimate=kill)
    granted = []
    for k, (at, lead, length, cpus) in enumerate(sorted(grants)):
        cluster.advance(at)
        start = at + lead
        if cluster.reserve(k, 0, start, start + length, cpus):
            granted += cluster.commit(k)
    cluster.sim.advance(None)
    cluster.sim.finish()
    blocks = [BusyBlock(r.start, r.end, r.cpus) for r in granted]
    schedule = cluster.sim.schedule(policy)
    assert check_schedule(_with_blocks(instance, blocks), schedule) == []
    for j, placement in schedule.placements.items():
        if j not in schedule.killed:
            assert placement.end - placement.start == instance.job(j).runtime


# -- the local reservation service --------------------------------------------------
def test_status_query_and_state_agree() -> None:
    # 10 CPUs: a 4-CPU job runs [0, 100) (estimate 100), a 6-CPU one
    # [0, 50) (estimate 80). At 10 the table holds 10 CPUs over [10, 80)
    # and 4 over [80, 100).
    instance = _instance(10, [(0, 4, 100, 100), (0, 6, 50, 80)])
    cluster = LocalCluster("c", instance)
    cluster.advance(10)
    assert cluster.occupied(10, 20) == 10
    assert cluster.occupied(80, 90) == 4
    assert cluster.occupied(100, 200) == 0
    assert cluster.reserve(1, 0, 80, 120, 6)
    assert cluster.occupied(90, 95) == 10
    assert not cluster.reserve(2, 0, 85, 90, 1)
    state = cluster.state(10)
    for a, b in [(10, 11), (79, 81), (85, 130), (100, 119), (120, 500)]:
        assert state.occupied(a, b) == cluster.occupied(a, b)
    cluster.rollback(1, 0)
    assert cluster.occupied(90, 95) == 4


def test_backlog_time_listing_4() -> None:
    # 10 CPUs, accuracy 0.5. Running: 4 CPUs x wallclock 100; waiting: 10
    # CPUs x 200. A reservation of 5 CPUs over [300, 400) counts for parts
    # starting after 300 only: a(250) = 0.5 * (400 + 2000) / 10 = 120,
    # a(301) = 120 + 500 / 10 = 170.
    instance = _instance(10, [(0, 4, 100, 100), (1, 10, 200, 200)])
    cluster = LocalCluster("c", instance, wc_accuracy=0.5)
    cluster.advance(2)
    assert cluster.reserve(7, 0, 300, 400, 5)
    cluster.commit(7)
    assert cluster.backlog_time(2, 250) == pytest.approx(120)
    assert cluster.backlog_time(2, 301) == pytest.approx(170)
    assert cluster.backlog_time(2, 301, accuracy=1.0) == pytest.approx(290)
    assert cluster.next_scheduling_event(2) == 100


# -- the service --------------------------------------------------
def test_start_grid_and_worst_case() -> None:
    r = Request(0, 0, 10_000, 1_000, (2,))  # span 9,000 s
    assert start_grid(r, 300, 20) == [450 * i for i in range(20)]
    assert start_grid(r, 3_000, 20) == [0, 3_000, 6_000, 9_000]
    assert start_grid(Request(0, 5, 6, 1, (1,)), 300, 20) == [5]
    # Table 5 (z = 1): 4 clusters, 2 parts -> 12 variants; N = 12 + 2 * 4.
    assert worst_case_messages(1, 4, 2, "a4") == 20
    # 8,400 variants for 200 starts, 7 clusters, 2 parts (§6.4).
    assert worst_case_messages(200, 7, 2, "a1") == 8_400 + 2 * 1_400
    assert worst_case_messages(1, 4, 2, "a5") == 12 + 2 * 12


def _empty_cluster(name: str, cpus: int, tariff: Tariff) -> LocalCluster:
    # One tiny job far in the future: the simulator needs a job.
    instance = _instance(cpus, [(10**6, 1, 1, 1)])
    return LocalCluster(name, instance, tariff)


def test_a5_resorts_after_a_failure_fig_13() -> None:
    # Parts [2, 1] on clusters X, Y, Z at flat prices 30, 40, 110 per
    # CPU-hour, 1 h: the variants cost 2p(first) + p(second) (two samples
    # for an exact hour: x2): X->Y 200, X->Z 340, Y->X 220, ... The best,
    # X->Y, fails at its last part (Y refuses part 1). Plain DFS would go on
    # with X->Z (340); A5 re-sorts, rolls X back and reserves Y->X (220).
    clusters = [
        _empty_cluster(n, 4, Tariff.flat(p))
        for n, p in (("X", 30), ("Y", 40), ("Z", 110))
    ]
    y = clusters[1]
    real = y.reserve

    def refuse_part_1(request: int, part: int, start: int, end: int, cpus: int) -> bool:
        return part != 1 and real(request, part, start, end, cpus)

    y.reserve = refuse_part_1  # type: ignore[method-assign]
    request = Request(0, 0, HOUR, HOUR, (1, 2), id=5)
    config = ServiceConfig("a5", windows=1, k=1.0, s=0.0)
    outcome = GridService(clusters, config).process(request, 0)
    # Parts in the client's order: part 0 (1 CPU) on X, part 1 (2 CPUs) on Y.
    assert outcome.clusters == (0, 1)
    assert outcome.cost == Fraction(220)
    assert (outcome.messages.reserve, outcome.messages.rollback) == (4, 1)
    plain = [
        _empty_cluster(n, 4, Tariff.flat(p))
        for n, p in (("X", 30), ("Y", 40), ("Z", 110))
    ]
    real_plain = plain[1].reserve
    plain[1].reserve = (  # type: ignore[method-assign]
        lambda request, part, start, end, cpus: (
            part != 1 and real_plain(request, part, start, end, cpus)
        )
    )
    service = GridService(plain, config)
    roots = service._tree(request, [2, 1], [(0, 0, 0), (1, 1, 0), (1, 2, 0)])
    found = service._dfs(request, roots, [2, 1], [], outcome)
    assert found is not None and [n.cluster for n in found] == [0, 2]


def test_a1_reserves_blindly_and_a2_filters() -> None:
    # One cluster of three is full over the whole window: A1 tries it when
    # the random order puts it first (a failed reserve message), A2's
    # status query removes it (filter degree 1 there, 0 elsewhere).
    request = Request(1, 1, 2_001, 1_000, (2,), id=1)
    reserves: dict[str, list[int]] = {"a1": [], "a2": []}
    for algorithm in reserves:
        for seed in range(8):
            clusters = [
                LocalCluster("full", _instance(4, [(0, 4, 10_000, 10_000)])),
                *[_empty_cluster(n, 4, Tariff()) for n in ("a", "b")],
            ]
            for c in clusters:
                c.advance(1)
            config = ServiceConfig(algorithm, windows=1)
            outcome = GridService(clusters, config, seed=seed).process(request, 1)
            assert outcome.accepted and outcome.clusters != (0,)
            reserves[algorithm].append(outcome.messages.reserve)
            if algorithm == "a2":
                assert outcome.filter_degree(0) == 1.0
                assert outcome.filter_degree(1) == 0.0
    assert set(reserves["a2"]) == {1}
    assert set(reserves["a1"]) == {1, 2}


def _synthetic_cluster(name: str, seed: int, cpus: int = 16) -> LocalCluster:
    import random

    rng = random.Random(seed)
    jobs = []
    t = 0
    for _ in range(60):
        t += rng.randrange(0, 900)
        estimate = rng.randrange(60, 7_200)
        jobs.append(
            (t, rng.randrange(1, cpus + 1), rng.randrange(1, estimate + 1), estimate)
        )
    return LocalCluster(name, _instance(cpus, jobs), Tariff.day_night(2, 1))


def _requests(seed: int, count: int = 12) -> list[Request]:
    import random

    rng = random.Random(seed)
    out = []
    for k in range(count):
        start = rng.randrange(0, 40_000)
        duration = rng.randrange(600, 7_200)
        submit = max(0, start - rng.randrange(0, 10_000))
        span = rng.randrange(0, 30_000)
        parts = tuple(rng.randrange(1, 12) for _ in range(rng.randrange(1, 4)))
        out.append(
            Request(submit, start, start + duration + span, duration, parts, id=k)
        )
    return out


@pytest.mark.parametrize("algorithm", ["a1", "a2", "a3", "a3bf", "a4", "a5"])
def test_grid_run_is_feasible_and_within_bounds(algorithm: str) -> None:
    clusters = [_synthetic_cluster(f"c{i}", i) for i in range(3)]
    config = ServiceConfig(algorithm, k=0.5, s=0.5)
    run = simulate_grid(clusters, _requests(7), config, seed=1, optimum=True)
    for cluster in clusters:
        blocks = [BusyBlock(r.start, r.end, r.cpus) for r in cluster.granted]
        schedule = cluster.sim.schedule("easy")
        assert check_schedule(_with_blocks(cluster.instance, blocks), schedule) == []
    for outcome in run.outcomes:
        r = outcome.request
        assert outcome.messages.reservation <= outcome.worst_case
        if not outcome.accepted:
            continue
        assert outcome.start is not None and outcome.clusters is not None
        assert r.earliest_start <= outcome.start <= r.latest_start
        assert len(set(outcome.clusters)) == len(r.parts)
        # Never better than the exact optimum on the same cluster states.
        best = run.optima[r.id]
        assert best.earliest is not None and outcome.start >= best.earliest
        assert best.cheapest is not None and outcome.cost is not None
        assert outcome.cost >= best.cheapest
    m = measure(run, 50_000)
    assert m.accepted == sum(o.accepted for o in run.outcomes)
    assert math.isclose(m.failure_rate, 1 - m.accepted / m.requests)
    assert 0 <= m.unfairness <= 1
    for c in m.clusters:
        assert 0 <= c.job_utilisation + c.reservation_utilisation <= 1 + 1e-9


def test_a4_sorts_by_start_and_a5_with_s_1_is_a4() -> None:
    runs = {}
    for algorithm, k, s in (("a4", 0.0, 1.0), ("a5", 0.0, 1.0)):
        clusters = [_synthetic_cluster(f"c{i}", i) for i in range(3)]
        run = simulate_grid(
            clusters, _requests(11), ServiceConfig(algorithm, k=k, s=s), seed=2
        )
        runs[algorithm] = [(o.accepted, o.start) for o in run.outcomes]
        for o in run.outcomes:
            if o.accepted:
                assert o.start_range is not None and o.start == o.start_range[0]
    assert runs["a4"] == runs["a5"]


def test_offline_window_of_a_run_bounds_the_online_acceptance() -> None:
    from optsched.coreserve.offline_check import check_offline
    from optsched.coreserve.offline_window import offline_window
    from optsched.models.coreserve.offline import competitive_gap, solve_offline

    clusters = [_synthetic_cluster(f"c{i}", i) for i in range(3)]
    run = simulate_grid(clusters, _requests(7), ServiceConfig("a3"), seed=1)
    window = offline_window(run, 5_000, 15_000)
    assert window.requests
    # Running jobs become busy CPUs; the online outcome is a solution.
    assert any(c.busy for c in window.clusters)
    assert check_offline(window.clusters, window.requests, window.online) == []
    offline = solve_offline(window.clusters, window.requests, time_limit=2, workers=1)
    assert check_offline(window.clusters, window.requests, offline) == []
    gap = competitive_gap(window.clusters, window.requests, window.online, offline)
    assert gap.accepted_bound is not None
    assert gap.accepted_bound >= max(gap.online_accepted, gap.offline_accepted)
    inside = [o for o in run.outcomes if 5_000 <= o.request.submit < 15_000]
    assert gap.online_accepted == sum(o.accepted for o in inside)


def test_backlog_accuracy_from_history() -> None:
    # No job has ended at 10: accuracy 1 (pessimistic). At 60 the first job
    # (run 50 of wallclock 100) has: 0.5, and the second (200 of 200,
    # running, 2 CPUs) counts 0.5 * 200 * 2 / 4 = 50 s of backlog.
    instance = _instance(4, [(0, 4, 50, 100), (0, 2, 200, 200)])
    cluster = LocalCluster("c", instance)
    cluster.advance(10)
    assert cluster.history_accuracy() == 1.0
    cluster.advance(60)
    assert cluster.history_accuracy() == 0.5
    assert cluster.backlog_time(60, 1_000) == pytest.approx(50)


def test_a_cluster_needs_an_engine_policy() -> None:
    with pytest.raises(ValueError, match="needs the engine"):
        LocalCluster("c", _instance(4, [(0, 1, 1, 1)]), policy="pbi")
