"""The event-driven simulator: it owns time, events and processors.

A policy (:mod:`optsched.heuristics.rigid.policies`) is asked once per timestamp
which waiting jobs to start; it never sees the event heap. What a policy may
read and call is the :class:`Simulator` interface below (``now``, ``free``,
``queue``, ``size``, ``estimate``, ``release``, ``running_ends``,
``finished``, ``arrived``, ``rank``, ``can_start``, ``start``,
``refused_by_limit``, ``base_profile``, ``reserve``, ``predict``,
``wake_at``, ``plan_wake``, ``choose_mode`` (a moldable job's mode, chosen
at its start), and ``index_waiting`` / ``track`` for a
:class:`WaitingIndex` of the waiting jobs, with which backfilling finds
its candidates without scanning a long queue).

Events
------
The heap is keyed ``(time, kind, sequence)``. At equal times the simulator
processes every completion and every busy-block end, then every block
start, then every arrival, and finally runs **one scheduling pass**. A job
of zero duration needs its processors free when it starts and gives them
back at once (its completion is processed inside the pass), so a job
starting at the same instant may use them; a successor it releases at
that instant (think time 0) arrives after the pass, and the instant gets a
second pass for it (no earlier start of the instant was decided with it
waiting: the checker's rule 14 counts it as waiting from the next second).
Waiting jobs are kept in the policy's queue order; ties are broken by
``(submit, id)``. The same input always gives the same schedule.

Run times and estimates
-----------------------
A job runs for its actual run time; the policy sees only its estimate
(requested time), except for an oracle policy, which sees the duration the
job will really have. A job overrunning its estimate keeps running, unless
``kill_at_estimate`` stops it at its estimate (listed in
``Schedule.killed``). Planning treats an estimated end already in the past
as "now".

Busy blocks
-----------
Busy blocks (``Machine.unavailable``: jobs running at window start,
reservations, downtimes) are known in advance and respected by every
policy. A job may start only if, by its estimate, it does not collide with
a block: its processors count must fit under the blocks that start before
its estimated end (the availability profile holds a future block exactly
like a running job's reservation) and it avoids the processors of blocks
that have an offset (blocks have offsets on contiguous machines only; on
``any`` machines they are processor counts). A job that overruns its
estimate into the start of a block it would collide with is stopped at its
estimate (the block wins, as a batch system enforces the wall time before a
reservation); these jobs are listed as killed and counted in
:attr:`SimulationStats.killed_for_blocks`.
"Collide" means: the block has no offset, some block of the machine has no
offset, or the block's processors meet the job's.

Processors
----------
``any`` machines: the lowest free processor ids. ``contiguous`` machines: a
free range by ``first-fit`` or ``best-fit``; with ``migration``, when no
range is long enough but enough processors are free in total, running jobs
are compacted towards processor 0 (see
:mod:`optsched.heuristics.engine.allocation`). Each compaction is a *migration*;
:class:`SimulationStats` counts them, the job moves and the processors
moved, and the placements record every move (``Placement.moves``).
A policy that planned where a job goes (the shelf policies) may ask for
given processors: ``can_start(j, at=offset)`` accepts only the range
``[offset, offset + size)``, on both machine kinds, and ``start`` then
takes exactly that range.

Outages
-------
Outages (``Machine.outages``) are not announced: the simulator learns of
one when it starts (after the completions, busy-block ends and starts of
that instant), and from then on it is a busy block ending at its end
(Mallmann's downtime pseudo-jobs, 1997, §3.3.1). The jobs on the processors
it takes are killed and requeued from scratch, their run recorded as a lost
attempt (``Schedule.lost``): on a contiguous machine those whose range
meets the outage's; on an ``any`` machine (an outage is a processor count
there) idle processors go down first, then the running jobs that started
last (the least work lost; ties: the later job), until enough are free.
A requeued job arrives again (``arrived``) with its place in the queue
order; the counters ``outage_kills`` and ``lost_area`` (processor-seconds)
measure the damage.

Start-time predictions
----------------------
A policy that tells a job at its submission when it will start (PC²,
conservative backfilling) records it with ``predict``;
:class:`SimulationStats` reports how many jobs got one and the mean
absolute difference between the predicted and the actual starts.
"""

from __future__ import annotations

import dataclasses
import heapq
from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.heuristics.engine.allocation import (
    ALLOCATION_RULES,
    AnyAllocator,
    Compaction,
    ContiguousAllocator,
    Range,
)
from optsched.heuristics.site.gate import SiteGate
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.intervals import RunStore, processor_set
from optsched.packing import Profile
from optsched.schedule import Placement, PlacementColumns, Schedule

if TYPE_CHECKING:
    from optsched.heuristics.rigid.policies import EnginePolicy

# Event kinds, in processing order at equal times.
COMPLETION = 0
BLOCK_END = 1
BLOCK_START = 2
OUTAGE = 3  # after the blocks known in advance have taken their processors
WAKE = 4  # a pass a policy asked for
PLANNED = -2  # payload of a plan_wake (a wake_at carries -1, others an index)
ARRIVAL = 5

# Job states.
PENDING, WAITING, RUNNING, DONE = 0, 1, 2, 3


class Stalled(RuntimeError):
    """A run ended with jobs still waiting: the policy started none of them
    while nothing else could happen (a built-in policy's defect, a user's
    policy's error)."""


