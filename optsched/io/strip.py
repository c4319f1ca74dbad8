"""Strip-packing benchmark files, read as scheduling instances.

In two-dimensional strip packing, rectangles of width ``w_i`` and height
``h_i`` are packed without overlap or rotation into a strip of width ``W``
so as to minimise the height used. Read as a schedule, the strip's width is
the machine (``W`` processors, consecutive indices), an item's width is a
job's size and its height the job's runtime; every job is released at 0 and
the packing height is the makespan. With ``contiguous`` allocation (the
default) a schedule is exactly a packing; with ``any`` allocation the
problem becomes the relaxation ``P|size_j|C_max`` (Baker, Coffman & Rivest
1980, "Orthogonal packings in two dimensions", SIAM J. Comput. 9(4)).

Two text layouts are common in the OR literature:

(a) ``W`` on the first line, the number of items ``n`` on the second, then
    one ``w h`` pair per item;
(b) ``n`` on the first line, ``W H`` on the second (``H`` is the height of a
    known packing or an upper bound, as in the Hopper and Turton 2001
    instances; it is kept in the trace header), then one ``w h`` or
    ``id w h`` line per item.

The layout is recognised from the shape of the first two non-blank lines
(one number then one number: (a); one number then two: (b)). Job ids are
``1..n`` in file order unless the items carry ids. Blank lines are ignored.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from optsched.errors import InputError, shown
from optsched.instance import MAX_INTEGER, Instance, Job, Machine, Source
from optsched.io.text import decode_utf8, read_data, refuse_utf16, strip_bom
from optsched.trace import Trace

_DIGITS = re.compile(r"[0-9]+")
# 2**53 has 16 digits; longer runs are refused before int() (which refuses
# more than 4300 digits with a ValueError naming no file).
_MAX_DIGITS = 20


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    fields: list[str]


def _load_lines(path: Path) -> tuple[list[_Line], bytes]:
    raw, text_bytes = read_data(path)
    text_bytes = strip_bom(text_bytes)
    refuse_utf16(path, text_bytes, "a strip-packing text file")
    if b"\x00" in text_bytes:
        raise InputError("binary file: expected a strip-packing text file", path)
    text = decode_utf8(path, text_bytes, "numbers")
    lines = [
        _Line(number, line.split())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]
    if not lines:
        raise InputError("empty file: expected a strip-packing instance", path)
    return lines, raw


def _integer(text: str, what: str, path: Path, line: int, *, minimum: int = 0) -> int:
    """A plain decimal integer in ``[minimum, MAX_INTEGER]``.

    Plain digits only: ``int()`` would also take ``"1_000"``, ``"+5"`` and
    non-ASCII digits.
    """
    digits = text.lstrip("0") if _DIGITS.fullmatch(text) else None
    if digits is None or (len(digits) <= _MAX_DIGITS and int(text) < minimum):
        bound = "a positive" if minimum == 1 else "a non-negative"
        raise InputError(
            f"{what}: expected {bound} integer, got {shown(text)}", path, line
        )
    if len(digits) > _MAX_DIGITS or int(text) > MAX_INTEGER:
        raise InputError(
            f"{what}: {shown(text)} is above the limit 2**53 = {MAX_INTEGER}",
            path,
            line,
        )
    return int(text)


def _header(lines: list[_Line], path: Path) -> tuple[str, int, int, int | None]:
    """Return ``(layout, width, n, height)`` from the first two lines."""
    first = lines[0]
    if len(first.fields) != 1:
        raise InputError(
            f"expected one number on the first line (W or n), got {len(first.fields)} "
            "fields",
            path,
            first.number,
        )
    if len(lines) < 2:
        raise InputError(
            "expected a second header line (n, or W H)", path, first.number
        )
    second = lines[1]
    if len(second.fields) == 1:
        width = _integer(
            first.fields[0], "strip width W", path, first.number, minimum=1
        )
        n = _integer(second.fields[0], "number of items n", path, second.number)
        return "a", width, n, None
    if len(second.fields) == 2:
        n = _integer(first.fields[0], "number of items n", path, first.number)
        width = _integer(
            second.fields[0], "strip width W", path, second.number, minimum=1
        )
        height = _integer(second.fields[1], "strip height H", path, second.number)
        return "b", width, n, height
    raise InputError(
        "expected n (layout 'W, n, w h') or 'W H' (layout 'n, W H, [id] w h') on the "
        f"second line, got {len(second.fields)} fields",
        path,
        second.number,
    )


def _count_error(
    layout: str, lines: list[_Line], n: int, found: int, path: Path
) -> InputError:
    n_line = lines[1].number if layout == "a" else lines[0].number
    if found > n:
        extra = lines[2 + n]
        return InputError(
            f"item {n + 1} is more than the {n} items announced on line {n_line}",
            path,
            extra.number,
        )
    hint = ""
    if layout == "a" and lines[0].fields[0] == str(found):
        hint = " (the first line equals the item count: is n given before W?)"
    return InputError(f"header announces {n} items, found {found}{hint}", path, n_line)


def _items(
    lines: list[_Line], layout: str, width: int, path: Path
) -> list[tuple[int, Job]]:
    items = lines[2:]
    shape = len(items[0].fields) if items else 2
    allowed = (2,) if layout == "a" else (2, 3)
    jobs: list[tuple[int, Job]] = []
    first_line: dict[int, int] = {}
    for position, item in enumerate(items, start=1):
        if shape not in allowed:
            expected = "'w h'" if layout == "a" else "'w h' or 'id w h'"
        elif len(item.fields) != shape:
            # Every item line has the shape of the first one.
            expected = "'w h'" if shape == 2 else "'id w h'"
        if shape not in allowed or len(item.fields) != shape:
            raise InputError(
                f"item {position}: expected {expected}, got {len(item.fields)} fields",
                path,
                item.number,
            )
        fields = item.fields
        job_id = position
        if shape == 3:
            job_id = _integer(fields[0], f"item {position} id", path, item.number)
            fields = fields[1:]
        w = _integer(fields[0], f"item {position} width", path, item.number, minimum=1)
        h = _integer(fields[1], f"item {position} height", path, item.number)
        if w > width:
            raise InputError(
                f"item {position}: width {w} exceeds strip width {width}",
                path,
                item.number,
            )
        if job_id in first_line:
            raise InputError(
                f"item {position}: id {job_id} appears twice (first at line "
                f"{first_line[job_id]})",
                path,
                item.number,
            )
        first_line[job_id] = item.number
        jobs.append((item.number, Job(job_id, 0, w, h)))
    return jobs


def read_strip(path: str | Path, *, allocation: str = "contiguous") -> Trace:
    """Read a strip-packing benchmark file (layout (a) or (b), see module doc).

    Parameters
    ----------
    path
        The text file (optionally gzip-compressed).
    allocation
        Machine allocation rule; ``"contiguous"`` makes a schedule a packing.

    Returns
    -------
    Trace
        Jobs released at 0 with size = item width, runtime = item height, on
        ``W`` processors. ``header`` holds ``layout`` (``"a"`` or ``"b"``),
        ``width``, ``items`` and, for layout (b), ``height``.

    Raises
    ------
    InputError
        ``file:line: reason`` for a malformed header or item line, an item
        count that differs from ``n``, an item wider than ``W`` or a repeated
        item id.
    """
    path = Path(path)
    lines, raw = _load_lines(path)
    layout, width, n, height = _header(lines, path)
    # The count first: a wrong count (or n and W swapped) explains any item
    # error that would follow.
    if len(lines) - 2 != n:
        raise _count_error(layout, lines, n, len(lines) - 2, path)
    jobs = _items(lines, layout, width, path)
    machine = Machine(width, allocation)
    source = Source(str(path), hashlib.sha256(raw).hexdigest(), "strip", None)
    instance = Instance(machine, tuple(job for _, job in jobs), path.stem, source)
    header = {"layout": layout, "width": str(width), "items": str(n)}
    if height is not None:
        header["height"] = str(height)
    return Trace(instance, header=header, records=n)
