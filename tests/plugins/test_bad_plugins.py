"""Bad plug-ins: one clear line and exit status 2, never a corrupted schedule."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import INSTANCES

from optsched.cli import main
from optsched.heuristics import simulate
from optsched.heuristics.plugins import PolicyError
from optsched.io.native import read_native

KTH_20 = INSTANCES / "kth_20.json"

BAD = textwrap.dedent(
    """
    class Raises:
        def select(self, view):
            return helper(view)

    def helper(view):
        return [1 // (view.now - view.now)]

    class TooBig:
        def select(self, view):
            return [j.id for j in view.waiting]

    class Running:
        def select(self, view):
            if view.running:
                return [view.running[0].id]
            return [j.id for j in view.waiting if view.fits(j.id)][:1]

    class Twice:
        def select(self, view):
            fit = [j.id for j in view.waiting if view.fits(j.id)]
            return fit[:1] * 2

    class Unknown:
        def select(self, view):
            return [10**9]

    class NotIds:
        def select(self, view):
            return ["2815"]

    class NoSelect:
        pass
    """
)


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    return path


def run(spec: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["simulate", str(KTH_20), "-p", spec])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{dir}/missing.py:X", "no such file"),
        ("{file}:Absent", "defines no class 'Absent'"),
        ("{file}:NoSelect", "class 'NoSelect' has no select(view) method"),
        ("{file}:TooBig:limit=3", "unknown parameter 'limit'; valid: none"),
        ("no_such_module_here:Policy", "no module named 'no_such_module_here'"),
        ("{file}:TooBig", "at t=2832: job 2821 needs 80 processors, 75 are free"),
        ("{file}:Running", "job 2815 is already running"),
        ("{file}:Twice", "at t=0: job 2815 is already running"),
        ("{file}:Unknown", "job 1000000000 is not in the instance"),
        ("{file}:NotIds", "select returned '2815', not a job id (an int)"),
    ],
)
def test_one_line_and_exit_2(bad_file: Path, spec: str, message: str) -> None:
    status, output = run(spec.format(file=bad_file, dir=bad_file.parent))
    assert status == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith("optsched: error: policy ")
    assert message in lines[0]


def test_raising_shows_the_users_frames_only(bad_file: Path) -> None:
    status, output = run(f"{bad_file}:Raises")
    assert status == 2
    lines = output.strip().splitlines()
    assert lines[-1] == (
        f"optsched: error: policy '{bad_file}:Raises' raised at t=0: "
        "ZeroDivisionError: integer division or modulo by zero"
    )
    frames = [line for line in lines if line.startswith('  File "')]
    # select (line 4), then helper (line 7): the user's two frames, none of ours.
    assert frames == [
        f'  File "{bad_file}", line 4, in select',
        f'  File "{bad_file}", line 7, in helper',
    ]


def test_debug_shows_every_frame(bad_file: Path) -> None:
    result = CliRunner().invoke(
        main, ["--debug", "simulate", str(KTH_20), "-p", f"{bad_file}:Raises"]
    )
    assert isinstance(result.exception, PolicyError)
    import traceback

    shown = "".join(traceback.format_exception(result.exception))
    assert f'File "{bad_file}", line 7, in helper' in shown  # the user's
    assert "plugins/policy.py" in shown  # and ours
    assert "ZeroDivisionError" in shown


def test_gap_names_the_window(bad_file: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["gap", str(KTH_20), "--policies", f"easy,{bad_file}:TooBig",
         "--backend", "bounds-only", "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"optsched: error: window whole: policy '{bad_file}:TooBig' at t=2832: "
        "job 2821 needs 80 processors, 75 are free"
    )


def test_library_raises_policy_error(bad_file: Path) -> None:
    instance = read_native(KTH_20).instance
    with pytest.raises(PolicyError, match="already running"):
        simulate(instance, f"{bad_file}:Running")


class Lazy:
    """Never starts anything."""

    def select(self, view: object) -> list[int]:
        return []


def test_a_policy_that_never_starts_a_job_is_stopped() -> None:
    instance = read_native(KTH_20).instance
    with pytest.raises(PolicyError, match="left 20 jobs waiting at t=4201"):
        simulate(instance, Lazy())


def test_a_calendar_does_not_keep_a_lazy_policy_alive() -> None:
    # The calendar wakes the queue at every change: without the idle guard
    # the run would never end.
    from support.composition import build_instance

    instance = build_instance(("calendar",))
    with pytest.raises(
        PolicyError,
        match=r"jobs waiting at t=\d+ with the machine idle for 10,000 site",
    ):
        simulate(instance, Lazy())
