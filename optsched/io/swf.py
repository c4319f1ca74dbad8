"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file holds one job per line, 18 whitespace-separated numbers, with
``-1`` for a missing value, and ``;`` comment lines; the header comments
``; Key: value`` describe the log (``MaxProcs``, ``MaxNodes``, ...).
Reference: Chapin, Cirne, Feitelson, Jones, Leutenegger, Schwiegelshohn,
Smith, Talby, "Benchmarks and standards for the evaluation of parallel job
schedulers", JSSPP 1999, LNCS 1659, pp. 67-90; the format is described at
https://www.cs.huji.ac.il/labs/parallel/workload/swf.html.

Conventions (each one overridable by a keyword argument of :func:`read_swf`):

size
    ``size_field="auto"``: field 5 (allocated processors) if > 0, else
    field 8 (requested processors). ``"allocated"`` / ``"requested"`` use
    only that field.
estimate
    ``estimate_rule="auto"``: field 9 (requested time) if > 0, else the
    runtime. ``"requested"`` uses field 9 only (jobs without it are skipped);
    ``"runtime"`` ignores field 9. The estimate is kept as recorded even when
    it is below the runtime (jobs that overran their request).
    When field 9 is missing the runtime is used: then a backfilling policy
    such as EASY knows that job's run time exactly (an oracle). Such jobs
    are counted in :attr:`optsched.trace.Trace.estimates_missing` and
    announced by :meth:`optsched.trace.Trace.estimate_note`.
machine size
    ``processors`` if given, else the header's ``MaxProcs``, else
    ``MaxNodes``, else an :class:`~optsched.errors.InputError` asking for
    ``--processors``.
numbers
    Every field may be written as an integer or a decimal number. Time and
    measurement fields (2, 3, 4, 6, 7, 9, 10, 18) are rounded to the nearest
    second, halves up (``123.5`` -> ``124``); the other fields (ids, counts,
    codes) must hold whole numbers. Any negative value means "missing".
status
    Field 11: 1 completed, 0 failed, 5 cancelled (version 2.1 on), -1
    unknown; 2, 3 and 4 mark partial executions (below). ``status`` (a set
    of codes, see :data:`STATUS_CODES` and :func:`parse_statuses`) keeps
    only the jobs whose status is in it; the default keeps every job,
    whatever its status. The count of jobs by status is
    :attr:`optsched.trace.Trace.statuses`.
partial executions
    The SWF definition records a job that was checkpointed or swapped out
    and resumed as several lines with the same job number: one summary line
    (status 0, 1 or 5) for the whole job and one line per partial execution
    (status 2: partial execution, to be continued; 3: last partial
    execution, job completed; 4: last partial execution, job failed). They
    are read as one job, at the place of its summary line (its first line
    when it has none), and counted in :attr:`optsched.trace.Trace.folded`.
    ``partial="summary"`` (the default) takes every field from the summary
    line, run time included: the partial lines only confirm it.
    ``partial="sum"`` takes the run time as the sum of the partial
    executions' run times (the processor time the job really held) and the
    other fields from the summary line. A job with partial lines but no
    summary line is built from its parts under both rules: submit time the
    earliest submit, wait time from it to the earliest start (submit + wait)
    of a part, run time the sum of the parts' run times, status the last
    part's (2, 3 or 4), the other fields from its first part. Two summary
    lines with one job number (or two lines without partial status) are a
    duplicate job number, an error.
skipped jobs
    A job that cannot be scheduled is left out and reported in
    :attr:`optsched.trace.Trace.skipped`, under the first reason that applies
    in this order: :data:`SKIP_STATUS`, :data:`SKIP_SIZE`,
    :data:`SKIP_RUNTIME`, :data:`SKIP_SUBMIT`, :data:`SKIP_TOO_LARGE`,
    :data:`SKIP_ESTIMATE`.

The reader parses the job lines in chunks with :func:`numpy.loadtxt`; when a
chunk fails, or holds a value outside the accepted grammar, a line-by-line
parser locates the first bad line of the chunk and names it in the error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Collection
from pathlib import Path

import numpy as np

from optsched.collector import collector_paused
from optsched.errors import InputError, shown
from optsched.instance import (
    EXTRA_FIELDS,
    MAX_INTEGER,
    Instance,
    Job,
    Machine,
    Source,
)
from optsched.io.limits import check_horizon
from optsched.io.text import decompress, read_bytes, refuse_utf16, strip_bom
from optsched.trace import SKIP_STATUS, FoldReport, SkipCollector, Trace

