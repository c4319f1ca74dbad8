"""Offline co-reservation optimum: golden cases, brute force, bounds, checker."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.coreserve.offline_check import check_offline
from optsched.coreserve.request import Choice, Request
from optsched.coreserve.tariff import HOUR, Tariff
from optsched.instance import Job
from optsched.models.coreserve.offline import (
    OfflineCluster,
    OfflineSolution,
    competitive_gap,
    greedy,
    horizon,
    solve_offline,
    weighted_value,
)
from optsched.result import SolveStatus

FREE = Tariff()


def _valid(
    clusters: Sequence[OfflineCluster], requests: Sequence[Request], sol: object
) -> None:
    assert check_offline(clusters, requests, sol) == []  # type: ignore[arg-type]


Window = tuple[list[OfflineCluster], list[Request]]
"""Clusters and the requests to place on them."""


def _solved(case: Window, *args: Any, **options: Any) -> OfflineSolution:
    """``solve_offline`` on the window ``case``, its solution checked."""
    clusters, requests = case
    solution = solve_offline(clusters, requests, *args, **options)
    _valid(clusters, requests, solution)
    return solution


# --------------------------------------------------------------------------
# Golden cases by hand
# --------------------------------------------------------------------------


def _wait_case() -> Window:
    # A request needs both 2-CPU clusters over [0, 4); cluster A's local job
    # (2 CPUs, 4 s, released at 0) must wait until 4 for it to fit.
    clusters = [
        OfflineCluster("A", 2, FREE, jobs=(Job(1, 0, 2, 4),)),
        OfflineCluster("B", 2, FREE),
    ]
    return clusters, [Request(0, 0, 4, 4, (2, 2), id=7)]


def test_request_accepted_by_delaying_a_local_job() -> None:
    clusters, requests = _wait_case()
    result = solve_offline(clusters, requests, time_limit=10)
    _valid(clusters, requests, result)
    assert result.status is SolveStatus.OPTIMAL
    assert result.accepted_count == 1 and result.accepted_bound == 1
    assert result.accepted[7].start == 0
    assert sorted(result.accepted[7].clusters) == ["A", "B"]
    assert result.job_starts[("A", 1)] == 4
    assert result.local_wait == 4  # the least wait with the request accepted


def test_local_weight_trades_a_request_for_the_local_wait() -> None:
    clusters, requests = _wait_case()
    # Free tariff, k = 1, s = 0: an accepted request costs 0, a rejection
    # P = k + s + 1 = 2; the local term is lam * 4 s / 3600 s for one job.
    cheap = solve_offline(clusters, requests, "weighted", local_weight=0, time_limit=10)
    _valid(clusters, requests, cheap)
    assert cheap.status is SolveStatus.OPTIMAL
    assert cheap.accepted_count == 1 and cheap.value == 0 == cheap.lower_bound
    dear = solve_offline(
        clusters, requests, "weighted", local_weight=3600, time_limit=10
    )
    _valid(clusters, requests, dear)
    assert dear.status is SolveStatus.OPTIMAL
    # Accepting costs 3600 * 4 / 3600 = 4 > 2: reject, the job runs at once.
    assert dear.accepted_count == 0 and dear.value == 2 == dear.lower_bound
    assert dear.job_starts[("A", 1)] == 0


def test_two_conflicting_requests_only_one_accepted() -> None:
    clusters = [OfflineCluster("A", 4, FREE)]
    requests = [
        Request(0, 0, 4, 4, (3,), id=1),
        Request(1, 0, 5, 5, (3,), id=2),
    ]
    result = solve_offline(clusters, requests, time_limit=10)
    _valid(clusters, requests, result)
    assert result.status is SolveStatus.OPTIMAL
    assert result.accepted_count == 1 and result.accepted_bound == 1
    # Weighted by area, the larger (3 * 5) one wins.
    by_area = solve_offline(
        clusters, requests, request_weight=lambda r: r.area, time_limit=10
    )
    _valid(clusters, requests, by_area)
    assert set(by_area.accepted) == {2}
    assert by_area.accepted_weight == 15 == by_area.accepted_bound
    assert by_area.status is SolveStatus.OPTIMAL


def test_offline_beats_first_come_first_served() -> None:
    # FCFS puts the early request at 0 on the only cluster and loses the
    # tight one; offline shifts the first one to 2.
    clusters = [OfflineCluster("A", 2, FREE)]
    requests = [
        Request(0, 0, 10, 4, (2,), id=1),
        Request(1, 0, 2, 2, (2,), id=2),
    ]
    assert len(greedy(clusters, requests).accepted) == 1
    result = solve_offline(clusters, requests, time_limit=10)
    _valid(clusters, requests, result)
    assert result.accepted_count == 2 == result.accepted_bound
    assert result.accepted[2].start == 0 and result.accepted[1].start >= 2


def test_sampled_cost_picks_the_cheap_hour_after_a_busy_block() -> None:
    # Day 8-18 h at 2, night at 1. The window is Monday 17:00-19:30 for a
    # 30-minute part (one sample, at the start): night starts from 18:00,
    # but the cluster is full over [18:00, 18:00 + 200 s).
    tariff = Tariff.day_night(2, 1)
    clusters = [OfflineCluster("A", 4, tariff, busy=((18 * HOUR, 18 * HOUR + 200, 4),))]
    requests = [Request(0, 17 * HOUR, 19 * HOUR + 1800, 1800, (3,), id=1)]
    result = solve_offline(
        clusters, requests, "weighted", k=1, s=Fraction(1, 100), time_limit=10
    )
    _valid(clusters, requests, result)
    assert result.status is SolveStatus.OPTIMAL
    assert result.accepted[1].start == 18 * HOUR + 200
    assert result.accepted[1].cost == 3
    # k * 3 / 6 + s * (3600 + 200) / (19 h - 17 h)
    want = Fraction(1, 2) + Fraction(1, 100) * Fraction(3800, 7200)
    assert result.value == want == result.lower_bound
    # Start only (k = 0): the earliest start, in the expensive hour.
    early = solve_offline(clusters, requests, "weighted", k=0, s=1, time_limit=10)
    assert early.accepted[1].start == 17 * HOUR and early.accepted[1].cost == 6
    assert early.value == 0


def test_a_request_that_cannot_fit_anywhere_is_rejected() -> None:
    clusters = [OfflineCluster("A", 2, FREE), OfflineCluster("B", 8, FREE)]
    requests = [
        Request(0, 0, 10, 2, (4, 4), id=1),  # two parts > 2 CPUs, one such cluster
        Request(0, 5, 6, 2, (1,), id=2),  # empty window
        Request(0, 0, 10, 2, (8,), id=3),
    ]
    result = solve_offline(clusters, requests, time_limit=10)
    _valid(clusters, requests, result)
    assert set(result.accepted) == {3}
    assert result.accepted_bound == 1 and result.status is SolveStatus.OPTIMAL


def test_horizon_leaves_room_for_every_job_after_the_window() -> None:
    c = OfflineCluster(
        "A", 3, FREE, busy=((0, 9, 1),), jobs=(Job(1, 2, 3, 5), Job(2, 4, 1, 1))
    )
    assert horizon(c, [Request(0, 0, 12, 3, (2,))]) == 12 + 6


# --------------------------------------------------------------------------
# Validation and the checker
# --------------------------------------------------------------------------


def test_cluster_validation() -> None:
    with pytest.raises(ValueError, match="more than the cluster"):
        OfflineCluster("A", 2, FREE, jobs=(Job(1, 0, 3, 1),))
    with pytest.raises(ValueError, match="duplicate job id"):
        OfflineCluster("A", 2, FREE, jobs=(Job(1, 0, 1, 1), Job(1, 2, 1, 1)))
    with pytest.raises(ValueError, match="hold 3 processors"):
        OfflineCluster("A", 2, FREE, busy=((0, 5, 2), (3, 4, 1)))
    with pytest.raises(ValueError, match="unique"):
        solve_offline([OfflineCluster("A", 1, FREE)] * 2, [])
    with pytest.raises(ValueError, match="unknown objective"):
        solve_offline([], [], "fast")


def _checked_case() -> tuple[list[OfflineCluster], list[Request], OfflineSolution]:
    clusters = [
        OfflineCluster(
            "A", 4, Tariff.flat(1), busy=((0, 2, 1),), jobs=(Job(1, 1, 2, 3),)
        ),
        OfflineCluster("B", 2, Tariff.flat(2)),
    ]
    requests = [Request(0, 0, 10, 4, (2, 1), id=1)]
    good = OfflineSolution(
        {1: Choice(0, ("A", "B"), Fraction(2 * 1 + 1 * 2))}, {("A", 1): 4}
    )
    return clusters, requests, good


def test_checker_accepts_a_valid_solution() -> None:
    clusters, requests, good = _checked_case()
    assert check_offline(clusters, requests, good) == []


@pytest.mark.parametrize(
    ("accepted", "jobs", "message"),
    [
        ({1: Choice(7, ("A", "B"), Fraction(4))}, {("A", 1): 4}, "outside"),
        ({1: Choice(0, ("A", "A"), Fraction(3))}, {("A", 1): 4}, "not distinct"),
        ({1: Choice(0, ("B", "A"), Fraction(5))}, {("A", 1): 4}, ""),  # valid swap
        ({1: Choice(0, ("A", "C"), Fraction(3))}, {("A", 1): 4}, "unknown cluster"),
        ({1: Choice(0, ("A",), Fraction(2))}, {("A", 1): 4}, "1 clusters for 2 parts"),
        ({1: Choice(0, ("A", "B"), Fraction(3))}, {("A", 1): 4}, "sampled cost is 4"),
        ({2: Choice(0, ("A", "B"), Fraction(4))}, {("A", 1): 4}, "unknown"),
        ({1: Choice(0, ("A", "B"), Fraction(4))}, {("A", 1): 0}, "before its release"),
        ({1: Choice(0, ("A", "B"), Fraction(4))}, {}, "never starts"),
        (
            {1: Choice(0, ("A", "B"), Fraction(4))},
            {("A", 1): 4, ("B", 1): 0},
            "not a local",
        ),
        # Job over [1, 4) with 2 CPUs on top of the busy CPU and the part's 2.
        ({1: Choice(0, ("A", "B"), Fraction(4))}, {("A", 1): 1}, "5 CPUs in use at 1"),
    ],
)
def test_checker_catches_violations(
    accepted: dict[int, Choice], jobs: dict[tuple[str, int], int], message: str
) -> None:
    clusters, requests, _ = _checked_case()
    problems = check_offline(clusters, requests, OfflineSolution(accepted, jobs))
    if message:
        assert any(message in p for p in problems), problems
    else:
        assert problems == []


def test_checker_catches_a_part_larger_than_its_cluster() -> None:
    clusters, _, _ = _checked_case()
    requests = [Request(0, 0, 10, 4, (3, 1), id=1)]
    sol = OfflineSolution({1: Choice(0, ("B", "A"), Fraction(7))}, {("A", 1): 4})
    assert any("exceeds B's 2" in p for p in check_offline(clusters, requests, sol))


def test_checker_allows_back_to_back_intervals() -> None:
    clusters = [
        OfflineCluster("A", 2, FREE, busy=((0, 3, 2),), jobs=(Job(1, 0, 2, 2),))
    ]
    requests = [Request(0, 5, 9, 4, (2,), id=1)]
    sol = OfflineSolution({1: Choice(5, ("A",), Fraction(0))}, {("A", 1): 3})
    assert check_offline(clusters, requests, sol) == []
    late = OfflineSolution({1: Choice(5, ("A",), Fraction(0))}, {("A", 1): 4})
    assert check_offline(clusters, requests, late) != []


# --------------------------------------------------------------------------
# Brute force on tiny cases
# --------------------------------------------------------------------------


def _fits(cap: int, blocks: Sequence[tuple[int, int, int]]) -> bool:
    """Unit-slot occupancy check (independent of the checker's sweep)."""
    top = max((b for _, b, _ in blocks), default=0)
    use = [0] * (top + 1)
    for a, b, q in blocks:
        for t in range(a, b):
            use[t] += q
    return all(u <= cap for u in use)


def _min_wait(
    c: OfflineCluster, blocks: tuple[tuple[int, int, int], ...], top: int
) -> int:
    """Least total wait of ``c``'s jobs around ``blocks`` (starts up to ``top``)."""
    if not c.jobs:
        return 0
    best = None
    ranges = [range(j.release, top - j.runtime + 1) for j in c.jobs]
    for starts in itertools.product(*ranges):
        wait = sum(t - j.release for t, j in zip(starts, c.jobs, strict=True))
        if best is not None and wait >= best:
            continue
        jobs = [(t, t + j.runtime, j.size) for t, j in zip(starts, c.jobs, strict=True)]
        if _fits(c.processors, [*c.busy, *blocks, *jobs]):
            best = wait
    assert best is not None
    return best


def _placements(
    clusters: Sequence[OfflineCluster], r: Request
) -> list[tuple[int, tuple[str, ...]] | None]:
    out: list[tuple[int, tuple[str, ...]] | None] = [None]
    names = [c.name for c in clusters]
    for s in range(r.earliest_start, r.latest_start + 1):
        for perm in itertools.permutations(names, len(r.parts)):
            out.append((s, perm))
    return out


def _brute(
    clusters: Sequence[OfflineCluster], requests: Sequence[Request]
) -> list[tuple[dict[int, tuple[int, tuple[str, ...]]], int]]:
    """Every feasible acceptance/placement with the least local wait."""
    caps = {c.name: c for c in clusters}
    tops = {c.name: horizon(c, requests) for c in clusters}
    memo: dict[tuple[str, tuple[tuple[int, int, int], ...]], int] = {}
    out = []
    for combo in itertools.product(*(_placements(clusters, r) for r in requests)):
        blocks: dict[str, list[tuple[int, int, int]]] = {c.name: [] for c in clusters}
        ok = True
        for r, pl in zip(requests, combo, strict=True):
            if pl is None:
                continue
            s, names = pl
            for q, n in zip(r.parts, names, strict=True):
                ok &= caps[n].processors >= q
                blocks[n].append((s, s + r.duration, q))
        if not ok or not all(
            _fits(c.processors, [*c.busy, *blocks[c.name]]) for c in clusters
        ):
            continue
        wait = 0
        for c in clusters:
            key = (c.name, tuple(sorted(blocks[c.name])))
            if key not in memo:
                memo[key] = _min_wait(c, key[1], tops[c.name] + 2)
            wait += memo[key]
        acc = {
            r.id: pl for r, pl in zip(requests, combo, strict=True) if pl is not None
        }
        out.append((acc, wait))
    return out


@st.composite
def tiny_windows(draw: st.DrawFn) -> Window:
    clusters = []
    prices = [Tariff.flat(p) for p in (1, 2, 3)]
    for n in range(draw(st.integers(1, 2))):
        m = draw(st.integers(1, 3))
        busy = ()
        if draw(st.booleans()):
            a = draw(st.integers(0, 4))
            busy = ((a, a + draw(st.integers(1, 3)), draw(st.integers(1, m))),)
        jobs = tuple(
            Job(
                i,
                draw(st.integers(0, 4)),
                draw(st.integers(1, m)),
                draw(st.integers(1, 3)),
            )
            for i in range(draw(st.integers(0, 2)))
        )
        clusters.append(
            OfflineCluster(f"c{n}", m, draw(st.sampled_from(prices)), busy, jobs)
        )
    requests = []
    for i in range(draw(st.integers(1, 3))):
        es = draw(st.integers(0, 4))
        d = draw(st.integers(1, 3))
        slack = draw(st.integers(0, 3))
        parts = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
        requests.append(
            Request(draw(st.integers(0, 3)), es, es + d + slack, d, parts, id=i)
        )
    return clusters, requests


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_windows())
def test_accepted_optimum_matches_brute_force(case: Window) -> None:
    clusters, requests = case
    result = _solved(case, time_limit=20)
    _valid(clusters, requests, greedy(clusters, requests))
    options = _brute(clusters, requests)
    best = max(len(acc) for acc, _ in options)
    assert result.status is SolveStatus.OPTIMAL
    assert result.accepted_count == best == result.accepted_bound
    # The bound is at least every feasible solution's count.
    assert result.accepted_bound >= len(greedy(clusters, requests).accepted)
    if result.params["wait_status"] == "OPTIMAL":
        least = min(w for acc, w in options if len(acc) == best)
        assert result.local_wait == least
    # Weighted by area: the best total area of a feasible accepted set.
    area = {r.id: r.area for r in requests}
    by_area = _solved(case, request_weight=lambda r: r.area, time_limit=20)
    most = max(sum(area[rid] for rid in acc) for acc, _ in options)
    assert by_area.accepted_weight == most == by_area.accepted_bound


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tiny_windows(),
    st.sampled_from([0, 1]),
    st.sampled_from([0, 1, Fraction(1, 3)]),
    st.sampled_from([0, 3600, 36000]),
)
def test_weighted_optimum_matches_brute_force(
    case: Window, k: int, s: Fraction, lam: int
) -> None:
    clusters, requests = case
    result = _solved(case, "weighted", k=k, s=s, local_weight=lam, time_limit=20)
    by_name = {c.name: c for c in clusters}
    best = None
    for acc, wait in _brute(clusters, requests):
        # The brute force job schedule is not kept: rebuild the value from
        # the least wait, through weighted_value's own formula.
        sol = OfflineSolution(
            {
                rid: Choice(
                    st_,
                    names,
                    sum(
                        by_name[n].tariff.cost(st_, r.duration, q)
                        for q, n in zip(r.parts, names, strict=True)
                    ),
                )
                for rid, (st_, names) in acc.items()
                for r in requests
                if r.id == rid
            },
            {},
        )
        value = weighted_value(
            clusters,
            requests,
            _with_waits(clusters, sol, wait),
            k=k,
            s=s,
            local_weight=lam,
        )
        best = value if best is None else min(best, value)
    assert result.value == weighted_value(
        clusters, requests, result, k=k, s=s, local_weight=lam
    )
    assert result.status is SolveStatus.OPTIMAL
    assert result.value == best == result.lower_bound


