"""The read-only view a plug-in policy sees at each scheduling point.

The engine (:class:`~optsched.heuristics.engine.core.Simulator`) owns time,
events, processors and the site's admission rules; a policy written against
the public protocol (:mod:`optsched.heuristics.plugins`) only picks jobs. At
every scheduling point the engine hands it a :class:`PolicyView`: the time,
the machine size, the free processors, the waiting jobs in queue order, the
running jobs with their *expected* ends, and two questions the engine
answers (:meth:`PolicyView.fits`, :meth:`PolicyView.earliest_start`).

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

if TYPE_CHECKING:
    from optsched.heuristics.engine.core import Simulator

__all__ = ["FinishedJob", "PolicyView", "RunningJob", "WaitingJob"]


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
    """

    id: int
    size: int
    estimate: int
    submit: int
    user: int | None
    queue: int | None


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

    __slots__ = ("_number", "_oracle", "_sim")

    def __init__(self, sim: Simulator, number: dict[int, int], oracle: bool) -> None:
        self._sim = sim
        self._number = number  # job id -> the engine's job number
        self._oracle = oracle

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
        return tuple(waiting_job(sim, j) for j in sim.queue if sim.state[j] == WAITING)

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

    def fits(self, job_id: int) -> bool:
        """Whether the engine would start waiting job ``job_id`` now.

        True when its processors are free now and every rule of the machine
        admits it: busy blocks by its estimate, a contiguous range (after a
        compaction with migration), the site calendar, sequential queues and
        the user limit.

        Raises
        ------
        KeyError
            ``job_id`` is not a waiting job.
        """
        sim = self._sim
        j = self._number.get(job_id)
        if j is None or sim.state[j] != WAITING:
            raise KeyError(f"job {job_id} is not waiting")
        return sim.size[j] <= sim.free and (sim.simple or sim.can_start(j))

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


def waiting_job(sim: Simulator, j: int) -> WaitingJob:
    """The public record of the engine's job ``j``."""
    job = sim.jobs[j]
    return WaitingJob(
        sim.job_id[j],
        sim.size[j],
        sim.estimate[j],
        job.release,
        job.user,
        job.queue,
    )
