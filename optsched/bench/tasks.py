"""Expand a suite into tasks, and the production task function.

A task is one (trace, window, objective, policy or back-end) combination.
Its :attr:`Task.task_id` is a hash of what determines its result: the suite
name, the trace's sha256 (not its path: a moved trace keeps its results),
the window key, the kind, the name, the objective and the parameters. The
same suite therefore expands to the same ids on every run and machine, which
is what lets a re-run skip finished tasks.

Tasks are ordered window by window (objective, then policies, then
back-ends), so a run stopped midway leaves whole windows behind it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from optsched.bench.suite import Suite
from optsched.errors import InputError
from optsched.instance import Instance
from optsched.selection import WindowSpec, select_windows
from optsched.trace import Trace

POLICY = "policy"
SOLVER = "solver"
POLICY_SEED = 0
"""Seed passed to every policy simulation (recorded in the task's params)."""

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
"""Keys of the dictionary a task function returns (JSON columns as text)."""


def to_json(value: Any) -> str:
    """Canonical compact JSON (sorted keys): equal data, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work of a suite (picklable: it crosses process borders)."""

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


@dataclass(frozen=True, slots=True)
class Plan:
    """A suite's tasks, and what is needed to cut each task's instance.

    ``traces`` maps a trace's sha256 to the trace read from file, and
    ``windows`` maps (sha256, window key) to the window to cut.
    """

    suite: Suite
    tasks: tuple[Task, ...]
    traces: dict[str, Trace]
    windows: dict[tuple[str, str], WindowSpec]

    def with_instances(
        self, tasks: Iterable[Task]
    ) -> Iterator[tuple[Task, Instance | Exception]]:
        """Each task with its window's instance, cut once per run of equal windows.

        Tasks come window by window, so keeping the last cut instance is
        enough to cut each window once. A window that cannot be cut comes
        with the exception instead, which fails its tasks, not the run.
        """
        last: tuple[tuple[str, str], Instance | Exception] | None = None
        for task in tasks:
            key = (task.trace_sha256, task.window)
            if last is None or last[0] != key:
                last = (key, self._cut(key))
            yield task, last[1]

    def _cut(self, key: tuple[str, str]) -> Instance | Exception:
        try:
            return self.windows[key].cut(self.traces[key[0]])
        except ValueError as error:  # InputError included
            return error


def expand(suite: Suite) -> Plan:
    """Read the suite's traces, select their windows and list every task.

    Windows drawn by several seeds (random windows) appear once, at their
    first position.
    """
    from optsched.io import read_trace

    tasks: list[Task] = []
    traces: dict[str, Trace] = {}
    windows: dict[tuple[str, str], WindowSpec] = {}
    for ref in suite.traces:
        trace = read_trace(ref.file)
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
            tasks += _window_tasks(suite, ref.path, ref.sha256, spec, index)
    return Plan(suite, tuple(tasks), traces, windows)


def _window_tasks(
    suite: Suite, trace_path: str, sha256: str, spec: WindowSpec, index: int
) -> list[Task]:
    def task(kind: str, name: str, objective: str, params: dict[str, Any]) -> Task:
        params_json = to_json(params)
        task_id = make_task_id(
            suite.name, sha256, spec.key, kind, name, objective, params_json
        )
        return Task(
            task_id, suite.name, trace_path, sha256, spec.key, index,
            kind, name, objective, params_json,
        )  # fmt: skip

    tasks = []
    for objective in suite.objectives:
        for policy in suite.policies:
            tasks.append(task(POLICY, policy, objective, {"seed": POLICY_SEED}))
        for solver in suite.solvers:
            params = {"time_limit": solver.time_limit, "workers": solver.workers}
            tasks.append(task(SOLVER, solver.backend, objective, params))
    return tasks


def execute_task(task: Task, instance: Instance) -> dict[str, Any]:
    """The production task function: simulate a policy or run a back-end.

    Calls :func:`optsched.gap.evaluate_policy` or
    :func:`optsched.gap.evaluate_reference`, which check every schedule with
    :func:`optsched.check.check_schedule` and recompute objectives from it.
    Returns the :data:`RESULT_FIELDS`.
    """
    from optsched.gap import evaluate_policy, evaluate_reference
    from optsched.io.schedules import schedule_to_dict
    from optsched.metrics import summarize

    params = task.params
    if task.kind == POLICY:
        outcome = evaluate_policy(
            instance, task.name, task.objective, seed=params["seed"]
        )
        return {
            "status": "OK",
            "value": outcome.value,
            "lower": None,
            "lower_method": None,
            "upper": outcome.value,
            "upper_source": f"policy:{task.name}",
            "bounds": to_json({}),
            "metrics": to_json(outcome.metrics),
            "schedule": to_json(schedule_to_dict(outcome.schedule)),
            "runtime": outcome.runtime,
        }
    reference = evaluate_reference(
        instance,
        task.objective,
        backend=task.name,
        time_limit=params["time_limit"],
        workers=params["workers"],
    )
    if reference.error is not None:
        # Record the back-end's own words as the task's error.
        raise RuntimeError(f"{task.name}: {reference.error}")
    schedule = reference.schedule
    return {
        "status": reference.status,
        "value": reference.upper,
        "lower": reference.lower,
        "lower_method": reference.lower_method,
        "upper": reference.upper,
        "upper_source": reference.upper_source if schedule is not None else None,
        "bounds": to_json(reference.bounds),
        "metrics": to_json(
            summarize(instance, schedule).as_dict() if schedule is not None else {}
        ),
        "schedule": (
            to_json(schedule_to_dict(schedule)) if schedule is not None else None
        ),
        "runtime": reference.runtime,
    }
