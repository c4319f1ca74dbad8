"""Mallmann's backfilling family: selectors, fairness checks and LJSF limits.

Mallmann, "Untersuchung von Strategien zum Job-Scheduling in massiv-
parallelen Systemen", Berichte des Forschungszentrums Jülich Jül-3458,
1997, §2.2.1 and §3.3.2 (seed notes 000 §2). One policy,
:class:`Mallmann`, spec ``mallmann:order=O,variant=V,fairness=F,
reading=R,f=SHARE,t=SECONDS``.

Pass
----
1. *Heads.* The waiting jobs are walked in strategy order (``order``); a
   job that can start now (:meth:`Simulator.can_start`) starts. A job held
   back by a *rule*, not by processors -- its sequential queue is locked,
   or it exceeds the calendar's maximum job size now -- is skipped, and
   the walk goes on (the study's procedure ``backfilling``, step 1: the
   next job that may start starts, which demotes the held job). The first
   job that lacks processors (free count, the calendar's batch capacity,
   a contiguous range or a busy block) is the *head*; the walk stops.
2. *Backfilling*, when processors are free and backfilling is not
   suspended (limits below): the other waiting jobs are candidates,
   scanned once in the variant's selection order; a candidate starts when
   it can start now and passes the fairness check. As in
   :class:`~optsched.heuristics.rigid.policies.Backfill`, a candidate that fails
   is not looked at again in the pass.

Variants (selection order; the queue is already in strategy order, ties
keep it)
    ``ff`` strategy order (for an LJSF queue: the largest job that fits);
    ``fc`` submit order; ``bs`` largest size first; ``bd`` largest
    ``size x actual run time`` first (clairvoyant); ``bqd`` largest
    ``size x queue maximum run time`` first; ``ws`` smallest size first;
    ``fc3``/``bs3`` the jobs of the calendar's sequential queues first,
    then the others, each group as ``fc``/``bs``; ``bc`` the subset of
    candidates that fills the most free processors (exact subset sum,
    :func:`~optsched.heuristics.rigid.policies.best_package`, over the first
    :data:`~optsched.heuristics.rigid.policies.DEFAULT_PACKAGE_LIMIT` fitting
    candidates in strategy order, ties favouring earlier jobs).

Fairness (which jobs ahead of the candidate are protected)
    ``0``: no check (lazy scheduling). ``1``: a *preview* with actual run
    times (clairvoyant: the policy reads :attr:`Simulator.duration`, as the
    study's ``*1`` variants read ``run_clock``). ``2``: a preview with the
    *queue maximum run time*; without NQS queue limits it is replaced by
    the job's requested time (SWF field 9, :attr:`Simulator.requested`),
    whatever ``oracle`` says. The study's allowed combinations are
    enforced: ``bd`` with 0 or 1, ``bqd`` with 0 or 2, ``bc``, ``ws``,
    ``fc3``, ``bs3`` only with 0.

The preview (§2.4 of the notes): running jobs hold their processors until
their end under the chosen run times (an end already reached, possible
with requested times, counts as ``now + 1``: the job still runs), busy
blocks over their interval, then every waiting job *ahead of the
candidate in strategy order*, in that order, takes its earliest slot in
the availability profile (:class:`~optsched.packing.Profile`), as
conservative backfilling places reservations (Mu'alem and Feitelson,
IEEE TPDS 12(6), 2001). It counts processors only: calendar capacity,
sequential queues and contiguity are checked at real starts, not in the
preview. Two readings of "the candidate does not delay a job ahead":

``reading=profile`` (default)
    with ``P`` the preview of the jobs ahead of candidate ``c``, ``c``
    starts iff ``min_{now <= u < now + p_c} P(u) >= q_c`` (``p_c`` its run
    time under the fairness, at least 1). Then no job ahead moves in the
    preview (each one's window keeps ``q_c`` to spare).
``reading=shadow``
    the strict rule of Lifka, Henderson and Rayl ("Users guide to the
    Argonne SP scheduling system", ANL/MCS-TM-201, 1995) as Mallmann
    quotes it: ``now + p_c <= S``, ``S`` the head's start in the preview
    (only the head is protected; no spare "extra" processors are used).
    ``mallmann:variant=ff,fairness=2,reading=shadow`` is the alias
    ``strict-backfill``.

Cost: a pass with free processors and a blocked head places the waiting
jobs ahead of each candidate checked (lazily, once per pass in queue order;
a selector that does not scan in queue order rebuilds the prefix for each
candidate behind an already placed one): ``O(n)`` profile insertions for a
queue of ``n``, like conservative backfilling's compression. After a
start that passed the profile check the slots of the jobs ahead stay; a
job of zero duration that starts frees its one-second preview slot, and
the scan is repeated.

Each pass records the head's preview start as its reservation
(:meth:`Simulator.reserve`, the first one is kept). With fairness 1, the
profile reading, exact run times, no calendar, no busy blocks, an
``any`` machine and no job jumping ahead of the head (FCFS order, or all
jobs released together), the head starts exactly there: its preview slot
only uses processors freed by running jobs, and every backfilled job fits
beside it. Under the same conditions, fairness 1 with the profile reading
is conservative backfilling with exact estimates (``conservative:oracle``,
the same order), whatever the selector among ``ff``, ``fc``, ``bs``,
``bd``: a conservative reservation is the job's earliest slot given the
jobs ahead, which with exact run times never moves, and the preview
recomputes the same slots (the notes' "behaves like conservative
backfilling", §2.4). tests/families/rigid/test_mallmann_backfill.py checks
both.

Limits (§2.5; in the study only with LJSF, here with every order)
    ``f=SHARE``: after each backfilled start, if more than ``SHARE`` of
    the machine's processors are idle, backfilling is suspended until the
    head of that moment has started. With ``bc`` it is the study's
    maximum fragmentation instead: a best combination that would leave
    more than ``SHARE`` idle is not started.
    ``t=SECONDS``: a backfilling *phase* begins with the first backfilled
    start while a given job is the head; once ``now - phase start > t``
    while the same job is still the head, backfilling is suspended until
    it starts (when another job becomes the head, a new phase begins).
    Starts of step 1 (heads, and jobs after a held one) are never
    suspended. Both make the policy non-work-conserving. They only ever
    prevent starts, so no timer is needed: the engine's passes
    (arrivals, ends, calendar changes) are the only instants at which
    anything could start, and the limit is applied at the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from optsched.heuristics.engine.core import WAITING, Simulator
from optsched.heuristics.rigid.policies import (
    COMMON_KEYS,
    DEFAULT_PACKAGE_LIMIT,
    ORACLE,
    ORDER,
    SEED,
    EnginePolicy,
    best_package,
    planned,
)
from optsched.heuristics.spec import (
    Family,
    Option,
    Options,
    SpecParts,
    integer,
    seconds,
    share,
    write_float,
)
from optsched.packing import Profile

VARIANTS: tuple[str, ...] = ("ff", "fc", "bs", "bd", "bqd", "bc", "ws", "fc3", "bs3")
"""Mallmann's backfilling selectors (seed notes 000 §2.3)."""

