r"""Preemptive offline algorithms for rigid parallel jobs: PBI, PSRS, batches.

Both algorithms schedule a *batch*: every job is available at the batch
start ``start`` (``pbi(instance, start=t)``), the machine has no busy
block, and a job may be interrupted and resumed later, possibly on other
processors. Their schedules are made of pieces
(:meth:`optsched.schedule.Placement.of_pieces`); a job that runs in one
stretch gets a plain placement. :func:`batched` runs either one (or any
function of the same signature) in the batch framework for jobs with
release times.

Context switches: when the machine charges a resume cost
(:meth:`optsched.instance.Machine.resume_cost`), every resumed piece (not
the first piece of a job) starts with it: the job holds its processors for
``switch`` seconds and then works. The algorithms decide as if switches were
free and the layout in real time makes room for them, so the schedule stays
valid and the job's work stays its run time.

PBI: Preemptive By Interleaving
-------------------------------
U. Schwiegelshohn, J. Turek, J. L. Wolf, "Preemptive scheduling of parallel
tasks", IBM Research Report RC 20104, 1995, as printed in B. Kalthoff's
thesis (2002; seed 001 §1.2), guaranteed within 2.5 of the optimal weighted
response time. Two *full-width* schedules ``S1`` and ``S2`` (each may use
all ``m`` processors) are built side by side in a common *virtual* time
``τ`` and then interleaved stripe by stripe in real time, so that every
processor is shared by at most two jobs in progress (one of each schedule).

The printed steps, and the reading implemented here:

1. *Order.* "Job ``i`` precedes job ``j`` if ``1/(w_i h_i) < 1/(w_j h_j)``."
   ``order="literal"``: ``w`` is the width (as in steps 2 and 3), so the
   list is by non-increasing area ``q_j p_j`` (jobs of area 0 last:
   ``1/0 = ∞``). ``order="smith"`` (default): Smith's ratio
   ``w_j / (q_j p_j)`` non-increasing with ``w_j`` the weight (``weights``
   option: the job's own, ``one``, ``size`` or ``area``), jobs of area 0
   first. Ties keep the instance's order. The literal reading cannot be
   the one of the 2.5 guarantee: on a 5-job instance (unit weights) it
   exceeds 2.5 times a feasible schedule (a test shows it), and on random
   batches it is far worse than the Smith order.
2. *Move back.* "Determine the number of currently available processors
   ``P_S1`` in ``S1``. If at the same time ``S2`` contains a job ``j`` with
   ``w_j < P_S1``, move the remaining computation of ``j`` into ``S1``."
   Read in virtual time: at the current instant ``τ``, the jobs running in
   ``S2``, in list order, each move to ``S1`` if they fit beside the jobs
   running in ``S1`` (first fit); a moved job continues from ``τ`` in
   ``S1`` on processors free there. All moves of an instant come before the
   next job of step 3 (the loop returns to step 2 before every job; the jobs
   in ``S2`` come earlier in the list than any job not yet placed).
3. *Place.* "Take the next job ``i`` from the list. If ``P_S1 > w_i``,
   insert ``i`` into ``S1``, otherwise into ``S2``." The job starts at
   ``τ`` in ``S1`` if it fits there, else at ``τ`` in ``S2`` if it fits
   there (``S2`` is a schedule too: its jobs may not share processors).
   If it fits in neither, the list waits (strict list order: no later job
   overtakes it) and ``τ`` advances to the next completion in ``S1`` or
   ``S2``, where step 2 runs again.
4. "If the list is not empty, go to step 2." With ``move_back="list"``
   (default, as printed) no job moves once the list is empty; with
   ``"always"`` step 2 also runs at every later completion, until ``S2`` is
   empty.

   *Fit tests.* The printed tests are strict (``w_j < P_S1``,
   ``P_S1 > w_i``); the note says to use ``<=`` in practice, which is the
   default (``strict=False``): with strict tests a job as wide as the
   machine could never run in ``S1``. On an ``any`` machine ``P_S1`` is the
   number of free processors of ``S1`` at ``τ``; on a ``contiguous``
   machine it is the widest free range (a job takes the lowest free range
   that fits, in both schedules), so every piece is a consecutive range.
5. *Stripes.* Virtual time is cut where a job moves from ``S2`` to ``S1``
   and where a job of ``S2`` completes (and nowhere else).
6. *Interleave.* The stripes run in order; each stripe ``[a, b)`` runs its
   ``S1`` part, then its ``S2`` part ("alternately, starting with the first
   stripe of S1"). In a part, virtual time ``u`` maps to real time
   ``R + c + (u - f)``: ``R`` is where the part starts, ``c`` the largest
   resume cost paid by a job continuing into the part (0 without costs),
   ``f`` the first virtual instant with work in the part (``a`` when a job
   continues into it). A part lasts ``c`` plus the time from ``f`` to the
   last end of its work in the stripe (idle time at the head or the tail of
   a part is skipped, a part without work takes no time). The cut at
   ``S2`` completions lets an ``S2`` job end before the rest of the
   stripe's ``S1`` part runs; the cut at a move puts the ``S2`` part of
   the moved job before its ``S1`` continuation.

Pieces: a job's work in consecutive parts on the same processors with no
real gap forms one piece (so a job alone in its schedule for a while is not
preempted); otherwise the later piece is resumed. A job continuing into a
part where someone pays a resume cost ``c > 0`` is resumed too (it cannot
work during ``[R, R + c)``, where the virtual time does not advance); its
piece starts at ``R + c - c_j`` with its own cost ``c_j``.

Why at most two jobs share a processor: in virtual time each schedule is a
valid schedule, so a processor holds at most one job of ``S1`` and one of
``S2`` at every ``τ``; the map from virtual to real time is increasing
within each schedule, and a resumed piece's switch window starts after the
previous part ends, so the residencies (first to last piece on a processor,
see :func:`optsched.check.max_jobs_per_processor`) of the ``S1`` jobs on a
processor are disjoint, and those of the ``S2`` jobs as well. A moved job
leaves its ``S2`` processors at the move.

PSRS: Preemptive Smith Ratio Scheduling
---------------------------------------
U. Schwiegelshohn, "Preemptive weighted completion time scheduling of
parallel jobs", SIAM J. Comput. 33(6):1280-1308, 2004 (abstract: factor
2.37 for ``sum w_j C_j`` without preemption penalty, jobs all at time 0).
The full text was not available to us; what is implemented is our reading
of the algorithm's published outline (Smith-ratio list scheduling in which
*wide* jobs, those needing more than half the machine, preempt the running
jobs), stated precisely so that it can be checked against the paper:

1. The list: jobs by non-increasing *modified Smith ratio*
   ``w_j / (max(q_j, m/2) p_j)`` (jobs of length 0 first; ties keep the
   instance's order). A job is *wide* if ``q_j > m/2``, *small* otherwise.
2. Strict list scheduling from ``start``: at every completion the jobs at
   the head of the list start, in list order, while they fit on the free
   processors (lowest indices; the lowest free range on a contiguous
   machine). No later job overtakes the head.
3. A wide job at the head that does not fit waits while more than ``m/2``
   processors work (the list waits with it). When at most ``m/2`` work
   and no other wide job runs (two never fit together), it starts anyway:
   running jobs are suspended, lowest priority first, until it fits (it
   takes the suspended jobs' processors first; on a contiguous machine the
   lowest range over free and suspended processors, and a job outside
   that range is not suspended after all). Only jobs that have worked
   since they last started or resumed may be suspended: if that is not
   enough, the wide head waits for the next completion (so no job is
   stopped at the instant it starts, and no piece is empty). The list then
   continues beside the wide job. Preempting only then keeps the machine
   at least half busy, which is what the analysis of such list schedules
   needs, without stopping jobs that keep it busy anyway.
4. A suspended job keeps its processors (no other job takes them) and
   resumes on them when the wide job ends; suspended jobs resume before
   any new job starts (they come earlier in the list).

Per-job guarantee of this reading (``any`` machine, no resume cost), used
by the tests. Let ``D_j`` be the instant the list passes job ``j``. Before
``D_j``, at every instant either a wide job runs (more than ``m/2``
processors work), or the head ``h`` (no later than ``j``) waits: a small
head does not fit, so more than ``m - q_h >= m/2`` processors work; a wide
head waits while more than ``m/2`` work, or *stalls* until the next
completion. All working jobs precede ``j`` (jobs are suspended only while
a wide job runs); each stall ends at the completion of a distinct job
preceding ``j``, so the stalls last at most ``sum_{i ≺ j} p_i``. After
``D_j``, job ``j`` works or waits for a wide job that follows it in the
list. Hence

.. math:: C_j \le \mathrm{start} + \frac{2}{m} \sum_{i \prec j} q_i p_i
          + \sum_{i \prec j} p_i + p_j + \sum_{i \succ j,\, q_i > m/2} p_i .

This is a sanity property, much weaker than the paper's 2.37; the
benchmark (``benchmarks/preemptive.py``) measures the ratios. The modified
ratio charges a small job at least half the machine, the utilisation the
rule above guarantees.

Batches
-------
:func:`batched`: the batch framework of D. B. Shmoys, J. Wein, D. P.
Williamson, "Scheduling parallel machines on-line", SIAM J. Comput.
24(6):1313-1331, 1995 (as the ``batch`` shelf policy of
:mod:`optsched.heuristics.shelf.policies`): when no batch runs, every
released job that waits forms a batch, scheduled by the offline algorithm
from that instant; jobs released while it runs wait until its last piece
has ended. A factor ``ρ`` offline algorithm for ``sum w_j C_j`` is not
turned into a factor ``2ρ`` this way (that argument is for the makespan);
the framework is what the issue asks for, not a guarantee.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from typing import Protocol

from optsched.heuristics.shelf.algorithms import item_weight
from optsched.heuristics.spec import SpecParts, split_spec
from optsched.instance import Instance, Job, Machine
from optsched.schedule import Piece, Placement, ProcessorSet, Schedule

__all__ = [
    "PBI_ORDERS",
    "PREEMPTIVE_ALGORITHMS",
    "BatchAlgorithm",
    "batched",
    "parse_preemptive",
    "pbi",
    "pbi_order",
    "psrs",
    "psrs_order",
]

PBI_ORDERS = ("smith", "literal")
"""Readings of PBI's priority rule (see the module docstring, step 1)."""
MOVE_BACK = ("list", "always")
"""When PBI moves work from ``S2`` to ``S1`` (step 4)."""
WEIGHTS = ("instance", "one", "size", "area")
"""The ``w_j`` of the Smith ratios (as the ``weights`` of a ``wct``
objective; ``instance`` is the job's own weight)."""

