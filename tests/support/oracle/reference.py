"""The reference event loop and the start rules, from the definitions.

One instant at a time: the jobs that end then, the busy blocks that start
or end, the jobs submitted then, and one scheduling pass when jobs wait
(conservative backfilling also passes at its earliest reservation). Rules:

- ``strict`` (``fcfs``, ``spt``, ...): the head starts while it fits.
- ``firstfit``: every waiting job that fits starts, in queue order.
- ``backfill`` with ``depth`` reservations (``easy`` is depth 1): walking
  the queue, a job that fits now without delaying the reservations made so
  far starts, otherwise it is reserved at its earliest slot, until ``depth``
  reservations exist; the other waiting jobs, in selection order, start if
  they fit now and delay none (``maxwait``/``maxidle`` may forbid that).
- ``conservative``: every job is reserved at its earliest slot when it
  arrives; a reservation due now starts if its processors are free, one
  due that cannot start is void; when a job ends before its estimate or a
  reservation is void, every reservation in queue order moves to its
  earliest slot (a void job from now, a valid one never later).
- ``best-package``: the subset of the first ``limit`` fitting jobs with the
  largest total size that fits, preferring earlier jobs; then first fit.

Estimates: a policy sees the requested time, or with ``oracle`` the run
time; ``kill`` stops every job at its requested time. "Fits now" is the
engine's rule: enough free processors, and, when a busy block starts
before the job's estimated end, enough under the blocks and the running
jobs' estimated runs until then. A job whose overrun reaches the start of
a busy block is stopped at its requested time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from optsched.instance import Instance
from support.oracle.steps import Steps

SUPPORTED = ("strict", "firstfit", "backfill", "conservative", "best-package")
"""The rules written here."""

ORDER_KEYS = {
    "fcfs": lambda q, d, u, i: 0,
    "spt": lambda q, d, u, i: d,
    "lpt": lambda q, d, u, i: -d,
    "ssf": lambda q, d, u, i: q,
    "lsf": lambda q, d, u, i: -q,
    "saf": lambda q, d, u, i: q * d,
    "laf": lambda q, d, u, i: -q * d,
    "random": lambda q, d, u, i: u,
    "fid": lambda q, d, u, i: i,
    "lpt-high-id": lambda q, d, u, i: (-d, -i),
}
"""Queue order keys (ties: submit time, then id) of size, estimate, a
uniform draw per job in submit order, and id. ``fid`` (by id) and
``lpt-high-id`` (longest first, ties to the *higher* id) are Rassmann's."""

SELECT_KEYS = {
    "queue": lambda run, j: 0,
    "submit": lambda run, j: j,
    "largest": lambda run, j: -run.size[j],
    "largest-area": lambda run, j: -run.size[j] * run.estimate[j],
    "smallest": lambda run, j: run.size[j],
    "shortest": lambda run, j: run.estimate[j],
}
"""Backfill candidate orders (ties: queue order)."""


def supports(instance: Instance) -> bool:
    """Whether the reference handles ``instance``: a flat ``any`` machine,
    rigid jobs, busy blocks without processor offsets, nothing else."""
    machine = instance.machine
    return (
        machine.allocation == "any"
        and machine.flat
        and machine.calendar is None
        and not machine.outages
        and all(b.offset is None for b in machine.unavailable)
        and all(j.preceding_job is None and not j.modes for j in instance.jobs)
    )


def reference_starts(
    instance: Instance,
    rule: str,
    *,
    order: str = "fcfs",
    oracle: bool = False,
    kill: bool = False,
    seed: int = 0,
    **options: Any,
) -> dict[int, tuple[int, int]]:
    """``{job id: (start, end)}`` of the reference schedule of ``rule``."""
    if not supports(instance):
        raise ValueError("the reference runs on plain 'any' machines only")
    run = Run(instance, oracle=oracle, kill=kill, order=order, seed=seed)
    from support.oracle.conservative import conservative

    decide = {
        "strict": _strict,
        "firstfit": _firstfit,
        "backfill": _backfill,
        "conservative": conservative,
        "best-package": _best_package,
    }[rule]
    run.loop(lambda: decide(run, **options))
    return {run.ids[j]: (run.start[j], run.end[j]) for j in range(run.n)}


