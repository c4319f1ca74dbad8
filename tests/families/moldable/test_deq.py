"""DEQ: hand-checked allocations and pieces, non-clairvoyance, the ratio."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched import check
from optsched.heuristics.moldable.deq import (
    deq,
    deq_ratio_bound,
    equipartition,
    fractional_deq_total,
    linear_batch_optimum,
    parse_deq,
)
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.moldable.speedup import parse_model
from optsched.schedule import Piece, Placement, Schedule


def linear(job_id: int, release: int, most: int, work: int) -> Job:
    """A malleable job of ``work`` processor-seconds, linear speed-up up to
    ``most`` processors (``T(p) = ceil(work / p)``)."""
    modes = tuple(Mode(p, math.ceil(work / p)) for p in range(1, most + 1))
    top = modes[-1]
    return Job(
        job_id, release, top.processors, top.runtime, modes=modes, malleable=True
    )


def valid(instance: Instance) -> Schedule:
    schedule = deq(instance)
    assert check.check_schedule(instance, schedule) == []
    assert set(schedule.placements) == {j.id for j in instance.jobs}
    return schedule


def test_equipartition_by_hand() -> None:
    assert equipartition(8, [2, 8, 8]) == [2, 3, 3]
    assert equipartition(8, [8, 8, 8]) == [3, 3, 2]  # remainder: earliest first
    assert equipartition(8, [4, 4]) == [4, 4]  # P_i = P/n gets P_i
    assert equipartition(8, [4, 8]) == [4, 4]
    assert equipartition(8, [1, 2, 8]) == [1, 2, 5]  # recursion: 8/3, then 7/2
    assert equipartition(2, [5, 5, 5]) == [1, 1, 0]  # more jobs than processors
    assert equipartition(7, []) == []


def test_equipartition_recursion_exact() -> None:
    # 10 processors, 4 jobs: 10/4 = 2.5, no P_i <= 2.5 (3 > 2.5): equal split
    # 3, 3, 2, 2 (the two remainders to the first two).
    assert equipartition(10, [3, 3, 9, 9]) == [3, 3, 2, 2]
    # 12 / 4 = 3: the two jobs of 3 get 3; then 6 / 2 = 3 each.
    assert equipartition(12, [3, 3, 9, 9]) == [3, 3, 3, 3]
    # 13 / 4 = 3.25: jobs of 3 get 3, then 7 / 2: 4 and 3.
    assert equipartition(13, [3, 3, 9, 9]) == [3, 3, 4, 3]


def test_three_jobs_on_eight_by_hand() -> None:
    # m = 8, maximum parallelism 2, 8, 8, all at 0: shares 2, 3, 3.
    # Job 1: 12 processor-s (T(2) = 6) ends at 6. Job 2: 24 (T(3) = 8,
    # T(4) = 6, T(8) = 3): 6/8 by 6, then 4 processors: 1/4 left needs
    # 1.5 s, ends at 8 (the ceiling of 7.5). Job 3: 48 (T(3) = 16, T(4) =
    # 12, T(8) = 6): 6/16 + 2/12 by 8, then alone on 8: 11/24 left needs
    # 2.75 s, ends at 11.
    instance = Instance(
        Machine(8), (linear(1, 0, 2, 12), linear(2, 0, 8, 24), linear(3, 0, 8, 48))
    )
    schedule = valid(instance)
    assert schedule[1] == Placement(0, 6, (0, 1))
    assert schedule[2].pieces == (
        Piece(0, 6, (2, 3, 4)),
        Piece(6, 8, (0, 2, 3, 4)),
    )
    assert schedule[3].pieces == (
        Piece(0, 6, (5, 6, 7)),
        Piece(6, 8, (1, 5, 6, 7)),
        Piece(8, 11, tuple(range(8))),
    )
    assert schedule.producer == "deq"


def test_arrival_shrinks_and_completion_grows() -> None:
    # Job 1 (16 processor-s, up to 4) alone on 4 during [0, 1): 1/4 done.
    # Job 2 (8, up to 4) arrives at 1: 2 each; job 1 keeps its lowest two.
    # Job 2: T(2) = 4, ends at 5. Job 1: 1/4 + 4/8 by 5, then 4
    # processors, 1/4 left = 1 s: ends at 6.
    instance = Instance(Machine(4), (linear(1, 0, 4, 16), linear(2, 1, 4, 8)))
    schedule = valid(instance)
    assert schedule[1].pieces == (
        Piece(0, 1, (0, 1, 2, 3)),
        Piece(1, 5, (0, 1)),
        Piece(5, 6, (0, 1, 2, 3)),
    )
    assert schedule[2] == Placement(1, 5, (2, 3))


def test_switch_costs_are_paid_on_every_later_piece() -> None:
    # As above with a resume cost of 1 s: job 1 works 3 s of [1, 5) on 2
    # (3/8), so 1/4 + 3/8 = 5/8 by 5; then a switch, work from 6, 3/8 on
    # 4 processors (T = 4) is 1.5 s: ends at 8 (the ceiling of 7.5).
    instance = Instance(
        Machine(4, switch_cost=1), (linear(1, 0, 4, 16), linear(2, 1, 4, 8))
    )
    schedule = valid(instance)
    assert schedule[1].pieces == (
        Piece(0, 1, (0, 1, 2, 3)),
        Piece(1, 5, (0, 1), 1),
        Piece(5, 8, (0, 1, 2, 3), 1),
    )
    assert schedule[2] == Placement(1, 5, (2, 3))


def test_a_piece_cut_during_its_switch_is_dropped() -> None:
    # Resume cost 2. Job 2 (1 processor-s, up to 1) arrives at 1 and ends
    # at 2: job 1's piece [1, 2) on processor 0 never got past its switch;
    # it is dropped, and job 1 resumes at 2 on both processors, paying 2
    # again: 1/10 done at 1, 9/10 left on T(2) = 10 is 9 s from 4.
    instance = Instance(
        Machine(2, switch_cost=2), (linear(1, 0, 2, 20), linear(2, 1, 1, 1))
    )
    schedule = valid(instance)
    assert schedule[1].pieces == (Piece(0, 1, (0, 1)), Piece(2, 13, (0, 1), 2))
    assert schedule[2] == Placement(1, 2, (1,))


def test_contiguous_machine_packs_ranges_in_release_order() -> None:
    instance = Instance(
        Machine(8, "contiguous"),
        (linear(1, 0, 2, 12), linear(2, 0, 8, 24), linear(3, 0, 8, 48)),
    )
    schedule = valid(instance)
    assert schedule[1] == Placement(0, 6, (0, 1))
    assert schedule[2].pieces == (Piece(0, 6, (2, 3, 4)), Piece(6, 8, (0, 1, 2, 3)))
    assert schedule[3].pieces == (
        Piece(0, 6, (5, 6, 7)),
        Piece(6, 8, (4, 5, 6, 7)),
        Piece(8, 11, tuple(range(8))),
    )


def test_modes_with_gaps_use_the_largest_count_within_the_share() -> None:
    # Job 1 has modes on 1 and 4 processors only: its share 3 (m = 6, two
    # jobs) runs on 1. Job 2 (linear up to 6) uses its 3.
    sparse = Job(1, 0, 4, 3, modes=(Mode(1, 12), Mode(4, 3)), malleable=True)
    instance = Instance(Machine(6), (sparse, linear(2, 0, 6, 30)))
    schedule = valid(instance)
    first = schedule[1].pieces[0] if schedule[1].pieces else schedule[1]
    assert len(first.processors or ()) == 1
    second = schedule[2].pieces[0] if schedule[2].pieces else schedule[2]
    assert len(second.processors or ()) == 3


def test_a_job_that_cannot_use_its_share_waits_latest_first() -> None:
    # Two jobs whose smallest mode is 3 on 4 processors: shares 2 and 2 fit
    # neither, so the later one waits and the earlier one takes its 3 (the
    # largest count within its share 4).
    a = Job(1, 0, 3, 4, modes=(Mode(3, 4),), malleable=True)
    b = Job(2, 0, 3, 2, modes=(Mode(3, 2),), malleable=True)
    schedule = valid(Instance(Machine(4), (a, b)))
    assert schedule[1] == Placement(0, 4, (0, 1, 2))
    assert schedule[2] == Placement(4, 6, (0, 1, 2))


def test_instantaneous_jobs_end_at_release() -> None:
    zero = Job(1, 3, 2, 0, modes=(Mode(1, 0), Mode(2, 0)), malleable=True)
    schedule = valid(Instance(Machine(2), (zero, linear(2, 0, 2, 4))))
    assert schedule[1] == Placement(3, 3, (0,))


def test_refusals_and_spec() -> None:
    rigid = Instance(Machine(2), (Job(1, 0, 1, 5),))
    with pytest.raises(ValueError, match="not malleable"):
        deq(rigid)
    blocked = Instance(
        Machine(2, unavailable=(BusyBlock(0, 5, 1),)), (linear(1, 0, 2, 4),)
    )
    with pytest.raises(ValueError, match="busy blocks"):
        deq(blocked)
    mixed = Job(1, 0, 2, 1, modes=(Mode(1, 0), Mode(2, 1)), malleable=True)
    with pytest.raises(ValueError, match="run time 0"):
        deq(Instance(Machine(2), (mixed,)))
    with pytest.raises(ValueError, match="rigid"):
        deq(Instance(Machine(2), (linear(1, 0, 2, 4),)), rigid="allow")
    assert parse_deq("deq") == {}
    assert parse_deq("DEQ:rigid=refuse") == {"rigid": "refuse"}
    for bad in ("easy", "deq:rigid=allow", "deq:x=1"):
        with pytest.raises(ValueError):
            parse_deq(bad)
    assert deq(Instance(Machine(3), ())) == Schedule({}, "deq")


def _counts_at(schedule: Schedule, time: int) -> dict[int, int]:
    """Processors each job holds during ``[time, time + 1)``."""
    out = {}
    for job_id, placement in schedule.placements.items():
        for start, end, procs in placement.segments():
            if start <= time < end:
                out[job_id] = len(procs or ())
    return out


Spec = tuple[int, str, int, int, list[tuple[int, int, int]]]


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    """Machine size, allocation, switch costs and jobs (release, most, work)."""
    m = draw(st.integers(1, 8))
    jobs = [
        (draw(st.integers(0, 8)), draw(st.integers(1, m)), draw(st.integers(1, 30)))
        for _ in range(draw(st.integers(1, 6)))
    ]
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    costs = draw(st.sampled_from([0, 0, 1, 2])), draw(st.sampled_from([0, 0, 1]))
    return m, allocation, *costs, jobs


def build(spec: Spec, factor: int = 1, costs: bool = True) -> Instance:
    """The instance of ``spec``, every job's work times ``factor``."""
    m, allocation, cost, per_processor, jobs = spec
    machine = Machine(
        m,
        allocation,
        switch_cost=cost if costs else 0,
        switch_cost_per_processor=per_processor if costs else 0,
    )
    return Instance(
        machine,
        tuple(
            linear(k, release, most, work * factor)
            for k, (release, most, work) in enumerate(jobs, start=1)
        ),
    )


