"""How the tests read a refusal: the one line of the ``InputError`` a reader
raises on bad input (``file:line: reason``)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from optsched.errors import InputError

T = TypeVar("T")

MEMORY_CAP = 8_000_000
"""Bytes a reader may allocate on a fuzzed file (the seeds are read with
well under 1 MB)."""


def refusal(read: Callable[[Path], object], path: Path) -> str:
    """The message of the :class:`InputError` that ``read(path)`` raises,
    checked to be one line."""
    with pytest.raises(InputError) as caught:
        read(path)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


def located_refusal(
    read: Callable[[Path], object], path: Path, content: str | bytes
) -> str:
    """``content`` written to ``path``, the reason of ``read``'s refusal:
    its one line after the file name it starts with (``":3: ..."``)."""
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    message = refusal(read, path)
    assert message.startswith(str(path)), message
    return message[len(str(path)) :]


def assert_located_line(error: InputError, path: Path, reason_limit: int) -> None:
    """``error`` is one line that starts with ``path`` and has at most
    ``reason_limit`` characters after it."""
    message = str(error)
    assert message.startswith(str(path)), message
    assert "\n" not in message and "\r" not in message, message
    assert len(message) < len(str(path)) + reason_limit, message


def read_or_refused(
    read: Callable[[Path], T], path: Path, data: bytes, *, reason_limit: int
) -> T | None:
    """``data`` written to ``path`` and read by ``read`` within
    :data:`MEMORY_CAP` bytes: what it read, or ``None`` when it refused the
    file in one located line (:func:`assert_located_line`)."""
    path.write_bytes(data)
    tracemalloc.start()
    try:
        return read(path)
    except InputError as error:
        assert_located_line(error, path, reason_limit)
        return None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < MEMORY_CAP, f"{peak:,} bytes to read {len(data)} bytes"
