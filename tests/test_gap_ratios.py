"""Ratio intervals, joins and aggregates of the gap analysis (no solver)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.gap import (
    InvalidScheduleError,
    PolicyOutcome,
    Reference,
    aggregate,
    gap_rows,
    ratio_interval,
    rows_frame,
)
from optsched.schedule import Schedule


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


def _outcome(policy: str, value: float) -> PolicyOutcome:
    return PolicyOutcome(policy, "cmax", value, {}, Schedule({}), 0.0)


def test_policies_improve_the_upper_bound() -> None:
    reference = Reference("cmax", 90.0, "energy", 120.0, "cpsat", "FEASIBLE", 1.0)
    rows = gap_rows("w0", [_outcome("fcfs", 130.0), _outcome("easy", 100.0)], reference)
    assert [r.upper for r in rows] == [100.0, 100.0]
    assert rows[1].upper_source == "policy:easy"
    assert (rows[0].ratio_low, rows[0].ratio_high) == pytest.approx((1.3, 130 / 90))
    assert rows[1].ratio_low == 1.0
    assert not rows[0].optimal


def test_policy_reaching_lower_bound_proves_optimum() -> None:
    reference = Reference("cmax", 100.0, "area", 120.0, "cpsat", "FEASIBLE", 1.0)
    rows = gap_rows("w0", [_outcome("fcfs", 100.0), _outcome("lpt", 110.0)], reference)
    assert all(r.optimal for r in rows)
    assert [(r.ratio_low, r.ratio_high) for r in rows] == [(1.0, 1.0), (1.1, 1.1)]


def test_value_below_lower_bound_is_a_bug_not_a_ratio() -> None:
    reference = Reference("cmax", 100.0, "area", 120.0, "cpsat", "FEASIBLE", 1.0)
    with pytest.raises(InvalidScheduleError, match=r"beats the lower bound 100\.0"):
        gap_rows("w0", [_outcome("fcfs", 99.0)], reference)


def test_aggregate_statistics_and_worst_window() -> None:
    rows = []
    for window, (value, lower, upper) in {
        "a": (120.0, 100.0, 100.0),
        "b": (150.0, 100.0, 120.0),
        "c": (100.0, 100.0, 100.0),
    }.items():
        reference = Reference("cmax", lower, "area", upper, "cpsat", "X", 0.0)
        rows += gap_rows(window, [_outcome("fcfs", value)], reference)
    table = aggregate(rows_frame(rows))
    assert len(table) == 1
    row = table.iloc[0]
    assert row["windows"] == 3
    assert row["optimal_share"] == pytest.approx(2 / 3)
    assert row["mean_low"] == pytest.approx((1.2 + 1.25 + 1.0) / 3)
    assert row["mean_high"] == pytest.approx((1.2 + 1.5 + 1.0) / 3)
    assert row["median_high"] == pytest.approx(1.2)
    assert row["max_low"] == pytest.approx(1.25)
    assert row["max_high"] == pytest.approx(1.5)
    assert row["worst_window"] == "b"


def test_aggregate_of_nothing_is_empty() -> None:
    assert aggregate(pd.DataFrame()).empty