@settings(max_examples=150, deadline=None)
@given(specs())
def test_every_schedule_is_valid(spec: Spec) -> None:
    valid(build(spec))


@settings(max_examples=100, deadline=None)
@given(specs())
def test_allocation_is_the_equipartition_of_the_jobs_present(spec: Spec) -> None:
    # Without switch costs every job present runs, at every instant, on
    # its DEQ share (linear modes exist for every count): the allocation
    # is a function of the set of jobs present and their P_i only.
    instance = build(spec, costs=False)
    schedule = valid(instance)
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    horizon = max(p.end for p in schedule.placements.values())
    for t in range(horizon):
        present = [j for j in jobs if j.release <= t < schedule[j.id].end]
        shares = equipartition(instance.processors, [j.size for j in present])
        expected = {j.id: s for j, s in zip(present, shares, strict=True) if s}
        assert _counts_at(schedule, t) == expected


@settings(max_examples=60, deadline=None)
@given(specs(), st.integers(2, 5))
def test_non_clairvoyant_until_the_first_completion(spec: Spec, factor: int) -> None:
    # Multiplying every job's work changes no allocation before a job
    # completes (without switch costs, so that every allocation is held:
    # a piece cut in its switch is dropped, which depends on the next event).
    instance, stretched = build(spec, costs=False), build(spec, factor, costs=False)
    a, b = deq(instance), deq(stretched)
    first = min(p.end for p in (*a.placements.values(), *b.placements.values()))
    for t in range(first):
        assert _counts_at(a, t) == _counts_at(b, t)


