"""The Python API (``import optsched``), ``python -m optsched`` and completion."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from support.paths import REPO

import optsched
from optsched.cli import main

README = REPO / "README.md"
KTH = REPO / "instances" / "kth_20.json"
SCRIPT = Path(sys.executable).parent / "optsched"


def _gap(source: Path | optsched.Instance) -> pd.DataFrame:
    """``optsched gap --policies fcfs,easy --objective cmax`` with bounds only."""
    return optsched.competitive_gap(
        source,
        policies="fcfs,easy",
        objectives="cmax",
        backend="bounds-only",
        time_limit=5.0,
    )


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", README.read_text(), re.S | re.M)


def test_readme_python_example_runs_verbatim(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = _python_blocks()
    assert len(blocks) == 1, "README.md needs its one ```python example"
    assert len(blocks[0].strip().splitlines()) <= 12
    monkeypatch.chdir(REPO)  # the example names instances/kth_20.json
    exec(compile(blocks[0], str(README), "exec"), {"__name__": "__readme__"})
    printed = capsys.readouterr().out
    match = re.fullmatch(
        r"EASY makespan (\d+) s, ratio to the optimum in \[([\d.]+), ([\d.]+)\]\n",
        printed,
    )
    assert match, printed
    assert int(match[1]) == 51488  # the simulator is deterministic
    low, high = float(match[2]), float(match[3])
    # The ratio to the optimum (50,693 s, proven in about a second) lies in
    # the printed interval, up to its 4 decimals.
    assert 1 <= low <= round(51488 / 50693, 4) <= high


def test_import_is_lazy() -> None:
    # A fresh interpreter: the heavy parts load on first use only.
    code = (
        "import sys, optsched\n"
        "heavy = ('optsched.heuristics', 'optsched.models', 'optsched.bench', "
        "'optsched.io', 'optsched.windows.window', 'pandas', 'click', 'ortools')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "optsched.simulate\n"
        "print('optsched.heuristics' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout == "[]\nTrue\n"


def test_public_names_resolve_to_the_library_functions() -> None:
    from optsched.heuristics import simulate
    from optsched.io import read, read_trace
    from optsched.io.schedules import read_schedule, write_schedule
    from optsched.models import solve
    from optsched.objective import Objective
    from optsched.windows.window import cut_window

    assert optsched.read is read and optsched.read_trace is read_trace
    assert optsched.simulate is simulate and optsched.solve is solve
    assert optsched.cut_window is cut_window and optsched.Objective is Objective
    assert optsched.read_schedule is read_schedule
    assert optsched.write_schedule is write_schedule
    for name in optsched.__all__:
        assert getattr(optsched, name) is not None, name
        assert name in dir(optsched)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = optsched.nope


def test_window_bound_and_check() -> None:
    instance = optsched.read(KTH)
    window = optsched.cut_window(instance, first_job=5, jobs=10)
    assert len(window.jobs) == 10
    assert window.name == f"{instance.name}_jobs5-14"
    result = optsched.bound(window, "cmax")
    assert result.backend == "bounds-only"
    assert result.schedule is not None
    assert optsched.check_schedule(window, result.schedule) == []
    assert result.lower_bound is not None and result.objective is not None
    assert 0 < result.lower_bound <= result.objective


def test_competitive_gap_gives_the_rows_gap_writes(tmp_path: Path) -> None:
    rows = _gap(KTH)
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(
        main,
        ["gap", str(KTH), "--policies", "fcfs,easy", "--objective", "cmax",
         "--backend", "bounds-only", "--time-limit", "5", "--no-progress",
         "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out)
    assert list(rows.columns) == list(written.columns)
    assert list(rows["policy"]) == ["fcfs", "easy"]
    numbers = ["value", "lower", "upper", "ratio_low", "ratio_high"]
    pd.testing.assert_frame_equal(rows[numbers], written[numbers])
    assert list(rows["value"]) == [51488.0, 51488.0]
    # An instance in memory gives the same numbers.
    again = _gap(optsched.read(KTH))
    pd.testing.assert_frame_equal(again[numbers], rows[numbers])


def test_competitive_gap_takes_lists_of_specs() -> None:
    # A list holds one spec per entry, its own parameters included.
    rows = _gap(KTH)
    numbers = ["value", "lower", "upper", "ratio_low", "ratio_high"]
    for policies in (["fcfs", "easy"], ("fcfs", " easy ")):
        listed = optsched.competitive_gap(
            KTH, policies=policies, objectives=["cmax"], backend="bounds-only",
            time_limit=5.0,
        )  # fmt: skip
        assert list(listed["policy"]) == ["fcfs", "easy"]
        pd.testing.assert_frame_equal(listed[numbers], rows[numbers])
    spec = "easy:order=spt,oracle"
    listed = optsched.competitive_gap(
        KTH, policies=[spec], objectives=("cmax",), backend="bounds-only",
        time_limit=5.0,
    )  # fmt: skip
    from optsched.heuristics import parse_policy

    assert list(listed["policy"]) == [parse_policy(spec).spec]
    with pytest.raises(ValueError, match="--policies: no policy given"):
        optsched.competitive_gap(KTH, policies=[])
    with pytest.raises(ValueError, match="--policies: 3 is not a string"):
        optsched.competitive_gap(KTH, policies=["fcfs", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="--objective: no objective given"):
        optsched.competitive_gap(KTH, objectives=())


def test_competitive_gap_refuses_bad_specs() -> None:
    with pytest.raises(ValueError, match="--policies: no policy given"):
        optsched.competitive_gap(KTH, policies=" , ")
    with pytest.raises(optsched.InputError, match="no such file"):
        optsched.competitive_gap(KTH.with_name("missing.json"))


_VERSIONS = (
    f"optsched {optsched.__version__}\n"
    f"OR-Tools {importlib.metadata.version('ortools')} (ortools)\n"
    f"HiGHS {importlib.metadata.version('highspy')} (highspy)\n"
    "Python 3."
)


def test_python_m_optsched() -> None:
    for args, expected in (
        (["--version"], _VERSIONS),
        (["--help"], "Usage: optsched [OPTIONS] COMMAND [ARGS]..."),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "optsched", *args],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(expected)
        assert done.stderr == ""


def test_shell_completion_script() -> None:
    done = subprocess.run(
        [str(SCRIPT)],
        capture_output=True,
        text=True,
        env={"_OPTSCHED_COMPLETE": "bash_source", "PATH": str(SCRIPT.parent)},
    )
    assert done.returncode == 0, done.stderr
    assert "_optsched_completion()" in done.stdout
    assert "complete -o nosort -F _optsched_completion optsched" in done.stdout
    assert "_OPTSCHED_COMPLETE=bash_source optsched" in README.read_text()
