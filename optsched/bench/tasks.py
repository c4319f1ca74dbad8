"""Expand a suite into a task graph, and the production task function.

A task is one unit of a window's analysis (:mod:`optsched.gap`):

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

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from optsched.bench.suite import Suite, TraceRef
from optsched.errors import InputError
from optsched.instance import Instance
from optsched.models.result import Incumbent
from optsched.selection import WindowSpec, select_windows
from optsched.trace import Trace

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
}
"""Keys a task function may add, with the value stored when it does not."""


def to_json(value: Any) -> str:
    """Canonical compact JSON (sorted keys): equal data, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work of a suite (picklable: it crosses process borders).

    ``after`` lists the task ids that must be stored before this task runs;
    ``incumbents`` are the schedules they produced, attached by the executor
    (they are inputs, not part of the task's identity).
    """

    task_id: str
    suite: str
    trace: str
    trace_sha256: str
    window: str
    window_index: int
    kind: str
    name: str
    objective: str
    params_json: str
    after: tuple[str, ...] = ()
    incumbents: tuple[Incumbent, ...] = field(default=(), compare=False)

    @property
    def params(self) -> dict[str, Any]:
        """The task parameters (``time_limit``, ``workers``, ``seed``...)."""
        result: dict[str, Any] = json.loads(self.params_json)
        return result

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
                self._cache[key] = self.windows[key].cut(self.traces[key[0]])
            except ValueError as error:  # InputError included
                self._cache[key] = error
        found = self._cache[key]
        if isinstance(found, ValueError):
            raise found
        return found


def read_suite_trace(ref: TraceRef) -> Trace:
    """The trace of a suite entry, read with its options (format, processors,
    allocation override applied before any window is cut)."""
    from optsched.io import read_trace

    return read_trace(
        ref.file, ref.format, processors=ref.processors, allocation=ref.allocation
    )


def expand(suite: Suite) -> Plan:
    """Read the suite's traces, select their windows and list every task.

    Windows drawn by several seeds (random windows) appear once, at their
    first position.
    """
    tasks: list[Task] = []
    traces: dict[str, Trace] = {}
    windows: dict[tuple[str, str], WindowSpec] = {}
    for ref in suite.traces:
        trace = read_suite_trace(ref)
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
            tasks += window_tasks(suite, ref, spec, index)
    return Plan(suite, tuple(tasks), traces, windows)


def window_tasks(
    suite: Suite, ref: TraceRef, spec: WindowSpec, index: int
) -> list[Task]:
    """The tasks of one window: its policy tasks, then its solver tasks, which
    come after every policy task of the window."""

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

    from optsched.gap import POLICY_SEED

    policies = [
        task(POLICY, policy, ALL_OBJECTIVES,
             {"seed": POLICY_SEED, "objectives": list(suite.objectives)})
        for policy in suite.policies
    ]  # fmt: skip
    after = tuple(t.task_id for t in policies)
    solvers = [
        task(
            SOLVER,
            solver.backend,
            objective,
            {"time_limit": solver.time_limit, "workers": solver.workers},
            after,
        )
        for objective in suite.objectives
        for solver in suite.solvers
    ]
    return policies + solvers


def execute_task(task: Task, instance: Instance) -> dict[str, Any]:
    """The production task function: simulate a policy or run a back-end.

    Calls :func:`optsched.gap.evaluate_policy` or
    :func:`optsched.gap.evaluate_reference`, which check every schedule with
    :func:`optsched.check.check_schedule` and recompute objectives from it.
    Returns the :data:`RESULT_FIELDS` and some :data:`OPTIONAL_FIELDS`.
    """
    from optsched.gap import evaluate_policy, evaluate_reference
    from optsched.io.schedules import schedule_to_dict
    from optsched.metrics import summarize

    params = task.params
    if task.kind == POLICY:
        outcome = evaluate_policy(
            instance, task.name, params["objectives"], seed=params["seed"]
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
    reference = evaluate_reference(
        instance,
        task.objective,
        backend=task.name,
        time_limit=params["time_limit"],
        workers=params["workers"],
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
    }