def test_speedup_model_instances() -> None:
    rigid = Instance(
        Machine(16),
        tuple(
            Job(k, 3 * k, q, t)
            for k, (q, t) in enumerate([(4, 30), (8, 20), (16, 9), (2, 50)])
        ),
    )
    for spec in ("linear:max=16", "amdahl:f=0.1", "downey:a=6,sigma=1.5"):
        valid(parse_model(spec).apply(rigid, malleable=True))


def test_bound_formula() -> None:
    assert deq_ratio_bound(1) == 1
    assert deq_ratio_bound(2) == pytest.approx(4 / 3)
    assert deq_ratio_bound(3) == pytest.approx(1.5)
    with pytest.raises(ValueError):
        deq_ratio_bound(0)


def test_fractional_deq_by_hand() -> None:
    # Two jobs of 4 processor-s on P = 2, both fully parallel: DEQ gives 1
    # processor each, both end at 4 (total 8); the optimum runs one then
    # the other: 2 + 4 = 6. Ratio 4/3 = 2 - 2/3: the bound is tight.
    assert fractional_deq_total([4, 4], [2, 2], 2) == 8
    assert linear_batch_optimum([4, 4], [2, 2], 2) == pytest.approx(6)
    # Parallelism 1 each on 2 processors: no sharing, both end at 4.
    assert fractional_deq_total([4, 4], [1, 1], 2) == 8
    assert linear_batch_optimum([4, 4], [1, 1], 2) == pytest.approx(8)
    # P = 8, P_i = 2, 8, 8 (the hand-checked case, real shares): 2, 3, 3.
    total = fractional_deq_total([12, 24, 48], [2, 8, 8], 8)
    # Job 1 ends at 6; by 6 job 2 did 18, 6 left on 4 -> 7.5; job 3 did
    # 18 + 6 = 24 by 7.5, 24 left on 8 -> 10.5. Total 6 + 7.5 + 10.5.
    assert total == Fraction(24)


