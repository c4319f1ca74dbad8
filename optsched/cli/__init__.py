"""Command-line interface. Thin: parse, call one library function, print.

Every command lives in its own module of this package and is registered in
:data:`COMMANDS`. Bad input (:class:`optsched.errors.InputError`, a
``ValueError`` from validation, or an ``OSError`` on a file) and a missing
optional dependency (:class:`optsched.extras.MissingExtra`, naming the pip
command) print one line and exit with status 2; the traceback is shown only
with ``--debug``.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from optsched.errors import InputError
from optsched.extras import MissingExtra


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (InputError, ValueError, MissingExtra) as error:
            if ctx.params.get("debug"):
                raise
            click.echo(f"optsched: error: {error}", err=True)
            sys.exit(2)
        except OSError as error:
            # Unreadable input or unwritable output: one line, no traceback.
            if ctx.params.get("debug"):
                raise
            where = f"{error.filename}: " if error.filename else ""
            click.echo(f"optsched: error: {where}{error.strerror or error}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("optsched: interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.version_option(package_name="optsched")
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
)
"""Modules of this package that each define one click ``command``."""


def _register() -> None:
    import importlib

    for name in COMMANDS:
        main.add_command(importlib.import_module(f"optsched.cli.{name}").command)


_register()
