r"""Shelf-restricted optimum with CP-SAT (back-end ``"shelf"``).

A *shelf schedule* (:func:`optsched.check.is_shelf_schedule`) groups the
jobs by start time into shelves; each shelf lasts as long as its longest
job and ends before the next one starts. This back-end returns the best
shelf schedule for ``cmax`` or ``wct`` (every weight rule), or bounds
around it: its ``objective`` and ``lower_bound`` are those of the
*restricted* problem (:data:`optsched.models.RESTRICTIONS`,
``params["restriction"] == "shelves"``). Every shelf schedule is a
schedule, so the shelf optimum is at least the unrestricted one, and its
schedule is also an upper bound of the unrestricted problem.

Notation: job ``j`` has release ``r_j`` (``r'_j`` the effective release of
:func:`~optsched.models.rigid.bounds.earliest_start_alone`), size ``q_j``, run
time ``p_j``, weight ``w_j``; ``T_j \in [r'_j, D_j - p_j]`` is its start,
with ``D_j`` from :func:`shelf_deadlines` (the incumbent's makespan for
``cmax``; the horizon of :func:`~optsched.models.common.solution.
completion_deadlines` for ``wct``, whose shifting argument moves whole
shelves: a unit slot where no job runs lies between two shelves). Jobs of
run time 0 ("zero jobs") occupy nothing and are modelled apart.

Representatives formulation (default)
-------------------------------------
Order the positive jobs by non-increasing run time (ties: size, release,
weight, id); ``i ≺ j`` when ``i`` comes first. Each shelf is *led* by its
first job in this order, its tallest, so the shelf lasts exactly ``p_i``:

.. math::

    y_i = 1 \iff i \text{ leads a shelf},\qquad
    x_{ij} = 1 \iff j \text{ is in the shelf led by } i \quad (i \prec j)

    y_j + \textstyle\sum_{i \prec j} x_{ij} = 1,\qquad
    x_{ij} \Rightarrow y_i,\qquad x_{ij} \Rightarrow T_j = T_i

    \textstyle\sum_{j \succ i} q_j x_{ij} \le (m - q_i)\, y_i
    \qquad \text{(the shelf fits)}

    \mathrm{NoOverlap}(\{[T_i, T_i + p_i) \text{ present iff } y_i\})
    \qquad \text{(shelves are disjoint in time)}

    \textstyle\sum_i y_i \ge N \qquad (N = \text{:func:`shelf_count_bound`})

    \text{cmax: } \min C,\ C \ge T_j + p_j,\
        C \ge \textstyle\sum_i p_i y_i,\ C \in [\lceil LB \rceil, UB]

    \text{wct: } \min \textstyle\sum_j \tilde w_j (T_j + p_j)

Without releases and busy blocks the cmax part is the level-packing model
of A. Lodi, S. Martello, D. Vigo, "Models and bounds for two-dimensional
level packing problems", J. Comb. Optim. 8(3), 2004 (objective
``sum_i p_i y_i``, strong linear relaxation); it proves the 20-job batches
of the issue in about a second. Each set partition has exactly one
representation (the leader is determined), so the shelves carry no labels
to permute: this is the "lowest-index job of each shelf" symmetry breaking,
with the index taken in height order.

*Before* variables ``v_{ij}`` ("shelf ``i`` is used and ends by ``T_j``")
for every zero job ``j`` and, under ``wct``, for every positive ``j``
(``i \ne j`` leaders):

.. math::

    v_{ij} \Rightarrow y_i,\quad v_{ij} \Rightarrow \neg x_{ij},\quad
    v_{ij} \Rightarrow T_i + p_i \le T_j,\quad
    y_i \wedge \neg x_{ij} \wedge \neg v_{ij} \Rightarrow T_i \ge T_j + p_j

so a zero job never starts strictly inside a shelf. Under ``wct`` also
``T_j \ge \sum_i p_i v_{ij}`` (the shelves before ``j``'s are disjoint and
end by ``T_j``), with equality when all releases are 0 and there are no
blocks (then some optimal schedule has no idle time), and
``v_{ab} + v_{ba} \ge y_a + y_b - 1`` (of two used shelves one comes
first). Without releases and blocks, a dominance rule too: ``v_{ij}
\Rightarrow q_i + \sum_l q_l x_{il} > m - q_j`` whenever ``p_j \le p_i``
(no job fits into an earlier shelf that is tall enough). Moving such a job
there lowers its start and no other, so ``sum_j T_j`` strictly decreases
and the cost does not grow; repeating ends in a schedule without such a
move, which stays so when its idle time is removed (that changes neither
contents nor order) and when identical jobs are relabelled.

The solutions are exactly the shelf schedules: a shelf schedule gives
``y, x`` from its groups of equal start (leader = its first positive job in
the order), ``T`` from its starts and ``v`` from its times (a shelf not
holding ``j`` lies wholly before or after ``j``'s); conversely the leaders'
intervals are disjoint and hold their members' runs, so the groups of
equal start of a solution are the led shelves (plus zero jobs, which start
inside none), each ending by the next one's start.

Chain formulation (``formulation="chain"``)
-------------------------------------------
``K = n`` shelves ``k`` in time order with start ``S_k``, end ``E_k`` and a
"used" flag ``u_k``; ``x_{jk}`` puts job ``j`` on shelf ``k``:
``sum_k x_{jk} = 1``, ``x_{jk} \Rightarrow T_j = S_k``,
``x_{jk} \Rightarrow E_k \ge T_j + p_j``, ``S_k \ge E_{k-1}``,
``\sum_{p_j > 0} q_j x_{jk} \le m``; cmax ``\min E_{K-1}``. Symmetry: used
shelves first (``u_k \Rightarrow u_{k-1}``, an unused shelf pinned to
height 0 at the previous end), ``u_k = 1`` for ``k < N``, identical jobs
on non-decreasing shelf indices. Its heights are maxima (weak relaxation);
it stays as an independent check of the default (the tests run both
against the brute force) and for comparison (benchmarks: 20-job batches
unproven after 20 s where the default proves them in under a second).

Capacity, busy blocks, contiguous machines
------------------------------------------
Without busy blocks jobs of different shelves never overlap in time and
those of one shelf all run at its start, so the knapsack row is the whole
capacity rule of the checker. With busy blocks the cumulative constraint
over the job intervals and the blocks (``any``) or NoOverlap2D over job
and block rectangles (``contiguous``, offsets ``O_j \in [0, m - q_j]``)
*is* the checker's rule, the knapsack row staying as a cut: busy blocks
are handled exactly, not by a conservative shelf-level rule.

Contiguous machines without blocks: a shelf whose sizes sum to at most
``m`` has adjacent ranges left to right, so offsets are no variables; they
are assigned left to right (job-id order) after the solve, and the
contiguous shelf optimum equals the ``any`` one.

Identical jobs (same release, size, run time, and weight for wct) are
adjacent in the order; for consecutive ``a, b`` of a run:
``y_b \Rightarrow y_a`` and, if ``a`` leads nothing, the leader of ``a``'s
shelf comes no later than ``b``'s. Any solution is relabelled into this
form (:func:`_relabel_slots`: leader slots to the first jobs of the run,
member slots in order to the rest; leaders only move earlier, members
later), and the hint is relabelled the same way.

Incumbents and bounds
---------------------
Only feasible *shelf* schedules may bound the shelf optimum. Each incumbent
is checked (:func:`~optsched.models.common.solution.checked_candidate`) and then
tested with :func:`~optsched.check.is_shelf_schedule`; the others are
rejected with the reason (:attr:`Result.rejected`). Three first-fit shelf
schedules (:func:`first_fit_shelves`) are always added, so the back-end
has a shelf schedule when called alone, and without blocks every candidate
is also offered resequenced (:func:`resequenced`: Smith's rule or earliest
release, back to back). The best candidate is the solver's hint.

Lower bounds: the unrestricted closed-form bounds of
:mod:`optsched.models.rigid.bounds` (the shelf optimum is at least the
unrestricted one), the shelf bounds :func:`shelf_height_bound` (cmax) and
:func:`shelf_order_bound` (wct), and CP-SAT's own bound. Weights are made
integers by :func:`optsched.models.rigid.cpsat.integer_weights` (exact for weights
such as ``0.5``).
"""

