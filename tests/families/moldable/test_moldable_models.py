"""Moldable optimum (CP-SAT) and moldable lower bounds against brute force.

The brute force: the moldable optimum is the least, over every choice of
one mode per job, of the rigid optimum of the instance fixed to those modes
(each solved exactly by the rigid CP-SAT back-end). Weights are frozen
first (``Objective.weighted``): a ``size`` weight is the *requested* size,
whatever mode a schedule picks.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from random import Random

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.io.native import write_native
from optsched.models import Incumbent, Result, SolveStatus, solve
from optsched.models.moldable.bounds import job_modes, moldable_lower_bounds
from optsched.models.moldable.model import greedy_schedule, undominated
from optsched.models.rigid import cpsat
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.objective import Objective
from optsched.packing import assign_processors
from optsched.schedule import Piece, Placement, Schedule

OBJECTIVES = ("cmax", "wct", "wct:size", "wct:instance:relative")


def rigid_optimum(instance: Instance, objective: Objective) -> float:
    result = solve(instance, objective, backend="cpsat", workers=1, time_limit=30)
    assert result.objective is not None and result.lower_bound is not None
    # Weights are multiples of 0.5, so are objectives: a bound above the
    # objective minus 0.5 proves it. (The rigid back-end scales weights of
    # 0.5 with rounding and may prove only 4.99999 of 5.)
    assert result.status is SolveStatus.OPTIMAL or (
        result.lower_bound > result.objective - 0.5
    )
    return result.objective


def brute_force(instance: Instance, objective: Objective | str) -> float:
    """``min`` over mode choices of the rigid optimum (weights frozen)."""
    objective = Objective.parse(objective)
    if objective.kind == "wct":
        instance = objective.weighted(instance)
        objective = Objective("wct", "instance", objective.relative)
    best = math.inf
    for choice in itertools.product(*(job_modes(j) for j in instance.jobs)):
        fixed = instance.with_jobs(
            j.rigid(mode) for j, mode in zip(instance.jobs, choice, strict=True)
        )
        best = min(best, rigid_optimum(fixed, objective))
    return best


def moldable_optimum(instance: Instance, objective: str) -> float:
    result = solve(instance, objective, backend="cpsat", workers=1, time_limit=30)
    assert result.backend == "cpsat"
    assert result.status is SolveStatus.OPTIMAL, result
    assert check_schedule(instance, result.schedule) == []
    # The objective is recomputed from the schedule, not read from CP-SAT.
    assert result.objective == Objective.parse(objective).value(
        instance, result.schedule
    )
    assert result.objective is not None
    return result.objective


def linear_modes(base: int, counts: list[int], extras: list[int]) -> tuple[Mode, ...]:
    """Modes ``ceil(base / p) + extra``; the extras are dropped when they
    would make work fall beyond rounding (the validator's rule)."""
    modes = tuple(
        Mode(p, -(-base // p) + e) for p, e in zip(counts, extras, strict=True)
    )
    try:
        Job(0, 0, modes[0].processors, modes[0].runtime, modes=modes)
    except ValueError:
        return tuple(Mode(p, -(-base // p)) for p in counts)
    return modes


@st.composite
def moldable_instances(draw: st.DrawFn, malleable: bool = False) -> Instance:
    """Up to 3 jobs of up to 3 modes on up to 4 processors, releases, weights,
    both allocations and at most one busy block."""
    m = draw(st.integers(2, 4))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    blocks: tuple[BusyBlock, ...] = ()
    if draw(st.booleans()):
        start, size = draw(st.integers(0, 4)), draw(st.integers(1, m - 1))
        offset = draw(st.integers(0, m - size)) if allocation == "contiguous" else None
        blocks = (BusyBlock(start, start + draw(st.integers(1, 4)), size, offset),)
    jobs = []
    for k in range(1, draw(st.integers(1, 3)) + 1):
        counts = sorted(
            draw(st.sets(st.integers(1, m), min_size=1, max_size=3)), reverse=False
        )
        extras = [draw(st.integers(0, 2)) for _ in counts]
        modes = linear_modes(draw(st.integers(0, 8)), counts, extras)
        requested = draw(st.sampled_from(modes))
        jobs.append(
            Job(
                k,
                draw(st.integers(0, 4)),
                requested.processors,
                requested.runtime,
                weight=draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])),
                modes=modes,
                malleable=malleable and draw(st.booleans()),
            )
        )
    return Instance(Machine(m, allocation, blocks), tuple(jobs))


# --------------------------------------------------------------------------
# Hand-checked golden case
# --------------------------------------------------------------------------


def two_wide_jobs(malleable: bool = False) -> Instance:
    """Two jobs of 8 s on 1 processor or 2 s on 4, requesting 1 processor."""
    modes = (Mode(1, 8), Mode(4, 2))
    return Instance(
        Machine(4),
        tuple(Job(k, 0, 1, 8, modes=modes, malleable=malleable) for k in (1, 2)),
    )


def test_golden_wider_mode_halves_the_makespan() -> None:
    instance = two_wide_jobs()
    # Requested modes: both jobs side by side on one processor each, 8 s.
    assert brute_force(instance.rigid(), "cmax") == 8
    result = solve(instance, "cmax", backend="cpsat", workers=1, time_limit=30)
    # Moldable: both on 4 processors, one after the other: 2 + 2 = 4.
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == 4
    assert result.lower_bound == 4  # area: (8 + 8) / 4
    assert check_schedule(instance, result.schedule) == []
    placements = sorted(result.schedule.placements.values(), key=lambda p: p.start)
    assert [(p.start, p.end, len(p.processors or ())) for p in placements] == [
        (0, 2, 4),
        (2, 4, 4),
    ]
    assert brute_force(instance, "cmax") == 4


def test_golden_weighted_completion() -> None:
    instance = two_wide_jobs()
    # Wide then wide: C = 2 and 4, sum 6 (narrow + narrow: 8 + 8 = 16;
    # wide and narrow cannot overlap: 2 + 10 = 12).
    assert moldable_optimum(instance, "wct") == 6
    bounds = {b.method: b.value for b in moldable_lower_bounds(instance, "wct")[0]}
    # Height: 2 + 2. Fluid: works 8 and 8 at rate 4, mean busy times 1 and 3,
    # plus half the shortest run (1 each): 2 + 4 = 6.
    assert bounds == {"height": 4, "squashed-area": 6, "fluid": 6}


def test_golden_bounds_for_makespan() -> None:
    bounds = {
        b.method: b.value for b in moldable_lower_bounds(two_wide_jobs(), "cmax")[0]
    }
    assert bounds == {"release": 2, "area": 4, "energy": 4}


def test_golden_malleable_is_scheduled_as_moldable() -> None:
    instance = two_wide_jobs(malleable=True)
    result = solve(instance, "wct", backend="cpsat", workers=1, time_limit=30)
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == 6
    # The solver's bound bounds the moldable restriction only: kept aside.
    assert result.params["restriction"] == "moldable"
    assert result.params["moldable_bound"] == 6
    assert all(b.method != "cpsat" for b in result.bounds)
    # Fluid bound for malleable jobs: half terms W / (2 P) = 8 / 8 = 1 each,
    # so 6 again: the moldable schedule is optimal for the malleable problem.
    assert result.lower_bound == 6
    assert result.status is SolveStatus.OPTIMAL


def cpsat_cmax_from(instance: Instance, name: str, schedule: Schedule) -> Result:
    """CP-SAT's makespan solve of ``instance`` given ``schedule`` as the
    incumbent ``name``."""
    return solve(
        instance, "cmax", backend="cpsat", workers=1, time_limit=30,
        incumbents=[Incumbent(name, schedule)],
    )  # fmt: skip


def one_malleable_beside_a_block() -> Instance:
    """A malleable job released at 0, 7 s on 1 processor or 4 s on 2, on 2
    processors of which one is busy during [0, 2)."""
    modes = (Mode(1, 7), Mode(2, 4))
    return Instance(
        Machine(2, unavailable=(BusyBlock(0, 2, 1),)),
        (Job(1, 0, 1, 7, modes=modes, malleable=True),),
    )


def test_malleable_status_is_feasible_without_a_closed_form_proof() -> None:
    # Alone, a 7 s job (1 processor) or 4 s (2 processors) released at 0
    # beside a block of 1 processor during [0, 2) on 2 processors: the best
    # moldable choice ends at 6 (2 + 4) or 7; the malleable job may run on
    # 1 processor first. Closed-form bounds stay below the moldable optimum.
    instance = one_malleable_beside_a_block()
    result = solve(instance, "cmax", backend="cpsat", workers=1, time_limit=30)
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == 6
    assert result.params["moldable_bound"] == 6
    # Malleable: release bound r + T_min = 4; area: 7 units, 1 free until 2,
    # then 2: 2 + ceil(5 / 2) = 5. On 1 processor for [0, 2) (2/7 done) and
    # on 2 from 2 (5/7 of 4 s = 20/7 s): done at 4.86, so 5 is attainable.
    assert result.lower_bound == 5
    assert result.status is SolveStatus.FEASIBLE


def test_a_malleable_schedule_meets_the_closed_form_bound() -> None:
    # The schedule the comment above describes, built by hand: 1 processor
    # during [0, 2) (2/7 of the job), both from 2 (5/7 of 4 s = 20/7 s, so
    # the job completes at 4.86, within the second [4, 5)).
    instance = one_malleable_beside_a_block()
    pieces = (Piece(0, 2, (1,)), Piece(2, 5, (0, 1)))
    schedule = Schedule({1: Placement.of_pieces(pieces)}, "hand")
    assert check_schedule(instance, schedule) == []
    assert max(b.value for b in lower_bounds_within(instance, "cmax", None)[0]) == 5
    # As an incumbent it is a malleable schedule: kept, and it meets the bound.
    result = cpsat_cmax_from(instance, "hand", schedule)
    assert result.rejected == ()
    assert result.upper_bound_source == "hand"
    assert (result.objective, result.lower_bound) == (5, 5)
    assert result.status is SolveStatus.OPTIMAL
    only = solve(instance, "cmax", backend="bounds-only", hint=schedule)
    assert (only.objective, only.status, only.rejected) == (5, SolveStatus.OPTIMAL, ())
    # Run too slowly (the second piece on 1 processor) it is rejected.
    slow = Schedule({1: Placement.of_pieces((Piece(0, 2, (1,)), Piece(3, 5, (0,))))})
    result = cpsat_cmax_from(instance, "slow", slow)
    (reason,) = result.rejected
    assert reason.startswith("slow: ") and "job 1" in reason
    assert result.objective == 6


def test_energy_is_no_bound_at_a_start_no_mode_needs() -> None:
    # The 2-processor mode can start only at 2 (a block holds processor 0
    # during [0, 2)), but the 1-processor mode runs at once and ends at 1:
    # the instant 2 leaves no work, and the makespan is 1.
    modes = (Mode(1, 1), Mode(2, 1))
    instance = Instance(
        Machine(2, "contiguous", (BusyBlock(0, 2, 1, 0),)),
        (Job(1, 0, 1, 1, modes=modes),),
    )
    bounds = {b.method: b.value for b in moldable_lower_bounds(instance, "cmax")[0]}
    assert bounds == {"release": 1, "area": 1, "energy": 1}
    assert moldable_optimum(instance, "cmax") == 1


# --------------------------------------------------------------------------
# Brute force
# --------------------------------------------------------------------------


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_optimum_with_releases_and_a_busy_block(objective: str) -> None:
    modes_a = (Mode(1, 6), Mode(2, 3), Mode(3, 2))
    modes_b = (Mode(1, 4), Mode(2, 2))
    instance = Instance(
        Machine(3, unavailable=(BusyBlock(1, 3, 2),)),
        (
            Job(1, 0, 1, 6, weight=2.0, modes=modes_a),
            Job(2, 1, 2, 2, modes=modes_b),
            Job(3, 2, 3, 2, weight=3.0, modes=modes_a),
        ),
    )
    expected = brute_force(instance, objective)
    assert moldable_optimum(instance, objective) == expected
    for bound in lower_bounds_within(instance, objective, None)[0]:
        assert bound.value <= expected, bound


@pytest.mark.parametrize("objective", ["cmax", "wct:size"])
def test_optimum_on_a_contiguous_machine(objective: str) -> None:
    modes = (Mode(1, 4), Mode(2, 2), Mode(4, 1))
    instance = Instance(
        Machine(4, "contiguous", (BusyBlock(0, 2, 1, 1),)),
        tuple(Job(k, k - 1, 1, 4, modes=modes) for k in (1, 2, 3)),
    )
    expected = brute_force(instance, objective)
    assert moldable_optimum(instance, objective) == expected


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(moldable_instances(), st.sampled_from(OBJECTIVES))
def test_optimum_and_bounds_against_brute_force(
    instance: Instance, objective: str
) -> None:
    expected = brute_force(instance, objective)
    assert moldable_optimum(instance, objective) == expected
    bounds, notes = lower_bounds_within(instance, objective, None)
    assert notes == []
    for bound in bounds:
        assert bound.value <= expected, bound


@settings(max_examples=25, deadline=None)
@given(moldable_instances(malleable=True), st.sampled_from(OBJECTIVES))
def test_malleable_results_are_checked_and_bounded(
    instance: Instance, objective: str
) -> None:
    result = solve(instance, objective, backend="cpsat", workers=1, time_limit=30)
    assert check_schedule(instance, result.schedule) == []
    assert result.lower_bound is not None and result.objective is not None
    assert result.lower_bound <= result.objective
    if instance.malleable:
        assert all(b.method != "cpsat" for b in result.bounds)
        assert result.params["moldable_bound"] <= result.objective


# --------------------------------------------------------------------------
# Incumbents, bounds-only and refusals
# --------------------------------------------------------------------------


def test_a_wide_incumbent_is_used_as_hint_and_bound() -> None:
    instance = two_wide_jobs()
    wide = instance.with_jobs(j.rigid(Mode(4, 2)) for j in instance.jobs)
    hint = assign_processors(wide, {1: 0, 2: 2})
    result = cpsat_cmax_from(instance, "hint", hint)
    assert result.rejected == ()
    assert result.objective == 4
    assert result.upper_bound_source == "hint"


def test_an_incumbent_outside_the_modes_is_rejected() -> None:
    instance = two_wide_jobs()
    bad = assign_processors(
        instance.with_jobs(j.rigid(Mode(2, 4)) for j in instance.jobs), {1: 0, 2: 0}
    )
    result = cpsat_cmax_from(instance, "bad", Schedule(bad.placements, "bad"))
    assert len(result.rejected) == 1 and result.rejected[0].startswith("bad:")
    assert result.objective == 4


@pytest.mark.parametrize("objective", ["cmax", "wct"])
def test_bounds_only_gives_moldable_bounds_and_a_valid_schedule(objective: str) -> None:
    instance = two_wide_jobs()
    result = solve(instance, objective, backend="bounds-only")
    assert check_schedule(instance, result.schedule) == []
    # The greedy moldable list schedule (both wide, one after the other)
    # meets the bounds; the list schedule on requested modes is 8 (16).
    assert result.upper_bound_source == "list:moldable-submit"
    assert result.objective == {"cmax": 4, "wct": 6}[objective]
    assert result.lower_bound == {"cmax": 4, "wct": 6}[objective]
    assert result.status is SolveStatus.OPTIMAL


def test_greedy_picks_the_mode_that_completes_first() -> None:
    schedule = greedy_schedule(two_wide_jobs(), [1, 2])
    # Job 1: 8 s on 1 processor or 2 s on 4: wide, [0, 2). Job 2: narrow
    # from 2 ends at 10, wide from 2 at 4: wide.
    placements = [schedule[1], schedule[2]]
    assert [(p.start, p.end, len(p.processors or ())) for p in placements] == [
        (0, 2, 4),
        (2, 4, 4),
    ]


@settings(max_examples=50, deadline=None)
@given(moldable_instances(), st.randoms(use_true_random=False))
def test_greedy_schedules_pass_the_checker(instance: Instance, rng: Random) -> None:
    order = [j.id for j in instance.jobs]
    rng.shuffle(order)
    assert check_schedule(instance, greedy_schedule(instance, order)) == []


def test_the_preemptive_back_end_gives_moldable_bounds_only() -> None:
    # Work 8 each, 16 in all on 4 processors: no schedule, preemptive or
    # not, ends before 4 (reached: each job on 4 processors in turn, which
    # also gives sum C_j = 2 + 4 = 6, the squashed-area bound: works 8 and
    # 8 served at rate 4 end at 2 and 4). Preemption cannot beat either.
    result = solve(two_wide_jobs(), "cmax", backend="preemptive", workers=1)
    assert (result.status, result.schedule, result.lower_bound) == (
        SolveStatus.BOUNDED,
        None,
        4,
    )
    wct = solve(two_wide_jobs(), "wct", backend="preemptive", workers=1)
    assert (wct.status, wct.lower_bound) == (SolveStatus.BOUNDED, 6)


@pytest.mark.parametrize("backend", ["milp", "shelf"])
def test_rigid_back_ends_refuse_moldable_instances(backend: str) -> None:
    with pytest.raises(ValueError, match=r"schedules rigid jobs only") as error:
        solve(two_wide_jobs(), "cmax", backend=backend, workers=1, time_limit=5)
    assert str(error.value) == (
        f"back-end {backend} schedules rigid jobs only; the instance has 2 "
        "moldable jobs: use cpsat or bounds-only"
    )


def test_rigid_instances_keep_the_rigid_bounds() -> None:
    instance = two_wide_jobs().rigid()
    methods = [b.method for b in lower_bounds_within(instance, "cmax", None)[0]]
    assert "dff" in methods  # the rigid table, not the moldable one


# --------------------------------------------------------------------------
# Command line and determinism
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "objective", "lower"), [("bounds-only", 4, 4), ("cpsat", 4, 4)]
)
def test_bound_command_uses_the_moldable_bounds(
    tmp_path: Path, backend: str, objective: int, lower: int
) -> None:
    path, out = tmp_path / "two.json", tmp_path / "r.json"
    write_native(two_wide_jobs(), path)
    result = CliRunner().invoke(
        main,
        ["bound", str(path), "--backend", backend, "--workers", "1", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    assert (record["objective_value"], record["lower_bound"]) == (objective, lower)


def test_deterministic_searches_repeat() -> None:
    instance = Instance(
        Machine(4),
        tuple(
            Job(k, k % 3, 1, 6, modes=(Mode(1, 6), Mode(2, 3), Mode(4, 2)))
            for k in range(1, 7)
        ),
    )
    with cpsat.deterministic(0.5):
        first, second = (
            solve(instance, "wct", backend="cpsat", workers=1) for _ in range(2)
        )
    assert dict(first.schedule.placements) == dict(second.schedule.placements)
    assert check_schedule(instance, first.schedule) == []


def test_dominated_modes_are_left_out_and_their_hints_mapped() -> None:
    modes = (Mode(1, 6), Mode(2, 3), Mode(3, 3), Mode(4, 2))
    assert undominated(modes) == (Mode(1, 6), Mode(2, 3), Mode(4, 2))
    # A hint on 3 processors (dominated by 2 processors, as fast; makespan
    # 6) is kept as an incumbent; the optimum runs both jobs side by side on
    # 2 processors each: 3 (one after the other on 4: 2 + 2 = 4).
    instance = Instance(Machine(4), tuple(Job(k, 0, 3, 3, modes=modes) for k in (1, 2)))
    fixed = instance.with_jobs(j.rigid(Mode(3, 3)) for j in instance.jobs)
    hint = assign_processors(fixed, {1: 0, 2: 3})
    result = cpsat_cmax_from(instance, "hint", hint)
    assert result.rejected == ()
    assert (result.objective, result.status) == (3, SolveStatus.OPTIMAL)
    assert brute_force(instance, "cmax") == 3
