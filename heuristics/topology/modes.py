"""Adaptive partitioning and EASY with scaling on the node simulator.

The two mode-choosing policies of :mod:`optsched.heuristics.moldable.policies`
(their rules and references are there) run on machines with node speeds or
SMP nodes through the node simulator
(:class:`~optsched.heuristics.topology.simulator.NodeSimulator`), which
starts each job in the mode the policy gives it by the same hook as the
engine's (:meth:`~optsched.heuristics.topology.simulator.NodeSimulator.choose_mode`).
What changes is what a mode's estimate means, its run time depending on the
processors it gets:

- a mode ``(q, t)`` that fits now is estimated on the set ``S`` the
  placement would give it now: ``est = w_hat * f(S)``, the node simulator's
  ``est`` (``w_hat`` its estimated work,
  :func:`~optsched.topology.machines.mode_work`);
- a mode that does not fit now starts at its shadow time ``s_q``, the node
  simulator's (running jobs by estimated end, the span rule on per-node
  counts), and is estimated at its shortest run time on any ``q``
  processors (:meth:`~optsched.instance.Machine.shortest_run_time`), not
  knowing which processors will be free then.

Adaptive partitioning: the FCFS head with ``w`` jobs waiting behind it and
``F`` processors free gets its largest mode within ``max(1, floor(F / (1 +
w)))`` that the finish-time guard admits (else its smallest admitted one)
and starts if that mode fits now (span rule and site rules), else the
queue waits. EASY with scaling: the head takes the considered mode (at most
its request) with the earliest estimated end; if it fits now it starts,
else it is reserved at that mode's shadow time and each later job, in FCFS
order, may start on the mode with the shortest estimate among those that
fit now and either end by the shadow time or leave the head its
processors at the shadow time (the optimistic combinator's rule,
:meth:`~optsched.heuristics.topology.simulator.NodeSimulator.admits`).

The guard (``guard=finish``): a mode of fewer processors than the request
``q`` is admitted only if ``now + est <= s_q + est(q)``, both estimates
taken as above (a mode that does not fit now at its shortest run time).
On a flat machine ``est`` is the mode's estimate and both policies decide
as on the engine (a test compares them).

Cost: each call lists the waiting jobs in FCFS order
(:meth:`~optsched.heuristics.topology.simulator.NodeSimulator.queue`,
``O(n log n)``); a pass of ``k`` starts costs ``k`` such calls.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from optsched.heuristics.moldable.policies import (
    AdaptivePartitioning,
    ModeChoosing,
    adaptive_target,
)
from optsched.heuristics.topology.simulator import NodeSimulator
from optsched.instance import Instance, Job, Mode
from optsched.schedule import Schedule
from optsched.topology.machines import mode_work

__all__ = ["run_mode_choosing"]

FCFS = "fifo"
"""The base order of both policies' queue."""


class _Estimates:
    """The estimates of modes at one instant (module notes)."""

    def __init__(self, sim: NodeSimulator) -> None:
        self.sim = sim

    def work(self, job: Job, mode: Mode) -> int:
        # A rigid job's estimate is already its work (speeds included).
        return mode_work(self.sim.machine, mode)[1] if job.modes else mode.requested

    def fits(self, mode: Mode) -> bool:
        return self.sim.pool.fits(mode.processors)

    def now(self, job: Job, mode: Mode) -> Fraction:
        """``est`` of a mode that fits now, on the set it would get now."""
        return self.work(job, mode) * self.sim.pool.factor(mode.processors)

    def duration(self, job: Job, mode: Mode) -> Fraction:
        """``est`` of a mode: on the set it would get now if it fits, else
        its shortest run time on any processors (module notes)."""
        if self.fits(mode):
            return self.now(job, mode)
        work = self.work(job, mode)
        return Fraction(self.sim.machine.shortest_run_time(work, mode.processors))

    def end(self, j: int, mode: Mode) -> tuple[Fraction, int]:
        """The estimated end of ``mode`` for waiting job ``j`` and its
        start (now, or its shadow time)."""
        sim, job = self.sim, self.sim.jobs[j]
        start = sim.now if self.fits(mode) else sim.shadow(j, mode.processors).time
        return start + self.duration(job, mode), start

    def admitted(self, j: int, modes: tuple[Mode, ...]) -> tuple[Mode, ...]:
        """The finish-time guard (module notes)."""
        job = self.sim.jobs[j]
        q = job.size
        if modes[0].processors >= q:
            return modes
        request = job.mode(q)
        assert request is not None
        waited = self.end(j, request)[0]
        now = self.sim.now
        return tuple(
            m
            for m in modes
            if m.processors >= q or now + self.duration(job, m) <= waited
        )


