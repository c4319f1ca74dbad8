"""The read-only view a plug-in policy sees at each scheduling point.

The engine (:class:`~optsched.heuristics.engine.core.Simulator`) owns time,
events, processors and the site's admission rules; a policy written against
the public protocol (:mod:`optsched.heuristics.plugins`) only picks jobs. At
every scheduling point the engine hands it a :class:`PolicyView`: the time,
the machine size, the free processors, the waiting jobs in queue order, the
running jobs with their *expected* ends, and two questions the engine
answers (:meth:`PolicyView.fits`, :meth:`PolicyView.earliest_start`). A
moldable job's modes (:class:`JobMode`: processors and estimate) are listed
on its record, for a policy that chooses them (the protocol's optional
``choose_mode``).

What the view never shows: the actual run time of a job (a policy sees the
user's estimate, SWF field 9; only a policy that declares ``oracle = True``
sees the run time the job will really have, in the same ``estimate``
field), the future arrivals, and the engine's internals. Every record is a
frozen dataclass and every collection a tuple, so a policy cannot change
the engine's state by writing to what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from optsched.heuristics.engine.core import WAITING
from optsched.instance import Mode

if TYPE_CHECKING:
    from optsched.heuristics.engine.core import Simulator

__all__ = ["FinishedJob", "JobMode", "PolicyView", "RunningJob", "WaitingJob"]


@dataclass(frozen=True, slots=True)
class JobMode:
    """One way to run a waiting job: on ``processors`` processors, for
    ``estimate`` seconds by the user's estimate of that mode.

    A rigid job has one mode, its request; a moldable (or malleable) job
    has one per processor count it can run on, sorted by processors. Only
    an oracle policy sees, as ``estimate``, how long the job will really
    run in the mode.
    """

    processors: int
    estimate: int


@dataclass(frozen=True, slots=True)
class WaitingJob:
    """A job waiting in the queue.

    Attributes
    ----------
    id
        The job's id in the instance (SWF field 1): what ``select`` returns.
    size
        Processors requested.
    estimate
        Requested run time in seconds (the actual run time for an oracle
        policy).
    submit
        Submit time (seconds). A chained job arrives later, when its
        predecessor has ended and its think time has passed.
    user
        User id (SWF field 12), ``None`` when unknown.
    queue
        Queue number (SWF field 15), ``None`` when unknown.
    modes
        The modes it may run on (:class:`JobMode`, sorted by processors):
        one, ``(size, estimate)``, for a rigid job. ``size`` and
        ``estimate`` are those of the mode it starts on unless the policy's
        ``choose_mode`` picks another: its request (after an outage killed
        it, the mode it ran on).
    """

    id: int
    size: int
    estimate: int
    submit: int
    user: int | None
    queue: int | None
    modes: tuple[JobMode, ...] = ()


@dataclass(frozen=True, slots=True)
class RunningJob:
    """A running job.

    Attributes
    ----------
    id, size
        As for :class:`WaitingJob`.
    start
        When it started.
    expected_end
        ``start + estimate``: when the policy may expect its processors back
        (a job can run past it, unless the run kills jobs at their
        estimate).
    """

    id: int
    size: int
    start: int
    expected_end: int


@dataclass(frozen=True, slots=True)
class FinishedJob:
    """A run that ended since the previous scheduling point (``on_end``).

    Attributes
    ----------
    id, size, start
        As for :class:`RunningJob`.
    end
        When the run ended.
    completed
        ``False`` when an outage killed the run: the job waits again and
        starts from scratch.
    """

    id: int
    size: int
    start: int
    end: int
    completed: bool


class PolicyView:
    """What a policy may read at a scheduling point (read-only).

    A view is valid during the call it is passed to; the engine makes a new
    one at the next scheduling point.
    """

    __slots__ = ("_modes", "_number", "_oracle", "_sim")

    def __init__(self, sim: Simulator, number: dict[int, int], oracle: bool) -> None:
        self._sim = sim
        self._number = number  # job id -> the engine's job number
        self._oracle = oracle
        # A job's modes do not change during a run: their records are made
        # once (view.waiting is read at every scheduling point).
        self._modes: dict[int, tuple[JobMode, ...]] = {}

    @property
    def now(self) -> int:
        """The current time (seconds)."""
        return self._sim.now

    @property
    def processors(self) -> int:
        """The machine's size ``m``."""
        return self._sim.processors

    @property
    def free(self) -> int:
        """Processors free now (running jobs and busy blocks subtracted)."""
        return self._sim.free

    @property
    def oracle(self) -> bool:
        """Whether ``estimate`` is the actual run time (an oracle policy)."""
        return self._oracle

    @property
    def waiting(self) -> tuple[WaitingJob, ...]:
        """The waiting jobs in queue order (submit order; a job the site's
        user limit held back moves to the end). A job started at this
        scheduling point leaves the tuple at the next call."""
        sim = self._sim
        return tuple(self._record(j) for j in sim.queue if sim.state[j] == WAITING)

    def job(self, job_id: int) -> WaitingJob:
        """The record of waiting job ``job_id`` (as in :attr:`waiting`).

        Raises
        ------
        KeyError
            ``job_id`` is not a waiting job.
        """
        return self._record(self._waiting_number(job_id))

    def _waiting_number(self, job_id: int) -> int:
        j = self._number.get(job_id)
        if j is None or self._sim.state[j] != WAITING:
            raise KeyError(f"job {job_id} is not waiting")
        return j

    def _record(self, j: int) -> WaitingJob:
        modes = self._modes.get(j)
        if modes is None:
            modes = self._modes[j] = _job_modes(self._sim, j)
        return waiting_job(self._sim, j, modes)

    @property
    def running(self) -> tuple[RunningJob, ...]:
        """The running jobs by increasing expected end (ties: start order)."""
        sim = self._sim
        return tuple(
            RunningJob(
                sim.job_id[j],
                sim.size[j],
                sim.start_time[j],
                sim.start_time[j] + sim.estimate[j],
            )
            for _, j in sim.running_ends
        )

    def fits(self, job_id: int, mode: JobMode | None = None) -> bool:
        """Whether the engine would start waiting job ``job_id`` now (in
        ``mode``, one of its :attr:`WaitingJob.modes`, when given).

        True when its processors are free now and every rule of the machine
        admits it: busy blocks by its estimate, a contiguous range (after a
        compaction with migration), the site calendar, sequential queues and
        the user limit.

        Raises
        ------
        KeyError
            ``job_id`` is not a waiting job.
        ValueError
            ``mode`` is not one of the job's modes.
        """
        sim = self._sim
        j = self._waiting_number(job_id)
        if mode is None:
            return _startable(sim, j)
        wanted = engine_mode(sim, j, mode)
        if wanted is None:
            raise ValueError(f"{mode!r} is not one of job {job_id}'s modes")
        # Asked of the engine in that mode, then the job's own mode back
        # (the policy runner asks can_start again right before any start).
        current = Mode(int(sim.size[j]), int(sim.runtime[j]), int(sim.requested[j]))
        sim.choose_mode(j, wanted)
        try:
            return _startable(sim, j)
        finally:
            sim.choose_mode(j, current)

    def earliest_start(self, size: int, duration: int) -> int | None:
        """Earliest time ``t >= now`` at which ``size`` processors are free
        over ``[t, t + duration)`` if every running job ends at its expected
        end (an expected end in the past counts as now) and busy blocks
        hold their processors: the *shadow time* of backfilling.

        It counts processors: the site calendar, a contiguous range and the
        user limit are the engine's business at the start itself
        (:meth:`fits`). ``None`` when ``size`` exceeds what the machine ever
        frees.
        """
        if size < 0 or duration < 0:
            raise ValueError("size and duration must be >= 0")
        if size > self._sim.processors:
            return None
        return self._sim.base_profile().earliest(size, duration)


