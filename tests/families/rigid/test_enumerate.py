"""The brute-force exact solver, against hand-solved cases and a naive search."""

from __future__ import annotations

import math
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.builders import draw_blocks, draw_jobs, make

from optsched.check import check_schedule
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.rigid.enumerate import normal_patterns, solve_exact
from optsched.objective import Objective
from optsched.result import SolveStatus
from optsched.schedule import Placement, Schedule

CMAX = Objective("cmax")
WCT = Objective("wct")


def starts(result_schedule: object) -> dict[int, int]:
    return {jid: p.start for jid, p in result_schedule.placements.items()}  # type: ignore[attr-defined]


# --------------------------------------------------------------------------
# A naive exhaustive search over integer start times (and offsets)
# --------------------------------------------------------------------------


def naive_best(
    instance: Instance, objective: Objective, *, cutoff: float = math.inf
) -> float | None:
    """Least objective over all schedules with integer starts below a horizon.

    Every job tries every start in ``[r_j, H]`` and, on contiguous machines,
    every offset, on a unit time grid (processor counts for ``any``, cells
    per processor for ``contiguous``; busy blocks pre-filled). Only values
    below ``cutoff`` are searched; ``None`` if there is none. ``H = max(r_j,
    block ends) + sum p_j`` suffices: some optimal schedule is active, and in
    an active schedule every job starts at its release or at the end of a job
    or block, so no later than ``H - p_j``.
    """
    m = instance.processors
    contiguous = instance.machine.allocation == "contiguous"
    jobs = list(instance.jobs)
    horizon = max(
        [0] + [j.release for j in jobs] + [b.end for b in instance.machine.unavailable]
    ) + sum(j.runtime for j in jobs)
    cells = [[False] * m for _ in range(horizon + 1)]
    count = [0] * (horizon + 1)
    for b in instance.machine.unavailable:
        for t in range(b.start, b.end):
            count[t] += b.size
            if b.offset is not None:
                for c in range(b.offset, b.offset + b.size):
                    cells[t][c] = True
    best: list[float] = [cutoff]  # the best value so far (or the cutoff)
    found: list[float] = []

    def value(ends: list[int]) -> float:
        if objective.kind == "cmax":
            return float(max(ends, default=0))
        return sum(
            objective.weight(j) * (e - (j.release if objective.relative else 0))
            for j, e in zip(jobs, ends, strict=False)
        )

    def free(job: Job, s: int, offset: int) -> bool:
        times = range(s, s + job.runtime)
        if any(count[t] + job.size > m for t in times):
            return False
        cols = range(offset, offset + job.size)
        return not contiguous or not any(cells[t][c] for t in times for c in cols)

    def mark(job: Job, s: int, offset: int, on: bool) -> None:
        for t in range(s, s + job.runtime):
            count[t] += job.size if on else -job.size
            if contiguous:
                for c in range(offset, offset + job.size):
                    cells[t][c] = on

    def dfs(ends: list[int]) -> None:
        if value(ends) >= best[0]:  # regular objectives: only grows
            return
        k = len(ends)
        if k == len(jobs):
            best[0] = value(ends)
            found.append(best[0])
            return
        job = jobs[k]
        offsets = range(m - job.size + 1) if contiguous else [0]
        for s, offset in product(
            range(job.release, horizon - job.runtime + 1), offsets
        ):
            if free(job, s, offset):
                mark(job, s, offset, True)
                dfs([*ends, s + job.runtime])
                mark(job, s, offset, False)

    dfs([])
    return found[-1] if found else None


# --------------------------------------------------------------------------
# Hand-solved cases
# --------------------------------------------------------------------------


@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_release_instance_weighted_completion(allocation: str) -> None:
    # m = 2. A (r0, q2, p2), B (r3, q2, p4), C (r3, q1, p2). B and C cannot
    # overlap (2 + 1 > 2). C first: 2 + 5 + 9 = 16; B first: 2 + 7 + 9 = 18.
    inst = make(2, [(0, 2, 2), (3, 2, 4), (3, 1, 2)], allocation=allocation)
    result = solve_exact(inst, WCT)
    assert result.objective == 16
    assert starts(result.schedule) == {1: 0, 2: 5, 3: 3}
    assert check_schedule(inst, result.schedule) == []
    assert solve_exact(inst, CMAX).objective == 9
    # weighted flow: minus sum r = 6
    assert solve_exact(inst, Objective("wct", relative=True)).objective == 10
    assert naive_best(inst, WCT) == 16


def test_contiguity_matters_with_a_busy_block() -> None:
    # m = 3, processor 1 busy during [0, 4): two free processors 0 and 2 are
    # not adjacent, so a size-2 job waits until 4. On an any machine the
    # block is a count of one processor: the job runs at 0 and the block
    # takes the processor it leaves.
    block = BusyBlock(0, 4, 1, offset=1)
    any_machine = make(3, [(0, 2, 2)], unavailable=(BusyBlock(0, 4, 1),))
    contiguous = make(3, [(0, 2, 2)], allocation="contiguous", unavailable=(block,))
    a, c = solve_exact(any_machine, CMAX), solve_exact(contiguous, CMAX)
    assert (a.objective, c.objective) == (2, 6)
    assert a.schedule is not None and c.schedule is not None
    assert a.schedule[1].processors == (0, 1)
    assert c.schedule[1].processors in ((0, 1), (1, 2))
    assert check_schedule(any_machine, a.schedule) == []
    assert check_schedule(contiguous, c.schedule) == []


