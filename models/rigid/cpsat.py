r"""OR-Tools CP-SAT back-end: exact makespan and weighted completion time.

Model (rigid jobs ``j`` with release ``r_j``, size ``q_j``, run time ``p_j``,
weight ``w_j`` on ``m`` identical processors; busy blocks ``b`` fixed):

.. math::

    S_j \in [r_j, D_j - p_j],\qquad I_j = [S_j, S_j + p_j)

    \text{any:}\quad \mathrm{Cumulative}(\{(I_j, q_j)\} \cup
        \{(B_b, q_b)\},\ m)

    \text{contiguous:}\quad \mathrm{NoOverlap2D}(\{I_j \times [O_j, O_j + q_j)\}
        \cup \{B_b \times [o_b, o_b + q_b)\}),\quad O_j \in [0, m - q_j]

    \text{cmax:}\ \min C,\ S_j + p_j \le C,\ C \in [\lceil LB \rceil, UB]
    \qquad \text{wct:}\ \min \sum_j \tilde w_j (S_j + p_j)

``D_j`` comes from :func:`~optsched.models.common.solution.completion_deadlines`
(for cmax the heuristic's makespan; for wct a horizon every optimal schedule
meets). Contiguous models also get the cumulative constraint as a redundant
relaxation (it is implied by NoOverlap2D and strengthens propagation).
Cumulative scheduling with CP: Baptiste, Le Pape, Nuijten, *Constraint-Based
Scheduling*, Kluwer 2001; strip packing as NoOverlap2D: Beldiceanu and
Carlsson 2001.

Weights (wct): CP-SAT needs integer coefficients. When every ``w_j`` is an
integer and ``sum_j w_j * max_j D_j < 2**50`` the weights are used as they are
(``\tilde w_j = w_j``, exact). Otherwise ``\tilde w_j = \lfloor s w_j \rfloor``
with ``s = min(2**50 / (sum_j w_j max_j D_j), 2**20 / max_j w_j)``; since
``\tilde w_j \le s w_j`` and ``C_j \ge 0``, the solver's bound ``B`` on
``sum_j \tilde w_j C_j`` gives the valid bound ``B / s`` on
``sum_j w_j C_j``. The model then optimises a slightly different objective,
so "optimal" for it is only "optimal within rounding" for the true one: the
objective is recomputed exactly from the schedule and the status follows the
common rule (objective equal to the best lower bound).

Symmetry breaking: jobs with the same release, size, run time (and weight
for wct) are interchangeable: swapping the placements of two of them keeps a
schedule feasible and its objective unchanged. Any schedule can thus be
relabelled so that, within such a group (in id order), starts are
non-decreasing, and on contiguous machines equal starts have non-decreasing
offsets (sort the group's ``(S, O)`` pairs lexicographically and hand them
out in id order). The constraints ``S_a <= S_b`` and ``S_a = S_b =>
O_a <= O_b`` therefore keep at least one optimal schedule. The hint is
relabelled the same way so it stays feasible.

Parameters: with few workers CP-SAT runs no worker that raises the
objective's lower bound, so its bound stays at the presolve value. With two
or more workers we add the ``objective_lb_search`` and
``objective_shaving`` sub-solvers (``extra_subsolvers``) and raise
``num_full_subsolvers`` so that they run beside the main ``default_lp``
search rather than instead of it; see benchmarks/README.md for the measured
effect. On two workers this leaves no thread to CP-SAT's LNS workers, so a
``wct`` search there first runs ``default_lp`` and ``max_lp`` for a fifth of
the time to find schedules, then the bound-raising pair hinted with the best
one (:func:`first_phase`, issue 30).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import signal
import sys
import threading
import time
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ortools.sat.python import cp_model

from optsched.families import exact_plan
from optsched.instance import Instance, Job
from optsched.models.common.relaxation import solve_planned
from optsched.models.common.settings import (
    BOUND_SUBSOLVERS,
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    LogSink,
    SolverSettings,
)
from optsched.models.common.solution import (
    Candidate,
    assign_processors,
    checked_candidate,
    completion_deadlines,
    round_up_bound,
)
from optsched.models.common.template import (
    ModelInputs,
    Solving,
    conclude,
    on_time,
    prepare,
)
from optsched.models.rigid import wct_decompose
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.models.rigid.tiling import strengthen as tiling_strengthen
from optsched.objective import Objective
from optsched.packing import contiguous_placement
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Schedule

Found = TypeVar("Found")
"""What a search reads from a solution (see :func:`run_search`)."""

BACKEND = "cpsat"

__all__ = ["BACKEND", "BOUND_SUBSOLVERS", "LogSink", "solve"]

_EXACT_LIMIT = 2**50
_MAX_SCALED_WEIGHT = 2**20


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    log: bool | LogSink = False,
    symmetry: bool = True,
    cliques: bool = False,
    bound_domain: bool = True,
    bound_subsolvers: Sequence[str] = BOUND_SUBSOLVERS,
    seed: int = 0,
    parameters: Mapping[str, Any] | None = None,
    decompose: bool = True,
) -> Result:
    """Solve ``instance`` with CP-SAT; always return a checked schedule.

    Parameters
    ----------
    instance
        The problem (``any`` or ``contiguous`` allocation, busy blocks).
    objective
        :class:`Objective` or its text form (``"cmax"``, ``"wct:size"``).
    time_limit
        Seconds for the whole call (bounds and heuristics included).
    workers
        CP-SAT worker threads.
    incumbents
        Starting schedules (:class:`~optsched.result.Incumbent`): the
        policies' and heuristics' schedules of the analysis pipeline, or a
        user hint. Each is checked; the best feasible one is the solver's
        hint and the fallback upper bound; the others are rejected with a
        reason (:attr:`Result.rejected`).
    log
        ``True`` to print the search log, or a function receiving each line.
    symmetry
        Add the symmetry-breaking constraints for identical jobs.
    cliques
        Add redundant no-overlap constraints over jobs that pairwise cannot
        run together (see :func:`_disjunctive_cliques`). Off by default: on
        the bundled KTH windows it helped one proof and slowed another.
    bound_domain
        Start the makespan variable's domain at the best closed-form bound
        (``False`` only to measure the solver's own bound).
    bound_subsolvers
        Extra CP-SAT sub-solvers (default: bound-raising ones; ``()`` for
        CP-SAT's own portfolio only).
    seed
        CP-SAT random seed.
    parameters
        Further ``SatParameters`` fields, e.g. ``{"use_objective_shaving_search":
        True}``.
    decompose
        ``wct``: solve the window block by block first
        (:mod:`optsched.models.rigid.wct_decompose`); ``False`` for one search.

    Returns
    -------
    Result
        ``lower_bound`` is the maximum of the closed-form bounds and the
        solver's bound (and, for ``wct``, the ``decomposition`` bound: the
        sum of the release blocks' bounds, with ``params["decomposition"]``
        giving the block sizes, how many were proven and whether their
        union was feasible; for strip packing, the ``tiling`` bound of the
        heights refuted, with ``params["tiling"]`` listing each decision);
        ``upper_bound_source`` is ``"cpsat"`` when the solver improved on
        every heuristic.

    Notes
    -----
    An instance with moldable or malleable jobs is solved by
    :func:`optsched.models.moldable.model.solve` (the moldable optimum; malleable
    jobs as moldable ones, see there). A machine with node speeds goes to
    :func:`optsched.models.topology.speeds.solve`, one with SMP nodes to
    :func:`optsched.models.topology.smp.solve` (their redundant cliques are on by
    default, ``cliques`` is not forwarded). A site calendar or job chains go
    to :func:`optsched.models.site.model.solve` (``cliques`` not forwarded).
    """
    settings = SolverSettings.of(locals())
    plan = exact_plan(instance)
    if plan.model is not None or plan.relaxed or plan.blocking is not None:
        # A feature with an exact model of its own (the family table), or
        # features relaxed for the bound (solve_planned: redundant cliques
        # and the release decomposition are rigid-model options).
        return solve_planned(plan, instance, objective, incumbents, settings, solve)
    if decompose and wct_decompose.applies(instance, Objective.parse(objective)):
        return wct_decompose.solve(
            instance, Objective.parse(objective), search=solve,
            incumbents=incumbents,
            **settings.keywords("time_limit", *wct_decompose.INNER_SETTINGS),
        )  # fmt: skip
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        bounds=lower_bounds_within,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    objective = solving.objective
    tiled = tiling_strengthen(
        instance, objective, solving.bounds, solving.candidates, solving.until
    )
    if tiled.notes:
        solving.params["tiling"] = tiled.notes
    refusal = search_refusal(solving)
    model = None
    if refusal is not None:
        solving.skip(refusal)
    else:
        model = solving.build(lambda: _Model(solving.model_inputs(), cliques=cliques))
    if model is not None:
        _search(solving, model)
    return conclude(solving)


def _search(solving: Solving, model: _Model) -> None:
    """Run CP-SAT on ``model`` until the deadline, in one or two phases.

    With :func:`first_phase` settings, a first search of
    :data:`FIRST_PHASE_SHARE` of the time looks for schedules; the model is
    then hinted with the best one and the usual search takes the time
    left. Each phase's bound is a bound of the same model, so the reported
    lower bound is their maximum (:func:`~optsched.models.common.template.
    conclude`).
    """
    instance, objective = solving.instance, solving.objective

    def collect(time_limit: float | None, config: Mapping[str, Any] | None) -> None:
        search_collect(
            solving, model.model,
            lambda value: read_starts(model.starts, model.offsets, value),
            model.solver_bound,
            lambda found: _decode(instance, objective, model, found),
            infeasible="CP-SAT proved the model infeasible (a model bug: the "
            "hint is feasible)",
            stats={"weight_scale": model.scale,
                   "symmetry_groups": len(model.groups),
                   "cliques": len(model.cliques)},
            time_limit=time_limit, config=config,
        )  # fmt: skip

    config = first_phase(solving)
    if config is not None:
        collect(FIRST_PHASE_SHARE * solving.left(), config)
        status = solving.params["first_phase"] = solving.params.get("cpsat_status")
        ended = status not in ("FEASIBLE", "UNKNOWN")  # proven, or a model error
        if ended or solving.params.get("interrupted") or solving.expired():
            return
        model.rehint(min(solving.candidates, key=lambda c: c.value).schedule)
    collect(None, None)


FIRST_PHASE_SUBSOLVERS: tuple[str, ...] = ("default_lp", "max_lp")
"""The sub-solvers of the first phase of a two-worker ``wct`` search
(:func:`first_phase`)."""

FIRST_PHASE_SHARE = 0.2
"""The first phase's share of the time left (:func:`first_phase`)."""


def first_phase(solving: Solving) -> dict[str, Any] | None:
    """The CP-SAT keywords of a first, schedule-finding phase, or ``None``.

    Two workers leave CP-SAT no thread for its LNS workers beside
    ``default_lp`` and ``objective_lb_search`` (the log's task timing shows
    no LNS call and ``objective_shaving`` run once): on the 100-job KTH
    windows the bound rose best with that pair, but its schedules stayed
    worse than those ``max_lp`` finds within seconds (benchmarks/README.md,
    issue 30). So a ``wct`` search on two workers with the default
    sub-solvers first runs ``default_lp`` and ``max_lp`` for
    :data:`FIRST_PHASE_SHARE` of the time. Not in deterministic mode (each
    phase would get the whole deterministic limit), without a time limit,
    nor when the caller chose sub-solvers.
    """
    config = solving.settings.cpsat()
    if (
        solving.objective.kind != "wct"
        or solving.deadline is None
        or config["workers"] != 2
        or tuple(config["subsolvers"]) != BOUND_SUBSOLVERS
        or "subsolvers" in config["parameters"]
        or _DETERMINISTIC.get() is not None
    ):
        return None
    config["subsolvers"] = ()
    config["parameters"]["subsolvers"] = list(FIRST_PHASE_SUBSOLVERS)
    return config


INTEGER_LIMIT = 2**62
"""CP-SAT's safe integer range: every domain must lie within
``[-2**62, 2**62]`` and the sum of all domain magnitudes must fit in
``int64`` (its validator refuses the model otherwise, and the Python layer
raises ``TypeError`` on a bound beyond ``int64``)."""


def search_refusal(solving: Solving, *, per_job: int = 1) -> str | None:
    """Why a CP-SAT back-end does not search, as a ``skipped`` note, or ``None``.

    The model hinted with ``solving.hint`` would not fit CP-SAT's integers
    (:func:`model_overflow`), or the time limit is already spent (bounds
    and incumbents used it).
    """
    too_large = model_overflow(
        solving.instance, solving.objective, solving.hint.schedule, per_job=per_job
    )
    return refusal_note(solving, too_large)


def refusal_note(solving: Solving, too_large: str | None) -> str | None:
    """The ``skipped`` note of a model that is ``too_large`` (why, or
    ``None``) or of a search with no time left; ``None`` to search."""
    if too_large is not None:
        return f"{solving.backend}: model not built: {too_large}"
    if solving.expired():
        return f"{solving.backend}: search skipped (time limit)"
    return None


def model_overflow(
    instance: Instance, objective: Objective, incumbent: Schedule, *, per_job: int = 1
) -> str | None:
    """Why the CP-SAT model of ``instance`` would not fit its integers, or ``None``.

    The start variables range up to the horizon ``H`` (the largest
    completion deadline of :func:`~optsched.models.common.solution.
    completion_deadlines`), offsets up to ``m``; their magnitudes summed
    (with the makespan variable) must stay below :data:`INTEGER_LIMIT`.
    Weighted objectives are scaled below ``2**50`` by :func:`integer_weights`
    and need no further check. Values of up to ``2**53`` each (the core
    types' limit) can pass it on a few jobs; a thousand such jobs cannot.
    ``per_job`` time variables per job (other models than this module's).
    """
    deadlines = completion_deadlines(instance, objective, incumbent)
    horizon = max(deadlines.values(), default=0)
    n = len(instance.jobs)
    contiguous = instance.machine.allocation == "contiguous"
    total = (per_job * n + 1) * horizon + (n * instance.processors if contiguous else 0)
    return overflow_note(horizon, n, total)


def overflow_note(horizon: int, jobs: int, total: int) -> str | None:
    """``None`` when a model's summed domain magnitudes ``total`` fit
    :data:`INTEGER_LIMIT`, else why not (for a ``skipped`` note)."""
    if total < INTEGER_LIMIT:
        return None
    return (
        f"horizon {horizon} over {jobs} jobs needs integers up to {total}, beyond "
        f"CP-SAT's safe range 2**62"
    )


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class CpsatModel:
    """The frame every family's CP-SAT model starts from.

    It holds the inputs (:class:`~optsched.models.common.template.
    ModelInputs`), the ``CpModel``, the start and offset variables (offsets
    on contiguous machines) and the objective's ``makespan`` variable and
    weight ``scale``/``exact`` (:func:`add_completion_objective`), from which
    :meth:`solver_bound` reads CP-SAT's bound. Subclasses add their
    variables and constraints.
    """

    def __init__(self, inputs: ModelInputs) -> None:
        self.inputs = inputs
        self.instance = inputs.instance
        self.objective = inputs.objective
        self.model = cp_model.CpModel()
        self.contiguous = inputs.instance.machine.allocation == "contiguous"
        self.starts: dict[int, cp_model.IntVar] = {}
        self.offsets: dict[int, cp_model.IntVar] = {}
        self.scale, self.exact = 1.0, True
        self.makespan: cp_model.IntVar | None = None

    def on_time(self) -> None:
        """:func:`~optsched.models.common.template.on_time` with the call's
        deadline: builders call it in their loops over jobs."""
        on_time(self.inputs.deadline)

    def solver_bound(self, raw: float) -> float:
        """CP-SAT's bound in the objective's units (:func:`objective_bound`)."""
        return objective_bound(
            self.objective, self.instance, raw, self.scale, self.exact
        )

    def hint_makespan(self, schedule: Schedule) -> None:
        """Hint the makespan variable (``cmax``) with ``schedule``'s."""
        if self.makespan is not None:
            self.model.add_hint(
                self.makespan, max(p.end for p in schedule.placements.values())
            )


class _Model(CpsatModel):
    """CP-SAT variables and constraints for one instance and objective."""

    def __init__(self, inputs: ModelInputs, *, cliques: bool = False) -> None:
        super().__init__(inputs)
        instance, objective = inputs.instance, inputs.objective
        self.deadlines = completion_deadlines(
            instance, objective, inputs.incumbent.schedule
        )
        # Each stage looks at the call's deadline (on_time raises OutOfTime,
        # Solving.build notes it): a large model takes seconds to build.
        self._add_jobs()
        self._add_resources(cliques)
        on_time(inputs.deadline)
        groups = _identical_groups(instance, objective) if inputs.symmetry else []
        self.groups = groups
        for group in groups:
            on_time(inputs.deadline)
            for first, second in itertools.pairwise(group):
                order_interchangeable(self, first, second)
        self._add_objective(inputs.bounds)
        on_time(inputs.deadline)
        self._add_hint(_relabel(inputs.incumbent.schedule, groups))

    def rehint(self, schedule: Schedule) -> None:
        """Replace the hint by ``schedule`` (relabelled for the symmetry
        breaking, as the first hint)."""
        self.model.clear_hints()
        self._add_hint(_relabel(schedule, self.groups))

    def _add_jobs(self) -> None:
        m = self.instance.processors
        for job in self.instance.jobs:
            self.on_time()
            latest = self.deadlines[job.id] - job.runtime
            self.starts[job.id] = self.model.new_int_var(
                job.release, latest, f"S{job.id}"
            )
            if self.contiguous:
                self.offsets[job.id] = self.model.new_int_var(
                    0, m - job.size, f"O{job.id}"
                )

    def _add_resources(self, cliques: bool) -> None:
        m = self.instance.processors
        # Zero-length jobs occupy nothing (the checker agrees), but CP-SAT's
        # NoOverlap2D would forbid their empty boxes inside another box.
        jobs = [j for j in self.instance.jobs if j.runtime > 0]
        # Cumulative: the model for `any`, a redundant relaxation for
        # `contiguous`. Blocks on an `any` machine are counts (Machine refuses
        # offsets there), so every count-feasible start vector admits a
        # processor assignment, which assign_processors then builds.
        intervals = add_rigid_machine(
            self.model, self.instance, jobs, self.starts,
            self.offsets if self.contiguous else None,
        )  # fmt: skip
        self.cliques = _disjunctive_cliques(jobs, m) if cliques else []
        for clique in self.cliques:
            self.model.add_no_overlap([intervals[j.id] for j in clique])

    def _add_objective(self, bounds: Sequence[Bound]) -> None:
        ends = {j.id: self.starts[j.id] + j.runtime for j in self.instance.jobs}
        self.makespan, self.scale, self.exact = add_completion_objective(
            self.model, self.objective, self.instance, ends, self.deadlines, bounds
        )

    def _add_hint(self, schedule: Schedule) -> None:
        for job in self.instance.jobs:
            placement = schedule[job.id]
            self.model.add_hint(self.starts[job.id], placement.start)
            if self.contiguous:
                self.model.add_hint(self.offsets[job.id], int(placement.offset or 0))
        self.hint_makespan(schedule)


def order_interchangeable(model: CpsatModel, first: Job, second: Job) -> None:
    """Symmetry breaking for two interchangeable jobs (module notes):
    ``S_first <= S_second`` and, with offsets (contiguous machines), equal
    starts imply ``O_first <= O_second``."""
    a, b = model.starts[first.id], model.starts[second.id]
    model.model.add(a <= b)
    if model.offsets:
        same = model.model.new_bool_var(f"same{first.id}_{second.id}")
        model.model.add(a == b).only_enforce_if(same)
        model.model.add(a < b).only_enforce_if(~same)
        model.model.add(
            model.offsets[first.id] <= model.offsets[second.id]
        ).only_enforce_if(same)


def busy_intervals(
    model: cp_model.CpModel, instance: Instance
) -> tuple[list[Any], list[Any]]:
    """The machine's busy blocks that last, and their fixed time intervals."""
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    intervals = [
        model.new_fixed_size_interval_var(b.start, b.end - b.start, "busy")
        for b in blocks
    ]
    return blocks, intervals


def add_rigid_machine(
    model: cp_model.CpModel,
    instance: Instance,
    jobs: Sequence[Job],
    starts: Mapping[int, Any],
    offsets: Mapping[int, Any] | None,
) -> dict[int, Any]:
    """The machine's capacity for rigid ``jobs`` (of positive run time).

    ``Cumulative`` of the jobs' intervals ``[S_j, S_j + p_j)`` and the busy
    blocks within ``m`` processors; with ``offsets`` (contiguous machines)
    also ``NoOverlap2D`` of the jobs' and blocks' boxes
    (:func:`add_processor_boxes`). Returns the jobs' time intervals by id.
    """
    time_iv = {
        j.id: model.new_fixed_size_interval_var(starts[j.id], j.runtime, f"I{j.id}")
        for j in jobs
    }
    blocks, block_iv = busy_intervals(model, instance)
    model.add_cumulative(
        [*time_iv.values(), *block_iv],
        [j.size for j in jobs] + [b.size for b in blocks],
        instance.processors,
    )
    if offsets is not None:
        proc_iv = [
            model.new_fixed_size_interval_var(offsets[j.id], j.size, f"P{j.id}")
            for j in jobs
        ]
        add_processor_boxes(model, list(time_iv.values()), proc_iv, block_iv, blocks)
    return time_iv


def add_processor_boxes(
    model: cp_model.CpModel,
    time_iv: Sequence[Any],
    proc_iv: Sequence[Any],
    block_iv: Sequence[Any],
    blocks: Sequence[Any],
) -> None:
    """Contiguous allocation: no two (time x processor range) boxes overlap.

    ``time_iv[k] x proc_iv[k]`` is job ``k``'s box (its processor interval
    ``[O, O + q)``, optional for a mode); busy block ``b`` is the fixed box
    ``block_iv[b] x [o_b, o_b + q_b)`` (``o_b = 0`` when it has no offset).
    One ``NoOverlap2D`` over all of them (Beldiceanu and Carlsson 2001).
    """
    block_proc = [
        model.new_fixed_size_interval_var(int(b.offset or 0), b.size, "busyP")
        for b in blocks
    ]
    model.add_no_overlap_2d([*time_iv, *block_iv], [*proc_iv, *block_proc])


def add_completion_objective(
    model: cp_model.CpModel,
    objective: Objective,
    instance: Instance,
    ends: Mapping[int, Any],
    deadlines: Mapping[int, int],
    bounds: Sequence[Bound],
) -> tuple[cp_model.IntVar | None, float, bool]:
    """Minimise the makespan or the weighted sum of the jobs' ``ends``.

    ``cmax``: a makespan variable from the best bound of ``bounds`` to the
    latest deadline, above every end. ``wct``: the weights made integers
    (:func:`integer_weights`). Returns the makespan variable (``None`` for
    ``wct``) and the weights' ``scale`` and ``exact``, which
    :func:`objective_bound` needs to read the solver's bound.
    """
    jobs = instance.jobs
    if objective.kind == "cmax":
        best = max((b.value for b in bounds), default=0.0)
        lowest = max(0, round_up_bound(best))
        highest = max(deadlines.values())
        makespan = model.new_int_var(min(lowest, highest), highest, "Cmax")
        for j in jobs:
            model.add(ends[j.id] <= makespan)
        model.minimize(makespan)
        return makespan, 1.0, True
    integer, scale, exact = integer_weights(
        [objective.weight(j) for j in jobs], max(deadlines.values())
    )
    model.minimize(sum(w * ends[j.id] for w, j in zip(integer, jobs, strict=True)))
    return None, scale, exact


def objective_bound(
    objective: Objective, instance: Instance, raw: float, scale: float, exact: bool
) -> float:
    """CP-SAT's raw objective bound in the objective's units
    (:func:`scaled_bound`; a makespan is an integer), less the objective's
    constant offset (``relative``)."""
    if objective.kind == "cmax":
        scale, exact = 1.0, True
    return scaled_bound(raw, scale, exact) - objective.offset(instance)


def integer_weights(
    weights: Sequence[float], horizon: int
) -> tuple[list[int], float, bool]:
    """Integer objective coefficients, their scale ``s`` and whether exact.

    Exact when possible: floats are dyadic rationals, so weights such as
    ``0.5`` or ``1.25`` become the integers ``s w_j`` for a power of two
    ``s = 2^e`` (``e <= 20``); the smallest such ``s`` with ``s sum_j w_j
    horizon < 2**50`` is used, and a bound on ``sum_j s w_j C_j`` divided
    by ``s`` is then exact too (:func:`scaled_bound`). Otherwise ``floor(s
    w_j)`` with ``s`` as in the module notes (``exact = False``: a valid but
    inexact bound).
    """
    limit = _EXACT_LIMIT / max(1, horizon)
    for e in range(21):
        scale = float(2**e)
        if sum(weights) * scale >= limit:
            break
        if all((w * scale).is_integer() for w in weights):
            return [int(w * scale) for w in weights], scale, True
    total = sum(weights) * max(1, horizon)
    if total == 0:
        return [0 for _ in weights], 1.0, True
    scale = min(_EXACT_LIMIT / total, _MAX_SCALED_WEIGHT / max(weights))
    return [math.floor(w * scale) for w in weights], scale, False


def scaled_bound(raw: float, scale: float, exact: bool) -> float:
    """A CP-SAT objective bound ``raw`` over ``scale``, rounded safely.

    With exact integer coefficients the objective is an integer: its bound
    is one within float noise below ``2**53`` (CP-SAT adds its objective
    offset in floating point: 91 may come back as 90.99999999999999, which
    ``int()`` would cut to 90, a valid but needlessly weak bound and a
    proven optimum reported as unproven), so it is rounded up past the
    noise (:func:`round_up_bound`) and divided by the power of two
    ``scale`` (exact). Beyond ``2**53`` the float is taken one ulp lower.
    Inexact coefficients: the quotient, lowered by one division's rounding.
    """
    if exact and abs(raw) <= 2**53:
        whole = round_up_bound(raw)
        return whole if scale == 1.0 else whole / scale
    if exact:
        whole = int(raw - math.ulp(raw))
        return whole if scale == 1.0 else whole / scale
    return raw / scale * (1.0 - 1e-12)


def _disjunctive_cliques(jobs: Sequence[Job], m: int) -> list[list[Job]]:
    """Sets of jobs that pairwise cannot run together (``q_i + q_j > m``).

    Redundant ``NoOverlap`` constraints over them give CP-SAT the strong
    one-machine (disjunctive) propagation. With ``W`` the jobs wider than
    ``m/2`` (pairwise incompatible), each other job ``k`` with
    ``q_k + min_W q > m`` is incompatible with all of ``W``: one clique
    ``W + {k}`` per such ``k``, or ``W`` alone if there is none.
    """
    wide = [j for j in jobs if 2 * j.size > m]
    if len(wide) < 2:
        return []
    narrowest = min(j.size for j in wide)
    others = [j for j in jobs if 2 * j.size <= m and j.size + narrowest > m]
    if not others:
        return [wide]
    return [[*wide, k] for k in others]


def _rigid_shape(job: Job) -> tuple[Any, ...]:
    return (job.size, job.runtime)


def _identical_groups(
    instance: Instance,
    objective: Objective,
    shape: Callable[[Job], tuple[Any, ...]] = _rigid_shape,
) -> list[list[Job]]:
    """Groups (ids in order) of interchangeable jobs: same release, same
    ``shape`` (size and run time; the moldable model passes the modes) and,
    for ``wct``, same weight. Swapping two of them keeps a schedule feasible
    and its objective, which the symmetry breaking uses."""
    groups: dict[tuple[Any, ...], list[Job]] = defaultdict(list)
    for job in instance.jobs:
        key: tuple[Any, ...] = (job.release, *shape(job))
        if objective.kind == "wct":
            key += (objective.weight(job),)
        groups[key].append(job)
    return [sorted(g, key=lambda j: j.id) for g in groups.values() if len(g) > 1]


def _relabel(schedule: Schedule, groups: Sequence[Sequence[Job]]) -> Schedule:
    """Hand each group's placements out in (start, offset) order to ids in order."""
    placements = dict(schedule.placements)
    for group in groups:
        ordered = sorted(
            (placements[j.id] for j in group), key=lambda p: (p.start, p.offset or 0)
        )
        for job, placement in zip(group, ordered, strict=True):
            placements[job.id] = placement
    return Schedule(placements, schedule.producer)


# --------------------------------------------------------------------------
# Stopping searches on a signal
# --------------------------------------------------------------------------
#
# A CP-SAT search runs in C++ with the GIL released: Python's own signal
# handlers run only once it returns, which may be a whole time limit later.
# Library callers (``models.solve`` in a plain script) keep CP-SAT's own
# Ctrl-C handling (``catch_sigint_signal``): Ctrl-C ends the search as a time
# limit would and the result is marked ``interrupted``. A process that
# handles SIGINT and SIGTERM itself (``optsched bench`` and ``gap``, see
# :mod:`optsched.bench.executor`) instead calls :func:`stop_searches` from a
# thread woken by the signal; CP-SAT then leaves its handlers alone.

_LOCK = threading.Lock()
_SOLVERS: weakref.WeakSet[cp_model.CpSolver] = weakref.WeakSet()
"""Solvers configured in this process and still alive."""
_STOPPED: weakref.WeakSet[cp_model.CpSolver] = weakref.WeakSet()
"""Solvers told to stop by :func:`stop_searches` (their results are
interrupted)."""
_HALT = threading.Event()
"""Set by :func:`stop_searches`: a solver configured afterwards stops at once."""


def stop_searches() -> None:
    """Stop every CP-SAT search of this process, and those configured later.

    Safe to call from any thread (never from a signal handler: it takes a
    lock the interrupted code may hold). Each stopped search returns its best
    solution so far, marked ``interrupted``. :func:`resume_searches` undoes
    the "configured later" part.
    """
    _HALT.set()
    with _LOCK:
        solvers = list(_SOLVERS)
        _STOPPED.update(solvers)
    for solver in solvers:
        solver.stop_search()  # a no-op unless a search is running


def resume_searches() -> None:
    """Let solvers configured from now on run again (after :func:`stop_searches`)."""
    _HALT.clear()


_DETERMINISTIC: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "optsched_cpsat_deterministic", default=None
)
_SEARCHED = threading.local()


