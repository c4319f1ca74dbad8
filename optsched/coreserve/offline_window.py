"""Cut an offline problem out of a finished grid run, for competitive gaps.

A window ``[begin, end)`` of a run becomes the offline problem that the
online service faced there (:mod:`optsched.models.coreserve.offline`):

* requests: those submitted in the window;
* local jobs: those released in it, plus those still waiting at ``begin``
  (released at ``begin`` in the window: the past is fixed), each with the
  run time it had online (a job stopped at its estimate keeps that
  length);
* fixed busy CPUs: local jobs running at ``begin`` until their actual ends,
  and the reservations the service granted for requests submitted before
  the window, from ``begin`` on.

The online outcome restricted to the window is a solution of that problem
(the checker confirms it), so the offline optimum bounds what any service
could have accepted there with the same knowledge of the past, and with
full knowledge of the window's future.
"""

from __future__ import annotations

from dataclasses import dataclass

from optsched.coreserve.request import Choice, Request
from optsched.coreserve.simulate import GridRun
from optsched.instance import Job
from optsched.models.coreserve.offline import OfflineCluster, OfflineSolution


@dataclass(frozen=True)
class OfflineWindow:
    """The offline problem of one window and the online outcome in it."""

    begin: int
    end: int
    clusters: tuple[OfflineCluster, ...]
    requests: tuple[Request, ...]
    online: OfflineSolution
    online_wait: int  # total wait from begin of the window's local jobs


def offline_window(run: GridRun, begin: int, end: int) -> OfflineWindow:
    """The offline problem of ``[begin, end)`` in ``run`` (module docstring)."""
    requests = tuple(o.request for o in run.outcomes if begin <= o.request.submit < end)
    inside = {r.id for r in requests}
    clusters = []
    job_starts: dict[tuple[str, int], int] = {}
    wait = 0
    for cluster in run.clusters:
        sim = cluster.sim
        busy: list[tuple[int, int, int]] = []
        jobs: list[Job] = []
        for j in range(len(sim.jobs)):
            start, stop = sim.start_time[j], sim.end_time[j]
            if start < begin < stop:
                busy.append((begin, stop, sim.size[j]))
            elif start >= begin and sim.release[j] < end:
                release = max(sim.release[j], begin)
                jobs.append(Job(sim.job_id[j], release, sim.size[j], stop - start))
                job_starts[(cluster.name, sim.job_id[j])] = start
                wait += start - release
        busy += [
            (max(r.start, begin), r.end, r.cpus)
            for r in cluster.granted
            if r.request not in inside and r.end > begin
        ]
        clusters.append(
            OfflineCluster(
                cluster.name,
                cluster.processors,
                cluster.tariff,
                busy=tuple(busy),
                jobs=tuple(jobs),
            )
        )
    names = [c.name for c in run.clusters]
    accepted = {
        o.request.id: Choice(o.start, tuple(names[c] for c in o.clusters), o.cost)
        for o in run.outcomes
        if o.accepted
        and o.request.id in inside
        and o.start is not None
        and o.clusters is not None
        and o.cost is not None
    }
    return OfflineWindow(
        begin,
        end,
        tuple(clusters),
        requests,
        OfflineSolution(accepted, job_starts),
        wait,
    )
