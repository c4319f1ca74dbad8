"""The grid simulation: local batch systems plus the grid reservation service.

Requests are processed in submit order. Before a request submitted at
``t`` is handled, every cluster's simulator has processed all instants
before ``t`` (job ends, arrivals, scheduling passes); the service then
queries and reserves at ``t`` (Meltzer 2005, §5.4: the timer stops the
batch systems at a request's submit so that its status queries see the
current state) and granted reservations become busy blocks of the clusters
that hold them. After the last request the clusters run until every local
job has ended.

Optionally, each request's exact optimum over continuous start times is
computed on the same cluster states (:func:`optsched.coreserve.optimum.optimum`),
which gives the algorithms' gaps in seconds and in money.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from optsched.coreserve.cluster import LocalCluster
from optsched.coreserve.optimum import optimum
from optsched.coreserve.request import Request
from optsched.coreserve.service import GridService, Outcome, ServiceConfig


@dataclass(frozen=True)
class RequestOptimum:
    """The per-request optimum at submission (capacity only, no fairness)."""

    earliest: int | None  # earliest feasible start
    earliest_cost: Fraction | None  # cheapest cost at that start
    cheapest: Fraction | None  # lowest cost at any start
    cheapest_start: int | None


@dataclass
class GridRun:
    """Everything a grid simulation produced."""

    clusters: list[LocalCluster]
    config: ServiceConfig
    outcomes: list[Outcome] = field(default_factory=list)
    optima: dict[int, RequestOptimum] = field(default_factory=dict)


def simulate_grid(
    clusters: Sequence[LocalCluster],
    requests: Sequence[Request],
    config: ServiceConfig,
    *,
    seed: int = 0,
    optimum: bool = False,
) -> GridRun:
    """Run the local batch systems and the grid service together.

    Parameters
    ----------
    clusters
        Fresh :class:`LocalCluster` objects (their simulators not advanced).
    requests
        The co-reservation requests (distinct ids).
    config
        The service's algorithm and parameters.
    seed
        Seed of the variant randomisation (A1-A4).
    optimum
        Also compute each request's exact optimum at submission.
    """
    ids = [r.id for r in requests]
    if len(set(ids)) != len(ids):
        raise ValueError("request ids must be distinct")
    service = GridService(clusters, config, seed=seed)
    run = GridRun(list(clusters), config)
    for request in sorted(requests, key=lambda r: (r.submit, r.id)):
        now = request.submit
        for cluster in clusters:
            cluster.advance(now)
        if optimum:
            run.optima[request.id] = _optimum_at(request, clusters, now, config)
        run.outcomes.append(service.process(request, now))
    for cluster in clusters:
        cluster.sim.advance(None)
        cluster.sim.finish()
    return run


def _optimum_at(
    request: Request,
    clusters: Sequence[LocalCluster],
    now: int,
    config: ServiceConfig,
) -> RequestOptimum:
    states = [cluster.state(now) for cluster in clusters]
    if request.earliest_start < now <= request.latest_start:
        request = dataclasses.replace(request, earliest_start=now)
    first = optimum(request, states, "start", cost_rule=config.cost_rule).choice
    cheap = optimum(request, states, "cost", cost_rule=config.cost_rule).choice
    return RequestOptimum(
        earliest=None if first is None else first.start,
        earliest_cost=None if first is None else first.cost,
        cheapest=None if cheap is None else cheap.cost,
        cheapest_start=None if cheap is None else cheap.start,
    )
