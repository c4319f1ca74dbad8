"""Schedule files: CSV, Batsim ``out_jobs.csv`` and JSON.

``csv``
    One row per job: ``job_id,start,end,size,processors``, a ``killed``
    column (``1``/``0``) when some job was stopped at its estimate, and a
    ``moves`` column when some job migrated (``"120:0-3;300:4-7"``: from
    time 120 on processors 0-3, from 300 on 4-7; see
    :func:`optsched.schedule.format_moves`).
    ``processors`` lists processor indices as Batsim-style intervals
    (``"0-3 7"``, see :func:`optsched.io.batsim.format_resources`) and is
    empty when the producer only counted processors. ``size`` is
    informational (the instance's size, or the number of processors listed);
    the checker judges placements against the instance. The file is plain
    CSV that ``pandas.read_csv(path)`` reads without options: who made the
    schedule (its producer) goes to a sidecar ``X.csv.json`` written with
    it (:func:`provenance_path`, :func:`provenance_text`), which the reader
    uses when its checksum matches the CSV. Files of older versions may
    start with a line ``# producer: NAME``, still read; other ``#`` lines
    before the header are comments.
``batsim``
    The ``out_jobs.csv`` columns Batsim 4 writes and evalys reads, in this
    order: ``job_id, workload_name, profile, submission_time,
    requested_number_of_resources, requested_time, success, final_state,
    starting_time, execution_time, finish_time, waiting_time,
    turnaround_time, stretch, allocated_resources, consumed_energy,
    metadata``. Writing needs the instance (submission times, sizes,
    estimates) and refuses schedules with migrations, which the format
    cannot record. A job stopped at its estimate has ``success`` 0 and
    ``final_state`` ``COMPLETED_WALLTIME_REACHED``; every other job
    ``COMPLETED_SUCCESSFULLY``. ``consumed_energy`` is -1 (not modelled).
    Written to ``X/out_jobs.csv`` (any ``*_jobs.csv``), it comes with
    Batsim's summary ``X/out_schedule.csv``
    (:data:`optsched.io.batsim.SUMMARY_COLUMNS`); both are renamed into
    place only when both are complete.
    Reading uses ``job_id`` (``jobID`` in the job sets evalys writes; a
    ``workload!id`` prefix is dropped),
    ``starting_time``, ``finish_time``, ``allocated_resources`` and
    ``final_state`` (``success``, 1 or 0, when there is no ``final_state``;
    every job ran to its end when there is neither). ``final_state`` must
    be one Batsim writes (:data:`FINAL_STATES`): ``COMPLETED_SUCCESSFULLY``
    and ``COMPLETED_FAILED`` jobs ran to their own end (a failure is an exit
    code, the processors were held all the same) and are complete runs;
    ``COMPLETED_WALLTIME_REACHED`` and ``COMPLETED_KILLED`` jobs were
    stopped and are read as killed (:attr:`Schedule.killed`), so that such a
    schedule is never taken for a complete one, nor for an upper bound; the
    checker then expects them to stop at their estimate. ``REJECTED`` jobs
    have no placement and are left out (missing, for the checker).
``json``
    ``{"format": "optsched-schedule", "version": 1, "producer": "...",
    "placements": [{"job": 17, "start": 0, "end": 10, "processors": "0-3",
    "killed": true, "moves": "120:4-7"}, ...]}``; ``processors``, ``killed``
    and ``moves`` are optional. A preempted job
    (:class:`~optsched.schedule.Piece`) adds ``"pieces": [{"start": 0,
    "end": 4, "processors": "0-3"}, {"start": 7, "end": 15, "processors":
    "4-7", "switch": 2}]`` (``switch`` omitted when 0); its ``start``,
    ``end`` and ``processors`` are then those of the span and of the first
    piece. A job that machine outages killed before its complete run adds
    ``"lost": [{"start": 0, "end": 50, "processors": "0-3"}, ...]``, its
    lost attempts (:attr:`Schedule.lost`; ``moves`` allowed). ``csv``
    records them too (the ``lost`` column below); ``batsim`` and ``swf``
    refuse such schedules.

Preempted jobs in ``csv``: the columns ``piece`` (0, 1, ... in the job's
time order) and ``switch`` (context-switch seconds at the piece's start)
appear when some job runs in pieces, and such a job has one row per piece,
with the piece's ``start``, ``end`` and ``processors``; rows come in time
order. The ``batsim`` format cannot record pieces and refuses them.

Runs killed by outages in ``csv``: the column ``lost`` appears when some job
has them; its complete run has ``lost = 0`` and its ``k``-th killed run a row
of its own with ``lost = k`` (start, end, size and processors of that run).

Times are integer seconds (``"12.0"`` is read as 12, ``"12.5"`` is an
error) within ``2**53`` in absolute value, as are job ids and processor
indices. Processor intervals stay intervals once read
(:class:`~optsched.schedule.ProcessorSet`): ``"0-3000000000"`` costs two
integers, and the checker judges it without expanding it.
:func:`read_schedule` recognises the format from the content.

The CSV writers guard against spreadsheet formulas (OWASP "CSV
injection"): a text cell starting with ``= + - @``, a tab or a carriage
return gets a leading ``'`` (numbers such as ``-1`` do not), and a producer
holding a comma or a quote is written as one quoted cell. The free text
cells are the Batsim ``workload_name`` (the instance's name) and the
producer; ``moves`` starting with a negative time are guarded too, and the
reader drops that ``'``.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from optsched.errors import InputError, shown
from optsched.instance import Instance
from optsched.io.atomic import atomic_write, replaces_a_file
from optsched.io.batsim import (
    format_resources,
    parse_resources,
    schedule_summary_text,
    summary_path,
)
from optsched.io.native import JsonPath, json_line, json_lines
from optsched.io.spreadsheet import safe_cell
from optsched.io.text import MAX_CONTENT_BYTES, decode_utf8, read_bytes
from optsched.moldable.modes import resolved
from optsched.schedule import (
    MAX_PROCESSOR,
    MAX_TIME,
    Moves,
    Piece,
    Placement,
    ProcessorLimitError,
    Schedule,
    format_moves,
    parse_moves,
)

SCHEDULE_FORMATS = ("csv", "batsim", "json")
SCHEDULE_WRITE_FORMATS = (*SCHEDULE_FORMATS, "swf")
"""Formats :func:`write_schedule` writes: ``swf`` (:mod:`optsched.io.swf_out`)
is written only; read an SWF file back as a trace (its recorded schedule)."""
JSON_FORMAT_NAME = "optsched-schedule"
JSON_VERSION = 1

CSV_COLUMNS = ("job_id", "start", "end", "size", "processors")
CSV_OPTIONAL = ("size", "processors", "killed", "moves", "piece", "switch", "lost")
BATSIM_COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)
BATSIM_REQUIRED = ("job_id", "starting_time", "finish_time")
COMPLETED = "COMPLETED_SUCCESSFULLY"
FAILED = "COMPLETED_FAILED"
WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
KILLED = "COMPLETED_KILLED"
REJECTED = "REJECTED"
FINAL_STATES = (COMPLETED, FAILED, WALLTIME_REACHED, KILLED, REJECTED)
"""The ``final_state`` values Batsim writes in ``out_jobs.csv``."""
_STOPPED = (WALLTIME_REACHED, KILLED)
"""Final states of jobs stopped before their end: read as killed, so that
their schedule is never taken for a complete run (nor an upper bound)."""
_HEADER_SHOWN = 250
"""A Batsim header is 240 characters; longer ones are cut in messages."""

_PRODUCER = re.compile(r"#\s*producer: ?(.*)$")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INTEGRAL_FLOAT = re.compile(r"[+-]?[0-9]+\.0*")


def _ordered(schedule: Schedule) -> list[tuple[int, Placement]]:
    """Placements by start time, then job id; refuses empty processor sets."""
    for job_id, placement in schedule.placements.items():
        if placement.processors == ():
            # "" means "processors unknown" in every format; writing it would
            # turn a processor-count violation into an unchecked placement.
            raise ValueError(
                f"job {job_id}: an empty processor set cannot be written "
                "(use None when the processors are unknown)"
            )
    return sorted(schedule.placements.items(), key=lambda kv: (kv[1].start, kv[0]))


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def _csv_rows(schedule: Schedule, instance: Instance | None) -> Iterator[list[str]]:
    sizes = instance.jobs_by_id() if instance is not None else {}
    with_killed = bool(schedule.killed)
    attempts = [run for runs in schedule.lost.values() for run in runs]
    every = [*schedule.placements.values(), *attempts]
    with_moves = any(p.moves for p in every)
    with_pieces = any(p.pieces for p in schedule.placements.values())
    with_lost = bool(attempts)
    yield (
        list(CSV_COLUMNS)
        + (["killed"] if with_killed else [])
        + (["moves"] if with_moves else [])
        + (["piece", "switch"] if with_pieces else [])
        + (["lost"] if with_lost else [])
    )

    def row(
        job_id: int, run: Placement | Piece, size: str, moves: Moves, extra: list[str]
    ) -> list[str]:
        """One CSV row; ``extra``: its ``piece``/``switch`` and ``lost`` cells,
        each when its column is written."""
        resources = format_resources(run.processors)
        cells = [str(job_id), str(run.start), str(run.end), size, resources]
        if with_killed:
            cells.append("1" if job_id in schedule.killed else "0")
        if with_moves:
            cells.append(format_moves(moves))
        return cells + extra

    rows = []
    for job_id, runs in schedule.lost.items():
        for k, run in enumerate(runs, start=1):
            size = str(len(run.processors)) if run.processors is not None else ""
            extra = ["0", "0", str(k)] if with_pieces else [str(k)]
            cells = row(job_id, run, size, run.moves, extra)
            rows.append((run.start, job_id, -k, cells))
    for job_id, placement in _ordered(schedule):
        if job_id in sizes and not sizes[job_id].modes:
            size = str(sizes[job_id].size)
        elif placement.processors is not None:
            size = str(len(placement.processors))
        else:
            size = ""
        pieces = placement.pieces or (
            Piece(placement.start, placement.end, placement.processors),
        )
        for k, piece in enumerate(pieces):
            extra = [str(k), str(piece.switch)] if with_pieces else []
            extra += ["0"] if with_lost else []
            cells = row(job_id, piece, size, placement.moves, extra)
            rows.append((piece.start, job_id, k, cells))
    # Pieces in time order: the file reads as a log of what ran when.
    for *_, cells in sorted(rows, key=lambda r: r[:3]):
        yield cells


def _stretch(turnaround: int, execution: int) -> str:
    if execution == 0:
        return "inf" if turnaround > 0 else "1"
    return f"{turnaround / execution:.6f}"


def _batsim_rows(schedule: Schedule, instance: Instance | None) -> Iterator[list[str]]:
    if instance is None:
        raise ValueError(
            "the batsim format needs the instance (submission times, sizes, estimates)"
        )
    jobs = instance.jobs_by_id()
    unknown = sorted(schedule.placements.keys() - jobs.keys())
    if unknown:
        raise ValueError(f"job {unknown[0]} is placed but not in the instance")
    moved = sorted(j for j, p in schedule.placements.items() if p.moves)
    if moved:
        raise ValueError(
            f"the batsim format cannot record the migrations of job {moved[0]}; "
            "write csv or json"
        )
    schedule.refuse_pieces("batsim")
    schedule.refuse_lost("batsim")
    # Batsim's resources are those of the mode each job ran in.
    jobs = resolved(instance, schedule).jobs_by_id()
    workload = instance.name or "w0"
    yield list(BATSIM_COLUMNS)
    for job_id, p in _ordered(schedule):
        job = jobs[job_id]
        killed = job_id in schedule.killed
        values: dict[str, object] = {
            "job_id": job_id,
            "workload_name": workload,
            "profile": "delay",
            "submission_time": job.release,
            "requested_number_of_resources": job.size,
            "requested_time": job.requested,
            "success": 0 if killed else 1,
            "final_state": WALLTIME_REACHED if killed else COMPLETED,
            "starting_time": p.start,
            "execution_time": p.end - p.start,
            "finish_time": p.end,
            "waiting_time": p.start - job.release,
            "turnaround_time": p.end - job.release,
            "stretch": _stretch(p.end - job.release, p.end - p.start),
            "allocated_resources": format_resources(p.processors),
            "consumed_energy": -1,
            "metadata": "",
        }
        yield [str(values[column]) for column in BATSIM_COLUMNS]


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    """The schedule as a JSON-ready dictionary (the ``json`` format)."""
    placements = []
    for job_id, p in _ordered(schedule):
        item: dict[str, Any] = {"job": job_id, "start": p.start, "end": p.end}
        if p.processors is not None:
            item["processors"] = format_resources(p.processors)
        if job_id in schedule.killed:
            item["killed"] = True
        if p.moves:
            item["moves"] = format_moves(p.moves)
        if p.pieces:
            item["pieces"] = [_piece_to_dict(piece) for piece in p.pieces]
        if job_id in schedule.lost:
            item["lost"] = [_attempt_to_dict(run) for run in schedule.lost[job_id]]
        placements.append(item)
    return {
        "format": JSON_FORMAT_NAME,
        "version": JSON_VERSION,
        "producer": schedule.producer,
        "placements": placements,
    }


def _attempt_to_dict(run: Placement) -> dict[str, Any]:
    item: dict[str, Any] = {"start": run.start, "end": run.end}
    if run.processors is not None:
        item["processors"] = format_resources(run.processors)
    if run.moves:
        item["moves"] = format_moves(run.moves)
    return item


def _piece_to_dict(piece: Piece) -> dict[str, Any]:
    item: dict[str, Any] = {"start": piece.start, "end": piece.end}
    if piece.processors is not None:
        item["processors"] = format_resources(piece.processors)
    if piece.switch:
        item["switch"] = piece.switch
    return item


def _json_text(schedule: Schedule) -> str:
    """Top-level keys one per line, then one placement per line."""
    data = schedule_to_dict(schedule)
    head = "".join(
        f"  {json.dumps(key)}: {json.dumps(data[key], ensure_ascii=False)},\n"
        for key in ("format", "version", "producer")
    )
    items = ",\n".join(f"    {json.dumps(p)}" for p in data["placements"])
    body = f"[\n{items}\n  ]" if items else "[]"
    return f'{{\n{head}  "placements": {body}\n}}\n'


def _csv_text(rows: Iterable[list[str]], producer: str = "") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if producer:
        # One line: line breaks in the producer would break the comment.
        one_line = producer.replace("\r", " ").replace("\n", " ")
        comment = f"# producer: {one_line}"
        if "," in comment or '"' in comment:
            # Quoted as one cell: a spreadsheet would otherwise start a new
            # cell, maybe a formula, after each comma.
            writer.writerow([comment])
        else:
            buffer.write(comment + "\n")
    writer.writerows([safe_cell(value) for value in row] for row in rows)
    return buffer.getvalue()


SUFFIX_FORMATS = {".json": "json", "_jobs.csv": "batsim", ".swf": "swf"}
"""Schedule format by the end of an output file's name (lower case), longest
match first; any other name is written as ``csv``. ``out_jobs.csv`` (and any
``*_jobs.csv``) is Batsim's jobs file, written with its ``*_schedule.csv``."""


