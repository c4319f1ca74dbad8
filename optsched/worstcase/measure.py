"""What the worst-case searches measure, and the instance space they search.

Measures
--------
``cmax``
    Makespan ``max_j C_j`` (:class:`optsched.objective.Objective`).
``wct``
    Total completion time ``sum_j C_j`` (``wct`` with unit weights, the label
    ``wct:one`` of :class:`~optsched.objective.Objective`).
``maxwait``
    Maximum wait ``max_j (S_j - r_j)``, local to this package. It is compared
    only policy against policy: the exact models optimise ``cmax`` and
    ``wct`` only, and the optimum of ``maxwait`` is 0 on every instance where
    all jobs can start at their release, which makes a ratio to it infinite
    rather than informative.

Instance space
--------------
An instance of the space is a *genome*: one ``(release, size, runtime,
estimate)`` tuple per job, job ``k`` (0-based) getting id ``k + 1``. Job
order matters: the simulator breaks ties by ``(release, id)``, so two
instances with the same multiset of jobs in another order are different
inputs for FCFS. The offline optimum does not depend on ids, order or
estimates, so it is cached on the sorted ``(release, size, runtime)``
multiset.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from optsched.check import check_schedule
from optsched.instance import ALLOCATIONS, Instance, Job, Machine
from optsched.objective import Objective
from optsched.schedule import Schedule

MEASURES = ("cmax", "wct", "maxwait")
"""Names accepted by :func:`measure_value`."""

OPTIMIZABLE = ("cmax", "wct")
"""Measures with an exact offline optimum here (ratio to the optimum)."""

ESTIMATE_MODES = ("exact", "over")
"""``exact``: estimate = runtime; ``over``: runtime <= estimate <= max_estimate."""

BRUTE_FORCE_MAX_JOBS = 6
"""Largest job count solved by the brute-force enumerator; CP-SAT beyond."""

Gene = tuple[int, int, int, int]
"""One job of a genome: ``(release, size, runtime, estimate)``."""

Genome = tuple[Gene, ...]


def max_wait(instance: Instance, schedule: Schedule) -> int:
    """``max_j (S_j - r_j)``; 0 for an instance without jobs."""
    return max((schedule[j.id].start - j.release for j in instance.jobs), default=0)


def check_measure(name: str) -> str:
    """Return ``name`` if it is a measure, else raise ``ValueError``."""
    if name not in MEASURES:
        raise ValueError(f"objective {name!r} is not one of {', '.join(MEASURES)}")
    return name


def measure_value(name: str, instance: Instance, schedule: Schedule) -> float:
    """The measure ``name`` of ``schedule``, recomputed from its placements.

    ``cmax`` and ``wct`` go through :meth:`Objective.value`, the function
    ``optsched gap`` uses, so that a ratio replays bit for bit.
    """
    if check_measure(name) == "maxwait":
        return float(max_wait(instance, schedule))
    return Objective.parse(name).value(instance, schedule)


@dataclass(frozen=True, slots=True)
class Space:
    """The instances a search draws from.

    Parameters
    ----------
    processors
        Machine size ``m`` (an upper bound in policy-versus-policy searches).
    jobs
        Number of jobs ``n`` (an upper bound in policy-versus-policy searches).
    online
        Jobs have release dates in ``[0, max_release]``; otherwise all are
        released at time 0.
    max_runtime
        Runtimes are integers in ``[1, max_runtime]``.
    estimates
        ``"exact"`` (estimate = runtime) or ``"over"`` (an over-estimate in
        ``[runtime, max_estimate]``, as users request more than they use).
    max_release
        Largest release date when ``online`` (default ``max_runtime``).
    max_estimate
        Largest estimate with ``"over"`` (default ``2 * max_runtime``).
    allocation
        ``"any"`` (a job takes any free processors) or ``"contiguous"`` (adjacent
        processors, as in strip packing); the machine of every instance drawn.
    """

    processors: int
    jobs: int
    online: bool = False
    max_runtime: int = 10
    estimates: str = "exact"
    max_release: int | None = None
    max_estimate: int | None = None
    allocation: str = "any"

    def __post_init__(self) -> None:
        for name, count in (
            ("processors", self.processors),
            ("jobs", self.jobs),
            ("max runtime", self.max_runtime),
        ):
            if count < 1:
                raise ValueError(f"{name} must be >= 1, got {count}")
        for name, value, choices in (
            ("estimates", self.estimates, ESTIMATE_MODES),
            ("allocation", self.allocation, ALLOCATIONS),
        ):
            if value not in choices:
                raise ValueError(f"{name} {value!r} is not one of {', '.join(choices)}")
        if self.max_release is not None and self.max_release < 0:
            raise ValueError(f"max release must be >= 0, got {self.max_release}")
        if self.max_estimate is not None and self.max_estimate < self.max_runtime:
            raise ValueError(
                f"max estimate {self.max_estimate} is below max runtime "
                f"{self.max_runtime}"
            )

    @property
    def release_limit(self) -> int:
        """Largest release date (0 when not ``online``)."""
        if not self.online:
            return 0
        return self.max_runtime if self.max_release is None else self.max_release

    @property
    def estimate_limit(self) -> int:
        """Largest estimate."""
        if self.estimates == "exact":
            return self.max_runtime
        return 2 * self.max_runtime if self.max_estimate is None else self.max_estimate


def to_instance(
    genome: Sequence[Gene], processors: int, name: str = "", allocation: str = "any"
) -> Instance:
    """The instance of ``genome`` on ``processors`` processors (ids 1..n)."""
    jobs = tuple(
        Job(id=k + 1, release=r, size=q, runtime=p, estimate=e)
        for k, (r, q, p, e) in enumerate(genome)
    )
    return Instance(Machine(processors, allocation), jobs, name=name)


def to_genome(instance: Instance) -> Genome:
    """Inverse of :func:`to_instance` (in the instance's job order)."""
    return tuple((j.release, j.size, j.runtime, j.requested) for j in instance.jobs)


def size_key(genome: Genome, processors: int) -> tuple[int, int, int]:
    """Order of "smaller" instances: jobs, then processors, then sum of numbers."""
    return (len(genome), processors, sum(sum(g) for g in genome))


def random_gene(space: Space, rng: random.Random, processors: int) -> Gene:
    """One job drawn uniformly from the space."""
    runtime = rng.randint(1, space.max_runtime)
    release = rng.randint(0, space.release_limit)
    size = rng.randint(1, processors)
    estimate = (
        runtime
        if space.estimates == "exact"
        else rng.randint(runtime, space.estimate_limit)
    )
    return (release, size, runtime, estimate)


def random_genome(space: Space, rng: random.Random) -> Genome:
    """``space.jobs`` jobs drawn uniformly."""
    return tuple(random_gene(space, rng, space.processors) for _ in range(space.jobs))


def _fields(space: Space) -> list[int]:
    # Indices of the genes' mutable fields: release only online, estimate
    # only when estimates may differ from runtimes.
    fields = [1, 2]
    if space.online:
        fields.append(0)
    if space.estimates == "over":
        fields.append(3)
    return fields


def _limits(space: Space, field: int, gene: Gene) -> tuple[int, int]:
    if field == 0:
        return 0, space.release_limit
    if field == 1:
        return 1, space.processors
    if field == 2:
        return 1, space.max_runtime
    return gene[2], space.estimate_limit


def _new_value(rng: random.Random, value: int, low: int, high: int) -> int:
    # Half the moves are small steps (fine tuning near a good instance), half
    # are fresh draws (jumps out of a plateau).
    if rng.random() < 0.5:
        step = rng.choice((-2, -1, 1, 2))
        return min(high, max(low, value + step))
    return rng.randint(low, high)


def perturb(genome: Genome, space: Space, rng: random.Random) -> Genome:
    """A neighbour of ``genome``: one field of one job changed, or two jobs swapped.

    A new runtime drags an exact estimate along and clamps an over-estimate
    to ``>= runtime``.
    """
    jobs = list(genome)
    if len(jobs) > 1 and rng.random() < 0.1:
        a, b = rng.sample(range(len(jobs)), 2)
        jobs[a], jobs[b] = jobs[b], jobs[a]
        return tuple(jobs)
    k = rng.randrange(len(jobs))
    field = rng.choice(_fields(space))
    gene = list(jobs[k])
    low, high = _limits(space, field, jobs[k])
    gene[field] = _new_value(rng, gene[field], low, high)
    if space.estimates == "exact":
        gene[3] = gene[2]
    else:
        gene[3] = max(gene[3], gene[2])
    jobs[k] = (gene[0], gene[1], gene[2], gene[3])
    return tuple(jobs)


@dataclass(frozen=True, slots=True)
class Optimum:
    """An exact offline optimum: its value, a checked schedule and the method."""

    value: float
    schedule: Schedule
    method: str


class OptimumNotProvenError(RuntimeError):
    """CP-SAT stopped without proving optimality: no ratio can be reported."""


def _checked(instance: Instance, schedule: Schedule | None, who: str) -> Schedule:
    if schedule is None:
        raise OptimumNotProvenError(f"{who} returned no schedule")
    violations = check_schedule(instance, schedule)
    if violations:
        raise RuntimeError(f"{who} returned an invalid schedule: {violations[0]}")
    return schedule


def exact_optimum(
    instance: Instance,
    objective: str,
    *,
    time_limit: float = 60.0,
    brute_force_max_jobs: int = BRUTE_FORCE_MAX_JOBS,
) -> Optimum:
    """The proven optimum of ``cmax`` or ``wct`` on a tiny instance.

    Up to ``brute_force_max_jobs`` jobs the brute-force enumerator
    (:func:`optsched.models.rigid.enumerate.solve_exact`) decides; beyond, CP-SAT
    with one worker (its schedule is then deterministic too), and only a
    result with status ``OPTIMAL`` is accepted. The value is recomputed from
    the checked schedule, never read from the solver.

    Raises
    ------
    OptimumNotProvenError
        CP-SAT did not prove optimality within ``time_limit`` seconds.
    """
    from optsched.models import solve
    from optsched.models.rigid.enumerate import solve_exact
    from optsched.result import SolveStatus

    if objective not in OPTIMIZABLE:
        raise ValueError(
            f"objective {objective!r} has no exact optimum here; use one of "
            f"{', '.join(OPTIMIZABLE)}"
        )
    parsed = Objective.parse(objective)
    if len(instance.jobs) <= brute_force_max_jobs:
        result = solve_exact(instance, parsed)
        method = "enumeration"
    else:
        result = solve(
            instance, parsed, backend="cpsat", time_limit=time_limit, workers=1
        )
        method = "cpsat"
        if result.status is not SolveStatus.OPTIMAL:
            raise OptimumNotProvenError(
                f"CP-SAT did not prove the optimum of {instance.name or 'instance'}"
                f" within {time_limit:g} s (status {result.status.value})"
            )
    schedule = _checked(instance, result.schedule, method)
    return Optimum(parsed.value(instance, schedule), schedule, method)


def optimum_key(instance: Instance, objective: str) -> tuple[object, ...]:
    """Cache key of the optimum: it ignores ids, job order and estimates."""
    jobs = tuple(sorted((j.release, j.size, j.runtime) for j in instance.jobs))
    return (objective, instance.processors, instance.machine.allocation, jobs)