@contextlib.contextmanager
def deterministic(limit: float) -> Iterator[None]:
    """Run the CP-SAT searches started inside in deterministic mode.

    CP-SAT interleaves its sub-solvers in fixed batches
    (``interleave_search``) and stops after ``limit`` units of deterministic
    time (``max_deterministic_time``: its count of work done, calibrated to
    about a second, but often several times longer in wall-clock time on a
    loaded machine) instead of at a wall-clock limit, which it no longer has.
    The same instance, parameters, workers and OR-Tools version then give
    the same result whatever the machine and its load.
    """
    token = _DETERMINISTIC.set(limit)
    try:
        yield
    finally:
        _DETERMINISTIC.reset(token)


def search_seconds() -> float:
    """Wall-clock seconds this thread has spent in CP-SAT searches so far."""
    total: float = getattr(_SEARCHED, "seconds", 0.0)
    return total


def _python_owns_sigint() -> bool:
    """Is Python's default Ctrl-C handler in place (nobody else handles it)?"""
    return signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _restore_sigint() -> None:
    # CP-SAT's Ctrl-C handler resets SIGINT to SIG_DFL when the solver goes
    # away: the next Ctrl-C would kill the process without a traceback or any
    # cleanup. Put Python's handler back (only the main thread may).
    if threading.current_thread() is threading.main_thread() and _python_owns_sigint():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def solve_model(
    solver: cp_model.CpSolver,
    model: cp_model.CpModel,
    callback: cp_model.CpSolverSolutionCallback | None = None,
) -> Any:
    """``solver.solve(model, callback)``, with Python's Ctrl-C handler put
    back as soon as it returns.

    CP-SAT's own handler (``catch_sigint_signal``) may outlive the solve and
    swallow a later Ctrl-C until the solver is collected, which a reference
    cycle can delay indefinitely; the ``weakref.finalize`` of
    :func:`_configure` still covers the reset CP-SAT does when the solver goes.
    """
    try:
        return solver.solve(model, callback)
    finally:
        if solver.parameters.catch_sigint_signal:
            _restore_sigint()


