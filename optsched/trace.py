"""A whole workload trace as read from a file, before windowing."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from optsched.errors import one_line
from optsched.instance import Instance

SKIP_STATUS = "status not selected (--status)"
"""Skip reason of the jobs whose status was not selected (readers and
:func:`keep_statuses` count them under it)."""


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
            lines = self.lines.get(reason, ())
            if not lines:
                # Readers without line numbers (a JSON instance's jobs).
                out.append(f"{count} jobs: {reason}")
                continue
            first = ", ".join(str(n) for n in lines)
            more = ", ..." if count > len(lines) else ""
            out.append(f"{count} jobs: {reason} (lines {first}{more})")
        return out


@dataclass(frozen=True, slots=True)
class FoldReport:
    """Partial-execution lines an SWF reader folded into their jobs.

    Parameters
    ----------
    jobs
        Jobs written on more than one line (each read as one job).
    partial_lines
        Their partial-execution lines (status 2, 3 or 4).
    summaries
        Their summary lines (status 0, 1 or 5): at most one per job.
    rule
        How the run time was taken: ``"summary"`` (the summary line's) or
        ``"sum"`` (the sum of the partial executions').
    """

    jobs: int = 0
    partial_lines: int = 0
    summaries: int = 0
    rule: str = "summary"

    @property
    def lines_merged(self) -> int:
        """Job lines that did not become a job of their own."""
        return self.partial_lines + self.summaries - self.jobs


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
        Number of job records read (kept + skipped): SWF job lines, a job's
        partial-execution lines counting once with it.
    folded
        Partial-execution lines folded into their jobs (SWF only).
    statuses
        Jobs read by SWF status code (field 11; -1 for unknown), before the
        status filter and the skips (SWF only).
    estimates_missing
        Jobs kept whose estimate is their run time because the file has
        none (SWF field 9 missing).
    """

    instance: Instance
    skipped: SkipReport = field(default_factory=SkipReport)
    header: Mapping[str, str] = field(default_factory=dict)
    records: int = 0
    folded: FoldReport = field(default_factory=FoldReport)
    statuses: Mapping[int, int] = field(default_factory=dict)
    estimates_missing: int = 0

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
        return one_line(
            f"{path}: skipped {self.skipped.total:,} of {self.records:,} job "
            f"records ({reasons}); see {_info_command(path)}"
        )

    def chain_note(self, path: str) -> str | None:
        """One line when preceding-job links (SWF field 17) are ignored: a job
        naming itself or a job not in the file, or links closing a cycle
        (:func:`optsched.site.chains.chain_graph` drops them, keeping the
        rest); ``None`` when every link holds or no job has one."""
        if all(job.preceding_job is None for job in self.instance.jobs):
            return None
        from optsched.site.chains import chain_counts

        counts = chain_counts(self.instance)
        if not counts.dropped_missing and not counts.dropped_cycles:
            return None
        return (
            f"{path}: {counts.dropped_missing + counts.dropped_cycles} preceding-job "
            f"links ignored ({counts.dropped_missing} name the job itself or a job "
            f"not in the file, {counts.dropped_cycles} close a cycle); chains "
            "keep the others"
        )

    def empty_note(self, path: str) -> str | None:
        """One line when the file holds no job to schedule (a native file with
        an empty ``jobs`` list is valid: the commands answer about nothing)."""
        if self.instance.jobs:
            return None
        return f"{path}: no jobs: nothing to schedule (every value below is 0)"

    def estimate_note(self, path: str) -> str | None:
        """One line saying how many jobs use their run time as estimate, or ``None``.

        E.g. ``"t.swf: estimates missing for 8,233 of 32,000 jobs (SWF field
        9): their run time is used, so backfilling policies such as EASY know
        it exactly; see 'optsched info t.swf'"``. Without this note an EASY
        result on such a trace would silently be an oracle policy's.
        """
        if not self.estimates_missing:
            return None
        batsim = self.header.get("format") == "batsim"
        source = "Batsim walltime -1 or none" if batsim else "SWF field 9"
        return one_line(
            f"{path}: estimates missing for {self.estimates_missing:,} of "
            f"{len(self.instance.jobs):,} jobs ({source}): their run time is "
            f"used, so backfilling policies such as EASY know it exactly; see "
            f"{_info_command(path)}"
        )


def _info_command(path: str) -> str:
    quoted = shlex.quote(path)
    return f"'optsched info {path}'" if quoted == path else f"optsched info {quoted}"


def keep_statuses(trace: Trace, statuses: Collection[int]) -> Trace:
    """The trace without the jobs whose status is not in ``statuses``.

    For readers that do not filter by status themselves (JSON instances: a
    job's SWF status, ``None`` counting as -1, unknown). The jobs left out
    are added to the skip report (without line numbers).
    """
    wanted = frozenset(statuses)
    kept = [j for j in trace.instance.jobs if _code(j.status) in wanted]
    dropped = len(trace.instance.jobs) - len(kept)
    if not dropped:
        return trace
    counts = {**trace.skipped.counts}
    counts[SKIP_STATUS] = counts.get(SKIP_STATUS, 0) + dropped
    return replace(
        trace,
        instance=trace.instance.with_jobs(kept),
        skipped=SkipReport(counts, trace.skipped.lines),
        records=trace.records or len(trace.instance.jobs),
    )


def _code(status: int | None) -> int:
    return -1 if status is None or status < 0 else status


def note_skips(trace: Trace, path: str) -> None:
    """Print the trace's notes on stderr (``optsched: note: ...``), if any.

    :meth:`Trace.skip_note` and :meth:`Trace.estimate_note`, one line each.
    Used by every command that reads a trace: stdout may be piped into
    another program, so the notes go to stderr.
    """
    notes = (
        trace.skip_note(path),
        trace.estimate_note(path),
        trace.empty_note(path),
        trace.chain_note(path),
    )
    for note in notes:
        if note is not None:
            print(f"optsched: note: {note}", file=sys.stderr)
