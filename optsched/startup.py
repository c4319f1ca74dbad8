"""Ctrl-C and SIGTERM from the command's first line to its last.

Imported first by the :mod:`optsched` package (so before the command line's
click and the commands' modules: two seconds of imports, pandas, OR-Tools);
from then on SIGTERM
raises :class:`Terminated` (a ``KeyboardInterrupt``) instead of killing the
process silently, and a ``KeyboardInterrupt`` that reaches the top level
during start-up prints one line instead of a traceback. Either way the exit
status is ``128 +`` the signal (130 for SIGINT, 143 for SIGTERM).

Installed only when the process *is* the command (``optsched`` or
``python -m optsched``): a program or a test run that imports the CLI keeps
its own handlers (the commands install theirs while they run).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import TracebackType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every command cleans up (no
    half-written output) before it exits with status 143."""

    signum = signal.SIGTERM


def terminate(signum: int, frame: object) -> None:
    """The SIGTERM handler: raise :class:`Terminated`."""
    raise Terminated()


def exit_status(error: BaseException) -> int:
    """128 + the signal that stopped the command (SIGINT unless it says)."""
    return 128 + int(getattr(error, "signum", signal.SIGINT))


def ignore_stop_signals() -> None:
    """Ignore further Ctrl-C and SIGTERM: the command is already stopping,
    and a second signal during its last line would print a traceback."""
    if threading.current_thread() is threading.main_thread():
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)


def is_the_command() -> bool:
    """Whether this process runs the ``optsched`` command itself."""
    # os.path, not pathlib: this module runs before any slow import.
    program = sys.argv[0] if sys.argv and sys.argv[0] else ""
    name = os.path.basename(program)
    parent = os.path.basename(os.path.dirname(program))
    return name == "optsched" or (name == "__main__.py" and parent == "optsched")


def _excepthook(
    kind: type[BaseException],
    error: BaseException,
    trace: TracebackType | None,
) -> None:
    if not issubclass(kind, KeyboardInterrupt):
        _previous_hook(kind, error, trace)
        return
    ignore_stop_signals()
    status = exit_status(error)
    sys.stderr.write(f"optsched: interrupted ({signal.Signals(status - 128).name})\n")
    sys.stderr.flush()
    # Start-up only (the commands catch their interrupts): nothing to clean.
    os._exit(status)


_previous_hook = sys.excepthook


def install_early() -> None:
    """SIGTERM raises :class:`Terminated`; an interrupt during start-up is one
    line (see the module notes). Only in the command's own process."""
    if (
        not is_the_command()
        or threading.current_thread() is not threading.main_thread()
    ):
        return
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminate)
    sys.excepthook = _excepthook


install_early()
