r"""CP-SAT optimum on a machine with node speeds (related processors).

Model (rigid job ``j``: release ``r_j``, size ``\pi_j``, work ``p_j`` at
speed 1, weight ``w_j``). The processors fall into speed classes ``c``:
``n_c`` processors of speed ``s_c``. A job runs on a *mix* ``a = (a_c)``
with ``sum_c a_c = \pi_j``, ``0 <= a_c <= n_c``, and then takes

.. math:: d_j(a) = \left\lceil \frac{p_j}{\sum_c a_c s_c} \right\rceil

seconds whatever processors of each class it gets
(:meth:`~optsched.instance.Machine.run_time`, exact fractions). With
``x_{ja}`` the literal of mix ``a``:

.. math::

    \textstyle\sum_a x_{ja} = 1,\qquad D_j = \sum_a d_j(a) x_{ja},\qquad
    C_j = S_j + D_j \le \bar D_j,\quad S_j \ge r_j

    I_{ja} = [S_j, S_j + d_j(a)) \text{ present iff } x_{ja},\qquad
    \forall c:\ \mathrm{Cumulative}(\{(I_{ja}, a_c)\},\ n_c)

    \mathrm{Cumulative}(\{([S_j, C_j), \pi_j)\},\ m)
    \quad\text{(redundant: } \textstyle\sum_c a_c = \pi_j,\ \sum_c n_c = m)

    \text{cmax:}\ \min C,\ C_j \le C \qquad
    \text{wct:}\ \min \textstyle\sum_j \tilde w_j C_j

The mixes are the alternative modes of multi-mode resource-constrained
project scheduling with one renewable resource per class, encoded with
optional intervals (P. Laborie, J. Rogerie, "Reasoning with conditional
time-intervals", FLAIRS 2008); the machine is Rassmann's (bachelor thesis,
TU Dortmund 2020, after O. Arndt, B. Freisleben, T. Kielmann, F. Thilo, "A
comparative study of on-line scheduling algorithms for networks of
workstations", Cluster Computing 3, 2000): related processors, a job's
work split over its nodes. Horizons ``\bar D_j`` and integer weights
``\tilde w_j`` as in :mod:`optsched.models.moldable.model`
(:func:`option_deadlines`).

Why per-class counts suffice (decoding). Within a class the processors are
identical, so a start vector and mixes that respect each class's
cumulative admit a non-migrating assignment of processors: colour each
class's interval graph greedily in order of start times (a job of ``a_c``
processors of class ``c`` being ``a_c`` identical intervals). At a start
``t`` the class's running jobs hold ``sum a_c <= n_c - a_{jc}`` of its
processors, and a processor freed at an end stays free until taken, so
``a_{jc}`` are free (Hajnal and Surányi 1958; :func:`colour`). The job's
set then has the mix's speed sum, hence the run time ``d_j(a)``; the
schedule is checked by :func:`optsched.check.check_schedule`.

No mix is dropped. Mixes of one job all have ``sum_c a_c = \pi_j``, so
none uses at most as many processors of every class as another (that would
make them equal), and neither direction of a swap is safe: on speeds (1, 3)
a job of work 3 and size 1 takes 1 s on the fast processor and 3 s on the
slow one; the slow mix is optimal when a long job holds the fast
processor, the fast one when it is free. Even equal run times (rounding)
do not make one mix dominate: the mixes compete for different classes.

Symmetry: jobs with the same release, size, work (and, for ``wct``,
weight) are interchangeable, as in :mod:`optsched.models.rigid.cpsat`; their
starts are ordered by id.

Incumbent: :func:`greedy_speed_schedule`, a serial list schedule choosing
for each job the mix that completes it first (Kolisch and Drexl 1997, as
:func:`optsched.models.moldable.model.greedy_schedule`), in submit order and in
LPT (``cmax``) or Smith order (``wct``); and the caller's incumbents,
checked.

Lower bounds: those of :func:`optsched.models.topology.bounds.topology_lower_bounds`
(the flat relaxation's, the staged speed-area bound for ``cmax``, the
squashed mean-busy-time bound for ``wct``) and CP-SAT's own.

A machine with both speeds and SMP nodes is refused (``ValueError``).
"""

