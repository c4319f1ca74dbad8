"""Shelf-restricted optimum: checker predicate, brute force, CP-SAT, bounds."""

from __future__ import annotations

import itertools
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.builders import make, small_instances

from optsched.check import check_schedule, is_shelf_schedule
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io.native import write_native
from optsched.models import RESTRICTIONS, backend_options, solve
from optsched.models.rigid.enumerate import solve_exact
from optsched.models.shelf.enumerate import (
    rule_applies,
    set_partitions,
    smith_order,
    solve_shelf_exact,
)
from optsched.models.shelf.model import (
    FIRST_FIT_ORDERS,
    first_fit_shelves,
    resequenced,
    shelf_bounds,
    shelf_count_bound,
    shelf_height_bound,
    shelf_order_bound,
)
from optsched.objective import Objective
from optsched.result import Incumbent, SolveStatus
from optsched.schedule import Placement, Schedule

CMAX = Objective("cmax")
WCT = Objective("wct")
OBJECTIVES = [
    CMAX,
    WCT,
    Objective("wct", "size"),
    Objective("wct", "area"),
    Objective("wct", "instance"),
    Objective("wct", "one", relative=True),
]


def assert_shelf_feasible(instance: Instance, schedule: Schedule | None) -> None:
    assert schedule is not None
    assert check_schedule(instance, schedule) == []
    assert is_shelf_schedule(instance, schedule) is None


def close(a: float | None, b: float | None) -> bool:
    assert a is not None and b is not None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def shelf_cpsat(instance: Instance, objective: Objective, **kwargs: object):  # type: ignore[no-untyped-def]
    return solve(
        instance, objective, backend="shelf", time_limit=20, workers=1, **kwargs
    )


# --------------------------------------------------------------------------
# The checker's predicate
# --------------------------------------------------------------------------


def test_is_shelf_schedule_accepts_shelves_and_rejects_overlap() -> None:
    instance = make(4, [(0, 1, 5), (0, 2, 3), (0, 1, 2)])
    shelves = Schedule({1: Placement(0, 5), 2: Placement(0, 3), 3: Placement(5, 7)})
    assert is_shelf_schedule(instance, shelves) is None
    # Job 3 starts at 3, inside job 1's run [0, 5): two overlapping shelves.
    packed = Schedule({1: Placement(0, 5), 2: Placement(0, 3), 3: Placement(3, 5)})
    reason = is_shelf_schedule(instance, packed)
    assert reason is not None and "job 3 starts at 3" in reason and "job 1" in reason
    # Idle time between shelves is allowed.
    gap = Schedule({1: Placement(0, 5), 2: Placement(7, 10), 3: Placement(7, 9)})
    assert is_shelf_schedule(instance, gap) is None
    missing = Schedule({1: Placement(0, 5), 2: Placement(0, 3)})
    assert is_shelf_schedule(instance, missing) == "job 3 is not placed"


def test_is_shelf_schedule_zero_length_jobs() -> None:
    instance = make(2, [(0, 1, 4), (0, 1, 0), (0, 1, 0)])
    # A zero-length job at the shelf's end is a shelf of height 0.
    ok = Schedule({1: Placement(0, 4), 2: Placement(4, 4), 3: Placement(0, 0)})
    assert is_shelf_schedule(instance, ok) is None
    # Inside a running shelf it is not.
    inside = Schedule({1: Placement(0, 4), 2: Placement(2, 2), 3: Placement(0, 0)})
    assert is_shelf_schedule(instance, inside) is not None


@given(small_instances(max_jobs=6))
@settings(max_examples=60, deadline=None)
def test_is_shelf_schedule_matches_pairwise_definition(instance: Instance) -> None:
    """The sweep equals "no job starts strictly inside another's run"."""
    from optsched.packing import list_schedule

    if instance.machine.allocation == "contiguous":
        return
    schedule = list_schedule(instance, [j.id for j in instance.jobs])
    pairwise = any(
        schedule[i.id].start < schedule[j.id].start < schedule[i.id].end
        for i in instance.jobs
        for j in instance.jobs
    )
    assert (is_shelf_schedule(instance, schedule) is not None) == pairwise


# --------------------------------------------------------------------------
# Brute force: partitions, Smith's rule, ERD
# --------------------------------------------------------------------------


