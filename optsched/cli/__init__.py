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

import signal
import sys
from typing import Any

import click

from optsched.cli.version import version_option
from optsched.console import literal
from optsched.errors import InputError
from optsched.extras import MissingExtra
from optsched.startup import Terminated, command_signals, ignore_stop_signals
from optsched.startup import exit_status as _exit_status

__all__ = ["Terminated", "main"]


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
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
            ignore_stop_signals()
            name = signal.Signals(stopped.signum).name
            click.echo(f"optsched: interrupted ({name})", err=True)
            sys.exit(128 + stopped.signum)
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
            ignore_stop_signals()  # a second signal must not cut this line
            status = _exit_status(error)
            name = signal.Signals(status - 128).name
            click.echo(f"optsched: interrupted ({name})", err=True)
            sys.exit(status)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@version_option
def main(debug: bool) -> None:
    """optsched: optimal schedules, lower bounds and competitive gaps."""


COMMANDS = (
    "info",
    "window",
    "check",
    "simulate",
    "compare",
    "bound",
    "generate",
    "gap",
    "bench",
    "export",
    "report",
    "plot",
    "worst_case",
    "coreserve",
    "traces",
)
"""Modules of this package that each define one click ``command``."""


def _register() -> None:
    import importlib

    for name in COMMANDS:
        main.add_command(importlib.import_module(f"optsched.cli.{name}").command)


_register()
