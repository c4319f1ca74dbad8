"""The engine's rigid policies against plain references (issue 28).

``support.oracle`` holds deliberately slow reference schedulers written
from the policies' definitions (their own step function, event loop and
rules; they share no code with ``optsched.heuristics``). Every engine
policy family (strict list orders, first fit, EASY and its candidate
selections and limits, depth-``k`` and conservative backfilling, Best
Package), Rassmann's combinators where they equal one of them (flat
machines) and Mallmann's family where it does must give the same start
and end to every job: on the bundled windows, on the first 2,000 KTH jobs,
and on small random instances with overruns, zero-length jobs and busy
blocks, with and without killing at the estimate. Every product schedule
goes through the checker.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.oracle import reference_starts
from support.oracle.cases import CASES
from support.oracle.instances import overrunning
from support.paths import INSTANCES, trace_path

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.instance import Instance
from optsched.io import read, read_trace
from optsched.windows.window import cut_window

KTH = "KTH-SP2-1996-2.1-cln.swf"
BUNDLED = sorted(p.name for p in INSTANCES.glob("*.json"))

COMBINATORS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("blocking:f=fifo", "strict", {}),
    ("blocking:f=lpt", "strict", {"order": "lpt-high-id"}),
    ("blocking:f=fid", "strict", {"order": "fid"}),
    ("blocking:f=random", "strict", {"order": "random"}),
    ("fit:f=fifo", "firstfit", {}),
    ("fit:f=spt", "firstfit", {"order": "spt"}),
    ("fit:f=lpt", "firstfit", {"order": "lpt-high-id"}),
    ("fit2:f=fifo", "firstfit", {}),
    ("optimistic:f=fifo", "backfill", {}),
    (
        "optimistic:f=lpt,g=fifo",
        "backfill",
        {"order": "lpt-high-id", "select": "submit"},
    ),
    ("afkt-backfill:f=fifo", "backfill", {"spare": False}),
    ("afkt-backfill:f=spt", "backfill", {"spare": False, "order": "spt"}),
)
"""Rassmann's combinators (topology family, node simulator) that are one of
the reference rules on a flat machine: blocking = strict, fit = first fit,
optimistic = EASY, afkt-backfill = EASY without the spare-processor rule."""

MALLMANN: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("strict-backfill", "backfill", {"spare": False}),
    ("mallmann:fairness=0", "firstfit", {}),
    ("mallmann:variant=ff,fairness=1,oracle", "conservative", {"oracle": True}),
    ("mallmann:order=spt,fairness=0", "firstfit", {"order": "spt"}),
)
"""Mallmann's family where it is one of the reference rules: the strict
rule of Lifka et al. (a candidate ends before the head's start, no spare
processors), lazy scheduling (no fairness: first fit), and the clairvoyant
preview that places every job ahead as conservative backfilling does."""


def assert_same(
    instance: Instance, spec: str, rule: str, options: dict[str, Any], kill: bool
) -> None:
    """The product's schedule is valid and equals the reference job for job."""
    result = simulate(instance, spec, kill_at_estimate=kill)
    assert check_schedule(instance, result.schedule) == []
    expected = reference_starts(instance, rule, kill=kill, **options)
    got = {j: (p.start, p.end) for j, p in result.schedule.placements.items()}
    differ = sorted(j for j in expected if expected[j] != got[j])
    assert not differ, (
        f"{spec} (kill={kill}): {len(differ)} jobs differ, first {differ[0]}: "
        f"reference {expected[differ[0]]}, product {got[differ[0]]}"
    )


@cache
def _bundled(name: str) -> Instance:
    return read(INSTANCES / name)


@pytest.mark.parametrize("kill", [False, True], ids=["overruns", "kill"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_windows(name: str, case: tuple[str, str, dict], kill: bool) -> None:
    spec, rule, options = case
    assert_same(_bundled(name), spec, rule, options, kill)


@pytest.mark.parametrize("case", COMBINATORS, ids=[c[0] for c in COMBINATORS])
@pytest.mark.parametrize("name", [n for n in BUNDLED if n != "kth_20_recorded.json"])
def test_combinators_on_flat_machines(name: str, case: tuple[str, str, dict]) -> None:
    # kth_20_recorded has busy blocks, which the node simulator refuses.
    spec, rule, options = case
    assert_same(_bundled(name), spec, rule, options, kill=False)


@pytest.mark.parametrize("kill", [False, True], ids=["overruns", "kill"])
@pytest.mark.parametrize("case", MALLMANN, ids=[c[0] for c in MALLMANN])
@pytest.mark.parametrize("name", BUNDLED)
def test_mallmann_where_it_is_a_reference_rule(
    name: str, case: tuple[str, str, dict], kill: bool
) -> None:
    spec, rule, options = case
    assert_same(_bundled(name), spec, rule, options, kill)


@cache
def _kth_prefix() -> Instance:
    return cut_window(read_trace(trace_path(KTH)), first_job=0, jobs=2000)


@pytest.mark.parametrize("kill", [False, True], ids=["overruns", "kill"])
@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c[0] in ("fcfs", "firstfit", "easy", "backfill:depth=3")]
    + [c for c in CASES if c[1] == "conservative"],
    ids=lambda c: c[0],
)
def test_kth_prefix(case: tuple[str, str, dict], kill: bool) -> None:
    # The first 2,000 KTH jobs: the old conservative rule differed from the
    # reference from job 128 on (overruns; issue 28).
    spec, rule, options = case
    assert_same(_kth_prefix(), spec, rule, options, kill)


@pytest.mark.slow
@pytest.mark.parametrize("kill", [False, True], ids=["overruns", "kill"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_kth_prefix_every_case(case: tuple[str, str, dict], kill: bool) -> None:
    spec, rule, options = case
    assert_same(_kth_prefix(), spec, rule, options, kill)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    instance=overrunning(),
    case=st.sampled_from(CASES),
    kill=st.booleans(),
)
def test_random_instances(
    instance: Instance, case: tuple[str, str, dict], kill: bool
) -> None:
    spec, rule, options = case
    assert_same(instance, spec, rule, options, kill)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    instance=overrunning(),
    case=st.sampled_from([c for c in CASES if c[1] == "conservative"]),
)
def test_random_instances_conservative_overruns(
    instance: Instance, case: tuple[str, str, dict]
) -> None:
    # Overruns are where the old rule went wrong (stale rectangles kept in
    # the plan, a pass at every reservation time ever asked for).
    spec, rule, options = case
    assert_same(instance, spec, rule, options, kill=False)
