r"""Rescaling: a local search over moldable jobs' requests around a rigid scheduler.

B. Kalthoff, "Einsatz von algorithmischen Skeletten im Scheduling massiv
paralleler Systeme", PhD thesis, Universität Paderborn, 2002, Ch. 5.4.3
(Fig. 5.9) and Ch. 6.5 (seed 001 §5.5 and §5.10). The inner scheduler sees
rigid jobs only; a transformation module changes the requests
``(P_i, h_i)`` of the *scalable* (moldable) jobs and keeps a change when
the inner scheduler's schedule costs less (Fig. 5.9)::

    compute the initial schedule S;  S_alt = S
    iterate k times:
        select a scalable job J_i; give it a new processor count and run time
        compute the new schedule S_neu
        if cost(S_neu) < cost(S_alt): S_alt = S_neu
    output S_alt

Solution and evaluation
-----------------------
A solution is a vector of mode indices, one per *scalable* job (a job with
at least two modes, in instance order), each an index into ``job.modes``.
The initial vector is every job's requested mode. Evaluating a vector runs
the inner scheduler on the instance whose scalable jobs are fixed to the
chosen modes (:meth:`~optsched.instance.Job.rigid`: the scheduler sees the
rigid job model the thesis describes, and works unchanged) and computes the
cost from the schedule on the *original* instance (weights are the
original jobs'): by default the thesis's weighted response
``sum_j w_j (C_j - r_j)`` (:class:`~optsched.objective.Objective`
``wct:instance:relative``), or any optsched objective.

A *move* picks one scalable job uniformly at random and gives it one of its
other modes, uniformly at random.

Budget and counting
-------------------
``budget`` is the number of *iterations* (the thesis counts iterations):
each evaluates one vector, and every one counts, also when the vector was
seen before (its cost then comes from a cache and the inner scheduler does
not run again; :attr:`RescalingResult.inner_calls` counts the real runs).
The initial evaluation is not counted (it is iteration 0). The cost at a
checkpoint ``k`` is the cost of the best vector among the initial one and
the first ``k`` evaluated ones, so one run with checkpoints
``(100, 1000, ..., 10000)`` gives every column of Table 6.5.

Engines (seed 001 §5.10)
------------------------
``hc`` (hill climbing): from the current vector, one move; keep the new
vector if its cost is strictly lower, else restore the old one.

``deluge`` (great deluge, G. Dueck, "New optimization heuristics: the
great deluge algorithm and the record-to-record travel", J. Comput. Phys.
104, 1993, adapted to minimisation with a falling threshold), the thesis's
steps verbatim:

1. threshold = 1.5 x the cost of the unoptimised schedule;
2. decrement = threshold / #iterations (the budget);
3. randomly modify one job's request (one move from the current vector);
4. compute the new schedule;
5. if new cost < threshold, lower the threshold by the decrement (and keep
   the modification); otherwise undo the modification;
6. if best found > threshold, set threshold = best found;
7. if new cost < best found, set best found = new cost;
8. increment the counter;
9. stop at the budget and output the best found, else go to 3.

"Best found" starts at the initial cost. Because of step 6 the threshold
never falls below the best found, so a new best (step 7) is always an
accepted vector.

``ga`` (genetic algorithm without crossover: clone and mutate; the thesis
gives no selection rule, this is ours), population ``P = 50``:

- Generation 0 (``init="random"``, as in the thesis's "random generation
  0"): the initial vector and ``P - 1`` vectors with every mode index
  uniform, each evaluated and counted in the budget. ``init="initial"``:
  ``P`` copies of the initial vector (nothing to evaluate).
- Each generation, the population sorted by cost (stable: earlier entries
  win ties); every individual, best first, clones itself and mutates the
  clone by one move, and the clone is evaluated (one iteration each; when
  the budget runs out inside a generation, only the best individuals have
  children). The ``P`` best of children and parents survive (``(P + P)``
  elitist truncation; a stable sort with the children listed first, so a
  child beats a parent of equal cost and the population drifts across
  plateaus).
- So the budget is split across the population: ``B`` iterations give
  ``(B - P + 1) / P`` generations (``init="random"``), e.g. 200 each for
  ``B = 10000``, as the thesis's GA column.

Every engine is a pure function of a cost function ``f(vector) -> cost``,
the number of modes per position, the budget and a
:class:`numpy.random.Generator` (:func:`hill_climbing`,
:func:`great_deluge`, :func:`genetic`), so a stub cost function tests it.

Spec
----
``rescale[:key=value,...]`` with ``search=hc|deluge|ga`` (default
``deluge``; aliases ``hill``, ``gd``, ``sintflut``, ``genetic``),
``budget=N`` (1000), ``inner=SPEC`` (``pbi``), ``seed=N`` (0),
``objective=SPEC`` (weighted response), and for ``ga`` ``population=N``
(50) and ``init=random|initial``. An inner policy spec contains ``:`` and
``,`` itself: write ``/`` for its first ``:`` and ``;`` for its commas
(``inner=pbi/order=literal``, ``inner=easy/order=spt;oracle``); an
objective is written with ``/`` for ``:`` (``objective=wct/one/relative``).
Inner schedulers: every spec of :func:`optsched.heuristics.engine.runner.simulate`
(``fcfs``, ``easy``, ``pbi``, ``pbi:order=literal``, ``psrs``, ``ffdh``,
...), and the offline algorithms ``offline:NAME`` of
:mod:`optsched.heuristics.rigid.offline`: the shelves ``offline:ffdh``,
``offline:nfdh`` and the list-scheduling orders (``offline:wspt``,
``offline:lpt``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from optsched.heuristics.engine.standalone import Scheduler, policy_scheduler
from optsched.heuristics.spec import (
    Option,
    Options,
    SpecParts,
    integer,
    join_spec,
    split_spec,
)
from optsched.instance import Instance, Job, Mode
from optsched.objective import Objective
from optsched.schedule import Schedule

__all__ = [
    "DEFAULT_OBJECTIVE",
    "INITS",
    "RESCALE_NAME",
    "SEARCHES",
    "RescalingResult",
    "SearchTrace",
    "genetic",
    "great_deluge",
    "hill_climbing",
    "inner_scheduler",
    "parse_rescale",
    "rescale",
    "rescale_spec",
    "run_rescale",
]

RESCALE_NAME = "rescale"
"""Policy name of the rescaling search (``rescale:search=deluge,...``)."""

SEARCHES: tuple[str, ...] = ("hc", "deluge", "ga")
"""Search engines: hill climbing, great deluge, GA without crossover."""

_SEARCH_ALIASES = {
    "hc": "hc",
    "hill": "hc",
    "hillclimbing": "hc",
    "hill-climbing": "hc",
    "deluge": "deluge",
    "gd": "deluge",
    "sintflut": "deluge",
    "great-deluge": "deluge",
    "ga": "ga",
    "genetic": "ga",
}

INITS: tuple[str, ...] = ("random", "initial")
"""Generation 0 of the GA: random vectors, or copies of the initial one."""

DEFAULT_OBJECTIVE = Objective("wct", "instance", relative=True)
"""The thesis's weighted response ``sum_j w_j (C_j - r_j)``."""