def _startable(
    sim: NodeSimulator, job: Job, modes: tuple[Mode, ...]
) -> tuple[Mode, ...]:
    """The modes whose size the site calendar ever admits (all of them
    without a calendar or in an anytime queue), as on the engine."""
    calendar = sim.machine.calendar
    if calendar is None or job.queue in calendar.anytime_queues:
        return modes
    m = sim.machine.processors
    return tuple(
        x for x in modes if calendar.earliest_start(x.processors, 0, m) is not None
    )


def _start_in(sim: NodeSimulator, j: int, mode: Mode) -> int | None:
    """``j`` in ``mode`` if it may start now (span and site rules)."""
    sim.choose_mode(j, mode)
    return j if sim.fits(j) else None


def _selection(policy: ModeChoosing) -> Callable[[NodeSimulator], int | None]:
    """The selection function of ``policy`` on the node simulator."""
    scaling = not isinstance(policy, AdaptivePartitioning)

    def options(sim: NodeSimulator, estimates: _Estimates, j: int) -> tuple[Mode, ...]:
        job = sim.jobs[j]
        modes = job.all_modes
        if scaling:
            modes = tuple(m for m in modes if m.processors <= job.size)
        modes = _startable(sim, job, modes)
        return estimates.admitted(j, modes) if policy.guarded and modes else modes

    def adaptive(sim: NodeSimulator) -> int | None:
        queue = sim.queue(FCFS)
        head = queue[0]
        modes = options(sim, _Estimates(sim), head)
        if not modes:
            return None
        target = adaptive_target(sim.pool.free, len(queue) - 1)
        within = [m for m in modes if m.processors <= target]
        mode = within[-1] if within else modes[0]
        return _start_in(sim, head, mode) if sim.pool.fits(mode.processors) else None

    def easy_scaling(sim: NodeSimulator) -> int | None:
        estimates = _Estimates(sim)
        queue = sim.queue(FCFS)
        head = queue[0]
        modes = options(sim, estimates, head)
        if not modes:
            return None
        ends = [(estimates.end(head, m), m.processors, m) for m in modes]
        (_, start), _, mode = min(ends, key=lambda e: (e[0][0], e[1]))
        if start == sim.now and _start_in(sim, head, mode) is not None:
            return head
        sim.choose_mode(head, mode)  # reserved in that mode
        shadow = sim.shadow(head)
        gap = shadow.time - sim.now
        for k in queue[1:]:
            job = sim.jobs[k]
            fitting = [
                (estimates.now(job, m), m.processors, m)
                for m in options(sim, estimates, k)
                if estimates.fits(m)
            ]
            keeping = [
                f for f in fitting if f[0] <= gap or sim.admits(shadow, f[2].processors)
            ]
            best = min(keeping, key=lambda f: (f[0], f[1]), default=None)
            if best is not None and _start_in(sim, k, best[2]) is not None:
                return k
        return None

    return easy_scaling if scaling else adaptive


def run_mode_choosing(instance: Instance, policy: ModeChoosing) -> Schedule:
    """The schedule of ``instance`` under ``adaptive`` or ``easy-scaling``
    on the node simulator (module notes), named by the policy's spec."""
    sim = NodeSimulator(instance, "auto")
    # Job numbers follow (release, id): FCFS ranks (a user limit moves the
    # jobs it refuses to the end of this order, as on the engine).
    sim.add_order(FCFS, range(len(sim.jobs)))
    sim.run(_selection(policy))
    return sim.schedule(policy.spec)
