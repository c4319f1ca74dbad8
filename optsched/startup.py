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

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

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


def interrupted(signum: int) -> int:
    """Print the interruption line; the status of ``signum``, 128 + it."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"optsched: interrupted ({signal.Signals(signum).name})\n")
        sys.stderr.flush()
    return 128 + signum


def ignore_stop_signals() -> None:
    """Ignore further Ctrl-C and SIGTERM: the command is already stopping,
    and a second signal during its last line would print a traceback."""
    if threading.current_thread() is threading.main_thread():
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)


class Stopped:
    """The stop signal a command received (``signum``: ``None`` if none).

    A solve interrupted by it returns its best result so far (the library's
    Ctrl-C contract) instead of raising, and the command prints that result:
    :func:`command_signals`'s caller then still exits with ``128 + signum``.
    """

    def __init__(self) -> None:
        self.signum: int | None = None

    def handle(self, signum: int, frame: object) -> None:
        """The command's SIGINT and SIGTERM handler.

        A handler of our own rather than ``signal.default_int_handler``:
        CP-SAT then leaves SIGINT alone (it takes it only when Python's
        default handler is in place, :mod:`optsched.models.rigid.cpsat`), so
        that a Ctrl-C during a solve is never swallowed by the solver, nor
        SIGINT reset to a silent kill when the solver goes.
        """
        if self.signum is None:
            self.signum = signum
        if signum == signal.SIGTERM:
            raise Terminated()
        raise KeyboardInterrupt()


def stop_searches() -> None:
    """Stop the CP-SAT searches of this process (if it imported CP-SAT)."""
    cpsat = sys.modules.get("optsched.models.rigid.cpsat")
    # A signal during its import finds the module half built: no search
    # has started then.
    stop = getattr(cpsat, "stop_searches", None)
    if stop is not None:
        stop()


def interrupt_behind(error: BaseException) -> KeyboardInterrupt | None:
    """The interrupt that caused ``error``, if any.

    An extension module whose initialisation a Ctrl-C cut short reports an
    ``ImportError("initialization failed")`` caused by the
    ``KeyboardInterrupt`` (pybind11's modules, OR-Tools among them).
    """
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def watch_stop_signals(reader: Any, closed: threading.Event) -> None:
    """Stop CP-SAT searches as soon as a stop signal's number arrives on
    ``reader`` (the pair of the socket given to ``signal.set_wakeup_fd``),
    even while the main thread sits in a solver, whose return only then
    lets the Python handler run; searches started later are stopped too,
    until ``closed`` is set."""
    while True:
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data or closed.is_set():
            return
        if any(byte in STOP_SIGNALS for byte in data):
            stop_searches()
            while not closed.wait(0.1):
                stop_searches()
            return


@contextlib.contextmanager
def watched_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """``handler`` for SIGINT and SIGTERM, and CP-SAT searches stopped at
    once when either comes (:func:`watch_stop_signals`), inside the block.

    Main thread only (elsewhere signals are left alone); the previous
    handlers and wakeup file descriptor are put back on exit. Blocks nest:
    a run of ``optsched bench`` inside a command has its own.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import socket

    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    closed = threading.Event()
    watcher = threading.Thread(
        target=watch_stop_signals,
        args=(reader, closed),
        name="optsched-signals",
        daemon=True,
    )
    old_fd: int | None = None
    try:
        # The setup itself can be interrupted (Python's previous handler
        # raises): every step is undone below only if it was done.
        old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        watcher.start()
        for number in STOP_SIGNALS:
            signal.signal(number, handler)
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old if old is not None else signal.SIG_DFL)
        if old_fd is not None:
            signal.set_wakeup_fd(old_fd)
        closed.set()
        writer.close()  # the watcher reads end-of-file and returns
        if watcher.ident is not None:  # started
            watcher.join(timeout=5)
        reader.close()
        cpsat = sys.modules.get("optsched.models.rigid.cpsat")
        resume = getattr(cpsat, "resume_searches", None)  # None: half imported
        if resume is not None:
            resume()


@contextlib.contextmanager
def command_signals() -> Iterator[Stopped]:
    """While a command runs: SIGINT raises ``KeyboardInterrupt`` and SIGTERM
    :class:`Terminated`, both stop any CP-SAT search at once
    (:func:`watched_signals`), and the :class:`Stopped` yielded records
    which came."""
    stopped = Stopped()
    with watched_signals(stopped.handle):
        yield stopped


def is_the_command() -> bool:
    """Whether this process runs the ``optsched`` command itself."""
    # os.path, not pathlib: this module runs before any slow import.
    program = sys.argv[0] if sys.argv and sys.argv[0] else ""
    name = os.path.basename(program)
    parent = os.path.basename(os.path.dirname(program))
    if name == "optsched" or (name == "__main__.py" and parent == "optsched"):
        return True
    # ``python -m optsched`` while runpy imports the package: sys.argv[0] is
    # still "-m" then, and only the interpreter's own arguments say which
    # module runs (a signal there printed a traceback).
    return program == "-m" and _runs_module_optsched(getattr(sys, "orig_argv", []))


def _runs_module_optsched(arguments: list[str]) -> bool:
    """Whether the interpreter's ``arguments`` (``sys.orig_argv``) run
    ``-m optsched``: the first of them that is not an interpreter option."""
    remaining = iter(arguments[1:])
    for argument in remaining:
        if argument in ("-X", "-W"):  # an option with a separate value
            next(remaining, None)
        elif argument == "-m":
            return next(remaining, None) == "optsched"
        elif argument.startswith("-m"):
            return argument == "-moptsched"
        elif argument.startswith("-c") or not argument.startswith("-"):
            return False  # a command or a script runs
    return False


def _excepthook(
    kind: type[BaseException],
    error: BaseException,
    trace: TracebackType | None,
) -> None:
    if not issubclass(kind, KeyboardInterrupt):
        _previous_hook(kind, error, trace)
        return
    ignore_stop_signals()
    # Start-up only (the commands catch their interrupts): nothing to clean.
    os._exit(interrupted(exit_status(error) - 128))


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