Runs = tuple[tuple[int, int], ...]
"""Processors as sorted disjoint inclusive ranges ``(first, last)``."""

EXPANDED = 1 << 16
"""Processor sets up to this size become tuples; wider ones stay ranges."""


class BatchAlgorithm(Protocol):
    """An offline algorithm for a batch: all jobs available at ``start``."""

    def __call__(self, instance: Instance, *, start: int = 0) -> Schedule: ...


# --------------------------------------------------------------------------
# Free processors of one full-width schedule
# --------------------------------------------------------------------------


class _Free:
    """The free processors of an ``m``-processor schedule, as ranges.

    Memory is the number of ranges, never ``m``: machines of ``2**53``
    processors are valid instances.
    """

    __slots__ = ("runs",)

    def __init__(self, m: int) -> None:
        self.runs: list[tuple[int, int]] = [(0, m - 1)]

    def available(self, contiguous: bool) -> int:
        """Free processors (``any``) or the widest free range (contiguous)."""
        lengths = [b - a + 1 for a, b in self.runs]
        if contiguous:
            return max(lengths, default=0)
        return sum(lengths)

    def take(self, size: int, contiguous: bool) -> Runs:
        """The lowest ``size`` free processors (the lowest range that fits,
        on a contiguous machine); the caller checked :meth:`available`."""
        if contiguous:
            for k, (a, b) in enumerate(self.runs):
                if b - a + 1 >= size:
                    self._cut(k, a + size)
                    return ((a, a + size - 1),)
            raise AssertionError("no free range of this width")
        taken: list[tuple[int, int]] = []
        need = size
        while need:
            a, b = self.runs[0]
            if b - a + 1 <= need:
                taken.append((a, b))
                need -= b - a + 1
                del self.runs[0]
            else:
                taken.append((a, a + need - 1))
                self.runs[0] = (a + need, b)
                need = 0
        return tuple(taken)

    def _cut(self, k: int, new_first: int) -> None:
        b = self.runs[k][1]
        if new_first > b:
            del self.runs[k]
        else:
            self.runs[k] = (new_first, b)

    def give(self, runs: Runs) -> None:
        """Free ``runs`` again (they were taken from here)."""
        self.runs = list(_normal([*self.runs, *runs]))

    def remove(self, runs: Runs) -> None:
        """Take exactly ``runs`` (all free)."""
        self.runs = list(_minus(tuple(self.runs), runs))


