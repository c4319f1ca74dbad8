"""Adversarial instances: the largest ratio policy / optimum that search finds.

For a policy ``A``, an objective ``f`` (``cmax`` or ``wct``) and a space of
tiny instances ``I`` (:class:`~optsched.worstcase.measure.Space`), the search
maximises the empirical competitive ratio

.. math:: \\rho_A(I) = \\frac{f(A(I))}{f(\\mathrm{OPT}(I))} \\ge 1,

where ``A(I)`` is the policy's simulated schedule and ``OPT(I)`` an exact
offline optimum (brute-force enumeration up to
:data:`~optsched.worstcase.measure.BRUTE_FORCE_MAX_JOBS` jobs, CP-SAT with
proven optimality beyond). A ratio found is a *lower bound* on the policy's
worst-case (competitive) ratio over the space; it is compared with the
theoretical bounds of :mod:`optsched.worstcase.theory`.

Algorithm: random restarts plus local search (stochastic hill climbing).
Each restart draws an instance uniformly from the space, then repeatedly
perturbs one field of one job (size, runtime, release when online, estimate
when estimates may differ) or swaps two jobs; a neighbour replaces the
current instance when its ratio is at least as large (equal ratios are
accepted so that the walk can cross plateaus, which are common because
integer makespans take few values). A restart ends after ``patience``
neighbours in a row without a strict improvement.

Stopping rule and reproducibility
---------------------------------
The search is deterministic for a given seed *as long as it stops on its
evaluation count*: every random choice comes from ``random.Random(seed)``
and the policy and the optimum are deterministic. A wall-clock budget alone
would not be reproducible — a slower or busier machine evaluates fewer
instances and may return another one. So the budget in seconds is turned
into an evaluation count at a fixed nominal rate
(:func:`evaluations_for_budget`, a property of the job count, never a
measured speed), and the clock is only a safety net at
:data:`DEADLINE_FACTOR` times the budget; a search stopped by the clock says
so (``stopped_by == "time"``) and its result must not be quoted as
reproducible.

Ties between instances of equal ratio go to the smaller one (fewer jobs,
then fewer processors, then smaller sum of numbers) so that reports show
readable counterexamples.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from optsched.analysis.gap import InvalidScheduleError, evaluate_policy
from optsched.instance import Instance
from optsched.objective import Objective
from optsched.schedule import Schedule
from optsched.worstcase.measure import (
    BRUTE_FORCE_MAX_JOBS,
    OPTIMIZABLE,
    Genome,
    Space,
    exact_optimum,
    optimum_key,
    perturb,
    random_genome,
    size_key,
    to_instance,
)

DEFAULT_BUDGET = 10.0
"""Default budget in seconds (turned into an evaluation count)."""

DEADLINE_FACTOR = 3.0
"""The wall clock stops a search at this many times its budget (safety net)."""

DEFAULT_PATIENCE = 60
"""Neighbours without strict improvement before a restart."""

SIMULATION_SEED = 0
"""Seed passed to the simulator: the one ``optsched gap`` uses, for replays."""


def nominal_rate(jobs: int) -> float:
    """Evaluations per second assumed when turning a budget into a count.

    A fixed table, not a measurement: the count must not depend on the
    machine. An evaluation is a simulation (a fraction of a millisecond)
    plus, unless cached, an exact optimum: measured on this project's 2-core
    machine, enumeration takes about 5 ms with 4 jobs and 20 ms with 6, a
    CP-SAT proof 20-100 ms with 7-8 jobs.
    """
    if jobs <= 4:
        return 200.0
    if jobs <= BRUTE_FORCE_MAX_JOBS:
        return 40.0
    return 10.0


def evaluations_for_budget(budget: float, jobs: int) -> int:
    """``max(1, floor(budget * nominal_rate(jobs)))``."""
    if budget <= 0:
        raise ValueError(f"budget must be positive, got {budget:g} s")
    return max(1, math.floor(budget * nominal_rate(jobs)))


@dataclass(frozen=True, slots=True)
class WorstCase:
    """The worst instance found for one policy and objective.

    ``ratio = policy_value / optimum_value`` with both values recomputed
    from checked schedules. ``stopped_by`` is ``"evaluations"`` (the
    reproducible stopping rule) or ``"time"`` (the safety net fired).
    """

    policy: str
    objective: str
    space: Space
    instance: Instance
    ratio: float
    policy_value: float
    optimum_value: float
    policy_schedule: Schedule
    optimum_schedule: Schedule
    optimum_method: str
    seed: int
    evaluations: int
    max_evaluations: int
    restarts: int
    elapsed: float
    stopped_by: str

    def summary(self) -> str:
        """One line: policy, objective, size, ratio, values, stopping rule."""
        setting = "online" if self.space.online else "release 0"
        if self.space.allocation != "any":
            setting += f", {self.space.allocation}"
        return (
            f"{self.policy} {self.objective} m={self.instance.processors} "
            f"n={len(self.instance.jobs)} ({setting}): ratio {self.ratio:.4f} = "
            f"{self.policy_value:g} / {self.optimum_value:g} (optimum by "
            f"{self.optimum_method}); seed {self.seed}, {self.evaluations} "
            f"evaluations, {self.restarts} restarts, stopped by "
            f"{self.stopped_by}, {self.elapsed:.1f} s"
        )


class RatioEvaluator:
    """``genome -> ratio`` with the optimum cached on the job multiset.

    Parameters
    ----------
    policy, objective, space
        What is measured.
    optimum_time_limit
        Seconds allowed to CP-SAT per optimum (it must prove optimality).
    """

    def __init__(
        self,
        policy: str,
        objective: str,
        space: Space,
        *,
        optimum_time_limit: float = 60.0,
    ) -> None:
        from optsched.heuristics import simulate
        from optsched.objective import Objective

        self._simulate = simulate
        self._objective = Objective.parse(objective)
        self.policy = policy
        self.objective = objective
        self.space = space
        self.optimum_time_limit = optimum_time_limit
        self.evaluations = 0
        self._optima: dict[tuple[object, ...], float] = {}

    def policy_value(self, instance: Instance) -> float:
        """The policy's objective (simulated with :data:`SIMULATION_SEED`)."""
        result = self._simulate(instance, self.policy, seed=SIMULATION_SEED)
        if result.schedule.killed:
            raise InvalidScheduleError(
                f"policy {self.policy} killed jobs {sorted(result.schedule.killed)}"
                " of a worst-case genome: its value is not comparable"
            )
        return self._objective.value(instance, result.schedule)

    def optimum_value(self, instance: Instance) -> float:
        """The exact optimum, cached."""
        key = optimum_key(instance, self.objective)
        if key not in self._optima:
            self._optima[key] = exact_optimum(
                instance, self.objective, time_limit=self.optimum_time_limit
            ).value
        return self._optima[key]

    def __call__(self, genome: Genome) -> float:
        """Ratio policy / optimum of ``genome`` (counts one evaluation)."""
        self.evaluations += 1
        instance = to_instance(
            genome, self.space.processors, allocation=self.space.allocation
        )
        return self.policy_value(instance) / self.optimum_value(instance)


