"""Expand a suite into a task graph, and the production task function.

A task is one unit of a window's analysis (:mod:`optsched.analysis.gap`):

* a **policy task** (trace, window, policy): the policy is simulated once and
  its schedule measured for every objective of the suite (``objective`` is
  empty, the values go to the row's ``values``);
* a **solver task** (trace, window, objective, back-end settings): it runs
  after the window's policy tasks (:attr:`Task.after`) and receives their
  complete schedules as incumbents (:attr:`Task.incumbents`, filled by the
  executor from the store when the task becomes ready).

Its :attr:`Task.task_id` is a hash of what determines its result: the suite
name, the trace's sha256 (not its path: a moved trace keeps its results) and
read options, the window key, the kind, the name, the objective and the
parameters. The same suite therefore expands to the same ids on every run
and machine, which is what lets a re-run skip finished tasks.

Tasks are ordered window by window (policies, then objectives and
back-ends), so a run stopped midway leaves whole windows behind it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from optsched.bench.suite import Suite, TraceRef
from optsched.errors import InputError
from optsched.instance import Instance
from optsched.io import archive
from optsched.result import Incumbent
from optsched.simulation import RunOptions
from optsched.trace import Trace, note_skips
from optsched.windows.prepare import prepare, read_source
from optsched.windows.selection import WindowSpec, select_windows

POLICY = "policy"
SOLVER = "solver"
ALL_OBJECTIVES = ""
"""``objective`` of a policy task: it measures every objective of the suite."""

RESULT_FIELDS = (
    "status",
    "value",
    "lower",
    "lower_method",
    "upper",
    "upper_source",
    "bounds",
    "metrics",
    "schedule",
    "runtime",
)
"""Keys every task function returns (JSON columns as text)."""

OPTIONAL_FIELDS: dict[str, Any] = {
    "values": None,
    "killed": 0,
    "lost_work": 0.0,
    "interrupted": 0,
    "rejected": None,
    "incomplete": None,
}
"""Keys a task function may add, with the value stored when it does not."""

PROVEN_STATUSES = frozenset({"OPTIMAL", "INFEASIBLE", "ERROR"})
"""Solver statuses a longer run would not change."""


def to_json(value: Any) -> str:
    """Canonical compact JSON (sorted keys): equal data, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class TaskColumns:
    """The columns that name a task: its suite, trace, window and what it
    computes there. Shared by a task to run (:class:`Task`) and a stored row
    (:class:`~optsched.bench.store.TaskRow`)."""

    task_id: str
    suite: str
    trace: str
    trace_sha256: str
    window: str
    window_index: int
    kind: str
    name: str
    objective: str