@dataclass(frozen=True, slots=True)
class SimulationStats:
    """Counters of one simulation.

    Attributes
    ----------
    events
        Events processed: arrivals, completions, busy-block starts and ends.
    passes
        Scheduling passes (calls of the policy).
    killed
        Jobs stopped at their estimate, for any reason.
    killed_for_blocks
        Of those, jobs stopped because their overrun would collide with a
        busy block (happens even without ``kill_at_estimate``).
    outage_kills
        Runs killed by an outage (the jobs ran again from scratch).
    lost_area
        Processor-seconds of those runs (work lost, counted as unused).
    migrations
        Compactions of a contiguous machine.
    migrated_jobs
        Job moves over all compactions (a job moved at two instants counts
        twice; a job started in the same pass as the compaction is placed,
        not migrated).
    migrated_processors
        Processors moved: the sum of the sizes of the moved jobs, per move.
    max_queue
        Longest waiting queue seen by a pass.
    predictions
        Jobs whose start time the policy predicted at their submission
        (:meth:`Simulator.predict`).
    prediction_error
        Mean absolute difference, in seconds, between the predicted and the
        actual start over those jobs (0 when there is none).
    wall_time
        Seconds the simulation took (not part of the schedule).
    """

    events: int = 0
    passes: int = 0
    killed: int = 0
    killed_for_blocks: int = 0
    outage_kills: int = 0
    lost_area: int = 0
    migrations: int = 0
    migrated_jobs: int = 0
    migrated_processors: int = 0
    max_queue: int = 0
    predictions: int = 0
    prediction_error: float = 0.0
    wall_time: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        """Field name to value."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """What :func:`simulate` returns.

    Attributes
    ----------
    schedule
        Explicit processors for every job; ``producer`` is the policy spec
        (with the seed for random orders); ``killed`` lists jobs stopped at
        their estimate.
    stats
        Counters (:class:`SimulationStats`).
    reservations
        For every job that got a reservation: the first one, by job id.
        Conservative backfilling: the reservation made on arrival. EASY and
        depth-``k`` backfilling: the first reservation computed for the job
        (for EASY, the shadow time when it became the blocked head).
    """

    schedule: Schedule
    stats: SimulationStats
    reservations: Mapping[int, int] = field(default_factory=dict)


class Simulator:
    """State of one simulation run, and the interface policies use.

    Jobs are numbered ``0 .. n-1`` in submit order (by ``(submit, id)``);
    the attributes below are lists indexed by that number.

    Attributes read by policies
    ---------------------------
    now
        Current time.
    processors
        ``m``.
    free
        Processors free right now (jobs and active busy blocks subtracted).
    queue
        Waiting jobs, in the policy's queue order. Jobs started during a pass
        stay in this list until the pass ends.
    size, estimate, release, job_id
        Per job; ``estimate`` is what the policy sees (the actual duration
        for an oracle policy).
    running_ends
        Sorted ``(estimated end, job)`` of the running jobs.
    finished
        Jobs whose completion was processed since the previous pass, with
        their estimated ends: ``(job, completion time, estimated end)``; a
        run an outage killed is reported too (the job is waiting again). A
        job of zero duration started in a pass ends inside it and is not
        reported (``end_time[j] == now`` tells the policy).
    end_time
        Per job: when it ends (``-1`` before it starts).
    arrived
        Jobs that arrived since the previous pass, in arrival order.
    rank
        Per job: its position in the queue order (smaller = earlier).
    """

    def __init__(
        self,
        instance: Instance,
        *,
        oracle: bool = False,
        kill_at_estimate: bool = False,
        allocation_rule: str = "first-fit",
        migration: bool = False,
        keep_profile: bool = False,
    ) -> None:
        machine = instance.machine
        self._options(machine, allocation_rule, migration)
        self.instance = instance
        self.migration = migration
        self.kill_at_estimate = kill_at_estimate
        self.oracle = oracle
        jobs = self._init_jobs(instance, oracle, kill_at_estimate)
        self._init_queue(len(jobs))
        self._init_blocks(machine, keep_profile)
        self._any = AnyAllocator(self.processors) if not self.contiguous else None
        self._chains(jobs)
        self._init_site(machine, jobs)
        self._init_loop(len(jobs), allocation_rule)

    def _options(self, machine: Machine, allocation_rule: str, migration: bool) -> None:
        """Refuse an unknown allocation rule and migration on an ``any``
        machine."""
        if allocation_rule not in ALLOCATION_RULES:
            raise ValueError(
                f"unknown allocation rule {allocation_rule!r}; valid: "
                f"{', '.join(ALLOCATION_RULES)}"
            )
        self.contiguous = machine.allocation == "contiguous"
        if migration and not self.contiguous:
            raise ValueError("migration applies only to contiguous machines")

    def _init_jobs(
        self, instance: Instance, oracle: bool, kill_at_estimate: bool
    ) -> list[Job]:
        """Per-job arrays, jobs numbered by ``(release, id)``."""
        self.processors = instance.machine.processors
        jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
        self.jobs = jobs
        self.job_id = [j.id for j in jobs]
        self.release = [j.release for j in jobs]
        self.size = [j.size for j in jobs]
        self.runtime = [j.runtime for j in jobs]
        self.requested = [j.requested for j in jobs]
        self.duration = [
            min(j.runtime, j.requested) if kill_at_estimate else j.runtime for j in jobs
        ]
        self.estimate = list(self.duration) if oracle else list(self.requested)
        n = len(jobs)
        # One byte a job, and times as 8-byte values: a list would hold a
        # fresh int per job for each (issue 30, 450k jobs: 22 MB of ints).
        self.state = bytearray(n)  # PENDING
        latest = self._latest_time(instance)
        self.start_time = _times(n, latest)
        self.end_time = _times(n, latest)
        self.processor_ids: list[Any] = [None] * n
        # A finished job's ranges go to the schedule's processor column at
        # once (runs, 8 bytes each): kept as range objects, or as tuples of
        # ids, the processors of 450k jobs would cost hundreds of MB.
        self._sets = RunStore(n, self.processors)
        self.moves: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
        self._first_ids: dict[int, Sequence[int]] = {}
        self.killed: set[int] = set()
        self.first_reservation: dict[int, int] = {}
        self.predicted: dict[int, int] = {}
        return jobs

    def _latest_time(self, instance: Instance) -> int:
        """A time no event of the run reaches: the last release, block or
        outage end plus every job's run time and estimate, doubled (waits
        for the calendar and planned passes stay far below)."""
        machine = instance.machine
        last = max(
            (x.end for x in (*machine.unavailable, *machine.outages)),
            default=0,
        )
        last = max(last, self.release[-1] if self.release else 0)
        return 2 * (last + sum(self.runtime) + sum(self.requested)) + 2 * _WEEK

    def _init_queue(self, n: int) -> None:
        """The queue, the running jobs and what changed since the last pass."""
        self.now = 0
        self.free = self.processors
        self.queue: list[int] = []
        self._queue_ranks: list[int] = []
        self._ranks: MutableSequence[int] = _ranks(range(n))
        self._started_in_pass: list[int] = []
        self._indexes: list[WaitingIndex] = []
        self.running_ends: list[tuple[int, int]] = []
        self.finished: list[tuple[int, int, int]] = []
        self.arrived: list[int] = []
        self.added_blocks: list[BusyBlock] = []
        """Blocks added since the previous pass (:meth:`add_block`, and
        outages when they start)."""

    def _init_blocks(self, machine: Machine, keep_profile: bool) -> None:
        """Busy blocks, outages and the profile of estimated ends."""
        self.blocks = sorted(
            (b for b in machine.unavailable if b.end > b.start),
            key=lambda b: (b.start, b.end, b.offset if b.offset is not None else -1),
        )
        self._block_starts = [b.start for b in self.blocks]
        self._last_block_end = max((b.end for b in self.blocks), default=0)
        self._any_block_without_offset = any(b.offset is None for b in self.blocks)
        self._offset_ranges = [
            (b.offset, b.offset + b.size) if b.offset is not None else None
            for b in self.blocks
        ]
        self.outages = sorted(
            (o for o in machine.outages if o.end > o.start),
            key=lambda o: (o.start, o.end, o.offset if o.offset is not None else -1),
        )
        self.lost: dict[int, list[Placement]] = {}
        """Runs killed by outages, by job number (:attr:`Schedule.lost`)."""
        self._block_kills: set[int] = set()  # jobs stopped at estimate for a block
        self.keep_profile = keep_profile or bool(self.blocks) or bool(self.outages)
        self._profile = Profile(0, self.processors)
        if self.keep_profile:
            for b in self.blocks:
                self._profile.add(b.start, b.end, -b.size)

    def _init_site(self, machine: Machine, jobs: list[Job]) -> None:
        """The site's rules: queues, the calendar (every size must start at
        some time) and the user limit."""
        self.job_queue = [j.queue for j in jobs]
        self.calendar = machine.calendar
        self._gate = (
            SiteGate(
                self.calendar,
                self.processors,
                self.size,
                self.job_queue,
                [j.user for j in jobs],
                self.requested,
            )
            if self.calendar is not None
            else None
        )
        # Jobs the user limit refused this pass (the gate's set).
        self._refused: set[int] = self._gate.refused if self._gate else set()
        self.demoted: list[int] = []
        """Jobs the user limit moved to the end of the queue since the
        previous pass (a policy that keeps reservations re-plans them)."""

    def _init_loop(self, n: int, allocation_rule: str) -> None:
        """The event heap, the allocators and the counters."""
        self._next_rank = n
        self.simple = not self.blocks and not self.contiguous and self.calendar is None
        """Processor counting without busy blocks: fits now = ``size <= free``."""
        self._line = (
            ContiguousAllocator(self.processors, allocation_rule)
            if self.contiguous
            else None
        )
        self._decision: tuple[int, int, Any, Any] | None = None
        self._pinned: tuple[int, int, int] | None = None  # (job, now, offset)
        self._heap: list[tuple[int, int, int, int]] = []
        self._sequence = 0
        self._done = 0
        self._wakes: set[int] = set()
        self._planned_wake: int | None = None  # plan_wake's current time
        self._instant_completions = 0
        self._last_instant = -1
        self._online_blocks = False  # add_block was called
        self._policy: Any = None  # set by begin()
        self._policy_state: Any = None
        self._upcoming = 0
        self.stats: dict[str, int] = dict.fromkeys(
            (
                "events",
                "passes",
                "killed",
                "killed_for_blocks",
                "outage_kills",
                "lost_area",
                "migrations",
                "migrated_jobs",
                "migrated_processors",
                "max_queue",
            ),
            0,
        )

    # ------------------------------------------------------------------
    # Events
    # ------------------------------------------------------------------
    def _push(self, time: int, kind: int, payload: int) -> None:
        self._sequence += 1
        heapq.heappush(self._heap, (time, kind, self._sequence, payload))

    def run(
        self,
        policy: EnginePolicy,
        ranks: Sequence[int],
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Simulate every job under ``policy`` (queue order ``ranks``)."""
        self.begin(policy, ranks)
        del ranks  # begin kept a compact copy: a caller's list may go now
        self.advance(None, progress)
        self.finish(progress)

    def begin(self, policy: EnginePolicy, ranks: Sequence[int]) -> None:
        """Prepare a run driven step by step with :meth:`advance` (a grid
        simulation runs one simulator per cluster this way and inserts
        reservations between steps, :meth:`add_block`)."""
        self._ranks = _ranks(ranks)
        for k, block in enumerate(self.blocks):
            self._push(block.start, BLOCK_START, k)
            self._push(block.end, BLOCK_END, k)
        for k, outage in enumerate(self.outages):
            self._push(outage.start, OUTAGE, k)
        self._policy = policy
        self._policy_state = policy.new_state(self)
        self._upcoming = 0  # next job to arrive
        self._last_instant = -1  # the last instant processed

    def advance(
        self, until: int | None, progress: Callable[[int], None] | None = None
    ) -> None:
        """Process every instant before ``until`` (all of them: ``None``).

        At each instant: completions, busy-block ends and starts, arrivals,
        then one scheduling pass. Arrivals are read from the jobs sorted by
        ``(submit, id)`` instead of being pushed on the heap: they are the
        last kind at equal times, so merging the two streams keeps the
        ``(time, kind, sequence)`` order.
        """
        policy, state = self._policy, self._policy_state
        heap = self._heap
        release = self.release
        n = len(release)
        upcoming = self._upcoming
        events = 0
        passes = 0
        max_queue = self.stats["max_queue"]
        heappop = heapq.heappop
        while heap or upcoming < n:
            if upcoming < n and (not heap or release[upcoming] < heap[0][0]):
                now = release[upcoming]
            else:
                top = heap[0]
                if top[3] == PLANNED and top[0] != self._planned_wake:
                    heappop(heap)  # a replaced plan_wake: no instant, no pass
                    continue
                now = top[0]
            if until is not None and now >= until:
                break
            while heap and heap[0][0] == now:
                _, kind, _, payload = heappop(heap)
                events += 1
                if kind == COMPLETION:
                    if self.end_time[payload] != now or self.state[payload] == DONE:
                        events -= 1  # superseded: cut short by a reservation
                        continue
                    self._complete(payload, now)
                elif kind == BLOCK_START:
                    self._block_start(payload)
                elif kind == BLOCK_END:
                    self._block_end(payload)
                elif kind == OUTAGE:
                    self._outage(payload, now)
                elif kind == ARRIVAL:
                    self._arrive(payload)  # a successor its predecessor released
                else:
                    self._wakes.discard(now)
                    events -= 1  # not an event of the instance
            while upcoming < n and release[upcoming] == now:
                if upcoming not in self._predecessor:
                    self._arrive(upcoming)
                    events += 1
                upcoming += 1
            self.now = now
            if self._gate is not None:
                self._restore(self._gate.close_instant(now))
            if self.queue:
                if len(self.queue) > max_queue:
                    max_queue = len(self.queue)
                passes += self._schedule_instant(policy, state, now)
            if progress is not None and passes % 1024 == 0:
                progress(self._done)
            self._last_instant = now
        self._upcoming = upcoming
        self.stats["events"] += events
        self.stats["passes"] += passes
        self.stats["max_queue"] = max_queue

    def _schedule_instant(self, policy: EnginePolicy, state: Any, now: int) -> int:
        """The scheduling pass of instant ``now`` (jobs wait), and one more
        after each demotion by the user limit; returns the passes run."""
        if self.keep_profile:
            self._profile.advance(now)
        passes = 1
        policy.decide(self, state)
        if self._started_in_pass:
            self._end_pass()
        while self._refused and self._demote():
            # Jobs the user limit refused went to the end of the queue: the
            # others get a pass of their own now.
            self.finished.clear()
            self.arrived.clear()
            self.added_blocks.clear()
            passes += 1
            policy.decide(self, state)
            self.demoted.clear()
            if self._started_in_pass:
                self._end_pass()
        if self._gate is not None and self.queue:
            # Jobs the calendar holds back may start when it changes.
            self.wake_at(self._gate.next_change(now))
        # Completions are reported to the next pass, even when the queue was
        # empty when they happened.
        self.finished.clear()
        self.arrived.clear()
        self.added_blocks.clear()
        return passes

    def finish(self, progress: Callable[[int], None] | None = None) -> None:
        """Check that the run ended with every job done; final statistics."""
        if self.queue or self._upcoming < len(self.release) or self._heap:
            raise Stalled(
                f"simulation stalled at time {self.now} with "
                f"{len(self.queue)} jobs waiting"
            )
        if progress is not None:
            progress(self._done)
        self.stats["events"] += self._instant_completions
        self._instant_completions = 0

    def add_block(self, block: BusyBlock, granted_at: int | None = None) -> int:
        """Insert a busy block during the run (an advance reservation granted
        online); returns how many running jobs were cut short for it.

        The block must start after the last processed instant and fit: at
        every instant of it, running jobs (up to their *estimated* ends) and
        the other blocks leave ``block.size`` processors (the caller, a
        local reservation service, checked this). ``granted_at`` is when
        the reservation is made (default: the last simulated instant).
        Jobs started later never collide with it (:meth:`can_start` looks
        at every block over a job's estimated run). A running job whose
        actual run would overrun its estimate into the block is stopped at
        its estimate, like the kill-at-estimate rule for blocks known in
        advance (:meth:`start`): a reservation is never overrun. A job
        already past its estimate cannot be stopped there: the caller must
        have counted it as busy (else ``RuntimeError``), and later starts
        leave its processors alone (:meth:`can_start`).
        """
        if block.offset is not None:
            raise ValueError("blocks added during a run take no processor offset")
        if block.start <= self._last_instant:
            raise ValueError(
                f"a block added after time {self._last_instant} must start "
                f"later, got {block.start}"
            )
        if not self.keep_profile:
            raise RuntimeError("add_block needs a simulator with keep_profile=True")
        if self.contiguous:
            raise ValueError("blocks added during a run need an 'any' machine")
        if block.end <= block.start:
            return 0
        now = self._last_instant if granted_at is None else granted_at
        if not self._last_instant <= now <= block.start:
            raise ValueError(
                f"a block granted at {now} must start later, got {block.start}"
            )
        self._profile.add(block.start, block.end, -block.size)
        try:
            cut = self._overruns_to_cut(block, now)
        except RuntimeError:
            self._profile.add(block.start, block.end, block.size)
            raise
        k = self._register_block(block)
        self._online_blocks = True
        self._push(block.start, BLOCK_START, k)
        self._push(block.end, BLOCK_END, k)
        for end, j in cut:
            self.end_time[j] = end
            self._block_kills.add(j)
            self.killed.add(j)
            self.stats["killed"] += 1
            self.stats["killed_for_blocks"] += 1
            self._push(end, COMPLETION, j)
        return len(cut)

    def _overrunning(self) -> int:
        """Processors of the jobs running past their estimates now.

        The profile forgets a job at its estimated end; with blocks granted
        during the run, one still running then may hold its processors when
        a block starts (blocks known in advance stop such jobs at their
        estimates instead, :meth:`start`), so a job that would start must
        leave them room too.
        """
        held = 0
        for estimated_end, j in self.running_ends:
            if estimated_end > self.now:
                break
            held += self.size[j]
        return held

    def _overruns_to_cut(self, block: BusyBlock, now: int) -> list[tuple[int, int]]:
        # Running jobs that will still run past their estimates while the
        # block holds its processors; the profile does not see those runs.
        overruns = []
        for estimated_end, j in self.running_ends:
            if self.end_time[j] > max(estimated_end, block.start) and (
                block.end > estimated_end
            ):
                overruns.append((estimated_end, j))
        # Those whose estimate is still ahead stop at it, as for blocks known
        # in advance (start): room beside the block now would not last, since
        # the scheduler, which does not know they overrun, may give it away.
        rest = [(end, j) for end, j in overruns if end <= now]
        if rest and not self._overruns_fit(block, rest):
            raise RuntimeError(
                f"{_block_name(block)} collides with a job running past its "
                "estimate (count such jobs as busy before granting it)"
            )
        return [(end, j) for end, j in overruns if end > now]

    def _overruns_fit(self, block: BusyBlock, overruns: list[tuple[int, int]]) -> bool:
        """Whether the processors left beside the blocks and the estimated
        runs over the block hold every overrunning job at once."""
        first = max(block.start, min(end for end, _ in overruns))
        last = min(block.end, max(self.end_time[j] for _, j in overruns))
        load = sum(self.size[j] for _, j in overruns)
        self._profile.advance(self.now)
        return self._profile.min_free(first, last) >= load

    def _demote(self) -> bool:
        """Move the jobs the user limit refused to the end of the queue
        (NQS's lowest priority); whether any moved."""
        assert self._gate is not None
        ranks = self._ranks
        moved = self._gate.demote(
            lambda j: self.state[j] == WAITING, ranks.__getitem__, ranks.__getitem__
        )
        for j in moved:
            self.demoted.append(j)
            self._reposition(j, self._next_rank)
            self._next_rank += 1
        return bool(moved)

    def _restore(self, back: list[tuple[int, int]]) -> None:
        """Give the demoted jobs whose users' accounts were emptied their
        places (ranks) back."""
        for j, rank in back:
            if self.state[j] == WAITING:
                self._reposition(j, rank)
            else:
                self._ranks[j] = rank

    def _reposition(self, j: int, rank: int) -> None:
        """Give waiting job ``j`` another queue rank (and place)."""
        ranks = self._queue_ranks
        k = bisect_left(ranks, self._ranks[j])
        assert self.queue[k] == j
        del self.queue[k]
        del ranks[k]
        self._ranks[j] = rank
        k = bisect_left(ranks, rank)
        ranks.insert(k, rank)
        self.queue.insert(k, j)

    def _arrive(self, j: int) -> None:
        if self._gate is not None:
            self._gate.arrive(j)
        self.state[j] = WAITING
        self.arrived.append(j)
        for index in self._indexes:
            index.add(j)
        rank = self._ranks[j]
        ranks = self._queue_ranks
        if not ranks or rank > ranks[-1]:
            ranks.append(rank)
            self.queue.append(j)
        else:
            k = bisect_left(ranks, rank)
            ranks.insert(k, rank)
            self.queue.insert(k, j)

    def _complete(self, j: int, now: int) -> None:
        self.state[j] = DONE
        self._done += 1
        size = self.size[j]
        self.free += size
        estimated_end = self.start_time[j] + self.estimate[j]
        k = bisect_left(self.running_ends, (estimated_end, j))
        del self.running_ends[k]
        if self._any is not None:
            self._any.give(self.processor_ids[j])
            self._sets.put(j, self.processor_ids[j])
            self.processor_ids[j] = None  # its set is in the column now
        else:
            assert self._line is not None
            self._line.give(("job", j))
        if self.keep_profile and now < estimated_end:
            self._profile.add(now, estimated_end, size)
        self.finished.append((j, now, estimated_end))
        if self._gate is not None:
            self._gate.ended(j)
        for successor, think in self._successors.get(j, ()):
            # Released at its predecessor's end plus the think time, never
            # before its own submit (the ARRIVAL event is an instance event).
            self._push(max(self.release[successor], now + think), ARRIVAL, successor)

    def _register_block(self, block: BusyBlock) -> int:
        """Add a block that appears during the run (a reservation granted,
        an outage that started) to the blocks and to ``added_blocks``; its
        index (its events' payload; the caller adds it to the profile)."""
        k = len(self.blocks)
        self.blocks.append(block)
        position = bisect_right(self._block_starts, block.start)
        # The events carry a block's index, so the list is only appended
        # to; the starts (and offsets) stay sorted for can_start's bisections.
        self._block_starts.insert(position, block.start)
        self._offset_ranges.insert(
            position,
            None if block.offset is None else (block.offset, block.offset + block.size),
        )
        self._any_block_without_offset |= block.offset is None
        self._last_block_end = max(self._last_block_end, block.end)
        self.simple = False
        self.added_blocks.append(block)
        return k

    def _outage(self, k: int, now: int) -> None:
        """An outage starts: kill the runs on its processors, requeue them,
        and hold its processors as a busy block until it ends."""
        outage = self.outages[k]
        for j in self._outage_victims(outage):
            self._kill_for_outage(j, now)
        self._profile.add(outage.start, outage.end, -outage.size)
        b = self._register_block(outage)  # policies that plan learn of it now
        self._block_start(b)
        self._push(outage.end, BLOCK_END, b)

    def _outage_victims(self, outage: BusyBlock) -> list[int]:
        """The running jobs an outage kills (module docstring, Outages)."""
        running = [j for _, j in self.running_ends]
        if outage.offset is not None:
            lo, hi = outage.offset, outage.offset + outage.size
            return [
                j
                for j in running
                if any(
                    lo < top and low < hi for low, top in _ranges(self.processor_ids[j])
                )
            ]
        if self.free >= outage.size:
            return []
        victims = []
        freed = self.free
        for j in sorted(running, key=lambda j: (self.start_time[j], j), reverse=True):
            victims.append(j)
            freed += self.size[j]
            if freed >= outage.size:
                break
        return victims

    def _kill_for_outage(self, j: int, now: int) -> None:
        """Stop ``j`` now, record the run as lost, and requeue the job."""
        start, size = self.start_time[j], self.size[j]
        ids = self.processor_ids[j]
        if j in self.moves:
            attempt = Placement(
                start, now, self._first_ids.pop(j), moves=tuple(self.moves.pop(j))
            )
        else:
            attempt = Placement(start, now, _flat(ids))
        self.lost.setdefault(j, []).append(attempt)
        self.stats["outage_kills"] += 1
        self.stats["lost_area"] += size * (now - start)
        self.free += size
        estimated_end = start + self.estimate[j]
        del self.running_ends[bisect_left(self.running_ends, (estimated_end, j))]
        if self._any is not None:
            self._any.give(ids)
        else:
            assert self._line is not None
            self._line.give(("job", j))
        if now < estimated_end:
            self._profile.add(now, estimated_end, size)
        self.finished.append((j, now, estimated_end))  # its plan is void too
        if self._gate is not None:
            self._gate.ended(j)
        if j in self.killed:  # decided again when it restarts
            self.killed.discard(j)
            self.stats["killed"] -= 1
            if j in self._block_kills:
                self._block_kills.discard(j)
                self.stats["killed_for_blocks"] -= 1
        # Its completion event goes stale (end_time no longer matches).
        self.start_time[j] = self.end_time[j] = -1
        self.processor_ids[j] = None
        self._arrive(j)

    def _block_start(self, k: int) -> None:
        block = self.blocks[k]
        self.free -= block.size
        if self.free < 0:
            raise RuntimeError(f"busy block {block} starts on processors in use")
        if block.offset is not None:
            try:
                if self._any is not None:
                    self._any.take_range(block.offset, block.offset + block.size)
                else:
                    assert self._line is not None
                    self._line.take(("block", k), block.offset, block.size, False)
            except ValueError as error:
                raise ValueError(
                    f"{_block_name(block)}: {error} at time {block.start}"
                ) from None

    def _block_end(self, k: int) -> None:
        block = self.blocks[k]
        self.free += block.size
        if block.offset is not None:
            if self._any is not None:
                self._any.give_range(block.offset, block.offset + block.size)
            else:
                assert self._line is not None
                self._line.give(("block", k))

    def _end_pass(self) -> None:
        # Drop the jobs started in this pass from the queue. A few are found
        # by bisection on the sorted queue ranks (a queue of thousands is
        # not scanned); many at once with one filtering pass.
        started = self._started_in_pass
        queue, ranks = self.queue, self._queue_ranks
        if len(started) <= 8:
            rank = self._ranks
            for j in started:
                k = bisect_left(ranks, rank[j])
                del queue[k]
                del ranks[k]
        else:
            state = self.state
            keep = [k for k, j in enumerate(queue) if state[j] == WAITING]
            self.queue = [queue[k] for k in keep]
            self._queue_ranks = [ranks[k] for k in keep]
        started.clear()

    # ------------------------------------------------------------------
    # What policies call
    # ------------------------------------------------------------------
    @property
    def rank(self) -> Sequence[int]:
        """Per job: its position in the queue order (the ``ranks`` of :meth:`run`)."""
        return self._ranks

    @property
    def reorders_queue(self) -> bool:
        """Whether jobs may change places in the queue during the run (the
        user limit's demotions): an index built on the initial queue order
        would then go stale."""
        return self._gate is not None and self._gate.reorders

    def refused_by_limit(self, j: int) -> bool:
        """Whether the user limit refused ``j`` in this pass: a
        :meth:`can_start` of it failed on the limit since the pass began.
        Unless it starts in the pass after all, the engine demotes it when
        the pass ends (:mod:`optsched.heuristics.site.user_limit`); a policy
        that keeps a plan learns here that the job is held back by the rule,
        not by the machine, and may let others go first. Always false
        without a user limit."""
        return j in self._refused

    @property
    def blocks_pending(self) -> bool:
        """Whether some busy block has not ended (holds processors now or later)."""
        return self.now < self._last_block_end

    def base_profile(self) -> Profile:
        """A copy of the availability profile of running jobs and busy blocks.

        Running jobs hold their processors until their estimated end (one in
        the past counts as now); busy blocks over their interval.
        """
        if not self.keep_profile:
            raise RuntimeError("this simulation keeps no profile (keep_profile=False)")
        self._profile.advance(self.now)
        return self._profile.copy()

    def can_start(self, j: int, at: int | None = None) -> bool:
        """Whether job ``j`` can start now.

        True when enough processors are free now, the job's estimated run
        does not collide with a busy block, and (contiguous machines) a free
        range exists, possibly after a compaction when migration is on.

        With ``at``, only the processors ``[at, at + size)`` are considered
        (on both machine kinds, never after a compaction): true when they
        are all free and no busy block that starts before the job's
        estimated end holds one of them; the next :meth:`start` of ``j``
        then takes exactly them.
        """
        self._pinned = None
        size = self.size[j]
        if size > self.free:
            return False
        gate = self._gate
        if gate is not None and not gate.allows(
            j, self.processors - self.free, self.now
        ):
            return False
        if self.simple and at is None:
            return True
        excluded: list[Range] = []
        if self.blocks:
            end = self.now + self.estimate[j]
            first = bisect_right(self._block_starts, self.now)
            last = bisect_left(self._block_starts, end)
            if last > first:
                low = self._profile.min_free(self.now, end)
                if self._online_blocks:
                    low -= self._overrunning()
                if low < size:
                    return False
                excluded = [r for r in self._offset_ranges[first:last] if r is not None]
        if at is not None:
            return self._can_pin(j, at, size, excluded)
        if self._any is not None:
            if excluded and not self._any.can_take(size, excluded):
                return False
            self._decision = (j, self.now, excluded, None)
            return True
        line = self._line
        assert line is not None
        offset = line.find(size, excluded)
        plan: Compaction | None = None
        if offset is None:
            if not self.migration:
                return False
            plan = line.plan_compaction(self._block_obstacles())
            offset = line.find_after(plan, size, excluded)
            if offset is None:
                return False
        self._decision = (j, self.now, offset, plan)
        return True

    def _chains(self, jobs: list[Job]) -> None:
        """Successors wait for their predecessors (SWF fields 17/18).

        The precedence graph is :func:`optsched.site.chains.chain_graph`'s (the
        checker reads the same one): a successor arrives at
        ``max(submit, predecessor end + think time)``.
        """
        from optsched.site.chains import chain_graph

        self._predecessor: dict[int, int] = {}
        self._successors: dict[int, list[tuple[int, int]]] = {}
        if not any(job.preceding_job is not None for job in jobs):
            return
        number = {job.id: k for k, job in enumerate(jobs)}
        graph = chain_graph(jobs).graph
        for before, after, data in graph.edges(data=True):
            p, j = number[before], number[after]
            self._predecessor[j] = p
            self._successors.setdefault(p, []).append((j, data["think_time"]))

    def _can_pin(self, j: int, at: int, size: int, excluded: list[Range]) -> bool:
        # [at, at + size) must lie inside one free range of the allocator
        # (free ranges are merged) and miss every block range in `excluded`.
        hi = at + size
        if at < 0 or hi > self.processors:
            return False
        if any(lo < hi and at < top for lo, top in excluded):
            return False
        if self._any is not None:
            free = self._any.free
        else:
            assert self._line is not None
            free = self._line.free
        k = bisect_right(free, (at, self.processors + 1)) - 1
        if k < 0 or not (free[k][0] <= at and hi <= free[k][1]):
            return False
        self._pinned = (j, self.now, at)
        return True

    def start(self, j: int) -> None:
        """Start job ``j`` now. Call :meth:`can_start` first."""
        now = self.now
        size = self.size[j]
        ids: Any
        pinned = self._pinned
        if pinned is not None and pinned[0] == j and pinned[1] == now:
            self._pinned = None
            at = pinned[2]
            if self._any is not None:
                self._any.take_range(at, at + size)
                ids = [range(at, at + size)]
            else:
                assert self._line is not None
                self._line.take(("job", j), at, size, True)
                ids = range(at, at + size)
        elif self.simple:
            # Processor counting without busy blocks: the lowest free ids.
            if size > self.free:
                raise RuntimeError(f"job {self.job_id[j]} cannot start at {now}")
            assert self._any is not None
            ids = self._any.take(size)
        else:
            ids = self._allocate(j)
        self.processor_ids[j] = ids
        self.free -= size
        self.state[j] = RUNNING
        for index in self._indexes:
            index.remove(j)
        self.start_time[j] = now
        if self._gate is not None:
            self._gate.started(j)  # the site's rules (heuristics.site.gate)
        estimate = self.estimate[j]
        insort(self.running_ends, (now + estimate, j))
        if self.keep_profile:
            self._profile.add(now, now + estimate, -size)
        duration = self.duration[j]
        if duration < self.runtime[j]:
            self.killed.add(j)
            self.stats["killed"] += 1
        elif duration > estimate and self.blocks and self._overrun_collides(j, ids):
            duration = self.requested[j]
            self._block_kills.add(j)
            self.killed.add(j)
            self.stats["killed"] += 1
            self.stats["killed_for_blocks"] += 1
        self.end_time[j] = now + duration
        self._started_in_pass.append(j)
        if duration == 0:
            # A job of zero duration needs its processors free at its start
            # instant only: it gives them back at once, so a job starting at
            # the same instant may use them (no second pass is needed).
            self._instant_completions += 1
            self._complete(j, now)
            return
        self._sequence += 1
        heapq.heappush(self._heap, (now + duration, COMPLETION, self._sequence, j))

    def _allocate(self, j: int) -> Any:
        decision = self._decision
        if decision is None or decision[0] != j or decision[1] != self.now:
            if not self.can_start(j):
                raise RuntimeError(f"job {self.job_id[j]} cannot start at {self.now}")
            decision = self._decision
        self._decision = None
        size = self.size[j]
        if self._any is not None:
            return self._any.take(size, decision[2] if decision is not None else ())
        assert decision is not None and self._line is not None
        plan = decision[3]
        if plan is not None:
            self._migrate(plan)
        offset = decision[2]
        self._line.take(("job", j), offset, size, True)
        return range(offset, offset + size)

    def index_waiting(self, keys: Sequence[Any] | None = None) -> WaitingIndex:
        """An empty :class:`WaitingIndex` over every job (see :meth:`track`).

        Jobs are ordered by ``keys[j]`` (increasing), ties in queue order;
        without ``keys``, in queue order.
        """
        rank = self._ranks
        order: Sequence[int] | np.ndarray  # numpy: no int object per job
        if keys is None:
            order = np.argsort(np.asarray(rank, dtype=np.int64), kind="stable")
        else:
            try:
                primary = np.asarray(keys, dtype=np.int64)
            except OverflowError:  # keys beyond 64 bits: sort in Python
                order = sorted(range(len(rank)), key=lambda j: (keys[j], rank[j]))
            else:
                ranks = np.asarray(rank, dtype=np.int64)
                order = np.lexsort((ranks, primary))
        return WaitingIndex(order, self.size, self.estimate)

    def track(self, index: WaitingIndex, on: bool) -> None:
        """Keep ``index`` holding exactly the waiting jobs (``on``: it gets
        the jobs waiting now, then every arrival and start), or stop and
        empty it (``off``), in ``O(q log n)`` for ``q`` waiting jobs."""
        if on == any(index is x for x in self._indexes):
            return
        waiting = [j for j in self.queue if self.state[j] == WAITING]
        if on:
            for j in waiting:
                index.add(j)
            self._indexes.append(index)
        else:
            self._indexes = [x for x in self._indexes if x is not index]
            for j in waiting:
                index.remove(j)

    def wake_at(self, time: int) -> None:
        """Ask for a scheduling pass at ``time`` (later than now).

        Passes happen when jobs arrive or end and busy blocks start or end;
        a policy whose plan has a start at another time asks for one.
        """
        if time > self.now and time not in self._wakes:
            self._wakes.add(time)
            self._sequence += 1
            heapq.heappush(self._heap, (time, WAKE, self._sequence, -1))

    def plan_wake(self, time: int | None) -> None:
        """Ask for the policy's next planned pass at ``time`` (later than
        now), replacing the one asked for before; ``None`` withdraws it.

        Unlike :meth:`wake_at`, whose passes always happen, a plan whose
        times move (conservative backfilling's reservations) keeps one such
        wake: a replaced one is dropped when the clock reaches it, before
        it makes an instant, so a moved reservation leaves no pass behind.
        (The check costs a comparison per instant; policies that never
        call this pay nothing more.)
        """
        if time is not None and time <= self.now:
            time = None
        if time == self._planned_wake:
            return
        self._planned_wake = time
        if time is not None:
            self._sequence += 1
            heapq.heappush(self._heap, (time, WAKE, self._sequence, PLANNED))

    def choose_mode(self, j: int, mode: Mode) -> None:
        """Run waiting job ``j`` in ``mode`` from its next :meth:`start`.

        The hook of the policies that choose a moldable job's processor
        count at its start (:mod:`optsched.heuristics.moldable.policies`):
        the job's size, run time and estimate become the mode's, so that
        :meth:`can_start`, :meth:`start`, the site's rules and every
        planning of later passes (``running_ends`` by the mode's estimated
        end, the profile) see the mode. A requeued job (an outage killed
        it) may be given another mode before it starts again.

        Raises
        ------
        ValueError
            ``j`` is not waiting, or a :class:`WaitingIndex` is kept (its
            entries hold the sizes and estimates they were added with).
        """
        if (mode.processors, mode.runtime, mode.requested) == (
            self.size[j],
            self.runtime[j],
            self.requested[j],
        ):
            return  # its mode already (a rigid job's only one)
        if self.state[j] != WAITING or self._indexes:
            raise ValueError(
                f"job {self.job_id[j]}: a mode is chosen for a waiting job, "
                "without a waiting index"
            )
        self.size[j] = mode.processors
        self.runtime[j] = mode.runtime
        self.requested[j] = mode.requested
        self.duration[j] = self._mode_duration(mode)
        self.estimate[j] = self.mode_estimate(mode)
        if self._gate is not None:
            self._gate.resized(j)

    def _mode_duration(self, mode: Mode) -> int:
        # How long a job runs in ``mode``: its run time, or its estimate when
        # the run kills jobs at their estimates.
        killed = self.kill_at_estimate and mode.requested < mode.runtime
        return mode.requested if killed else mode.runtime

    def mode_estimate(self, mode: Mode) -> int:
        """The estimate a policy sees for a job run in ``mode``: the mode's
        requested time, or (an oracle policy) how long it will really run."""
        return self._mode_duration(mode) if self.oracle else mode.requested

    @property
    def policy_state(self) -> Any:
        """What the policy's ``new_state`` gave for this run (a caller that
        drives the run reads what the policy recorded in it)."""
        return self._policy_state

    def reserve(self, j: int, time: int) -> None:
        """Record a reservation computed for ``j`` (the first one is kept)."""
        self.first_reservation.setdefault(j, time)

    def predict(self, j: int, time: int) -> None:
        """Record the start time announced to ``j`` at its submission (the
        first one is kept); :class:`SimulationStats` compares it with the
        actual start."""
        self.predicted.setdefault(j, time)

    # ------------------------------------------------------------------
    # Helpers
    # ------------------------------------------------------------------
    def _overrun_collides(self, j: int, ids: Any) -> bool:
        # Blocks starting in [start + estimate, start + duration) were not
        # planned for; the job must be stopped at its estimate if it would
        # hold processors a block needs.
        now = self.now
        first = max(
            bisect_left(self._block_starts, now + self.requested[j]),
            bisect_right(self._block_starts, now),
        )
        last = bisect_left(self._block_starts, now + self.duration[j])
        if last <= first:
            return False
        if self._any_block_without_offset:
            return True
        held = set(_flat(ids))
        for r in self._offset_ranges[first:last]:
            assert r is not None
            if any(p in held for p in range(r[0], r[1])):
                return True
        return False

    def _block_obstacles(self) -> list[Range]:
        # Every block that has not ended: compaction never moves a job onto
        # processors a block holds now or will hold.
        now = self.now
        return [
            (b.offset, b.offset + b.size)
            for b in self.blocks
            if b.end > now and b.offset is not None
        ]

    def _migrate(self, plan: Compaction) -> None:
        line = self._line
        assert line is not None
        line.apply(plan)
        self.stats["migrations"] += 1
        now = self.now
        for holder, _, new, size in plan.moves:
            # Job holders are ("job", id); blocks never move (fixed holders).
            assert isinstance(holder, tuple)
            j = holder[1]
            target = range(new, new + size)
            moves = self.moves.get(j)
            if self.start_time[j] == now:
                # Started in this pass: it never ran where it was placed, so
                # this is a placement, not a migration.
                self.processor_ids[j] = target
                continue
            if moves and moves[-1][0] == now:
                # Moved twice at the same instant: one move, to the last place.
                moves[-1] = (now, tuple(target))
                self.processor_ids[j] = target
            else:
                self.stats["migrated_jobs"] += 1
                self.stats["migrated_processors"] += size
                if j not in self._first_ids:
                    self._first_ids[j] = _flat(self.processor_ids[j])
                self.moves.setdefault(j, []).append((now, tuple(target)))
                self.processor_ids[j] = target

    # ------------------------------------------------------------------
    # Result
    # ------------------------------------------------------------------
    def schedule(self, producer: str) -> Schedule:
        """The schedule built so far (every job must be done), column-wise
        (:class:`~optsched.schedule.PlacementColumns`): a job costs its
        start, end and processor runs, not a ``Placement`` and a tuple."""
        sets, moves = self._sets, self.moves
        special: dict[int, Placement] = {}
        for j, ids in enumerate(self.processor_ids):
            if j in moves:
                special[self.job_id[j]] = Placement(
                    self.start_time[j],
                    self.end_time[j],
                    self._first_ids[j],
                    moves=tuple(moves[j]),
                )
            elif ids is not None:  # contiguous machines keep their range
                sets.put(j, [ids] if isinstance(ids, range) else ids)
        # Copies of the time columns: the schedule must not follow a run
        # that goes on (a grid steps its simulators on).
        placements = PlacementColumns(
            self.job_id,
            _copy(self.start_time),
            _copy(self.end_time),
            sets.columns(),
            special,
        )
        return Schedule(
            placements,
            producer=producer,
            killed=frozenset(self.job_id[j] for j in self.killed),
            lost={self.job_id[j]: tuple(runs) for j, runs in self.lost.items()},
        )


