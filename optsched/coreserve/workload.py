"""Local cluster workloads and price scenarios of Meltzer's grid study.

Clusters (Meltzer 2005, §6.2; seed002 §4.2, §8.4)
    Every cluster ``BMk`` replays its own disjoint slice of one job trace:
    the jobs *submitted* in ``[offset, offset + weeks * 604800)``, releases
    shifted so that the slice starts at 0 (the submit stop of the study is
    ``t_stop = 1 209 600`` s, two weeks). The study used the SDSC Blue
    Horizon log (1152 CPUs, capped at 1160), which is not available here;
    the substitute is the KTH SP2 log (100 CPUs, about 11 months, real
    requested times, recorded under EASY), whose consecutive two-week slices
    are enough for seven clusters. Jobs larger than the cluster cap are
    dropped (counted); jobs that ran longer than their estimate keep their
    data (the simulator's kill-at-estimate option decides about them).

Job merging (§6.2)
    The study merged jobs with fewer than 128 CPUs that share one wallclock
    limit and whose submits lie at most 1 h apart (about -30 % jobs); it
    does not say what a merged job looks like. Our reading (an assumption):
    jobs of size ``< merge_below`` are grouped by estimate; in submit order,
    a job joins the open group of its estimate when its submit is at most
    ``merge_window`` (3600 s) after the group's *first* submit (so every two
    members are at most 1 h apart) and the summed size stays within
    ``merge_max`` (default the cap); otherwise it opens a new group. A group
    becomes one job: the first member's id and extras, ``release`` = first
    submit, ``size`` = sum of sizes, ``runtime`` = max of runtimes (the
    bundle holds its CPUs until its last member ends, so no member's work is
    lost; the CPU-seconds added are reported), ``estimate`` = the common
    wallclock, recorded ``wait`` dropped. ``merge_below`` scales with the
    cluster by default: 128 of Blue Horizon's 1152 CPUs, i.e.
    ``round(cap * 128 / 1152)`` (11 on KTH's 100 CPUs).

Wallclock accuracy (§4.4.4, Table 6(d))
    ``mean(runtime / estimate)`` over the jobs with ``estimate > 0``: the
    factor ``wc_acc`` of A3's backlog time.

Price scenarios (§6.9.1, Table 18; §6.9.2)
    ``day-night``: 2 per CPU-hour from 8 to 18 h, 1 otherwise, all clusters;
    ``cheap-weekends``: as day-night, and clusters 1 and 3 (BM1, BM3) at
    half price on Saturday and Sunday; ``homogeneous``: price 1 at every
    hour on every cluster. The study's §6.9.2 baseline ("homogeneous costs,
    no optimisation") is the backfill algorithm, which ignores prices; we
    read "homogeneous" as *no price signal at all* (flat), so that it differs
    from ``day-night`` (identical time-of-day tables everywhere), which is
    available under its own name.

Weekday of the simulation epoch
    Our tariffs count seconds from a Monday 00:00; the study's first weekend
    runs from about 800 000 s to 975 000 s of simulation time. Saturday
    00:00 at 800 000 s puts time 0 at 236 800 s after a Monday 00:00; we
    round to the whole hour, :data:`STUDY_MONDAY_OFFSET` ``= 237 600`` s
    (time 0 = Wednesday 18:00; the weekend is then ``[799 200, 972 000)``).
    A whole hour matters: the sampled cost rule only looks at
    ``floor(t / 3600)``, so shifting every time by the offset and rotating
    the tariffs by it (:func:`rotate_tariff`) give identical costs.

Reference: J. Meltzer, *Vergleich von Co-Reservierungs-Algorithmen in
Grid-Umgebungen*, Diplomarbeit, FU Berlin / ZIB (about 2005), §6.2, §6.9;
KTH log: Parallel Workloads Archive, Feitelson, Tsafrir and Krakov, JPDC
74(10), 2014.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from optsched.coreserve.tariff import HOUR, WEEK_HOURS, PriceEntry, Tariff
from optsched.instance import Instance, Job, Machine, Window
from optsched.trace import Trace

WEEK = 7 * 86400
T_STOP = 2 * WEEK
"""The study's submit stop: 1 209 600 s (two weeks)."""

MERGE_WINDOW = HOUR
"""Most seconds between the first and any other submit of a merged group."""

STUDY_MERGE_BELOW = 128
STUDY_MACHINE = 1152
"""Blue Horizon: 144 nodes x 8 CPUs; merging applied below 128 CPUs."""

