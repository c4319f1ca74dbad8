"""Batsim files: processor sets, JSON workloads and ``out_schedule.csv``.

Processor sets
    Batsim and evalys write a set of processors as the intervals of
    `procset <https://pypi.org/project/procset/>`_ (``"0-3 7"``).
    :func:`format_resources` and :func:`parse_resources` are
    :func:`optsched.intervals.format_processors` and
    :func:`~optsched.intervals.parse_processors`: a set is written exactly
    as ``str(ProcSet(...))`` and read into a
    :class:`~optsched.schedule.ProcessorSet` (the memory is the number of
    intervals written, never the width of a range), with repeated indices
    kept for the checker and only ASCII digits taken (why not
    ``ProcSet.from_str``: :mod:`optsched.intervals`). :func:`procset_of` and
    :func:`processors_of` convert between the two types
    (:func:`~optsched.intervals.to_procset`,
    :func:`~optsched.intervals.from_procset`).

Workloads
    ``{"nb_res": m, "jobs": [{"id": "17", "subtime": 0, "walltime": 3600,
    "res": 4, "profile": "delay_120"}], "profiles": {"delay_120": {"type":
    "delay", "delay": 120}}}``: :func:`write_batsim_workload` writes any
    instance without busy blocks (job ids as strings, as Batsim and pybatsim
    expect; one ``delay`` profile per distinct run time) and
    :func:`read_batsim_workload` reads one back. Only ``delay`` profiles
    have a run time; other types (``parallel_homogeneous``, ...) are refused
    with one line naming the profile. A ``walltime`` of -1 or none means no
    estimate: the run time is used and counted
    (:attr:`~optsched.trace.Trace.estimates_missing`).

``out_schedule.csv``
    Batsim's one-row summary of a simulation, written beside ``out_jobs.csv``
    (:func:`summary_path`, :func:`schedule_summary_text`); see
    :data:`SUMMARY_COLUMNS` for what optsched fills.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from optsched.errors import InputError, shown
from optsched.instance import MAX_INTEGER, Instance, Job, Machine, Source
from optsched.intervals import (
    format_processors,
    from_procset,
    parse_processors,
    to_procset,
)
from optsched.io.atomic import atomic_write
from optsched.schedule import Schedule
from optsched.trace import Trace

# --------------------------------------------------------------------------
# Processor sets: the names this module has always offered, from the one
# processor-interval module.
# --------------------------------------------------------------------------

format_resources = format_processors
parse_resources = parse_processors
procset_of = to_procset
processors_of = from_procset


# --------------------------------------------------------------------------
# Workloads: writing
# --------------------------------------------------------------------------

DELAY = "delay"


def _profile_name(runtime: int) -> str:
    return f"delay_{runtime}"


def workload_to_dict(instance: Instance) -> dict[str, Any]:
    """The instance as a Batsim workload (see the module docstring).

    Raises
    ------
    ValueError
        The instance has busy blocks or a contiguous machine, which a Batsim
        workload cannot hold (the platform file describes the machine),
        speeds or SMP nodes (likewise), or moldable jobs (a Batsim job has
        one size).
    """
    machine = instance.machine
    moldable = [job.id for job in instance.jobs if job.modes]
    if moldable:
        raise ValueError(
            f"a Batsim workload cannot hold the modes of the {len(moldable)} "
            f"moldable job(s) of this instance (job {moldable[0]}); write json"
        )
    if not machine.flat:
        raise ValueError(
            "a Batsim workload cannot hold node speeds or SMP nodes (Batsim's "
            "platform file describes hosts); write json"
        )
    if machine.unavailable:
        raise ValueError(
            f"a Batsim workload cannot hold the {len(machine.unavailable)} busy "
            "block(s) of this instance (cut the window with --initial-state none)"
        )
    if machine.allocation != "any":
        raise ValueError(
            f"a Batsim workload cannot record the {machine.allocation!r} "
            "allocation of this machine (Batsim's platform file describes it)"
        )
    profiles: dict[str, dict[str, Any]] = {}
    jobs = []
    for job in instance.jobs:
        name = _profile_name(job.runtime)
        profiles.setdefault(name, {"type": DELAY, "delay": job.runtime})
        jobs.append(
            {
                "id": str(job.id),
                "subtime": job.release,
                "walltime": job.requested,
                "res": job.size,
                "profile": name,
            }
        )
    return {"nb_res": instance.processors, "jobs": jobs, "profiles": profiles}


def workload_to_json(instance: Instance) -> str:
    """The workload text: one job and one profile per line."""
    data = workload_to_dict(instance)

    def block(items: list[str], opening: str, closing: str) -> str:
        if not items:
            return opening + closing
        return opening + "\n" + ",\n".join(items) + "\n  " + closing

    jobs = [f"    {json.dumps(job)}" for job in data["jobs"]]
    profiles = [
        f"    {json.dumps(name)}: {json.dumps(profile)}"
        for name, profile in data["profiles"].items()
    ]
    return (
        f'{{\n  "nb_res": {data["nb_res"]},\n'
        f'  "jobs": {block(jobs, "[", "]")},\n'
        f'  "profiles": {block(profiles, "{", "}")}\n}}\n'
    )


def write_batsim_workload(instance: Instance, path: str | Path) -> None:
    """Write ``instance`` as a Batsim JSON workload, atomically.

    Job ids, submit times, sizes, estimates (``walltime``) and run times
    (``delay`` profiles) are kept; :func:`read_batsim_workload` gives them
    back. Raises ``ValueError`` for busy blocks (see :func:`workload_to_dict`).
    """
    text = workload_to_json(instance)
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(text)


# --------------------------------------------------------------------------
# Workloads: reading
# --------------------------------------------------------------------------

_JOB_ID = re.compile(r"[+-]?[0-9]+")
_Where = tuple[str | int, ...]


class _Problem(Exception):
    def __init__(self, where: _Where, reason: str) -> None:
        super().__init__(where, reason)
        self.where, self.reason = where, reason


def is_batsim_workload(data: object) -> bool:
    """A JSON object with ``nb_res`` and ``jobs`` and no optsched ``format``."""
    return (
        isinstance(data, dict)
        and "nb_res" in data
        and "jobs" in data
        and data.get("format") != "optsched-instance"
    )


def _seconds(value: object, where: _Where, name: str) -> int:
    """Integer seconds (``12`` or ``12.0``) within ``2**53``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Problem(where, f"{name}: expected a number, got {shown(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise _Problem(
            where,
            f"{name}: expected whole seconds, got {shown(value)} (optsched "
            "times are integer seconds)",
        )
    if not 0 <= value <= MAX_INTEGER:
        raise _Problem(
            where, f"{name}: {shown(value)} is outside 0..2**53 ({MAX_INTEGER})"
        )
    return int(value)


