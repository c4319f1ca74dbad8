"""SWF reader: real traces, header, conventions, bad input."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import math
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import DATA, trace_path
from support.refusals import refusal

from optsched.errors import InputError
from optsched.instance import Job
from optsched.io import read_trace
from optsched.io.swf import (
    SKIP_ESTIMATE,
    SKIP_RUNTIME,
    SKIP_SIZE,
    SKIP_SUBMIT,
    SKIP_TOO_LARGE,
    _parse_fast,
    _parse_slow,
    read_swf,
)
from optsched.trace import Trace

SWF = DATA / "swf"

# --------------------------------------------------------------------------
# Real traces: golden figures, recomputed independently from the file.

TRACES = {
    # name: (job lines, skipped by reason, machine size, sha256 from SOURCES.md)
    "KTH-SP2-1996-2.1-cln.swf": (
        28_476,
        {SKIP_SIZE: 1},
        100,
        "fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87",
    ),
    "LLNL-Atlas-2006-2.1-cln.swf": (
        43_778,
        {SKIP_SIZE: 4_571},
        9_216,
        "8b3aaab739fa0bda8abaccc37c207d0b19d9d147b19e7f47a1641133a56fd07f",
    ),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (
        18_239,
        {},
        128,
        "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29",
    ),
    "hpc2n.swf": (
        3_170,
        {SKIP_RUNTIME: 25},
        240,
        "eaaccb339ef0f313d1b975cf02cc518b7cc012fb0c609ef2af2dbd0291aa74ba",
    ),
    "lublin_256.swf": (
        10_000,
        {},
        256,
        "a394ab3d81179ebcf645a1cbd593a60b6dff7f11a510e1e6285c45f43310c962",
    ),
}


@cache
def _read_real(name: str) -> Trace:
    return read_swf(trace_path(name))


def _independent_reading(path: Path, m: int) -> tuple[list[int], dict[str, list[int]]]:
    """Kept job ids and skipped line numbers by reason, in plain Python.

    Same conventions as the reader: size = field 5 if > 0 else field 8;
    reasons tested in the order size, runtime, submit, size > m.
    """
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    kept: list[int] = []
    skipped: dict[str, list[int]] = {}
    for number, line in enumerate(raw.decode().splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith(";"):
            continue
        assert len(fields) == 18
        submit, runtime = float(fields[1]), float(fields[3])
        allocated, requested = int(fields[4]), int(fields[7])
        size = allocated if allocated > 0 else requested
        reason = (
            SKIP_SIZE
            if size <= 0
            else SKIP_RUNTIME
            if runtime < 0
            else SKIP_SUBMIT
            if submit < 0
            else SKIP_TOO_LARGE
            if size > m
            else None
        )
        if reason is None:
            kept.append(int(fields[0]))
        else:
            skipped.setdefault(reason, []).append(number)
    return kept, skipped


@pytest.mark.parametrize("name", sorted(TRACES))
def test_real_trace_golden_numbers(name: str) -> None:
    lines, skips, m, sha = TRACES[name]
    trace = _read_real(name)
    kept, skipped = _independent_reading(trace_path(name), m)
    assert trace.records == lines
    assert len(trace.instance.jobs) == lines - sum(skips.values()) == len(kept)
    assert [j.id for j in trace.instance.jobs] == kept
    assert (
        dict(trace.skipped.counts) == skips == {r: len(v) for r, v in skipped.items()}
    )
    for reason, numbers in skipped.items():
        assert trace.skipped.lines[reason] == tuple(numbers[:10])
    assert trace.instance.processors == m
    assert trace.instance.source.sha256 == sha
    assert trace.instance.source.format == "swf"
    assert trace.instance.source.file == name


def test_kth_known_figures() -> None:
    trace = _read_real("KTH-SP2-1996-2.1-cln.swf")
    # SOURCES.md: 28,476 job lines, job 27313 has procs = -1 (line 27323).
    assert trace.records == 28_476
    assert dict(trace.skipped.counts) == {SKIP_SIZE: 1}
    assert trace.skipped.lines[SKIP_SIZE] == (27_323,)
    assert 27_313 not in {j.id for j in trace.instance.jobs}
    first = trace.instance.jobs[0]
    assert (first.id, first.release, first.wait, first.runtime) == (
        15,
        599850,
        192180,
        3477,
    )
    assert (first.size, first.estimate, first.status, first.user) == (4, 53940, 1, 12)
    assert trace.header["MaxProcs"] == "100"
    assert trace.header["Note"].startswith("uses the EASY scheduler\n")
    assert trace.instance.name == "KTH-SP2-1996-2.1-cln"


def test_lublin_machine_from_max_nodes() -> None:
    trace = _read_real("lublin_256.swf")
    assert "MaxProcs" not in trace.header
    assert trace.header["MaxNodes"] == "256"
    assert trace.instance.processors == 256
    # No requested time: the estimate falls back to the runtime.
    assert all(j.estimate == j.runtime for j in trace.instance.jobs)


def test_nasa_gz_read_directly() -> None:
    trace = _read_real("NASA-iPSC-1993-3.1-cln.swf.gz")
    assert trace.instance.name == "NASA-iPSC-1993-3.1-cln"
    assert all(j.wait is None for j in trace.instance.jobs)
    assert trace.header["Queue"] == "0  interactive\n1  batch"


def test_fast_job_construction_equals_validated() -> None:
    # The reader fills Job slots without __post_init__; the result must be
    # exactly what the validating constructor builds.
    for name in ("hpc2n.swf", "KTH-SP2-1996-2.1-cln.swf"):
        for job in _read_real(name).instance.jobs:
            fields = {f.name: getattr(job, f.name) for f in dataclasses.fields(Job)}
            assert Job(**fields) == job
            assert all(type(fields[k]) is int for k in ("id", "release", "size"))


# --------------------------------------------------------------------------
# A hand-made file: header, conventions, rounding, skips.


def test_good_file_jobs() -> None:
    trace = read_swf(SWF / "good.swf")
    jobs = trace.instance.jobs_by_id()
    assert [j.id for j in trace.instance.jobs] == [1, 2, 6, 8]
    assert trace.records == 8
    assert trace.instance.processors == 8
    assert jobs[1] == Job(1, 0, 4, 100, 200, wait=5, user=1, group=1, status=1)
    # runtime 50.5 rounds half up to 51; size from field 8; estimate = runtime.
    assert jobs[2] == Job(
        2, 10, 2, 51, 51, wait=0, user=2, group=1, executable=3, queue=0,
        partition=1, status=1, preceding_job=1, think_time=30,
    )  # fmt: skip
    # requested time 0 counts as missing; trailing tab accepted.
    assert jobs[6] == Job(
        6, 5, 3, 30, 30, wait=2, user=4, group=2, executable=7, queue=1,
        partition=2, status=1,
    )  # fmt: skip
    # wait 12.5 -> 13, run 7.49 -> 7, requested time 99.5 -> 100.
    assert jobs[8] == Job(8, 50, 1, 7, 100, wait=13, user=4, group=2, status=5)


def test_good_file_skips() -> None:
    skipped = read_swf(SWF / "good.swf").skipped
    assert dict(skipped.counts) == {
        SKIP_RUNTIME: 1,
        SKIP_SIZE: 1,
        SKIP_TOO_LARGE: 1,
        SKIP_SUBMIT: 1,
    }
    assert dict(skipped.lines) == {
        SKIP_RUNTIME: (13,),
        SKIP_SIZE: (14,),
        SKIP_TOO_LARGE: (15,),
        SKIP_SUBMIT: (17,),
    }
    assert skipped.summary() == [
        "1 jobs: runtime < 0 (missing) (lines 13)",
        "1 jobs: size <= 0 (processors missing) (lines 14)",
        "1 jobs: size > machine processors (lines 15)",
        "1 jobs: submit time < 0 (missing) (lines 17)",
    ]


def test_good_file_header() -> None:
    header = read_swf(SWF / "good.swf").header
    assert dict(header) == {
        "Version": "2.2",
        "Computer": "Tiny test machine",
        "Information": "http://example.org/a\nhttp://example.org/b",
        "MaxNodes": "4",
        "MaxProcs": "8",
        "Note": "first note\nsecond note",
    }


def test_provenance_and_gzip() -> None:
    plain = read_swf(SWF / "good.swf")
    packed = read_swf(SWF / "good.swf.gz")
    assert plain.instance.jobs == packed.instance.jobs
    assert plain.header == packed.header
    assert plain.instance.name == packed.instance.name == "good"
    # sha256 of the bytes as stored, so the two files differ.
    for path, trace in ((SWF / "good.swf", plain), (SWF / "good.swf.gz", packed)):
        assert (
            trace.instance.source.sha256
            == hashlib.sha256(path.read_bytes()).hexdigest()
        )
        assert trace.instance.source.file == path.name
        assert trace.instance.source.window is None


def test_size_field_overrides() -> None:
    allocated = read_swf(SWF / "good.swf", size_field="allocated")
    assert [j.id for j in allocated.instance.jobs] == [1, 6, 8]
    assert allocated.skipped.lines[SKIP_SIZE] == (11, 14)
    requested = read_swf(SWF / "good.swf", size_field="requested")
    assert [j.id for j in requested.instance.jobs] == [1, 2, 6, 8]
    assert requested.instance.job(6).size == 5
    assert requested.skipped.lines[SKIP_SIZE] == (14,)


def test_estimate_rule_overrides() -> None:
    runtime = read_swf(SWF / "good.swf", estimate_rule="runtime")
    assert all(j.estimate == j.runtime for j in runtime.instance.jobs)
    requested = read_swf(SWF / "good.swf", estimate_rule="requested")
    assert [j.id for j in requested.instance.jobs] == [1, 8]
    assert requested.skipped.lines[SKIP_ESTIMATE] == (11, 16)
    # job 3 lacks both runtime and requested time: counted under runtime only.
    assert requested.skipped.lines[SKIP_RUNTIME] == (13,)


def test_processors_override_wins_over_header() -> None:
    trace = read_swf(SWF / "good.swf", processors=16)
    assert trace.instance.processors == 16
    assert [j.id for j in trace.instance.jobs] == [1, 2, 5, 6, 8]
    assert SKIP_TOO_LARGE not in trace.skipped.counts


def test_max_nodes_fallback(tmp_path: Path) -> None:
    path = tmp_path / "nodes.swf"
    text = (SWF / "good.swf").read_text().replace("; MaxProcs: 8\n", "")
    path.write_text(text)
    trace = read_swf(path)
    assert trace.instance.processors == 4
    assert trace.skipped.lines[SKIP_TOO_LARGE] == (14,)  # job 5 (16 procs)


def test_allocation_and_name() -> None:
    trace = read_swf(SWF / "good.swf", allocation="contiguous", name="tiny")
    assert trace.instance.machine.allocation == "contiguous"
    assert trace.instance.name == "tiny"


def test_read_trace_recognises_swf() -> None:
    trace = read_trace(SWF / "good.swf.gz", processors=16)
    assert trace.instance.processors == 16
    assert len(trace.instance.jobs) == 5


def test_bad_convention_names() -> None:
    with pytest.raises(ValueError, match="size_field 'both' is not one of"):
        read_swf(SWF / "good.swf", size_field="both")
    with pytest.raises(ValueError, match="estimate_rule 'max' is not one of"):
        read_swf(SWF / "good.swf", estimate_rule="max")


# --------------------------------------------------------------------------
# Bad input: one precise message each.

BAD = {
    "wrong_field_count.swf": "wrong_field_count.swf:4: expected 18 fields, got 17",
    "non_numeric.swf": "non_numeric.swf:3: field 4 (run time): expected a number, "
    "got 'ten'",
    "fractional_size.swf": "fractional_size.swf:3: field 5 (allocated processors): "
    "expected an integer, got '2.5'",
    "nan_runtime.swf": "nan_runtime.swf:2: field 4 (run time): expected a number, "
    "got 'nan'",
    "duplicate_ids.swf": "duplicate_ids.swf:5: duplicate job number 17 (first on "
    "line 2)",
    "empty.swf": "empty.swf: empty file: no job lines",
    "comments_only.swf": "comments_only.swf: no job lines: the file holds only ';' "
    "comments",
    "binary.swf": "binary.swf: binary file (NUL byte at offset 24): not an SWF trace",
    "truncated.swf.gz": "truncated.swf.gz: truncated gzip file: compressed data "
    "ended before the end-of-stream marker",
    "no_machine_size.swf": "no_machine_size.swf: machine size unknown: the header "
    "has neither MaxProcs nor MaxNodes; pass --processors",
    "bad_maxprocs.swf": "bad_maxprocs.swf:1: header MaxProcs: expected a positive "
    "integer, got 'many' (pass --processors to set the machine size)",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_message(name: str) -> None:
    path = SWF / name
    assert refusal(read_swf, path) == f"{SWF}/{BAD[name]}"


def test_missing_machine_size_fixed_by_processors() -> None:
    trace = read_swf(SWF / "no_machine_size.swf", processors=4)
    assert trace.instance.processors == 4


def test_blank_only_file(tmp_path: Path) -> None:
    path = tmp_path / "blank.swf"
    path.write_text("  \n\t\n")
    with pytest.raises(
        InputError, match=r"blank.swf: no job lines: the file holds only blank lines$"
    ):
        read_swf(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"nothere.swf: cannot read file: No such file"
    ):
        read_swf(tmp_path / "nothere.swf")


def test_corrupt_gzip(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.swf.gz"
    data = bytearray(gzip.compress(b"; MaxProcs: 4\n" * 50, mtime=0))
    data[15:25] = b"\xff" * 10
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"corrupt.swf.gz: corrupt gzip file: "):
        read_swf(path)


def test_latin1_comment_accepted(tmp_path: Path) -> None:
    path = tmp_path / "latin1.swf"
    path.write_bytes(
        "; Installation: Ume\xe5\n; MaxProcs: 2\n".encode("latin-1")
        + b"1 0 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    trace = read_swf(path)
    assert trace.header["Installation"] == "Ume\xe5"
    assert len(trace.instance.jobs) == 1


# --------------------------------------------------------------------------
# The numpy fast path and the line-by-line parser agree.

_INT_FIELDS = (0, 4, 7, 10, 11, 12, 13, 14, 15, 16)


@st.composite
def _rows(draw: st.DrawFn) -> tuple[list[str], list[list[int]]]:
    rows, texts = [], []
    for _ in range(draw(st.integers(1, 5))):
        values, tokens = [], []
        for col in range(18):
            if col in _INT_FIELDS:
                value = draw(st.integers(-1, 10**9))
                tokens.append(str(value))
                values.append(value)
            else:
                tenths = draw(st.integers(-10, 10**7))
                token = draw(st.sampled_from([f"{tenths / 10}", f"{tenths // 10}"]))
                tokens.append(token)
                values.append(math.floor(float(token) + 0.5))
        sep = draw(st.sampled_from([" ", "  ", "\t"]))
        texts.append(sep.join(tokens))
        rows.append(values)
    return texts, rows


@settings(max_examples=60, deadline=None)
@given(_rows())
def test_fast_and_slow_parsers_agree(case: tuple[list[str], list[list[int]]]) -> None:
    texts, rows = case
    fast = _parse_fast(texts)
    slow = _parse_slow(Path("x.swf"), texts, list(range(1, len(texts) + 1)))
    assert fast is not None
    assert fast.tolist() == slow.tolist() == [[float(v) for v in r] for r in rows]


def test_chunked_parsing_matches_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read_swf(SWF / "good.swf")
    monkeypatch.setattr("optsched.io.swf._CHUNK", 3)
    chunked = read_swf(SWF / "good.swf")
    assert chunked == whole
    # The bad line sits in the second chunk of two lines.
    monkeypatch.setattr("optsched.io.swf._CHUNK", 1)
    with pytest.raises(InputError, match=r"non_numeric.swf:3: field 4 \(run time\)"):
        read_swf(SWF / "non_numeric.swf")
