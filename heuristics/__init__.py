"""Online simulator and scheduling policies (imported as ``optsched.heuristics``).

``simulate(instance, "easy")`` replays an instance under a policy named by a
spec string (grammar in :mod:`optsched.heuristics.spec`) and returns a
:class:`SimulationResult` whose schedule passes
:func:`optsched.check.check_schedule`. :data:`POLICY_NAMES` lists the
policy family. The offline list heuristics live in
:mod:`optsched.heuristics.rigid.offline`, the offline shelf algorithms (NFDH, FFDH,
NFIH, FFIH, FFDH*, FFIH*, SMART) in :mod:`optsched.heuristics.shelf.algorithms`
(:func:`shelf_schedule`), and the policies built on them (the batch
framework, PC²) in :mod:`optsched.heuristics.shelf.policies`.
Rassmann's combinators (:data:`COMBINATOR_NAMES`: ``blocking``, ``fit``,
``fit2``, ``afkt-backfill``, ``optimistic`` and the thesis's names) live in
:mod:`optsched.heuristics.topology.combinators` and run on the node simulator
(:mod:`optsched.heuristics.topology.simulator`), on flat machines and on machines
with speeds or SMP nodes.
"""

from optsched.heuristics.engine.allocation import ALLOCATION_RULES
from optsched.heuristics.engine.core import SimulationResult, SimulationStats
from optsched.heuristics.engine.runner import simulate
from optsched.heuristics.rigid.mallmann import Mallmann
from optsched.heuristics.rigid.orders import ORDER_NAMES
from optsched.heuristics.rigid.policies import (
    RIGID_NAMES,
    SELECT_NAMES,
    Backfill,
    BestPackage,
    Conservative,
    EnginePolicy,
    FirstFit,
    Policy,
    Strict,
)
from optsched.heuristics.shelf.algorithms import (
    SHELF_ALGORITHMS,
    ShelfPlan,
    ShelfSpec,
    shelf_plan,
    shelf_schedule,
)
from optsched.heuristics.shelf.policies import PC2, SHELF_POLICY_NAMES, Batch
from optsched.heuristics.spec import parse_policy, split_policy_specs
from optsched.heuristics.topology.combinators import (
    COMBINATOR_NAMES,
    Combinator,
    parse_combinator,
)

POLICY_NAMES: tuple[str, ...] = (*RIGID_NAMES, *SHELF_POLICY_NAMES)
"""The named policies of the family (each parses on its own and runs on
every instance). The preemptive ones (``pbi``, ``psrs``, ``gang``), those
that choose processor counts and Rassmann's combinators are listed apart
(:func:`optsched.heuristics.spec.valid_names` gives every name): they build
their schedules themselves and refuse what their algorithms do not cover."""

__all__ = [
    "ALLOCATION_RULES",
    "COMBINATOR_NAMES",
    "ORDER_NAMES",
    "PC2",
    "POLICY_NAMES",
    "SELECT_NAMES",
    "SHELF_ALGORITHMS",
    "Backfill",
    "Batch",
    "BestPackage",
    "Combinator",
    "Conservative",
    "EnginePolicy",
    "FirstFit",
    "Mallmann",
    "Policy",
    "ShelfPlan",
    "ShelfSpec",
    "SimulationResult",
    "SimulationStats",
    "Strict",
    "parse_combinator",
    "parse_policy",
    "shelf_plan",
    "shelf_schedule",
    "simulate",
    "split_policy_specs",
]
