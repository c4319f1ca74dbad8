r"""CP-SAT optimum under a site calendar and job chains (the study's rules).

The machine's calendar (:mod:`optsched.calendar`) and the chains
(:mod:`optsched.site.chains`) are modelled exactly as the checker judges them
(:mod:`optsched.check`, rules 11 and 12). Rigid job ``j``: release
``r_j``, size ``q_j``, run time ``p_j``, queue ``Q_j``; ``A`` the jobs of
the calendar's anytime queues, ``N`` the others; ``B`` the busy blocks
``(s_b, e_b, q_b)``; ``L_j = \bar D_j - p_j`` the latest start under the
horizon ``\bar D_j`` (below).

Start pieces. Every start lies in ``[r''_j, L_j]`` (:func:`start_windows`:
the site release of :func:`~optsched.models.site.bounds.site_released`, and
``L_j`` lowered backwards along the chains). For ``j \in N`` that window
is cut at every change of the calendar and every busy-block boundary into
pieces ``k = [a_k, b_k)`` on which the batch capacity ``c_k``, the largest
startable job ``\sigma_k`` and the blocks' load ``\beta_k = \sum_{b: s_b
\le t < e_b} q_b`` are constant. A piece *admits* ``j`` when ``q_j \le \sigma_k``
and ``q_j + \beta_k \le c_k`` (``q_j \le c_k`` for a job of 0 s, which
holds nothing); ``x_{jk}`` chooses one:

.. math::

    \textstyle\sum_k x_{jk} = 1,\qquad x_{jk} \Rightarrow a_k \le S_j < b_k

Admission at the start (only the start is judged; running jobs are not
stopped when the capacity drops, so this is *not* a cumulative under a
capacity profile). For ``j \in N`` with ``p_j > 0`` and every other ``i
\in N`` with ``p_i > 0`` that can run at ``S_j``, a literal ``y_{ij}``
(``i`` holds its processors at ``S_j``):

.. math::

    \neg y_{ij} \Rightarrow (S_i + p_i \le S_j \ \vee\ S_i > S_j),\qquad
    q_j + \textstyle\sum_i q_i\, y_{ij} \le \sum_k (c_k - \beta_k)\, x_{jk}

``y_{ij}`` may be true when ``i`` does not run at ``S_j`` (it only
tightens the constraint), so every optimal schedule of the rules is a
solution, and every solution meets the rules: if ``S_i \le S_j < S_i +
p_i`` then ``y_{ij}`` is true. Intervals are half-open as in the checker
(``i`` ending at ``S_j`` holds nothing there; ``S_i = S_j`` counts both
ways). Pairs are dropped when their windows exclude it (``r_i > L_j`` or
``L_i + p_i \le r_j``), when a chain orders them (an ancestor ends before
its descendant starts) or a sequential queue separates them; and a job's
whole admission constraint is dropped when even all its candidates
together fit every piece.

Redundant cumulatives (they cut no schedule of the rules, and give CP-SAT
its strong cumulative propagation): on a maximal stretch ``G`` of constant
room ``\rho_G = c - \beta``, the jobs that *start* in ``G`` hold at most
``\rho_G`` at every instant, even after ``G`` ends,

.. math::

    \mathrm{Cumulative}(\{([S_j, S_j + p_j), q_j) \text{ present iff }
        x_{jk},\ k \subseteq G\},\ \rho_G)

since at any ``t`` the latest start ``s^*`` among those running at ``t``
lies in ``G``, all of them run at ``s^*``, and the admission there bounds
their sum by ``\rho_G`` (the argument of
:func:`optsched.models.site.bounds.batch_area_bound`).

Machine and queues:

.. math::

    \mathrm{Cumulative}(\{([S_j, S_j + p_j), q_j)\}_{p_j > 0} \cup
        \{([s_b, e_b), q_b)\},\ m)

    \mathrm{NoOverlap}(\{[S_j, S_j + p_j) : Q_j = Q,\ p_j > 0\})
    \ \text{per sequential queue } Q

and a job of 0 s of a sequential queue never starts strictly inside
another job of its queue (``S_z \le S_i \vee S_z \ge S_i + p_i``, the
checker's reading). Chains: ``S_s \ge S_p + p_p + \theta_{ps}`` for every
edge of :func:`optsched.site.chains.chain_graph`. Contiguous machines add
offsets and ``NoOverlap2D`` as :mod:`optsched.models.rigid.cpsat`. Objective:
:func:`optsched.models.rigid.cpsat.add_completion_objective` (``cmax`` and
every ``wct`` form).

Horizon :math:`\bar D_j` (:func:`site_deadlines`). ``cmax``: the best
incumbent's makespan ``UB``. ``wct``: ``\max(C_j^{UB}, \lfloor (UB -
\sum_{i \ne j} w_i (r''_i + p_i)) / w_j \rfloor)`` with ``r''`` the site
releases of :func:`optsched.models.site.bounds.site_released` (every schedule
has ``C_i \ge r''_i + p_i``, so an optimal one has ``w_j C_j \le UB -
\sum_{i \ne j} w_i C_i``). The calendar-free horizon ``T_0 + \sum p`` of
:func:`~optsched.models.common.solution.completion_deadlines` does not hold here:
shifting jobs left into an idle slot may break admission or a chain. Jobs
of weight 0 (0 s jobs under ``area`` weights) are handled in
:func:`site_deadlines`.

Incumbents: the caller's (checked); when none passes, a list schedule
under the calendar and chains (:mod:`optsched.models.site.greedy`).

The calendar is Mallmann's (Jülich 1997, §3.1.5, §3.2.5); the optional
intervals and reified disjunctions follow Laborie and Rogerie, "Reasoning
with conditional time-intervals", FLAIRS 2008; cumulative scheduling with
CP: Baptiste, Le Pape, Nuijten, *Constraint-Based Scheduling*, Kluwer 2001.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
from ortools.sat.python import cp_model

from optsched.calendar import DAY, WEEK
from optsched.instance import Instance, Job
from optsched.models.common.settings import DEFAULTS, SolverSettings
from optsched.models.common.solution import (
    Candidate,
    assign_processors,
    best_lower_bound,
    check_candidates,
    checked_candidate,
    is_optimal,
)
from optsched.models.common.template import ModelInputs, conclude, prepare
from optsched.models.rigid.bounds import lower_bounds_within
from optsched.models.rigid.cpsat import (
    BACKEND,
    CpsatModel,
    _relabel,
    add_completion_objective,
    add_rigid_machine,
    overflow_note,
    read_starts,
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
from optsched.objective import Objective
from optsched.packing import contiguous_placement
from optsched.result import Incumbent, Result
from optsched.schedule import Schedule

INFEASIBLE = (
    "CP-SAT proved the site model infeasible (a model bug: the hint is feasible)"
)


# --------------------------------------------------------------------------
# Start pieces
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Piece:
    """Starts ``[start, end)`` of one job on which the calendar admits it,
    with ``room`` processors for the jobs running at its start
    (``c_k - \\beta_k``, the job itself included)."""

    start: int
    end: int
    room: int


def block_load(instance: Instance) -> list[tuple[int, int]]:
    """The busy blocks' processors as steps ``(from, load)``, from time 0."""
    changes: dict[int, int] = defaultdict(int)
    for b in instance.machine.unavailable:
        if b.end > b.start:
            changes[b.start] += b.size
            changes[b.end] -= b.size
    steps, load = [(0, 0)], 0
    for t in sorted(changes):
        load += changes[t]
        if t <= 0:
            steps[0] = (0, load)
        else:
            steps.append((t, load))
    return steps


