r"""Online moldable policies: adaptive partitioning and EASY with scaling.

A moldable job runs on one of its modes (:class:`~optsched.instance.Mode`),
chosen by the scheduler when it starts, for that mode's run time; the
schedule is an ordinary one (one placement per job, explicit processors,
``len(processors)`` naming the mode). A rigid job (no modes) has one mode,
its size. Both policies are online: jobs arrive at their release, the
scheduler sees the modes' *estimates* (never the run times) and learns a
job's end when it ends. They run on the engine
(:class:`~optsched.heuristics.engine.core.Simulator`) like every engine
policy: the engine owns time, events, processors and the machine's rules
(busy blocks, outages, contiguous ranges and migration, the site calendar
and user limit, job chains, kill at the estimate), and the policy, at each
scheduling pass, chooses the mode of each job it starts
(:meth:`~optsched.heuristics.engine.core.Simulator.choose_mode`, the
"choose a mode at start" hook) and starts it on that many processors. The
running jobs then hold their modes' processors until their modes' estimated
ends, which every later shadow time counts. A mode the site calendar never
admits is never chosen. With no busy block pending the shadow times are
EASY's counts of running jobs (as published); while busy blocks or outages
are pending they are the earliest slots of the engine's availability
profile, which holds the blocks like running jobs (as the engine's ``easy``
does).

The finish-time guard
---------------------
Both policies may start a job on fewer processors than it requests. Under
a speed-up near linear that stretches the job almost in proportion: a
4-processor job of 10 h run on one processor ties it up for 40 h, and the
whole schedule follows it (the moldable guide gives the makespans of
``kth_50 --moldable linear`` with and without the guard). The thesis
prints no explicit rule (its Fig. 5.14 is lost; seed 001 §5.7): it scales
a backfilled job down so that it finds a place ("a fitting position is
easier to find"), its rescaling keeps a new size only when the cost
improves, and its model of fewer processors is the conservative one
(§5.4.1, ``T(j) = T(q) q / j``), under which a shrunk job started at the
same time ends later, never earlier. Shrinking therefore pays only by
starting earlier, and the guard, ours, says by how much: a job of request
``q`` may start *now* on a mode ``p < q`` only if, by the estimates, it
then ends no later than it would by waiting for its request:

.. math:: \mathit{now} + \mathit{est}(p) \le s_q + \mathit{est}(q),

where ``s_q`` is the earliest time at which ``q`` processors are free by
the running jobs' estimated ends (EASY's shadow time of ``q``, an end in
the past counting as now; the waiting jobs are ignored, so ``s_q`` is the
earliest the job could get its request and the guard the strictest of its
kind). A mode of at least ``q`` processors is never refused by the guard.
If ``q`` processors are free now, ``s_q`` is now and no job shrinks unless
a smaller mode is as fast. The spec parameter ``guard=none`` drops the
guard (the rules as published: adaptive partitioning sizes a job from the
load alone); ``guard=finish`` is the default.

Adaptive partitioning
---------------------
E. Rosti, E. Smirni, L. W. Dowdy, G. Serazzi, B. M. Carlson, "Robust
partitioning policies of multiprocessor systems", Performance Evaluation
19, 1994, and K. C. Sevcik, "Application scheduling and processor
allocation in multiprogrammed parallel processing systems", Performance
Evaluation 19, 1994 (seed 001 §2.4: low load, many processors per job;
high load, few). The family sizes a partition from the number of jobs
waiting; the exact rule here is ours (the papers' policies differ in
detail and were not available to us):

- the queue is FCFS (release, then id) and strict: only its head starts;
- the head, with ``w`` jobs waiting behind it and ``F`` processors free,
  gets the target ``max(1, floor(F / (1 + w)))``: the free processors
  shared equally among the waiting jobs;
- it runs on its largest mode of at most the target processors (any mode,
  also above its request) that the guard admits, or, if every admitted
  mode is larger, on its smallest admitted one; it starts if that mode
  fits in ``F``, otherwise the queue waits (and the guard is asked again
  at the next event).

On a rigid instance this is strict FCFS (``fcfs``).

EASY with scaling
-----------------
EASY backfilling (Lifka 1995; :mod:`optsched.heuristics.rigid.policies`) in
which a waiting job may start on *fewer* processors than it requests, as
Kalthoff's backfilling with scaling (thesis §5.7, Fig. 5.14; seed 001
§5.7): the modes considered for a job are those with at most its requested
processors. With ``est(p)`` the estimate of the mode on ``p``:

1. *Heads.* For the queue's head, each considered mode ``p`` has its
   EASY shadow time ``s_p`` (running jobs taken by increasing estimated
   end, an end in the past counting as now, until ``p`` processors are
   available) and an estimated end ``s_p + est(p)``. The mode with the
   earliest estimated end is chosen (ties: fewer processors). If it fits
   now (``p <= free``) the head starts on it and the next head is
   considered; otherwise the head is reserved on it at ``shadow = s_p``,
   with ``extra`` = processors available at the shadow time minus ``p``.
   With estimates that fall as processors grow (every speed-up model), the
   head starts on its requested size whenever that fits now.
2. *Backfill.* Every later job, in queue order, may start on a mode ``p``
   that fits now (``p <= free``) and either ends by the shadow time
   (``now + est(p) <= shadow``) or uses only extra processors (``p <=
   extra``); among these, the one with the earliest estimated end (ties:
   fewer processors) among the modes the guard admits. Starting on extra
   processors shrinks ``extra`` by ``p`` (unless the job ends at once). So
   the head's reservation is never delayed (exact estimates), whatever the
   mode chosen.

The head's rule meets the guard by itself (its request is one of the modes
compared, and a mode that fits now has ``s_p`` = now); the guard restricts
the backfilled jobs, which without it took any mode that fits, however
long it made them.

A job with one mode (a rigid instance) has nothing to choose, and the
policy is exactly EASY: the tests check that its start times are those of
``simulate(instance, "easy")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from optsched.heuristics.engine.core import Simulator
from optsched.heuristics.rigid.orders import order_ranks
from optsched.heuristics.rigid.policies import EnginePolicy, easy_shadow, planned
from optsched.heuristics.spec import Option, Options, SpecError, SpecParts, split_spec
from optsched.instance import Instance, Job, Mode
from optsched.packing import Profile
from optsched.schedule import Schedule

__all__ = [
    "MOLDABLE_POLICY_NAMES",
    "AdaptivePartitioning",
    "EasyScaling",
    "ModeChoosing",
    "adaptive",
    "adaptive_target",
    "easy_scaling",
    "moldable_policy",
    "parse_moldable_policy",
    "run_moldable_policy",
]

MOLDABLE_POLICY_NAMES = ("adaptive", "easy-scaling")
"""Names of the online moldable policies of this module."""

GUARDS = ("finish", "none")
"""Values of the ``guard`` parameter: the finish-time guard (the default)
or none (module docstring)."""


def _guarded(key: str, value: str) -> bool:
    guard = value.lower()
    if guard not in GUARDS:
        raise ValueError(f"guard must be one of {', '.join(GUARDS)}, got {guard!r}")
    return guard == GUARDS[0]


MODE_OPTIONS = Options(
    (
        Option(
            "guard",
            _guarded,
            True,
            lambda guarded: GUARDS[0] if guarded else GUARDS[1],
            attribute="guarded",
        ),
    )
)
"""The option of the mode-choosing policies: ``guard``, the field
``guarded`` (read by :func:`parse_moldable_policy`, written by
:attr:`ModeChoosing.spec`)."""


def parse_moldable_policy(spec: str | SpecParts) -> dict[str, object]:
    """The options of ``adaptive`` or ``easy-scaling`` (``guard``), from a
    spec or its tokens (:func:`~optsched.heuristics.spec.split_spec`).

    Raises
    ------
    ValueError
        Another name, another parameter or another guard.
    """
    parts = split_spec(spec)
    if parts.name not in MOLDABLE_POLICY_NAMES:
        valid = ", ".join(MOLDABLE_POLICY_NAMES)
        raise ValueError(f"unknown moldable policy {parts.text!r}; valid: {valid}")
    try:
        return MODE_OPTIONS.read(parts, ("guard",))
    except SpecError:
        raise
    except ValueError as error:
        raise parts.error(str(error)) from None


def moldable_policy(spec: str | SpecParts) -> EnginePolicy:
    """The engine policy a spec of ``adaptive`` or ``easy-scaling`` names."""
    parts = split_spec(spec)
    guarded = bool(parse_moldable_policy(parts)["guarded"])
    if parts.name == "adaptive":
        return AdaptivePartitioning(guarded=guarded)
    return EasyScaling(guarded=guarded)


def run_moldable_policy(instance: Instance, spec: str) -> Schedule:
    """The schedule of ``instance`` under the policy ``spec``."""
    return _run(instance, moldable_policy(spec))[0]


def adaptive_target(free: int, waiting_behind: int) -> int:
    """Adaptive partitioning's target size: ``max(1, floor(F / (1 + w)))``."""
    return max(1, free // (1 + waiting_behind))


def _request(job: Job) -> Mode:
    """The mode the job requests (its size, run time and estimate)."""
    return Mode(job.size, job.runtime, job.estimate)


@dataclass
class _State:
    """Per-run memory: each job's considered modes (computed once) and the
    first reservation's estimated end of every job that got one."""

    modes: dict[int, tuple[Mode, ...]] = field(default_factory=dict)
    reserved_ends: dict[int, int] = field(default_factory=dict)


def _shadow_start(sim: Simulator, need: int, duration: int) -> int | None:
    """When ``need`` processors are free for ``duration`` by the estimates,
    the waiting jobs ignored: EASY's shadow time, or (busy blocks pending)
    the earliest slot of the engine's profile (``None``: never)."""
    if not sim.blocks_pending:
        return easy_shadow(sim, need)[0]
    return sim.base_profile().earliest(need, planned(duration))


def admitted(
    sim: Simulator, modes: tuple[Mode, ...], request: Mode
) -> tuple[Mode, ...]:
    """The ``modes`` the finish-time guard admits now (module docstring):
    those of at least the requested processors, and those that end by the
    estimates no later than the request started at its shadow time."""
    q = request.processors
    if modes[0].processors >= q:
        return modes  # nothing to shrink to: no shadow to compute
    shadow = _shadow_start(sim, q, request.requested)
    if shadow is None:
        return modes  # the request never fits: no end to compare with
    waited = shadow + request.requested
    return tuple(
        m for m in modes if m.processors >= q or sim.now + m.requested <= waited
    )


@dataclass(frozen=True)
class ModeChoosing(EnginePolicy):
    """An engine policy that chooses each job's mode at its start.

    Parameters
    ----------
    guarded
        Whether the finish-time guard applies (module docstring).
    """

    guarded: bool = True

    name: ClassVar[str] = ""

    @property
    def spec(self) -> str:
        """``adaptive``, ``easy-scaling`` or either with ``:guard=none``."""
        return MODE_OPTIONS.spec(self.name, self, ("guard",))

    def new_state(self, sim: Simulator) -> _State:
        return _State()

    def considered(self, job: Job) -> tuple[Mode, ...]:
        """The modes the policy may give ``job`` (sorted by processors)."""
        return job.all_modes

    def options(self, sim: Simulator, state: _State, j: int) -> tuple[Mode, ...]:
        """The modes job ``j`` may start on now: those considered that the
        site calendar ever admits, and of them those the guard admits."""
        modes = state.modes.get(j)
        if modes is None:
            modes = state.modes[j] = _startable(sim, j, self.considered(sim.jobs[j]))
        if not self.guarded:
            return modes
        return admitted(sim, modes, _request(sim.jobs[j]))


def _startable(sim: Simulator, j: int, modes: tuple[Mode, ...]) -> tuple[Mode, ...]:
    """The ``modes`` of job ``j`` whose size the calendar admits at some
    time (a job of an anytime queue runs beside it: all of them)."""
    calendar = sim.calendar
    if calendar is None or sim.jobs[j].queue in calendar.anytime_queues:
        return modes
    m = sim.processors
    return tuple(
        x for x in modes if calendar.earliest_start(x.processors, 0, m) is not None
    )


def _start(sim: Simulator, j: int, mode: Mode) -> bool:
    """Start ``j`` now on ``mode`` if the engine admits it; whether it did."""
    sim.choose_mode(j, mode)
    if not (sim.simple or sim.can_start(j)):
        return False
    sim.start(j)
    return True


@dataclass(frozen=True)
class AdaptivePartitioning(ModeChoosing):
    """Adaptive partitioning (module docstring) on the engine."""

    name: ClassVar[str] = "adaptive"
    rule: ClassVar[str] = "adaptive"

    def decide(self, sim: Simulator, state: _State) -> None:
        queue = list(sim.queue)  # the waiting jobs, FCFS
        for position, j in enumerate(queue):
            modes = self.options(sim, state, j)
            target = adaptive_target(sim.free, len(queue) - position - 1)
            within = [m for m in modes if m.processors <= target]
            mode = within[-1] if within else modes[0]  # sorted by processors
            if mode.processors > sim.free or not _start(sim, j, mode):
                return  # strict FCFS: the queue waits for its head


@dataclass(frozen=True)
class EasyScaling(ModeChoosing):
    """EASY with scaling (module docstring) on the engine."""

    name: ClassVar[str] = "easy-scaling"
    rule: ClassVar[str] = "easy-scaling"

    def considered(self, job: Job) -> tuple[Mode, ...]:
        """The modes of at most the requested processors."""
        return tuple(m for m in job.all_modes if m.processors <= job.size)

    def decide(self, sim: Simulator, state: _State) -> None:
        if sim.blocks_pending:
            self._decide_with_profile(sim, state)
        else:
            self._decide_counting(sim, state)

    def _decide_counting(self, sim: Simulator, state: _State) -> None:
        # EASY's counts of running jobs (module docstring, steps 1 and 2).
        queue = list(sim.queue)
        i = 0
        while i < len(queue):
            head = queue[i]
            choices = []
            for mode in self.options(sim, state, head):
                shadow, extra = easy_shadow(sim, mode.processors)
                end = shadow + mode.requested
                choices.append((end, mode.processors, shadow, extra, mode))
            end, p, shadow, extra, mode = min(choices, key=lambda o: (o[0], o[1]))
            if p > sim.free or not _start(sim, head, mode):
                self._reserve(sim, state, head, shadow, end)
                break
            i += 1
        else:
            return
        now = sim.now
        for k in queue[i + 1 :]:
            free = sim.free
            if free == 0:
                return
            best: Mode | None = None
            for m in self.options(sim, state, k):  # sorted by processors
                if m.processors > free:
                    break
                keeps = now + m.requested <= shadow or m.processors <= extra
                if keeps and (best is None or m.requested < best.requested):
                    best = m  # ties: the first, on fewer processors
            if best is None or not _start(sim, k, best):
                continue
            if now + best.requested > shadow and sim.end_time[k] > now:
                extra -= best.processors  # on the extra processors, still running

    def _decide_with_profile(self, sim: Simulator, state: _State) -> None:
        # Busy blocks pending: the head's mode and its reservation on the
        # profile, then candidates that fit it (as the engine's easy).
        profile = sim.base_profile()
        now = sim.now
        queue = list(sim.queue)
        i = 0
        while i < len(queue):
            head = queue[i]
            chosen = _earliest_end(profile, self.options(sim, state, head))
            if chosen is None:
                return  # no mode ever fits: the head waits (the run stalls)
            start, mode = chosen
            if start > now or not _start(sim, head, mode):
                span = planned(mode.requested)
                profile.add(start, start + span, -mode.processors)
                self._reserve(sim, state, head, start, start + mode.requested)
                break
            _book(sim, profile, head, mode)
            i += 1
        else:
            return
        for k in queue[i + 1 :]:
            if sim.free == 0:
                return
            fitting = [
                m
                for m in self.options(sim, state, k)
                if m.processors <= sim.free
                and (m.requested == 0 or profile.fits(now, m.requested, m.processors))
            ]
            if fitting:
                best = min(fitting, key=lambda m: (m.requested, m.processors))
                if _start(sim, k, best):
                    _book(sim, profile, k, best)

    @staticmethod
    def _reserve(sim: Simulator, state: _State, j: int, start: int, end: int) -> None:
        sim.reserve(j, start)
        state.reserved_ends.setdefault(j, end)


def _earliest_end(profile: Profile, modes: tuple[Mode, ...]) -> tuple[int, Mode] | None:
    """The mode that ends first from its earliest slot in ``profile`` (ties:
    fewer processors) and that slot; ``None`` if no mode ever fits."""
    best: tuple[int, int, int, Mode] | None = None
    for mode in modes:
        start = profile.earliest(mode.processors, planned(mode.requested))
        if start is None:
            continue
        key = (start + mode.requested, mode.processors, start, mode)
        if best is None or key[:2] < best[:2]:
            best = key
    return None if best is None else (best[2], best[3])


def _book(sim: Simulator, profile: Profile, j: int, mode: Mode) -> None:
    """Hold the processors of ``j``, started now on ``mode``, in the pass's
    profile (a job that ended at once holds none)."""
    if sim.end_time[j] > sim.now:
        profile.add(sim.now, sim.now + mode.requested, -mode.processors)


def _run(instance: Instance, policy: EnginePolicy) -> tuple[Schedule, _State]:
    """The engine's run of ``policy`` on ``instance`` (FCFS queue, no engine
    option: :func:`~optsched.heuristics.engine.runner.simulate` takes them)
    and the policy's state."""
    sim = Simulator(instance, keep_profile=policy.needs_profile)
    sim.run(policy, order_ranks(policy.order, sim.size, sim.estimate))
    state = sim.policy_state
    assert isinstance(state, _State)
    return sim.schedule(policy.spec), state


def adaptive(instance: Instance, *, guarded: bool = True) -> Schedule:
    """Adaptive partitioning's schedule of ``instance`` (module docstring).

    Parameters
    ----------
    instance
        Jobs (moldable or rigid) on a flat machine.
    guarded
        Whether the finish-time guard keeps a job from shrinking below its
        request when waiting for the request ends it earlier (default); off,
        the target size alone decides (``adaptive:guard=none``).
    """
    return _run(instance, AdaptivePartitioning(guarded=guarded))[0]


def easy_scaling(
    instance: Instance,
    *,
    reserved_ends: dict[int, int] | None = None,
    guarded: bool = True,
) -> Schedule:
    """EASY with scaling's schedule of ``instance`` (module docstring).

    Parameters
    ----------
    instance
        Jobs (moldable or rigid) on a flat machine.
    guarded
        Whether the finish-time guard keeps a backfilled job from shrinking
        below its request when waiting for the request ends it earlier
        (default); off, any mode that keeps the head's reservation may
        start (``easy-scaling:guard=none``).
    reserved_ends
        If given, filled with ``{job id: estimated end}`` of the first
        reservation of every job that got one. With exact estimates no job
        ends later than that (the reservation of the mode chosen at each
        pass is protected until the next pass, whose choice can only end
        earlier); the tests check it.
    """
    schedule, state = _run(instance, EasyScaling(guarded=guarded))
    if reserved_ends is not None:
        ids = sorted(instance.jobs, key=lambda job: (job.release, job.id))
        reserved_ends.update({ids[j].id: end for j, end in state.reserved_ends.items()})
    return schedule