READINGS: tuple[str, ...] = ("profile", "shadow")
"""The two readings of the fairness check."""

FAIRNESS_OF: dict[str, tuple[int, ...]] = {
    "ff": (0, 1, 2),
    "fc": (0, 1, 2),
    "bs": (0, 1, 2),
    "bd": (0, 1),  # bd0 and bd1; no bd2 (a queue-limit check on an exact-run-time key)
    "bqd": (0, 2),
    "bc": (0,),
    "ws": (0,),
    "fc3": (0,),
    "bs3": (0,),
}
"""Fairness versions of each variant in the study (L610-635)."""

STRICT_BACKFILL = ("ff", 2, "shadow")
"""``(variant, fairness, reading)`` of the ``strict-backfill`` alias."""

MALLMANN_OPTIONS = Options(
    (
        ORDER,
        Option("variant", default="ff"),
        Option("fairness", integer, 0),
        Option("reading", default="profile"),
        Option("f", share, write=write_float),
        Option("t", seconds),
        ORACLE,
        SEED,
    )
)
"""The options of :class:`Mallmann`, in canonical spec order (read by
:func:`parse_mallmann`, written by :attr:`Mallmann.spec`)."""

_KEYS = (*COMMON_KEYS, "variant", "fairness", "reading", "f", "t")


