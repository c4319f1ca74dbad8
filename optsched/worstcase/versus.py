"""Minimal instances where one policy is strictly worse than another.

Given policies ``A`` and ``B`` and a measure ``f`` (``cmax``, ``wct`` or
``maxwait``, see :mod:`optsched.worstcase.measure`), find a small instance
``I`` with

.. math:: f(A(I)) > f(B(I)),

i.e. a counterexample to the claim "``A`` is never worse than ``B``":
property-based search compares schedulers without a workload by looking for
the smallest witness of a difference.

Method, deterministic for a given seed:

1. Generation, targeting and shrinking by Hypothesis (:func:`hypothesis.find`
   with ``random.Random(seed)``, no example database, no deadline; the
   difference ``f(A) - f(B)`` is reported with :func:`hypothesis.target`):
   instances are drawn as ``(n, m, jobs)`` in that order, so Hypothesis's
   shrinker, which minimises the underlying choice sequence, favours fewer
   jobs, then fewer processors, then smaller numbers.
2. Only when Hypothesis finds nothing: random restarts plus local search on
   the largest instances of the space, maximising ``f(A) - f(B)`` and
   stopping at the first positive value
   (:func:`local_search_find`). Hypothesis's generation favours tiny and
   boundary values; the interactions that separate backfilling policies
   (a backfilled job delaying a later, non-head job) need a few jobs of
   mid-range sizes, which the climb reaches in hundreds of evaluations where
   thousands of Hypothesis examples did not.
3. A greedy shrinker of our own then enforces the order
   ``(jobs, processors, sum of all numbers)``
   (:func:`~optsched.worstcase.measure.size_key`): it deletes one or two
   jobs, drops a processor, lowers one number (to its minimum, by half, by one) or sorts
   two adjacent jobs, and keeps any change that still separates the
   policies, until no single change does.

The result is *locally minimal*: no deletion of one or two jobs, no
processor fewer and no single decrement keeps the property. It is the
smallest instance found, not a proof that no smaller one exists. When no
example separates the policies within the example budget, the answer is
``None``: evidence, not proof, that ``A`` is never worse.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.schedule import Schedule
from optsched.worstcase.measure import (
    Gene,
    Genome,
    Space,
    check_measure,
    measure_value,
    size_key,
    to_instance,
)

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

EXAMPLES_PER_SECOND = 30
"""Nominal rate turning a budget in seconds into a Hypothesis example count
(fixed, never measured: the count, not the clock, makes a run reproducible).
A Hypothesis example costs a few milliseconds of engine time besides the two
simulations; half of the budget goes to each stage."""

EVALUATIONS_PER_SECOND = 600
"""Nominal local-search evaluations (two simulations each) per second."""

DEFAULT_EXAMPLES = 150
"""Hypothesis examples of the first stage."""

DEFAULT_EVALUATIONS = 3000
"""Local-search evaluations of the second stage."""


def examples_for_budget(budget: float) -> tuple[int, int]:
    """``(examples, evaluations)`` for a budget: half of it to each stage."""
    if budget <= 0:
        raise ValueError(f"budget must be positive, got {budget:g} s")
    half = budget / 2
    return (
        max(1, int(half * EXAMPLES_PER_SECOND)),
        max(1, int(half * EVALUATIONS_PER_SECOND)),
    )


SIMULATION_SEED = 0
"""Seed passed to the simulator (the one ``optsched gap`` uses)."""

Candidate = tuple[int, Genome]
"""``(processors, genome)``."""


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A locally minimal instance where ``policy`` is worse than ``other``."""

    policy: str
    other: str
    objective: str
    instance: Instance
    policy_value: float
    other_value: float
    policy_schedule: Schedule
    other_schedule: Schedule
    seed: int
    shrink_steps: int
    stage: str = "hypothesis"
    evaluations: int = 0

    @property
    def ratio(self) -> float:
        """``policy_value / other_value`` (``inf`` when the other is 0)."""
        if self.other_value == 0:
            return float("inf")
        return self.policy_value / self.other_value

    def summary(self) -> str:
        """One line naming the instance size and both values."""
        return (
            f"{self.policy} worse than {self.other} on {self.objective}: "
            f"m={self.instance.processors} n={len(self.instance.jobs)}, "
            f"{self.policy_value:g} > {self.other_value:g} (ratio "
            f"{self.ratio:.4f}); found by {self.stage}, {self.evaluations} "
            f"simulated pairs, seed {self.seed}"
        )


