r"""The site calendar's constraints in CP-SAT, for any capacity model.

The site model (:mod:`optsched.models.site.model`, rigid jobs on identical
processors) and the option models of machines with node speeds or SMP
nodes (:mod:`optsched.models.topology.speeds`,
:mod:`optsched.models.topology.smp`) state the calendar's rules the same
way; only a job's end differs (``S_j + p_j`` there, ``S_j + D_j`` with a
chosen run time ``D_j`` here). Capacities count processors on every
machine, as the checker (rule 11) does. With ``C_i`` job ``i``'s end:

Start pieces (:func:`add_start_pieces`): ``S_j`` lies in one of the pieces
``[a_k, b_k)`` of :func:`~optsched.models.site.model.admitted_pieces`,
``x_{jk}`` the literal of the one chosen (none for a single piece).

Admission at the start (:func:`add_admission`), for every batch job ``j``
of positive length and the batch jobs ``i`` of positive length that can
run at ``S_j``, with ``y_{ij}`` true whenever ``S_i \le S_j < C_i``
(:func:`runs_at`):

.. math::

    q_j + \textstyle\sum_i q_i\, y_{ij} \le \sum_k \rho_k\, x_{jk}

(``\rho_k`` the piece's room). Sequential queues (:func:`add_sequential`):
a no-overlap over the queue's jobs of positive length, and a job of 0 s
never starts strictly inside another job of its queue.

The argument (every schedule of the rules is a solution and every solution
keeps the rules) is the site model's; the intervals are half-open as in the
checker.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ortools.sat.python import cp_model

from optsched.calendar import Calendar
from optsched.instance import Job


def add_start_pieces(
    model: cp_model.CpModel, job: Job, start: Any, pieces: Sequence[Any]
) -> list[Any]:
    """Keep ``start`` in one of ``pieces`` (``.start``, ``.end``); the
    literals ``x_{jk}`` of the choice (empty for a single piece)."""
    literals: list[Any] = []
    if len(pieces) > 1:
        for k, piece in enumerate(pieces):
            x = model.new_bool_var(f"x{job.id}_{k}")
            model.add(start >= piece.start).only_enforce_if(x)
            model.add(start <= piece.end - 1).only_enforce_if(x)
            literals.append(x)
        model.add_exactly_one(literals)
    return literals


def runs_at(
    model: cp_model.CpModel, i: Job, j: Job, start_i: Any, end_i: Any, start_j: Any
) -> tuple[Any, Any]:
    """A literal ``y`` true whenever ``i`` runs at ``S_j`` (``S_i \\le S_j <
    C_i``), and the literal ``ended`` (``C_i \\le S_j``) that chooses
    between the two ways ``y`` may be false."""
    y = model.new_bool_var(f"y{i.id}_{j.id}")
    ended = model.new_bool_var(f"e{i.id}_{j.id}")
    model.add(end_i <= start_j).only_enforce_if([~y, ended])
    model.add(start_i >= start_j + 1).only_enforce_if([~y, ~ended])
    return y, ended


def add_admission(
    model: cp_model.CpModel,
    batch: Sequence[Job],
    calendar: Calendar,
    starts: Mapping[int, Any],
    ends: Mapping[int, Any],
    pieces: Mapping[int, Sequence[Any]],
    chosen: Mapping[int, Sequence[Any]],
    longest: Callable[[Job], int],
    ordered: Callable[[Job, Job], bool] = lambda i, j: False,
) -> list[tuple[Job, Job, Any, Any]]:
    """The admission constraint of every job of ``batch`` (batch jobs of
    positive length) whose candidates can exceed its room; returns the
    ``(i, j, y_ij, ended_ij)`` literals (to hint).

    A pair is left out when ``i`` cannot run at ``S_j``: its window
    (pieces, and ``longest(i)``, its longest run time) misses ``j``'s, a
    chain orders them (``ordered(i, j)``) or a sequential queue holds both.
    """
    first = {j.id: pieces[j.id][0].start for j in batch}
    last = {j.id: pieces[j.id][-1].end - 1 for j in batch}
    sequential = calendar.sequential_queues
    literals: list[tuple[Job, Job, Any, Any]] = []
    for j in batch:
        others = [
            i
            for i in batch
            if i.id != j.id
            and first[i.id] <= last[j.id]
            and last[i.id] + longest(i) > first[j.id]
            and not ordered(i, j)
            and not (i.queue == j.queue and i.queue in sequential)
        ]
        rooms = [p.room for p in pieces[j.id]]
        if j.size + sum(i.size for i in others) <= min(rooms):
            continue  # never binding
        held = []
        for i in others:
            y, ended = runs_at(model, i, j, starts[i.id], ends[i.id], starts[j.id])
            literals.append((i, j, y, ended))
            held.append(y)
        room: Any = rooms[0]
        if len(rooms) > 1:
            room = sum(r * x for r, x in zip(rooms, chosen[j.id], strict=True))
        model.add(
            j.size + sum(i.size * y for i, y in zip(others, held, strict=True)) <= room
        )
    return literals


def add_sequential(
    model: cp_model.CpModel,
    jobs: Sequence[Job],
    calendar: Calendar,
    starts: Mapping[int, Any],
    ends: Mapping[int, Any],
    intervals: Mapping[int, Any],
) -> list[tuple[Job, Job, Any]]:
    """One job at a time in each sequential queue; returns the ``(z, i,
    early)`` literals of the jobs of 0 s (to hint)."""
    by_queue: dict[int | None, list[Job]] = defaultdict(list)
    for job in jobs:
        if job.queue in calendar.sequential_queues:
            by_queue[job.queue].append(job)
    literals: list[tuple[Job, Job, Any]] = []
    for members in by_queue.values():
        long = [j for j in members if j.runtime > 0]
        model.add_no_overlap([intervals[j.id] for j in long])
        for z in (j for j in members if j.runtime == 0):
            for i in long:
                # The checker: a 0 s job may not start strictly inside
                # another job of its queue.
                early = model.new_bool_var(f"z{z.id}_{i.id}")
                model.add(starts[z.id] <= starts[i.id]).only_enforce_if(early)
                model.add(starts[z.id] >= ends[i.id]).only_enforce_if(~early)
                literals.append((z, i, early))
    return literals


def hint_site(
    model: cp_model.CpModel,
    at: Mapping[int, int],
    ends: Mapping[int, int],
    pairs: Collection[tuple[Job, Job, Any, Any]],
    zeros: Collection[tuple[Job, Job, Any]],
) -> None:
    """Hint the admission and queue literals of a schedule (starts ``at``,
    ends ``ends``)."""
    for i, j, y, ended in pairs:
        model.add_hint(y, at[i.id] <= at[j.id] < ends[i.id])
        model.add_hint(ended, ends[i.id] <= at[j.id])
    for z, i, early in zeros:
        model.add_hint(early, at[z.id] <= at[i.id])
