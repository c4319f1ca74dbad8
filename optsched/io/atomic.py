"""Write files atomically: a temporary file in the same folder, then rename.

A crash or a bad input half-way never leaves a partial output file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _target_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kwargs: object) -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it to ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    An ``OSError`` about the temporary file is raised as one about ``path``.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as error:
        raise _about(error, path) from None
    try:
        # mkstemp creates 0600 files; give the result the mode a plain open()
        # would (or keep the mode of the file it replaces).
        os.chmod(tmp, _target_mode(path))
        with os.fdopen(fd, mode, **kwargs) as handle:  # type: ignore[call-overload]
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(error, OSError) and error.filename == tmp:
            raise _about(error, path) from None
        raise


def _about(error: OSError, path: Path) -> OSError:
    """``error`` naming ``path``: the user never heard of the temporary file.

    An error of the temporary file (its folder vanished or is read-only, the
    rename onto a folder failed) is an error of writing ``path``.
    """
    return type(error)(error.errno, error.strerror, str(path))
