"""Online simulator and scheduling policies (imported as ``optsched.heuristics``).

``simulate(instance, "easy")`` replays an instance under a policy named by a
spec string (grammar in :mod:`optsched.heuristics.spec`) and returns a
:class:`SimulationResult` whose schedule passes
:func:`optsched.check.check_schedule`. :data:`POLICY_NAMES` lists the
policy family. The offline list and shelf heuristics live in
:mod:`optsched.heuristics.offline`.
"""

from optsched.heuristics.allocation import ALLOCATION_RULES
from optsched.heuristics.engine import SimulationResult, SimulationStats
from optsched.heuristics.orders import ORDER_NAMES
from optsched.heuristics.policies import (
    SELECT_NAMES,
    Backfill,
    BestPackage,
    Conservative,
    FirstFit,
    Policy,
    Strict,
)
from optsched.heuristics.runner import simulate
from optsched.heuristics.spec import POLICY_NAMES, parse_policy, split_policy_specs

__all__ = [
    "ALLOCATION_RULES",
    "ORDER_NAMES",
    "POLICY_NAMES",
    "SELECT_NAMES",
    "Backfill",
    "BestPackage",
    "Conservative",
    "FirstFit",
    "Policy",
    "SimulationResult",
    "SimulationStats",
    "Strict",
    "parse_policy",
    "simulate",
    "split_policy_specs",
]
