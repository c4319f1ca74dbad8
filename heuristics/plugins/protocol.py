"""The public protocol of online policies.

A user's policy is any object with a ``select(view)`` method; nothing to
subclass. The engine (:mod:`optsched.heuristics.engine.core`) calls it at
every *scheduling point*: every instant at which a job arrives or ends, a
busy block or an outage starts or ends, after all of that instant's events
(completions first, then block changes, then arrivals).

Guarantees
----------
- ``view`` is read-only (:class:`~optsched.heuristics.engine.view.PolicyView`):
  the time, the machine size, the free processors, the waiting jobs in
  queue order, the running jobs with their *expected* ends, and two
  questions (``view.fits(job_id)``, ``view.earliest_start(size,
  duration)``). It never shows a job's actual run time, unless the class
  declares ``oracle = True``; then ``estimate`` is the actual run time.
- The engine starts the returned jobs in the order given, each on
  processors the engine chooses (the machine's allocation rule, busy
  blocks, the site's calendar, queues and user limit, chains: the same
  rules as for the built-in policies). A returned id that is not a waiting
  job, a job that does not fit now, or a job returned twice stops the run
  with one :class:`~optsched.heuristics.plugins.policy.PolicyError` naming
  the policy, the time and the job; so does an exception raised by the
  policy (with the policy's own frames of the traceback).
- Every schedule goes through the independent checker
  (:func:`optsched.check.check_schedule`) before it is rated.
- Each run (each window) starts from a fresh object: a new instance of the
  class for a spec, a deep copy of an object given directly.

- A policy that defines ``choose_mode(view, job)`` picks, for each job it
  selects, one of ``job.modes`` (a moldable or malleable job's processor
  counts with their estimates; a rigid job's only mode is its request).
  The engine starts the job in that mode
  (:meth:`~optsched.heuristics.engine.core.Simulator.choose_mode`, the hook
  of the built-in ``adaptive`` and ``easy-scaling``); ``None`` keeps the
  mode the view shows (the request). A value that is not one of the job's
  modes, or a mode that does not fit now, stops the run with one
  :class:`~optsched.heuristics.plugins.policy.PolicyError` naming the
  policy, the time and the job; ``view.fits(job_id, mode)`` asks first.
  Without ``choose_mode`` every job runs on its request.

What needs more than job selection is refused before the run, in one line:
machines with node speeds or SMP nodes (the node simulator places jobs on
nodes).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from optsched.heuristics.engine.view import (
    FinishedJob,
    JobMode,
    PolicyView,
    WaitingJob,
)


@runtime_checkable
class OnlinePolicy(Protocol):
    """What a policy class provides: one method; the rest is optional.

    Optional members
    ----------------
    name : str
        A label for messages (default: the spec).
    oracle : bool
        ``True`` to see actual run times (an *oracle* policy, for studies
        of the value of exact estimates). Default ``False``.
    on_submit(view, job: WaitingJob) -> None
        Called for each job that arrived since the previous scheduling
        point, before ``select``.
    on_end(view, job: FinishedJob) -> None
        Called for each run that ended since the previous scheduling point,
        before ``on_submit``. Scheduling points exist while jobs wait: the
        runs that end after the last one are not reported.
    choose_mode(view, job: WaitingJob) -> JobMode | None
        Called for each job ``select`` returns, right before it starts: the
        mode to start it on, one of ``job.modes`` (``None``: the mode the
        view shows, ``job.size`` and ``job.estimate``).
    ``__init__`` keyword parameters
        Set from the spec: ``file.py:Class:limit=8,strict=true``.
    """

    def select(self, view: PolicyView) -> Iterable[int]:
        """The ids of waiting jobs to start now, in the order to start them
        (an empty iterable to start none)."""
        ...


__all__ = ["FinishedJob", "JobMode", "OnlinePolicy", "PolicyView", "WaitingJob"]
