"""``optsched info FILE``: what an instance or a trace holds.

Prints the job count (and, for a trace, the records read, the jobs the
reader skipped, by reason, the partial-execution lines it folded into their
jobs, the jobs by SWF status and the jobs whose estimate is their run time
because the file has none), the machine, the release span, the offered load,
the total area, two lower bounds on the makespan and a distribution summary
of runtimes, sizes and estimates. With window options, the numbers describe
the window; the skip report is still the whole trace's.

Notation: ``n`` jobs, job ``j`` with release ``r_j``, size ``q_j`` and
runtime ``p_j`` on ``m`` processors; ``A = sum_j q_j p_j`` the total area.

span
    ``max_j r_j - min_j r_j``.
offered load
    ``A / (m * span)``: the fraction of the machine the jobs would occupy if
    the work were spread evenly over the submit span (it can exceed 1;
    undefined when the span is 0).
area bound
    ``ceil(A / m)``: no schedule finishes all work less than this long after
    the first release, since at most ``m`` processors work at any time and
    times are integers (a lower bound on ``C_max - min_j r_j``).
makespan lower bound
    ``max(min_j r_j + ceil(A / m), max_j (r_j + p_j))``: the area bound from
    the first release, and no job ends before its release plus its runtime
    (the elementary bounds for rigid parallel jobs, ``P|size_j, r_j|C_max``;
    see M. Drozdowski, *Scheduling for Parallel Processing*, Springer 2009,
    ch. 3). Busy blocks only remove capacity, so both stay valid (and
    weaker) on machines with busy blocks.

Moldable jobs (with modes) count their cheapest mode: ``q_j p_j`` is the
least work ``min_k q_k T_k`` over the job's modes and ``p_j`` in the
makespan bound its shortest run time ``min_k T_k``. Whatever mode a
schedule picks, and however a malleable job switches between modes, it
does at least that work and runs at least that long, so both bounds stay
valid. The table then also counts the moldable and malleable jobs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import click
import numpy as np
from rich.table import Table

from optsched.calendar import WEEK, Calendar
from optsched.cli.display import wide_option
from optsched.cli.options import input_options, load_trace_and_instance
from optsched.console import print_table, wide_console
from optsched.instance import Instance, Job
from optsched.site.chains import chain_counts
from optsched.topology.machines import flat_relaxation
from optsched.trace import Trace

QUANTILES = (0.10, 0.25, 0.50, 0.75, 0.90)


@dataclass(frozen=True, slots=True)
class Distribution:
    """Summary of one job attribute (quantiles by linear interpolation)."""

    minimum: int
    quantiles: tuple[float, ...]
    mean: float
    maximum: int

    @classmethod
    def of(cls, values: list[int]) -> Distribution:
        """Summarise a non-empty list of values."""
        array = np.asarray(values, dtype=np.float64)
        return cls(
            int(array.min()),
            tuple(float(q) for q in np.quantile(array, QUANTILES)),
            float(array.mean()),
            int(array.max()),
        )


@dataclass(frozen=True, slots=True)
class Summary:
    """The numbers ``optsched info`` prints (see the module docstring)."""

    jobs: int
    processors: int
    allocation: str
    busy_blocks: int
    first_release: int | None
    last_release: int | None
    span: int | None
    total_area: int
    offered_load: float | None
    area_bound: int
    makespan_bound: int | None
    runtime: Distribution | None
    size: Distribution | None
    estimate: Distribution | None
    moldable: int = 0
    malleable: int = 0


def _least_work(job: Job) -> int:
    """``q_j p_j``, or the least work over a moldable job's modes."""
    return min(mode.work for mode in job.modes) if job.modes else job.area


def _shortest(job: Job) -> int:
    """``p_j``, or the shortest run time over a moldable job's modes."""
    return min(mode.runtime for mode in job.modes) if job.modes else job.runtime