# --------------------------------------------------------------------------
# Solving and decoding
# --------------------------------------------------------------------------


def _configure(
    solver: cp_model.CpSolver,
    *,
    time_limit: float,
    workers: int,
    log: bool | LogSink,
    subsolvers: Sequence[str],
    seed: int,
    parameters: Mapping[str, Any],
) -> None:
    p = solver.parameters
    p.max_time_in_seconds = time_limit
    p.num_workers = max(1, workers)
    p.random_seed = seed
    fixed_work = _DETERMINISTIC.get()
    if fixed_work is not None:
        p.interleave_search = True
        p.max_deterministic_time = fixed_work
        p.max_time_in_seconds = math.inf
    with _LOCK:
        _SOLVERS.add(solver)
        if _HALT.is_set():
            _STOPPED.add(solver)
            p.max_time_in_seconds = 0.0
    # Ctrl-C stops the search as a time limit would; the best solution is
    # kept. Only when no one else handles SIGINT (see stop_searches).
    p.catch_sigint_signal = _python_owns_sigint()
    if p.catch_sigint_signal:
        weakref.finalize(solver, _restore_sigint)
    if workers >= 2 and subsolvers:
        # With few workers CP-SAT runs a single full-problem sub-solver; an
        # extra one would replace its main search (default_lp) instead of
        # joining it. Asking for `workers` full sub-solvers keeps both, with
        # the LNS workers interleaved on the same threads.
        p.extra_subsolvers.extend(subsolvers)
        p.num_full_subsolvers = max(workers, 1 + len(subsolvers))
    if log:
        p.log_search_progress = True
        p.log_to_stdout = False
        sink: LogSink = log if callable(log) else _print_line
        solver.log_callback = sink
    for key, value in parameters.items():
        field = getattr(p, key)
        if isinstance(value, list | tuple):
            field.extend(value)
        else:
            setattr(p, key, value)