def _better(
    ratio: float, genome: Genome, best_ratio: float, best: Genome | None, m: int
) -> bool:
    if best is None or ratio > best_ratio:
        return True
    return ratio == best_ratio and size_key(genome, m) < size_key(best, m)


def hill_climb(
    evaluate: Callable[[Genome], float],
    space: Space,
    rng: random.Random,
    *,
    max_evaluations: int,
    deadline: float,
    patience: int = DEFAULT_PATIENCE,
) -> tuple[Genome, float, int, int, str]:
    """Random restarts + local search maximising ``evaluate``.

    Returns the best genome, its value, the evaluations used, the number of
    restarts and the stopping reason (``"evaluations"`` or ``"time"``).
    """
    best: Genome | None = None
    best_ratio = -math.inf
    used = restarts = 0
    stopped_by = "evaluations"
    while used < max_evaluations:
        # At least one evaluation, so that there is always a best instance.
        if used and time.monotonic() > deadline:
            stopped_by = "time"
            break
        restarts += 1
        current = random_genome(space, rng)
        current_ratio = evaluate(current)
        used += 1
        if _better(current_ratio, current, best_ratio, best, space.processors):
            best, best_ratio = current, current_ratio
        stale = 0
        while stale < patience and used < max_evaluations:
            if time.monotonic() > deadline:
                break
            candidate = perturb(current, space, rng)
            ratio = evaluate(candidate)
            used += 1
            stale = 0 if ratio > current_ratio else stale + 1
            if ratio >= current_ratio:
                current, current_ratio = candidate, ratio
            if _better(ratio, candidate, best_ratio, best, space.processors):
                best, best_ratio = candidate, ratio
    assert best is not None
    return best, best_ratio, used, restarts, stopped_by