def _with_waits(
    clusters: Sequence[OfflineCluster], sol: OfflineSolution, wait: int
) -> OfflineSolution:
    """``sol`` with job starts summing to ``wait`` (only the total matters to F)."""
    starts = {(c.name, j.id): j.release for c in clusters for j in c.jobs}
    if starts:
        first = next(iter(starts))
        starts[first] += wait
    return replace(sol, job_starts=starts)


@settings(max_examples=15, deadline=None)
@given(tiny_windows())
def test_bounds_hold_at_any_time_limit(case: Window) -> None:
    # No search time: the greedy answer and a trivial (still valid) bound.
    quick = _solved(case, time_limit=0)
    best = max(len(acc) for acc, _ in _brute(*case))
    assert quick.accepted_count <= best <= quick.accepted_bound
    weighted = _solved(case, "weighted", time_limit=0)
    assert weighted.lower_bound is not None and weighted.lower_bound <= weighted.value


PRICED = (
    Tariff.day_night(2, 1),
    Tariff.day_night(3, 1, weekend_factor=Fraction(1, 2)),
    Tariff.flat(Fraction(3, 2)),
)


def _scaled(
    clusters: Sequence[OfflineCluster], requests: Sequence[Request], g: int, base: int
) -> Window:
    """Every time ``t`` as ``base + g t``, the clusters priced by :data:`PRICED`."""
    out = [
        OfflineCluster(
            c.name,
            c.processors,
            PRICED[n % len(PRICED)],
            tuple((base + g * a, base + g * b, q) for a, b, q in c.busy),
            tuple(
                Job(j.id, base + g * j.release, j.size, g * j.runtime) for j in c.jobs
            ),
        )
        for n, c in enumerate(clusters)
    ]
    reqs = [
        Request(
            base + g * r.submit,
            base + g * r.earliest_start,
            base + g * r.deadline,
            g * r.duration,
            r.parts,
            id=r.id,
        )
        for r in requests
    ]
    return out, reqs


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tiny_windows(),
    st.sampled_from([1800, 3600]),
    # Monday 5:00 (crosses 8:00), Friday 15:00 (18:00 and the weekend),
    # Sunday 20:00 (the week's wrap-around).
    st.sampled_from([5 * HOUR, (4 * 24 + 15) * HOUR, (6 * 24 + 20) * HOUR]),
    st.sampled_from([(1, 0, 0), (1, Fraction(1, 2), 0), (1, 1, 3600)]),
)
def test_hourly_prices_match_brute_force_on_the_grid(
    case: Window,
    g: int,
    base: int,
    weights: tuple[int, Fraction | int, int],
) -> None:
    # With every time a multiple of g (g divides 3600), rounding all starts
    # down to multiples of g keeps a solution feasible (an interval covering
    # a point of cell k after rounding covered the cell's last second
    # before), keeps each start in its hour (same sampled cost) and lowers
    # no term: the optimum over integer starts is on the grid, which the
    # brute force enumerates in cells.
    small, small_requests = case
    clusters, requests = _scaled(small, small_requests, g, base)
    k, s, lam = weights
    result = solve_offline(
        clusters, requests, "weighted", k=k, s=s, local_weight=lam, time_limit=20
    )
    _valid(clusters, requests, result)
    by_name = {c.name: c for c in clusters}
    by_id = {r.id: r for r in requests}
    best = None
    for acc, wait in _brute(small, small_requests):
        chosen = {}
        for rid, (cell, names) in acc.items():
            start = base + g * cell
            cost = sum(
                (
                    by_name[n].tariff.cost(start, by_id[rid].duration, q)
                    for q, n in zip(by_id[rid].parts, names, strict=True)
                ),
                Fraction(0),
            )
            chosen[rid] = Choice(start, names, cost)
        sol = _with_waits(clusters, OfflineSolution(chosen, {}), g * wait)
        value = weighted_value(clusters, requests, sol, k=k, s=s, local_weight=lam)
        best = value if best is None else min(best, value)
    assert result.status is SolveStatus.OPTIMAL
    assert result.value == best == result.lower_bound


