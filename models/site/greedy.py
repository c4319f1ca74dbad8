"""A list schedule under the site calendar and the job chains.

The site model's own starting schedule when the caller gives none that
passes (:func:`optsched.models.site.model.site_candidates`): a model never
runs the simulator, so it cannot ask the engine for its FCFS schedule.

Serial schedule generation (R. Kolisch, "Serial and parallel
resource-constrained project scheduling methods revisited", EJOR 90, 1996)
with the rules of the checker (:mod:`optsched.check.site`, rules 11 and 12):
jobs in submit order, a predecessor before its successors, each at the
earliest instant ``t`` at or after its release and its predecessor's end
plus the think time at which

* it fits the machine beside the busy blocks and the jobs placed before it
  (a free count, or a free range on a contiguous machine) over its run;
* the calendar admits it (unless its queue is an *anytime* one): its size
  at most the largest startable job at ``t``, and the processors held at
  ``t`` (busy blocks and the batch jobs running then, itself included) at
  most the batch capacity at ``t``;
* it overlaps no job of its sequential queue;
* it does not break the admission of a job placed before it: only starts
  are judged, so a job placed earlier but starting inside ``[t, t + p)``
  must still find room for it at its own start.

The candidate instants only move forward: each test that fails names the
first instant at which it might pass (the end of the job in the way, the
next change of the calendar or of the held processors, one second after a
start whose admission would break), so the search ends: once nothing is
placed or blocked any more, only the calendar is left, and
:meth:`~optsched.calendar.Calendar.earliest_start` answers it, or says the
job can never start (``ValueError``, as
:func:`~optsched.models.site.bounds.site_released` does).

The schedule still goes through the checker before it is used, as every
starting schedule does (:func:`~optsched.models.common.solution.
check_candidates`).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping

import networkx as nx

from optsched.calendar import Calendar
from optsched.instance import Instance, Job
from optsched.models.site.bounds import site_released
from optsched.packing import Profile, Strip, assign_processors, contiguous_placement
from optsched.schedule import Placement, Schedule
from optsched.site.chains import chain_graph
from optsched.topology.machines import pick_processors, request_work

__all__ = ["site_list_schedule"]


def site_list_schedule(instance: Instance, producer: str = "site:list") -> Schedule:
    """The list schedule of the module notes.

    Jobs run in their requested mode (a moldable schedule when they have
    modes). On a machine with speeds or SMP nodes (which takes no busy
    blocks): :func:`_appended`.

    Raises
    ------
    ValueError
        Some job can never start under the calendar.
    """
    graph = chain_graph(instance.jobs).graph
    if not instance.machine.flat:
        return _appended(instance, graph, producer)
    released = {j.id: j.release for j in site_released(instance).jobs}
    jobs = instance.jobs_by_id()
    board = _Board(instance)
    starts: dict[int, int] = {}
    offsets: dict[int, int] = {}
    for jid in _submit_order(instance, graph):
        job = jobs[jid]
        ready = max(
            [released[jid]]
            + [
                starts[p] + jobs[p].runtime + data["think_time"]
                for p, _, data in graph.in_edges(jid, data=True)
            ]
        )
        starts[jid], offsets[jid] = board.earliest(job, ready)
        board.place(job, starts[jid], offsets[jid])
    if instance.machine.allocation == "contiguous":
        placements = {
            jid: contiguous_placement(
                s, s + jobs[jid].runtime, offsets[jid], jobs[jid].size
            )
            for jid, s in starts.items()
        }
        return Schedule(placements, producer)
    return assign_processors(instance, starts, producer=producer)


def _appended(instance: Instance, graph: nx.DiGraph, producer: str) -> Schedule:
    """Jobs appended in submit order, a predecessor first, as
    :func:`optsched.topology.machines.append_schedule` does on machines with
    speeds or nodes (where run times depend on the processors; a moldable
    job in its requested mode), each from its predecessor's end plus the
    think time.

    Under a calendar the starts never fall (each job starts no earlier than
    the one placed before it), so a job's start is judged against the jobs
    placed before it only, and no later job runs at an earlier start: the
    first instant at which the processors are idle, the calendar admits
    the job beside the batch jobs running then (:class:`_Board`'s test) and
    its sequential queue is free.
    """
    machine = instance.machine
    calendar = machine.calendar
    jobs = instance.jobs_by_id()
    free_at = [0] * machine.processors
    placements: dict[int, Placement] = {}
    latest = 0  # the last start (under a calendar)
    for jid in _submit_order(instance, graph):
        job = jobs[jid]
        ready = max(
            [job.release, latest if calendar is not None else 0]
            + [
                placements[p].end + data["think_time"]
                for p, _, data in graph.in_edges(jid, data=True)
            ]
        )
        placements[jid] = _append(instance, jobs, job, ready, free_at, placements)
        latest = placements[jid].start
    return Schedule(placements, producer)


def _append(
    instance: Instance,
    jobs: Mapping[int, Job],
    job: Job,
    ready: int,
    free_at: list[int],
    placed: dict[int, Placement],
) -> Placement:
    """``job`` at the first instant from ``ready`` at which processors are
    idle for it and the site's rules let it start (:func:`_appended`); it
    takes those processors (``free_at``)."""
    machine = instance.machine
    t = ready
    while True:
        idle = [p for p, free in enumerate(free_at) if free <= t]
        chosen = pick_processors(machine, idle, job.size)
        later = _site_wait(instance, jobs, job, t, placed) if chosen is not None else t
        if chosen is not None and later == t:
            end = t + machine.run_time(request_work(machine, job)[0], chosen)
            for p in chosen:
                free_at[p] = end
            return Placement(t, end, tuple(sorted(chosen)))
        # The next instant something may change: a processor or a job of
        # the calendar ends, the calendar changes. At the latest processor
        # end every processor is idle, and the calendar admits every size
        # some time, so the search ends.
        ends = [f for f in free_at if f > t]
        t = min([*ends, later] if later > t else ends)


def _site_wait(
    instance: Instance,
    jobs: Mapping[int, Job],
    job: Job,
    t: int,
    placed: dict[int, Placement],
) -> int:
    """``t`` if the calendar admits ``job`` at ``t`` beside the jobs
    ``placed`` (none starting after ``t``) and its sequential queue is free,
    else a later instant at which it may."""
    calendar = instance.machine.calendar
    if calendar is None:
        return t
    m = instance.processors
    running = [(jobs[jid], p) for jid, p in placed.items() if p.start <= t < p.end]
    changes = [p.end for _, p in running]
    if job.queue in calendar.sequential_queues:
        # A job of 0 s may start with one of its queue starting at t.
        clash = [
            p.end
            for other, p in running
            if other.queue == job.queue and (job.runtime > 0 or p.start < t)
        ]
        if clash:
            return min(clash)
    if job.queue in calendar.anytime_queues:
        return t
    held = sum(
        other.size for other, _ in running if other.queue not in calendar.anytime_queues
    )
    if job.runtime == 0:
        held = 0  # a job of 0 s holds nothing: its own size only
    if job.size <= calendar.max_size_at(t, m) and held + job.size <= (
        calendar.capacity_at(t, m)
    ):
        return t
    return min([calendar.next_change(t), *changes])


def _submit_order(instance: Instance, graph: nx.DiGraph) -> list[int]:
    """Job ids in submit order, each predecessor before its successors."""
    position = {job.id: k for k, job in enumerate(instance.jobs)}
    waiting = {jid: graph.in_degree(jid) if jid in graph else 0 for jid in position}
    ready = [(k, jid) for jid, k in position.items() if waiting[jid] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, jid = heapq.heappop(ready)
        order.append(jid)
        for successor in graph.successors(jid) if jid in graph else ():
            waiting[successor] -= 1
            if waiting[successor] == 0:
                heapq.heappush(ready, (position[successor], successor))
    return order


class _Board:
    """What the jobs placed so far hold: the machine, the batch processors
    held at each instant, the batch starts and the sequential queues."""

    def __init__(self, instance: Instance) -> None:
        machine = instance.machine
        self.m = machine.processors
        self.calendar: Calendar | None = machine.calendar
        blocks = [b for b in machine.unavailable if b.end > b.start]
        first = min(
            [0, *(j.release for j in instance.jobs), *(b.start for b in blocks)]
        )
        self.strip = (
            Strip(self.m, blocks) if machine.allocation == "contiguous" else None
        )
        self.free = Profile.of_blocks(self.m, blocks, now=first)
        # Processors held at each instant, as the calendar's admission counts
        # them: the busy blocks and the batch jobs of positive length.
        self.held = Profile(first, 0)
        for block in blocks:
            self.held.add(block.start, block.end, block.size)
        self.starts: list[int] = []  # distinct starts of the batch jobs held
        self.queues: dict[int | None, list[tuple[int, int]]] = {}

    def batch(self, job: Job) -> bool:
        """Does the calendar judge the job's start (not an anytime queue)?"""
        return (
            self.calendar is not None and job.queue not in self.calendar.anytime_queues
        )

    def sequential(self, job: Job) -> bool:
        """Does the job's queue run one job at a time?"""
        return (
            self.calendar is not None and job.queue in self.calendar.sequential_queues
        )

    def earliest(self, job: Job, t: int) -> tuple[int, int]:
        """The earliest admissible ``(start, offset)`` at or after ``t``."""
        while True:
            t, offset = self._fit(job, t)
            later = max(self._admitted(job, t), self._queue(job, t), self._kept(job, t))
            if later == t:
                return t, offset
            t = later

    def place(self, job: Job, start: int, offset: int) -> None:
        """Hold the job's processors over its run."""
        end = start + job.runtime
        if self.strip is not None:
            self.strip.add(start, end, offset, job.size)
        self.free.add(start, end, -job.size)
        if self.batch(job) and end > start:
            self.held.add(start, end, job.size)
            k = bisect.bisect_left(self.starts, start)
            if k == len(self.starts) or self.starts[k] != start:
                self.starts.insert(k, start)
        if self.sequential(job):
            bisect.insort(self.queues.setdefault(job.queue, []), (start, end))

    def _fit(self, job: Job, t: int) -> tuple[int, int]:
        """The earliest start at or after ``t`` where the machine has room."""
        if self.strip is not None:
            return self.strip.earliest(t, job.runtime, job.size)
        if job.runtime == 0:
            return t, 0  # occupies nothing
        found = self.free.earliest_from(t, job.size, job.runtime)
        assert found is not None, "the last segment of the profile is all free"
        return found, 0

    def _admitted(self, job: Job, t: int) -> int:
        """``t`` if the calendar admits the job's start there, else the first
        instant at which it might."""
        calendar = self.calendar
        if calendar is None or not self.batch(job):
            return t
        largest = calendar.max_size_at(t, self.m)
        room = calendar.capacity_at(t, self.m) - job.size
        held = self.held.free_at(t) if job.runtime else 0  # 0 s: its own size only
        if job.size <= largest and held <= room:
            return t
        changes, counts = self.held.times, self.held.free
        k = bisect.bisect_right(changes, t)
        if k == len(changes):
            # Nothing is held from here on: the calendar alone decides.
            found = calendar.earliest_start(job.size, t, self.m)
            if found is None:
                raise ValueError(
                    f"job {job.id} of {job.size} processors finds no start under "
                    "the site calendar after the jobs placed before it"
                )
            return found
        change = calendar.next_change(t)
        if job.size <= largest and job.runtime:
            # Limits fixed until the calendar changes: the first instant
            # before then at which few enough processors are held.
            while k < len(changes) and changes[k] < change:
                if counts[k] <= room:
                    return changes[k]
                k += 1
        return change

    def _queue(self, job: Job, t: int) -> int:
        """``t`` if the job's run clashes with no run of its sequential
        queue, else the end of the last run in the way.

        The checker's reading (:func:`optsched.check.site._check_sequential`):
        of two runs, the later (by start, then end) may not start before the
        earlier ends, so a run of 0 s clashes only strictly inside another.
        The queue's runs, placed without clashes, are sorted by start and by
        end at once; those in the way of ``[t, t + p)`` end after ``t`` and
        start before ``t + p``, and none is out of the way before the last
        of them ends.
        """
        if not self.sequential(job):
            return t
        runs = self.queues.get(job.queue, [])
        first = bisect.bisect_right(runs, t, key=lambda run: run[1])
        last = bisect.bisect_left(runs, t + job.runtime, key=lambda run: run[0])
        return max(t, runs[last - 1][1]) if last > first else t

    def _kept(self, job: Job, t: int) -> int:
        """``t`` if the batch jobs starting during the job's run still fit
        the capacity at their starts with it, else one second after the
        last of them that would not."""
        calendar = self.calendar
        if calendar is None or not self.batch(job) or job.runtime == 0:
            return t
        first = bisect.bisect_left(self.starts, t)
        last = bisect.bisect_left(self.starts, t + job.runtime)
        broken = [
            s
            for s in self.starts[first:last]
            if self.held.free_at(s) + job.size > calendar.capacity_at(s, self.m)
        ]
        return max(broken) + 1 if broken else t