def search_worst_case(
    policy: str,
    objective: str,
    space: Space,
    *,
    seed: int = 0,
    budget: float | None = None,
    max_evaluations: int | None = None,
    patience: int = DEFAULT_PATIENCE,
    optimum_time_limit: float = 60.0,
) -> WorstCase:
    """Search ``space`` for the instance maximising ``policy`` / optimum.

    Parameters
    ----------
    policy
        Policy spec of the simulator (``"fcfs"``, ``"easy"``, ...).
    objective
        ``"cmax"`` or ``"wct"`` (see :mod:`optsched.worstcase.measure`).
    space
        Machine size, job count, release dates, runtime and estimate ranges.
    seed
        Seed of the search's random choices.
    budget
        Seconds; sets the evaluation count (:func:`evaluations_for_budget`)
        unless ``max_evaluations`` is given, and the safety deadline
        ``DEADLINE_FACTOR * budget``. Default :data:`DEFAULT_BUDGET` without
        ``max_evaluations``, no deadline with it.
    max_evaluations
        Evaluation cap (the reproducible stopping rule).
    patience
        Neighbours without strict improvement before a restart.
    optimum_time_limit
        Seconds allowed to CP-SAT to prove one optimum.

    Returns
    -------
    WorstCase
        The best instance, its ratio and both checked schedules. The final
        numbers are recomputed with :func:`optsched.analysis.gap.evaluate_policy` and
        a fresh exact solve, exactly as ``optsched gap`` computes them.
    """
    from optsched.heuristics import parse_policy

    if objective not in OPTIMIZABLE:
        raise ValueError(
            f"objective {objective!r} cannot be compared with the optimum; use "
            f"one of {', '.join(OPTIMIZABLE)} (maxwait: policy against policy)"
        )
    parse_policy(policy)  # an unknown spec fails here, with the simulator's message
    if max_evaluations is None:
        budget = DEFAULT_BUDGET if budget is None else budget
        cap = evaluations_for_budget(budget, space.jobs)
    else:
        cap = max_evaluations
    deadline_after = math.inf if budget is None else DEADLINE_FACTOR * budget
    if cap < 1:
        raise ValueError(f"evaluation cap must be >= 1, got {cap}")
    evaluate = RatioEvaluator(
        policy, objective, space, optimum_time_limit=optimum_time_limit
    )
    began = time.monotonic()
    genome, _, used, restarts, stopped_by = hill_climb(
        evaluate,
        space,
        random.Random(seed),
        max_evaluations=cap,
        deadline=began + deadline_after,
        patience=patience,
    )
    return _finalise(
        policy,
        objective,
        space,
        genome,
        seed=seed,
        evaluations=used,
        max_evaluations=cap,
        restarts=restarts,
        elapsed=time.monotonic() - began,
        stopped_by=stopped_by,
        optimum_time_limit=optimum_time_limit,
    )


def worst_case_name(
    policy: str, objective: str, instance: Instance, ratio: float
) -> str:
    """Instance name carrying the ratio, e.g. ``fcfs-cmax-m3-n4-ratio1.9091``
    (``...-m3c-...`` on a contiguous machine)."""
    contiguous = "c" if instance.machine.allocation == "contiguous" else ""
    return (
        f"{policy}-{objective}-m{instance.processors}{contiguous}"
        f"-n{len(instance.jobs)}-ratio{ratio:.4f}"
    )


def _finalise(
    policy: str,
    objective: str,
    space: Space,
    genome: Genome,
    *,
    seed: int,
    evaluations: int,
    max_evaluations: int,
    restarts: int,
    elapsed: float,
    stopped_by: str,
    optimum_time_limit: float,
) -> WorstCase:
    instance = to_instance(genome, space.processors, allocation=space.allocation)
    outcome = evaluate_policy(instance, policy, [objective], seed=SIMULATION_SEED)
    if not outcome.complete:
        # Genomes have exact estimates, so no policy kills a job; a schedule
        # that did less work would not be comparable with the optimum.
        raise InvalidScheduleError(
            f"policy {policy} killed {outcome.killed} job(s) of a worst-case genome"
        )
    value = outcome.values[Objective.parse(objective).label]
    optimum = exact_optimum(instance, objective, time_limit=optimum_time_limit)
    ratio = value / optimum.value
    instance = instance.replace(
        name=worst_case_name(policy, objective, instance, ratio)
    )
    return WorstCase(
        policy=policy,
        objective=objective,
        space=space,
        instance=instance,
        ratio=ratio,
        policy_value=value,
        optimum_value=optimum.value,
        policy_schedule=outcome.schedule,
        optimum_schedule=optimum.schedule,
        optimum_method=optimum.method,
        seed=seed,
        evaluations=evaluations,
        max_evaluations=max_evaluations,
        restarts=restarts,
        elapsed=elapsed,
        stopped_by=stopped_by,
    )
