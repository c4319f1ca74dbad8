"""A schedule made elsewhere, rated like a policy: ``gap --schedule NAME=FILE``.

Users with their own simulator (Batsim, a Slurm simulator, AccaSim) or a
production log want the ratio without porting their scheduler. The spec
``schedule:name=NAME,file=FILE`` reads ``FILE`` — a Batsim ``out_jobs.csv``,
optsched's CSV or JSON schedule (:func:`optsched.io.schedules.read_schedule`),
or an SWF trace whose recorded starts (submit + wait) are the schedule —
and gives each job of the window its placement, matched by job id.

Clocks: a window is rebased to start at 0 (:class:`optsched.instance.Window`).
A file that records submit times (a Batsim ``out_jobs.csv``, an SWF trace)
is aligned on them: the offset between its submit times and the window's
is subtracted from its times (it must be one offset for every job), so a
schedule of the whole trace rates every window of it, and a Batsim run of
the exported window rates that window. optsched's CSV and JSON schedules
record no submit times: their times are read in the window's clock
(``clock=window``, what ``simulate -o`` writes), or, with
``clock=trace``, in the clock of the trace the window was first cut from
(the shift recorded in the window's provenance is subtracted). Jobs of the
file outside the window are ignored.

Nothing is repaired: a window job without a placement, or a schedule the
independent checker rejects, is refused with the checker's first
violations, never rated. The file's sha256 is part of the policy's identity
(a changed file is rated again).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from optsched.heuristics.engine.standalone import Standalone
from optsched.heuristics.spec import Family, SpecParts, join_spec, split_spec
from optsched.instance import Instance
from optsched.schedule import Placement, Schedule


class ScheduleRefused(ValueError):
    """A schedule file that cannot be rated on a window: incomplete, or
    rejected by the checker (bad input: ``gap`` exits with status 2)."""


SHOWN_VIOLATIONS = 3
"""Violations quoted when a schedule is refused."""


@dataclass(frozen=True)
class ScheduleFile(Standalone):
    """A schedule file rated as a policy (module docstring).

    ``algorithm`` is the canonical spec ``schedule:name=NAME,file=FILE``;
    ``digest`` the file's sha256 when the spec was parsed.
    """

    algorithm: str = "schedule"
    digest: str = ""

    rule: ClassVar[str] = "schedule"

    def _options(self) -> dict[str, Any]:
        parts = split_spec(self.algorithm)
        name, file = _name_and_file(parts)
        return {"name": name, "file": file, "clock": _clock(parts)}

    def _schedule(self, instance: Instance) -> Schedule:
        options = self._options()
        path = Path(options["file"])
        digest = _sha256(path)
        if self.digest and digest != self.digest:
            raise ValueError(
                f"schedule {options['name']!r}: {path} changed since it was named"
            )
        placements = _placements(
            _contents(str(path), digest), instance, options["clock"]
        )
        schedule = Schedule(_matched(placements, instance, options["name"]), self.spec)
        _refuse_if_invalid(instance, schedule, options["name"])
        return schedule


def _name_and_file(parts: SpecParts) -> tuple[str, str]:
    if parts.name != "schedule":
        raise ValueError(f"not a schedule spec: {parts.text!r}")
    parts.check(("name", "file", "clock"))
    missing = [key for key in ("name", "file") if not parts.params.get(key)]
    if missing:
        raise parts.error(f"needs {' and '.join(missing)} (schedule:name=N,file=F)")
    return str(parts.params["name"]), str(parts.params["file"])


CLOCKS = ("auto", "window", "trace")
"""How a schedule file's times are read (module docstring)."""


