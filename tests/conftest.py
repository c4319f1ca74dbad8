"""Shared fixtures."""

from __future__ import annotations

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