from __future__ import annotations

import itertools
import math
import time
from bisect import insort
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from optsched.check import is_shelf_schedule
from optsched.instance import BusyBlock, Instance, Job
from optsched.models.common.settings import (
    BOUND_SUBSOLVERS,
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    LogSink,
    SolverSettings,
)
from optsched.models.common.solution import (
    Candidate,
    bounds_deadline,
    checked_candidate,
    completion_deadlines,
    round_up_bound,
    safe_horizon,
)
from optsched.models.common.solution import (
    assign_processors as assign_checked,
)
from optsched.models.common.template import ModelInputs, conclude, prepare
from optsched.models.moldable.bounds import require_rigid
from optsched.models.rigid.bounds import (
    dual_feasible_functions,
    earliest_start_alone,
    lower_bounds_within,
)
from optsched.models.rigid.cpsat import (
    CpsatModel,
    _identical_groups,
    _relabel,
    add_rigid_machine,
    integer_weights,
    order_interchangeable,
    read_starts,
    search_collect,
    search_refusal,
)
from optsched.models.shelf.enumerate import smith_order
from optsched.objective import Objective
from optsched.packing import assign_processors, contiguous_placement
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Placement, Schedule

BACKEND = "shelf"

RESTRICTION = "shelves"
"""Name of the restriction (``Result.params["restriction"]``)."""

FORMULATIONS = ("representatives", "chain")
"""CP-SAT formulations of :func:`solve`."""

_DFF_BUDGET = 2_000_000
"""Largest ``jobs x thresholds x functions`` product for which the shelf
bounds try every dual-feasible function (beyond: area and count only)."""


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    incumbents: Sequence[Incumbent] = (),
    log: bool | LogSink = False,
    symmetry: bool = True,
    formulation: str = "representatives",
    bound_subsolvers: Sequence[str] = BOUND_SUBSOLVERS,
    seed: int = 0,
    parameters: Mapping[str, Any] | None = None,
) -> Result:
    """Best shelf schedule of ``instance`` with CP-SAT, or bounds around it.

    Parameters
    ----------
    instance
        The problem (``any`` or ``contiguous``, releases, busy blocks).
    objective
        :class:`Objective` or its text form.
    time_limit
        Seconds for the whole call.
    workers
        CP-SAT worker threads.
    incumbents
        Starting schedules; only feasible shelf schedules are used (the best
        is the hint), the others are listed in :attr:`Result.rejected`.
    log
        ``True`` to print the search log, or a function receiving each line.
    symmetry
        Add the symmetry-breaking constraints for identical jobs.
    formulation
        ``"representatives"`` (default: each shelf named by its tallest job)
        or ``"chain"`` (``n`` shelves in time order); see the module notes.
    bound_subsolvers, seed, parameters
        As in :func:`optsched.models.rigid.cpsat.solve`.

    Returns
    -------
    Result
        ``backend="shelf"``; ``objective`` and ``lower_bound`` are those of
        the shelf-restricted problem (``params["restriction"] == "shelves"``);
        the schedule passes :func:`~optsched.check.check_schedule` and
        :func:`~optsched.check.is_shelf_schedule`.
    """
    settings = SolverSettings.of(locals())
    require_rigid(BACKEND, instance)
    if formulation not in FORMULATIONS:
        raise ValueError(
            f"formulation {formulation!r} is not one of {', '.join(FORMULATIONS)}"
        )
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        candidates=lambda instance, objective, incumbents, _: shelf_candidates(
            instance, objective, incumbents=incumbents
        ),
        bounds=lower_bounds_within, restriction=RESTRICTION,
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    objective = solving.objective
    if not solving.expired():
        # Half the time left, as the closed-form bounds: the model keeps the rest.
        until = None if solving.deadline is None else bounds_deadline(solving.deadline)
        solving.bounds += shelf_bounds(instance, objective, until)
        if solving.bounds[-1].partial:
            solving.skip("shelf-heights: cut short by the time limit")
    else:
        solving.skip("shelf bounds: skipped (time limit)")
    solving.params["formulation"] = formulation
    # Shelf models hold a start per job and per shelf (up to one per job).
    refusal = search_refusal(solving, per_job=2)
    if refusal is not None:
        solving.skip(refusal)
        return conclude(solving)
    representatives = formulation == "representatives"
    build = _RepresentativeModel if representatives else _ChainModel
    model = solving.build(lambda: build(solving.model_inputs()))
    if model is None:
        return conclude(solving)
    search_collect(
        solving, model.model,
        lambda value: read_starts(model.starts, model.offsets, value),
        model.solver_bound, lambda found: _decode(instance, objective, model, found),
        infeasible="CP-SAT proved the shelf model infeasible (a model bug: the "
        "hint is a feasible shelf schedule)",
        stats={"weight_scale": model.scale, "shelves": model.shelves,
               "offsets_modelled": model.with_offsets,
               "symmetry_groups": model.symmetry_groups},
    )  # fmt: skip
    return conclude(solving)


# --------------------------------------------------------------------------
# Shelf candidates
# --------------------------------------------------------------------------