def test_set_partitions_are_the_bell_numbers() -> None:
    bell = [1, 1, 2, 5, 15, 52, 203, 877, 4140]
    for n, expected in enumerate(bell):
        parts = list(set_partitions(list(range(n))))
        assert len(parts) == expected
        canonical = {tuple(sorted(tuple(sorted(b)) for b in p)) for p in parts}
        assert len(canonical) == expected  # each once
        assert all(sorted(x for b in p for x in b) == list(range(n)) for p in parts)


@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.sampled_from([0, 1, 2, 3, Fraction(1, 2)])),
        min_size=1,
        max_size=6,
    )
)
@settings(max_examples=200, deadline=None)
def test_smith_order_is_optimal_on_one_machine(
    shelves: list[tuple[int, Fraction]],
) -> None:
    """Smith's rule minimises sum W_k S_k over all orders of (h_k, W_k)."""
    shelves = [(h, Fraction(w)) for h, w in shelves]

    def cost(order: tuple[int, ...] | list[int]) -> Fraction:
        t, total = 0, Fraction(0)
        for i in order:
            total += shelves[i][1] * t
            t += shelves[i][0]
        return total

    best = min(cost(p) for p in itertools.permutations(range(len(shelves))))
    assert cost(smith_order(shelves)) == best


def test_shelf_exact_hand_cases() -> None:
    # One long narrow job and three short ones on 2 processors.
    instance = make(2, [(0, 1, 10), (0, 1, 1), (0, 1, 1), (0, 1, 1)])
    cmax = solve_shelf_exact(instance, CMAX)
    wct = solve_shelf_exact(instance, WCT)
    assert cmax.objective == 11  # two shelves: {10, 1} and {1, 1}
    assert solve_exact(instance, CMAX).objective == 10  # unrestricted packs all
    assert wct.objective == 15  # {1, 1} at 0, then {10, 1} at 1: 1+1+2+11
    for result in (cmax, wct):
        assert_shelf_feasible(instance, result.schedule)


def test_shelf_exact_refuses_large_instances_and_bad_options() -> None:
    instance = make(9, [(0, 1, 1)] * 9)
    with pytest.raises(ValueError, match="max_jobs"):
        solve_shelf_exact(instance, CMAX)
    small = make(2, [(1, 1, 1), (0, 1, 1)])
    with pytest.raises(ValueError, match="sequencing"):
        solve_shelf_exact(small, CMAX, sequencing="random")
    with pytest.raises(ValueError, match="releases"):
        solve_shelf_exact(small, WCT, sequencing="rule")


@st.composite
def unblocked(draw: st.DrawFn, max_jobs: int = 6, released: bool = True) -> Instance:
    m = draw(st.integers(1, 5))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    n = draw(st.integers(1, max_jobs))
    jobs = tuple(
        Job(
            k,
            draw(st.integers(0, 6)) if released else 0,
            draw(st.integers(1, m)),
            draw(st.integers(0, 6)),
            weight=draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])),
        )
        for k in range(1, n + 1)
    )
    return Instance(Machine(m, allocation), jobs)


@given(unblocked(max_jobs=6), st.sampled_from(OBJECTIVES))
@settings(max_examples=150, deadline=None)
def test_sequencing_rules_match_all_orders(
    instance: Instance, objective: Objective
) -> None:
    """ERD (cmax) and Smith's rule (wct, releases 0) equal the search over all
    ordered partitions."""
    if objective.kind == "wct":
        instance = instance.with_jobs(j.replace(release=0) for j in instance.jobs)
    assert rule_applies(instance, objective)
    rule = solve_shelf_exact(instance, objective, sequencing="rule")
    every = solve_shelf_exact(instance, objective, sequencing="all")
    assert rule.params["sequencing"] == "rule"
    assert every.params["sequencing"] == "all"
    assert close(rule.objective, every.objective)
    assert_shelf_feasible(instance, rule.schedule)
    assert_shelf_feasible(instance, every.schedule)


@given(small_instances(max_jobs=6), st.sampled_from(OBJECTIVES))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_shelf_optimum_at_least_unrestricted(
    instance: Instance, objective: Objective
) -> None:
    """Shelf optimum >= unrestricted optimum; both checked; the shelf bounds and
    the unrestricted bounds never exceed the shelf optimum."""
    shelf = solve_shelf_exact(instance, objective)
    free = solve_exact(instance, objective)
    assert_shelf_feasible(instance, shelf.schedule)
    assert shelf.objective is not None and free.objective is not None
    assert shelf.objective >= free.objective - 1e-9
    for bound in shelf_bounds(instance, objective):
        assert bound.value <= shelf.objective + 1e-9, bound


