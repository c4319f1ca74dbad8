"""The CLI's one click-bound output helper: :func:`echo`.

The consoles and :func:`~optsched.console.literal` live in
:mod:`optsched.console`, where the library (progress bars, reports) finds
them without importing the command line.
"""

from __future__ import annotations

import click

from optsched.console import literal


def echo(text: object, *, err: bool = False) -> None:
    """``click.echo`` of :func:`literal` ``(text)``: a line that holds user text.

    Parameters
    ----------
    text
        The line (it may hold file names, policy specs, instance names).
    err
        Print on stderr instead of stdout.
    """
    click.echo(literal(text), err=err)
