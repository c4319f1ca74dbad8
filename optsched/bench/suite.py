"""Benchmark suites: TOML files naming traces, windows, policies and solvers.

Example (``benchmarks/suites/smoke.toml``)::

    policies = ["fcfs", "easy", "conservative"]
    objectives = ["cmax", "wct"]

    [suite]
    name = "smoke"
    description = "three small KTH windows"

    [[traces]]
    path = "../../../shared/traces/KTH-SP2-1996-2.1-cln.swf"
    sha256 = "fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87"

    [windows]
    kind = "consecutive"
    jobs = 20
    count = 3

    [[solvers]]
    backend = "cpsat"
    time_limit = 5
    workers = 1

Top-level keys (``policies``, ``objectives``, ``seeds``) come before the
first ``[table]``: TOML puts a key written after ``[windows]`` into that
table.

``[suite]``
    ``name`` (required), ``description``.
``[[traces]]``
    ``path`` (relative to the folder of the suite file, whatever the
    current directory; an absolute path is used as it is; ``pwa:NAME``
    names a known archive trace, fetched and cached on first use,
    :mod:`optsched.io.archive`; the file is read
    once when the suite is loaded, and one that is not a trace is refused
    without quoting its lines), ``sha256`` (optional: when given
    the file must match it; when absent it is computed, recorded in every
    result row and reported), and the read options of ``optsched gap``:
    ``format`` (``swf``, ``json``, ``strip``), ``processors`` (machine size
    override) and ``allocation`` (``any`` or ``contiguous``, applied before
    windows are cut); ``moldable`` (a speed-up model, as ``--moldable``
    takes it: every window's jobs become moldable after the window is cut)
    and ``malleable`` (``true``: they may also change their processor
    count while they run; needs ``moldable``); ``machine`` (speeds and SMP
    nodes given to every window, as a
    :class:`~optsched.topology.machines.MachineShape` spec:
    ``"nodes=10x10;tight=2;level=4"``, ``"speeds=16x275,6x825"``); ``site``
    (a site file, relative to the suite's folder: its calendar, queue rules
    and outages are given to every window, :func:`optsched.site.files.apply_site`;
    its digest is part of every task id), ``arrivals`` (``recorded``, the
    default, or ``window-start``: every job of a window is there at its
    start, Mallmann's second mode) and ``chains`` (``true``, the default, or
    ``false``: the job chains of SWF fields 17/18 are ignored, as
    ``--no-chains`` does; part of every task id when ``false``). Every
    window gets these options as a command gets its own:
    :func:`optsched.windows.prepare.prepare`, in the order it documents.
``[windows]``
    A :class:`~optsched.windows.selection.WindowRule` (``kind``, ``jobs``, ``count``,
    ``seed``, ``first``, ``start``, ``end``, ``step``, ``initial_state``);
    absent means ``kind = "whole"``.
``policies``
    Policy specs, as ``optsched simulate`` takes them; each is stored under
    its canonical spec (``sjf`` is ``spt``), and two specs naming one policy
    are an error.
``objectives``
    Objective labels (``cmax``, ``wct``, ``wct:size``, ...).
``[[solvers]]``
    ``backend``, ``time_limit`` (seconds, default 10), ``workers`` (solver
    threads, default 2), as ``optsched gap`` takes them.
``[run]``
    How every policy is simulated, as ``optsched simulate`` and ``gap``
    take it: ``kill_at_estimate`` (``true``: a job overrunning its estimate
    is stopped there; its policy's ratio is then not comparable),
    ``allocation_rule`` (``first-fit`` or ``best-fit``, contiguous
    machines) and ``migration`` (``true``: compact running jobs when no
    contiguous range fits). Each option that is not the default is part of
    the policy tasks' ids.
``[schedules]``
    Schedules made elsewhere, rated beside the policies: each name to a
    file (relative to the suite's folder): a Batsim ``out_jobs.csv``, an
    optsched CSV or JSON schedule, an SWF trace's recorded starts
    (:mod:`optsched.heuristics.rigid.replay`; ``gap --schedule NAME=FILE``).
``seeds``
    Seeds of the random window draws (``windows.kind = "random"`` only): the
    windows of every seed are pooled, and a window drawn by two seeds runs
    once.

Unknown keys and wrong types are errors naming the file, the line and the
key, as are numbers beyond the limits: integers within 2**53 (seeds within
2**63 - 1, the results store's integers), ``workers`` at most
:data:`MAX_WORKERS`, ``time_limit`` at most :data:`MAX_TIME_LIMIT` seconds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from optsched.errors import InputError, shown
from optsched.instance import MAX_INTEGER
from optsched.io import archive
from optsched.io.text import decode_utf8, load_toml
from optsched.models import BACKENDS
from optsched.objective import Objective
from optsched.simulation import RUN_KEYS, RunOptions
from optsched.trace import Trace
from optsched.windows.prepare import ARRIVALS, Preparation, read_source
from optsched.windows.selection import WindowRule

TOP_KEYS = (
    "suite", "traces", "windows", "policies", "objectives", "solvers", "seeds",
    "run", "schedules",
)  # fmt: skip
SUITE_KEYS = ("name", "description")
TRACE_KEYS = (
    "path",
    "sha256",
    "format",
    "processors",
    "allocation",
    "moldable",
    "malleable",
    "machine",
    "site",
    "arrivals",
    "chains",
)
SOLVER_KEYS = ("backend", "time_limit", "workers")
DEFAULT_TIME_LIMIT = 10.0
"""Seconds per solve, ``optsched gap --time-limit`` and ``[[solvers]]`` alike."""
DEFAULT_SOLVER_WORKERS = 2
"""Solver threads per solve (``gap --workers``, ``[[solvers]] workers``): the
bound-raising CP-SAT sub-solvers need a second worker."""
DEFAULT_OBJECTIVES = ("cmax", "wct")
DEFAULT_POLICIES = ("fcfs", "firstfit", "easy", "conservative", "best-package")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SPEC_LENGTH = 100
"""Longest policy spec, objective label or window setting a suite may hold."""
MAX_SEED = 2**63 - 1
"""Seeds are stored in the SQLite results store, whose integers are 64-bit."""
MAX_WORKERS = 1024
"""Solver threads per solve; more is a typo, not a machine."""
MAX_TIME_LIMIT = 10**7
"""Seconds per solve (116 days); larger values overflow timers downstream."""


@dataclass(frozen=True, slots=True)
class TraceRef:
    """One trace of a suite.

    ``path`` is as written in the suite, ``file`` the resolved path, and
    ``sha256`` the file's digest; ``pinned`` says whether the suite gave it
    (and it was checked) or it was computed.
    """

    path: str
    file: Path
    sha256: str
    pinned: bool
    format: str | None = None
    processors: int | None = None
    allocation: str | None = None
    moldable: str | None = None
    malleable: bool = False
    machine: str | None = None
    site: str | None = None
    site_sha256: str | None = None
    arrivals: str | None = None
    chains: bool = True

    def read_options(self) -> dict[str, Any]:
        """The read options given in the suite (part of every task id)."""
        given = {
            "format": self.format,
            "processors": self.processors,
            "allocation": self.allocation,
            "moldable": self.moldable,
            "malleable": self.malleable or None,
            "machine": self.machine,
            "site": self.site_sha256,
            "arrivals": self.arrivals,
            # Only when false: the ids of suites without the key stay as they were.
            "chains": None if self.chains else False,
        }
        return {key: value for key, value in given.items() if value is not None}

    @property
    def preparation(self) -> Preparation:
        """The suite's options as :func:`~optsched.windows.prepare.prepare`
        applies them to every window of this trace (the specs were checked
        when the suite was loaded)."""
        from optsched.moldable.speedup import parse_model
        from optsched.topology.machines import MachineShape

        return Preparation(
            input_format=self.format,
            processors=self.processors,
            allocation=self.allocation,
            moldable=None if self.moldable is None else parse_model(self.moldable),
            malleable=self.malleable,
            site=self.site,
            arrivals=self.arrivals or "recorded",
            chains=self.chains,
            machine=None if self.machine is None else MachineShape.parse(self.machine),
        )


@dataclass(frozen=True, slots=True)
class SolverSpec:
    """An offline back-end run on every window and objective."""

    backend: str
    time_limit: float = DEFAULT_TIME_LIMIT
    workers: int = DEFAULT_SOLVER_WORKERS


@dataclass(frozen=True, slots=True)
class Suite:
    """A parsed suite file (see the module documentation)."""

    name: str
    file: Path
    traces: tuple[TraceRef, ...]
    windows: WindowRule
    policies: tuple[str, ...]
    objectives: tuple[str, ...]
    solvers: tuple[SolverSpec, ...]
    seeds: tuple[int, ...] = ()
    description: str = ""
    run: RunOptions = field(default_factory=RunOptions)

    @property
    def window_rules(self) -> tuple[WindowRule, ...]:
        """The window rule once per seed (the rule itself without seeds)."""
        if not self.seeds:
            return (self.windows,)
        return tuple(replace(self.windows, seed=seed) for seed in self.seeds)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _Located:
    """Raises :class:`InputError` located at the line of a key in the file."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, key: str, table: str = "", index: int = 0) -> int | None:
        """Best-effort line of ``key`` in ``[table]`` (``index``-th ``[[table]]``).

        ``key = ""`` asks for the table header itself.
        """
        current, seen = "", -1
        pattern = re.compile(rf"\s*{re.escape(key)}\s*=") if key else None
        for number, raw in enumerate(self.lines, 1):
            line = raw.strip()
            header = re.fullmatch(r"\[\[?\s*([^\]]+?)\s*\]\]?(\s*#.*)?", line)
            if header:
                current = header.group(1)
                if current == table:
                    seen += 1
                    if pattern is None and seen == index:
                        return number
                continue
            in_table = current == table and (not table or seen == index)
            if pattern is not None and in_table and pattern.match(line):
                return number
        return None

    def error(
        self, reason: str, key: str = "", table: str = "", index: int = 0
    ) -> InputError:
        return InputError(reason, self.path, self.line_of(key, table, index))


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file; check or compute every trace's sha256.

    Raises
    ------
    InputError
        One line naming the suite file, the line when known, and what is
        wrong: bad TOML, an unknown key, a wrong type, a missing trace, a
        sha256 mismatch, an unknown objective or window rule.
    """
    path = Path(path)
    READ_AT_LOAD.clear()  # only the last suite's traces wait for their run
    text = _suite_text(path)
    data = load_toml(text, path)
    try:
        return _parse(data, _Located(path, text))
    except RecursionError:
        # Dotted keys nest tables without limit; no suite key is that deep.
        raise InputError("a key is nested too deeply", path) from None


def _suite_text(path: Path) -> str:
    if path.exists() and not path.is_file() and not path.is_dir():
        # A device or a pipe (/dev/zero) may never end.
        raise InputError("cannot read suite: not a regular file", path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(
            f"cannot read suite: {error.strerror or error}", path
        ) from None
    return decode_utf8(path, raw, "a suite (TOML)")


def _parse(data: dict[str, Any], where: _Located) -> Suite:
    _no_unknown(data, TOP_KEYS, where, "")
    table = _table(data, "suite", where, required=True)
    _no_unknown(table, SUITE_KEYS, where, "suite")
    name = _string(table, "name", where, "suite", required=True)
    if not name.strip():
        raise where.error("[suite] name must not be empty", "name", "suite")
    windows = _windows(data, where)
    seeds = _seeds(data, windows, where)
    policies = _policies(data, where)
    objectives = _objectives(data, where)
    solvers = _solvers(data, where)
    if not policies and not solvers:
        raise where.error(
            "the suite has no policies and no [[solvers]]: nothing to run"
        )
    return Suite(
        name=name,
        file=where.path,
        traces=_traces(data, where),
        windows=windows,
        policies=policies,
        objectives=objectives,
        solvers=solvers,
        seeds=seeds,
        description=_string(table, "description", where, "suite") or "",
        run=_run_options(data, where),
    )


def _run_options(data: Mapping[str, Any], where: _Located) -> RunOptions:
    from optsched.heuristics import ALLOCATION_RULES

    table = _table(data, "run", where)
    _no_unknown(table, RUN_KEYS, where, "run")
    flags = {}
    for key in ("kill_at_estimate", "migration"):
        value = table.get(key, False)
        if not isinstance(value, bool):
            raise where.error(
                f"[run] {key} must be true or false, got {shown(value)}", key, "run"
            )
        flags[key] = value
    rule = _string(table, "allocation_rule", where, "run") or "first-fit"
    if rule not in ALLOCATION_RULES:
        raise where.error(
            f"[run] allocation_rule must be one of {', '.join(ALLOCATION_RULES)}, "
            f"got {shown(rule)}",
            "allocation_rule",
            "run",
        )
    return RunOptions(allocation_rule=rule, **flags)


def _no_unknown(
    table: Mapping[str, Any],
    known: Sequence[str],
    where: _Located,
    name: str,
    index: int = 0,
) -> None:
    for key in table:
        if key not in known:
            what = f"[{name}]" if name else "the top level"
            hint = ""
            if name and key in TOP_KEYS:
                hint = (
                    f" ({shown(key)} belongs at the top level, before the first "
                    "[table])"
                )
            raise where.error(
                f"unknown key {shown(key)} in {what}; valid keys: "
                f"{', '.join(known)}{hint}",
                key,
                name,
                index,
            )


def _table(
    data: Mapping[str, Any], key: str, where: _Located, required: bool = False
) -> dict[str, Any]:
    if key not in data:
        if required:
            raise where.error(f"missing [{key}] table")
        return {}
    value = data[key]
    if not isinstance(value, dict):
        raise where.error(f"{key!r} must be a [{key}] table", key)
    return value


def _string(
    table: Mapping[str, Any],
    key: str,
    where: _Located,
    name: str,
    index: int = 0,
    required: bool = False,
) -> str:
    if key not in table:
        if required:
            raise where.error(f"[{name}] needs {key!r}", "", name, index)
        return ""
    value = table[key]
    if not isinstance(value, str):
        raise where.error(
            f"[{name}] {key} must be a string, got {shown(value)}", key, name, index
        )
    return value


def _strings(data: Mapping[str, Any], key: str, where: _Located) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(f"{key} must be a list of strings, got {shown(value)}", key)
    for text in value:
        # Specs and labels are short; the parsers' messages quote them whole.
        if len(text) > _SPEC_LENGTH or not text.isprintable():
            raise where.error(f"{key}: {shown(text)} is not a valid entry", key)
    duplicates = sorted({v for v in value if value.count(v) > 1})
    if duplicates:
        raise where.error(f"{key}: {', '.join(duplicates)} listed twice", key)
    return tuple(value)


def _schedules(data: Mapping[str, Any], where: _Located) -> tuple[str, ...]:
    """``[schedules]``: each name to a schedule file (relative to the suite's
    folder), as the policy spec that rates it
    (:mod:`optsched.heuristics.rigid.replay`)."""
    table = _table(data, "schedules", where)
    specs = []
    for name in table:
        file = _string(table, name, where, "schedules")
        path = Path(file) if Path(file).is_absolute() else where.path.parent / file
        if not _is_file(path):
            raise where.error(f"[schedules] {name}: no such file {shown(file)}", name)
        specs.append(f"schedule:name={name},file={path.resolve()}")
    return tuple(specs)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, false for a name the system refuses (too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _policies(data: Mapping[str, Any], where: _Located) -> tuple[str, ...]:
    from optsched.heuristics import parse_policy

    specs = _strings(data, "policies", where) + _schedules(data, where)
    canonical: dict[str, str] = {}
    for spec in specs:
        try:
            name = parse_policy(spec).spec
        except ValueError as error:
            raise where.error(f"policies: {error}", "policies") from None
        if name in canonical:
            raise where.error(
                f"policies: {shown(canonical[name])} and {shown(spec)} are one policy "
                f"({name})",
                "policies",
            )
        canonical[name] = spec
    return tuple(canonical)


def _objectives(data: Mapping[str, Any], where: _Located) -> tuple[str, ...]:
    if "objectives" not in data:
        raise where.error('missing \'objectives\' (e.g. objectives = ["cmax", "wct"])')
    labels = []
    for text in _strings(data, "objectives", where):
        try:
            labels.append(Objective.parse(text).label)
        except ValueError as error:
            raise where.error(f"objectives: {error}", "objectives") from None
    if not labels:
        raise where.error("objectives must not be empty", "objectives")
    if len(set(labels)) < len(labels):
        raise where.error(
            f"objectives: {labels} name one objective twice", "objectives"
        )
    return tuple(labels)


def _windows(data: Mapping[str, Any], where: _Located) -> WindowRule:
    if "windows" not in data:
        return WindowRule("whole")
    table = _table(data, "windows", where)
    for key in table:
        if key in TOP_KEYS:
            raise where.error(
                f"unknown key {shown(key)} in [windows] ({shown(key)} belongs at "
                "the top level, before the first [table])",
                key,
                "windows",
            )
    _no_unknown(table, [f.name for f in fields(WindowRule)], where, "windows")
    for key, value in table.items():
        # Checked here so that the rule's own messages never quote a long
        # value: every setting is a short string or an integer.
        if not isinstance(value, int | str) or (
            isinstance(value, str)
            and (len(value) > _SPEC_LENGTH or not value.isprintable())
        ):
            raise where.error(
                f"[windows] {key}: expected an integer or a short string, got "
                f"{shown(value)}",
                key,
                "windows",
            )
        if isinstance(value, int) and not _integer_in(value, -MAX_INTEGER, MAX_INTEGER):
            raise where.error(
                f"[windows] {key}: {shown(value)} is beyond the limit 2**53",
                key,
                "windows",
            )
    try:
        return WindowRule.from_mapping(table)
    except (TypeError, ValueError) as error:
        # Locate the first key the message names (best effort).
        named = (k for k in table if re.search(rf"\b{k}\b", str(error)))
        raise where.error(f"[windows]: {error}", next(named, ""), "windows") from None


def _seeds(
    data: Mapping[str, Any], windows: WindowRule, where: _Located
) -> tuple[int, ...]:
    if "seeds" not in data:
        return ()
    seeds = data["seeds"]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(_integer_in(s, 0, MAX_SEED) for s in seeds)
    ):
        raise where.error(
            f"seeds must be a non-empty list of integers in [0, 2**63 - 1], got "
            f"{shown(seeds)}",
            "seeds",
        )
    if windows.kind != "random":
        raise where.error(
            f"seeds apply to random windows only ([windows] kind is {windows.kind!r})",
            "seeds",
        )
    if len(set(seeds)) < len(seeds):
        raise where.error("seeds: a seed is listed twice", "seeds")
    return tuple(seeds)


def _integer_in(value: object, low: int, high: int) -> bool:
    """``value`` is an int (not a bool) in ``[low, high]``."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    )