def _processors(runs: Runs) -> Sequence[int]:
    width = sum(b - a + 1 for a, b in runs)
    if width > EXPANDED:
        return ProcessorSet(runs)
    return tuple(p for a, b in runs for p in range(a, b + 1))


def _fits(size: int, available: int, strict: bool) -> bool:
    return size < available if strict else size <= available


# --------------------------------------------------------------------------
# Shared checks and orders
# --------------------------------------------------------------------------


def _batch(instance: Instance, start: int, name: str) -> list[Job]:
    """The jobs, refusing what the batch algorithms do not model."""
    machine = instance.machine
    if machine.unavailable:
        raise ValueError(
            f"{name}: the machine has busy blocks, which {name} does not "
            "model; give a machine without busy blocks"
        )
    if start < 0:
        raise ValueError(f"{name}: start {start} is negative")
    for job in instance.jobs:
        if job.release > start:
            raise ValueError(
                f"{name}: job {job.id} is released at {job.release}, after the "
                f"batch start {start}; schedule jobs with releases with "
                f"batched(instance, {name!r})"
            )
    return list(instance.jobs)


def _check_weights(weights: str) -> None:
    if weights not in WEIGHTS:
        raise ValueError(f"weights {weights!r} is not one of {', '.join(WEIGHTS)}")