def summarize(instance: Instance) -> Summary:
    """Compute the :class:`Summary` of an instance."""
    jobs = instance.jobs
    m = instance.processors
    area = sum(_least_work(j) for j in jobs)
    area_bound = -(-area // m)  # ceil(A / m) in exact integer arithmetic
    if not jobs:
        return Summary(
            0, m, instance.machine.allocation, len(instance.machine.unavailable),
            None, None, None, 0, None, 0, None, None, None, None,
        )  # fmt: skip
    first = min(j.release for j in jobs)
    last = max(j.release for j in jobs)
    span = last - first
    return Summary(
        jobs=len(jobs),
        processors=m,
        allocation=instance.machine.allocation,
        busy_blocks=len(instance.machine.unavailable),
        first_release=first,
        last_release=last,
        span=span,
        total_area=area,
        offered_load=area / (m * span) if span > 0 else None,
        area_bound=area_bound,
        makespan_bound=max(
            first + area_bound, max(j.release + _shortest(j) for j in jobs)
        ),
        moldable=sum(1 for j in jobs if j.modes),
        malleable=sum(1 for j in jobs if j.malleable),
        runtime=Distribution.of([j.runtime for j in jobs]),
        size=Distribution.of([j.size for j in jobs]),
        estimate=Distribution.of([j.requested for j in jobs]),
    )


@click.command("info")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False))
@wide_option
@input_options
def command(path: str, wide: bool, **input_kwargs: Any) -> None:
    """Describe FILE (SWF trace, JSON instance or strip-packing file).

    Jobs, machine, skipped jobs by reason, release span, offered load, total
    area, lower bounds on the makespan and runtime/size distributions. The
    window options describe a window of FILE instead of the whole file.
    """
    trace, instance = load_trace_and_instance(path, **input_kwargs)
    console = wide_console()
    # On speeds or SMP nodes the sums and bounds read each job's shortest
    # run time (optsched.topology.machines.flat_relaxation): its run time depends on
    # its processors there.
    summary = summarize(flat_relaxation(instance))
    tables = [_overview(path, trace, instance, summary)]
    if trace.skipped.total:
        tables.append(_skip_table(trace))
    if trace.statuses:
        tables.append(_status_table(trace))
    if summary.runtime is not None:
        tables.append(_distribution_table(summary))
    for table in tables:
        # Fitted to the terminal (80 columns when piped): long values fold,
        # numbers stay whole; the outer percentiles go first.
        print_table(console, table, optional=("p10", "p90"), wide=wide)


def _speeds_text(speeds: tuple[float, ...]) -> str:
    counts: dict[float, int] = {}
    for speed in speeds:
        counts[speed] = counts.get(speed, 0) + 1
    groups = ", ".join(f"{n} x {v:g}" for v, n in sorted(counts.items()))
    return f"{groups} (total {sum(speeds):g}; jobs' run times are work at speed 1)"


def _overview(path: str, trace: Trace, instance: Instance, s: Summary) -> Table:
    table = Table(title=f"{path}", show_header=False, title_justify="left")
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value")
    if instance.name:
        table.add_row("name", instance.name)
    for key in ("Computer", "Installation"):
        if key in trace.header:
            table.add_row(key.lower(), trace.header[key].split("\n")[0])
    source = instance.source
    if source.file is not None:
        sha = f", sha256 {source.sha256[:16]}..." if source.sha256 else ""
        table.add_row("source", f"{source.file} ({source.format or '?'}{sha})")
    if source.window is not None:
        table.add_row("window", _window_text(instance))
    if trace.records:
        table.add_row("job records read", f"{trace.records:,}")
        table.add_row("jobs skipped", f"{trace.skipped.total:,}")
        table.add_row("jobs kept", f"{len(trace.instance.jobs):,}")
    if trace.folded.jobs:
        table.add_row("partial executions", _folded_text(trace))
    if trace.estimates_missing:
        table.add_row(
            "estimates missing",
            f"{trace.estimates_missing:,} jobs, run time used (EASY sees exact "
            "run times for them)",
        )
    table.add_row("jobs", f"{s.jobs:,}")
    table.add_row("machine", f"{s.processors:,} processors, allocation {s.allocation}")
    table.add_row("busy blocks", f"{s.busy_blocks:,}")
    machine = instance.machine
    if machine.speeds is not None:
        table.add_row("speeds", _speeds_text(machine.speeds))
    if machine.nodes is not None:
        table.add_row("SMP nodes", machine.nodes.describe())
    if machine.calendar is not None:
        table.add_row("site calendar", _calendar_text(machine.calendar, s.processors))
    if machine.outages:
        down = sum((o.end - o.start) * o.size for o in machine.outages)
        table.add_row(
            "outages",
            f"{len(machine.outages):,}, {down / 3600:,.1f} processor-hours down "
            "(unannounced: jobs on lost processors are killed and requeued)",
        )
    chains = chain_counts(instance)
    if chains.with_predecessor or chains.dropped_missing:
        table.add_row(
            "chains (SWF fields 17/18)",
            f"{chains.with_predecessor:,} jobs with a predecessor in "
            f"{chains.chains:,} chains, the longest of {chains.longest:,} jobs; "
            f"{chains.dropped_missing:,} predecessors not in the file",
        )
    if not machine.flat:
        table.add_row(
            "run times",
            "depend on the processors; the sums and bounds below use each "
            "job's shortest run time",
        )
    if s.first_release is not None:
        table.add_row(
            "releases", f"{s.first_release:,} .. {s.last_release:,} (span {s.span:,} s)"
        )
    load = "n/a (span 0)" if s.offered_load is None else f"{s.offered_load:.4f}"
    table.add_row("offered load A/(m*span)", load)
    if s.moldable:
        table.add_row(
            "moldable jobs",
            f"{s.moldable:,} ({s.malleable:,} malleable); bounds use each "
            "job's cheapest mode",
        )
    table.add_row("total area A = sum q_j p_j", f"{s.total_area:,} processor-seconds")
    table.add_row("area bound ceil(A/m)", f"{s.area_bound:,} s after the first release")
    if s.makespan_bound is not None:
        table.add_row(
            "makespan lower bound",
            f"{s.makespan_bound:,} = max(r_min + ceil(A/m), max_j(r_j + p_j))",
        )
    return table