def _print_line(line: str) -> None:
    print(line, file=sys.stdout, flush=True)


@dataclass(frozen=True, slots=True)
class SearchOutcome(Generic[Found]):
    """What one CP-SAT run left: its status, bound, solution and notes."""

    status_name: str
    bound: Bound | None
    found: Found | None
    notes: dict[str, Any]


def stop_notes(
    solver: cp_model.CpSolver,
    status: Any,
    elapsed: float,
    model: cp_model.CpModel,
    infeasible: str,
) -> dict[str, Any]:
    """Why a CP-SAT run stopped, as ``interrupted`` / ``error`` notes.

    A search stopped by :func:`stop_searches` (a signal in a process that
    handles signals) is interrupted. Otherwise, when CP-SAT catches Ctrl-C
    itself, it stops as at a time limit: an unproven stop well before the
    wall-clock limit can only be that (or a memory limit). An invalid or
    infeasible model is a bug of the model (every back-end hints a feasible
    schedule); ``infeasible`` says so in the back-end's words.
    """
    _SEARCHED.seconds = search_seconds() + elapsed
    notes: dict[str, Any] = {}
    p = solver.parameters
    unproven = status in (cp_model.FEASIBLE, cp_model.UNKNOWN)
    if unproven and solver in _STOPPED:
        notes["interrupted"] = True  # stopped by stop_searches (a signal)
    elif (
        unproven
        and p.catch_sigint_signal
        and math.isinf(p.max_deterministic_time)
        and elapsed < 0.9 * p.max_time_in_seconds - 0.5
    ):
        notes["interrupted"] = True
    if status == cp_model.MODEL_INVALID:
        notes["error"] = f"CP-SAT model invalid: {model.validate()}"
    elif status == cp_model.INFEASIBLE:
        notes["error"] = infeasible
    return notes


