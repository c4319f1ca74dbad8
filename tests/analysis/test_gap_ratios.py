"""Ratio intervals, joins and aggregates of the gap analysis (no solver)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.analysis.gap import (
    Candidate,
    LowerBound,
    Reference,
    aggregate,
    gap_row,
    price_interval,
    ratio_interval,
    rows_frame,
    window_reference,
)


def test_exact_ratio_when_optimum_proven() -> None:
    assert ratio_interval(150.0, 100.0, 100.0) == (1.5, 1.5)


def test_interval_when_only_bounds_known() -> None:
    low, high = ratio_interval(150.0, 100.0, 120.0)
    assert low == pytest.approx(1.25)
    assert high == pytest.approx(1.5)


def test_unknown_or_zero_bounds() -> None:
    assert ratio_interval(10.0, None, 10.0) == (1.0, math.inf)
    assert ratio_interval(10.0, 0.0, 5.0) == (2.0, math.inf)
    assert ratio_interval(0.0, 0.0, 0.0) == (1.0, 1.0)
    low, high = ratio_interval(3.0, 1.0, None)
    assert math.isnan(low) and high == 3.0


@given(
    lower=st.integers(1, 10**6),
    extra=st.integers(0, 10**6),
    worse=st.integers(0, 10**6),
)
def test_interval_brackets_every_possible_optimum(
    lower: int, extra: int, worse: int
) -> None:
    upper = lower + extra
    value = upper + worse
    low, high = ratio_interval(value, lower, upper)
    assert 1.0 <= low <= high
    for optimum in (lower, upper, (lower + upper) // 2):
        assert low <= value / optimum <= high


def _reference(
    lower: float | None, policies: dict[str, float], solver: float | None = None
) -> Reference:
    bounds = [LowerBound(lower, "area")] if lower is not None else []
    candidates = [Candidate(solver, "cpsat")] if solver is not None else []
    candidates += [Candidate(v, f"policy:{p}") for p, v in policies.items()]
    return window_reference("cmax", bounds, candidates)


def test_policies_improve_the_upper_bound() -> None:
    reference = _reference(90.0, {"fcfs": 130.0, "easy": 100.0}, solver=120.0)
    assert (reference.upper, reference.upper_source) == (100.0, "policy:easy")
    fcfs = gap_row("w0", "fcfs", 130.0, reference)
    assert (fcfs.ratio_low, fcfs.ratio_high) == pytest.approx((1.3, 130 / 90))
    assert gap_row("w0", "easy", 100.0, reference).ratio_low == 1.0
    assert not fcfs.optimal


def test_solver_names_the_bound_on_a_tie() -> None:
    reference = _reference(90.0, {"easy": 100.0}, solver=100.0)
    assert reference.upper_source == "cpsat"


def test_policy_reaching_lower_bound_proves_optimum() -> None:
    reference = _reference(100.0, {"fcfs": 100.0, "lpt": 110.0}, solver=120.0)
    rows = [
        gap_row("w0", p, v, reference) for p, v in (("fcfs", 100.0), ("lpt", 110.0))
    ]
    assert all(r.optimal for r in rows)
    assert [(r.ratio_low, r.ratio_high) for r in rows] == [(1.0, 1.0), (1.1, 1.1)]


def test_value_below_lower_bound_is_a_defect_not_a_ratio() -> None:
    reference = _reference(100.0, {"fcfs": 99.0}, solver=120.0)
    assert reference.defect == (
        "cmax: the schedule of policy:fcfs has value 99.0, below the lower bound "
        "100.0 (area): one of them is wrong"
    )
    row = gap_row("w0", "fcfs", 99.0, reference)
    assert not row.comparable and not row.optimal
    assert math.isnan(row.ratio_low) and math.isnan(row.ratio_high)


def test_killed_schedule_is_reported_but_not_comparable() -> None:
    reference = _reference(100.0, {}, solver=120.0)
    row = gap_row("w0", "easy", 80.0, reference, killed=2, lost=40)
    assert (row.value, row.killed, row.lost_work) == (80.0, 2, 40)
    assert not row.comparable and math.isnan(row.ratio_low)


def test_aggregate_statistics_and_worst_window() -> None:
    rows = []
    for window, (value, lower, upper) in {
        "a": (120.0, 100.0, 100.0),
        "b": (150.0, 100.0, 120.0),
        "c": (100.0, 100.0, 100.0),
    }.items():
        rows.append(gap_row(window, "fcfs", value, _reference(lower, {}, upper)))
    rows.append(gap_row("d", "fcfs", 10.0, _reference(100.0, {}, 120.0), killed=1))
    table = aggregate(rows_frame(rows))
    assert len(table) == 1
    row = table.iloc[0]
    assert row["windows"] == 3
    assert row["not_comparable"] == 1
    assert row["optimal_share"] == pytest.approx(2 / 3)
    assert row["mean_low"] == pytest.approx((1.2 + 1.25 + 1.0) / 3)
    assert row["mean_high"] == pytest.approx((1.2 + 1.5 + 1.0) / 3)
    assert row["median_high"] == pytest.approx(1.2)
    assert row["max_low"] == pytest.approx(1.25)
    assert row["max_high"] == pytest.approx(1.5)
    assert row["worst_window"] == "b"


def test_aggregate_of_nothing_is_empty() -> None:
    assert aggregate(pd.DataFrame()).empty


def test_price_of_a_restriction_is_an_interval_at_least_one() -> None:
    plain = _reference(90.0, {}, solver=100.0)
    shelves = window_reference(
        "cmax", [LowerBound(95.0, "shelf")], [Candidate(120.0, "shelf")]
    )
    # OPT in [90, 100], OPT_shelf in [95, 120]: price in [max(1, 95/100), 120/90].
    assert price_interval(shelves, plain) == (1.0, pytest.approx(120 / 90))
    proven = window_reference(
        "cmax", [LowerBound(110.0, "shelf")], [Candidate(110.0, "shelf")]
    )
    exact = _reference(100.0, {}, solver=100.0)
    assert price_interval(proven, exact) == (1.1, 1.1)


def test_restricted_bounds_never_bound_the_unrestricted_optimum() -> None:
    from optsched.bench.store import TaskRow, references, restricted_references

    def solver(name: str, lower: float, upper: float) -> TaskRow:
        return TaskRow(
            task_id=name, suite="s", trace="t", trace_sha256="h", window="w",
            window_index=0, kind="solver", name=name, objective="cmax",
            status="OPTIMAL", values={"cmax": upper}, lower=lower,
            lower_method=name, upper=upper, upper_source=name, bounds={},
            killed=0, lost_work=0.0, interrupted=False, instance_sha256=None,
            schedule_json=None, error=None,
        )  # fmt: skip

    rows = [solver("cpsat", 100.0, 104.0), solver("shelf", 103.0, 103.0)]
    plain = references(rows)[("s", "h", "w", "cmax")]
    # The shelf optimum 103 is no lower bound of the unrestricted optimum,
    # but its schedule is feasible: UB 103.
    assert (plain.lower, plain.upper, plain.upper_source) == (100.0, 103.0, "shelf")
    shelves = restricted_references(rows)[("s", "h", "w", "cmax", "shelves")]
    assert (shelves.lower, shelves.upper, shelves.optimal) == (103.0, 103.0, True)


def test_integer_values_are_optimal_only_when_equal() -> None:
    """Issue 17: at 10**12 a relative tolerance would hide a gap of 1000."""
    from optsched.analysis.gap import is_optimal

    assert is_optimal(10**12, 10**12)
    assert not is_optimal(10**12 - 1000, 10**12)
    assert not is_optimal(10**12 - 1, 10**12)
    # Float noise on a non-integer value is still absorbed.
    assert is_optimal(1101.5, 1101.5 + 1e-7)
    assert not is_optimal(1101.5, 1101.6)
