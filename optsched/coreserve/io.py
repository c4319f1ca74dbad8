"""Reading a co-reservation problem from JSON and writing its optimum.

The file (``optsched coreserve optimum FILE``)::

    {"clusters": [{"name": "a", "processors": 64,
                   "busy": [[start, end, processors], ...],
                   "prices": [[weekday, hour_from, hour_to, price], ...]}, ...],
     "request": {"submit": 0, "earliest_start": 0, "deadline": 7200,
                 "duration": 3600, "parts": [16, 8]}}

Times are integer seconds from a Monday 00:00; weekdays 0 (Monday) to 6
(Sunday); hours 0-24 with ``hour_from <= hour < hour_to``; a busy entry
holds its processors over ``[start, end)``. ``busy`` and ``prices`` may be
omitted (no commitments; a free cluster). A non-empty price table covers
every hour of the week exactly once. Every problem is reported as one
:class:`~optsched.errors.InputError` ``file:line: where: reason``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optsched.coreserve.request import Choice, ClusterState, Request
from optsched.coreserve.tariff import PriceEntry, Tariff, as_entries
from optsched.errors import InputError, shown
from optsched.io.atomic import atomic_write
from optsched.io.native import (
    JsonPath,
    _Object,
    _Problem,
    json_line,
    parse_json_document,
)
from optsched.io.text import decode_utf8, read_bytes

TOP_KEYS = ("clusters", "request")
CLUSTER_KEYS = ("name", "processors", "busy", "prices")
REQUEST_KEYS = ("submit", "earliest_start", "deadline", "duration", "parts", "id")


def read_coreserve(path: str | Path) -> tuple[Request, list[ClusterState]]:
    """The request and clusters of a JSON file (format in the module docstring).

    Raises
    ------
    InputError
        One line ``file:line: where: reason``.
    """
    path = Path(path)
    text = decode_utf8(path, read_bytes(path), "a JSON co-reservation problem")
    if not text.strip():
        raise InputError("empty file: expected a JSON co-reservation problem", path)
    data = parse_json_document(text, path)
    try:
        return parse_coreserve(data)
    except _Problem as problem:
        line = json_line(text, problem.path)
        raise InputError(f"{problem.label}: {problem.reason}", path, line) from None


def parse_coreserve(data: object) -> tuple[Request, list[ClusterState]]:
    """:func:`read_coreserve` on parsed JSON (raises ``_Problem``)."""
    top = _Object(data, (), TOP_KEYS)
    values = top.array("clusters")
    if not values:
        raise _Problem(("clusters",), "expected at least one cluster")
    clusters: list[ClusterState] = []
    seen: dict[str, int] = {}
    for index, value in enumerate(values):
        cluster = _cluster(value, ("clusters", index))
        if cluster.name in seen:
            raise _Problem(
                ("clusters", index, "name"),
                f"name {shown(cluster.name)} repeats clusters[{seen[cluster.name]}]",
            )
        seen[cluster.name] = index
        clusters.append(cluster)
    return _request(top.require("request")), clusters


def _rows(obj: _Object, key: str, width: int, what: str) -> list[list[Any]]:
    """The list ``key`` of rows of ``width`` numbers (integers but the last
    column of prices)."""
    rows = obj.array(key, required=False)
    for j, row in enumerate(rows):
        where = (*obj.path, key, j)
        if not isinstance(row, list) or len(row) != width:
            raise _Problem(where, f"expected {what}")
        for v, value in enumerate(row):
            last_number = width == 4 and v == 3
            ok = (
                isinstance(value, int | float)
                if last_number
                else isinstance(value, int)
            )
            if isinstance(value, bool) or not ok:
                raise _Problem(
                    where, f"expected {what}, got {shown(value)} at position {v}"
                )
    return rows


def _cluster(value: object, path: JsonPath) -> ClusterState:
    obj = _Object(value, path, CLUSTER_KEYS)
    name = obj.string("name")
    if name is None:
        obj.require("name")
    processors = obj.integer("processors")
    busy = _rows(obj, "busy", 3, "[start, end, processors] integers")
    rows = _rows(obj, "prices", 4, "[weekday, hour_from, hour_to, price]")
    entries: list[PriceEntry] = []
    for j, row in enumerate(rows):
        try:
            entries.extend(as_entries([row]))
        except ValueError as error:
            raise _Problem((*path, "prices", j), str(error), obj.label) from None
    try:
        tariff = Tariff(tuple(entries))
    except ValueError as error:
        raise _Problem((*path, "prices"), str(error)) from None
    try:
        return ClusterState(
            name or "", processors or 0, tuple(map(tuple, busy)), tariff
        )
    except ValueError as error:
        reason = str(error)
        # The line of the key the reason starts with ("processors -8 must
        # be ...", "busy ..."), else of the cluster.
        key = reason.split(" ", 1)[0].split("[", 1)[0].rstrip(":")
        where = (*path, key) if key in ("processors", "busy") else path
        raise _Problem(where, reason, obj.label) from None


def _request(value: object) -> Request:
    obj = _Object(value, ("request",), REQUEST_KEYS)
    fields: dict[str, int] = {}
    for key in ("submit", "earliest_start", "deadline", "duration"):
        value = obj.integer(key)
        assert value is not None  # required: integer() raised otherwise
        fields[key] = value
    if fields["submit"] > fields["earliest_start"]:
        # A request asks for a start no earlier than its own submission.
        raise _Problem(
            ("request", "earliest_start"),
            f"{fields['earliest_start']} is before submit {fields['submit']}",
        )
    ident = obj.integer("id", required=False)
    parts = obj.array("parts")
    return obj.validated(lambda: Request(**fields, parts=tuple(parts), id=ident or 0))


def optimum_record(
    choice: Choice | None,
    *,
    reason: str | None,
    objective: str,
    value: Any,
    cost_rule: str,
    method: str,
    status: str,
    pareto: Sequence[Choice] | None = None,
) -> dict[str, Any]:
    """The JSON output of ``coreserve optimum``: ``start``, ``cost``,
    ``clusters`` (null and a ``reason`` when the request cannot be placed),
    and with ``pareto`` the list of ``{start, cost, clusters}``."""
    record: dict[str, Any] = {
        "objective": objective,
        "cost_rule": cost_rule,
        "method": method,
        "status": status,
        "start": None if choice is None else choice.start,
        "cost": None if choice is None else float(choice.cost),
        "cost_exact": None if choice is None else str(choice.cost),
        "clusters": None if choice is None else list(choice.clusters),
        "value": None if value is None else float(value),
    }
    if choice is None:
        record["reason"] = reason
    if pareto is not None:
        record["pareto"] = [p.as_dict() for p in pareto]
    return record


def write_record(record: dict[str, Any], output: str | None) -> None:
    """Write ``record`` as JSON to ``output`` atomically (``None`` or ``-``:
    standard output)."""
    text = json.dumps(record, indent=2) + "\n"
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    with atomic_write(output, "w", encoding="utf-8") as handle:
        handle.write(text)