STUDY_WEEKEND = (800_000, 975_000)
STUDY_MONDAY_OFFSET = 237_600
"""Seconds from a Monday 00:00 to the study's time 0 (Wednesday 18:00)."""

SCENARIOS = ("homogeneous", "day-night", "cheap-weekends")
CHEAP_CLUSTERS = (1, 3)
"""0-based indices of the clusters at half price on weekends (BM1, BM3)."""


@dataclass(frozen=True)
class ClusterWorkload:
    """One cluster's local workload cut from a trace, with its provenance.

    Parameters
    ----------
    name
        ``BM0``, ``BM1``, ...
    instance
        The jobs (releases from 0) on a machine of ``cap`` processors.
    offset
        Trace time of the slice start (seconds).
    weeks
        Slice length in weeks.
    submitted
        Jobs of the trace submitted in the slice.
    dropped_too_large
        Of those, jobs larger than the cap (left out).
    merged_jobs
        Jobs before merging (``submitted - dropped_too_large``).
    merge_below
        Jobs of fewer CPUs were merge candidates (0: no merging).
    added_work
        CPU-seconds added by merging (``size * max runtime`` minus the
        members' work).
    wc_accuracy
        Mean ``runtime / estimate`` of the final jobs with ``estimate > 0``.
    wc_accuracy_raw
        The same over the jobs before merging.
    """

    name: str
    instance: Instance
    offset: int
    weeks: int
    submitted: int
    dropped_too_large: int
    merged_jobs: int
    merge_below: int
    added_work: int
    wc_accuracy: float
    wc_accuracy_raw: float

    @property
    def jobs(self) -> tuple[Job, ...]:
        """The cluster's jobs."""
        return self.instance.jobs

    @property
    def processors(self) -> int:
        """The cap: the cluster's CPUs."""
        return self.instance.processors

    @property
    def merge_reduction(self) -> float:
        """Fraction of jobs removed by merging, ``1 - final / before``."""
        if not self.merged_jobs:
            return 0.0
        return 1 - len(self.instance.jobs) / self.merged_jobs

    def offered_load(self, t_stop: int = T_STOP) -> float:
        """``sum(size * runtime) / (processors * t_stop)``: work submitted
        per capacity up to the submit stop (compare Table 6(b))."""
        work = sum(j.size * j.runtime for j in self.instance.jobs)
        return work / (self.processors * t_stop)

    def summary(self) -> dict[str, object]:
        """Provenance and statistics as a JSON-ready dictionary."""
        source = self.instance.source
        return {
            "name": self.name,
            "instance": self.instance.name,
            "file": source.file,
            "sha256": source.sha256,
            "offset": self.offset,
            "weeks": self.weeks,
            "processors": self.processors,
            "submitted": self.submitted,
            "dropped_too_large": self.dropped_too_large,
            "jobs_before_merge": self.merged_jobs,
            "jobs": len(self.instance.jobs),
            "merge_below": self.merge_below,
            "merge_reduction": round(self.merge_reduction, 4),
            "added_work": self.added_work,
            "wc_accuracy": round(self.wc_accuracy, 4),
            "wc_accuracy_raw": round(self.wc_accuracy_raw, 4),
            "offered_load": round(self.offered_load(), 4),
        }


def default_merge_below(cap: int) -> int:
    """``round(cap * 128 / 1152)``: the study's 128-CPU threshold scaled
    from Blue Horizon's 1152 CPUs to a ``cap``-CPU cluster (half up)."""
    return (2 * cap * STUDY_MERGE_BELOW + STUDY_MACHINE) // (2 * STUDY_MACHINE)


def wallclock_accuracy(jobs: Sequence[Job]) -> float:
    """Mean ``runtime / estimate`` over the jobs with ``estimate > 0``
    (Meltzer §4.4.4, Table 6(d)); 1.0 when there is none."""
    ratios = [j.runtime / j.estimate for j in jobs if j.estimate]
    return sum(ratios) / len(ratios) if ratios else 1.0


