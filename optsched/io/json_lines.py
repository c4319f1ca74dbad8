"""Line numbers of the values of a JSON text, by JSON path.

``json`` reports positions only for syntax errors; a validation error
(jsonschema's ``error.absolute_path``, or a reader's own cross-field check)
names a path. To point a message at a line, the text is walked once more:
containers by hand, scalars and keys with the ``json`` module's own decoders
(so strings holding braces, brackets or escaped quotes are skipped exactly).
Only used on the error path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

JsonPath = tuple[str | int, ...]
"""A path into a JSON value: object keys and array indices, outermost first."""

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def line_of(text: str, offset: int) -> int:
    """1-based line of the character at ``offset``."""
    return text.count("\n", 0, offset) + 1


def json_lines(text: str) -> Callable[[JsonPath], int | None]:
    """Walk a valid JSON ``text`` once; return ``path -> line`` (see
    :func:`json_line`). For several look-ups in the same text."""
    try:
        return JsonLocator(text).line
    except (ValueError, IndexError, RecursionError):
        return lambda path: None


def json_line(text: str, path: JsonPath) -> int | None:
    """1-based line of the value at ``path`` in a valid JSON ``text``.

    Falls back to the nearest enclosing value that exists; ``None`` only if
    the text cannot be walked (not JSON, or nested too deeply to recurse).
    """
    return json_lines(text)(path)


class JsonLocator:
    """Start offset of every value of a (valid) JSON text, by JSON path.

    Raises ``ValueError``, ``IndexError`` or ``RecursionError`` on a text
    that is not valid JSON or is nested too deeply.

    Attributes
    ----------
    offsets
        Offset of the first character of each value, keyed by its path.
    duplicate
        Path and offset of the first key repeated within one object, if any
        (the last value wins in ``json.loads``; optsched refuses the file).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets: dict[JsonPath, int] = {}
        self.duplicate: tuple[JsonPath, int] | None = None
        self._decoder = json.JSONDecoder()
        self._value(0, ())

    def line(self, path: JsonPath) -> int | None:
        """Line of the value at ``path``, or of its nearest located ancestor."""
        for depth in range(len(path), -1, -1):
            offset = self.offsets.get(path[:depth])
            if offset is not None:
                return line_of(self.text, offset)
        return None

    def _skip(self, index: int) -> int:
        match = _WHITESPACE.match(self.text, index)
        assert match is not None
        return match.end()

    def _value(self, index: int, path: JsonPath) -> int:
        index = self._skip(index)
        self.offsets[path] = index
        char = self.text[index]
        if char == "{":
            return self._object(index + 1, path)
        if char == "[":
            return self._array(index + 1, path)
        _, end = self._decoder.raw_decode(self.text, index)
        return end

    def _object(self, index: int, path: JsonPath) -> int:
        seen: set[str] = set()
        index = self._skip(index)
        if self.text[index] == "}":
            return index + 1
        while True:
            index = self._skip(index)
            key_offset = index
            key, index = json.decoder.scanstring(self.text, index + 1)  # type: ignore[attr-defined]
            if key in seen and self.duplicate is None:
                self.duplicate = ((*path, key), key_offset)
            seen.add(key)
            index = self._skip(index) + 1  # the colon
            index = self._skip(self._value(index, (*path, key)))
            if self.text[index] == "}":
                return index + 1
            index += 1  # the comma

    def _array(self, index: int, path: JsonPath) -> int:
        index = self._skip(index)
        if self.text[index] == "]":
            return index + 1
        position = 0
        while True:
            index = self._skip(self._value(index, (*path, position)))
            position += 1
            if self.text[index] == "]":
                return index + 1
            index += 1  # the comma
