"""Small instance builders shared by the tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import strategies as st

from optsched.instance import BusyBlock, Instance, Job, Machine


def make(m: int, jobs: list[tuple[int, int, int]], **machine: object) -> Instance:
    """Jobs as (release, size, runtime), numbered from 1."""
    return Instance(
        Machine(m, **machine),  # type: ignore[arg-type]
        tuple(Job(k, r, q, p) for k, (r, q, p) in enumerate(jobs, start=1)),
    )


@st.composite
def small_instances(draw: st.DrawFn, max_jobs: int = 6, max_m: int = 6) -> Instance:
    """Random small instances: both allocations, up to two busy blocks
    (pinned to processors on ``contiguous`` machines, processor counts on
    ``any`` machines), releases or not, mixed weights."""
    m = draw(st.integers(1, max_m))
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    blocks: list[BusyBlock] = []
    for _ in range(draw(st.integers(0, 2))):
        start, size = draw(st.integers(0, 6)), draw(st.integers(1, m))
        offset = draw(st.integers(0, m - size))
        pinned = allocation == "contiguous"  # blocks are counts on any machines
        block = BusyBlock(
            start, start + draw(st.integers(1, 5)), size, offset if pinned else None
        )
        try:
            Machine(m, allocation, (*blocks, block))
        except ValueError:
            continue  # overlapping blocks: leave this one out
        blocks.append(block)
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
    return Instance(Machine(m, allocation, tuple(blocks)), tuple(jobs))


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