def test_weights_change_the_order() -> None:
    # m = 1, both released at 0: p = 3 and p = 1. Unit weights (SPT): the
    # short job first, 1 + 4 = 5. Area weights 3 and 1 give Smith's ratio
    # w/p = 1 for both: 3*3 + 1*4 = 1*1 + 3*4 = 13 either way.
    inst = make(1, [(0, 1, 3), (0, 1, 1)])
    result = solve_exact(inst, WCT)
    assert result.objective == 5
    assert starts(result.schedule) == {1: 1, 2: 0}
    assert solve_exact(inst, Objective("wct", "area")).objective == 13
    heavy = inst.with_jobs([inst.jobs[0].replace(weight=10.0), inst.jobs[1]])
    result = solve_exact(heavy, Objective("wct", "instance"))
    assert result.objective == 34  # 10 * 3 + 4
    assert starts(result.schedule) == {1: 0, 2: 3}


def test_zero_runtime_jobs_run_at_release() -> None:
    inst = make(2, [(4, 2, 0), (0, 2, 3)])
    result = solve_exact(inst, CMAX)
    assert result.objective == 4  # the empty job ends at its release
    assert starts(result.schedule) == {1: 4, 2: 0}
    assert check_schedule(inst, result.schedule) == []


def test_result_fields() -> None:
    result = solve_exact(make(2, [(0, 1, 2), (0, 1, 2)]), "cmax")
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == result.lower_bound == 2
    assert result.gap == 0
    assert result.backend == "enumerate"
    assert result.params["nodes"] >= 1
    assert result.bounds[0].value == 2
    empty = solve_exact(make(2, []), "wct")
    assert empty.objective == 0
    assert empty.schedule is not None and len(empty.schedule) == 0


def test_incumbents_only_prune() -> None:
    # A good incumbent prunes; an impossible one (every job at 0, better than
    # any schedule) costs a second search but never changes the optimum.
    inst = make(2, [(0, 2, 2), (3, 2, 4), (3, 1, 2)])
    plain = solve_exact(inst, WCT)
    assert plain.schedule is not None
    hinted = solve_exact(inst, WCT, incumbents=[plain.schedule])
    assert hinted.objective == plain.objective == 16
    assert hinted.params["nodes"] <= plain.params["nodes"]
    impossible = Schedule({j.id: Placement(0, j.runtime) for j in inst.jobs})
    assert solve_exact(inst, WCT, incumbents=[impossible]).objective == 16


def test_too_many_jobs_is_refused() -> None:
    inst = make(2, [(0, 1, 1)] * 9)
    with pytest.raises(ValueError, match="9 jobs exceed max_jobs=8"):
        solve_exact(inst, CMAX)


def test_normal_patterns() -> None:
    # m = 10, other jobs of sizes 4 and 5: subset sums 0, 4, 5, 9; a block
    # ends at processor 2: bases 0, 2. For a size-3 job offsets must be <= 7.
    inst = make(
        10,
        [(0, 3, 1), (0, 4, 1), (0, 5, 1), (0, 6, 0)],
        allocation="contiguous",
        unavailable=(BusyBlock(0, 1, 2, offset=0),),
    )
    assert normal_patterns(inst, inst.jobs[0]) == [0, 2, 4, 5, 6, 7]


# --------------------------------------------------------------------------
# Property: agrees with the naive search
# --------------------------------------------------------------------------


@st.composite
def tiny_instances(draw: st.DrawFn, max_jobs: int = 4, max_m: int = 4) -> Instance:
    m = draw(st.integers(1, max_m))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    blocks = draw_blocks(draw, m, allocation, most=1, latest=3, longest=3)
    jobs = draw_jobs(
        draw, m, (0, max_jobs), release=3, runtime=3, weights=(0.5, 1.0, 3.0)
    )
    return Instance(Machine(m, allocation, blocks), tuple(jobs))


OBJECTIVES = [
    CMAX,
    WCT,
    Objective("wct", "size"),
    Objective("wct", "area", relative=True),
    Objective("wct", "instance"),
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=tiny_instances(), objective=st.sampled_from(OBJECTIVES))
def test_no_schedule_beats_the_enumeration(
    instance: Instance, objective: Objective
) -> None:
    result = solve_exact(instance, objective)
    assert result.schedule is not None and result.objective is not None
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == objective.value(instance, result.schedule)
    # The naive search finds nothing strictly better (up to rounding) ...
    better = naive_best(instance, objective, cutoff=result.objective - 1e-9)
    assert better is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    instance=tiny_instances(max_jobs=3, max_m=3), objective=st.sampled_from(OBJECTIVES)
)
def test_naive_search_without_cutoff_finds_the_same_optimum(
    instance: Instance, objective: Objective
) -> None:
    expected = solve_exact(instance, objective).objective
    found = naive_best(instance, objective)
    if not instance.jobs:
        assert found == expected == 0
    else:
        assert found == pytest.approx(expected)
