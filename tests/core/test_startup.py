"""Which process is the optsched command (:mod:`optsched.startup`).

The start-up handlers (one line on Ctrl-C, SIGTERM raising) are installed
only in the command's own process; ``python -m optsched`` must be
recognised while runpy still imports the package, when ``sys.argv[0]`` is
``"-m"`` and only ``sys.orig_argv`` names the module (a SIGINT in that
tenth of a second printed a ``KeyboardInterrupt`` traceback).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
from support.paths import INSTANCES

from optsched.startup import _runs_module_optsched, interrupt_behind


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["python", "-m", "optsched", "gap", "f.json"], True),
        (["python", "-moptsched"], True),
        (["python", "-X", "importtime", "-m", "optsched"], True),
        (["python", "-W", "ignore", "-I", "-m", "optsched", "-m", "x"], True),
        (["python", "-m", "optsched_other"], False),
        (["python", "-m", "pytest", "-m", "optsched"], False),
        (["python", "-c", "import optsched", "-m", "optsched"], False),
        (["python", "script.py", "-m", "optsched"], False),
        (["python"], False),
    ],
)
def test_the_module_run_is_read_from_the_interpreter_arguments(
    arguments: list[str], expected: bool
) -> None:
    assert _runs_module_optsched(arguments) is expected


def _hooks_after_import(*interpreter_arguments: str) -> str:
    # The package's import alone, in a fresh interpreter told it runs
    # ``-m optsched`` (argv[0] as runpy leaves it during that import).
    code = (
        "import sys; sys.argv[0] = '-m'; import optsched, signal; "
        "print(sys.excepthook is sys.__excepthook__, "
        "signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)"
    )
    done = subprocess.run(
        [sys.executable, *interpreter_arguments, "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_program_importing_the_package_keeps_its_handlers() -> None:
    # "-c": not the command, whatever argv[0] says.
    assert _hooks_after_import() == "True True"


def _raised(make: Callable[[], None]) -> BaseException:
    try:
        make()
    except BaseException as error:  # the error is the value
        return error
    raise AssertionError("nothing raised")


def _import_cut_short() -> None:
    # What pybind11 does when a Ctrl-C lands in a module's initialisation.
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as interrupt:
        raise ImportError("initialization failed") from interrupt


def _error_while_handling_an_interrupt() -> None:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise OSError("closing") from None


def test_an_import_cut_short_by_ctrl_c_is_an_interrupt() -> None:
    error = _raised(_import_cut_short)
    assert isinstance(interrupt_behind(error), KeyboardInterrupt)
    assert interrupt_behind(error) is error.__cause__


def test_an_error_raised_while_an_interrupt_was_handled_is_one() -> None:
    # "from None" hides the context from tracebacks, not from us.
    assert isinstance(
        interrupt_behind(_raised(_error_while_handling_an_interrupt)),
        KeyboardInterrupt,
    )


def test_other_errors_are_not_interrupts() -> None:
    looped = ValueError("a")
    looped.__context__ = TypeError("b")
    looped.__context__.__context__ = looped  # a cycle ends the walk
    assert interrupt_behind(looped) is None
    assert interrupt_behind(_raised(lambda: int("x"))) is None


def _interrupt_once(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    "where",
    [
        # click parsing the command line (the group's arguments)
        "click.Group.parse_args",
        # the command's signal handlers being set up
        "optsched.cli.command_signals",
    ],
)
def test_a_ctrl_c_before_the_command_runs_is_the_one_line(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside the command's own handlers click said "Aborted!", status 1.
    from click.testing import CliRunner

    from optsched.cli import main

    monkeypatch.setattr(where, _interrupt_once)
    done = CliRunner().invoke(main, ["info", str(INSTANCES / "kth_20.json")])
    assert done.exit_code == 130
    assert done.output == "optsched: interrupted (SIGINT)\n"
