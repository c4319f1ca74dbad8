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

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
"""Characters a terminal obeys instead of showing: C0 controls but tab and
newline, DEL, C1 controls, and the bidirectional overrides that reorder
what is shown (the "Trojan Source" characters); and lone UTF-16 surrogates
(a JSON ``"\\ud800"``), which no UTF-8 output can encode."""

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


PIPED_WIDTH = 80
"""Width of a console writing to a pipe or file (``COLUMNS`` overrides it),
as of a terminal: tables are fitted to it (:func:`print_table`), never cut."""


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
    """:func:`console` as wide as the terminal; when piped, ``COLUMNS`` or
    :data:`PIPED_WIDTH` columns."""
    stream = sys.stderr if stderr else sys.stdout
    piped = int(os.environ.get("COLUMNS") or PIPED_WIDTH)
    width = None if stream.isatty() else piped
    # Plain lines (file names, notes) are never broken at the width: only
    # tables are fitted to it (print_table).
    return console(stderr=stderr, width=width, soft_wrap=True)


FOLDED_MIN_WIDTH = 16
"""The narrowest a text column of a fitted table gets (:func:`print_table`)."""


def print_table(
    out: Console, table: Table, *, optional: Sequence[str] = (), wide: bool = False
) -> None:
    """Print ``table`` so that no cell is cut: fitted to the console's width,
    or at its natural width with ``wide``.

    A right-justified column (numbers) is never narrower than its widest
    cell, so no number is cut or wrapped (its header may wrap between
    words); a left-justified one (names, labels) may fold, down to
    :data:`FOLDED_MIN_WIDTH` characters. When the table still does not fit,
    the ``optional`` columns are left out, in that order (and put back, last
    first, if the others leave room), and a caption names them. A table
    whose numbers alone are wider than the console is printed wider rather
    than cut.

    Parameters
    ----------
    out
        The console to print on.
    table
        The table (changed in place: column widths, columns left out).
    optional
        Headers of the columns that may be left out, the first one first.
    wide
        Print every column at its natural width, whatever the console's.
    """
    for column in table.columns:
        column.overflow = "fold"
    if wide:
        _print_at(out, table, max(_total(out, table, _natural), out.width))
        return
    left_out = _left_out(out, table, [h for h in optional if _has(table, h)])
    if left_out:
        table.caption = f"left out to fit: {', '.join(left_out)} (--wide shows them)"
    _share_width(out, table)
    _print_at(out, table, max(out.width, _total(out, table, _fixed)))


def _natural(column: Column) -> int:
    """The widest line of the column, its header included."""
    cells = [str(column.header), *map(str, column.cells)]
    return max(cell_len(line) for cell in cells for line in cell.splitlines() or [""])


def _least(column: Column) -> int:
    """The narrowest the column may be: its widest number (and the longest
    word of its header), or a readable width of text."""
    header = max(map(cell_len, str(column.header).split()), default=0)
    cells = max(map(cell_len, map(str, column.cells)), default=1)
    if column.no_wrap:  # the table asks for it whole (a row's label)
        return max(cells, cell_len(str(column.header)))
    if column.justify == "right":
        return max(cells, header)
    return max(min(_natural(column), FOLDED_MIN_WIDTH), header)


def _fixed(column: Column) -> int:
    return column.width if column.width is not None else _natural(column)


def _total(out: Console, table: Table, width_of: Callable[[Column], int]) -> int:
    """The printed width of ``table`` with each column ``width_of`` wide
    (padding and rules included: rich measures the fixed-width columns)."""
    saved = [column.width for column in table.columns]
    for column in table.columns:
        column.width = width_of(column)
    try:
        return Measurement.get(out, out.options.update(width=10**6), table).maximum
    finally:
        for column, width in zip(table.columns, saved, strict=True):
            column.width = width


def _share_width(out: Console, table: Table) -> None:
    """Fix the column widths: each at least :func:`_least`, the room left
    shared in proportion to what each needs to reach its natural width
    (none fixed when the natural widths fit: rich lays them out)."""
    columns = table.columns
    spare = out.width - _total(out, table, _least)
    growth = [_natural(column) - _least(column) for column in columns]
    if spare >= sum(growth):
        return
    for column, grow in zip(columns, growth, strict=True):
        column.width = _least(column) + max(spare, 0) * grow // max(sum(growth), 1)


def _has(table: Table, header: str) -> bool:
    return any(column.header == header for column in table.columns)


def _left_out(out: Console, table: Table, optional: Sequence[str]) -> list[str]:
    """Leave out the first ``optional`` columns until ``table`` fits, then put
    back, last first, each of them that still fits; the headers left out."""
    columns = list(table.columns)

    def keep_all_but(dropped: Sequence[str]) -> bool:
        table.columns[:] = [c for c in columns if c.header not in dropped]
        for index, column in enumerate(table.columns):
            column._index = index  # rich finds a column's edges by its index
        return _total(out, table, _least) <= out.width

    dropped: list[str] = []
    for header in optional:
        if keep_all_but(dropped):
            break
        dropped.append(header)
    for header in reversed(dropped[:-1]):
        if keep_all_but([h for h in dropped if h != header]):
            dropped.remove(header)
    keep_all_but(dropped)
    return [h for h in optional if h in dropped]


def _print_at(out: Console, table: Table, width: int) -> None:
    """Print at ``width`` columns, past the console's own width if need be
    (a console caps what it prints at its width)."""
    own = out.width
    out.width = width
    try:
        out.print(table, crop=False, soft_wrap=False)
    finally:
        out.width = own
