"""Bytes and text of instance files, shared by format detection and the readers.

Every reader (SWF, native JSON, strip packing) and :func:`optsched.io.detect_format`
go through these functions, so that a file gives the same one-line
:class:`~optsched.errors.InputError` whichever path reads it:

- gzip is recognised by its magic bytes (not the ``.gz`` name), and a
  truncated or corrupt stream is ``file: truncated gzip file: ...`` or
  ``file: corrupt gzip file: ...``;
- a UTF-8 byte order mark is skipped (editors on Windows write one);
- UTF-16 text is refused with a message that says so; each reader refuses
  binary data (NUL bytes) without quoting it;
- only regular files are read: a FIFO or a device (``/dev/zero``) may never
  end, a directory has no content; each is refused with one line;
- content is capped (:data:`MAX_CONTENT_BYTES`, :data:`MAX_LINES`), stored
  or decompressed: a gzip stream is inflated chunk by chunk and refused as
  soon as it passes a cap, so a small "gzip bomb" (megabytes expanding to
  gigabytes of newlines) costs at most the cap in memory, not gigabytes.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import tomllib
import zlib
from pathlib import Path
from typing import Any

from optsched.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

TRUNCATED_GZIP = (
    "truncated gzip file: compressed data ended before the end-of-stream marker"
)

# What a damaged gzip stream raises: EOFError when it ends early, BadGzipFile
# (an OSError) for a bad header, CRC or length, zlib.error for bad deflate data.
_GZIP_ERRORS = (EOFError, OSError, zlib.error)


def _gzip_error(path: Path, error: BaseException) -> InputError:
    if isinstance(error, EOFError):
        return InputError(TRUNCATED_GZIP, path)
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return InputError(f"corrupt gzip file: {reason}", path)


MAX_CONTENT_BYTES = 1 << 30
"""Largest content read, in bytes (1 GiB), as stored or once decompressed.

The largest traces of the Parallel Workloads Archive are a few hundred MB
uncompressed; an input above this is refused rather than read."""

MAX_LINES = 1 << 24
"""Most lines read (16,777,216): a few times the largest archive trace's
jobs. Blank lines count: a file of newlines only would otherwise make a list
of millions of empty lines."""

_CHUNK = 1 << 20


def regular_file(path: Path) -> int:
    """Refuse anything but a regular file (links followed) with one line;
    return its size in bytes.

    A FIFO or a character device blocks or never ends, a directory has no
    content: each would hang a reader or fail with an unclear message.
    """
    try:
        status = os.stat(path)
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", path) from None
    mode = status.st_mode
    if stat.S_ISDIR(mode):
        raise InputError("cannot read file: a directory", path)
    if not stat.S_ISREG(mode):
        raise InputError(
            "cannot read file: not a regular file (a FIFO or a device may never end)",
            path,
        )
    return status.st_size


def read_bytes(path: Path) -> bytes:
    """The file's bytes as stored (compressed or not), at most the caps."""
    size = regular_file(path)
    _within_caps(path, size, 0)  # before reading: a 10 GB file is not read
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", path) from None
    _within_caps(path, len(raw), raw.count(b"\n"))
    return raw


def _within_caps(path: Path, size: int, lines: int) -> None:
    if size > MAX_CONTENT_BYTES:
        raise InputError(
            f"too large: over {MAX_CONTENT_BYTES >> 20} MiB of content (the cap "
            "optsched reads; cut the file into windows first)",
            path,
        )
    if lines > MAX_LINES:
        raise InputError(
            f"too many lines: over {MAX_LINES} (the cap optsched reads)", path
        )


def decompress(path: Path, raw: bytes) -> bytes:
    """``raw`` itself, or its decompression when it starts with the gzip magic.

    Inflated chunk by chunk (members one after the other, as ``gzip``
    writes them), and refused once it passes :data:`MAX_CONTENT_BYTES` or
    :data:`MAX_LINES`.
    """
    if not raw.startswith(GZIP_MAGIC):
        return raw
    chunks: list[bytes] = []
    size = lines = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw), mode="rb") as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                lines += chunk.count(b"\n")
                _within_caps(path, size, lines)
                chunks.append(chunk)
    except _GZIP_ERRORS as error:
        raise _gzip_error(path, error) from None
    return b"".join(chunks)


def read_data(path: Path) -> tuple[bytes, bytes]:
    """``(raw, data)``: the stored bytes (for the checksum) and the content."""
    raw = read_bytes(path)
    return raw, decompress(path, raw)


def head(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of the content, decompressed if gzip.

    Only as much of a gzip stream is inflated as ``size`` needs; damage past
    that point is reported by the reader that reads the whole file.
    """
    regular_file(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(size)
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", path) from None
    if not raw.startswith(GZIP_MAGIC):
        return raw
    try:
        with gzip.open(path, "rb") as stream:
            return stream.read(size)
    except _GZIP_ERRORS as error:
        raise _gzip_error(path, error) from None


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark."""
    return data[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data


def refuse_utf16(path: Path, data: bytes, expected: str) -> None:
    """Refuse text with a UTF-16 byte order mark, naming what was ``expected``.

    Without this check UTF-16 would be called binary (its ASCII characters
    come with NUL bytes), which does not tell the user how to fix the file.
    """
    if data.startswith(_UTF16_BOMS):
        raise InputError(f"UTF-16 text: expected {expected} in UTF-8 or ASCII", path)


def decode_utf8(path: Path, data: bytes, expected: str) -> str:
    """Decode UTF-8 text (BOM skipped); name the line of the first bad byte."""
    data = strip_bom(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[error.start]:02x}): expected {expected}",
            path,
            line,
        ) from None


def load_toml(text: str, path: str | Path) -> dict[str, Any]:
    """``tomllib.loads`` with every failure as one located :class:`InputError`
    (suite and scenario files)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        where = re.search(r"at line (\d+)", str(error))
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise InputError(
            f"invalid TOML: {reason}", path, int(where.group(1)) if where else None
        ) from None
    except RecursionError:
        raise InputError("invalid TOML: nested too deeply", path) from None
    except ValueError:
        # tomllib refuses integers of over 4300 digits with a ValueError.
        raise InputError("invalid TOML: a number too long", path) from None


def read_toml_file(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of a TOML file and its data (:func:`load_toml`); a file that
    is not UTF-8 is one located :class:`InputError`."""
    text = decode_utf8(path, read_bytes(path), "a TOML file")
    return text, load_toml(text, path)
