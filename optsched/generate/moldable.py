"""Random moldable batches of Kalthoff's rescaling experiments (seed 001 §6.1-6.2).

B. Kalthoff, "Einsatz von algorithmischen Skeletten im Scheduling massiv
paralleler Systeme", PhD thesis, Universität Paderborn, 2002.

:func:`table_6_5`
    Ch. 6.5.5, Table 6.5: 20 jobs, each requesting ``q_j ~ U{4..128}``
    processors for ``T_j ~ U{20..400}`` time units (integers, both
    uniform: the thesis says "random" and gives the ranges), all released
    at 0 with weight 1. Every job is *scalable* (moldable) with linear
    speed-up up to its request (:func:`optsched.moldable.speedup.parse_model`
    ``"linear"``): modes ``p = 1..q_j`` with
    ``T_j(p) = ceil(T_j q_j / p)``, less the modes no faster than a smaller
    one. The machine size is not stated in the thesis (at least 128 is
    implied by the largest request); the default here is ``m = 128``.
:func:`figure_5_10`
    Ch. 5.4.4, Fig. 5.10: 12 jobs, of which the share ``s`` is scalable
    (``round(s * 12)`` jobs, chosen at random); the others are rigid (no
    modes). The thesis gives no distributions for this experiment: the
    requests and run times are those of Table 6.5 (our choice), on the same
    default machine.

Both draw from a :class:`numpy.random.Generator` (or a seed), so a seed
fixes the instance.
"""

from __future__ import annotations

import numpy as np

from optsched.instance import Instance, Job, Machine, Source
from optsched.moldable.speedup import parse_model

__all__ = [
    "DEFAULT_MACHINE",
    "RUNTIME_RANGE",
    "SIZE_RANGE",
    "figure_5_10",
    "moldable_batch",
    "table_6_5",
]

SIZE_RANGE: tuple[int, int] = (4, 128)
"""Requested processors, both ends included (Table 6.5)."""

RUNTIME_RANGE: tuple[int, int] = (20, 400)
"""Run time on the requested processors, both ends included (Table 6.5)."""

DEFAULT_MACHINE = 128
"""Machine size when none is given: the thesis states none; 128 is the
smallest that runs every request."""


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    return (
        seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    )


def moldable_batch(
    jobs: int,
    scalable: int,
    *,
    machine: int = DEFAULT_MACHINE,
    seed: int | np.random.Generator = 0,
    sizes: tuple[int, int] = SIZE_RANGE,
    runtimes: tuple[int, int] = RUNTIME_RANGE,
    speedup: str = "linear",
    name: str = "",
) -> Instance:
    """``jobs`` jobs at time 0, ``scalable`` of them moldable (linear speed-up).

    Draw order (fixed, so a seed fixes the instance): all requests
    ``q ~ U{sizes}``, then all run times ``T ~ U{runtimes}``, then which
    jobs are scalable (a uniformly random subset of ``scalable`` job
    positions; skipped when all or none are).

    Parameters
    ----------
    jobs
        Number of jobs (ids ``1..jobs``).
    scalable
        How many are moldable, ``0 <= scalable <= jobs``.
    machine
        Processors ``m``; at least the largest request.
    seed
        A seed or a generator (advanced by the draws).
    sizes, runtimes
        Inclusive ranges of the requests and run times.
    speedup
        Speed-up model of the scalable jobs
        (:func:`optsched.moldable.speedup.parse_model`); ``"linear"`` (the thesis's)
        gives modes up to the request only, ``"linear:max=128"`` lets a job
        grow to 128 processors too (run time ``ceil(T q / p)`` throughout).
    name
        Instance name.

    Raises
    ------
    ValueError
        ``scalable`` out of range, empty ranges, or a machine smaller than
        the largest possible request.
    """
    if not 0 <= scalable <= jobs:
        raise ValueError(f"scalable jobs must lie in [0, {jobs}], got {scalable}")
    for label, (low, high) in (("sizes", sizes), ("runtimes", runtimes)):
        if not 0 < low <= high:
            raise ValueError(f"{label} range ({low}, {high}) must have 0 < low <= high")
    if machine < sizes[1]:
        raise ValueError(
            f"machine of {machine} processors is smaller than the largest "
            f"request {sizes[1]}"
        )
    rng = _rng(seed)
    q = rng.integers(sizes[0], sizes[1], size=jobs, endpoint=True)
    t = rng.integers(runtimes[0], runtimes[1], size=jobs, endpoint=True)
    if 0 < scalable < jobs:
        chosen = set(rng.choice(jobs, size=scalable, replace=False).tolist())
    else:
        chosen = set(range(jobs)) if scalable == jobs else set()
    model = parse_model(speedup)
    out: list[Job] = []
    for k in range(jobs):
        job = Job(k + 1, 0, int(q[k]), int(t[k]))
        if k in chosen:
            job = job.replace(modes=model.modes(job, machine))
        out.append(job)
    return Instance(
        Machine(machine), tuple(out), name=name, source=Source(format="generated")
    )


def table_6_5(
    seed: int | np.random.Generator = 0,
    *,
    machine: int = DEFAULT_MACHINE,
    speedup: str = "linear",
) -> Instance:
    """One set of Table 6.5: 20 scalable jobs (module docstring)."""
    return moldable_batch(
        20, 20, machine=machine, seed=seed, speedup=speedup, name="kalthoff-t6.5"
    )


def figure_5_10(
    share: float,
    seed: int | np.random.Generator = 0,
    *,
    machine: int = DEFAULT_MACHINE,
    jobs: int = 12,
    speedup: str = "linear",
) -> Instance:
    """One set of Fig. 5.10: ``jobs`` jobs, ``round(share * jobs)`` scalable.

    ``share`` in ``[0, 1]`` (the thesis: 0, 0.25, 0.5, 0.75, 1).
    """
    if not 0 <= share <= 1:
        raise ValueError(f"share of scalable jobs must lie in [0, 1], got {share}")
    return moldable_batch(
        jobs,
        round(share * jobs),
        machine=machine,
        seed=seed,
        speedup=speedup,
        name=f"kalthoff-f5.10-s{share:g}",
    )
