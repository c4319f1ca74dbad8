"""The one range every reader enforces on the times of an instance.

Each time and size of a file is an integer of at most :data:`MAX_INTEGER`
(``2**53``, exact in float64; :mod:`optsched.instance`). That alone does not
keep a *schedule* of the instance in range: a job released at ``2**52``
that runs ``2**52 + 2`` seconds ends past ``2**53``, where its end is no
longer exact, and schedule readers (the results store, ``check``, ``gap``)
refuse it. So every reader also bounds the *horizon*

.. math::

    H = \\max\\bigl(\\max_j r_j,\\ \\max_b e_b\\bigr)
        + (1 + |O|) \\sum_j \\max(p_j, \\tilde p_j, \\max_k p_{j,k})

(latest release or busy-block/outage end, plus the total of each job's
longest run time -- actual, estimate, or any moldable mode's -- counted once
more per outage, which may kill and restart it): no schedule that never
idles while a job waits ends after ``H``. An instance with
``H > 2**53`` is refused with one line naming the file.
"""

from __future__ import annotations

from pathlib import Path

from optsched.errors import InputError
from optsched.instance import MAX_INTEGER, Instance, Job


def _longest(job: Job) -> int:
    times = [job.runtime, job.estimate or 0]
    times.extend(max(m.runtime, m.estimate or 0) for m in job.modes)
    return max(times)


def horizon(instance: Instance) -> int:
    """``H`` of the module notes, in seconds (an exact integer)."""
    machine = instance.machine
    blocks = (*machine.unavailable, *machine.outages)
    latest = max([0, *(job.release for job in instance.jobs), *(b.end for b in blocks)])
    work = sum(_longest(job) for job in instance.jobs)
    return latest + (1 + len(machine.outages)) * work


def check_horizon(instance: Instance, path: str | Path) -> None:
    """Refuse an instance whose schedules could pass ``2**53`` seconds.

    Raises
    ------
    InputError
        Naming ``path`` and the horizon.
    """
    value = horizon(instance)
    if value > MAX_INTEGER:
        raise InputError(
            f"jobs: the latest release or busy-block/outage end plus the jobs' "
            f"total run time is {value} s, above the limit 2**53 = {MAX_INTEGER} "
            "s: schedules of this instance would end beyond exact times",
            path,
        )
