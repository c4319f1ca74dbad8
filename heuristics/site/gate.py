"""The site's admission rules at a job's start, for every simulator.

One implementation of the rules that a site calendar
(:class:`~optsched.calendar.Calendar`) puts on starts, shared by the event
engine (:mod:`optsched.heuristics.engine.core`) and the node simulator of
the combinators (:mod:`optsched.heuristics.topology.simulator`), so that
both follow them alike and the checker (:mod:`optsched.check.site`, rule
11; :mod:`optsched.check.limits`, rule 14) judges both the same way:

- a job of a *sequential* queue starts only while no other job of its
  queue runs;
- unless its queue is an *anytime* one, the job's size is at most the
  largest job the calendar lets start now, and the processors held now
  (jobs and busy blocks, but not the jobs of anytime queues, which run
  beside the batch partition) plus its size at most the batch capacity now
  (Mallmann 1997, §3.3.3: only starts are checked, running jobs are never
  stopped);
- NQS's per-user limit (:class:`~optsched.heuristics.site.user_limit.
  UserAccounts`): a job the limit refuses is recorded in :attr:`SiteGate.
  refused`; the simulator moves it to the end of its queue when its pass
  ends (:meth:`SiteGate.demote`) and gives it its place back once its
  user's account is emptied (:meth:`SiteGate.restore`).

Capacities count processors on every machine, with node speeds or SMP nodes
too, as the checker does. The simulator owns its clock and its processors:
it passes the processors held now to :meth:`SiteGate.allows`, and reports
starts, ends and arrivals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from optsched.calendar import Calendar
from optsched.heuristics.site.user_limit import UserAccounts


class SiteGate:
    """The calendar's and the user limit's state during one simulation.

    Jobs are numbered as in the simulator (an index into its lists).

    Parameters
    ----------
    calendar
        The machine's calendar.
    processors
        The machine's processor count ``m``.
    sizes, queues, users, requested
        Per job: processors, queue number, user, requested time.

    Raises
    ------
    ValueError
        A job of a batch queue whose size no time of the calendar admits.
    """

    def __init__(
        self,
        calendar: Calendar,
        processors: int,
        sizes: Sequence[int],
        queues: Sequence[int | None],
        users: Sequence[int | None],
        requested: Sequence[int],
    ) -> None:
        self.calendar = calendar
        self.processors = processors
        self.sizes = sizes
        self.queues = queues
        self.users = users
        bound = {
            q
            for q, queue in zip(sizes, queues, strict=True)
            if queue not in calendar.anytime_queues
        }
        for size in sorted(bound):
            if calendar.earliest_start(size, 0, processors) is None:
                raise ValueError(
                    f"a job of {size} processors can never start under the "
                    "site calendar (no time admits that size)"
                )
        self.sequential: dict[int | None, int] = {}  # running jobs per queue
        self.anytime_held = 0  # processors of running jobs of anytime queues
        limit = calendar.user_limit
        self.accounts = (
            UserAccounts(limit, users, sizes, requested) if limit is not None else None
        )
        self.refused: set[int] = set()
        """Jobs the user limit refused since the last :meth:`demote`."""
        self.demoted: dict[int, Any] = {}
        """Demoted jobs and what the simulator saved of their places."""

    # -- the test ---------------------------------------------------------
    def allows(self, j: int, held: int, now: int) -> bool:
        """Whether the site lets ``j`` start at ``now`` with ``held``
        processors in use (jobs and busy blocks): its sequential queue, the
        calendar (unless its queue may start any time), then the user limit
        (a refusal by the limit is recorded in :attr:`refused`)."""
        calendar = self.calendar
        queue = self.queues[j]
        if queue in calendar.sequential_queues and self.sequential.get(queue):
            return False
        if not (
            queue in calendar.anytime_queues or self.admitted(self.sizes[j], held, now)
        ):
            return False
        if self.accounts is not None and not self.accounts.allows(j):
            self.refused.add(j)
            return False
        return True

    def admitted(self, size: int, held: int, now: int) -> bool:
        """The calendar's test at a start at ``now``: ``size`` at most the
        largest job allowed then, and the batch processors held (``held``
        less those of anytime queues) plus ``size`` at most the capacity."""
        calendar, m = self.calendar, self.processors
        if size > calendar.max_size_at(now, m):
            return False
        return held - self.anytime_held + size <= calendar.capacity_at(now, m)

    def next_change(self, now: int) -> int:
        """When the calendar may next admit what it holds back now: the
        simulator wakes then while jobs wait."""
        return self.calendar.next_change(now)

    # -- what the simulator reports ----------------------------------------
    def arrive(self, j: int) -> None:
        """``j`` waits (again)."""
        if self.accounts is not None:
            self.accounts.arrive(j)

    def started(self, j: int) -> None:
        """``j`` starts now (call :meth:`ended` too if it ends at once)."""
        if self.accounts is not None:
            self.accounts.started(j)
        self._hold(j, 1)

    def ended(self, j: int) -> None:
        """``j`` ended or was stopped: its queue is free again."""
        self._hold(j, -1)

    def resized(self, j: int) -> None:
        """Waiting ``j`` was given another mode (a moldable job's, chosen at
        its start): :attr:`sizes` is the simulator's list, so the calendar's
        tests see it; the user limit charges its start by that mode."""
        if self.accounts is not None:
            self.accounts.recharge(j)

    def _hold(self, j: int, sign: int) -> None:
        calendar, queue = self.calendar, self.queues[j]
        if queue in calendar.sequential_queues:
            self.sequential[queue] = self.sequential.get(queue, 0) + sign
        if queue in calendar.anytime_queues:
            self.anytime_held += sign * self.sizes[j]

    # -- the user limit's demotions -----------------------------------------
    @property
    def reorders(self) -> bool:
        """Whether jobs may change places in the queue (a user limit)."""
        return self.accounts is not None

    def close_instant(self, now: int) -> list[tuple[int, Any]]:
        """Enter instant ``now``: settle the accounts; the demoted jobs whose
        users' accounts were emptied, with their saved places (forgotten
        here: the simulator puts them back)."""
        if self.accounts is None:
            return []
        users = self.accounts.close_instant(now)
        if not users or not self.demoted:
            return []
        back = [(j, s) for j, s in self.demoted.items() if self.users[j] in users]
        for j, _ in back:
            del self.demoted[j]
        return back

    def demote(
        self,
        waiting: Callable[[int], bool],
        rank: Callable[[int], Any],
        place: Callable[[int], Any],
    ) -> list[int]:
        """The refused jobs that still wait and are not demoted yet, in
        ``rank`` order: NQS moves them to the lowest priority; what
        ``place(j)`` returns is kept for :meth:`close_instant`. Clears
        :attr:`refused`."""
        moved = [
            j
            for j in sorted(self.refused, key=rank)
            if waiting(j) and j not in self.demoted
        ]
        for j in moved:
            self.demoted[j] = place(j)
        self.refused.clear()
        return moved
