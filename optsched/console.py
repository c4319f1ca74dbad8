r"""Consoles and text that show user text literally, for the library and the CLI.

Instance names, policy specs, objective labels and file names are user text:
rich would turn ``wct:one:relative`` into an emoji (``:one:``) and read
``[red]`` as markup. Every console that prints user text is built here
(:func:`console`), with markup, emoji and highlighting off; ``rich.table.Table``
cells and titles given as ``str`` are rendered through the console, so they
stay literal too. The library's progress bars and reports use it as the
command line does, which is why it lives in the library, not in the
command-line package (the library never imports that one).

Control characters in user text are shown, not obeyed: an instance named
``"a\x1b[2J"`` would clear the screen of whoever runs ``optsched info`` on
it. :func:`literal` escapes them visibly (``\x1b``); the consoles made here
apply it to every string they print, and commands apply it to the user text
they print with ``click.echo`` (the command line's ``echo``).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal obeys instead of showing: C0 controls but tab and
newline, DEL, C1 controls, and the bidirectional overrides that reorder
what is shown (the "Trojan Source" characters)."""

_CONTROL_ONE_LINE = re.compile(f"[\\n{_CONTROL.pattern[1:-1]}]")
"""As :data:`_CONTROL`, newline included: for text that must stay one line."""


def literal(text: object, *, one_line: bool = False) -> str:
    r"""``str(text)`` with every control character shown as an escape.

    ESC becomes the four characters ``\x1b``, DEL ``\x7f``, a right-to-left
    override ``\u202e``; tab and newline stay (with ``one_line``, newline is
    escaped too, for messages that must stay on one line). Rich markup and
    ``$`` are left alone: the consoles of :func:`console` do not read markup.

    Parameters
    ----------
    text
        User text (instance name, policy spec, file name, ...), or any object.
    one_line
        Escape newlines as well.

    Returns
    -------
    str
        The text, safe to print to a terminal.
    """
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(_escape, str(text))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


class _LiteralConsole(Console):
    """A console that escapes control characters in every string it prints.

    Strings given to ``print``, and table cells and titles given as ``str``,
    all become :class:`rich.text.Text` through :meth:`render_str`.
    """

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(literal(text), **options)


PIPED_WIDTH = 200
"""Width of a console writing to a pipe or file, wide enough that no number
in a table is cut short."""


def console(*, stderr: bool = False, **options: Any) -> Console:
    """A console (on stdout, or stderr) that prints user text literally.

    ``options`` go to :class:`rich.console.Console` (e.g. ``width``); markup,
    emoji and highlighting are off whatever they say, and control characters
    are escaped (:func:`literal`).
    """
    return _LiteralConsole(
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