def shelf_candidates(
    instance: Instance, objective: Objective, *, incumbents: Sequence[Incumbent] = ()
) -> tuple[list[Candidate], list[str]]:
    """Checked shelf schedules: three first-fit ones and the given incumbents.

    An incumbent must pass :func:`~optsched.models.common.solution.checked_candidate`
    (feasible, no kills, no migration) *and*
    :func:`~optsched.check.is_shelf_schedule`; a feasible schedule that is
    not a shelf schedule bounds the unrestricted optimum but not the shelf
    one, and is rejected with ``"<source>: not a shelf schedule: <why>"``.

    Returns
    -------
    candidates, rejected
        Best first; one line per rejected schedule.
    """
    raw = [
        (f"shelf:{name}", first_fit_shelves(instance, objective, name))
        for name in FIRST_FIT_ORDERS
    ]
    raw += [(incumbent.source, incumbent.schedule) for incumbent in incumbents]
    candidates: list[Candidate] = []
    rejected: list[str] = []
    for source, schedule in raw:
        candidate, reason = checked_candidate(instance, objective, source, schedule)
        if candidate is not None:
            why = is_shelf_schedule(instance, candidate.schedule)
            if why is not None:
                candidate, reason = None, f"{source}: not a shelf schedule: {why}"
        if candidate is None:
            rejected.append(str(reason))
            continue
        candidates.append(candidate)
        better = resequenced(instance, objective, candidate.schedule)
        if better is not None:
            improved, _ = checked_candidate(
                instance, objective, f"{source}+resequenced", better
            )
            if improved is not None and improved.value < candidate.value:
                candidates.append(improved)
    if not candidates:  # the first-fit schedules are shelf schedules
        raise RuntimeError(f"no feasible shelf schedule: {'; '.join(rejected)}")
    candidates.sort(key=lambda c: c.value)
    return candidates, rejected


def resequenced(
    instance: Instance, objective: Objective, schedule: Schedule
) -> Schedule | None:
    """The shelves of ``schedule`` improved and back to back (no blocks).

    Without busy blocks a shelf fits wherever it goes in time, so the
    shelves (groups of equal start) can be reordered and moved: ``wct``
    with all releases 0 by Smith's rule on (height, weight), ``cmax`` by
    earliest release ``R_k`` (both optimal for the given shelves;
    :mod:`optsched.models.shelf.enumerate`), ``wct`` with releases in the
    given order; each shelf then starts at ``max(end of the previous one,
    R_k)``. With all releases 0, jobs also move into an earlier shelf that
    has room and is tall enough (never worse: the job starts earlier, its
    old shelf gets no taller), and the shelves are reordered, until no move
    is left: the dominance rule of the model's ``wct`` part then holds.
    Processors are assigned again (left to right on a contiguous machine).
    ``None`` with busy blocks.
    """
    if any(b.end > b.start for b in instance.machine.unavailable):
        return None
    jobs = instance.jobs_by_id()
    m = instance.processors
    shelves = _shelves_of(instance, schedule)
    no_releases = all(j.release == 0 for j in instance.jobs)

    def height(shelf: list[int]) -> int:  # 0 once a shelf was emptied by moves
        return max((jobs[jid].runtime for jid in shelf), default=0)

    def load(shelf: list[int]) -> int:
        return sum(jobs[jid].size for jid in shelf if jobs[jid].runtime > 0)

    def ordered(shelves: list[list[int]]) -> list[list[int]]:
        if objective.kind == "cmax":
            releases = [max(jobs[jid].release for jid in s) for s in shelves]
            order = sorted(range(len(shelves)), key=lambda k: releases[k])
        elif no_releases:
            order = smith_order(
                [
                    (
                        height(s),
                        sum(
                            (Fraction(objective.weight(jobs[jid])) for jid in s),
                            Fraction(0),
                        ),
                    )
                    for s in shelves
                ]
            )
        else:
            order = list(range(len(shelves)))
        return [shelves[k] for k in order]

    shelves = ordered(shelves)
    moved = no_releases
    while moved:
        moved = False
        # Heights and loads kept per shelf as jobs move (recomputing them
        # for every candidate shelf made this cubic: 90 s on 3,152 items).
        heights = np.array([height(s) for s in shelves], dtype=np.int64)
        loads = np.array([load(s) for s in shelves], dtype=np.int64)
        for b, shelf in enumerate(shelves):
            for jid in list(shelf):
                job = jobs[jid]
                if job.runtime == 0:
                    continue
                room = (heights[:b] >= job.runtime) & (loads[:b] + job.size <= m)
                if not room.any():
                    continue
                target = int(room.argmax())  # the first shelf with room
                shelf.remove(jid)
                shelves[target].append(jid)
                loads[target] += job.size
                loads[b] -= job.size
                heights[b] = height(shelf)
                moved = True
        if moved:
            shelves = ordered([s for s in shelves if s])
    return _back_to_back(instance, shelves, schedule.producer)


def _back_to_back(
    instance: Instance, shelves: list[list[int]], producer: str
) -> Schedule:
    """The shelves in the given order, each starting at ``max(end of the
    previous one, R_k)``, their jobs left to right by id (zero-length jobs
    at offset 0, taking no width)."""
    jobs = instance.jobs_by_id()
    starts: dict[int, int] = {}
    offsets: dict[int, int] = {}
    ready = 0
    for shelf in shelves:
        start = max([ready] + [jobs[jid].release for jid in shelf])
        edge = 0
        for jid in sorted(shelf):
            starts[jid] = start
            offsets[jid] = edge if jobs[jid].runtime > 0 else 0
            edge += jobs[jid].size if jobs[jid].runtime > 0 else 0
        ready = start + max((jobs[jid].runtime for jid in shelf), default=0)
    if instance.machine.allocation == "contiguous":
        return Schedule(
            {
                jid: contiguous_placement(
                    s, s + jobs[jid].runtime, offsets[jid], jobs[jid].size
                )
                for jid, s in starts.items()
            },
            producer,
        )
    return assign_processors(instance, starts, producer=producer)


FIRST_FIT_ORDERS = ("decreasing-height", "increasing-height", "release")
"""Job orders of :func:`first_fit_shelves`."""


def first_fit_shelves(instance: Instance, objective: Objective, order: str) -> Schedule:
    """A shelf schedule: first-fit by size, shelves sequenced, placed greedily.

    Jobs in the given ``order`` (``decreasing-height``: longest first;
    ``increasing-height``; ``release``: by release, then longest first; ties
    in instance order) join the first shelf whose running sizes leave room
    (else open one). The shelves are sequenced by Smith's rule on
    (height, weight) for ``wct`` without releases and blocks, otherwise by
    release (``R_k``, the latest release of the shelf's jobs); each starts at
    the first time ``>= max(previous end, R_k)`` at which it fits beside the
    busy blocks (checked at that time and each later block end; after the
    last block end every shelf fits). On a contiguous machine the shelf's
    jobs take the lowest free offsets, widest first.

    Only a starting point for :func:`solve`; the issue's SMART, NFDH and
    FFDH policies are shelf heuristics (``heuristics/shelf/``), not models.
    """
    jobs = list(instance.jobs)
    if order == "decreasing-height":
        jobs.sort(key=lambda j: -j.runtime)
    elif order == "increasing-height":
        jobs.sort(key=lambda j: j.runtime)
    elif order == "release":
        jobs.sort(key=lambda j: (j.release, -j.runtime))
    else:
        raise ValueError(f"order {order!r} is not one of {', '.join(FIRST_FIT_ORDERS)}")
    m = instance.processors
    parts: list[list[Job]] = []
    used: list[int] = []
    for job in jobs:
        need = job.size if job.runtime > 0 else 0
        i = next((i for i, u in enumerate(used) if u + need <= m), None)
        if i is None:
            parts.append([job])
            used.append(need)
        else:
            parts[i].append(job)
            used[i] += need
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    releases = [max(j.release for j in part) for part in parts]
    if (
        objective.kind == "wct"
        and not blocks
        and all(j.release == 0 for j in instance.jobs)
    ):
        sequence = smith_order(
            [
                (
                    max(j.runtime for j in part),
                    sum((Fraction(objective.weight(j)) for j in part), Fraction(0)),
                )
                for part in parts
            ]
        )
    else:
        sequence = sorted(range(len(parts)), key=lambda i: releases[i])
    contiguous = instance.machine.allocation == "contiguous"
    ready = 0
    starts: dict[int, int] = {}
    offsets: dict[int, int] = {}
    for i in sequence:
        part = parts[i]
        start, where = _earliest_fit(
            part, max(ready, releases[i]), blocks, m, contiguous
        )
        for job in part:
            starts[job.id] = start
        offsets.update(where)
        ready = start + max(j.runtime for j in part)
    producer = f"shelf:{order}"
    if contiguous:
        return Schedule(
            {
                j.id: contiguous_placement(
                    starts[j.id], starts[j.id] + j.runtime, offsets[j.id], j.size
                )
                for j in instance.jobs
            },
            producer,
        )
    return assign_processors(instance, starts, producer=producer)


