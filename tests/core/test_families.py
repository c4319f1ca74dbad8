"""The family table (:mod:`optsched.families`): its records are complete,
its handlers exist, its relaxations are relaxations, and the exact plan of
each combination is the one the table implies."""

from __future__ import annotations

import pytest

from optsched import families
from optsched.calendar import Calendar, Period
from optsched.check import check_schedule
from optsched.families import FEATURES, exact_plan, feature, features_of, load
from optsched.heuristics import simulate
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.nodes import Nodes

HANDLER_COLUMNS = ("check", "bounds", "candidates", "exact")


def test_every_named_handler_exists() -> None:
    for row in FEATURES:
        for column in HANDLER_COLUMNS:
            target = getattr(row, column)
            if target is not None:
                assert callable(load(target)), (row.name, column, target)


def test_the_records_are_complete() -> None:
    names = [row.name for row in FEATURES]
    assert len(names) == len(set(names))
    for row in FEATURES:
        assert set(row.exact_with) <= set(names), row.name
        assert (row.backends is None) == (row.unmodelled is None), row.name
        assert (row.simulators is None) == (row.unsimulated is None), row.name
        assert row.family in {"rigid", "site", "topology", "moldable", "preempt"}
    with pytest.raises(KeyError, match="features: user-limit"):
        feature("no-such-feature")


def _jobs() -> tuple[Job, ...]:
    return (
        Job(1, 0, 2, 10, user=1),
        Job(2, 0, 3, 5, user=2, preceding_job=1, think_time=2),
        Job(3, 4, 3, 7, user=1),
        Job(4, 6, 1, 3, user=2),
    )


def _calendar(limit: int | None = None) -> Calendar:
    # Every day: at most 3 of the 4 processors held at a start, jobs of up
    # to 3 processors; a day holiday-free week from time 0.
    week = tuple(range(8))
    return Calendar((Period(week, 0, 86400, capacity=3, max_size=3),), user_limit=limit)


def test_features_of_names_what_the_instance_carries() -> None:
    machine = Machine(
        4,
        "contiguous",
        (BusyBlock(0, 3, 1, 0),),
        calendar=_calendar(100),
        outages=(BusyBlock(20, 25, 4, 0),),
    )
    found = [row.name for row in features_of(Instance(machine, _jobs()))]
    assert found == [
        "user-limit",
        "outages",
        "chains",
        "calendar",
        "contiguous",
        "busy-blocks",
    ]


@pytest.mark.parametrize(
    "name", ["user-limit", "outages", "chains", "calendar", "busy-blocks"]
)
def test_dropping_a_restriction_keeps_every_schedule_feasible(name: str) -> None:
    # OPT(relax(I)) <= OPT(I): the engine's schedule of I is one of relax(I).
    machine = Machine(
        4,
        "any",
        (BusyBlock(0, 3, 1),),
        calendar=_calendar(100),
        outages=(BusyBlock(20, 25, 2),),
    )
    instance = Instance(machine, _jobs())
    schedule = simulate(instance, "easy").schedule.without_lost()
    relaxed = families.relaxed(instance, [name])
    assert name not in {row.name for row in features_of(relaxed)}
    offline = families.offline_view(relaxed)
    assert check_schedule(offline, schedule) == []


def test_the_flat_relaxation_only_shortens_jobs() -> None:
    machine = Machine(4, speeds=(1.0, 1.0, 2.0, 2.0))
    instance = Instance(machine, (Job(1, 0, 2, 8), Job(2, 1, 1, 6)))
    flat = families.relaxed(instance, ["speeds"])
    assert flat.machine.flat
    # Two processors of speed 2 run 8 units of work in 2 s; one in 3 s.
    assert [j.runtime for j in flat.jobs] == [2, 3]


def _moldable_job(k: int) -> Job:
    return Job(k, 0, 1, 6, modes=(Mode(1, 6), Mode(2, 3)))


@pytest.mark.parametrize(
    ("machine", "jobs", "model", "relaxed", "blocking"),
    [
        # A single feature: its own model, nothing relaxed.
        (Machine(4, calendar=_calendar()), _jobs(), "site.model", (), None),
        (Machine(4, speeds=(1.0,) * 4), _jobs()[:1], "topology.speeds", (), None),
        (
            Machine(4, nodes=Nodes(2, 2)),
            _jobs()[:1],
            "topology.smp",
            (),
            None,
        ),
        (Machine(4), (_moldable_job(1),), "moldable.model", (), None),
        (Machine(4, "contiguous"), _jobs()[2:], None, (), None),
        # A calendar with moldable jobs: the moldable model, calendar relaxed.
        (
            Machine(4, calendar=_calendar()),
            (_moldable_job(1), _moldable_job(2)),
            "moldable.model",
            ("calendar",),
            None,
        ),
        # Speeds and nodes: the flat relaxation drops both, the rigid model.
        (
            Machine(4, speeds=(1.0,) * 4, nodes=Nodes(2, 2)),
            _jobs()[:1],
            None,
            ("speeds", "nodes"),
            None,
        ),
        # Chains on a machine with speeds: the site model, speeds relaxed.
        (
            Machine(4, speeds=(1.0,) * 4),
            _jobs()[:2],
            "site.model",
            ("speeds",),
            None,
        ),
    ],
)
def test_the_exact_plan_follows_the_table(
    machine: Machine,
    jobs: tuple[Job, ...],
    model: str | None,
    relaxed: tuple[str, ...],
    blocking: str | None,
) -> None:
    plan = exact_plan(Instance(machine, jobs))
    assert plan.blocking == blocking
    named = None if plan.model is None else plan.model.split(":")[0].split(".", 2)[2]
    assert named == model
    assert plan.relaxed == relaxed
    assert not set(relaxed) & {row.name for row in features_of(plan.instance)}