from __future__ import annotations

import heapq
import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ortools.sat.python import cp_model

from optsched.instance import Instance, Job
from optsched.models.common.settings import DEFAULTS, SolverSettings
from optsched.models.common.solution import (
    Candidate,
    check_candidates,
    checked_candidate,
    option_deadlines,
)
from optsched.models.common.template import conclude, prepare
from optsched.models.rigid.cpsat import (
    BACKEND,
    _disjunctive_cliques,
    _identical_groups,
    _relabel,
    _rigid_shape,
    add_completion_objective,
    objective_bound,
    overflow_note,
    refusal_note,
    search_collect,
)
from optsched.models.site.admission import (
    add_admission,
    add_sequential,
    add_start_pieces,
    hint_site,
)
from optsched.models.site.bounds import site_released
from optsched.models.site.greedy import site_list_schedule
from optsched.models.site.model import Piece, admitted_pieces, site_deadlines
from optsched.models.topology.bounds import topology_lower_bounds
from optsched.objective import Objective
from optsched.packing import Profile
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Placement, Schedule

MAX_OPTIONS = 20_000
"""Most job-mix pairs :func:`solve` enumerates; beyond (many distinct
speeds), it refuses the instance (``ValueError``) rather than enumerate."""


# --------------------------------------------------------------------------
# Speed classes and mixes
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpeedClass:
    """The processors of one speed (indices ascending)."""

    speed: Fraction
    processors: tuple[int, ...]


def speed_classes(instance: Instance) -> tuple[SpeedClass, ...]:
    """The machine's processors grouped by exact speed, fastest class first."""
    speeds = instance.machine.exact_speeds()
    if speeds is None:
        raise ValueError("speed model: the machine has no speeds")
    groups: dict[Fraction, list[int]] = defaultdict(list)
    for k, speed in enumerate(speeds):
        groups[speed].append(k)
    return tuple(
        SpeedClass(speed, tuple(procs))
        for speed, procs in sorted(groups.items(), reverse=True)
    )


def job_mixes(size: int, classes: Sequence[SpeedClass]) -> list[tuple[int, ...]]:
    """Every ``(a_c)`` with ``sum a_c = size`` and ``0 <= a_c <= n_c``,
    most fast processors first."""
    counts = [len(c.processors) for c in classes]
    rest = [sum(counts[c:]) for c in range(len(counts) + 1)]  # classes c..
    out: list[tuple[int, ...]] = []

    def walk(c: int, left: int, prefix: tuple[int, ...]) -> None:
        if c == len(counts):
            if left == 0:
                out.append(prefix)
            return
        low = max(0, left - rest[c + 1])  # the slower classes must hold the rest
        for a in range(min(counts[c], left), low - 1, -1):
            walk(c + 1, left - a, (*prefix, a))

    walk(0, size, ())
    return out


def mix_count(size: int, classes: Sequence[SpeedClass]) -> int:
    """How many mixes :func:`job_mixes` gives, without listing them (the
    bounded compositions of ``size``, by dynamic programming)."""
    ways = [1] + [0] * size  # ways[t]: mixes of t processors over classes so far
    for group in classes:
        n = len(group.processors)
        ways = [sum(ways[t - a] for a in range(min(n, t) + 1)) for t in range(size + 1)]
    return ways[size]


def mix_processors(mix: Sequence[int], classes: Sequence[SpeedClass]) -> list[int]:
    """A processor set of ``mix``: the first ``a_c`` of each class."""
    return sorted(
        p for a, c in zip(mix, classes, strict=True) for p in c.processors[:a]
    )


