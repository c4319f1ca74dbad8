"""Starting schedules on machines with node speeds or SMP nodes.

The plain fallback (:func:`optsched.models.common.solution.upper_bound_candidates`)
appends every job in its requested mode
(:func:`optsched.topology.machines.append_schedule`). A moldable job may do
better in another mode, and no exact model places moldable jobs on such a
machine, so the checked schedules are the whole upper bound there: the
same append with each moldable job in the mode that ends first joins them.
A model never simulates a policy: the callers that want the policies'
schedules pass them as incumbents.
"""

from __future__ import annotations

from collections.abc import Sequence

from optsched.instance import Instance
from optsched.models.common.solution import Candidate, check_candidates
from optsched.objective import Objective
from optsched.result import Incumbent
from optsched.schedule import Schedule
from optsched.topology.machines import append_schedule

EARLIEST_MODE = "list:earliest-mode"
"""Source of the append schedule whose moldable jobs take the mode that
ends first."""


def topology_candidates(
    instance: Instance,
    objective: Objective,
    incumbents: Sequence[Incumbent],
    deadline: float | None,
) -> tuple[list[Candidate], list[str]]:
    """The jobs appended in submit order in their requested modes, and (with
    moldable jobs) in the modes that end first, then the caller's
    incumbents: checked, best first (the plain fallback's contract)."""
    order = [job.id for job in instance.jobs]
    raw: list[tuple[str, Schedule]] = [
        ("list:submit", append_schedule(instance, order))
    ]
    if instance.moldable:
        earliest = append_schedule(instance, order, EARLIEST_MODE, choose_modes=True)
        raw.append((EARLIEST_MODE, earliest))
    always = len(raw) + 1
    raw += [(incumbent.source, incumbent.schedule) for incumbent in incumbents]
    return check_candidates(
        instance, objective, raw, always=always, deadline=deadline, what="heuristic"
    )
