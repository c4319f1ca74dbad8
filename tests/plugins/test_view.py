"""The view a plug-in sees: what it shows, what it hides, the hooks, and
the machines it runs on (the engine's guarantees, or one refusal)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from support.composition import build_instance
from support.paths import INSTANCES

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.heuristics.plugins import OnlinePolicy, PolicyView, WaitingJob
from optsched.io.native import read_native

KTH_20 = read_native(INSTANCES / "kth_20.json").instance


class Recorder:
    """FCFS that records what it was shown (a strict head-of-queue rule)."""

    oracle = False

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, tuple[WaitingJob, ...]]] = []
        self.submitted: list[int] = []
        self.ended: list[tuple[int, int]] = []

    def on_submit(self, view: PolicyView, job: WaitingJob) -> None:
        self.submitted.append(job.id)

    def on_end(self, view: PolicyView, job: Any) -> None:
        self.ended.append((job.id, job.end))

    def select(self, view: PolicyView) -> Iterator[int]:
        # A generator: each fits() is asked after the jobs before it started.
        self.seen.append((view.now, view.free, view.waiting))
        for job in view.waiting:
            if not view.fits(job.id):
                return
            yield job.id


class OracleRecorder(Recorder):
    oracle = True


def test_fcfs_written_as_a_plug_in_is_fcfs() -> None:
    result = simulate(KTH_20, Recorder())
    fcfs = simulate(KTH_20, "fcfs").schedule
    assert check_schedule(KTH_20, result.schedule) == []
    assert {j: p.start for j, p in result.schedule.placements.items()} == {
        j: p.start for j, p in fcfs.placements.items()
    }


def test_the_view_shows_estimates_never_run_times() -> None:
    policy = Recorder()
    from optsched.heuristics import parse_policy

    chosen = parse_policy(policy)
    simulate(KTH_20, chosen)
    # The run works on a copy: read what it saw through a fresh run's state.
    jobs = KTH_20.jobs_by_id()
    seen = _seen(chosen)
    shown = {job.id: job.estimate for _, _, waiting in seen for job in waiting}
    assert shown == {j: jobs[j].requested for j in shown}
    assert any(jobs[j].requested != jobs[j].runtime for j in shown)
    oracle = _seen(parse_policy(OracleRecorder()))
    shown = {job.id: job.estimate for _, _, waiting in oracle for job in waiting}
    assert shown == {j: jobs[j].runtime for j in shown}


def _seen(policy: Any) -> list[tuple[int, int, tuple[WaitingJob, ...]]]:
    from optsched.heuristics.engine.core import Simulator

    sim = Simulator(KTH_20, oracle=policy.oracle, keep_profile=True)
    sim.run(policy, list(range(len(KTH_20.jobs))))
    return sim._policy_state.user.seen


def test_hooks_see_every_arrival_and_end() -> None:
    from optsched.heuristics import parse_policy
    from optsched.heuristics.engine.core import Simulator

    policy = parse_policy(Recorder())
    sim = Simulator(KTH_20, keep_profile=True)
    sim.run(policy, list(range(len(KTH_20.jobs))))
    user = sim._policy_state.user
    schedule = sim.schedule("x")
    assert sorted(user.submitted) == sorted(j.id for j in KTH_20.jobs)
    # Hooks run at scheduling points, which exist while jobs wait: every run
    # that ended up to the last one is reported once, with its true end.
    last = max(now for now, _, _ in user.seen)
    ends = sorted((j, p.end) for j, p in schedule.placements.items())
    assert sorted(user.ended) == [(j, end) for j, end in ends if end <= last]


def test_records_are_read_only() -> None:
    policy = Recorder()
    simulate(KTH_20, policy)
    assert policy.seen == []  # the run worked on a copy
    job = WaitingJob(1, 2, 3, 4, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.size = 5  # type: ignore[misc]
    assert isinstance(Recorder(), OnlinePolicy)


def test_earliest_start_is_the_shadow_time() -> None:
    answers: list[tuple[int, int | None, int]] = []

    class Probe(Recorder):
        def select(self, view: PolicyView) -> Iterator[int]:
            if view.running:
                # By hand: the machine is full at its size once every running
                # job has reached its expected end (a past one counts as now).
                last = max(r.expected_end for r in view.running)
                answers.append(
                    (view.now, view.earliest_start(view.processors, 1), last)
                )
            return super().select(view)

    simulate(KTH_20, Probe())
    assert answers
    for now, start, last in answers:
        assert start == max(now, last)


@pytest.mark.parametrize(
    "features",
    [("contiguous",), ("busy-blocks",), ("calendar",), ("outages",), ("user-limit",),
     ("chains",), ("contiguous", "busy-blocks"), ("calendar", "user-limit")],
)  # fmt: skip
def test_the_engines_guarantees_hold_on_every_machine(
    features: tuple[str, ...],
) -> None:
    instance = build_instance(features)
    result = simulate(instance, Recorder())
    assert check_schedule(instance, result.schedule) == []
    assert set(result.schedule.placements) == {j.id for j in instance.jobs}


@pytest.mark.parametrize("feature", ["speeds", "smp"])
def test_node_machines_are_refused_in_one_line(feature: str) -> None:
    instance = build_instance((feature,))
    with pytest.raises(
        ValueError, match="does not run on a machine with speeds or SMP"
    ):
        simulate(instance, Recorder())


def test_an_object_defined_without_a_source_file_runs() -> None:
    # A class typed in a notebook, a REPL or ``python -c`` has no file to
    # hash (inspect raises OSError for __main__ there): it runs, without a
    # digest.
    import subprocess
    import sys

    code = (
        "from optsched.heuristics import parse_policy, simulate\n"
        "from optsched.io.native import read_native\n"
        "class Fcfs:\n"
        "    def select(self, view):\n"
        "        for job in view.waiting:\n"
        "            if not view.fits(job.id):\n"
        "                return\n"
        "            yield job.id\n"
        f"instance = read_native({str(INSTANCES / 'kth_20.json')!r}).instance\n"
        "policy = parse_policy(Fcfs())\n"
        "schedule = simulate(instance, policy).schedule\n"
        "print(policy.spec, repr(policy.digest), len(schedule.placements))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["__main__:Fcfs", "''", "20"]


def test_job_is_the_waiting_record() -> None:
    checked: list[int] = []

    class Probe(Recorder):
        def select(self, view: PolicyView) -> Iterator[int]:
            for job in view.waiting:
                assert view.job(job.id) == job
            for running in view.running:
                with pytest.raises(KeyError, match=f"job {running.id} is not waiting"):
                    view.job(running.id)
                checked.append(running.id)
            return super().select(view)

    simulate(KTH_20, Probe())
    assert checked