def mix_of(processors: Sequence[int], classes: Sequence[SpeedClass]) -> tuple[int, ...]:
    """The mix of a processor set."""
    where = {p: k for k, c in enumerate(classes) for p in c.processors}
    counts = [0] * len(classes)
    for p in processors:
        counts[where[p]] += 1
    return tuple(counts)


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run a job: ``duration`` seconds, ``demands`` per resource
    (speed class), and its speed sum ``power`` (ties in the greedy)."""

    duration: int
    demands: tuple[int, ...]
    power: Fraction


def speed_options(
    instance: Instance, classes: Sequence[SpeedClass]
) -> dict[int, list[Option]]:
    """Per job its mixes as :class:`Option` (run time from the machine)."""
    machine = instance.machine
    out: dict[int, list[Option]] = {}
    cache: dict[int, list[tuple[int, ...]]] = {}
    for job in instance.jobs:
        mixes = cache.setdefault(job.size, job_mixes(job.size, classes))
        out[job.id] = [
            Option(
                machine.run_time(job.runtime, mix_processors(mix, classes)),
                mix,
                sum(
                    (a * c.speed for a, c in zip(mix, classes, strict=True)),
                    Fraction(0),
                ),
            )
            for mix in mixes
        ]
    return out


# --------------------------------------------------------------------------
# Closed-form bounds
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Shared by the speed and SMP models: horizons, colouring, candidates
# --------------------------------------------------------------------------


def colour(
    pool: Sequence[int], items: Sequence[tuple[int, int, int, int]]
) -> dict[int, list[int]]:
    """Processors of ``pool`` for items ``(start, end, count, key)``.

    Greedy interval colouring in order of start times, the lowest free
    processors first, after taking back those of the items that ended (at
    or before the start: intervals are half-open). Never runs short when at
    every instant the running items count at most ``len(pool)`` (module
    notes); raises ``ValueError`` otherwise (a model bug). Zero-length items
    overlap nothing and get the first processors of the pool.
    """
    free = list(pool)
    heapq.heapify(free)
    running: list[tuple[int, int, list[int]]] = []
    out: dict[int, list[int]] = {}
    ordered = sorted(items, key=lambda it: (it[0], it[1]))
    for seq, (start, end, count, key) in enumerate(ordered):
        if end <= start or count == 0:
            out[key] = list(pool[:count])
            continue
        while running and running[0][0] <= start:
            for p in heapq.heappop(running)[2]:
                heapq.heappush(free, p)
        if len(free) < count:
            raise ValueError(
                f"{count} processors wanted at time {start}, {len(free)} free"
            )
        taken = [heapq.heappop(free) for _ in range(count)]
        out[key] = taken
        heapq.heappush(running, (end, seq, taken))
    return out


def own_candidates(
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    schedules: Sequence[tuple[str, Schedule]],
    deadline: float | None,
) -> tuple[list[Candidate], list[str]]:
    """Checked starting schedules, best first: ``schedules`` (the model's
    own greedy ones, always checked) and the caller's ``incumbents``
    (checked while ``deadline`` has not passed)."""
    raw = [*schedules, *((i.source, i.schedule) for i in incumbents)]
    return check_candidates(
        instance,
        objective,
        raw,
        always=len(schedules),
        deadline=deadline,
        what="starting",
    )


def greedy_orders(
    instance: Instance, objective: Objective, shortest: Mapping[int, int]
) -> list[tuple[str, list[int]]]:
    """Submit order, and LPT (``cmax``: longest shortest run time first) or
    Smith's order (``wct``: largest ``w_j`` over shortest run time first)."""
    submit = [j.id for j in sorted(instance.jobs, key=lambda j: (j.release, j.id))]
    if objective.kind == "cmax":
        ranked = sorted(shortest, key=lambda jid: (-shortest[jid], jid))
        return [("submit", submit), ("lpt", ranked)]
    weight = {j.id: objective.weight(j) for j in instance.jobs}
    ranked = sorted(
        shortest, key=lambda jid: (-weight[jid] / max(shortest[jid], 1), jid)
    )
    return [("submit", submit), ("smith", ranked)]


# --------------------------------------------------------------------------
# The option model shared with the SMP model
# --------------------------------------------------------------------------