DELUGE_FACTOR = 1.5
"""Initial threshold of the great deluge, times the initial cost."""

POPULATION = 50
"""Population of the thesis's GA."""

CostFunction = Callable[[tuple[int, ...]], float]

# --------------------------------------------------------------------------
# Engines on a cost function
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchTrace:
    """What an engine found.

    Attributes
    ----------
    best, best_cost
        The best vector and its cost (the initial one if nothing beats it).
    initial_cost
        Cost of the start vector (iteration 0, not counted).
    checkpoints
        ``{k: best cost after k iterations}`` for each asked ``k``.
    evaluations
        Iterations done (the budget, unless no move exists).
    current
        Per iteration, the cost of the current vector after it (hill
        climbing, deluge) or of the population's best (GA).
    thresholds
        Deluge only: the threshold after each iteration (steps 5 and 6).
    population
        GA only: the final population size.
    """

    best: tuple[int, ...]
    best_cost: float
    initial_cost: float
    checkpoints: dict[int, float]
    evaluations: int
    current: tuple[float, ...] = ()
    thresholds: tuple[float, ...] = ()
    population: int | None = None


@dataclass
class _Counter:
    """Counts iterations, keeps the best vector, records checkpoints."""

    cost: CostFunction
    budget: int
    start: tuple[int, ...]
    marks: frozenset[int]
    best: tuple[int, ...] = ()
    best_cost: float = math.inf
    initial_cost: float = math.inf
    done: int = 0
    seen: dict[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.initial_cost = self.best_cost = float(self.cost(self.start))
        self.best = self.start
        if 0 in self.marks:
            self.seen[0] = self.best_cost

    @property
    def left(self) -> int:
        return self.budget - self.done

    def __call__(self, vector: tuple[int, ...]) -> float:
        value = float(self.cost(vector))
        self.done += 1
        if value < self.best_cost:
            self.best, self.best_cost = vector, value
        if self.done in self.marks:
            self.seen[self.done] = self.best_cost
        return value

    def trace(self, **extra: object) -> SearchTrace:
        # Without a position to move nothing is evaluated: every checkpoint
        # of the asked budget holds the initial cost.
        for mark in self.marks - self.seen.keys():
            self.seen[mark] = self.best_cost
        return SearchTrace(
            best=self.best,
            best_cost=self.best_cost,
            initial_cost=self.initial_cost,
            checkpoints=dict(sorted(self.seen.items())),
            evaluations=self.done,
            **extra,  # type: ignore[arg-type]
        )


def _counter(
    start: Sequence[int],
    choices: Sequence[int],
    cost: CostFunction,
    budget: int,
    checkpoints: Iterable[int],
) -> _Counter:
    if len(start) != len(choices):
        raise ValueError("start vector and choices differ in length")
    if any(c < 2 for c in choices):
        raise ValueError("every position needs at least two modes to move")
    if any(not 0 <= s < c for s, c in zip(start, choices, strict=True)):
        raise ValueError("start vector has an index outside its modes")
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    marks = frozenset(checkpoints)
    beyond = [k for k in marks if k < 0 or k > budget]
    if beyond:
        raise ValueError(f"checkpoint {min(beyond)} lies outside 0..budget ({budget})")
    # No position to move: nothing to search (the budget is not spent).
    return _Counter(cost, budget if choices else 0, tuple(start), marks)


def _move(
    vector: tuple[int, ...], choices: Sequence[int], rng: np.random.Generator
) -> tuple[int, ...]:
    """One position uniformly, then one of its other indices uniformly."""
    k = int(rng.integers(len(choices)))
    new = int(rng.integers(choices[k] - 1))
    if new >= vector[k]:
        new += 1
    return (*vector[:k], new, *vector[k + 1 :])


def hill_climbing(
    start: Sequence[int],
    choices: Sequence[int],
    cost: CostFunction,
    budget: int,
    rng: np.random.Generator,
    checkpoints: Iterable[int] = (),
) -> SearchTrace:
    """Hill climbing (module docstring): a move is kept iff strictly better.

    Parameters
    ----------
    start
        Initial vector (``0 <= start[k] < choices[k]``).
    choices
        Number of modes of each position (each at least 2).
    cost
        Cost of a vector (lower is better).
    budget
        Iterations (evaluations after the initial one).
    rng
        Source of the moves.
    checkpoints
        Iteration counts in ``0..budget`` at which to record the best cost.
    """
    count = _counter(start, choices, cost, budget, checkpoints)
    vector, value = count.start, count.initial_cost
    current: list[float] = []
    while count.left > 0:
        candidate = _move(vector, choices, rng)
        new = count(candidate)
        if new < value:
            vector, value = candidate, new
        current.append(value)
    return count.trace(current=tuple(current))


def great_deluge(
    start: Sequence[int],
    choices: Sequence[int],
    cost: CostFunction,
    budget: int,
    rng: np.random.Generator,
    checkpoints: Iterable[int] = (),
    *,
    factor: float = DELUGE_FACTOR,
) -> SearchTrace:
    """Great deluge, the thesis's 9 steps (module docstring).

    Parameters as :func:`hill_climbing`; ``factor`` is the initial threshold
    over the initial cost (1.5 in the thesis).
    """
    count = _counter(start, choices, cost, budget, checkpoints)
    vector, value = count.start, count.initial_cost
    threshold = factor * count.initial_cost  # step 1
    decrement = threshold / budget if budget else 0.0  # step 2
    best = count.initial_cost
    current: list[float] = []
    thresholds: list[float] = []
    while count.left > 0:  # steps 8-9
        candidate = _move(vector, choices, rng)  # step 3
        new = count(candidate)  # step 4
        if new < threshold:  # step 5
            threshold -= decrement
            vector, value = candidate, new
        if best > threshold:  # step 6
            threshold = best
        best = min(best, new)  # step 7 (new < best only if accepted)
        current.append(value)
        thresholds.append(threshold)
    return count.trace(current=tuple(current), thresholds=tuple(thresholds))


def genetic(
    start: Sequence[int],
    choices: Sequence[int],
    cost: CostFunction,
    budget: int,
    rng: np.random.Generator,
    checkpoints: Iterable[int] = (),
    *,
    population: int = POPULATION,
    init: str = "random",
) -> SearchTrace:
    """GA without crossover: clone, mutate, ``(P + P)`` truncation.

    Parameters as :func:`hill_climbing`, plus the population size ``P``
    and generation 0 (``init``: ``"random"`` or ``"initial"``); the rules
    are in the module docstring.
    """
    if population < 1:
        raise ValueError(f"population must be >= 1, got {population}")
    if init not in INITS:
        raise ValueError(f"init {init!r} is not one of {', '.join(INITS)}")
    count = _counter(start, choices, cost, budget, checkpoints)
    pop: list[tuple[float, tuple[int, ...]]] = [(count.initial_cost, count.start)]
    current: list[float] = []
    if init == "initial":
        pop *= population
    else:
        while len(pop) < population and count.left > 0:
            vector = tuple(int(rng.integers(c)) for c in choices)
            pop.append((count(vector), vector))
            current.append(count.best_cost)
    while count.left > 0:
        pop.sort(key=lambda entry: entry[0])
        children: list[tuple[float, tuple[int, ...]]] = []
        for _, parent in pop:
            if count.left == 0:
                break
            child = _move(parent, choices, rng)
            children.append((count(child), child))
            current.append(count.best_cost)
        pop = sorted(children + pop, key=lambda entry: entry[0])[:population]
    return count.trace(current=tuple(current), population=len(pop))


_ENGINES: dict[str, Callable[..., SearchTrace]] = {
    "hc": hill_climbing,
    "deluge": great_deluge,
    "ga": genetic,
}


# --------------------------------------------------------------------------
# Inner schedulers and evaluation
# --------------------------------------------------------------------------


def inner_scheduler(spec: str) -> Scheduler:
    """The function ``instance -> schedule`` a spec names.

    ``offline:NAME`` is an offline algorithm of
    :mod:`optsched.heuristics.rigid.offline` (``ffdh``, ``nfdh`` or a list order
    of :data:`~optsched.heuristics.rigid.offline.ORDERS`, the latter for the
    objective ``wct``); anything else is a policy spec of
    :func:`~optsched.heuristics.engine.runner.simulate` (checked here).

    Raises
    ------
    ValueError
        Unknown offline name or policy spec.
    """
    from optsched.heuristics.rigid import offline
    from optsched.packing import list_schedule

    name, _, rest = spec.strip().partition(":")
    if name.strip().lower() == "offline":
        algorithm = rest.strip().lower()
        if algorithm in offline.SHELVES:
            return offline.SHELVES[algorithm]
        if algorithm in offline.ORDERS:
            wct = Objective("wct", "instance")

            def listed(instance: Instance) -> Schedule:
                order = offline.order_by(instance, wct, algorithm)
                return list_schedule(instance, order, producer=f"list:{algorithm}")

            return listed
        valid = ", ".join([*offline.SHELVES, *offline.ORDERS])
        raise ValueError(f"unknown offline algorithm {rest.strip()!r}; valid: {valid}")
    return policy_scheduler(spec)


class _Evaluator:
    """Vectors of mode indices to schedules and costs (cached by vector)."""

    def __init__(
        self, instance: Instance, schedule: Scheduler, objective: Objective
    ) -> None:
        self.instance = instance
        self.run = schedule
        self.objective = objective
        self.jobs = [job.rigid() for job in instance.jobs]
        self.positions = [
            k for k, job in enumerate(instance.jobs) if len(job.modes) > 1
        ]
        moldable = [instance.jobs[k] for k in self.positions]
        self.choices = [len(job.modes) for job in moldable]
        self.start = tuple(
            job.modes.index(Mode(job.size, job.runtime, job.estimate))
            for job in moldable
        )
        self.fixed: dict[tuple[int, int], Job] = {}
        self.cache: dict[tuple[int, ...], float] = {}
        self.calls = 0

    def resolved(self, vector: tuple[int, ...]) -> Instance:
        """The instance with every job rigid, scalable ones on their chosen mode."""
        jobs = list(self.jobs)
        for k, index in zip(self.positions, vector, strict=True):
            key = (k, index)
            if key not in self.fixed:
                job = self.instance.jobs[k]
                self.fixed[key] = job.rigid(job.modes[index])
            jobs[k] = self.fixed[key]
        return self.instance.with_jobs(jobs)

    def schedule(self, vector: tuple[int, ...]) -> Schedule:
        self.calls += 1
        return self.run(self.resolved(vector))

    def cost(self, vector: tuple[int, ...]) -> float:
        if vector not in self.cache:
            schedule = self.schedule(vector)
            self.cache[vector] = float(self.objective.value(self.instance, schedule))
        return self.cache[vector]

    def modes(self, vector: tuple[int, ...]) -> dict[int, Mode]:
        """Chosen mode of every job with modes (requested one if unscalable)."""
        chosen = {
            job.id: job.modes[0] for job in self.instance.jobs if len(job.modes) == 1
        }
        for k, index in zip(self.positions, vector, strict=True):
            job = self.instance.jobs[k]
            chosen[job.id] = job.modes[index]
        return dict(sorted(chosen.items()))


# --------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RescalingResult:
    """A rescaling run (see :func:`rescale`).

    Attributes
    ----------
    schedule
        The inner scheduler's schedule of the best vector (producer: the
        canonical ``rescale:...`` spec); every moldable job runs on the
        processors of its chosen mode.
    instance
        The original instance with every job fixed to its chosen mode
        (rigid). The schedule is valid on it and on the original instance
        (checker rule 8: a preempted moldable job runs all its pieces in
        one mode).
    modes
        ``{job id: chosen mode}`` for every job with modes.
    initial_cost, best_cost
        Cost before the search (requested modes) and of the best vector.
    checkpoints
        ``{k: best cost after k iterations}``.
    evaluations
        Iterations done (every one counted, cached or not).
    inner_calls
        Runs of the inner scheduler (distinct vectors, the initial one and
        the final rebuild of the best included).
    spec
        The canonical spec of the run.
    """

    schedule: Schedule
    instance: Instance
    modes: dict[int, Mode]
    initial_cost: float
    best_cost: float
    checkpoints: dict[int, float]
    evaluations: int
    inner_calls: int
    spec: str


def rescale(
    instance: Instance,
    inner: str = "pbi",
    search: str = "deluge",
    budget: int = 1000,
    seed: int | np.random.Generator = 0,
    objective: Objective | str | None = None,
    checkpoints: Iterable[int] = (),
    *,
    population: int = POPULATION,
    init: str = "random",
) -> RescalingResult:
    """Search the modes of the scalable jobs around ``inner`` (Fig. 5.9).

    Parameters
    ----------
    instance
        Jobs with modes are scalable (those with one mode have no choice);
        rigid jobs stay as they are.
    inner
        Inner scheduler: a policy spec of
        :func:`~optsched.heuristics.engine.runner.simulate` or ``offline:NAME``
        (:func:`inner_scheduler`).
    search
        ``hc``, ``deluge`` or ``ga`` (aliases in :data:`_SEARCH_ALIASES`).
    budget
        Iterations after the initial evaluation (module docstring).
    seed
        Seed of a :func:`numpy.random.default_rng`, or a generator.
    objective
        Cost to minimise (default :data:`DEFAULT_OBJECTIVE`, the weighted
        response ``sum_j w_j (C_j - r_j)``), computed on ``instance``.
    checkpoints
        Iteration counts in ``0..budget`` whose best cost to record.
    population, init
        GA only (:func:`genetic`).

    Returns
    -------
    RescalingResult

    Raises
    ------
    ValueError
        Unknown search, inner scheduler or objective; negative budget;
        checkpoints outside ``0..budget``.
    """
    engine = _canonical_search(search)
    goal = DEFAULT_OBJECTIVE if objective is None else Objective.parse(objective)
    evaluator = _Evaluator(instance, inner_scheduler(inner), goal)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    options = {"population": population, "init": init} if engine == "ga" else {}
    trace = _ENGINES[engine](
        evaluator.start,
        evaluator.choices,
        evaluator.cost,
        budget,
        rng,
        checkpoints,
        **options,
    )
    spec = rescale_spec(
        search=engine,
        budget=budget,
        inner=inner,
        seed=seed if isinstance(seed, int) else None,
        objective=None if objective is None else goal.label,
        **options,  # type: ignore[arg-type]
    )
    best = evaluator.schedule(trace.best)
    if float(goal.value(instance, best)) != trace.best_cost:
        raise RuntimeError(  # an inner scheduler that is not deterministic
            f"inner scheduler {inner!r} gave another cost on the best vector again"
        )
    return RescalingResult(
        schedule=Schedule(best.placements, spec, best.killed),
        instance=evaluator.resolved(trace.best),
        modes=evaluator.modes(trace.best),
        initial_cost=trace.initial_cost,
        best_cost=trace.best_cost,
        checkpoints=trace.checkpoints,
        evaluations=trace.evaluations,
        inner_calls=evaluator.calls,
        spec=spec,
    )


def _canonical_search(search: str) -> str:
    name = _SEARCH_ALIASES.get(search.strip().lower())
    if name is None:
        raise ValueError(
            f"unknown search {search!r}; valid: {', '.join(_SEARCH_ALIASES)}"
        )
    return name


# --------------------------------------------------------------------------
# Spec
# --------------------------------------------------------------------------

_KEYS = ("search", "budget", "inner", "seed", "objective", "population", "init")


def _inner_from_spec(text: str) -> str:
    """``pbi/order=literal`` -> ``pbi:order=literal``; ``;`` -> ``,``."""
    head, slash, tail = text.partition("/")
    return head + (":" + tail.replace(";", ",") if slash else "")


def _inner_to_spec(inner: str) -> str:
    head, colon, tail = inner.strip().partition(":")
    return head + ("/" + tail.replace(",", ";") if colon else "")


def _read_inner(key: str, value: str) -> str:
    inner = _inner_from_spec(value)
    inner_scheduler(inner)  # refuse a bad inner spec now
    return inner


def _read_init(key: str, value: str) -> str:
    init = value.lower()
    if init not in INITS:
        raise ValueError(f"init {init!r} is not one of {', '.join(INITS)}")
    return init


def _read_objective(key: str, value: str) -> str:
    return Objective.parse(value.replace("/", ":")).label


RESCALE_OPTIONS = Options(
    (
        Option("search", lambda key, v: _canonical_search(v), "deluge", always=True),
        Option("budget", lambda key, v: integer(key, v, 0), 1000, always=True),
        Option("inner", _read_inner, "pbi", _inner_to_spec, always=True),
        Option("seed", lambda key, v: integer(key, v, 0), 0, always=True),
        Option(
            "objective", _read_objective, write=lambda label: label.replace(":", "/")
        ),
        Option(
            "population", lambda key, v: integer(key, v, 1), POPULATION, always=True
        ),
        Option("init", _read_init, "random", always=True),
    )
)
"""The options of a rescaling spec, in canonical order: :func:`parse_rescale`
reads them, :func:`rescale_spec` writes every one that is set, at its
default too (``/`` and ``;`` stand for the inner spec's ``:`` and ``,``)."""

_GA_ONLY = ("population", "init")


def parse_rescale(spec: str | SpecParts) -> dict[str, object]:
    """The keyword arguments of :func:`rescale` a spec (or its tokens,
    :func:`~optsched.heuristics.spec.split_spec`) names.

    ``rescale[:search=S,budget=N,inner=SPEC,seed=N,objective=OBJ,
    population=N,init=I]`` (module docstring; ``/`` and ``;`` stand for
    the inner spec's ``:`` and ``,``). Missing keys take the defaults;
    the result holds every key (``objective`` ``None`` for the default;
    ``population`` and ``init`` only with ``search=ga``).

    Raises
    ------
    ValueError
        One line naming the spec and the problem: another name, an unknown
        or repeated key, a key without value, a bad number, search, inner
        scheduler, objective or GA option.
    """
    parts = split_spec(spec)
    if parts.name != RESCALE_NAME:
        raise ValueError(f"spec {parts.text!r} is not a {RESCALE_NAME} spec")
    RESCALE_OPTIONS.check(parts, _KEYS)
    params = parts.options()
    try:
        # The GA's options (population, init) depend on the search.
        search = params.get("search")
        ga = search is not None and _canonical_search(search) == "ga"
        if not ga and any(key in params for key in _GA_ONLY):
            raise ValueError("population and init apply to search=ga only")
        return RESCALE_OPTIONS.read(parts, _KEYS if ga else _KEYS[:5])
    except ValueError as error:
        raise parts.error(str(error)) from None


def rescale_spec(
    *,
    search: str = "deluge",
    budget: int = 1000,
    inner: str = "pbi",
    seed: int | None = 0,
    objective: str | None = None,
    population: int | None = None,
    init: str | None = None,
) -> str:
    """The canonical spec of a run (``parse_rescale`` reads it back): the
    options of :data:`RESCALE_OPTIONS` that are set."""
    values = {
        "search": _canonical_search(search),
        "budget": budget,
        "inner": inner,
        "seed": seed,
        "objective": objective,
        "population": population,
        "init": init,
    }
    return join_spec(RESCALE_NAME, RESCALE_OPTIONS.written(values))


def run_rescale(instance: Instance, spec: str) -> Schedule:
    """The schedule of :func:`rescale` with the options of ``spec``."""
    return rescale(instance, **parse_rescale(spec)).schedule  # type: ignore[arg-type]
