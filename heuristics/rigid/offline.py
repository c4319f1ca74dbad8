"""Offline list and shelf heuristics: upper bounds and solver hints.

* List scheduling in named orders (:data:`ORDERS`) with the serial schedule
  generation scheme of the core, :func:`optsched.packing.list_schedule`: the
  jobs, in a given order, each go to the earliest feasible start at or after
  their release, given the jobs already placed and the busy blocks (holes
  left earlier are filled). On ``any`` machines the processors are assigned
  afterwards by :func:`optsched.packing.assign_processors`; on
  ``contiguous`` machines each job gets the lowest offset of a free range.
* :func:`nfdh` and :func:`ffdh` are the shelf heuristics of strip packing
  (Coffman, Garey, Johnson, Tarjan 1980), computed by
  :mod:`optsched.heuristics.shelf.algorithms` (which has the other shelf algorithms).
* :func:`improve_schedule` is a local search over list orders.
* :func:`best_heuristic` runs several orders and shelves and keeps the best
  schedule for an objective.

On machines with node speeds or SMP nodes the lists go through
:func:`optsched.topology.machines.append_schedule` instead (run times depend on the
processors there), and the shelves, which stack run times, are left out.

Every schedule returned is feasible: it passes
:func:`optsched.check.check_schedule` (the tests assert it), and on ``any``
machines every job has an explicit processor set (see the ``any`` rule in
:mod:`optsched.packing`: busy blocks there are counts, so a count-feasible
start vector always admits a processor assignment).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable

from optsched.heuristics.shelf.algorithms import shelf_schedule
from optsched.instance import Instance, Job
from optsched.objective import Objective
from optsched.packing import list_schedule
from optsched.schedule import Schedule
from optsched.topology.machines import append_schedule

__all__ = [
    "ORDERS",
    "best_heuristic",
    "ffdh",
    "heuristic_schedules",
    "improve_schedule",
    "nfdh",
    "order_by",
]


# --------------------------------------------------------------------------
# Shelf heuristics
# --------------------------------------------------------------------------


def _by_release(instance: Instance) -> list[Job]:
    # Ties of height keep (release, id) order, so an early job opens a shelf.
    return sorted(instance.jobs, key=lambda j: (j.release, j.id))


def nfdh(instance: Instance) -> Schedule:
    """Next-Fit Decreasing Height shelf packing, heights = actual run times.

    :func:`optsched.heuristics.shelf.algorithms.shelf_schedule` with ``"nfdh"``
    (the one implementation; its module docstring has the rules): jobs by
    non-increasing run time (ties by release, then id) fill a shelf left to
    right; a job that does not fit the current shelf opens a new one on top
    of it. Releases: a job joins a shelf only if it is released by the
    shelf's start, and a shelf starts no earlier than its jobs' releases.
    Busy blocks: a shelf starts when its width fits beside them for its
    whole height (counts on ``any`` machines, a free range on contiguous
    ones). Meant for strip packing (all releases 0); with releases it stays
    valid but is weak. Placements are processor ranges, valid on both
    machine kinds.

    Reference: E. G. Coffman, M. R. Garey, D. S. Johnson, R. E. Tarjan,
    "Performance bounds for level-oriented two-dimensional packing
    algorithms", SIAM J. Computing 9(4), 1980 (NFDH <= 2 OPT + h_max).
    """
    return shelf_schedule(
        instance,
        "nfdh",
        jobs=_by_release(instance),
        estimate=False,
        producer="shelf:nfdh",
    )


def ffdh(instance: Instance) -> Schedule:
    """First-Fit Decreasing Height shelf packing (see :func:`nfdh`).

    Each job goes to the first (lowest) shelf it fits, else opens a new one.
    Coffman et al. 1980: FFDH <= 1.7 OPT + h_max.
    """
    return shelf_schedule(
        instance,
        "ffdh",
        jobs=_by_release(instance),
        estimate=False,
        producer="shelf:ffdh",
    )


# --------------------------------------------------------------------------
# Orders and the best heuristic
# --------------------------------------------------------------------------


def _ratio(job: Job, objective: Objective) -> float:
    # Smith's ratio w_j / (q_j p_j); zero-area jobs first.
    area = job.size * job.runtime
    return float("inf") if area == 0 else objective.weight(job) / area


ORDERS: dict[str, Callable[[Job, Objective], tuple[float, ...]]] = {
    "release-lpt": lambda j, o: (j.release, -j.runtime, -j.size, j.id),
    "lpt": lambda j, o: (-j.runtime, j.release, -j.size, j.id),
    "wspt": lambda j, o: (-_ratio(j, o), j.release, j.id),
    "release-wspt": lambda j, o: (j.release, -_ratio(j, o), j.id),
    "largest-size": lambda j, o: (-j.size, -j.runtime, j.release, j.id),
    "largest-area": lambda j, o: (-j.size * j.runtime, j.release, j.id),
    "spt": lambda j, o: (j.runtime, j.release, j.id),
}
"""Sort keys of the list-scheduling orders (smallest key first)."""

SHELVES: dict[str, Callable[[Instance], Schedule]] = {"nfdh": nfdh, "ffdh": ffdh}


def order_by(instance: Instance, objective: Objective, name: str) -> list[int]:
    """Job ids sorted by the order ``name`` of :data:`ORDERS`."""
    key = ORDERS[name]
    return [j.id for j in sorted(instance.jobs, key=lambda j: key(j, objective))]


def _serial(instance: Instance, order: list[int], producer: str) -> Schedule:
    # Run times depend on the processors on machines that are not flat.
    if instance.machine.flat:
        return list_schedule(instance, order, producer=producer)
    return append_schedule(instance, order, producer)


def heuristic_schedules(
    instance: Instance,
    objective: Objective | str,
    *,
    candidates: Iterable[str] | None = None,
    deadline: float | None = None,
) -> dict[str, Schedule]:
    """Schedules of the candidate heuristics, by name.

    Names are those of :data:`ORDERS` (list scheduling in that order) and of
    :data:`SHELVES`. With a ``deadline`` (``time.monotonic``), the
    candidates not yet started when it passes are left out; the first one
    always runs.
    """
    objective = Objective.parse(objective)
    shelves = SHELVES if instance.machine.flat else {}
    names = list(candidates) if candidates is not None else [*ORDERS, *shelves]
    unknown = [n for n in names if n not in ORDERS and n not in SHELVES]
    if unknown:
        valid = ", ".join([*ORDERS, *SHELVES])
        raise ValueError(f"unknown heuristic {unknown[0]!r}; expected one of {valid}")
    out: dict[str, Schedule] = {}
    for name in names:
        if out and deadline is not None and time.monotonic() >= deadline:
            break
        if name in ORDERS:
            order = order_by(instance, objective, name)
            out[name] = _serial(instance, order, f"list:{name}")
        else:
            out[name] = SHELVES[name](instance)
    return out


def improve_schedule(
    instance: Instance,
    objective: Objective | str,
    schedule: Schedule,
    *,
    time_limit: float = 1.0,
    max_evaluations: int | None = None,
    seed: int = 0,
    stop_at: float | None = None,
) -> Schedule:
    """Local search over list-scheduling orders, starting from ``schedule``.

    The jobs in order of their starts in ``schedule`` form the first list
    (on ``any`` machines the serial SGS of that list starts no job later, so
    nothing is lost). Each step moves one job to another position of the
    list (half the time a job among the five that end last, moved earlier;
    otherwise any job to any position), list-schedules the new order and
    keeps it when the objective is not worse (sideways moves let the search
    cross plateaus). Stops after ``time_limit`` seconds or
    ``max_evaluations`` orders (give ``max_evaluations`` and a large time
    limit for a reproducible result), or as soon as the objective reaches
    ``stop_at`` (a lower bound, when known). Returns the best schedule seen,
    ``schedule`` itself if nothing beats it; the producer gets ``+ls``.
    """
    objective = Objective.parse(objective)
    n = len(instance.jobs)
    best, best_value = schedule, objective.value(instance, schedule)
    if n < 2:
        return best
    order = sorted(schedule.placements, key=lambda jid: (schedule[jid].start, jid))
    producer = f"{schedule.producer or 'heuristic'}+ls"
    current = _serial(instance, order, producer)
    value = objective.value(instance, current)
    if value < best_value:
        best, best_value = current, value
    rng = random.Random(seed)
    deadline = time.perf_counter() + time_limit
    evaluations = 0
    while (
        time.perf_counter() < deadline
        and (max_evaluations is None or evaluations < max_evaluations)
        and (stop_at is None or best_value > stop_at)
    ):
        candidate = _moved(order, current, rng)
        trial = _serial(instance, candidate, producer)
        evaluations += 1
        trial_value = objective.value(instance, trial)
        if trial_value <= value:
            order, current, value = candidate, trial, trial_value
            if value < best_value:
                best, best_value = current, value
    return best


def _moved(order: list[int], current: Schedule, rng: random.Random) -> list[int]:
    """``order`` with one job moved (a late-ending one earlier, or at random)."""
    n = len(order)
    if rng.random() < 0.5:
        late = sorted(order, key=lambda jid: -current[jid].end)[:5]
        i = order.index(rng.choice(late))
        j = rng.randrange(0, i) if i > 0 else rng.randrange(n)
    else:
        i, j = rng.randrange(n), rng.randrange(n)
    moved = order[:]
    moved.insert(j, moved.pop(i))
    return moved


def best_heuristic(
    instance: Instance,
    objective: Objective | str,
    *,
    candidates: Iterable[str] | None = None,
    improve: float = 0.0,
    seed: int = 0,
    deadline: float | None = None,
) -> Schedule:
    """The best schedule by ``objective.value`` among the candidate heuristics.

    Candidates default to every order of :data:`ORDERS` (release+LPT, LPT,
    WSPT by ``w_j / (q_j p_j)``, release+WSPT, largest size, largest area,
    SPT) and the shelves NFDH and FFDH. The first best wins ties; the
    schedule's ``producer`` names it (``"list:wspt"``, ``"shelf:ffdh"``).
    With ``improve`` seconds, :func:`improve_schedule` then searches from
    the best one (producer ``"list:wspt+ls"``). With a ``deadline``
    (``time.monotonic``), the candidates not started by then are skipped
    (:func:`heuristic_schedules`) and the search stops there too.
    """
    objective = Objective.parse(objective)
    schedules = heuristic_schedules(
        instance, objective, candidates=candidates, deadline=deadline
    )
    if not schedules:
        raise ValueError("best_heuristic: no applicable candidate heuristic")
    best = min(schedules.values(), key=lambda s: objective.value(instance, s))
    if deadline is not None:
        improve = min(improve, deadline - time.monotonic())
    if improve > 0:
        best = improve_schedule(
            instance, objective, best, time_limit=improve, seed=seed
        )
    return best
