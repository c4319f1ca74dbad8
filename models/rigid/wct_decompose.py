r"""Total weighted completion time by decomposition into release blocks.

For a partition of the jobs :math:`J = J_1 \cup \dots \cup J_k`, each part
alone on the same machine (same ``m``, busy blocks and allocation) is a
relaxation of the whole problem, and the objective is a sum over jobs:

.. math::

    \mathrm{OPT}(J) = \sum_j w_j C_j^* = \sum_i \sum_{j \in J_i} w_j C_j^*
    \ \ge\ \sum_i \mathrm{OPT}(J_i) \ \ge\ \sum_i LB_i .

The middle inequality holds because an optimal schedule of ``J`` restricted
to ``J_i`` is a feasible schedule of ``J_i`` (dropping jobs never breaks the
capacity, release or busy-block rules). Conversely, the union of the parts'
schedules, when it passes the checker, is a schedule of ``J`` of value
:math:`\sum_i UB_i`; when every part is proven optimal (``UB_i = LB_i``) and
the union is feasible, the union is optimal for ``J``.

Partition rule: cut the jobs, in release order, at each release time ``T``
before which the best incumbent schedule has finished every job released
before ``T`` (:func:`release_blocks`: the incumbent's machine has emptied of
all earlier work there, and the blocks' own optima usually fit side by side
again); then cut every block of more than :data:`LARGEST_BLOCK` jobs again
at the releases where the incumbent leaves the least earlier work running
(:func:`chunked`). The rule only chooses the partition: the bound is valid
for any partition, and the union is checked, never assumed feasible; when
it clashes, the serial list schedule in the union's start order
(:func:`repaired`) is a feasible schedule near it.

Every weight rule (``one``, ``size``, ``area``, ``instance``) gives each job
a weight that depends on that job alone, and the ``relative`` offset
``sum_j w_j r_j`` is a sum over jobs too, so the parts' objectives add up to
the whole one exactly.

Flow: the blocks are solved smallest first by :func:`optsched.models.rigid.cpsat.
solve` (``decompose=False``: no recursion) within :data:`PART_SHARE` of the
time, each with a share proportional to its job count (unused time rolls
over to the next block) and hinted with the best whole incumbent restricted
to it. If the union is proven optimal the call stops; otherwise a
whole-window search runs with the time left, hinted with the best of the
union, its repair and the incumbents, and the reported lower bound is the
maximum of its bounds and the ``decomposition`` bound (the sum of the
blocks' bounds).

References: splitting a scheduling problem into independent blocks is
Carlier's block decomposition for the one-machine problem (J. Carlier, "The
one-machine sequencing problem", EJOR 11, 1982) and the problem
decompositions surveyed by Baptiste, Le Pape and Nuijten
(*Constraint-Based Scheduling*, Kluwer 2001); that a sum of job-set
relaxations bounds :math:`\sum w_j C_j` from below is the additivity used
by the relaxations of L. A. Hall, A. S. Schulz, D. B. Shmoys and J. Wein, "Scheduling to
minimize average completion time: off-line and on-line approximation
algorithms", Math. Oper. Res. 22(3), 1997. The combination here (CP-SAT on
release blocks cut at an incumbent's emptying instants and cheapest
releases, union checked and repaired) is ours.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optsched.instance import Instance, Job
from optsched.models.common.settings import SolverSettings
from optsched.models.common.solution import (
    Candidate,
    assign_processors,
    checked_candidate,
)
from optsched.models.common.template import Solving, conclude, prepare
from optsched.objective import Objective
from optsched.packing import list_schedule
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Schedule

BACKEND = "cpsat"
METHOD = "decomposition"
"""Name of the summed bound (:class:`~optsched.result.Bound`)."""

PART_SHARE = 0.5
"""Share of the time left that the blocks may use; the whole-window search
has the rest (unless the blocks' union is proven optimal). On the 100-job
KTH windows that split, 0.5 gave a smaller gap than 0.9 on all five
(benchmarks/README.md)."""

LARGEST_BLOCK: int | None = 100
"""Blocks of more jobs are cut again at their cheapest release
(:func:`chunked`); ``None``: only at the emptying instants. 100: CP-SAT
often proves 100-job blocks within a minute, and on 1,000-job windows the
pieces' summed bound beat the whole search's (benchmarks/README.md)."""


LOPSIDED = 0.9
"""A window whose largest block holds more than this share of the jobs is
searched whole: on the idle 100-job KTH run, window 16522 (blocks of 1 and
99 jobs) lost its proof to the decomposition, while the balanced 11015
(4, 53 and 43 jobs) gained one (benchmarks/README.md)."""


def release_blocks(instance: Instance, schedule: Schedule) -> list[list[Job]]:
    """Jobs cut into release-ordered blocks at the emptying instants of ``schedule``.

    Parameters
    ----------
    instance
        The problem.
    schedule
        A feasible schedule of ``instance`` (the best incumbent).

    Returns
    -------
    list of list of Job
        The blocks in release order; their union is ``instance.jobs``.

    Notes
    -----
    With the jobs sorted by ``(r_j, id)``, a cut falls before job ``k`` when
    ``r_k`` is larger than every earlier release and
    ``max_{i < k} C_i <= r_k`` in ``schedule``: nothing released before
    ``r_k`` is still running at ``r_k``. Any partition gives a valid bound
    (module notes); this one makes the union of the blocks' optima feasible
    whenever each block's optimum, like ``schedule``, ends before the next
    block's first release.
    """
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    blocks: list[list[Job]] = []
    latest_end: int | None = None
    for job in jobs:
        cut = (
            latest_end is not None
            and latest_end <= job.release
            and job.release > blocks[-1][-1].release
        )
        if not blocks or cut:
            blocks.append([])
        blocks[-1].append(job)
        end = schedule[job.id].end
        latest_end = end if latest_end is None else max(latest_end, end)
    return blocks


def chunked(
    blocks: Sequence[Sequence[Job]], schedule: Schedule, largest: int
) -> list[list[Job]]:
    """Blocks of more than ``largest`` jobs cut again, where ``schedule``
    leaves the least work behind.

    Parameters
    ----------
    blocks
        Release-ordered blocks (:func:`release_blocks`), jobs in
        ``(r_j, id)`` order.
    schedule
        The incumbent the blocks were cut from.
    largest
        Most jobs per block after cutting (at least 2).

    Returns
    -------
    list of list of Job
        The blocks, those over ``largest`` jobs cut into consecutive
        release-ordered pieces of ``largest / 2`` to ``largest`` jobs (the
        last one may be smaller).

    Notes
    -----
    A piece ends before job ``k`` (a release larger than the one before it)
    whose *tail* is the smallest: ``sum_{i < k} q_i max(0, C_i - max(S_i,
    r_k))``, the work of the earlier jobs that ``schedule`` still runs at or
    after ``r_k``. The bound stays valid whatever the cut (module notes);
    the tail is what the relaxation drops there, so a small one keeps it
    tight, and the union of the pieces' schedules is then repaired by a
    serial list schedule (:func:`repaired`).
    """
    pieces: list[list[Job]] = []
    for block in blocks:
        rest = list(block)
        while len(rest) > largest:
            cut = _cheapest_cut(rest, schedule, max(1, largest // 2), largest)
            pieces.append(rest[:cut])
            rest = rest[cut:]
        pieces.append(rest)
    return pieces


def _cheapest_cut(jobs: Sequence[Job], schedule: Schedule, low: int, high: int) -> int:
    """Index ``k`` in ``[low, high]`` with a new release at ``k`` and the
    least work of ``jobs[:k]`` left at ``r_k`` in ``schedule`` (``high``
    when no index has a new release)."""
    best: tuple[int, int] | None = None
    for k in range(low, min(high, len(jobs) - 1) + 1):
        t = jobs[k].release
        if t == jobs[k - 1].release:
            continue
        tail = sum(
            j.size * max(0, schedule[j.id].end - max(schedule[j.id].start, t))
            for j in jobs[:k]
        )
        if best is None or tail < best[0]:
            best = (tail, k)
    return high if best is None else best[1]


def repaired(instance: Instance, schedule: Schedule) -> Schedule:
    """A feasible schedule from a possibly clashing one: the serial list
    schedule (:func:`optsched.packing.list_schedule`) in the order of
    ``schedule``'s starts.

    On ``any`` machines, when ``schedule`` is feasible every job starts no
    later than in it (the serial scheme builds every active schedule from
    its start order, see :mod:`optsched.models.rigid.enumerate`), so the repair
    never loses; when it clashes, jobs move later just enough to fit.
    """
    order = sorted(schedule.placements, key=lambda j: (schedule[j].start, j))
    return list_schedule(instance, order, producer=f"{METHOD}:repaired")


def restricted(schedule: Schedule, jobs: Sequence[Job], producer: str) -> Schedule:
    """``schedule``'s placements of ``jobs`` only (feasible for those jobs)."""
    return Schedule({j.id: schedule[j.id] for j in jobs}, producer)


def summed_bound(values: Sequence[float]) -> float:
    """The sum of the parts' lower bounds, never above the exact sum.

    Integer bounds add exactly; a float sum (fractional weights) is
    correctly rounded by :func:`math.fsum` and then taken one ulp lower, so
    that rounding never lifts it above the true sum.
    """
    if all(isinstance(v, int) for v in values):
        return sum(values)
    total = math.fsum(values)
    return math.nextafter(total, -math.inf)


def union(instance: Instance, parts: Sequence[Schedule]) -> Schedule:
    """The parts' schedules as one schedule of ``instance`` (not checked).

    On ``any`` machines the processors are assigned again from the start
    times (two parts may have used the same processor numbers at
    compatible counts); contiguous placements are kept as they are.
    """
    placements = {jid: p for s in parts for jid, p in s.placements.items()}
    if instance.machine.allocation == "contiguous":
        return Schedule(placements, METHOD)
    starts = {jid: p.start for jid, p in placements.items()}
    return Schedule(assign_processors(instance, starts).placements, METHOD)


def applies(instance: Instance, objective: Objective) -> bool:
    """Is the decomposition used: a ``wct`` objective on a flat machine with
    rigid jobs (the plain CP-SAT path) and at least two jobs?"""
    return (
        objective.kind == "wct"
        and instance.machine.flat
        and instance.machine.calendar is None
        and not instance.moldable
        and len(instance.jobs) >= 2
        and all(job.preceding_job is None for job in instance.jobs)
    )


INNER_SETTINGS = (
    "workers",
    "log",
    "symmetry",
    "cliques",
    "bound_domain",
    "bound_subsolvers",
    "seed",
    "parameters",
)
"""The settings passed to every inner search (each gets its own time)."""


def solve(
    instance: Instance,
    objective: Objective,
    *,
    time_limit: float,
    search: Callable[..., Result],
    incumbents: Sequence[Incumbent] = (),
    **options: Any,
) -> Result:
    """Solve ``instance`` for a ``wct`` objective block by block.

    Parameters
    ----------
    instance
        Rigid jobs on a flat machine (see :func:`applies`).
    objective
        A ``wct`` objective (any weight rule, absolute or ``relative``).
    time_limit
        Seconds for the whole call.
    search
        The search of one window, :func:`optsched.models.rigid.cpsat.solve`
        (given by the caller, which calls this module).
    incumbents
        Starting schedules, as for :func:`optsched.models.rigid.cpsat.solve`.
    **options
        The other settings of :func:`optsched.models.rigid.cpsat.solve`
        (:data:`INNER_SETTINGS`: workers, log, symmetry, ...), passed to
        every inner call.

    Returns
    -------
    Result
        With a ``decomposition`` bound (sum of the blocks' bounds) when the
        window splits; ``params["decomposition"]`` gives the block sizes,
        how many were proven and whether their union was feasible.

    Notes
    -----
    Validity: the ``decomposition`` bound is :math:`\\sum_i LB_i` with
    ``LB_i`` a valid bound of block ``i`` alone, a relaxation of the whole
    (module notes), so it never exceeds the optimum whatever the partition.
    Every upper bound is a checked schedule of the whole instance: the
    union passes :func:`~optsched.models.common.solution.checked_candidate` before
    it is used, and the status follows the common rule of
    :func:`~optsched.models.common.solution.finish`. See the module notes for the
    references.
    """
    settings = SolverSettings(time_limit=time_limit, **options)
    solving = prepare(
        instance, objective, settings, backend=BACKEND, incumbents=incumbents,
        bounds=None, record=(),
    )  # fmt: skip
    if isinstance(solving, Result):
        return solving
    options = settings.keywords(*INNER_SETTINGS)
    incumbent = solving.hint
    blocks = release_blocks(instance, incumbent.schedule)
    if LARGEST_BLOCK is not None:
        blocks = chunked(blocks, incumbent.schedule, LARGEST_BLOCK)
    if len(blocks) < 2 or max(map(len, blocks)) > LOPSIDED * len(instance.jobs):
        # One block, or one block holding nearly every job: its search would
        # be the whole search with half of the time (a 99-job block of a
        # 100-job window lost a proof that way).
        return search(
            instance, objective, time_limit=solving.left(),
            incumbents=incumbents, decompose=False, **options,
        )  # fmt: skip
    parts_deadline = time.monotonic() + PART_SHARE * solving.left()
    results = _solve_blocks(
        instance, objective, blocks, incumbent, parts_deadline, search, options
    )
    note = _note(blocks, results)
    bound = _bound(results, solving.started)
    schedules = [
        r.schedule for r in results if r is not None and r.schedule is not None
    ]
    found = None
    if len(schedules) == len(blocks):
        found = _add_union(
            instance, objective, union(instance, schedules), solving.candidates
        )
    note["union_feasible"] = found is not None
    solving.candidates.sort(key=lambda c: c.value)
    solving.bounds = [bound] if bound is not None else []
    # Stop when proven, or when a block's search was interrupted (Ctrl-C, a
    # signal): the next searches would not stop by themselves.
    interrupted = any(r is None or r.interrupted for r in results)
    proven = found is not None and bound is not None
    if interrupted or (proven and note["proven"] == len(blocks)):
        solving.params["decomposition"] = note
        if interrupted:
            solving.params["interrupted"] = True
        return conclude(solving)
    hints = [Incumbent(c.source, c.schedule) for c in solving.candidates]
    whole = search(
        instance, objective, time_limit=solving.left(), incumbents=hints,
        decompose=False, **options,
    )  # fmt: skip
    return _merged(solving, whole, note)


def _add_union(
    instance: Instance,
    objective: Objective,
    joined: Schedule,
    candidates: list[Candidate],
) -> Candidate | None:
    """Add the union (if it passes the checker) and its repair to
    ``candidates``; return the union's candidate or ``None``."""
    found, _ = checked_candidate(instance, objective, METHOD, joined)
    fixed, _ = checked_candidate(
        instance, objective, f"{METHOD}:repaired", repaired(instance, joined)
    )
    candidates.extend(c for c in (found, fixed) if c is not None)
    return found


def _solve_blocks(
    instance: Instance,
    objective: Objective,
    blocks: Sequence[Sequence[Job]],
    incumbent: Candidate,
    deadline: float,
    search: Callable[..., Result],
    options: Mapping[str, Any],
) -> list[Result | None]:
    """Each block by CP-SAT, smallest first, with a share of the time left
    proportional to its job count; results in the order of ``blocks``,
    ``None`` for the blocks left after an interrupted search."""
    order = sorted(range(len(blocks)), key=lambda k: (len(blocks[k]), k))
    left = sum(len(b) for b in blocks)
    results: dict[int, Result] = {}
    for k in order:
        jobs = blocks[k]
        share = max(0.0, deadline - time.monotonic()) * len(jobs) / left
        left -= len(jobs)
        hint = Incumbent("incumbent", restricted(incumbent.schedule, jobs, "hint"))
        results[k] = search(
            instance.with_jobs(jobs), objective, time_limit=share,
            incumbents=[hint], decompose=False, **options,
        )  # fmt: skip
        if results[k].interrupted:
            break
    return [results.get(k) for k in range(len(blocks))]


def _bound(results: Sequence[Result | None], started: float) -> Bound | None:
    """The ``decomposition`` bound, or ``None`` when a block has none or
    failed (an ``ERROR`` result may carry an invalid bound)."""
    values = [r.lower_bound if r and r.error is None else None for r in results]
    if any(v is None for v in values):
        return None
    return Bound(
        summed_bound([v for v in values if v is not None]),
        METHOD,
        time.perf_counter() - started,
    )


def _note(
    blocks: Sequence[Sequence[Job]], results: Sequence[Result | None]
) -> dict[str, Any]:
    return {
        "blocks": [len(b) for b in blocks],
        "proven": sum(r is not None and r.status == "OPTIMAL" for r in results),
    }


def _merged(solving: Solving, whole: Result, note: Mapping[str, Any]) -> Result:
    """The whole-window result with the ``decomposition`` bound (the bounds
    of ``solving``) added."""
    params = dict(whole.params)
    params.pop("skipped", None)  # the typed field below carries them
    params["decomposition"] = dict(note)
    if whole.error is not None:
        params["error"] = whole.error
    if whole.interrupted:
        params["interrupted"] = True
    solving.params = params
    solving.rejected += whole.rejected
    solving.skipped += whole.skipped
    solving.candidates = []
    if whole.schedule is not None and whole.objective is not None:
        source = whole.upper_bound_source or BACKEND
        solving.candidates.append(Candidate(source, whole.schedule, whole.objective))
    solving.bounds = [*whole.bounds, *solving.bounds]
    return conclude(solving)
