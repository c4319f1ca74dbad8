"""The family table: every instance feature once, in one ordered table.

A feature is something an :class:`~optsched.instance.Instance` (or a
schedule) may carry beyond the plain problem of rigid jobs on identical
processors: a site calendar, job chains, outages, an NQS user limit, node
speeds, SMP nodes, moldable or malleable jobs, contiguous allocation, busy
blocks, schedules in pieces. Each feature belongs to a *family*, whose
room (a sub-package of the same name) holds its code in every tree.

Each record of :data:`FEATURES` says once, for every consumer, what the
feature means:

- ``check``: the checker rule (``rule(instance, schedule, rest)``) that
  reports the feature's own violations and hands the instance reduced to
  the plain problem (the feature dropped) to ``rest``, the checker's walk;
  ``None``: judged by the plain rules.
- ``relax``: the instance without the feature, a *relaxation*: every
  schedule of the original is (after the stated transformation) a schedule
  of the relaxation with an objective no larger, so
  ``OPT(relax(I)) <= OPT(I)`` and every lower bound of the relaxation is
  one of ``I``. ``None`` where dropping the feature is no relaxation
  (choosing a job's mode for it is a restriction).
- ``bounds``: ``handler(instance, objective, deadline, rest)`` giving the
  feature's bounds (``rest``, the bound walk, bounds the reduced instance);
  ``None``: the bounds of the relaxation hold.
  ``bounds_unless``: the features in whose presence those bounds do not
  hold (they read what such a feature lets the scheduler change: the site
  bounds read each job's request, a moldable job may run on another
  size); the walk then passes over the row, dropping the feature being a
  relaxation.
- ``candidates``: ``handler(instance, objective, incumbents, deadline)``
  giving the checked starting schedules the plain list schedule cannot
  give (it ignores the feature); ``None``: the plain list schedule serves.
- ``exact``: the CP-SAT model for instances whose *leading* feature this
  is, and ``exact_with``, the other features that model handles. Any other
  feature present is relaxed for the lower bound (the schedule then counts
  only when it passes the checker on the original instance): see
  :func:`exact_plan`.
- ``backends``: the back-ends that take the feature (``None``: all); the
  others refuse it in one line, :func:`refusal`.
- ``offline``: what an offline model sees of a feature the online world
  meets unannounced (outages become busy blocks).
- ``simulators``: the simulators that follow the feature (``None``: all):
  ``engine`` (the event engine of :mod:`optsched.heuristics.engine.core` and its
  policies), ``engine-modes`` (the same engine running a policy that
  chooses each moldable job's mode at its start, on an instance with
  moldable or malleable jobs), ``standalone`` (policies that build their
  schedule themselves: shelves, preemption, rescaling, DEQ), ``nodes`` (the
  node simulator of
  Rassmann's combinators, the only one on machines with speeds or SMP
  nodes, where adaptive and easy-scaling choose moldable jobs' modes through
  its hook); ``unsimulated(spec, simulator)`` says in one line why the others
  refuse it (:func:`simulation_refusal`); ``refused_options``, the options
  of ``simulate`` that make no sense with the feature, each with its reason.

Handlers are named ``"module:function"`` and imported on first use
(:func:`load`), so that this table, part of the core, imports no model,
policy or checker code, and each consumer loads only its own column.

The order of :data:`FEATURES` is the precedence of the features: each
dispatcher (:func:`optsched.check.check_schedule`,
:func:`optsched.models.solve`, :func:`optsched.models.rigid.cpsat.solve`,
:func:`optsched.models.rigid.bounds.lower_bounds_within`,
:func:`optsched.models.common.solution.upper_bound_candidates`,
:func:`optsched.heuristics.simulate`) walks it in this order and takes the
first present feature that has an entry in its column.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from optsched.instance import Instance

__all__ = [
    "FEATURES",
    "SIMULATORS",
    "ExactPlan",
    "Feature",
    "exact_plan",
    "feature",
    "features_of",
    "first_with",
    "load",
    "offline_view",
    "refusal",
    "relaxed",
    "simulation_refusal",
]

#: Back-ends that model site calendars, chains, speeds and SMP nodes.
_CPSAT_AND_BOUNDS = ("cpsat", "bounds-only")


@dataclass(frozen=True)
class Feature:
    """One row of the family table (the module docstring says what each
    column means to its consumer).

    Attributes
    ----------
    name, family, title
        The feature's name, the room it belongs to (``site``, ``topology``,
        ...) and how messages name it.
    present
        Whether an instance carries it.
    relax
        The instance without it, a relaxation (``None``: none exists).
    check, bounds, candidates, exact
        ``"module:function"`` handlers of the checker, the bounds, the
        starting schedules and the exact model (``None``: the plain ones).
    bounds_unless
        The features in whose presence its bounds do not hold.
    exact_with
        The other features the exact model handles.
    backends, unmodelled
        The back-ends that take it, and why the others refuse it.
    offline
        What an offline model sees of it.
    in_schedule
        Whether a schedule carries it (lost attempts, pieces).
    simulators, unsimulated, refused_options
        The simulators that follow it, why the others refuse it, and the
        ``simulate`` options refused with it.
    """

    name: str
    family: str
    title: str
    present: Callable[[Instance], bool]
    relax: Callable[[Instance], Instance] | None = None
    check: str | None = None
    bounds: str | None = None
    bounds_unless: frozenset[str] = frozenset()
    candidates: str | None = None
    exact: str | None = None
    exact_with: frozenset[str] = frozenset()
    backends: tuple[str, ...] | None = None
    unmodelled: Callable[[Instance], str] | None = None
    offline: Callable[[Instance], Instance] | None = None
    in_schedule: Callable[[Any], bool] | None = None
    simulators: tuple[str, ...] | None = None
    unsimulated: Callable[[str, str], str] | None = None
    refused_options: tuple[tuple[str, str], ...] = ()

    def applies(self, instance: Instance, schedule: Any = None) -> bool:
        """Whether the instance (or, for the checker, the schedule) carries it."""
        if self.present(instance):
            return True
        return (
            schedule is not None
            and self.in_schedule is not None
            and self.in_schedule(schedule)
        )


# --------------------------------------------------------------------------
# Presence and relaxations (plain functions of the core types)
# --------------------------------------------------------------------------


def _has_user_limit(instance: Instance) -> bool:
    calendar = instance.machine.calendar
    return calendar is not None and calendar.user_limit is not None


def _without_user_limit(instance: Instance) -> Instance:
    # Dropping the limit only adds schedules.
    calendar = instance.machine.calendar
    assert calendar is not None
    free = dataclasses.replace(calendar, user_limit=None)
    return instance.replace(machine=instance.machine.replace(calendar=free))


def _has_outages(instance: Instance) -> bool:
    return bool(instance.machine.outages)


def _outages_offline(instance: Instance) -> Instance:
    # Known in advance, outages are busy blocks: a schedule's complete runs
    # avoid them, its lost attempts drop out.
    return instance.replace(machine=instance.machine.offline())


def _without_outages(instance: Instance) -> Instance:
    # Fewer processors down: every schedule stays feasible.
    return instance.replace(machine=instance.machine.replace(outages=()))


def _has_chains(instance: Instance) -> bool:
    return any(job.preceding_job is not None for job in instance.jobs)


def _without_chains(instance: Instance) -> Instance:
    # Fewer precedences: every schedule stays feasible.
    from optsched.site.chains import without_chains

    return instance.replace(jobs=without_chains(instance.jobs))


def _has_calendar(instance: Instance) -> bool:
    return instance.machine.calendar is not None


def _without_calendar(instance: Instance) -> Instance:
    # No admission rule at starts: every schedule stays feasible.
    return instance.replace(machine=instance.machine.replace(calendar=None))


def _has_speeds(instance: Instance) -> bool:
    return instance.machine.speeds is not None


def _has_nodes(instance: Instance) -> bool:
    return instance.machine.nodes is not None


def _flat(instance: Instance) -> Instance:
    # Each job at its shortest run time on identical processors
    # (optsched.topology.machines.flat_relaxation: the proof is there).
    from optsched.topology.machines import flat_relaxation

    return flat_relaxation(instance)


def _has_modes(instance: Instance) -> bool:
    return instance.moldable


def _has_malleable(instance: Instance) -> bool:
    return instance.malleable


def _is_contiguous(instance: Instance) -> bool:
    return instance.machine.allocation == "contiguous"


def _any_allocation(instance: Instance) -> Instance:
    # Blocks keep their counts and lose their offsets: every contiguous
    # schedule is an ``any`` schedule.
    return instance.replace(machine=instance.machine.with_allocation("any"))


def _has_blocks(instance: Instance) -> bool:
    return bool(instance.machine.unavailable)


def _without_blocks(instance: Instance) -> Instance:
    return instance.replace(machine=instance.machine.replace(unavailable=()))


def _never(instance: Instance) -> bool:
    return False


def _lost_attempts(schedule: Any) -> bool:
    return bool(schedule.lost)


def _in_pieces(schedule: Any) -> bool:
    return any(len(p.pieces) > 1 for p in schedule.placements.values())


def _ignores_calendar(instance: Instance) -> str:
    return (
        "ignores site calendars (a job may start only where the calendar "
        "admits it): use cpsat or bounds-only"
    )


def _ignores_chains(instance: Instance) -> str:
    return (
        "ignores job chains (SWF fields 17/18): use cpsat or bounds-only, or "
        "--no-chains to drop them"
    )


def _identical_processors(instance: Instance) -> str:
    return (
        "schedules on identical processors; the machine has speeds or SMP "
        "nodes: use cpsat or bounds-only"
    )


def _rigid_only(instance: Instance) -> str:
    count = sum(1 for job in instance.jobs if job.modes)
    kind = "malleable" if instance.malleable else "moldable"
    return (
        f"schedules rigid jobs only; the instance has {count} {kind} "
        f"job{'s' if count != 1 else ''}: use cpsat or bounds-only"
    )


SIMULATORS: tuple[tuple[str, str], ...] = (
    ("engine", "the event engine's policies (fcfs, easy, conservative, ...)"),
    (
        "engine-modes",
        "the engine's policies that choose a moldable job's mode at its start "
        "(adaptive, easy-scaling), on moldable or malleable jobs",
    ),
    ("standalone", "policies that build their own schedule (shelves, pbi, deq, ...)"),
    (
        "nodes",
        "the node simulator of the combinators (speeds, SMP nodes), which also "
        "runs fcfs, firstfit, easy, adaptive and easy-scaling there",
    ),
)
"""The simulators of the ``simulators`` column, each with what runs on it."""

_ENGINE_ONLY = ("engine", "engine-modes")
_NOT_NODES = ("engine", "engine-modes", "standalone")


def _own_schedule(spec: str, simulator: str) -> str:
    if simulator == "nodes":
        return f"policy {spec!r} runs on the node simulator, which"
    return f"policy {spec!r} builds its own schedule and"


def _unfollowed_chains(spec: str, simulator: str) -> str:
    return (
        f"policy {spec!r} builds its own schedule and does not follow job chains "
        "(SWF fields 17/18); the engine's policies and the combinators do, and "
        "--no-chains drops them"
    )


def _unfollowed_calendar(spec: str, simulator: str) -> str:
    return (
        f"{_own_schedule(spec, simulator)} ignores site calendars; the engine's "
        "policies (fcfs, easy, conservative, ...) and the combinators follow them"
    )


def _unfollowed_outages(spec: str, simulator: str) -> str:
    return (
        f"{_own_schedule(spec, simulator)} does not follow machine outages; the "
        "engine's policies (fcfs, easy, conservative, ...) kill and requeue the "
        "jobs an outage hits"
    )


def _unfollowed_blocks(spec: str, simulator: str) -> str:
    return (
        "the node simulator takes no busy blocks (use the flat engine's "
        "policies fcfs, firstfit, easy, ...)"
    )


def _unfollowed_contiguity(spec: str, simulator: str) -> str:
    return "the node simulator needs allocation 'any'"


_SITE_BOUNDS = "optsched.models.site.bounds:bounds_within"
_CHOSEN_SIZES = frozenset({"modes", "malleable"})
"""Features whose jobs run on sizes the scheduler chooses (the site bounds
read each job's request: a moldable job may start earlier on fewer
processors)."""
_SITE_CANDIDATES = "optsched.models.site.model:site_candidates"
_SITE_MODEL = "optsched.models.site.model:solve"
_TOPOLOGY_CANDIDATES = "optsched.models.topology.candidates:topology_candidates"

FEATURES: tuple[Feature, ...] = (
    Feature(
        "user-limit",
        "site",
        "user limit",
        _has_user_limit,
        relax=_without_user_limit,
        check="optsched.check.limits:rule",
    ),
    Feature(
        "outages",
        "site",
        "machine outages",
        _has_outages,
        relax=_without_outages,
        check="optsched.check.outages:rule",
        offline=_outages_offline,
        in_schedule=_lost_attempts,
        simulators=_ENGINE_ONLY,
        unsimulated=_unfollowed_outages,
    ),
    Feature(
        "chains",
        "site",
        "job chains (SWF fields 17/18)",
        _has_chains,
        relax=_without_chains,
        check="optsched.check.site:chains_rule",
        bounds=_SITE_BOUNDS,
        bounds_unless=_CHOSEN_SIZES,
        candidates=_SITE_CANDIDATES,
        exact=_SITE_MODEL,
        exact_with=frozenset({"calendar", "contiguous", "busy-blocks"}),
        backends=_CPSAT_AND_BOUNDS,
        unmodelled=_ignores_chains,
        simulators=("engine", "engine-modes", "nodes"),
        unsimulated=_unfollowed_chains,
    ),
    Feature(
        "calendar",
        "site",
        "site calendar",
        _has_calendar,
        relax=_without_calendar,
        check="optsched.check.site:calendar_rule",
        bounds=_SITE_BOUNDS,
        bounds_unless=_CHOSEN_SIZES,
        candidates=_SITE_CANDIDATES,
        exact=_SITE_MODEL,
        exact_with=frozenset({"chains", "contiguous", "busy-blocks"}),
        backends=_CPSAT_AND_BOUNDS,
        unmodelled=_ignores_calendar,
        simulators=("engine", "engine-modes", "nodes"),
        unsimulated=_unfollowed_calendar,
    ),
    Feature(
        "speeds",
        "topology",
        "node speeds",
        _has_speeds,
        relax=_flat,
        check="optsched.check.topology:rule",
        bounds="optsched.models.topology.bounds:topology_lower_bounds",
        candidates=_TOPOLOGY_CANDIDATES,
        exact="optsched.models.topology.speeds:solve",
        exact_with=frozenset({"calendar"}),
        backends=_CPSAT_AND_BOUNDS,
        unmodelled=_identical_processors,
    ),
    Feature(
        "nodes",
        "topology",
        "SMP nodes",
        _has_nodes,
        relax=_flat,
        check="optsched.check.topology:rule",
        bounds="optsched.models.topology.bounds:topology_lower_bounds",
        candidates=_TOPOLOGY_CANDIDATES,
        exact="optsched.models.topology.smp:solve",
        exact_with=frozenset({"calendar"}),
        backends=_CPSAT_AND_BOUNDS,
        unmodelled=_identical_processors,
    ),
    Feature(
        "modes",
        "moldable",
        "moldable jobs",
        _has_modes,
        check="optsched.check.modes:rule",
        bounds="optsched.models.moldable.bounds:moldable_lower_bounds",
        exact="optsched.models.moldable.model:solve",
        exact_with=frozenset({"malleable", "contiguous", "busy-blocks"}),
        backends=("cpsat", "bounds-only", "preemptive"),
        unmodelled=_rigid_only,
    ),
    Feature(
        "malleable",
        "moldable",
        "malleable jobs",
        _has_malleable,
        refused_options=(
            (
                "kill_at_estimate",
                "--kill-at-estimate does not apply to malleable jobs: they run "
                "to completion (checker rule 9), at a rate that changes with "
                "their processors",
            ),
        ),
    ),
    Feature(
        "contiguous",
        "rigid",
        "contiguous allocation",
        _is_contiguous,
        relax=_any_allocation,
        simulators=_NOT_NODES,
        unsimulated=_unfollowed_contiguity,
    ),
    Feature(
        "busy-blocks",
        "rigid",
        "busy blocks",
        _has_blocks,
        relax=_without_blocks,
        simulators=_NOT_NODES,
        unsimulated=_unfollowed_blocks,
    ),
    Feature("pieces", "preempt", "schedules in pieces", _never, in_schedule=_in_pieces),
)
"""The family table, in order of precedence (module docstring)."""

_BY_NAME = {f.name: f for f in FEATURES}


def feature(name: str) -> Feature:
    """The row named ``name`` (``KeyError`` naming the valid ones)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(
            f"unknown feature {name!r}; features: {', '.join(_BY_NAME)}"
        ) from None


