"""Grid scenarios: one TOML file describing a whole co-reservation study run.

Example (``benchmarks/grid/meltzer_6_6_r1.toml``)::

    [scenario]
    name = "meltzer-6.6-R1"
    description = "§6.6: A2 vs A3 on R1, 4 clusters"

    [workload]
    trace = "pwa:KTH-SP2-1996-2.1-cln"
    clusters = 4          # BM0 .. BM3, consecutive two-week slices
    weeks = 2
    cap = 100             # CPUs per cluster
    merge = true          # the study's job merging (scaled threshold)

    [requests]
    kind = "R1"           # R1, R2, R3 (§6.3)
    variant = "none"      # or "6.8-2", "6.8-3" (§6.8)
    seed = 0
    probability = 0.1
    draws = 1

    [prices]
    scenario = "homogeneous"  # or "day-night", "cheap-weekends"

    [local]
    policy = "easy"       # any engine policy: "conservative", ...
    kill_at_estimate = true

    [service]
    algorithm = "a4"
    minsize = 300
    windows = 20
    k = 0.0
    s = 1.0
    seed = 0

Every table but ``[scenario]`` and ``[workload]`` is optional (the values
above are the defaults, with ``algorithm = "a4"``). ``trace`` is relative
to the scenario file, or ``pwa:NAME`` (:mod:`optsched.io.archive`).
Simulation time 0 is the start of every slice; the price tables are
rotated so that it falls on the weekday and hour of
:data:`~optsched.coreserve.workload.STUDY_MONDAY_OFFSET` (the study's first
weekend at about 800,000 s).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from optsched.coreserve.cluster import LocalCluster
from optsched.coreserve.request import Request
from optsched.coreserve.requests_gen import (
    KINDS,
    generate_requests,
    section68_requests,
)
from optsched.coreserve.service import ALGORITHMS, ServiceConfig
from optsched.coreserve.workload import (
    SCENARIOS,
    STUDY_MONDAY_OFFSET,
    WEEK,
    ClusterWorkload,
    cluster_slices,
    price_scenario,
)
from optsched.errors import InputError, shown
from optsched.instance import MAX_INTEGER
from optsched.io import archive, read_trace
from optsched.io.text import read_toml_file

MAX_CLUSTERS = 256
"""Most clusters a scenario may cut from its trace (consecutive slices of
``weeks`` weeks each): the studies use a handful; 1e8 hung the simulation."""

_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "scenario": {"name": str, "description": str},
    "workload": {
        "trace": str,
        "clusters": int,
        "weeks": int,
        "cap": int,
        "merge": bool,
        "merge_below": int,
    },
    "requests": {
        "kind": str,
        "variant": str,
        "seed": int,
        "probability": (int, float),
        "draws": int,
    },
    "prices": {"scenario": str},
    "local": {"policy": str, "kill_at_estimate": bool},
    "service": {
        "algorithm": str,
        "minsize": int,
        "windows": int,
        "k": (int, float),
        "s": (int, float),
        "seed": int,
        "accuracy": (int, float),
        "strict": bool,
        "cost_rule": str,
        "start_tolerance": int,
        "cost_tolerance": (int, float),
        "sort": str,
    },
}
_REQUIRED = {"scenario": ("name",), "workload": ("trace", "clusters")}
VARIANTS = ("none", "6.8-2", "6.8-3")


@dataclass(frozen=True)
class Scenario:
    """A validated grid scenario (see the module docstring)."""

    name: str
    trace: Path
    clusters: int
    description: str = ""
    weeks: int = 2
    cap: int | None = None
    merge: bool = True
    merge_below: int | None = None
    kind: str = "R1"
    variant: str = "none"
    request_seed: int = 0
    probability: float = 0.1
    draws: int = 1
    prices: str = "homogeneous"
    policy: str = "easy"
    kill_at_estimate: bool = True
    service: ServiceConfig = field(default_factory=ServiceConfig)
    seed: int = 0

    def workloads(self) -> list[ClusterWorkload]:
        """The clusters' local workloads cut from the trace."""
        trace = read_trace(self.trace)
        return cluster_slices(
            trace,
            self.clusters,
            weeks=self.weeks,
            cap=self.cap,
            merge=self.merge,
            merge_below=self.merge_below,
        )

    def build(
        self, workloads: list[ClusterWorkload] | None = None
    ) -> tuple[list[LocalCluster], list[Request]]:
        """Fresh clusters (simulators ready) and the request workload."""
        loads = self.workloads() if workloads is None else workloads
        tariffs = price_scenario(self.prices, len(loads), offset=STUDY_MONDAY_OFFSET)
        clusters = [
            LocalCluster(
                w.name,
                w.instance,
                tariff,
                policy=self.policy,
                kill_at_estimate=self.kill_at_estimate,
            )
            for w, tariff in zip(loads, tariffs, strict=True)
        ]
        cap = loads[0].instance.machine.processors
        requests = generate_requests(
            loads[0],
            self.kind,
            seed=self.request_seed,
            cap=cap,
            probability=self.probability,
            draws=self.draws,
        )
        if self.variant != "none":
            requests = section68_requests(requests, parts=int(self.variant[-1]))
        return clusters, requests

    @property
    def t_stop(self) -> int:
        """The submit stop (utilisation is counted up to it)."""
        return self.weeks * WEEK

    def with_service(self, **changes: Any) -> Scenario:
        """A copy with some service parameters changed (``None`` keeps one)."""
        kept = {k: v for k, v in changes.items() if v is not None}
        return replace(self, service=replace(self.service, **kept))


