r"""Gang scheduling: an Ousterhout matrix with the LLNL job classes.

An online policy with its own small event-driven simulation (the engine of
:mod:`optsched.heuristics.engine.core` starts every job once; gang scheduling
suspends and resumes them). Jobs arrive at their release; the scheduler
sees their sizes and classes, never their run times (the LLNL scheme needs
no estimate), and a job is done when the work of its pieces reaches its
run time. The schedule's jobs are pieced placements
(:meth:`optsched.schedule.Placement.of_pieces`) on explicit consecutive
processor ranges.

References: J. K. Ousterhout, "Scheduling techniques for concurrent
systems", ICDCS 1982 (the matrix); D. G. Feitelson, "Packing schemes for
gang scheduling", JSSPP 1996, LNCS 1162 (first fit, best fit, buddy,
alternative scheduling); D. G. Feitelson and M. A. Jette,
"Improved utilization and responsiveness with gang scheduling", JSSPP 1997,
LNCS 1291, and UCRL-JC-125614 (1996), as summarised in Kalthoff's thesis
(seed 001 §2.3) (the classes, the cost function, the context switch).

The matrix
----------
Rows are time slots, columns processors. An arriving preemptible job gets
a *claim* (a consecutive processor range) in the first row that has room
(``packing``: first fit, best fit, buddy; :mod:`.gang_matrix`), or in a new
row: the number of rows is not bounded (the T3D swapped jobs to disk).
Jobs arriving together are placed by priority, then in release order; a
job placed in the current row starts at once. A job that fits nowhere,
not even in a new row (processors held by busy blocks or non-preemptible
jobs), waits and is tried again at every event. A job keeps its
processors once it has run: it never migrates; it may change rows (a
preempted job moves to another slot, on the same processors). Empty rows
disappear.

Rows are served round robin in order of creation, each for a *slice* of
``quantum`` seconds of work: a slice beginning at ``t`` ends at
``t + quantum + c``, ``c`` the largest context switch paid by a job of the
row resumed at ``t``. A row whose jobs all end closes its slice early.
During a slice the jobs of the row run; then, with ``alternative=True``
(*alternative scheduling*, Feitelson 1996), jobs of the other rows
(in round-robin order) whose processors are idle in this slice run too;
then the standby jobs on what is still idle.

Classes (:mod:`.gang_classes`)
------------------------------
- *Non-preemptible* classes (debug, benchmark) take a range that is free in
  every row (``packing`` over the processors no row claims) and run on it
  to completion: their processors are out of every row until they end.
  While no such range exists they wait.
- *Standby* jobs belong to no row: they run on processors idle in the
  current slice (a range chosen by ``packing`` at their first start, kept
  afterwards) and stop when a row needs them.
- *Maximum wait and the cost function.* At every event, the jobs that have
  waited longer than their class's ``max_wait`` (since their release, or
  since the end of their last piece) are taken by priority (then longest
  wait) and each tries to preempt. A job of a row joins the current slot:
  its claim (the one it has, or, if it never ran, any candidate range of
  the current row) displaces the current row's jobs it overlaps, which move
  to another row (the first where their processors are free, or a new
  one). A waiting non-preemptible job takes a range whose jobs, in every
  row, are suspended (*parked*) until it ends. A candidate set of victims
  is admissible when none is of higher priority than the preempting job
  (non-preemptible jobs, held processors and jobs moved in at the same
  instant are never victims); among the admissible candidates the cheapest
  by the LLNL cost function, read lexicographically, wins:

  .. math::

     \mathrm{cost}(V) = \bigl(\max_{v \in V} \mathrm{prio}_v,\;
       \sum_{v \in V} q_v,\; \max_{v \in V} e_v\bigr)

  (priority first, then processors preempted, then when the last victim's
  minimum slice ``e_v`` expires), ties to the lowest processor.
- *Minimum slice.* A job of class multiplier ``μ`` and ``q`` processors
  that starts or resumes a piece at ``t`` with switch ``c`` is never
  stopped before ``t + c + max(1, ceil(μ q))`` (except by its own end): so
  "the switch happens once the victim's minimum slice has expired", and the
  end of a slice waits for it on the processors it holds. Jobs run outside
  their row (alternative, standby) are protected for ``c + 1`` only. The
  one second of work every piece gets rules out a livelock: with switches
  longer than the maximum waits and no minimum slice, jobs could preempt
  each other forever, each paying its switch and never working.

Context switches: every resumed piece pays the machine's
:meth:`~optsched.instance.Machine.resume_cost` (``switch_cost_per_processor``
is the T3D's per-processor cost) at its start, holding its processors
without work (:class:`~optsched.schedule.Piece`); a piece never ends before
its switch is paid.

Readings of what the sources leave open: the wait of a job is counted
from its release before its first piece and from the end of its last
piece afterwards ("until start, or until the next time slice"); jobs of
the *same* priority may be preempted (only higher ones are protected),
else one class could never preempt within itself; the cost function's
three criteria are compared in the order the note lists them, not summed
(their units differ); a job above its class's processor limit is refused
or, with ``over_limit="default"``, demoted to the default class.

Busy blocks are held processors: on a contiguous machine the block's own
range, on an ``any`` machine ranges assigned by first fit in order of
start (no two blocks overlapping in time share one). A processor is held
from time 0 to the end of the last block on it: exact for the blocks of a
window's initial state (all start at 0), conservative for later blocks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from optsched.heuristics.preempt.gang_classes import (
    GangClasses,
    JobClass,
    default_classes,
    load_classes,
)
from optsched.heuristics.preempt.gang_matrix import (
    PACKINGS,
    Interval,
    candidate_claims,
    free_runs,
    is_free,
    overlaps,
    place,
)
from optsched.heuristics.spec import SpecParts, split_spec
from optsched.instance import Instance, Job
from optsched.schedule import Piece, Placement, ProcessorSet, Schedule

DEFAULT_QUANTUM = 600
"""Seconds of work per time slice (long slices, as on the T3D)."""

Cost = tuple[float, int, int]


@dataclass(eq=False)
class _Row:
    """One time slot of the matrix."""

    id: int
    members: list[_Task] = field(default_factory=list)

    def claims(self) -> list[Interval]:
        return [t.claim for t in self.members if t.claim is not None]


@dataclass(eq=False)
class _Task:
    """A job during the simulation."""

    job: Job
    cls: JobClass
    order: int
    remaining: int  # work left at the start of the running piece
    wait_since: int
    state: str = "new"  # row, pinned, pending, parked, standby, done
    claim: Interval | None = None
    row: _Row | None = None
    pieces: list[Piece] = field(default_factory=list)
    running: bool = False
    piece_start: int = 0
    piece_switch: int = 0
    protect_until: int = 0

    @property
    def span(self) -> Interval:
        """Processors the job runs on: the first ``size`` of its claim."""
        assert self.claim is not None
        return (self.claim[0], self.claim[0] + self.job.size)

    @property
    def started(self) -> bool:
        """Whether the job has run: its processors are then fixed."""
        return self.running or bool(self.pieces)

    @property
    def done_at(self) -> int:
        return self.piece_start + self.piece_switch + self.remaining

    def rank(self) -> tuple[int, int, int]:
        """Service order of waiting jobs: priority, then longest wait."""
        return (-self.cls.priority, self.wait_since, self.order)


def gang(
    instance: Instance,
    *,
    classes: GangClasses | None = None,
    quantum: int = DEFAULT_QUANTUM,
    packing: str = "first-fit",
    alternative: bool = True,
    over_limit: str = "refuse",
    seed: int = 0,
) -> Schedule:
    """Simulate LLNL-style gang scheduling on ``instance`` (module docstring).

    Parameters
    ----------
    instance
        Jobs released at their submit times; the machine's resume cost is
        paid by every resumed piece; busy blocks hold processors.
    classes
        Job classes and the SWF queue map (:mod:`.gang_classes`); default:
        the five LLNL classes of ``gang_classes.toml`` (jobs without a queue
        are production jobs).
    quantum
        Seconds of work per time slice, ``>= 1``.
    packing
        ``"first-fit"``, ``"best-fit"`` or ``"buddy"``.
    alternative
        Run jobs of other rows on processors idle in the current slice.
    over_limit
        A job above its class's processor limit is refused (``"refuse"``)
        or put in the default class (``"default"``).
    seed
        Unused: every choice is deterministic (ties go to the lowest row,
        processor, priority rank); kept for the common policy signature.

    Returns
    -------
    Schedule
        Pieced placements on consecutive processor ranges; producer
        ``gang:packing=P,quantum=Q`` (``,alternative=off`` when off).

    Raises
    ------
    ValueError
        Bad parameters, or a job above its class's processor limit (with
        ``over_limit="refuse"``).
    """
    del seed
    if packing not in PACKINGS:
        raise ValueError(
            f"gang: unknown packing {packing!r}; valid: {', '.join(PACKINGS)}"
        )
    if isinstance(quantum, bool) or not isinstance(quantum, int) or quantum < 1:
        raise ValueError(f"gang: quantum must be an integer >= 1, got {quantum!r}")
    chosen = classes if classes is not None else default_classes()
    of = chosen.assign(instance.jobs, over_limit)
    sim = _Gang(instance, of, quantum, packing, alternative)
    sim.run()
    producer = f"gang:packing={packing},quantum={quantum}"
    if not alternative:
        producer += ",alternative=off"
    return Schedule(sim.placements(), producer=producer)


GANG_PARAMS = ("packing", "quantum", "alternative", "classes", "over_limit")
"""Keys of a ``gang:`` spec (:func:`parse_gang_spec`)."""


def parse_gang_spec(spec: str | SpecParts) -> dict[str, object]:
    """The keyword arguments of :func:`gang` named by a spec string.

    ``gang[:key=value,...]`` with keys ``packing``, ``quantum`` (seconds),
    ``alternative`` (``on``/``off``), ``classes`` (a TOML file, read with
    :func:`~optsched.heuristics.preempt.gang_classes.load_classes`) and
    ``over_limit``; e.g. ``gang:packing=buddy,quantum=600``, the producer
    :func:`gang` writes. For a command line: ``gang(instance,
    **parse_gang_spec(text))``. The spec's tokens
    (:func:`~optsched.heuristics.spec.split_spec`) serve as well.

    Raises
    ------
    ValueError
        Another name, an unknown key or a bad value.
    """
    parts = split_spec(spec)
    if parts.name != "gang":
        raise ValueError(f"not a gang spec: {parts.text!r}")
    parts.check(GANG_PARAMS)
    out: dict[str, object] = {}
    for key, value in parts.options().items():
        if key == "quantum":
            if not value.isdigit():
                raise parts.error("quantum must be an integer")
            out[key] = int(value)
        elif key == "alternative":
            if value not in ("on", "off"):
                raise parts.error("alternative is on or off")
            out[key] = value == "on"
        elif key == "classes":
            out[key] = load_classes(value)
        else:
            out[key] = value
    return out


class _Gang:
    """The event loop (see the module docstring for the rules)."""

    def __init__(
        self,
        instance: Instance,
        classes: dict[int, JobClass],
        quantum: int,
        packing: str,
        alternative: bool,
    ) -> None:
        self.instance = instance
        self.m = instance.processors
        self.quantum = quantum
        self.packing = packing
        self.alternative = alternative
        jobs = sorted(instance.jobs, key=lambda j: j.release)
        self.tasks = [
            _Task(job, classes[job.id], k, job.runtime, job.release)
            for k, job in enumerate(jobs)
        ]
        self.arrivals = list(self.tasks)  # sorted by release; popped from the front
        self.next_arrival = 0
        self.held = _held_ranges(instance)
        self.rows: list[_Row] = []
        self.row_ids = 0
        self.current: _Row | None = None
        self.slice_end: int | None = None
        self.pinned: list[_Task] = []
        self.waiting: list[_Task] = []  # pending and parked jobs
        self.standby: list[_Task] = []
        self.running: list[_Task] = []
        self.unfinished = len(self.tasks)

    # -- the loop -------------------------------------------------------

    def run(self) -> None:
        if not self.tasks:
            return
        t = self.arrivals[0].job.release
        while True:
            self._finish(t)
            self.held = [(r, end) for r, end in self.held if end > t]
            self._arrive(t)  # places the new jobs and retries the waiting ones
            fresh = self._advance_slice(t)
            if self._preempt_overdue(t):
                self._drop_empty_rows()
                fresh = self._advance_slice(t) or fresh
            chosen = self._layout(t)
            self._apply(t, chosen)
            if fresh and self.current is not None:
                resumed = [
                    x.piece_switch
                    for x in self.current.members
                    if x.running and x.piece_start == t
                ]
                self.slice_end = t + self.quantum + max(resumed, default=0)
            if not self.unfinished:
                return
            t = self._next_event(t)

    def _next_event(self, t: int) -> int:
        times = []
        if self.next_arrival < len(self.arrivals):
            times.append(self.arrivals[self.next_arrival].job.release)
        if self.slice_end is not None and len(self.rows) > 1:
            times.append(self.slice_end)
        for x in self.running:
            times += (x.done_at, x.protect_until)
        for x in self._row_tasks():
            if not x.running and x.cls.max_wait is not None:
                times.append(x.wait_since + x.cls.max_wait)
        for x in self.waiting:
            if x.state == "pending" and x.cls.max_wait is not None:
                times.append(x.wait_since + x.cls.max_wait)
        times += [end for _, end in self.held]
        later = [time for time in times if time > t]
        if not later:  # pragma: no cover - the rules always leave an event
            raise RuntimeError(f"gang: {self.unfinished} jobs left and no event at {t}")
        return min(later)

    # -- events ---------------------------------------------------------

    def _finish(self, t: int) -> None:
        for x in [x for x in self.running if x.done_at <= t]:
            x.pieces.append(Piece(x.piece_start, t, _procs(x.span), x.piece_switch))
            x.remaining = 0
            x.running = False
            self._leave(x)
            x.state = "done"
            self.unfinished -= 1
        self.running = [x for x in self.running if x.running]
        self._drop_empty_rows()

    def _leave(self, x: _Task) -> None:
        """Take a job out of its row or list."""
        if x.row is not None:
            x.row.members.remove(x)
            x.row = None
        if x in self.pinned:
            self.pinned.remove(x)
        if x in self.standby:
            self.standby.remove(x)
        if x in self.waiting:
            self.waiting.remove(x)

    def _arrive(self, t: int) -> None:
        while (
            self.next_arrival < len(self.arrivals)
            and self.arrivals[self.next_arrival].job.release <= t
        ):
            x = self.arrivals[self.next_arrival]
            self.next_arrival += 1
            if x.job.runtime == 0:
                # Nothing to run: done at its release, on processors it never holds.
                x.pieces.append(Piece(t, t, _procs((0, x.job.size))))
                x.state = "done"
                self.unfinished -= 1
            elif x.cls.standby:
                x.state = "standby"
                self.standby.append(x)
            else:
                x.state = "pending"
                self.waiting.append(x)
        self._retry_waiting()

    def _retry_waiting(self) -> None:
        for x in sorted(self.waiting, key=_Task.rank):
            if not x.cls.preemptible:
                placed = self._place_pinned(x)
            elif x.started:
                placed = self._rehome(x, exclude=None)
            else:
                placed = self._place_in_rows(x)
            if placed:
                self.waiting.remove(x)

    # -- the matrix -----------------------------------------------------

    def _global_busy(self) -> list[Interval]:
        """Processors no row may claim: held ones and non-preemptible jobs'."""
        return [r for r, _ in self.held] + [x.claim for x in self.pinned if x.claim]

    def _new_row(self) -> _Row:
        self.row_ids += 1
        row = _Row(self.row_ids)
        self.rows.append(row)
        return row

    def _join(self, x: _Task, row: _Row, claim: Interval) -> None:
        x.claim, x.row, x.state = claim, row, "row"
        row.members.append(x)

    def _place_in_rows(self, x: _Task) -> bool:
        """Packing of a job that never ran into the rows, else a new row."""
        busy = self._global_busy()
        best: tuple[int, int, Interval, _Row] | None = None
        for row in self.rows:
            free = free_runs(busy + row.claims(), self.m)
            claim = place(free, x.job.size, self.packing, self.m)
            if claim is None:
                continue
            if self.packing != "best-fit":
                self._join(x, row, claim)
                return True
            left = sum(e - a for a, e in free) - (claim[1] - claim[0])
            if best is None or (left, row.id) < best[:2]:
                best = (left, row.id, claim, row)
        if best is not None:
            self._join(x, best[3], best[2])
            return True
        claim = place(free_runs(busy, self.m), x.job.size, self.packing, self.m)
        if claim is None:
            return False
        self._join(x, self._new_row(), claim)
        return True

    def _rehome(self, x: _Task, exclude: _Row | None) -> bool:
        """Put a job that has run back in a row, on its own processors."""
        assert x.claim is not None
        if not is_free(self._global_busy(), x.claim):
            return False
        for row in self.rows:
            if row is not exclude and is_free(row.claims(), x.claim):
                self._join(x, row, x.claim)
                return True
        self._join(x, self._new_row(), x.claim)
        return True

    def _place_pinned(self, x: _Task) -> bool:
        """A non-preemptible job takes a range free in every row, or waits."""
        busy = self._global_busy() + [c for row in self.rows for c in row.claims()]
        claim = place(free_runs(busy, self.m), x.job.size, self.packing, self.m)
        if claim is None:
            return False
        self._pin(x, claim)
        return True

    def _pin(self, x: _Task, claim: Interval) -> None:
        x.claim, x.state = claim, "pinned"
        self.pinned.append(x)

    def _drop_empty_rows(self) -> None:
        self.rows = [row for row in self.rows if row.members]

    def _row_tasks(self) -> list[_Task]:
        return [x for row in self.rows for x in row.members]

    def _advance_slice(self, t: int) -> bool:
        """Start the next row's slice if the current one is over or gone."""
        self._drop_empty_rows()
        gone = self.current is None or self.current not in self.rows
        expired = self.slice_end is not None and t >= self.slice_end
        if not (gone or expired):
            return False
        if not self.rows:
            self.current, self.slice_end = None, None
            return False
        after = self.current.id if self.current is not None else 0
        later = [row for row in self.rows if row.id > after]
        self.current = later[0] if later else self.rows[0]
        return True

    # -- maximum wait and the cost function -------------------------------

    def _preempt_overdue(self, t: int) -> bool:
        """Let the jobs past their maximum wait preempt (module docstring)."""
        overdue = [
            x
            for x in self._row_tasks()
            + [y for y in self.waiting if y.state == "pending"]
            if not x.running
            and x.row is not self.current
            and x.cls.max_wait is not None
            and t - x.wait_since >= x.cls.max_wait
        ]
        moved: set[int] = set()
        changed = False
        for x in sorted(overdue, key=_Task.rank):
            if x.cls.preemptible:
                done = self._take_slot(x, t, moved)
            else:
                done = self._take_range(x, t, moved)
            if done:
                moved.add(id(x))
                changed = True
        return changed

    def _cost(
        self, x: _Task, victims: list[_Task], t: int, moved: set[int]
    ) -> Cost | None:
        """LLNL cost of preempting ``victims`` for ``x``; ``None``: not allowed."""
        for v in victims:
            if (
                v.cls.priority > x.cls.priority
                or id(v) in moved
                or not v.cls.preemptible
            ):
                return None
        if not victims:
            return (-math.inf, 0, t)
        return (
            max(v.cls.priority for v in victims),
            sum(v.job.size for v in victims),
            max(max(v.protect_until, t) if v.running else t for v in victims),
        )

    def _cheapest(
        self,
        x: _Task,
        claims: Iterable[Interval],
        busy: Sequence[Interval],
        holders: Iterable[_Task],
        t: int,
        moved: set[int],
    ) -> tuple[Interval, list[_Task]] | None:
        """The free claim whose victims among ``holders`` cost least, and them.

        Ties go to the lower claim; ``None`` when every claim has a victim
        that may not be preempted.
        """
        holders = list(holders)
        best: tuple[Cost, Interval, list[_Task]] | None = None
        for claim in claims:
            if not is_free(busy, claim):
                continue
            victims = [v for v in holders if overlaps(v.claim or (0, 0), claim)]
            cost = self._cost(x, victims, t, moved)
            if cost is not None and (best is None or (cost, claim) < best[:2]):
                best = (cost, claim, victims)
        return None if best is None else (best[1], best[2])

    def _take_slot(self, x: _Task, t: int, moved: set[int]) -> bool:
        """A waiting job of a row moves into the current slot."""
        current = self.current
        if current is None:
            return False
        busy = self._global_busy()
        if x.started:
            assert x.claim is not None
            claims = [x.claim]  # it keeps its processors: no migration
        else:
            bounds = [b for c in current.claims() + busy for b in c]
            claims = candidate_claims(x.job.size, self.packing, self.m, bounds)
        best = self._cheapest(x, claims, busy, current.members, t, moved)
        if best is None:
            return False
        claim, victims = best
        self._leave(x)
        self._join(x, current, claim)
        for v in victims:
            current.members.remove(v)
            v.row = None
            self._rehome(v, exclude=current)
        return True

    def _take_range(self, x: _Task, t: int, moved: set[int]) -> bool:
        """A waiting non-preemptible job parks the jobs on a range of every row."""
        busy = self._global_busy()
        members = self._row_tasks()
        bounds = [b for c in busy + [v.claim for v in members if v.claim] for b in c]
        claims = candidate_claims(x.job.size, self.packing, self.m, bounds)
        best = self._cheapest(x, claims, busy, members, t, moved)
        if best is None:
            return False
        claim, victims = best
        self._leave(x)
        self._pin(x, claim)
        for v in victims:
            self._leave(v)
            v.state = "parked"
            self.waiting.append(v)
        return True

    # -- who runs now ---------------------------------------------------

    def _layout(self, t: int) -> list[tuple[_Task, bool]]:
        """The jobs that run from ``t``, each with "in its own slot" or not.

        Order: jobs still inside their protection (switch, minimum slice),
        non-preemptible jobs, the current row, other rows (alternative
        scheduling), standby jobs. Each later group only gets processors
        the earlier ones leave; the current row's and non-preemptible
        jobs' processors are reserved even while they wait.
        """
        occupied: list[Interval] = [r for r, _ in self.held]
        chosen: list[tuple[_Task, bool]] = []
        taken: set[int] = set()

        def add(x: _Task, own: bool) -> None:
            if id(x) not in taken and is_free(occupied, x.span):
                occupied.append(x.span)
                chosen.append((x, own))
                taken.add(id(x))

        for x in self.running:
            if x.protect_until > t:
                occupied.append(x.span)
                chosen.append((x, True))
                taken.add(id(x))
        for x in self.pinned:
            add(x, True)
        occupied += [x.span for x in self.pinned]
        current = self.current
        if current is not None:
            for x in current.members:
                add(x, True)
            occupied += [x.span for x in current.members]
            if self.alternative:
                for row in self._round_robin_after(current):
                    for x in row.members:
                        add(x, False)
        for x in self.standby:
            if not x.started:  # free to choose until it first runs
                x.claim = place(
                    free_runs(occupied, self.m), x.job.size, self.packing, self.m
                )
            if x.claim is not None:
                add(x, False)
        return chosen

    def _round_robin_after(self, current: _Row) -> list[_Row]:
        later = [row for row in self.rows if row.id > current.id]
        return later + [row for row in self.rows if row.id < current.id]

    def _apply(self, t: int, chosen: list[tuple[_Task, bool]]) -> None:
        keep = {id(x) for x, _ in chosen}
        for x in self.running:
            if id(x) not in keep:
                work = t - x.piece_start - x.piece_switch
                assert work >= 0, "a piece stopped inside its switch"
                x.pieces.append(Piece(x.piece_start, t, _procs(x.span), x.piece_switch))
                x.remaining -= work
                x.running = False
                x.wait_since = t
        for x, own in chosen:
            if x.running:
                continue
            switch = self.instance.machine.resume_cost(x.job.size) if x.pieces else 0
            x.running = True
            x.piece_start, x.piece_switch = t, switch
            # At least one second of work per piece: with switches longer
            # than the maximum waits and no minimum slice, jobs would
            # otherwise preempt each other forever without progress.
            least = x.cls.min_slice(x.job.size) if own else 0
            x.protect_until = t + switch + max(least, 1)
        self.running = [x for x, _ in chosen]

    def placements(self) -> dict[int, Placement]:
        return {x.job.id: Placement.of_pieces(x.pieces) for x in self.tasks}