def merge_jobs(
    jobs: Sequence[Job],
    *,
    below: int,
    max_size: int,
    window: int = MERGE_WINDOW,
) -> tuple[list[Job], int]:
    """Merge small jobs with one wallclock submitted close together (§6.2).

    Parameters
    ----------
    jobs
        The jobs (any order).
    below
        Jobs with ``size < below`` are candidates (``0``: no merging).
    max_size
        Most CPUs of a merged job.
    window
        Most seconds from a group's first submit to any member's submit.

    Returns
    -------
    tuple[list[Job], int]
        The jobs after merging, sorted by ``(release, id)``, and the
        CPU-seconds the merging added (see the module docstring for the
        rule).
    """
    ordered = sorted(jobs, key=operator.attrgetter("release", "id"))
    groups: list[list[Job]] = []
    open_group: dict[int | None, list[Job]] = {}
    for job in ordered:
        if job.size >= below:
            groups.append([job])
            continue
        group = open_group.get(job.estimate)
        if (
            group is not None
            and job.release - group[0].release <= window
            and sum(j.size for j in group) + job.size <= max_size
        ):
            group.append(job)
            continue
        group = [job]
        open_group[job.estimate] = group
        groups.append(group)
    out, added = [], 0
    for group in groups:
        merged = _merged(group)
        added += merged.size * merged.runtime - sum(j.size * j.runtime for j in group)
        out.append(merged)
    out.sort(key=operator.attrgetter("release", "id"))
    return out, added


def _merged(group: list[Job]) -> Job:
    first = group[0]
    if len(group) == 1:
        return first
    return first.replace(
        size=sum(j.size for j in group),
        runtime=max(j.runtime for j in group),
        wait=None,
    )


def default_offsets(
    trace: Trace | Instance, count: int, *, weeks: int = 2, gap: int = 0
) -> list[int]:
    """Starts of ``count`` consecutive disjoint slices from the first submit,
    ``weeks`` weeks long and ``gap`` seconds apart."""
    instance = trace.instance if isinstance(trace, Trace) else trace
    first = min(j.release for j in instance.jobs)
    return [first + k * (weeks * WEEK + gap) for k in range(count)]


def cluster_slices(
    trace: Trace | Instance,
    count: int,
    *,
    weeks: int = 2,
    offsets: Sequence[int] | None = None,
    cap: int | None = None,
    merge: bool = True,
    merge_below: int | None = None,
    merge_max: int | None = None,
    gap: int = 0,
) -> list[ClusterWorkload]:
    """Cut ``count`` cluster workloads ``BM0..`` out of one trace.

    Parameters
    ----------
    trace
        The whole trace (times as in the file).
    count
        Number of clusters.
    weeks
        Slice length: jobs submitted in ``[offset, offset + weeks * 604800)``.
    offsets
        Slice starts in trace seconds; default :func:`default_offsets`
        (consecutive slices from the first submit, ``gap`` seconds apart).
        Overlapping slices are refused (the clusters would share jobs).
    cap
        CPUs of every cluster; default the trace machine's processors.
    merge
        Apply the study's job merging.
    merge_below
        Merge jobs of fewer CPUs; default :func:`default_merge_below`.
    merge_max
        Most CPUs of a merged job; default the cap.
    gap
        Seconds between default slices.

    Returns
    -------
    list[ClusterWorkload]
        One per slice, in offset order of ``offsets``.
    """
    instance = trace.instance if isinstance(trace, Trace) else trace
    if count < 1:
        raise ValueError(f"count {count} must be at least 1")
    if weeks < 1:
        raise ValueError(f"weeks {weeks} must be at least 1")
    length = weeks * WEEK
    starts = (
        default_offsets(instance, count, weeks=weeks, gap=gap)
        if offsets is None
        else [int(o) for o in offsets]
    )
    if len(starts) != count:
        raise ValueError(f"{len(starts)} offsets for {count} clusters")
    _check_disjoint(starts, length)
    cap = instance.processors if cap is None else cap
    if cap < 1:
        raise ValueError(f"cap {cap} must be at least 1")
    below = (
        (default_merge_below(cap) if merge_below is None else merge_below)
        if merge
        else 0
    )
    biggest = cap if merge_max is None else min(merge_max, cap)
    return [
        _slice(instance, k, start, weeks, cap, below, biggest)
        for k, start in enumerate(starts)
    ]


def _check_disjoint(starts: Sequence[int], length: int) -> None:
    ordered = sorted(starts)
    for a, b in itertools.pairwise(ordered):
        if b < a + length:
            raise ValueError(f"slices at {a} and {b} overlap (each is {length} s long)")