def _job_id(value: object, where: _Where) -> int:
    text = value if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    if text is not None:
        text = text.rsplit("!", 1)[-1]  # "workload!17"
    if text is None or not _JOB_ID.fullmatch(text) or len(text) > 20:
        raise _Problem(
            where,
            f"id: expected an integer job id (or 'workload!17'), got {shown(value)}",
        )
    if abs(int(text)) > MAX_INTEGER:
        raise _Problem(where, f"id: {shown(value)} is beyond the limit 2**53")
    return int(text)


def _runtime(profiles: dict[str, Any], name: object, where: _Where) -> int:
    if not isinstance(name, str):
        raise _Problem(
            (*where, "profile"), f"profile: expected a string, got {shown(name)}"
        )
    if name not in profiles:
        raise _Problem(
            (*where, "profile"), f"profile {shown(name)} is not in 'profiles'"
        )
    profile = profiles[name]
    at: _Where = ("profiles", name)
    if not isinstance(profile, dict):
        raise _Problem(at, f"profile {shown(name)}: expected an object")
    kind = profile.get("type")
    if kind != DELAY:
        raise _Problem(
            at,
            f"profile {shown(name)} has type {shown(kind)}: only 'delay' profiles "
            "give a run time optsched can use",
        )
    if "delay" not in profile:
        raise _Problem(at, f"profile {shown(name)}: missing key 'delay'")
    return _seconds(profile["delay"], (*at, "delay"), f"profile {shown(name)}: delay")


