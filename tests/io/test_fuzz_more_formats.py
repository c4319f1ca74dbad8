"""Fuzzing of the formats the instance fuzz tests leave out (issue 32).

Site TOML files, co-reservation request JSON files, co-reservation scenario
TOML files and benchmark suites, each mutated as the instance files are
(:func:`support.fuzzing.mutated` with :data:`support.fuzzing.TOKENS`: huge,
non-finite and malformed numbers, truncation, bad bytes, lone surrogates).
The contract per input: the reader returns, or raises
:class:`~optsched.errors.InputError` whose message is one short line
starting with the file's path; any other exception fails, and so does a
read that allocates more than a few megabytes. Bounded like the other fuzz
tests: ``REGULAR_EXAMPLES`` inputs per format, ``pytest --fuzz`` for a
campaign.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from support.fuzzing import TOKENS, fuzz_settings, mutated
from support.message_corpus import SCENARIO_SEED
from support.paths import DATA, INSTANCES, swf_job, write_swf
from support.refusals import read_or_refused

from optsched.bench.suite import load_suite
from optsched.coreserve.io import read_coreserve
from optsched.coreserve.scenario import load_scenario
from optsched.errors import REASON_LIMIT
from optsched.site.files import read_site

pytestmark = pytest.mark.fuzz


SEEDS: dict[str, tuple[bytes, ...]] = {
    "site": tuple(p.read_bytes() for p in sorted((INSTANCES / "sites").glob("*.toml"))),
    "coreserve": tuple(
        p.read_bytes() for p in sorted((DATA / "coreserve").glob("*.json"))
    ),
    "scenario": (SCENARIO_SEED.encode(),),
    "suite": ((DATA / "suites" / "tiny.toml").read_bytes(),),
}
READERS: dict[str, Callable[[Path], Any]] = {
    "site": read_site,
    "coreserve": read_coreserve,
    "scenario": load_scenario,
    "suite": load_suite,
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the files the seeds name (a trace for scenarios and suites)."""
    folder = tmp_path_factory.mktemp("fuzz_formats")
    write_swf(
        folder / "log.swf",
        [swf_job(k, 600 * k, 300, 1 + k % 8) for k in range(1, 40)],
        8,
    )
    (folder / "tiny.swf").write_bytes((DATA / "suites" / "tiny.swf").read_bytes())
    return folder


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_seeds_are_valid(workdir: Path, fmt: str) -> None:
    for k, seed in enumerate(SEEDS[fmt]):
        path = workdir / f"seed{k}.{'json' if fmt == 'coreserve' else 'toml'}"
        path.write_bytes(seed)
        READERS[fmt](path)  # no exception: the mutants start from valid files


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_fuzz_reader_contract(workdir: Path, fmt: str) -> None:
    suffix = "json" if fmt == "coreserve" else "toml"

    @fuzz_settings()
    @given(mutated(SEEDS[fmt], TOKENS))
    def run(data: bytes) -> None:
        path = workdir / f"mutant.{suffix}"
        read_or_refused(READERS[fmt], path, data, reason_limit=REASON_LIMIT + 10)

    run()