def _window_text(instance: Instance) -> str:
    window = instance.source.window
    assert window is not None
    if window.first_job is not None:
        assert window.jobs is not None
        where = f"jobs {window.first_job}..{window.first_job + window.jobs - 1}"
    else:
        lo = "" if window.start is None else f"{window.start}"
        hi = "" if window.end is None else f"{window.end}"
        where = f"submit time [{lo}, {hi})"
    return f"{where}, shift {window.shift:,}, initial state {window.initial_state}"


def _calendar_text(calendar: Calendar, processors: int) -> str:
    """Batch capacity and size limits over one week, as ranges."""
    pieces = list(calendar.segments(0, WEEK, processors))
    low = min(c for _, _, c, _ in pieces)
    small = min(q for _, _, _, q in pieces)
    return (
        f"batch capacity {low:,}..{processors:,} processors, largest job "
        f"{small:,}..{max(q for _, _, _, q in pieces):,} by time of week; "
        f"{len(calendar.holidays)} holidays (checked at starts only)"
    )


def _skip_table(trace: Trace) -> Table:
    table = Table(title="jobs skipped by the reader (whole file)", title_justify="left")
    table.add_column("reason")
    table.add_column("jobs", justify="right")
    table.add_column("first lines")
    for reason, count in sorted(trace.skipped.counts.items()):
        lines = trace.skipped.lines.get(reason, ())
        more = ", ..." if count > len(lines) else ""
        table.add_row(reason, f"{count:,}", ", ".join(map(str, lines)) + more)
    return table


def _folded_text(trace: Trace) -> str:
    folded = trace.folded
    rule = "summary run time" if folded.rule == "summary" else "run times summed"
    return (
        f"{folded.partial_lines:,} partial-execution lines folded into "
        f"{folded.jobs:,} jobs ({rule})"
    )


def _status_table(trace: Trace) -> Table:
    """Jobs read and kept by SWF status (field 11), whole file."""
    from optsched.io.swf import status_name

    kept: dict[int, int] = {}
    for job in trace.instance.jobs:
        code = -1 if job.status is None or job.status < 0 else job.status
        kept[code] = kept.get(code, 0) + 1
    table = Table(title="jobs by SWF status (whole file)", title_justify="left")
    table.add_column("status")
    table.add_column("code", justify="right")
    table.add_column("read", justify="right")
    table.add_column("kept", justify="right")
    for code, count in sorted(trace.statuses.items()):
        table.add_row(
            status_name(code), str(code), f"{count:,}", f"{kept.get(code, 0):,}"
        )
    return table


def _distribution_table(s: Summary) -> Table:
    table = Table(title="distributions", title_justify="left")
    table.add_column("")
    for head in ("min", *(f"p{round(q * 100)}" for q in QUANTILES), "mean", "max"):
        table.add_column(head, justify="right")
    rows = (("runtime (s)", s.runtime), ("size (procs)", s.size))
    for label, dist in (*rows, ("estimate (s)", s.estimate)):
        assert dist is not None
        cells = [f"{dist.minimum:,}", *map(_number, dist.quantiles)]
        table.add_row(label, *cells, _number(dist.mean), f"{dist.maximum:,}")
    return table


def _number(value: float) -> str:
    if math.isclose(value, round(value)):
        return f"{round(value):,}"
    return f"{value:,.1f}"
