"""Exact CP-SAT models and bounds under site calendars and chains (issue 13).

Golden optima checked by hand, an independent brute force over all integer
start times on tiny instances with random calendars, queues and chains, and
the bounds (those of ``lower_bounds_within`` and of
:mod:`optsched.models.site.bounds`) against it.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.calendar import HOLIDAY, Calendar, Period
from optsched.check import check_schedule
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models import solve
from optsched.models.common.solution import assign_processors
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.models.site.bounds import (
    batch_area_bound,
    sequential_queue_bound,
    site_lower_bounds,
    site_released,
    wide_jobs_window_bound,
)
from optsched.models.site.greedy import site_list_schedule
from optsched.objective import Objective
from optsched.result import Incumbent, Result, SolveStatus
from optsched.schedule import Schedule

ALL_DAYS = (*range(7), HOLIDAY)
EXAMPLES = int(os.environ.get("SITE_EXAMPLES", 300))
"""Hypothesis examples of the brute-force comparison (``SITE_EXAMPLES`` to
search longer)."""


def _calendar(
    pieces: Sequence[tuple[int, int, int | None, int | None]],
    sequential: Sequence[int] = (),
    anytime: Sequence[int] = (),
) -> Calendar:
    """Every day the same ``(start, end, capacity, max size)`` periods (s)."""
    return Calendar(
        tuple(Period(ALL_DAYS, a, b, c, s) for a, b, c, s in pieces),
        sequential_queues=frozenset(sequential),
        anytime_queues=frozenset(anytime),
    )


# -- an independent judge and brute force -----------------------------------------
def feasible(
    instance: Instance, starts: dict[int, int], *, profile: bool = False
) -> bool:
    """The site rules read from the issue, written apart from the checker.

    Releases; the machine (jobs and blocks within ``m`` at every start);
    chains (successor after predecessor's end plus think time); sequential
    queues (a job never starts while another of its queue runs, nor does
    one start while it runs); and at every start ``t`` of a job outside the
    anytime queues: its size at most the largest allowed at ``t``, and
    (positive length) the processors held at ``t`` by batch jobs and blocks,
    itself included, at most the capacity at ``t`` (a 0 s job: its own size).
    ``profile=True`` reads the capacity as a cumulative profile instead (the
    batch load at *every* instant within the capacity), for contrast.
    """
    machine = instance.machine
    m = machine.processors
    cal = machine.calendar
    jobs = instance.jobs
    ends = {j.id: starts[j.id] + j.runtime for j in jobs}
    by_id = {j.id: j for j in jobs}
    if any(starts[j.id] < j.release for j in jobs):
        return False
    for j in jobs:
        if j.preceding_job in by_id and j.preceding_job != j.id:
            think = max(0, j.think_time or 0)
            if starts[j.id] < ends[j.preceding_job] + think:
                return False
    items = [(starts[j.id], ends[j.id], j.size) for j in jobs if j.runtime > 0]
    items += [(b.start, b.end, b.size) for b in machine.unavailable if b.end > b.start]
    for t in {a for a, _, _ in items}:
        if sum(q for a, b, q in items if a <= t < b) > m:
            return False
    if cal is None:
        return True
    for i, j in itertools.permutations(jobs, 2):
        if i.queue == j.queue and i.queue in cal.sequential_queues:
            if starts[i.id] < starts[j.id] < ends[i.id]:
                return False  # j starts while i runs
            if i.runtime and j.runtime and starts[i.id] == starts[j.id]:
                return False
    batch = [j for j in jobs if j.queue not in cal.anytime_queues]
    held = [(starts[j.id], ends[j.id], j.size) for j in batch if j.runtime > 0]
    held += [(b.start, b.end, b.size) for b in machine.unavailable if b.end > b.start]
    for j in batch:
        t = starts[j.id]
        if j.size > cal.max_size_at(t, m):
            return False
        load = sum(q for a, b, q in held if a <= t < b) if j.runtime else j.size
        if load > cal.capacity_at(t, m):
            return False
    if profile:
        for t in {a for a, _, _ in held} | {x for piece in _cuts(cal) for x in piece}:
            if sum(q for a, b, q in held if a <= t < b) > cal.capacity_at(t, m):
                return False
    return True


def _cuts(cal: Calendar) -> list[tuple[int, int]]:
    return [(p.start, p.end) for p in cal.periods]


def brute_force(
    instance: Instance, objective: str, horizon: int, *, profile: bool = False
) -> tuple[float, dict[int, int]] | None:
    """The best objective over every integer start vector with ends at most
    ``horizon`` (``None``: nothing feasible)."""
    obj = Objective.parse(objective)
    jobs = instance.jobs
    ranges = [range(j.release, horizon - j.runtime + 1) for j in jobs]
    best: tuple[float, dict[int, int]] | None = None
    for vector in itertools.product(*ranges):
        starts = {j.id: s for j, s in zip(jobs, vector, strict=True)}
        if obj.kind == "cmax":
            value: float = max(s + j.runtime for j, s in zip(jobs, vector, strict=True))
        else:
            value = sum(
                obj.weight(j) * (s + j.runtime)
                for j, s in zip(jobs, vector, strict=True)
            )
        if best is not None and value >= best[0]:
            continue
        if feasible(instance, starts, profile=profile):
            best = (value, starts)
    return best


def brute_horizon(instance: Instance, objective: str, upper: Schedule) -> int:
    """A latest end every optimal schedule meets, from a feasible ``upper``:
    its makespan (cmax), or for wct with integer weights ``w_j >= 1``
    ``(UB - sum_{i != j} w_i (r_i + p_i)) / w_j``, the most one completion
    can be when the others end at their earliest."""
    span = max(p.end for p in upper.placements.values())
    if objective == "cmax":
        return span
    obj = Objective.parse(objective)
    w = {j.id: int(obj.exact_weight(j)) for j in instance.jobs}
    total = sum(w[jid] * p.end for jid, p in upper.placements.items())
    least = sum(w[j.id] * (j.release + j.runtime) for j in instance.jobs)
    return max(
        [span]
        + [
            (total - least + w[j.id] * (j.release + j.runtime)) // w[j.id]
            for j in instance.jobs
        ]
    )


def _as_schedule(instance: Instance, starts: dict[int, int]) -> Schedule:
    return assign_processors(instance, starts)


def _solved(instance: Instance, objective: str) -> Result:
    """CP-SAT's result, its schedule checked; the model alone (closed-form
    bounds kept out of its domain) must prove the optimum, and none of its
    solutions may fail the checker."""
    result = solve(instance, objective, workers=1, time_limit=20, bound_domain=False)
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    assert result.rejected == ()
    assert result.params["cpsat_status"] == "OPTIMAL"
    (own,) = [b.value for b in result.bounds if b.method == "cpsat"]
    assert own == result.objective
    return result


# -- golden optima -------------------------------------------------------------------
def test_a_job_too_large_for_the_day_waits_for_the_night() -> None:
    # 4 CPUs; over [0, 10) jobs of at most 2 may start. Without the
    # calendar J1 (3 CPUs, 5 s) and J2 (2, 4 s) run one after the other:
    # 9. With it J1 cannot start before 10: J2 at 0, J1 at 10, makespan 15;
    # sum of completions 4 + 15 = 19.
    jobs = (Job(1, 0, 3, 5), Job(2, 0, 2, 4))
    plain = Instance(Machine(4), jobs)
    site = Instance(Machine(4, calendar=_calendar([(0, 10, None, 2)])), jobs)
    assert _solved(plain, "cmax").objective == 9
    result = _solved(site, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 15
    assert result.schedule is not None and result.schedule[1].start == 10
    assert _solved(site, "wct").objective == 19


def test_start_only_admission_lets_a_long_job_run_past_a_drop() -> None:
    # 4 CPUs; batch capacity and largest job 1 over [5, 20). J1 (4 CPUs,
    # 15 s) starts at 0 and runs on after the drop at 5 (only starts are
    # checked); J2 (1 CPU, 10 s) starts when J1 ends, at 15, holding 1 <= 1:
    # makespan 25. Read as a cumulative under the capacity profile, J1 could
    # not run over [5, 20) at all: J1 at 20, makespan 35.
    instance = Instance(
        Machine(4, calendar=_calendar([(5, 20, 1, 1)])),
        (Job(1, 0, 4, 15), Job(2, 0, 1, 10)),
    )
    result = _solved(instance, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 25
    assert result.schedule is not None
    assert (result.schedule[1].start, result.schedule[2].start) == (0, 15)
    start_only = brute_force(instance, "cmax", 40)
    as_profile = brute_force(instance, "cmax", 40, profile=True)
    assert start_only is not None and start_only[0] == 25
    assert as_profile is not None and as_profile[0] == 35
    # The plain area against the integrated capacity would claim more than
    # the optimum (integral of c over [0, 25) = 20 + 15 + 20 = 55 < 70);
    # the batch-area bound stays valid.
    bound = batch_area_bound(instance, site_released(instance))
    assert bound is not None and bound.value <= 25


def test_the_admission_counts_the_jobs_running_at_a_start() -> None:
    # 4 CPUs, batch capacity 2 over [0, 10). J1 (2 CPUs, 12 s) at 0; J2 (2
    # CPUs, 4 s) would find 2 + 2 > 2 held before 10, so it starts at 10:
    # makespan 14 (J2 first, J1 at 4: 16). Both at 0 (12) fits the machine
    # but not the calendar. The sum of completions prefers J2 first: 4 + 16
    # = 20 < 12 + 14. Two 1-CPU jobs under capacity 1 run one after the
    # other even on 4 CPUs.
    instance = Instance(
        Machine(4, calendar=_calendar([(0, 10, 2, None)])),
        (Job(1, 0, 2, 12), Job(2, 0, 2, 4)),
    )
    result = _solved(instance, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 14
    assert _solved(instance, "wct").objective == 4 + 16
    narrow = Instance(
        Machine(4, calendar=_calendar([(0, 8, 1, None)])),
        (Job(1, 0, 1, 3), Job(2, 0, 1, 3)),
    )
    assert _solved(narrow, "cmax").objective == 6


def test_a_job_started_before_a_drop_counts_at_later_starts() -> None:
    # 4 CPUs; capacity 4 over [0, 5), 2 over [5, 20). J1 (2 CPUs, 15 s)
    # starts at 0; J2 (2 CPUs, 4 s, released at 5) finds 2 + 2 > 2 held
    # until J1 ends: J2 at 15, makespan 19 (J2 at 5 and J1 at 9: 24). The
    # jobs started in each stretch of constant capacity fit it (2 <= 4,
    # 2 <= 2): only the admission sum, which counts J1, forbids J2 at 5.
    instance = Instance(
        Machine(4, calendar=_calendar([(0, 5, 4, None), (5, 20, 2, None)])),
        (Job(1, 0, 2, 15), Job(2, 5, 2, 4)),
    )
    result = _solved(instance, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 19
    assert result.schedule is not None and result.schedule[2].start == 15
    found = brute_force(instance, "cmax", 30)
    assert found is not None and found[0] == 19


def test_the_batch_area_bound_binds_under_a_low_capacity() -> None:
    # 8 CPUs, batch capacity 4 over [0, 100); six 2-CPU jobs of 10 s. At
    # most two run together (a third would find 6 > 4 held at its start):
    # three rounds, makespan 30, which the batch-area bound (window maximum
    # of the capacity over 10 s: 4; 120 / 4 = 30) proves, while the bounds
    # of the released instance see 8 CPUs (area 120 / 8 = 15).
    instance = Instance(
        Machine(8, calendar=_calendar([(0, 100, 4, None)])),
        tuple(Job(k, 0, 2, 10) for k in range(1, 7)),
    )
    released = site_released(instance)
    bound = batch_area_bound(instance, released)
    assert bound is not None and bound.value == 30
    plain, _ = lower_bounds_within(released, "cmax", None)
    assert max(b.value for b in plain) == 15
    assert _solved(instance, "cmax").objective == 30


def test_the_wide_jobs_wait_for_the_night_in_the_bound() -> None:
    # 4 CPUs; jobs of at most 1 CPU may start over [5, 20). Two 3-CPU jobs
    # of 6 s cannot run together (6 > 4): one at 0, the other waits until
    # 20 (the first ends at 6, inside the window), makespan 26. The
    # released instance's bounds see 6 to 9; the exact sequencing of the
    # wide jobs under the start windows gives 26.
    instance = Instance(
        Machine(4, calendar=_calendar([(5, 20, None, 1)])),
        (Job(1, 0, 3, 6), Job(2, 0, 3, 6)),
    )
    released = site_released(instance)
    bound = wide_jobs_window_bound(instance, released)
    assert bound is not None and bound.value == 26
    plain, _ = lower_bounds_within(released, "cmax", None)
    assert max(b.value for b in plain) < 26
    assert _solved(instance, "cmax").objective == 26


def test_a_sequential_queue_serialises_two_jobs() -> None:
    # Queue 7 is sequential: two 1-CPU jobs of 3 s and 4 s on 4 CPUs run one
    # after the other, makespan 7 (4 without the rule); wct 3 + 7 = 10.
    jobs = (Job(1, 0, 1, 3, queue=7), Job(2, 0, 1, 4, queue=7), Job(3, 0, 1, 2))
    instance = Instance(Machine(4, calendar=_calendar([], sequential=[7])), jobs)
    result = _solved(instance, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 7
    assert _solved(instance, "wct").objective == 3 + 7 + 2
    released = instance  # no chains, no calendar periods: releases unchanged
    bound = sequential_queue_bound(instance, released)
    assert bound is not None and bound.value == 7


def test_a_chain_with_think_time() -> None:
    # J2 follows J1 after 4 s of think time; J3 (4 CPUs) runs alone. Best:
    # J1 [0, 3), J3 [3, 8), J2 [8, 10): makespan 10, sum of completions 21
    # (J3 first: 5 + 8 + 14 = 27; J2 at 7 then J3: 3 + 9 + 14 = 26).
    instance = Instance(
        Machine(4),
        (
            Job(1, 0, 2, 3),
            Job(2, 0, 2, 2, preceding_job=1, think_time=4),
            Job(3, 0, 4, 5),
        ),
    )
    cmax = _solved(instance, "cmax")
    assert cmax.status is SolveStatus.OPTIMAL and cmax.objective == 10
    wct = _solved(instance, "wct")
    assert wct.status is SolveStatus.OPTIMAL and wct.objective == 21
    assert brute_force(instance, "wct", 20) is not None
    assert brute_force(instance, "wct", 20)[0] == 21  # type: ignore[index]


def test_an_outage_block_counts_in_the_admission() -> None:
    # A busy block holds 3 of 4 CPUs over [0, 6); the batch capacity is 3
    # over [0, 10). A 1-CPU job fits the machine at 0 (3 + 1 = 4) but not
    # the capacity (4 > 3): it starts when the block ends, at 6.
    machine = Machine(
        4, unavailable=(BusyBlock(0, 6, 3),), calendar=_calendar([(0, 10, 3, None)])
    )
    instance = Instance(machine, (Job(1, 0, 1, 2),))
    result = _solved(instance, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 8
    bare = instance.replace(machine=machine.replace(calendar=None))
    assert _solved(bare, "cmax").objective == 2


def test_contiguous_machine_and_bounds_only() -> None:
    instance = Instance(
        Machine(4, allocation="contiguous", calendar=_calendar([(0, 10, None, 2)])),
        (Job(1, 0, 3, 5), Job(2, 0, 2, 4)),
    )
    result = _solved(instance, "cmax")
    assert result.status is SolveStatus.OPTIMAL and result.objective == 15
    assert result.schedule is not None
    bounded = solve(
        instance,
        "cmax",
        backend="bounds-only",
        incumbents=[Incumbent("opt", result.schedule)],
    )
    assert bounded.lower_bound is not None and bounded.lower_bound <= 15


def test_other_backends_refuse_with_a_precise_message() -> None:
    instance = Instance(Machine(4, calendar=_calendar([])), (Job(1, 0, 1, 1),))
    with pytest.raises(
        ValueError, match=r"ignores site calendars.*cpsat or bounds-only"
    ):
        solve(instance, "cmax", backend="milp")
    chained = Instance(Machine(4), (Job(1, 0, 1, 1), Job(2, 0, 1, 1, preceding_job=1)))
    with pytest.raises(ValueError, match=r"ignores job chains.*cpsat or bounds-only"):
        solve(chained, "cmax", backend="shelf")


# -- brute force on random tiny instances -----------------------------------------
@st.composite
def tiny_site_instances(draw: st.DrawFn) -> Instance:
    """2 to 3 jobs on up to 4 CPUs, integer times below ~12, a random daily
    calendar ending by 8 s (full machine afterwards), a sequential queue 1
    and an anytime queue 2 in some draws, random chains, maybe a block."""
    m = draw(st.integers(2, 4))
    cuts = sorted(set(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3))))
    pieces = []
    for a, b in itertools.pairwise([0, *cuts]):
        if draw(st.integers(0, 3)):  # mostly limited: admission matters
            capacity = draw(st.sampled_from([0, *range(1, m), *range(1, m), m]))
            pieces.append((a, b, capacity, draw(st.integers(max(0, capacity - 1), m))))
    calendar = _calendar(
        pieces,
        sequential=[1] if draw(st.booleans()) else [],
        anytime=[2] if draw(st.booleans()) else [],
    )
    blocks: tuple[BusyBlock, ...] = ()
    if draw(st.booleans()):
        start = draw(st.integers(0, 4))
        blocks = (
            BusyBlock(start, start + draw(st.integers(1, 4)), draw(st.integers(1, m))),
        )
    jobs = []
    n = draw(st.sampled_from([2, 3, 3]))
    for k in range(1, n + 1):
        pred = draw(st.sampled_from([None, *range(1, k)])) if k > 1 else None
        jobs.append(
            Job(
                k,
                draw(st.sampled_from([0, 0, 1, 2, 3, 5])),
                draw(st.integers(1, max(1, m - 1))),
                draw(st.sampled_from([0, 1, 2, 2, 3, 3])),
                queue=draw(st.sampled_from([None, None, 1, 2])),
                preceding_job=pred,
                think_time=draw(st.sampled_from([None, 0, 2])) if pred else None,
            )
        )
    return Instance(Machine(m, unavailable=blocks, calendar=calendar), tuple(jobs))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    instance=tiny_site_instances(),
    objective=st.sampled_from(["cmax", "wct", "wct:size"]),
)
def test_cpsat_equals_brute_force_and_bounds_hold(
    instance: Instance, objective: str
) -> None:
    result = _solved(instance, objective)
    assert result.schedule is not None
    horizon = brute_horizon(instance, objective, result.schedule)
    found = brute_force(instance, objective, horizon)
    assert found is not None
    best, starts = found
    # The brute force's optimum is a valid schedule for the checker, too.
    assert check_schedule(instance, _as_schedule(instance, starts)) == []
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == best
    bounds, _ = lower_bounds_within(instance, objective, None)
    assert bounds and all(b.value <= best + 1e-9 for b in bounds), bounds
    mine, _ = site_lower_bounds(
        instance, site_released(instance), Objective.parse(objective), None
    )
    assert all(b.value <= best + 1e-9 for b in mine), mine


@settings(max_examples=EXAMPLES // 5, deadline=None)
@given(instance=tiny_site_instances(), data=st.data())
def test_the_judge_agrees_with_the_checker(
    instance: Instance, data: st.DataObject
) -> None:
    # The brute force's predicate and the checker's rules 11 and 12 are
    # written apart; on random start vectors they must agree.
    starts = {
        j.id: data.draw(st.integers(j.release, j.release + 8)) for j in instance.jobs
    }
    schedule = _as_schedule(instance, starts)
    assert feasible(instance, starts) == (check_schedule(instance, schedule) == [])


# -- the model's own starting schedule ----------------------------------------------
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(instance=tiny_site_instances())
def test_the_site_list_schedule_keeps_every_rule(instance: Instance) -> None:
    schedule = site_list_schedule(instance)
    assert check_schedule(instance, schedule) == []


def test_the_list_schedule_lets_a_later_job_start_first() -> None:
    # 4 CPUs; over [0, 10) jobs of at most 2 may start. J1 (3 CPUs) waits
    # for 10; J2 (2 CPUs), later in submit order, starts at 0 beside it.
    jobs = (Job(1, 0, 3, 5), Job(2, 0, 2, 4))
    instance = Instance(Machine(4, calendar=_calendar([(0, 10, None, 2)])), jobs)
    schedule = site_list_schedule(instance)
    assert check_schedule(instance, schedule) == []
    assert (schedule[1].start, schedule[2].start) == (10, 0)


def test_the_list_schedule_keeps_the_admission_of_earlier_starts() -> None:
    # 4 CPUs, batch capacity 2 over [0, 20). J1 (2 CPUs, 3 s, released at 5)
    # is placed first, at 5. J2 (2 CPUs, 10 s) fits the machine at 0, but
    # would still run at 5, where J1's start would then find 4 > 2 held;
    # during J1 its own start finds 4 > 2: it starts when J1 ends, at 8.
    jobs = (Job(1, 5, 2, 3), Job(2, 0, 2, 10))
    instance = Instance(Machine(4, calendar=_calendar([(0, 20, 2, None)])), jobs)
    schedule = site_list_schedule(instance)
    assert check_schedule(instance, schedule) == []
    assert (schedule[1].start, schedule[2].start) == (5, 8)


def test_without_incumbents_the_site_model_starts_from_its_list_schedule() -> None:
    # A model never runs the simulator: without a caller's schedule it
    # starts from its own list schedule, and the simulator stays unloaded.
    code = (
        "import sys\n"
        "from optsched.calendar import Calendar, Period\n"
        "from optsched.instance import Instance, Job, Machine\n"
        "from optsched.models import solve\n"
        "calendar = Calendar((Period(tuple(range(8)), 0, 10, None, 2),))\n"
        "instance = Instance(Machine(4, calendar=calendar),\n"
        "                    (Job(1, 0, 3, 5), Job(2, 0, 2, 4)))\n"
        "for backend in ('cpsat', 'bounds-only'):\n"
        "    result = solve(instance, 'cmax', backend=backend, workers=1)\n"
        "    assert result.objective == 15, result\n"
        "    assert result.upper_bound_source == 'site:list', result\n"
        "loaded = [m for m in sys.modules if m.startswith('optsched.heuristics')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_job_no_period_admits_can_never_start() -> None:
    instance = Instance(
        Machine(4, calendar=_calendar([(0, 86_400, None, 2)])), (Job(1, 0, 3, 5),)
    )
    with pytest.raises(ValueError, match="job 1 of 3 processors can never start"):
        solve(instance, "cmax", workers=1, time_limit=5)


def test_the_list_schedule_on_a_machine_with_speeds_follows_the_chains() -> None:
    # Speeds take no calendar: the chains are the only rule. Job 1 on the
    # two speed-2 processors ends at 3 (10 s of work / 4 rounded up); job 2
    # starts at 3 + the think time 1 and ends at 4 + 8 / 4 = 6.
    machine = Machine(4, speeds=(1.0, 1.0, 2.0, 2.0))
    jobs = (Job(1, 0, 2, 10), Job(2, 0, 2, 8, preceding_job=1, think_time=1))
    instance = Instance(machine, jobs)
    schedule = site_list_schedule(instance)
    assert check_schedule(instance, schedule) == []
    assert [(schedule[j].start, schedule[j].end) for j in (1, 2)] == [(0, 3), (4, 6)]
