"""Policy specs and the availability profile."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.heuristics import (
    POLICY_NAMES,
    Backfill,
    BestPackage,
    Conservative,
    FirstFit,
    Strict,
    parse_policy,
)
from optsched.heuristics.rigid.orders import order_ranks
from optsched.heuristics.rigid.policies import best_package
from optsched.packing import Profile


@pytest.mark.parametrize(
    ("spec", "expected", "canonical"),
    [
        ("fcfs", Strict(), "fcfs"),
        ("FIFO", Strict(), "fcfs"),
        ("sjf", Strict(order="spt"), "spt"),
        ("strict:order=lpt", Strict(order="lpt"), "lpt"),
        ("spt:oracle", Strict(order="spt", oracle=True), "spt:oracle"),
        ("random:seed=3", Strict(order="random", seed=3), "random:seed=3"),
        ("firstfit:order=lpt", FirstFit(order="lpt"), "firstfit:order=lpt"),
        ("greedy", FirstFit(), "firstfit"),
        ("easy", Backfill(), "easy"),
        ("easy:order=sjf", Backfill(order="spt"), "easy:order=spt"),
        ("backfill", Backfill(), "easy"),
        ("backfill:depth=1", Backfill(), "easy"),
        ("backfill:depth=3", Backfill(depth=3), "backfill:depth=3"),
        ("backfill:depth=all", Conservative(), "conservative"),
        ("conservative:oracle=yes", Conservative(oracle=True), "conservative:oracle"),
        ("easy:select=largest", Backfill(select="largest"), "easy:select=largest"),
        (
            "easy:maxidle=0.25,select=largest,maxwait=600,order=ssf",
            Backfill(order="ssf", select="largest", maxwait=600, maxidle=0.25),
            "easy:order=ssf,select=largest,maxwait=600,maxidle=0.25",
        ),
        ("best-package", BestPackage(), "best-package"),
        ("package:limit=16", BestPackage(limit=16), "best-package:limit=16"),
        (
            "backfill:oracle,depth=2,order=random,seed=5",
            Backfill(depth=2, oracle=True, order="random", seed=5),
            "backfill:order=random,depth=2,oracle,seed=5",
        ),
    ],
)
def test_specs_parse_and_round_trip(
    spec: str, expected: object, canonical: str
) -> None:
    policy = parse_policy(spec)
    assert policy == expected
    assert policy.spec == canonical
    assert parse_policy(policy.spec) == policy
    assert parse_policy(policy) is policy


def test_every_named_policy_parses_to_its_own_name() -> None:
    for name in POLICY_NAMES:
        assert parse_policy(name).spec == name


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty policy spec"),
        ("fastest", "unknown policy 'fastest'; valid names: fcfs, spt"),
        ("easy:depth=2", "unknown parameter 'depth'; valid: order, oracle, seed"),
        ("easy:order=weird", "unknown queue order 'weird'"),
        ("easy:order", "parameter 'order' needs a value"),
        ("easy:order=spt,order=lpt", "given twice"),
        ("spt:order=lpt", "fixes the order"),
        ("backfill:depth=0", "depth must be a positive integer"),
        ("backfill:depth=x", "depth must be an integer"),
        ("easy:select=best", "unknown select 'best'"),
        ("easy:maxwait=60", "apply only to select=largest"),
        ("easy:select=largest,maxidle=2", "maxidle must be a share in [0, 1]"),
        ("easy:select=largest,maxwait=-1", "maxwait must be >= 0"),
        ("fcfs:seed=3", "seed applies only to the random order"),
        ("spt:oracle=maybe", "oracle must be true or false"),
        ("backfill:depth=all,select=largest", "need a finite depth"),
        ("best-package:limit=0", "limit must be a positive integer"),
        ("easy:,", "empty parameter"),
    ],
)
def test_bad_specs_give_one_line(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_policy(spec)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_order_ranks() -> None:
    sizes = [3, 1, 2, 1]
    estimates = [10, 30, 10, 5]
    assert order_ranks("fcfs", sizes, estimates) == [0, 1, 2, 3]
    # spt keys (10, 0), (30, 1), (10, 2), (5, 3) -> order 3, 0, 2, 1.
    assert order_ranks("spt", sizes, estimates) == [1, 3, 2, 0]
    assert order_ranks("lpt", sizes, estimates) == [1, 0, 2, 3]
    assert order_ranks("ssf", sizes, estimates) == [3, 0, 2, 1]
    assert order_ranks("lsf", sizes, estimates) == [0, 2, 1, 3]
    # areas 30, 30, 20, 5
    assert order_ranks("saf", sizes, estimates) == [2, 3, 1, 0]
    assert order_ranks("laf", sizes, estimates) == [0, 1, 2, 3]
    assert sorted(order_ranks("random", sizes, estimates, seed=1)) == [0, 1, 2, 3]


def test_best_package_subset_sum() -> None:
    assert best_package([6, 5, 5, 3], 10) == [1, 2]
    # 3 + 2 and 5 both fill 5: ties favour the earlier jobs.
    assert best_package([3, 2, 5], 5) == [0, 1]
    assert best_package([7, 8], 5) == []
    assert best_package([], 5) == []


def test_profile_add_and_query() -> None:
    profile = Profile(0, 10)
    profile.add(0, 10, -6)  # a running job
    profile.add(5, 15, -3)  # a reservation
    assert profile.segments() == [(0, 4), (5, 1), (10, 7), (15, 10)]
    assert profile.min_free(0, 5) == 4
    assert profile.min_free(3, 12) == 1
    assert profile.min_free(20, 20) == 10  # an instant
    assert profile.free_at(12) == 7
    assert profile.earliest(4, 5) == 0
    assert profile.earliest(4, 6) == 10
    assert profile.earliest(8, 1) == 15
    assert profile.earliest(11, 1) is None
    assert profile.earliest(5, 1, limit=12) == 10
    profile.advance(7)
    assert profile.segments() == [(7, 1), (10, 7), (15, 10)]
    profile.add(0, 8, 1)  # the past part is ignored
    assert profile.segments() == [(7, 2), (8, 1), (10, 7), (15, 10)]


def test_profile_earliest_before_own_reservation() -> None:
    # A job of 4 processors and 10 s is reserved at 10 (its rectangle is in
    # the profile). Before 10 only 3 processors are free in [0, 6), 4 from 6.
    profile = Profile(0, 10)
    profile.add(0, 6, -7)
    profile.add(6, 10, -6)
    profile.add(10, 20, -4)
    # From 6 the job's window [6, 16) needs 4 free only until 10.
    assert profile.earliest_before(4, 10, 10) == 6
    assert profile.earliest_before(5, 10, 10) is None


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(
    sizes=st.lists(st.integers(1, 60), max_size=10),
    capacity=st.integers(0, 400),
    scale=st.sampled_from([1, 10**7]),
)
def test_best_package_sparse_table_matches_bitsets(
    sizes: list[int], capacity: int, scale: int
) -> None:
    """Issue 17: past BITSET_CAPACITY the reachable-sum table is used; it
    must choose exactly what the bitsets choose (same sum, same tie-break)."""
    from optsched.heuristics.rigid import policies

    bitsets = best_package(sizes, capacity)  # capacities below 2**16
    scaled = best_package([s * scale for s in sizes], capacity * scale)
    assert scaled == bitsets
    assert sum(sizes[i] for i in bitsets) <= capacity
    # brute force: no subset fits better
    best = max(
        (
            sum(s for s, keep in zip(sizes, mask, strict=True) if keep)
            for mask in itertools.product([0, 1], repeat=len(sizes))
            if sum(s for s, keep in zip(sizes, mask, strict=True) if keep) <= capacity
        ),
        default=0,
    )
    assert sum(sizes[i] for i in bitsets) == best
    assert policies.BITSET_CAPACITY < 10**7  # the scaled case is sparse


def test_best_package_on_a_huge_machine_is_small() -> None:
    """Two jobs on 10**9 processors: a table of 4 sums, not 10**9 bits."""
    import tracemalloc

    tracemalloc.start()
    try:
        chosen = best_package([700_000_000, 1, 400_000_000], 10**9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert chosen == [0, 1]  # 700,000,001: the first and third exceed 10**9
    assert peak < 1_000_000
