"""A plug-in that chooses moldable jobs' modes (the optional ``choose_mode``).

The policy under test starts waiting jobs in queue order whenever they fit,
each on its *smallest* mode. Its starts are compared with a plain
simulation of that rule (:func:`smallest_mode_reference`, sharing no code
with the engine), every schedule goes through the checker, and a mode that
is not the job's, or that does not fit, stops the run with one line.
"""

from __future__ import annotations

import heapq
import math
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.composition import build_instance
from support.paths import INSTANCES

from optsched.check import check_schedule
from optsched.cli import main
from optsched.heuristics import parse_policy, simulate
from optsched.heuristics.engine.runner import simulator_of
from optsched.heuristics.plugins import JobMode, PolicyError, PolicyView, WaitingJob
from optsched.instance import Instance
from optsched.io.native import read_native
from optsched.moldable.speedup import parse_model

SPEEDUP = "amdahl:f=0.05"


def half_to_full(instance: Instance) -> Instance:
    """Every job moldable under :data:`SPEEDUP`, on its request or on fewer
    processors down to half of it (so that the smallest modes still compete
    for the machine)."""
    moldable = parse_model(SPEEDUP).apply(instance)
    return moldable.with_jobs(
        job.replace(
            modes=tuple(m for m in job.modes if m.processors >= math.ceil(job.size / 2))
        )
        for job in moldable.jobs
    )


KTH_50 = half_to_full(read_native(INSTANCES / "kth_50.json").instance)


class SmallestMode:
    """First fit in queue order, each job on its smallest mode."""

    name = "smallest-mode"

    def select(self, view: PolicyView) -> Iterator[int]:
        for job in view.waiting:
            if view.fits(job.id, job.modes[0]):
                yield job.id

    def choose_mode(self, view: PolicyView, job: WaitingJob) -> JobMode:
        return job.modes[0]


class SelectOnly:
    """No choose_mode: every job starts on its request."""

    def select(self, view: PolicyView) -> list[int]:
        return []


def smallest_mode_reference(instance: Instance) -> dict[int, tuple[int, int]]:
    """``job id -> (start, processors)`` under "first fit in submit order,
    each job on its smallest mode", by a plain loop over the instants where
    a job arrives or ends (ends first). A job of zero run time gives its
    processors back at once."""
    m = instance.machine.processors
    arrivals = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    ends: list[tuple[int, int]] = []  # (end, processors)
    waiting: list[Any] = []
    out: dict[int, tuple[int, int]] = {}
    free, k = m, 0
    while k < len(arrivals) or waiting:
        upcoming = [arrivals[k].release] if k < len(arrivals) else []
        now = min([*upcoming, ends[0][0]] if ends else upcoming)
        while ends and ends[0][0] == now:
            free += heapq.heappop(ends)[1]
        while k < len(arrivals) and arrivals[k].release == now:
            waiting.append(arrivals[k])
            k += 1
        for job in list(waiting):
            smallest = min(job.modes, key=lambda mode: mode.processors)
            if smallest.processors <= free:
                out[job.id] = (now, smallest.processors)
                waiting.remove(job)
                if smallest.runtime > 0:
                    free -= smallest.processors
                    heapq.heappush(ends, (now + smallest.runtime, smallest.processors))
    return out


def test_smallest_modes_match_the_reference() -> None:
    result = simulate(KTH_50, SmallestMode())
    assert check_schedule(KTH_50, result.schedule) == []
    got = {
        j: (p.start, len(p.processors)) for j, p in result.schedule.placements.items()
    }
    assert got == smallest_mode_reference(KTH_50)
    # The modes mattered: jobs ran on fewer processors than they requested,
    # and the schedule is not the one of the requests.
    requested = {j.id: j.size for j in KTH_50.jobs}
    assert sum(p for _, p in got.values()) < sum(requested.values())
    rigid = simulate(KTH_50, "firstfit").schedule
    assert any(rigid[j].start != start for j, (start, _) in got.items())