# --------------------------------------------------------------------------
# Bounds
# --------------------------------------------------------------------------


def test_shelf_bounds_are_shelf_specific() -> None:
    """On the hand case both bounds are tight and above the unrestricted optimum
    (cmax) or every unrestricted bound (wct)."""
    from optsched.models.rigid.bounds import lower_bounds

    instance = make(2, [(0, 1, 10), (0, 1, 1), (0, 1, 1), (0, 1, 1)])
    assert shelf_height_bound(instance).value == 11
    assert solve_exact(instance, CMAX).objective == 10
    assert shelf_order_bound(instance, WCT).value == 15
    assert max(b.value for b in lower_bounds(instance, WCT)) == 13


def test_shelf_height_bound_uses_releases() -> None:
    # Two jobs released at 5 need two shelves (sizes 2 + 2 > 3) after 5.
    instance = make(3, [(0, 1, 1), (5, 2, 4), (5, 2, 3)])
    assert shelf_height_bound(instance).value == 5 + 4 + 3
    assert solve_shelf_exact(instance, CMAX).objective == 12


def test_shelf_count_bound() -> None:
    assert shelf_count_bound(make(4, [(0, 3, 1), (0, 3, 1), (0, 2, 1)])) == 3
    assert shelf_count_bound(make(4, [(0, 4, 0)])) == 0


@given(small_instances(max_jobs=7), st.sampled_from(OBJECTIVES))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_shelf_bounds_below_shelf_optimum(
    instance: Instance, objective: Objective
) -> None:
    if len(instance.jobs) == 7 and not rule_applies(instance, objective):
        return  # the all-orders search is slow at 7 jobs; 6 is covered above
    shelf = solve_shelf_exact(instance, objective)
    assert shelf.objective is not None
    for bound in shelf_bounds(instance, objective):
        assert bound.value <= shelf.objective + 1e-9, bound
    assert shelf_count_bound(instance) <= len(
        {p.start for j, p in shelf.schedule.placements.items()}  # type: ignore[union-attr]
    )


# --------------------------------------------------------------------------
# CP-SAT shelf back-end against the brute force
# --------------------------------------------------------------------------