def planned(estimate: int) -> int:
    """A reservation holds at least one second (a zero-length run still
    needs its processors at its start instant)."""
    return max(estimate, 1)


@dataclass
class Run:
    """The state of one reference run; jobs numbered in submit order."""

    instance: Instance
    oracle: bool
    kill: bool
    order: str
    seed: int
    now: int = -1
    waiting: list[int] = field(default_factory=list)
    running: set[int] = field(default_factory=set)
    arrived: list[int] = field(default_factory=list)
    ended_early: bool = False
    wake: int | None = None
    memory: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        jobs = sorted(self.instance.jobs, key=lambda j: (j.release, j.id))
        self.n = len(jobs)
        self.m = self.instance.machine.processors
        self.ids = [j.id for j in jobs]
        self.release = [j.release for j in jobs]
        self.size = [j.size for j in jobs]
        self.requested = [j.estimate for j in jobs]
        self.duration = [
            min(j.runtime, j.estimate) if self.kill else j.runtime for j in jobs
        ]
        self.estimate = self.duration[:] if self.oracle else self.requested[:]
        draws = random.Random(self.seed)
        uniform = [draws.random() for _ in jobs]
        key = ORDER_KEYS[self.order]
        self.rank = {
            j: (key(self.size[j], self.estimate[j], uniform[j], self.ids[j]), j)
            for j in range(self.n)
        }
        self.start = [-1] * self.n
        self.end = [-1] * self.n
        self.blocks = [
            (b.start, b.end, b.size)
            for b in self.instance.machine.unavailable
            if b.end > b.start
        ]

    # -- the loop --------------------------------------------------------------
    def loop(self, decide: Any) -> None:
        """Every instant until every job is done."""
        submitted = 0
        while submitted < self.n or self.waiting or self.running:
            upcoming = [self.end[j] for j in self.running]
            if submitted < self.n:
                upcoming.append(self.release[submitted])
            upcoming += [t for b in self.blocks for t in b[:2] if t > self.now]
            if self.wake is not None and self.wake > self.now:
                upcoming.append(self.wake)
            if not upcoming:
                raise AssertionError(f"stalled at {self.now}")
            self.now = min(upcoming)
            for j in sorted(self.running):
                if self.end[j] == self.now:
                    self.running.discard(j)
                    if self.now < self.start[j] + self.estimate[j]:
                        self.ended_early = True
            while submitted < self.n and self.release[submitted] == self.now:
                self.waiting.append(submitted)
                self.arrived.append(submitted)
                submitted += 1
            if self.waiting:
                self.waiting.sort(key=self.rank.__getitem__)
                decide()
                self.arrived = []
                self.ended_early = False

    # -- machine ----------------------------------------------------------------
    def free_now(self) -> int:
        """Processors not held by a running job or a busy block now."""
        held = sum(self.size[j] for j in self.running)
        held += sum(q for s, e, q in self.blocks if s <= self.now < e)
        return self.m - held

    def availability(self) -> Steps:
        """Free processors from now on by the estimates: busy blocks, and
        running jobs until their estimated ends."""
        steps = Steps(self.now, self.m)
        for s, e, q in self.blocks:
            steps.take(s, e, q)
        for j in self.running:
            steps.take(self.start[j], self.start[j] + self.estimate[j], self.size[j])
        return steps

    def fits_now(self, j: int) -> bool:
        """The engine's test for a start of ``j`` now."""
        if self.size[j] > self.free_now():
            return False
        end = self.now + self.estimate[j]
        if any(self.now < s < end for s, _, _ in self.blocks):
            return self.availability().lowest(self.now, end) >= self.size[j]
        return True

    def begin(self, j: int) -> None:
        """Start ``j`` now (a job of zero duration is over at once)."""
        assert self.fits_now(j), (self.ids[j], self.now)
        duration = self.duration[j]
        if duration > self.estimate[j] and any(
            self.now < s and self.now + self.requested[j] <= s < self.now + duration
            for s, _, _ in self.blocks
        ):
            duration = self.requested[j]  # the busy block wins
        self.start[j], self.end[j] = self.now, self.now + duration
        self.waiting.remove(j)
        if duration > 0:
            self.running.add(j)