def test_refusals_name_the_feature_and_the_back_ends_that_take_it() -> None:
    calendar = Instance(Machine(4, calendar=_calendar()), _jobs())
    assert families.refusal(calendar, "cpsat") is None
    assert families.refusal(calendar, "milp") == (
        "back-end milp ignores job chains (SWF fields 17/18): use cpsat or "
        "bounds-only, or --no-chains to drop them"
    )
    moldable = Instance(Machine(4), (_moldable_job(1), _moldable_job(2)))
    assert families.refusal(moldable, "shelf") == (
        "back-end shelf schedules rigid jobs only; the instance has 2 moldable "
        "jobs: use cpsat or bounds-only"
    )
    assert families.refusal(moldable, "preemptive") is None


def test_simulation_refusals_come_from_the_table() -> None:
    outages = Instance(Machine(4, outages=(BusyBlock(5, 9, 2),)), _jobs()[:1])
    assert families.simulation_refusal(outages, "easy", "engine") is None
    assert "does not follow machine outages" in str(
        families.simulation_refusal(outages, "ffdh", "standalone")
    )
    with pytest.raises(ValueError, match="does not follow machine outages"):
        simulate(outages, "pbi")
    blocks = Instance(Machine(4, unavailable=(BusyBlock(0, 3, 1),)), _jobs()[:1])
    with pytest.raises(ValueError, match="takes no busy blocks"):
        simulate(blocks, "fit:f=fifo")


def test_the_node_simulator_follows_job_chains() -> None:
    # Two processors of speed 1 and two of speed 2. Job 2 waits for job 1's
    # end (3: 10 units of work on the two fast processors, 10 / 4 rounded
    # up) plus its think time 5; job 5 follows the zero-length job 4 at once.
    machine = Machine(4, speeds=(1.0, 1.0, 2.0, 2.0))
    jobs = (
        Job(1, 0, 2, 10),
        Job(2, 0, 3, 6, preceding_job=1, think_time=5),
        Job(3, 1, 1, 4),
        Job(4, 0, 1, 0),
        Job(5, 0, 1, 3, preceding_job=4),
    )
    instance = Instance(machine, jobs)
    for policy in ("fcfs", "easy", "fit:f=fifo", "blocking:f=spt"):
        schedule = simulate(instance, policy).schedule
        assert check_schedule(instance, schedule) == [], policy
        spans = {j: (p.start, p.end) for j, p in schedule.placements.items()}
        assert spans[2][0] == 8 and spans[5][0] == 0, policy


def test_kill_at_estimate_with_malleable_jobs_is_refused_by_the_table() -> None:
    job = Job(
        1, 0, 2, 10, estimate=5, modes=(Mode(1, 20, 10), Mode(2, 10, 5)), malleable=True
    )
    instance = Instance(Machine(4), (job,))
    with pytest.raises(ValueError, match="does not apply to malleable jobs"):
        simulate(instance, "fcfs", kill_at_estimate=True)
    assert check_schedule(instance, simulate(instance, "fcfs").schedule) == []


def test_chains_on_a_machine_with_speeds_release_at_shortest_run_times() -> None:
    # Job 1 does 10 units of work; on the two speed-2 processors it ends at
    # 3 (10 / 4 rounded up), so job 2 may start at 3 + 1: its site release
    # is 4, not 11 (the work at speed 1), and every bound stays below the
    # checked schedule (a bound read from work at speed 1 was above it).
    from optsched.models import solve
    from optsched.models.site.bounds import site_released

    machine = Machine(4, speeds=(1.0, 1.0, 2.0, 2.0))
    jobs = (Job(1, 0, 2, 10), Job(2, 0, 2, 8, preceding_job=1, think_time=1))
    instance = Instance(machine, jobs)
    assert [j.release for j in site_released(instance).jobs] == [0, 4]
    for backend in ("bounds-only", "cpsat"):
        result = solve(instance, "cmax", backend=backend, time_limit=5, workers=1)
        assert result.schedule is not None
        assert check_schedule(instance, result.schedule) == []
        assert result.lower_bound is not None and result.objective is not None
        assert result.lower_bound <= result.objective == 6
