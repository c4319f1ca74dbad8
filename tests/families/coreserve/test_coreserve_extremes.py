"""Issue 32: co-reservation optimum with far deadlines (loops over events, not hours).

The enumeration used to walk every hour of the window, and the CP-SAT model
built a price table of one entry per hour: a deadline of 1e9 s or 2**53 s
hung both (the model build is outside the time limit). Prices repeat weekly,
so only the first week after each event point is walked, and the CP-SAT
table is indexed by the hour of the week.

The pruning is checked against the full hourly enumeration (the old
behaviour, recovered by adding an event point every week, so that no price
point is pruned), on random cases of up to four weeks.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.coreserve.optimum import candidate_starts, optimum, pareto_front
from optsched.coreserve.request import ClusterState, Request
from optsched.coreserve.tariff import Tariff
from optsched.models.coreserve.request import solve

H = 3600
WEEK = 168 * H
optimum_module = importlib.import_module("optsched.coreserve.optimum")
"""The module (the package's ``optimum`` attribute is the function)."""


def _tariff(rates: Sequence[int]) -> Tariff:
    return Tariff(
        tuple((h // 24, h % 24, h % 24 + 1, Fraction(rates[h], 2)) for h in range(168))
    )


def _clusters() -> list[ClusterState]:
    day = [1] * 8 + [4] * 10 + [1] * 6
    cheap_weekend = [r for d in range(7) for r in (day if d < 5 else [0] * 24)]
    return [
        ClusterState("A", 8, ((0, 57600, 8), (61000, 62000, 6)), _tariff(day * 7)),
        ClusterState("B", 8, ((3 * H, 40 * H, 5),), _tariff(cheap_weekend)),
    ]


@pytest.mark.parametrize("deadline", [10**9, 2**53, 10**18 // 1000])
@pytest.mark.parametrize("objective", ["start", "cost", "weighted"])
def test_a_far_deadline_answers_at_once_like_a_near_one(
    deadline: int, objective: str
) -> None:
    clusters = _clusters()
    far = Request(0, 57600, deadline, 1800, (4, 2))
    # Beyond the last event (62,000 s) plus a week, every start repeats an
    # earlier one: the start and cost optima are those of a 3-week window.
    near = Request(0, 57600, 57600 + 3 * WEEK, 1800, (4, 2))
    assert len(candidate_starts(far, clusters)) < 2 * 168 + 10
    got, reference = (
        optimum(far, clusters, objective),
        optimum(near, clusters, objective),
    )
    assert got.choice is not None
    if objective != "weighted":  # its s_max is the window's end
        assert got.choice == reference.choice
        assert got.value == reference.value
    assert got.smax == far.latest_start  # feasible at the very end
    assert pareto_front(far, clusters) == pareto_front(near, clusters)
    if objective != "weighted":
        solved = solve(far, clusters, objective, time_limit=10)
        assert solved.choice is not None
        assert (solved.choice.start, solved.choice.cost) == (
            got.choice.start,
            got.choice.cost,
        )


def test_a_week_long_duration_costs_its_weeks_exactly() -> None:
    halves = [k % 5 for k in range(168)]
    tariff = _tariff(halves)
    week_total = Fraction(sum(halves), 2)
    for start in (0, 5 * H + 17, 100 * H):
        hours = 3 * 168 + 7
        naive = Fraction(
            sum(halves[(start // H + k) % 168] for k in range(hours + 1)), 2
        )
        assert tariff.sampled_sum(start, hours * H) == naive
        assert tariff.sampled_sum(start, 168 * H - 1) == week_total
        end = start + 2 * WEEK + 1234
        per_second = sum(halves[(t // H) % 168] for t in range(start, end))
        assert tariff.integral(start, end) == Fraction(per_second, 2 * H)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Request, list[ClusterState], dict[str, int]]:
    clusters = []
    for c in range(draw(st.integers(2, 3))):
        processors = draw(st.integers(1, 5))
        busy: list[tuple[int, int, int]] = []
        for _ in range(draw(st.integers(0, 3))):
            a = draw(st.integers(0, 2 * WEEK))
            entry = (
                a,
                a + draw(st.integers(1, 30 * H)),
                draw(st.integers(1, processors)),
            )
            try:
                ClusterState("x", processors, (*busy, entry))
                busy.append(entry)
            except ValueError:
                pass
        rates = draw(
            st.lists(st.sampled_from((0, 1, 2, 4)), min_size=168, max_size=168)
        )
        clusters.append(ClusterState(f"c{c}", processors, tuple(busy), _tariff(rates)))
    es = draw(st.integers(0, WEEK))
    d = draw(st.integers(1, 40 * H))
    ls = es + draw(st.integers(0, 4 * WEEK))
    parts = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    not_before = {
        f"c{c}": es + draw(st.integers(0, 2 * WEEK))
        for c in draw(st.sets(st.integers(0, len(clusters) - 1), max_size=1))
    }
    return Request(0, es, ls + d, d, parts), clusters, not_before


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from(("sampled", "prorata")))
def test_pruned_enumeration_equals_the_hourly_one(
    case: tuple[Request, list[ClusterState], dict[str, int]], rule: str
) -> None:
    request, clusters, not_before = case
    pruned_front = pareto_front(
        request, clusters, cost_rule=rule, not_before=not_before
    )
    pruned = {
        obj: optimum(request, clusters, obj, cost_rule=rule, not_before=not_before)
        for obj in ("start", "cost", "weighted")
    }
    original = optimum_module._price_changes

    def every_week(
        request: Request, clusters: Any, cost_rule: str, events: Sequence[int]
    ) -> list[int]:
        weekly = range(request.earliest_start, request.latest_start + 1, WEEK)
        return original(request, clusters, cost_rule, [*events, *weekly])

    optimum_module._price_changes = every_week  # type: ignore[assignment]
    try:
        full = {
            obj: optimum(request, clusters, obj, cost_rule=rule, not_before=not_before)
            for obj in ("start", "cost", "weighted")
        }
        full_front = pareto_front(
            request, clusters, cost_rule=rule, not_before=not_before
        )
    finally:
        optimum_module._price_changes = original
    for obj in full:
        a, b = pruned[obj], full[obj]
        assert (a.choice, a.value, a.reason) == (b.choice, b.value, b.reason), obj
        assert (a.smin, a.smax, a.cmin, a.cmax) == (b.smin, b.smax, b.cmin, b.cmax)
        assert a.candidates <= b.candidates
    assert pruned_front == full_front
