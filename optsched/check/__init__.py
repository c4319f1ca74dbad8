"""Independent schedule checker.

This package imports nothing from :mod:`optsched.models` or
:mod:`optsched.heuristics`: every schedule, whoever produced it, is judged
against the instance alone.

Rules checked (half-open intervals ``[start, end)``):

1. every job of the instance is placed exactly once, no unknown job is placed;
2. ``start >= release``;
3. ``end - start == runtime`` (``== estimate`` for jobs listed as killed,
   which is only allowed when ``estimate < runtime``);
4. at every instant the jobs running plus the busy blocks use at most ``m``
   processors;
5. explicit processor sets have exactly ``size`` distinct indices in
   ``[0, m)`` and never share a processor with an overlapping job, nor (on
   a contiguous machine) with an overlapping busy block;
6. on a contiguous machine every job has processors and they are consecutive.

Busy blocks on the two machine kinds: on a ``contiguous`` machine every
block has an offset and occupies its processor range (rules 4 and 5). On an
``any`` machine a block is a processor *count* with no offset
(:class:`~optsched.instance.Machine` refuses one): it enters rule 4 only.
Processor sets of jobs are optional there; when given they must be
exclusive among overlapping jobs (rule 5). Rule 4 is what makes an ``any``
schedule realisable: every start vector that passes it admits a
non-migrating assignment of processors to jobs and blocks together (greedy
colouring of an interval graph in order of start times, blocks being
intervals with a fixed start; :mod:`optsched.packing`). The job indices
given are not checked against the blocks, which have none: they need not
leave each block the same processors for its whole interval (processors
being interchangeable, a relabelling does), and
:func:`optsched.packing.assign_processors` builds an assignment that
includes the blocks.

Processor sets are judged as intervals (:func:`~optsched.schedule.merged_runs`),
never processor by processor: rule 5 sweeps the stretches in time order,
keeping the processor intervals in use, so a schedule naming ``0-999999999``
on a machine of 10**9 processors costs what its text holds.

A job that migrates (``Placement.moves``) is judged on each stretch: every
processor set it uses obeys rules 5 and 6, and move times increase inside
``(start, end)``.

7. A preempted job (``Placement.pieces``, :class:`~optsched.schedule.Piece`)
   runs only in its pieces: they come in time order without overlapping
   (``end_k <= start_{k+1}``), the first pays no switch and every later one
   exactly the machine's resume cost
   (:meth:`~optsched.instance.Machine.resume_cost`, 0 when preemption is
   free), no piece is shorter than its switch, and rule 3 reads "the work,
   the sum of ``end - start - switch`` over the pieces, equals the run
   time". Rule 2 applies to the first piece (every later one starts after
   it), rules 4 to 6 to every piece, which holds its processors for its
   whole length, switch included.

8. A moldable job (one with :attr:`~optsched.instance.Job.modes`) runs in
   one of its modes: its placement names explicit processors, whose count
   is the processor count of one of its modes, and rule 3 reads "``end -
   start`` equals that mode's run time" (its estimate for a killed job).
   The rules above then judge the job as the rigid job of that mode; a
   preempted or migrating one keeps that count in every stretch.
9. A malleable job may change its processor count between pieces: every
   piece names explicit processors whose count ``p_k`` is one of its
   modes', pays the resume cost of ``p_k`` processors, and does the
   fraction ``w_k / T(p_k)`` of the job (``w_k`` its work, ``T(p_k)`` the
   mode's run time). Rule 3 reads: the fractions sum to at least 1, and
   the job ends in the second in which it completes (the sum minus
   ``1 / T(p_last)`` is below 1). Malleable jobs are never killed.

10. On a machine with speeds or SMP nodes (not
    :attr:`~optsched.instance.Machine.flat`) a job runs in one piece, without
    moving, on explicit processors; on SMP nodes they touch at most
    ``tight + ceil(size / cpus)`` nodes; and rule 3 reads "``end - start``
    equals ``ceil(p_j / sum_{k in S} s_k * inflation(span))``" (the job's
    ``runtime`` being its work at speed 1 when the machine has speeds;
    :mod:`optsched.nodes`). Nothing is killed there. A moldable job is
    judged in the mode its processor count names, whose work at speed 1
    is ``processors * runtime`` of the mode (rule 8 names a count that is
    no mode's). The other rules then judge the job as a rigid job of that
    run time on a flat machine.
    The run time is computed here in exact fractions, on purpose apart from
    :meth:`~optsched.instance.Machine.run_time`, which the simulators use.

11. On a machine with a site calendar (:mod:`optsched.calendar`), at every
    start ``t`` of a job (of each piece of a preempted one) its size is at
    most the calendar's largest job at ``t``, and the processors held at
    ``t`` by every job running then (``start <= t < end``) and every busy
    block active then are at most the batch capacity at ``t`` (a job of 0 s
    occupies nothing, as in rule 4: only its own size must fit); jobs of
    its ``anytime_queues`` are exempt and do not count (they run beside the
    batch partition; rule 4 still counts them). No two jobs of one
    of its ``sequential_queues`` run at the same time. Only starts are
    judged: a job may run on when the capacity drops (Mallmann 1997,
    §3.1.5). The rules above then judge the schedule
    on the machine without its calendar.

12. A job with a predecessor (SWF fields 17/18; the edges of
    :func:`optsched.site.chains.chain_graph`: predecessors outside the instance
    and cycles dropped) starts no earlier than its predecessor's end plus
    its think time (a negative or missing think time counts as 0).

13. Machine outages kill jobs, whose lost attempts the schedule records
    (:attr:`~optsched.schedule.Schedule.lost`): see
    :mod:`optsched.check.outages`.

14. NQS's per-user limit (:attr:`Calendar.user_limit
    <optsched.calendar.Calendar.user_limit>`): see :mod:`optsched.check.limits`.

Structural promises are separate predicates, asked for by the producers
that make them: :func:`max_jobs_per_processor` (PBI keeps at most two jobs
in progress on any processor) and :func:`migrations` (jobs whose pieces do
not all use the same processors).

:func:`is_shelf_schedule` is a separate predicate on the *structure* of a
schedule (jobs grouped in shelves by start time, shelves not overlapping);
the shelf-restricted models accept only schedules that pass both.

The rules live one module per rule family: :mod:`~optsched.check.plain`
(rules 1 to 7 and 9), :mod:`~optsched.check.modes` (8),
:mod:`~optsched.check.topology` (10), :mod:`~optsched.check.site` (11, 12),
:mod:`~optsched.check.outages` (13), :mod:`~optsched.check.limits` (14) and
:mod:`~optsched.check.structure` (the structural predicates).
:func:`check_schedule` walks the family table
(:data:`optsched.families.FEATURES`): the first feature the instance (or
the schedule) carries judges its own rule and hands the instance without
it to the rows after its own; the plain rules judge what is left.
"""

