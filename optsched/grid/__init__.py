"""Grid co-reservation (Meltzer 2005): requests for parts on distinct
clusters with one common start, the clusters' price tables, the exact
per-request optimum, the online grid reservation service (A1-A5) over
clusters that run their own batch systems, and the offline optimum.

Modules: :mod:`~optsched.grid.tariff` (price tables and the cost rules),
:mod:`~optsched.grid.request` (requests, cluster states, choices),
:mod:`~optsched.grid.optimum` (the exact per-request optimum by event
points; :mod:`optsched.models.coreserve.request` is the CP-SAT model that must
agree), :mod:`~optsched.grid.cluster` (a cluster's batch system and
reservation service), :mod:`~optsched.grid.service` (A1-A5),
:mod:`~optsched.grid.simulate` and :mod:`~optsched.grid.metrics` (a whole
study run and its measures), :mod:`~optsched.grid.workload` and
:mod:`~optsched.grid.requests_gen` (cluster workloads cut from traces, R1-R3),
:mod:`~optsched.grid.scenario` (TOML scenarios),
:mod:`optsched.models.coreserve.offline` with
:mod:`~optsched.grid.offline_check` (the offline optimum and its checker).
"""

from optsched.grid.optimum import Optimum, optimum, pareto_front
from optsched.grid.request import Choice, ClusterState, Request
from optsched.grid.tariff import COST_RULES, PriceEntry, Tariff

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
