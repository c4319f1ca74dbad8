"""The example plug-in package of the docs (docs/examples/plugin-package).

Its policy, EASY backfilling with the smallest candidates first, is written
against the public protocol only; the built-in ``easy:select=smallest`` is
the same rule written inside the engine. The two implementations share no
code, so their agreement job for job checks both (and the view's
``earliest_start``). The package is then installed and used by its
entry-point name, as a user's package would be.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import INSTANCES, REPO, trace_path

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.io.native import read_native
from optsched.trace import Trace
from optsched.windows.selection import WindowRule, select_windows

PACKAGE = REPO / "docs" / "examples" / "plugin-package"


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> type:
    monkeypatch.syspath_prepend(str(PACKAGE))
    from optsched_example_policies import SmallestFirstBackfill

    return SmallestFirstBackfill


def starts(schedule) -> dict[int, int]:
    return {j: p.start for j, p in schedule.placements.items()}


@pytest.mark.parametrize("path", sorted(INSTANCES.glob("*.json")), ids=lambda p: p.name)
def test_equals_the_builtin_rule_on_bundled_windows(example: type, path: Path) -> None:
    instance = read_native(path).instance
    mine = simulate(instance, example()).schedule
    assert check_schedule(instance, mine) == []
    assert starts(mine) == starts(simulate(instance, "easy:select=smallest").schedule)


def test_equals_the_builtin_rule_on_a_kth_prefix(example: type) -> None:
    from optsched.io import read_trace

    trace: Trace = read_trace(trace_path("KTH-SP2-1996-2.1-cln.swf"))
    (window,) = select_windows(trace, WindowRule("consecutive", 2000, 1, 0, 0))
    instance = window.cut(trace)
    mine = simulate(instance, example()).schedule
    assert check_schedule(instance, mine) == []
    assert starts(mine) == starts(simulate(instance, "easy:select=smallest").schedule)


def test_installed_package_is_found_by_its_name(tmp_path: Path) -> None:
    # A copy: building writes build/ and *.egg-info beside the sources.
    source = shutil.copytree(PACKAGE, tmp_path / "package")
    target = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--target", str(target), str(source)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    if built.returncode != 0 and "No matching distribution" in built.stderr:
        pytest.skip("pip cannot fetch the build back-end (setuptools): no index")
    assert built.returncode == 0, built.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    kth = str(INSTANCES / "kth_20.json")

    def makespan(policy: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "optsched", "simulate", kth, "-p", policy],
            check=True, capture_output=True, text=True, env=env,
        )  # fmt: skip
        (line,) = [row for row in done.stdout.splitlines() if "makespan" in row]
        return line.split()[-2]

    assert makespan("easy-smallest") == makespan("easy:select=smallest")