def run_search(
    solver: cp_model.CpSolver,
    model: cp_model.CpModel,
    read: Callable[[Callable[[Any], int]], Found],
    solver_bound: Callable[[float], float],
    infeasible: str,
) -> SearchOutcome[Found]:
    """Run CP-SAT on ``model``; keep the incumbent even when Ctrl-C escapes it.

    ``read(value)`` turns a solution (``value(var)`` of each variable) into
    what the caller decodes; ``solver_bound`` turns CP-SAT's objective bound
    into the objective's units; ``infeasible`` is the note for a model
    proven infeasible (a model bug: every model here is hinted with a
    feasible schedule).
    """
    tracker = _Tracker(read)
    began = time.perf_counter()
    try:
        status = solve_model(solver, model, tracker)
    except KeyboardInterrupt:  # only if CP-SAT did not catch SIGINT itself
        return SearchOutcome("INTERRUPTED", None, tracker.last, {"interrupted": True})
    elapsed = time.perf_counter() - began
    notes = stop_notes(solver, status, elapsed, model, infeasible)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SearchOutcome(solver.status_name(status), None, None, notes)
    bound = Bound(solver_bound(solver.best_objective_bound), BACKEND, elapsed)
    return SearchOutcome(solver.status_name(status), bound, read(solver.value), notes)