class OptionModel:
    """Per job a start, one literal per option (exactly one true), its
    duration and end; the objective; symmetry among identical jobs.

    Subclasses add the resources. ``options[j]`` lists the job's options,
    each with its run time ``duration`` (:class:`Option`,
    :class:`~optsched.models.topology.smp.SpanOption`); ``durations[j]``
    their run times. An option that cannot meet the job's horizon gets no
    literal (``None``). ``cliques``: redundant no-overlap constraints over jobs that
    pairwise cannot run together, their sizes summing to more than ``m``
    (:func:`optsched.models.rigid.cpsat._disjunctive_cliques`; valid on any
    machine, sizes being processor counts).
    """

    def __init__(
        self,
        instance: Instance,
        objective: Objective,
        options: Mapping[int, Sequence[Any]],
        deadlines: Mapping[int, int],
        bounds: Sequence[Bound],
        *,
        symmetry: bool,
        cliques: bool = False,
    ) -> None:
        self.instance = instance
        self.objective = objective
        self.model = cp_model.CpModel()
        self.durations = {
            jid: [option.duration for option in opts] for jid, opts in options.items()
        }
        self.deadlines = deadlines
        self.starts: dict[int, cp_model.IntVar] = {}
        self.ends: dict[int, cp_model.IntVar] = {}
        self.lengths: dict[int, cp_model.IntVar] = {}
        self.chosen: dict[int, list[cp_model.IntVar | None]] = {}
        self.intervals: dict[int, cp_model.IntervalVar] = {}
        self.option_intervals: dict[int, list[cp_model.IntervalVar | None]] = {}
        self.scale, self.exact = 1.0, True
        self.makespan: cp_model.IntVar | None = None
        self.calendar = instance.machine.calendar
        self.pieces: dict[int, list[Piece]] = {}
        self.pieces_chosen: dict[int, list[Any]] = {}
        self.pair_literals: list[tuple[Job, Job, Any, Any]] = []
        self.zero_literals: list[tuple[Job, Job, Any]] = []
        released = (
            {j.id: j.release for j in site_released(instance).jobs}
            if self.calendar is not None
            else {}
        )
        for job in instance.jobs:
            self._add_job(job, released.get(job.id, job.release))
        self._add_site_rules()
        # Zero-length jobs overlap nothing; left out of the no-overlaps.
        long = [j for j in instance.jobs if j.runtime > 0]
        self.cliques = (
            _disjunctive_cliques(long, instance.processors) if cliques else []
        )
        for clique in self.cliques:
            self.model.add_no_overlap([self.intervals[j.id] for j in clique])
        # Under a calendar the queue matters too (sequential, anytime).
        shape = _site_shape if self.calendar is not None else _rigid_shape
        self.groups = _identical_groups(instance, objective, shape) if symmetry else []
        for group in self.groups:
            for first, second in itertools.pairwise(group):
                self.model.add(self.starts[first.id] <= self.starts[second.id])
        self._add_objective(bounds)

    def _add_job(self, job: Job, first: int) -> None:
        # ``first``: the earliest start the calendar allows (the release
        # without one).
        deadline = self.deadlines[job.id]
        options = self.durations[job.id]
        usable = [d for d in options if first + d <= deadline]
        shortest = min(usable)
        start = self._start_var(job, first, deadline - shortest)
        length = self.model.new_int_var_from_domain(
            cp_model.Domain.from_values(sorted(set(usable))), f"D{job.id}"
        )
        end = self.model.new_int_var(job.release + shortest, deadline, f"C{job.id}")
        self.intervals[job.id] = self.model.new_interval_var(
            start, length, end, f"I{job.id}"
        )
        literals: list[cp_model.IntVar | None] = []
        boxes: list[cp_model.IntervalVar | None] = []
        for k, d in enumerate(options):
            if first + d > deadline:
                literals.append(None)
                boxes.append(None)
                continue
            x = self.model.new_bool_var(f"x{job.id}_{k}")
            literals.append(x)
            boxes.append(
                self.model.new_optional_fixed_size_interval_var(
                    start, d, x, f"I{job.id}_{k}"
                )
            )
        present = [x for x in literals if x is not None]
        self.model.add_exactly_one(present)
        self.model.add(
            length
            == sum(
                d * x for d, x in zip(options, literals, strict=True) if x is not None
            )
        )
        self.starts[job.id], self.ends[job.id] = start, end
        self.lengths[job.id] = length
        self.chosen[job.id], self.option_intervals[job.id] = literals, boxes

    def _start_var(self, job: Job, first: int, last: int) -> cp_model.IntVar:
        # S_j in [first, last], and under a calendar in the pieces of starts
        # that admit the job alone (optsched.models.site.admission).
        if self.calendar is None:
            return self.model.new_int_var(first, last, f"S{job.id}")
        pieces = admitted_pieces(self.instance, job, first, last, [(0, 0)])
        if not pieces:
            raise ValueError(f"option model: job {job.id} has no admissible start")
        self.pieces[job.id] = pieces
        domain = cp_model.Domain.from_intervals([[p.start, p.end - 1] for p in pieces])
        start = self.model.new_int_var_from_domain(domain, f"S{job.id}")
        self.pieces_chosen[job.id] = add_start_pieces(self.model, job, start, pieces)
        return start

    def _add_site_rules(self) -> None:
        """The calendar's admission at starts and its sequential queues, as
        the site model states them (:mod:`optsched.models.site.admission`),
        each job's end ``C_j = S_j + D_j`` with its chosen run time."""
        calendar = self.calendar
        if calendar is None:
            return
        jobs = self.instance.jobs
        batch = [
            j for j in jobs if j.queue not in calendar.anytime_queues and j.runtime > 0
        ]
        self.pair_literals = add_admission(
            self.model, batch, calendar, self.starts, self.ends, self.pieces,
            self.pieces_chosen,
            lambda i: max(self.durations[i.id]),
        )  # fmt: skip
        self.zero_literals = add_sequential(
            self.model, jobs, calendar, self.starts, self.ends, self.intervals
        )

    def hint_site_rules(self, schedule: Schedule) -> None:
        """Hint the calendar's literals of a checked schedule (relabelled
        as :meth:`hint` relabels it)."""
        if self.calendar is None:
            return
        schedule = _relabel(schedule, self.groups)
        at = {jid: p.start for jid, p in schedule.placements.items()}
        for jid, literals in self.pieces_chosen.items():
            for piece, x in zip(self.pieces[jid], literals, strict=False):
                self.model.add_hint(x, piece.start <= at[jid] < piece.end)
        ends = {jid: p.end for jid, p in schedule.placements.items()}
        hint_site(self.model, at, ends, self.pair_literals, self.zero_literals)

    def _add_objective(self, bounds: Sequence[Bound]) -> None:
        self.makespan, self.scale, self.exact = add_completion_objective(
            self.model, self.objective, self.instance, self.ends, self.deadlines, bounds
        )

    def hint_job(self, job_id: int, start: int, option: int) -> None:
        """Hint one job's start and option."""
        self.model.add_hint(self.starts[job_id], start)
        d = self.durations[job_id][option]
        self.model.add_hint(self.lengths[job_id], d)
        self.model.add_hint(self.ends[job_id], start + d)
        for k, x in enumerate(self.chosen[job_id]):
            if x is not None:
                self.model.add_hint(x, k == option)

    def hint_makespan(self, schedule: Schedule) -> None:
        """Hint the makespan variable (``cmax``)."""
        if self.makespan is not None:
            self.model.add_hint(
                self.makespan, max(p.end for p in schedule.placements.values())
            )

    def solver_bound(self, raw: float) -> float:
        """CP-SAT's bound in the objective's units
        (:func:`optsched.models.rigid.cpsat.objective_bound`)."""
        return objective_bound(
            self.objective, self.instance, raw, self.scale, self.exact
        )

    def picked(self, job_id: int, value: Callable[[Any], int]) -> int:
        """The index of the option a solution chose."""
        return next(
            k for k, x in enumerate(self.chosen[job_id]) if x is not None and value(x)
        )

    def hint(self, schedule: Schedule) -> None:
        """Hint CP-SAT with a schedule (each model's own variables)."""
        raise NotImplementedError

    def read(self, value: Callable[[Any], int]) -> Any:
        """A solution's choices, by job: what the model's decoder reads."""
        raise NotImplementedError


