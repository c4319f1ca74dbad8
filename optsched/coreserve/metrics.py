"""Measures of a grid simulation (Meltzer 2005, §6.1).

Grid users: failure rate, relative start and cost differences, mean cost,
messages and reservation efficiency, and (beyond the study) the gap of the
chosen start and cost to the request's exact optimum. Local users: longest
waits, unfairness degree, expansion factor by size class. Administrators:
utilisation split into jobs and reservations.

Definitions (section numbers of the thesis):

* failure rate = failed / all requests (§3.5);
* filter degree of request ``a`` at cluster ``c`` = TRs removed by the
  algorithm's filters / A1's TRs (§3.5; 1 when A1 has none), infeasibility
  rate of ``c`` = share of requests with filter degree 1 there;
* unfairness of an accepted request (§3.2) = of the local jobs waiting on
  its clusters at its submission, the share still waiting when its parts
  start (a job starting at that instant counts as still waiting: the
  reservation took its processors first); 0 when none waited;
* wait = start - submit of a local job; expansion factor (§3.3) = (wait +
  run time) / wallclock;
* utilisation (§3.4) = (CPU-seconds of jobs + of reservations within
  ``[0, t_stop)``) / (CPUs * ``t_stop``), pro rata for what straddles
  ``t_stop``;
* relative start difference (§3.7) = (start - min) / (max - min) over the
  formed variants (or, ``reference="earliest"``, min = the request's
  earliest start, §6.8 footnote 6); relative cost difference (§3.8) alike;
* efficiency (§3.6) = 1 - n / N with n reserve + rollback messages and N
  the worst case of :func:`~optsched.coreserve.service.worst_case_messages`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from optsched.coreserve.service import Outcome
from optsched.coreserve.simulate import GridRun

SIZE_CLASSES = (
    (1, 15),
    (16, 32),
    (33, 64),
    (65, 128),
    (129, 256),
    (257, 512),
    (513, 1024),
)
"""CPU ranges of the expansion-factor classes (§8.5, plus 1-15 for small clusters)."""


@dataclass(frozen=True)
class ClusterMeasures:
    """Per-cluster measures."""

    name: str
    jobs: int
    job_utilisation: float
    reservation_utilisation: float
    reservations: int
    mean_expansion: float
    mean_filter_degree: float
    infeasibility_rate: float
    killed: int


@dataclass(frozen=True)
class GridMeasures:
    """Measures of one grid run."""

    requests: int
    accepted: int
    failure_rate: float
    unfairness: float
    max_wait: int
    top10_wait: float
    mean_expansion: float
    expansion_by_size: dict[str, float]
    relative_start: float
    relative_start_earliest: float
    relative_cost: float
    mean_cost: float
    at_earliest: float
    messages: int
    status_queries: int
    efficiency: float
    start_gap: float | None
    cost_gap: float | None
    clusters: list[ClusterMeasures]

    def rows(self) -> list[tuple[str, str]]:
        """``(measure, value)`` rows for a table."""
        out = [
            ("requests", str(self.requests)),
            ("accepted", str(self.accepted)),
            ("failure rate", f"{self.failure_rate:.3f}"),
            ("unfairness degree", f"{self.unfairness:.3f}"),
            ("max wait (s)", str(self.max_wait)),
            ("top-10 wait (s)", f"{self.top10_wait:.0f}"),
            ("mean expansion factor", f"{self.mean_expansion:.2f}"),
            ("relative start difference", f"{self.relative_start:.3f}"),
            ("relative start (to earliest)", f"{self.relative_start_earliest:.3f}"),
            ("relative cost difference", f"{self.relative_cost:.3f}"),
            ("mean cost", f"{self.mean_cost:.1f}"),
            ("started at earliest start", f"{self.at_earliest:.3f}"),
            ("reserve + rollback messages", str(self.messages)),
            ("status queries", str(self.status_queries)),
            ("efficiency 1 - n/N", f"{self.efficiency:.4f}"),
        ]
        if self.start_gap is not None:
            out.append(("mean start gap to optimum (s)", f"{self.start_gap:.0f}"))
        if self.cost_gap is not None:
            out.append(("mean cost gap to optimum", f"{self.cost_gap:.2f}"))
        for name, value in self.expansion_by_size.items():
            out.append((f"expansion factor {name} CPUs", f"{value:.2f}"))
        return out


def measure(run: GridRun, t_stop: int) -> GridMeasures:
    """The study's measures of ``run``, utilisation counted up to ``t_stop``."""
    outcomes = run.outcomes
    accepted = [o for o in outcomes if o.accepted]
    waits, expansions, by_size = _local_jobs(run)
    top = sorted(waits, reverse=True)[:10]
    start_gaps, cost_gaps = _gaps(run)
    return GridMeasures(
        requests=len(outcomes),
        accepted=len(accepted),
        failure_rate=_mean([0.0 if o.accepted else 1.0 for o in outcomes]),
        unfairness=_mean([_unfairness(run, o) for o in accepted]),
        max_wait=max(waits, default=0),
        top10_wait=_mean([float(w) for w in top]),
        mean_expansion=_mean(expansions),
        expansion_by_size={
            f"{lo}-{hi}": _mean(values)
            for (lo, hi), values in by_size.items()
            if values
        },
        relative_start=_mean([_relative_start(o, False) for o in accepted]),
        relative_start_earliest=_mean([_relative_start(o, True) for o in accepted]),
        relative_cost=_mean([_relative_cost(o) for o in accepted]),
        mean_cost=_mean([float(o.cost) for o in accepted if o.cost is not None]),
        at_earliest=_mean(
            [1.0 if o.start == o.request.earliest_start else 0.0 for o in accepted]
        ),
        messages=sum(o.messages.reservation for o in outcomes),
        status_queries=sum(o.messages.status for o in outcomes),
        efficiency=_mean(
            [
                1 - o.messages.reservation / o.worst_case
                for o in outcomes
                if o.worst_case
            ]
        ),
        start_gap=_mean(start_gaps) if start_gaps else None,
        cost_gap=_mean(cost_gaps) if cost_gaps else None,
        clusters=[_cluster(run, c, t_stop) for c in range(len(run.clusters))],
    )


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _local_jobs(
    run: GridRun,
) -> tuple[list[int], list[float], dict[tuple[int, int], list[float]]]:
    waits: list[int] = []
    expansions: list[float] = []
    by_size: dict[tuple[int, int], list[float]] = {c: [] for c in SIZE_CLASSES}
    for cluster in run.clusters:
        sim = cluster.sim
        for j in range(len(sim.jobs)):
            wait = sim.start_time[j] - sim.release[j]
            waits.append(wait)
            wallclock = sim.requested[j]
            if wallclock <= 0:
                continue
            factor = (wait + sim.end_time[j] - sim.start_time[j]) / wallclock
            expansions.append(factor)
            for lo, hi in SIZE_CLASSES:
                if lo <= sim.size[j] <= hi:
                    by_size[(lo, hi)].append(factor)
    return waits, expansions, by_size


