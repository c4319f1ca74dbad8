"""The simulator at archive scale (issue 16): the indexed backfilling passes
and the conservative bookkeeping equal the whole-queue scans they replace.

The references below are the scans of the previous version, kept verbatim
(only renamed): every candidate of the queue looked at in selection order,
and conservative backfilling scanning the queue for new arrivals, due
reservations and the earliest reservation (the latter with the void
reservations of issue 28 added to the scan).
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from support.builders import draw_jobs, draw_machine, slow_settings

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.heuristics.engine.core import WAITING, Simulator, WaitingIndex
from optsched.heuristics.rigid import policies
from optsched.heuristics.rigid.orders import order_ranks
from optsched.heuristics.rigid.policies import (
    Backfill,
    Conservative,
    _Reservations,
    easy_shadow,
    planned,
)
from optsched.heuristics.spec import parse_policy
from optsched.instance import Instance, Job, Machine
from optsched.packing import Profile
from optsched.schedule import Schedule

SETTINGS = slow_settings(60)

BACKFILL_SPECS = (
    "easy",
    "easy:select=largest",
    "easy:select=smallest",
    "easy:select=largest-area",
    "easy:select=submit",
    "easy:order=spt",
    "easy:order=lpt,oracle",
    "easy:select=largest,maxwait=20",
    "easy:select=largest,maxidle=0.3",
    "backfill:depth=2",
    "backfill:depth=3,order=spt",
    "backfill:depth=2,select=smallest",
    "backfill:depth=3,select=largest-area",
)


# ---------------------------------------------------------------------------
# References: the previous whole-queue scans
# ---------------------------------------------------------------------------
def _scan_candidates(
    policy: Backfill, sim: Simulator, queue: list[int], first: int
) -> list[int]:
    rest = queue[first:]
    if policy.select == "queue":
        return rest
    if policy.select == "submit":
        return sorted(rest)
    size, estimate = sim.size, sim.estimate
    position = {j: k for k, j in enumerate(rest)}
    if policy.select == "largest":
        return sorted(rest, key=lambda j: (-size[j], position[j]))
    if policy.select == "smallest":
        return sorted(rest, key=lambda j: (size[j], position[j]))
    return sorted(rest, key=lambda j: (-size[j] * estimate[j], position[j]))


@dataclass(frozen=True)
class ScanBackfill(Backfill):
    """Backfill deciding by scanning every candidate (the previous code)."""

    def decide(self, sim: Simulator, state: Any) -> None:
        if self.depth == 1 and not sim.blocks_pending:
            self._scan_easy(sim)
        else:
            self._scan_profile(sim)

    def _scan_easy(self, sim: Simulator) -> None:
        queue = sim.queue
        n = len(queue)
        size = sim.size
        simple = sim.simple
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
            return
        shadow, extra = easy_shadow(sim, size[head])
        sim.reserve(head, shadow)
        if no_candidates or self._limited(sim, head):
            return
        estimate = sim.estimate
        now = sim.now
        for c in _scan_candidates(self, sim, queue, i + 1):
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
                if sim.end_time[c] > now:
                    extra -= q
            if free == 0:
                return

    def _scan_profile(self, sim: Simulator) -> None:
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
            if (
                q <= sim.free
                and (d == 0 or profile.fits(now, d, q))
                and sim.can_start(j)
            ):
                sim.start(j)
                if end_time[j] > now:
                    profile.add(now, now + d, -q)
                continue
            span = planned(d)
            t = profile.earliest(q, span)
            assert t is not None
            profile.add(t, t + span, -q)
            sim.reserve(j, t)
            reserved += 1
            if head is None:
                head = j
        if stop >= len(queue) or sim.free == 0:
            return
        if head is not None and self._limited(sim, head):
            return
        for c in _scan_candidates(self, sim, queue, stop):
            q, d = size[c], estimate[c]
            if (
                q <= sim.free
                and (d == 0 or profile.fits(now, d, q))
                and sim.can_start(c)
            ):
                sim.start(c)
                if end_time[c] > now:
                    profile.add(now, now + d, -q)
                if sim.free == 0:
                    return


@dataclass(frozen=True)
class ScanConservative(Conservative):
    """Conservative backfilling scanning the whole queue (the previous
    bookkeeping, with issue 28's void reservations)."""

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
        void: set[int] = set()
        ended_at_once = False
        for j in sim.queue:
            t = reserved.get(j)
            if t is None or t > now:
                continue
            if t == now and sim.can_start(j):
                ended_at_once |= _scan_begin(sim, state, j)
            else:  # void: its rectangle leaves the plan
                del reserved[j]
                profile.add(t, t + planned(sim.estimate[j]), size[j])
                void.add(j)
        compress = early or ended_at_once or bool(void)
        while True:
            if compress:
                _scan_compress(sim, state, void)
                void = set()
            _scan_reserve_arrivals(sim, state)
            compress = _scan_start_due(sim, state)
            if not compress:
                break
        later = [t for t in reserved.values() if t > now]
        sim.plan_wake(min(later) if later else None)


def _scan_reserve_arrivals(sim: Simulator, state: _Reservations) -> None:
    profile, reserved = state.profile, state.start
    size, estimate, job_state = sim.size, sim.estimate, sim.state
    for j in sim.queue:
        if j not in reserved and job_state[j] == WAITING:
            q, span = size[j], planned(estimate[j])
            t = profile.earliest(q, span)
            assert t is not None
            profile.add(t, t + span, -q)
            reserved[j] = t
            sim.reserve(j, t)
            sim.predict(j, t)


def _scan_begin(sim: Simulator, state: _Reservations, j: int) -> bool:
    # Start j at its reservation now; whether it ended at once.
    now = sim.now
    sim.start(j)
    del state.start[j]
    if sim.end_time[j] == now:
        state.profile.add(now, now + planned(sim.estimate[j]), sim.size[j])
        return True
    return False


def _scan_start_due(sim: Simulator, state: _Reservations) -> bool:
    ended_at_once = False
    for j in sim.queue:
        if state.start.get(j) == sim.now and sim.can_start(j):
            ended_at_once |= _scan_begin(sim, state, j)
    return ended_at_once


def _scan_compress(sim: Simulator, state: _Reservations, void: set[int]) -> None:
    now = sim.now
    profile = state.profile
    reserved = state.start
    size, estimate = sim.size, sim.estimate
    times, free = profile.times, profile.free
    for j in sim.queue:
        q, span = size[j], planned(estimate[j])
        old = reserved.get(j)
        if j in void:
            t = profile.earliest(q, span)
            assert t is not None
        elif old is None or old <= now:
            continue
        else:
            if max(free[: bisect_left(times, old)]) < q:
                continue
            t = profile.earliest_before(q, span, old)
            if t is None:
                continue
            profile.add(old, old + span, q)
        profile.add(t, t + span, -q)
        reserved[j] = t


def _run(instance: Instance, policy: Any, **options: Any) -> tuple[Simulator, Schedule]:
    sim = Simulator(instance, keep_profile=policy.needs_profile, **options)
    sim.run(policy, order_ranks(policy.order, sim.size, sim.estimate))
    return sim, sim.schedule(policy.spec)


def _reference(spec: str) -> Any:
    policy = parse_policy(spec)
    fields = {k: v for k, v in vars(policy).items()}
    if isinstance(policy, Backfill):
        return ScanBackfill(**fields)
    assert isinstance(policy, Conservative)
    return ScanConservative(**fields)


@contextmanager
def _index_kept(between: tuple[int, int]) -> Iterator[None]:
    # Backfilling's queue lengths for keeping the index: (0, -1) always,
    # (3, 1) switches it on and off often, the defaults for long queues.
    saved = policies.INDEX_FROM, policies.INDEX_UNTIL
    policies.INDEX_FROM, policies.INDEX_UNTIL = between
    try:
        yield
    finally:
        policies.INDEX_FROM, policies.INDEX_UNTIL = saved


KEPT = st.sampled_from([(0, -1), (3, 1), (policies.INDEX_FROM, policies.INDEX_UNTIL)])


def _same_run(
    instance: Instance, spec: str, kept: tuple[int, int] = (0, -1), **options: Any
) -> None:
    # The indexed policy and the scanning reference agree on every job's
    # start, end and processors, the first reservations and predictions.
    policy = parse_policy(spec)
    with _index_kept(kept):
        fast_sim, fast = _run(instance, policy, **options)
    slow_sim, slow = _run(instance, _reference(spec), **options)
    assert fast == slow
    assert fast_sim.first_reservation == slow_sim.first_reservation
    assert fast_sim.predicted == slow_sim.predicted
    assert check_schedule(instance, fast) == []


# ---------------------------------------------------------------------------
# Instances with long queues
# ---------------------------------------------------------------------------
@st.composite
def queued(draw: st.DrawFn, allocation: str | None = None) -> Instance:
    """Random instances whose jobs arrive faster than they can run, so the
    queue grows long; estimates over and under the run times, zero-length
    jobs, busy blocks (offsets on contiguous machines)."""
    m = draw(st.integers(1, 16))
    allocation = allocation or draw(st.sampled_from(["any", "any", "contiguous"]))
    jobs = draw_jobs(
        draw,
        m,
        (1, 45),
        release=60,
        runtime=30,
        estimate=lambda run: st.sampled_from([run, run * 2, run // 2 + 1, 40]),
    )
    machine = draw_machine(draw, m, allocation, latest_block=80)
    return Instance(machine, tuple(jobs), name="queued")


def _saturated(n: int, m: int, seed: int) -> Instance:
    """A deterministic heavily queued instance: offered load about 1.3."""
    rng = random.Random(seed)
    jobs = []
    release = 0
    for i in range(n):
        release += rng.randrange(0, 12)
        size = min(m, int(rng.paretovariate(1.2)))
        runtime = rng.randrange(0, 200)
        estimate = max(runtime, rng.choice([runtime, 2 * runtime, 300, 1000]))
        jobs.append(Job(i + 1, release, size, runtime, estimate))
    return Instance(Machine(m), tuple(jobs), name=f"saturated-{seed}")


# ---------------------------------------------------------------------------
# The index itself
# ---------------------------------------------------------------------------
@SETTINGS
@given(
    data=st.data(),
    n=st.integers(1, 40),
    scale=st.sampled_from([1, 2**20, 2**40, 2**70]),
)
def test_waiting_index_answers_like_a_scan(
    data: st.DataObject, n: int, scale: int
) -> None:
    # ``scale`` multiplies every size, estimate and test bound: the index
    # keeps 4-byte columns up to 2**31, 8-byte ones up to 2**63, lists past.
    size = data.draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    estimate = data.draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    size = [q * scale for q in size]
    estimate = [d * scale for d in estimate]
    order = data.draw(st.permutations(range(n)))
    index = WaitingIndex(order, size, estimate)
    waiting: set[int] = set()
    for _ in range(data.draw(st.integers(1, 30))):
        j = data.draw(st.integers(0, n - 1))
        if j in waiting:
            index.remove(j)
            waiting.discard(j)
        else:
            index.add(j)
            waiting.add(j)
        first = data.draw(st.integers(0, n))
        free, extra = data.draw(st.integers(0, 10)), data.draw(st.integers(0, 10))
        horizon = data.draw(st.integers(0, 50))
        free, extra, horizon = free * scale, extra * scale, horizon * scale
        after = [j for j in order[first:] if j in waiting]
        easy = [
            j
            for j in after
            if size[j] <= free and (estimate[j] <= horizon or size[j] <= extra)
        ]
        assert index.next_easy(first, free, extra, horizon) == (easy or [None])[0]

        def fewest(d: float, h: int = horizon) -> float:
            return (10 if d <= h else 3) * scale  # a non-increasing step

        fitting = [
            j
            for j in after
            if size[j] <= free and (estimate[j] == 0 or size[j] <= fewest(estimate[j]))
        ]
        assert index.next_fitting(first, free, fewest) == (fitting or [None])[0]


@SETTINGS
@given(data=st.data())
def test_fewest_free_is_the_profile_minimum(data: st.DataObject) -> None:
    from optsched.heuristics.rigid.policies import _fewest_free

    now = data.draw(st.integers(0, 20))
    profile = Profile(now, 10)
    for _ in range(data.draw(st.integers(0, 6))):
        start = data.draw(st.integers(now, now + 40))
        profile.add(
            start, start + data.draw(st.integers(1, 30)), -data.draw(st.integers(1, 3))
        )
    fewest = _fewest_free(profile)
    for d in range(1, 80):
        assert fewest(d) == profile.min_free(now, now + d)


# ---------------------------------------------------------------------------
# Policies against the scans
# ---------------------------------------------------------------------------
@SETTINGS
@given(instance=queued(), spec=st.sampled_from(BACKFILL_SPECS), kept=KEPT)
def test_indexed_backfilling_equals_the_scan(
    instance: Instance, spec: str, kept: tuple[int, int]
) -> None:
    _same_run(instance, spec, kept)


@SETTINGS
@given(
    instance=queued(allocation="contiguous"),
    spec=st.sampled_from(BACKFILL_SPECS),
    kept=KEPT,
)
def test_indexed_backfilling_equals_the_scan_with_migration(
    instance: Instance, spec: str, kept: tuple[int, int]
) -> None:
    # Not every job that passes the index's test can start (no contiguous
    # range): can_start still decides.
    _same_run(instance, spec, kept, migration=True, allocation_rule="best-fit")


@SETTINGS
@given(
    instance=queued(),
    spec=st.sampled_from(
        ["conservative", "conservative:order=spt", "conservative:oracle"]
    ),
    kill=st.booleans(),
)
def test_conservative_bookkeeping_equals_the_scan(
    instance: Instance, spec: str, kill: bool
) -> None:
    _same_run(instance, spec, kill_at_estimate=kill)


def test_saturated_instances_equal_the_scan() -> None:
    # Queues of 200 jobs: the index skips most of them at every pass.
    instance = _saturated(700, 32, seed=16)
    for spec in (
        "easy",
        "easy:select=largest",
        "easy:select=largest-area",
        "backfill:depth=3",
        "conservative",
    ):
        _same_run(instance, spec, kept=(policies.INDEX_FROM, policies.INDEX_UNTIL))
        _same_run(instance, spec, kept=(0, -1))
    assert simulate(instance, "easy").stats.max_queue > 200


def test_saturated_golden_values() -> None:
    # Golden digests of the saturated instance, computed with the previous
    # (scanning) version: sum of the start times and the makespan.
    instance = _saturated(700, 32, seed=16)
    got = {}
    for spec in ("easy", "backfill:depth=3", "conservative"):
        schedule = simulate(instance, spec).schedule
        starts = [p.start for p in schedule.placements.values()]
        got[spec] = (sum(starts), max(p.end for p in schedule.placements.values()))
    assert got == GOLDEN


GOLDEN = {
    "easy": (1_934_133, 6_016),
    "backfill:depth=3": (1_964_066, 6_018),
    "conservative": (1_807_182, 5_889),
}


def test_column_processor_sets_equal_the_plain_ones() -> None:
    # The simulator stores each finished job's ranges as runs; the
    # placements built from them hold the same values and types as the
    # tuples built one id at a time (a ProcessorSet beyond 4,096 ids).
    from optsched.heuristics.engine.core import _flat
    from optsched.intervals import RunStore

    cases = (
        [range(3, 9)],
        range(0, 300),
        [range(0, 2), range(250, 290)],
        [range(7, 8)],
        [range(0, 5000)],
        [range(0, 3), range(70_000, 70_002)],  # beyond the shared ints
    )
    store = RunStore(len(cases))
    for k, ids in enumerate(cases):
        store.put(k, [ids] if isinstance(ids, range) else ids)
    columns = store.columns()
    for k, ids in enumerate(cases):
        assert columns[k] == _flat(ids)
        assert type(columns[k]) is type(_flat(ids))


def test_a_simulated_schedule_is_stored_column_wise() -> None:
    # The schedule of a run keeps starts, ends and processor runs in
    # columns; each placement is built when read, its ids shared with every
    # other set (the memory of a saturated 450k-job run).
    from optsched.schedule import PlacementColumns

    instance = Instance(Machine(64), tuple(Job(k, 0, 20, 5) for k in range(1, 5)))
    schedule = simulate(instance, "fcfs").schedule
    assert check_schedule(instance, schedule) == []
    assert isinstance(schedule.placements, PlacementColumns)
    sets = [schedule.placements[k].processors for k in range(1, 5)]
    assert sets[:3] == [tuple(range(0, 20)), tuple(range(20, 40)), tuple(range(40, 60))]
    assert schedule.placements[4].start == 5 and sets[3] == sets[0]
    assert sets[3][19] is sets[0][19]  # one int object for processor 19
