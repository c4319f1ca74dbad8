"""Policies written by users: the public protocol and its plug-ins.

A policy is a plain class with one method; the engine calls it at every
scheduling point and starts what it returns::

    class LargestFirst:
        name = "largest-first"

        def select(self, view):
            free = view.free
            for job in sorted(view.waiting, key=lambda j: -j.size):
                if job.size <= free and view.fits(job.id):
                    free -= job.size
                    yield job.id

The protocol (:class:`OnlinePolicy`) and the view
(:class:`~optsched.heuristics.engine.view.PolicyView`) are documented in
the API reference; :mod:`~optsched.heuristics.plugins.loader` says how a
spec names a plug-in, :mod:`~optsched.heuristics.plugins.policy` how the
engine runs it and checks what it returns.
"""

from optsched.heuristics.engine.view import (
    FinishedJob,
    JobMode,
    PolicyView,
    RunningJob,
    WaitingJob,
)
from optsched.heuristics.plugins.loader import ENTRY_POINT_GROUP
from optsched.heuristics.plugins.policy import PolicyError, UserPolicy
from optsched.heuristics.plugins.protocol import OnlinePolicy

__all__ = [
    "ENTRY_POINT_GROUP",
    "FinishedJob",
    "JobMode",
    "OnlinePolicy",
    "PolicyError",
    "PolicyView",
    "RunningJob",
    "UserPolicy",
    "WaitingJob",
]