@dataclass
class OptionProblem:
    """What :func:`solve_options` needs of one option model.

    ``options`` are each job's run-time options (``.duration``);
    ``greedy(order, producer)`` a list schedule in an order; ``build(
    deadlines, bounds)`` the CP-SAT model (:class:`OptionModel`);
    ``decode(found)`` a solution's schedule (``ValueError`` on a model
    bug); ``refusal(deadlines)`` why the model is not built, or ``None``;
    ``params`` the model's own result parameters.
    """

    name: str
    options: Mapping[int, Sequence[Any]]
    greedy: Callable[[list[int], str], Schedule]
    build: Callable[[dict[int, int], list[Bound]], OptionModel]
    decode: Callable[[Any], Schedule]
    params: dict[str, Any]
    refusal: Callable[[dict[int, int]], str | None] = lambda deadlines: None


def _site_shape(job: Job) -> tuple[Any, ...]:
    # Interchangeable under a calendar: same size, work and queue.
    return (*_rigid_shape(job), job.queue)


def solve_options(
    instance: Instance,
    objective: Objective,
    problem: OptionProblem,
    settings: SolverSettings,
    incumbents: Sequence[Incumbent],
) -> Result:
    """Solve an option model (speed mixes, SMP spans) within the time limit.

    Greedy list schedules in submit and LPT or Smith order and the caller's
    incumbents (checked), :func:`~optsched.models.topology.bounds.
    topology_lower_bounds`, horizons from :func:`~optsched.models.common.solution.
    option_deadlines`, then CP-SAT hinted with the best schedule, configured
    from ``settings``. Always returns a checked schedule.
    """
    options = problem.options
    shortest = {jid: min(o.duration for o in opts) for jid, opts in options.items()}
    longest = {jid: max(o.duration for o in opts) for jid, opts in options.items()}

    def candidates(
        instance: Instance,
        objective: Objective,
        incumbents: Sequence[Incumbent],
        deadline: float | None,
    ) -> tuple[list[Candidate], list[str]]:
        if instance.machine.calendar is not None:
            # The greedy schedules ignore the calendar: the site's list
            # schedule follows it on any machine.
            greedy = [("site:list", site_list_schedule(instance))]
        else:
            greedy = [
                (
                    f"list:{problem.name}-{name}",
                    problem.greedy(order, f"list:{problem.name}-{name}"),
                )
                for name, order in greedy_orders(instance, objective, shortest)
            ]
        return own_candidates(instance, objective, incumbents, greedy, deadline)

    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        candidates=candidates, bounds=topology_lower_bounds,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    hint = solving.hint
    solving.params.update(model=problem.name, **problem.params)
    if instance.machine.calendar is None:
        deadlines = option_deadlines(
            instance, objective, hint.schedule, shortest, longest
        )
    else:  # shifting jobs left may break admission: the site's horizons
        deadlines = site_deadlines(instance, objective, hint.schedule, shortest)
    too_large = overflow(deadlines, len(instance.jobs)) or problem.refusal(deadlines)
    refusal = refusal_note(solving, too_large)
    if refusal is not None:
        solving.skip(refusal)
        return conclude(solving)
    model = problem.build(deadlines, solving.bounds if settings.bound_domain else [])
    model.hint(hint.schedule)
    model.hint_site_rules(hint.schedule)

    def decode(found: Any) -> tuple[Candidate | None, str | None]:
        try:
            schedule = problem.decode(found)
        except ValueError as error:  # a model bug: a resource is overloaded
            return None, f"{BACKEND}: {error}"
        return checked_candidate(instance, objective, BACKEND, schedule)

    search_collect(
        solving, model.model, model.read, model.solver_bound, decode,
        infeasible="CP-SAT proved the model infeasible (a model bug: the "
        "hint is feasible)",
        stats={
            "weight_scale": model.scale,
            "symmetry_groups": len(model.groups),
            "cliques": len(model.cliques),
        },
    )  # fmt: skip
    return conclude(solving)


