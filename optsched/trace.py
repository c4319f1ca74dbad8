"""A whole workload trace as read from a file, before windowing."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from optsched.errors import one_line
from optsched.instance import Instance


@dataclass(frozen=True, slots=True)
class SkipReport:
    """Jobs a reader left out, by reason.

    ``lines[reason]`` holds the first few 1-based line numbers (at most
    :attr:`MAX_LINES`); ``counts[reason]`` the total.
    """

    counts: Mapping[str, int] = field(default_factory=dict)
    lines: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    MAX_LINES = 10

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))
        object.__setattr__(self, "lines", MappingProxyType(dict(self.lines)))

    @property
    def total(self) -> int:
        """Number of jobs skipped for any reason."""
        return sum(self.counts.values())

    def summary(self) -> list[str]:
        """One line per reason: ``"12 jobs: size <= 0 (lines 40, 41, ...)"``."""
        out = []
        for reason, count in sorted(self.counts.items()):
            first = ", ".join(str(n) for n in self.lines.get(reason, ()))
            more = ", ..." if count > len(self.lines.get(reason, ())) else ""
            out.append(f"{count} jobs: {reason} (lines {first}{more})")
        return out


class SkipCollector:
    """Mutable helper readers use to build a :class:`SkipReport`."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lines: dict[str, list[int]] = {}

    def add(self, reason: str, line: int) -> None:
        """Record that the job on ``line`` was skipped for ``reason``."""
        self.counts[reason] = self.counts.get(reason, 0) + 1
        first = self.lines.setdefault(reason, [])
        if len(first) < SkipReport.MAX_LINES:
            first.append(line)

    def report(self) -> SkipReport:
        """Freeze into a :class:`SkipReport`."""
        return SkipReport(
            self.counts, {reason: tuple(v) for reason, v in self.lines.items()}
        )


@dataclass(frozen=True, slots=True)
class Trace:
    """A file read whole: its instance plus what the reader reported.

    Parameters
    ----------
    instance
        All jobs kept, with times as in the file.
    skipped
        Jobs left out and why (SWF only; empty for other formats).
    header
        Header fields (SWF ``; Key: value`` comments), keys as in the file.
    records
        Number of job records read (kept + skipped).
    """

    instance: Instance
    skipped: SkipReport = field(default_factory=SkipReport)
    header: Mapping[str, str] = field(default_factory=dict)
    records: int = 0

    def skip_note(self, path: str) -> str | None:
        """One line saying how many job records the reader left out, or ``None``.

        E.g. ``"t.swf: skipped 12 of 28,490 job records (7 runtime < 0, 5 size
        <= 0); see 'optsched info t.swf'"``: commands print it on stderr so
        that no job disappears silently, while stdout stays machine-readable.
        """
        if not self.skipped.total:
            return None
        counts = sorted(self.skipped.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        # "size <= 0 (processors missing)" -> "size <= 0": the note stays short.
        reasons = ", ".join(f"{n:,} {reason.split(' (')[0]}" for reason, n in counts)
        quoted = shlex.quote(path)
        see = f"'optsched info {path}'" if quoted == path else f"optsched info {quoted}"
        return one_line(
            f"{path}: skipped {self.skipped.total:,} of {self.records:,} job "
            f"records ({reasons}); see {see}"
        )


def note_skips(trace: Trace, path: str) -> None:
    """Print :meth:`Trace.skip_note` on stderr (``optsched: note: ...``), if any.

    Used by every command that reads a trace: stdout may be piped into
    another program, so the note goes to stderr.
    """
    note = trace.skip_note(path)
    if note is not None:
        print(f"optsched: note: {note}", file=sys.stderr)
