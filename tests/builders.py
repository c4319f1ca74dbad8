"""Small instance builders shared by the tests."""

from __future__ import annotations

from optsched.instance import Instance, Job, Machine


def make(m: int, jobs: list[tuple[int, int, int]], **machine: object) -> Instance:
    """Jobs as (release, size, runtime), numbered from 1."""
    return Instance(
        Machine(m, **machine),  # type: ignore[arg-type]
        tuple(Job(k, r, q, p) for k, (r, q, p) in enumerate(jobs, start=1)),
    )