def _earliest_fit(
    part: Sequence[Job], t: int, blocks: Sequence[BusyBlock], m: int, contiguous: bool
) -> tuple[int, dict[int, int]]:
    last = max((b.end for b in blocks), default=0)
    while True:
        where = (
            _offsets_at(part, t, blocks, m)
            if contiguous
            else ({j.id: 0 for j in part} if _count_fits(part, t, blocks, m) else None)
        )
        if where is not None:
            return t, where
        later = [b.end for b in blocks if b.end > t]
        if not later:  # no block left: the shelf fits (sizes <= m)
            raise AssertionError(f"shelf of size <= {m} does not fit at {t} >= {last}")
        t = min(later)


def _count_fits(
    part: Sequence[Job], t: int, blocks: Sequence[BusyBlock], m: int
) -> bool:
    # Jobs running plus blocks, at the shelf start and at every block start
    # inside the shelf: the load only rises there (it falls at ends).
    height = max((j.runtime for j in part), default=0)
    points = [t] + [b.start for b in blocks if t < b.start < t + height]
    for u in points:
        load = sum(j.size for j in part if j.runtime > 0 and t + j.runtime > u)
        load += sum(b.size for b in blocks if b.start <= u < b.end)
        if load > m:
            return False
    return True


def _offsets_at(
    part: Sequence[Job], t: int, blocks: Sequence[BusyBlock], m: int
) -> dict[int, int] | None:
    """Lowest free offsets, widest job first; ``None`` if some job finds none."""
    taken: list[tuple[int, int]] = []  # processor ranges of the shelf's jobs
    where = {j.id: 0 for j in part}
    for job in sorted(part, key=lambda j: -j.size):
        if job.runtime == 0:
            continue
        obstacles = taken + [
            (b.offset or 0, (b.offset or 0) + b.size)
            for b in blocks
            if b.start < t + job.runtime and b.end > t
        ]
        spot = next(
            (
                o
                for o in sorted({0} | {hi for _, hi in obstacles})
                if o + job.size <= m
                and all(o + job.size <= lo or o >= hi for lo, hi in obstacles)
            ),
            None,
        )
        if spot is None:
            return None
        taken.append((spot, spot + job.size))
        where[job.id] = spot
    return where


# --------------------------------------------------------------------------
# Shelf lower bounds
# --------------------------------------------------------------------------