def _job(item: object, index: int, profiles: dict[str, Any]) -> tuple[Job, bool]:
    """One job and whether its estimate is missing."""
    where: _Where = ("jobs", index)
    if not isinstance(item, dict):
        raise _Problem(where, f"jobs[{index}]: expected an object")
    for key in ("id", "subtime", "res", "profile"):
        if key not in item:
            raise _Problem(where, f"jobs[{index}]: missing key {key!r}")
    try:
        job_id = _job_id(item["id"], (*where, "id"))
    except _Problem as problem:
        raise _Problem(problem.where, f"jobs[{index}]: {problem.reason}") from None
    label = f"jobs[{index}] (id {shown(item['id'])})"
    try:
        release = _seconds(item["subtime"], (*where, "subtime"), "subtime")
        runtime = _runtime(profiles, item["profile"], where)
        walltime = item.get("walltime", -1)
        missing = walltime in (-1, None) and not isinstance(walltime, bool)
        estimate = (
            None if missing else _seconds(walltime, (*where, "walltime"), "walltime")
        )
        size = item["res"]
        if isinstance(size, bool) or not isinstance(size, int):
            raise _Problem(
                (*where, "res"), f"res: expected an integer, got {shown(size)}"
            )
        job = Job(job_id, release, size, runtime, estimate)
    except _Problem as problem:
        raise _Problem(problem.where, f"{label}: {problem.reason}") from None
    except ValueError as error:
        raise _Problem(where, f"{label}: {error}") from None
    return job, missing


def _instance(data: object, name: str, source: Source) -> tuple[Instance, int]:
    if not is_batsim_workload(data):
        raise _Problem(
            (), "expected a Batsim workload: an object with 'nb_res' and 'jobs'"
        )
    assert isinstance(data, dict)
    nb_res = data["nb_res"]
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 1:
        raise _Problem(
            ("nb_res",), f"nb_res: expected a positive integer, got {shown(nb_res)}"
        )
    try:
        machine = Machine(nb_res)
    except ValueError as error:
        raise _Problem(("nb_res",), f"nb_res: {error}") from None
    items, profiles = data["jobs"], data.get("profiles", {})
    if not isinstance(items, list):
        raise _Problem(("jobs",), "jobs: expected a list")
    if not isinstance(profiles, dict):
        raise _Problem(("profiles",), "profiles: expected an object")
    jobs: list[Job] = []
    missing = 0
    seen: dict[int, int] = {}
    for index, item in enumerate(items):
        job, no_estimate = _job(item, index, profiles)
        if job.id in seen:
            raise _Problem(
                ("jobs", index, "id"),
                f"jobs[{index}]: job id {job.id} appears twice (first at "
                f"jobs[{seen[job.id]}])",
            )
        if job.size > nb_res:
            raise _Problem(
                ("jobs", index, "res"),
                f"jobs[{index}] (id {job.id}): res {job.size} exceeds nb_res {nb_res}",
            )
        seen[job.id] = index
        jobs.append(job)
        missing += no_estimate
    return Instance(machine, tuple(jobs), name, source), missing


def read_batsim_workload(path: str | Path) -> Trace:
    """Read a Batsim JSON workload as an instance (see the module docstring).

    The instance is named after the file; ``estimates_missing`` counts the
    jobs without a ``walltime`` (their run time is their estimate).

    Raises
    ------
    InputError
        One line ``file:line: reason``, e.g. ``w.json:12: jobs[3] (id '17'):
        profile 'p1' has type 'parallel_homogeneous': only 'delay' profiles
        give a run time optsched can use``.
    """
    # The native reader's byte checks and JSON errors, for the same messages.
    from optsched.io.native import _DuplicateKeys, _parse_json, _read_text, json_line

    path = Path(path)
    text, raw = _read_text(path)
    data = _parse_json(text, path, _DuplicateKeys())
    source = Source(
        file=str(path), sha256=hashlib.sha256(raw).hexdigest(), format="batsim"
    )
    name = path.name.removesuffix(".gz").removesuffix(".json")
    try:
        instance, missing = _instance(data, name, source)
    except _Problem as problem:
        try:
            line = json_line(text, problem.where)
        except (RecursionError, KeyError, IndexError, ValueError):
            line = None
        raise InputError(problem.reason, path, line) from None
    header = {"format": "batsim"}
    return Trace(
        instance,
        header=header,
        records=len(instance.jobs),
        estimates_missing=missing,
    )


# --------------------------------------------------------------------------
# out_schedule.csv
# --------------------------------------------------------------------------