def _whole_number(
    table: Mapping[str, Any],
    key: str,
    most: tuple[int, str],
    where: _Located,
    name: str,
    index: int,
    default: int | None = None,
) -> int:
    """``table[key]`` (``default`` when absent) of the ``index``-th
    ``[[name]]``: an integer from 1 to ``most`` (its value and how the
    message writes it); the error names the key's line otherwise."""
    value = table.get(key, default)
    high, written = most
    if not _integer_in(value, 1, high):
        raise where.error(
            f"[[{name}]] {key} must be an integer in [1, {written}], "
            f"got {shown(value)}",
            key,
            name,
            index,
        )
    return int(value)


def _array_of_tables(
    data: Mapping[str, Any], key: str, where: _Located
) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise where.error(f"{key} must be written as [[{key}]] tables", key)
    return value


def _traces(data: Mapping[str, Any], where: _Located) -> tuple[TraceRef, ...]:
    tables = _array_of_tables(data, "traces", where)
    if not tables:
        raise where.error("the suite has no [[traces]]")
    refs = [_trace(table, index, where) for index, table in enumerate(tables)]
    seen: dict[str, str] = {}
    for index, ref in enumerate(refs):
        if ref.sha256 in seen:
            raise where.error(
                f"trace {ref.path} is the same file as {seen[ref.sha256]} "
                f"(sha256 {ref.sha256[:12]}...)",
                "path",
                "traces",
                index,
            )
        seen[ref.sha256] = ref.path
    return tuple(refs)


