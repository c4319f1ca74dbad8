"""Conservative backfilling's rule under overruns (issue 28), by hand and by
invariants.

The rule (module docstring of ``optsched.heuristics.rigid.policies``): a
reservation due now starts if its processors are free; a due one that
cannot start is void, leaves the plan before the compression and is placed
again from now at its queue position; valid reservations are never
delayed; a pass happens at every *current* reservation time only.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.builders import starts_of
from support.oracle.instances import overrunning

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.heuristics.engine.core import WAITING, Simulator
from optsched.heuristics.rigid.policies import Conservative, _Reservations
from optsched.instance import Instance, Job, Machine


def _starts(
    instance: Instance, spec: str | Conservative = "conservative", kill: bool = False
) -> dict:
    result = simulate(instance, spec, kill_at_estimate=kill)
    assert check_schedule(instance, result.schedule) == []
    return starts_of(result.schedule)


def test_void_reservations_leave_the_plan() -> None:
    # Worked by hand, 10 processors. A (10 procs, estimate 10) runs 20 s.
    # At 1..3 B (6, 5 s) is reserved at 10, C (4, 30 s) at 10, D (5, 5 s)
    # at 15. At 10 A still runs: B and C are void, placed again at 10 (the
    # plan no longer sees A), D stays at 15. At 15 B, C and D are all void:
    # B -> 15, C -> 15, D -> 20 (B's 6 and C's 4 fill [15, 20)). At 20 A
    # ends: D is due and valid, it starts; the void B (6) no longer fits
    # beside D (5) before 25, C (4) does: C starts at 20, B at 25.
    # (The old rule kept queue order, B at 20, and delayed D's valid
    # reservation to 25.)
    instance = Instance(
        Machine(10),
        (
            Job(1, 0, 10, 20, 10),
            Job(2, 1, 6, 5, 5),
            Job(3, 2, 4, 30, 30),
            Job(4, 3, 5, 5, 5),
        ),
    )
    assert _starts(instance) == {1: 0, 2: 25, 3: 20, 4: 20}


def test_a_moved_reservation_leaves_no_pass() -> None:
    # Worked by hand, 10 processors, every job on the whole machine. A
    # (estimate 10) ends at 3; B, C, D were reserved at 10, 14 and 20, and
    # a pass was asked for at 10. At 3 the compression moves them to 3, 7
    # and 13: B starts at 3, C at 7, D at 13. Passes: 0, 1, 2 (arrivals),
    # 3, 7, 13 (ends); none at 10, where nothing is reserved any more (the
    # old wakes gave a seventh pass there).
    instance = Instance(
        Machine(10),
        (
            Job(1, 0, 10, 3, 10),
            Job(2, 1, 10, 4, 4),
            Job(3, 2, 10, 6, 6),
            Job(4, 2, 10, 1, 100),
        ),
    )
    result = simulate(instance, "conservative")
    assert starts_of(result.schedule) == {1: 0, 2: 3, 3: 7, 4: 13}
    assert dict(result.reservations) == {1: 0, 2: 10, 3: 14, 4: 20}
    assert result.stats.passes == 6


@dataclass(frozen=True)
class Watched(Conservative):
    """Conservative backfilling that checks the rule's invariants after
    every pass."""

    def decide(self, sim: Simulator, state: _Reservations) -> None:
        valid = {j: t for j, t in state.start.items() if t > sim.now}
        due = sorted(
            (j for j, t in state.start.items() if t == sim.now),
            key=sim.rank.__getitem__,
        )
        must_start = []
        if sim.simple:  # processor counting: fits = size <= free
            free = sim.free
            for j in due:  # in queue order, while their processors are free
                if sim.size[j] <= free:
                    must_start.append(j)
                    free -= sim.size[j]
        super().decide(sim, state)
        for j in must_start:
            assert sim.state[j] != WAITING, "a due job whose processors are free"
        for j, t in valid.items():
            if sim.state[j] == WAITING:
                assert state.start[j] <= t, "a valid reservation was delayed"
        for j, t in state.start.items():
            # No processor idle while a due job fits: every job still
            # reserved at now or before cannot start now.
            assert not (t <= sim.now and sim.can_start(j)), (sim.now, j)
        later = [t for t in state.start.values() if t > sim.now]
        assert sim._planned_wake == (min(later) if later else None)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    instance=overrunning(allocations=("any", "contiguous")),
    oracle=st.booleans(),
    kill=st.booleans(),
    order=st.sampled_from(["fcfs", "spt"]),
)
def test_invariants_hold_at_every_pass(
    instance: Instance, oracle: bool, kill: bool, order: str
) -> None:
    # Every setting (overruns, oracle, kill-at-estimate), and contiguous
    # machines, where fragmentation can void a due reservation and the
    # plain reference does not go.
    _starts(instance, Watched(order=order, oracle=oracle), kill=kill)