def _unfairness(run: GridRun, outcome: Outcome) -> float:
    assert outcome.start is not None
    before = still = 0
    for c, jobs in outcome.waiting.items():
        sim = run.clusters[c].sim
        before += len(jobs)
        still += sum(1 for j in jobs if sim.start_time[j] >= outcome.start)
    return still / before if before else 0.0


def _relative_start(outcome: Outcome, to_earliest: bool) -> float:
    assert outcome.start is not None
    assert outcome.start_range is not None
    low, high = outcome.start_range
    if to_earliest:
        low = outcome.request.earliest_start
    return (outcome.start - low) / (high - low) if high > low else 0.0


def _relative_cost(outcome: Outcome) -> float:
    assert outcome.cost is not None
    assert outcome.cost_range is not None
    low, high = outcome.cost_range
    return float((outcome.cost - low) / (high - low)) if high > low else 0.0


def _gaps(run: GridRun) -> tuple[list[float], list[float]]:
    starts: list[float] = []
    costs: list[float] = []
    for o in run.outcomes:
        best = run.optima.get(o.request.id)
        if best is None or not o.accepted:
            continue
        assert o.start is not None and o.cost is not None
        if best.earliest is not None:
            starts.append(float(o.start - best.earliest))
        if best.cheapest is not None:
            costs.append(float(o.cost - best.cheapest))
    return starts, costs


def _cluster(run: GridRun, c: int, t_stop: int) -> ClusterMeasures:
    cluster = run.clusters[c]
    sim = cluster.sim
    capacity = cluster.processors * t_stop
    jobs_area = sum(
        sim.size[j] * max(0, min(sim.end_time[j], t_stop) - sim.start_time[j])
        for j in range(len(sim.jobs))
    )
    reserved_area = sum(
        r.cpus * max(0, min(r.end, t_stop) - r.start) for r in cluster.granted
    )
    expansions = [
        (sim.end_time[j] - sim.release[j]) / sim.requested[j]
        for j in range(len(sim.jobs))
        if sim.requested[j] > 0
    ]
    degrees = [o.filter_degree(c) for o in run.outcomes]
    return ClusterMeasures(
        name=cluster.name,
        jobs=len(sim.jobs),
        job_utilisation=jobs_area / capacity if capacity else 0.0,
        reservation_utilisation=reserved_area / capacity if capacity else 0.0,
        reservations=len(cluster.granted),
        mean_expansion=_mean(expansions),
        mean_filter_degree=_mean(degrees),
        infeasibility_rate=_mean([1.0 if d == 1.0 else 0.0 for d in degrees]),
        killed=len(sim.killed),
    )
