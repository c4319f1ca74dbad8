"""The command's exit status, settled after its last byte of output.

A stop signal (Ctrl-C, SIGTERM) that arrives while a command runs makes it
exit with status ``128 +`` the signal. The command's own handlers
(:func:`optsched.startup.command_signals`) end when the command returns, and
until now nothing covered what came after: the unwinding of click, the flush
of a buffered stdout and the interpreter's shutdown. A signal there was
swallowed (exit 0, the Python handler never ran) or printed an ``Exception
ignored`` traceback from the shutdown, although the last lines of output
were still to be written (issue 32: a SIGINT at the end of ``gap -o``).

The rule, from the command's first line to the process's exit:

* a signal received before the exit status is settled ends the command with
  ``optsched: interrupted (SIGINT)`` and status 130 (143 for SIGTERM), even
  if the command had finished its work: the user asked it to stop, and the
  output, written atomically, is either complete or absent;
* the status is settled by :func:`settled_status` once every output is
  written, the ``atexit`` functions have run and stdout and stderr are
  flushed; the process then ends at once (:func:`leave`), so nothing is
  left after that point for a signal to interrupt.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from typing import Any, NoReturn

from optsched.startup import STOP_SIGNALS, interrupted

ExitCode = int | str | None


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        # A closed or broken stream: Python's own shutdown reports it.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()


def _pending_stop_signal() -> int | None:
    """A stop signal blocked and pending in this thread (SIGINT first)."""
    pending = signal.sigpending()
    return next((int(s) for s in STOP_SIGNALS if s in pending), None)


class LateSignals:
    """SIGINT and SIGTERM outside the command's own handlers.

    Until the command returns they do what the handlers they replace did
    (the start-up ones, :mod:`optsched.startup`); once it has returned they
    only record the signal, so that click's teardown is not cut (click
    turns a late ``KeyboardInterrupt`` into "Aborted!" and status 1, or
    swallows it to keep the status it was about to exit with) and
    :func:`settled_status` counts it.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.quiet = False
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        """Handle SIGINT and SIGTERM (main thread only)."""
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self.handle)

    def command_ended(self) -> None:
        """From now on, record signals without acting on them."""
        self.quiet = True

    def handle(self, signum: int, frame: Any) -> None:
        """Record ``signum`` once the command has returned; before, pass it
        to the handler this one replaced."""
        if self.quiet:
            if self.signum is None:
                self.signum = signum
            return
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:  # the default action: end by it
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)


def settled_status(code: ExitCode, late: LateSignals) -> int:
    """The process's exit status, given the status ``code`` the command ended
    with: ``128 + signum`` if a stop signal arrived before now (module notes).

    ``late`` records the signals since the command returned (its
    :meth:`LateSignals.command_ended` was called, so its handler never
    raises). Call it last, on the main thread, once everything else is done
    (:func:`leave`): it flushes stdout and stderr with the stop signals
    blocked, then reads what came. Its handler stays: a signal caught by
    another thread's C handler while the main thread had them blocked only
    reaches Python later, and must find a handler that records it (the
    default or ignoring ones made Python print "Signal 2 ignored due to race
    condition" and exit 0).
    """
    status = _status_number(code)
    if threading.current_thread() is not threading.main_thread():
        return status
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    _flush_standard_streams()
    signum = _pending_stop_signal() or late.signum
    if signum is None or status != 0:
        # An error status stays: the command failed before the signal.
        return status
    return interrupted(signum)


def _status_number(code: ExitCode) -> int:
    """What the interpreter would exit with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1


def leave(code: ExitCode, late: LateSignals) -> NoReturn:
    """End the command's process with its settled status, at once.

    The ``atexit`` functions run first, so that a signal during them still
    counts; then the status is settled and the process ends through
    ``os._exit``, skipping only the interpreter's teardown of modules and
    threads. That teardown made the status unreliable: after a Ctrl-C that
    had landed in code run by ``exec`` of a string (dataclasses build their
    methods so, during the imports) CPython kills itself with SIGINT once
    shut down, status -2 whatever the command said.
    """
    late.command_ended()
    atexit._run_exitfuncs()
    os._exit(settled_status(code, late))
