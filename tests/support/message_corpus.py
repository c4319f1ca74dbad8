"""Bad input files, one per format and kind of fault, and where each is wrong.

The message audit of issue 32: a command refusing a file because of its
content must say where, ``file:line: reason`` (``file: reason`` for a fault
of the whole file: empty, binary, a broken gzip stream). Each
:class:`MessageCase` is a valid seed file with one line replaced (or a whole
file spoiled), the command that reads it, and the location its one error
line must start with. Used by ``tests/cli/test_reliability_messages.py``
(in-process) and ``benchmarks/reliability_campaign.py`` (one process per
case, with the output faults of a full disk on top).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from support.paths import DATA, INSTANCES

FORMATS = (
    "swf",
    "swf.gz",
    "native",
    "batsim workload",
    "strip",
    "site",
    "suite",
    "co-reservation request",
    "co-reservation scenario",
    "schedule CSV",
    "schedule JSON",
    "Batsim schedule",
)
"""The formats of the corpus (:attr:`MessageCase.fmt`)."""

WHOLE_FILE = None
"""The ``line`` of a fault of the whole file: the message names the file only."""


@dataclass(frozen=True)
class MessageCase:
    """One command refusing one spoiled file."""

    fmt: str
    fault: str
    args: tuple[str, ...]
    source: Path
    line: int | None

    @property
    def name(self) -> str:
        return f"{self.fmt}: {self.fault}"

    @property
    def prefix(self) -> str:
        """How the error line (after ``optsched: error: ``) must start."""
        return f"{self.source}:" if self.line is None else f"{self.source}:{self.line}:"


ERROR = "optsched: error: "


def located(case: MessageCase, stderr: str) -> bool:
    """Whether the last line of ``stderr`` is an error located as ``case`` says."""
    lines = stderr.strip().splitlines()
    last = lines[-1] if lines else ""
    return last.startswith(ERROR + case.prefix)


def unlocated_reason(stderr: str) -> str:
    """The error line of ``stderr`` without the prefix, for reports."""
    lines = stderr.strip().splitlines()
    return (lines[-1] if lines else "").removeprefix(ERROR)


class _Fault(NamedTuple):
    """The seed's ``line`` (1-based) with its first ``old`` replaced by
    ``new``; ``where``: the line the message must name (``0``: ``line``
    itself, :data:`WHOLE_FILE`: the file only)."""

    kind: str
    line: int
    old: str
    new: str
    where: int | None = 0


@dataclass(frozen=True)
class _Format:
    """A seed file, how to read it, and its faults by line.

    ``bad_byte_line``: the line given a Latin-1 byte.
    """

    name: str
    file_name: str
    seed: str
    command: Callable[[Path], list[str]]
    faults: tuple[_Fault, ...]
    whole_file: tuple[str, ...] = ("empty", "binary", "bad UTF-8")
    bad_byte_line: int = 2


SWF_SEED = """; MaxProcs: 4
; MaxJobs: 4
1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1
2 5 -1 5 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1
3 7 -1 8 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1
4 9 -1 3 2 -1 -1 2 5 -1 1 1 1 1 1 1 -1 -1
"""

SITE_SEED = """[site]
name = "audit"
processors = 100
monday_offset = 0
start_date = "2024-01-01"
holidays = ["2024-01-02"]

[[batch]]
days = ["mon", "tue"]
from = "08:00"
to = "18:00"
processors = 50

[[outage]]
start = 1000
end = 2000
processors = 10
"""

SCENARIO_SEED = """[scenario]
name = "audit"

[workload]
trace = "log.swf"
clusters = 2
weeks = 1
cap = 8
merge_below = 2

[requests]
kind = "R1"
seed = 3
probability = 0.5

