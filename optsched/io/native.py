"""Native instance files: one JSON object per instance.

The format is the :class:`~optsched.instance.Instance` written out field by
field, so an instance read back from a file it was written to is equal to the
original (``read_native(write_native(i)) == i``). The JSON Schema (draft
2020-12) is shipped as ``optsched/schemas/instance.schema.json``
(:func:`schema_path`); the reader validates by hand and names the file, the
line and the JSON path of every problem.

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

from optsched.calendar import Calendar, Period
from optsched.errors import InputError, shown
from optsched.instance import (
    ALLOCATIONS,
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
from optsched.io.text import decode_utf8, read_data, refuse_utf16, strip_bom
from optsched.nodes import DEFAULT_BASE, Nodes
from optsched.trace import Trace

FORMAT_NAME = "optsched-instance"
FORMAT_VERSION = 1

JOB_KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Job))
JOB_REQUIRED = ("id", "release", "size", "runtime")
MOLDABLE_REQUIRED = ("id", "release", "modes")
MODE_KEYS = ("processors", "runtime", "estimate")
BLOCK_KEYS = ("start", "end", "size", "offset", "label")
MACHINE_KEYS = (
    "processors",
    "allocation",
    "unavailable",
    "outages",
    "switch_cost",
    "switch_cost_per_processor",
    "speeds",
    "nodes",
    "calendar",
)
CALENDAR_KEYS = (
    "periods",
    "holidays",
    "monday_offset",
    "sequential_queues",
    "anytime_queues",
    "user_limit",
)
PERIOD_KEYS = ("days", "start", "end", "capacity", "max_size")
NODES_KEYS = ("count", "cpus", "tight", "level", "base", "cost")
SWITCH_KEYS = ("switch_cost", "switch_cost_per_processor")
WINDOW_KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Window))
SOURCE_KEYS = ("file", "sha256", "format", "window")
TOP_KEYS = ("format", "version", "name", "machine", "jobs", "source")
MAX_DEPTH = 64
"""Nesting depth named in the message on JSON too deep to parse (the format
itself needs 4 levels; the parser gives up near the recursion limit)."""

JsonPath = tuple[str | int, ...]


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


def _parse_period(item: object, k: int) -> Period:
    entry = _Object(item, ("machine", "calendar", "periods", k), PERIOD_KEYS)
    days = entry.array("days")
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in days):
        raise _Problem(
            (*entry.path, "days"), "days: expected day numbers 0-7", entry.label
        )
    start, end = entry.integer("start"), entry.integer("end")
    capacity = entry.integer("capacity", required=False, nullable=True)
    largest = entry.integer("max_size", required=False, nullable=True)
    period: Period = entry.validated(
        lambda: Period(tuple(days), start, end, capacity, largest)  # type: ignore[arg-type]
    )
    return period


def _parse_calendar(value: object) -> Calendar:
    obj = _Object(value, ("machine", "calendar"), CALENDAR_KEYS)
    periods = [_parse_period(item, k) for k, item in enumerate(obj.array("periods"))]
    lists = {}
    for key in ("holidays", "sequential_queues", "anytime_queues"):
        items = obj.array(key, required=False)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            raise _Problem((*obj.path, key), f"{key}: expected integers", obj.label)
        lists[key] = frozenset(items)
    offset = obj.integer("monday_offset", required=False) or 0
    limit = obj.integer("user_limit", required=False, nullable=True)
    calendar: Calendar = obj.validated(
        lambda: Calendar(
            tuple(periods),
            lists["holidays"],
            offset,
            lists["sequential_queues"],
            lists["anytime_queues"],
            limit,
        )
    )
    return calendar


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


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return shown(value)
    if isinstance(value, str):
        return f"the string {shown(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


@functools.cache
def _key_set(keys: tuple[str, ...]) -> frozenset[str]:
    return frozenset(keys)


class _Object:
    """Typed access to one JSON object, raising :class:`_Problem` on misuse."""

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
        """Call a validating constructor; map its ``ValueError`` to a key.

        Core types say ``"job 17: size 0 must be at least 1"``; the
        ``owner`` prefix (``"job 17: "``) is replaced by this object's label
        and the path points at the key the reason starts with, if any.
        """
        try:
            return build()
        except ValueError as error:
            reason = str(error).removeprefix(owner)
            first_word = reason.split(" ", 1)[0]
            path = (*self.path, first_word) if first_word in self.data else self.path
            raise _Problem(path, reason, self.label) from None


def _parse_block(
    value: object, path: JsonPath, processors: int, allocation: str
) -> BusyBlock:
    obj = _Object(value, path, BLOCK_KEYS)
    start, end, size = (obj.integer(k) for k in ("start", "end", "size"))
    offset = obj.integer("offset", required=False, nullable=True)
    label = obj.string("label") or ""
    owner = f"{block_name(label, start, end)}: "
    block: BusyBlock = obj.validated(
        lambda: BusyBlock(start, end, size, offset, label),  # type: ignore[arg-type]
        owner,
    )
    # A machine holding only this block: checks it fits, with the block's path.
    obj.validated(lambda: Machine(processors, allocation, (block,)), owner)
    return block


def _parse_machine(value: object) -> Machine:
    obj = _Object(value, ("machine",), MACHINE_KEYS)
    processors = obj.integer("processors")
    allocation = obj.string("allocation")
    if allocation is None:
        allocation = "any"
    elif allocation not in ALLOCATIONS:
        raise obj._problem(
            "allocation",
            f"allocation: expected one of {', '.join(ALLOCATIONS)}, "
            f"got {shown(allocation)}",
        )
    costs = {key: obj.integer(key, required=False) or 0 for key in SWITCH_KEYS}
    machine: Machine = obj.validated(
        lambda: Machine(processors, allocation, **costs),  # type: ignore[arg-type]
        "machine: ",
    )
    if obj.has("speeds") or obj.has("nodes"):
        speeds = _parse_speeds(obj) if obj.has("speeds") else None
        nodes = _parse_nodes(obj.data["nodes"]) if obj.has("nodes") else None
        machine = obj.validated(
            lambda: machine.replace(speeds=speeds, nodes=nodes), "machine: "
        )
    if obj.has("calendar"):
        calendar = _parse_calendar(obj.data["calendar"])
        machine = obj.validated(lambda: machine.replace(calendar=calendar), "machine: ")
    blocks = tuple(
        _parse_block(
            item, ("machine", "unavailable", i), machine.processors, allocation
        )
        for i, item in enumerate(obj.array("unavailable", required=False))
    )
    outages = tuple(
        _parse_block(item, ("machine", "outages", i), machine.processors, allocation)
        for i, item in enumerate(obj.array("outages", required=False))
    )
    # What is left are conflicts between blocks (capacity, shared processors);
    # a message naming two blocks keeps both names.
    return obj.validated(
        lambda: machine.replace(unavailable=blocks, outages=outages), "machine: "
    )


def _parse_speeds(obj: _Object) -> tuple[float, ...]:
    values = obj.array("speeds")
    for k, value in enumerate(values):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise _Problem(
                ("machine", "speeds", k),
                f"speed of processor {k}: expected a finite number > 0, "
                f"got {shown(value)}",
                "machine",
            )
    return tuple(values)


def _parse_nodes(value: object) -> Nodes:
    obj = _Object(value, ("machine", "nodes"), NODES_KEYS)
    count, cpus = obj.integer("count"), obj.integer("cpus")
    tight = obj.integer("tight", required=False, nullable=True)
    level = obj.integer("level", required=False) or 0
    base = obj.number("base")
    cost = obj.string("cost") or "ratio"
    nodes: Nodes = obj.validated(
        lambda: Nodes(
            count,  # type: ignore[arg-type]
            cpus,  # type: ignore[arg-type]
            tight,
            level,
            DEFAULT_BASE if base is None else base,
            cost,
        ),
        "machine nodes: ",
    )
    return nodes


def _job_label(value: object, index: int) -> str:
    if isinstance(value, dict) and "id" in value:
        return f"jobs[{index}] (id {shown(value['id'])})"
    return f"jobs[{index}]"


def _parse_job(value: object, index: int, machine: Machine) -> Job:
    path: JsonPath = ("jobs", index)
    obj = _Object(value, path, JOB_KEYS, _job_label(value, index))
    if obj.has("modes") or obj.has("malleable"):
        return _parse_moldable_job(obj, machine)
    for name in JOB_REQUIRED:
        obj.require(name)
    # Fast path over the keys present (tens of thousands of jobs per file);
    # the typed accessors produce the messages when something is off.
    fields: dict[str, Any] = {}
    for name, item in obj.data.items():
        if name == "weight":
            fields[name] = obj.number(name)
        elif type(item) is int:
            fields[name] = item
        elif item is not None or name in JOB_REQUIRED:
            obj.integer(name)  # raises: not an integer
    job: Job = obj.validated(lambda: Job(**fields), f"{job_name(fields.get('id'))}: ")
    if job.size > machine.processors:
        raise obj._problem(
            "size",
            f"size {job.size} exceeds machine processors {machine.processors}",
        )
    return job


def _parse_moldable_job(obj: _Object, machine: Machine) -> Job:
    """A job with ``modes`` (module docstring): the request is ``size``'s
    mode, or the one with the most processors."""
    for name in MOLDABLE_REQUIRED:
        obj.require(name)
    for name in ("runtime", "estimate"):
        if obj.has(name):
            raise obj._problem(
                name, f"{name}: a job with modes gives it in each mode, not here"
            )
    modes = tuple(
        _parse_mode(item, (*obj.path, "modes", k))
        for k, item in enumerate(obj.array("modes"))
    )
    if not modes:
        raise obj._problem("modes", "modes: a moldable job needs at least one mode")
    malleable = obj.data.get("malleable", False)
    if not isinstance(malleable, bool):
        raise obj._problem(
            "malleable", f"malleable: expected true or false, got {_kind(malleable)}"
        )
    size = obj.integer("size", required=False)
    fields: dict[str, Any] = {"malleable": malleable}
    for name in obj.data:
        if name == "weight":
            fields[name] = obj.number(name)
        elif name not in ("modes", "malleable", "size"):
            fields[name] = obj.integer(name, nullable=name not in JOB_REQUIRED)
    by_count = {mode.processors: mode for mode in modes}
    if size is None:
        request = max(modes, key=lambda mode: mode.processors)
    elif size in by_count:
        request = by_count[size]
    else:
        raise obj._problem(
            "size", f"size {size} is not the processor count of one of its modes"
        )
    fields.update(
        size=request.processors,
        runtime=request.runtime,
        estimate=request.estimate,
        modes=modes,
    )
    job: Job = obj.validated(lambda: Job(**fields), f"{job_name(fields.get('id'))}: ")
    if job.modes[-1].processors > machine.processors:
        raise obj._problem(
            "modes",
            f"modes: a mode on {job.modes[-1].processors} processors exceeds "
            f"machine processors {machine.processors}",
        )
    return job


def _parse_mode(value: object, path: JsonPath) -> Mode:
    obj = _Object(value, path, MODE_KEYS)
    processors, runtime = obj.integer("processors"), obj.integer("runtime")
    estimate = obj.integer("estimate", required=False)
    assert processors is not None and runtime is not None
    mode: Mode = obj.validated(lambda: Mode(processors, runtime, estimate), "")
    return mode


def _parse_jobs(values: list[Any], machine: Machine) -> tuple[Job, ...]:
    jobs: list[Job] = []
    first_index: dict[int, int] = {}
    for index, value in enumerate(values):
        job = _parse_job(value, index, machine)
        if job.id in first_index:
            raise _Problem(
                ("jobs", index, "id"),
                f"duplicate id {job.id} (first at jobs[{first_index[job.id]}])",
                _job_label(value, index),
            )
        first_index[job.id] = index
        jobs.append(job)
    return tuple(jobs)


def _known_state(state: str) -> bool:
    kind, _, policy = state.partition(":")
    return state in ("none", "recorded") or (kind == "simulated" and bool(policy))


def _parse_window(value: object) -> Window | None:
    if value is None:
        return None
    obj = _Object(value, ("source", "window"), WINDOW_KEYS)
    numbers = {
        key: obj.integer(key, required=False, nullable=True)
        for key in ("first_job", "jobs", "start", "end")
    }
    shift = obj.integer("shift", required=False)
    state = obj.string("initial_state")
    if state is not None and not _known_state(state):
        raise obj._problem(
            "initial_state",
            "initial_state: expected 'none', 'recorded' or 'simulated:POLICY', "
            f"got {shown(state)}",
        )
    return Window(
        **numbers,
        shift=0 if shift is None else shift,
        initial_state=state or "none",
    )


def _parse_source(value: object) -> Source:
    obj = _Object(value, ("source",), SOURCE_KEYS)
    return Source(
        file=obj.string("file", nullable=True),
        sha256=obj.string("sha256", nullable=True),
        format=obj.string("format", nullable=True),
        window=_parse_window(obj.data.get("window")),
    )


def _parse_instance(data: object, default_source: Source) -> Instance:
    top = _Object(data, (), TOP_KEYS)
    fmt = top.string("format")
    if fmt is not None and fmt != FORMAT_NAME:
        raise top._problem(
            "format", f"format: expected {FORMAT_NAME!r}, got {shown(fmt)}"
        )
    version = top.integer("version")
    if version != FORMAT_VERSION:
        raise top._problem(
            "version",
            f"version: this optsched reads version {FORMAT_VERSION}, "
            f"got {shown(version)}",
        )
    machine = _parse_machine(top.require("machine"))
    jobs = _parse_jobs(top.array("jobs"), machine)
    source = _parse_source(top.data["source"]) if top.has("source") else default_source
    name = top.string("name") or ""
    return top.validated(lambda: Instance(machine, jobs, name, source))


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
        line = _line_of(text, match.start()) if match else None
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
                _line_of(text, _lone_escape(text, first.start())),
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
                return _line_of(text, match.start())
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


# --------------------------------------------------------------------------
# Line numbers for JSON paths
# --------------------------------------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _duplicate_location(text: str) -> tuple[JsonPath, int | None]:
    """JSON path and line of the first repeated key of a parsed ``text``."""
    try:
        found = _JsonLocator(text).duplicate
    except (ValueError, IndexError, RecursionError):
        found = None
    if found is None:
        return (), None
    return found[0], _line_of(text, found[1])


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def json_lines(text: str) -> Callable[[JsonPath], int | None]:
    """Walk a valid JSON ``text`` once; return ``path -> line`` (see
    :func:`json_line`). For several look-ups in the same text."""
    try:
        return _JsonLocator(text).line
    except (ValueError, IndexError, RecursionError):
        return lambda path: None


def json_line(text: str, path: JsonPath) -> int | None:
    """1-based line of the value at ``path`` in a valid JSON ``text``.

    Falls back to the nearest enclosing value that exists; ``None`` only if
    the text cannot be walked.
    """
    try:
        return _JsonLocator(text).line(path)
    except (ValueError, IndexError, RecursionError):
        return None


class _JsonLocator:
    """Start offset of every value of a (valid) JSON text, by JSON path.

    ``json`` reports positions only for syntax errors, so on a validation
    error the text is walked once more: containers by hand, scalars with
    :meth:`json.JSONDecoder.raw_decode`. Only used on the error path.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets: dict[JsonPath, int] = {}
        self.duplicate: tuple[JsonPath, int] | None = None
        self._decoder = json.JSONDecoder()
        self._value(0, ())

    def line(self, path: JsonPath) -> int | None:
        """Line of the value at ``path``, or of its nearest located ancestor."""
        for depth in range(len(path), -1, -1):
            offset = self.offsets.get(path[:depth])
            if offset is not None:
                return _line_of(self.text, offset)
        return None

    def _skip(self, index: int) -> int:
        match = _WHITESPACE.match(self.text, index)
        assert match is not None
        return match.end()

    def _value(self, index: int, path: JsonPath) -> int:
        index = self._skip(index)
        self.offsets[path] = index
        char = self.text[index]
        if char == "{":
            return self._object(index + 1, path)
        if char == "[":
            return self._array(index + 1, path)
        _, end = self._decoder.raw_decode(self.text, index)
        return end

    def _object(self, index: int, path: JsonPath) -> int:
        seen: set[str] = set()
        index = self._skip(index)
        if self.text[index] == "}":
            return index + 1
        while True:
            index = self._skip(index)
            key_offset = index
            key, index = json.decoder.scanstring(self.text, index + 1)  # type: ignore[attr-defined]
            if key in seen and self.duplicate is None:
                self.duplicate = ((*path, key), key_offset)
            seen.add(key)
            index = self._skip(index) + 1  # the colon
            index = self._skip(self._value(index, (*path, key)))
            if self.text[index] == "}":
                return index + 1
            index += 1  # the comma

    def _array(self, index: int, path: JsonPath) -> int:
        index = self._skip(index)
        if self.text[index] == "]":
            return index + 1
        position = 0
        while True:
            index = self._skip(self._value(index, (*path, position)))
            position += 1
            if self.text[index] == "]":
                return index + 1
            index += 1  # the comma