def _slice(
    instance: Instance,
    k: int,
    start: int,
    weeks: int,
    cap: int,
    below: int,
    biggest: int,
) -> ClusterWorkload:
    end = start + weeks * WEEK
    inside = [j for j in instance.jobs if start <= j.release < end]
    kept = [j.replace(release=j.release - start) for j in inside if j.size <= cap]
    jobs, added = (
        merge_jobs(kept, below=below, max_size=biggest)
        if below
        else (
            sorted(kept, key=operator.attrgetter("release", "id")),
            0,
        )
    )
    stem = instance.name or "trace"
    label = f"{stem}_BM{k}_t{start}-{end}_cap{cap}_merge{below}"
    source = dataclasses.replace(
        instance.source, window=Window(start=start, end=end, shift=start)
    )
    sliced = Instance(
        Machine(cap, instance.machine.allocation),
        tuple(jobs),
        name=label,
        source=source,
    )
    return ClusterWorkload(
        name=f"BM{k}",
        instance=sliced,
        offset=start,
        weeks=weeks,
        submitted=len(inside),
        dropped_too_large=len(inside) - len(kept),
        merged_jobs=len(kept),
        merge_below=below,
        added_work=added,
        wc_accuracy=wallclock_accuracy(jobs),
        wc_accuracy_raw=wallclock_accuracy(kept),
    )


# --------------------------------------------------------------------------
# Prices and the weekday of time 0


def price_scenario(name: str, clusters: int, *, offset: int = 0) -> list[Tariff]:
    """The tariffs of the study's price scenarios, one per cluster.

    Parameters
    ----------
    name
        ``"homogeneous"`` (1 at every hour), ``"day-night"`` (2 from 8 to
        18 h, else 1) or ``"cheap-weekends"`` (day-night; clusters 1 and 3
        at half price on Saturday and Sunday), see the module docstring.
    clusters
        Number of clusters.
    offset
        Seconds from a Monday 00:00 to simulation time 0 (a multiple of
        3600, e.g. :data:`STUDY_MONDAY_OFFSET`): the tables are rotated so
        that simulation time ``t`` pays the price of weekly time
        ``t + offset``.
    """
    if clusters < 1:
        raise ValueError(f"clusters {clusters} must be at least 1")
    if name == "homogeneous":
        tariffs = [Tariff.flat(1)] * clusters
    elif name == "day-night":
        tariffs = [Tariff.day_night(2, 1)] * clusters
    elif name == "cheap-weekends":
        cheap = Tariff.day_night(2, 1, weekend_factor=Fraction(1, 2))
        tariffs = [
            cheap if k in CHEAP_CLUSTERS else Tariff.day_night(2, 1)
            for k in range(clusters)
        ]
    else:
        raise ValueError(
            f"unknown price scenario {name!r}; valid: {', '.join(SCENARIOS)}"
        )
    return [rotate_tariff(t, offset) for t in tariffs] if offset else tariffs


def monday_offset(
    saturday_at: int = STUDY_WEEKEND[0], *, whole_hours: bool = True
) -> int:
    """Seconds from a Monday 00:00 to time 0 when Saturday 00:00 falls at
    simulation time ``saturday_at``: ``(5 * 86400 - saturday_at) mod
    604800``, rounded to the nearest whole hour (halves up) by default.

    ``monday_offset()`` is :data:`STUDY_MONDAY_OFFSET` (237 600; 236 800
    unrounded).
    """
    raw = (5 * 86400 - saturday_at) % WEEK
    if not whole_hours:
        return raw
    return ((raw + HOUR // 2) // HOUR * HOUR) % WEEK


def rotate_tariff(tariff: Tariff, offset: int) -> Tariff:
    """The tariff seen from a clock ``offset`` seconds behind weekly time:
    ``rotated.rate(t) == tariff.rate(t + offset)`` for every ``t``.

    ``offset`` must be a multiple of 3600 (price tables change on whole
    hours); then the sampled and pro-rata costs also satisfy
    ``rotated.cost(s, d, q) == tariff.cost(s + offset, d, q)``.
    """
    if offset % HOUR:
        raise ValueError(f"offset {offset} is not a whole number of hours")
    if tariff.free:
        return tariff
    shift = offset // HOUR
    hourly = [tariff.hourly[(h + shift) % WEEK_HOURS] for h in range(WEEK_HOURS)]
    entries = []
    for day in range(7):
        start = 0
        for h in range(1, 25):
            if h == 24 or hourly[24 * day + h] != hourly[24 * day + start]:
                entries.append(PriceEntry(day, start, h, hourly[24 * day + start]))
                start = h
    return Tariff(tuple(entries))


def shift_instance(instance: Instance, offset: int) -> Instance:
    """The instance with every release moved by ``offset`` seconds."""
    moved = [j.replace(release=j.release + offset) for j in instance.jobs]
    return instance.with_jobs(moved)


def shift_workload(workload: ClusterWorkload, offset: int) -> ClusterWorkload:
    """The cluster workload with every release moved by ``offset`` seconds
    (e.g. :data:`STUDY_MONDAY_OFFSET`, so that unrotated tariffs line up)."""
    return dataclasses.replace(
        workload, instance=shift_instance(workload.instance, offset)
    )
