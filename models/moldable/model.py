r"""CP-SAT moldable optimum: each job runs in one mode the solver chooses.

Model (job ``j`` with release ``r_j``, weight ``w_j`` and modes ``k``:
``p_{jk}`` processors for ``T_{jk}`` seconds; ``m`` processors, busy blocks
``b`` fixed). A rigid job of a mixed instance has one mode:

.. math::

    x_{jk} \in \{0, 1\},\quad \textstyle\sum_k x_{jk} = 1,\qquad
    S_j \in [r_j, D_j - \min_k T_{jk}],\quad
    x_{jk} \Rightarrow S_j + T_{jk} \le D_j

    I_{jk} = [S_j, S_j + T_{jk}) \text{ present iff } x_{jk},\qquad
    C_j = S_j + \textstyle\sum_k T_{jk} x_{jk}

    \text{any:}\quad \mathrm{Cumulative}(\{(I_{jk}, p_{jk})\} \cup
        \{(B_b, q_b)\},\ m)

    \text{contiguous:}\quad \mathrm{NoOverlap2D}(\{I_{jk} \times
        [O_j, O_j + p_{jk})\} \cup \{B_b \times [o_b, o_b + q_b)\}),\quad
        x_{jk} \Rightarrow O_j + p_{jk} \le m

    \text{cmax:}\ \min C,\ C_j \le C,\ C \in [\lceil LB \rceil, UB]
    \qquad \text{wct:}\ \min \sum_j \tilde w_j C_j

Optional intervals are the standard CP encoding of alternative modes
(multi-mode resource-constrained scheduling): P. Laborie, J. Rogerie,
"Reasoning with conditional time-intervals", FLAIRS 2008; Baptiste, Le
Pape, Nuijten, *Constraint-Based Scheduling*, Kluwer 2001. A box of the
contiguous model uses the same presence literal on both axes, so an absent
mode occupies nothing; contiguous models also get the cumulative as a
redundant relaxation, as in :mod:`optsched.models.rigid.cpsat`. ``\tilde w_j``
are the integer weights of :func:`optsched.models.rigid.cpsat.integer_weights`
(exact multiples ``2^e w_j`` for the usual weights, halves and quarters
included); ``LB`` the best bound of
:mod:`optsched.models.moldable.bounds`.

Horizons ``D_j`` (:func:`moldable_deadlines`): for ``cmax`` the incumbent's
makespan; for ``wct`` the rigid argument of
:func:`optsched.models.common.solution.completion_deadlines` with each job's
longest run time in the busy horizon and its shortest in the others'
floor (a schedule with an idle unit slot after every release and block can
be shifted left; an optimal one therefore completes by ``T0 + sum_j max_k
T_{jk}``, and ``w_j C_j <= UB - sum_{i != j} w_i (r_i + min_k T_{ik})``).

Dominated modes (another mode has fewer processors and runs no longer) are
left out (:func:`undominated`); a hint in such a mode takes the dominating
one.

Decoding: the chosen mode and start of each job give the *resolved* rigid
instance (``job.rigid(mode)``); on ``any`` machines
:func:`optsched.packing.assign_processors` gives it processor indices (a
count-feasible start vector always admits them), on contiguous machines the
offsets do. The schedule, of the original job ids, is then checked against
the moldable instance and its objective recomputed
(:func:`optsched.models.common.solution.checked_candidate`).

Incumbents: a schedule of a rigid policy runs every job in its requested
mode, one of its modes, so it is a moldable schedule. Two greedy moldable
list schedules are added (:func:`greedy_schedule`, in submit order and in
Smith's or LPT order by cheapest work); the best of all is the hint (mode
literals included) and the fallback upper bound.

Malleable jobs are scheduled as moldable ones: a restriction (a malleable
job may also run in one mode from start to end), so the schedule is
feasible and its objective an upper bound of the malleable optimum, but the
solver's bound bounds only the moldable optimum. For instances with
malleable jobs the solver's bound is therefore *not* a lower bound of the
result: it is kept as ``params["moldable_bound"]``, the lower bound is the
best closed-form bound (valid for malleable jobs), and the status is
``OPTIMAL`` only when the schedule meets that bound, i.e. when it is
optimal for the malleable problem too. ``params["restriction"]`` is then
``"moldable"``. Incumbents whose malleable jobs change mode (pieces, e.g.
DEQ's) are malleable schedules: checked, they are upper-bound candidates
(not hints).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from optsched.check import check_schedule
from optsched.instance import Instance, Job, Mode
from optsched.models.common.settings import DEFAULTS, SolverSettings
from optsched.models.common.solution import (
    Candidate,
    checked_candidate,
    option_deadlines,
)
from optsched.models.common.template import (
    ModelInputs,
    conclude,
    plain_candidates,
    prepare,
)
from optsched.models.moldable.bounds import job_modes, moldable_lower_bounds
from optsched.models.rigid.cpsat import (
    BACKEND,
    CpsatModel,
    _identical_groups,
    _relabel,
    add_completion_objective,
    add_processor_boxes,
    busy_intervals,
    overflow_note,
    refusal_note,
    search_collect,
)
from optsched.objective import Objective
from optsched.packing import Profile, Strip, assign_processors, contiguous_placement
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Schedule

_MAX_DENOMINATOR = 2**20


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    settings: SolverSettings = DEFAULTS,
    incumbents: Sequence[Incumbent] = (),
) -> Result:
    """The moldable optimum with CP-SAT; always return a checked schedule.

    Parameters
    ----------
    instance
        The problem; jobs with modes choose one (``any`` or ``contiguous``
        allocation, busy blocks).
    objective
        :class:`Objective` or its text form (``"cmax"``, ``"wct:size"``).
    settings
        As for :func:`optsched.models.rigid.cpsat.solve` (``cliques`` and
        ``decompose`` are not read). ``symmetry`` orders the starts of
        interchangeable jobs (same release, modes and, for ``wct``, weight):
        swapping two of them keeps a schedule feasible and its objective, so
        some optimal schedule has them in id order. ``bound_domain`` starts
        the makespan variable's domain at the best closed-form bound.
    incumbents
        As for :func:`optsched.models.rigid.cpsat.solve`.

    Returns
    -------
    Result
        Back-end ``cpsat``; ``lower_bound`` the maximum of the moldable
        bounds and (without malleable jobs) the solver's bound. See the
        module notes for malleable jobs.
    """
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        candidates=moldable_candidates, bounds=moldable_lower_bounds,
        restriction="moldable" if instance.malleable else None,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    objective = solving.objective
    # The hint is the best schedule of one mode per job: the malleable
    # incumbents join the candidates after it (see moldable_candidates).
    hint = solving.hint
    solving.params["moldable_jobs"] = sum(1 for j in instance.jobs if j.modes)
    refusal = refusal_note(solving, _overflow(instance, objective, hint.schedule))
    if refusal is not None:
        solving.skip(refusal)
    else:
        model = _Model(solving.model_inputs())
        search_collect(
            solving, model.model, lambda value: _read(model, value),
            model.solver_bound, lambda found: _decode(instance, objective, found),
            infeasible="CP-SAT proved the moldable model infeasible (a model "
            "bug: the hint is feasible)",
            stats={"weight_scale": model.scale,
                   "symmetry_groups": model.symmetry_groups},
            # A bound of the moldable restriction only (module notes).
            bound_note="moldable_bound" if instance.malleable else None,
        )  # fmt: skip
    return conclude(solving)


def moldable_candidates(
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    deadline: float | None,
) -> tuple[list[Candidate], list[str]]:
    """The checked incumbents and list schedule, the greedy moldable
    schedules (:func:`add_greedy`; best first: the first is the hint), then
    the malleable incumbents with pieces (:func:`malleable_incumbents`;
    upper bounds, never hints)."""
    candidates, rejected = plain_candidates(instance, objective, incumbents, deadline)
    add_greedy(instance, objective, candidates, rejected, deadline)
    if instance.malleable:
        rejected = malleable_incumbents(
            instance, objective, incumbents, candidates, rejected
        )
    return candidates, rejected


GREEDY_WORK = 10**8
"""Largest ``(number of modes) * (number of jobs)`` for which
:func:`add_greedy` runs :func:`greedy_schedule` (each mode scans a profile
that grows with the jobs placed: about a second at this size)."""


def greedy_schedule(instance: Instance, order: Sequence[int]) -> Schedule:
    """Serial SGS choosing each job's mode: the one that completes it first.

    Jobs are placed in ``order`` (ids), each at the earliest start beside
    the blocks and the jobs placed before it, in the mode with the earliest
    completion (ties: less work, then fewer processors): the serial schedule
    generation scheme of :func:`optsched.packing.list_schedule` (Kolisch
    1996) with the mode chosen greedily, as in multi-mode project scheduling
    (R. Kolisch, A. Drexl, "Local search for nonpreemptive multi-mode
    resource-constrained project scheduling", IIE Transactions 29(11),
    1997). Every job runs in one of its modes, so the schedule is moldable;
    it starts the search with modes a rigid policy never picks.
    """
    jobs = instance.jobs_by_id()
    m = instance.processors
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    contiguous = instance.machine.allocation == "contiguous"
    strip = Strip(m, blocks) if contiguous else None
    profile = None if contiguous else Profile.of_blocks(m, blocks)
    starts: dict[int, int] = {}
    offsets: dict[int, int] = {}
    fixed: dict[int, Job] = {}
    for jid in order:
        job = jobs[jid]
        best: tuple[tuple[int, int, int], int, int, Mode] | None = None
        for mode in job_modes(job):
            if strip is not None:
                start, offset = strip.earliest(
                    job.release, mode.runtime, mode.processors
                )
            else:
                assert profile is not None
                found = profile.earliest_from(
                    job.release, mode.processors, mode.runtime
                )
                assert found is not None, "the last segment of the profile is free"
                start, offset = found, 0
            key = (start + mode.runtime, mode.work, mode.processors)
            if best is None or key < best[0]:
                best = (key, start, offset, mode)
        assert best is not None
        _, start, offset, mode = best
        end = start + mode.runtime
        if strip is not None:
            strip.add(start, end, offset, mode.processors)
        elif profile is not None and end > start:
            profile.add(start, end, -mode.processors)
        starts[jid], offsets[jid], fixed[jid] = start, offset, job.rigid(mode)
    if strip is not None:
        return Schedule(
            {
                jid: contiguous_placement(
                    s, s + fixed[jid].runtime, offsets[jid], fixed[jid].size
                )
                for jid, s in starts.items()
            },
            "list:moldable",
        )
    resolved = instance.with_jobs(fixed[j.id] for j in instance.jobs)
    return assign_processors(resolved, starts, producer="list:moldable")


def add_greedy(
    instance: Instance,
    objective: Objective,
    candidates: list[Candidate],
    rejected: list[str],
    deadline: float | None,
) -> None:
    """Add :func:`greedy_schedule` to ``candidates`` (kept sorted, best first).

    Two orders: submit order, and Smith's order by cheapest work (largest
    ``w_j / W_j`` first; for ``cmax`` largest ``W_j`` first). Skipped once
    ``deadline`` (``time.monotonic``) has passed or beyond
    :data:`GREEDY_WORK`. A schedule the checker refuses (a bug) is listed in
    ``rejected``.
    """
    modes = sum(len(job_modes(j)) for j in instance.jobs)
    if modes * len(instance.jobs) > GREEDY_WORK:
        return
    cheapest = {j.id: min(mode.work for mode in job_modes(j)) for j in instance.jobs}
    submit = [j.id for j in sorted(instance.jobs, key=lambda j: (j.release, j.id))]
    if objective.kind == "cmax":
        ranked = sorted(cheapest, key=lambda jid: (-cheapest[jid], jid))
    else:
        weight = {j.id: objective.weight(j) for j in instance.jobs}
        ranked = sorted(
            cheapest, key=lambda jid: (-weight[jid] / max(cheapest[jid], 1), jid)
        )
    for name, order in (
        ("submit", submit),
        ("smith" if objective.kind == "wct" else "lpt", ranked),
    ):
        if deadline is not None and time.monotonic() >= deadline:
            return
        schedule = greedy_schedule(instance, order)
        source = f"list:moldable-{name}"
        found, reason = checked_candidate(instance, objective, source, schedule)
        if found is None:
            rejected.append(str(reason))  # a bug of the greedy: say so
        else:
            candidates.append(found)
            candidates.sort(key=lambda c: c.value)  # stable: earlier on ties


def malleable_incumbents(
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    candidates: list[Candidate],
    rejected: list[str],
) -> list[str]:
    """Keep the incumbents whose malleable jobs change mode (pieces).

    :func:`~optsched.models.common.solution.upper_bound_candidates` refuses pieces
    (a preempted job is no schedule of the rigid problem); on a malleable
    instance a schedule with pieces that passes the checker (rule 9) is a
    malleable schedule, so its objective bounds the malleable optimum (a
    DEQ schedule, say). It joins ``candidates`` (not the hint: the model
    runs each job in one mode). Returns the rejections still standing.
    """
    standing = list(rejected)
    for incumbent in incumbents:
        schedule = incumbent.schedule
        if schedule.killed or not any(p.pieces for p in schedule.placements.values()):
            continue
        refused = f"{incumbent.source}: preempts jobs"
        if not any(r.startswith(refused) for r in standing):
            continue  # not checked (time limit), or refused for another reason
        standing = [r for r in standing if not r.startswith(refused)]
        violations = check_schedule(instance, schedule)
        if violations:
            standing.append(f"{incumbent.source}: {violations[0]}")
            continue
        kept = Schedule(schedule.placements, incumbent.source)
        value = objective.value(instance, kept)
        candidates.append(Candidate(incumbent.source, kept, value))
    return standing


def moldable_deadlines(
    instance: Instance, objective: Objective, upper_bound: Schedule
) -> dict[int, int]:
    """Per job, a latest completion time that keeps a moldable optimum:
    :func:`optsched.models.common.solution.option_deadlines` with each job's
    shortest and longest mode run times (the proof is there)."""
    shortest = {j.id: min(m.runtime for m in job_modes(j)) for j in instance.jobs}
    longest = {j.id: max(m.runtime for m in job_modes(j)) for j in instance.jobs}
    return option_deadlines(instance, objective, upper_bound, shortest, longest)


def _overflow(
    instance: Instance, objective: Objective, incumbent: Schedule
) -> str | None:
    """Why the model would not fit CP-SAT's integers (as in
    :func:`optsched.models.rigid.cpsat.model_overflow`, one start and one end term
    per job), or ``None``."""
    deadlines = moldable_deadlines(instance, objective, incumbent)
    horizon = max(deadlines.values(), default=0)
    n = len(instance.jobs)
    return overflow_note(horizon, n, (2 * n + 1) * horizon + (n * instance.processors))


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class _Model(CpsatModel):
    """CP-SAT variables and constraints of the moldable problem."""

    def __init__(self, inputs: ModelInputs) -> None:
        super().__init__(inputs)
        instance, objective = inputs.instance, inputs.objective
        self.deadlines = moldable_deadlines(
            instance, objective, inputs.incumbent.schedule
        )
        self.modes: dict[int, tuple[Mode, ...]] = {}
        self.chosen: dict[int, list[cp_model.IntVar | None]] = {}
        self.ends: dict[int, cp_model.LinearExprT] = {}
        for job in instance.jobs:
            self._add_job(job)
        self._add_resources()
        groups = (
            _identical_groups(instance, objective, _modes_shape)
            if inputs.symmetry
            else []
        )
        self.symmetry_groups = len(groups)
        for group in groups:
            for first, second in itertools.pairwise(group):
                self.model.add(self.starts[first.id] <= self.starts[second.id])
        self._add_objective(inputs.bounds)
        self._add_hint(_relabel(inputs.incumbent.schedule, groups))

    def _add_job(self, job: Job) -> None:
        m = self.instance.processors
        modes = undominated(job_modes(job))
        self.modes[job.id] = modes
        deadline = self.deadlines[job.id]
        shortest = min(mode.runtime for mode in modes)
        start = self.model.new_int_var(job.release, deadline - shortest, f"S{job.id}")
        self.starts[job.id] = start
        literals: list[cp_model.IntVar | None] = []
        for k, mode in enumerate(modes):
            if job.release + mode.runtime > deadline:
                literals.append(None)  # this mode cannot meet the horizon
                continue
            x = self.model.new_bool_var(f"x{job.id}_{k}")
            self.model.add(start + mode.runtime <= deadline).only_enforce_if(x)
            literals.append(x)
        present = [x for x in literals if x is not None]
        self.model.add_exactly_one(present)
        self.chosen[job.id] = literals
        self.ends[job.id] = start + sum(
            mode.runtime * x
            for mode, x in zip(modes, literals, strict=True)
            if x is not None
        )
        if self.contiguous:
            narrowest = min(mode.processors for mode in modes)
            offset = self.model.new_int_var(0, m - narrowest, f"O{job.id}")
            self.offsets[job.id] = offset
            for mode, literal in zip(modes, literals, strict=True):
                if literal is not None:
                    self.model.add(offset + mode.processors <= m).only_enforce_if(
                        literal
                    )

    def _mode_items(self) -> list[tuple[Job, Mode, cp_model.IntVar]]:
        items = []
        for job in self.instance.jobs:
            for mode, x in zip(self.modes[job.id], self.chosen[job.id], strict=True):
                if x is not None and mode.runtime > 0:
                    items.append((job, mode, x))
        return items

    def _add_resources(self) -> None:
        m = self.instance.processors
        # Zero-length modes occupy nothing (the checker agrees); NoOverlap2D
        # would forbid their empty boxes inside another box.
        items = self._mode_items()
        time_iv = [
            self.model.new_optional_fixed_size_interval_var(
                self.starts[job.id], mode.runtime, x, f"I{job.id}_{mode.processors}"
            )
            for job, mode, x in items
        ]
        blocks, block_iv = busy_intervals(self.model, self.instance)
        # The model on `any` machines (blocks are counts there: every
        # count-feasible start vector admits processors), a redundant
        # relaxation on contiguous ones.
        self.model.add_cumulative(
            time_iv + block_iv,
            [mode.processors for _, mode, _ in items] + [b.size for b in blocks],
            m,
        )
        if not self.contiguous:
            return
        proc_iv = [
            self.model.new_optional_fixed_size_interval_var(
                self.offsets[job.id], mode.processors, x, f"P{job.id}_{mode.processors}"
            )
            for job, mode, x in items
        ]
        add_processor_boxes(self.model, time_iv, proc_iv, block_iv, blocks)

    def _add_objective(self, bounds: Sequence[Bound]) -> None:
        self.makespan, self.scale, self.exact = add_completion_objective(
            self.model, self.objective, self.instance, self.ends, self.deadlines, bounds
        )

    def _add_hint(self, schedule: Schedule) -> None:
        for job in self.instance.jobs:
            placement = schedule[job.id]
            self.model.add_hint(self.starts[job.id], placement.start)
            used = _hinted(self.modes[job.id], _count(job, placement.processors))
            for mode, x in zip(self.modes[job.id], self.chosen[job.id], strict=True):
                if x is not None:
                    self.model.add_hint(x, mode is used)
            if self.contiguous:
                self.model.add_hint(self.offsets[job.id], int(placement.offset or 0))
        self.hint_makespan(schedule)


def undominated(modes: Sequence[Mode]) -> tuple[Mode, ...]:
    """The modes no other mode dominates (fewer processors, no longer run).

    A mode ``(p', T')`` with a mode ``(p, T)``, ``p < p'`` and ``T <= T'``
    is never needed: in any schedule, running the job in ``(p, T)`` at the
    same start, on ``p`` of its ``p'`` processors (the first ``p`` on a
    contiguous machine, same offset), uses a sub-box of its box, so the
    schedule stays feasible and no completion grows; both objectives are
    regular. Among modes sorted by processors, the kept ones are those
    strictly faster than every narrower mode (run times then decrease).
    Speed-up models whose rounded run times level off (Amdahl, Downey,
    linear beyond its maximum) produce many dominated modes.
    """
    kept: list[Mode] = []
    for mode in sorted(modes, key=lambda mode: mode.processors):
        if not kept or mode.runtime < kept[-1].runtime:
            kept.append(mode)
    return tuple(kept)


def _hinted(modes: Sequence[Mode], used: int) -> Mode:
    """The kept mode standing for a schedule's mode on ``used`` processors:
    the widest kept mode on at most ``used`` processors (it dominates the
    used one, see :func:`undominated`, so the hinted placement stays
    feasible)."""
    fitting = [mode for mode in modes if mode.processors <= used]
    return fitting[-1] if fitting else modes[0]


def _count(job: Job, processors: Sequence[int] | None) -> int:
    """Processor count of a placement (the requested size when not named)."""
    return job.size if processors is None else len(processors)


def _modes_shape(job: Job) -> tuple[Any, ...]:
    # Interchangeable moldable jobs have the same modes (estimates aside:
    # the offline model never reads them), so a placement valid for one is
    # valid for the other.
    modes = tuple((mode.processors, mode.runtime) for mode in job_modes(job))
    return (modes, job.malleable)


# --------------------------------------------------------------------------
# Search and decoding
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Found:
    """A solution: per job its start, offset and chosen mode."""

    starts: dict[int, int]
    offsets: dict[int, int]
    modes: dict[int, Mode]


def _read(model: _Model, value: Callable[[Any], int]) -> _Found:
    modes = {}
    for jid, literals in model.chosen.items():
        picked = [
            mode
            for mode, x in zip(model.modes[jid], literals, strict=True)
            if x is not None and value(x)
        ]
        modes[jid] = picked[0]
    return _Found(
        {jid: int(value(v)) for jid, v in model.starts.items()},
        {jid: int(value(v)) for jid, v in model.offsets.items()},
        modes,
    )


def _decode(
    instance: Instance, objective: Objective, found: _Found
) -> tuple[Candidate | None, str | None]:
    """The checked schedule of chosen modes and starts (module notes)."""
    jobs = instance.jobs_by_id()
    fixed = {jid: jobs[jid].rigid(mode) for jid, mode in found.modes.items()}
    if instance.machine.allocation == "contiguous":
        placements = {
            jid: contiguous_placement(
                s, s + fixed[jid].runtime, found.offsets[jid], fixed[jid].size
            )
            for jid, s in found.starts.items()
        }
        schedule = Schedule(placements, BACKEND)
    else:
        resolved = instance.with_jobs(fixed[j.id] for j in instance.jobs)
        try:
            schedule = assign_processors(resolved, found.starts, producer=BACKEND)
        except ValueError as error:  # a model bug: the starts overload the machine
            return None, f"{BACKEND}: {error}"
    return checked_candidate(instance, objective, BACKEND, schedule)