def pbi_order(
    jobs: Iterable[Job], order: str = "smith", weights: str = "instance"
) -> list[Job]:
    """PBI's priority list (step 1; module docstring).

    ``"literal"``: non-increasing ``q_j p_j`` (the printed
    ``1/(w_i h_i) < 1/(w_j h_j)`` with ``w`` the width; area 0 last).
    ``"smith"``: non-increasing ``w_j / (q_j p_j)`` (area 0 first). Stable:
    ties keep the given order.
    """
    _check_weights(weights)
    jobs = list(jobs)
    if order == "literal":
        return sorted(jobs, key=lambda j: -j.area)
    if order == "smith":

        def ratio(job: Job) -> float:
            w = item_weight(job, job.runtime, weights)
            return float("inf") if job.area == 0 else w / job.area

        return sorted(jobs, key=lambda j: -ratio(j))
    raise ValueError(f"order {order!r} is not one of {', '.join(PBI_ORDERS)}")


def psrs_order(jobs: Iterable[Job], m: int, weights: str = "instance") -> list[Job]:
    """PSRS's list: non-increasing ``w_j / (max(q_j, m/2) p_j)``.

    Computed as ``2 w_j / (max(2 q_j, m) p_j)`` (no rounding of ``m/2``);
    jobs of length 0 first; stable.
    """
    _check_weights(weights)

    def ratio(job: Job) -> float:
        if job.runtime == 0:
            return float("inf")
        w = item_weight(job, job.runtime, weights)
        return 2 * w / (max(2 * job.size, m) * job.runtime)

    return sorted(jobs, key=lambda j: -ratio(j))


# --------------------------------------------------------------------------
# PBI: the two schedules in virtual time
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Segment:
    """A stretch ``[start, end)`` of virtual time of one job in one schedule
    (``lane`` 0 is ``S1``, 1 is ``S2``) on fixed processors."""

    job: int
    lane: int
    start: int
    end: int
    runs: Runs


@dataclass(slots=True)
class _Virtual:
    """PBI's two schedules: their segments and the stripe cuts."""

    segments: list[_Segment] = field(default_factory=list)
    cuts: set[int] = field(default_factory=set)


@dataclass(slots=True)
class _Open:
    start: int
    end: int
    runs: Runs


def _pbi_virtual(
    ordered: Sequence[Job],
    m: int,
    contiguous: bool,
    strict: bool,
    move_back: str,
) -> _Virtual:
    """Steps 1-5 of PBI in virtual time (from 0)."""
    out = _Virtual()
    free = (_Free(m), _Free(m))
    running: tuple[dict[int, _Open], dict[int, _Open]] = ({}, {})
    rank = {job.id: k for k, job in enumerate(ordered)}
    size = {job.id: job.size for job in ordered}
    pending = list(reversed(ordered))  # pop() takes the head of the list
    tau = 0

    def close(lane: int, jid: int, at: int) -> _Open:
        seg = running[lane].pop(jid)
        out.segments.append(_Segment(jid, lane, seg.start, at, seg.runs))
        free[lane].give(seg.runs)
        return seg

    while pending or running[0] or running[1]:
        for lane in (0, 1):
            for jid in [j for j, s in running[lane].items() if s.end == tau]:
                close(lane, jid, tau)
                if lane == 1:
                    out.cuts.add(tau)  # step 5: a job of S2 completes
        if pending or move_back == "always":
            for jid in sorted(running[1], key=rank.__getitem__):  # step 2
                if _fits(size[jid], free[0].available(contiguous), strict):
                    seg = close(1, jid, tau)
                    runs = free[0].take(size[jid], contiguous)
                    running[0][jid] = _Open(tau, seg.end, runs)
                    out.cuts.add(tau)  # step 5: work moves from S2 to S1
        while pending:  # step 3, strict list order
            job = pending[-1]
            if _fits(job.size, free[0].available(contiguous), strict):
                lane = 0
            elif job.size <= free[1].available(contiguous):
                lane = 1
            else:
                break
            pending.pop()
            runs = free[lane].take(job.size, contiguous)
            if job.runtime == 0:
                out.segments.append(_Segment(job.id, lane, tau, tau, runs))
                free[lane].give(runs)
            else:
                running[lane][job.id] = _Open(tau, tau + job.runtime, runs)
        ends = [s.end for lane in running for s in lane.values()]
        if not ends:
            # An empty S2 takes any job, so the list cannot be stuck.
            assert not pending
            break
        tau = min(ends)
    return out


