"""Windows of a results store brought back: schedules, instances, best rows.

The store keeps, for each task, the trace path as written in the suite, the
trace's sha256, the window key (:attr:`optsched.selection.WindowSpec.key`)
and the schedule as JSON (the ``json`` format of
:mod:`optsched.io.schedules`). Drawing a schedule needs its instance
(machine size, busy blocks), so :class:`WindowFinder` finds the trace file
with that sha256 and cuts the window again; :func:`instances_for` falls back
to an instance rebuilt from the schedules
(:func:`optsched.plot.gantt.instance_from_schedule`) when the trace is not
found or the stored schedules do not fit the re-cut window, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from optsched.check import check_schedule
from optsched.instance import Instance
from optsched.plot.gantt import instance_from_schedule
from optsched.schedule import Schedule
from optsched.selection import WindowSpec


def _missing(x: object) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


@dataclass
class WindowFinder:
    """Cuts a stored window again from its trace (cached per trace file)."""

    store_dir: Path
    trace_dirs: Sequence[str | Path]
    _traces: dict[str, Any] = field(default_factory=dict)

    def _candidates(self, trace: str) -> Iterable[Path]:
        given = Path(trace)
        roots = [
            Path.cwd(),
            self.store_dir,
            Path.cwd() / "benchmarks" / "suites",
            *map(Path, self.trace_dirs),
        ]
        yield given
        for root in roots:
            yield root / given
            yield root / given.name

    def locate(self, trace: str, sha256: str) -> tuple[Path | None, str]:
        """The trace file with this sha256, or ``None`` and why not."""
        from optsched.bench.suite import sha256_of

        mismatched = []
        seen: set[Path] = set()
        for path in self._candidates(trace):
            resolved = path.resolve()
            if resolved in seen or not resolved.is_file():
                continue
            seen.add(resolved)
            if sha256_of(resolved) == sha256:
                return resolved, ""
            mismatched.append(str(path))
        if mismatched:
            return None, f"{', '.join(mismatched)} exists but has another sha256"
        return None, f"trace {trace} not found (try --trace-dir)"

    def instance(
        self, trace: str, sha256: str, key: str
    ) -> tuple[Instance | None, str]:
        """The window's instance, or ``None`` and the reason."""
        from optsched.io import read_trace

        path, why = self.locate(trace, sha256)
        if path is None:
            return None, why
        try:
            if sha256 not in self._traces:
                self._traces[sha256] = read_trace(path)
            return WindowSpec.from_key(key).cut(self._traces[sha256]), ""
        except (ValueError, ImportError) as error:
            return None, f"cannot cut window {key} from {path}: {error}"


def best_known(
    rows: pd.DataFrame, policy_row: pd.Series
) -> tuple[pd.Series | None, float | None]:
    """The stored row whose schedule attains the best upper bound of the
    policy row's window (prefers a solver, then another policy)."""
    same = rows[
        (rows["trace_sha256"] == policy_row["trace_sha256"])
        & (rows["window"] == policy_row["window"])
        & (rows["objective"] == policy_row["objective"])
        & (rows["status"] != "ERROR")
        & rows["schedule"].notna()
    ]
    candidates = []
    for _, row in same.iterrows():
        value = row["upper"] if row["kind"] == "solver" else row["value"]
        if _missing(value):
            continue
        is_self = row["kind"] == "policy" and row["name"] == policy_row["name"]
        candidates.append((float(value), row["kind"] != "solver", is_self, row))
    if not candidates:
        return None, None
    best = min(candidates, key=lambda c: c[:3])
    return best[3], best[0]


def instances_for(
    finder: WindowFinder, row: pd.Series, schedules: Sequence[Schedule]
) -> tuple[list[Instance | None], list[str]]:
    """An instance for each schedule: the re-cut window when it fits, else
    one rebuilt from the schedules; notes say which."""
    notes: list[str] = []
    window, why = finder.instance(
        str(row["trace"]), str(row["trace_sha256"]), str(row["window"])
    )
    if window is not None:
        problems = [check_schedule(window, s) for s in schedules]
        if not any(problems):
            return [window] * len(schedules), notes
        first = next(p for p in problems if p)[0]
        why = f"a stored schedule does not fit the re-cut window ({first})"
    notes.append(
        f"Window instance not available: {why}. Instance rebuilt from the "
        "schedules: no busy blocks, m = the fewest processors that hold both "
        "schedules."
    )
    try:
        sizes = [instance_from_schedule(s) for s in schedules]
    except ValueError as error:
        notes.append(f"Cannot draw: {error}.")
        return [None] * len(schedules), notes
    m = max(i.processors for i in sizes)
    return [instance_from_schedule(s, processors=m) for s in schedules], notes