def overflow(deadlines: Mapping[int, int], jobs: int) -> str | None:
    """Why the model would not fit CP-SAT's integers (start, length and end
    per job, the makespan), or ``None``."""
    horizon = max(deadlines.values(), default=0)
    return overflow_note(horizon, jobs, (3 * jobs + 1) * horizon)


# --------------------------------------------------------------------------
# The speed model
# --------------------------------------------------------------------------


class _SpeedModel(OptionModel):
    """:class:`OptionModel` with one cumulative per speed class and the
    redundant cumulative over all processors (module notes)."""

    def __init__(
        self,
        instance: Instance,
        objective: Objective,
        classes: Sequence[SpeedClass],
        options: Mapping[int, Sequence[Option]],
        deadlines: Mapping[int, int],
        bounds: Sequence[Bound],
        *,
        symmetry: bool,
        cliques: bool,
    ) -> None:
        super().__init__(
            instance, objective, options, deadlines, bounds, symmetry=symmetry,
            cliques=cliques,
        )  # fmt: skip
        self.classes, self.options = classes, options
        for c, group in enumerate(classes):
            boxes, demands = [], []
            for job in instance.jobs:
                for option, box in zip(
                    options[job.id], self.option_intervals[job.id], strict=True
                ):
                    if box is not None and option.demands[c] and option.duration:
                        boxes.append(box)
                        demands.append(option.demands[c])
            if boxes:
                self.model.add_cumulative(boxes, demands, len(group.processors))
        self.model.add_cumulative(
            [self.intervals[j.id] for j in instance.jobs],
            [j.size for j in instance.jobs],
            instance.processors,
        )

    def hint(self, schedule: Schedule) -> None:
        """Hint a checked schedule (relabelled for the symmetry breaking)."""
        schedule = _relabel(schedule, self.groups)
        for job in self.instance.jobs:
            placement = schedule[job.id]
            assert placement.processors is not None
            mix = mix_of(placement.processors, self.classes)
            option = next(
                k for k, o in enumerate(self.options[job.id]) if o.demands == mix
            )
            self.hint_job(job.id, placement.start, option)
        self.hint_makespan(schedule)

    def read(self, value: Callable[[Any], int]) -> dict[int, tuple[int, int]]:
        """``{job: (start, option index)}`` of a solution."""
        return {
            jid: (int(value(self.starts[jid])), self.picked(jid, value))
            for jid in self.starts
        }