def _trace(table: dict[str, Any], index: int, where: _Located) -> TraceRef:
    _no_unknown(table, TRACE_KEYS, where, "traces", index)

    def refuse(reason: str, key: str = "path") -> InputError:
        return where.error(reason, key, "traces", index)

    given = _string(table, "path", where, "traces", index, required=True)
    if not given or "\x00" in given:
        raise refuse(f"[[traces]] path {shown(given)} is not a file name")
    # Relative to the suite's folder, not the current one: a suite runs
    # alike from anywhere. An absolute path stays as it is; a pwa: name is
    # the cached copy of a known trace, fetched on first use.
    try:
        if given.startswith(archive.PREFIX):
            file = archive.resolve_trace_path(given)
        else:
            file = (where.path.parent / given).resolve()
        is_file = file.is_file()
    except InputError as error:  # an unknown name, a failed fetch
        raise refuse(f"[[traces]] path {shown(given)}: {error.reason}") from None
    except (OSError, RuntimeError) as error:  # a name too long, a symlink loop
        reason = getattr(error, "strerror", None) or str(error)
        raise refuse(f"[[traces]] path {shown(given)}: {reason}") from None
    if not is_file:
        raise refuse(f"trace not found: {shown(given)} ({shown(str(file), 120)})")
    try:
        actual = sha256_of(file)
    except OSError as error:
        raise refuse(
            f"trace {shown(given)}: cannot read file: {error.strerror or error}"
        ) from None
    options = _read_options(table, index, where)
    _check_trace(given, file, options, index, where)
    options |= _model_options(table, index, where)
    if "sha256" not in table:
        return TraceRef(given, file, actual, False, **options)
    pinned = _string(table, "sha256", where, "traces", index).strip().lower()
    if not _SHA256.fullmatch(pinned):
        raise refuse(
            f"trace {shown(given)}: sha256 must be 64 hex digits, got {shown(pinned)}",
            "sha256",
        )
    if pinned != actual:
        raise refuse(
            f"trace {given}: sha256 mismatch: the suite says {pinned}, the file "
            f"{file} has {actual}",
            "sha256",
        )
    return TraceRef(given, file, actual, True, **options)


