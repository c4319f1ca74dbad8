"""Issue 17, readers: bad input never crashes and never drops data silently.

Every case asserts the contract of the project: one line ``file[:line]:
reason`` (exit status 2 on the command line, no traceback), or a correct
read. Groups: corrupt gzip, deep JSON, huge numbers and the limits of the
core types, valid files once refused (Latin-1, BOM, gzipped JSON), the note
on skipped jobs, and messages that never echo a file's contents.
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.paths import DATA, INSTANCES
from support.refusals import refusal

from optsched.bench.suite import load_suite
from optsched.bench.tasks import expand
from optsched.cli import main
from optsched.errors import shown
from optsched.instance import (
    MAX_INTEGER,
    MAX_WEIGHT,
    BusyBlock,
    Instance,
    Job,
    Machine,
)
from optsched.io import detect_format, read, read_trace
from optsched.io.native import instance_to_json

OPTSCHED = Path(sys.executable).parent / "optsched"
SWF_JOB = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n"
SWF = "; MaxProcs: 4\n" + SWF_JOB
TRUNCATED = "truncated gzip file: compressed data ended before the end-of-stream marker"
LIMIT = "is above the limit 2**53 = 9007199254740992"

SEEDS = {
    "swf": (DATA / "swf" / "good.swf").read_bytes(),
    "json": (INSTANCES / "kth_20.json").read_bytes(),
    "strip": (DATA / "strip" / "ht_style_20x20.txt").read_bytes(),
}


def _cli(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _assert_one_line(stderr: str, status: int, message: str) -> None:
    """Exit 2, no traceback, stderr exactly ``optsched: error: message``."""
    assert status == 2, stderr
    assert "Traceback" not in stderr
    assert stderr == f"optsched: error: {message}\n"


def _raises(path: Path, fmt: str | None = None) -> str:
    """The message of the InputError reading ``path`` raises (one line)."""
    message = refusal(lambda p: read_trace(p, fmt), path)
    assert message.startswith(f"{path}")
    return message


def _instance_json(**job: Any) -> dict[str, Any]:
    return {
        "format": "optsched-instance",
        "version": 1,
        "machine": {"processors": 4},
        "jobs": [{"id": 1, "release": 0, "size": 1, "runtime": 5, **job}],
    }


def _write_json(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


# --------------------------------------------------------------------------
# 1. Corrupt gzip: one message, whichever path reads the file


def _damaged(data: bytes, kind: str) -> bytes:
    packed = bytearray(gzip.compress(data, mtime=0))
    if kind == "truncated":
        return bytes(packed[: len(packed) // 2])
    if kind == "header only":
        return bytes(packed[:10])
    if kind == "flipped deflate":
        for i in range(12, 24):
            packed[i] ^= 0xFF
        return bytes(packed)
    assert kind == "bad crc"
    packed[-6] ^= 0xFF
    return bytes(packed)


@pytest.mark.parametrize("fmt", [None, "swf", "json", "strip"])
@pytest.mark.parametrize("seed", sorted(SEEDS))
@pytest.mark.parametrize(
    "kind", ["truncated", "header only", "flipped deflate", "bad crc"]
)
def test_corrupt_gzip_gives_one_line(
    tmp_path: Path, seed: str, kind: str, fmt: str | None
) -> None:
    path = tmp_path / f"bad.{seed}.gz"
    path.write_bytes(_damaged(SEEDS[seed], kind))
    message = _raises(path, fmt)
    if kind in ("truncated", "header only"):
        assert message == f"{path}: {TRUNCATED}"
    else:
        assert message.startswith(f"{path}: corrupt gzip file: ")


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_gz_name_on_plain_text_is_read_as_text(tmp_path: Path, seed: str) -> None:
    plain = tmp_path / f"plain.{seed}"
    named = tmp_path / f"named.{seed}.gz"
    plain.write_bytes(SEEDS[seed])
    named.write_bytes(SEEDS[seed])
    assert read(named).jobs == read(plain).jobs


# --------------------------------------------------------------------------
# 2. JSON nested hundreds of levels deep


@pytest.mark.parametrize("depth", [600, 5000])
@pytest.mark.parametrize("where", ["top", "name", "release"])
def test_deep_json_gives_one_line(tmp_path: Path, depth: int, where: str) -> None:
    deep = "[" * depth + "]" * depth
    if where == "top":
        text = deep
    else:
        text = json.dumps(_instance_json(), indent=1)
        text = text.replace('"release": 0', f'"release": {deep}')
        if where == "name":
            text = text.replace('"release": ' + deep, '"release": 0')
            text = text.replace('"version": 1', f'"version": 1, "name": {deep}')
    path = tmp_path / "deep.json"
    path.write_text(text, encoding="utf-8")
    message = _raises(path)
    if depth == 5000:
        line = text.count("\n", 0, text.index("[[")) + 1
        assert message == (
            f"{path}:{line}: invalid JSON: arrays and objects nested too deeply "
            "(more than 64 levels)"
        )
    else:  # parsed; validation names the key that wants a scalar
        assert ("expected" in message) and ("got a list" in message)


@pytest.mark.parametrize(
    ("depth", "reason"),
    [
        # Parsed, but too deep for the recursive line locator: no line.
        (600, ": top level: unknown key 'a' (expected one of: "),
        (5000, ":1: invalid JSON: arrays and objects nested too deeply "),
    ],
)
@pytest.mark.parametrize(
    "command", [["info"], ["bound", "--backend", "bounds-only"], ["simulate"]]
)
def test_deep_json_on_the_command_line(
    tmp_path: Path, command: list[str], depth: int, reason: str
) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"a": ' * depth + "1" + "}" * depth, encoding="utf-8")
    result = _cli(*command, path)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"optsched: error: {path}{reason}")
    assert result.stdout == ""


# --------------------------------------------------------------------------
# 3. Huge numbers: the limits of the core types, and the readers' messages


@pytest.mark.parametrize("name", ["release", "runtime", "estimate", "size"])
def test_job_times_and_size_are_limited_to_2_53(name: str) -> None:
    fields: dict[str, Any] = {"id": 3, "release": 0, "size": 1, "runtime": 1}
    fields[name] = MAX_INTEGER
    assert getattr(Job(**fields), name) == 2**53  # the limit itself is valid
    fields[name] = 2**63
    with pytest.raises(ValueError) as info:
        Job(**fields)
    assert str(info.value) == f"job 3: {name} 9223372036854775808 {LIMIT}"


def test_job_runtime_of_1e12_stays_valid() -> None:
    assert Job(1, 10**12, 1, 10**12, 10**12 + 5).area == 10**12


@pytest.mark.parametrize("name", ["id", "wait", "user", "think_time"])
def test_job_ids_and_extras_are_limited_both_ways(name: str) -> None:
    fields: dict[str, Any] = {"id": 3, "release": 0, "size": 1, "runtime": 1}
    fields[name] = -MAX_INTEGER
    Job(**fields)
    fields[name] = -(2**64)
    with pytest.raises(ValueError, match=rf": {name} -18446744073709551616 is outside"):
        Job(**fields)


@pytest.mark.parametrize(
    ("weight", "message"),
    [
        (math.inf, "job 1: weight inf must be positive and finite"),
        (math.nan, "job 1: weight nan must be positive and finite"),
        (-1.0, "job 1: weight -1.0 must be positive and finite"),
        (1e13, "job 1: weight 10000000000000.0 is above the limit 1e12"),
        (10**300, "job 1: weight an integer of 997 bits is above the limit 1e12"),
    ],
)
def test_job_weight_is_finite_positive_and_at_most_1e12(
    weight: float, message: str
) -> None:
    assert Job(1, 0, 1, 1, weight=MAX_WEIGHT).weight == 1e12
    with pytest.raises(ValueError) as info:
        Job(1, 0, 1, 1, weight=weight)
    assert str(info.value) == message


def test_machine_and_block_limits() -> None:
    assert Machine(MAX_INTEGER).processors == 2**53
    with pytest.raises(ValueError) as info:
        Machine(2**53 + 1)
    assert str(info.value) == f"machine: processors {2**53 + 1} {LIMIT}"
    for args, name in (((0, 2**60, 1), "end"), ((0, 1, 2**60), "size")):
        with pytest.raises(ValueError, match=rf"^busy block \(0, .*\): {name} "):
            BusyBlock(*args)


def test_json_huge_release_is_located(tmp_path: Path) -> None:
    path = _write_json(tmp_path / "big.json", _instance_json(release=2**63))
    line = path.read_text().splitlines().index('   "release": 9223372036854775808,') + 1
    assert _raises(path) == (
        f"{path}:{line}: jobs[0] (id 1): release 9223372036854775808 {LIMIT}"
    )


@pytest.mark.parametrize(
    ("job", "reason"),
    [
        ({"runtime": 2**64}, f"runtime 18446744073709551616 {LIMIT}"),
        ({"weight": 1e300}, "weight 1e+300 is above the limit 1e12"),
        ({"estimate": 10**30}, f"estimate {10**30} {LIMIT}"),
    ],
)
def test_json_huge_values_are_refused(
    tmp_path: Path, job: dict[str, Any], reason: str
) -> None:
    path = _write_json(tmp_path / "big.json", _instance_json(**job))
    assert _raises(path).endswith(f": jobs[0] (id 1): {reason}")


def test_json_processors_above_the_limit(tmp_path: Path) -> None:
    data = _instance_json()
    data["machine"]["processors"] = 10**16
    path = _write_json(tmp_path / "m.json", data)
    assert _raises(path) == f"{path}:5: machine: processors {10**16} {LIMIT}"


def test_json_number_of_5000_digits(tmp_path: Path) -> None:
    text = json.dumps(_instance_json(), indent=1).replace(
        '"release": 0', '"release": ' + "9" * 5000
    )
    path = tmp_path / "digits.json"
    path.write_text(text, encoding="utf-8")
    line = text.count("\n", 0, text.index("9999")) + 1
    assert _raises(path) == (
        f"{path}:{line}: invalid JSON: a number has more than 4300 digits"
    )


@pytest.mark.parametrize(
    ("token", "field"),
    [
        (str(2**63), "field 4 (run time)"),
        ("9" * 5000, "field 4 (run time)"),
        ("1e400", "field 4 (run time)"),
    ],
)
def test_swf_huge_numbers_are_refused_on_their_line(
    tmp_path: Path, token: str, field: str
) -> None:
    path = tmp_path / "big.swf"
    path.write_text(SWF + SWF_JOB.replace("1 0 0 10", f"2 0 0 {token}"))
    assert _raises(path) == (
        f"{path}:3: {field}: value {shown(token)} is too large (the limit is "
        "below 2**53)"
    )


@pytest.mark.parametrize("value", [str(2**63), "9" * 5000])
def test_swf_huge_max_procs(tmp_path: Path, value: str) -> None:
    path = tmp_path / "big.swf"
    path.write_text(f"; Computer: x\n; MaxProcs: {value}\n{SWF_JOB}")
    assert _raises(path) == (
        f"{path}:2: header MaxProcs: {shown(value)} processors {LIMIT} "
        "(pass --processors to set the machine size)"
    )


def test_swf_max_procs_in_unicode_digits(tmp_path: Path) -> None:
    path = tmp_path / "sup.swf"
    path.write_text(f"; MaxProcs: \u00b2\n{SWF_JOB}", encoding="utf-8")
    assert _raises(path) == (
        f"{path}:1: header MaxProcs: expected a positive integer, got "
        "'\u00b2' (pass --processors to set the machine size)"
    )


@pytest.mark.parametrize("token", [str(2**63), "9" * 5000])
def test_strip_huge_numbers_are_refused_on_their_line(
    tmp_path: Path, token: str
) -> None:
    path = tmp_path / "big.txt"
    path.write_text(f"10\n2\n3 4\n5 {token}\n")
    assert _raises(path) == f"{path}:4: item 2 height: {shown(token)} {LIMIT}"


# --------------------------------------------------------------------------
# Memory: a tiny file declaring a huge machine or huge times builds nothing big


def _peak_bytes(path: Path) -> int:
    tracemalloc.start()
    try:
        read(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("m.swf", f"; MaxProcs: {10**15}\n" + SWF_JOB.replace(" 10 1 ", " 10 999 ")),
        ("m.txt", f"{10**15}\n1\n{10**15} {10**12}\n"),
        (
            "m.json",
            json.dumps(
                {
                    "version": 1,
                    "machine": {"processors": 10**15},
                    "jobs": [
                        {"id": 1, "release": 0, "size": 10**15, "runtime": 10**12}
                    ],
                }
            ),
        ),
    ],
)
def test_huge_machine_costs_no_memory(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert len(text) < 200
    assert read(path).processors == 10**15
    # A list per processor or per second would take terabytes.
    assert _peak_bytes(path) < 4_000_000


# --------------------------------------------------------------------------
# 4. Valid files that were refused: Latin-1, BOM, gzipped JSON


def test_latin1_comment_in_swf(tmp_path: Path) -> None:
    path = tmp_path / "lat.swf"
    path.write_bytes(b"; Comment: caf\xe9\n; MaxProcs: 4\n" + SWF_JOB.encode())
    assert detect_format(path) == "swf"
    trace = read_trace(path)
    assert trace.header["Comment"] == "caf\xe9"
    assert len(trace.instance.jobs) == 1
    result = _cli("info", path)
    assert result.exit_code == 0, result.output


def test_latin1_comment_without_machine_size(tmp_path: Path) -> None:
    # The example: the header names no machine size.
    path = tmp_path / "lat.swf"
    path.write_bytes(b"; Comment: caf\xe9\n" + SWF_JOB.encode())
    result = _cli("info", "--processors", "4", path)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    result = _cli("info", path)
    _assert_one_line(
        result.stderr,
        result.exit_code,
        f"{path}: machine size unknown: the header has neither MaxProcs nor "
        "MaxNodes; pass --processors",
    )


@pytest.mark.parametrize("seed", sorted(SEEDS))
@pytest.mark.parametrize("packed", [False, True])
def test_bom_is_skipped(tmp_path: Path, seed: str, packed: bool) -> None:
    data = b"\xef\xbb\xbf" + SEEDS[seed]
    path = tmp_path / f"bom.{seed}"
    path.write_bytes(gzip.compress(data) if packed else data)
    plain = tmp_path / f"plain.{seed}"
    plain.write_bytes(SEEDS[seed])
    assert detect_format(path) == seed
    assert read(path).jobs == read(plain).jobs


def test_gzipped_json_instance(tmp_path: Path) -> None:
    path = tmp_path / "x.json.gz"
    path.write_bytes(gzip.compress(SEEDS["json"]))
    assert detect_format(path) == "json"
    assert read(path).jobs == read(INSTANCES / "kth_20.json").jobs
    result = _cli("info", path)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x00\x01\x02", "binary file: not SWF, JSON or strip-packing text"),
        (
            SWF.encode("utf-16"),
            "UTF-16 text: expected SWF, JSON or strip-packing text in UTF-8 or ASCII",
        ),
        (b"\n\n  \n", "empty file: no jobs"),
        (b"\xef\xbb\xbf", "empty file: no jobs"),
        (
            b"\n\na b c d e f\n",
            "3: unrecognised format: expected SWF (18 fields per line), a JSON "
            "instance or a strip-packing file (use --format to force one)",
        ),
    ],
)
def test_detection_failures_name_the_file(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    path = tmp_path / "what.dat"
    path.write_bytes(data)
    separator = "" if reason[0].isdigit() else " "
    assert refusal(detect_format, path) == f"{path}:{separator}{reason}"


def test_binary_file_message_holds_none_of_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "blob.swf"
    path.write_bytes(b"; MaxProcs: 4\n\x1b[2J SECRET \x00\xff" * 50)
    result = _cli("info", path)
    _assert_one_line(
        result.stderr, result.exit_code, f"{path}: binary file: not {_TEXT}"
    )
    assert result.stdout == ""


_TEXT = "SWF, JSON or strip-packing text"


# --------------------------------------------------------------------------
# 5. Skipped jobs are announced on stderr


def _skipping_swf(folder: Path) -> Path:
    path = folder / "skip.swf"
    lines = [
        SWF_JOB,
        SWF_JOB.replace("1 0 0 10", "2 0 0 -1"),  # runtime missing
        SWF_JOB.replace("1 0 0 10 1 -1 -1 1", "3 0 0 10 -1 -1 -1 -1"),  # size
        SWF_JOB.replace("1 0 0 10 1 -1 -1 1", "4 0 0 10 -1 -1 -1 -1"),  # size
    ]
    path.write_text("; MaxProcs: 4\n" + "".join(lines))
    return path


def _note(path: Path) -> str:
    return (
        f"optsched: note: {path}: skipped 3 of 4 job records (2 size <= 0, "
        f"1 runtime < 0); see 'optsched info {path}'\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["info"],
        ["simulate", "--policy", "fcfs"],
        ["bound", "--backend", "bounds-only"],
        ["compare", "--policies", "fcfs"],
    ],
)
def test_skipped_jobs_are_noted_on_stderr(tmp_path: Path, command: list[str]) -> None:
    path = _skipping_swf(tmp_path)
    result = _cli(*command, path)
    assert result.exit_code == 0, result.output
    assert result.stderr == _note(path)
    assert "optsched: note" not in result.stdout


def test_no_note_without_skips(tmp_path: Path) -> None:
    path = tmp_path / "ok.swf"
    path.write_text(SWF)
    result = _cli("simulate", "--policy", "fcfs", path)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_suite_notes_skipped_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _skipping_swf(tmp_path)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'policies = ["fcfs"]\nobjectives = ["cmax"]\n\n[suite]\nname = "t"\n\n'
        '[[traces]]\npath = "skip.swf"\n\n[windows]\nkind = "consecutive"\n'
        "jobs = 1\ncount = 1\n",
        encoding="utf-8",
    )
    expand(load_suite(suite))
    assert capsys.readouterr().err == _note(trace.resolve())


# --------------------------------------------------------------------------
# 6. Messages quote short, escaped values only


def test_shown_quotes_escapes_and_cuts() -> None:
    assert shown("x") == "'x'"
    assert shown("a\nb\x1b[0m") == "'a\\nb\\x1b[0m'"
    assert shown("y" * 100) == "'" + "y" * 35 + "...'"
    assert len(shown("z" * 10_000)) == 40
    assert shown(2**63) == "9223372036854775808"
    assert shown(10**5000) == "an integer of 16610 bits"
    assert shown([[1], 2]) == "a list of 2 items"


def test_swf_token_is_escaped_and_cut(tmp_path: Path) -> None:
    path = tmp_path / "esc.swf"
    token = "\x1b[31m" + "x" * 5000
    path.write_text(SWF + SWF_JOB.replace("1 0 0 10", f"2 0 0 {token}"))
    assert _raises(path) == (
        f"{path}:3: field 4 (run time): expected a number, got "
        "'\\x1b[31mxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"
    )


def test_json_unknown_key_is_cut(tmp_path: Path) -> None:
    data = _instance_json()
    data["machine"]["k" * 3000] = 1
    path = _write_json(tmp_path / "key.json", data)
    message = _raises(path)
    assert len(message) < len(str(path)) + 200
    assert "unknown key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...'" in message


def test_strip_token_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("10\n1\n3 " + "[" * 3000 + "\n")
    assert _raises(path) == (
        f"{path}:3: item 1 height: expected a non-negative integer, got "
        "'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[...'"
    )


def test_json_line_numbers_survive_round_trip(tmp_path: Path) -> None:
    # The limits do not touch valid instances: a write/read round trip is exact.
    instance = Instance(
        Machine(MAX_INTEGER),
        (Job(1, MAX_INTEGER - 10, MAX_INTEGER, 10, weight=MAX_WEIGHT),),
    )
    path = tmp_path / "edge.json"
    path.write_text(instance_to_json(instance), encoding="utf-8")
    assert read(path).jobs == instance.jobs


# --------------------------------------------------------------------------
# The command line in a fresh interpreter


def test_command_line_cases_in_subprocesses(tmp_path: Path) -> None:
    """The real entry point, in a fresh interpreter: exit 2, one line.

    Corrupt gzip used to end in a zlib traceback, a huge release in an
    OverflowError of the simulator. The processes run side by side: each
    spends most of its time importing.
    """
    flip = tmp_path / "flip.swf.gz"
    flip.write_bytes(_damaged(SEEDS["swf"], "flipped deflate"))
    big = _write_json(tmp_path / "big.json", _instance_json(release=2**63))
    line = big.read_text().splitlines().index('   "release": 9223372036854775808,') + 1
    cases = [
        (
            ["info", flip],
            f"{flip}: corrupt gzip file: Error -3 while decompressing data: "
            "invalid code lengths set",
        ),
        (
            ["simulate", "--policy", "easy", big],
            f"{big}:{line}: jobs[0] (id 1): release 9223372036854775808 {LIMIT}",
        ),
    ]
    processes = [
        subprocess.Popen(
            [str(OPTSCHED), *(str(a) for a in args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args, _ in cases
    ]
    for process, (_, message) in zip(processes, cases, strict=True):
        stdout, stderr = process.communicate(timeout=120)
        _assert_one_line(stderr, process.returncode, message)
        assert stdout == ""