def test_fractional_deq_within_the_bound_of_the_optimum() -> None:
    # DGBL's theorem, checked on random batches (linear speed-up up to P_i,
    # real shares): DEQ / OPT <= 2 - 2/(n+1); OPT is exact (LP per order).
    rng = random.Random(7)
    worst: dict[int, float] = {}
    for _ in range(120):
        n = rng.randint(1, 4)
        m = rng.randint(1, 8)
        most = [rng.randint(1, m) for _ in range(n)]
        works = [p * rng.randint(1, 20) for p in most]
        ratio = float(fractional_deq_total(works, most, m)) / linear_batch_optimum(
            works, most, m
        )
        assert ratio <= deq_ratio_bound(n) + 1e-9
        worst[n] = max(worst.get(n, 0.0), ratio)
    assert worst[1] == pytest.approx(1)  # DEQ is optimal for one job


def test_integer_deq_is_never_below_the_continuous_optimum() -> None:
    # The LP optimum bounds every valid schedule of the integer instance
    # from below (T(p) = ceil(w/p) >= w/p), DEQ's included.
    rng = random.Random(3)
    for _ in range(40):
        n, m = rng.randint(1, 4), rng.randint(1, 8)
        most = [rng.randint(1, m) for _ in range(n)]
        works = [p * rng.randint(1, 20) for p in most]
        instance = Instance(
            Machine(m), tuple(linear(k, 0, most[k], works[k]) for k in range(n))
        )
        total = sum(p.end for p in valid(instance).placements.values())
        assert total >= linear_batch_optimum(works, most, m) - 1e-6


def test_integer_deq_within_the_bound_when_every_job_gets_a_processor() -> None:
    # Measured, not proven: with n <= P whole-processor shares stay within
    # 2 - 2/(n+1) of the continuous optimum (a lower bound of the integer
    # one) on random batches.
    rng = random.Random(12)
    for _ in range(60):
        m = rng.randint(1, 12)
        n = rng.randint(1, min(m, 4))
        most = [rng.randint(1, m) for _ in range(n)]
        works = [p * rng.randint(1, 50) for p in most]
        instance = Instance(
            Machine(m), tuple(linear(k, 0, most[k], works[k]) for k in range(n))
        )
        total = sum(p.end for p in valid(instance).placements.values())
        assert total <= deq_ratio_bound(n) * linear_batch_optimum(works, most, m) + 1e-6


def test_more_jobs_than_processors_is_fcfs_among_them() -> None:
    # One processor, works 12 and 1 at time 0: shares 1 and 0 (the
    # remainder to the earliest), so job 0 runs first: 12 + 13 = 25 against
    # the optimum 1 + 13 = 14, ratio 1.79 > 4/3. Whole processors without
    # time slicing lose DEQ's guarantee.
    instance = Instance(Machine(1), (linear(0, 0, 1, 12), linear(1, 0, 1, 1)))
    schedule = valid(instance)
    assert schedule[0] == Placement(0, 12, (0,))
    assert schedule[1] == Placement(12, 13, (0,))
    assert linear_batch_optimum([12, 1], [1, 1], 1) == pytest.approx(14)
    assert fractional_deq_total([12, 1], [1, 1], 1) == 15  # sharing: 2 + 13
