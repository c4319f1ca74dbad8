"""Shared fixtures and pytest hooks (the helpers live in ``tests/support/``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.paths import TRACES


@pytest.fixture
def traces_dir() -> Path:
    """The folder of real SWF traces; skips the test when it is absent."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces not available: {TRACES} is absent")
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