def search_collect(
    solving: Solving,
    model: cp_model.CpModel,
    read: Callable[[Callable[[Any], int]], Found],
    solver_bound: Callable[[float], float],
    decode: Callable[[Found], tuple[Candidate | None, str | None]],
    *,
    infeasible: str,
    stats: Mapping[str, Any],
    bound_note: str | None = None,
    time_limit: float | None = None,
    config: Mapping[str, Any] | None = None,
) -> None:
    """Run CP-SAT on ``model`` until ``solving``'s deadline; collect what it gives.

    ``solving.params`` gets the status, ``stats`` (the model's sizes) and
    the search notes; ``solving.bounds`` the solver's bound, or, with
    ``bound_note``, ``params[bound_note]`` its value (a bound of a
    restriction only, no bound of the problem); the solution goes through
    ``decode`` to a checked candidate or a rejection (:meth:`Solving.keep`).
    ``read``, ``solver_bound`` and ``infeasible`` are as in
    :func:`run_search`; the solver is configured from ``solving.settings``
    (or from ``config``, keywords of the same form) and runs for
    ``time_limit`` seconds (default: the time left).
    """
    solver = cp_model.CpSolver()
    seconds = solving.left() if time_limit is None else time_limit
    _configure(solver, time_limit=seconds, **(config or solving.settings.cpsat()))
    outcome = run_search(solver, model, read, solver_bound, infeasible)
    solving.params.update(cpsat_status=outcome.status_name, **stats, **outcome.notes)
    if outcome.bound is not None and bound_note is not None:
        solving.params[bound_note] = outcome.bound.value
    elif outcome.bound is not None:
        solving.bounds.append(outcome.bound)
    if outcome.found is not None:
        solving.keep(decode(outcome.found))