# --------------------------------------------------------------------------
# PBI: stripes in real time
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Pieces:
    """The real pieces of each job, built part after part."""

    cost: Callable[[int], int]
    pieces: dict[int, list[Piece]] = field(default_factory=dict)

    def last(self, jid: int) -> Piece | None:
        found = self.pieces.get(jid)
        return found[-1] if found else None

    def add(self, jid: int, piece: Piece) -> None:
        self.pieces.setdefault(jid, []).append(piece)

    def extend(self, jid: int, end: int) -> None:
        old = self.pieces[jid][-1]
        self.pieces[jid][-1] = Piece(old.start, end, old.processors, old.switch)


def _stripes(virtual: _Virtual) -> list[tuple[int, int]]:
    end = max((s.end for s in virtual.segments), default=0)
    cuts = sorted({0, end} | {c for c in virtual.cuts if 0 < c < end})
    return list(pairwise(cuts)) or [(0, 0)]


def _split(virtual: _Virtual, stripes: list[tuple[int, int]]) -> list[list[_Segment]]:
    """Each segment cut at the stripe boundaries: the parts' contents, in
    real order (stripe ``k`` gives part ``2k`` for ``S1``, ``2k+1`` for
    ``S2``)."""
    parts: list[list[_Segment]] = [[] for _ in range(2 * len(stripes))]
    starts = [a for a, _ in stripes]

    for seg in virtual.segments:
        k = max(0, bisect.bisect_right(starts, seg.start) - 1)
        if seg.start == seg.end:
            parts[2 * k + seg.lane].append(seg)
            continue
        at = seg.start
        while at < seg.end:
            upto = min(seg.end, stripes[k][1])
            if upto > at:
                parts[2 * k + seg.lane].append(
                    _Segment(seg.job, seg.lane, at, upto, seg.runs)
                )
            at = upto
            k += 1
    return parts


