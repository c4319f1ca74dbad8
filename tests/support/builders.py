"""Small instance builders shared by the tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import product
from typing import NamedTuple

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from optsched.calendar import HOLIDAY, WEEK, Calendar, Period
from optsched.check import check_schedule
from optsched.heuristics import SimulationResult, simulate
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.models.rigid.enumerate import solve_exact
from optsched.objective import WEIGHT_RULES, Objective
from optsched.schedule import Placement, Schedule


def make(m: int, jobs: list[tuple[int, int, int]], **machine: object) -> Instance:
    """Jobs as (release, size, runtime), numbered from 1."""
    return Instance(
        Machine(m, **machine),  # type: ignore[arg-type]
        tuple(Job(k, r, q, p) for k, (r, q, p) in enumerate(jobs, start=1)),
    )


def slow_settings(max_examples: int) -> settings:
    """Hypothesis settings for properties whose examples run a simulator or
    a solver: ``max_examples`` examples, no deadline and no ``too_slow``
    health check (a slow example is expected, not a fault)."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def draw_jobs(
    draw: st.DrawFn,
    m: int,
    count: tuple[int, int],
    *,
    release: int,
    runtime: int,
    estimate: Callable[[int], st.SearchStrategy[int]] | None = None,
    weights: Sequence[float] = (1.0,),
    shuffled: bool = False,
    **fields: st.SearchStrategy[object],
) -> list[Job]:
    """Random rigid jobs on ``m`` processors, numbered from 1.

    Parameters
    ----------
    draw
        Hypothesis's draw function (inside an ``@st.composite`` strategy).
    m
        Processors: sizes are drawn in ``[1, m]``.
    count
        Least and most jobs.
    release, runtime
        Latest release and longest run time (both drawn from 0).
    estimate
        The estimate's strategy given the drawn run time; ``None`` leaves
        the estimate unset.
    weights
        Weights to draw from.
    shuffled
        Ids in a random order, the list in that order (so that list order
        and id order differ); default: ids 1, 2, ... in order.
    **fields
        Other job fields (``queue``, ``user`` ...) and their strategies.

    Returns
    -------
    list of Job
        The jobs, in id order unless ``shuffled``.
    """
    ids: Sequence[int] = range(1, draw(st.integers(*count)) + 1)
    if shuffled:
        ids = draw(st.permutations(ids))
    jobs = []
    for k in ids:
        length = draw(st.integers(0, runtime))
        jobs.append(
            Job(
                k,
                draw(st.integers(0, release)),
                draw(st.integers(1, m)),
                length,
                None if estimate is None else draw(estimate(length)),
                weight=draw(st.sampled_from(weights)),
                **{name: draw(values) for name, values in fields.items()},
            )
        )
    return jobs


def draw_blocks(
    draw: st.DrawFn,
    m: int,
    allocation: str,
    *,
    most: int,
    latest: int,
    longest: int,
) -> tuple[BusyBlock, ...]:
    """Up to ``most`` random busy blocks on ``m`` processors, each starting
    by ``latest`` and lasting 1 to ``longest`` s: pinned to processors on
    ``contiguous`` machines, processor counts on ``any`` machines. A block
    the machine refuses beside those drawn before (overlapping ones) is
    left out."""
    blocks: list[BusyBlock] = []
    for _ in range(draw(st.integers(0, most))):
        start, size = draw(st.integers(0, latest)), draw(st.integers(1, m))
        offset = draw(st.integers(0, m - size)) if allocation == "contiguous" else None
        block = BusyBlock(start, start + draw(st.integers(1, longest)), size, offset)
        try:
            Machine(m, allocation, (*blocks, block))
        except ValueError:
            continue
        blocks.append(block)
    return tuple(blocks)


def rectangles(
    latest: int, longest: int, third: tuple[int, int], *, most: int, least: int = 0
) -> st.SearchStrategy[list[tuple[int, int, int]]]:
    """Lists of ``least`` to ``most`` ``(start, length, x)`` triples: a start
    in ``[0, latest]``, a length in ``[1, longest]`` and a third field (a
    width, an offset, a processor count) in the closed range ``third``."""
    return st.lists(
        st.tuples(st.integers(0, latest), st.integers(1, longest), st.integers(*third)),
        min_size=least,
        max_size=most,
    )