class Comparator:
    """``(processors, genome) -> policy value > other value``.

    Counts its calls; both policies are simulated with
    :data:`SIMULATION_SEED` and measured from their schedules.
    """

    def __init__(
        self, policy: str, other: str, objective: str, allocation: str = "any"
    ) -> None:
        from optsched.heuristics import simulate

        self._simulate = simulate
        self.policy = policy
        self.other = other
        self.objective = check_measure(objective)
        self.allocation = allocation
        self.calls = 0

    def values(self, instance: Instance) -> tuple[float, float, Schedule, Schedule]:
        """Both values and both schedules on ``instance``."""
        mine = self._simulate(instance, self.policy, seed=SIMULATION_SEED).schedule
        theirs = self._simulate(instance, self.other, seed=SIMULATION_SEED).schedule
        return (
            measure_value(self.objective, instance, mine),
            measure_value(self.objective, instance, theirs),
            mine,
            theirs,
        )

    def difference(self, candidate: Candidate) -> float:
        """``policy value - other value`` (counts one call; 0 without jobs)."""
        self.calls += 1
        processors, genome = candidate
        if not genome:
            return 0.0
        instance = to_instance(genome, processors, allocation=self.allocation)
        mine, theirs, _, _ = self.values(instance)
        return mine - theirs

    def __call__(self, candidate: Candidate) -> bool:
        """``True`` when ``policy`` is strictly worse on the candidate."""
        return self.difference(candidate) > 0


def _strategy(space: Space) -> SearchStrategy[Candidate]:
    from hypothesis import strategies as st

    @st.composite
    def candidates(draw: st.DrawFn) -> Candidate:
        n = draw(st.integers(1, space.jobs))
        m = draw(st.integers(1, space.processors))
        genome: list[Gene] = []
        for _ in range(n):
            release = draw(st.integers(0, space.release_limit))
            size = draw(st.integers(1, m))
            runtime = draw(st.integers(1, space.max_runtime))
            estimate = (
                runtime
                if space.estimates == "exact"
                else draw(st.integers(runtime, space.estimate_limit))
            )
            genome.append((release, size, runtime, estimate))
        return (m, tuple(genome))

    return candidates()


def hypothesis_find(
    compare: Comparator, space: Space, *, seed: int, examples: int
) -> Candidate | None:
    """Hypothesis's smallest candidate where ``policy`` is worse, or ``None``.

    The condition reports the difference ``policy - other`` with
    :func:`hypothesis.target`, so Hypothesis's targeting phase climbs it.
    """
    from hypothesis import HealthCheck, Phase, find, settings, target
    from hypothesis.errors import NoSuchExample

    def worse(candidate: Candidate) -> bool:
        difference = compare.difference(candidate)
        target(difference)
        return difference > 0

    config = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.target, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    try:
        found: Candidate = find(
            _strategy(space), worse, settings=config, random=random.Random(seed)
        )
    except NoSuchExample:
        return None
    return found


class _Found(Exception):
    def __init__(self, genome: Genome) -> None:
        self.genome = genome


def local_search_find(
    compare: Comparator, space: Space, *, seed: int, evaluations: int
) -> Candidate | None:
    """Climb ``policy - other`` on the largest instances of the space.

    Random restarts plus local search (:func:`~optsched.worstcase.search.
    hill_climb`) on ``space.processors`` processors and ``space.jobs`` jobs,
    maximising the difference and stopping at the first positive one.
    Plateaus of equal difference are walked, which is what finds the
    interactions (a backfilled job delaying a later one) that uniform or
    small-biased generation rarely hits.
    """
    from optsched.worstcase.search import hill_climb

    def score(genome: Genome) -> float:
        difference = compare.difference((space.processors, genome))
        if difference > 0:
            raise _Found(genome)
        return difference

    try:
        hill_climb(
            score,
            space,
            random.Random(seed),
            max_evaluations=evaluations,
            deadline=math.inf,
        )
    except _Found as found:
        return space.processors, found.genome
    return None


def _key(candidate: Candidate) -> tuple[int, int, int]:
    processors, genome = candidate
    return size_key(genome, processors)


def _fix_estimate(gene: list[int], space: Space) -> Gene:
    if space.estimates == "exact":
        gene[3] = gene[2]
    else:
        gene[3] = max(gene[3], gene[2])
    return (gene[0], gene[1], gene[2], gene[3])