class WaitingIndex:
    """Waiting jobs in a fixed order, searched for the first one that may start.

    Jobs are split into size classes (class ``c`` holds sizes ``2**c`` to
    ``2**(c+1) - 1``). Each class is a segment tree (:class:`_MinTree`) over
    the positions of *its* jobs in a static order: a job's leaf holds its
    size and estimate while it waits, infinity otherwise; every inner node
    holds the minimum size and the minimum estimate of its subtree.
    Arrivals and starts are point updates, ``O(log n)``.

    A search (:meth:`next_easy`, :meth:`next_fitting`) returns the first
    waiting job at or after a position that passes a test on its size and
    estimate: the first hit of each class that may hold a fitting job
    (``2**c <= free``), the earliest of those. Inside a class a subtree is
    skipped when its two minima prove that none of its jobs passes (a
    *necessary* condition, exact at a leaf). Splitting by size keeps that
    condition sharp: within a class sizes differ by less than a factor of
    two, so the smallest and the shortest job of a subtree are nearly
    interchangeable. A pass in which no waiting job can start costs a root
    test per class, not a scan of the queue (segment trees: Bentley 1977;
    the first-fit descent is the classic "first element at or after ``p``
    satisfying a bound").

    Parameters
    ----------
    order
        All jobs, in the order searched.
    size, estimate
        Per job.
    """

    __slots__ = (
        "_class",
        "_estimate",
        "_local",
        "_positions",
        "_size",
        "_trees",
        "position",
    )

    def __init__(
        self,
        order: Sequence[int] | np.ndarray,
        size: Sequence[int],
        estimate: Sequence[int],
    ) -> None:
        # Every per-job column is a compact array (4 bytes a job where the
        # values allow): at archive scale, Python lists of fresh ints cost
        # about 36 bytes a job each, 68 MB for 450,880 jobs (issue 30).
        self._size = size
        self._estimate = estimate
        n = len(order)
        ranked = np.asarray(order, dtype=np.int64).reshape(n)
        at = np.empty(n, dtype=np.int64)
        at[ranked] = np.arange(n, dtype=np.int64)
        self.position = _compact(at)
        """Position of each job in the order."""
        classes = np.fromiter(
            (q.bit_length() - 1 for q in size), dtype=np.int16, count=n
        )
        self._class = _compact(classes)
        local = np.zeros(n, dtype=np.int64)
        members: list[np.ndarray] = []
        ordered = classes[ranked]
        for c in range(int(classes.max()) + 1 if n else 0):
            jobs = ranked[ordered == c]  # the class's jobs, in the order
            local[jobs] = np.arange(len(jobs), dtype=np.int64)
            members.append(jobs)
        self._local = _compact(local)
        top_size = max(size, default=0)
        top_estimate = max(estimate, default=0)
        self._trees = [
            _MinTree(_compact(jobs), top_size, top_estimate) for jobs in members
        ]
        self._positions = [_compact(at[jobs]) for jobs in members]

    def add(self, j: int) -> None:
        """Job ``j`` waits: its leaf takes its size and estimate."""
        self._trees[self._class[j]].set(
            self._local[j], self._size[j], self._estimate[j]
        )

    def remove(self, j: int) -> None:
        """Job ``j`` no longer waits: its leaf goes back to infinity."""
        self._trees[self._class[j]].clear(self._local[j])

    def next_easy(self, first: int, free: int, extra: int, horizon: int) -> int | None:
        """First waiting job at position ``>= first`` that EASY may backfill.

        The test is EASY's: ``size <= free`` and (``estimate <= horizon``,
        the job ends by the shadow time, or ``size <= extra``). A subtree
        is skipped when its minimum size exceeds ``free``, or exceeds
        ``extra`` while its minimum estimate exceeds ``horizon``.
        """
        best: int | None = None
        best_position = -1
        trees, positions = self._trees, self._positions
        for c in range(min(free.bit_length(), len(trees))):
            at = positions[c]
            k = trees[c].first_easy(bisect_left(at, first), free, extra, horizon)
            if k is not None and (best is None or at[k] < best_position):
                best, best_position = trees[c].job[k], at[k]
        return best

    def next_fitting(
        self,
        first: int,
        free: int,
        fits: Callable[[float], float],
    ) -> int | None:
        """First waiting job at position ``>= first`` with ``size <= free``
        and ``size <= fits(estimate)`` (or estimate 0).

        ``fits(d)`` must be non-increasing in ``d`` (the fewest processors
        free over ``[now, now + d)``): a subtree is then skipped when its
        minimum size exceeds ``free`` or ``fits`` of its minimum estimate
        (every job in it is at least that wide and that long).
        """
        best: int | None = None
        best_position = -1
        trees, positions = self._trees, self._positions
        for c in range(min(free.bit_length(), len(trees))):
            at = positions[c]
            k = trees[c].first_fitting(bisect_left(at, first), free, fits)
            if k is not None and (best is None or at[k] < best_position):
                best, best_position = trees[c].job[k], at[k]
        return best