@dataclass(frozen=True, slots=True)
class PolicyParams:
    """A policy task's parameters, typed (they cross the executor as JSON,
    part of the task's id).

    Attributes
    ----------
    seed
        Seed of random queue orders.
    objectives
        Objective labels measured on the schedule.
    run
        How the policy is simulated; only options that are not the default
        enter the JSON, so the ids of default runs never change.
    source_sha256
        A plug-in's source digest: the task refuses to run other code.
    """

    seed: int
    objectives: tuple[str, ...]
    run: RunOptions = field(default_factory=RunOptions)
    source_sha256: str | None = None

    @classmethod
    def of(cls, params: dict[str, Any]) -> PolicyParams:
        """The typed view of a task's parameters."""
        return cls(
            seed=params["seed"],
            objectives=tuple(params["objectives"]),
            run=RunOptions.of(params),
            source_sha256=params.get("source_sha256"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The JSON parameters (keys left out at their default)."""
        digest = {"source_sha256": self.source_sha256} if self.source_sha256 else {}
        return {
            "seed": self.seed,
            "objectives": list(self.objectives),
            **self.run.params(),
            **digest,
        }


@dataclass(frozen=True, slots=True)
class SolverParams:
    """A solver task's parameters, typed: seconds and threads per solve, and
    CP-SAT's deterministic mode (in the JSON only when set)."""

    time_limit: float
    workers: int
    deterministic: bool = False

    @classmethod
    def of(cls, params: dict[str, Any]) -> SolverParams:
        """The typed view of a task's parameters."""
        return cls(
            params["time_limit"],
            params["workers"],
            bool(params.get("deterministic", False)),
        )

    def as_dict(self) -> dict[str, Any]:
        """The JSON parameters (``deterministic`` only when set, so that the
        ids of the default mode's tasks never change)."""
        mode = {"deterministic": True} if self.deterministic else {}
        return {"time_limit": self.time_limit, "workers": self.workers, **mode}


@dataclass(frozen=True, slots=True)
class Task(TaskColumns):
    """One unit of work of a suite (picklable: it crosses process borders).

    ``after`` lists the task ids that must be stored before this task runs;
    ``incumbents`` are the schedules they produced, attached by the executor
    (they are inputs, not part of the task's identity).
    """

    params_json: str
    after: tuple[str, ...] = ()
    incumbents: tuple[Incumbent, ...] = field(default=(), compare=False)

    @property
    def params(self) -> dict[str, Any]:
        """The task parameters as stored (with the trace's read options)."""
        result: dict[str, Any] = json.loads(self.params_json)
        return result

    @property
    def policy_params(self) -> PolicyParams:
        """A policy task's parameters, typed."""
        return PolicyParams.of(self.params)

    @property
    def solver_params(self) -> SolverParams:
        """A solver task's parameters, typed."""
        return SolverParams.of(self.params)

    def identity(self) -> dict[str, Any]:
        """The store columns that describe the task (not its result)."""
        return {
            "task_id": self.task_id,
            "suite": self.suite,
            "trace": self.trace,
            "trace_sha256": self.trace_sha256,
            "window": self.window,
            "window_index": self.window_index,
            "kind": self.kind,
            "name": self.name,
            "objective": self.objective,
            "params": self.params_json,
        }


def make_task_id(
    suite: str,
    trace_sha256: str,
    window: str,
    kind: str,
    name: str,
    objective: str,
    params_json: str,
) -> str:
    """Hex digest (32 digits, 128 bits) naming a task's identity."""
    text = to_json([suite, trace_sha256, window, kind, name, objective, params_json])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass
class Plan:
    """A suite's task graph, and what is needed to cut each task's instance.

    ``traces`` maps a trace's sha256 to the trace read from file, and
    ``windows`` maps (sha256, window key) to the window to cut. Instances
    are cut on demand, once per window (the last ones are cached).
    """

    suite: Suite
    tasks: tuple[Task, ...]
    traces: dict[str, Trace]
    windows: dict[tuple[str, str], WindowSpec]
    _cache: dict[tuple[str, str], Instance | ValueError] = field(
        default_factory=dict, repr=False
    )

    def instance(self, task: Task) -> Instance:
        """The instance of the task's window (``ValueError`` if it cannot be cut)."""
        key = (task.trace_sha256, task.window)
        if key not in self._cache:
            if len(self._cache) >= 8:
                self._cache.pop(next(iter(self._cache)))
            try:
                ref = next(r for r in self.suite.traces if r.sha256 == key[0])
                # Silent: the trace's notes were printed once when it was
                # read, and a site's note would repeat for every window.
                self._cache[key] = prepare(
                    self.traces[key[0]], ref.preparation, self.windows[key], notes=False
                )
            except ValueError as error:  # InputError included
                self._cache[key] = error
        found = self._cache[key]
        if isinstance(found, ValueError):
            raise found
        return found


def read_suite_trace(ref: TraceRef) -> Trace:
    """The trace of a suite entry, read with its options (format, processors,
    allocation override applied before any window is cut):
    :func:`~optsched.windows.prepare.read_source`, or the trace it gave when
    the suite was loaded."""
    from optsched.bench.suite import take_read_trace

    options = {
        "format": ref.format,
        "processors": ref.processors,
        "allocation": ref.allocation,
    }
    loaded = take_read_trace(ref.file, options)
    if loaded is not None:
        return loaded
    return read_source(ref.file, ref.preparation)


def expand(suite: Suite, *, deterministic: bool = False) -> Plan:
    """Read the suite's traces, select their windows and list every task.

    Windows drawn by several seeds (random windows) appear once, at their
    first position. ``deterministic`` runs the CP-SAT back-ends in their
    deterministic mode (:func:`optsched.models.rigid.cpsat.deterministic`); it is
    a parameter of the solver tasks, so their ids differ from the default
    mode's.
    """
    tasks: list[Task] = []
    traces: dict[str, Trace] = {}
    windows: dict[tuple[str, str], WindowSpec] = {}
    # Once per suite: a schedule file or a plug-in is hashed once, not per window.
    digests = {policy: source_digest(policy) for policy in suite.policies}
    for ref in suite.traces:
        trace = read_suite_trace(ref)
        # Issue 17: no job dropped silently (a pwa: trace by its name).
        shown = ref.path if ref.path.startswith(archive.PREFIX) else str(ref.file)
        note_skips(trace, shown)
        traces[ref.sha256] = trace
        specs: dict[str, WindowSpec] = {}
        for rule in suite.window_rules:
            try:
                selected = select_windows(trace, rule)
            except ValueError as error:
                raise InputError(
                    f"trace {ref.path}: [windows]: {error}", suite.file
                ) from None
            for spec in selected:
                specs.setdefault(spec.key, spec)
        for index, spec in enumerate(specs.values()):
            windows[(ref.sha256, spec.key)] = spec
            tasks += window_tasks(
                suite, ref, spec, index, deterministic=deterministic, digests=digests
            )
    return Plan(suite, tuple(tasks), traces, windows)


def window_tasks(
    suite: Suite,
    ref: TraceRef,
    spec: WindowSpec,
    index: int,
    *,
    deterministic: bool = False,
    digests: Mapping[str, str | None] | None = None,
) -> list[Task]:
    """The tasks of one window: its policy tasks, then its solver tasks, which
    come after every policy task of the window. ``digests`` gives each
    policy's :func:`source_digest` when the caller has them."""

    def task(
        kind: str,
        name: str,
        objective: str,
        params: dict[str, Any],
        after: tuple[str, ...] = (),
    ) -> Task:
        params_json = to_json({**params, **ref.read_options()})
        task_id = make_task_id(
            suite.name, ref.sha256, spec.key, kind, name, objective, params_json
        )
        return Task(
            task_id, suite.name, ref.path, ref.sha256, spec.key, index,
            kind, name, objective, params_json, after,
        )  # fmt: skip

    from optsched.analysis.gap import POLICY_SEED

    policies = [
        task(POLICY, policy, ALL_OBJECTIVES, PolicyParams(
            POLICY_SEED, suite.objectives, suite.run,
            digests[policy] if digests is not None else source_digest(policy),
        ).as_dict())
        for policy in suite.policies
    ]  # fmt: skip
    after = tuple(t.task_id for t in policies)
    solvers = [
        task(
            SOLVER,
            solver.backend,
            objective,
            SolverParams(solver.time_limit, solver.workers, deterministic).as_dict(),
            after,
        )
        for objective in suite.objectives
        for solver in suite.solvers
    ]
    return policies + solvers


def source_digest(spec: str) -> str | None:
    """The sha256 of the file that defines a plug-in policy or holds a
    schedule (a changed file gets new task ids and is run again); ``None``
    for a built-in policy."""
    from optsched.heuristics import parse_policy

    return getattr(parse_policy(spec), "digest", "") or None


def checked_source(spec: str, digest: str | None) -> Any:
    """The policy ``spec`` names, refused if its source is no longer the one
    the task was planned with (the row would be filed under the old code)."""
    from optsched.heuristics import parse_policy

    policy = parse_policy(spec)
    if digest is not None and getattr(policy, "digest", "") != digest:
        raise ValueError(
            f"policy {spec!r}: its source file changed since the run was planned"
        )
    return policy


def execute_task(task: Task, instance: Instance) -> dict[str, Any]:
    """The production task function: simulate a policy or run a back-end.

    Calls :func:`optsched.analysis.gap.evaluate_policy` or
    :func:`optsched.analysis.gap.evaluate_reference`, which check every schedule with
    :func:`optsched.check.check_schedule` and recompute objectives from it.
    Returns the :data:`RESULT_FIELDS` and some :data:`OPTIONAL_FIELDS`.
    """
    from optsched.analysis.gap import evaluate_policy, evaluate_reference
    from optsched.io.schedules import schedule_to_dict
    from optsched.metrics import summarize

    if task.kind == POLICY:
        given = task.policy_params
        outcome = evaluate_policy(
            instance,
            checked_source(task.name, given.source_sha256),
            given.objectives,
            seed=given.seed,
            run=given.run,
        )
        return {
            "status": "OK",
            "value": None,
            "values": to_json(dict(outcome.values)),
            "lower": None,
            "lower_method": None,
            "upper": None,
            "upper_source": None,
            "bounds": to_json({}),
            "metrics": to_json(dict(outcome.metrics)),
            "schedule": to_json(schedule_to_dict(outcome.schedule)),
            "runtime": outcome.runtime,
            "killed": outcome.killed,
            "lost_work": float(outcome.lost),
        }
    params = task.solver_params
    deterministic = params.deterministic
    clock = _Clock()
    with _cpsat_mode(deterministic, params.time_limit):
        reference = evaluate_reference(
            instance,
            task.objective,
            backend=task.name,
            time_limit=params.time_limit,
            workers=params.workers,
            incumbents=task.incumbents,
        )
    if reference.error is not None:
        # Record the back-end's own words as the task's error.
        raise RuntimeError(f"{task.name}: {reference.error}")
    schedule = reference.schedule
    return {
        "status": reference.status.value,
        "value": reference.upper,
        "lower": reference.lower,
        "lower_method": reference.lower_method,
        "upper": reference.upper,
        "upper_source": reference.upper_source,
        "bounds": to_json(dict(reference.bounds)),
        "metrics": to_json(
            summarize(instance, schedule).as_dict() if schedule is not None else {}
        ),
        "schedule": (
            to_json(schedule_to_dict(schedule)) if schedule is not None else None
        ),
        "runtime": reference.runtime,
        "interrupted": int(reference.interrupted),
        "rejected": to_json(list(reference.rejected)) if reference.rejected else None,
        "incomplete": None
        if deterministic or reference.interrupted
        else starved(
            str(reference.status.value),
            params.time_limit,
            params.workers,
            *clock.read(cpsat=task.name in CPSAT_BACKENDS),
        ),
    }


def _cpsat_mode(
    deterministic: bool, time_limit: float
) -> contextlib.AbstractContextManager[None]:
    if not deterministic:
        return contextlib.nullcontext()
    from optsched.models.rigid.cpsat import deterministic as fixed_work

    return fixed_work(time_limit)


CPSAT_BACKENDS = frozenset({"cpsat", "shelf"})
"""Back-ends whose search time :func:`optsched.models.rigid.cpsat.search_seconds`
counts."""


class _Clock:
    """Wall, CPU and CP-SAT search seconds since it was made (this process)."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()
        self.search = _search_seconds() or 0.0

    def read(self, *, cpsat: bool) -> tuple[float, float, float | None]:
        """(wall, CPU, CP-SAT search) seconds; search ``None`` unless
        ``cpsat`` (the task ran a CP-SAT back-end; 0 if it never searched)."""
        search = (_search_seconds() or 0.0) - self.search
        return (
            time.perf_counter() - self.wall,
            time.process_time() - self.cpu,
            search if cpsat else None,
        )


def _search_seconds() -> float | None:
    # Only the CP-SAT back-ends (cpsat, shelf) load the module.
    cpsat = sys.modules.get("optsched.models.rigid.cpsat")
    return None if cpsat is None else float(cpsat.search_seconds())


STARVED_WALL = 0.9
STARVED_SEARCH = 0.5
STARVED_CPU = 0.25


def starved(
    status: str,
    time_limit: float,
    workers: int,
    wall: float,
    cpu: float,
    search: float | None,
) -> str | None:
    """Why an unproven solve that used up its time limit was time-starved,
    or ``None`` (see :mod:`optsched.bench.store` for the rule).

    Parameters
    ----------
    status
        The solve's status.
    time_limit, workers
        The task's settings.
    wall, cpu
        Wall-clock and CPU seconds of the task (this process, all threads).
    search
        Seconds in CP-SAT searches during the task (``None``: not a CP-SAT
        back-end; 0: its search was skipped, the limit being spent).
    """
    if status in PROVEN_STATUSES or wall < STARVED_WALL * time_limit:
        return None
    numbers = (
        f"limit {time_limit:g} s, wall {wall:.1f} s, CPU {cpu:.1f} s, "
        f"{workers} worker(s)"
    )
    if search is not None and search < STARVED_SEARCH * time_limit:
        return f"time-starved: the search ran {search:.1f} s ({numbers})"
    threads = min(workers, os.cpu_count() or 1)
    if cpu < STARVED_CPU * wall * threads:
        return f"time-starved: too little CPU ({numbers})"
    return None
