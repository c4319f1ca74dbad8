"""The exact CP-SAT models of machines with node speeds or SMP nodes under a
site calendar (:mod:`optsched.models.topology.speeds` with
:mod:`optsched.models.site.admission`): the optimum equals a brute force
over every start and processor set on tiny instances, judged by a plain
reading of the rules written here (processors, releases, the calendar's
size and capacity at each start, a sequential queue)."""

from __future__ import annotations

import itertools
import math

import pytest

from optsched.calendar import Calendar, Period
from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.models import solve
from optsched.nodes import Nodes
from optsched.result import SolveStatus
from optsched.schedule import Placement, Schedule

ALL_DAYS = tuple(range(8))
CALENDAR = Calendar(
    (Period(ALL_DAYS, 0, 4, capacity=1, max_size=1),), sequential_queues={5}
)
"""Before 4 s batch jobs hold at most one processor; queue 5 is sequential."""
JOBS = (
    Job(1, 0, 2, 8, 8),
    Job(2, 0, 1, 4, 4, queue=5),
    Job(3, 1, 1, 6, 6, queue=5),
)
HORIZON = 14
"""Latest start tried: every optimum here starts its jobs by then."""


def _allowed(
    instance: Instance, runs: dict[int, tuple[int, int, tuple[int, ...]]]
) -> bool:
    """The rules read plainly: releases, no processor shared at once, the
    calendar at each start (size, and the sizes of the jobs running then),
    no two jobs of the sequential queue at once."""
    jobs = instance.jobs_by_id()
    calendar = instance.machine.calendar
    assert calendar is not None
    m = instance.processors
    for jid, (start, _, _) in runs.items():
        job = jobs[jid]
        if start < job.release:
            return False
        held = sum(
            jobs[other].size for other, (s, e, _) in runs.items() if s <= start < e
        )
        if job.size > calendar.max_size_at(start, m) or held > calendar.capacity_at(
            start, m
        ):
            return False
    for (a, (s1, e1, p1)), (b, (s2, e2, p2)) in itertools.combinations(runs.items(), 2):
        if s1 < e2 and s2 < e1:
            if set(p1) & set(p2):
                return False
            if jobs[a].queue == jobs[b].queue in calendar.sequential_queues:
                return False
    return True


def _brute_force(instance: Instance, objective: str) -> float:
    machine = instance.machine
    choices = []
    for job in instance.jobs:
        mine = []
        for procs in itertools.combinations(range(machine.processors), job.size):
            length = machine.run_time(job.runtime, procs)
            for start in range(job.release, HORIZON + 1):
                mine.append((job.id, start, start + length, procs))
        choices.append(mine)
    best, best_runs = math.inf, None
    for pick in itertools.product(*choices):
        runs = {jid: (s, e, p) for jid, s, e, p in pick}
        if objective == "cmax":
            value = max(e for _, e, _ in runs.values())
        else:
            value = sum(e for _, e, _ in runs.values())
        if value < best and _allowed(instance, runs):
            best, best_runs = value, runs
    assert best_runs is not None
    schedule = Schedule({j: Placement(s, e, p) for j, (s, e, p) in best_runs.items()})
    assert check_schedule(instance, schedule) == []
    return best


@pytest.mark.parametrize("objective", ["cmax", "wct"])
@pytest.mark.parametrize(
    "machine",
    [Machine(3, speeds=(1, 1, 2)), Machine(4, nodes=Nodes(2, 2, tight=0, level=2))],
    ids=["speeds", "nodes"],
)
def test_the_calendar_model_finds_the_brute_force_optimum(
    machine: Machine, objective: str
) -> None:
    instance = Instance(machine.replace(calendar=CALENDAR), JOBS)
    result = solve(instance, objective, backend="cpsat", time_limit=30, workers=1)
    assert result.status is SolveStatus.OPTIMAL
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == _brute_force(instance, objective)
    assert result.params["model"] == ("speeds" if machine.speeds else "smp")
    # Without the calendar the optimum is strictly better: it binds.
    free = solve(instance.replace(machine=machine), objective, backend="cpsat")
    assert free.objective is not None and free.objective < result.objective
