"""``simulate``: replay an instance under a policy."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from optsched.collector import collector_paused
from optsched.families import simulation_refusal
from optsched.heuristics.engine.core import (
    SimulationResult,
    SimulationStats,
    Simulator,
    Stalled,
    reservations_by_id,
    stats_of,
)
from optsched.heuristics.engine.standalone import Standalone, register_policy_scheduler
from optsched.heuristics.moldable.policies import ModeChoosing
from optsched.heuristics.rigid.orders import order_ranks
from optsched.heuristics.rigid.policies import (
    Backfill,
    EnginePolicy,
    FirstFit,
    Policy,
    Strict,
)
from optsched.heuristics.spec import parse_policy
from optsched.heuristics.topology.combinators import Combinator
from optsched.heuristics.topology.modes import run_mode_choosing
from optsched.instance import Instance
from optsched.schedule import Schedule

PROGRESS_MIN_JOBS = 20_000
"""Runs with at least this many jobs show their progress: a bar on a
terminal, a line every :data:`PROGRESS_LINE_SECONDS` on standard error
otherwise."""


def simulate(
    instance: Instance,
    policy: str | Policy,
    *,
    seed: int = 0,
    kill_at_estimate: bool = False,
    allocation_rule: str = "first-fit",
    migration: bool = False,
    progress: bool = False,
) -> SimulationResult:
    """Replay ``instance`` online under ``policy``.

    Parameters
    ----------
    instance
        Jobs (released at their submit times) and the machine, with its
        allocation (``any`` or ``contiguous``) and busy blocks.
    policy
        A spec string (see :mod:`optsched.heuristics.spec`) or a
        :class:`~optsched.heuristics.rigid.policies.Policy`.
    seed
        Seed of random queue orders whose spec gives none.
    kill_at_estimate
        Stop every job that overruns its estimate at its estimate.
    allocation_rule
        ``first-fit`` or ``best-fit`` range choice on contiguous machines.
    migration
        Compact running jobs when no contiguous range fits (contiguous
        machines only).
    progress
        On a large instance, show a progress bar when standard output is a
        terminal, else progress lines on standard error.

    Returns
    -------
    SimulationResult
        The schedule (explicit processors for every job; producer = the
        policy spec, with ``seed=`` for random orders), counters and the
        first reservation of every job that got one.

    Raises
    ------
    ValueError
        Unknown policy or allocation rule, migration on an ``any`` machine,
        busy blocks overlapping on processors, a policy that does not run on
        a machine with speeds or SMP nodes.

    Notes
    -----
    On a machine with speeds or SMP nodes (not ``flat``) the engine cannot
    run: the combinators (:mod:`optsched.heuristics.topology.combinators`) run on
    the node simulator, and ``fcfs``, ``firstfit`` and ``easy`` run as the
    combinators they equal on flat machines (``blocking:f=fifo``,
    ``fit:f=fifo``, ``optimistic:f=fifo``; topology-aware on SMP nodes),
    their schedules named by the spec given. Every other policy and engine
    option is refused.
    """
    chosen = parse_policy(policy)
    refused = refusal(
        instance,
        chosen,
        kill_at_estimate=kill_at_estimate,
        allocation_rule=allocation_rule,
        migration=migration,
    )
    if refused is not None:
        raise ValueError(refused)
    if not instance.machine.flat:
        return _on_topology(instance, chosen)
    if isinstance(chosen, Standalone):
        return chosen.run(instance)  # builds its schedule itself, no engine
    assert isinstance(chosen, EnginePolicy)  # the two kinds of policy
    if chosen.order == "random" and chosen.seed is None:
        chosen = _with_seed(chosen, seed)
    began = time.perf_counter()
    sim = Simulator(
        instance,
        oracle=chosen.oracle,
        kill_at_estimate=kill_at_estimate,
        allocation_rule=allocation_rule,
        migration=migration,
        keep_profile=chosen.needs_profile,
    )
    with _progress_bar(len(sim.jobs), progress) as advance, collector_paused():
        try:
            # The ranks go straight to the run, which keeps its own compact
            # copy and lets the list go (17 MB of ints at 450k jobs).
            sim.run(
                chosen,
                order_ranks(
                    chosen.order, sim.size, sim.estimate, seed=chosen.seed or 0
                ),
                advance,
            )
        except Stalled:
            # A user's policy that left jobs waiting for ever: their error.
            stalled = getattr(chosen, "stalled", None)
            if stalled is None:
                raise
            raise stalled(sim) from None
        schedule = sim.schedule(chosen.spec)
    return SimulationResult(
        schedule=schedule,
        stats=stats_of(sim, time.perf_counter() - began),
        reservations=reservations_by_id(sim),
    )


def _policy_scheduler(spec: str) -> Callable[[Instance], Schedule]:
    policy = parse_policy(spec)  # refuses an unknown spec at once
    return lambda instance: simulate(instance, policy).schedule


register_policy_scheduler(_policy_scheduler)


def simulator_of(instance: Instance, policy: Policy) -> str:
    """The simulator that runs ``policy`` on ``instance``, by its name in the
    family table (:attr:`optsched.families.Feature.simulators`): the engine
    is ``engine-modes`` when its policy chooses the modes of the instance's
    moldable (or malleable) jobs at their starts (a built-in one, or a
    plug-in with ``choose_mode``)."""
    if not instance.machine.flat or isinstance(policy, Combinator):
        return "nodes"
    if isinstance(policy, Standalone):
        return "standalone"
    chooses = getattr(policy, "chooses_modes", False)  # a plug-in's choose_mode
    if (isinstance(policy, ModeChoosing) or chooses) and instance.moldable:
        return "engine-modes"
    return "engine"


TOPOLOGY_POLICIES = (
    "fcfs, firstfit, easy, adaptive, easy-scaling and the combinators "
    "blocking, fit, fit2, afkt-backfill, optimistic (and their aliases "
    "fifo-fit, lpt-back, ...)"
)
"""What runs on a machine with speeds or SMP nodes (for messages)."""


def refusal(
    instance: Instance,
    policy: str | Policy,
    *,
    kill_at_estimate: bool = False,
    allocation_rule: str = "first-fit",
    migration: bool = False,
) -> str | None:
    """Why :func:`simulate` refuses ``policy`` on ``instance`` with these
    options, in one line, before any work; ``None`` when it runs.

    The family table's refusals first (a feature the policy's simulator
    does not follow, an option that makes no sense with a feature:
    :func:`optsched.families.simulation_refusal`), then the simulators'
    own: a policy that builds its own schedule takes no engine option, and
    on a machine with speeds or SMP nodes only the combinators and the
    engine policies that equal one run, never killing nor moving jobs.
    """
    chosen = parse_policy(policy)
    asked = ("kill_at_estimate",) if kill_at_estimate else ()
    simulator = simulator_of(instance, chosen)
    refused = simulation_refusal(instance, chosen.spec, simulator, asked)
    if refused is not None:
        return refused
    engine_options = kill_at_estimate or migration or allocation_rule != "first-fit"
    if not instance.machine.flat:
        if engine_options:
            return (
                "on a machine with speeds or SMP nodes jobs are never killed and "
                "never move: --kill-at-estimate, --migration and --allocation-rule "
                "do not apply"
            )
        if (
            not isinstance(chosen, Combinator | ModeChoosing)
            and _engine_equivalent(chosen) is None
        ):
            return (
                f"policy {chosen.spec!r} does not run on a machine with speeds or "
                f"SMP nodes; these do: {TOPOLOGY_POLICIES}"
            )
    elif isinstance(chosen, Standalone) and engine_options:
        return (
            f"policy {chosen.spec!r} builds its own schedule: --kill-at-estimate, "
            "--migration and --allocation-rule do not apply"
        )
    return None


def _on_topology(instance: Instance, chosen: Policy) -> SimulationResult:
    """Run ``chosen`` on a machine with speeds or SMP nodes (:func:`refusal`
    has let it through): a combinator as it is, ``adaptive`` and
    ``easy-scaling`` on the node simulator
    (:mod:`optsched.heuristics.topology.modes`); the engine's ``fcfs``,
    ``firstfit`` and ``easy`` as the combinators they equal
    (``blocking:f=fifo``, ``fit:f=fifo``, ``optimistic:f=fifo``, default
    placement), the schedule named by the spec given."""
    if isinstance(chosen, Combinator):
        return chosen.run(instance)
    if isinstance(chosen, ModeChoosing):
        began = time.perf_counter()
        schedule = run_mode_choosing(instance, chosen)
        stats = SimulationStats(wall_time=time.perf_counter() - began)
        return SimulationResult(schedule=schedule, stats=stats)
    combinator = _engine_equivalent(chosen)
    assert combinator is not None  # refusal() said so
    result = Combinator(algorithm=combinator).run(instance)
    schedule = result.schedule
    return SimulationResult(
        schedule=Schedule(schedule.placements, chosen.spec, schedule.killed),
        stats=result.stats,
    )


def _engine_equivalent(policy: Policy) -> str | None:
    # The engine policies that equal a combinator (checked to coincide on
    # flat machines: tests/families/topology/test_combinators.py).
    if isinstance(policy, Standalone) or policy.order != "fcfs" or policy.oracle:
        return None
    if type(policy) is Strict:
        return "blocking:f=fifo"
    if type(policy) is FirstFit:
        return "fit:f=fifo"
    if (
        type(policy) is Backfill
        and policy.depth == 1
        and policy.select == "queue"
        and policy.maxwait is None
        and policy.maxidle is None
    ):
        return "optimistic:f=fifo"
    return None


def _with_seed(policy: EnginePolicy, seed: int) -> EnginePolicy:
    import dataclasses

    return dataclasses.replace(policy, seed=seed)


PROGRESS_LINE_SECONDS = 30.0
"""Off a terminal, a progress line at most this often (a log stays short)."""


@contextmanager
def _progress_bar(total: int, wanted: bool) -> Iterator[Callable[[int], None] | None]:
    # Silent unless asked and the run is long enough to care; a bar on a
    # terminal, dated lines on standard error otherwise (a batch job's log
    # shows that a run of many minutes is alive, and how far it got).
    if not wanted or total < PROGRESS_MIN_JOBS:
        yield None
        return
    if not sys.stdout.isatty():
        yield _progress_lines(total)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeRemainingColumn,
    )

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("simulating", total=total)
        yield lambda done: bar.update(task, completed=done)


def _progress_lines(
    total: int, every: float = PROGRESS_LINE_SECONDS
) -> Callable[[int], None]:
    """A progress callback printing ``optsched: simulating: 45,000 of
    447,794 jobs done (10.0 %), 31 s`` to standard error at most every
    ``every`` seconds."""
    began = time.monotonic()
    last = began

    def report(done: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < every:
            return
        last = now
        print(
            f"optsched: simulating: {done:,} of {total:,} jobs done "
            f"({100 * done / total:.1f} %), {now - began:.0f} s",
            file=sys.stderr,
            flush=True,
        )

    return report