class _MinTree:
    """Minimum size and estimate over leaf slots (see :class:`WaitingIndex`).

    A complete binary tree over ``L`` leaf slots (a power of two): node
    ``v`` has children ``2v`` and ``2v + 1``, slot ``p`` is node ``L + p``.
    """

    __slots__ = (
        "empty_estimate",
        "empty_size",
        "job",
        "leaves",
        "min_estimate",
        "min_size",
    )

    def __init__(self, jobs: Sequence[int], top_size: int, top_estimate: int) -> None:
        self.job = jobs
        """The job of each slot."""
        self.leaves = 1 << max(len(jobs) - 1, 0).bit_length()
        self.min_size, self.empty_size = _min_column(2 * self.leaves, top_size)
        self.min_estimate, self.empty_estimate = _min_column(
            2 * self.leaves, top_estimate
        )

    def set(self, p: int, q: int, d: int) -> None:
        """Slot ``p`` holds a waiting job of size ``q`` and estimate ``d``."""
        v = self.leaves + p
        sizes, estimates = self.min_size, self.min_estimate
        sizes[v], estimates[v] = q, d
        v >>= 1
        # Minima only fall: climb while an ancestor gets a smaller one.
        while v:
            changed = False
            if q < sizes[v]:
                sizes[v] = q
                changed = True
            if d < estimates[v]:
                estimates[v] = d
                changed = True
            if not changed:
                return
            v >>= 1

    def clear(self, p: int) -> None:
        """Slot ``p`` is empty again."""
        v = self.leaves + p
        sizes, estimates = self.min_size, self.min_estimate
        sizes[v], estimates[v] = self.empty_size, self.empty_estimate
        v >>= 1
        while v:
            a, b = sizes[2 * v], sizes[2 * v + 1]
            q = a if a < b else b
            a, b = estimates[2 * v], estimates[2 * v + 1]
            d = a if a < b else b
            if q == sizes[v] and d == estimates[v]:
                return  # no ancestor changes either
            sizes[v], estimates[v] = q, d
            v >>= 1

    def first_easy(self, first: int, free: int, extra: int, horizon: int) -> int | None:
        """First slot ``>= first`` passing EASY's test (see
        :meth:`WaitingIndex.next_easy`)."""
        sizes, estimates = self.min_size, self.min_estimate
        leaves = self.leaves
        q = sizes[1]
        if first >= leaves or not (
            q <= free and (q <= extra or estimates[1] <= horizon)
        ):
            return None  # the root's minima: no slot passes
        v = leaves + first
        while True:
            q = sizes[v]
            if q <= free and (q <= extra or estimates[v] <= horizon):
                if v >= leaves:
                    return v - leaves
                v *= 2  # descend: the left child first
                continue
            # Next subtree to the right: climb while v is a right child.
            while v & 1:
                v >>= 1
            if v == 0:
                return None
            v += 1

    def first_fitting(
        self, first: int, free: int, fits: Callable[[float], float]
    ) -> int | None:
        """First slot ``>= first`` passing the profile test (see
        :meth:`WaitingIndex.next_fitting`)."""
        # The same walk as next_fitting with another test inlined: a test
        # passed as a function would cost a call per visited node, in the
        # loop that makes EASY's passes cheap.
        sizes, estimates = self.min_size, self.min_estimate
        leaves = self.leaves
        if first >= leaves or sizes[1] > free:
            return None  # the root's minimum size: no slot fits
        v = leaves + first
        while True:
            q = sizes[v]
            if q <= free:
                d = estimates[v]
                if d == 0 or q <= fits(d):
                    if v >= leaves:
                        return v - leaves
                    v *= 2
                    continue
            while v & 1:
                v >>= 1
            if v == 0:
                return None
            v += 1


