"""Small random instances where jobs overrun and underrun their estimates."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from optsched.instance import BusyBlock, Instance, Job, Machine


@st.composite
def overrunning(draw: st.DrawFn, allocations: tuple[str, ...] = ("any",)) -> Instance:
    """Up to 12 jobs on up to 8 processors: estimates exact, doubled, halved,
    zero or a constant, some jobs of zero length, and on ``any`` machines up
    to two busy blocks (processor counts) that may cut into overruns."""
    m = draw(st.integers(1, 8))
    allocation = draw(st.sampled_from(allocations))
    jobs = []
    for k in range(draw(st.integers(1, 12))):
        runtime = draw(st.integers(0, 20))
        estimate = draw(st.sampled_from([runtime, 2 * runtime, runtime // 2, 0, 7]))
        release = draw(st.integers(0, 30))
        jobs.append(Job(k + 1, release, draw(st.integers(1, m)), runtime, estimate))
    blocks = []
    if allocation == "any":
        for _ in range(draw(st.integers(0, 2))):
            start = draw(st.integers(0, 40))
            size = draw(st.integers(1, m))
            blocks.append(BusyBlock(start, start + draw(st.integers(1, 15)), size))
    try:
        machine = Machine(m, allocation, tuple(blocks))
    except ValueError:
        assume(False)
    return Instance(machine, tuple(jobs), name="overrunning")