def admitted_pieces(
    instance: Instance,
    job: Job,
    first: int,
    last: int,
    blocks: Sequence[tuple[int, int]],
) -> list[Piece]:
    """The pieces of starts in ``[first, last]`` that admit ``job`` alone.

    Cut at every calendar change and block boundary; adjacent pieces of
    equal room are merged. A job of an anytime queue gets the whole window
    as one piece (room ``m``, unused). ``blocks`` from :func:`block_load`.
    """
    machine = instance.machine
    calendar = machine.calendar
    m = machine.processors
    if last < first:
        return []
    if calendar is None or job.queue in calendar.anytime_queues:
        return [Piece(first, last + 1, m)]
    cuts = [t for t, _ in blocks]
    out: list[Piece] = []
    for a, b, capacity, largest in calendar.segments(first, last + 1, m):
        k = max(0, _step_index(cuts, a))
        t = a
        while t < b:
            nxt = cuts[k + 1] if k + 1 < len(cuts) and cuts[k + 1] < b else b
            load = blocks[k][1]
            zero = job.runtime == 0
            fits = job.size <= largest and (
                job.size <= capacity if zero else job.size + load <= capacity
            )
            if fits:
                room = capacity - load
                if out and out[-1].end == t and out[-1].room == room:
                    out[-1] = Piece(out[-1].start, nxt, room)
                else:
                    out.append(Piece(t, nxt, room))
            t = nxt
            k += 1
    return out


