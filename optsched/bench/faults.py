"""Faults of the results store file, as one line naming the file.

SQLite reports a full disk, a read-only folder, a truncated or foreign file
as ``sqlite3`` exceptions that name nothing; :func:`reported` turns them into
:class:`StoreError` (an :class:`~optsched.errors.InputError`, so the command
line prints one line and exits with status 2). SQLite commits each row in its
own transaction, so such a fault never harms the rows already stored: they
stay readable and a re-run resumes after them.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from optsched.errors import InputError

P = ParamSpec("P")
R = TypeVar("R")


class StoreError(InputError, sqlite3.Error):
    """A fault of the results store file (also an ``sqlite3.Error``, so the
    handlers that tolerate a failing store keep tolerating it)."""


class _HasPath(Protocol):
    path: Path


HINTS = {
    "database or disk is full": "the rows stored so far are kept; free some "
    "space and run the command again to resume",
    "database disk image is malformed": "the file is damaged (truncated or "
    "overwritten)",
    "file is not a database": "not an SQLite file",
    "unable to open database file": "SQLite needs to create its journal "
    "files beside the store: is the folder writable?",
    "attempt to write a readonly database": "the file or its folder is read-only",
    "disk I/O error": "the file cannot be read or written",
}
"""What an SQLite message means for a user, by message."""


def reason(error: sqlite3.Error) -> str:
    """``error``'s message, with what it means for the store when known."""
    message = str(error)
    hint = HINTS.get(message)
    return f"results store: {message}" + (f"; {hint}" if hint else "")


def reported(
    method: Callable[Concatenate[Any, P], R],
) -> Callable[Concatenate[Any, P], R]:
    """Decorate a store method: an ``sqlite3.Error`` becomes a :class:`StoreError`
    naming the store's ``path``."""

    @functools.wraps(method)
    def wrapper(self: _HasPath, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except StoreError:
            raise
        except sqlite3.Error as error:
            raise StoreError(reason(error), self.path) from None

    return wrapper


def check_store_path(path: Path) -> None:
    """Refuse a store path SQLite must not open: anything but a regular file.

    ``/dev/null`` (SQLite would create ``/dev/null-journal`` beside it), a
    FIFO (opening it blocks), a directory or a socket.

    Raises
    ------
    StoreError
        What is at ``path``.
    """
    if str(path) == ":memory:":
        return
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return  # created as a new store
    except OSError as error:
        raise StoreError(f"results store: {error.strerror}", path) from None
    if stat.S_ISREG(mode):
        return
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    raise StoreError(f"results store: {kind}; a results store is an SQLite file", path)
