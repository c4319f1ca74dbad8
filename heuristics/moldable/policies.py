r"""Online moldable policies: adaptive partitioning and EASY with scaling.

A moldable job runs on one of its modes (:class:`~optsched.instance.Mode`),
chosen by the scheduler when it starts, for that mode's run time; the
schedule is an ordinary one (one placement per job, explicit processors,
``len(processors)`` naming the mode). A rigid job (no modes) has one mode,
its size. Both policies are online: jobs arrive at their release, the
scheduler sees the modes' *estimates* (never the run times) and learns a
job's end when it ends. They run in a compact event simulation of their
own (the engine of :mod:`optsched.heuristics.engine.core` starts every job at
its requested size): at each instant completions are processed first, then
arrivals, then one scheduling pass if jobs wait; a job of run time 0 gives
its processors back at once. Processors: a starting job takes the lowest
free indices. Every job runs its full run time (no kill at the estimate).
Only ``any`` machines without busy blocks (``ValueError`` otherwise).

The finish-time guard
---------------------
Both policies may start a job on fewer processors than it requests. Under
a speed-up near linear that stretches the job almost in proportion: a
4-processor job of 10 h run on one processor ties it up for 40 h, and the
whole schedule follows it (the moldable guide gives the makespans of
``kth_50 --moldable linear`` with and without the guard). The thesis
prints no explicit rule (its Fig. 5.14 is lost; seed 001 §5.7): it scales
a backfilled job down so that it finds a place ("a fitting position is
easier to find"), its rescaling keeps a new size only when the cost
improves, and its model of fewer processors is the conservative one
(§5.4.1, ``T(j) = T(q) q / j``), under which a shrunk job started at the
same time ends later, never earlier. Shrinking therefore pays only by
starting earlier, and the guard, ours, says by how much: a job of request
``q`` may start *now* on a mode ``p < q`` only if, by the estimates, it
then ends no later than it would by waiting for its request:

.. math:: \mathit{now} + \mathit{est}(p) \le s_q + \mathit{est}(q),

where ``s_q`` is the earliest time at which ``q`` processors are free by
the running jobs' estimated ends (EASY's shadow time of ``q``, an end in
the past counting as now; the waiting jobs are ignored, so ``s_q`` is the
earliest the job could get its request and the guard the strictest of its
kind). A mode of at least ``q`` processors is never refused by the guard.
If ``q`` processors are free now, ``s_q`` is now and no job shrinks unless
a smaller mode is as fast. The spec parameter ``guard=none`` drops the
guard (the rules as published: adaptive partitioning sizes a job from the
load alone); ``guard=finish`` is the default.

Adaptive partitioning
---------------------
E. Rosti, E. Smirni, L. W. Dowdy, G. Serazzi, B. M. Carlson, "Robust
partitioning policies of multiprocessor systems", Performance Evaluation
19, 1994, and K. C. Sevcik, "Application scheduling and processor
allocation in multiprogrammed parallel processing systems", Performance
Evaluation 19, 1994 (seed 001 §2.4: low load, many processors per job;
high load, few). The family sizes a partition from the number of jobs
waiting; the exact rule here is ours (the papers' policies differ in
detail and were not available to us):

- the queue is FCFS (release, then id) and strict: only its head starts;
- the head, with ``w`` jobs waiting behind it and ``F`` processors free,
  gets the target ``max(1, floor(F / (1 + w)))``: the free processors
  shared equally among the waiting jobs;
- it runs on its largest mode of at most the target processors (any mode,
  also above its request) that the guard admits, or, if every admitted
  mode is larger, on its smallest admitted one; it starts if that mode
  fits in ``F``, otherwise the queue waits (and the guard is asked again
  at the next event).

On a rigid instance this is strict FCFS (``fcfs``).

EASY with scaling
-----------------
EASY backfilling (Lifka 1995; :mod:`optsched.heuristics.rigid.policies`) in
which a waiting job may start on *fewer* processors than it requests, as
Kalthoff's backfilling with scaling (thesis §5.7, Fig. 5.14; seed 001
§5.7): the modes considered for a job are those with at most its requested
processors. With ``est(p)`` the estimate of the mode on ``p``:

1. *Heads.* For the queue's head, each considered mode ``p`` has its
   EASY shadow time ``s_p`` (running jobs taken by increasing estimated
   end, an end in the past counting as now, until ``p`` processors are
   available) and an estimated end ``s_p + est(p)``. The mode with the
   earliest estimated end is chosen (ties: fewer processors). If it fits
   now (``p <= free``) the head starts on it and the next head is
   considered; otherwise the head is reserved on it at ``shadow = s_p``,
   with ``extra`` = processors available at the shadow time minus ``p``.
   With estimates that fall as processors grow (every speed-up model), the
   head starts on its requested size whenever that fits now.
2. *Backfill.* Every later job, in queue order, may start on a mode ``p``
   that fits now (``p <= free``) and either ends by the shadow time
   (``now + est(p) <= shadow``) or uses only extra processors (``p <=
   extra``); among these, the one with the earliest estimated end (ties:
   fewer processors) among the modes the guard admits. Starting on extra
   processors shrinks ``extra`` by ``p`` (unless the job ends at once). So
   the head's reservation is never delayed (exact estimates), whatever the
   mode chosen.

The head's rule meets the guard by itself (its request is one of the modes
compared, and a mode that fits now has ``s_p`` = now); the guard restricts
the backfilled jobs, which without it took any mode that fits, however
long it made them.

A job with one mode (a rigid instance) has nothing to choose, and the
policy is exactly EASY: the tests check that its start times are those of
``simulate(instance, "easy")``.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from optsched.heuristics.spec import SpecParts, spec_name, split_spec
from optsched.instance import Instance, Job, Mode
from optsched.schedule import Placement, Schedule

__all__ = [
    "MOLDABLE_POLICY_NAMES",
    "adaptive",
    "adaptive_target",
    "easy_scaling",
    "parse_moldable_policy",
    "run_moldable_policy",
]

MOLDABLE_POLICY_NAMES = ("adaptive", "easy-scaling")
"""Names of the online moldable policies of this module."""

GUARDS = ("finish", "none")
"""Values of the ``guard`` parameter: the finish-time guard (the default)
or none (module docstring)."""


def parse_moldable_policy(spec: str | SpecParts) -> dict[str, object]:
    """The options of ``adaptive`` or ``easy-scaling`` (``guard``), from a
    spec or its tokens (:func:`~optsched.heuristics.spec.split_spec`).

    Raises
    ------
    ValueError
        Another name, another parameter or another guard.
    """
    parts = split_spec(spec)
    if parts.name not in MOLDABLE_POLICY_NAMES:
        valid = ", ".join(MOLDABLE_POLICY_NAMES)
        raise ValueError(f"unknown moldable policy {parts.text!r}; valid: {valid}")
    parts.check(("guard",))
    guard = parts.options().get("guard", GUARDS[0]).lower()
    if guard not in GUARDS:
        raise parts.error(f"guard must be one of {', '.join(GUARDS)}, got {guard!r}")
    return {"guarded": guard == "finish"}


def run_moldable_policy(instance: Instance, spec: str) -> Schedule:
    """The schedule of ``instance`` under the policy ``spec``."""
    options = parse_moldable_policy(spec)
    run = adaptive if spec_name(spec) == "adaptive" else easy_scaling
    return run(instance, guarded=bool(options["guarded"]))


def adaptive_target(free: int, waiting_behind: int) -> int:
    """Adaptive partitioning's target size: ``max(1, floor(F / (1 + w)))``."""
    return max(1, free // (1 + waiting_behind))


def _modes(job: Job) -> tuple[Mode, ...]:
    """The job's modes (a rigid job's only mode is its size)."""
    return job.modes or (Mode(job.size, job.runtime, job.estimate),)


@dataclass
class _Sim:
    """Machine state of the event simulation (module docstring)."""

    processors: int
    now: int = 0
    free_ids: list[int] = field(default_factory=list)
    running: list[tuple[int, int, int]] = field(default_factory=list)
    """Sorted ``(estimated end, job number, processors)`` of running jobs."""
    ends: list[tuple[int, int]] = field(default_factory=list)
    """Heap of ``(actual end, job number)``."""
    placed: dict[int, tuple[int, Mode, tuple[int, ...]]] = field(default_factory=dict)
    reserved: dict[int, int] = field(default_factory=dict)
    """First reserved estimated end of each job that got a reservation."""

    def __post_init__(self) -> None:
        self.free_ids = list(range(self.processors))

    @property
    def free(self) -> int:
        """Processors free now."""
        return len(self.free_ids)

    def start(self, k: int, mode: Mode) -> None:
        """Start job number ``k`` now on ``mode`` (the lowest free ids)."""
        p = mode.processors
        ids = tuple(self.free_ids[:p])
        del self.free_ids[:p]
        self.placed[k] = (self.now, mode, ids)
        if mode.runtime == 0:
            self._give(ids)  # ends at once: its processors are free again
            return
        bisect.insort(self.running, (self.now + mode.requested, k, p))
        heapq.heappush(self.ends, (self.now + mode.runtime, k))

    def complete(self, k: int) -> None:
        """Job number ``k`` ends now."""
        start, mode, ids = self.placed[k]
        self.running.remove((start + mode.requested, k, mode.processors))
        self._give(ids)

    def _give(self, ids: Sequence[int]) -> None:
        for p in ids:
            bisect.insort(self.free_ids, p)

    def shadow(self, need: int) -> tuple[int, int]:
        """EASY's shadow time for ``need`` processors and the extra ones
        (:func:`optsched.heuristics.rigid.policies.easy_shadow`)."""
        available = self.free
        shadow = self.now
        k = 0
        while available < need:
            end, _, p = self.running[k]
            available += p
            k += 1
            shadow = max(end, self.now)
        while k < len(self.running) and self.running[k][0] <= shadow:
            available += self.running[k][2]
            k += 1
        return shadow, available - need


Options = Callable[[int], tuple[Mode, ...]]
"""The modes job number ``k`` may start on now."""

Decide = Callable[[_Sim, list[int], Options], None]


def admitted(sim: _Sim, modes: tuple[Mode, ...], request: Mode) -> tuple[Mode, ...]:
    """The ``modes`` the finish-time guard admits now (module docstring):
    those of at least the requested processors, and those that end by the
    estimates no later than the request started at its shadow time."""
    q = request.processors
    if modes[0].processors >= q:
        return modes  # nothing to shrink to: no shadow to compute
    waited = sim.shadow(q)[0] + request.requested
    return tuple(
        m for m in modes if m.processors >= q or sim.now + m.requested <= waited
    )


def _simulate(
    instance: Instance,
    decide: Decide,
    considered: Callable[[Job], tuple[Mode, ...]],
    producer: str,
    reserved_ends: dict[int, int] | None = None,
    *,
    guarded: bool = True,
) -> Schedule:
    """Run ``decide`` at every instant where jobs wait (module docstring);
    ``considered`` gives the modes a job may start on, of which the guard
    (if ``guarded``) admits some at each pass."""
    machine = instance.machine
    if machine.unavailable:
        raise ValueError(
            f"{producer} does not handle busy blocks (machine.unavailable)"
        )
    if machine.allocation != "any":
        raise ValueError(f"{producer} runs on 'any' machines only")
    jobs = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    modes = [considered(job) for job in jobs]
    requests = [Mode(job.size, job.runtime, job.estimate) for job in jobs]
    sim = _Sim(machine.processors)

    def options(k: int) -> tuple[Mode, ...]:
        return admitted(sim, modes[k], requests[k]) if guarded else modes[k]

    queue: list[int] = []  # job numbers, FCFS
    upcoming = 0
    while upcoming < len(jobs) or sim.ends:
        if upcoming < len(jobs) and (
            not sim.ends or jobs[upcoming].release < sim.ends[0][0]
        ):
            now = jobs[upcoming].release
        else:
            now = sim.ends[0][0]
        sim.now = now
        while sim.ends and sim.ends[0][0] == now:
            sim.complete(heapq.heappop(sim.ends)[1])
        while upcoming < len(jobs) and jobs[upcoming].release == now:
            queue.append(upcoming)
            upcoming += 1
        if queue:
            before = len(sim.placed)
            decide(sim, queue, options)
            if len(sim.placed) > before:
                queue[:] = [k for k in queue if k not in sim.placed]
    if queue:
        raise RuntimeError(f"{producer} stalled with {len(queue)} jobs waiting")
    placements = {
        jobs[k].id: Placement(start, start + mode.runtime, ids)
        for k, (start, mode, ids) in sim.placed.items()
    }
    if reserved_ends is not None:
        reserved_ends.update({jobs[k].id: end for k, end in sim.reserved.items()})
    return Schedule(placements, producer)


def _decide_adaptive(sim: _Sim, queue: list[int], options: Options) -> None:
    for position, k in enumerate(queue):
        target = adaptive_target(sim.free, len(queue) - position - 1)
        modes = options(k)
        within = [m for m in modes if m.processors <= target]
        mode = within[-1] if within else modes[0]  # sorted by processors
        if mode.processors > sim.free:
            return  # strict FCFS: the queue waits for its head
        sim.start(k, mode)


def _scalable(job: Job) -> tuple[Mode, ...]:
    """The modes EASY with scaling considers: at most the requested size."""
    return tuple(m for m in _modes(job) if m.processors <= job.size)


def _decide_easy_scaling(sim: _Sim, queue: list[int], options: Options) -> None:
    i = 0
    while i < len(queue):
        head = queue[i]
        choices = []
        for mode in options(head):
            shadow, extra = sim.shadow(mode.processors)
            end = shadow + mode.requested
            choices.append((end, mode.processors, shadow, extra, mode))
        end, p, shadow, extra, mode = min(choices, key=lambda o: (o[0], o[1]))
        if p > sim.free:
            sim.reserved.setdefault(head, end)
            break
        sim.start(head, mode)
        i += 1
    else:
        return
    now = sim.now
    free = sim.free
    for k in queue[i + 1 :]:
        if free == 0:
            return
        best: Mode | None = None
        for m in options(k):  # sorted by processors
            if m.processors > free:
                break
            keeps = now + m.requested <= shadow or m.processors <= extra
            if keeps and (best is None or m.requested < best.requested):
                best = m  # ties: the first, on fewer processors
        if best is None:
            continue
        sim.start(k, best)
        free = sim.free
        if now + best.requested > shadow and best.runtime > 0:
            extra -= best.processors


def adaptive(instance: Instance, *, guarded: bool = True) -> Schedule:
    """Adaptive partitioning's schedule of ``instance`` (module docstring).

    Parameters
    ----------
    instance
        Jobs (moldable or rigid) on an ``any`` machine without busy blocks.
    guarded
        Whether the finish-time guard keeps a job from shrinking below its
        request when waiting for the request ends it earlier (default); off,
        the target size alone decides (``adaptive:guard=none``).

    Raises
    ------
    ValueError
        Busy blocks, or a machine that is not ``any``.
    """
    producer = "adaptive" if guarded else "adaptive:guard=none"
    return _simulate(instance, _decide_adaptive, _modes, producer, guarded=guarded)


def easy_scaling(
    instance: Instance,
    *,
    reserved_ends: dict[int, int] | None = None,
    guarded: bool = True,
) -> Schedule:
    """EASY with scaling's schedule of ``instance`` (module docstring).

    Parameters
    ----------
    instance
        Jobs (moldable or rigid) on an ``any`` machine without busy blocks.
    guarded
        Whether the finish-time guard keeps a backfilled job from shrinking
        below its request when waiting for the request ends it earlier
        (default); off, any mode that keeps the head's reservation may
        start (``easy-scaling:guard=none``).
    reserved_ends
        If given, filled with ``{job id: estimated end}`` of the first
        reservation of every job that got one. With exact estimates no job
        ends later than that (the reservation of the mode chosen at each
        pass is protected until the next pass, whose choice can only end
        earlier); the tests check it.

    Raises
    ------
    ValueError
        Busy blocks, or a machine that is not ``any``.
    """
    producer = "easy-scaling" if guarded else "easy-scaling:guard=none"
    return _simulate(
        instance,
        _decide_easy_scaling,
        _scalable,
        producer,
        reserved_ends,
        guarded=guarded,
    )