def _check_trace(
    given: str, file: Path, options: dict[str, Any], index: int, where: _Located
) -> None:
    """Refuse a file that is not a trace, without quoting it.

    The reader's own message quotes the offending line; for a suite that
    names, say, ``/etc/passwd`` this would print the lines of a file the
    suite's author may not own. Only the line number is kept: ``optsched
    info FILE`` shows the reason to whoever may read the file.
    """
    reading = Preparation(
        input_format=options.get("format"),
        processors=options.get("processors"),
        allocation=options.get("allocation"),
    )
    try:
        trace = read_source(file, reading)
    except (ValueError, RecursionError, MemoryError) as error:  # InputError too
        line = getattr(error, "line", None)
        at = f" (first error at line {line} of the file)" if line else ""
        raise where.error(
            f"trace {given}: not a readable "
            f"{options.get('format', 'swf, json or strip')} trace{at}; "
            f"'optsched info' on the file shows why",
            "path",
            "traces",
            index,
        ) from None
    # Kept for the run that follows, so that the trace is read once.
    READ_AT_LOAD[_read_key(file, options)] = trace


READ_AT_LOAD: dict[tuple[Path, tuple[tuple[str, Any], ...]], Trace] = {}
"""Traces read while a suite was validated, taken (once) by
:func:`take_read_trace` when the run reads them."""