def draw_machine(
    draw: st.DrawFn, m: int, allocation: str, *, latest_block: int
) -> Machine:
    """A machine of ``m`` processors with up to two busy blocks of
    :func:`draw_blocks` starting by ``latest_block``, lasting up to 30 s."""
    blocks = draw_blocks(draw, m, allocation, most=2, latest=latest_block, longest=30)
    return Machine(m, allocation, blocks)


@st.composite
def small_instances(draw: st.DrawFn, max_jobs: int = 6, max_m: int = 6) -> Instance:
    """Random small instances: both allocations, up to two busy blocks
    (pinned to processors on ``contiguous`` machines, processor counts on
    ``any`` machines), releases or not, mixed weights."""
    m = draw(st.integers(1, max_m))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    blocks = draw_blocks(draw, m, allocation, most=2, latest=6, longest=5)
    released = draw(st.booleans())
    jobs = [
        Job(
            k,
            draw(st.integers(0, 6)) if released else 0,
            draw(st.integers(1, m)),
            draw(st.integers(0, 5)),
            weight=draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])),
        )
        for k in range(1, draw(st.integers(0, max_jobs)) + 1)
    ]
    return Instance(Machine(m, allocation, blocks), tuple(jobs))


def random_site_jobs(
    rng: random.Random,
    m: int,
    span: int,
    *,
    queues: Sequence[int | None] = (None,),
    users: Sequence[int | None] = (None,),
    chained: float = 0.0,
    count: int = 25,
) -> tuple[Job, ...]:
    """``count`` jobs released over ``[0, span)`` on ``m`` processors for the
    site-rule properties: run times up to 20,000 s, estimates at least the
    run time, queues and users drawn from the given choices, and a share
    ``chained`` of jobs following an earlier job (think time up to 600 s)."""
    jobs = []
    for k in range(count):
        runtime = rng.randrange(0, 20_000)
        jobs.append(
            Job(
                k + 1,
                rng.randrange(0, span),
                rng.randrange(1, m + 1),
                runtime,
                max(runtime, rng.randrange(1, 30_000)),
                queue=rng.choice(list(queues)),
                user=rng.choice(list(users)),
                preceding_job=(
                    rng.randrange(1, k + 1) if k and rng.random() < chained else None
                ),
                think_time=rng.randrange(0, 600),
            )
        )
    return tuple(jobs)


def golden_instance(allocation: str = "any") -> Instance:
    """Hand-solved: m = 2; job 1 takes both processors for 3 s.

    Job 3 is released at 2 and runs 4 s, job 2 runs 2 s. Orders (by hand):
    1,2,3 -> C = (3, 5, 7); 2,1,3 -> (5, 2, 9); 2,3,1 -> (9, 2, 6). The
    makespan optimum is 7; the total completion optimum 3 + 5 + 7 = 15 is
    unique: job 1 at 0, jobs 2 and 3 at 3 (job 2 at 5 would give 17).
    """
    jobs = [Job(1, 0, 2, 3), Job(2, 0, 1, 2), Job(3, 2, 1, 4)]
    return Instance(Machine(2, allocation), jobs, name="golden")


CASE_A = Instance(
    Machine(4),
    tuple(
        Job(k, release, size, runtime, runtime)
        for k, release, size, runtime in (
            (1, 0, 2, 10),
            (2, 0, 3, 5),
            (3, 1, 1, 3),
            (4, 2, 4, 2),
            (5, 2, 1, 20),
        )
    ),
    name="golden",
)
"""Golden case A of the online policies (tests/families/rigid/
test_sim_policies.py, where every policy's starts are worked by hand):
m = 4, jobs ``(id, release, size, runtime)``, estimates exact."""


