"""Conservative backfilling from its rule (issue 28), for the reference loop.

The plan is rebuilt from scratch whenever it is needed: busy blocks,
running jobs until their estimated ends (at least one second, like their
reservations), and every reservation. At each pass:

1. every reservation due (at now or before) is looked at in queue order: one
   at now whose job fits now starts; every other one is *void* and leaves
   the plan;
2. when a job ended before its estimate since the previous pass, a
   reservation is void, or a job of zero length just started and ended,
   the reservations are *compressed*: in queue order, a void job is placed
   at its earliest slot from now, a valid one at its earliest slot, which
   is never later than the one it had (checked);
3. the jobs submitted since the previous pass are reserved at their
   earliest slots, in queue order;
4. the jobs reserved at now start if they fit (one that does not is void at
   the next pass); if one ended at once, compress again (no void job then);
5. the next pass is at the earliest reservation later than now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.oracle.steps import Steps

if TYPE_CHECKING:
    from support.oracle.reference import Run


def _planned(estimate: int) -> int:
    return max(estimate, 1)


def _plan(run: Run, reserved: dict[int, int], leave_out: int = -1) -> Steps:
    """Free processors by the plan, without ``leave_out``'s reservation."""
    steps = Steps(run.now, run.m)
    for s, e, q in run.blocks:
        steps.take(s, e, q)
    for j in run.running:
        steps.take(run.start[j], run.start[j] + _planned(run.estimate[j]), run.size[j])
    for j, t in reserved.items():
        if j != leave_out:
            steps.take(t, t + _planned(run.estimate[j]), run.size[j])
    return steps


def _earliest(run: Run, reserved: dict[int, int], j: int) -> int:
    plan = _plan(run, reserved, leave_out=j)
    return plan.first_fit(run.size[j], _planned(run.estimate[j]), run.now)


def _compress(run: Run, reserved: dict[int, int], void: set[int]) -> None:
    for j in list(run.waiting):
        if j in void:
            reserved[j] = _earliest(run, reserved, j)
        elif j in reserved and reserved[j] > run.now:
            t = _earliest(run, reserved, j)
            assert t <= reserved[j], "a valid reservation was delayed"
            reserved[j] = t


def _start_reserved_now(run: Run, reserved: dict[int, int]) -> bool:
    """Start the jobs reserved at now that fit; whether one ended at once."""
    ended = False
    for j in [j for j in run.waiting if reserved.get(j) == run.now]:
        if run.fits_now(j):
            run.begin(j)
            del reserved[j]
            ended |= run.end[j] == run.now
    return ended


def conservative(run: Run) -> None:
    """One pass of conservative backfilling (module docstring)."""
    reserved: dict[int, int] = run.memory.setdefault("reserved", {})
    void: set[int] = set()
    ended = False
    for j in [j for j in run.waiting if reserved.get(j, run.now + 1) <= run.now]:
        if reserved[j] == run.now and run.fits_now(j):
            run.begin(j)
            del reserved[j]
            ended |= run.end[j] == run.now
        else:
            del reserved[j]
            void.add(j)
    compress = run.ended_early or ended or bool(void)
    arrivals = sorted(run.arrived, key=run.rank.__getitem__)
    while True:
        if compress:
            _compress(run, reserved, void)
            void = set()
        for j in arrivals:
            if j in run.waiting:
                reserved[j] = _earliest(run, reserved, j)
        arrivals = []
        compress = _start_reserved_now(run, reserved)
        if not compress:
            break
    later = [t for t in reserved.values() if t > run.now]
    run.wake = min(later) if later else None
