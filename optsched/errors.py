"""Errors raised on bad input.

Every reader error becomes one :class:`InputError` whose message is a single
line ``file:line: reason``; the CLI prints it and exits with status 2.
"""

from __future__ import annotations

from pathlib import Path


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
        return f"{where}: {self.reason}"

    def __str__(self) -> str:
        return self.message
