"""Command-line interface. Thin: parse, call one library function, print.

Every command lives in its own module of this package and is registered in
:data:`COMMANDS`. Bad input (:class:`optsched.errors.InputError`, a
``ValueError`` from validation, or an ``OSError`` on a file) and a missing
optional dependency (:class:`optsched.extras.MissingExtra`, naming the pip
command) print one line and exit with status 2; the traceback is shown only
with ``--debug``. Ctrl-C (SIGINT) and SIGTERM stop any command like a
``KeyboardInterrupt`` (outputs are written atomically, so none is left
half-written) and exit with status 130 and 143, after one line.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, NoReturn

import click

from optsched.cli.ending import LateSignals, leave
from optsched.cli.version import version_option
from optsched.console import literal
from optsched.errors import InputError
from optsched.extras import MissingExtra
from optsched.startup import (
    Terminated,
    command_signals,
    ignore_stop_signals,
    interrupt_behind,
    interrupted,
    is_the_command,
)
from optsched.startup import exit_status as _exit_status

__all__ = ["Terminated", "main"]


class _Group(click.Group):
    """The top-level group: commands are imported when first named, and
    ``--help`` lists them from :data:`COMMANDS` without importing them."""

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        module, summary = COMMANDS[cmd_name]
        if self._listing:
            return click.Command(cmd_name, help=summary)
        command = importlib.import_module(f"optsched.cli.{module}").command
        self.add_command(command, cmd_name)
        return command

    def format_commands(
        self, ctx: click.Context, formatter: click.HelpFormatter
    ) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    _late: LateSignals | None = None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # The command's process: its exit status is settled after its last
        # byte of output, a late signal included (optsched.cli.ending). A
        # program or a test calling main keeps click's behaviour.
        if not is_the_command():
            return super().main(*args, **kwargs)
        self._late = LateSignals()
        self._late.install()
        try:
            return super().main(*args, **kwargs)
        except SystemExit as done:
            code = done.code
        except KeyboardInterrupt as error:  # in click's unwinding
            code = _report_interrupt(_exit_status(error) - 128)
        leave(code, self._late)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt as error:
            # While click parses the command line: the same line and status
            # as later, not click's "Aborted!" and status 1.
            _leave_interrupted(error)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke_watched(ctx)
        except KeyboardInterrupt as error:
            # Before the command's own handlers were in place (Python's
            # default one raised while they were being set up): the same
            # line and status, not click's "Aborted!" and status 1.
            _leave_interrupted(error)
        finally:
            # However the command ended (a value, an error's exit status, an
            # interrupt): from now on a signal is recorded, not raised in
            # click's teardown (optsched.cli.ending).
            if self._late is not None:
                self._late.command_ended()

    def _invoke_watched(self, ctx: click.Context) -> Any:
        # Ctrl-C and SIGTERM raise, and stop a CP-SAT search at once, for
        # the whole command (optsched.startup.command_signals; main thread
        # only, previous handlers put back after).
        with command_signals() as stopped:
            try:
                result = self._invoke(ctx)
            except SystemExit as done:
                if stopped.signum is None or done.code not in (0, None):
                    raise
                result = None
        if stopped.signum is not None:
            # A solve took the signal and returned its best so far, which the
            # command printed: the run was still cut short.
            sys.exit(_report_interrupt(stopped.signum))
        return result

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.BadParameter as error:
            if not isinstance(getattr(error.param, "type", None), click.Path):
                raise
            # A file argument that is a directory, missing, unreadable: a
            # fault of the file, one line like a reader's (not click's usage).
            hint = ""
            if error.param is not None and error.ctx is not None:
                hint = error.param.get_error_hint(error.ctx).replace("'", "") + ": "
            click.echo(literal(f"optsched: error: {hint}{error.message}"), err=True)
            sys.exit(2)
        except (InputError, ValueError, MissingExtra) as error:
            if ctx.params.get("debug"):
                raise
            user_traceback = getattr(error, "user_traceback", "")
            if user_traceback:
                # A user's policy raised: their frames, then the one line.
                click.echo(user_traceback.rstrip(), err=True)
            click.echo(literal(f"optsched: error: {error}"), err=True)
            sys.exit(2)
        except OSError as error:
            # Unreadable input or unwritable output: one line, no traceback.
            if ctx.params.get("debug"):
                raise
            where = f"{error.filename}: " if error.filename else ""
            message = f"optsched: error: {where}{error.strerror or error}"
            click.echo(literal(message), err=True)
            sys.exit(2)
        except KeyboardInterrupt as error:
            _leave_interrupted(error)
        except Exception as error:
            interrupt = interrupt_behind(error)
            if interrupt is None:
                raise
            _leave_interrupted(interrupt)


def _report_interrupt(signum: int) -> int:
    """One line for an interrupt by ``signum``; its status, 128 + signum."""
    ignore_stop_signals()  # a second signal must not cut this line
    return interrupted(signum)


def _leave_interrupted(error: KeyboardInterrupt) -> NoReturn:
    """Exit after the interrupt ``error`` (:func:`_report_interrupt`)."""
    sys.exit(_report_interrupt(_exit_status(error) - 128))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@version_option
def main(debug: bool) -> None:
    """optsched: optimal schedules, lower bounds and competitive gaps."""


COMMANDS: dict[str, tuple[str, str]] = {
    "info": ("info", "Describe FILE (SWF trace, JSON instance or strip-packing file)."),
    "window": ("window", "Cut a window of TRACE into a native JSON instance file."),
    "check": (
        "check",
        "Check SCHEDULE against INSTANCE: every job placed once, start >= "
        "release, exact durations (the work of a preempted job's pieces), "
        "capacity (busy blocks included), disjoint processor sets, contiguity "
        "on contiguous machines, context-switch costs; on request, the "
        "promises of --max-per-processor and --no-migration.",
    ),
    "simulate": (
        "simulate",
        "Simulate FILE online under a policy and print its metrics.",
    ),
    "compare": (
        "compare",
        "Simulate FILE under several policies and print one row per policy.",
    ),
    "bound": ("bound", "Optimum or [lower, upper] bounds of FILE for one objective."),
    "generate": ("generate", "Generate instances with a known optimum."),
    "gap": (
        "gap",
        "Competitive gap of policies against the optimum, window by window.",
    ),
    "bench": ("bench", "Run every task of SUITE (a TOML file) not yet in the store."),
    "export": (
        "export",
        "Write the rows of a results STORE to a CSV or Parquet file (atomically).",
    ),
    "report": ("report", "Write the report of the benchmark run in the results STORE."),
    "plot": ("plot", "Draw figures of schedules."),
    "worst-case": (
        "worst_case",
        "Worst instances a policy can meet, or where it loses to another policy.",
    ),
    "coreserve": ("coreserve", "Grid co-reservation (Meltzer 2005)."),
    "traces": (
        "traces",
        "The Parallel Workloads Archive traces optsched fetches by name.",
    ),
}
"""Each command's name: the module of this package that defines it (as
``command``) and the first sentence of its help, which ``optsched --help``
lists without importing the module (issue 30: importing every command took
a second, pandas and OR-Tools included, before ``--version`` could answer).
``tests/cli/test_cli_startup.py`` checks the sentences against the commands."""