def features_of(instance: Instance) -> tuple[Feature, ...]:
    """The features ``instance`` carries, in table order."""
    return tuple(f for f in FEATURES if f.present(instance))


@cache
def load(target: str) -> Callable[..., Any]:
    """The handler named ``"module:function"`` (imported on first use)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def first_with(column: str, instance: Instance, schedule: Any = None) -> Feature | None:
    """The first feature present (in table order) with an entry in ``column``
    (for ``bounds``, one whose bounds hold with the features present:
    ``Feature.bounds_unless``)."""
    for row in FEATURES:
        if getattr(row, column) is not None and row.applies(instance, schedule):
            if column == "bounds" and any(
                _BY_NAME[name].present(instance) for name in row.bounds_unless
            ):
                continue  # relaxed: a later row's bounds hold without it
            return row
    return None


def refusal(instance: Instance, backend: str) -> str | None:
    """Why ``backend`` refuses ``instance`` (one line), or ``None``."""
    for row in features_of(instance):
        if row.backends is not None and backend not in row.backends:
            assert row.unmodelled is not None, row.name
            return f"back-end {backend} {row.unmodelled(instance)}"
    return None


def simulation_refusal(
    instance: Instance, spec: str, simulator: str, options: Iterable[str] = ()
) -> str | None:
    """Why ``simulator`` cannot run policy ``spec`` on ``instance`` with the
    ``simulate`` options named in ``options`` (one line, from the first
    feature in table order that it does not follow), or ``None``."""
    asked = set(options)
    for row in features_of(instance):
        if row.simulators is not None and simulator not in row.simulators:
            assert row.unsimulated is not None, row.name
            return row.unsimulated(spec, simulator)
        for option, reason in row.refused_options:
            if option in asked:
                return reason
    return None


def offline_view(instance: Instance) -> Instance:
    """``instance`` as an offline model sees it (every ``offline`` applied)."""
    for row in FEATURES:
        if row.offline is not None and row.present(instance):
            instance = row.offline(instance)
    return instance


def relaxed(instance: Instance, names: Iterable[str]) -> Instance:
    """``instance`` with the named features relaxed, in table order."""
    wanted = set(names)
    for row in FEATURES:
        if row.name in wanted and row.present(instance):
            assert row.relax is not None, row.name
            instance = row.relax(instance)
    return instance


@dataclass(frozen=True)
class ExactPlan:
    """How the exact models meet an instance (:func:`exact_plan`).

    ``model`` is the exact model's handler (``None``: the rigid model of
    :mod:`optsched.models.rigid.cpsat`), ``lead`` the feature that chose it,
    ``instance`` what the model solves (the original with the features of
    ``relaxed`` relaxed, so its lower bounds hold for the original) and
    ``blocking`` a feature present that no exact model handles and that
    cannot be relaxed (then there is no exact model for the combination).
    """

    model: str | None
    lead: str | None
    instance: Instance
    relaxed: tuple[str, ...] = ()
    blocking: str | None = None


def exact_plan(instance: Instance) -> ExactPlan:
    """The exact model for ``instance`` and the features it must relax.

    The lead is the first present feature (table order) whose exact model
    handles every other present feature (a site calendar on a machine with
    speeds: the speed model), else the first with an exact model all of
    whose other unhandled present features can be relaxed
    (``Feature.relax``); those are relaxed, which may remove the lead too
    (the flat relaxation drops speeds and nodes together), so the plan is
    made again on the relaxed instance until nothing is left to relax.
    Features with an ``offline`` view and the user limit are left to
    :func:`optsched.models.solve`, which applies them first.
    """
    original = instance
    while True:
        present = [
            f
            for f in features_of(instance)
            if f.offline is None and f.name != "user-limit"
        ]
        lead, rest, blocking = _lead(present)
        if blocking is not None:
            return ExactPlan(None, None, original, blocking=blocking)
        if not rest:
            kept = {f.name for f in features_of(instance)}
            dropped = tuple(
                f.name
                for f in features_of(original)
                if f.name not in kept and f.offline is None
            )
            return ExactPlan(
                lead.exact if lead is not None else None,
                lead.name if lead is not None else None,
                instance,
                dropped,
            )
        instance = relaxed(instance, (f.name for f in rest))


_RIGID_HANDLES = frozenset({"contiguous", "busy-blocks"})
"""What the rigid CP-SAT model handles itself."""


def _lead(
    present: list[Feature],
) -> tuple[Feature | None, list[Feature], str | None]:
    """The first leading feature whose model handles every present feature
    (an exact model: the speed model under a calendar rather than the site
    model on the flat relaxation), else the first whose model can relax
    every other present feature it does not handle (``None``: the rigid
    model); those features; and the first feature that blocked every lead
    (``None`` if one fits)."""
    blocking: str | None = None
    leads: list[Feature | None] = [f for f in present if f.exact is not None]
    fits: list[tuple[Feature | None, list[Feature]]] = []
    for lead in leads or [None]:
        handled = {lead.name, *lead.exact_with} if lead else _RIGID_HANDLES
        rest = [f for f in present if f.name not in handled]
        stuck = next((f for f in rest if f.relax is None), None)
        if stuck is None:
            fits.append((lead, rest))
        else:
            blocking = blocking or stuck.name
    if not fits:
        return None, [], blocking
    lead, rest = next((fit for fit in fits if not fit[1]), fits[0])
    return lead, rest, None