def _read_key(
    file: Path, options: dict[str, Any]
) -> tuple[Path, tuple[tuple[str, Any], ...]]:
    return file, tuple(sorted((k, v) for k, v in options.items() if v is not None))


def take_read_trace(file: Path, options: dict[str, Any]) -> Trace | None:
    """The trace read when the suite was loaded with these options, if any.

    The entry is removed: a later run reads the file again (it may have
    changed; its sha256 is checked when the suite is loaded).
    """
    return READ_AT_LOAD.pop(_read_key(file, options), None)


def _read_options(table: dict[str, Any], index: int, where: _Located) -> dict[str, Any]:
    from optsched.instance import ALLOCATIONS
    from optsched.io import INSTANCE_FORMATS

    options: dict[str, Any] = {}
    for key, choices in (("format", INSTANCE_FORMATS), ("allocation", ALLOCATIONS)):
        if key in table:
            options[key] = _trace_choice(table, key, choices, where, index)
    if "processors" in table:
        options["processors"] = _whole_number(
            table, "processors", (MAX_INTEGER, "2**53"), where, "traces", index
        )
    return options


def _trace_choice(
    table: dict[str, Any],
    key: str,
    choices: Sequence[str],
    where: _Located,
    index: int,
) -> str:
    """``table[key]`` of the ``index``-th ``[[traces]]``: one of ``choices``."""
    value = _string(table, key, where, "traces", index)
    if value not in choices:
        raise where.error(
            f"[[traces]] {key} {shown(value)} is not one of {', '.join(choices)}",
            key,
            "traces",
            index,
        )
    return value


