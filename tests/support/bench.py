"""Rows of a results store and stub task functions shared by the bench tests.

:func:`row`, :func:`policy` and :func:`solver` build complete task rows for
:class:`optsched.bench.store.Store`; :func:`fake` stands in for simulation and
solving (numbers that depend on the task and its instance only), and
:func:`logging_task` is the stub slowed down, logging each task it computes
(run in subprocesses that put ``tests/`` on ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optsched.bench.store import COLUMN_NAMES
from optsched.bench.tasks import Task, to_json
from optsched.instance import Instance


def row(task_id: str, **fields: Any) -> dict[str, Any]:
    """A complete task row with neutral defaults (a policy row)."""
    base: dict[str, Any] = dict.fromkeys(COLUMN_NAMES)
    base.update(
        task_id=task_id,
        suite="s",
        trace="t.swf",
        trace_sha256="ab" * 32,
        window="first=0,jobs=5,state=none",
        window_index=0,
        kind="policy",
        name="fcfs",
        objective="",
        params='{"objectives":["cmax","wct:one"],"seed":0}',
        status="OK",
        runtime=0.01,
    )
    base.update(fields)
    return base


def policy(
    task_id: str, name: str, values: dict[str, float], **fields: Any
) -> dict[str, Any]:
    """A policy row: simulated once, one value per objective, no ``value``."""
    fields.setdefault("status", "OK")
    fields.setdefault("params", to_json({"objectives": list(values), "seed": 0}))
    return row(task_id, name=name, values=to_json(values), **fields)


def solver(
    task_id: str, lower: float | None, upper: float | None, **fields: Any
) -> dict[str, Any]:
    fields.setdefault("status", "FEASIBLE")
    fields.setdefault("objective", "cmax")
    return row(
        task_id,
        kind="solver",
        name="cpsat",
        params='{"time_limit":5.0,"workers":1}',
        value=upper,
        lower=lower,
        lower_method="cpsat" if lower is not None else None,
        upper=upper,
        upper_source="cpsat" if upper is not None else None,
        **fields,
    )


def fake(task: Task, instance: Instance) -> dict[str, Any]:
    """Numbers that depend on the task and its instance only.

    A solver bounds the window by its work W: ``[W, W + 10]``. A policy
    measures every objective of its task: ``(W + 10 + len(name)) * k`` for
    the k-th objective (1-based).
    """
    work = float(sum(j.runtime for j in instance.jobs))
    if task.kind == "solver":
        return {
            "status": "FEASIBLE",
            "value": work + 10,
            "lower": work,
            "lower_method": "sum",
            "upper": work + 10,
            "upper_source": task.name,
            "bounds": to_json({"sum": work}),
            "metrics": to_json({"jobs": len(instance.jobs)}),
            "schedule": None,
            "runtime": 0.0,
        }
    base = work + 10 + len(task.name)
    objectives = task.params["objectives"]
    return {
        "status": "OK",
        "value": None,
        "values": to_json({o: base * k for k, o in enumerate(objectives, 1)}),
        "lower": None,
        "lower_method": None,
        "upper": None,
        "upper_source": None,
        "bounds": to_json({}),
        "metrics": to_json({"jobs": len(instance.jobs)}),
        "schedule": None,
        "runtime": 0.0,
    }


def logging_task(task: Task, instance: Instance) -> dict[str, Any]:
    """The stub, slowed down, appending each computed task id to a log."""
    time.sleep(0.1)
    with open(os.environ["OPTSCHED_TEST_LOG"], "a") as log:
        log.write(f"{task.task_id}\n")
    return fake(task, instance)


def write_suite(
    path: Path,
    trace: Path,
    policies: Sequence[str],
    *,
    objectives: Sequence[str] = ("cmax",),
    trace_options: str = "",
    tables: str = "",
    solver: str = 'backend = "bounds-only"',
) -> Path:
    """A suite file named after ``path``'s stem: ``policies`` on ``trace``,
    solved as ``solver`` says (TOML lines of the one ``[[solvers]]`` table,
    ``bounds-only`` by default); ``trace_options`` are TOML lines of the
    trace's table (``allocation = "contiguous"``), ``tables`` further
    tables (``[windows]``, ``[run]``, ``[schedules]``)."""
    quoted = ", ".join(f'"{p}"' for p in policies)
    wanted = ", ".join(f'"{o}"' for o in objectives)
    path.write_text(
        f"policies = [{quoted}]\nobjectives = [{wanted}]\n\n"
        f'[suite]\nname = "{path.stem}"\n\n'
        f'[[traces]]\npath = "{trace}"\n{trace_options}\n\n'
        f"[[solvers]]\n{solver}\n\n"
        f"{textwrap.dedent(tables)}\n"
    )
    return path