_INF = float("inf")
_INT32 = 2**31 - 1
_INT64 = 2**63 - 1


def _compact(values: np.ndarray) -> Sequence[int]:
    """Integer ``values`` as an ``array`` of 4 bytes each where they fit,
    else 8 (its items read back as Python ints, unlike a numpy array's)."""
    small = not len(values) or (
        int(values.min()) >= -_INT32 and int(values.max()) <= _INT32
    )
    column = array("i" if small else "q")
    column.frombytes(values.astype(np.int32 if small else np.int64).tobytes())
    return column


_WEEK = 7 * 86_400


def _times(n: int, latest: int) -> MutableSequence[int]:
    """``n`` times, all -1: 8-byte values when ``latest`` fits in them."""
    if latest < _INT64:
        return array("q", [-1]) * n
    return [-1] * n


def _copy(times: MutableSequence[int]) -> Sequence[int]:
    return array("q", times) if isinstance(times, array) else list(times)


def _ranks(ranks: Sequence[int]) -> MutableSequence[int]:
    """The queue ranks as 8-byte values (a list past 64 bits)."""
    try:
        return array("q", ranks)
    except OverflowError:
        return list(ranks)


def _min_column(slots: int, top: int) -> tuple[Any, Any]:
    """A column of ``slots`` minima for values up to ``top``, all "empty",
    and its empty value: 4 bytes a slot where ``top`` allows, 8 beyond, a
    list with infinity for values past 64 bits. Empty is larger than every
    value, so a subtree with no waiting job fails every test on its size."""
    for typecode, empty in (("i", _INT32), ("q", _INT64)):
        if top < empty:
            return array(typecode, [empty]) * slots, empty
    return [_INF] * slots, _INF


