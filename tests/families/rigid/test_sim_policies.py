"""Hand-computed golden schedules, one per policy (every start asserted).

Each expected schedule was derived by hand from the rules in
``heuristics/rigid/policies.py``; the derivations are in the comments.
"""

from __future__ import annotations

import random

import pytest
from support.builders import CASE_A, starts_of
from support.simulation import simulated

from optsched.heuristics import simulate
from optsched.instance import Instance, Job, Machine


def make(m: int, rows: list[tuple[int, int, int, int, int]]) -> Instance:
    """Jobs from ``(id, release, size, runtime, estimate)`` rows."""
    jobs = [Job(i, r, q, p, e) for i, r, q, p, e in rows]
    return Instance(Machine(m), tuple(jobs), name="golden")


def starts(instance: Instance, spec: str, **options: object) -> dict[int, int]:
    return starts_of(simulated(instance, spec, **options).schedule)


GOLDEN_A = {
    # t0: 1 starts, 2 (3 procs) blocked. t10: 2 and 3 start. t15: 4. t17: 5.
    "fcfs": {1: 0, 2: 10, 3: 10, 4: 15, 5: 17},
    # By estimate: t0 2 starts, 1 blocked; t1 3 (est 3) heads and fits;
    # t2 queue 4,1,5: 4 blocked until 5 ends at 5; t7: 1 and 5.
    "spt": {1: 7, 2: 0, 3: 1, 4: 5, 5: 7},
    # Longest first: t0 1; t2 queue 5,2,3,4: 5 fits; t10 2; t15 3; t22 4.
    "lpt": {1: 0, 2: 10, 3: 15, 4: 22, 5: 2},
    # Smallest first: t1 3 fits; t2 5 fits; t10 2; t22 4.
    "ssf": {1: 0, 2: 10, 3: 1, 4: 22, 5: 2},
    # Largest first: t0 2; t2 4 heads; t5 4; t7 1, 3, 5.
    "lsf": {1: 7, 2: 0, 3: 7, 4: 5, 5: 7},
    # Areas 20, 15, 3, 8, 20: t0 2; t1 3; t2 4 heads; t5 4; t7 1, 5.
    "saf": {1: 7, 2: 0, 3: 1, 4: 5, 5: 7},
    # Areas desc: t0 1; t2 5 fits; t10 2; t22 4; t24 3.
    "laf": {1: 0, 2: 10, 3: 24, 4: 22, 5: 2},
    # Any job that fits: t1 3, t2 5; t10 2; t22 4.
    "firstfit": {1: 0, 2: 10, 3: 1, 4: 22, 5: 2},
    # Head 2: shadow 10, extra 1. t1: 3 ends 4 <= 10. t2: extra is 1 again
    # (4 procs at 10), 5 (1 proc, ends 22) uses it. t10 2; t22 4.
    "easy": {1: 0, 2: 10, 3: 1, 4: 22, 5: 2},
    # Reservations: 2 at 10; 3 at 1; 4 at 15 (after 2); 5 needs 20 s with one
    # processor: blocked by 4 in [15, 17), so 17.
    "conservative": {1: 0, 2: 10, 3: 1, 4: 15, 5: 17},
    # Two reservations (2 at 10, 4 at 15) at t2; 5 cannot fit before 17.
    "backfill:depth=2": {1: 0, 2: 10, 3: 1, 4: 15, 5: 17},
    # t0: best of {2, 3} in 4 free is 3 (job 2); t1 3; t4 5 (1 free);
    # t5: 1 (2 of 3 free); t24: 4.
    "best-package": {1: 5, 2: 0, 3: 1, 4: 24, 5: 4},
}


@pytest.mark.parametrize("spec", sorted(GOLDEN_A))
def test_case_a(spec: str) -> None:
    assert starts(CASE_A, spec) == GOLDEN_A[spec]


def test_random_order_is_the_seeded_draws() -> None:
    # One draw per job in submit order (ids 1..5):
    rng = random.Random(0)
    draws = {job_id: rng.random() for job_id in (1, 2, 3, 4, 5)}
    assert sorted(draws, key=draws.__getitem__) == [4, 3, 5, 2, 1]
    # Strict in that order: t0 queue 2, 1: 2 starts; t1 3 heads and fits;
    # t2 queue 4, 5, 1: 4 waits for 2 to end at 5; t7: 5 and 1.
    assert starts(CASE_A, "random", seed=0) == {1: 7, 2: 0, 3: 1, 4: 5, 5: 7}
    assert starts(CASE_A, "random:seed=0", seed=99) == {1: 7, 2: 0, 3: 1, 4: 5, 5: 7}
    result = simulate(CASE_A, "random", seed=0)
    assert result.schedule.producer == "random:seed=0"


def test_oracle_orders_by_actual_runtime() -> None:
    # m = 1; job 1 occupies [0, 10). Job 2 claims 1 s but runs 5; job 3
    # claims 50 s but runs 2.
    instance = make(1, [(1, 0, 1, 10, 10), (2, 1, 1, 5, 1), (3, 1, 1, 2, 50)])
    assert starts(instance, "spt") == {1: 0, 2: 10, 3: 15}
    assert starts(instance, "spt:oracle") == {1: 0, 2: 12, 3: 10}
    assert starts(instance, "lpt:oracle") == {1: 0, 2: 10, 3: 15}


