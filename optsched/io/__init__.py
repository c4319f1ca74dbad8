"""Readers and writers behind one entry point.

:func:`read_trace` / :func:`read` recognise the format from the content
(``swf``, ``json`` native instance, ``batsim`` JSON workload, ``strip``
packing benchmark); ``format`` forces one. Schedules have their own pair,
:func:`read_schedule` and :func:`write_schedule` (from :mod:`optsched.io.schedules`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from optsched.errors import InputError
from optsched.instance import Instance
from optsched.io.archive import resolve_trace_path
from optsched.io.batsim import read_batsim_workload, write_batsim_workload
from optsched.io.limits import check_horizon
from optsched.io.schedules import read_schedule, write_schedule
from optsched.io.text import head, refuse_utf16, strip_bom
from optsched.trace import Trace

__all__ = [
    "INSTANCE_FORMATS",
    "detect_format",
    "read",
    "read_batsim_workload",
    "read_schedule",
    "read_trace",
    "write_batsim_workload",
    "write_schedule",
]

INSTANCE_FORMATS = ("swf", "json", "batsim", "strip")
_TEXT_FORMATS = "SWF, JSON or strip-packing text"


def detect_format(path: str | Path) -> str:
    """Recognise an instance file's format from its first bytes.

    ``{`` first -> ``json``; a ``;`` comment or a line of 18 fields -> ``swf``;
    lines of one to three numbers -> ``strip``. The content is looked at
    after gzip decompression and without a UTF-8 byte order mark.

    Raises
    ------
    InputError
        Naming the file: unreadable, corrupt gzip, UTF-16, binary, empty or
        unrecognised content. The message never quotes the file's bytes.
    """
    path = Path(path)
    data = strip_bom(head(path))
    refuse_utf16(path, data, _TEXT_FORMATS)
    if b"\x00" in data:
        raise InputError(f"binary file: not {_TEXT_FORMATS}", path)
    # Only the shape of the first lines matters here; bytes that are not
    # UTF-8 (a Latin-1 comment, a multi-byte character cut at the end of the
    # head) are left for the reader, which accepts or locates them.
    text = data.decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith(("{", "[")):
            return "json"
        if line.startswith(";") or len(line.split()) == 18:
            return "swf"
        if 1 <= len(line.split()) <= 3:
            return "strip"
        raise InputError(
            "unrecognised format: expected SWF (18 fields per line), a JSON "
            "instance or a strip-packing file (use --format to force one)",
            path,
            number,
        )
    raise InputError("empty file: no jobs", path)


def read_trace(
    path: str | Path,
    format: str | None = None,
    *,
    processors: int | None = None,
    allocation: str | None = None,
) -> Trace:
    """Read a whole instance file.

    Parameters
    ----------
    path
        SWF trace (optionally ``.gz``), native JSON instance, or strip-packing
        file; ``pwa:NAME`` for a known archive trace, fetched and cached on
        first use (:mod:`optsched.io.archive`).
    format
        ``"swf"``, ``"json"`` or ``"strip"``; ``None`` to recognise it.
    processors
        Machine size override (SWF: used when the header has neither
        ``MaxProcs`` nor ``MaxNodes``, and wins over them when given).
    allocation
        Allocation rule override (``any`` or ``contiguous``), applied to the
        whole file with :meth:`~optsched.instance.Machine.with_allocation`
        (``any`` drops the offsets of the file's busy blocks), so that windows
        cut from it afterwards (and the busy blocks of their initial state)
        follow it.
    """
    trace = _read_trace(path, format, processors=processors)
    check_horizon(trace.instance, path)
    if allocation is not None and allocation != trace.instance.machine.allocation:
        instance = trace.instance
        machine = instance.machine.with_allocation(allocation)
        # replace() keeps every report field of the trace (folds, statuses).
        trace = dataclasses.replace(trace, instance=instance.replace(machine=machine))
    return trace


def _read_trace(
    path: str | Path, format: str | None, *, processors: int | None
) -> Trace:
    path = resolve_trace_path(path)  # a pwa: name is fetched first
    if not path.exists():
        raise InputError("no such file", path)
    fmt = format or detect_format(path)
    if fmt == "json" and format is None and _is_batsim_workload(path):
        fmt = "batsim"
    if fmt == "swf":
        from optsched.io.swf import read_swf

        return read_swf(path, processors=processors)
    if fmt == "json":
        from optsched.io.native import read_native

        trace = read_native(path)
    elif fmt == "batsim":
        from optsched.io.batsim import read_batsim_workload

        trace = read_batsim_workload(path)
    elif fmt == "strip":
        from optsched.io.strip import read_strip

        trace = read_strip(path)
    else:
        raise InputError(
            f"unknown format {fmt!r}; expected one of {', '.join(INSTANCE_FORMATS)}",
            path,
        )
    if processors is not None and processors != trace.instance.processors:
        instance = trace.instance
        machine = instance.machine.replace(processors=processors)
        # replace() keeps every report field of the trace (folds, statuses).
        trace = dataclasses.replace(trace, instance=instance.replace(machine=machine))
    return trace


_NATIVE_MARK = b'"optsched-instance"'


def _is_batsim_workload(path: Path) -> bool:
    """A JSON file holding a Batsim workload rather than a native instance.

    A JSON object with ``nb_res`` and ``jobs`` and no ``format``
    ``optsched-instance`` (:func:`optsched.io.batsim.is_batsim_workload`).
    Native files name their format on their second line: only files without
    that mark near their start are parsed here (Batsim writers often sort
    the keys, putting ``nb_res`` after a long ``jobs`` list). A file that
    does not parse is left to the native reader, which locates the error.
    """
    if _NATIVE_MARK in head(path, 1 << 16):
        return False
    from optsched.io.batsim import is_batsim_workload
    from optsched.io.native import _DuplicateKeys, _parse_json, _read_text

    try:
        data = _parse_json(_read_text(path)[0], path, _DuplicateKeys())
    except InputError:
        return False
    return is_batsim_workload(data)


def read(
    path: str | Path, format: str | None = None, *, processors: int | None = None
) -> Instance:
    """Read an instance file whole (see :func:`read_trace`)."""
    return read_trace(path, format, processors=processors).instance