def _procs(span: Interval) -> ProcessorSet:
    # Kept as one interval: a job of 10**6 processors costs two integers.
    return (
        ProcessorSet([(span[0], span[1] - 1)])
        if span[1] > span[0]
        else ProcessorSet([])
    )


def _held_ranges(instance: Instance) -> list[tuple[Interval, int]]:
    """Busy blocks as ``(processor range, held until)``, held from time 0.

    A contiguous machine's blocks have their ranges; on an ``any`` machine
    blocks are counts, given ranges by first fit in order of start: a
    processor is reused by a block that starts after the previous one ended,
    so no more than ``m`` processors are ever needed (the machine checks
    that blocks fit). Consecutive ranges keep the rows' claims consecutive.
    """
    blocks = [b for b in instance.machine.unavailable if b.end > b.start]
    out: list[tuple[Interval, int]] = []
    if instance.machine.allocation == "contiguous":
        for b in blocks:
            assert b.offset is not None
            out.append(((b.offset, b.offset + b.size), b.end))
        return out
    # Segments (first, end, held until) partition [0, m); a block takes the
    # lowest processors whose last block ended by its start, splitting a
    # segment where it needs only part of it. Costs the number of blocks
    # and segments, not m.
    segments: list[tuple[int, int, int]] = [(0, instance.processors, 0)]
    for b in sorted(blocks, key=lambda b: (b.start, b.end)):
        need, updated = b.size, []
        for first, end, until in segments:
            if need and until <= b.start:
                take = min(need, end - first)
                updated.append((first, first + take, b.end))
                if first + take < end:
                    updated.append((first + take, end, until))
                need -= take
            else:
                updated.append((first, end, until))
        segments = updated
    return [((first, end), until) for first, end, until in segments if until > 0]


__all__ = ["DEFAULT_QUANTUM", "GANG_PARAMS", "PACKINGS", "gang", "parse_gang_spec"]