def schedule_format_for(path: str | Path, forced: str | None = None) -> str:
    """The schedule format to write ``path`` in: ``forced``, else by name.

    One table (:data:`SUFFIX_FORMATS`) for every command writing schedules
    (``simulate -o``, ``bound --schedule-out``), so that they agree.
    """
    if forced is not None:
        return forced
    name = Path(path).name.lower()
    for suffix in sorted(SUFFIX_FORMATS, key=len, reverse=True):
        if name.endswith(suffix):
            return SUFFIX_FORMATS[suffix]
    return "csv"


def write_schedule(
    schedule: Schedule,
    path: str | Path,
    format: str = "csv",
    instance: Instance | None = None,
) -> None:
    """Write a schedule atomically.

    Parameters
    ----------
    schedule
        The placements.
    path
        Output file.
    format
        ``"csv"``, ``"batsim"``, ``"json"`` (see the module docstring) or
        ``"swf"`` (:func:`optsched.io.swf_out.write_swf`).
    instance
        Needed for ``batsim``; gives the ``size`` column of ``csv``.
    """
    if format == "csv":
        # The producer goes to the sidecar: the CSV stays plain for pandas.
        text = _csv_text(_csv_rows(schedule, instance))
        write_with_provenance(path, text, schedule.producer)
        return
    elif format == "batsim":
        text = _csv_text(_batsim_rows(schedule, instance))
        summary = summary_path(path)
        if summary is not None:
            assert instance is not None  # _batsim_rows refused None
            _write_pair(path, text, summary, schedule_summary_text(schedule, instance))
            return
    elif format == "swf":
        from optsched.io.swf_out import write_swf

        if instance is None:
            raise ValueError("the swf format needs the instance (submit times, sizes)")
        write_swf(schedule, path, instance)
        return
    elif format == "json":
        text = _json_text(schedule)
    else:
        raise ValueError(
            f"unknown schedule format {format!r}; expected one of "
            f"{', '.join(SCHEDULE_WRITE_FORMATS)}"
        )
    with atomic_write(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _write_pair(
    path: str | Path,
    text: str,
    second: Path,
    second_text: str,
    *,
    second_newline: str | None = "",
) -> None:
    """Write ``text`` to ``path`` and ``second_text`` to ``second``, atomically.

    Both are complete temporary files before either is renamed (``second``
    first); an error leaves neither, and removes ``second`` when ``path``
    could not be renamed after it (it would describe nothing).
    ``second_newline`` is the ``newline`` ``second`` is opened with (``""``:
    written as given, as ``path`` is).
    """
    if not replaces_a_file(path):
        # A device or a FIFO, written through: no companion file beside it
        # (``/dev/null.json``), and nothing it could describe.
        with atomic_write(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        return
    before = _identity(path), _identity(second)
    try:
        with atomic_write(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            with atomic_write(
                second, "w", encoding="utf-8", newline=second_newline
            ) as other:
                other.write(second_text)
    except BaseException:
        # The companion renamed but not the file (a signal may arrive just
        # after a rename, before any flag could be set): it describes
        # nothing. Both renamed: the pair is complete, and kept.
        if _identity(path) == before[0] and _identity(second) != before[1]:
            with contextlib.suppress(OSError):
                second.unlink()
        raise


def _identity(path: str | Path) -> tuple[int, int] | None:
    """Device and inode of the file at ``path`` (``None``: none)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    # A regular file only (a device or a pipe may never end), within the caps.
    raw = read_bytes(path)
    if not raw.strip():
        raise InputError("empty file: expected a schedule", path)
    if b"\x00" in raw:
        raise InputError("binary file: expected a schedule (CSV or JSON)", path)
    return decode_utf8(path, raw, "a schedule")


PROVENANCE_FORMAT = "optsched-provenance"
PROVENANCE_VERSION = 1
_PROVENANCE_LIMIT = 1 << 20
"""Bytes of a sidecar read at most: it holds one producer line."""


def provenance_path(path: str | Path) -> Path:
    """The sidecar of a CSV file: ``X.csv`` -> ``X.csv.json``.

    The whole name plus ``.json``, so that ``out.csv`` and ``out.parquet``
    (or ``out.json``) never share one.
    """
    path = Path(path)
    return path.with_name(path.name + ".json")


def provenance_text(path: str | Path, text: str, producer: str) -> str:
    """The sidecar JSON of CSV ``text`` written to ``path`` by ``producer``.

    ``{"format": "optsched-provenance", "version": 1, "file": "out.csv",
    "sha256": "...", "producer": "easy"}``: ``sha256`` is that of the CSV's
    UTF-8 bytes, so that a reader ignores the sidecar of a CSV edited or
    replaced since (its producer no longer made it).
    """
    data = {
        "format": PROVENANCE_FORMAT,
        "version": PROVENANCE_VERSION,
        "file": Path(path).name,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "producer": producer,
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def write_with_provenance(path: str | Path, text: str, producer: str) -> None:
    """Write CSV ``text`` to ``path`` and its sidecar (:func:`provenance_path`).

    Both are written to temporary files first and renamed only when both
    are complete (the sidecar first), so that an error leaves neither half
    written; a sidecar renamed but whose CSV then failed is removed.
    """
    # The sidecar is JSON text, opened with the platform's line ends.
    _write_pair(
        path,
        text,
        provenance_path(path),
        provenance_text(path, text, producer),
        second_newline=None,
    )


def read_provenance(path: Path, text: str) -> str | None:
    """The producer recorded in the sidecar of CSV ``path``, if any applies.

    ``None`` when there is no sidecar, when the file there is not an
    optsched provenance file, or when its ``sha256`` is not that of
    ``text`` (the CSV changed since it was written: the recorded producer
    no longer made it).

    Raises
    ------
    InputError
        Naming the sidecar: a file there that is not a regular file, is
        larger than 1 MiB or is not JSON (a damaged sidecar is reported,
        not silently dropped with its producer), or an optsched provenance
        file whose ``producer`` is not a string.
    """
    sidecar = provenance_path(path)
    if not sidecar.exists():
        return None
    if not sidecar.is_file():
        raise InputError("provenance file: not a regular file", sidecar)
    try:
        with sidecar.open("rb") as handle:
            raw = handle.read(_PROVENANCE_LIMIT + 1)
    except OSError as error:
        raise InputError(
            f"cannot read provenance file: {error.strerror or error}", sidecar
        ) from None
    if len(raw) > _PROVENANCE_LIMIT:
        raise InputError("provenance file: larger than 1 MiB", sidecar)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InputError("provenance file: not JSON", sidecar) from None
    if not isinstance(data, dict) or data.get("format") != PROVENANCE_FORMAT:
        return None  # someone else's file of that name
    if data.get("sha256") != hashlib.sha256(text.encode("utf-8")).hexdigest():
        return None
    producer = data.get("producer", "")
    if not isinstance(producer, str):
        raise InputError("provenance file: producer: expected a string", sidecar)
    return producer


def _comment(line: str) -> str | None:
    """The text of a ``#`` comment line (maybe quoted as one CSV cell), else None."""
    stripped = line.strip()
    if stripped.startswith("#"):
        return line.lstrip()
    if stripped.startswith('"#'):
        return next(csv.reader([stripped]), [""])[0]
    return None


def _first_content_line(text: str) -> str:
    for _, _, line in _physical_lines(text):
        if line.strip() and _comment(line) is None:
            return line.strip()
    return ""


def detect_schedule_format(text: str, path: str | Path | None = None) -> str:
    """Recognise a schedule's format from its text.

    ``{`` first -> ``json``; a CSV header with ``starting_time`` ->
    ``batsim``; a CSV header starting ``job_id,start,end`` -> ``csv``.
    """
    first = _first_content_line(text)
    if first.startswith(("{", "[")):
        return "json"
    header = [column.strip() for column in first.split(",")]
    if "starting_time" in header:
        return "batsim"
    if "job_id" in header and "start" in header and "end" in header:
        return "csv"
    raise InputError(
        "unrecognised schedule format: expected a JSON schedule, a CSV with a "
        "'job_id,start,end,...' header or a Batsim out_jobs.csv",
        path,
    )


def _bounded(text: str, column: str, what: str, path: Path, line: int | None) -> int:
    """``int(text)`` for text matching ``[+-]?[0-9]+``, within ``MAX_TIME``.

    Digits are counted first: ``int()`` of thousands of digits is slow, and
    refused past 4300.
    """
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > len(str(MAX_TIME)) or abs(int(text)) > MAX_TIME:
        raise InputError(
            f"{column}: {what} {shown(text)} is beyond the limit 2**53 ({MAX_TIME})",
            path,
            line,
        )
    return int(text)


def _seconds(text: str, column: str, path: Path, line: int) -> int:
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return _bounded(text, column, "time", path, line)
    if _INTEGRAL_FLOAT.fullmatch(text):
        # "12.000000" as Batsim writes it; no float() round trip, which
        # would lose digits beyond 2**53.
        return _bounded(text.partition(".")[0], column, "time", path, line)
    raise InputError(
        f"{column}: expected integer seconds, got {shown(text)}", path, line
    )


def _job_id(text: str, path: Path, line: int) -> int:
    # Batsim may write "workload!17".
    text = text.strip().rsplit("!", 1)[-1]
    if not _INTEGER.fullmatch(text):
        raise InputError(f"job_id: expected an integer, got {shown(text)}", path, line)
    return _bounded(text, "job_id", "id", path, line)


def _processors(text: str, column: str, path: Path, line: int) -> Sequence[int] | None:
    try:
        return parse_resources(text)
    except ProcessorLimitError:
        raise InputError(
            f"{column}: a processor index in {shown(text.strip())} is beyond the "
            f"limit 2**53 ({MAX_PROCESSOR})",
            path,
            line,
        ) from None
    except ValueError:
        raise InputError(
            f"{column}: bad processor intervals {shown(text.strip())} "
            "(expected e.g. '0-3 7')",
            path,
            line,
        ) from None


def _moves(text: str, path: Path, line: int) -> Moves:
    text = text.strip()
    if text.startswith("'"):
        text = text[1:]  # the writer's guard against spreadsheet formulas
    try:
        return parse_moves(text)
    except ValueError:
        raise InputError(
            f"moves: bad migrations {shown(text)} "
            "(expected e.g. '120:0-3;300:4-7', times and processors within 2**53)",
            path,
            line,
        ) from None


def _flag(text: str, column: str, path: Path, line: int) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("", "0", "false", "no"):
        return False
    raise InputError(
        f"{column}: expected 1 or 0, got {shown(text.strip())}", path, line
    )


class _Duplicate(Exception):
    """A job's second row or item; positions are CSV lines or JSON indices."""

    def __init__(self, job_id: int, first: int, second: int) -> None:
        super().__init__(job_id, first, second)
        self.job_id, self.first, self.second = job_id, first, second


class _Collector:
    """Placements as they are read, rejecting a job's second row."""

    def __init__(self) -> None:
        self.placements: dict[int, Placement] = {}
        self.killed: set[int] = set()
        self.first_seen: dict[int, int] = {}

    def add(
        self, job_id: int, placement: Placement, killed: bool, position: int
    ) -> None:
        """Keep one placement; raise :class:`_Duplicate` on a job's second one."""
        if job_id in self.first_seen:
            raise _Duplicate(job_id, self.first_seen[job_id], position)
        self.first_seen[job_id] = position
        self.placements[job_id] = placement
        if killed:
            self.killed.add(job_id)

    def schedule(self, producer: str) -> Schedule:
        return Schedule(self.placements, producer, frozenset(self.killed))


def _physical_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start offset, line number, line without its end)``, split on ``\\n``.

    Not ``str.splitlines``: it also splits on form feeds and other separators
    that may sit inside a CSV field.
    """
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        yield offset, number, line.rstrip("\r")
        offset += len(line) + 1


def _csv_records(
    text: str,
) -> tuple[str, int, list[str], Iterator[tuple[int, list[str]]]]:
    """Producer, header line number, header and ``(line, row)`` pairs."""
    producer, header_offset, header_line = "", len(text), 0
    for offset, number, line in _physical_lines(text):
        comment = _comment(line)
        if line.strip() and comment is None:
            header_offset, header_line = offset, number
            break
        match = _PRODUCER.match(comment or "")
        if match and not producer:
            producer = match.group(1)
    # A field may be as long as the file: a job's processors written as many
    # intervals pass csv's default limit of 131,072 characters.
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CONTENT_BYTES))
    reader = csv.reader(io.StringIO(text[header_offset:], newline=""))
    header = [column.strip() for column in next(reader, [])]
    skipped = header_line - 1

    def rows() -> Iterator[tuple[int, list[str]]]:
        for row in reader:
            if row and any(field.strip() for field in row):
                yield skipped + reader.line_num, row

    return producer, header_line, header, rows()


def _header_text(header: list[str]) -> str:
    """The header as written when short and printable, else quoted and cut."""
    text = ",".join(header)
    if len(text) <= _HEADER_SHOWN and text.isprintable():
        return text
    return shown(text, _HEADER_SHOWN)


def _check_header(
    header: list[str],
    required: tuple[str, ...],
    known: tuple[str, ...] | None,
    path: Path,
    line: int,
) -> dict[str, int]:
    columns: dict[str, int] = {}
    for index, name in enumerate(header):
        if name in columns:
            raise InputError(f"header: column {shown(name)} appears twice", path, line)
        if known is not None and name not in known:
            raise InputError(
                f"header: unknown column {shown(name)} (expected {', '.join(known)})",
                path,
                line,
            )
        columns[name] = index
    missing = [name for name in required if name not in columns]
    if missing:
        raise InputError(f"header: missing column(s) {', '.join(missing)}", path, line)
    return columns


class _Row:
    """One CSV row with its line, read by column name."""

    def __init__(
        self, values: list[str], columns: dict[str, int], path: Path, line: int
    ) -> None:
        self.values, self.columns, self.path, self.line = values, columns, path, line

    def __getitem__(self, name: str) -> str:
        return self.values[self.columns[name]].strip() if name in self.columns else ""

    def seconds(self, name: str) -> int:
        return _seconds(self[name], name, self.path, self.line)

    def processors(self, name: str) -> Sequence[int] | None:
        return _processors(self[name], name, self.path, self.line)

    def moves(self, name: str) -> Moves:
        return _moves(self[name], self.path, self.line)


def _csv_row(row: _Row) -> tuple[Placement, bool] | None:
    if row["size"]:
        if not _INTEGER.fullmatch(row["size"]):
            raise InputError(
                f"size: expected an integer, got {shown(row['size'])}",
                row.path,
                row.line,
            )
        _bounded(row["size"], "size", "size", row.path, row.line)
    placement = Placement(
        row.seconds("start"),
        row.seconds("end"),
        row.processors("processors"),
        row.moves("moves"),
    )
    return placement, _flag(row["killed"], "killed", row.path, row.line)


def _batsim_row(row: _Row) -> tuple[Placement, bool] | None:
    if "final_state" in row.columns:
        state = row["final_state"]
        if state not in FINAL_STATES:
            raise InputError(
                f"final_state: unknown value {shown(state)} (expected one of "
                f"{', '.join(FINAL_STATES)})",
                row.path,
                row.line,
            )
        if state == REJECTED:
            return None  # never started: no placement, the job is missing
        stopped = state in _STOPPED
    elif "success" in row.columns:
        success = row["success"]
        if success not in ("0", "1"):
            raise InputError(
                f"success: expected 1 or 0, got {shown(success)}", row.path, row.line
            )
        stopped = success == "0"
    else:
        stopped = False  # a bare file of starts and ends: every job ran to its end
    placement = Placement(
        row.seconds("starting_time"),
        row.seconds("finish_time"),
        row.processors("allocated_resources"),
    )
    if "execution_time" in row.columns and row["execution_time"].strip():
        # Batsim writes finish - start; another value means a file edited or
        # written by something else: which of the three times is right?
        ran = row.seconds("execution_time")
        if ran != placement.end - placement.start:
            raise InputError(
                f"execution_time: {ran} is not finish_time - starting_time = "
                f"{placement.end - placement.start}",
                row.path,
                row.line,
            )
    return placement, stopped


def _read_csv(text: str, path: Path, batsim: bool) -> Schedule:
    producer, header_line, header, rows = _csv_records(text)
    if not header:
        raise InputError("no header line: expected a CSV schedule", path)
    if batsim:
        if "jobID" in header and "job_id" not in header:
            # evalys's JobSet.to_csv renames job_id to jobID.
            header = ["job_id" if name == "jobID" else name for name in header]
        columns = _check_header(header, BATSIM_REQUIRED, None, path, header_line)
    else:
        known = ("job_id", "start", "end", *CSV_OPTIONAL)
        columns = _check_header(
            header, ("job_id", "start", "end"), known, path, header_line
        )
    parse_row = _batsim_row if batsim else _csv_row
    collected = _Collector()
    pieced = _PieceRows(path) if "piece" in columns else None
    lost = _LostRows(path) if "lost" in columns else None
    for line, values in rows:
        if len(values) != len(header):
            raise InputError(
                f"expected {len(header)} fields ({_header_text(header)}), "
                f"got {len(values)}",
                path,
                line,
            )
        row = _Row(values, columns, path, line)
        job_id = _job_id(row["job_id"], path, line)
        parsed = parse_row(row)
        if parsed is None:
            continue
        if lost is not None and lost.take(job_id, row, parsed[0]):
            continue
        if pieced is not None:
            pieced.add(job_id, row, parsed[0], parsed[1])
            continue
        try:
            collected.add(job_id, parsed[0], parsed[1], line)
        except _Duplicate as twice:
            raise InputError(
                f"job {job_id} appears twice (first at line {twice.first})", path, line
            ) from None
    if pieced is not None:
        for job_id, placement, killed, line in pieced.placements():
            collected.add(job_id, placement, killed, line)
    if not batsim:
        recorded = read_provenance(path, text)
        producer = recorded if recorded is not None else producer
    schedule = collected.schedule(producer)
    if lost is not None and lost.rows:
        schedule = Schedule(
            schedule.placements, producer, schedule.killed, lost.attempts()
        )
    return schedule


_Numbered = TypeVar("_Numbered", bound=tuple[Any, ...])


def _unseen(
    rows: dict[int, dict[int, _Numbered]], job_id: int, index: int, what: str, row: _Row
) -> dict[int, _Numbered]:
    """The numbered rows of ``job_id`` read so far, which must not hold
    ``index`` yet (each row is kept with its line last)."""
    mine = rows.setdefault(job_id, {})
    if index in mine:
        raise InputError(
            f"job {job_id} {what} {index} appears twice (first at line "
            f"{mine[index][-1]})",
            row.path,
            row.line,
        )
    return mine


class _LostRows:
    """Rows of a CSV with a ``lost`` column: ``0`` (or empty) for a job's
    complete run, ``k >= 1`` for its ``k``-th run killed by an outage."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[int, dict[int, tuple[Placement, int]]] = {}

    def take(self, job_id: int, row: _Row, placement: Placement) -> bool:
        """Keep the row if it is a lost attempt; whether it was one."""
        index = _bounded_index(row["lost"] or "0", "lost", row.path, row.line)
        if index == 0:
            return False
        mine = _unseen(self.rows, job_id, index, "lost attempt", row)
        mine[index] = (placement, row.line)
        return True

    def attempts(self) -> dict[int, tuple[Placement, ...]]:
        """``{job: attempts}`` in attempt order (numbered 1, 2, ... without gaps)."""
        out = {}
        for job_id, mine in self.rows.items():
            if sorted(mine) != list(range(1, len(mine) + 1)):
                first = min(line for _, line in mine.values())
                raise InputError(
                    f"job {job_id}: lost attempts are numbered 1, 2, ... without gaps",
                    self.path,
                    first,
                )
            out[job_id] = tuple(mine[k][0] for k in range(1, len(mine) + 1))
        return out


class _PieceRows:
    """The rows of a CSV with a ``piece`` column, gathered per job.

    A job's rows carry the piece indices 0, 1, ... (in any row order); a
    repeated or missing index is an error naming the line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[int, dict[int, tuple[Placement, Piece, bool, int]]] = {}

    def add(self, job_id: int, row: _Row, placement: Placement, killed: bool) -> None:
        index = _bounded_index(row["piece"], "piece", row.path, row.line)
        switch = _bounded_index(row["switch"] or "0", "switch", row.path, row.line)
        mine = _unseen(self.rows, job_id, index, "piece", row)
        piece = Piece(placement.start, placement.end, placement.processors, switch)
        mine[index] = (placement, piece, killed, row.line)

    def placements(self) -> Iterator[tuple[int, Placement, bool, int]]:
        """``(job, placement, killed, first line)`` of every job read."""
        for job_id, mine in self.rows.items():
            first = min(line for *_, line in mine.values())
            if sorted(mine) != list(range(len(mine))):
                missing = min(set(range(len(mine) + 1)) - mine.keys())
                raise InputError(
                    f"job {job_id}: piece {missing} is missing (pieces are "
                    "numbered 0, 1, ... without gaps)",
                    self.path,
                    first,
                )
            killed = {flag for _, _, flag, _ in mine.values()}
            if len(killed) > 1:
                raise InputError(
                    f"job {job_id}: its pieces disagree on 'killed'", self.path, first
                )
            if len(mine) == 1 and mine[0][1].switch == 0:
                yield job_id, mine[0][0], killed.pop(), first
                continue
            if any(placement.moves for placement, *_ in mine.values()):
                raise InputError(
                    f"job {job_id}: a job in pieces cannot have moves", self.path, first
                )
            pieces = [mine[k][1] for k in range(len(mine))]
            try:
                placement = Placement.of_pieces(pieces)
            except ValueError as error:
                raise InputError(f"job {job_id}: {error}", self.path, first) from None
            yield job_id, placement, killed.pop(), first


def _bounded_index(text: str, column: str, path: Path, line: int) -> int:
    """A non-negative integer cell (piece index, switch seconds)."""
    text = text.strip()
    if not _INTEGER.fullmatch(text) or text.startswith("-"):
        raise InputError(
            f"{column}: expected a non-negative integer, got {shown(text)}", path, line
        )
    return _bounded(text, column, column, path, line)


def schedule_from_json(text: str, origin: str | Path = "<json>") -> Schedule:
    """A schedule from JSON text in the ``json`` format (e.g. a store row).

    ``origin`` names the text in error messages, like a file path.
    """
    return _read_json(text, Path(origin))


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _load_json(text: str, path: Path) -> object:
    """``json.loads`` with every failure as one :class:`InputError`."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise InputError(
            f"invalid JSON: {error.msg} (column {error.colno})", path, error.lineno
        ) from None
    except RecursionError:
        # A schedule nests three levels; hundreds exhaust the parser's stack.
        raise InputError("invalid JSON: nested too deeply", path) from None
    except ValueError as error:
        # NaN/Infinity (refused above) or an integer of over 4300 digits,
        # whose message suggests a Python setting: not for this reader.
        reason = str(error) if "JSON number" in str(error) else "a number too long"
        raise InputError(f"invalid JSON: {reason}", path) from None


def _json_line(text: str, where: JsonPath) -> int | None:
    # The line is a courtesy: a text too deep to walk again gets none.
    try:
        return json_line(text, where)
    except RecursionError:
        return None


def _read_json(text: str, path: Path) -> Schedule:
    data = _load_json(text, path)

    def fail(where: JsonPath, reason: str) -> InputError:
        return InputError(reason, path, _json_line(text, where))

    if not isinstance(data, dict):
        raise fail((), "expected a JSON object with 'placements'")
    unknown = sorted(set(data) - {"format", "version", "producer", "placements"})
    if unknown:
        raise fail((unknown[0],), f"unknown key {shown(unknown[0])}")
    if data.get("format", JSON_FORMAT_NAME) != JSON_FORMAT_NAME:
        raise fail(
            ("format",),
            f"format: expected {JSON_FORMAT_NAME!r}, got {shown(data['format'])}"
            + (" (an instance file?)" if data["format"] == "optsched-instance" else ""),
        )
    if data.get("version", JSON_VERSION) != JSON_VERSION:
        raise fail(("version",), f"version: this optsched reads version {JSON_VERSION}")
    producer = data.get("producer", "")
    if not isinstance(producer, str):
        raise fail(("producer",), "producer: expected a string")
    items = data.get("placements")
    if not isinstance(items, list):
        raise fail(
            ("placements",) if "placements" in data else (),
            "placements: expected a list",
        )
    collected = _Collector()
    lost: dict[int, tuple[Placement, ...]] = {}
    for index, item in enumerate(items):
        where: JsonPath = ("placements", index)
        label = f"placements[{index}]"
        attempts = item.pop("lost", []) if isinstance(item, dict) else []
        job_id, placement, killed = _json_placement(
            item, label, functools.partial(_fail_below, fail, where)
        )
        if attempts:
            lost[job_id] = _json_attempts(attempts, job_id, label, where, fail)
        try:
            collected.add(job_id, placement, killed, index)
        except _Duplicate as twice:
            # Lines are found by walking the text again: only on this error.
            try:
                line = json_lines(text)
            except RecursionError:  # pragma: no cover - the text parsed
                line = lambda where: None  # noqa: E731
            raise InputError(
                f"{label}: job {job_id} appears twice (first at "
                f"placements[{twice.first}], line {line(('placements', twice.first))})",
                path,
                line(where),
            ) from None
    schedule = collected.schedule(producer)
    if lost:
        schedule = Schedule(schedule.placements, producer, schedule.killed, lost)
    return schedule


_ATTEMPT_KEYS = frozenset({"start", "end", "processors", "moves"})
"""The keys of a lost attempt in a JSON schedule."""
_PIECE_KEYS = frozenset({"start", "end", "processors", "switch"})
"""The keys of a piece in a JSON schedule."""


def _json_attempts(
    attempts: object,
    job_id: int,
    label: str,
    where: JsonPath,
    fail: Callable[[JsonPath, str], InputError],
) -> tuple[Placement, ...]:
    """The ``lost`` list of a placement: attempts killed by outages."""
    below = functools.partial(_fail_below, fail, where)
    runs = []
    for at, name, attempt in _json_objects(
        attempts, "lost", below, label, f"{label}: lost", _ATTEMPT_KEYS
    ):
        _, run, _ = _json_placement(
            {**attempt, "job": job_id}, name, functools.partial(_fail_below, below, at)
        )
        runs.append(run)
    return tuple(runs)


def _json_objects(
    items: object,
    key: str,
    fail: Callable[[JsonPath, str], InputError],
    label: str,
    item_label: str,
    keys: frozenset[str],
) -> Iterator[tuple[JsonPath, str, dict[str, Any]]]:
    """Each object of a JSON list, with its path and label.

    Parameters
    ----------
    items
        The value of ``key`` in the object ``label``.
    key
        The list's key: the paths given to ``fail`` start with it.
    fail
        Makes the error of a path below the object ``label``.
    label, item_label
        Name the object in messages (``placements[0]``) and the list's
        items (``placements[0].pieces``, followed by ``[k]``).
    keys
        The keys an item may have.

    Yields
    ------
    tuple
        ``(path, label, item)`` of each item in order.

    Raises
    ------
    InputError
        (From ``fail``.) ``items`` is not a list; or, when the iteration
        reaches it, an item is not an object or has a key not in ``keys``.
    """
    if not isinstance(items, list):
        raise fail((key,), f"{label}: {key}: expected a list")
    for k, item in enumerate(items):
        where: JsonPath = (key, k)
        name = f"{item_label}[{k}]"
        if not isinstance(item, dict):
            raise fail(where, f"{name}: expected an object")
        unknown = sorted(set(item) - keys)
        if unknown:
            raise fail((*where, unknown[0]), f"{name}: unknown key {shown(unknown[0])}")
        yield where, name, item


def _fail_below(
    fail: Callable[[JsonPath, str], InputError],
    where: JsonPath,
    key: JsonPath,
    reason: str,
) -> InputError:
    return fail((*where, *key), reason)


def _json_placement(
    item: object, label: str, fail: Callable[[JsonPath, str], InputError]
) -> tuple[int, Placement, bool]:
    if not isinstance(item, dict):
        raise fail((), f"{label}: expected an object")
    keys = {"job", "start", "end", "processors", "killed", "moves", "pieces"}
    unknown = sorted(set(item) - keys)
    if unknown:
        raise fail((unknown[0],), f"{label}: unknown key {shown(unknown[0])}")
    values: dict[str, int] = {}
    for key in ("job", "start", "end"):
        value = item.get(key)
        if key not in item:
            raise fail((), f"{label}: missing key {key!r}")
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail(
                (key,), f"{label}: {key}: expected an integer, got {shown(value)}"
            )
        if abs(value) > MAX_TIME:
            raise fail(
                (key,),
                f"{label}: {key}: {shown(value)} is beyond the limit 2**53 "
                f"({MAX_TIME})",
            )
        values[key] = value
    processors = _json_processors(item, label, (), fail)
    killed = item.get("killed", False)
    if not isinstance(killed, bool):
        raise fail(("killed",), f"{label}: killed: expected true or false")
    moves_text = item.get("moves", "")
    try:
        if not isinstance(moves_text, str):
            raise ValueError
        moves = parse_moves(moves_text)
    except ValueError:
        raise fail(
            ("moves",),
            f"{label}: moves: expected a string like '120:0-3;300:4-7', "
            f"got {shown(moves_text)}",
        ) from None
    pieces = _json_pieces(item.get("pieces", []), label, fail)
    try:
        placement = Placement(values["start"], values["end"], processors, moves, pieces)
    except ValueError as error:
        raise fail(("pieces",), f"{label}: {error}") from None
    return values["job"], placement, killed


def _json_processors(
    item: dict[str, Any],
    label: str,
    where: JsonPath,
    fail: Callable[[JsonPath, str], InputError],
) -> Sequence[int] | None:
    """The ``processors`` string of a placement or piece, parsed."""
    key = (*where, "processors")
    text = item.get("processors", "")
    if not isinstance(text, str):
        raise fail(key, f"{label}: processors: expected a string like '0-3 7'")
    try:
        return parse_resources(text)
    except ProcessorLimitError:
        raise fail(
            key,
            f"{label}: processors: a processor index in {shown(text)} is beyond "
            f"the limit 2**53 ({MAX_PROCESSOR})",
        ) from None
    except ValueError:
        raise fail(
            key,
            f"{label}: processors: bad processor intervals {shown(text)} "
            "(expected e.g. '0-3 7')",
        ) from None


def _json_pieces(
    items: object, label: str, fail: Callable[[JsonPath, str], InputError]
) -> tuple[Piece, ...]:
    """The ``pieces`` list of a placement (empty when not preempted)."""
    pieces = []
    for where, name, item in _json_objects(
        items, "pieces", fail, label, f"{label}.pieces", _PIECE_KEYS
    ):
        times = []
        for key in ("start", "end", "switch"):
            value = item.get(key, 0 if key == "switch" else None)
            if not isinstance(value, int) or isinstance(value, bool):
                raise fail(
                    (*where, key), f"{name}: {key}: expected an integer, got "
                    f"{shown(value)}"
                )  # fmt: skip
            if abs(value) > MAX_TIME:
                raise fail(
                    (*where, key),
                    f"{name}: {key}: {shown(value)} is beyond the limit 2**53",
                )
            times.append(value)
        processors = _json_processors(item, name, where, fail)
        pieces.append(Piece(times[0], times[1], processors, times[2]))
    return tuple(pieces)


def read_schedule(path: str | Path, format: str | None = None) -> Schedule:
    """Read a schedule file.

    Parameters
    ----------
    path
        A ``csv``, ``batsim`` or ``json`` schedule.
    format
        Force a format; ``None`` recognises it from the content.

    Raises
    ------
    InputError
        ``file:line: reason`` for malformed rows, a job's second row
        (``"job 17 appears twice (first at line 5)"``), bad processor
        intervals, non-integer times or an unknown format.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path)
    text = _read_text(path)
    fmt = format or detect_schedule_format(text, path)
    if fmt == "json":
        return _read_json(text, path)
    if fmt in ("csv", "batsim"):
        return _read_csv(text, path, batsim=fmt == "batsim")
    raise InputError(
        f"unknown schedule format {fmt!r}; expected one of "
        f"{', '.join(SCHEDULE_FORMATS)}",
        path,
    )


def schedule_file_jobs(path: str | Path) -> tuple[dict[int, int], dict[int, int]]:
    """Sizes and releases that a schedule file records beside its placements.

    Our CSV has a ``size`` column; a Batsim ``out_jobs.csv`` has
    ``requested_number_of_resources`` and ``submission_time`` (its ``job_id``
    column is ``jobID`` when evalys wrote it). JSON schedules record neither
    (empty dictionaries). Read the file with
    :func:`optsched.io.schedules.read_schedule` first: this assumes it is
    well formed and skips what it cannot read.
    """
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = [
        line
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines or lines[0].lstrip().startswith("{"):
        return {}, {}
    sizes: dict[int, int] = {}
    releases: dict[int, int] = {}
    # A field may be as long as the file (see _read_csv).
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CONTENT_BYTES))
    for row in csv.DictReader(lines):
        ident = row.get("job_id") or row.get("jobID") or ""
        job = _int_or_none(str(ident).rpartition("!")[2])
        if job is None:
            continue
        size = _int_or_none(row.get("size") or row.get("requested_number_of_resources"))
        release = _int_or_none(row.get("submission_time"))
        if size is not None and size > 0:
            sizes[job] = size
        if release is not None and release >= 0:
            releases[job] = release
    return sizes, releases


def _int_or_none(text: str | None) -> int | None:
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() else None
