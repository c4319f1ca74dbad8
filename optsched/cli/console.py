"""The rich consoles of the CLI: user text goes out literally.

Instance names, policy specs, objective labels and file names are user text:
rich would turn ``wct:one:relative`` into an emoji (``:one:``) and read
``[red]`` as markup. Every command builds its console here, with markup,
emoji and highlighting off; ``rich.table.Table`` cells and titles given as
``str`` are rendered through the console, so they stay literal too.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

PIPED_WIDTH = 200
"""Width of a console writing to a pipe or file, wide enough that no number
in a table is cut short."""


def console(*, stderr: bool = False, **options: Any) -> Console:
    """A console (on stdout, or stderr) that prints user text literally.

    ``options`` go to :class:`rich.console.Console` (e.g. ``width``); markup,
    emoji and highlighting are off whatever they say.
    """
    return Console(
        stderr=stderr,
        **{**options, "markup": False, "emoji": False, "highlight": False},
    )


def stderr_console(**options: Any) -> Console:
    """:func:`console` on stderr (progress bars, notes)."""
    return console(stderr=True, **options)


def wide_console(*, stderr: bool = False) -> Console:
    """:func:`console` as wide as the terminal, or :data:`PIPED_WIDTH` when piped."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else PIPED_WIDTH
    return console(stderr=stderr, width=width)
