"""Rules 11 and 12: the site calendar (sizes, batch capacity, sequential
queues at every start) and job chains."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from optsched.check.violation import Violation
from optsched.families import feature
from optsched.instance import Instance, Job
from optsched.schedule import Placement, Schedule


def _check_calendar(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Rule 11: sizes and batch capacity at every start (module docstring)."""
    machine = instance.machine
    calendar = machine.calendar
    assert calendar is not None
    m = machine.processors
    # Stretches (start, end, size) of the jobs' pieces and the busy blocks.
    held: list[tuple[int, int, int]] = []
    starts: list[tuple[int, int, int, bool]] = []  # (time, job, size, zero length)
    by_queue: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for job in instance.jobs:
        placement = schedule.placements.get(job.id)
        if placement is None:
            continue  # rule 1 reports it
        for start, end, size in _stretches_of(job, placement):
            # Jobs of anytime queues run beside the batch partition.
            if job.queue not in calendar.anytime_queues:
                held.append((start, end, size))
                starts.append((start, job.id, size, end == start))
            if job.queue in calendar.sequential_queues:
                by_queue[job.queue].append((start, end, job.id))
    held += [(b.start, b.end, b.size) for b in machine.unavailable]
    begins = sorted((a, q) for a, b, q in held if b > a)
    ends = sorted((b, q) for a, b, q in held if b > a)
    begin_times = [t for t, _ in begins]
    end_times = [t for t, _ in ends]
    begin_sum = np.cumsum([0, *(q for _, q in begins)])
    end_sum = np.cumsum([0, *(q for _, q in ends)])
    out = _check_sequential(by_queue)
    for t, jid, size, zero in sorted(starts):
        largest = calendar.max_size_at(t, m)
        if size > largest:
            out.append(
                Violation(
                    "calendar",
                    f"job {jid} of {size} processors starts at {t}, when the "
                    f"site calendar lets jobs of at most {largest} start",
                    job=jid,
                    time=t,
                )
            )
        # Held at t: stretches begun by t and not ended by t. A job of 0 s
        # occupies nothing (rule 4 agrees): it needs only its own size.
        begun = int(begin_sum[bisect.bisect_right(begin_times, t)])
        ended = int(end_sum[bisect.bisect_right(end_times, t)])
        total = size if zero else begun - ended
        capacity = calendar.capacity_at(t, m)
        if total > capacity:
            out.append(
                Violation(
                    "calendar",
                    f"job {jid} starts at {t} with {total} processors held, "
                    f"above the site calendar's batch capacity {capacity}",
                    job=jid,
                    time=t,
                )
            )
    return out


def _check_sequential(
    by_queue: dict[int, list[tuple[int, int, int]]],
) -> list[Violation]:
    """Rule 11, sequential queues: no two jobs of one overlap in time."""
    out: list[Violation] = []
    for queue, runs in sorted(by_queue.items()):
        runs.sort()
        last_end, last_job = None, None  # the job of the queue ending last
        for start, end, jid in runs:
            if last_end is not None and start < last_end:
                out.append(
                    Violation(
                        "calendar",
                        f"job {jid} of sequential queue {queue} starts at {start} "
                        f"while job {last_job} of that queue runs until {last_end}",
                        job=jid,
                        time=start,
                    )
                )
            if last_end is None or end > last_end:
                last_end, last_job = end, jid
    return out


def _check_chains(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Rule 12: a successor starts no earlier than its predecessor's end
    plus the think time (the edges of :func:`optsched.site.chains.chain_graph`,
    the graph the simulator follows)."""
    from optsched.site.chains import chain_graph

    graph = chain_graph(instance.jobs).graph
    out: list[Violation] = []
    for before, after, data in sorted(graph.edges(data=True)):
        first = schedule.placements.get(before)
        then = schedule.placements.get(after)
        if first is None or then is None:
            continue  # rule 1 reports it
        ready = first.end + data["think_time"]
        if then.start < ready:
            out.append(
                Violation(
                    "chain",
                    f"job {after} starts at {then.start}, before its predecessor "
                    f"{before} ends at {first.end} plus think time "
                    f"{data['think_time']}",
                    job=after,
                    time=then.start,
                )
            )
    return out


def _stretches_of(job: Job, placement: Placement) -> list[tuple[int, int, int]]:
    """``(start, end, processors)`` of each piece (one for an unpreempted job).

    A moldable job holds the processors of the mode it runs in (rule 8),
    which its placement names, not its request."""
    if not placement.pieces:
        procs = placement.processors
        size = len(procs) if job.modes and procs else job.size
        return [(placement.start, placement.end, size)]
    return [
        (p.start, p.end, job.size if p.processors is None else len(p.processors))
        for p in placement.pieces
    ]


def calendar_rule(
    instance: Instance, schedule: Schedule, rest: Callable[..., list[Violation]]
) -> list[Violation]:
    """Rule 11, then ``rest`` on the machine without its calendar."""
    bare = feature("calendar").relax(instance)  # type: ignore[misc]
    return _check_calendar(instance, schedule) + rest(bare, schedule)


def chains_rule(
    instance: Instance, schedule: Schedule, rest: Callable[..., list[Violation]]
) -> list[Violation]:
    """Rule 12, then ``rest`` on the jobs without their chains."""
    bare = feature("chains").relax(instance)  # type: ignore[misc]
    return _check_chains(instance, schedule) + rest(bare, schedule)