@given(small_instances(max_jobs=6), st.sampled_from(OBJECTIVES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_cpsat_shelf_matches_brute_force(
    instance: Instance, objective: Objective
) -> None:
    """Both allocations, releases, busy blocks, zero-length jobs, every weight
    rule: the CP-SAT shelf optimum equals the brute force and is checked."""
    result = shelf_cpsat(instance, objective)
    exact = solve_shelf_exact(instance, objective)
    assert result.status is SolveStatus.OPTIMAL, result
    assert close(result.objective, exact.objective)
    assert_shelf_feasible(instance, result.schedule)
    assert result.lower_bound is not None and result.objective is not None
    assert result.lower_bound <= result.objective + 1e-9
    assert result.params["restriction"] == RESTRICTIONS["shelf"]


@given(unblocked(max_jobs=8), st.sampled_from([CMAX, WCT, Objective("wct", "area")]))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_cpsat_shelf_matches_brute_force_eight_jobs(
    instance: Instance, objective: Objective
) -> None:
    """Up to 8 jobs (releases for cmax, none for wct so the rule applies)."""
    if objective.kind == "wct":
        instance = instance.with_jobs(j.replace(release=0) for j in instance.jobs)
    result = shelf_cpsat(instance, objective)
    exact = solve_shelf_exact(instance, objective)
    assert result.status is SolveStatus.OPTIMAL
    assert close(result.objective, exact.objective)
    assert_shelf_feasible(instance, result.schedule)
    free = solve_exact(instance, objective)
    assert free.objective is not None and result.objective is not None
    assert result.objective >= free.objective - 1e-9


@given(unblocked(max_jobs=6), st.sampled_from([CMAX, WCT]))
@settings(max_examples=30, deadline=None)
def test_contiguous_equals_any_without_blocks(
    instance: Instance, objective: Objective
) -> None:
    """Without busy blocks a shelf that fits m fits left to right."""
    other = "any" if instance.machine.allocation == "contiguous" else "contiguous"
    twin = instance.replace(machine=instance.machine.with_allocation(other))
    a = solve_shelf_exact(instance, objective)
    b = solve_shelf_exact(twin, objective)
    assert close(a.objective, b.objective)


def test_contiguous_blocks_force_offsets() -> None:
    """A block pinned in the middle: two jobs of 2 fit beside it only at the
    edges; a job of 3 cannot run until the block ends."""
    machine = Machine(5, "contiguous", (BusyBlock(0, 4, 1, 2),))
    instance = Instance(machine, (Job(1, 0, 2, 3), Job(2, 0, 2, 3), Job(3, 0, 3, 1)))
    result = shelf_cpsat(instance, CMAX)
    exact = solve_shelf_exact(instance, CMAX)
    assert result.objective == exact.objective == 5  # {1, 2} at 0, {3} at 4
    assert result.params["offsets_modelled"] is True
    assert_shelf_feasible(instance, result.schedule)
    anywhere = instance.replace(machine=machine.with_allocation("any"))
    # On an any machine the block is a count of 1: job 3 runs at 3 (3 + 1 <= 5).
    assert solve_shelf_exact(anywhere, CMAX).objective == 4
    assert shelf_cpsat(anywhere, CMAX).objective == 4


# --------------------------------------------------------------------------
# Incumbents, registry, limits
# --------------------------------------------------------------------------


def test_incumbents_shelf_used_non_shelf_rejected() -> None:
    # The back-end's own shelf schedules reach 47 here, the shelf optimum is
    # 46 and the unrestricted one 44.
    instance = make(3, [(0, 1, 3), (0, 2, 6), (0, 2, 5), (0, 2, 2), (0, 3, 6)])
    optimal = solve_shelf_exact(instance, WCT).schedule
    assert optimal is not None and WCT.value(instance, optimal) == 46
    packed = solve_exact(instance, WCT).schedule  # unrestricted optimum
    assert packed is not None and is_shelf_schedule(instance, packed) is not None
    result = solve(
        instance,
        WCT,
        backend="shelf",
        time_limit=0,
        incumbents=[Incumbent("user:packed", packed), Incumbent("user:best", optimal)],
    )
    assert result.params["hint_source"] == "user:best"
    assert result.objective == 46
    assert result.upper_bound_source == "user:best"
    assert any(
        r.startswith("user:packed: not a shelf schedule: job ") for r in result.rejected
    ), result.rejected
    assert_shelf_feasible(instance, result.schedule)


def test_infeasible_incumbent_rejected_by_the_checker() -> None:
    instance = make(2, [(0, 2, 3), (0, 2, 3)])
    clash = Schedule({1: Placement(0, 3, (0, 1)), 2: Placement(0, 3, (0, 1))})
    result = solve(
        instance, CMAX, backend="shelf", incumbents=[Incumbent("bad", clash)]
    )
    assert result.objective == 6
    assert any(r.startswith("bad: ") for r in result.rejected)


def test_registry_and_options() -> None:
    assert "log" in backend_options("shelf")
    with pytest.raises(ValueError, match="takes no option 'grid'"):
        solve(make(1, [(0, 1, 1)]), CMAX, backend="shelf", grid=3)


def test_empty_instance() -> None:
    result = solve(Instance(Machine(4), ()), WCT, backend="shelf")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 0
    assert result.params["restriction"] == "shelves"


@pytest.mark.parametrize("order", FIRST_FIT_ORDERS)
@pytest.mark.parametrize("objective", [CMAX, WCT])
def test_first_fit_shelves_are_feasible(order: str, objective: Objective) -> None:
    rng = random.Random(7)
    for _ in range(20):
        m = rng.randint(1, 8)
        allocation = rng.choice(["any", "contiguous"])
        blocks = (
            (BusyBlock(2, 6, 1, 0 if allocation == "contiguous" else None),)
            if rng.random() < 0.5
            else ()
        )
        jobs = tuple(
            Job(k, rng.randint(0, 5), rng.randint(1, m), rng.randint(0, 6))
            for k in range(1, rng.randint(1, 12))
        )
        instance = Instance(Machine(m, allocation, blocks), jobs)
        assert_shelf_feasible(instance, first_fit_shelves(instance, objective, order))


def test_time_limit_zero_still_gives_a_shelf_schedule() -> None:
    rng = random.Random(3)
    jobs = tuple(
        Job(k, 0, rng.randint(4, 128), rng.randint(20, 400)) for k in range(1, 21)
    )
    instance = Instance(Machine(128), jobs)
    result = solve(instance, CMAX, backend="shelf", time_limit=0)
    assert result.status in (SolveStatus.FEASIBLE, SolveStatus.OPTIMAL)
    assert_shelf_feasible(instance, result.schedule)
    assert result.lower_bound is not None and result.objective is not None
    assert result.lower_bound <= result.objective


# --------------------------------------------------------------------------
# optsched bound --shelves
# --------------------------------------------------------------------------


def test_cli_bound_shelves_writes_the_restricted_record(tmp_path: Path) -> None:
    path = tmp_path / "shelf.json"
    instance = make(2, [(0, 1, 10), (0, 1, 1), (0, 1, 1), (0, 1, 1)])
    write_native(instance.replace(name="shelf-case"), path)
    records = {}
    for flag in ("--shelves", None):
        out = tmp_path / f"{flag}.json"
        args = ["bound", str(path), "--time-limit", "10", "-o", str(out)]
        result = CliRunner().invoke(main, args + ([flag] if flag else []))
        assert result.exit_code == 0, result.output
        records[flag] = json.loads(out.read_text())
        if flag:
            assert "restriction       shelves" in result.stdout
            assert "best upper bound  11" in result.stdout
            assert "shelf-heights" in result.stdout
    shelf, plain = records["--shelves"], records[None]
    assert shelf.keys() == plain.keys()
    assert (shelf["backend"], shelf["restriction"]) == ("shelf", "shelves")
    assert plain["restriction"] is None
    assert shelf["status"] == "OPTIMAL"
    assert shelf["objective_value"] == shelf["lower_bound"] == 11
    assert plain["objective_value"] == plain["lower_bound"] == 10
    same = CliRunner().invoke(main, ["bound", str(path), "--backend", "shelf"])
    assert same.exit_code == 0 and "restriction       shelves" in same.stdout
    clash = CliRunner().invoke(
        main, ["bound", str(path), "--shelves", "--backend", "milp"]
    )
    assert clash.exit_code == 2 and "--shelves" in clash.output


@st.composite
def twins(draw: st.DrawFn) -> Instance:
    """Instances drawn from three job types, so identical jobs abound."""
    m = draw(st.integers(1, 5))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    kinds = [
        (draw(st.integers(0, 3)), draw(st.integers(1, m)), draw(st.integers(0, 4)))
        for _ in range(3)
    ]
    picks = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=7))
    blocks: tuple[BusyBlock, ...] = ()
    if draw(st.booleans()):
        blocks = (BusyBlock(1, 3, 1, 0 if allocation == "contiguous" else None),)
    jobs = tuple(Job(k, r, q, p) for k, (r, q, p) in enumerate(picks, start=1))
    return Instance(Machine(m, allocation, blocks), jobs)