def test_rounded_weights_still_give_a_valid_bound() -> None:
    # Spans of six distinct primes: their common denominator exceeds 2**50,
    # so the coefficients are scaled and rounded down. Two 2-CPU requests
    # share the only 2-CPU cluster: the optimum delays the one with the
    # longer span (7919 s) by 10 s; the four others start at once.
    clusters = [OfflineCluster("A", 2, FREE)] + [
        OfflineCluster(n, 1, FREE) for n in "BCDE"
    ]
    spans = (7919, 7907, 7901, 7883, 7879, 7877)
    requests = [
        Request(0, 0, 10 + p, 10, (2,) if i < 2 else (1,), id=i)
        for i, p in enumerate(spans)
    ]
    result = solve_offline(clusters, requests, "weighted", k=0, s=1, time_limit=20)
    _valid(clusters, requests, result)
    assert result.params["exact_scale"] is False
    assert result.accepted_count == 6
    assert result.value == Fraction(10, 7919)
    assert result.lower_bound is not None
    assert result.value - Fraction(1, 10**9) < result.lower_bound <= result.value


def test_competitive_gap_of_first_come_first_served() -> None:
    clusters = [OfflineCluster("A", 2, Tariff.flat(1))]
    requests = [
        Request(0, 0, 10, 4, (2,), id=1),
        Request(1, 0, 2, 2, (2,), id=2),
    ]
    online = greedy(clusters, requests)  # accepts request 1 at 0 only
    offline = solve_offline(clusters, requests, time_limit=10)
    gap = competitive_gap(clusters, requests, online, offline)
    assert (gap.online_accepted, gap.accepted_bound, gap.accepted_gap) == (1, 2, 1)
    assert gap.value_gap is None
    # F with k = 0, s = 1: online 0 (start at es) + P = 2 for the rejection;
    # offline accepts both, request 1 at 2 of its 6 s span: 1/3.
    weighted = solve_offline(clusters, requests, "weighted", k=0, s=1, time_limit=10)
    assert weighted.value == Fraction(1, 3) == weighted.lower_bound
    wgap = competitive_gap(clusters, requests, online, weighted, k=0, s=1)
    assert wgap.online_value == 2 and wgap.value_gap == Fraction(5, 3)
    broken = OfflineSolution({1: Choice(9, ("A",), Fraction(4))}, {})
    with pytest.raises(ValueError, match="outside"):
        competitive_gap(clusters, requests, broken, offline)
