"""Shared fixtures and pytest hooks (the helpers live in ``tests/support/``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.paths import TRACES, trace_cache


@pytest.fixture(scope="session")
def _filled_trace_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of every known trace for the session, copied from the shared
    folder (no network), so that pwa: names resolve without a fetch note."""
    from optsched.io import archive

    cache = tmp_path_factory.mktemp("trace-cache")
    if TRACES.is_dir():
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPTSCHED_DATA_DIR", str(cache))
            for trace in archive.TRACES:
                archive.fetch(trace.name, str(TRACES))
    return cache


@pytest.fixture
def traces_dir(monkeypatch: pytest.MonkeyPatch, _filled_trace_cache: Path) -> Path:
    """The folder of real SWF traces; skips the test when it is absent.

    ``pwa:`` names (the shipped suites use them) resolve to the session's
    cache, filled from that folder.
    """
    trace_cache(monkeypatch, _filled_trace_cache)
    return TRACES


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz",
        action="store_true",
        help="run the fuzz tests with a campaign's example counts "
        "(tests/support/fuzzing.py; benchmarks/README.md records the campaign)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fuzz: hypothesis fuzzing of a reader or of check (tests/support/fuzzing.py)",
    )
    if config.getoption("--fuzz"):
        # Read by tests/support/fuzzing.py when the test modules are imported,
        # which happens after configuration.
        os.environ["OPTSCHED_FUZZ"] = "1"
