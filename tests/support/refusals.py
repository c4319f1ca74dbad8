"""How the tests read a refusal: the one line of the ``InputError`` a reader
raises on bad input (``file:line: reason``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from optsched.errors import InputError


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
