"""Checked simulation runs and their comparison, shared by the tests of the
node simulator and Rassmann's combinators."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.heuristics import SimulationResult, simulate
from optsched.instance import Instance, Job
from optsched.schedule import Schedule
from support.builders import draw_jobs

ENGINE_COMBINATORS: tuple[tuple[str, str], ...] = (
    ("easy", "optimistic:f=fifo"),
    ("firstfit", "fit:f=fifo"),
    ("fcfs", "blocking:f=fifo"),
)
"""Engine policy and the combinator it equals on a flat machine, job for
job: the same starts, ends and processors (both take the lowest free ids)."""


def checked(instance: Instance, schedule: Schedule) -> Schedule:
    """``schedule`` once the checker finds nothing wrong with it on
    ``instance``."""
    assert check_schedule(instance, schedule) == []
    return schedule


def simulated(instance: Instance, spec: str, **options: object) -> SimulationResult:
    """``simulate(instance, spec, **options)``, its schedule checked."""
    result = simulate(instance, spec, **options)
    checked(instance, result.schedule)
    return result


def run_checked(instance: Instance, spec: str) -> Schedule:
    """The schedule of policy ``spec`` on ``instance``, checked."""
    return simulated(instance, spec).schedule


def runs_of(schedule: Schedule) -> dict[int, tuple[int, int, tuple[int, ...]]]:
    """Job id to ``(start, end, processors)`` of every placement, by id."""
    return {
        j: (p.start, p.end, tuple(p.processors or ()))
        for j, p in sorted(schedule.placements.items())
    }


def spans_of(schedule: Schedule) -> dict[int, tuple[int, int]]:
    """Job id to ``(start, end)`` of its placement."""
    return {j: (p.start, p.end) for j, p in schedule.placements.items()}


def lost_of(schedule: Schedule) -> dict[int, list[tuple[int, int]]]:
    """Job id to the ``(start, end)`` of each run it lost (killed), in order."""
    return {j: [(r.start, r.end) for r in runs] for j, runs in schedule.lost.items()}


def assert_engines_equal_combinators(instance: Instance) -> None:
    """Every pair of :data:`ENGINE_COMBINATORS` gives the same runs on
    ``instance`` (both schedules checked)."""
    for engine, combinator in ENGINE_COMBINATORS:
        mine = runs_of(run_checked(instance, engine))
        assert mine == runs_of(run_checked(instance, combinator)), (engine, combinator)


def draw_shuffled_jobs(
    draw: st.DrawFn, m: int, *, release: int, **fields: st.SearchStrategy[object]
) -> list[Job]:
    """1 to 9 jobs on ``m`` processors for the engine-versus-combinator
    properties: ids in any order, releases in ``[0, release]`` (ties
    likely), run times 0 to 9 s, estimates exact, over or under (0 to 14 s);
    ``fields`` as in :func:`support.builders.draw_jobs`."""
    return draw_jobs(
        draw,
        m,
        (1, 9),
        release=release,
        runtime=9,
        estimate=lambda runtime: st.one_of(st.just(runtime), st.integers(0, 14)),
        shuffled=True,
        **fields,
    )