SUMMARY_COLUMNS = (
    "batsim_version",
    "consumed_joules",
    "makespan",
    "max_slowdown",
    "max_turnaround_time",
    "max_waiting_time",
    "mean_slowdown",
    "mean_turnaround_time",
    "mean_waiting_time",
    "nb_computing_machines",
    "nb_grouped_switches",
    "nb_jobs",
    "nb_jobs_finished",
    "nb_jobs_killed",
    "nb_jobs_rejected",
    "nb_jobs_success",
    "nb_machine_switches",
    "scheduling_time",
    "simulation_time",
    "success_rate",
    "time_computing",
    "time_idle",
    "time_sleeping",
    "time_switching_off",
    "time_switching_on",
)
"""The columns of Batsim 4's ``out_schedule.csv``, in its (alphabetical) order.

Filled as Batsim defines them: ``makespan`` (latest finish time),
``nb_jobs``, ``nb_jobs_finished`` (every placed job), ``nb_jobs_success``
and ``nb_jobs_killed`` (stopped at their estimate), ``success_rate``, the
mean and max of ``waiting_time``, ``turnaround_time`` and ``slowdown``
(turnaround over execution time, Batsim's stretch), ``nb_computing_machines``
(the instance's processors), ``time_computing`` (processor-seconds of the
jobs) and ``time_idle`` (processors × makespan − ``time_computing``: machines
exist from time 0). Zero because optsched has no such thing:
``nb_jobs_rejected``, ``nb_machine_switches``, ``nb_grouped_switches``,
``time_sleeping``, ``time_switching_on``, ``time_switching_off`` (no power
states). ``nan`` because optsched does not measure them: ``consumed_joules``
(no energy model), ``scheduling_time`` and ``simulation_time`` (Batsim's
wall-clock seconds of the scheduler and of the simulation). ``batsim_version``
names optsched."""

_SUFFIX = "_jobs.csv"


def summary_path(jobs_path: str | Path) -> Path | None:
    """``X/out_jobs.csv`` -> ``X/out_schedule.csv`` (any ``*_jobs.csv``), else None."""
    path = Path(jobs_path)
    if not path.name.lower().endswith(_SUFFIX):
        return None
    return path.with_name(path.name[: -len(_SUFFIX)] + "_schedule.csv")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)  # "nan", "inf": pandas reads both
    return f"{value:.6f}"


def summary_values(schedule: Schedule, instance: Instance) -> dict[str, Any]:
    """The ``out_schedule.csv`` values of a schedule (see :data:`SUMMARY_COLUMNS`)."""
    from optsched import __version__

    jobs = instance.jobs_by_id()
    waits, turnarounds, slowdowns = [], [], []
    computing, makespan = 0, 0
    for job_id, p in schedule.placements.items():
        release = jobs[job_id].release
        execution, turnaround = p.end - p.start, p.end - release
        waits.append(p.start - release)
        turnarounds.append(turnaround)
        if execution:
            slowdowns.append(turnaround / execution)
        else:  # as _stretch in io/schedules.py
            slowdowns.append(math.inf if turnaround > 0 else 1.0)
        width = jobs[job_id].size if p.processors is None else len(p.processors)
        computing += width * execution
        makespan = max(makespan, p.end)
    count = len(schedule.placements)
    killed = len(schedule.killed & schedule.placements.keys())
    nan = math.nan

    def mean(values: list[float] | list[int]) -> float:
        return sum(values) / count if count else nan

    return {
        "batsim_version": f"optsched {__version__}",
        "consumed_joules": nan,
        "makespan": makespan,
        "max_slowdown": max(slowdowns, default=nan),
        "max_turnaround_time": max(turnarounds, default=0),
        "max_waiting_time": max(waits, default=0),
        "mean_slowdown": mean(slowdowns),
        "mean_turnaround_time": mean(turnarounds),
        "mean_waiting_time": mean(waits),
        "nb_computing_machines": instance.processors,
        "nb_grouped_switches": 0,
        "nb_jobs": count,
        "nb_jobs_finished": count,
        "nb_jobs_killed": killed,
        "nb_jobs_rejected": 0,
        "nb_jobs_success": count - killed,
        "nb_machine_switches": 0,
        "scheduling_time": nan,
        "simulation_time": nan,
        "success_rate": (count - killed) / count if count else nan,
        "time_computing": computing,
        "time_idle": instance.processors * makespan - computing,
        "time_sleeping": 0,
        "time_switching_off": 0,
        "time_switching_on": 0,
    }


def schedule_summary_text(schedule: Schedule, instance: Instance) -> str:
    """The text of ``out_schedule.csv``: a header and one row."""
    values = summary_values(schedule, instance)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    writer.writerow(
        values[c] if isinstance(values[c], str) else _number(values[c])
        for c in SUMMARY_COLUMNS
    )
    return buffer.getvalue()
