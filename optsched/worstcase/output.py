"""Files written for a worst case or a counterexample.

For each result, in the output folder:

``NAME.json``
    The instance (native JSON, :func:`optsched.io.native.write_native`);
    ``NAME`` carries the ratio, e.g. ``fcfs-cmax-m3-n4-ratio1.9091``, and so
    does the instance's ``name`` field.
``NAME.summary.json``
    The ratio and both values at full precision, the search settings (seed,
    evaluations, stopping rule), the theoretical bound and the command that
    replays the ratio (``optsched gap NAME.json --policies SPEC --objective
    X`` for a ratio to the optimum).
``NAME.SIDE.png``
    Gantt charts of both schedules (``policy`` and ``optimum``, or the two
    policies' specs).

Every file is written atomically.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from optsched.instance import Instance
from optsched.io.atomic import atomic_write
from optsched.schedule import Schedule
from optsched.worstcase.search import WorstCase
from optsched.worstcase.theory import bound_label
from optsched.worstcase.versus import Counterexample


def safe_name(text: str) -> str:
    """``text`` with every character outside ``[A-Za-z0-9._-]`` made ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


def replay_command(path: Path | str, policy: str, objective: str) -> str:
    """The ``optsched gap`` command reproducing a ratio to the optimum."""
    return f"optsched gap {path} --policies {policy} --objective {objective}"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    with atomic_write(path) as handle:
        json.dump(data, handle, indent=2, sort_keys=False)
        handle.write("\n")


def write_gantt(instance: Instance, schedule: Schedule, path: Path, title: str) -> None:
    """One schedule as a PNG Gantt chart (processors on the y axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from optsched.plot.gantt import gantt
    from optsched.plot.text import literal_texts

    figure, ax = plt.subplots(figsize=(7, 0.6 * instance.processors + 1.6))
    try:
        gantt(instance, schedule, ax=ax)
        ax.set_title(title)
        literal_texts(ax)  # the title holds policy specs: drawn as written
        figure.tight_layout()
        with atomic_write(path, "wb") as handle:
            figure.savefig(handle, format="png", dpi=100)
    finally:
        plt.close(figure)


def _write_instance(instance: Instance, directory: str | Path) -> Path:
    """Create ``directory`` and write ``instance`` there; return its path
    (``NAME.json``, the stem of the files beside it)."""
    from optsched.io.native import write_native

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{safe_name(instance.name)}.json"
    write_native(instance, path)
    return path


_RATIO_FIELDS = (
    "policy",
    "objective",
    "ratio",
    "policy_value",
    "optimum_value",
    "optimum_method",
)
_SEARCH_FIELDS = ("seed", "evaluations", "max_evaluations", "restarts", "stopped_by")
_VERSUS_FIELDS = (
    "policy",
    "other",
    "objective",
    "policy_value",
    "other_value",
    "ratio",
)


def _fields(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The attributes ``names`` of ``record``, by name, in that order."""
    return {name: getattr(record, name) for name in names}


def _summary(
    kind: str, result: WorstCase | Counterexample, names: tuple[str, ...]
) -> dict[str, Any]:
    """The head of a summary: its kind, the result's fields ``names``, and
    the size of the instance (processors, jobs)."""
    instance = result.instance
    return {
        "kind": kind,
        **_fields(result, names),
        "processors": instance.processors,
        "jobs": len(instance.jobs),
    }


def write_worst_case(result: WorstCase, directory: str | Path) -> list[Path]:
    """Write a worst case's instance, summary and two Gantt charts."""
    instance_path = _write_instance(result.instance, directory)
    summary = {
        **_summary("ratio-to-optimum", result, _RATIO_FIELDS),
        **_fields(result.space, ("online", "allocation", "max_runtime", "estimates")),
        **_fields(result, _SEARCH_FIELDS),
        "reproducible": result.stopped_by == "evaluations",
        "theory": bound_label(
            result.policy,
            result.objective,
            online=result.space.online,
            processors=result.instance.processors,
            allocation=result.space.allocation,
        ),
        "replay": replay_command(instance_path.name, result.policy, result.objective),
    }
    return _write_summary_and_charts(
        result.instance,
        instance_path,
        summary,
        result.objective,
        [
            ("policy", result.policy, result.policy_schedule, result.policy_value),
            ("optimum", "optimum", result.optimum_schedule, result.optimum_value),
        ],
    )


def write_counterexample(result: Counterexample, directory: str | Path) -> list[Path]:
    """Write a counterexample's instance, summary and both policies' charts."""
    instance_path = _write_instance(result.instance, directory)
    summary = {
        **_summary("policy-versus-policy", result, _VERSUS_FIELDS),
        **_fields(result, ("seed", "shrink_steps")),
        "replay": (
            f"optsched compare {instance_path.name} --policies "
            f"{result.policy},{result.other}"
        ),
    }
    return _write_summary_and_charts(
        result.instance,
        instance_path,
        summary,
        result.objective,
        [
            (safe_name(spec), spec, schedule, value)
            for spec, schedule, value in (
                (result.policy, result.policy_schedule, result.policy_value),
                (result.other, result.other_schedule, result.other_value),
            )
        ],
    )


def _write_summary_and_charts(
    instance: Instance,
    instance_path: Path,
    summary: dict[str, Any],
    objective: str,
    charts: list[tuple[str, str, Schedule, float]],
) -> list[Path]:
    """Write ``summary`` beside the instance file, then a Gantt chart per
    ``(file part, label, schedule, value)``, titled ``objective label:
    value``; return the instance, summary and chart paths."""
    stem = instance_path.stem
    paths = [instance_path, instance_path.with_name(f"{stem}.summary.json")]
    _write_json(paths[1], summary)
    for part, label, schedule, value in charts:
        paths.append(instance_path.with_name(f"{stem}.{part}.png"))
        write_gantt(instance, schedule, paths[-1], f"{objective} {label}: {value:g}")
    return paths