@dataclass
class _Limits:
    """Per-run state of the ``f``/``t`` limits.

    ``suspended_for``: the head whose start lifts the suspension;
    ``phase_head``/``phase_start``: the head of the current backfilling
    phase and the time of its first backfilled start (``None``: none yet).
    """

    suspended_for: int | None = None
    phase_head: int | None = None
    phase_start: int | None = None


@dataclass(frozen=True)
class Mallmann(EnginePolicy):
    """Mallmann's backfilling: heads in strategy order, then a selector.

    Parameters
    ----------
    variant
        Selector: one of :data:`VARIANTS`.
    fairness
        0 (none), 1 (preview with actual run times), 2 (preview with
        requested times standing in for the queue maximum).
    reading
        ``profile`` or ``shadow`` (fairness 1 or 2 only).
    f
        Maximum idle share after a backfill (``bc``: of a combination).
    t
        Maximum backfilling phase, seconds.

    Notes
    -----
    The module docstring gives the rules.
    """

    variant: str = "ff"
    fairness: int = 0
    reading: str = "profile"
    f: float | None = None
    t: int | None = None

    rule: ClassVar[str] = "mallmann"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variant not in VARIANTS:
            raise ValueError(
                f"unknown variant {self.variant!r}; valid: {', '.join(VARIANTS)}"
            )
        if self.fairness not in (0, 1, 2) or isinstance(self.fairness, bool):
            raise ValueError(f"fairness must be 0, 1 or 2, got {self.fairness!r}")
        allowed = FAIRNESS_OF[self.variant]
        if self.fairness not in allowed:
            listed = " or ".join(str(x) for x in allowed)
            raise ValueError(
                f"variant {self.variant} takes fairness {listed} only (as in "
                f"Mallmann's study), got fairness={self.fairness}"
            )
        if self.reading not in READINGS:
            raise ValueError(
                f"unknown reading {self.reading!r}; valid: {', '.join(READINGS)}"
            )
        if self.reading != "profile" and self.fairness == 0:
            raise ValueError(
                f"reading={self.reading} needs fairness 1 or 2 (fairness 0 makes "
                "no check)"
            )
        if self.f is not None and not 0 <= self.f <= 1:
            raise ValueError(f"f must be a share in [0, 1], got {self.f}")
        if self.t is not None and (not isinstance(self.t, int) or self.t < 0):
            raise ValueError(f"t must be >= 0 seconds, got {self.t!r}")

    # -- spec --------------------------------------------------------------
    @property
    def spec(self) -> str:
        """Canonical spec; ``strict-backfill`` when it is that alias.

        Written from :data:`MALLMANN_OPTIONS`: keys in the order ``order,
        variant, fairness, reading, f, t, oracle, seed``; defaults are left
        out.
        """
        strict = (self.variant, self.fairness, self.reading) == STRICT_BACKFILL
        if strict and self.f is None and self.t is None:
            return MALLMANN_OPTIONS.spec("strict-backfill", self, COMMON_KEYS)
        return MALLMANN_OPTIONS.spec(self.rule, self, _KEYS)

    # -- decisions ---------------------------------------------------------
    def new_state(self, sim: Simulator) -> _Limits:
        return _Limits()

    def decide(self, sim: Simulator, state: _Limits) -> None:
        head = self._start_heads(sim, state)
        if head is None or sim.free == 0:
            return
        if state.suspended_for is not None:
            return
        if state.phase_head != head:
            state.phase_head, state.phase_start = head, None
        if (
            self.t is not None
            and state.phase_start is not None
            and sim.now - state.phase_start > self.t
        ):
            state.suspended_for = head
            return
        if self.variant == "bc":
            self._best_combination(sim, state, head)
        else:
            self._backfill(sim, state, head)

    def _start_heads(self, sim: Simulator, state: _Limits) -> int | None:
        # Step 1: heads in strategy order; jobs held by a rule are skipped.
        job_state = sim.state
        for j in sim.queue:
            if job_state[j] != WAITING:
                continue
            if sim.can_start(j):
                sim.start(j)
                if state.suspended_for == j:
                    state.suspended_for = None
                continue
            if sim.free == 0:
                return None  # nothing else can start in this pass
            if not _held_by_rule(sim, j):
                return j
        return None

    def _candidates(self, sim: Simulator, head: int) -> list[int]:
        # The waiting jobs other than the head, in selection order.
        job_state = sim.state
        pool = [j for j in sim.queue if j != head and job_state[j] == WAITING]
        base = self.variant.removesuffix("3")
        size = sim.size
        ordered: list[int]
        if base == "ff":
            ordered = pool
        elif base == "fc":
            ordered = sorted(pool)  # job numbers are in submit order
        else:
            position = {j: k for k, j in enumerate(pool)}
            if base == "bs":
                keys = {j: -size[j] for j in pool}
            elif base == "ws":
                keys = {j: size[j] for j in pool}
            elif base == "bd":
                keys = {j: -size[j] * sim.duration[j] for j in pool}
            else:  # bqd: requested time stands in for the queue maximum
                keys = {j: -size[j] * sim.requested[j] for j in pool}
            ordered = sorted(pool, key=lambda j: (keys[j], position[j]))
        if self.variant.endswith("3") and sim.calendar is not None:
            sequential = sim.calendar.sequential_queues
            first = [j for j in ordered if sim.job_queue[j] in sequential]
            ordered = first + [j for j in ordered if sim.job_queue[j] not in sequential]
        return ordered

    def _backfill(self, sim: Simulator, state: _Limits, head: int) -> None:
        preview = _Preview.of(sim, self.fairness) if self.fairness else None
        if preview is not None:
            sim.reserve(head, preview.start_of(head))
        while self._scan(sim, state, head, preview):
            # A job of zero duration ended as it started: the instant its
            # preview slot held is free again, and candidates scanned
            # before it may fit now (one scan is not enough then).
            preview = _Preview.of(sim, self.fairness)

    def _scan(
        self, sim: Simulator, state: _Limits, head: int, preview: _Preview | None
    ) -> bool:
        # One scan of the candidates in selection order; True when it must
        # be repeated (see _backfill).
        size = sim.size
        now = sim.now
        shadow = preview.start_of(head) if preview is not None else None
        again = False
        for c in self._candidates(sim, head):
            if size[c] > sim.free:
                continue
            if preview is not None:
                if self.reading == "shadow":
                    assert shadow is not None
                    if now + preview.run[c] > shadow:
                        continue
                elif not preview.fair(c):
                    continue
            if not sim.can_start(c):
                continue
            sim.start(c)
            if state.phase_start is None:
                state.phase_start = now
            if self.f is not None and sim.free > self.f * sim.processors:
                state.suspended_for = head
                return False
            if sim.free == 0:
                return False
            if preview is not None:
                keep = self.reading == "profile"
                preview.started(c, keep_prefix=keep)
                if not keep:
                    shadow = preview.start_of(head)
                elif sim.end_time[c] == now:
                    again = True
        return again

    def _best_combination(self, sim: Simulator, state: _Limits, head: int) -> None:
        free = sim.free
        size = sim.size
        fitting = [
            c
            for c in sim.queue
            if c != head
            and sim.state[c] == WAITING
            and size[c] <= free
            and sim.can_start(c)
        ][:DEFAULT_PACKAGE_LIMIT]
        if not fitting:
            return
        chosen = [fitting[k] for k in best_package([size[c] for c in fitting], free)]
        idle = free - sum(size[c] for c in chosen)
        if self.f is not None and idle > self.f * sim.processors:
            return  # the study's maximum fragmentation: not started
        for c in chosen:
            if sim.can_start(c):  # a contiguous range may be missing
                sim.start(c)
                if state.phase_start is None:
                    state.phase_start = sim.now


