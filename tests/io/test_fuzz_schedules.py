"""Fuzzing of the schedule readers, the checker and the suite reader (issue 17).

Inputs are mutants of real files: a valid schedule of instances/kth_20.json
written by :func:`~optsched.io.schedules.write_schedule` in the three formats
(CSV, Batsim ``out_jobs.csv``, JSON), and the bench tests' suite TOML.
Mutations: truncation, bit flips, deletions and repeats, numbers replaced by
huge, non-finite or malformed ones, wide processor ranges, deep nesting,
Latin-1, NUL and control bytes, a byte order mark, UTF-16.

The contract, per input: either the reader returns a schedule (resp. a
suite) and :func:`~optsched.check.check_schedule` judges it without raising,
every violation one line; or the reader raises
:class:`~optsched.errors.InputError` whose message is one short line
starting with the file's path. Any other exception fails the test. A range
of billions of processors costs two integers (the checker never walks it),
so no input here can take long or much memory.

The regular run draws ``REGULAR_EXAMPLES`` inputs per test; ``pytest
--fuzz`` runs the campaign (tests/support/fuzzing.py).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import JSON_TOKENS, fuzz_settings, mutated
from support.paths import DATA, REPO
from support.refusals import assert_located_line

from optsched.bench.suite import Suite, load_suite
from optsched.check import check_schedule
from optsched.cli import main
from optsched.errors import InputError
from optsched.instance import Instance
from optsched.io import read
from optsched.io.schedules import read_schedule, write_schedule
from optsched.schedule import Placement, Schedule

pytestmark = pytest.mark.fuzz

KTH = REPO / "instances" / "kth_20.json"
SUITES = DATA / "suites"
FORMATS = ("csv", "batsim", "json")
INSTANCE = read(KTH)

TOKENS = (
    b"9" * 30,
    b"9" * 5000,
    str(2**63).encode(),
    str(2**53 + 1).encode(),
    b"-1",
    b"0",
    b"1.5",
    b"12.000000",
    b"1e400",
    b"NaN",
    b"Infinity",
    b"null",
    b"true",
    b"0-3000000000",
    b"0-10000000",
    b"99-0",
    b"0-99 50-60",
    b"120:0-3;300:4-7",
    b"-5:0",
    b"REJECTED",
    b"COMPLETED_KILLED",
    b"DONE",
    b"wl!",
    *JSON_TOKENS,
    b"=",
    b"#",
    b"\n",
    b"\r",
    b"\t",
    b"\xe9",
    b"\xff",
    b"\x00",
    b"\x1b[2J",
    b"\xef\xbb\xbf",
)


def _valid_schedule(instance: Instance) -> Schedule:
    """Jobs one after another on the lowest processors: valid by construction."""
    placements, time = {}, 0
    for job in sorted(instance.jobs, key=lambda j: j.release):
        start = max(time, job.release)
        processors = tuple(range(job.size))
        placements[job.id] = Placement(start, start + job.runtime, processors)
        time = start + job.runtime
    return Schedule(placements, "sequential")


def _mutant(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    return mutated(seeds, TOKENS)


@dataclass(frozen=True)
class Seeds:
    """The valid schedule of :data:`INSTANCE` written in each format
    (``by_format``), and the folder mutants are written to."""

    folder: Path
    by_format: dict[str, bytes]

    def mutant_file(self, data: st.DataObject, stem: str) -> tuple[str, Path]:
        """A drawn format and a mutant of its seed, written as
        ``stem.<format>`` in :attr:`folder`."""
        fmt = data.draw(st.sampled_from(FORMATS))
        path = self.folder / f"{stem}.{fmt}"
        path.write_bytes(data.draw(_mutant([self.by_format[fmt]])))
        return fmt, path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz_schedules")


@pytest.fixture(scope="module")
def seeds(workdir: Path) -> Seeds:
    schedule = _valid_schedule(INSTANCE)
    assert check_schedule(INSTANCE, schedule) == []
    by_format = {}
    for fmt in FORMATS:
        write_schedule(schedule, workdir / fmt, fmt, INSTANCE)
        by_format[fmt] = (workdir / fmt).read_bytes()
    return Seeds(workdir, by_format)


@pytest.mark.parametrize("fmt", FORMATS)
def test_seeds_are_valid(seeds: Seeds, fmt: str) -> None:
    (seeds.folder / "seed").write_bytes(seeds.by_format[fmt])
    assert check_schedule(INSTANCE, read_schedule(seeds.folder / "seed")) == []


@fuzz_settings(regular=60)
@given(data=st.data())
def test_schedule_readers_and_check(data: st.DataObject, seeds: Seeds) -> None:
    fmt, path = seeds.mutant_file(data, "mutant")
    forced = data.draw(st.sampled_from([None, fmt]))
    try:
        schedule = read_schedule(path, forced)
    except InputError as error:
        assert_located_line(error, path, 400)
        return
    for violation in check_schedule(INSTANCE, schedule):
        assert "\n" not in str(violation) and len(str(violation)) < 400


@fuzz_settings(regular=20)
@given(data=st.data())
def test_check_command(data: st.DataObject, seeds: Seeds) -> None:
    _, path = seeds.mutant_file(data, "cli")
    result = CliRunner().invoke(main, ["check", str(KTH), str(path), "--all"])
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        assert result.stdout == ""
        assert result.stderr.startswith(f"optsched: error: {path}"), result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
    else:
        assert result.stdout.splitlines()[-1].startswith(("OK", "INVALID"))


@pytest.fixture(scope="module")
def suite_dir(workdir: Path) -> Path:
    folder = workdir / "suites"
    folder.mkdir()
    shutil.copy(SUITES / "tiny.swf", folder / "tiny.swf")
    return folder


@fuzz_settings(regular=40)
@given(mutant=_mutant([(SUITES / "tiny.toml").read_bytes()]))
def test_suite_reader(mutant: bytes, suite_dir: Path) -> None:
    path = suite_dir / "suite.toml"
    path.write_bytes(mutant)
    try:
        suite = load_suite(path)
    except InputError as error:
        assert_located_line(error, path, 400)
        return
    assert isinstance(suite, Suite) and suite.traces
