"""Mallmann's backfilling family (heuristics/rigid/mallmann.py) and EASY-SJBF.

Golden schedules are hand-checked (the comment of each case says why);
``Job(id, release, size, runtime, estimate)``. Every schedule goes through
the checker.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.builders import random_periods, simulate_checked, slow_settings, starts_of
from support.simulation import run_checked

from optsched.calendar import HOLIDAY, Calendar, Period
from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.heuristics.rigid import policies
from optsched.heuristics.rigid.mallmann import FAIRNESS_OF, VARIANTS, Mallmann
from optsched.heuristics.rigid.policies import Backfill
from optsched.heuristics.spec import parse_policy, valid_names
from optsched.instance import Instance, Job, Machine


def _starts(instance: Instance, spec: str) -> dict[int, int]:
    schedule = run_checked(instance, spec)
    assert sorted(schedule.placements) == sorted(j.id for j in instance.jobs)
    return starts_of(schedule)


def _instance(m: int, *jobs: Job, calendar: Calendar | None = None) -> Instance:
    return Instance(Machine(m, calendar=calendar), tuple(jobs))


# -- selectors ------------------------------------------------------------------
# m = 8. J1 (3) runs to 100; the head J2 needs all 8, so it starts at 100 in
# every case (every candidate ends by 100). Five processors are free at 0.
SELECTORS = _instance(
    8,
    Job(1, 0, 3, 100, 100),
    Job(2, 0, 8, 10, 10),
    Job(3, 0, 3, 50, 50),
    Job(4, 0, 1, 50, 50),
    Job(5, 0, 2, 50, 50),
)


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        # ff: queue order, J3 (3) then J4 (1); J5 (2) no longer fits: at 50.
        ("ff", {1: 0, 2: 100, 3: 0, 4: 0, 5: 50}),
        # bs: largest first, J3 (3) then J5 (2); J4 waits for 50.
        ("bs", {1: 0, 2: 100, 3: 0, 4: 50, 5: 0}),
        # ws: smallest first, J4 (1) then J5 (2); J3 (3) waits for 50.
        ("ws", {1: 0, 2: 100, 3: 50, 4: 0, 5: 0}),
    ],
)
def test_selectors_pick_different_jobs(variant: str, expected: dict[int, int]) -> None:
    assert _starts(SELECTORS, f"mallmann:variant={variant}") == expected


def test_fc_resorts_by_submit() -> None:
    # LSF queue at 1: J2 (8, head: J1 holds 6 until 100), J4 (2), J3 (1).
    # ff takes J4 (first in size order) and fills the 2 free processors; fc
    # takes J3 (submitted first), J4 then fits no more and waits for 51.
    # Without fairness the head is delayed to the candidates' end, 101.
    instance = _instance(
        8,
        Job(1, 0, 6, 100, 100),
        Job(2, 1, 8, 10, 10),
        Job(3, 1, 1, 50, 50),
        Job(4, 1, 2, 50, 50),
    )
    ff = _starts(instance, "mallmann:order=lsf")
    fc = _starts(instance, "mallmann:order=lsf,variant=fc")
    assert ff == {1: 0, 2: 101, 3: 51, 4: 1}
    assert fc == {1: 0, 2: 101, 3: 1, 4: 51}


# J1 (4) runs to 100, the head J2 (8) starts at 100. J3: 2 x 80 (requested
# 150); J4: 4 x 20 (requested 90). Demands: actual J3 160 > J4 80,
# requested J4 360 > J3 300.
DEMAND = _instance(
    8,
    Job(1, 0, 4, 100, 100),
    Job(2, 0, 8, 10, 10),
    Job(3, 0, 2, 80, 150),
    Job(4, 0, 4, 20, 90),
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # bd: J3 first (ends at 80, fair); J4 (4) no longer fits until 80,
        # and then ends by 100 (fair): 80.
        ("mallmann:variant=bd,fairness=1", {1: 0, 2: 100, 3: 0, 4: 80}),
        # bqd0: J4 first, no check; J3 fits at J4's end, 20.
        ("mallmann:variant=bqd", {1: 0, 2: 100, 3: 20, 4: 0}),
        # bqd2: J4 ends by its request 90 <= 100 (fair); J3's requested end
        # (170 from 20) overlaps J2 at 100: it waits for J2's end, 110.
        ("mallmann:variant=bqd,fairness=2", {1: 0, 2: 100, 3: 110, 4: 0}),
    ],
)
def test_demand_selectors(spec: str, expected: dict[int, int]) -> None:
    assert _starts(DEMAND, spec) == expected


# -- fairness -----------------------------------------------------------------
# J1 (4) to 100; head J2 (8). J3 (4) runs 150 (requested 150); J4 (4) runs
# 50 but requests 200.
FAIRNESS = _instance(
    8,
    Job(1, 0, 4, 100, 100),
    Job(2, 0, 8, 10, 10),
    Job(3, 0, 4, 150, 150),
    Job(4, 0, 4, 50, 200),
)


@pytest.mark.parametrize(
    ("fairness", "expected"),
    [
        # 0: J3 starts at once and delays J2 to 150; J4 backfills at 100.
        (0, {1: 0, 2: 150, 3: 0, 4: 100}),
        # 1: J3 would end after 100 (not fair); J4 really ends at 50: fair.
        (1, {1: 0, 2: 100, 3: 110, 4: 0}),
        # 2: by its request J4 ends at 200: not fair either; both at 110.
        (2, {1: 0, 2: 100, 3: 110, 4: 110}),
    ],
)
def test_fairness_versions(fairness: int, expected: dict[int, int]) -> None:
    assert _starts(FAIRNESS, f"mallmann:fairness={fairness}") == expected


def test_profile_and_shadow_readings_differ() -> None:
    # Head J2 (6) starts at 100 with 2 processors to spare. J3 (2 x 300)
    # fits beside it: the profile reading starts it at 0; the shadow
    # reading wants it to end by 100, so it starts with J2 at 100.
    instance = _instance(
        8, Job(1, 0, 4, 100, 100), Job(2, 0, 6, 10, 10), Job(3, 0, 2, 300, 300)
    )
    assert _starts(instance, "mallmann:fairness=1") == {1: 0, 2: 100, 3: 0}
    shadow = {1: 0, 2: 100, 3: 100}
    assert _starts(instance, "mallmann:fairness=1,reading=shadow") == shadow


def test_profile_reading_protects_every_job_ahead() -> None:
    # m = 10. J1 (6) to 100; head J2 (8) previewed at 100-110 with 2 to
    # spare, then J3 (10) at 110-120. J4 (2 x 115) fits beside the head but
    # not beside J3: it waits for J3's end, 120. EASY protects only the
    # head and backfills J4 at 0 on the 2 extra processors, delaying J3.
    instance = _instance(
        10,
        Job(1, 0, 6, 100, 100),
        Job(2, 0, 8, 10, 10),
        Job(3, 0, 10, 10, 10),
        Job(4, 0, 2, 115, 115),
    )
    assert _starts(instance, "mallmann:fairness=1") == {1: 0, 2: 100, 3: 110, 4: 120}
    assert _starts(instance, "easy") == {1: 0, 2: 100, 3: 115, 4: 0}


def test_strict_backfill_is_the_lhr95_rule() -> None:
    # The head J2 (8) can start at 100. J3 requests 200 (runs 60): by the
    # request it ends after 100, so the strict rule refuses it; J4 requests
    # 10: it starts at 0. The alias equals the explicit spec.
    instance = _instance(
        8,
        Job(1, 0, 6, 100, 100),
        Job(2, 0, 8, 10, 10),
        Job(3, 0, 2, 60, 200),
        Job(4, 0, 1, 10, 10),
    )
    expected = {1: 0, 2: 100, 3: 110, 4: 0}
    assert _starts(instance, "strict-backfill") == expected
    explicit = "mallmann:variant=ff,fairness=2,reading=shadow"
    assert _starts(instance, explicit) == expected
    assert parse_policy(explicit) == parse_policy("strict-backfill")
    # With exact run times (fairness 1) J3 ends by 60 and is backfilled at
    # 0 (the 2 free processors); J4 follows at 60 (ends 70 <= 100).
    exact = "mallmann:fairness=1,reading=shadow"
    assert _starts(instance, exact) == {1: 0, 2: 100, 3: 0, 4: 60}


# -- best combination ---------------------------------------------------------
# m = 10. J1 (3) to 100, head J2 (10). 7 processors free: J3 (4), J4 (5),
# J5 (2), each 50.
COMBINATION = _instance(
    10,
    Job(1, 0, 3, 100, 100),
    Job(2, 0, 10, 10, 10),
    Job(3, 0, 4, 50, 50),
    Job(4, 0, 5, 50, 50),
    Job(5, 0, 2, 50, 50),
)


def test_bc_fills_better_than_ff() -> None:
    # ff: J3 (4) + J5 (2) = 6 of 7; J4 at 50. bc: J4 + J5 = 7; J3 at 50.
    assert _starts(COMBINATION, "mallmann") == {1: 0, 2: 100, 3: 0, 4: 50, 5: 0}
    assert _starts(COMBINATION, "mallmann:variant=bc") == {
        1: 0,
        2: 100,
        3: 50,
        4: 0,
        5: 0,
    }


def test_bc_maximum_fragmentation() -> None:
    # Only J3 (2) can be backfilled into 7 free of 10: 5 would stay idle.
    # f = 0.4 (4 idle allowed) refuses it, J3 waits for J2 (100-110);
    # f = 0.5 (5 allowed, "more than" is the rule) starts it.
    instance = _instance(
        10, Job(1, 0, 3, 100, 100), Job(2, 0, 10, 10, 10), Job(3, 0, 2, 50, 50)
    )
    assert _starts(instance, "mallmann:variant=bc,f=0.4") == {1: 0, 2: 100, 3: 110}
    assert _starts(instance, "mallmann:variant=bc,f=0.5") == {1: 0, 2: 100, 3: 0}


# -- sequential queues --------------------------------------------------------
SEQUENTIAL = Calendar((), sequential_queues=frozenset({7}))


def test_fc3_and_bs3_start_sequential_jobs_first() -> None:
    # J1 (4) to 100, head J2 (8). J3 (queue 1) and J4 (queue 7, sequential)
    # both fit in the 4 free; fc takes J3 (submitted first), fc3 J4.
    instance = _instance(
        8,
        Job(1, 0, 4, 100, 100, queue=1),
        Job(2, 0, 8, 10, 10, queue=1),
        Job(3, 0, 4, 50, 50, queue=1),
        Job(4, 0, 4, 50, 50, queue=7),
        calendar=SEQUENTIAL,
    )
    first_come = {1: 0, 2: 100, 3: 0, 4: 50}
    sequential_first = {1: 0, 2: 100, 3: 50, 4: 0}
    assert _starts(instance, "mallmann:variant=fc") == first_come
    assert _starts(instance, "mallmann:variant=fc3") == sequential_first
    assert _starts(instance, "mallmann:variant=bs") == first_come  # equal sizes
    assert _starts(instance, "mallmann:variant=bs3") == sequential_first
    # Without a calendar there are no sequential queues: fc3 is fc.
    plain = dataclasses.replace(instance, machine=Machine(8))
    assert _starts(plain, "mallmann:variant=fc3") == first_come


def test_a_head_held_by_its_sequential_queue_is_skipped() -> None:
    # J2 waits for J1 (same sequential queue 7): it is demoted, and J3 (6 x
    # 500) starts at once as the next job in queue order, without any
    # fairness check (the strict rule would refuse a 500 s backfill).
    instance = _instance(
        8,
        Job(1, 0, 2, 100, 100, queue=7),
        Job(2, 0, 2, 10, 10, queue=7),
        Job(3, 0, 6, 500, 500, queue=1),
        calendar=SEQUENTIAL,
    )
    assert _starts(instance, "strict-backfill") == {1: 0, 2: 100, 3: 0}


def test_calendar_size_limit_demotes_capacity_blocks() -> None:
    # Over [0, 600) every day: at most 4 processors per job (first case) or
    # a batch capacity of 4 (second case). J1 (6) waits for 600 in both.
    # Above the size limit it is held by a rule and skipped: J2 (2 x 1000)
    # starts at once with no fairness check. Above the capacity it lacks
    # processors: it is the head, previewed at 0 (the preview counts
    # processors only), so the strict rule refuses J2 until 600.
    def calendar(capacity: int, largest: int) -> Calendar:
        days = (*range(7), HOLIDAY)
        return Calendar((Period(days, 0, 600, capacity, largest),))

    jobs = (Job(1, 0, 6, 100, 100), Job(2, 0, 2, 1000, 1000))
    sized = _instance(8, *jobs, calendar=calendar(8, 4))
    assert _starts(sized, "strict-backfill") == {1: 600, 2: 0}
    capped = _instance(8, *jobs, calendar=calendar(4, 8))
    assert _starts(capped, "strict-backfill") == {1: 600, 2: 600}


# -- the LJSF limits ----------------------------------------------------------
def test_fragmentation_limit_suspends_until_the_head_starts() -> None:
    # m = 10. J1 (3) to 100; head J2 (8 x 50). J3 (1) backfills at 0 and
    # leaves 6 idle > 0.5 x 10: backfilling stops until J2 starts, so J5
    # (1) waits. At 100 J2 starts, the new head J4 (10) is blocked and
    # backfilling resumes: J5 at 100. Without f, J5 starts at 0.
    instance = _instance(
        10,
        Job(1, 0, 3, 100, 100),
        Job(2, 0, 8, 50, 50),
        Job(3, 0, 1, 30, 30),
        Job(4, 0, 10, 10, 10),
        Job(5, 0, 1, 10, 10),
    )
    free = {1: 0, 2: 100, 3: 0, 4: 150, 5: 0}
    assert _starts(instance, "mallmann") == free
    assert _starts(instance, "mallmann:f=0.5") == {**free, 5: 100}
    assert _starts(instance, "mallmann:f=0.6") == free  # 6 idle is allowed


def test_time_limit_suspends_until_the_head_starts() -> None:
    # m = 10. J1 (5) to 200; head J2 (10). The phase begins with J3's
    # backfill at 0; J4 backfills at 40 (40 <= 50 s); at 80 the phase is
    # over (80 > 50): J5 waits for J2 (200-210). At 210 J5 starts as a
    # head, J6 (10) is the new head and a new phase backfills J7.
    instance = _instance(
        10,
        Job(1, 0, 5, 200, 200),
        Job(2, 0, 10, 10, 10),
        Job(3, 0, 5, 40, 40),
        Job(4, 0, 5, 40, 40),
        Job(5, 0, 5, 40, 40),
        Job(6, 0, 10, 10, 10),
        Job(7, 0, 5, 5, 5),
    )
    unlimited = {1: 0, 2: 200, 3: 0, 4: 40, 5: 80, 6: 210, 7: 120}
    assert _starts(instance, "mallmann") == unlimited
    limited = {1: 0, 2: 200, 3: 0, 4: 40, 5: 210, 6: 250, 7: 210}
    assert _starts(instance, "mallmann:t=50") == limited
    # t = 80: J5 still backfills at 80 (not more than 80 s into the phase),
    # J7 no longer at 120: it follows J6 (210-220).
    assert _starts(instance, "mallmann:t=80") == {**unlimited, 7: 220}


# -- EASY-SJBF ----------------------------------------------------------------
def test_easy_sjbf_backfills_the_shortest_first() -> None:
    # Head J2 (8) reserved at 100 (extra 0). J3 (2 x 90) and J4 (2 x 30)
    # both end by 100, but only 2 processors are free: queue order takes
    # J3, shortest first J4. The other one would then end after 100 (no
    # extra processors): it waits for J2's end, 110.
    instance = _instance(
        8,
        Job(1, 0, 6, 100, 100),
        Job(2, 0, 8, 10, 10),
        Job(3, 0, 2, 90, 90),
        Job(4, 0, 2, 30, 30),
    )
    assert _starts(instance, "easy") == {1: 0, 2: 100, 3: 0, 4: 110}
    assert _starts(instance, "easy-sjbf") == {1: 0, 2: 100, 3: 110, 4: 0}
    assert parse_policy("easy-sjbf") == Backfill(select="shortest")
    assert parse_policy("easy-sjbf").spec == "easy:select=shortest"


def test_easy_sjbf_index_equals_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # A queue of 300 jobs (> INDEX_FROM): the indexed candidate search gives
    # the schedule of the plain scan (INDEX_FROM out of reach).
    rng = random.Random(13)
    jobs = []
    for k in range(300):
        runtime = rng.randrange(1, 500)
        jobs.append(
            Job(k + 1, rng.randrange(0, 200), rng.randrange(1, 33), runtime,
                runtime + rng.randrange(0, 400))
        )  # fmt: skip
    instance = _instance(64, *jobs)
    for spec in ("easy-sjbf", "backfill:depth=2,select=shortest"):
        indexed = simulate(instance, spec)
        assert indexed.stats.max_queue > policies.INDEX_FROM
        monkeypatch.setattr(policies, "INDEX_FROM", 10**9)
        scanned = simulate(instance, spec)
        monkeypatch.undo()
        assert check_schedule(instance, indexed.schedule) == []
        assert indexed.schedule.placements == scanned.schedule.placements, spec


# -- specs --------------------------------------------------------------------
def _all_specs() -> list[str]:
    specs = []
    for variant in VARIANTS:
        for fairness in FAIRNESS_OF[variant]:
            readings = ("profile", "shadow") if fairness else ("profile",)
            for reading in readings:
                specs.append(
                    f"mallmann:variant={variant},fairness={fairness},reading={reading}"
                )
    return specs


ALL_SPECS = _all_specs()


def test_spec_round_trips() -> None:
    for text in [
        *ALL_SPECS,
        "mallmann",
        "mallmann:order=lsf,variant=bs,f=0.6",
        "mallmann:order=lsf,variant=bs3,t=8h",
        "mallmann:order=lsf,variant=bc,f=0.4,t=30m",
        "mallmann:order=spt,oracle,fairness=1",
        "mallmann:order=random,seed=4,variant=ws",
        "strict-backfill:order=lsf",
        "easy-sjbf:order=spt",
    ]:
        policy = parse_policy(text)
        assert parse_policy(policy.spec) == policy, text
    assert parse_policy("mallmann:t=8h").t == 8 * 3600  # type: ignore[attr-defined]
    assert parse_policy("mallmann:t=30m").spec == "mallmann:t=1800"
    assert parse_policy("mallmann:t=90").spec == "mallmann:t=90"
    assert parse_policy("strict-backfill:order=lsf").spec == "strict-backfill:order=lsf"
    assert parse_policy("mallmann:variant=bs,fairness=1").spec == (
        "mallmann:variant=bs,fairness=1"
    )
    strict = Mallmann(variant="ff", fairness=2, reading="shadow", f=0.5)
    assert strict.spec == "mallmann:fairness=2,reading=shadow,f=0.5"
    for name in ("mallmann", "strict-backfill", "easy-sjbf"):
        assert name in valid_names().split(", ")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mallmann:variant=bd,fairness=2", "variant bd takes fairness 0 or 1 only"),
        ("mallmann:variant=bc,fairness=1", "variant bc takes fairness 0 only"),
        ("mallmann:variant=bqd,fairness=1", "variant bqd takes fairness 0 or 2 only"),
        ("mallmann:variant=bc,fairness=1", "variant bc takes fairness 0 only"),
        ("mallmann:variant=ws,fairness=2", "variant ws takes fairness 0 only"),
        ("mallmann:variant=fc3,fairness=1", "variant fc3 takes fairness 0 only"),
        ("mallmann:variant=bs3,fairness=2", "variant bs3 takes fairness 0 only"),
        ("mallmann:variant=xx", "unknown variant 'xx'"),
        ("mallmann:fairness=3", "fairness must be 0, 1 or 2"),
        ("mallmann:reading=shadow", "reading=shadow needs fairness 1 or 2"),
        ("mallmann:fairness=1,reading=late", "unknown reading 'late'"),
        ("mallmann:f=1.5", r"f must be a share in \[0, 1\]"),
        ("mallmann:t=8x", "t must be whole seconds or a number with s, m, h or d"),
        ("mallmann:t=-5", "t must be >= 0 seconds"),
        ("strict-backfill:variant=bs", "unknown parameter 'variant'"),
        ("easy-sjbf:select=largest", "unknown parameter 'select'"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_policy(spec)


# -- properties ---------------------------------------------------------------
def _random_calendar(rng: random.Random, m: int) -> Calendar:
    return Calendar(
        random_periods(rng, m, keep=0.5),
        frozenset(),
        rng.randrange(7 * 86400),
        sequential_queues=frozenset({1} if rng.random() < 0.7 else ()),
        anytime_queues=frozenset({2} if rng.random() < 0.3 else ()),
    )


def _random_jobs(rng: random.Random, m: int, n: int, span: int) -> list[Job]:
    jobs = []
    for k in range(n):
        runtime = rng.randrange(0, span)
        estimate = runtime + rng.choice([0, 0, rng.randrange(0, span)])
        queue = rng.choice([None, 1, 2])
        jobs.append(
            Job(k + 1, rng.randrange(0, span), rng.randrange(1, m + 1), runtime,
                estimate, queue=queue)
        )  # fmt: skip
    return jobs


@slow_settings(80)
@given(
    seed=st.integers(0, 10**6),
    spec=st.sampled_from(ALL_SPECS),
    order=st.sampled_from(["fcfs", "lsf", "spt"]),
    limits=st.sampled_from(["", ",f=0.3", ",t=600", ",f=0.5,t=3000"]),
    site=st.booleans(),
    allocation=st.sampled_from(["any", "contiguous"]),
)
def test_every_variant_gives_valid_schedules(
    seed: int, spec: str, order: str, limits: str, site: bool, allocation: str
) -> None:
    rng = random.Random(seed)
    m = 16
    if site:
        span, calendar = 20_000, _random_calendar(rng, m)
    else:
        span, calendar = 2_000, None
    jobs = _random_jobs(rng, m, 14, span)
    instance = Instance(
        Machine(m, allocation=allocation, calendar=calendar), tuple(jobs)
    )
    full = f"{spec},order={order}{limits}"
    result = simulate_checked(instance, full)
    if result is not None:
        assert sorted(result.schedule.placements) == [j.id for j in jobs]


_NO_OVERTAKING_DRAWS = {
    "seed": st.integers(0, 10**6),
    "variant": st.sampled_from(["ff", "fc", "bs", "bd"]),
    "together": st.booleans(),
    "order": st.sampled_from(["fcfs", "lsf", "spt", "laf"]),
}
"""Draws of the fairness-1 properties (with :func:`_no_overtaking`)."""


def _no_overtaking(
    seed: int, together: bool, order: str, *, queues: bool
) -> tuple[Instance, str]:
    """16 random jobs on 12 processors and an order such that no job can
    jump ahead of an earlier one: every job released at 0 (``together``,
    any order) or FCFS with arrivals. Without ``queues`` (or when
    ``together``) the jobs have no queue."""
    jobs = _random_jobs(random.Random(seed), 12, 16, 1_000)
    if together or not queues:
        jobs = [dataclasses.replace(j, queue=None) for j in jobs]
    if together:
        return _instance(12, *(dataclasses.replace(j, release=0) for j in jobs)), order
    return _instance(12, *jobs), "fcfs"


@slow_settings(80)
@given(**_NO_OVERTAKING_DRAWS)
def test_fair_profile_backfilling_never_delays_the_head(
    seed: int, variant: str, together: bool, order: str
) -> None:
    # Fairness 1, profile reading, no calendar, no busy blocks, an `any`
    # machine, and nobody can jump ahead of the head (FCFS with arrivals,
    # or any order with every job released at 0): every head starts exactly
    # at its preview start computed when it was first blocked (recorded as
    # its reservation), however many jobs were backfilled meanwhile. (The
    # estimates are loose: fairness 1 does not read them.)
    instance, order = _no_overtaking(seed, together, order, queues=True)
    result = simulate(instance, f"mallmann:variant={variant},fairness=1,order={order}")
    assert check_schedule(instance, result.schedule) == []
    placements = result.schedule.placements
    for job, reserved in result.reservations.items():
        assert placements[job].start == reserved, job


@slow_settings(60)
@given(**_NO_OVERTAKING_DRAWS)
def test_fairness_one_is_conservative_backfilling_with_exact_estimates(
    seed: int, variant: str, together: bool, order: str
) -> None:
    # The notes' reading of fairness 1 (§2.4: it "behaves like conservative
    # backfilling"), made exact: protecting every job ahead with actual run
    # times gives conservative backfilling's schedule with exact estimates
    # (oracle), whatever the selector, on an `any` machine without
    # calendar or blocks, when no job can jump ahead of an earlier one
    # (FCFS, or every job released at 0). Conservative's reservation of a
    # job is its earliest slot given the jobs ahead; with exact run times
    # it never moves, and the preview recomputes the same slots.
    instance, order = _no_overtaking(seed, together, order, queues=False)
    # (oracle: both sort the queue by actual run times.)
    ours = f"mallmann:variant={variant},fairness=1,order={order},oracle"
    assert _starts(instance, ours) == _starts(
        instance, f"conservative:order={order},oracle"
    )
