"""``simulate``: replay an instance under a policy."""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from optsched.heuristics.engine import (
    SimulationResult,
    Simulator,
    reservations_by_id,
    stats_of,
)
from optsched.heuristics.orders import order_ranks
from optsched.heuristics.policies import Policy
from optsched.heuristics.spec import parse_policy
from optsched.heuristics.standalone import Standalone
from optsched.instance import Instance

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
        :class:`~optsched.heuristics.policies.Policy`.
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
        busy blocks overlapping on processors.
    """
    chosen = parse_policy(policy)
    if isinstance(chosen, Standalone):
        if kill_at_estimate or migration or allocation_rule != "first-fit":
            raise ValueError(
                f"policy {chosen.spec!r} builds its own schedule: --kill-at-estimate, "
                "--migration and --allocation-rule do not apply"
            )
        return chosen.run(instance)  # builds its schedule itself, no engine
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
    ranks = order_ranks(chosen.order, sim.size, sim.estimate, seed=chosen.seed or 0)
    with _progress_bar(len(sim.jobs), progress) as advance, _gc_paused():
        sim.run(chosen, ranks, advance)
        schedule = sim.schedule(chosen.spec)
    return SimulationResult(
        schedule=schedule,
        stats=stats_of(sim, time.perf_counter() - began),
        reservations=reservations_by_id(sim),
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    # The simulation allocates many small objects and creates no reference
    # cycles; the cyclic collector's passes cost up to a quarter of a run.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _with_seed(policy: Policy, seed: int) -> Policy:
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
