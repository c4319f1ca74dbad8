"""Write files atomically: a temporary file in the same folder, then rename.

A crash or a bad input half-way never leaves a partial output file behind.

What sits at the target path is never replaced by anything but a regular
file: a symbolic link is followed and its target replaced (the link stays);
a character device (``/dev/null``, ``/dev/full``, a terminal) or a FIFO with
a reader is written through, in place, since renaming onto it would destroy
the device node; a FIFO nobody reads, a block device or a socket is refused
with an ``OSError`` naming the path. Writers of companion files (a CSV's
provenance sidecar) write them only when :func:`replaces_a_file` says the
main output is a file: ``/dev/null.json`` would be a new file in ``/dev``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
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


def _existing_mode(path: Path) -> int | None:
    """``st_mode`` of what ``path`` names, links followed (``None``: nothing)."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None  # nothing there, or a dangling link: written as a file


def replaces_a_file(path: str | Path) -> bool:
    """Whether writing ``path`` makes (or replaces) a regular file.

    ``False`` for a device or a FIFO, written through in place: their
    companion files must not be written beside them.
    """
    mode = _existing_mode(Path(path))
    return mode is None or stat.S_ISREG(mode) or stat.S_ISDIR(mode)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **kwargs: object) -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it to ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    An ``OSError`` about the temporary file is raised as one about ``path``.
    A symbolic link is followed (its target is replaced, not the link); a
    character device or a FIFO is written through (see the module notes).
    """
    path = Path(path)
    if not replaces_a_file(path):
        with _write_through(path, mode, **kwargs) as handle:
            yield handle
        return
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as error:
        raise _about(error, path) from None
    try:
        # mkstemp creates 0600 files; give the result the mode a plain open()
        # would (or keep the mode of the file it replaces).
        os.chmod(tmp, _target_mode(target))
        with os.fdopen(fd, mode, **kwargs) as handle:  # type: ignore[call-overload]
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(error, OSError) and _of_the_output(error, tmp, target):
            raise _about(error, path) from None
        raise


@contextlib.contextmanager
def _write_through(path: Path, mode: str, **kwargs: object) -> Iterator[IO]:
    """Write into the character device or FIFO at ``path``, in place.

    A FIFO is opened without blocking first: with no reader the open fails
    at once (``ENXIO``) instead of waiting forever, and is refused. Errors
    of the writes (``/dev/full``: no space) name ``path``.
    """
    kind = os.stat(path).st_mode
    if not (stat.S_ISCHR(kind) or stat.S_ISFIFO(kind)):
        raise OSError(errno.EINVAL, "not a regular file, a device or a FIFO", str(path))
    flags = os.O_WRONLY | (os.O_NONBLOCK if stat.S_ISFIFO(kind) else 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OSError(error.errno, "a FIFO that nobody reads", str(path)) from None
        raise _about(error, path) from None
    os.set_blocking(fd, True)
    try:
        with os.fdopen(fd, mode, **kwargs) as handle:  # type: ignore[call-overload]
            yield handle
            handle.flush()
    except OSError as error:
        if _of_the_output(error, str(path), path):
            raise _about(error, path) from None
        raise


def _of_the_output(error: OSError, tmp: str, target: Path) -> bool:
    """Whether ``error`` is about writing the output: it names the temporary
    file or the target, or nothing (a write, flush or ``fsync`` on the open
    file: a full disk, ``EFBIG``, an I/O error), but carries an ``errno``."""
    if error.filename is None:
        return error.errno is not None
    return error.filename in (tmp, str(target))


def _about(error: OSError, path: Path) -> OSError:
    """``error`` naming ``path``: the user never heard of the temporary file.

    An error of the temporary file (its folder vanished or is read-only, the
    rename onto a folder failed) is an error of writing ``path``.
    """
    return type(error)(error.errno, error.strerror, str(path))