FIELDS: tuple[str, ...] = (
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
)
"""Names of the 18 SWF fields, in file order (field N is ``FIELDS[N - 1]``)."""

N_FIELDS = len(FIELDS)

# 0-based columns of the fields that hold times or measurements: a decimal
# value there is rounded to the nearest integer.
_ROUNDED = frozenset({1, 2, 3, 5, 6, 8, 9, 17})

SKIP_SIZE = "size <= 0 (processors missing)"
SKIP_RUNTIME = "runtime < 0 (missing)"
SKIP_SUBMIT = "submit time < 0 (missing)"
SKIP_TOO_LARGE = "size > machine processors"
SKIP_ESTIMATE = "requested time <= 0 (missing)"
SKIP_REASONS: tuple[str, ...] = (
    SKIP_STATUS,
    SKIP_SIZE,
    SKIP_RUNTIME,
    SKIP_SUBMIT,
    SKIP_TOO_LARGE,
    SKIP_ESTIMATE,
)
"""Skip reasons in the order they are tested (a job counts under the first)."""

SIZE_FIELDS = ("auto", "allocated", "requested")
ESTIMATE_RULES = ("auto", "requested", "runtime")
PARTIAL_RULES = ("summary", "sum")

STATUS_CODES: dict[str, int] = {
    "failed": 0,
    "completed": 1,
    "partial": 2,
    "partial-completed": 3,
    "partial-failed": 4,
    "cancelled": 5,
    "unknown": -1,
}
"""Names of the SWF status codes (field 11); ``unknown`` is the missing -1."""

_STATUS_ALIASES = {"canceled": 5}
STATUS_NAMES: dict[int, str] = {code: name for name, code in STATUS_CODES.items()}
PARTIAL_STATUSES = (2, 3, 4)
_STATUS = 10  # 0-based column of field 11

_HEADER_KEY = re.compile(r";\s{0,2}([A-Za-z][A-Za-z0-9_]*):(.*)")
_CONTINUATION = re.compile(r";\s{3,}\S")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Longest run of digits worth converting: 2**53 has 16 digits, and int()
# refuses more than 4300 digits (a ValueError naming no file).
_MAX_DIGITS = 20
# Job lines per numpy call (see _parse_table).
_CHUNK = 16_384
# float64 holds every integer up to 2**53 exactly.
_EXACT_LIMIT = 2.0**53
_TOO_LARGE = 2**53  # stands for any value at or past the limit


def read_swf(
    path: str | Path,
    *,
    processors: int | None = None,
    size_field: str = "auto",
    estimate_rule: str = "auto",
    allocation: str = "any",
    name: str | None = None,
    status: Collection[int] | None = None,
    partial: str = "summary",
) -> Trace:
    """Read an SWF trace (plain or gzip-compressed) whole.

    Parameters
    ----------
    path
        The trace; gzip files are recognised by their magic bytes.
    processors
        Machine size ``m``; wins over the header's ``MaxProcs``/``MaxNodes``.
    size_field
        ``"auto"`` (field 5 if > 0 else field 8), ``"allocated"`` (field 5) or
        ``"requested"`` (field 8).
    estimate_rule
        ``"auto"`` (field 9 if > 0 else the runtime), ``"requested"`` (field
        9; jobs without it are skipped) or ``"runtime"``.
    allocation
        Allocation rule of the machine, ``"any"`` or ``"contiguous"``.
    name
        Instance name; default the file name without ``.gz`` and ``.swf``.
    status
        Status codes to keep (field 11, -1 for unknown; see
        :data:`STATUS_CODES`); ``None`` keeps every job. Jobs left out are
        reported under :data:`SKIP_STATUS`.
    partial
        How a job's partial-execution lines (status 2, 3, 4) are read:
        ``"summary"`` (its summary line's run time) or ``"sum"`` (the sum of
        its partial executions' run times); see the module docstring.

    Returns
    -------
    Trace
        All jobs kept, in file order, with times as in the file; the skip
        report; the header (repeated keys and continuation lines joined with
        newlines); the number of job records read (jobs, partial-execution
        lines folded); the partial lines folded; the count of jobs by
        status; the jobs whose estimate is their run time.

    Raises
    ------
    InputError
        On a missing, binary, empty or truncated file, a malformed line
        (``file:line: field N (name): expected ..., got '...'``), a duplicate
        job number, or an unknown machine size.
    """
    path = Path(path)
    if size_field not in SIZE_FIELDS:
        raise ValueError(
            f"size_field {size_field!r} is not one of {', '.join(SIZE_FIELDS)}"
        )
    if estimate_rule not in ESTIMATE_RULES:
        raise ValueError(
            f"estimate_rule {estimate_rule!r} is not one of {', '.join(ESTIMATE_RULES)}"
        )
    if partial not in PARTIAL_RULES:
        raise ValueError(
            f"partial {partial!r} is not one of {', '.join(PARTIAL_RULES)}"
        )
    raw = read_bytes(path)
    text = _decode(path, raw)
    header, header_lines, job_lines, line_numbers = _split_lines(text)
    if not job_lines:
        raise InputError(_why_empty(text), path)
    m = _machine_size(path, processors, header, header_lines)
    table = _parse_table(path, job_lines, line_numbers)
    table, line_numbers, folded = _fold_partial(path, table, line_numbers, partial)
    rules = _Rules(m, size_field, estimate_rule, _status_set(status))
    with collector_paused():
        jobs, skipped, fallback = _build_jobs(table, line_numbers, rules)
    instance = Instance(
        Machine(m, allocation),
        tuple(jobs),
        name=name if name is not None else _stem(path),
        source=Source(path.name, hashlib.sha256(raw).hexdigest(), "swf"),
    )
    check_horizon(instance, path)
    return Trace(
        instance,
        skipped.report(),
        header,
        len(table),
        folded=folded,
        statuses=_status_counts(table[:, _STATUS]),
        estimates_missing=fallback,
    )


