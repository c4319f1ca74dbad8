"""NQS's per-user limit in the simulator (:attr:`Calendar.user_limit
<optsched.calendar.Calendar.user_limit>`).

Mallmann (1997, §3.1.4, ``limit_exceeded``): every start of a job of user
``u`` adds ``size x requested time`` (the queue's maximum run time there;
the requested time here) to ``u``'s account; the accounts of the other
users are emptied once a job of ``u`` has started. A job whose start would
bring its user's account above the limit is refused while a job of another
user waits, and it drops to the lowest priority until its user's account is
emptied.

Two precisions the study leaves open, chosen so that no run can stall and
the checker can judge every start without knowing the order of the starts
within one instant:

- accounts are emptied at the end of an instant (two users starting at one
  instant empty every account, their own included: each ran after the
  other's);
- a moldable job's start charges the mode it starts in (its processors
  times that mode's requested time); while it waits it counts with its
  request (the size it asks for), in the test below;
- the waiting job of another user must be one that may start itself: its
  own start would keep its user within the limit. When every waiting job of
  the other users is over the limit too, nobody is held back (else two
  users over the limit would wait for each other forever).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence


class UserAccounts:
    """The accounts of one simulation, and the waiting jobs' costs by user."""

    def __init__(
        self,
        limit: int,
        users: Sequence[int | None],
        sizes: Sequence[int],
        requested: Sequence[int],
    ) -> None:
        self.limit = limit
        self.users = users
        self.sizes = sizes
        self.requested = requested
        self.cost = [q * r for q, r in zip(sizes, requested, strict=True)]
        """Per job, the charge of its request (what a waiting job counts)."""
        self.charge = list(self.cost)
        """Per job, the charge of its start (its mode's, once chosen)."""
        self.account: dict[int, int] = {}
        self.instant_starts: dict[int, int] = {}  # this instant's starts
        self.instant = -1
        self.waiting: dict[int, list[int]] = {}  # user -> sorted costs

    def arrive(self, j: int) -> None:
        """``j`` waits (again)."""
        user = self.users[j]
        if user is not None:
            insort(self.waiting.setdefault(user, []), self.cost[j])

    def started(self, j: int) -> None:
        """``j`` starts at the current instant."""
        user = self.users[j]
        if user is None:
            return
        costs = self.waiting[user]
        del costs[bisect_left(costs, self.cost[j])]
        self.instant_starts[user] = self.instant_starts.get(user, 0) + self.charge[j]

    def recharge(self, j: int) -> None:
        """Waiting ``j`` will start in another mode: its start charges that
        mode's size times requested time (the simulator's lists)."""
        self.charge[j] = self.sizes[j] * self.requested[j]

    def close_instant(self, now: int) -> set[int]:
        """Enter instant ``now``: settle the previous instant's starts, and
        return the users whose accounts were emptied."""
        if now == self.instant:
            return set()
        self.instant = now
        starters = self.instant_starts
        if not starters:
            return set()
        emptied = set(self.account)
        if len(starters) == 1:
            ((user, cost),) = starters.items()
            kept = self.account.get(user, 0) + cost
            emptied.discard(user)
            self.account = {user: kept}
        else:
            emptied |= set(starters)
            self.account = {}
        self.instant_starts = {}
        return emptied

    def used(self, user: int) -> int:
        """``user``'s account including this instant's starts."""
        return self.account.get(user, 0) + self.instant_starts.get(user, 0)

    def allows(self, j: int) -> bool:
        """Whether ``j`` may start now as far as the limit goes."""
        user = self.users[j]
        if user is None or self.used(user) + self.charge[j] <= self.limit:
            return True
        return not any(
            costs and self.used(other) + costs[0] <= self.limit
            for other, costs in self.waiting.items()
            if other != user
        )