def test_the_view_lists_modes_with_estimates_only() -> None:
    seen: dict[int, tuple[JobMode, ...]] = {}

    class Recording(SmallestMode):
        def choose_mode(self, view: PolicyView, job: WaitingJob) -> JobMode:
            seen[job.id] = job.modes
            return super().choose_mode(view, job)

    simulate(KTH_50, Recording())
    for job in KTH_50.jobs:
        assert seen[job.id] == tuple(
            JobMode(m.processors, m.estimate) for m in job.modes
        )
    assert any(m.estimate != m.runtime for job in KTH_50.jobs for m in job.modes)

    class Oracle(Recording):
        oracle = True

    simulate(KTH_50, Oracle())
    for job in KTH_50.jobs:
        assert seen[job.id] == tuple(
            JobMode(m.processors, m.runtime) for m in job.modes
        )


def test_none_keeps_the_request_and_fits_leaves_the_job_as_it_was() -> None:
    class Requests:
        def select(self, view: PolicyView) -> Iterator[int]:
            for job in view.waiting:
                before = view.waiting
                view.fits(job.id, job.modes[0])  # asked in another mode...
                assert view.waiting == before  # ...the job is as it was
                if view.fits(job.id):
                    yield job.id

        def choose_mode(self, view: PolicyView, job: WaitingJob) -> None:
            return None

    policy = parse_policy(Requests())
    assert simulator_of(KTH_50, policy) == "engine-modes"
    without_hook = parse_policy(SelectOnly())
    assert simulator_of(KTH_50, without_hook) == "engine"
    mine = simulate(KTH_50, policy).schedule
    assert check_schedule(KTH_50, mine) == []
    firstfit = simulate(KTH_50, "firstfit").schedule
    assert {j: (p.start, p.processors) for j, p in mine.placements.items()} == {
        j: (p.start, p.processors) for j, p in firstfit.placements.items()
    }


@pytest.mark.parametrize(
    "features",
    [("moldable", "contiguous", "busy-blocks"), ("moldable", "calendar"),
     ("moldable", "outages"), ("moldable", "chains"), ("malleable",),
     ("moldable", "calendar", "user-limit")],
)  # fmt: skip
def test_chosen_modes_keep_the_engines_guarantees(features: tuple[str, ...]) -> None:
    instance = build_instance(features)
    schedule = simulate(instance, SmallestMode()).schedule
    assert check_schedule(instance, schedule) == []
    assert set(schedule.placements) == {j.id for j in instance.jobs}
    smallest = {
        j.id: j.modes[0].processors if j.modes else j.size for j in instance.jobs
    }
    assert {j: len(p.processors) for j, p in schedule.placements.items()} == smallest


BAD = textwrap.dedent(
    """
    from optsched.heuristics.plugins import JobMode

    class Smallest:
        def select(self, view):
            return [j.id for j in view.waiting if view.fits(j.id, j.modes[0])][:1]

    class Unknown(Smallest):
        def choose_mode(self, view, job):
            return JobMode(999, 1)

    class Count(Smallest):
        def choose_mode(self, view, job):
            return job.modes[0].processors

    class Largest:
        def select(self, view):
            return [j.id for j in view.waiting if view.fits(j.id, j.modes[0])]

        def choose_mode(self, view, job):
            return job.modes[-1]

    class Raises(Smallest):
        def choose_mode(self, view, job):
            return job.modes[7]
    """
)


@pytest.fixture(scope="module")
def moldable_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from optsched.io.native import write_native

    path = tmp_path_factory.mktemp("modes") / "kth_50_moldable.json"
    write_native(KTH_50, path)
    return path


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Unknown", "at t=0: choose_mode returned JobMode(processors=999, "
         "estimate=1) for job 615, not one of its modes (on 9, 10, 11, 12, 13, "
         "14, 15, 16, 17 processors; return one of job.modes)"),
        ("Count", "at t=0: choose_mode returned 9 for job 615, not one of its "
         "modes"),
        ("Largest", "at t=3382: job 618 in its 84-processor mode needs 84 "
         "processors, 83 are free"),
        ("Raises", "raised at t=77: IndexError: tuple index out of range"),
    ],
)  # fmt: skip
def test_a_bad_mode_is_one_line_and_exit_2(
    tmp_path: Path, moldable_file: Path, name: str, message: str
) -> None:
    bad = tmp_path / "bad_modes.py"
    bad.write_text(BAD)
    result = CliRunner().invoke(
        main, ["simulate", str(moldable_file), "-p", f"{bad}:{name}"]
    )
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"optsched: error: policy '{bad}:{name}' ")
    assert message in last
    with pytest.raises(PolicyError):
        simulate(KTH_50, f"{bad}:{name}")