def _site_options(table: dict[str, Any], index: int, where: _Located) -> dict[str, Any]:
    """``site`` (a readable site file, relative to the suite's folder),
    ``arrivals`` and ``chains``."""
    from optsched.site.files import read_site

    options: dict[str, Any] = {}
    if "chains" in table and not _boolean(table, "chains", index, where):
        options["chains"] = False
    if "arrivals" in table:
        value = _trace_choice(table, "arrivals", ARRIVALS, where, index)
        if value != "recorded":
            options["arrivals"] = value
    if "site" in table:
        given = _string(table, "site", where, "traces", index)
        file = (where.path.parent / given).resolve()
        if not _is_file(file):
            reason = f"[[traces]] site file not found: {shown(given)}"
            raise where.error(reason, "site", "traces", index)
        read_site(file)  # a bad site file stops here, with its own line
        options["site"] = str(file)
        options["site_sha256"] = sha256_of(file)
    return options


def _model_options(
    table: dict[str, Any], index: int, where: _Located
) -> dict[str, Any]:
    """``moldable`` (a valid speed-up model spec), ``malleable`` and
    ``machine`` (a valid machine shape spec)."""
    from optsched.moldable.speedup import parse_model
    from optsched.topology.machines import MachineShape

    options: dict[str, Any] = {}
    options |= _site_options(table, index, where)
    if "machine" in table:
        spec = _string(table, "machine", where, "traces", index)
        try:
            options["machine"] = MachineShape.parse(spec).spec
        except ValueError as error:
            raise where.error(
                f"[[traces]] machine: {error}", "machine", "traces", index
            ) from None
    if "moldable" in table:
        spec = _string(table, "moldable", where, "traces", index)
        try:
            options["moldable"] = parse_model(spec).spec
        except ValueError as error:
            raise where.error(
                f"[[traces]] moldable: {error}", "moldable", "traces", index
            ) from None
    if _boolean(table, "malleable", index, where):
        if "moldable" not in options:
            raise where.error(
                "[[traces]] malleable needs moldable (a speed-up model)",
                "malleable",
                "traces",
                index,
            )
        options["malleable"] = True
    return options