class _Tracker(cp_model.CpSolverSolutionCallback, Generic[Found]):
    """Keeps the last solution, for a Ctrl-C that escapes CP-SAT."""

    def __init__(self, read: Callable[[Callable[[Any], int]], Found]) -> None:
        super().__init__()
        self._read = read
        self.last: Found | None = None

    def on_solution_callback(self) -> None:
        self.last = self._read(self.value)


def read_starts(
    starts: Mapping[int, Any], offsets: Mapping[int, Any], value: Callable[[Any], int]
) -> dict[int, tuple[int, int]]:
    """``{job: (start, offset)}`` of a solution (offset 0 without offsets)."""
    return {
        jid: (int(value(var)), int(value(offsets[jid])) if offsets else 0)
        for jid, var in starts.items()
    }


def _decode(
    instance: Instance,
    objective: Objective,
    model: _Model,
    found: Mapping[int, tuple[int, int]],
) -> tuple[Candidate | None, str | None]:
    jobs = instance.jobs_by_id()
    if model.contiguous:
        placements = {
            jid: contiguous_placement(s, s + jobs[jid].runtime, o, jobs[jid].size)
            for jid, (s, o) in found.items()
        }
        schedule = Schedule(placements, BACKEND)
    else:
        starts = {jid: start for jid, (start, _) in found.items()}
        schedule = assign_processors(instance, starts)
    return checked_candidate(instance, objective, BACKEND, schedule)
