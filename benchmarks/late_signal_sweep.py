"""SIGINT (or SIGTERM) swept over the last part of a command, by wall clock.

Issue 32: "one SIGINT near the end of ``gap -o`` was swallowed (exit 0)".
The tests send the signal at fixed points (tests/support/late_signal.py);
this sweep sends it from outside at ``--runs`` delays spread evenly from
``1 - span`` to ``1 + span`` times the command's own duration (the
median of three runs first; under a varying load its end moves), as a
user's
Ctrl-C would come, and counts the exit statuses of the runs that were still
alive when the signal was sent (a run that had already exited, a zombie by
``/proc``, is left out).

Expected with the end-of-command rule (docs/guide/reliability.md): 130 (or
143), or killed by the signal (``-2``/``-15``) when it came during the
interpreter's shutdown; never 0.

Usage::

    .venv/bin/python benchmarks/late_signal_sweep.py [--tree DIR] [--runs 40]
        [--signal SIGINT] [--span 0.2]

``--tree`` runs another checkout (``PYTHONPATH``), e.g. a ``git archive``
of an older commit. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _state(pid: int) -> str:
    """The process state letter from ``/proc`` (``Z``: exited, unreaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def _duration(command: list[str], env: dict[str, str]) -> float:
    began = time.monotonic()
    subprocess.run(command, capture_output=True, env=env, check=True)
    return time.monotonic() - began


def _run(
    command: list[str], env: dict[str, str], delay: float, signum: int
) -> int | None:
    """Exit status of one run signalled after ``delay`` s (``None``: it had
    exited before)."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    time.sleep(delay)
    alive = _state(process.pid) not in ("Z", "gone")
    process.send_signal(signum)
    code = process.wait()
    return code if alive else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=str(ROOT), help="PYTHONPATH to run")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--signal", default="SIGINT", choices=["SIGINT", "SIGTERM"])
    parser.add_argument(
        "--span", type=float, default=0.2, help="share of the run on each side"
    )
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    env = dict(os.environ, PYTHONPATH=str(tree))
    signum = int(getattr(signal, args.signal))
    with tempfile.TemporaryDirectory(prefix="optsched-sweep-") as folder:
        instance = ROOT / "instances" / "kth_20.json"
        command = [sys.executable, "-m", "optsched", "gap", str(instance)]
        command += ["--time-limit", "1", "-o", str(Path(folder) / "gap.csv")]
        took = sorted(_duration(command, env) for _ in range(3))[1]  # median
        statuses: Counter[int] = Counter()
        before = 0
        for k in range(args.runs):
            delay = took * (1 - args.span + 2 * args.span * k / args.runs)
            code = _run(command, env, delay, signum)
            if code is None:
                before += 1
            else:
                statuses[code] += 1
    load = os.getloadavg()[0]
    print(
        f"tree {tree}, gap -o on kth_20 ({took:.2f} s), {args.signal}, load {load:.1f}"
    )
    print(
        "| signalled alive | "
        + " | ".join(f"exit {c}" for c in sorted(statuses))
        + " | exited before |"
    )
    print("|---" * (len(statuses) + 2) + "|")
    counts = " | ".join(str(statuses[c]) for c in sorted(statuses))
    print(f"| {sum(statuses.values())} | {counts} | {before} |")
    return 1 if statuses[0] else 0


if __name__ == "__main__":
    sys.exit(main())
