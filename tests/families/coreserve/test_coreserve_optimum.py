"""Exact per-request co-reservation optimum: golden cases, brute force, CP-SAT.

The brute force below shares nothing with the enumeration but the
:class:`Request` fields: it builds its own occupancy arrays per second, its
own hourly rates, tries every integer start of the window and every
injective assignment.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import rectangles, slow_settings

from optsched.coreserve.optimum import (
    FreeProfile,
    assign,
    candidate_starts,
    fits,
    optimum,
    pareto_front,
)
from optsched.coreserve.request import ClusterState, Request
from optsched.coreserve.tariff import Tariff
from optsched.models.coreserve.request import solve

H = 3600
MON = 0


def day_night(day: int | Fraction, night: int | Fraction) -> Tariff:
    """Day 8-18 h, night otherwise, every day."""
    return Tariff.day_night(day, night)


# --------------------------------------------------------------------------
# Golden cases
# --------------------------------------------------------------------------


def test_thesis_example_sampled_and_prorata() -> None:
    # Meltzer §4.7.3: 10 CPUs, Monday 7:30-9:00, 1.0 before 8:00 and 1.5
    # after. Samples at 7:30 (1.0) and 8:30 (1.5): 10 * 2.5 = 25.
    # Pro rata: 10 * (0.5 h * 1.0 + 1 h * 1.5) = 20.
    cluster = ClusterState("a", 16, (), day_night(Fraction(3, 2), 1))
    request = Request(0, 7 * H + 1800, 9 * H, 5400, (10,))
    best = optimum(request, [cluster])
    assert best.choice is not None
    assert (best.choice.start, best.choice.cost) == (27000, 25)
    assert best.candidates == 1
    prorata = optimum(request, [cluster], cost_rule="prorata")
    assert prorata.choice is not None and prorata.choice.cost == 20


def _two_clusters() -> tuple[Request, list[ClusterState]]:
    # Parts 4 and 2 CPUs for 30 min (one sample) between 16:00 and 19:00
    # Monday: latest start 18:30. A: day 2, night 1; B: day 3, night 1/2.
    # Day (16:00-17:59): 4A+2B = 8+6 = 14, 4B+2A = 12+4 = 16.
    # Night (18:00-18:30): 4A+2B = 4+1 = 5, 4B+2A = 2+2 = 4.
    a = ClusterState("A", 8, (), day_night(2, 1))
    b = ClusterState("B", 8, (), day_night(3, Fraction(1, 2)))
    return Request(0, 16 * H, 19 * H, 1800, (4, 2)), [a, b]


def test_earliest_start_is_dear_cheapest_is_later() -> None:
    request, clusters = _two_clusters()
    start = optimum(request, clusters, "start")
    assert start.choice is not None
    assert (start.choice.start, start.choice.cost) == (16 * H, 14)
    assert start.choice.clusters == ("A", "B")
    assert (start.smin, start.smax, start.cmin, start.cmax) == (
        16 * H,
        18 * H + 1800,
        4,
        16,
    )
    cost = optimum(request, clusters, "cost")
    assert cost.choice is not None
    # The earliest night start: 18:00.
    assert (cost.choice.start, cost.choice.cost) == (18 * H, 4)
    assert cost.choice.clusters == ("B", "A")
    front = pareto_front(request, clusters)
    assert [(c.start, c.cost) for c in front] == [(16 * H, 14), (18 * H, 4)]


def test_weighted_eq2_by_hand() -> None:
    # smin = 16:00, smax = 18:30 (9000 s), cmin = 4, cmax = 16 (12).
    # k = s = 1: W(16:00, 14) = 10/12 = 5/6; W(18:00, 4) = 7200/9000 = 4/5.
    request, clusters = _two_clusters()
    best = optimum(request, clusters, "weighted", k=1, s=1)
    assert best.choice is not None
    assert (best.choice.start, best.value) == (18 * H, Fraction(4, 5))
    # s = 2: W(16:00) = 5/6 < W(18:00) = 8/5.
    best = optimum(request, clusters, "weighted", k=1, s=2)
    assert best.choice is not None
    assert (best.choice.start, best.value) == (16 * H, Fraction(5, 6))
    # k = 0: Meltzer's A4, the earliest start.
    best = optimum(request, clusters, "weighted", k=0, s=1)
    assert best.choice is not None and best.choice.start == 16 * H


def test_only_a_busy_end_makes_the_start_feasible() -> None:
    # X has 4 CPUs, 3 busy over [0, 5003): a 2-CPU part fits from 5003 on
    # (a busy end, no hour boundary); Y is too small.
    x = ClusterState("X", 4, ((0, 5003, 3),))
    y = ClusterState("Y", 1)
    request = Request(0, 1000, 10000, 1000, (2,))
    best = optimum(request, [x, y])
    assert best.choice is not None
    assert (best.choice.start, best.choice.clusters, best.choice.cost) == (
        5003,
        ("X",),
        0,
    )
    assert best.smax == 9000


def test_busy_start_minus_duration_is_the_latest_start() -> None:
    # 4 CPUs all busy over [7000, 9000), latest start 7500: a 1000 s job
    # must start by 6000 (busy start - duration).
    x = ClusterState("X", 4, ((7000, 9000, 4),))
    best = optimum(Request(0, 0, 8500, 1000, (4,)), [x])
    assert (best.smin, best.smax) == (0, 6000)
    assert 6000 in candidate_starts(Request(0, 0, 8500, 1000, (4,)), [x])


def test_not_before_moves_a_part() -> None:
    # A3's backlog rule: A may host only from 17:02:03 (61323) on; the two
    # parts need both clusters, so the earliest start is 61323 (day: 14).
    request, clusters = _two_clusters()
    best = optimum(request, clusters, "start", not_before={"A": 61323})
    assert best.choice is not None
    assert (best.choice.start, best.choice.cost) == (61323, 14)
    assert solve(request, clusters, "start", not_before={"A": 61323}).objective == 61323
    one = Request(0, 16 * H, 19 * H, 1800, (2,))
    best = optimum(one, clusters, "start", not_before={"A": 18 * H})
    assert best.choice is not None and best.choice.clusters == ("B",)


def hourly(first: list[int], rest: int) -> Tariff:
    """Monday's first hours priced ``first``, every other hour ``rest``."""
    r = [*first, *[rest] * (168 - len(first))]
    return Tariff(
        tuple((h // 24, h % 24, h % 24 + 1, Fraction(r[h])) for h in range(168))
    )


def test_sampled_price_change_is_a_candidate() -> None:
    # Rates 1, 0, 1, 1, ...: a 30-min part (one sample) between 0:00 and
    # 3:30 is free only when started in hour 1 (r(0) != r(1): 3600 is a
    # candidate; the next change, 2 h, prices 1). Optimum: 3600, cost 0.
    cluster = ClusterState("a", 4, (), hourly([1, 0], 1))
    best = optimum(Request(0, 0, 3 * H + 1800, 1800, (1,)), [cluster], "cost")
    assert best.choice is not None
    assert (best.choice.start, best.choice.cost) == (H, 0)
    assert best.cmax == 1


def test_prorata_breakpoint_b_minus_d() -> None:
    # Rates 2, 0, 4, 4, ...; d = 1.5 h, starts 0..3600. Cost per CPU-hour:
    # S = 0: 1 h * 2 + 0.5 h * 0 = 2; S = 1800: 0.5 * 2 + 1 * 0 = 1;
    # S = 3600: 1 * 0 + 0.5 * 4 = 2. The minimum sits at B - d = 7200 - 5400,
    # where S + d meets the rise to 4 (no hour boundary, no busy entry).
    cluster = ClusterState("a", 4, (), hourly([2, 0], 4))
    request = Request(0, 0, 9000, 5400, (3,))
    best = optimum(request, [cluster], "cost", cost_rule="prorata")
    assert best.choice is not None
    assert (best.choice.start, best.choice.cost) == (1800, 3)
    # The dearest start is 0 or 3600 (2 per CPU: 6).
    assert best.cmax == 6


def test_prorata_breakpoint_b() -> None:
    # Rates 4, 0, 2, 2, ...; d = 1.5 h, starts 0..5400: S = 0: 4 + 0 = 4;
    # S = 1800: 0.5 * 4 + 1 * 0 = 2; S = 3600: 1 * 0 + 0.5 * 2 = 1;
    # S = 5400: 0.5 * 0 + 1 * 2 = 2. The minimum is at B = 3600 (the rate
    # falls at B; B - d is outside the window).
    cluster = ClusterState("a", 4, (), hourly([4, 0], 2))
    best = optimum(
        Request(0, 0, 10800, 5400, (1,)), [cluster], "cost", cost_rule="prorata"
    )
    assert best.choice is not None
    assert (best.choice.start, best.choice.cost) == (3600, 1)
    front = pareto_front(
        Request(0, 0, 10800, 5400, (1,)), [cluster], cost_rule="prorata"
    )
    assert [(c.start, c.cost) for c in front] == [(0, 4), (1800, 2), (3600, 1)]


@pytest.mark.parametrize(
    ("parts", "clusters", "window", "reason"),
    [
        ((1, 1, 1), [ClusterState("a", 4), ClusterState("b", 4)], (0, 1000, 10),
         "more parts than clusters"),
        ((9, 1), [ClusterState("a", 8), ClusterState("b", 4)], (0, 1000, 10),
         "part of 9 CPUs exceeds every cluster"),
        ((1,), [ClusterState("a", 8)], (0, 100, 200),
         "the window is shorter than the duration"),
        ((2,), [ClusterState("a", 8, ((0, 5000, 7),))], (0, 4000, 100),
         "no start in the window has enough free CPUs on distinct clusters"),
        # Enough CPUs in total, but the two parts need distinct clusters.
        ((3, 3), [ClusterState("a", 8), ClusterState("b", 2)], (0, 4000, 100),
         "no start in the window has enough free CPUs on distinct clusters"),
    ],
)  # fmt: skip
def test_reasons(
    parts: tuple[int, ...],
    clusters: list[ClusterState],
    window: tuple[int, int, int],
    reason: str,
) -> None:
    es, deadline, duration = window
    request = Request(0, es, deadline, duration, parts)
    for objective in ("start", "cost", "weighted"):
        best = optimum(request, clusters, objective)
        assert best.choice is None and best.reason == reason
        assert solve(request, clusters, objective).status == "infeasible"
    assert pareto_front(request, clusters) == []


def test_assign_ties_take_the_smallest_cluster_indices() -> None:
    unit = [Fraction(1)] * 3
    assert assign((2, 2), [5, 5, 5], unit) == ((0, 1), 4)
    # Part 0 (3 CPUs) fits only cluster 2; ties on the rest go to cluster 0.
    assert assign((3, 1), [1, 1, 3], unit) == ((2, 0), 4)
    dearest = assign(
        (1, 1), [1, 1, 1], [Fraction(2), Fraction(1, 3), Fraction(1)], maximise=True
    )
    assert dearest is not None
    assert (set(dearest[0]), dearest[1]) == ({0, 2}, 3)
    # -1: the cluster may not be used (fairness bound).
    assert assign((1, 1), [1, -1, 1], unit) == ((0, 2), 2)
    assert fits((2, 2), [2, 1, 5])
    assert not fits((3, 3), [3, 2, 2])
    assert assign((3, 3), [3, 2, 2], unit) is None


# --------------------------------------------------------------------------
# Brute force: every integer start, every injective assignment
# --------------------------------------------------------------------------


def _brute(
    request: Request,
    clusters: list[ClusterState],
    rates: list[list[int]],
    rule: str,
    not_before: dict[str, int],
) -> dict[int, list[tuple[Fraction, tuple[int, ...]]]]:
    """Start -> every (cost, assignment) feasible there (rates in halves)."""
    es, ls, d = request.earliest_start, request.latest_start, request.duration
    lo, hi = es, ls + d
    used = []
    for c in clusters:
        row = np.zeros(hi - lo, dtype=np.int64)
        for a, b, q in c.busy:
            a, b = max(a, lo), min(b, hi)
            if b > a:
                row[a - lo : b - lo] += q
        windows = np.lib.stride_tricks.sliding_window_view(row, d)
        used.append(windows.max(axis=1))  # over [S, S + d) for S = es..ls
    seconds = np.arange(0, hi + 1)
    unit: list[list[Fraction]] = []
    for r in rates:
        if rule == "sampled":
            unit.append([
                Fraction(sum(r[(S // H + j) % 168] for j in range(d // H + 1)), 2)
                for S in range(es, ls + 1)
            ])  # fmt: skip
        else:
            per_second = np.array(
                [r[(t // H) % 168] for t in seconds[:-1]], dtype=np.int64
            )
            cum = np.concatenate(([0], np.cumsum(per_second)))
            unit.append(
                [Fraction(int(cum[S + d] - cum[S]), 2 * H) for S in range(es, ls + 1)]
            )
    out: dict[int, list[tuple[Fraction, tuple[int, ...]]]] = {}
    memo: dict[tuple[object, ...], list[tuple[Fraction, tuple[int, ...]]]] = {}
    for j, S in enumerate(range(es, ls + 1)):
        free = tuple(
            c.processors - int(u[j]) if not_before.get(c.name, -1) <= S else -1
            for c, u in zip(clusters, used, strict=True)
        )
        units = tuple(u[j] for u in unit)
        key = (free, units)
        if key not in memo:
            memo[key] = []
            for perm in itertools.permutations(
                range(len(clusters)), len(request.parts)
            ):
                pairs = list(zip(request.parts, perm, strict=True))
                if all(q <= free[c] for q, c in pairs):
                    cost = sum((q * units[c] for q, c in pairs), Fraction(0))
                    memo[key].append((cost, perm))
        if memo[key]:
            out[S] = memo[key]
    return out


Case = tuple[Request, list[ClusterState], list[list[int]], dict[str, int]]
"""A request, the cluster states, their cost rates and not-before times."""
WEIGHTS = st.fractions(0, 2, max_denominator=4)
"""The weights ``k`` (cost) and ``s`` (start) of the weighted objective."""


@st.composite
def cases(draw: st.DrawFn) -> Case:
    m = draw(st.integers(2, 4))
    clusters, rates = [], []
    for c in range(m):
        processors = draw(st.integers(1, 6))
        busy = []
        for _ in range(draw(st.integers(0, 4)) if draw(st.booleans()) else 0):
            a = draw(st.integers(0, 8 * H))
            b = a + draw(st.integers(1, 3 * H))
            busy.append((a, b, draw(st.integers(1, processors))))
        # Keep the entries that fit together (the state forbids overload).
        kept: list[tuple[int, int, int]] = []
        for entry in busy:
            try:
                ClusterState("x", processors, (*kept, entry))
                kept.append(entry)
            except ValueError:
                pass
        # Hourly rates in halves, repeating every 8 hours, in runs of equal
        # values (few price changes, so that a missed candidate shows), often
        # the same table on every cluster; few values, so that ties occur.
        if rates and draw(st.booleans()):
            r = rates[0]
        else:
            rate = [draw(st.sampled_from((0, 1, 2, 4)))]
            for _ in range(7):
                same = draw(st.booleans())
                rate.append(rate[-1] if same else draw(st.sampled_from((0, 1, 2, 4))))
            r = [rate[h % 8] for h in range(168)]
        tariff = Tariff(
            tuple((h // 24, h % 24, h % 24 + 1, Fraction(r[h], 2)) for h in range(168))
        )
        clusters.append(ClusterState(f"c{c}", processors, tuple(kept), tariff))
        rates.append(r)
    es = draw(st.one_of(st.integers(0, 5 * H), st.sampled_from((0, H, 3 * H))))
    d = draw(st.one_of(st.integers(1, 3 * H), st.sampled_from((H, 2 * H))))
    ls = es + draw(st.integers(0, 3 * H))
    parts = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    not_before = {
        f"c{c}": es + draw(st.integers(-H, 2 * H))
        for c in draw(st.sets(st.integers(0, m - 1), max_size=2))
    }
    return Request(0, es, ls + d, d, parts), clusters, rates, not_before


@slow_settings(60)
@given(
    cases(),
    st.sampled_from(("sampled", "prorata")),
    WEIGHTS,
    WEIGHTS,
)
def test_enumeration_equals_brute_force(
    case: Case,
    rule: str,
    k: Fraction,
    s: Fraction,
) -> None:
    request, clusters, rates, not_before = case
    points = _brute(request, clusters, rates, rule, not_before)
    results = {
        obj: optimum(
            request, clusters, obj, k=k, s=s, cost_rule=rule, not_before=not_before
        )
        for obj in ("start", "cost", "weighted")
    }
    front = pareto_front(request, clusters, cost_rule=rule, not_before=not_before)
    if not points:
        assert all(r.choice is None for r in results.values()) and front == []
        return
    best = {S: min(v) for S, v in points.items()}  # (min cost, smallest indices)
    names = [c.name for c in clusters]
    smin, smax = min(points), max(points)
    cmin = min(c for c, _ in best.values())
    cmax = max(c for v in points.values() for c, _ in v)
    # start: earliest, then cheapest, then smallest cluster indices.
    start = results["start"]
    assert start.choice is not None
    expected = best[smin]
    assert (start.choice.start, start.choice.cost) == (smin, expected[0])
    assert start.choice.clusters == tuple(names[c] for c in expected[1])
    assert (start.smin, start.smax, start.cmin, start.cmax) == (smin, smax, cmin, cmax)
    # cost: cheapest, then earliest.
    cost = results["cost"]
    assert cost.choice is not None
    assert (cost.choice.cost, cost.choice.start) == min(
        (c, S) for S, (c, _) in best.items()
    )

    # weighted (Eq. 2 on the true feasible set), then earliest, then cheaper.
    def w(S: int, c: Fraction) -> Fraction:
        value = Fraction(0)
        if cmax != cmin:
            value += k * (c - cmin) / (cmax - cmin)
        if smax != smin:
            value += s * Fraction(S - smin, smax - smin)
        return value

    weighted = results["weighted"]
    assert weighted.choice is not None
    assert (weighted.value, weighted.choice.start, weighted.choice.cost) == min(
        (w(S, c), S, c) for S, (c, _) in best.items()
    )
    # Every returned choice is valid and its cost is the tariff's.
    for result in results.values():
        choice = result.choice
        assert choice is not None
        assert (choice.start, tuple(names.index(n) for n in choice.clusters)) in {
            (choice.start, p) for _, p in points[choice.start]
        }
    # Pareto front: the whole front (sampled) or its points at candidates.
    true_front, cheapest = [], None
    for S in sorted(best):
        if cheapest is None or best[S][0] < cheapest:
            true_front.append((S, best[S][0]))
            cheapest = best[S][0]
    got = [(c.start, c.cost) for c in front]
    if rule == "sampled":
        assert got == true_front
    else:
        candidates = set(
            candidate_starts(request, clusters, cost_rule=rule, not_before=not_before)
        )
        assert set(got) <= set(true_front)
        assert {p for p in true_front if p[0] in candidates} <= set(got)
        assert got[0] == true_front[0] and got[-1] == true_front[-1]


@settings(max_examples=100, deadline=None)
@given(
    rectangles(500, 200, (1, 3), most=8),
    st.integers(1, 300),
)
def test_free_profile_equals_cluster_free(
    entries: list[tuple[int, int, int]], duration: int
) -> None:
    busy = [(a, a + n, q) for a, n, q in entries]
    cluster = ClusterState("x", 3 * len(busy) + 1, tuple(busy))
    starts = np.arange(-10, 800, 7)
    got = FreeProfile(cluster).free(starts, duration)
    assert [int(v) for v in got] == [
        cluster.free(int(S), int(S) + duration) for S in starts
    ]


# --------------------------------------------------------------------------
# CP-SAT agrees with the enumeration
# --------------------------------------------------------------------------


@slow_settings(25)
@given(
    cases(),
    WEIGHTS,
    WEIGHTS,
)
def test_cpsat_equals_enumeration(
    case: Case,
    k: Fraction,
    s: Fraction,
) -> None:
    request, clusters, _, not_before = case
    names = {c.name: c for c in clusters}
    for objective in ("start", "cost", "weighted"):
        exact = optimum(request, clusters, objective, k=k, s=s, not_before=not_before)
        model = solve(
            request, clusters, objective, k=k, s=s, not_before=not_before, workers=1
        )
        if exact.choice is None:
            assert model.status == "infeasible"
            continue
        assert model.status == "optimal" and model.choice is not None
        assert model.objective == exact.value
        # Same tie rules on start and cost (cluster indices may differ).
        assert (model.choice.start, model.choice.cost) == (
            exact.choice.start,
            exact.choice.cost,
        )
        # The model's choice is valid: distinct clusters, enough free CPUs.
        choice = model.choice
        assert len(set(choice.clusters)) == len(choice.clusters)
        for q, name in zip(request.parts, choice.clusters, strict=True):
            cluster = names[name]
            assert cluster.free(choice.start, choice.start + request.duration) >= q
            assert choice.start >= not_before.get(name, 0)


def test_cpsat_refuses_prorata() -> None:
    request, clusters = _two_clusters()
    with pytest.raises(ValueError, match="prorata: use the enumeration"):
        solve(request, clusters, cost_rule="prorata")
