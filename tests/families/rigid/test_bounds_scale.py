"""Issue 16: the vectorised closed-form bounds and the checker's fast path.

The ``bounds-only`` back-end was made near-linear (benchmarks/README.md,
"Issue 16: bounds-only at archive scale"). Nothing here is timed: the new
kernels are compared with the definitions they replace (naive oracles
below, on random inputs), every bound with the values the original
implementation (commit 4a6f53f) gave on fixed instances, and the checker's
vectorised verdict with its rule-by-rule checks.
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_right
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import small_instances
from support.paths import trace_path

from optsched import check
from optsched.check import plain as plain_rules
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.rigid.bounds import (
    _energy_makespan,
    _fluid_weighted_mean_busy,
    _Profile,
    _smith_ranks,
    _Weights,
    lower_bounds,
)
from optsched.packing import list_schedule
from optsched.schedule import Placement, Schedule

OBJECTIVES = ["cmax", "wct", "wct:size", "wct:area:relative", "wct:instance"]


# --------------------------------------------------------------------------
# Oracles: the definitions, computed the slow way
# --------------------------------------------------------------------------


def naive_energy(
    demands: Sequence[int],
    releases: Sequence[int],
    durations: Sequence[int],
    capacity: _Profile,
) -> int:
    """``max_t min{T >= t : F(T) - F(t) >= E(t)}`` term by term."""
    best = 0
    for t in sorted({0, *releases}):
        energy = sum(
            d * max(0, min(p, r + p - t))
            for d, r, p in zip(demands, releases, durations, strict=True)
        )
        best = max(best, capacity.earliest_end(t, energy))
    return best


def naive_mean_busy(
    releases: Sequence[int],
    works: Sequence[int],
    weights: Sequence[Fraction],
    capacity: _Profile,
) -> Fraction:
    """The original event loop in rationals (real time, one step per event)."""
    order = sorted(range(len(works)), key=lambda i: releases[i])
    heap: list[tuple[Fraction, int]] = []
    remaining = [Fraction(a) for a in works]
    total = Fraction(0)
    now = Fraction(0)
    nxt = 0
    times = capacity.times
    while nxt < len(order) or heap:
        while nxt < len(order) and releases[order[nxt]] <= now:
            i = order[nxt]
            heapq.heappush(heap, (-Fraction(weights[i]) / works[i], i))
            nxt += 1
        next_release = releases[order[nxt]] if nxt < len(order) else None
        if not heap:
            assert next_release is not None
            now = Fraction(next_release)
            continue
        seg = bisect_right(times, now) - 1
        next_break = times[seg + 1] if seg + 1 < len(times) else None
        cap = capacity.caps[seg]
        if cap == 0:
            assert next_break is not None
            now = Fraction(next_break)
            continue
        neg_ratio, i = heap[0]
        end = now + remaining[i] / cap
        for limit in (next_release, next_break):
            if limit is not None and limit < end:
                end = Fraction(limit)
        total += -neg_ratio * cap * (end * end - now * now) / 2
        remaining[i] -= cap * (end - now)
        if remaining[i] == 0:
            heapq.heappop(heap)
        now = end
    return total


def exact_weights(weights: Sequence[float]) -> _Weights:
    """:class:`_Weights` of plain floats (one power-of-two denominator)."""
    exact = [Fraction(w) for w in weights]
    den = max((w.denominator for w in exact), default=1)
    num = [int(w * den) for w in exact]
    return _Weights(num, den, np.array(num, dtype=object), np.array(weights), {})


@st.composite
def profiles(draw: st.DrawFn) -> _Profile:
    """Step functions from 0 with some zero-capacity stretches."""
    steps = draw(st.integers(1, 4))
    gaps = draw(st.lists(st.integers(1, 6), min_size=steps - 1, max_size=steps - 1))
    times = [0]
    for gap in gaps:
        times.append(times[-1] + gap)
    caps = draw(st.lists(st.integers(0, 5), min_size=steps, max_size=steps))
    caps[-1] = max(caps[-1], 1)
    return _Profile.from_steps(times, caps)


# --------------------------------------------------------------------------
# Kernels against their definitions
# --------------------------------------------------------------------------


def _columns(rows: Sequence[tuple[Any, ...]], count: int) -> list[list[Any]]:
    """The ``count`` columns of ``rows`` as lists (empty ones when there are
    no rows)."""
    return [[row[k] for row in rows] for k in range(count)]


@settings(max_examples=200, deadline=None)
@given(
    profile=profiles(),
    jobs=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 15), st.integers(0, 8)),
        max_size=12,
    ),
)
def test_energy_kernel_is_the_definition(
    profile: _Profile, jobs: list[tuple[int, int, int]]
) -> None:
    demands, releases, durations = _columns(jobs, 3)
    expected = naive_energy(demands, releases, durations, profile) if jobs else 0
    assert _energy_makespan(demands, releases, durations, profile) == expected


def test_energy_kernel_switches_to_python_integers_beyond_int64() -> None:
    # d_j (r_j + p_j) summed over the jobs exceeds 2**63: exact all the same.
    profile = _Profile.from_steps([0, 5], [3, 2**40])
    demands = [2**40, 3, 2**39]
    releases = [0, 2**50, 2**51]
    durations = [2**50, 7, 2**45]
    assert _energy_makespan(demands, releases, durations, profile) == naive_energy(
        demands, releases, durations, profile
    )


@settings(max_examples=200, deadline=None)
@given(
    profile=profiles(),
    jobs=st.lists(
        st.tuples(
            st.integers(0, 12),
            st.integers(1, 9),
            st.sampled_from([0.5, 1.0, 2.0, 3.0, 0.75, 1.25]),
        ),
        max_size=10,
    ),
)
def test_fluid_kernel_is_the_event_loop(
    profile: _Profile, jobs: list[tuple[int, int, float]]
) -> None:
    releases, works, raw_weights = _columns(jobs, 3)
    weights = exact_weights(raw_weights)
    work = np.array(works, dtype=np.int64)
    value = _fluid_weighted_mean_busy(
        np.array(releases, dtype=np.int64),
        work,
        weights,
        np.arange(len(jobs)),
        _smith_ranks(weights.num, weights.floats, work),
        profile,
    )
    expected = naive_mean_busy(
        releases, works, [Fraction(w) for w in raw_weights], profile
    )
    assert value / weights.den == expected


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.integers(1, 2**60), st.integers(0, 2**60)), min_size=1, max_size=30
    )
)
def test_smith_ranks_are_the_exact_order(pairs: list[tuple[int, int]]) -> None:
    # Huge integers make float ratios collide: the exact order must survive.
    num = [w for w, _ in pairs]
    works = np.array([a for _, a in pairs], dtype=object)
    floats = np.array([float(w) for w in num])
    rank = _smith_ranks(num, floats, works)

    def key(i: int) -> tuple[Fraction, int]:
        a = pairs[i][1]
        return (-Fraction(num[i], a) if a else Fraction(-(2**1100)), i)

    expected = sorted(range(len(pairs)), key=key)
    assert sorted(range(len(pairs)), key=rank.__getitem__) == expected


def test_smith_ranks_close_ratios() -> None:
    # 1/3 and 333333333/1000000000 differ by 3.3e-10 (relative 1e-9).
    num = [333_333_333, 1, 1, 5]
    works = np.array([1_000_000_000, 3, 3, 7], dtype=np.int64)
    rank = _smith_ranks(num, np.array(num, dtype=float), works)
    assert sorted(range(4), key=rank.__getitem__) == [3, 1, 2, 0]


# --------------------------------------------------------------------------
# Every bound against the original implementation
# --------------------------------------------------------------------------


def synthetic(seed: int) -> Instance:
    """400 jobs: wide and narrow sizes, zero run times, fractional weights,
    busy blocks (pinned on contiguous machines, counts on any machines)."""
    rng = random.Random(seed)
    m = rng.choice([16, 64, 100])
    allocation = "contiguous" if seed % 2 else "any"
    blocks = []
    t = 0
    for _ in range(rng.randint(0, 5)):
        t += rng.randint(0, 300)
        size = rng.randint(1, m)
        end = t + rng.randint(1, 400)
        offset = rng.randint(0, m - size) if allocation == "contiguous" else None
        blocks.append(BusyBlock(t, end, size, offset))
        t = end
    jobs = []
    release = 0
    for k in range(1, 401):
        release += rng.choice([0, 0, 1, 5, 30, 120])
        size = rng.choice(
            [1, 2, 3, m // 4, m // 2, m // 2 + 1, m - 3, m, rng.randint(1, m)]
        )
        runtime = rng.choice([0, 1, 7, 60, 300, rng.randint(1, 2000)])
        weight = rng.choice([0.5, 1.0, 1.5, 2.25, 3.0])
        jobs.append(Job(k, release, max(1, size), runtime, weight=weight))
    return Instance(Machine(m, allocation, tuple(blocks)), tuple(jobs))


# Values of every bound (commit 4a6f53f, before the vectorisation) on the
# instances above and on two KTH windows (1,500 jobs; one with the recorded
# initial state as busy blocks).
GOLDEN = {
    "synthetic-0": {
        "cmax": {
            "release": 10388,
            "area": 37637,
            "energy": 37958,
            "wide-jobs": 39731,
            "dff": 43797,
        },
        "wct": {
            "height": 2082867,
            "squashed-area": 1528151,
            "fluid": 2666372,
            "wide-jobs": 2554348,
        },
        "wct:size": {
            "height": 55215822,
            "squashed-area": 55974632,
            "fluid": 80966283,
            "wide-jobs": 76536810,
        },
        "wct:area:relative": {
            "height": 2502770851,
            "squashed-area": 35174487917,
            "fluid": 35783712078,
            "wide-jobs": 30579143176,
        },
        "wct:instance": {
            "height": 3429235.5,
            "squashed-area": 2415247.5087112156,
            "fluid": 4301641.1651773285,
            "wide-jobs": 4137441.1676839646,
        },
    },
    "synthetic-1": {
        "cmax": {
            "release": 10528,
            "area": 33126,
            "energy": 33330,
            "wide-jobs": 29524,
            "dff": 33330,
        },
        "wct": {
            "height": 1967980,
            "squashed-area": 1580190,
            "fluid": 2545665,
            "wide-jobs": 2264990,
        },
        "wct:size": {
            "height": 13771870,
            "squashed-area": 13594556,
            "fluid": 19523701,
            "wide-jobs": 17293113,
        },
        "wct:area:relative": {
            "height": 525561325,
            "squashed-area": 6513816427,
            "fluid": 6621974076,
            "wide-jobs": 4384908322,
        },
        "wct:instance": {
            "height": 3376917.0,
            "squashed-area": 2439459.286621006,
            "fluid": 4130431.8760927985,
            "wide-jobs": 3777758.891905386,
        },
    },
    "synthetic-2": {
        "cmax": {
            "release": 12245,
            "area": 41976,
            "energy": 41982,
            "wide-jobs": 36279,
            "dff": 41982,
        },
        "wct": {
            "height": 2220116,
            "squashed-area": 1988168,
            "fluid": 2950488,
            "wide-jobs": 2538621,
        },
        "wct:size": {
            "height": 15481967,
            "squashed-area": 16663152,
            "fluid": 22747924,
            "wide-jobs": 19549492,
        },
        "wct:area:relative": {
            "height": 732859423,
            "squashed-area": 11035869591,
            "fluid": 11035869591,
            "wide-jobs": 6556522824,
        },
        "wct:instance": {
            "height": 3533599.0,
            "squashed-area": 2828121.09375,
            "fluid": 4476842.080487715,
            "wide-jobs": 3944201.998367789,
        },
    },
    "synthetic-3": {
        "cmax": {
            "release": 10318,
            "area": 48863,
            "energy": 48920,
            "wide-jobs": 49465,
            "dff": 51105,
        },
        "wct": {
            "height": 1983428,
            "squashed-area": 2094567,
            "fluid": 2983562,
            "wide-jobs": 2678010,
        },
        "wct:size": {
            "height": 14977141,
            "squashed-area": 20866426,
            "fluid": 26541030,
            "wide-jobs": 23644483,
        },
        "wct:area:relative": {
            "height": 990992218,
            "squashed-area": 15984470946,
            "fluid": 15992093496,
            "wide-jobs": 11931665596,
        },
        "wct:instance": {
            "height": 3271104.25,
            "squashed-area": 3114878.4050545385,
            "fluid": 4628532.261602502,
            "wide-jobs": 4138816.7957395804,
        },
    },
    "synthetic-4": {
        "cmax": {
            "release": 10006,
            "area": 43429,
            "energy": 43480,
            "wide-jobs": 39498,
            "dff": 44989,
        },
        "wct": {
            "height": 1600259,
            "squashed-area": 1794820,
            "fluid": 2505050,
            "wide-jobs": 2148932,
        },
        "wct:size": {
            "height": 12252462,
            "squashed-area": 17123990,
            "fluid": 21920811,
            "wide-jobs": 19162973,
        },
        "wct:area:relative": {
            "height": 741105740,
            "squashed-area": 12845860772,
            "fluid": 12845860772,
            "wide-jobs": 9690102273,
        },
        "wct:instance": {
            "height": 2538532.75,
            "squashed-area": 2631630.5533292554,
            "fluid": 3841746.5928874863,
            "wide-jobs": 3377235.548466008,
        },
    },
    "synthetic-5": {
        "cmax": {
            "release": 12250,
            "area": 36558,
            "energy": 36772,
            "wide-jobs": 36496,
            "dff": 38633,
        },
        "wct": {
            "height": 2088301,
            "squashed-area": 1404391,
            "fluid": 2513212,
            "wide-jobs": 2420398,
        },
        "wct:size": {
            "height": 85871515,
            "squashed-area": 84686271,
            "fluid": 118957916,
            "wide-jobs": 112892577,
        },
        "wct:area:relative": {
            "height": 3878411518,
            "squashed-area": 48132178142,
            "fluid": 48913606268,
            "wide-jobs": 41569676629,
        },
        "wct:instance": {
            "height": 3387873.75,
            "squashed-area": 2195809.1733146016,
            "fluid": 3980093.558947369,
            "wide-jobs": 3858990.745531468,
        },
    },
}

KTH_GOLDEN = {
    "kth-15000-none": {
        "cmax": {
            "release": 1501477,
            "area": 1005133,
            "energy": 1490107,
            "wide-jobs": 1474334,
            "dff": 1490107,
        },
        "wct": {
            "height": 1269113506,
            "squashed-area": 122216149,
            "fluid": 1264256368,
            "wide-jobs": 1269117843,
        },
        "wct:size": {
            "height": 9437079028,
            "squashed-area": 1390182570,
            "fluid": 9426549255,
            "wide-jobs": 9437353155,
        },
        "wct:area:relative": {
            "height": 5195999718099,
            "squashed-area": -21529431554665,
            "fluid": 5039045665490,
            "wide-jobs": 5202524791377,
        },
    },
    "kth-9000-recorded": {
        "cmax": {
            "release": 1445565,
            "area": 1051721,
            "energy": 1370859,
            "wide-jobs": 1407658,
            "dff": 1407658,
        },
        "wct": {
            "height": 1054752031,
            "squashed-area": 94537531,
            "fluid": 1049939927,
            "wide-jobs": 1054813032,
        },
        "wct:size": {
            "height": 9249834018,
            "squashed-area": 1407645015,
            "fluid": 9242639023,
            "wide-jobs": 9254019301,
        },
        "wct:area:relative": {
            "height": 6481822359306,
            "squashed-area": -15185686690258,
            "fluid": 6014497988712,
            "wide-jobs": 6633061479570,
        },
    },
}


@pytest.mark.parametrize("seed", range(6))
def test_bounds_keep_the_values_of_the_original_implementation(seed: int) -> None:
    instance = synthetic(seed)
    for objective in OBJECTIVES:
        found = {b.method: b.value for b in lower_bounds(instance, objective)}
        assert found == GOLDEN[f"synthetic-{seed}"][objective], objective


@pytest.mark.parametrize(("first", "state"), [(15000, "none"), (9000, "recorded")])
def test_bounds_on_kth_windows_keep_their_values(first: int, state: str) -> None:
    from optsched.io import read_trace
    from optsched.windows.window import cut_window

    trace = read_trace(trace_path("KTH-SP2-1996-2.1-cln.swf"))
    instance = cut_window(trace, first_job=first, jobs=1500, initial_state=state)
    for objective in OBJECTIVES[:4]:
        found = {b.method: b.value for b in lower_bounds(instance, objective)}
        assert found == KTH_GOLDEN[f"kth-{first}-{state}"][objective], objective


# --------------------------------------------------------------------------
# The checker's fast path judges as the rules do
# --------------------------------------------------------------------------


def _mutated(
    instance: Instance, schedule: Schedule, draw: st.DrawFn
) -> tuple[Schedule, bool]:
    """A copy of ``schedule`` with one random change (or none)."""
    placements = dict(schedule.placements)
    killed = set(schedule.killed)
    if not placements:
        return schedule, False
    jid = draw(st.sampled_from(sorted(placements)))
    p = placements[jid]
    kind = draw(
        st.sampled_from(
            ["none", "shift", "stretch", "procs", "repeat", "outside", "drop", "kill"]
        )
    )
    m = instance.processors
    if kind == "shift":
        delta = draw(st.sampled_from([-2, -1, 1, 3]))
        placements[jid] = Placement(p.start + delta, p.end + delta, p.processors)
    elif kind == "stretch":
        placements[jid] = Placement(p.start, p.end + 1, p.processors)
    elif kind == "procs" and p.processors:
        shift = draw(st.integers(1, max(1, m - 1)))
        moved = tuple(sorted({(q + shift) % m for q in p.processors}))
        placements[jid] = Placement(p.start, p.end, moved)
    elif kind == "repeat" and p.processors:
        placements[jid] = Placement(p.start, p.end, (*p.processors, p.processors[0]))
    elif kind == "outside" and p.processors:
        placements[jid] = Placement(p.start, p.end, (*p.processors[:-1], m))
    elif kind == "drop":
        placements[jid] = Placement(p.start, p.end, None)
    elif kind == "kill":
        killed.add(jid)
    return Schedule(placements, schedule.producer, frozenset(killed)), kind != "none"


@settings(max_examples=400, deadline=None)
@given(instance=small_instances(max_jobs=10, max_m=8), data=st.data())
def test_fast_check_agrees_with_the_rules(
    instance: Instance, data: st.DataObject
) -> None:
    schedule = list_schedule(instance, [j.id for j in instance.jobs])
    # The common case is decided (an empty instance is left to the rules).
    assert plain_rules.plainly_valid(instance, schedule) == bool(instance.jobs)
    assert check.check_schedule(instance, schedule) == []
    changed, _ = _mutated(instance, schedule, data.draw)
    slow = plain_rules.violations(instance, changed)
    fast = plain_rules.plainly_valid(instance, changed)
    assert check.check_schedule(instance, changed) == slow
    assert not (fast and slow)  # never vouches for an invalid schedule
    plain = all(
        p.processors is None or type(p.processors) is tuple
        for p in changed.placements.values()
    )
    if not slow and plain and instance.jobs:
        assert fast  # and decides every valid schedule of tuples


def test_fast_check_sees_an_overlap_on_one_processor() -> None:
    machine = Machine(4)
    jobs = (Job(1, 0, 2, 5), Job(2, 0, 2, 5))
    instance = Instance(machine, jobs)
    clash = Schedule({1: Placement(0, 5, (0, 1)), 2: Placement(3, 8, (1, 2))})
    assert not plain_rules.plainly_valid(instance, clash)
    assert [v.kind for v in check.check_schedule(instance, clash)] == [
        "processor-overlap"
    ]
    fine = Schedule({1: Placement(0, 5, (0, 1)), 2: Placement(5, 10, (0, 1))})
    assert plain_rules.plainly_valid(instance, fine)