def speed_schedule(
    instance: Instance,
    classes: Sequence[SpeedClass],
    options: Mapping[int, Sequence[Option]],
    found: Mapping[int, tuple[int, int]],
    producer: str,
) -> Schedule:
    """Placements of starts and mixes: each class's processors by
    :func:`colour` (``ValueError`` if some class is overloaded)."""
    taken: dict[int, list[int]] = defaultdict(list)
    for c, group in enumerate(classes):
        items = []
        for jid, (start, k) in found.items():
            option = options[jid][k]
            if option.demands[c]:
                items.append((start, start + option.duration, option.demands[c], jid))
        for jid, procs in colour(group.processors, items).items():
            taken[jid].extend(procs)
    return Schedule(
        {
            jid: Placement(
                start, start + options[jid][k].duration, tuple(sorted(taken[jid]))
            )
            for jid, (start, k) in found.items()
        },
        producer,
    )


def greedy_speed_schedule(
    instance: Instance,
    classes: Sequence[SpeedClass],
    options: Mapping[int, Sequence[Option]],
    order: Sequence[int],
    producer: str = "list:speeds",
) -> Schedule:
    """Serial list schedule: each job in ``order`` at the earliest start of
    the mix that completes it first (ties: less speed, then the mix order).

    Per class a :class:`~optsched.packing.Profile` of free processors; a
    start ``t`` fits a mix when each class ``c`` has ``a_c`` free over
    ``[t, t + d)``: from the release, each class's earliest fit from ``t``
    is taken until all agree (each class's earliest fit is monotone in
    ``t``, so nothing before the fixed point fits).
    """
    jobs = instance.jobs_by_id()
    profiles = [Profile(0, len(c.processors)) for c in classes]
    found: dict[int, tuple[int, int]] = {}
    for jid in order:
        best: tuple[tuple[int, Fraction, int], int] | None = None
        for k, option in enumerate(options[jid]):
            start = _earliest(profiles, option, jobs[jid].release)
            key = (start + option.duration, option.power, k)
            if best is None or key < best[0]:
                best = (key, start)
        assert best is not None
        (_, _, k), start = best
        option = options[jid][k]
        if option.duration:
            for profile, a in zip(profiles, option.demands, strict=True):
                if a:
                    profile.add(start, start + option.duration, -a)
        found[jid] = (start, k)
    return speed_schedule(instance, classes, options, found, producer)


