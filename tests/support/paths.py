"""Where the tests find their files, and the helpers that name or write traces.

Every path here is computed once from this file, so a test module finds the
repository, ``instances/`` and ``tests/data/`` the same way at any depth of
the test tree.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root."""
TESTS = REPO / "tests"
"""The test tree (``support`` imports from here)."""
DATA = TESTS / "data"
"""Small input files of the tests (``tests/data/``)."""
INSTANCES = REPO / "instances"
"""The repository's instance files (``instances/``)."""
TRACES = REPO.parent / "shared" / "traces"
"""The real SWF traces, beside the repository; tests needing them skip without."""


def trace_path(name: str) -> Path:
    """Path of one real trace; skips the calling test when it is absent."""
    import pytest  # here: the benchmark harnesses import support without pytest

    path = TRACES / name
    if not path.exists():
        pytest.skip(f"real trace not available: {path} is absent")
    return path


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


def trace_cache(monkeypatch: object, cache: Path) -> Path:
    """Point ``pwa:`` names at a fresh cache ``cache``, filled from the shared
    trace folder (no network); skips the calling test when that is absent.

    ``monkeypatch`` is pytest's fixture: the environment is restored after
    the test.
    """
    import pytest

    if not TRACES.is_dir():
        pytest.skip(f"real traces not available: {TRACES} is absent")
    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(cache))
    monkeypatch.setenv("OPTSCHED_TRACES_FROM", str(TRACES))
    return cache
