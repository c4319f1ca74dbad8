"""Start-up of the command line (issue 30): whole processes, timed.

Usage::

    .venv/bin/python benchmarks/startup.py [--tree DIR] [--runs 7]

Each command runs ``--runs`` times as a fresh ``python -m optsched``
process with ``PYTHONPATH`` set to the tree under test (this checkout by
default; ``--tree`` times another, e.g. a ``git archive`` of an older
commit) and its working directory outside the checkout. Printed per
command: the median wall time and the median CPU time (user + system of
the child, from ``resource.getrusage``). The machine is shared, so the
wall time carries the load; the CPU time is the figure the targets are
read against.

Commands: ``--version``, ``--help``, ``info`` on the bundled
``instances/kth_20.json``, and EASY on the full KTH trace
(``simulate ... --policy easy``) next to the plain EASY loop of the tests'
reference (:mod:`tests.support.oracle.reference`, reading the trace with
:func:`optsched.io.read` and nothing of the command line) when the traces
folder is present.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
KTH = ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf"

PLAIN_EASY = """
import sys
from optsched.io import read
from support.oracle.reference import reference_starts
reference_starts(read(sys.argv[1]), "backfill", depth=1)
"""


def _time(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    # Wall and CPU seconds of one child process.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def _commands(tree: Path) -> list[tuple[str, list[str]]]:
    optsched = [sys.executable, "-m", "optsched"]
    rows = [
        ("optsched --version", [*optsched, "--version"]),
        ("optsched --help", [*optsched, "--help"]),
        (
            "optsched info instances/kth_20.json",
            [*optsched, "info", str(tree / "instances" / "kth_20.json")],
        ),
    ]
    if KTH.exists():
        rows += [
            (
                "optsched simulate KTH (28,475 jobs) --policy easy",
                [*optsched, "simulate", str(KTH), "--policy", "easy"],
            ),
            (
                "plain EASY loop on KTH (tests' reference)",
                [sys.executable, "-c", PLAIN_EASY, str(KTH)],
            ),
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", default=str(ROOT), help="PYTHONPATH to time")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{tree / 'tests'}")
    print(f"tree {tree}, {args.runs} runs each, load {os.getloadavg()[0]:.1f}")
    print("| command | wall s (median) | cpu s (median) |")
    print("|---|---:|---:|")
    with tempfile.TemporaryDirectory() as away:
        for name, command in _commands(tree):
            times = [_time(command, env, away) for _ in range(args.runs)]
            wall = statistics.median(w for w, _ in times)
            cpu = statistics.median(c for _, c in times)
            print(f"| {name} | {wall:.2f} | {cpu:.2f} |", flush=True)


if __name__ == "__main__":
    main()