def _startable(sim: Simulator, j: int) -> bool:
    return sim.size[j] <= sim.free and (sim.simple or sim.can_start(j))


def waiting_job(
    sim: Simulator, j: int, modes: tuple[JobMode, ...] | None = None
) -> WaitingJob:
    """The public record of the engine's job ``j`` (``modes``: its modes'
    records, when the caller has them)."""
    job = sim.jobs[j]
    return WaitingJob(
        sim.job_id[j],
        sim.size[j],
        sim.estimate[j],
        job.release,
        job.user,
        job.queue,
        _job_modes(sim, j) if modes is None else modes,
    )


def _job_modes(sim: Simulator, j: int) -> tuple[JobMode, ...]:
    """The public records of job ``j``'s modes (estimates only)."""
    modes = sim.jobs[j].modes
    if not modes:
        return (JobMode(sim.size[j], sim.estimate[j]),)
    return tuple(JobMode(m.processors, sim.mode_estimate(m)) for m in modes)


def engine_mode(sim: Simulator, j: int, mode: object) -> Mode | None:
    """The engine's mode of job ``j`` that ``mode`` (a :class:`JobMode`)
    names, or ``None`` when it names none of the job's modes."""
    if not isinstance(mode, JobMode):
        return None
    modes = sim.jobs[j].modes
    if not modes:
        current = (int(sim.size[j]), int(sim.estimate[j]))
        if (mode.processors, mode.estimate) != current:
            return None
        return Mode(current[0], int(sim.runtime[j]), int(sim.requested[j]))
    for candidate in modes:
        if mode == JobMode(candidate.processors, sim.mode_estimate(candidate)):
            return candidate
    return None