def parse_statuses(text: str) -> frozenset[int]:
    """Status codes from a comma-separated list of names (``--status``).

    ``"completed,failed"`` -> ``{1, 0}``. Names are those of
    :data:`STATUS_CODES` (``canceled`` is also accepted); ``all`` alone
    stands for every status, and gives every code including unknown.

    Raises
    ------
    ValueError
        On an empty list or an unknown name, listing the known names.
    """
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if names == ["all"]:
        return frozenset(STATUS_CODES.values())
    known = ", ".join(STATUS_CODES)
    if not names:
        raise ValueError(f"--status: no status given; expected names among {known}")
    codes = set()
    for name in names:
        code = STATUS_CODES.get(name, _STATUS_ALIASES.get(name))
        if code is None:
            raise ValueError(
                f"--status: unknown status {shown(name)}; expected names among "
                f"{known} (or all)"
            )
        codes.add(code)
    return frozenset(codes)


def status_name(code: int) -> str:
    """``"completed"`` for 1, ...; ``"status 7"`` for a code SWF does not define."""
    return STATUS_NAMES.get(code, f"status {code}")


def _status_set(status: Collection[int] | None) -> frozenset[int] | None:
    if status is None:
        return None
    codes = frozenset(status)
    for code in codes:
        if isinstance(code, bool) or not isinstance(code, int):
            raise ValueError(f"status codes must be integers, got {code!r}")
    # Every negative value means "missing" in SWF: -1 stands for all of them.
    return frozenset(-1 if code < 0 else code for code in codes)


def _status_counts(column: np.ndarray) -> dict[int, int]:
    codes, counts = np.unique(np.where(column < 0, -1, column), return_counts=True)
    return dict(zip(codes.astype(np.int64).tolist(), counts.tolist(), strict=True))


# --------------------------------------------------------------------------
# Bytes, text and lines


