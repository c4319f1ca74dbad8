"""A grid cluster: its local batch system and its local reservation service.

Each cluster runs its own simulator
(:class:`~optsched.heuristics.engine.core.Simulator`,
EASY by default, any engine policy allowed) over its local jobs, driven
step by step by the grid simulation (:mod:`optsched.coreserve.simulate`). Between
steps the grid service sees the cluster only through the local reservation
service (LRS, Meltzer 2005, §4.1, Fig. 5): status queries (committed CPUs
over an interval, backlog time, next scheduling event) and reserve /
rollback messages. A granted reservation becomes a busy block of the
simulator, which then never lets a local job collide with it.

Conventions (stated because the study leaves them open):

* The reservation table holds running jobs up to their *estimated* ends and
  granted reservations (Listing 3 and Maui's table); waiting jobs are not in
  it (the backlog rule of A3 accounts for them).
* Local jobs are stopped at their wallclock limit by default (Maui does,
  §4.4.2), so no running job outlives what the table shows; without it, a
  job overrunning into a reservation is stopped when the reservation needs
  its processors (:meth:`~optsched.heuristics.engine.core.Simulator.add_block`).
* Tentative reservations of a request being processed stay in the LRS until
  the request commits (all parts reserved) or rolls them back: nothing is
  simulated while a request is processed, so this is the same as reserving
  in the scheduler and undoing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from optsched.coreserve.request import ClusterState
from optsched.coreserve.tariff import Tariff
from optsched.heuristics.engine.core import WAITING, Simulator
from optsched.heuristics.rigid.orders import order_ranks
from optsched.heuristics.rigid.policies import EnginePolicy
from optsched.heuristics.spec import parse_policy
from optsched.instance import BusyBlock, Instance
from optsched.packing import Profile


@dataclass
class Messages:
    """Messages between the grid service and the LRSs (§3.6)."""

    status: int = 0
    reserve: int = 0
    rollback: int = 0

    @property
    def reservation(self) -> int:
        """Reserve plus rollback messages: the ``n`` of ``Eff = 1 - n/N``."""
        return self.reserve + self.rollback


@dataclass
class Reservation:
    """A granted (or tentative) partial reservation."""

    request: int
    part: int
    start: int
    end: int
    cpus: int


_FOREVER = 2**53
"""End of a hold whose end is unknown (a job running past its estimate)."""


@dataclass
class LocalCluster:
    """One cluster of the grid: local jobs, batch policy, prices, LRS.

    Parameters
    ----------
    name
        Unique in the grid.
    instance
        The local workload (its machine gives the CPUs; no busy blocks).
    tariff
        Price per CPU-hour by weekday and hour.
    policy
        An engine policy spec (``easy``, ``conservative``, ...).
    kill_at_estimate
        Stop local jobs at their wallclock limit (Maui's default).
    wc_accuracy
        Mean runtime / wallclock of the local jobs, for the backlog time;
        ``None`` (the default): from history, the jobs that ended by the
        time of the query (§4.4.4: Maui's diagnostics), 1 before any ended.
    """

    name: str
    instance: Instance
    tariff: Tariff = field(default_factory=Tariff)
    policy: str = "easy"
    kill_at_estimate: bool = True
    wc_accuracy: float | None = None
    sim: Simulator = field(init=False, repr=False)
    now: int = field(init=False, default=0)
    granted: list[Reservation] = field(init=False, default_factory=list)
    tentative: list[Reservation] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if self.instance.machine.unavailable or not self.instance.machine.flat:
            raise ValueError(f"cluster {self.name}: a flat machine without busy blocks")
        chosen = parse_policy(self.policy)
        if not isinstance(chosen, EnginePolicy):
            raise ValueError(
                f"cluster {self.name}: policy {self.policy!r} needs the engine"
            )
        self.sim = Simulator(
            self.instance, kill_at_estimate=self.kill_at_estimate, keep_profile=True
        )
        ranks = order_ranks(chosen.order, self.sim.size, self.sim.estimate)
        self.sim.begin(chosen, ranks)
        self._history: tuple[int, float] = (-1, 1.0)

    @property
    def processors(self) -> int:
        """CPUs of the cluster."""
        return self.instance.machine.processors

    # -- status queries -------------------------------------------------------
    def advance(self, now: int) -> None:
        """Simulate the cluster up to (not including) instant ``now``."""
        self.sim.advance(now)
        self.now = now

    def _profile(self, start: int) -> Profile:
        # Free CPUs from `start` on, as known at `now`: the simulator's
        # table (running jobs to their estimated ends, granted
        # reservations), tentative parts, and the jobs running past their
        # estimates at `now`: their end is unknown, so they hold their CPUs
        # from now on.
        sim = self.sim
        profile = sim.base_profile()
        profile.advance(max(self.now, profile.times[0]))
        for r in self.tentative:
            profile.add(r.start, r.end, -r.cpus)
        for estimated_end, j in sim.running_ends:
            if estimated_end <= self.now < sim.end_time[j]:
                profile.add(self.now, _FOREVER, -sim.size[j])
        profile.advance(max(start, profile.times[0]))
        return profile

    def occupied(self, start: int, end: int) -> int:
        """Most CPUs committed at one instant of ``[start, end)`` (an empty
        interval: the instant ``start``), from the last simulated instant
        on: running jobs to their estimated ends, granted and tentative
        reservations (Listing 3's ``statusanfrage``)."""
        profile = self._profile(start)
        return self.processors - profile.min_free(start, end)

    def state(self, now: int) -> ClusterState:
        """The cluster as a request submitted at ``now`` sees it: the same
        table as :meth:`occupied`, as ``(start, end, cpus)`` steps."""
        profile = self._profile(now)
        times, free = profile.times, profile.free
        last = len(times) - 1  # the last segment runs forever
        busy = tuple(
            (
                times[k],
                times[k + 1] if k < last else _FOREVER,
                self.processors - free[k],
            )
            for k in range(len(times))
            if free[k] < self.processors
        )
        return ClusterState(self.name, self.processors, busy, self.tariff)

    def backlog_time(
        self, now: int, tr_start: int, *, accuracy: float | None = None
    ) -> float:
        """Meltzer's backlog time (§4.4.4, Listing 4) for a part at ``tr_start``.

        .. math:: a(t) = \\Big(\\sum_{j \\in W \\cup R} \\alpha\\, w_j q_j
                  + \\sum_{r:\\, s_r < t} d_r q_r\\Big) / m

        over the waiting and running local jobs (wallclock ``w_j``, CPUs
        ``q_j``, weighted by the wallclock accuracy ``alpha``: the
        cluster's, or ``accuracy``; 1 for A3*) and the reservations not yet
        ended that start before ``t`` (full size; later ones may be
        overtaken). Running jobs count their full wallclock, as the thesis
        does.
        """
        if accuracy is not None:
            alpha = accuracy
        elif self.wc_accuracy is not None:
            alpha = self.wc_accuracy
        else:
            alpha = self.history_accuracy()
        sim = self.sim
        local = 0
        for j in sim.queue:
            if sim.state[j] == WAITING:
                local += sim.requested[j] * sim.size[j]
        for _, j in sim.running_ends:
            local += sim.requested[j] * sim.size[j]
        reserved = sum(
            (r.end - r.start) * r.cpus
            for r in self.granted
            if r.end > now and r.start < tr_start
        )
        return (alpha * local + reserved) / self.processors

    def history_accuracy(self) -> float:
        """Mean ``runtime / wallclock`` of the local jobs ended by now (1 if none)."""
        if self._history[0] != self.now:
            sim = self.sim
            ratios = [
                (sim.end_time[j] - sim.start_time[j]) / sim.requested[j]
                for j in range(len(sim.jobs))
                if sim.requested[j] > 0
                and 0 <= sim.end_time[j] <= self.now
                and sim.start_time[j] >= 0
            ]
            value = sum(ratios) / len(ratios) if ratios else 1.0
            self._history = (self.now, value)
        return self._history[1]

    def next_scheduling_event(self, now: int) -> int | None:
        """``t_sched``: the next estimated job end or reservation end after
        ``now`` (§4.5, §6.7.5); ``None`` when nothing runs or is reserved."""
        ends = [end for end, _ in self.sim.running_ends if end > now]
        ends += [r.end for r in self.granted if r.end > now]
        return min(ends, default=None)

    def waiting_jobs(self) -> list[int]:
        """The local jobs waiting now (simulator numbers)."""
        sim = self.sim
        return [j for j in sim.queue if sim.state[j] == WAITING]

    # -- reserve / rollback / commit ------------------------------------------
    def reserve(self, request: int, part: int, start: int, end: int, cpus: int) -> bool:
        """Hold ``cpus`` over ``[start, end)`` if they are free (else ``False``)."""
        if self.occupied(start, end) + cpus > self.processors:
            return False
        self.tentative.append(Reservation(request, part, start, end, cpus))
        return True

    def rollback(self, request: int, part: int) -> None:
        """Drop the tentative reservation of ``part`` of ``request``."""
        self.tentative = [
            r for r in self.tentative if (r.request, r.part) != (request, part)
        ]

    def commit(self, request: int) -> list[Reservation]:
        """Grant the tentative reservations of ``request`` (busy blocks)."""
        mine = [r for r in self.tentative if r.request == request]
        self.tentative = [r for r in self.tentative if r.request != request]
        for r in mine:
            label = f"reservation {request}.{r.part}"
            block = BusyBlock(r.start, r.end, r.cpus, label=label)
            self.sim.add_block(block, granted_at=self.now)
            self.granted.append(r)
        return mine
