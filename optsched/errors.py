"""Errors raised on bad input.

Every reader error becomes one :class:`InputError` whose message is a single
line ``file:line: reason``; the CLI prints it and exits with status 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeGuard

SHOWN_LIMIT = 40
"""Default length of a value quoted from a file in a message (see :func:`shown`)."""


def shown(value: object, limit: int = SHOWN_LIMIT) -> str:
    r"""A short, one-line, printable quotation of a value read from a file.

    Error messages quote the offending value (``got 'x'``) but must stay one
    line and must not copy a file's contents to the terminal: ``repr`` quotes
    strings and escapes control characters (newlines, escape sequences, NUL),
    and anything longer than ``limit`` characters is cut with ``...``.

    Parameters
    ----------
    value
        A string, number or any other object. Containers are named, not
        expanded: a JSON list may be megabytes long or too deep to ``repr``.
    limit
        Maximum length of the result (at least 8).

    Examples
    --------
    >>> print(shown("x"), shown("a\nb"), shown("y" * 100, limit=12))
    'x' 'a\nb' 'yyyyyyy...'
    >>> shown(10**5000)
    'an integer of 16610 bits'
    """
    limit = max(limit, 8)
    if isinstance(value, list | tuple | dict | set):
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, int) and value.bit_length() > 4 * limit:
        # repr of a huge int is slow, and refused past 4300 digits.
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    if not text.isprintable():  # the repr of another type may hold newlines
        text = text.encode("unicode_escape").decode("ascii")
    if len(text) <= limit:
        return text
    quote = text[-1] if text[-1] in "'\"" else ""
    return text[: limit - 3 - len(quote)] + "..." + quote


def is_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an integer >= 0 and no ``bool`` (``True`` is an
    int to Python, but a ``True`` count is a bug upstream)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def one_line(text: str) -> str:
    """``text`` with control characters (newlines included) escaped.

    A file name or a reason holding a newline must not split a message.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


REASON_LIMIT = 500
"""Longest reason of an :class:`InputError`, in characters: readers quote
values with :func:`shown`, and this catches a quotation that did not (a
table name of 5,000 digits must not fill the terminal). Long enough for the
longest legitimate reasons (two paths and two sha256 digests)."""


def _short(reason: str) -> str:
    """``reason``, its middle cut when longer than :data:`REASON_LIMIT`
    (the start says where, the end usually what was expected)."""
    if len(reason) <= REASON_LIMIT:
        return reason
    keep = (REASON_LIMIT - 5) // 2
    return f"{reason[:keep]} ... {reason[-keep:]}"


class InputError(ValueError):
    """Bad input, located in a file.

    Parameters
    ----------
    reason
        What is wrong and what was expected, e.g.
        ``"field 5 (allocated processors): expected an integer, got 'x'"``.
    path
        The file read, if any.
    line
        1-based line number, if the error belongs to one line.
    """

    def __init__(
        self, reason: str, path: str | Path | None = None, line: int | None = None
    ) -> None:
        self.reason = reason
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one-line message ``file:line: reason``."""
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return one_line(f"{where}: {_short(self.reason)}")

    def __str__(self) -> str:
        return self.message
