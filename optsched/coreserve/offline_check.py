"""Independent checker of an offline co-reservation solution.

Written without the model code (``optsched.models.coreserve.offline``), so
that it can prove the model's, the greedy's and the online algorithms'
solutions valid. A solution is valid when

* every accepted request exists, has one start ``S`` with
  ``earliest_start <= S <= deadline - duration``, one cluster per part, the
  clusters distinct and known, each with ``processors >=`` its part, and
  (when it states one) the sampled cost of Meltzer 2005, §4.7.3;
* every local job of every cluster is started exactly once (no unknown
  job), at ``S_j >= r_j`` (so it ends at ``S_j + p_j``, non-preemptive, on
  its own cluster);
* on every cluster, at every instant, busy blocks + running jobs + running
  parts use at most ``processors`` CPUs: a sweep over the start and end
  events of the half-open intervals ``[start, end)``, ends before starts at
  equal times.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Protocol

from optsched.coreserve.request import Request
from optsched.coreserve.tariff import Tariff


class _Job(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def release(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def runtime(self) -> int: ...


class ClusterLike(Protocol):
    """What the checker reads of a cluster."""

    @property
    def name(self) -> str: ...
    @property
    def processors(self) -> int: ...
    @property
    def tariff(self) -> Tariff: ...
    @property
    def busy(self) -> Sequence[tuple[int, int, int]]: ...
    @property
    def jobs(self) -> Sequence[_Job]: ...


class ChoiceLike(Protocol):
    """An accepted request's placement."""

    @property
    def start(self) -> int: ...
    @property
    def clusters(self) -> Sequence[str]: ...


class SolutionLike(Protocol):
    """Accepted requests by id and job starts by ``(cluster, job id)``."""

    @property
    def accepted(self) -> Mapping[int, ChoiceLike]: ...
    @property
    def job_starts(self) -> Mapping[tuple[str, int], int]: ...


def check_offline(
    clusters: Sequence[ClusterLike],
    requests: Sequence[Request],
    solution: SolutionLike,
) -> list[str]:
    """Problems of ``solution`` (empty: valid). See the module docstring."""
    problems: list[str] = []
    by_name = {c.name: c for c in clusters}
    if len(by_name) != len(clusters):
        problems.append("cluster names are not unique")
    by_id = {r.id: r for r in requests}
    # Per cluster: (start, end, cpus, what) of everything that holds CPUs.
    holds: dict[str, list[tuple[int, int, int, str]]] = {c.name: [] for c in clusters}
    for c in clusters:
        for a, b, q in c.busy:
            holds[c.name].append((a, b, q, f"busy [{a}, {b})"))
    for rid, choice in solution.accepted.items():
        problems += _check_request(by_id.get(rid), rid, choice, by_name, holds)
    problems += _check_jobs(clusters, solution.job_starts, holds)
    for c in clusters:
        problems += _sweep(c.name, c.processors, holds[c.name])
    return problems


def _check_request(
    r: Request | None,
    rid: int,
    choice: ChoiceLike,
    by_name: Mapping[str, ClusterLike],
    holds: dict[str, list[tuple[int, int, int, str]]],
) -> list[str]:
    if r is None:
        return [f"request {rid}: accepted but unknown"]
    out = []
    st, names = choice.start, list(choice.clusters)
    if not isinstance(st, int) or isinstance(st, bool):
        return [f"request {rid}: start {st!r} is not an integer"]
    if st < r.earliest_start or st + r.duration > r.deadline:
        out.append(
            f"request {rid}: start {st} outside [{r.earliest_start}, "
            f"{r.deadline - r.duration}]"
        )
    if len(names) != len(r.parts):
        return [*out, f"request {rid}: {len(names)} clusters for {len(r.parts)} parts"]
    if len(set(names)) != len(names):
        out.append(f"request {rid}: clusters {names} are not distinct")
    for q, name in zip(r.parts, names, strict=True):
        c = by_name.get(name)
        if c is None:
            out.append(f"request {rid}: unknown cluster {name!r}")
            continue
        if c.processors < q:
            out.append(
                f"request {rid}: part {q} exceeds {name}'s {c.processors} processors"
            )
        holds[name].append((st, st + r.duration, q, f"request {rid}"))
    cost = getattr(choice, "cost", None)
    if cost is not None and not out:
        # Sampled rule written out: rate at start + 3600 k, k = 0..d // 3600.
        want = sum(
            (
                q * by_name[n].tariff.rate(st + 3600 * k)
                for q, n in zip(r.parts, names, strict=True)
                for k in range(r.duration // 3600 + 1)
            ),
            Fraction(0),
        )
        if Fraction(cost) != want:
            out.append(f"request {rid}: cost {cost} but the sampled cost is {want}")
    return out


def _check_jobs(
    clusters: Sequence[ClusterLike],
    starts: Mapping[tuple[str, int], int],
    holds: dict[str, list[tuple[int, int, int, str]]],
) -> list[str]:
    out = []
    known = set()
    for c in clusters:
        for j in c.jobs:
            key = (c.name, j.id)
            if key in known:
                out.append(f"cluster {c.name}: job {j.id} listed twice")
                continue
            known.add(key)
            if key not in starts:
                out.append(f"cluster {c.name}: job {j.id} never starts")
                continue
            t = starts[key]
            if not isinstance(t, int) or isinstance(t, bool):
                out.append(
                    f"cluster {c.name}: job {j.id} start {t!r} is not an integer"
                )
                continue
            if t < j.release:
                out.append(
                    f"cluster {c.name}: job {j.id} starts at {t} before its "
                    f"release {j.release}"
                )
            if j.size > c.processors:
                out.append(f"cluster {c.name}: job {j.id} is larger than the cluster")
            holds[c.name].append((t, t + j.runtime, j.size, f"job {j.id}"))
    for key in starts:
        if key not in known:
            out.append(f"job {key}: started but not a local job of that cluster")
    return out


def _sweep(
    name: str, capacity: int, items: Iterable[tuple[int, int, int, str]]
) -> list[str]:
    events: list[tuple[int, int, int, str]] = []
    for a, b, q, what in items:
        if b > a and q:
            events.append((a, 1, q, what))
            events.append((b, 0, -q, what))  # kind 0 sorts ends first
    events.sort()
    used = 0
    out = []
    for t, kind, delta, what in events:
        used += delta
        if kind == 1 and used > capacity:
            out.append(
                f"cluster {name}: {used} CPUs in use at {t} (with {what}), "
                f"more than its {capacity}"
            )
    return out