def random_instance(seed: int, allocation: str) -> Instance:
    """At most 6 jobs on 2-4 processors; sometimes a busy block with an offset."""
    rng = random.Random(seed)
    m = rng.randint(2, 4)
    jobs = [
        Job(
            i,
            release=rng.randint(0, 4),
            size=rng.randint(1, m),
            runtime=rng.randint(0, 4),
            weight=rng.choice([1, 2, 3]),
        )
        for i in range(1, rng.randint(2, 6) + 1)
    ]
    blocks = ()
    if rng.random() < 0.4:
        start, end = rng.randint(0, 3), rng.randint(1, 4)
        offset = rng.randrange(m)  # drawn either way: same instances as before
        pinned = offset if allocation == "contiguous" else None
        blocks = (BusyBlock(start, start + end, 1, offset=pinned),)
    return Instance(Machine(m, allocation, blocks), jobs, name=f"random-{seed}")


def random_periods(rng: random.Random, m: int, keep: float) -> tuple[Period, ...]:
    """Random calendar periods on ``m`` processors: each day and the
    holidays cut at two random hours, each of the three periods kept with
    probability ``keep`` (a random capacity and largest job)."""
    periods = []
    for day in (*range(7), HOLIDAY):
        cuts = sorted(rng.sample(range(1, 24), 2))
        for start, end in zip([0, *cuts], [*cuts, 24], strict=True):
            if rng.random() < keep:
                capacity = rng.randrange(1, m + 1)
                largest = rng.randrange(1, capacity + 1)
                periods.append(
                    Period((day,), start * 3600, end * 3600, capacity, largest)
                )
    return tuple(periods)


def random_calendar(rng: random.Random, m: int) -> Calendar:
    """A random site calendar on ``m`` processors: :func:`random_periods`
    kept with probability 0.6, two of calendar days 0-9 holidays and a
    random Monday offset."""
    periods = random_periods(rng, m, keep=0.6)
    return Calendar(periods, frozenset(rng.sample(range(10), 2)), rng.randrange(WEEK))


def simulate_checked(instance: Instance, policy: str) -> SimulationResult | None:
    """``simulate(instance, policy)`` with a valid schedule, or ``None`` when
    the simulator refuses the instance because a job "can never start" (the
    only refusal the random site-rule properties accept)."""
    try:
        result = simulate(instance, policy)
    except ValueError as error:
        assert "can never start" in str(error)
        return None
    assert check_schedule(instance, result.schedule) == []
    return result


def starts_of(schedule: Schedule) -> dict[int, int]:
    """Job id to start time of every placement of ``schedule``."""
    return {j: p.start for j, p in schedule.placements.items()}


def recorded_schedule(instance: Instance) -> Schedule:
    """The schedule an SWF trace records, written out independently of
    :mod:`optsched.heuristics.rigid.orig`: every job starts at submit +
    wait and runs its run time."""
    placements = {}
    for job in instance.jobs:
        assert job.wait is not None
        start = job.release + job.wait
        placements[job.id] = Placement(start, start + job.runtime)
    return Schedule(placements, producer="recorded")


def exact_optimum(instance: Instance, objective: Objective | str) -> float:
    """The optimum of a small rigid ``instance`` by exhaustive search
    (:func:`optsched.models.rigid.enumerate.solve_exact`), which always
    finds one."""
    optimum = solve_exact(instance, objective).objective
    assert optimum is not None
    return optimum


RIGID_OBJECTIVES: tuple[Objective, ...] = (
    Objective("cmax"),
    *(
        Objective("wct", weights, relative)
        for weights, relative in product(WEIGHT_RULES, (False, True))
    ),
)
"""The makespan and the weighted completion time under every weight rule,
absolute and relative."""


class Optimum(NamedTuple):
    """A small rigid instance, an objective and its exact optimum."""

    instance: Instance
    objective: Objective
    value: float


@st.composite
def optima(draw: st.DrawFn) -> Optimum:
    """A :func:`small_instances` instance, one of :data:`RIGID_OBJECTIVES`
    and its :func:`exact_optimum`."""
    instance = draw(small_instances())
    objective = draw(st.sampled_from(RIGID_OBJECTIVES))
    return Optimum(instance, objective, exact_optimum(instance, objective))