class _BinBound:
    """Lower bounds on the number of bins of capacity ``m`` for a multiset.

    Items are added one at a time; :meth:`bins` is the maximum of the area
    bound ``ceil(sum q / m)``, the dual-feasible-function bounds
    ``ceil(sum f(q) / f(m))`` (:class:`~optsched.models.rigid.bounds.
    DualFeasibleFunction`: items of one bin have ``sum q <= m`` hence
    ``sum f(q) <= f(m)``) and the count bound ``ceil(count / K)`` with ``K``
    the most items that fit in one bin (the smallest ones).
    """

    def __init__(self, m: int, sizes: Sequence[int], use_dff: bool) -> None:
        self.m = m
        self.functions = (
            [f for f in dual_feasible_functions(m, sizes) if f.scale > 0]
            if use_dff
            else []
        )
        self.area = 0
        self.transformed = [0] * len(self.functions)
        self.sorted_sizes: list[int] = []

    def add(self, size: int) -> None:
        self.area += size
        for i, f in enumerate(self.functions):
            self.transformed[i] += f(size)
        insort(self.sorted_sizes, size)

    def bins(self) -> int:
        if not self.sorted_sizes:
            return 0
        best = -(-self.area // self.m)
        for f, total in zip(self.functions, self.transformed, strict=True):
            best = max(best, -(-total // f.scale))
        fit, used = 0, 0
        for size in self.sorted_sizes:
            if used + size > self.m:
                break
            used, fit = used + size, fit + 1
        return max(best, -(-len(self.sorted_sizes) // max(1, fit)))


def _heights_integral(m: int, jobs: Sequence[Job], use_dff: bool) -> int:
    r"""``\int_0^\infty BP(\{q_j : p_j > u\})\,du`` with :class:`_BinBound`."""
    running = sorted((j for j in jobs if j.runtime > 0), key=lambda j: -j.runtime)
    counter = _BinBound(m, [j.size for j in running], use_dff)
    total = 0
    for i, job in enumerate(running):
        counter.add(job.size)
        below = running[i + 1].runtime if i + 1 < len(running) else 0
        if below < job.runtime:  # [below, p) has exactly the jobs added so far
            total += (job.runtime - below) * counter.bins()
    return total


def shelf_count_bound(instance: Instance) -> int:
    """Fewest shelves of a shelf schedule: the bin bound of the running jobs.

    The running jobs of one shelf all run at its start, so their sizes sum to
    at most ``m``: the shelves holding jobs of positive run time are bins.
    """
    jobs = [j for j in instance.jobs if j.runtime > 0]
    counter = _BinBound(instance.processors, [j.size for j in jobs], True)
    for job in jobs:
        counter.add(job.size)
    return counter.bins()


def shelf_height_bound(instance: Instance, *, deadline: float | None = None) -> Bound:
    r"""Makespan of every shelf schedule: shelf heights summed by height class.

    .. math:: C_{\max} \ge \max_{t \in \{0\} \cup \{r'_j\}} \Bigl(t +
              \int_0^\infty BP\bigl(\{q_j : r'_j \ge t,\ p_j > u\}\bigr)\,du
              \Bigr)

    with ``BP`` a lower bound on the number of bins of capacity ``m``
    (:class:`_BinBound`: area, dual-feasible functions, count) and ``r'_j``
    the effective release (:func:`~optsched.models.rigid.bounds.
    earliest_start_alone`). The integral is a finite sum over the distinct
    run times: on ``[p_{(i+1)}, p_{(i)})`` the set is the jobs with
    ``p_j >= p_{(i)}``.

    Proof. Fix ``t`` and let ``X`` be the jobs with ``r'_j >= t`` (all jobs
    for ``t = 0``). Let ``s_1, ..., s_L`` be the shelves holding a job of
    ``X``, in time order, and ``η_i`` the longest run time among the
    ``X``-jobs of ``s_i``. Each ``s_i`` starts at or after ``t`` (a shelf
    starts with each of its jobs, and job ``j`` cannot start before
    ``r'_j``), lasts at least ``η_i``, and the shelves do not overlap, so the
    makespan is at least ``t + sum_i η_i = t + ∫_0^∞ #{i : η_i > u} du``.
    For each ``u`` the shelves with ``η_i > u`` hold every job of ``X`` with
    ``p_j > u``; those jobs run at the start of their shelf, so each shelf's
    share sums to at most ``m`` processors: they are bins, at least
    ``BP({q_j : j in X, p_j > u})`` of them. Busy blocks only take
    capacity, so the bound holds with them. Without shelves the bound fails
    (jobs of different heights may then share processors one after the
    other); with ``BP = ceil(sum q / m)`` it is never below the area bound.

    This is the "height classes" argument: ``ceil(Q_T / m)`` shelves have
    height above ``T`` if the jobs longer than ``T`` have total size
    ``Q_T``. Reference for the level view: E. G. Coffman, M. R. Garey,
    D. S. Johnson, R. E. Tarjan, "Performance bounds for level-oriented
    two-dimensional packing algorithms", SIAM J. Comput. 9(4), 1980.

    With a ``deadline`` (``time.monotonic``) the candidates ``t`` after
    ``0`` stop there: the maximum over those examined is still a bound
    (``partial``). One ``t`` costs ``O(n)`` bin bounds, so all of them are
    quadratic (23 s on a 1,000-job KTH window).
    """
    began = time.perf_counter()
    m = instance.processors
    machine = instance.machine
    releases = {j.id: earliest_start_alone(j, machine) for j in instance.jobs}
    times = sorted({0, *releases.values()})
    functions = len(dual_feasible_functions(m, [j.size for j in instance.jobs]))
    use_dff = len(instance.jobs) * len(times) * max(1, functions) <= _DFF_BUDGET
    best = 0
    for t in times:
        if t > 0 and deadline is not None and time.monotonic() >= deadline:
            return Bound(best, "shelf-heights", time.perf_counter() - began, True)
        chosen = [j for j in instance.jobs if releases[j.id] >= t]
        best = max(best, t + _heights_integral(m, chosen, use_dff or t == 0))
    return Bound(best, "shelf-heights", time.perf_counter() - began)


def shelf_order_bound(instance: Instance, objective: Objective) -> Bound:
    r"""Weighted completion of every shelf schedule: the i-th completion's bound.

    With ``C_{(1)} <= ... <= C_{(n)}`` the completion times in order,

    .. math:: \sum_j w_j C_j \ge \sum_{i=1}^n w_{[i]} G_i, \qquad
              G_i = \int_0^\infty \max_{\beta}\,
              \beta\bigl(\text{the } (i - z(u))^+ \text{ smallest items of }
              Y_u\bigr)\,du

    where ``w_{[1]} >= w_{[2]] >= ...`` are the weights sorted decreasingly,
    ``Y_u = {j : p_j > u}``, ``z(u) = n - |Y_u|`` (jobs with ``p_j <= u``)
    and ``β`` ranges over the bin bounds of :class:`_BinBound` (area,
    dual-feasible functions ``f``, each taking the smallest items for its
    own measure ``q`` or ``f(q)``; count ``ceil(k / K(Y_u))``). ``relative``
    subtracts ``sum_j w_j r_j``.

    Proof. (1) For a set ``X`` of jobs, the argument of
    :func:`shelf_height_bound` (with ``t = 0``) gives
    ``max_{j in X} C_j >= g(X) = ∫_0^∞ BP({q_j : j in X, p_j > u}) du``:
    the shelves holding ``X``-jobs are disjoint, the last one's ``X``-jobs
    end at least ``max η`` after its start, and the earlier ones last at
    least their ``η_i``. (2) The first ``i`` jobs to complete form a set
    ``X_i`` of size ``i`` with ``C_{(i)} = max_{X_i} C_j >= g(X_i)``. For
    every ``u``, ``X_i`` has at least ``i - z(u)`` jobs in ``Y_u``, and each
    bin bound ``β`` is monotone (sums of non-negative item values; the count
    bound with the ``K`` of the superset ``Y_u``), so it is at least ``β``
    of the ``i - z(u)`` smallest items of ``Y_u``; hence
    ``C_{(i)} >= G_i`` whatever ``X_i`` is (``max`` of minima ``<=`` minimum
    of maxima). (3) ``sum_j w_j C_j = sum_i w_{(i)} C_{(i)} >=
    sum_i w_{(i)} G_i >= sum_i w_{[i]} G_i`` by the rearrangement
    inequality, since ``G_i`` is non-decreasing in ``i``.

    A shelf makes its short jobs wait for the next shelf behind its longest
    job; this bound sees it (e.g. one job of 10 s and three of 1 s, all of
    one processor, on 2 processors: ``G = 1, 1, 2, 11``, total 15, where
    the unrestricted bounds give at most 13).
    """
    if objective.kind != "wct":
        raise ValueError(
            f"shelf order bound: needs a weighted completion objective, got "
            f"{objective.label}"
        )
    began = time.perf_counter()
    m = instance.processors
    jobs = instance.jobs
    n = len(jobs)
    running = sorted((j for j in jobs if j.runtime > 0), key=lambda j: -j.runtime)
    heights = sorted({j.runtime for j in running}, reverse=True)
    functions = (
        [f for f in dual_feasible_functions(m, [j.size for j in jobs]) if f.scale > 0]
        if n * len(heights) * 50 <= _DFF_BUDGET
        else []
    )
    measures: list[tuple[Callable[[int], int], int]] = [(lambda q: q, m)]
    measures += [(f, f.scale) for f in functions]
    g = [0] * (n + 1)  # g[i] for i = 0..n
    for index, height in enumerate(heights):
        below = heights[index + 1] if index + 1 < len(heights) else 0
        members = [j for j in running if j.runtime >= height]  # Y_u on [below, height)
        zero = n - len(members)
        sizes = sorted(j.size for j in members)
        fit = len(
            list(itertools.takewhile(lambda s: s <= m, itertools.accumulate(sizes)))
        )
        prefixes = [
            [0, *itertools.accumulate(sorted(measure(q) for q in sizes))]
            for measure, _ in measures
        ]
        for i in range(zero + 1, n + 1):
            k = i - zero
            bins = -(-k // max(1, fit))
            for (_, scale), prefix in zip(measures, prefixes, strict=True):
                bins = max(bins, -(-prefix[k] // scale))
            g[i] += (height - below) * bins
    weights = sorted((Fraction(objective.weight(j)) for j in jobs), reverse=True)
    value = sum((w * g[i + 1] for i, w in enumerate(weights)), Fraction(0))
    if objective.relative:
        value -= sum(
            (Fraction(objective.weight(j)) * j.release for j in jobs), Fraction(0)
        )
    result: float = float(value)
    if all(w.denominator == 1 for w in weights):
        result = math.ceil(value)  # an exact int, even beyond 2**53
    return Bound(result, "shelf-order", time.perf_counter() - began)


def shelf_bounds(
    instance: Instance, objective: Objective | str, deadline: float | None = None
) -> list[Bound]:
    """The shelf-specific lower bounds that apply to ``objective`` (the
    makespan's stops at ``deadline``, see :func:`shelf_height_bound`)."""
    objective = Objective.parse(objective)
    if objective.kind == "cmax":
        return [shelf_height_bound(instance, deadline=deadline)]
    return [shelf_order_bound(instance, objective)]


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class _ShelfModel(CpsatModel):
    """What both formulations start from: the CP model, the blocks that
    matter, whether offsets are modelled, and the completion deadlines."""

    def __init__(self, inputs: ModelInputs) -> None:
        super().__init__(inputs)
        instance = inputs.instance
        machine = instance.machine
        self.blocks = [b for b in machine.unavailable if b.end > b.start]
        self.with_offsets = machine.allocation == "contiguous" and bool(self.blocks)
        self.deadlines = shelf_deadlines(
            instance, inputs.objective, inputs.incumbent.schedule
        )
        self.horizon = max(self.deadlines.values())

    def _add_starts(self) -> None:
        """``T_j`` in ``[r'_j, D_j - p_j]`` and, where modelled, the offsets."""
        m, model = self.instance.processors, self.model
        for job in self.instance.jobs:
            earliest = earliest_start_alone(job, self.instance.machine)
            latest = self.deadlines[job.id] - job.runtime
            self.starts[job.id] = model.new_int_var(earliest, latest, f"T{job.id}")
            if self.with_offsets:
                self.offsets[job.id] = model.new_int_var(0, m - job.size, f"O{job.id}")

    def _add_machine(self, jobs: Sequence[Job]) -> None:
        """The machine beside the busy blocks (none: the shelves, disjoint
        in time, need only their knapsack rows): :func:`~optsched.models.
        rigid.cpsat.add_rigid_machine` over the positive ``jobs``."""
        if self.blocks:
            add_rigid_machine(
                self.model, self.instance, jobs, self.starts,
                self.offsets if self.with_offsets else None,
            )  # fmt: skip


class _ChainModel(_ShelfModel):
    """The chain formulation (see the module notes)."""

    def __init__(self, inputs: ModelInputs) -> None:
        super().__init__(inputs)
        instance, objective = inputs.instance, inputs.objective
        self.shelves = len(instance.jobs)
        self.assign: dict[tuple[int, int], cp_model.IntVar] = {}
        self.shelf_start: list[cp_model.IntVar] = []
        self.shelf_end: list[cp_model.IntVar] = []
        self.used: list[cp_model.IntVar] = []
        self._add_variables()
        self._add_shelves()
        self._add_capacity()
        groups = _identical_groups(instance, objective) if inputs.symmetry else []
        self.symmetry_groups = len(groups)
        for group in groups:
            self._order_group(group)
        self._add_objective(inputs.bounds)
        self._add_hint(_relabel(inputs.incumbent.schedule, groups))

    def _add_variables(self) -> None:
        model = self.model
        self._add_starts()
        for job in self.instance.jobs:
            self.on_time()
            for k in range(self.shelves):
                self.assign[job.id, k] = model.new_bool_var(f"x{job.id}_{k}")
        for k in range(self.shelves):
            self.shelf_start.append(model.new_int_var(0, self.horizon, f"S{k}"))
            self.shelf_end.append(model.new_int_var(0, self.horizon, f"E{k}"))
            self.used.append(model.new_bool_var(f"u{k}"))

    def _add_shelves(self) -> None:
        model, jobs = self.model, self.instance.jobs
        starts, ends, used = self.shelf_start, self.shelf_end, self.used
        for job in jobs:
            model.add_exactly_one(self.assign[job.id, k] for k in range(self.shelves))
        for k in range(self.shelves):
            self.on_time()
            model.add(ends[k] >= starts[k])
            if k:
                model.add(starts[k] >= ends[k - 1])
                model.add_implication(used[k], used[k - 1])
                model.add(starts[k] == ends[k - 1]).only_enforce_if(~used[k])
            model.add(ends[k] == starts[k]).only_enforce_if(~used[k])
            members = [self.assign[j.id, k] for j in jobs]
            model.add_bool_or(members).only_enforce_if(used[k])
            for job, x in zip(jobs, members, strict=True):
                model.add_implication(x, used[k])
                model.add(self.starts[job.id] == starts[k]).only_enforce_if(x)
                if job.runtime > 0:
                    model.add(
                        ends[k] >= self.starts[job.id] + job.runtime
                    ).only_enforce_if(x)
        for k in range(min(self.shelves, shelf_count_bound(self.instance))):
            model.add(used[k] == 1)
        model.add(used[0] == 1)

    def _add_capacity(self) -> None:
        m, model = self.instance.processors, self.model
        running = [j for j in self.instance.jobs if j.runtime > 0]
        for k in range(self.shelves):
            self.on_time()
            model.add(sum(j.size * self.assign[j.id, k] for j in running) <= m)
        self._add_machine(running)

    def shelf_index(self, job: Job) -> cp_model.LinearExprT:
        return sum(k * self.assign[job.id, k] for k in range(1, self.shelves))

    def _order_group(self, group: Sequence[Job]) -> None:
        for first, second in itertools.pairwise(group):
            self.model.add(self.shelf_index(first) <= self.shelf_index(second))
            order_interchangeable(self, first, second)

    def _add_objective(self, bounds: Sequence[Bound]) -> None:
        jobs = self.instance.jobs
        if self.objective.kind == "cmax":
            best = max((b.value for b in bounds), default=0.0)
            lowest = max(0, round_up_bound(best))
            last = self.shelf_end[-1]
            model = self.model
            model.add(last >= min(lowest, self.horizon))
            for job in jobs:
                model.add(last >= self.starts[job.id] + job.runtime)
            model.minimize(last)
            return
        weights = [self.objective.weight(j) for j in jobs]
        integer, self.scale, self.exact = integer_weights(weights, self.horizon)
        self.model.minimize(
            sum(
                w * (self.starts[j.id] + j.runtime)
                for w, j in zip(integer, jobs, strict=True)
            )
        )

    def _add_hint(self, schedule: Schedule) -> None:
        model = self.model
        groups = _shelves_of(self.instance, schedule)
        index = {jid: k for k, group in enumerate(groups) for jid in group}
        end = 0
        for k in range(self.shelves):
            if k < len(groups):
                start = schedule[groups[k][0]].start
                end = max(schedule[jid].end for jid in groups[k])
                model.add_hint(self.shelf_start[k], start)
                model.add_hint(self.shelf_end[k], end)
                model.add_hint(self.used[k], 1)
            else:
                model.add_hint(self.shelf_start[k], end)
                model.add_hint(self.shelf_end[k], end)
                model.add_hint(self.used[k], 0)
        for job in self.instance.jobs:
            self.on_time()
            placement = schedule[job.id]
            model.add_hint(self.starts[job.id], placement.start)
            for k in range(self.shelves):
                model.add_hint(self.assign[job.id, k], int(index[job.id] == k))
            if self.with_offsets:
                model.add_hint(self.offsets[job.id], int(placement.offset or 0))


class _RepresentativeModel(_ShelfModel):
    """Shelves named by their tallest job (the default formulation).

    See the module notes ("Representatives"). Attributes shared with
    :class:`_ChainModel`: ``model``, ``starts``, ``offsets``, ``with_offsets``,
    ``scale``, ``exact``, ``shelves``, ``symmetry_groups``, ``solver_bound``.
    """

    def __init__(self, inputs: ModelInputs) -> None:
        super().__init__(inputs)
        instance, objective = inputs.instance, inputs.objective
        self.compact = not self.blocks and all(j.release == 0 for j in instance.jobs)
        # Positive jobs by non-increasing run time; identical jobs adjacent.
        self.order = sorted(
            (j for j in instance.jobs if j.runtime > 0),
            key=lambda j: (-j.runtime, j.size, j.release, objective.weight(j), j.id),
        )
        self.zero = [j for j in instance.jobs if j.runtime == 0]
        self.shelves = len(self.order)
        self.rep: dict[int, cp_model.IntVar] = {}  # y_i
        self.member: dict[tuple[int, int], cp_model.IntVar] = {}  # x_ij
        self.before: dict[tuple[int, int], cp_model.IntVar] = {}  # v_ij
        self._add_jobs()
        self._add_shelves()
        self._add_capacity()
        groups = _adjacent_identical(self.order, objective) if inputs.symmetry else []
        self.symmetry_groups = len(groups)
        for group in groups:
            self._order_group(group)
        self._add_before(wct=objective.kind == "wct")
        self._add_objective(inputs.bounds)
        self._add_hint(inputs.incumbent.schedule, groups)

    def _add_jobs(self) -> None:
        model = self.model
        self._add_starts()
        for k, rep in enumerate(self.order):
            self.on_time()
            self.rep[rep.id] = model.new_bool_var(f"y{rep.id}")
            for other in self.order[k + 1 :]:
                self.member[rep.id, other.id] = model.new_bool_var(
                    f"x{rep.id}_{other.id}"
                )

    def _add_shelves(self) -> None:
        model = self.model
        for k, job in enumerate(self.order):
            self.on_time()
            owners = [self.member[i.id, job.id] for i in self.order[:k]]
            model.add_exactly_one([self.rep[job.id], *owners])
            for i, x in zip(self.order[:k], owners, strict=True):
                model.add_implication(x, self.rep[i.id])
                model.add(self.starts[job.id] == self.starts[i.id]).only_enforce_if(x)
        count = shelf_count_bound(self.instance)  # at least that many shelves
        if count:
            model.add(sum(self.rep.values()) >= count)
        # Shelves (the tallest job's run) never overlap.
        self.shelf_intervals = {
            i.id: model.new_optional_fixed_size_interval_var(
                self.starts[i.id], i.runtime, self.rep[i.id], f"shelf{i.id}"
            )
            for i in self.order
        }
        model.add_no_overlap(list(self.shelf_intervals.values()))

    def _add_capacity(self) -> None:
        m, model = self.instance.processors, self.model
        for k, rep in enumerate(self.order):
            self.on_time()
            members = self.order[k + 1 :]
            model.add(
                sum(j.size * self.member[rep.id, j.id] for j in members)
                <= (m - rep.size) * self.rep[rep.id]
            )
        self._add_machine(self.order)

    def slot(self, job: Job) -> cp_model.LinearExprT:
        """Position (in ``order``) of the tallest job of ``job``'s shelf."""
        k = self.order.index(job)
        return k * self.rep[job.id] + sum(
            i * self.member[self.order[i].id, job.id] for i in range(k)
        )

    def _order_group(self, group: Sequence[Job]) -> None:
        # Identical jobs a, b adjacent in `order`: the representatives come
        # first (y_a >= y_b), and non-representatives take shelves in order
        # of their tallest job. Any solution is relabelled into this form by
        # handing the group's representative slots to its first jobs and the
        # member slots, sorted, to the rest (see _relabel_slots).
        model = self.model
        for a, b in itertools.pairwise(group):
            model.add_implication(self.rep[b.id], self.rep[a.id])
            model.add(self.slot(a) <= self.slot(b)).only_enforce_if(~self.rep[a.id])

    def _inside(self, i: Job, j: Job) -> cp_model.IntVar | None:
        """``x_ij`` when ``j`` may join ``i``'s shelf, else ``None``."""
        return self.member.get((i.id, j.id))

    def _add_before(self, *, wct: bool) -> None:
        """``v_ij``: shelf ``i`` is used and ends by ``T_j`` (``j`` not in it).

        For zero-length jobs always (they must not start inside a shelf);
        for every job under ``wct``, with ``T_j >= sum_i p_i v_ij``.
        """
        model = self.model
        targets = list(self.zero) + (list(self.order) if wct else [])
        for j in targets:
            self.on_time()
            terms = []
            for i in self.order:
                if i.id == j.id:
                    continue
                v = model.new_bool_var(f"v{i.id}_{j.id}")
                self.before[i.id, j.id] = v
                y = self.rep[i.id]
                model.add_implication(v, y)
                inside = self._inside(i, j)
                if inside is not None:
                    model.add_bool_or([~v, ~inside])
                model.add(
                    self.starts[i.id] + i.runtime <= self.starts[j.id]
                ).only_enforce_if(v)
                after = [y, ~v] + ([~inside] if inside is not None else [])
                model.add(
                    self.starts[i.id] >= self.starts[j.id] + j.runtime
                ).only_enforce_if(after)
                terms.append(i.runtime * v)
            if j.runtime == 0:
                continue
            if self.compact:
                # No releases, no blocks: some optimal schedule has no idle
                # time, so a shelf starts when the shelves before it end.
                model.add(self.starts[j.id] == sum(terms))
            else:
                model.add(self.starts[j.id] >= sum(terms))
        if wct:
            for a, b in itertools.combinations(self.order, 2):
                self.on_time()
                # Two used shelves: one of them comes first.
                model.add(
                    self.before[a.id, b.id] + self.before[b.id, a.id]
                    >= self.rep[a.id] + self.rep[b.id] - 1
                )
        if wct and self.compact:
            m = self.instance.processors
            for i in self.order:
                self.on_time()
                load = i.size * self.rep[i.id] + sum(
                    other.size * self.member[i.id, other.id]
                    for other in self.order
                    if (i.id, other.id) in self.member
                )
                for j in self.order:
                    if j.id != i.id and j.runtime <= i.runtime:
                        # No room for j in an earlier, tall enough shelf.
                        model.add(load >= m - j.size + 1).only_enforce_if(
                            self.before[i.id, j.id]
                        )

    def _add_objective(self, bounds: Sequence[Bound]) -> None:
        jobs, model = self.instance.jobs, self.model
        if self.objective.kind == "cmax":
            best = max((b.value for b in bounds), default=0.0)
            lowest = max(0, round_up_bound(best))
            span = model.new_int_var(min(lowest, self.horizon), self.horizon, "Cmax")
            for job in jobs:
                model.add(span >= self.starts[job.id] + job.runtime)
            # The shelves lie disjoint inside [0, Cmax).
            model.add(span >= sum(i.runtime * self.rep[i.id] for i in self.order))
            self.makespan = span
            model.minimize(span)
            return
        weights = [self.objective.weight(j) for j in jobs]
        integer, self.scale, self.exact = integer_weights(weights, self.horizon)
        model.minimize(
            sum(
                w * (self.starts[j.id] + j.runtime)
                for w, j in zip(integer, jobs, strict=True)
            )
        )

    def _add_hint(self, schedule: Schedule, groups: Sequence[Sequence[Job]]) -> None:
        model = self.model
        position = {j.id: k for k, j in enumerate(self.order)}
        owner: dict[int, int] = {}  # job id -> representative id
        for shelf in _shelves_of(self.instance, schedule):
            running = sorted(
                (jid for jid in shelf if jid in position), key=position.__getitem__
            )
            for jid in running:
                owner[jid] = running[0]
        placements = dict(schedule.placements)
        for group in groups:
            _relabel_slots(group, owner, placements, position)
        for job in self.instance.jobs:
            placement = placements[job.id]
            model.add_hint(self.starts[job.id], placement.start)
            if self.with_offsets:
                model.add_hint(self.offsets[job.id], int(placement.offset or 0))
        for i in self.order:
            model.add_hint(self.rep[i.id], int(owner[i.id] == i.id))
        self.on_time()
        for (rid, jid), x in self.member.items():
            model.add_hint(x, int(owner[jid] == rid))
        self.on_time()
        for (rid, jid), v in self.before.items():
            used = owner[rid] == rid
            model.add_hint(
                v, int(used and placements[rid].end <= placements[jid].start)
            )
        if self.makespan is not None:  # cmax
            model.add_hint(
                self.makespan, max((p.end for p in placements.values()), default=0)
            )


def _adjacent_identical(order: Sequence[Job], objective: Objective) -> list[list[Job]]:
    """Runs of identical jobs (release, size, run time, wct weight) in ``order``."""

    def key(job: Job) -> tuple[Any, ...]:
        base: tuple[Any, ...] = (job.release, job.size, job.runtime)
        return base + ((objective.weight(job),) if objective.kind == "wct" else ())

    runs = [list(g) for _, g in itertools.groupby(order, key=key)]
    return [run for run in runs if len(run) > 1]


def _relabel_slots(
    group: Sequence[Job],
    owner: dict[int, int],
    placements: dict[int, Placement],
    position: Mapping[int, int],
) -> None:
    """Relabel identical jobs (in place): representatives first, members sorted.

    The group's slots (its representatives' shelves and the shelves its
    other jobs join) are handed out again: the representative slots to the
    first jobs of the group, the member slots, by the position of their
    shelf's tallest job, to the rest. Identical jobs swap placements too.
    Feasible: representatives only move earlier in ``order`` (members stay
    after them) and members only later.
    """
    ids = [j.id for j in group]
    reps = [jid for jid in ids if owner[jid] == jid]
    members = sorted(
        (jid for jid in ids if owner[jid] != jid), key=lambda jid: position[owner[jid]]
    )
    old = {jid: placements[jid] for jid in ids}
    old_owner = dict(owner)
    renamed = dict(zip(reps, ids[: len(reps)], strict=True))
    for new, source in zip(ids, reps + members, strict=True):
        placements[new] = old[source]
    for jid in list(owner):  # shelves led by a renamed representative
        if old_owner[jid] in renamed:
            owner[jid] = renamed[old_owner[jid]]
    for new, source in zip(ids[len(reps) :], members, strict=True):
        owner[new] = renamed.get(old_owner[source], old_owner[source])
    for new in ids[: len(reps)]:
        owner[new] = new


def shelf_deadlines(
    instance: Instance, objective: Objective, upper_bound: Schedule
) -> dict[int, int]:
    """:func:`~optsched.models.common.solution.completion_deadlines`, shelf-safe.

    The rule for a job of weight 0 (a zero-length job under ``area``
    weights) moves it to its release, which may lie strictly inside a shelf:
    not a shelf schedule. Such a job gets the safe horizon ``T0 + sum p``
    instead: in an optimal shelf schedule the positive jobs end by it, and
    the zero-length job can go to the first time at or after its release
    that is not inside a shelf, which is no later.
    """
    deadlines = completion_deadlines(instance, objective, upper_bound)
    if objective.kind == "wct":
        horizon = safe_horizon(instance)
        for job in instance.jobs:
            if objective.weight(job) == 0:
                deadlines[job.id] = max(deadlines[job.id], horizon)
    return deadlines


def _shelves_of(instance: Instance, schedule: Schedule) -> list[list[int]]:
    """Job ids grouped by start time, groups in time order, ids sorted."""
    by_start: dict[int, list[int]] = defaultdict(list)
    for job in instance.jobs:
        by_start[schedule[job.id].start].append(job.id)
    return [sorted(by_start[s]) for s in sorted(by_start)]


# --------------------------------------------------------------------------
# Solving and decoding
# --------------------------------------------------------------------------


_AnyModel = _ChainModel | _RepresentativeModel


def _decode(
    instance: Instance,
    objective: Objective,
    model: _AnyModel,
    found: Mapping[int, tuple[int, int]],
) -> tuple[Candidate | None, str | None]:
    jobs = instance.jobs_by_id()
    starts = {jid: start for jid, (start, _) in found.items()}
    if instance.machine.allocation == "contiguous":
        offsets = {jid: offset for jid, (_, offset) in found.items()}
        if not model.with_offsets:
            # Without blocks a shelf's jobs go left to right (sizes sum <= m).
            for group in _shelves_of(instance, Schedule(
                {jid: Placement(s, s + jobs[jid].runtime) for jid, s in starts.items()}
            )):  # fmt: skip
                edge = 0
                for jid in group:
                    offsets[jid] = edge if jobs[jid].runtime > 0 else 0
                    edge += jobs[jid].size if jobs[jid].runtime > 0 else 0
        schedule = Schedule(
            {
                jid: contiguous_placement(
                    s, s + jobs[jid].runtime, offsets[jid], jobs[jid].size
                )
                for jid, s in starts.items()
            },
            BACKEND,
        )
    else:
        # Count-feasible starts; a broken vector gets processors that the
        # checker then rejects (see solution.assign_processors).
        schedule = assign_checked(instance, starts)
    candidate, reason = checked_candidate(instance, objective, BACKEND, schedule)
    if candidate is not None:
        why = is_shelf_schedule(instance, candidate.schedule)
        if why is not None:
            return None, f"{BACKEND}: not a shelf schedule (a model bug): {why}"
    return candidate, reason
