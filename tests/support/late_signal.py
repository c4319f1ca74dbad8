"""Run ``optsched ARGS`` as the command, sending itself a signal at one point.

Usage: ``python late_signal.py POINT SIGNAL ARGS...``. The points are the
last steps of a command that writes an output file, in order:

``before-rename``
    the first output file is written to its temporary file, not yet
    renamed;
``after-rename``
    the output (the path after ``-o``) is in place, the command has not
    returned;
``click-exit``
    the command returned, click is about to exit with its status;
``click-close``
    click is closing the command's context (its ``Exit`` is unwinding);
``flush``
    the exit status is being settled: stdout is flushed, the stop signals
    blocked;
``shutdown``
    the exit functions run (an ``atexit`` callback), after the last line.

The signal is sent with ``os.kill`` to the process itself, exactly once.
Used by ``tests/cli/test_reliability_late_signals.py``.
"""

from __future__ import annotations

import atexit
import os
import runpy
import signal
import sys
from typing import Any


def _send_once(signum: int) -> Any:
    sent = []

    def send(*_: object) -> None:
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signum)

    return send


class _FlushHook:
    """stdout whose flush sends the signal once the stop signals are blocked
    (the settling step; the command's own flushes come before)."""

    def __init__(self, stream: Any, send: Any) -> None:
        self._stream, self._send = stream, send

    def flush(self) -> None:
        if signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []):
            self._send()
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _install(point: str, send: Any, output: str) -> None:
    import click

    from optsched.io import atomic

    if point in ("before-rename", "after-rename"):
        replace = atomic.os.replace

        def hooked(source: Any, target: Any) -> None:
            if point == "before-rename":
                send()
            replace(source, target)
            if point == "after-rename" and os.path.abspath(target) == output:
                send()

        atomic.os.replace = hooked  # type: ignore[assignment]
    elif point in ("click-exit", "click-close"):
        name = "exit" if point == "click-exit" else "close"
        original = getattr(click.Context, name)

        def hooked_method(self: click.Context, *args: Any) -> Any:
            if self.parent is None:
                send()
            return original(self, *args)

        setattr(click.Context, name, hooked_method)
    elif point == "shutdown":
        atexit.register(send)
    elif point != "flush":
        raise SystemExit(f"unknown point {point}")


def main() -> None:
    point, name, *args = sys.argv[1:]
    send = _send_once(int(getattr(signal, name)))
    output = args[args.index("-o") + 1] if "-o" in args else ""
    _install(point, send, os.path.abspath(output))
    sys.argv = ["optsched", *args]
    if point == "flush":
        sys.stdout = _FlushHook(sys.stdout, send)
    # As ``python -m optsched``: sys.argv[0] becomes optsched/__main__.py, so
    # the process is the command (optsched.startup.is_the_command).
    runpy.run_module("optsched", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