def _exists(path: Path) -> bool:
    """``path.exists()``, false for a name the system refuses (too long)."""
    try:
        return path.exists()
    except OSError:
        return False


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file.

    Raises
    ------
    InputError
        One line ``file:line: reason`` (bad TOML, unknown table or key,
        wrong type, unknown algorithm, price scenario or variant, missing
        trace).
    """
    path = Path(path)
    text, data = read_toml_file(path)
    try:
        return _parse(data, path)
    except _Bad as bad:
        raise InputError(bad.reason, path, _line(text, bad.table, bad.key)) from None


class _Bad(Exception):
    def __init__(self, reason: str, table: str | None = None, key: str | None = None):
        super().__init__(reason)
        self.reason, self.table, self.key = reason, table, key


def _line(text: str, table: str | None, key: str | None) -> int | None:
    """Line of ``key`` in ``[table]`` (or of the table header)."""
    lines = text.splitlines()
    inside = table is None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.strip("[] ") == table
            if inside and key is None:
                return number
            continue
        if inside and key is not None and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
    return None


def _parse(data: dict[str, Any], path: Path) -> Scenario:
    for table in data:
        if table not in _KEYS:
            raise _Bad(f"unknown table [{table}] (expected: {', '.join(_KEYS)})")
        if not isinstance(data[table], dict):
            raise _Bad(f"{table} must be a table [{table}]", None, table)
    values: dict[str, dict[str, Any]] = {}
    for table, keys in _KEYS.items():
        got = data.get(table, {})
        for key, value in got.items():
            if key not in keys:
                raise _Bad(
                    f"[{table}] unknown key {shown(key)} (expected: {', '.join(keys)})",
                    table,
                    key,
                )
            want = keys[key]
            if isinstance(value, bool) and want is not bool:
                raise _Bad(
                    f"[{table}] {key}: expected a number, got a boolean", table, key
                )
            if not isinstance(value, want):
                raise _Bad(
                    f"[{table}] {key}: wrong type {type(value).__name__}", table, key
                )
        for key in _REQUIRED.get(table, ()):
            if key not in got:
                raise _Bad(
                    f"[{table}] missing key {shown(key)}", table if got else None
                )
        values[table] = got
    return _scenario(values, path)


def _one_of(
    values: dict[str, Any], table: str, key: str, default: str, choices: Sequence[str]
) -> str:
    """``values[key]`` (``default`` when absent), which must be one of
    ``choices``; :class:`_Bad` naming them otherwise."""
    value = values.get(key, default)
    if value not in choices:
        raise _Bad(
            f"[{table}] {key} {shown(value)}: expected one of {', '.join(choices)}",
            table,
            key,
        )
    return str(value)


def _requests_in_range(req: dict[str, Any]) -> None:
    """The ``[requests]`` values :func:`generate_requests` would refuse when
    the study runs, refused here at their line."""
    _one_of(req, "requests", "kind", "R1", KINDS)
    probability = req.get("probability", 0.1)
    if not 0 <= probability <= 1:  # NaN too
        raise _Bad(
            f"[requests] probability {shown(probability)}: expected a number "
            "from 0 to 1",
            "requests",
            "probability",
        )
    if req.get("draws", 1) not in (1, 2):
        raise _Bad(
            f"[requests] draws {shown(req['draws'])}: expected 1 or 2",
            "requests",
            "draws",
        )


def _scenario(v: dict[str, dict[str, Any]], path: Path) -> Scenario:
    work, req, svc = v["workload"], v["requests"], v["service"]
    if work["trace"].startswith(archive.PREFIX):
        trace = archive.resolve_trace_path(work["trace"])  # fetched on first use
    else:
        trace = Path(work["trace"])
    if not trace.is_absolute():
        trace = path.parent / trace
    if not _exists(trace):
        raise _Bad(
            f"[workload] trace {shown(work['trace'])} not found", "workload", "trace"
        )
    if not 1 <= work["clusters"] <= MAX_CLUSTERS:
        raise _Bad(
            f"[workload] clusters must be from 1 to {MAX_CLUSTERS}",
            "workload",
            "clusters",
        )
    # Counts and thresholds: a negative one has no meaning (a negative merge
    # threshold merged nothing, silently).
    for key, least in (("weeks", 1), ("cap", 1), ("merge_below", 0)):
        if key in work and not least <= work[key] <= MAX_INTEGER:
            raise _Bad(
                f"[workload] {key} {shown(work[key])}: expected an integer from "
                f"{least} to 2**53",
                "workload",
                key,
            )
    variant = _one_of(req, "requests", "variant", "none", VARIANTS)
    _requests_in_range(req)
    prices = _one_of(v["prices"], "prices", "scenario", "homogeneous", SCENARIOS)
    # Checked here so the error names the key's line; ServiceConfig reads it.
    _one_of(svc, "service", "algorithm", "a4", ALGORITHMS)
    service_keys = {k: svc[k] for k in svc if k != "seed"}
    try:
        config = ServiceConfig(**service_keys)
    except (TypeError, ValueError) as error:
        raise _Bad(f"[service] {error}", "service") from None
    return Scenario(
        name=v["scenario"]["name"],
        description=v["scenario"].get("description", ""),
        trace=trace,
        clusters=work["clusters"],
        weeks=work.get("weeks", 2),
        cap=work.get("cap"),
        merge=work.get("merge", True),
        merge_below=work.get("merge_below"),
        kind=req.get("kind", "R1"),
        variant=variant,
        request_seed=req.get("seed", 0),
        probability=float(req.get("probability", 0.1)),
        draws=req.get("draws", 1),
        prices=prices,
        policy=v["local"].get("policy", "easy"),
        kill_at_estimate=v["local"].get("kill_at_estimate", True),
        service=config,
        seed=svc.get("seed", 0),
    )