def _ranges(ids: range | list[range]) -> list[tuple[int, int]]:
    """``(lo, hi)`` of each processor range a running job holds."""
    ranges = [ids] if isinstance(ids, range) else ids
    return [(r.start, r.stop) for r in ranges]


def _flat(ids: range | list[range]) -> Sequence[int]:
    # A contiguous job holds one range, a job on an `any` machine a list of
    # ranges (lowest free ids); both are in increasing order. Wide sets stay
    # intervals (processor_set): a job of 10**9 processors is not expanded.
    return processor_set(_ranges(ids))


def _block_name(block: BusyBlock) -> str:
    return f"busy block {block.label or (block.start, block.end)}"


def reservations_by_id(sim: Simulator) -> Mapping[int, int]:
    """First reservations keyed by job id."""
    return MappingProxyType(
        {sim.job_id[j]: t for j, t in sorted(sim.first_reservation.items())}
    )


def stats_of(sim: Simulator, wall_time: float) -> SimulationStats:
    """Freeze the counters (and measure the start-time predictions)."""
    predicted = sim.predicted
    start = sim.start_time
    error = sum(abs(start[j] - t) for j, t in predicted.items())
    return SimulationStats(
        wall_time=wall_time,
        predictions=len(predicted),
        prediction_error=error / len(predicted) if predicted else 0.0,
        **sim.stats,
    )
