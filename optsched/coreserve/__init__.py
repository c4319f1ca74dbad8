"""Grid co-reservation (Meltzer 2005): requests for parts on distinct
clusters with one common start, the clusters' price tables, the exact
per-request optimum, the online grid reservation service (A1-A5) over
clusters that run their own batch systems, and the offline optimum.

Modules: :mod:`~optsched.coreserve.tariff` (price tables and the cost rules),
:mod:`~optsched.coreserve.request` (requests, cluster states, choices),
:mod:`~optsched.coreserve.optimum` (the exact per-request optimum by event
points; :mod:`optsched.models.coreserve.request` is the CP-SAT model that must
agree), :mod:`~optsched.coreserve.cluster` (a cluster's batch system and
reservation service), :mod:`~optsched.coreserve.service` (A1-A5),
:mod:`~optsched.coreserve.simulate` and :mod:`~optsched.coreserve.metrics` (a whole
study run and its measures), :mod:`~optsched.coreserve.workload` and
:mod:`~optsched.coreserve.requests_gen` (cluster workloads cut from traces, R1-R3),
:mod:`~optsched.coreserve.scenario` (TOML scenarios),
:mod:`optsched.models.coreserve.offline` with
:mod:`~optsched.coreserve.offline_check` (the offline optimum and its checker).
"""

from optsched.coreserve.optimum import Optimum, optimum, pareto_front
from optsched.coreserve.request import Choice, ClusterState, Request
from optsched.coreserve.tariff import COST_RULES, PriceEntry, Tariff

__all__ = [
    "COST_RULES",
    "Choice",
    "ClusterState",
    "Optimum",
    "PriceEntry",
    "Request",
    "Tariff",
    "optimum",
    "pareto_front",
]
