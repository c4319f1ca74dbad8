"""Writer of schedules as Standard Workload Format (SWF) files.

Any schedule (simulated, heuristic or optimal) of an instance becomes an SWF
log, the format of the Parallel Workloads Archive (version 2.2, see
:mod:`optsched.io.swf`), so that tools reading SWF (and ``optsched info``)
see the schedule as if it were a recorded one. One line per job of the
instance, 18 fields, sorted by submit time then job number:

==  ==========================  ===============================================
 1  job number                  the job's id
 2  submit time                 release + the window's shift (below)
 3  wait time                   start - release
 4  run time                    end - start
 5  allocated processors        the job's size
 6  average CPU time            -1 (not modelled)
 7  used memory                 -1 (not modelled)
 8  requested processors        the job's size (jobs are rigid)
 9  requested time              the job's estimate (what the scheduler saw)
10  requested memory            -1 (not modelled)
11  status                      1 (completed); 0 (failed) for a job killed at
                                its estimate: the SWF definition's 5
                                (cancelled) is for jobs the user stopped,
                                mostly before they ran
12  user id                     the job's, else -1
13  group id                    the job's, else -1
14  executable number           the job's, else -1
15  queue number                the job's, else -1
16  partition number            the job's, else -1
17  preceding job number        the job's, else -1
18  think time                  the job's, else -1
==  ==========================  ===============================================

Time base: an instance cut from a trace has releases rebased to 0; the
window's shift (:attr:`optsched.instance.Window.shift`) is added back, so
that the file's submit times line up with the original trace's (a job keeps
its submit time and number). Wait and run times do not depend on it.

A job of the instance without a placement (a partial schedule) is written
with wait, run time and allocated processors -1 and status 5 (cancelled: it
never ran); reading the file back skips it (run time missing). Busy blocks
of the machine (a recorded initial state) have no SWF record and are not
written; migrations are not recorded either (SWF has no processor numbers).

The header records ``Version: 2.2``, the computer and installation (from
the original trace's header when given, else ``unknown``), ``MaxJobs``,
``MaxRecords``, ``MaxProcs`` (the machine's processors), the trace's
``UnixStartTime``, ``TimeZoneString`` and ``MaxNodes`` when known, and
``Note`` lines naming optsched, its version, the producer (policy spec or
solver), the instance and the time base. Reading it back with
:func:`optsched.io.swf.read_swf` gives every placed job with its id, size,
run time and estimate, and its recorded schedule (submit + wait) is the
written one, shifted by the window's shift.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from optsched.errors import one_line
from optsched.instance import Instance, Job
from optsched.io.atomic import atomic_write
from optsched.schedule import Placement, Schedule

SWF_VERSION = "2.2"
COMPLETED = 1
FAILED = 0
CANCELLED = 5

# Header keys copied from the original trace when its header is given: they
# describe the machine and the clock, which a schedule does not change.
_COPIED = ("Installation", "UnixStartTime", "TimeZoneString", "MaxNodes")


def write_swf(
    schedule: Schedule,
    path: str | Path,
    instance: Instance,
    *,
    header: Mapping[str, str] | None = None,
) -> None:
    """Write ``schedule`` of ``instance`` as an SWF file, atomically.

    Parameters
    ----------
    schedule
        Placements of the instance's jobs (see the module docstring for the
        fields written).
    path
        Output file; nothing is left there if writing fails.
    instance
        The jobs (submit times, sizes, estimates, SWF extras) and the
        machine.
    header
        The original trace's header (:attr:`optsched.trace.Trace.header`),
        from which ``Computer``, ``Installation``, ``UnixStartTime``,
        ``TimeZoneString`` and ``MaxNodes`` are copied; ``None`` when
        unknown.

    Raises
    ------
    ValueError
        When the schedule places a job that is not in the instance.
    """
    text = swf_text(schedule, instance, header=header)
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def swf_text(
    schedule: Schedule, instance: Instance, *, header: Mapping[str, str] | None = None
) -> str:
    """The SWF file :func:`write_swf` writes, as one string."""
    jobs = instance.jobs_by_id()
    unknown = sorted(schedule.placements.keys() - jobs.keys())
    if unknown:
        raise ValueError(f"job {unknown[0]} is placed but not in the instance")
    # SWF's partial-execution lines record checkpoint/restart runs of a job,
    # not a scheduler's preemption: refuse rather than bend them.
    schedule.refuse_pieces("swf")
    schedule.refuse_lost("swf")
    shift = _shift(instance)
    lines = [*_header_lines(schedule, instance, header or {}, shift)]
    ordered = sorted(instance.jobs, key=lambda job: (job.release, job.id))
    for job in ordered:
        placement = schedule.placements.get(job.id)
        killed = job.id in schedule.killed
        lines.append(_job_line(job, placement, killed, shift))
    return "\n".join(lines) + "\n"


def _shift(instance: Instance) -> int:
    window = instance.source.window
    return 0 if window is None else window.shift


def _first_line(value: str) -> str:
    # Header values may span lines (continuations joined with newlines) and
    # come from a file: one printable line each.
    return one_line(value.split("\n")[0].strip())


def _header_lines(
    schedule: Schedule, instance: Instance, header: Mapping[str, str], shift: int
) -> Iterator[str]:
    from optsched import __version__

    yield f"; Version: {SWF_VERSION}"
    yield f"; Computer: {_first_line(header.get('Computer', 'unknown'))}"
    for key in _COPIED:
        if key in header:
            yield f"; {key}: {_first_line(header[key])}"
    yield f"; MaxJobs: {len(instance.jobs)}"
    yield f"; MaxRecords: {len(instance.jobs)}"
    yield f"; MaxProcs: {instance.processors}"
    producer = one_line(schedule.producer) or "unknown"
    yield f"; Note: written by optsched {__version__}, producer (policy) {producer}"
    name = one_line(instance.name) or "unnamed"
    source = instance.source
    origin = f" from {one_line(source.file)}" if source.file else ""
    sha = f" sha256 {source.sha256}" if source.sha256 else ""
    yield f"; Note: instance {name}{origin}{sha}"
    yield (
        f"; Note: submit time = release + {shift} (the window's shift, the "
        "original trace's time base); wait = start - submit; run time = end - "
        "start; status 0 = killed at its requested time"
    )
    if instance.machine.unavailable:
        yield (
            f"; Note: the machine's {len(instance.machine.unavailable)} busy "
            "blocks (initial state) are not recorded"
        )
    yield ";"


def _job_line(job: Job, placement: Placement | None, killed: bool, shift: int) -> str:
    if placement is None:
        wait = run = allocated = -1
        status = CANCELLED
    else:
        wait = placement.start - job.release
        run = placement.end - placement.start
        # A moldable job's allocation is its mode's, its request job.size.
        allocated = len(placement.processors) if placement.processors else job.size
        status = FAILED if killed else COMPLETED
    fields = (
        job.id,
        job.release + shift,
        wait,
        run,
        allocated,
        -1,
        -1,
        job.size,
        job.requested,
        -1,
        status,
        _value(job.user),
        _value(job.group),
        _value(job.executable),
        _value(job.queue),
        _value(job.partition),
        _value(job.preceding_job),
        _value(job.think_time),
    )
    return " ".join(str(value) for value in fields)


def _value(value: int | None) -> int:
    return -1 if value is None else value