# -- rules ----------------------------------------------------------------------
def _strict(run: Run) -> None:
    for j in list(run.waiting):
        if not run.fits_now(j):
            return
        run.begin(j)


def _firstfit(run: Run) -> None:
    for j in list(run.waiting):
        if run.free_now() == 0:
            return
        if run.fits_now(j):
            run.begin(j)


def _fits_plan(run: Run, plan: Steps, j: int) -> bool:
    # Fits now and, by its estimate, under the plan (a zero estimate needs
    # only the processors free now).
    d = run.estimate[j]
    if run.size[j] > run.free_now():
        return False
    if d > 0 and plan.lowest(run.now, run.now + d) < run.size[j]:
        return False
    return run.fits_now(j)


def _begin_in_plan(run: Run, plan: Steps, j: int) -> None:
    run.begin(j)
    if run.end[j] > run.now:
        plan.take(run.now, run.now + run.estimate[j], run.size[j])


def _backfill(
    run: Run,
    depth: int = 1,
    select: str = "queue",
    maxwait: int | None = None,
    maxidle: float | None = None,
    spare: bool = True,
) -> None:
    # spare=False: a candidate must end by the first reservation (AFKT's
    # time-only rule), never use processors spare at that time.
    plan = run.availability()
    holders: list[int] = []
    rest: list[int] = []
    shadow = run.now
    for j in list(run.waiting):
        if len(holders) == depth:
            rest = run.waiting[run.waiting.index(j) :]
            break
        if _fits_plan(run, plan, j):
            _begin_in_plan(run, plan, j)
            continue
        span = planned(run.estimate[j])
        t = plan.first_fit(run.size[j], span, run.now)
        plan.take(t, t + span, run.size[j])
        holders.append(j)
        shadow = t if len(holders) == 1 else shadow
    if not rest or run.free_now() == 0:
        return
    head = holders[0]
    if maxwait is not None and run.now - run.release[head] >= maxwait:
        return
    if maxidle is not None and run.free_now() > maxidle * run.m:
        return
    position = {j: k for k, j in enumerate(rest)}
    key = SELECT_KEYS[select]
    for c in sorted(rest, key=lambda j: (key(run, j), position[j])):
        if not spare and run.now + run.estimate[c] > shadow:
            continue
        if _fits_plan(run, plan, c):
            _begin_in_plan(run, plan, c)
        if run.free_now() == 0:
            return


def _best_package(run: Run, limit: int = 128) -> None:
    free = run.free_now()
    if free == 0:
        return
    fitting = [j for j in run.waiting if run.size[j] <= free and run.fits_now(j)]
    sizes = [run.size[j] for j in fitting[:limit]]
    # best[s]: the subset of the items seen so far summing to s, preferring
    # the one whose largest index is smallest, then the next largest, ...
    # (an item seen later only enters a sum no earlier subset reaches).
    best: dict[int, tuple[int, ...]] = {0: ()}
    for i, q in enumerate(sizes):
        for s, chosen in list(best.items()):
            if s + q <= free and s + q not in best:
                best[s + q] = (*chosen, i)
    for i in best[max(best)]:
        if run.fits_now(fitting[i]):
            run.begin(fitting[i])
    for j in fitting:
        if run.free_now() == 0:
            return
        if j in run.waiting and run.fits_now(j):
            run.begin(j)