@given(
    twins(), st.sampled_from([CMAX, WCT]), st.sampled_from(["representatives", "chain"])
)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hint_satisfies_every_constraint(
    instance: Instance, objective: Objective, formulation: str
) -> None:
    """With the variables fixed to the hint (the relabelled best incumbent,
    here the brute-force optimum with identical jobs shuffled), the model
    stays feasible: the hint meets the symmetry breaking and the other rows."""
    exact = solve_shelf_exact(instance, objective, sequencing="all")
    assert exact.schedule is not None
    placements = dict(exact.schedule.placements)
    by_kind: dict[tuple[int, int, int], list[int]] = {}
    for job in instance.jobs:
        by_kind.setdefault((job.release, job.size, job.runtime), []).append(job.id)
    shuffled = dict(placements)
    for same in by_kind.values():
        for a, b in zip(same, reversed(same), strict=True):
            shuffled[a] = placements[b]  # identical jobs swap places
    result = solve(
        instance,
        objective,
        backend="shelf",
        workers=1,
        time_limit=20,
        formulation=formulation,
        incumbents=[Incumbent("exact", Schedule(shuffled))],
        parameters={"fix_variables_to_their_hinted_value": True},
    )
    assert result.error is None, result.error
    assert result.params["cpsat_status"] in ("OPTIMAL", "FEASIBLE")
    assert close(result.objective, exact.objective)


