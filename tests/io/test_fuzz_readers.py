"""Fuzzing of format detection and the instance readers (issue 17).

Inputs are mutants of the small real files in ``instances/`` and
``tests/data``: truncation, bit flips, deletions and repeats, numbers
replaced by huge, non-finite or malformed ones, deep nesting, Latin-1 and
NUL bytes, a UTF-8 byte order mark, UTF-16, gzip of the mutant and corrupt
gzip. The contract, per input and per reader: either the reader returns a
trace whose instance the validating constructors rebuild unchanged (every
limit of :mod:`optsched.instance` holds), or it raises
:class:`~optsched.errors.InputError` whose message is one short line starting
with the file's path. Any other exception fails the test, and so does a read
that allocates more than a few megabytes: a tiny file must not make a reader
build per-processor or per-second structures.

The library is called in-process for speed; the command line (exit status 2,
one line on stderr) is covered in tests/test_reliability_readers.py. The
regular run draws ``REGULAR_EXAMPLES`` inputs per test; ``pytest --fuzz``
runs the campaign (tests/fuzzing.py).
"""

from __future__ import annotations

import dataclasses
import gzip
import tracemalloc
from pathlib import Path

import pytest
from conftest import DATA, INSTANCES
from fuzzing import fuzz_settings, mutated
from hypothesis import given
from hypothesis import strategies as st

from optsched.errors import InputError
from optsched.instance import MAX_INTEGER, BusyBlock, Instance, Job, Machine
from optsched.io import read_trace

pytestmark = pytest.mark.fuzz

SEEDS: dict[str, tuple[bytes, ...]] = {
    "json": tuple(
        p.read_bytes()
        for p in (
            INSTANCES / "kth_20.json",
            INSTANCES / "kth_20_recorded.json",
            DATA / "json" / "tiny.json",
            DATA / "json" / "contiguous.json",
            DATA / "json" / "handwritten.json",
        )
    ),
    "swf": tuple(
        p.read_bytes()
        for p in (
            DATA / "swf" / "good.swf",
            DATA / "swf" / "recorded.swf",
            DATA / "suites" / "tiny.swf",
        )
    ),
    "strip": tuple(p.read_bytes() for p in sorted((DATA / "strip").glob("*.txt"))),
}
ALL_SEEDS = tuple(seed for seeds in SEEDS.values() for seed in seeds)

TOKENS = (
    b"9" * 30,
    b"9" * 5000,
    str(2**63).encode(),
    str(2**53).encode(),
    str(2**53 + 1).encode(),
    str(10**15).encode(),
    b"1e12",
    b"1e400",
    b"-1e308",
    b"1e-400",
    b"NaN",
    b"Infinity",
    b"-0",
    b"-1",
    b"0",
    b"1.5",
    b"null",
    b"true",
    b'"x"',
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b",",
    b":",
    b";",
    b"\n",
    b" ",
    b"\xe9",
    b"\xff",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\x1b[2J",
    b"\xf0\x9f\x98\x80",
    b'"\\ud800"',
    "\u00b2".encode(),
    "\u0661".encode(),
)
MEMORY_CAP = 8_000_000  # bytes; the seeds are read with well under 1 MB


@st.composite
def mutants(draw: st.DrawFn, seeds: tuple[bytes, ...] = ALL_SEEDS) -> bytes:
    """A seed file with one to four mutations, then maybe gzip (or bad gzip)."""
    data = draw(mutated(seeds, TOKENS))
    packing = draw(st.sampled_from(["plain"] * 6 + ["gzip", "cut gzip", "bad gzip"]))
    if packing == "plain":
        return data
    packed = gzip.compress(data, mtime=0)
    where = draw(st.integers(0, len(packed) - 1))
    if packing == "cut gzip":
        return packed[:where]
    if packing == "bad gzip":
        return packed[:where] + bytes([packed[where] ^ 0x5A]) + packed[where + 1 :]
    return packed


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz_readers")


def _rebuilt(instance: Instance) -> Instance:
    """The instance rebuilt field by field through the validating constructors.

    The SWF reader fills job slots without ``Job.__post_init__`` (for speed);
    this makes sure what it fills would have passed validation.
    """
    machine = instance.machine
    blocks = tuple(
        BusyBlock(**dataclasses.asdict(block)) for block in machine.unavailable
    )
    jobs = tuple(Job(**dataclasses.asdict(job)) for job in instance.jobs)
    return Instance(
        Machine(machine.processors, machine.allocation, blocks),
        jobs,
        instance.name,
        instance.source,
    )


def check_contract(path: Path, data: bytes, fmt: str | None) -> None:
    """Read ``data`` from ``path``: a valid trace or one short located line."""
    path.write_bytes(data)
    tracemalloc.start()
    try:
        trace = read_trace(path, fmt)
    except InputError as error:
        message = str(error)
        assert "\n" not in message, message
        assert message.startswith(f"{path}"), message
        assert len(message) < len(str(path)) + 300, message
        return
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < MEMORY_CAP, f"{peak:,} bytes to read {len(data)} bytes"
    instance = trace.instance
    assert _rebuilt(instance) == instance
    assert instance.processors <= MAX_INTEGER
    assert trace.records >= len(instance.jobs)
    assert trace.records - len(instance.jobs) == trace.skipped.total


@fuzz_settings()
@given(data=mutants())
def test_fuzz_detection_and_reading(workdir: Path, data: bytes) -> None:
    check_contract(workdir / "detect.dat", data, None)


@fuzz_settings()
@given(data=mutants(SEEDS["swf"]))
def test_fuzz_swf_reader(workdir: Path, data: bytes) -> None:
    check_contract(workdir / "input.swf", data, "swf")


@fuzz_settings()
@given(data=mutants(SEEDS["json"]))
def test_fuzz_native_reader(workdir: Path, data: bytes) -> None:
    check_contract(workdir / "input.json", data, "json")


@fuzz_settings()
@given(data=mutants(SEEDS["strip"]))
def test_fuzz_strip_reader(workdir: Path, data: bytes) -> None:
    check_contract(workdir / "input.txt", data, "strip")


_HUGE = st.one_of(
    st.integers(1, 2**53), st.sampled_from([2**53, 2**53 + 1, 10**15, 2**63])
)


@fuzz_settings()
@given(
    processors=_HUGE,
    size=_HUGE,
    runtime=_HUGE,
    release=_HUGE,
    fmt=st.sampled_from(["swf", "json", "strip"]),
)
def test_fuzz_huge_declarations_cost_no_memory(
    workdir: Path, processors: int, size: int, runtime: int, release: int, fmt: str
) -> None:
    """A file of about 100 bytes declaring a huge machine, job or time.

    It is refused or read, within :data:`MEMORY_CAP`: nothing is allocated
    per processor or per time unit while reading.
    """
    if fmt == "swf":
        text = (
            f"; MaxProcs: {processors}\n1 {release} 0 {runtime} {size} -1 -1 "
            f"{size} {runtime} -1 1 1 1 1 1 -1 -1 -1\n"
        )
    elif fmt == "strip":
        text = f"{processors}\n1\n{size} {runtime}\n"
    else:
        job = f'"id": 1, "release": {release}, "size": {size}, "runtime": {runtime}'
        text = (
            f'{{"version": 1, "machine": {{"processors": {processors}}}, '
            f'"jobs": [{{{job}}}]}}'
        )
    assert len(text) < 200
    check_contract(workdir / f"huge.{fmt}", text.encode(), None)