def _held_by_rule(sim: Simulator, j: int) -> bool:
    """Whether ``j`` is held back now by a rule rather than by processors:
    its sequential queue runs a job, or it exceeds the calendar's largest
    job size now (its queue not exempt)."""
    calendar = sim.calendar
    if calendar is None:
        return False
    queue = sim.job_queue[j]
    if queue in calendar.sequential_queues and any(
        sim.job_queue[r] == queue for _, r in sim.running_ends
    ):
        return True
    if queue in calendar.anytime_queues:
        return False
    return sim.size[j] > calendar.max_size_at(sim.now, sim.processors)


def _running_end(sim: Simulator, fairness: int, j: int) -> int:
    """When running job ``j`` frees its processors in the preview."""
    planned_end = sim.start_time[j] + sim.requested[j]
    end = sim.end_time[j] if fairness == 1 else planned_end
    return max(end, sim.now + 1)  # still running now


@dataclass
class _Preview:
    """The fairness preview of one pass (see the module docstring).

    ``order`` holds the waiting jobs in strategy order; ``placed[k]`` the
    preview slot ``(start, span, size)`` of ``order[k]`` (``None`` for a
    job that started in the pass), computed for a prefix of ``order``;
    ``profile`` is ``base`` minus the placed slots.
    """

    sim: Simulator
    run: list[int]
    fairness: int
    base: Profile
    order: list[int]
    position: dict[int, int]
    placed: list[tuple[int, int, int] | None] = field(default_factory=list)
    profile: Profile = field(init=False)

    def __post_init__(self) -> None:
        self.profile = self.base.copy()

    @classmethod
    def of(cls, sim: Simulator, fairness: int) -> _Preview:
        """The preview at ``sim.now`` under fairness 1 or 2."""
        now = sim.now
        run = sim.duration if fairness == 1 else sim.requested
        base = Profile(now, sim.processors)
        for block in sim.blocks:
            if block.end > now:
                base.add(block.start, block.end, -block.size)
        for _, j in sim.running_ends:
            base.add(now, _running_end(sim, fairness, j), -sim.size[j])
        job_state = sim.state
        order = [j for j in sim.queue if job_state[j] == WAITING]
        return cls(sim, run, fairness, base, order, {j: k for k, j in enumerate(order)})

    def _extend(self, count: int) -> None:
        # Place order[len(placed) .. count - 1] at their earliest slots.
        size, job_state = self.sim.size, self.sim.state
        while len(self.placed) < count:
            j = self.order[len(self.placed)]
            if job_state[j] != WAITING:
                self.placed.append(None)
                continue
            q, span = size[j], planned(self.run[j])
            t = self.profile.earliest(q, span)
            assert t is not None, "a job larger than the machine"
            self.profile.add(t, t + span, -q)
            self.placed.append((t, span, q))

    def start_of(self, j: int) -> int:
        """Preview start of waiting job ``j`` (the jobs ahead placed first)."""
        p = self.position[j]
        self._extend(p + 1)
        slot = self.placed[p]
        assert slot is not None
        return slot[0]

    def fair(self, c: int) -> bool:
        """Profile reading: ``c`` fits beside the jobs ahead over its run."""
        sim = self.sim
        now, q, span = sim.now, sim.size[c], planned(self.run[c])
        p = self.position[c]
        if len(self.placed) <= p:
            self._extend(p)
            return self.profile.fits(now, span, q)
        ahead = self.base.copy()
        for slot in self.placed[:p]:
            if slot is not None and slot[0] < now + span:
                ahead.add(slot[0], slot[0] + slot[1], -slot[2])
        return ahead.fits(now, span, q)

    def started(self, c: int, keep_prefix: bool) -> None:
        """``c`` started now: it joins the running jobs. The slots of the
        jobs ahead of it stay when it passed the profile check (each one
        keeps room for it); all others are placed again."""
        sim = self.sim
        if sim.end_time[c] > sim.now:  # else it already ended
            self.base.add(sim.now, _running_end(sim, self.fairness, c), -sim.size[c])
        del self.placed[self.position[c] if keep_prefix else 0 :]
        self.profile = self.base.copy()
        for slot in self.placed:
            if slot is not None:
                self.profile.add(slot[0], slot[0] + slot[1], -slot[2])


# --------------------------------------------------------------------------
# Specs: the family record
# --------------------------------------------------------------------------


def parse_mallmann(parts: SpecParts) -> Mallmann:
    """The :class:`Mallmann` policy named by a spec's tokens (``mallmann``
    or ``strict-backfill``, which fixes variant, fairness and reading).

    Raises
    ------
    ValueError
        A key the policy does not take, a bad value.
    """
    if parts.name == "strict-backfill":
        variant, fairness, reading = STRICT_BACKFILL
        preset = {"variant": variant, "fairness": fairness, "reading": reading}
        return Mallmann(**MALLMANN_OPTIONS.read(parts, COMMON_KEYS, **preset))
    return Mallmann(**MALLMANN_OPTIONS.read(parts, _KEYS))


FAMILY = Family(parse_mallmann, generic=("mallmann",), presets=("strict-backfill",))
"""Mallmann's backfilling in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