def _boolean(table: dict[str, Any], key: str, index: int, where: _Located) -> bool:
    """``[[traces]] key`` as ``true`` or ``false`` (``False`` when absent)."""
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise where.error(
            f"[[traces]] {key} must be true or false, got {shown(value)}",
            key,
            "traces",
            index,
        )
    return value


def _solvers(data: Mapping[str, Any], where: _Located) -> tuple[SolverSpec, ...]:
    specs = []
    for index, table in enumerate(_array_of_tables(data, "solvers", where)):
        _no_unknown(table, SOLVER_KEYS, where, "solvers", index)
        backend = _string(table, "backend", where, "solvers", index, required=True)
        time_limit = table.get("time_limit", DEFAULT_TIME_LIMIT)
        if (
            not isinstance(time_limit, int | float)
            or isinstance(time_limit, bool)
            or not 0 < time_limit <= MAX_TIME_LIMIT  # NaN fails too
        ):
            raise where.error(
                f"[[solvers]] time_limit must be a positive number of seconds, "
                f"at most {MAX_TIME_LIMIT}, got {shown(time_limit)}",
                "time_limit",
                "solvers",
                index,
            )
        workers = _whole_number(
            table,
            "workers",
            (MAX_WORKERS, str(MAX_WORKERS)),
            where,
            "solvers",
            index,
            default=DEFAULT_SOLVER_WORKERS,
        )
        if backend not in BACKENDS:
            raise where.error(
                f"[[solvers]] unknown back-end {shown(backend)}; valid back-ends: "
                f"{', '.join(BACKENDS)}",
                "backend",
                "solvers",
                index,
            )
        specs.append(SolverSpec(backend, float(time_limit), workers))
    if len(set(specs)) < len(specs):
        raise where.error("[[solvers]] lists the same back-end settings twice")
    return tuple(specs)