from __future__ import annotations

from functools import partial

from optsched.check.plain import plainly_valid, violations
from optsched.check.structure import (
    check_promises,
    is_shelf_schedule,
    max_jobs_per_processor,
    migrations,
)
from optsched.check.violation import Violation
from optsched.families import FEATURES, load
from optsched.instance import Instance
from optsched.schedule import Schedule

__all__ = [
    "Violation",
    "check_promises",
    "check_schedule",
    "is_shelf_schedule",
    "max_jobs_per_processor",
    "migrations",
]


def check_schedule(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Return every violation of ``schedule`` on ``instance`` (empty if valid).

    Parameters
    ----------
    instance
        The problem.
    schedule
        The placements to judge.

    Returns
    -------
    list of Violation
        Empty when the schedule is feasible. Order: the features' own rules
        in the order of the family table, then placement completeness
        (missing, unknown jobs), then per job in id order its times and
        processor set, then capacity overruns and shared processors in time
        order.

    Notes
    -----
    A valid schedule is recognised first by a vectorised pass over all the
    plain rules (:func:`optsched.check.plain.plainly_valid`,
    ``O(n log n + sum_j q_j)``); only when it does not vouch for the
    schedule do the rule-by-rule checks run to name the violations. Both
    judge the same rules.
    """
    return _walk(instance, schedule, 0)


def _walk(instance: Instance, schedule: Schedule, start: int) -> list[Violation]:
    """The rules of the features from row ``start`` of the table on, then
    the plain rules. Each feature's rule hands its reduced instance to the
    rows after its own, so a rule never meets its own feature again."""
    for k in range(start, len(FEATURES)):
        row = FEATURES[k]
        if row.check is not None and row.applies(instance, schedule):
            rule = load(row.check)
            rest = partial(_walk, start=k + 1)
            return rule(instance, schedule, rest)
    if plainly_valid(instance, schedule):
        return []
    return violations(instance, schedule)
