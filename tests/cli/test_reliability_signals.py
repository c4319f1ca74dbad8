"""Issue 32, signals: Ctrl-C and SIGTERM stop every command with one line.

SIGINT in the first second (the imports: pandas, OR-Tools) printed a
``KeyboardInterrupt`` traceback and SIGTERM killed silently; the handlers
are now installed when the ``optsched`` package is imported by the command
(:mod:`optsched.startup`). Long commands are stopped within 3 s of SIGTERM
sent 2 s into their work.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import INSTANCES

from optsched.startup import is_the_command

INSTANCE = INSTANCES / "kth_20.json"


def _start(*args: object, cwd: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen(
        [sys.executable, "-m", "optsched", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )


def _stop(process: subprocess.Popen[str], signum: int) -> tuple[int, str, float]:
    sent = time.monotonic()
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    return process.returncode, err, time.monotonic() - sent


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_a_signal_during_start_up_is_one_line(
    tmp_path: Path, signum: int, status: int
) -> None:
    # A command of several seconds, stopped during its imports: the
    # interpreter itself is up after about 0.06 s.
    process = _start("simulate", _long_trace(tmp_path / "t.swf"), "-p", "conservative")
    time.sleep(0.2)
    assert process.poll() is None
    code, err, took = _stop(process, signum)
    assert code == status, err
    assert err == f"optsched: interrupted ({signal.Signals(signum).name})\n"
    assert took < 3


def test_the_start_up_handlers_are_only_the_commands() -> None:
    # pytest imported optsched: its SIGTERM handling is left alone.
    assert not is_the_command()
    assert signal.getsignal(signal.SIGTERM) is not None
    assert sys.excepthook is sys.__excepthook__ or "optsched" not in repr(
        sys.excepthook
    )


def _long_trace(path: Path, jobs: int = 20_000) -> Path:
    lines = ["; MaxProcs: 64"]
    for k in range(1, jobs + 1):
        size, runtime = 1 + (k * 7) % 64, 100 + (k * 13) % 5000
        fields = [k, k * 10, -1, runtime, size, -1, -1, size, runtime * 2]
        lines.append(" ".join(map(str, [*fields, -1, 1, 1, 1, 1, 1, 1, -1, -1])))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ("simulate", "{trace}", "-p", "conservative"),
        ("bound", "{trace}", "--time-limit", "120"),
        ("plot", "gantt", "{schedule}", "{trace}", "-o", "{out}"),
    ],
    ids=["simulate", "bound", "gantt"],
)
def test_sigterm_two_seconds_into_a_long_command(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    trace = _long_trace(tmp_path / "long.swf")
    schedule = tmp_path / "s.csv"
    if "{schedule}" in command:
        made = subprocess.run(
            [
                sys.executable,
                "-m",
                "optsched",
                "simulate",
                trace,
                "-p",
                "fcfs",
                "-o",
                str(schedule),
            ],
            capture_output=True,
            check=False,
        )
        assert made.returncode == 0, made.stderr
    names = {"trace": trace, "schedule": schedule, "out": tmp_path / "g.png"}
    process = _start(*(part.format(**names) for part in command), cwd=tmp_path)
    time.sleep(4.0)  # start-up (about 2 s) and 2 s of work
    assert process.poll() is None, "the command ended before the signal"
    code, err, took = _stop(process, signal.SIGTERM)
    assert code == 143, err
    assert err.endswith("optsched: interrupted (SIGTERM)\n"), err
    assert "Traceback" not in err
    assert took < 3
    assert not (tmp_path / "g.png").exists()


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_a_signal_during_a_solve_prints_the_best_so_far_then_exits_128_plus(
    tmp_path: Path, signum: int, status: int
) -> None:
    # CP-SAT used to take Ctrl-C itself: the solve returned its best so far
    # and the command exited 0 (the signal swallowed), or a later Ctrl-C hit
    # the default handler CP-SAT left behind (a silent kill).
    trace = _long_trace(tmp_path / "t.swf")
    args = ("bound", trace, "--jobs", "300", "--objective", "wct")
    process = _start(*args, "--time-limit", "120")
    time.sleep(3.0)  # imports, incumbents, then CP-SAT's search
    assert process.poll() is None
    sent = time.monotonic()
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - sent < 3
    assert process.returncode == status, err
    assert err == f"optsched: interrupted ({signal.Signals(signum).name})\n"
    if out:  # the signal came during the search (not, on a loaded machine, before)
        assert "interrupted       yes: best result so far" in out