# Case F, m = 10: job 1 (5 procs) runs [0, 10); head 2 (8 procs) has shadow
# 10 and extra 10 - 8 = 2. Four candidates arrive at t2 with 5 free:
#   3: 2 procs, 30 s (extra-eligible)   4: 1 proc, 100 s (extra-eligible)
#   5: 4 procs, 8 s (ends 10 <= 10)     6: 3 procs, 5 s (ends 7 <= 10)
CASE_F = make(
    10,
    [
        (1, 0, 5, 10, 10),
        (2, 1, 8, 5, 5),
        (3, 2, 2, 30, 30),
        (4, 2, 1, 100, 100),
        (5, 2, 4, 8, 8),
        (6, 2, 3, 5, 5),
    ],
)

GOLDEN_F = {
    # Queue order: 3 uses the extra (free 3, extra 0); 4 cannot (extra 0);
    # 5 does not fit; 6 ends by the shadow. t10: 2. t15: 4, 5.
    "easy": {1: 0, 2: 10, 3: 2, 4: 15, 5: 15, 6: 2},
    # Largest first: 5 (ends by the shadow, free 1), then 4 on the extra.
    # t10: 2, then head 3 waits for 2 to end; t15: 3, 6.
    "easy:select=largest": {1: 0, 2: 10, 3: 15, 4: 2, 5: 2, 6: 15},
    # Largest area first (100, 60, 32, 15): 4 on the extra (extra 1), 3 no,
    # 5 ends by the shadow (free 0).
    "easy:select=largest-area": {1: 0, 2: 10, 3: 15, 4: 2, 5: 2, 6: 15},
    # Smallest first: 4 on the extra (extra 1), 3 no, 6 by the shadow
    # (free 1). t7: 6 ends, extra 1: neither 3 nor 5 qualifies. t10: 2;
    # t15: 3, 5.
    "easy:select=smallest": {1: 0, 2: 10, 3: 15, 4: 2, 5: 15, 6: 2},
    # Head 2 has waited 1 s at t2: no backfilling. t10: 2, and 3 fits in
    # the 2 processors left; t15: 4, 5, 6.
    "easy:select=largest,maxwait=1": {1: 0, 2: 10, 3: 10, 4: 15, 5: 15, 6: 15},
    # 5 of 10 processors idle at t2 is more than 40 %: no backfilling.
    # t10: 2 and 3 (2 procs free); t15: 4, 5, 6.
    "easy:select=largest,maxidle=0.4": {1: 0, 2: 10, 3: 10, 4: 15, 5: 15, 6: 15},
    # Exactly 50 % idle is not more than 50 %: as select=largest.
    "easy:select=largest,maxidle=0.5": {1: 0, 2: 10, 3: 15, 4: 2, 5: 2, 6: 15},
    # A large wait limit changes nothing.
    "easy:select=largest,maxwait=1000": {1: 0, 2: 10, 3: 15, 4: 2, 5: 2, 6: 15},
}


@pytest.mark.parametrize("spec", sorted(GOLDEN_F))
def test_easy_candidate_selection(spec: str) -> None:
    assert starts(CASE_F, spec) == GOLDEN_F[spec]


def test_select_submit_differs_from_queue_order() -> None:
    # m = 4, LPT order. Job 1 (2 procs, 10 s) starts at 0; head 2 (4 procs,
    # 50 s) gets shadow 10 and extra 0. At t2: job 3 (1 proc, 6 s) and job 4
    # (2 procs, 8 s) both end by the shadow. LPT scans 4 first (free 0), the
    # submit order scans 3 first (free 1, then 4 does not fit).
    instance = make(
        4, [(1, 0, 2, 10, 10), (2, 1, 4, 50, 50), (3, 2, 1, 6, 6), (4, 2, 2, 8, 8)]
    )
    assert starts(instance, "easy:order=lpt") == {1: 0, 2: 10, 3: 60, 4: 2}
    by_submit = starts(instance, "easy:order=lpt,select=submit")
    assert by_submit == {1: 0, 2: 10, 3: 2, 4: 60}


def test_best_package_fills_the_machine_exactly() -> None:
    # m = 10; job 1 takes the machine until 5. At 5 the queue holds sizes
    # 6, 5, 5, 3: the best package is 5 + 5 = 10 (jobs 3, 4); at 15, 6 + 3.
    instance = make(
        10,
        [
            (1, 0, 10, 5, 5),
            (2, 1, 6, 10, 10),
            (3, 1, 5, 10, 10),
            (4, 1, 5, 10, 10),
            (5, 1, 3, 10, 10),
        ],
    )
    assert starts(instance, "best-package") == {1: 0, 2: 15, 3: 5, 4: 5, 5: 15}
    # First fit packs 6 + 3 at 5 instead.
    assert starts(instance, "firstfit") == {1: 0, 2: 5, 3: 15, 4: 15, 5: 5}
    # With a one-job window the dynamic programme sees only job 2 (6), and
    # the first-fit fill adds job 5 (3).
    assert starts(instance, "best-package:limit=1") == {1: 0, 2: 5, 3: 15, 4: 15, 5: 5}


def test_policies_on_an_empty_instance() -> None:
    instance = Instance(Machine(4), ())
    for spec in ("fcfs", "easy", "conservative", "best-package", "backfill:depth=3"):
        result = simulate(instance, spec)
        assert len(result.schedule) == 0
        assert result.stats.events == 0
