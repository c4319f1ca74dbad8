"""The simulator on the real traces: the KTH golden numbers, every policy x
allocation on a window of every trace.
"""

from __future__ import annotations

import functools

import pytest
from support.paths import trace_path

from optsched.check import check_schedule
from optsched.heuristics import POLICY_NAMES, simulate
from optsched.instance import Instance
from optsched.io import read_trace
from optsched.metrics import summarize
from optsched.windows.window import cut_window

KTH = "KTH-SP2-1996-2.1-cln.swf"

# Windows (first job, jobs): 3000 jobs, 1000 on Atlas. There the first jobs
# use thousands of processors each and checking processor sets costs the sum
# of the sizes, so its window is the 1000 consecutive jobs with the smallest
# total size. The full traces run in benchmarks/simulate_speed.py.
WINDOWS = {
    KTH: (0, 3000),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (0, 3000),
    "hpc2n.swf": (0, 3000),
    "lublin_256.swf": (0, 3000),
    "LLNL-Atlas-2006-2.1-cln.swf": (37974, 1000),
}

ALLOCATIONS = [
    ("any", "first-fit", False),
    ("contiguous", "first-fit", False),
    ("contiguous", "best-fit", True),
]


@functools.cache
def _window(name: str, first_job: int, jobs: int) -> Instance:
    return cut_window(read_trace(trace_path(name)), first_job=first_job, jobs=jobs)


def test_kth_golden_fcfs() -> None:
    """First 2000 KTH jobs in file order, strict FCFS, 100 processors, never
    killed: the numbers AccaSim and an independent implementation agree on.
    """
    instance = _window(KTH, 0, 2000)
    assert instance.processors == 100
    assert len(instance.jobs) == 2000
    result = simulate(instance, "fcfs")
    assert check_schedule(instance, result.schedule) == []
    summary = summarize(instance, result.schedule)
    assert round(summary.mean_wait, 2) == 37917.68
    assert round(summary.mean_bounded_slowdown, 3) == 856.208
    assert summary.makespan_relative == 2_114_636
    assert result.schedule.killed == frozenset()


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize(("allocation", "rule", "migration"), ALLOCATIONS)
def test_every_policy_on_every_trace(
    name: str, allocation: str, rule: str, migration: bool
) -> None:
    instance = _window(name, *WINDOWS[name])
    if allocation != instance.machine.allocation:
        machine = instance.machine.with_allocation(allocation)
        instance = instance.replace(machine=machine)
    for spec in POLICY_NAMES:
        result = simulate(instance, spec, allocation_rule=rule, migration=migration)
        assert check_schedule(instance, result.schedule) == [], spec
        assert len(result.schedule) == len(instance.jobs)
