"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TRACES = REPO.parent / "shared" / "traces"
INSTANCES = REPO / "instances"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def traces_dir() -> Path:
    """The folder of real SWF traces; skips the test when it is absent."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces not available: {TRACES} is absent")
    return TRACES


def trace_path(name: str) -> Path:
    """Path of one real trace; skips the calling test when it is absent."""
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"real trace not available: {path} is absent")
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz",
        action="store_true",
        help="run the fuzz tests with a campaign's example counts "
        "(tests/fuzzing.py; benchmarks/README.md records the campaign)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fuzz: hypothesis fuzzing of a reader or of check (tests/fuzzing.py)"
    )
    if config.getoption("--fuzz"):
        # Read by tests/fuzzing.py when the test modules are imported, which
        # happens after configuration.
        os.environ["OPTSCHED_FUZZ"] = "1"


def swf_job(
    job: int,
    submit: int,
    run: int,
    size: int,
    *,
    estimate: int = 100,
    wait: int = 0,
    queue: int = 1,
    preceding: int = -1,
    think: int = -1,
) -> str:
    """One 18-field SWF line (status completed, user, group and app 1)."""
    fields = [job, submit, wait, run, size, -1, -1, size, estimate, -1, 1, 1, 1, 1]
    fields += [queue, 1, preceding, think]
    return " ".join(map(str, fields))


def write_swf(path: Path, lines: list[str], processors: int) -> Path:
    """An SWF file of ``lines`` with a ``MaxProcs`` header."""
    path.write_text("\n".join([f"; MaxProcs: {processors}", *lines]) + "\n")
    return path