def room_stretches(
    instance: Instance, first: int, last: int, blocks: Sequence[tuple[int, int]]
) -> list[tuple[int, int, int]]:
    """``(from, to, room)`` over ``[first, last)``: maximal stretches on
    which the batch capacity less the blocks' load is constant (``room``
    may be negative where blocks exceed the capacity)."""
    calendar = instance.machine.calendar
    assert calendar is not None
    m = instance.processors
    cuts = [t for t, _ in blocks]
    out: list[tuple[int, int, int]] = []
    for a, b, capacity, _ in calendar.segments(first, last, m):
        k = max(0, _step_index(cuts, a))
        t = a
        while t < b:
            nxt = cuts[k + 1] if k + 1 < len(cuts) and cuts[k + 1] < b else b
            room = capacity - blocks[k][1]
            if out and out[-1][1] == t and out[-1][2] == room:
                out[-1] = (out[-1][0], nxt, room)
            else:
                out.append((t, nxt, room))
            t = nxt
            k += 1
    return out


def _step_index(cuts: Sequence[int], t: int) -> int:
    lo, hi = 0, len(cuts)
    while lo < hi:  # the last cut <= t
        mid = (lo + hi) // 2
        if cuts[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


# --------------------------------------------------------------------------
# Horizons and incumbents
# --------------------------------------------------------------------------


def site_deadlines(
    instance: Instance,
    objective: Objective,
    upper_bound: Schedule,
    shortest: Mapping[int, int] | None = None,
) -> dict[int, int]:
    r"""Per job a latest completion ``\bar D_j`` that keeps an optimal schedule.

    ``cmax``: the incumbent's makespan. ``wct`` (module notes): ``\bar D_j
    = \max(C^{UB}_j, \lfloor (UB - R_j) / w_j \rfloor)``, ``R_j = \sum_{i
    \ne j} w_i (r''_i + p_i)``. A job of weight 0 is a job of 0 s (weights
    are positive otherwise, :class:`~optsched.instance.Job`); it holds
    nothing, so in an optimal schedule whose weighted jobs end by ``T =
    \max(\max_{w_j > 0} \bar D_j, \max_j r_j)`` the 0 s jobs that precede
    no weighted job can be moved, in topological order, to their earliest
    admissible start after ``T`` and after their predecessor (at most
    ``\theta_{\max} + 2\,\mathrm{week} + (h + 1)\,\mathrm{day}`` later,
    :meth:`~optsched.calendar.Calendar.earliest_start`; nothing runs after
    ``T`` to block them); the others already start before ``T``. So
    ``\bar D_j = \max(C^{UB}_j, T + z (\theta_{\max} + 2\,\mathrm{week} +
    (h + 1)\,\mathrm{day}))`` with ``z`` the number of 0 s jobs of weight 0.
    Fractional weights: a margin of ``1e-9 UB`` before rounding down.
    Where a job's run time depends on its processors (speeds, SMP nodes),
    ``shortest`` gives its shortest one, in place of ``p_i``.
    """
    jobs = instance.jobs
    if objective.kind == "cmax":
        span = max((upper_bound[j.id].end for j in jobs), default=0)
        return {j.id: span for j in jobs}
    released = {j.id: j.release for j in site_released(instance).jobs}
    weights = {j.id: objective.exact_weight(j) for j in jobs}
    total = sum(weights[j.id] * upper_bound[j.id].end for j in jobs)
    length = shortest or {j.id: j.runtime for j in jobs}
    floor_all = sum(weights[j.id] * (released[j.id] + length[j.id]) for j in jobs)
    exact = all(isinstance(w, int) for w in weights.values())
    margin = 0 if exact else 1e-9 * max(1.0, abs(total))
    out: dict[int, int] = {}
    for j in jobs:
        w = weights[j.id]
        if w == 0:
            continue
        rest = floor_all - w * (released[j.id] + length[j.id])
        own = (
            int((total - rest) // w)
            if exact
            else math.floor((total - rest + margin) / w)
        )
        out[j.id] = max(own, upper_bound[j.id].end)
    zero = [j for j in jobs if weights[j.id] == 0]
    if zero:
        calendar = instance.machine.calendar
        holidays = len(calendar.holidays) if calendar is not None else 0
        think = max((max(0, j.think_time or 0) for j in jobs), default=0)
        step = think + 2 * WEEK + (holidays + 1) * DAY
        top = max([*out.values(), *(j.release for j in jobs)])
        for j in zero:
            out[j.id] = max(upper_bound[j.id].end, top + len(zero) * step)
    return out


def site_candidates(
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    deadline: float | None,
) -> tuple[list[Candidate], list[str]]:
    """The caller's incumbents, checked, best first; when none passes (or
    none is given), the calendar-aware list schedule joins them
    (:func:`~optsched.models.site.greedy.site_list_schedule`; ``ValueError``
    when some job can never start under the calendar).

    A model never simulates a policy: the callers that want the policies'
    schedules (the analysis pipeline, ``optsched bound``) pass them as
    incumbents."""
    raw = [(i.source, i.schedule) for i in incumbents]
    if raw:
        try:
            return check_candidates(
                instance, objective, raw, always=1, deadline=deadline, what="starting"
            )
        except RuntimeError:
            pass
    listed = site_list_schedule(instance, "site:list")
    return check_candidates(
        instance,
        objective,
        [("site:list", listed), *raw],
        always=1 + len(raw[:1]),
        deadline=deadline,
        what="starting",
    )


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class SiteModel(CpsatModel):
    """CP-SAT variables and constraints of the module notes, within the
    completion ``deadlines`` (:func:`site_deadlines`)."""

    def __init__(self, inputs: ModelInputs, deadlines: Mapping[int, int]) -> None:
        super().__init__(inputs)
        instance, objective = inputs.instance, inputs.objective
        self.deadlines = deadlines
        self.calendar = instance.machine.calendar
        self.graph = _chains(instance)
        self.pieces: dict[int, list[Piece]] = {}
        self.chosen: dict[int, list[Any]] = {}
        self.pairs = 0
        # Literals to hint: (i, j, y_ij, ended_ij) of the admission pairs and
        # (z, i, early) of the 0 s jobs of sequential queues.
        self.pair_literals: list[tuple[Job, Job, Any, Any]] = []
        self.zero_literals: list[tuple[Job, Job, Any]] = []
        self.window = start_windows(instance, deadlines, self.graph)
        blocks = block_load(instance)
        for job in instance.jobs:
            self._add_job(job, blocks)
        self._add_machine()
        self._add_queues()
        by_id = instance.jobs_by_id()
        for before, after, data in self.graph.edges(data=True):
            self.model.add(
                self.starts[after]
                >= self.starts[before] + by_id[before].runtime + data["think_time"]
            )
        self._add_admission()
        self.segment_cumulatives = self._add_segment_cumulatives(blocks)
        self.groups = (
            _identical_groups(instance, objective, self.graph)
            if inputs.symmetry
            else []
        )
        for group in self.groups:
            for first, second in itertools.pairwise(group):
                self.model.add(self.starts[first.id] <= self.starts[second.id])
        ends = {j.id: self.starts[j.id] + j.runtime for j in instance.jobs}
        self.makespan, self.scale, self.exact = add_completion_objective(
            self.model, objective, instance, ends, deadlines, inputs.bounds
        )

    # -- variables ------------------------------------------------------------
    def _batch(self, job: Job) -> bool:
        """Does ``job`` take part in the calendar's admission (not anytime)?"""
        return (
            self.calendar is not None and job.queue not in self.calendar.anytime_queues
        )

    def _add_job(self, job: Job, blocks: Sequence[tuple[int, int]]) -> None:
        first, latest = self.window[job.id]
        pieces = admitted_pieces(self.instance, job, first, latest, blocks)
        if not pieces:
            raise ValueError(f"site model: job {job.id} has no admissible start")
        self.pieces[job.id] = pieces
        domain = cp_model.Domain.from_intervals([[p.start, p.end - 1] for p in pieces])
        start = self.model.new_int_var_from_domain(domain, f"S{job.id}")
        self.starts[job.id] = start
        self.chosen[job.id] = add_start_pieces(self.model, job, start, pieces)
        if self.contiguous:
            self.offsets[job.id] = self.model.new_int_var(
                0, self.instance.processors - job.size, f"O{job.id}"
            )

    # -- resources ------------------------------------------------------------
    def _add_machine(self) -> None:
        jobs = [j for j in self.instance.jobs if j.runtime > 0]
        self.intervals = add_rigid_machine(
            self.model, self.instance, jobs, self.starts,
            self.offsets if self.contiguous else None,
        )  # fmt: skip

    def _ends(self) -> dict[int, Any]:
        return {j.id: self.starts[j.id] + j.runtime for j in self.instance.jobs}

    def _add_queues(self) -> None:
        if self.calendar is None:
            return
        self.zero_literals = add_sequential(
            self.model, self.instance.jobs, self.calendar, self.starts,
            self._ends(), self.intervals,
        )  # fmt: skip

    def _add_admission(self) -> None:
        if self.calendar is None:
            return
        batch = [j for j in self.instance.jobs if self._batch(j) and j.runtime > 0]
        ancestors = {j.id: nx.ancestors(self.graph, j.id) for j in batch}
        self.pair_literals = add_admission(
            self.model, batch, self.calendar, self.starts, self._ends(),
            self.pieces, self.chosen, lambda i: i.runtime,
            lambda i, j: i.id in ancestors[j.id] or j.id in ancestors[i.id],
        )  # fmt: skip
        self.pairs = len(self.pair_literals)

    def _add_segment_cumulatives(self, blocks: Sequence[tuple[int, int]]) -> int:
        """Redundant: one cumulative per stretch of constant room (module
        notes); returns how many were added."""
        if self.calendar is None:
            return 0
        batch = [j for j in self.instance.jobs if self._batch(j) and j.runtime > 0]
        if not batch:
            return 0
        first = min(self.pieces[j.id][0].start for j in batch)
        last = max(self.pieces[j.id][-1].end for j in batch)
        stretches = room_stretches(self.instance, first, last, blocks)
        starts = [a for a, _, _ in stretches]
        members: dict[int, list[tuple[Job, Any]]] = defaultdict(list)
        for job in batch:
            for k, piece in enumerate(self.pieces[job.id]):
                g = bisect.bisect_right(starts, piece.start) - 1
                # A piece has constant room: it lies inside one stretch.
                assert stretches[g][1] >= piece.end, (stretches[g], piece)
                present = self.chosen[job.id][k] if self.chosen[job.id] else None
                members[g].append((job, present))
        added = 0
        for g, items in sorted(members.items()):
            room = stretches[g][2]
            if sum(job.size for job, _ in items) <= room:
                continue  # never binding
            boxes = [
                self.intervals[job.id]
                if present is None
                else self.model.new_optional_fixed_size_interval_var(
                    self.starts[job.id], job.runtime, present, f"G{job.id}_{g}"
                )
                for job, present in items
            ]
            self.model.add_cumulative(boxes, [job.size for job, _ in items], room)
            added += 1
        return added

    # -- hint and reading -----------------------------------------------------
    def hint(self, schedule: Schedule) -> None:
        """Hint a checked schedule (relabelled for the symmetry breaking)."""
        schedule = _relabel(schedule, self.groups)
        for job in self.instance.jobs:
            start = schedule[job.id].start
            self.model.add_hint(self.starts[job.id], start)
            for piece, x in zip(self.pieces[job.id], self.chosen[job.id], strict=False):
                self.model.add_hint(x, piece.start <= start < piece.end)
            if self.contiguous:
                self.model.add_hint(
                    self.offsets[job.id], int(schedule[job.id].offset or 0)
                )
        # A complete hint: CP-SAT takes it as a first solution at once.
        at = {jid: p.start for jid, p in schedule.placements.items()}
        jobs = self.instance.jobs_by_id()
        ends = {jid: s + jobs[jid].runtime for jid, s in at.items()}
        hint_site(self.model, at, ends, self.pair_literals, self.zero_literals)
        self.hint_makespan(schedule)

    def read(self, value: Callable[[Any], int]) -> dict[int, tuple[int, int]]:
        """``{job: (start, offset)}`` of a solution."""
        return read_starts(self.starts, self.offsets, value)

    def decode(self, found: Mapping[int, tuple[int, int]]) -> Schedule:
        """The schedule of a solution, with processors."""
        jobs = self.instance.jobs_by_id()
        if self.contiguous:
            return Schedule(
                {
                    jid: contiguous_placement(
                        s, s + jobs[jid].runtime, o, jobs[jid].size
                    )
                    for jid, (s, o) in found.items()
                },
                BACKEND,
            )
        starts = {jid: s for jid, (s, _) in found.items()}
        return assign_processors(self.instance, starts)


def start_windows(
    instance: Instance, deadlines: Mapping[int, int], graph: nx.DiGraph
) -> dict[int, tuple[int, int]]:
    r"""Per job ``[first, last]`` holding its start in every schedule of the
    rules that meets the horizons ``deadlines``.

    ``first = r''_j``, the site release of
    :func:`~optsched.models.site.bounds.site_released` (no schedule of the rules
    starts a job earlier). ``last``: ``\bar D_j - p_j``, lowered backwards
    along the chains, ``last_p \le last_s - 	heta_{ps} - p_p`` (the
    successor must start by ``last_s``). Both are implied by the
    constraints, so every schedule the model admits, the hint included,
    keeps them.
    """

    released = {j.id: j.release for j in site_released(instance).jobs}
    by_id = instance.jobs_by_id()
    last = {j.id: deadlines[j.id] - j.runtime for j in instance.jobs}
    for node in reversed(list(nx.topological_sort(graph))):
        for _, succ, data in graph.out_edges(node, data=True):
            last[node] = min(
                last[node], last[succ] - data["think_time"] - by_id[node].runtime
            )
    return {j.id: (max(j.release, released[j.id]), last[j.id]) for j in instance.jobs}


def _chains(instance: Instance) -> nx.DiGraph:
    from optsched.site.chains import chain_graph

    graph: nx.DiGraph = chain_graph(instance.jobs).graph
    return graph


def _identical_groups(
    instance: Instance, objective: Objective, graph: nx.DiGraph
) -> list[list[Job]]:
    """Interchangeable jobs: same release, size, run time, queue (and
    weight for ``wct``), in no chain. Swapping two of them keeps every rule
    (admission reads sizes, the sequential queues and anytime exemption
    read queues) and the objective; their starts are then ordered by id."""
    groups: dict[tuple[Any, ...], list[Job]] = defaultdict(list)
    for job in instance.jobs:
        if graph.degree(job.id):
            continue
        key: tuple[Any, ...] = (job.release, job.size, job.runtime, job.queue)
        if objective.kind == "wct":
            key += (objective.weight(job),)
        groups[key].append(job)
    return [sorted(g, key=lambda j: j.id) for g in groups.values() if len(g) > 1]


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    settings: SolverSettings = DEFAULTS,
    incumbents: Sequence[Incumbent] = (),
) -> Result:
    """The optimum under the site calendar and chains, with CP-SAT.

    ``settings`` as for :func:`optsched.models.rigid.cpsat.solve` (which
    dispatches here when the machine has a calendar or a job has a
    predecessor; ``cliques`` is not read).
    Always returns a checked schedule; ``lower_bound`` is the best of
    :func:`~optsched.models.rigid.bounds.lower_bounds_within` and CP-SAT's bound.
    With ``bound_domain`` (the default), no search runs when those bounds
    already prove the best incumbent optimal.

    Raises
    ------
    ValueError
        The machine has node speeds or SMP nodes, or the jobs have modes; or
        some job can never start under the calendar.
    """
    if not instance.machine.flat or instance.moldable:
        raise ValueError(
            "site model: calendars and chains are modelled for rigid jobs on "
            "identical processors only"
        )
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        candidates=site_candidates, bounds=lower_bounds_within,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    objective, hint = solving.objective, solving.hint
    solving.params["model"] = "site"
    deadlines = site_deadlines(instance, objective, hint.schedule)
    horizon = max(deadlines.values())
    n = len(instance.jobs)
    too_large = overflow_note(horizon, n, (n + 1) * horizon + n * instance.processors)
    proven = settings.bound_domain and is_optimal(
        objective, hint.value, best_lower_bound(instance, objective, solving.bounds)
    )
    if proven and too_large is None:
        # Nothing to search for (without bound_domain, the solver's own
        # bound is being measured: search anyway).
        solving.skip(f"{BACKEND}: search skipped (the bounds prove the incumbent)")
    elif (refusal := refusal_note(solving, too_large)) is not None:
        solving.skip(refusal)
    else:
        model = SiteModel(solving.model_inputs(), deadlines)
        model.hint(hint.schedule)
        solving.params["admission_pairs"] = model.pairs
        solving.params["segment_cumulatives"] = model.segment_cumulatives
        search_collect(
            solving, model.model, model.read, model.solver_bound,
            lambda found: checked_candidate(
                instance, objective, BACKEND, model.decode(found)
            ),
            infeasible=INFEASIBLE,
            stats={"weight_scale": model.scale, "symmetry_groups": len(model.groups)},
        )  # fmt: skip
    return conclude(solving)
