"""Grid co-reservation (Meltzer 2005): requests for parts on distinct
clusters with one common start, the clusters' price tables, the exact
per-request optimum, and the online grid reservation service."""

from optsched.grid.request import Choice, ClusterState, Request
from optsched.grid.tariff import COST_RULES, PriceEntry, Tariff

__all__ = ["COST_RULES", "Choice", "ClusterState", "PriceEntry", "Request", "Tariff"]
