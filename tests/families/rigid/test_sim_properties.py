"""Hypothesis properties of the simulator on random instances."""

from __future__ import annotations

import math

from hypothesis import assume, given
from hypothesis import strategies as st
from support.builders import draw_jobs, draw_machine, slow_settings

from optsched.check import check_schedule
from optsched.heuristics import POLICY_NAMES, Backfill, simulate
from optsched.heuristics.engine.core import Simulator
from optsched.heuristics.rigid.orders import order_ranks
from optsched.instance import Instance

SPECS = (
    *POLICY_NAMES,
    "backfill:depth=2",
    "backfill:depth=3,order=spt",
    "easy:order=lpt,oracle",
    "easy:select=largest,maxwait=20",
    "easy:select=largest,maxidle=0.5",
    "easy:select=smallest",
    "easy:select=largest-area",
    "easy:order=laf,select=submit",
    "firstfit:order=lsf",
    "conservative:order=spt",
    "best-package:limit=2",
    "random:seed=4",
)

FAST = slow_settings(150)


@st.composite
def instances(
    draw: st.DrawFn,
    *,
    exact: bool = False,
    allocation: str | None = None,
) -> Instance:
    """Small random instances; ``exact`` makes every estimate the runtime.

    Busy blocks have offsets on contiguous machines and are processor counts
    on ``any`` machines."""
    m = draw(st.integers(1, 12))
    allocation = allocation or draw(st.sampled_from(["any", "contiguous"]))
    jobs = draw_jobs(
        draw,
        m,
        (0, 14),
        release=40,
        runtime=30,
        estimate=st.just if exact else lambda _: st.integers(0, 40),
        weights=(1.0, 2.0, 0.5),
    )
    machine = draw_machine(draw, m, allocation, latest_block=50)
    return Instance(machine, tuple(jobs), name="random")


@FAST
@given(
    instance=instances(),
    spec=st.sampled_from(SPECS),
    kill=st.booleans(),
    rule=st.sampled_from(["first-fit", "best-fit"]),
    migration=st.booleans(),
)
def test_every_schedule_passes_the_checker(
    instance: Instance, spec: str, kill: bool, rule: str, migration: bool
) -> None:
    migration = migration and instance.machine.allocation == "contiguous"
    result = simulate(
        instance,
        spec,
        kill_at_estimate=kill,
        allocation_rule=rule,
        migration=migration,
    )
    assert check_schedule(instance, result.schedule) == []
    assert result.stats.killed == len(result.schedule.killed)
    if not kill and not instance.machine.unavailable:
        assert result.schedule.killed == frozenset()


@FAST
@given(instance=instances(exact=True, allocation="any"))
def test_conservative_never_starts_after_its_arrival_reservation(
    instance: Instance,
) -> None:
    result = simulate(instance, "conservative")
    assert check_schedule(instance, result.schedule) == []
    assert set(result.reservations) == {job.id for job in instance.jobs}
    for job_id, reserved in result.reservations.items():
        assert result.schedule[job_id].start <= reserved


@FAST
@given(
    instance=instances(exact=True, allocation="any"),
    select=st.sampled_from(["queue", "submit", "largest", "smallest", "largest-area"]),
)
def test_easy_never_starts_a_head_after_its_first_shadow(
    instance: Instance, select: str
) -> None:
    result = simulate(instance, f"easy:select={select}")
    assert check_schedule(instance, result.schedule) == []
    for job_id, shadow in result.reservations.items():
        assert result.schedule[job_id].start <= shadow


@FAST
@given(instance=instances(), spec=st.sampled_from(SPECS))
def test_makespan_is_at_least_the_area_bound(instance: Instance, spec: str) -> None:
    # max(min_j r_j + ceil(A / m), max_j (r_j + p_j)) with A = sum_j q_j p_j;
    # busy blocks only remove capacity. A job stopped before a busy block
    # (the only kills without kill_at_estimate) runs for its estimate.
    assume(instance.jobs)
    result = simulate(instance, spec)
    killed = result.schedule.killed
    run = {j.id: j.requested if j.id in killed else j.runtime for j in instance.jobs}
    area = sum(job.size * run[job.id] for job in instance.jobs)
    first = min(job.release for job in instance.jobs)
    bound = max(
        first + math.ceil(area / instance.processors),
        max(job.release + run[job.id] for job in instance.jobs),
    )
    makespan = max(p.end for p in result.schedule.placements.values())
    assert makespan >= bound


class _EasyOnTheProfile(Backfill):
    """EASY computed on the availability profile instead of shadow/extra."""

    def decide(self, sim: Simulator, state: object) -> None:
        self._decide_with_profile(sim)


@FAST
@given(
    instance=instances(allocation="any"),
    order=st.sampled_from(["fcfs", "spt", "lsf"]),
    select=st.sampled_from(["queue", "largest", "smallest"]),
)
def test_easy_shadow_rule_equals_the_profile_with_one_reservation(
    instance: Instance, order: str, select: str
) -> None:
    assume(not instance.machine.unavailable)
    fast = simulate(instance, f"easy:order={order},select={select}")
    policy = _EasyOnTheProfile(order=order, select=select)
    sim = Simulator(instance, keep_profile=True)
    sim.run(policy, order_ranks(order, sim.size, sim.estimate))
    slow = sim.schedule(fast.schedule.producer)
    assert slow == fast.schedule


@FAST
@given(instance=instances(), spec=st.sampled_from(SPECS))
def test_same_input_same_schedule(instance: Instance, spec: str) -> None:
    assert simulate(instance, spec).schedule == simulate(instance, spec).schedule