[prices]
scenario = "cheap-weekends"
"""


def _seed(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _log_swf(folder: Path) -> None:
    lines = ["; MaxProcs: 8"]
    for k in range(1, 40):
        fields = [k, 600 * k, -1, 300, 1 + k % 8, -1, -1, 1 + k % 8, 400]
        lines.append(" ".join(map(str, [*fields, -1, 1, 1, 1, 1, 1, 1, -1, -1])))
    (folder / "log.swf").write_text("\n".join(lines) + "\n")


def _formats(folder: Path) -> list[_Format]:
    instance = DATA / "schedules" / "instance.json"
    kth = INSTANCES / "kth_20.json"
    store = folder / "audit.sqlite"
    return [
        _Format(
            "swf",
            "t.swf",
            SWF_SEED,
            lambda p: ["info", str(p)],
            (
                _Fault("a word for a number", 4, "2 5 -1", "2 x -1"),
                _Fault("a missing field", 5, " -1 1 1 1 1 1 1 -1 -1", ""),
                _Fault("a fractional size", 3, "10 2 -1", "10 2.5 -1"),
                _Fault("a number of 2**64", 6, "4 9 ", "4 18446744073709551616 "),
                _Fault("a NaN run time", 4, "-1 5 1", "-1 nan 1"),
                _Fault("a bad MaxProcs", 1, "4", "many"),
            ),
            bad_byte_line=3,
        ),
        _Format(
            "native",
            "i.json",
            _seed(instance),
            lambda p: ["info", str(p)],
            (
                _Fault("a JSON syntax error", 7, '"release": 0,', '"release": 0'),
                _Fault("a word for a number", 8, '"size": 2', '"size": "two"'),
                _Fault("a size above the machine", 9, '"size": 4', '"size": 40'),
                _Fault("an unknown key", 10, "1.0}", '1.0, "colour": 1}'),
                _Fault("a missing runtime", 8, '"runtime": 5, ', ""),
                _Fault("a duplicate id", 8, '"id": 2', '"id": 1'),
            ),
        ),
        _Format(
            "batsim workload",
            "w.json",
            _batsim_workload(instance),
            lambda p: ["info", str(p)],
            (
                _Fault("a word for a number", 4, '"res": 2', '"res": "two"'),
                _Fault("an unknown profile", 5, "delay_5", "nowhere"),
                _Fault("a negative submit time", 6, '"subtime": 3', '"subtime": -3'),
                _Fault("a JSON syntax error", 2, "4,", "4", where=3),
            ),
        ),
        _Format(
            "strip",
            "s.txt",
            _seed(DATA / "strip" / "ids_10x9.txt"),
            lambda p: ["info", str(p)],
            (
                _Fault("a word for a number", 4, "4 4", "four 4"),
                _Fault("a missing field", 5, "5 3", "5"),
                _Fault("an item wider than the strip", 6, "5 3", "50 3"),
                _Fault("a negative height", 7, "10 2", "10 -2"),
                _Fault("a bad strip line", 2, "9", "nine"),
                _Fault("a count that disagrees", 1, "5", "7"),
            ),
        ),
        _Format(
            "site",
            "site.toml",
            SITE_SEED,
            lambda p: ["info", str(kth), "--site", str(p)],
            (
                _Fault("a TOML syntax error", 10, '"08:00"', "08:00"),
                _Fault("a word for a number", 3, "100", '"many"'),
                _Fault("an unknown key", 4, "monday", "mondy"),
                _Fault("a bad day", 9, '"tue"', '"funday"'),
                _Fault("a bad time", 11, "18:00", "25:61"),
                _Fault("a bad date", 5, "2024-01-01", "2024-13-45"),
                _Fault("batch above the machine", 12, "50", "500"),
                _Fault("an outage ending before it starts", 16, "2000", "500"),
                _Fault("an infinite number", 3, "100", "inf"),
                _Fault("holidays not a list", 6, '["2024-01-02"]', '"2024-01-02"'),
                _Fault(
                    "a negative user limit",
                    4,
                    "monday_offset = 0",
                    "user_limit_hours = -5",
                ),
                _Fault("a holiday that is no date", 6, "01-02", "02-30"),
                _Fault(
                    "a start date beyond time_t", 5, '"2024-01-01"', "99999999999999"
                ),
                _Fault(
                    "an infinite user limit",
                    4,
                    "monday_offset = 0",
                    "user_limit_hours = inf",
                ),
            ),
            whole_file=("binary", "bad UTF-8"),  # an empty site: no calendar
        ),
        _Format(
            "suite",
            "suite.toml",
            _seed(DATA / "suites" / "tiny.toml"),
            lambda p: ["bench", str(p), "--store", str(store)],
            (
                _Fault("a TOML syntax error", 18, "= ", "= = "),
                _Fault("a word for a number", 17, "6", '"six"'),
                _Fault("a negative count", 18, "3", "-3"),
                _Fault("an unknown key", 16, "kind", "kindd"),
                _Fault("an unknown policy", 4, "easy", "nope"),
                _Fault("a trace that is absent", 12, "tiny", "absent"),
                _Fault("a wrong sha256", 13, "9e14461f", "00000000"),
                _Fault("an unknown back-end", 21, "cpsat", "nope"),
                _Fault("an unknown objective", 5, "wct", "nope"),
                _Fault("an unknown window kind", 16, "consecutive", "sideways"),
                _Fault("a negative time limit", 22, "10", "-10"),
                _Fault("zero workers", 23, "1", "0"),
            ),
        ),
        _Format(
            "co-reservation request",
            "r.json",
            _seed(DATA / "coreserve" / "two_clusters.json"),
            lambda p: ["coreserve", "optimum", str(p)],
            (
                _Fault("a JSON syntax error", 5, '"processors":', '"processors"'),
                _Fault("a word for a number", 5, "8", '"eight"'),
                _Fault("a negative size", 5, "8", "-8"),
                _Fault("an unknown key", 4, '"A",', '"A", "colour": 1,'),
                _Fault("a short busy row", 6, "57600, 8", "57600"),
                _Fault("a deadline before the start", 19, "68400", "100"),
                _Fault("a duration of zero", 20, "1800", "0"),
                _Fault("a short price row", 7, "[0, 0, 8, 1]", "[0, 0, 8]"),
            ),
        ),
        _Format(
            "co-reservation scenario",
            "scenario.toml",
            SCENARIO_SEED,
            lambda p: ["coreserve", "simulate", str(p)],
            (
                _Fault("a TOML syntax error", 7, "1", ""),
                _Fault("a word for a number", 6, "2", '"two"'),
                _Fault("a zero cluster count", 6, "2", "0"),
                _Fault("an unknown key", 8, "cap", "capp"),
                _Fault("an unknown price scenario", 17, "cheap-weekends", "free-beer"),
                _Fault("a trace that is absent", 5, "log", "absent"),
                _Fault("a probability above 1", 14, "0.5", "2"),
                _Fault("a negative merge threshold", 9, "2", "-5"),
                _Fault("an unknown request kind", 12, "R1", "R9"),
                _Fault("a huge cluster count", 6, "2", "100000000"),
                _Fault("a negative week count", 7, "1", "-1"),
                _Fault("a word for a seed", 13, "3", '"x"'),
            ),
        ),
        _Format(
            "schedule CSV",
            "s.csv",
            _seed(DATA / "schedules" / "golden.csv"),
            lambda p: ["check", str(instance), str(p)],
            (
                _Fault("a word for a number", 3, "1,0,", "1,zero,"),
                _Fault("a missing field", 4, ",2-3,0", ""),
                _Fault("a bad processor range", 3, "0-1", "0-x"),
                _Fault("a killed flag of 2", 5, "2,0", "2,2"),
                _Fault("a duplicate job", 5, "4,", "1,"),
                _Fault("a bad header", 2, "start", "begin", where=WHOLE_FILE),
            ),
        ),
        _Format(
            "schedule JSON",
            "s.json",
            _seed(DATA / "schedules" / "golden.json"),
            lambda p: ["check", str(instance), str(p)],
            (
                _Fault("a JSON syntax error", 6, '"start": 0,', '"start": 0'),
                _Fault("a word for a number", 7, '"start": 0', '"start": "zero"'),
                _Fault("an unknown key", 8, '"2"', '"2", "colour": 1'),
                _Fault("a bad processor range", 6, "0-1", "0-x"),
                _Fault("a killed flag not a boolean", 9, "true", '"yes"'),
            ),
        ),
        _Format(
            "Batsim schedule",
            "out_jobs.csv",
            _seed(DATA / "schedules" / "golden_batsim.csv"),
            lambda p: ["check", str(instance), str(p)],
            (
                _Fault("a word for a number", 2, "SUCCESSFULLY,0", "SUCCESSFULLY,zero"),
                _Fault(
                    "an unknown final state", 3, "COMPLETED_SUCCESSFULLY", "EXPLODED"
                ),
                _Fault("an execution time that disagrees", 3, "0,5,5", "0,7,5"),
                _Fault("a bad allocated range", 4, "inf,2,", "inf,x,"),
                _Fault("a missing column", 1, ",requested", "", where=WHOLE_FILE),
            ),
        ),
    ]


def _batsim_workload(instance: Path) -> str:
    """The Batsim workload of the schedules' instance, one job per line."""
    data = json.loads(instance.read_text())
    jobs = [
        f'    {{"id": "{j["id"]}", "subtime": {j["release"]}, "walltime": '
        f'{j["estimate"]}, "res": {j["size"]}, "profile": "delay_{j["runtime"]}"}}'
        for j in data["jobs"]
    ]
    profiles = sorted({j["runtime"] for j in data["jobs"]}, reverse=True)
    profile_lines = [
        f'    "delay_{r}": {{"type": "delay", "delay": {r}}}' for r in profiles
    ]
    return (
        '{\n  "nb_res": 4,\n  "jobs": [\n'
        + ",\n".join(jobs)
        + '\n  ],\n  "profiles": {\n'
        + ",\n".join(profile_lines)
        + "\n  }\n}\n"
    )


