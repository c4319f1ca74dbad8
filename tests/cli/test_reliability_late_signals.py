"""Issue 32: a stop signal at a command's last steps is never a success.

A SIGINT near the end of ``gap -o`` was swallowed (exit 0): between the
command's end and the process's exit no handler of ours ran. The rule
(:mod:`optsched.cli.ending`): a signal received before the exit status is
settled (after the last byte of output) exits with ``128 +`` the signal and
one line, the output complete or absent, never half-written; the exit
functions run before that point and the process ends right after it (no
interpreter teardown left to interrupt). Each point is reached by the
command sending the signal to itself (``tests/support/late_signal.py``), so
no test depends on timing.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import INSTANCES, TESTS

INSTANCE = INSTANCES / "kth_20.json"
DRIVER = TESTS / "support" / "late_signal.py"
POINTS_BEFORE_SETTLING = ("click-exit", "click-close", "flush")


def _run(point: str, signum: int, *args: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [
            sys.executable,
            str(DRIVER),
            point,
            signal.Signals(signum).name,
            *map(str, args),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _simulate(
    tmp_path: Path, point: str, signum: int
) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "s.csv"
    done = _run(point, signum, "simulate", INSTANCE, "-p", "easy", "-o", out)
    return done, out


def _interrupted(signum: int) -> str:
    return f"optsched: interrupted ({signal.Signals(signum).name})\n"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """stdout (the output path as ``OUT``) and output file of the same
    command run without a signal."""
    folder = tmp_path_factory.mktemp("reference")
    out = folder / "s.csv"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "optsched",
            "simulate",
            INSTANCE,
            "-p",
            "easy",
            "-o",
            out,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.replace(str(out), "OUT"), out.read_text()


SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("point", ["before-rename", "after-rename"])
def test_a_signal_while_writing_leaves_no_half_pair(
    tmp_path: Path, reference: tuple[str, str], point: str, signum: int
) -> None:
    done, out = _simulate(tmp_path, point, signum)
    assert done.returncode == 128 + signum, done.stderr
    assert done.stderr.endswith(_interrupted(signum)), done.stderr
    sidecar = out.with_name(out.name + ".json")
    if point == "before-rename":
        # The first rename is the provenance sidecar's: neither is left.
        assert not out.exists() and not sidecar.exists()
    else:
        # The CSV renamed after its sidecar: the pair is complete.
        assert out.read_text() == reference[1]
        assert sidecar.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("point", POINTS_BEFORE_SETTLING)
def test_a_signal_after_the_command_returned_is_still_an_interruption(
    tmp_path: Path, reference: tuple[str, str], point: str, signum: int
) -> None:
    done, out = _simulate(tmp_path, point, signum)
    assert done.returncode == 128 + signum, done.stderr
    # One line, not click's "Aborted!"; the output and stdout complete.
    assert done.stderr == _interrupted(signum)
    assert done.stdout.replace(str(out), "OUT") == reference[0]
    assert out.read_text() == reference[1]


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_signal_during_the_exit_functions_is_an_interruption(
    tmp_path: Path, reference: tuple[str, str], signum: int
) -> None:
    # An atexit callback sends it: the exit functions run before the status
    # is settled, so the signal counts like any before that point (it
    # killed the process, status -signum, when they ran in the teardown).
    done, out = _simulate(tmp_path, "shutdown", signum)
    assert done.returncode == 128 + signum, done.stderr
    assert done.stderr == _interrupted(signum)
    assert done.stdout.replace(str(out), "OUT") == reference[0]
    assert out.read_text() == reference[1]


@pytest.mark.parametrize("point", ["after-rename", "click-exit", "flush"])
def test_gap_output_then_a_sigint_exits_130(tmp_path: Path, point: str) -> None:
    # The case: gap -o on a small instance, SIGINT at its end.
    out = tmp_path / "gap.csv"
    done = _run(point, signal.SIGINT, "gap", INSTANCE, "--time-limit", "5", "-o", out)
    assert done.returncode == 130, done.stderr
    assert done.stderr.endswith(_interrupted(signal.SIGINT)), done.stderr
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) >= 1 and all(row["window"] for row in rows)