@given(unblocked(max_jobs=8), st.sampled_from([CMAX, WCT, Objective("wct", "size")]))
@settings(max_examples=80, deadline=None)
def test_resequenced_never_worse_and_settled(
    instance: Instance, objective: Objective
) -> None:
    """Resequencing (and, without releases, moving jobs into earlier shelves)
    keeps a shelf schedule, never costs more, and leaves no job that fits an
    earlier, tall enough shelf (the dominance rule of the wct model)."""
    if objective.kind == "wct":
        instance = instance.with_jobs(j.replace(release=0) for j in instance.jobs)
    starts = [first_fit_shelves(instance, objective, o) for o in FIRST_FIT_ORDERS]
    # One job per shelf, in id order: many jobs can move to earlier shelves.
    ready, alone = 0, {}
    for job in instance.jobs:
        ready = max(ready, job.release)
        alone[job.id] = Placement(ready, ready + job.runtime)
        ready += job.runtime
    starts.append(Schedule(alone))
    for start in starts:
        better = resequenced(instance, objective, start)
        assert better is not None
        assert_shelf_feasible(instance, better)
        assert objective.value(instance, better) <= objective.value(instance, start)
        if any(j.release for j in instance.jobs):
            continue
        groups: dict[int, list[Job]] = {}
        for job in instance.jobs:
            groups.setdefault(better[job.id].start, []).append(job)
        shelves = [groups[t] for t in sorted(groups)]
        for b, shelf in enumerate(shelves):
            for job in (j for j in shelf if j.runtime > 0):
                for earlier in shelves[:b]:
                    height = max(j.runtime for j in earlier)
                    load = sum(j.size for j in earlier if j.runtime > 0)
                    assert height < job.runtime or load + job.size > instance.processors


def test_resequenced_refuses_busy_blocks() -> None:
    machine = Machine(2, "any", (BusyBlock(0, 2, 1),))
    instance = Instance(machine, (Job(1, 0, 1, 1),))
    schedule = first_fit_shelves(instance, CMAX, "release")
    assert resequenced(instance, CMAX, schedule) is None


SHELF_ALGORITHMS = (
    "nfdh",
    "ffdh",
    "nfih",
    "ffih",
    "smart:order=size",
    "smart:order=smith",
)


@given(unblocked(max_jobs=7, released=False), st.sampled_from([CMAX, WCT]))
@settings(max_examples=40, deadline=None)
def test_shelf_algorithms_are_shelf_schedules_above_the_shelf_optimum(
    instance: Instance, objective: Objective
) -> None:
    """The level algorithms of optsched.heuristics.shelf.algorithms build shelf
    schedules (the stacked variants do not), none beats the shelf optimum,
    and handed over as incumbents they are accepted."""
    shelves = pytest.importorskip("optsched.heuristics.shelf.algorithms")
    best = solve_shelf_exact(instance, objective).objective
    assert best is not None
    incumbents = []
    for algorithm in SHELF_ALGORITHMS:
        schedule = shelves.shelf_schedule(instance, algorithm, estimate=False)
        assert_shelf_feasible(instance, schedule)
        assert objective.value(instance, schedule) >= best - 1e-9
        incumbents.append(Incumbent(f"shelf:{algorithm}", schedule))
    result = shelf_cpsat(instance, objective, incumbents=incumbents)
    assert not any("not a shelf schedule" in r for r in result.rejected)
    assert close(result.objective, best)


def test_float_noise_in_the_solver_bound_does_not_lose_a_proof() -> None:
    """CP-SAT adds the objective's constant (sum w_j p_j = 61 here) in floating
    point and reported the optimum 91 as 90.99999999999999; cutting it with
    int() left the proven optimum unproven, [90, 91] (a failing example of
    the brute-force property above)."""
    instance = make(3, [(0, 2, 3), (0, 1, 5), (0, 2, 3)])
    instance = instance.with_jobs(j.replace(weight=0.5) for j in instance.jobs)
    result = shelf_cpsat(instance, Objective("wct", "area"))
    assert (result.status, result.objective, result.lower_bound) == (
        SolveStatus.OPTIMAL, 91, 91,
    )  # fmt: skip
    assert (
        result.objective
        == solve_shelf_exact(instance, Objective("wct", "area")).objective
    )
