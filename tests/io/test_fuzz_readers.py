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
one line on stderr) is covered in tests/io/test_reliability_readers.py. The
regular run draws ``REGULAR_EXAMPLES`` inputs per test; ``pytest --fuzz``
runs the campaign (tests/support/fuzzing.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import SEEDS, fuzz_settings, mutants
from support.refusals import read_or_refused

from optsched.instance import MAX_INTEGER, BusyBlock, Instance, Job, Machine
from optsched.io import read_trace

pytestmark = pytest.mark.fuzz


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
    trace = read_or_refused(lambda p: read_trace(p, fmt), path, data, reason_limit=300)
    if trace is None:
        return
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

    It is refused or read, within :data:`support.refusals.MEMORY_CAP`:
    nothing is allocated per processor or per time unit while reading.
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