def _spoiled(text: str, fault: _Fault) -> str:
    lines = text.splitlines()
    line = lines[fault.line - 1]
    assert fault.old in line, (fault, line)  # the corpus's own check
    lines[fault.line - 1] = line.replace(fault.old, fault.new, 1)
    return "\n".join(lines) + "\n"


def _whole_file(fmt: _Format, kind: str, path: Path) -> int | None:
    """Spoil ``path`` as ``kind`` says; the line the message must name."""
    if kind == "empty":
        path.write_bytes(b"")
        return WHOLE_FILE
    if kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
        return WHOLE_FILE
    lines = fmt.seed.encode("utf-8").split(b"\n")
    lines[fmt.bad_byte_line - 1] += b" \xe9"
    path.write_bytes(b"\n".join(lines))
    return fmt.bad_byte_line


def message_corpus(folder: Path) -> list[MessageCase]:
    """Write every spoiled file into ``folder``; the cases reading them."""
    _log_swf(folder)
    shutil.copy(DATA / "suites" / "tiny.swf", folder / "tiny.swf")
    cases: list[MessageCase] = []
    for number, fmt in enumerate(_formats(folder)):
        stem, dot, suffix = fmt.file_name.partition(".")
        for k, fault in enumerate(fmt.faults):
            path = folder / f"{stem}_{number}_{k}{dot}{suffix}"
            path.write_text(_spoiled(fmt.seed, fault))
            expected = fault.line if fault.where == 0 else fault.where
            cases.append(
                MessageCase(fmt.name, fault.kind, (*fmt.command(path),), path, expected)
            )
        for kind in fmt.whole_file:
            path = (
                folder
                / f"{stem}_{number}_{re.sub(r'[^a-z0-9]', '', kind)}{dot}{suffix}"
            )
            expected = _whole_file(fmt, kind, path)
            cases.append(
                MessageCase(fmt.name, kind, (*fmt.command(path),), path, expected)
            )
    cases += _gzip_cases(folder)
    return cases


def _gzip_cases(folder: Path) -> list[MessageCase]:
    """A gzip stream cut short, and one whose text is bad at line 3."""
    whole = gzip.compress(SWF_SEED.encode())
    cut = folder / "cut.swf.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    bad = folder / "bad.swf.gz"
    spoiled = _spoiled(SWF_SEED, _Fault("", 3, " 10 ", " ten "))
    bad.write_bytes(gzip.compress(spoiled.encode()))
    return [
        MessageCase("swf.gz", "a stream cut short", ("info", str(cut)), cut, None),
        MessageCase("swf.gz", "a word for a number", ("info", str(bad)), bad, 3),
    ]