def _smaller_numbers(value: int, low: int) -> list[int]:
    options = [low, low + (value - low) // 2, value - 1]
    return sorted({v for v in options if low <= v < value})


def neighbours(candidate: Candidate, space: Space) -> Iterator[Candidate]:
    """Single-change simplifications of ``candidate``, all smaller by ``size_key``.

    In order: delete a job; delete two jobs; drop a processor (sizes clamped to the new
    machine); lower one number of one job (release, size, runtime, estimate)
    to its minimum, halfway to it, or by one; swap two adjacent jobs into
    sorted order (the sum is unchanged, so this is tried last and only when
    it sorts, which cannot cycle).
    """
    processors, genome = candidate
    n = len(genome)
    if n > 1:
        for k in range(n):
            yield processors, genome[:k] + genome[k + 1 :]
    if n > 2:
        # Two deletions at once: a difference between policies often needs a
        # pair of jobs (a blocker and the job it blocks) to vanish together.
        for a in range(n):
            for b in range(a + 1, n):
                yield (
                    processors,
                    tuple(g for k, g in enumerate(genome) if k not in (a, b)),
                )
    if processors > 1:
        clamped = tuple(
            _fix_estimate([r, min(q, processors - 1), p, e], space)
            for r, q, p, e in genome
        )
        yield processors - 1, clamped
    lows = (0, 1, 1)
    for k, gene in enumerate(genome):
        for field in range(4 if space.estimates == "over" else 3):
            low = gene[2] if field == 3 else lows[field]
            for value in _smaller_numbers(gene[field], low):
                changed = list(gene)
                changed[field] = value
                yield (
                    processors,
                    (*genome[:k], _fix_estimate(changed, space), *genome[k + 1 :]),
                )


def _sorting_swaps(candidate: Candidate) -> Iterator[Candidate]:
    processors, genome = candidate
    for k in range(len(genome) - 1):
        if genome[k] > genome[k + 1]:
            swapped = (*genome[:k], genome[k + 1], genome[k], *genome[k + 2 :])
            yield processors, swapped


def greedy_shrink(
    candidate: Candidate, holds: Callable[[Candidate], bool], space: Space
) -> tuple[Candidate, int]:
    """Apply the first simplification that keeps ``holds`` until none does.

    Returns the locally minimal candidate and the number of accepted steps.
    Each accepted step lowers ``size_key`` or (swaps) the inversion count of
    the job list, so the loop terminates.
    """
    steps = 0
    changed = True
    while changed:
        changed = False
        for option in neighbours(candidate, space):
            if _key(option) < _key(candidate) and holds(option):
                candidate, steps, changed = option, steps + 1, True
                break
        if changed:
            continue
        for option in _sorting_swaps(candidate):
            if holds(option):
                candidate, steps, changed = option, steps + 1, True
                break
    return candidate, steps


def find_counterexample(
    policy: str,
    other: str,
    objective: str,
    space: Space,
    *,
    seed: int = 0,
    examples: int = DEFAULT_EXAMPLES,
    evaluations: int = DEFAULT_EVALUATIONS,
) -> Counterexample | None:
    """Smallest instance found where ``policy`` is strictly worse than ``other``.

    Parameters
    ----------
    policy, other
        Policy specs of the simulator.
    objective
        ``"cmax"``, ``"wct"`` or ``"maxwait"``.
    space
        ``space.processors`` and ``space.jobs`` are *upper bounds* here;
        ``online``, runtimes and estimates as in the ratio search.
    seed
        Seed of Hypothesis's generation and of the local search.
    examples
        Hypothesis examples (first stage).
    evaluations
        Local-search evaluations (second stage, only when Hypothesis found
        nothing).

    Returns
    -------
    Counterexample or None
        ``None`` when neither stage separates the policies.
    """
    from optsched.extras import require
    from optsched.heuristics import parse_policy

    require("hypothesis", "worstcase", "worst-case --vs SPEC")
    parse_policy(policy)
    parse_policy(other)
    compare = Comparator(policy, other, objective, space.allocation)
    stage = "hypothesis"
    found = hypothesis_find(compare, space, seed=seed, examples=examples)
    if found is None:
        stage = "local search"
        found = local_search_find(compare, space, seed=seed, evaluations=evaluations)
    if found is None:
        return None
    found, steps = greedy_shrink(found, compare, space)
    processors, genome = found
    instance = to_instance(genome, processors, allocation=space.allocation)
    mine, theirs, my_schedule, their_schedule = compare.values(instance)
    for who, schedule in ((policy, my_schedule), (other, their_schedule)):
        violations = check_schedule(instance, schedule)
        if violations:
            raise RuntimeError(f"policy {who}: invalid schedule: {violations[0]}")
    name = (
        f"{policy}-worse-than-{other}-{objective}-m{processors}"
        f"{'c' if space.allocation == 'contiguous' else ''}-n{len(genome)}"
        f"-{mine:g}-vs-{theirs:g}"
    )
    return Counterexample(
        policy=policy,
        other=other,
        objective=objective,
        instance=instance.replace(name=name),
        policy_value=mine,
        other_value=theirs,
        policy_schedule=my_schedule,
        other_schedule=their_schedule,
        seed=seed,
        shrink_steps=steps,
        stage=stage,
        evaluations=compare.calls,
    )
