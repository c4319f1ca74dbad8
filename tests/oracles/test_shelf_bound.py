"""Shelves where a reference is impractical: a published bound instead.

Coffman, Garey, Johnson and Tarjan, "Performance bounds for level-oriented
two-dimensional packing algorithms", SIAM J. Comput. 9(4), 1980: NFDH and
FFDH pack a list ``L`` of rectangles in a strip of width ``W`` within
height ``2 A(L) / W + h_max`` (``A`` the total area). With every job
released at 0 and exact estimates the batch framework's first batch is the
offline algorithm on the whole instance (``test_shelf_policies``), so the
online ``nfdh`` and ``ffdh`` must end by ``2 sum(q p) / m + max p``.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from support.simulation import run_checked

from optsched.instance import Instance, Job, Machine


@st.composite
def one_batch(draw: st.DrawFn) -> Instance:
    m = draw(st.integers(1, 12))
    jobs = []
    for k in range(draw(st.integers(1, 16))):
        runtime = draw(st.integers(0, 40))
        jobs.append(Job(k + 1, 0, draw(st.integers(1, m)), runtime, runtime))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    return Instance(Machine(m, allocation), tuple(jobs))


@settings(max_examples=200, deadline=None)
@given(instance=one_batch(), spec=st.sampled_from(["nfdh", "ffdh"]))
def test_level_algorithms_keep_coffman_s_bound(instance: Instance, spec: str) -> None:
    schedule = run_checked(instance, spec)
    makespan = max(p.end for p in schedule.placements.values())
    area = sum(j.size * j.runtime for j in instance.jobs)
    longest = max(j.runtime for j in instance.jobs)
    assert makespan <= 2 * Fraction(area, instance.machine.processors) + longest