def _earliest(profiles: Sequence[Profile], option: Option, release: int) -> int:
    t = release
    while True:
        later = t
        for profile, a in zip(profiles, option.demands, strict=True):
            if a:
                fit = profile.earliest_from(later, a, option.duration)
                assert fit is not None, "a class's last segment is all free"
                later = max(later, fit)
        if later == t:
            return t
        t = later


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    settings: SolverSettings = DEFAULTS,
    incumbents: Sequence[Incumbent] = (),
    cliques: bool = True,
) -> Result:
    """The optimum on a machine with speeds, with CP-SAT (module notes).

    ``settings`` as for :func:`optsched.models.rigid.cpsat.solve`, except
    that ``settings.cliques`` is not read: ``cliques`` (redundant no-overlaps
    over jobs that cannot run together, :class:`OptionModel`) is this
    model's own keyword, on by default: on 20-job AFKT batches on
    16x275 + 6x825 it found better schedules within a minute (makespans 286
    and 171 instead of 287 and 172), and on SMP nodes it decides proofs
    (:mod:`optsched.models.topology.smp`). Always returns a checked schedule;
    ``lower_bound`` is the best of
    :func:`~optsched.models.topology.bounds.topology_lower_bounds` and
    CP-SAT's bound.

    Raises
    ------
    ValueError
        The machine has no speeds, or has SMP nodes as well, or the jobs
        have more than :data:`MAX_OPTIONS` mixes together.
    """
    objective = Objective.parse(objective)
    if instance.machine.speeds is None or instance.machine.nodes is not None:
        raise ValueError(
            "speed model: needs a machine with speeds and without SMP nodes"
        )
    classes = speed_classes(instance)
    mixes = sum(mix_count(j.size, classes) for j in instance.jobs)
    if mixes > MAX_OPTIONS:
        raise ValueError(
            f"speed model: {mixes} job mixes over {len(classes)} speed classes, "
            f"more than {MAX_OPTIONS}: group the speeds into fewer classes"
        )
    options = speed_options(instance, classes)
    problem = OptionProblem(
        name="speeds",
        options=options,
        greedy=lambda order, producer: greedy_speed_schedule(
            instance, classes, options, order, producer
        ),
        build=lambda deadlines, domain: _SpeedModel(
            instance,
            objective,
            classes,
            options,
            deadlines,
            domain,
            symmetry=settings.symmetry,
            cliques=cliques,
        ),
        decode=lambda found: speed_schedule(instance, classes, options, found, BACKEND),
        params={
            "speed_classes": [(len(c.processors), str(c.speed)) for c in classes],
            "mixes": mixes,
        },
    )
    return solve_options(instance, objective, problem, settings, incumbents)