def _decode(path: Path, raw: bytes) -> str:
    data = strip_bom(decompress(path, raw))
    refuse_utf16(path, data, "an SWF trace")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(
            f"binary file (NUL byte at offset {nul}): not an SWF trace", path
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Old logs may carry Latin-1 names in their comments; job lines must
        # be numbers anyway, so any other byte fails there with a line number.
        return data.decode("latin-1")


def _why_empty(text: str) -> str:
    if not text:
        return "empty file: no job lines"
    if text.strip():
        return "no job lines: the file holds only ';' comments"
    return "no job lines: the file holds only blank lines"


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".swf"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _split_lines(
    text: str,
) -> tuple[dict[str, str], dict[str, int], list[str], list[int]]:
    """Separate header comments and job lines (blank lines are ignored).

    Returns the header, the line number of each header key's first
    occurrence, the stripped job lines and their 1-based line numbers.
    """
    stripped = [line.strip() for line in text.splitlines()]
    # Two comprehensions instead of one loop with appends: this runs once per
    # line of the trace.
    numbers = [no for no, line in enumerate(stripped, 1) if line and line[0] != ";"]
    job_lines = [stripped[no - 1] for no in numbers]
    header: dict[str, str] = {}
    header_lines: dict[str, int] = {}
    last_key: str | None = None
    for no, line in enumerate(stripped, 1):
        if line.startswith(";"):
            last_key = _add_header_line(header, header_lines, line, no, last_key)
        elif line:
            last_key = None
    return header, header_lines, job_lines, numbers


def _add_header_line(
    header: dict[str, str],
    header_lines: dict[str, int],
    line: str,
    number: int,
    last_key: str | None,
) -> str | None:
    # "; Key: value" starts a key; a comment indented by 3 or more spaces
    # continues the previous key (e.g. the second URL of "; Information:").
    match = _HEADER_KEY.fullmatch(line)
    if match:
        key, value = match.group(1), match.group(2).strip()
        if key in header:
            header[key] += "\n" + value
        else:
            header[key] = value
            header_lines[key] = number
        return key
    if last_key is not None and _CONTINUATION.match(line):
        header[last_key] += "\n" + line[1:].strip()
        return last_key
    return None


def _machine_size(
    path: Path,
    processors: int | None,
    header: dict[str, str],
    header_lines: dict[str, int],
) -> int:
    if processors is not None:
        if isinstance(processors, bool) or not isinstance(processors, int):
            raise ValueError(f"processors must be an integer, got {processors!r}")
        if processors < 1:
            raise ValueError(f"processors must be at least 1, got {processors}")
        return processors
    for key in ("MaxProcs", "MaxNodes"):
        if key in header:
            # First token: "MaxProcs: 128 (hypercube)" still means 128.
            value = (header[key].split() or [""])[0]
            return _header_size(path, key, value, header_lines[key])
    raise InputError(
        "machine size unknown: the header has neither MaxProcs nor MaxNodes; "
        "pass --processors",
        path,
    )


def _header_size(path: Path, key: str, value: str, line: int) -> int:
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses;
    # the length is checked before int(), which refuses 4300 digits.
    digits = value.lstrip("0")
    if not (value.isascii() and value.isdigit()) or not digits:
        raise InputError(
            f"header {key}: expected a positive integer, got {shown(value)} "
            "(pass --processors to set the machine size)",
            path,
            line,
        )
    if len(digits) > _MAX_DIGITS or int(digits) > MAX_INTEGER:
        raise InputError(
            f"header {key}: {shown(value)} processors is above the limit 2**53 = "
            f"{MAX_INTEGER} (pass --processors to set the machine size)",
            path,
            line,
        )
    return int(value)


# --------------------------------------------------------------------------
# Numbers


def _parse_table(path: Path, job_lines: list[str], numbers: list[int]) -> np.ndarray:
    """All job lines as an ``(n, 18)`` float64 array of exact values.

    Rounding of time fields and the integer check of the others are applied
    here, so the result holds whole numbers only. Lines are parsed in chunks
    of :data:`_CHUNK` with numpy; a chunk numpy cannot parse cleanly is parsed
    again line by line, which raises at its first bad line. So a bad line at
    the end of a large file costs one numpy pass plus one small chunk in
    Python, not a Python pass over the whole file.
    """
    tables = []
    for first in range(0, len(job_lines), _CHUNK):
        chunk = job_lines[first : first + _CHUNK]
        table = _parse_fast(chunk)
        if table is None:
            table = _parse_slow(path, chunk, numbers[first : first + _CHUNK])
        tables.append(table)
    return tables[0] if len(tables) == 1 else np.concatenate(tables)


def _parse_fast(job_lines: list[str]) -> np.ndarray | None:
    """Parse with numpy; ``None`` when anything looks wrong."""
    try:
        table = np.loadtxt(job_lines, dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        return None
    if table.shape[1] != N_FIELDS or not np.isfinite(table).all():
        return None
    if (np.abs(table) >= _EXACT_LIMIT).any():
        return None
    rounded = sorted(_ROUNDED)
    exact = [c for c in range(N_FIELDS) if c not in _ROUNDED]
    if (table[:, exact] != np.floor(table[:, exact])).any():
        return None
    # Whole values are kept as they are: at or above 2**52, x + 0.5 is not a
    # float and rounds to the even neighbour (2**53 - 1 would become 2**53).
    times = table[:, rounded]
    table[:, rounded] = np.where(times == np.floor(times), times, np.floor(times + 0.5))
    return table


def _parse_slow(path: Path, job_lines: list[str], numbers: list[int]) -> np.ndarray:
    """Parse line by line; raise an :class:`InputError` at the first bad line."""
    rows = [
        _parse_line(path, line, no) for line, no in zip(job_lines, numbers, strict=True)
    ]
    return np.array(rows, dtype=np.float64).reshape(len(rows), N_FIELDS)


def _parse_line(path: Path, line: str, number: int) -> list[int]:
    tokens = line.split()
    if len(tokens) != N_FIELDS:
        raise InputError(f"expected {N_FIELDS} fields, got {len(tokens)}", path, number)
    return [_parse_token(path, number, col, tok) for col, tok in enumerate(tokens)]


def _parse_token(path: Path, number: int, col: int, token: str) -> int:
    field = f"field {col + 1} ({FIELDS[col]})"
    rounded = col in _ROUNDED
    if not _NUMBER.fullmatch(token):
        expected = "a number" if rounded else "an integer"
        raise InputError(
            f"{field}: expected {expected}, got {shown(token)}", path, number
        )
    digits = token.lstrip("+-")
    if digits.isdigit():
        # The length first: int() refuses more than 4300 digits.
        value = int(token) if len(digits) <= _MAX_DIGITS else _TOO_LARGE
    else:
        real = float(token)
        if not rounded and math.isfinite(real) and real != math.floor(real):
            raise InputError(
                f"{field}: expected an integer, got {shown(token)}", path, number
            )
        # Infinity ("1e400") and values past 2**53 are both too large.
        value = _round_half_up(real) if abs(real) < _EXACT_LIMIT else _TOO_LARGE
    if abs(value) >= _EXACT_LIMIT:
        raise InputError(
            f"{field}: value {shown(token)} is too large (the limit is below 2**53)",
            path,
            number,
        )
    return value


def _round_half_up(real: float) -> int:
    """The nearest integer, halves up; whole values exactly (see _parse_fast)."""
    return int(real) if real == math.floor(real) else math.floor(real + 0.5)


def _fold_partial(
    path: Path, table: np.ndarray, numbers: list[int], rule: str
) -> tuple[np.ndarray, list[int], FoldReport]:
    """One row per job: a job's partial-execution lines folded into one.

    Returns the table with one row per job number, in file order (each job
    at the row of its summary line, or of its first line when it has none),
    the line numbers of those rows, and what was folded. Files without a
    repeated job number are returned as they are, at the cost of one
    :func:`numpy.unique`; otherwise every step is a numpy operation over the
    repeated rows (no Python loop per job: raw logs may hold many
    checkpointed jobs).

    Raises
    ------
    InputError
        At the first line that repeats a job number without being a partial
        execution (status 2, 3 or 4) of a job that has at most one summary.
    """
    ids = table[:, 0]
    unique, counts = np.unique(ids, return_counts=True)
    if (counts == 1).all():
        return table, numbers, FoldReport(rule=rule)
    repeated = np.flatnonzero(np.isin(ids, unique[counts > 1]))
    # Rows of each repeated job number, in file order (a stable sort); the
    # groups are the runs of equal ids in that order.
    rows = repeated[np.argsort(ids[repeated], kind="stable")]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ids[rows])) + 1))
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(rows))))
    partial = np.isin(table[rows, _STATUS], PARTIAL_STATUSES)
    _check_duplicates(path, ids, numbers, rows, group, partial)
    folded = _Groups(table, rows, starts, group, partial)
    keep = folded.representatives()
    table = table.copy()
    table[keep] = folded.folded(rule)
    drop = np.zeros(len(ids), dtype=bool)
    drop[rows] = True
    drop[keep] = False
    kept = np.flatnonzero(~drop)
    parts = int(partial.sum())
    report = FoldReport(len(starts), parts, len(rows) - parts, rule)
    return table[kept], [numbers[i] for i in kept.tolist()], report


