"""Native instance files: one JSON object per instance.

The format is the :class:`~optsched.instance.Instance` written out field by
field, so an instance read back from a file it was written to is equal to the
original (``read_native(write_native(i)) == i``). The JSON Schema (draft
2020-12) is shipped as ``optsched/schemas/instance.schema.json``
(:func:`schema_path`). The reader validates a file against it with
jsonschema (:mod:`optsched.io.schema_messages`), then makes the checks a
schema cannot express (unique ids, sizes within the machine, busy blocks that
fit, a moldable job's modes); either way the message names the file, the line
and the JSON path of the problem.

Example::

    {
      "format": "optsched-instance",
      "version": 1,
      "name": "tiny",
      "machine": {"processors": 4, "allocation": "any", "unavailable": [
        {"start": 0, "end": 30, "size": 2, "label": "job 7"}
      ]},
      "jobs": [
        {"id": 1, "release": 0, "size": 2, "runtime": 10, "estimate": 20,
         "weight": 1.0},
        {"id": 2, "release": 5, "size": 4, "runtime": 3, "estimate": 3,
         "weight": 2.0, "user": 12}
      ],
      "source": {"file": "KTH-SP2-1996-2.1-cln.swf", "sha256": "fba3...",
                 "format": "swf", "window": {"first_job": 100, "jobs": 2,
                 "start": null, "end": null, "shift": 8210,
                 "initial_state": "none"}}
    }

Keys (all times are integer seconds, intervals half-open ``[start, end)``):

``format``
    ``"optsched-instance"`` (optional when reading).
``version``
    Format version, ``1``.
``name``
    Free text (optional, default ``""``).
``machine``
    ``processors`` (integer >= 1), ``allocation`` (``"any"``, the default, or
    ``"contiguous"``), ``unavailable`` (optional list of busy blocks: ``start``,
    ``end``, ``size``, ``offset`` of the first processor, optional
    ``label``). The ``offset`` is required on a ``contiguous`` machine and
    refused on an ``any`` machine, where a block is a processor count (see
    :class:`~optsched.instance.Machine`). Optional ``outages``: machine
    outages, in the busy blocks' form (written only when there are some).
    Optional ``switch_cost`` and
    ``switch_cost_per_processor`` (integers >= 0, default 0): the seconds a
    preempted job pays each time it resumes, ``switch_cost +
    switch_cost_per_processor * size`` (written only when not 0).
    Optional ``calendar``: a site calendar
    (:class:`~optsched.calendar.Calendar`): ``periods`` (each ``days``,
    day numbers 0-6 from Monday and 7 for holidays, ``start`` and ``end``
    in seconds of the day, ``capacity`` and ``max_size``, ``null`` for
    none), ``holidays`` (day numbers), ``monday_offset``,
    ``sequential_queues``, ``anytime_queues`` and ``user_limit``
    (processor-seconds).
    Optional ``speeds`` (one number > 0 per processor; a job's ``runtime``
    and ``estimate`` are then its work at speed 1) and ``nodes`` (an SMP
    cluster: ``count`` nodes of ``cpus`` processors, optional ``tight``
    span slack, ``level`` network load, ``base`` cost, ``cost`` ``"ratio"``
    or ``"excess"``; see :mod:`optsched.nodes`), written only when set.
``jobs``
    List of jobs: ``id``, ``release`` (>= 0), ``size`` (1..processors),
    ``runtime`` (>= 0) are required; ``estimate`` (default: the runtime),
    ``weight`` (finite, > 0, default 1) and the SWF extras ``wait``, ``user``,
    ``group``, ``executable``, ``queue``, ``partition``, ``status``,
    ``preceding_job``, ``think_time`` (integers) are optional. The writer
    omits extras that are unknown (``None``). Ids are unique.
``source``
    Provenance of the instance: ``file``, ``sha256`` and ``format`` of the
    file it was cut from (strings or ``null``) and ``window``
    (``first_job``, ``jobs``, ``start``, ``end``: integers or ``null``;
    ``shift``: integer; ``initial_state``: ``"none"``, ``"recorded"`` or
    ``"simulated:POLICY"``) or
    ``null``. When a hand-written file has no ``source`` key, the reader
    records the JSON file itself (path, sha256, ``"json"``).

Unknown keys are errors: a misspelt ``"runtme"`` must not silently become a
default. The writer puts one job per line so that a job's line number points
at it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from optsched.calendar import Calendar, Period
from optsched.errors import InputError, shown
from optsched.instance import (
    BusyBlock,
    Instance,
    Job,
    Machine,
    Mode,
    Source,
    Window,
    block_name,
    job_name,
)
from optsched.io.atomic import atomic_write
from optsched.io.json_lines import JsonLocator, JsonPath, line_of
from optsched.io.json_lines import json_line as json_line
from optsched.io.json_lines import json_lines as json_lines
from optsched.io.schema_messages import (
    describe_value,
    explain,
    first_error,
    validator_for,
)
from optsched.io.text import decode_utf8, read_data, refuse_utf16, strip_bom
from optsched.nodes import DEFAULT_BASE, Nodes
from optsched.trace import Trace

FORMAT_NAME = "optsched-instance"
FORMAT_VERSION = 1

JOB_KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Job))
SWITCH_KEYS = ("switch_cost", "switch_cost_per_processor")
MAX_DEPTH = 64
"""Nesting depth named in the message on JSON too deep to parse (the format
itself needs 4 levels; the parser gives up near the recursion limit)."""


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def schema_path() -> Path:
    """Path of the bundled JSON Schema (draft 2020-12) of this format."""
    return Path(str(resources.files("optsched") / "schemas" / "instance.schema.json"))


def job_to_dict(job: Job) -> dict[str, Any]:
    """A job as a JSON object; ``None`` fields are left out.

    A moldable job gives its ``modes`` and its requested ``size``, not
    ``runtime`` and ``estimate`` (they are its requested mode's).
    """
    out: dict[str, Any] = {}
    for name in JOB_KEYS:
        value = getattr(job, name)
        if value is not None:
            out[name] = value
    del out["modes"], out["malleable"]
    if job.modes:
        del out["runtime"], out["estimate"]
        out["modes"] = [_mode_to_dict(mode) for mode in job.modes]
        if job.malleable:
            out["malleable"] = True
    return out


def _mode_to_dict(mode: Mode) -> dict[str, int]:
    out = {"processors": mode.processors, "runtime": mode.runtime}
    if mode.estimate != mode.runtime:
        out["estimate"] = mode.requested
    return out


def _block_to_dict(block: BusyBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"start": block.start, "end": block.end, "size": block.size}
    if block.offset is not None:
        out["offset"] = block.offset
    if block.label:
        out["label"] = block.label
    return out


def _topology_to_dict(machine: Machine) -> dict[str, Any]:
    # Written only when set, so flat machines keep their files unchanged.
    out: dict[str, Any] = {}
    if machine.speeds is not None:
        out["speeds"] = list(machine.speeds)
    if machine.nodes is not None:
        out["nodes"] = dataclasses.asdict(machine.nodes)
    if machine.calendar is not None:
        out["calendar"] = _calendar_to_dict(machine.calendar)
    return out


def _calendar_to_dict(calendar: Calendar) -> dict[str, Any]:
    """A site calendar in the form :func:`_parse_calendar` reads."""
    out: dict[str, Any] = {
        "periods": [
            {
                "days": list(p.days),
                "start": p.start,
                "end": p.end,
                "capacity": p.capacity,
                "max_size": p.max_size,
            }
            for p in calendar.periods
        ],
        "holidays": sorted(calendar.holidays),
        "monday_offset": calendar.monday_offset,
        "sequential_queues": sorted(calendar.sequential_queues),
        "anytime_queues": sorted(calendar.anytime_queues),
    }
    if calendar.user_limit is not None:
        out["user_limit"] = calendar.user_limit
    return out


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """The instance as a JSON-ready dictionary (see the module docstring)."""
    source = instance.source
    window = source.window
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": instance.name,
        "machine": {
            "processors": instance.machine.processors,
            "allocation": instance.machine.allocation,
            "unavailable": [_block_to_dict(b) for b in instance.machine.unavailable],
            **(
                {"outages": [_block_to_dict(b) for b in instance.machine.outages]}
                if instance.machine.outages
                else {}
            ),
            **{
                key: getattr(instance.machine, key)
                for key in SWITCH_KEYS
                if getattr(instance.machine, key)
            },
            **_topology_to_dict(instance.machine),
        },
        "jobs": [job_to_dict(job) for job in instance.jobs],
        "source": {
            "file": source.file,
            "sha256": source.sha256,
            "format": source.format,
            "window": None if window is None else dataclasses.asdict(window),
        },
    }


def _dump(value: object) -> str:
    # allow_nan=False: NaN/Infinity are not JSON; validation forbids them.
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _dump_list(items: list[Any], indent: str) -> str:
    if not items:
        return "[]"
    inner = ",\n".join(f"{indent}  {_dump(item)}" for item in items)
    return f"[\n{inner}\n{indent}]"


def instance_to_json(instance: Instance) -> str:
    """The file text: the top level indented, one job or busy block per line."""
    data = instance_to_dict(instance)
    machine = data["machine"]
    lines = [
        "{",
        f'  "format": {_dump(data["format"])},',
        f'  "version": {_dump(data["version"])},',
        f'  "name": {_dump(data["name"])},',
        f'  "machine": {{"processors": {_dump(machine["processors"])}, '
        f'"allocation": {_dump(machine["allocation"])}, '
        + "".join(
            f'"{k}": {_dump(machine[k])}, '
            for k in (*SWITCH_KEYS, "speeds", "nodes", "calendar")
            if k in machine
        )
        + (
            f'"outages": {_dump_list(machine["outages"], "  ")}, '
            if "outages" in machine
            else ""
        )
        + f'"unavailable": {_dump_list(machine["unavailable"], "  ")}}},',
        f'  "jobs": {_dump_list(data["jobs"], "  ")},',
        f'  "source": {_dump(data["source"])}',
        "}",
    ]
    return "\n".join(lines) + "\n"


def write_native(instance: Instance, path: str | Path) -> None:
    """Write ``instance`` to ``path`` atomically (never a partial file)."""
    text = instance_to_json(instance)
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


class _Problem(Exception):
    """A validation problem at a JSON path, before file and line are known."""

    def __init__(self, path: JsonPath, reason: str, label: str | None = None) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.label = label if label is not None else format_json_path(path)


def format_json_path(path: JsonPath) -> str:
    """``("jobs", 3, "size")`` -> ``"jobs[3].size"``; ``()`` -> ``"top level"``.

    A key that is not a short identifier (an unknown key copied from a file)
    is quoted and cut: ``source['a b']``.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _IDENTIFIER.fullmatch(part):
            out += f"[{shown(part)}]"
        else:
            out += f".{part}" if out else part
    return out or "top level"


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_kind = describe_value


@functools.cache
def _key_set(keys: tuple[str, ...]) -> frozenset[str]:
    return frozenset(keys)


def _validated(
    build: Callable[[], Any],
    path: JsonPath,
    data: Mapping[str, Any],
    label: str,
    owner: str = "",
) -> Any:
    """Call a validating constructor; map its ``ValueError`` to a key.

    Core types say ``"job 17: size 0 must be at least 1"``; the ``owner``
    prefix (``"job 17: "``) is replaced by ``label`` and the path points at
    the key of ``data`` the reason starts with, if any.
    """
    try:
        return build()
    except ValueError as error:
        reason = str(error).removeprefix(owner)
        first_word = reason.split(" ", 1)[0]
        where = (*path, first_word) if first_word in data else path
        raise _Problem(where, reason, label) from None


class _Object:
    """Typed access to one JSON object, raising :class:`_Problem` on misuse.

    For readers of formats with no shipped schema (co-reservation problems);
    native instances are validated against their schema instead.
    """

    def __init__(
        self,
        value: object,
        path: JsonPath,
        keys: tuple[str, ...],
        label: str | None = None,
    ) -> None:
        if not isinstance(value, dict):
            raise _Problem(path, f"expected an object, got {_kind(value)}", label)
        self.data: dict[str, Any] = value
        self.path = path
        self.label = label if label is not None else format_json_path(path)
        if not value.keys() <= _key_set(keys):
            key = next(k for k in value if k not in keys)
            raise _Problem(
                (*path, key),
                f"unknown key {shown(key)} (expected one of: {', '.join(keys)})",
                self.label,
            )

    def has(self, key: str) -> bool:
        return key in self.data

    def _problem(self, key: str, reason: str) -> _Problem:
        return _Problem((*self.path, key), reason, self.label)

    def require(self, key: str) -> Any:
        if key not in self.data:
            raise _Problem(self.path, f"missing key {key!r}", self.label)
        return self.data[key]

    def integer(
        self, key: str, *, required: bool = True, nullable: bool = False
    ) -> int | None:
        if not required and key not in self.data:
            return None
        value = self.require(key)
        if value is None and nullable:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._problem(key, f"{key}: expected an integer, got {_kind(value)}")
        return value

    def number(self, key: str) -> float | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self._problem(key, f"{key}: expected a number, got {_kind(value)}")
        if not math.isfinite(value):
            raise self._problem(
                key, f"{key}: expected a finite number, got {shown(value)}"
            )
        return value

    def string(self, key: str, *, nullable: bool = False) -> str | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise self._problem(key, f"{key}: expected a string, got {_kind(value)}")
        return value

    def array(self, key: str, *, required: bool = True) -> list[Any]:
        if not required and key not in self.data:
            return []
        value = self.require(key)
        if not isinstance(value, list):
            raise self._problem(key, f"{key}: expected a list, got {_kind(value)}")
        return value

    def validated(self, build: Callable[[], Any], owner: str = "") -> Any:
        """:func:`_validated` on this object."""
        return _validated(build, self.path, self.data, self.label, owner)


# --------------------------------------------------------------------------
# The schema step: everything JSON Schema can say, checked by jsonschema
# --------------------------------------------------------------------------


@functools.cache
def _schema_validators() -> tuple[Validator, Validator]:
    """Validators of the shipped schema and of one job item alone.

    The job items are validated one by one, and only when the core type
    refuses a job or the job is not a plain rigid one (:func:`_parse_job`):
    jsonschema on every job costs tens of times the JSON parse of a large
    trace (benchmarks/README.md, "native reader").
    """
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    job = {"$schema": schema["$schema"], "$defs": schema["$defs"]}
    return validator_for(schema), validator_for({**job, "$ref": "#/$defs/job"})


def _schema_problem(
    error: ValidationError, prefix: JsonPath = (), job: object = None
) -> _Problem:
    problem = explain(error, prefix)
    if prefix and problem.owner == prefix:
        label = _job_label(job, int(prefix[1]))
    else:
        label = format_json_path(problem.owner)
    return _Problem(problem.path, problem.reason, label)


def _check_head(data: object) -> None:
    """Validate everything but the job items against the shipped schema."""
    document, _ = _schema_validators()
    head = data
    if isinstance(data, dict) and isinstance(data.get("jobs"), list):
        head = {**data, "jobs": []}
    error = first_error(document, head, ahead=("format", "version"))
    if error is not None:
        raise _schema_problem(error)


def _check_job(value: object, index: int) -> None:
    """Validate ``jobs[index]`` against the schema's job definition."""
    _, job = _schema_validators()
    error = first_error(job, value)
    if error is not None:
        raise _schema_problem(error, ("jobs", index), value)


# --------------------------------------------------------------------------
# Building the instance: schema-valid values, checks across fields
# --------------------------------------------------------------------------


def _parse_block(
    data: dict[str, Any], path: JsonPath, processors: int, allocation: str
) -> BusyBlock:
    label = data.get("label", "")
    start, end = data["start"], data["end"]
    where, owner = format_json_path(path), f"{block_name(label, start, end)}: "
    block: BusyBlock = _validated(
        lambda: BusyBlock(start, end, data["size"], data.get("offset"), label),
        path,
        data,
        where,
        owner,
    )
    # A machine holding only this block: checks it fits, with the block's path.
    _validated(
        lambda: Machine(processors, allocation, (block,)), path, data, where, owner
    )
    return block


def _parse_machine(data: dict[str, Any]) -> Machine:
    path: JsonPath = ("machine",)

    def validated(build: Callable[[], Machine]) -> Machine:
        machine: Machine = _validated(build, path, data, "machine", "machine: ")
        return machine

    allocation = data.get("allocation", "any")
    costs = {key: data.get(key, 0) for key in SWITCH_KEYS}
    machine = validated(lambda: Machine(data["processors"], allocation, **costs))
    if "speeds" in data or "nodes" in data:
        speeds = tuple(data["speeds"]) if "speeds" in data else None
        nodes = _parse_nodes(data["nodes"]) if "nodes" in data else None
        machine = validated(lambda: machine.replace(speeds=speeds, nodes=nodes))
    if "calendar" in data:
        calendar = _parse_calendar(data["calendar"])
        machine = validated(lambda: machine.replace(calendar=calendar))
    blocks, outages = (
        tuple(
            _parse_block(item, (*path, key, i), machine.processors, allocation)
            for i, item in enumerate(data.get(key, ()))
        )
        for key in ("unavailable", "outages")
    )
    # What is left are conflicts between blocks (capacity, shared processors);
    # a message naming two blocks keeps both names.
    return validated(lambda: machine.replace(unavailable=blocks, outages=outages))


def _parse_nodes(data: dict[str, Any]) -> Nodes:
    nodes: Nodes = _validated(
        lambda: Nodes(
            data["count"],
            data["cpus"],
            data.get("tight"),
            data.get("level", 0),
            data.get("base", DEFAULT_BASE),
            data.get("cost", "ratio"),
        ),
        ("machine", "nodes"),
        data,
        "machine.nodes",
        "machine nodes: ",
    )
    return nodes


def _parse_period(data: dict[str, Any], path: JsonPath) -> Period:
    period: Period = _validated(
        lambda: Period(
            tuple(data["days"]),
            data["start"],
            data["end"],
            data.get("capacity"),
            data.get("max_size"),
        ),
        path,
        data,
        format_json_path(path),
    )
    return period


def _parse_calendar(data: dict[str, Any]) -> Calendar:
    path: JsonPath = ("machine", "calendar")
    periods = [
        _parse_period(item, (*path, "periods", k))
        for k, item in enumerate(data["periods"])
    ]
    calendar: Calendar = _validated(
        lambda: Calendar(
            tuple(periods),
            frozenset(data.get("holidays", ())),
            data.get("monday_offset", 0),
            frozenset(data.get("sequential_queues", ())),
            frozenset(data.get("anytime_queues", ())),
            data.get("user_limit"),
        ),
        path,
        data,
        format_json_path(path),
    )
    return calendar


def _job_label(value: object, index: int) -> str:
    if isinstance(value, dict) and "id" in value:
        return f"jobs[{index}] (id {shown(value['id'])})"
    return f"jobs[{index}]"


_MODE_KEYS = frozenset(f.name for f in dataclasses.fields(Mode))
_JOB_LISTS = ("weight", "modes", "malleable")


def _plain(value: object) -> bool:
    """A job whose fields the core types alone can judge: integers or null
    (weight aside), and for a moldable job a list of modes of integers only
    and no run time or estimate of its own."""
    if type(value) is not dict:
        return False
    if not all(
        type(item) is int or item is None
        for key, item in value.items()
        if key not in _JOB_LISTS
    ):
        return False
    if "modes" not in value:
        return "malleable" not in value
    modes = value["modes"]
    return (
        type(modes) is list
        and "runtime" not in value
        and "estimate" not in value
        and type(value.get("malleable", False)) is bool
        and all(
            type(mode) is dict
            and mode.keys() <= _MODE_KEYS
            and all(type(item) is int for item in mode.values())
            for mode in modes
        )
    )


def _parse_job(value: Any, index: int) -> Job:
    """``jobs[index]``; the schema judges it when the core types refuse it.

    A plain job (:func:`_plain`) goes straight to :class:`Job` and
    :class:`Mode`, whose constructors enforce every range the schema states
    (the property tests check that a file the reader accepts is
    schema-valid); anything else, and any job they refuse, is validated by
    jsonschema, which names the field.
    """
    if _plain(value):
        try:
            return Job(**_job_fields(value, index))
        except (TypeError, ValueError, KeyError, _Problem):
            pass  # jsonschema names the field, or the message below does
    _check_job(value, index)
    label, owner = _job_label(value, index), f"{job_name(value['id'])}: "
    fields = _job_fields(value, index)
    job: Job = _validated(lambda: Job(**fields), ("jobs", index), value, label, owner)
    return job


def _job_fields(data: dict[str, Any], index: int) -> dict[str, Any]:
    """The :class:`Job` arguments of ``jobs[index]``: the object itself for
    a rigid job, its request and :class:`Mode` objects for a moldable one."""
    if "modes" not in data:
        return data
    return _moldable_fields(data, ("jobs", index), _job_label(data, index))


def _parse_mode(data: dict[str, Any], path: JsonPath) -> Mode:
    mode: Mode = _validated(
        lambda: Mode(data["processors"], data["runtime"], data.get("estimate")),
        path,
        data,
        format_json_path(path),
    )
    return mode


def _moldable_fields(
    data: dict[str, Any], path: JsonPath, label: str
) -> dict[str, Any]:
    """A job with ``modes`` (module docstring): the request is ``size``'s
    mode, or the one with the most processors."""
    modes = tuple(
        _parse_mode(item, (*path, "modes", k)) for k, item in enumerate(data["modes"])
    )
    by_count = {mode.processors: mode for mode in modes}
    size = data.get("size")
    if size is None:
        request = max(modes, key=lambda mode: mode.processors)
    elif size in by_count:
        request = by_count[size]
    else:
        raise _Problem(
            (*path, "size"),
            f"size {size} is not the processor count of one of its modes",
            label,
        )
    return {
        **data,
        "size": request.processors,
        "runtime": request.runtime,
        "estimate": request.estimate,
        "modes": modes,
    }


def _parse_jobs(values: list[Any], machine: Machine) -> tuple[Job, ...]:
    jobs: list[Job] = []
    first_index: dict[int, int] = {}
    for index, value in enumerate(values):
        job = _parse_job(value, index)
        largest = job.modes[-1].processors if job.modes else job.size
        if largest > machine.processors:
            key = "modes" if job.modes else "size"
            reason = (
                f"modes: a mode on {largest} processors exceeds"
                if job.modes
                else f"size {largest} exceeds"
            )
            raise _Problem(
                ("jobs", index, key),
                f"{reason} machine processors {machine.processors}",
                _job_label(value, index),
            )
        if job.id in first_index:
            raise _Problem(
                ("jobs", index, "id"),
                f"duplicate id {job.id} (first at jobs[{first_index[job.id]}])",
                _job_label(value, index),
            )
        first_index[job.id] = index
        jobs.append(job)
    return tuple(jobs)


def _parse_source(data: dict[str, Any]) -> Source:
    window = data.get("window")
    return Source(
        file=data.get("file"),
        sha256=data.get("sha256"),
        format=data.get("format"),
        window=None
        if window is None
        else Window(**{"shift": 0, "initial_state": "none", **window}),
    )


def _parse_instance(data: Any, default_source: Source) -> Instance:
    _check_head(data)
    machine = _parse_machine(data["machine"])
    jobs = _parse_jobs(data["jobs"], machine)
    source = _parse_source(data["source"]) if "source" in data else default_source
    instance: Instance = _validated(
        lambda: Instance(machine, jobs, data.get("name", ""), source),
        (),
        data,
        "top level",
    )
    return instance


def instance_from_dict(
    data: Mapping[str, Any], path: str | Path | None = None
) -> Instance:
    """Build and validate an instance from a parsed JSON object.

    Parameters
    ----------
    data
        The object, as :func:`instance_to_dict` returns it.
    path
        File name for error messages.

    Raises
    ------
    InputError
        ``"inst.json: jobs[3] (id 17): size 130 exceeds machine processors
        128"``: the file, the JSON path and what is wrong.
    """
    try:
        return _parse_instance(data, Source())
    except _Problem as problem:
        raise InputError(f"{problem.label}: {problem.reason}", path) from None


def _read_text(path: Path) -> tuple[str, bytes]:
    """The text of the file (gzip decompressed, BOM skipped) and its raw bytes."""
    raw, data = read_data(path)
    data = strip_bom(data)
    if not data.strip():
        raise InputError("empty file: expected a JSON instance", path)
    refuse_utf16(path, data, "a JSON instance")
    if b"\x00" in data:
        raise InputError("binary file: expected a JSON instance", path)
    return decode_utf8(path, data, "a JSON instance"), raw


def parse_json_document(text: str, path: Path) -> Any:
    """The JSON value of ``text``; any syntax error, excessive nesting, huge
    number or duplicated key is one located :class:`InputError`."""
    duplicates = _DuplicateKeys()
    data = _parse_json(text, path, duplicates)
    if duplicates.found is not None:
        where, line = _duplicate_location(text)
        raise InputError(
            f"{format_json_path(where)}: duplicate key {shown(duplicates.found)}",
            path,
            line,
        )
    return data


def _parse_json(text: str, path: Path, hook: _DuplicateKeys) -> Any:
    """``json.loads`` with every failure as one located :class:`InputError`."""
    try:
        data = json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError as error:
        raise InputError(
            f"invalid JSON: {error.msg} (column {error.colno})", path, error.lineno
        ) from None
    except RecursionError:
        # Hundreds of levels: the C scanner gives up at the recursion limit.
        # Shallower nesting parses, and validation (which never recurses into
        # values) refuses it where a scalar is expected.
        raise InputError(
            f"invalid JSON: arrays and objects nested too deeply (more than "
            f"{MAX_DEPTH} levels)",
            path,
            _deep_line(text),
        ) from None
    except ValueError:
        # int() refuses more than 4300 digits (CVE-2020-10735); the message
        # names no position, so point at the first long run of digits.
        match = _LONG_NUMBER.search(text)
        line = line_of(text, match.start()) if match else None
        raise InputError(
            "invalid JSON: a number has more than 4300 digits", path, line
        ) from None
    _refuse_lone_surrogates(text, data, path)
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A ``\\uD800``-``\\uDFFF`` escape: half of a UTF-16 pair, or a lone one."""


def _refuse_lone_surrogates(text: str, data: Any, path: Path) -> None:
    """Refuse a string holding a lone UTF-16 surrogate (``"\\ud800"``).

    JSON escapes pairs as two ``\\u`` escapes, which ``json.loads`` joins;
    a lone one stays a code point that no UTF-8 output (terminal, CSV,
    SVG, HTML) can encode. Only files with such an escape are walked.
    """
    first = _SURROGATE_ESCAPE.search(text)
    if first is None:
        return
    pending = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str) and not _encodable(value):
            raise InputError(
                f"invalid JSON: a lone UTF-16 surrogate escape in a string "
                f"({shown(value)}): not a character",
                path,
                line_of(text, _lone_escape(text, first.start())),
            )


def _lone_escape(text: str, start: int) -> int:
    """Offset of the first surrogate escape from ``start`` not in a pair."""
    paired_low = -1
    for match in _SURROGATE_ESCAPE.finditer(text, start):
        if match.start() == paired_low:
            continue
        code = int(match.group()[2:], 16)
        after = _SURROGATE_ESCAPE.match(text, match.end())
        if code < 0xDC00 and after and int(after.group()[2:], 16) >= 0xDC00:
            paired_low = after.start()
            continue
        return match.start()
    return start


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_LONG_NUMBER = re.compile(r"[0-9]{4300}")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deep_line(text: str) -> int | None:
    """Line of the first bracket deeper than :data:`MAX_DEPTH` (strings skipped)."""
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line_of(text, match.start())
        elif token in "]}":
            depth -= 1
    return None


class _DuplicateKeys:
    """``object_pairs_hook`` that keeps the first duplicated key it meets."""

    def __init__(self) -> None:
        self.found: str | None = None

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)  # the last value wins, as in plain json.loads
        if len(out) != len(pairs) and self.found is None:
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.found = key
                    break
                seen.add(key)
        return out


def read_native(path: str | Path) -> Trace:
    """Read a native JSON instance file.

    Returns
    -------
    Trace
        The instance; ``records`` is the number of jobs, ``header`` holds
        ``format`` and ``version``.

    Raises
    ------
    InputError
        One line ``file:line: where: reason``, e.g. ``inst.json:12: jobs[3]
        (id 17): size 130 exceeds machine processors 128``.
    """
    path = Path(path)
    text, raw = _read_text(path)
    data = parse_json_document(text, path)
    default_source = Source(
        file=str(path), sha256=hashlib.sha256(raw).hexdigest(), format="json"
    )
    try:
        instance = _parse_instance(data, default_source)
    except _Problem as problem:
        line = json_line(text, problem.path)
        raise InputError(f"{problem.label}: {problem.reason}", path, line) from None
    header = {"format": FORMAT_NAME, "version": str(FORMAT_VERSION)}
    return Trace(instance, header=header, records=len(instance.jobs))


def _duplicate_location(text: str) -> tuple[JsonPath, int | None]:
    """JSON path and line of the first repeated key of a parsed ``text``."""
    try:
        found = JsonLocator(text).duplicate
    except (ValueError, IndexError, RecursionError):
        found = None
    if found is None:
        return (), None
    return found[0], line_of(text, found[1])
