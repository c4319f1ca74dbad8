"""Issue 32: time windows jump over empty steps (a 1-second step hung ``bench``).

The reference below is the plain loop over every step, which the selection
used to run: it must give the same windows on random traces.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.instance import Instance, Job, Machine
from optsched.trace import Trace
from optsched.windows.selection import WindowRule, select_windows


def _trace(releases: list[int]) -> Trace:
    jobs = tuple(Job(k + 1, r, 1, 10) for k, r in enumerate(sorted(releases)))
    return Trace(Instance(Machine(4), jobs))


def _every_step(
    releases: list[int],
    start: int | None,
    end: int | None,
    step: int,
    count: int | None,
) -> list[tuple[int, int]]:
    lo = min(releases) if start is None else start
    hi = max(releases) + 1 if end is None else end
    out = []
    t = lo
    while t < hi and (count is None or len(out) < count):
        t_end = min(t + step, hi)
        if any(t <= r < t_end for r in releases):
            out.append((t, t_end))
        t = t_end
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 500), min_size=1, max_size=12),
    st.one_of(st.none(), st.integers(0, 300)),
    st.one_of(st.none(), st.integers(1, 600)),
    st.integers(1, 90),
    st.one_of(st.none(), st.integers(1, 5)),
)
def test_time_windows_equal_the_step_by_step_loop(
    releases: list[int],
    start: int | None,
    end: int | None,
    step: int,
    count: int | None,
) -> None:
    expected = _every_step(releases, start, end, step, count)
    rule = WindowRule("time", count=count, start=start, end=end, step=step)
    try:
        got = [(w.start, w.end) for w in select_windows(_trace(releases), rule)]
    except ValueError:
        got = []  # no job in [start, end): refused, as the loop finds none
    assert got == expected


def test_a_one_second_step_over_decades_jumps_the_empty_steps() -> None:
    # The old loop took 2e9 turns here (it hung); this one takes three.
    releases = [0, 10**9, 2 * 10**9]
    windows = select_windows(_trace(releases), WindowRule("time", step=1))
    assert [(w.start, w.end) for w in windows] == [
        (0, 1),
        (10**9, 10**9 + 1),
        (2 * 10**9, 2 * 10**9 + 1),
    ]