def _check_duplicates(
    path: Path,
    ids: np.ndarray,
    numbers: list[int],
    rows: np.ndarray,
    group: np.ndarray,
    partial: np.ndarray,
) -> None:
    """Raise at the first line in the file that repeats a job's summary."""
    summary_rows = rows[~partial]
    summary_group = group[~partial]
    # A summary is a duplicate when the one before it (in job, then file
    # order) belongs to the same job.
    again = np.flatnonzero(summary_group[1:] == summary_group[:-1]) + 1
    if not len(again):
        return
    lines = np.asarray(numbers)[summary_rows[again]]
    worst = int(again[np.argmin(lines)])
    first = int(np.flatnonzero(summary_group == summary_group[worst])[0])
    raise InputError(
        f"duplicate job number {int(ids[summary_rows[worst]])} (first on line "
        f"{numbers[int(summary_rows[first])]})",
        path,
        numbers[int(summary_rows[worst])],
    )


@dataclasses.dataclass(frozen=True)
class _Groups:
    """The repeated rows of a table, grouped by job (see :func:`_fold_partial`).

    ``rows`` are table rows sorted by job then file order, ``starts`` the
    index in ``rows`` where each job's lines begin, ``group`` the job of
    each of ``rows`` and ``partial`` whether it is a partial execution. Each
    job has at most one summary (checked before).
    """

    table: np.ndarray
    rows: np.ndarray
    starts: np.ndarray
    group: np.ndarray
    partial: np.ndarray

    def _per_job(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        return ufunc.reduceat(values, self.starts)

    def summary(self) -> np.ndarray:
        """Each job's summary row in the table, -1 when it has none."""
        out = np.full(len(self.starts), -1, dtype=np.int64)
        out[self.group[~self.partial]] = self.rows[~self.partial]
        return out

    def representatives(self) -> np.ndarray:
        """The table row that stands for each job: its summary, else its first."""
        summary = self.summary()
        return np.where(summary >= 0, summary, self.rows[self.starts])

    def folded(self, rule: str) -> np.ndarray:
        """The folded row of each job (module docstring, partial executions)."""
        lines = self.table[self.rows]
        runtime = lines[:, 3]
        parts_runtime = self._per_job(np.add, np.where(self.partial, runtime, 0.0))
        missing = self._per_job(np.logical_or, self.partial & (runtime < 0))
        # A missing part run time makes the sum unknown, not shorter.
        total = np.where(missing, -1.0, parts_runtime)
        has_summary = self.summary() >= 0
        out = self.table[self.representatives()].copy()
        if rule == "sum":
            out[has_summary, 3] = total[has_summary]
        # Jobs of partial lines only: every row of theirs is a part.
        alone = ~has_summary
        submit, wait = lines[:, 1], lines[:, 2]
        first_submit = self._per_job(np.minimum, submit)
        known = alone & (first_submit >= 0)
        first_start = self._per_job(np.minimum, submit + wait)
        waits = self._per_job(np.minimum, wait) >= 0
        out[known, 1] = first_submit[known]
        out[known, 2] = np.where(waits, first_start - first_submit, -1.0)[known]
        out[alone, 3] = total[alone]
        last = np.append(self.starts[1:], len(self.rows)) - 1
        out[alone, _STATUS] = lines[last, _STATUS][alone]
        return out


# --------------------------------------------------------------------------
# Conventions and jobs


@dataclasses.dataclass(frozen=True, slots=True)
class _Rules:
    """The reading conventions :func:`_build_jobs` applies."""

    processors: int
    size_field: str
    estimate_rule: str
    status: frozenset[int] | None


def _build_jobs(
    table: np.ndarray, numbers: list[int], rules: _Rules
) -> tuple[list[Job], SkipCollector, int]:
    """Jobs kept, the skip report, and how many kept jobs have no estimate."""
    col = table.astype(np.int64).T  # col[k] is SWF field k + 1
    submit, runtime = col[1], col[3]
    size = _by_rule(rules.size_field, {"allocated": col[4], "requested": col[7]})
    estimate = _by_rule(rules.estimate_rule, {"requested": col[8], "runtime": runtime})
    status = np.where(col[_STATUS] < 0, -1, col[_STATUS])
    unselected = (
        None
        if rules.status is None
        else ~np.isin(status, np.fromiter(rules.status, dtype=np.int64))
    )
    requested = rules.estimate_rule == "requested"
    reasons = [
        (SKIP_STATUS, unselected),
        (SKIP_SIZE, size <= 0),
        (SKIP_RUNTIME, runtime < 0),
        (SKIP_SUBMIT, submit < 0),
        (SKIP_TOO_LARGE, size > rules.processors),
        (SKIP_ESTIMATE, estimate <= 0 if requested else None),
    ]
    skipped = _skips(reasons, numbers, len(submit))
    keep = np.flatnonzero(~_any_mask(reasons, len(submit)))
    fallback = int((col[8][keep] <= 0).sum()) if rules.estimate_rule == "auto" else 0
    columns = {
        "id": col[0][keep].tolist(),
        "release": submit[keep].tolist(),
        "size": size[keep].tolist(),
        "runtime": runtime[keep].tolist(),
        "estimate": estimate[keep].tolist(),
        "wait": _optional(col[2][keep]),
        "user": _optional(col[11][keep]),
        "group": _optional(col[12][keep]),
        "executable": _optional(col[13][keep]),
        "queue": _optional(col[14][keep]),
        "partition": _optional(col[15][keep]),
        "status": _optional(col[10][keep]),
        "preceding_job": _optional(col[16][keep]),
        "think_time": _optional(col[17][keep]),
    }
    return _make_jobs(columns, len(keep)), skipped, fallback


def _by_rule(rule: str, columns: dict[str, np.ndarray]) -> np.ndarray:
    """The column ``rule`` names; ``auto``: the first of the two ``columns``
    where it is positive, the second elsewhere (a missing value is <= 0)."""
    if rule in columns:
        return columns[rule]
    first, second = columns.values()
    return np.where(first > 0, first, second)


def _any_mask(reasons: list[tuple[str, np.ndarray | None]], n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for _, hit in reasons:
        if hit is not None:
            mask |= hit
    return mask


def _skips(
    reasons: list[tuple[str, np.ndarray | None]], numbers: list[int], n: int
) -> SkipCollector:
    # Each job counts once, under the first reason that applies.
    collector = SkipCollector()
    taken = np.zeros(n, dtype=bool)
    for reason, hit in reasons:
        if hit is None:
            continue
        fresh = hit & ~taken
        taken |= hit
        for row in np.flatnonzero(fresh).tolist():
            collector.add(reason, numbers[row])
    return collector


def _optional(values: np.ndarray) -> list[int | None]:
    """Python ints, with ``None`` for the SWF "missing" marker (negative)."""
    missing = values < 0
    if missing.all():
        return [None] * len(values)
    if not missing.any():
        return values.tolist()
    return [None if v < 0 else v for v in values.tolist()]


_JOB_FIELDS = ("id", "release", "size", "runtime", "estimate", "weight", *EXTRA_FIELDS)


def _make_jobs(columns: dict[str, list], n: int) -> list[Job]:
    """Build :class:`Job` objects from validated columns.

    ``Job.__post_init__`` costs about 4 microseconds per job, more than the
    whole parse. The columns here already satisfy every rule it checks (whole
    numbers as Python ints, ``release >= 0``, ``size >= 1``, ``runtime >= 0``,
    ``estimate >= 0``, weight 1.0), so the slots are filled directly. If
    :class:`Job` ever gains a field this reader does not know, it falls back to
    the validating constructor.
    """
    columns = {**columns, "weight": [1.0] * n}
    if tuple(f.name for f in dataclasses.fields(Job)) != _JOB_FIELDS:
        names = list(columns)
        return [
            Job(**dict(zip(names, row, strict=True)))
            for row in zip(*columns.values(), strict=True)
        ]
    return _fill_slots([columns[name] for name in _JOB_FIELDS])


def _fill_slots(values: list[list]) -> list[Job]:
    # One local per slot setter: this loop runs once per job of the trace.
    (s_id, s_rel, s_size, s_run, s_est, s_wt, s_wait, s_user, s_grp, s_exe,
     s_queue, s_part, s_stat, s_prec, s_think) = (
        Job.__dict__[name].__set__ for name in _JOB_FIELDS
    )  # fmt: skip
    new = object.__new__
    jobs: list[Job] = []
    append = jobs.append
    rows = zip(*values, strict=True)
    for a, b, c, d, e, f, g, h, i, j, k, l_, m, n, o in rows:
        job = new(Job)
        s_id(job, a)
        s_rel(job, b)
        s_size(job, c)
        s_run(job, d)
        s_est(job, e)
        s_wt(job, f)
        s_wait(job, g)
        s_user(job, h)
        s_grp(job, i)
        s_exe(job, j)
        s_queue(job, k)
        s_part(job, l_)
        s_stat(job, m)
        s_prec(job, n)
        s_think(job, o)
        append(job)
    return jobs
