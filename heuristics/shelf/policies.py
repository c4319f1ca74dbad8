"""Shelf policies: the batch framework over a shelf algorithm, and PC².

Both execute shelves built by :mod:`optsched.heuristics.shelf.algorithms` inside the
simulator, *event-driven*: a shelf starts when every job of the shelf before
it has ended (jobs end at their actual run time, often earlier than their
estimate, and the next shelf then starts earlier), at the earliest such time
at which its footprint (its width for its planned height, at least one
second) fits beside the busy blocks; its jobs start left to right on the
processors the plan gave them (``Simulator.can_start(j, at=...)``; the
simulator's own allocation when those are not free, which only happens
after a compaction or a fallback). A job stacked behind another starts when
that job ends. A job that cannot start when planned (a busy block it would
meet by its estimate, no free range on a contiguous machine) is tried again
at every later pass; its shelf is not over until it has run, so the
schedule is always valid. The simulator's kill-at-estimate rule is
unchanged (a job overrunning into a busy block is stopped at its estimate).

The site's rules that act during the run are followed as the engine applies
them (``_Level.advance``):

* *Outages* (``Machine.outages``): a job of the running shelf that an
  outage kills is requeued by the engine; it has not run, so its shelf is
  not over: it is due again at once and restarts from scratch on the
  processors the plan gave it (or wherever the simulator finds room) as
  soon as the outage leaves room, and the next shelf starts when it has
  ended.
* *The user limit* (``Calendar.user_limit``, NQS): a job the limit refuses
  (its user is over the limit while a job of another user waits) is
  demoted by the engine. The shelf keeps retrying it while another of its
  jobs runs, but does not wait for it once nothing else of the shelf can
  end: it gives the job up, and the job runs later as the demoted job it
  is: in the next batch (batch framework), or planned again like a new
  submission (PC²). Waiting for it would hold back the very jobs whose
  waiting makes the limit refuse it, for ever.

``batch:inner=ALGORITHM`` (names ``nfdh``, ``ffdh``, ``nfih``, ``ffih``,
``ffdh-stack``, ``ffih-stack``, ``smart``)
    The batch framework of D. B. Shmoys, J. Wein, D. P. Williamson,
    "Scheduling parallel machines on-line", SIAM J. Comput. 24(6):1313-1331,
    1995: when no batch runs, every waiting job forms a batch, planned by
    the offline shelf algorithm from now with the heights the policy sees
    (estimates, or actual run times with ``oracle``); the jobs that arrive
    while it runs wait, and form the next batch when its last job has
    ended. For the makespan, with exact estimates and no busy block, an
    inner algorithm within a factor ``rho`` of the optimum on every batch
    gives a policy within ``2 rho`` (Shmoys et al.): if the last batch
    ``B_k`` started at a release, ``C_max <= OPT + rho OPT``; otherwise it
    started when ``B_{k-1}`` (started at ``S_{k-1}``) ended, every job of
    ``B_k`` was released after ``S_{k-1}``, so ``OPT >= S_{k-1} +
    OPT(B_k)``, and ``C_max = S_{k-1} + |B_{k-1}| + |B_k| <= S_{k-1} + rho
    OPT + rho OPT(B_k) <= 2 rho OPT``. Ties of height keep the instance's
    job order, so with every job released at 0 and exact estimates the
    policy's schedule is :func:`~optsched.heuristics.shelf.algorithms.shelf_schedule`
    of the inner algorithm, processors included (a test checks it).

``pc2``
    The PC² scheduler of the Paderborn Center for Parallel Computing (CCS,
    Gehring and Ramme 1996, as described by Kalthoff 2002; seed 001 §2.2).
    Precisely, in optsched:

    * *FCFS mode* (the machine is not full): at each pass the waiting jobs
      start in submission order while the first of them can start now.
      The machine is *full* when a job remains waiting: the first waiting
      job cannot start now (too few free processors, no free range, or a
      busy block it would meet by its estimate).
    * When the machine becomes full the scheduler plans, at this
      *scheduling point*: the running jobs form the current level, which
      ends at the latest of their estimated ends (the next scheduling
      point ``E``, now if all are past their estimate). The waiting jobs,
      in the order of the chosen algorithm, start now if they can and end
      by ``E`` by their estimate (they join the current level); the others
      are planned in levels from ``E`` by **FFDH*** (``ffdh-stack``) when
      they are *mostly batch jobs*, by **FFIH*** (``ffih-stack``)
      otherwise. *Mostly batch*: the share of batch jobs among them is
      larger than ``batch_share`` (default 0.5). A job is interactive when
      its SWF queue number (``Job.queue``) is in ``interactive`` (default
      ``0``, the SWF convention for interactive jobs; give several as
      ``interactive=0+3``, none as ``interactive=none``); jobs without a
      queue number are batch jobs.
    * *Level mode*: the planned levels run event-driven as above, one
      after another. A job submitted meanwhile joins the current level if
      it can start now and ends by the current level's planned end (by its
      estimate); otherwise it is added to the plan by first fit without
      making any level taller, beside the jobs of a level or stacked
      behind one (the FFDH*/FFIH* integration of short jobs into an
      existing schedule), else in a new level at the end. The plan is kept:
      a later submission never delays a job already planned (with exact
      estimates no job starts later than predicted). When the last level
      has ended and no job waits, the scheduler is back in FCFS mode; the
      choice between FFDH* and FFIH* is made again each time it becomes
      full.
    * *Start-time prediction*: every job is told at its submission when it
      will start: now if it starts at once, else its planned start (from
      the estimates). ``SimulationStats.prediction_error`` is the mean
      absolute difference to the actual start (``optsched simulate``
      prints it); estimates that are too long make jobs start earlier than
      predicted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from optsched.heuristics.engine.core import DONE, RUNNING, WAITING, Simulator
from optsched.heuristics.rigid.policies import ORACLE, EnginePolicy
from optsched.heuristics.shelf.algorithms import (
    SHELF_ALGORITHMS,
    SHELF_NAMES,
    Builder,
    Item,
    Obstacles,
    Shelf,
    ShelfSpec,
    build,
    item_weight,
    parse_shelf_algorithm,
)
from optsched.heuristics.spec import (
    Family,
    Option,
    Options,
    SpecParts,
    join_spec,
    share,
    write_float,
)

__all__ = [
    "PC2",
    "SHELF_POLICY_NAMES",
    "Batch",
    "parse_shelf_policy",
    "pc2_interactive",
]

DEFAULT_INTERACTIVE: tuple[int, ...] = (0,)
"""SWF queue numbers PC² counts as interactive by default (the SWF
convention: queue 0 is interactive)."""

DEFAULT_BATCH_SHARE = 0.5
"""PC² plans with FFDH* when more than this share of the waiting jobs are
batch jobs."""


# --------------------------------------------------------------------------
# Executing one level (shelf) in the simulator
# --------------------------------------------------------------------------


_Entry = tuple[int, int | None]
"""A job of a level and its planned offset in the footprint (``None``: no
planned processors)."""


class _Level:
    """One shelf being executed: what has started, what waits for what.

    ``members`` maps every job of the level to its planned offset in the
    footprint (``None``: no planned processors, PC²'s running level and
    the jobs that joined the current level on arrival). ``front`` holds the
    jobs due now that have not started, ``behind`` the jobs stacked behind
    a job until it ends. ``dropped`` collects the members the level gave up
    because the user limit held them back (:meth:`advance`), for a policy
    that re-plans them (PC²).
    """

    __slots__ = (
        "base",
        "behind",
        "dropped",
        "end",
        "front",
        "height",
        "members",
        "opened",
    )

    def __init__(self, shelf: Shelf | None = None) -> None:
        self.front: list[_Entry] = []
        self.behind: dict[int, list[_Entry]] = {}
        self.members: dict[int, int | None] = {}
        self.dropped: list[int] = []
        self.opened = shelf is None
        self.base = 0
        self.end = 0
        self.height = 0
        if shelf is not None:
            self.height = shelf.height
            for key, offset, _, pred, _ in shelf.entries:
                self.members[key] = offset
                if pred is None:
                    self.front.append((key, offset))
                else:
                    self.behind.setdefault(pred, []).append((key, offset))

    @classmethod
    def running(cls, members: Iterable[int], end: int) -> _Level:
        """The jobs running when the machine became full (PC²'s level 0)."""
        level = cls()
        level.members = dict.fromkeys(members)
        level.end = end
        return level

    def open_at(self, sim: Simulator, obstacles: Obstacles, width: int) -> bool:
        """Open the level now if its footprint fits beside the blocks (else
        ask for a pass when it does)."""
        now = sim.now
        base = 0
        if obstacles.pending(now):
            start, base = obstacles.earliest(now, width, self.height)
            if start > now:
                sim.wake_at(start)
                return False
        self.opened = True
        self.base = base
        self.end = now + self.height
        return True

    def advance(self, sim: Simulator) -> bool:
        """Start what is due; ``True`` when every job of the level has ended.

        Two site rules can take a started or due job out of the plan's
        course, and the level follows what the engine did:

        * An outage kills a running member and requeues it
          (:meth:`_killed`): the member has not run, so the shelf is not
          over; it is due again at once, on its planned processors if they
          are free. This keeps the discipline the shelf algorithms and the
          batch framework rest on (a shelf, or a batch, is over when every
          one of its jobs has run, and only then does the next one start);
          the restart takes the processors the plan reserved for the job
          in this level, which no other level uses meanwhile, so the plan
          stays valid: the level just ends later. (The job did nothing
          wrong: sending it to the next batch, behind every job that
          arrived meanwhile, would punish it for the machine's failure.)
        * The user limit refuses a due member while a job of another user
          waits (:meth:`_drop_refused`): NQS demotes it to the lowest
          priority. The level keeps retrying it while some other member
          runs (the limit may let it go once the others have started or
          an account is emptied), but it no longer waits for it once
          nothing else of the level can end: it drops it, and the job runs
          later as the demoted job it is (the batch framework: in the next
          batch; PC²: planned again like a new submission). Without this
          the level held every other waiting job back, the refused job
          stayed refused because those jobs waited, and the run never
          ended (the calendar wakes the engine once a day).
        """
        state = sim.state
        ready = self.front
        self.front = []
        if sim.finished:
            ready.extend(self._killed(sim, ready))
        while True:
            ready = self._start_due(sim, ready)
            if not (ready and self._drop_refused(sim, ready)):
                break
        self.front = ready
        if ready or self.behind:
            return False
        return all(state[j] == DONE for j in self.members)

    def _start_due(self, sim: Simulator, ready: list[_Entry]) -> list[_Entry]:
        """Start the due jobs that can start (on their planned processors
        first) and release the jobs stacked behind those that ended; the
        due jobs left waiting."""
        state = sim.state
        progress = True
        while progress:
            progress = False
            waiting: list[_Entry] = []
            for key, offset in ready:
                if (
                    offset is not None and sim.can_start(key, at=self.base + offset)
                ) or sim.can_start(key):
                    sim.start(key)
                    progress = True
                else:
                    waiting.append((key, offset))
            ready = waiting
            if self.behind:
                for pred in [p for p in self.behind if state[p] == DONE]:
                    ready.extend(self.behind.pop(pred))
                    progress = True
        return ready

    def _killed(self, sim: Simulator, ready: list[_Entry]) -> list[_Entry]:
        """Members an outage killed since the last pass: the engine reports
        the lost run in ``finished`` and the job waits again."""
        state, members = sim.state, self.members
        killed = [
            (j, members[j])
            for j, _, _ in sim.finished
            if state[j] == WAITING and j in members
        ]
        if not killed:
            return killed
        # Each once, and not if already due (a level reads one pass's
        # report once, but a second reading must not start a job twice).
        due = {key for key, _ in ready}
        fresh = []
        for entry in killed:
            if entry[0] not in due:
                due.add(entry[0])
                fresh.append(entry)
        return fresh

    def _drop_refused(self, sim: Simulator, ready: list[_Entry]) -> bool:
        """Give up the due jobs the user limit refused in this pass once no
        member runs (see :meth:`advance`); the jobs stacked behind them
        become due. Whether any was dropped (``ready`` is updated).

        Never every waiting job: the limit refuses a job only while a job
        of another user waits whose own start the limit allows
        (:mod:`~optsched.heuristics.site.user_limit`), and that one is
        never dropped. A pass that drops jobs therefore starts that one or
        leaves it waiting in its level, and the policies' loops end (they
        never plan the same dropped jobs over and over in one pass).
        """
        refused = [entry for entry in ready if sim.refused_by_limit(entry[0])]
        if not refused:
            return False
        state = sim.state
        if any(state[j] == RUNNING for j in self.members):
            return False  # something of the level still ends: retry then
        for entry in refused:
            key = entry[0]
            ready.remove(entry)
            del self.members[key]
            self.dropped.append(key)
            # Stacked behind a job that will not run here: the processors
            # they were to take from it are free, so they are due now.
            ready.extend(self.behind.pop(key, ()))
        return True


@dataclass
class _Run:
    obstacles: Obstacles
    position: list[int]
    levels: deque[tuple[_Level, int]] = field(default_factory=deque)


def _obstacles(sim: Simulator) -> Obstacles:
    return Obstacles(sim.processors, sim.contiguous, sim.blocks, after=0)


def _positions(sim: Simulator) -> list[int]:
    # The instance's job order, by simulator index: ties of height keep it.
    where = {job.id: k for k, job in enumerate(sim.instance.jobs)}
    return [where[jid] for jid in sim.job_id]


def _items(sim: Simulator, jobs: Iterable[int], weights: str) -> list[Item]:
    estimate = sim.estimate
    return [
        Item(
            j,
            sim.release[j],
            sim.size[j],
            estimate[j],
            item_weight(sim.jobs[j], estimate[j], weights),
        )
        for j in jobs
    ]


# --------------------------------------------------------------------------
# The batch framework
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch(EnginePolicy):
    """The batch framework over an offline shelf algorithm (see module).

    Parameters
    ----------
    inner
        The shelf algorithm (a :class:`~optsched.heuristics.shelf.algorithms.
        ShelfSpec` or its text, e.g. ``"smart:order=smith"``).
    """

    inner: ShelfSpec = field(default_factory=ShelfSpec)

    rule: ClassVar[str] = "batch"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.order != "fcfs" or self.seed is not None:
            raise ValueError("shelf policies take no queue order or seed")
        if not isinstance(self.inner, ShelfSpec):
            object.__setattr__(self, "inner", parse_shelf_algorithm(self.inner))

    @property
    def spec(self) -> str:
        """The inner algorithm's spec (the plain names are the batch
        framework), plus ``oracle``."""
        oracle = ORACLE.item(self.oracle)
        return join_spec(self.inner.name, [*self.inner.items, *filter(None, [oracle])])

    def new_state(self, sim: Simulator) -> _Run:
        return _Run(_obstacles(sim), _positions(sim))

    def decide(self, sim: Simulator, state: _Run) -> None:
        levels = state.levels
        while True:
            if not levels:
                job_state = sim.state
                waiting = [j for j in sim.queue if job_state[j] == WAITING]
                if not waiting:
                    return
                self._plan(sim, state, waiting)
            level, width = levels[0]
            if not level.opened and not level.open_at(sim, state.obstacles, width):
                return
            if not level.advance(sim):
                return
            levels.popleft()

    def _plan(self, sim: Simulator, state: _Run, waiting: list[int]) -> None:
        position = state.position
        batch = sorted(waiting, key=lambda j: position[j])
        builder = build(
            _items(sim, batch, self.inner.weights),
            self.inner,
            sim.processors,
            state.obstacles,
            sim.now,
        )
        state.levels.extend((_Level(s), s.width) for s in builder.shelves)


# --------------------------------------------------------------------------
# PC²
# --------------------------------------------------------------------------


@dataclass
class _PC2State:
    obstacles: Obstacles
    position: list[int]
    level: _Level | None = None
    width: int = 0  # of the current level's footprint (planned levels)
    plan: Builder | None = None
    point: int = 0  # the plan's origin: the current level's planned end
    known: set[int] = field(default_factory=set)


_FFDH_STAR = ShelfSpec("ffdh-stack")
_FFIH_STAR = ShelfSpec("ffih-stack")


@dataclass(frozen=True)
class PC2(EnginePolicy):
    """The PC² scheduler: FCFS until full, then FFDH*/FFIH* levels (see module).

    Parameters
    ----------
    interactive
        SWF queue numbers of interactive jobs (default ``(0,)``).
    batch_share
        FFDH* when the share of batch jobs among the jobs to plan is larger
        than this, else FFIH*.
    """

    interactive: tuple[int, ...] = DEFAULT_INTERACTIVE
    batch_share: float = DEFAULT_BATCH_SHARE

    rule: ClassVar[str] = "pc2"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.order != "fcfs" or self.seed is not None:
            raise ValueError("pc2 takes no queue order or seed")
        object.__setattr__(self, "interactive", tuple(sorted(set(self.interactive))))
        if not 0 <= self.batch_share <= 1:
            raise ValueError(
                f"batch_share must be a share in [0, 1], got {self.batch_share}"
            )

    @property
    def spec(self) -> str:
        """``pc2`` with the parameters that differ from their default
        (:data:`PC2_OPTIONS`)."""
        return PC2_OPTIONS.spec(self.rule, self, _PC2_KEYS)

    def new_state(self, sim: Simulator) -> _PC2State:
        return _PC2State(_obstacles(sim), _positions(sim))

    def algorithm(self, sim: Simulator, jobs: list[int]) -> ShelfSpec:
        """FFDH* if the jobs are mostly batch jobs, else FFIH*."""
        interactive = set(self.interactive)
        records = sim.jobs
        batch = sum(1 for j in jobs if records[j].queue not in interactive)
        mostly_batch = batch > self.batch_share * len(jobs)
        return _FFDH_STAR if mostly_batch else _FFIH_STAR

    # -- the pass ------------------------------------------------------------
    def decide(self, sim: Simulator, state: _PC2State) -> None:
        while True:
            level = state.level
            if level is None:
                if not self._fcfs(sim, state):
                    return
                continue
            if not level.opened and not level.open_at(
                sim, state.obstacles, state.width
            ):
                break
            over = level.advance(sim)
            if level.dropped:
                # Members the user limit held back (see _Level.advance):
                # planned again like new submissions, by _arrivals at the
                # end of this pass (first fit into the plan, which delays
                # no job already planned) or by the FCFS mode.
                state.known.difference_update(level.dropped)
                level.dropped.clear()
            if not over:
                break
            # A scheduling point: the current level is over.
            plan = state.plan
            if plan is None or not plan.shelves:
                state.level, state.plan = None, None
                continue
            shelf = plan.pop_first()
            state.level, state.width = _Level(shelf), shelf.width
            start, _ = state.obstacles.earliest(sim.now, shelf.width, shelf.height)
            state.point = start + shelf.height
            plan.rebase(state.point)
        self._arrivals(sim, state)

    def _fcfs(self, sim: Simulator, state: _PC2State) -> bool:
        """FCFS while the head can start; ``True`` when the machine is full
        (then the plan is made)."""
        now = sim.now
        job_state = sim.state
        known = state.known
        for j in sim.queue:
            if job_state[j] != WAITING:
                continue
            if not sim.can_start(j):
                break
            sim.predict(j, now)
            sim.start(j)
            known.add(j)
        waiting = [j for j in sim.queue if job_state[j] == WAITING]
        if not waiting:
            return False
        # Full: the running jobs are the current level, up to the next
        # scheduling point; plan the waiting jobs behind it.
        ends = sim.running_ends
        point = max(now, ends[-1][0]) if ends else now
        level = _Level.running([j for _, j in ends], point)
        spec = self.algorithm(sim, waiting)
        position = state.position
        ordered = sorted(waiting, key=lambda j: position[j])
        estimate = sim.estimate
        sign = -1 if spec is _FFDH_STAR else 1
        rest = []
        for j in sorted(ordered, key=lambda j: sign * estimate[j]):
            if now + estimate[j] <= point and sim.can_start(j):
                sim.predict(j, now)
                sim.start(j)
                level.members[j] = None
            else:
                rest.append(j)
        rest.sort(key=lambda j: position[j])
        plan = build(
            _items(sim, rest, "instance"),
            spec,
            sim.processors,
            state.obstacles,
            point,
        )
        plan.timed = True  # later insertions keep every level where it is
        for shelf in plan.shelves:
            for key, _, delay, _, _ in shelf.entries:
                sim.predict(key, shelf.start + delay)
        known.update(waiting)
        state.level, state.plan, state.point = level, plan, point
        return True

    def _arrivals(self, sim: Simulator, state: _PC2State) -> None:
        """Jobs submitted since the last pass join the current level or the
        plan; each is told its start."""
        job_state = sim.state
        known = state.known
        new = [j for j in sim.queue if job_state[j] == WAITING and j not in known]
        if not new:
            return
        level, plan = state.level, state.plan
        assert level is not None and plan is not None
        now = sim.now
        ends = sim.running_ends
        point = max(state.point, now, ends[-1][0] if ends else now)
        if point != state.point:
            # The current level runs past its planned end (an overrun): the
            # plan starts later.
            state.point = point
            plan.rebase(point)
        estimate = sim.estimate
        for j in new:
            known.add(j)
            if level.opened and now + estimate[j] <= point and sim.can_start(j):
                sim.predict(j, now)
                sim.start(j)
                level.members[j] = None
                continue
            (item,) = _items(sim, [j], "instance")
            shelf = plan.place(item, first_fit=True, grow=False)
            sim.predict(j, shelf.start + shelf.entries[-1][2])


def _write_interactive(queues: tuple[int, ...]) -> str:
    return "+".join(str(q) for q in queues) or "none"


def pc2_interactive(text: str) -> tuple[int, ...]:
    """Parse ``interactive=``: queue numbers joined by ``+``, or ``none``."""
    lowered = text.strip().lower()
    if lowered in ("none", ""):
        return ()
    try:
        return tuple(sorted({int(part) for part in lowered.split("+")}))
    except ValueError:
        raise ValueError(
            f"interactive must be queue numbers joined by '+' (or none), got {text!r}"
        ) from None


# --------------------------------------------------------------------------
# Specs: the family record
# --------------------------------------------------------------------------

SHELF_POLICY_NAMES: tuple[str, ...] = (*SHELF_NAMES, "pc2")
"""The shelf policies a plain name gives: the batch framework over each
shelf algorithm, and PC²."""

PC2_OPTIONS = Options(
    (
        Option(
            "interactive",
            lambda key, value: pc2_interactive(value),
            DEFAULT_INTERACTIVE,
            _write_interactive,
        ),
        Option("batch_share", share, DEFAULT_BATCH_SHARE, write_float),
        ORACLE,
    )
)
"""The options of :class:`PC2`, in canonical spec order."""

_PC2_KEYS = ("interactive", "batch_share", "oracle")
_BATCH_KEYS = ("inner", *SHELF_ALGORITHMS["smart"].options, "oracle")


def parse_shelf_policy(parts: SpecParts) -> EnginePolicy:
    """The :class:`Batch` or :class:`PC2` policy named by a spec's tokens
    (a shelf algorithm's name is ``batch:inner=NAME``).

    Raises
    ------
    ValueError
        A key the policy does not take, a bad value.
    """
    name = parts.name
    if name == "pc2":
        return PC2(**PC2_OPTIONS.read(parts, _PC2_KEYS))
    if name == "batch":
        keys = _BATCH_KEYS
    else:
        keys = (*SHELF_ALGORITHMS[name].options, "oracle")
    parts.check(keys, flags=("oracle",))
    params = parts.options()
    oracle = (
        ORACLE.read("oracle", params.pop("oracle")) if "oracle" in params else False
    )
    inner = params.pop("inner", "ffdh") if name == "batch" else name
    options = {key: value.lower() for key, value in params.items()}
    return Batch(oracle=oracle, inner=ShelfSpec.parse(inner.lower(), **options))


FAMILY = Family(parse_shelf_policy, names=SHELF_POLICY_NAMES, generic=("batch",))
"""The shelf policies in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