def _clock(parts: SpecParts) -> str:
    clock = str(parts.params.get("clock") or "auto").lower()
    if clock not in CLOCKS:
        raise parts.error(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    return clock


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise ValueError(f"{path}: {error.strerror or error}") from None


@dataclass(frozen=True)
class _Contents:
    """A schedule file read once: its placements (``None`` for an SWF trace,
    whose recorded starts are placed per window) or its trace, and the submit
    times it records (none for our CSV and JSON)."""

    path: Path
    placements: Mapping[int, Placement] | None
    trace: Instance | None
    submits: Mapping[int, int]


@functools.lru_cache(maxsize=4)
def _contents(path: str, digest: str) -> _Contents:
    """The file at ``path`` as it was when its sha256 was ``digest`` (each
    window of a suite replays the same file: it is parsed once per process)."""
    from optsched.io import detect_format, read_trace
    from optsched.io.schedules import read_schedule, schedule_file_jobs

    file = Path(path)
    if _is_swf(file, detect_format):
        trace = read_trace(file).instance
        submits = {job.id: job.release for job in trace.jobs}
        return _Contents(file, None, trace, submits)
    placements = read_schedule(file).placements
    return _Contents(file, placements, None, schedule_file_jobs(file)[1])


def _placements(
    contents: _Contents, instance: Instance, clock: str
) -> dict[int, Placement]:
    """The file's placements in the window's clock (module docstring)."""
    path = contents.path
    shift = _shift(path, contents.submits, instance, clock)
    if contents.trace is not None:
        found = _recorded(contents.trace, instance, shift)
        if found is None:
            raise ScheduleRefused(
                f"{path}: a job of the window starts before its submit time"
            )
        return found
    given = contents.placements or {}
    return {j: _shifted(p, shift) for j, p in given.items()} if shift else dict(given)


def _shift(
    path: Path, submits: Mapping[int, int], instance: Instance, clock: str
) -> int:
    """What to subtract from the file's times (module docstring)."""
    window = instance.source.window
    if clock == "trace":
        return window.shift if window is not None else 0
    if clock == "window" or not submits:
        return 0
    offsets = {
        submits[job.id] - job.release for job in instance.jobs if job.id in submits
    }
    if len(offsets) > 1:
        low, high = min(offsets), max(offsets)
        raise ScheduleRefused(
            f"{path}: its submit times are not the window's shifted by one offset "
            f"(offsets from {low} to {high} s): a schedule of another trace?"
        )
    return offsets.pop() if offsets else 0


def _is_swf(path: Path, detect: Any) -> bool:
    try:
        return bool(detect(path) == "swf")
    except ValueError:
        return False  # not a trace: a schedule format, or read_schedule's error


def _shifted(placement: Placement, shift: int) -> Placement:
    if placement.pieces:
        pieces = [
            dataclasses.replace(p, start=p.start - shift, end=p.end - shift)
            for p in placement.pieces
        ]
        return Placement.of_pieces(pieces)
    moves = tuple((t - shift, ids) for t, ids in placement.moves)
    return dataclasses.replace(
        placement, start=placement.start - shift, end=placement.end - shift, moves=moves
    )


def _recorded(
    trace: Instance, window: Instance, shift: int
) -> dict[int, Placement] | None:
    """An SWF trace's recorded starts for the window's jobs, on processors
    given greedily (:func:`optsched.heuristics.rigid.orig.recorded_schedule`);
    ``None`` when a start falls before its submit time."""
    from optsched.heuristics.rigid.orig import recorded_schedule

    recorded = {job.id: job for job in trace.jobs}
    jobs = []
    for job in window.jobs:
        found = recorded.get(job.id)
        if found is None or found.wait is None or found.wait < 0:
            continue  # _matched names the first job left without a placement
        start = found.release + found.wait - shift
        if start < job.release:
            return None
        jobs.append(dataclasses.replace(job, wait=start - job.release))
    schedule, _ = recorded_schedule(window.with_jobs(jobs))
    return dict(schedule.placements)


def _matched(
    placements: dict[int, Placement], instance: Instance, name: str
) -> dict[int, Placement]:
    missing = [job.id for job in instance.jobs if job.id not in placements]
    if missing:
        raise ScheduleRefused(
            f"schedule {name!r} is incomplete on this window: {len(missing)} of its "
            f"{len(instance.jobs)} jobs have no placement, e.g. job {missing[0]}"
        )
    return {job.id: placements[job.id] for job in instance.jobs}


def _refuse_if_invalid(instance: Instance, schedule: Schedule, name: str) -> None:
    from optsched.check import check_schedule

    violations = check_schedule(instance, schedule)
    if violations:
        shown = "; ".join(str(v) for v in violations[:SHOWN_VIOLATIONS])
        more = len(violations) - SHOWN_VIOLATIONS
        tail = f" (and {more} more)" if more > 0 else ""
        raise ScheduleRefused(f"schedule {name!r} is infeasible: {shown}{tail}")


def parse_schedule_file(parts: SpecParts) -> ScheduleFile:
    """The :class:`ScheduleFile` a spec's tokens name (the file must exist)."""
    name, file = _name_and_file(parts)
    clock = _clock(parts)
    if any(c in name for c in ",:=") or any(c in file for c in ","):
        raise parts.error("a name holds no ',', ':' or '=' and a file name no ','")
    items = [f"name={name}", f"file={file}"] + (
        [f"clock={clock}"] if clock != "auto" else []
    )
    return ScheduleFile(
        algorithm=join_spec("schedule", items), digest=_sha256(Path(file))
    )


FAMILY = Family(parse_schedule_file, names=("schedule",))
"""Schedule files in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