def _lay_out(
    virtual: _Virtual, origin: int, cost: Callable[[int], int]
) -> dict[int, list[Piece]]:
    """Step 6: the parts in real time, from ``origin`` (module docstring)."""
    stripes = _stripes(virtual)
    parts = _split(virtual, stripes)
    out = _Pieces(cost)
    real = origin
    for index, subs in enumerate(parts):
        if not subs:
            continue
        a = stripes[index // 2][0]
        real = _lay_out_part(out, subs, a, real)
    return out.pieces


def _lay_out_part(out: _Pieces, subs: list[_Segment], a: int, real: int) -> int:
    """One part starting at real time ``real``; returns where it ends.

    Virtual time ``u`` of the part maps to ``real + switch + (u - first)``:
    ``first`` is where its work starts (the stripe start ``a`` when a job
    continues into the part, else its earliest start: an idle head is
    skipped like an idle tail).
    """
    continuing = {s.job for s in subs if out.last(s.job) is not None}
    # Virtual time does not split a job's work, so a job with earlier pieces
    # continues from the start of the stripe.
    assert all(s.start == a for s in subs if s.job in continuing)
    first = min(s.start for s in subs)

    def seamless(s: _Segment) -> bool:
        last = out.last(s.job)
        assert last is not None
        return last.end == real and last.processors == _processors(s.runs)

    resumed = {s.job for s in subs if s.job in continuing and not seamless(s)}
    switch = max((out.cost(j) for j in continuing), default=0) if resumed else 0
    for s in subs:
        begin = real + switch + (s.start - first)
        finish = real + switch + (s.end - first)
        if s.job in continuing and (switch > 0 or s.job in resumed):
            c = out.cost(s.job)
            out.add(s.job, Piece(begin - c, finish, _processors(s.runs), c))
        elif s.job in continuing:
            out.extend(s.job, finish)
        else:
            out.add(s.job, Piece(begin, finish, _processors(s.runs)))
    return real + switch + max(s.end for s in subs) - first


# --------------------------------------------------------------------------
# PBI: the public function
# --------------------------------------------------------------------------


def pbi(
    instance: Instance,
    *,
    order: str = "smith",
    strict: bool = False,
    move_back: str = "list",
    weights: str = "instance",
    start: int = 0,
) -> Schedule:
    r"""PBI (Preemptive By Interleaving) on a batch released by ``start``.

    Schwiegelshohn, Turek, Wolf (IBM RC 20104, 1995), as printed in
    Kalthoff (2002), seed 001 §1.2: within 2.5 of the optimal
    ``sum_j w_j C_j``, at most two jobs in progress per processor. Every
    reading of the printed steps is in the module docstring.

    Parameters
    ----------
    instance
        Jobs all released by ``start``; a machine without busy blocks,
        ``any`` or ``contiguous`` (every piece a consecutive range then).
    order
        ``"smith"``: ``w_j / (q_j p_j)`` non-increasing; ``"literal"``: the
        printed rule with ``w`` the width, i.e. area ``q_j p_j``
        non-increasing.
    strict
        Use the printed strict fit tests (``w_j < P_S1``) instead of ``<=``.
    move_back
        ``"list"`` (as printed: moves while the list is not empty) or
        ``"always"`` (until ``S2`` is empty).
    weights
        ``w_j`` of the Smith order: ``"instance"``, ``"one"``, ``"size"``,
        ``"area"``.
    start
        Batch start: real time of virtual time 0.

    Returns
    -------
    Schedule
        Pieced placements with processor sets; producer
        ``"pbi:order=smith"`` plus the options that differ from the
        defaults.

    Examples
    --------
    >>> from optsched.instance import Instance, Job, Machine
    >>> inst = Instance(Machine(2), (Job(1, 0, 1, 4), Job(2, 0, 2, 2)))
    >>> s = pbi(inst)  # job 1 in S1, job 2 (does not fit beside) in S2
    >>> [(p.start, p.end) for p in s[1].pieces], (s[2].start, s[2].end)
    ([(0, 2), (4, 6)], (2, 4))
    """
    if move_back not in MOVE_BACK:
        raise ValueError(f"move_back {move_back!r} is not one of list, always")
    jobs = _batch(instance, start, "pbi")
    ordered = pbi_order(jobs, order, weights)
    machine = instance.machine
    contiguous = machine.allocation == "contiguous"
    virtual = _pbi_virtual(ordered, machine.processors, contiguous, strict, move_back)
    sizes = {job.id: job.size for job in jobs}
    pieces = _lay_out(virtual, start, lambda jid: machine.resume_cost(sizes[jid]))
    placements = {jid: Placement.of_pieces(p) for jid, p in pieces.items()}
    options = [f"order={order}"]
    if strict:
        options.append("strict=true")
    if move_back != "list":
        options.append(f"move_back={move_back}")
    if weights != "instance":
        options.append(f"weights={weights}")
    return Schedule(placements, "pbi:" + ",".join(options))


# --------------------------------------------------------------------------
# PSRS
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    """A job's open piece: ``[start, ...)`` with ``switch`` then work."""

    start: int
    switch: int
    end: int
    runs: Runs


class _PSRS:
    """The event loop of PSRS (module docstring, steps 2 to 4)."""

    def __init__(self, machine: Machine, ordered: list[Job], start: int) -> None:
        self.machine = machine
        self.m = machine.processors
        self.contiguous = machine.allocation == "contiguous"
        self.ordered = ordered
        self.rank = {job.id: k for k, job in enumerate(ordered)}
        self.next = 0  # the head of the list
        self.now = start
        self.free = _Free(self.m)  # neither running nor kept by a suspended job
        self.running: dict[int, _Run] = {}
        self.left: dict[int, int] = {job.id: job.runtime for job in ordered}
        self.suspended: dict[int, Runs] = {}
        self.wide: int | None = None  # the wide job running, if any
        self.pieces: dict[int, list[Piece]] = {}

    def is_wide(self, job: Job) -> bool:
        return 2 * job.size > self.m and job.runtime > 0

    def run(self) -> dict[int, list[Piece]]:
        while True:
            self.complete()
            self.resume_all()
            self.start_heads()
            ends = [r.end for r in self.running.values()]
            if not ends:
                assert self.next == len(self.ordered) and not self.suspended
                return self.pieces
            self.now = min(ends)

    def complete(self) -> None:
        for jid in [j for j, r in self.running.items() if r.end == self.now]:
            run = self.running.pop(jid)
            self.close(jid, run)
            self.free.give(run.runs)
            if jid == self.wide:
                self.wide = None

    def close(self, jid: int, run: _Run) -> None:
        piece = Piece(run.start, self.now, _processors(run.runs), run.switch)
        self.pieces.setdefault(jid, []).append(piece)

    def resume_all(self) -> None:
        # Suspended jobs precede every job not started yet: they go first,
        # as soon as their own processors are free (the wide job has ended).
        for jid in sorted(self.suspended, key=self.rank.__getitem__):
            runs = self.suspended[jid]
            if not any(_meets(runs, r.runs) for r in self.running.values()):
                del self.suspended[jid]
                # Given back to the free list when the wide job ended (or
                # never taken from the job, if the wide job did not need them).
                self.free.runs = list(_minus(tuple(self.free.runs), runs))
                size = sum(b - a + 1 for a, b in runs)
                switch = self.machine.resume_cost(size) if jid in self.pieces else 0
                end = self.now + switch + self.left[jid]
                self.running[jid] = _Run(self.now, switch, end, runs)

    def start_heads(self) -> None:
        while self.next < len(self.ordered):
            head = self.ordered[self.next]
            if head.runtime == 0:
                # Length 0: the job takes no capacity ([t, t) meets nothing).
                procs = _processors(((0, head.size - 1),))
                self.pieces[head.id] = [Piece(self.now, self.now, procs)]
            elif head.size <= self.free.available(self.contiguous):
                self.begin(head, self.free.take(head.size, self.contiguous))
            elif (room := self.make_room(head)) is not None:
                self.begin(head, room)
            else:
                return  # strict list order: the head waits
            self.next += 1

    def half_idle(self) -> bool:
        """At most ``m/2`` processors work (no job is suspended while no wide
        job runs, so every processor not free works)."""
        return 2 * (self.m - self.free.available(False)) <= self.m

    def begin(self, job: Job, runs: Runs) -> None:
        self.running[job.id] = _Run(self.now, 0, self.now + job.runtime, runs)
        if self.is_wide(job):
            self.wide = job.id

    def make_room(self, job: Job) -> Runs | None:
        """Room for a wide head that does not fit (step 3), or ``None``.

        Only jobs that have worked since they last started or resumed may
        be suspended (lowest priority first); if suspending all of them is
        not enough, the head waits for the next completion.
        """
        if not (self.is_wide(job) and self.wide is None and self.half_idle()):
            return None
        victims = sorted(
            (j for j, r in self.running.items() if r.start + r.switch < self.now),
            key=self.rank.__getitem__,
            reverse=True,
        )
        chosen: list[int] = []
        pool = _Free(self.m)
        pool.runs = list(self.free.runs)
        for jid in victims:
            if job.size <= pool.available(self.contiguous):
                break
            chosen.append(jid)
            pool.give(self.running[jid].runs)
        if job.size > pool.available(self.contiguous):
            return None
        if self.contiguous:
            ((first, last),) = pool.take(job.size, True)
            taken: Runs = ((first, last),)
            touched = [j for j in chosen if _meets(self.running[j].runs, taken)]
        else:
            touched, taken = chosen, self.victim_processors(chosen, job.size)
        for jid in touched:
            self.suspend(jid)
        kept = [r for j in touched for r in self.suspended[j]]
        self.free.remove(_minus(taken, kept))
        return taken

    def victim_processors(self, chosen: list[int], size: int) -> Runs:
        """``size`` processors: the victims' in their order, then free ones."""
        runs: list[tuple[int, int]] = []
        need = size
        for jid in chosen:
            for a, b in self.running[jid].runs:
                if need:
                    take = min(need, b - a + 1)
                    runs.append((a, a + take - 1))
                    need -= take
        if need:
            pool = _Free(self.m)
            pool.runs = list(self.free.runs)
            runs += pool.take(need, False)
        return _normal(runs)

    def suspend(self, jid: int) -> None:
        run = self.running.pop(jid)
        self.close(jid, run)  # it has worked: make_room picks no other
        self.left[jid] -= self.now - run.start - run.switch
        self.suspended[jid] = run.runs  # kept for it: not in self.free


def _normal(runs: Iterable[tuple[int, int]]) -> Runs:
    """Sorted, adjacent ranges merged."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(runs):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return tuple(out)


def _meets(runs: Runs, other: Runs) -> bool:
    """Do two processor sets share a processor?"""
    return any(a <= d and c <= b for a, b in runs for c, d in other)


def _minus(runs: Runs, other: Iterable[tuple[int, int]]) -> Runs:
    """The processors of ``runs`` outside ``other``."""
    out: list[tuple[int, int]] = []
    cut = _normal(other)
    for a, b in runs:
        pieces = [(a, b)]
        for c, d in cut:
            pieces = [
                piece
                for x, y in pieces
                for piece in ((x, min(y, c - 1)), (max(x, d + 1), y))
                if piece[0] <= piece[1]
            ]
        out += pieces
    return _normal(out)


def psrs(instance: Instance, *, weights: str = "instance", start: int = 0) -> Schedule:
    r"""PSRS (Preemptive Smith Ratio Scheduling) on a batch released by ``start``.

    U. Schwiegelshohn, "Preemptive weighted completion time scheduling of
    parallel jobs", SIAM J. Comput. 33(6), 2004: factor 2.37 for
    ``sum_j w_j C_j`` with free preemption. The reading implemented (the
    paper's full text was not available) is in the module docstring: list
    by ``w_j / (max(q_j, m/2) p_j)``, strict list scheduling; a wide job
    (``q_j > m/2``) at the head of the list that does not fit waits while
    more than ``m/2`` processors work, then suspends running jobs (lowest
    priority first) until it fits; they resume on their own processors
    when it ends (no migration).

    Parameters
    ----------
    instance
        Jobs all released by ``start``; a machine without busy blocks.
    weights
        ``w_j`` of the ratio: ``"instance"``, ``"one"``, ``"size"``,
        ``"area"``.
    start
        Batch start.

    Returns
    -------
    Schedule
        Producer ``"psrs"`` (``"psrs:weights=..."`` with other weights).

    Examples
    --------
    >>> from optsched.instance import Instance, Job, Machine
    >>> a, b = Job(1, 0, 2, 4, weight=4), Job(2, 0, 2, 1, weight=4)
    >>> c, wide = Job(3, 0, 2, 2), Job(4, 0, 3, 2)  # list: 2, 1, 3, 4
    >>> s = psrs(Instance(Machine(4), (a, b, c, wide)))
    >>> [(p.start, p.end) for p in s[1].pieces], (s[4].start, s[4].end)
    ([(0, 3), (5, 6)], (3, 5))
    """
    jobs = _batch(instance, start, "psrs")
    ordered = psrs_order(jobs, instance.processors, weights)
    pieces = _PSRS(instance.machine, ordered, start).run()
    placements = {jid: Placement.of_pieces(p) for jid, p in pieces.items()}
    producer = "psrs" if weights == "instance" else f"psrs:weights={weights}"
    return Schedule(placements, producer)


# --------------------------------------------------------------------------
# Specs and the batch framework
# --------------------------------------------------------------------------


PREEMPTIVE_ALGORITHMS: dict[str, Callable[..., Schedule]] = {"pbi": pbi, "psrs": psrs}
"""The preemptive batch algorithms by name (options in :func:`parse_preemptive`)."""

_OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "pbi": {
        "order": PBI_ORDERS,
        "strict": ("true", "false"),
        "move_back": MOVE_BACK,
        "weights": WEIGHTS,
    },
    "psrs": {"weights": WEIGHTS},
}


def parse_preemptive(spec: str | SpecParts) -> BatchAlgorithm:
    """The algorithm of a spec: ``"pbi"``, ``"pbi:order=literal,strict=true"``,
    ``"psrs:weights=one"`` (or of its tokens, :func:`~optsched.heuristics.
    spec.split_spec`).

    Raises ``ValueError`` naming the valid names, options or values.
    """
    parts = split_spec(spec)
    name = parts.name
    if name not in PREEMPTIVE_ALGORITHMS:
        valid = ", ".join(PREEMPTIVE_ALGORITHMS)
        raise ValueError(f"unknown preemptive algorithm {name!r}; expected {valid}")
    allowed = _OPTIONS[name]
    parts.check(tuple(allowed))
    options: dict[str, object] = {}
    for key, value in parts.options().items():
        if value not in allowed[key]:
            raise parts.error(f"{key} must be one of {', '.join(allowed[key])}")
        options[key] = value == "true" if key == "strict" else value
    return partial(PREEMPTIVE_ALGORITHMS[name], **options)


def batched(instance: Instance, algorithm: str | BatchAlgorithm = "pbi") -> Schedule:
    """An offline batch algorithm run in the batch framework (module docstring).

    The first batch starts at the first release with the jobs released
    then; each later batch starts when the previous one has ended (its last
    piece), or at the next release if nothing waits then, with every job
    released by that instant. Inside a batch the jobs keep the instance's
    order (the algorithms' tie order).

    Parameters
    ----------
    instance
        Any release times; a machine without busy blocks.
    algorithm
        A spec for :func:`parse_preemptive` or a function
        ``f(instance, *, start) -> Schedule`` (e.g. a non-preemptive shelf
        algorithm wrapped with its options).

    Returns
    -------
    Schedule
        Every job placed; producer ``"batch:"`` plus the producer of the
        first batch's schedule.
    """
    run = parse_preemptive(algorithm) if isinstance(algorithm, str) else algorithm
    waiting = sorted(instance.jobs, key=lambda j: j.release)
    position = {job.id: k for k, job in enumerate(instance.jobs)}
    placements: dict[int, Placement] = {}
    inner = ""
    ready = 0
    k = 0
    while k < len(waiting):
        at = max(ready, waiting[k].release)
        upto = k
        while upto < len(waiting) and waiting[upto].release <= at:
            upto += 1
        batch = sorted(waiting[k:upto], key=lambda j: position[j.id])
        k = upto
        schedule = run(instance.with_jobs(batch), start=at)
        inner = inner or schedule.producer
        placements.update(schedule.placements)
        ready = max((p.end for p in schedule.placements.values()), default=at)
    return Schedule(placements, f"batch:{inner}" if inner else "batch")
