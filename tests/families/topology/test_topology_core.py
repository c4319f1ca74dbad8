"""Machines with node speeds and SMP nodes: core types, formats, checker rule 10."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.cli import main
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.io.native import instance_from_dict, instance_to_json, read_native
from optsched.nodes import Nodes, adaptive_tight
from optsched.schedule import Piece, Placement, Schedule
from optsched.topology.machines import (
    MachineShape,
    append_schedule,
    flat_relaxation,
    parse_speed_list,
)

# ---------------------------------------------------------------- run times


def test_run_time_divides_work_by_the_summed_speeds() -> None:
    # Rassmann's examples: p = 10 on one node of speed 2, or two of speed 1.
    machine = Machine(3, speeds=(2, 1, 1))
    assert machine.run_time(10, [0]) == 5
    assert machine.run_time(10, [1, 2]) == 5
    assert machine.run_time(3, [1, 2]) == 2  # ceil(3 / 2)
    assert Machine(2, speeds=(0.1, 0.2)).run_time(3, [0, 1]) == 10  # 3 / 0.3 exactly


def test_communication_cost_inflates_with_span_and_level() -> None:
    # Wang's Table 2: level 4, 3 nodes -> cost 0.6; a 100 s job runs 160 s.
    machine = Machine(100, nodes=Nodes(10, 10, tight=None, level=4))
    assert machine.run_time(100, [0, 10, 20]) == 160
    assert machine.run_time(100, [0, 1, 2]) == 120  # one node still pays 0.2
    excess = Machine(100, nodes=Nodes(10, 10, level=4, cost="excess"))
    assert excess.run_time(100, [0, 1, 2]) == 100
    assert excess.run_time(100, [0, 10, 20]) == 140
    assert Machine(100, nodes=Nodes(10, 10, level=0)).run_time(7, [0, 50]) == 7


def test_speeds_and_nodes_together() -> None:
    machine = Machine(4, speeds=(1, 1, 2, 2), nodes=Nodes(2, 2, level=1, base=0.5))
    # work 12 on processors 1 (speed 1) and 2 (speed 2): 12 / 3 = 4, two
    # nodes at level 1: factor 1 + 0.5 * 2 = 2 -> 8.
    assert machine.run_time(12, [1, 2]) == 8
    assert machine.shortest_run_time(12, 2) == 5  # 12/4 on the fast node, x1.5


@settings(max_examples=60, deadline=None)
@given(
    speeds=st.lists(st.sampled_from([0.5, 1, 1.5, 2, 3]), min_size=1, max_size=5),
    work=st.integers(0, 200),
    data=st.data(),
)
def test_shortest_run_time_is_at_most_every_set(
    speeds: list[float], work: int, data: st.DataObject
) -> None:
    m = len(speeds)
    cpus = data.draw(st.sampled_from([c for c in range(1, m + 1) if m % c == 0]))
    nodes = Nodes(m // cpus, cpus, level=data.draw(st.integers(0, 3)))
    machine = Machine(m, speeds=tuple(speeds), nodes=nodes)
    for size in range(1, m + 1):
        best = min(
            machine.run_time(work, s) for s in itertools.combinations(range(m), size)
        )
        assert machine.shortest_run_time(work, size) <= best


def test_fits_uses_the_fullest_nodes() -> None:
    nodes = Nodes(10, 10, tight=0)
    assert nodes.span_limit(24) == 3
    assert nodes.fits(24, [9, 9, 6] + [0] * 7)
    assert not nodes.fits(24, [9, 9, 5, 5] + [0] * 6)  # 28 free, 3 nodes hold 23
    assert Nodes(10, 10, tight=2).fits(24, [5] * 10)
    assert Nodes(10, 10).span_limit(1) == 10
    assert adaptive_tight(4) == 2 and adaptive_tight(7) == 0


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Machine(3, speeds=(1, 2)), "2 speeds for 3 processors"),
        (lambda: Machine(2, speeds=(1, 0)), "speed of processor 1 is 0"),
        (lambda: Machine(2, speeds=(1, True)), "speed of processor 1"),
        (lambda: Machine(6, nodes=Nodes(2, 2)), "make 4, not the machine's 6"),
        (
            lambda: Machine(4, "contiguous", speeds=(1,) * 4),
            "need allocation 'any'",
        ),
        (
            lambda: Machine(4, unavailable=(BusyBlock(0, 5, 1),), nodes=Nodes(2, 2)),
            "takes no busy blocks",
        ),
        (lambda: Nodes(2, 2, tight=-1), "tight -1"),
        (lambda: Nodes(2, 2, cost="linear"), "cost 'linear'"),
        (lambda: Nodes(0, 2), "at least one node"),
    ],
)
def test_bad_machines_are_refused(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_malleable_jobs_are_refused_on_such_machines() -> None:
    # Moldable jobs run there (test_moldable_topology.py); a malleable one
    # would change processors between pieces, and a job runs in one piece.
    job = Job(1, 0, 1, 10, modes=(Mode(1, 10), Mode(2, 5)), malleable=True)
    with pytest.raises(ValueError, match="malleable jobs are not supported on"):
        Instance(Machine(2, speeds=(1, 2)), (job,))
    moldable = Instance(Machine(2, speeds=(1, 2)), (job.replace(malleable=False),))
    assert moldable.moldable and not moldable.malleable


# ---------------------------------------------------------------- formats


def _instance() -> Instance:
    machine = Machine(4, speeds=(1, 2, 0.5, 1.5), nodes=Nodes(2, 2, tight=0, level=3))
    return Instance(machine, (Job(1, 0, 2, 10, 12), Job(2, 3, 1, 7)), name="t")


def test_native_round_trip_keeps_speeds_and_nodes(tmp_path: Path) -> None:
    instance = _instance()
    path = tmp_path / "i.json"
    path.write_text(instance_to_json(instance))
    again = read_native(path).instance
    assert again.machine == instance.machine
    assert again.jobs == instance.jobs
    data = json.loads(instance_to_json(instance))
    assert data["machine"]["speeds"] == [1, 2, 0.5, 1.5]
    assert data["machine"]["nodes"]["tight"] == 0
    flat = json.loads(instance_to_json(Instance(Machine(2), ())))
    assert "speeds" not in flat["machine"] and "nodes" not in flat["machine"]


@pytest.mark.parametrize(
    ("machine", "message"),
    [
        ({"processors": 2, "speeds": [1, -1]}, r"speeds\[1\] -1 must be > 0"),
        ({"processors": 2, "speeds": "fast"}, "expected a list"),
        ({"processors": 4, "nodes": {"count": 2}}, "missing key 'cpus'"),
        ({"processors": 4, "nodes": {"count": 2, "cpus": 2, "x": 1}}, "unknown key"),
    ],
)
def test_bad_machine_keys_name_the_problem(
    machine: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        instance_from_dict({"version": 1, "machine": machine, "jobs": []})


# ---------------------------------------------------------------- checker


def _check(instance: Instance, placements: dict[int, Placement]) -> list[str]:
    return [v.kind for v in check_schedule(instance, Schedule(placements, "t"))]


def test_checker_reads_run_times_from_the_processors() -> None:
    instance = Instance(
        Machine(3, speeds=(1, 2, 0.5)), (Job(1, 0, 2, 10), Job(2, 0, 1, 3))
    )
    good = {1: Placement(0, 4, processors=(0, 1)), 2: Placement(0, 6, processors=(2,))}
    assert _check(instance, good) == []
    short = {**good, 2: Placement(0, 5, processors=(2,))}
    assert _check(instance, short) == ["duration"]
    unnamed = {**good, 2: Placement(0, 6)}
    assert _check(instance, unnamed) == ["topology"]
    shared = {**good, 2: Placement(0, 3, processors=(1,))}  # speed 2: 2 s
    assert "duration" in _check(instance, shared)
    clash = {**good, 2: Placement(0, 2, processors=(1,))}
    assert _check(instance, clash) == ["processor-overlap"]


def test_checker_enforces_the_span_limit_and_inflation() -> None:
    instance = Instance(
        Machine(4, nodes=Nodes(2, 2, tight=0, level=2)), (Job(1, 0, 2, 10),)
    )
    assert _check(instance, {1: Placement(0, 11, processors=(0, 1))}) == []
    assert _check(instance, {1: Placement(0, 12, processors=(0, 2))}) == ["span"]
    loose = instance.replace(machine=Machine(4, nodes=Nodes(2, 2, level=2)))
    assert _check(loose, {1: Placement(0, 12, processors=(0, 2))}) == []
    assert _check(loose, {1: Placement(0, 11, processors=(0, 2))}) == ["duration"]


def test_checker_refuses_pieces_and_kills() -> None:
    instance = Instance(Machine(2, speeds=(1, 1)), (Job(1, 0, 1, 4, 2),))
    pieces = Placement.of_pieces((Piece(0, 2, (0,)), Piece(3, 5, (0,))))
    assert "topology" in _check(instance, {1: pieces})
    killed = Schedule({1: Placement(0, 2, processors=(0,))}, "t", frozenset({1}))
    assert "killed" in [v.kind for v in check_schedule(instance, killed)]


# ---------------------------------------------------------------- shapes


def test_speed_lists_and_groups() -> None:
    assert parse_speed_list("2x1,3") == (1, 1, 3)
    assert parse_speed_list("16x275,6x825") == (275,) * 16 + (825,) * 6
    with pytest.raises(ValueError, match="is not a number"):
        parse_speed_list("1,fast")
    with pytest.raises(ValueError, match="> 0"):
        parse_speed_list("0")


def test_speed_file(tmp_path: Path) -> None:
    path = tmp_path / "speeds.txt"
    path.write_text("# measured\n2x100\n150 # the new node\n")
    assert parse_speed_list(str(path)) == (100, 100, 150)


def test_shape_spec_round_trip_and_apply() -> None:
    shape = MachineShape.parse("nodes=2x2;tight=adaptive;level=4;cost=excess")
    assert MachineShape.parse(shape.spec) == shape
    instance = Instance(Machine(4), (Job(1, 0, 2, 10, 30),))
    shaped = shape.apply(instance)
    assert shaped.machine.nodes == Nodes(2, 2, tight=2, level=4, cost="excess")
    assert shaped.jobs == instance.jobs  # nodes alone keep run times
    fast = MachineShape.parse("speeds=4x2").apply(instance)
    assert fast.jobs[0].runtime == 20 and fast.jobs[0].estimate == 60
    assert fast.machine.run_time(20, [0, 1]) == 5
    with pytest.raises(ValueError, match="need nodes"):
        MachineShape.parse("level=3")
    with pytest.raises(ValueError, match="busy blocks"):
        shape.apply(
            instance.replace(machine=Machine(4, unavailable=(BusyBlock(0, 1, 1),)))
        )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 4), st.integers(0, 50)), min_size=1, max_size=6)
)
def test_unit_speeds_keep_every_run_time(jobs: list[tuple[int, int]]) -> None:
    flat = Instance(Machine(4), tuple(Job(k, 0, q, p) for k, (q, p) in enumerate(jobs)))
    unit = MachineShape(speeds=(1, 1, 1, 1)).apply(flat)
    for before, after in zip(flat.jobs, unit.jobs, strict=True):
        assert unit.machine.run_time(after.runtime, range(after.size)) == before.runtime


def test_append_schedule_is_valid_on_every_kind() -> None:
    jobs = tuple(Job(k, k % 3, 1 + k % 4, 5 + 3 * k) for k in range(9))
    for machine in (
        Machine(4, speeds=(1, 2, 3, 0.5)),
        Machine(4, nodes=Nodes(2, 2, tight=0, level=2)),
        Machine(4, speeds=(1, 1, 2, 2), nodes=Nodes(2, 2, tight=1, level=1)),
    ):
        instance = Instance(machine, jobs)
        schedule = append_schedule(instance, [j.id for j in jobs])
        assert check_schedule(instance, schedule) == []


def test_flat_relaxation_takes_the_shortest_run_times() -> None:
    instance = Instance(Machine(3, speeds=(1, 2, 4)), (Job(1, 0, 2, 12),))
    relaxed = flat_relaxation(instance)
    assert relaxed.machine.flat
    assert relaxed.jobs[0].runtime == 2  # 12 / (4 + 2)


# ---------------------------------------------------------------- command line


def test_cli_options_make_a_machine(tmp_path: Path) -> None:
    runner = CliRunner()
    machine = ["--nodes", "10x10", "--tight", "1", "--level", "2"]
    command = ["bound", "instances/kth_20.json", "--backend", "bounds-only"]
    result = runner.invoke(main, [*command, *machine])
    assert result.exit_code == 0, result.output
    assert "(shortest run times)" in result.output
    bad = runner.invoke(main, ["bound", "instances/kth_20.json", "--nodes", "10x11"])
    assert bad.exit_code == 2
    assert "10 nodes x 11 processors make 110, not the machine's 100" in bad.output
    bad = runner.invoke(main, ["bound", "instances/kth_20.json", "--level", "2"])
    assert bad.exit_code == 2 and "need nodes" in bad.output


def test_info_describes_speeds_and_nodes() -> None:
    result = CliRunner().invoke(
        main,
        ["info", "instances/kth_20.json", "--speeds", "50x1,50x2", "--nodes", "10x10"],
    )
    assert result.exit_code == 0, result.output
    assert "50 x 1, 50 x 2 (total 150" in result.output
    assert "10x10, no span limit" in result.output


def test_gantt_groups_processors_by_node() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from optsched.plot import gantt

    jobs = tuple(Job(k, 0, 1 + k % 3, 4 + k) for k in range(5))
    instance = Instance(Machine(6, nodes=Nodes(3, 2, tight=0)), jobs)
    ax = gantt(instance, append_schedule(instance, [j.id for j in jobs]))
    lines = [a for a in ax.get_lines() if a.get_gid() == "node line"]
    assert [line.get_ydata()[0] for line in lines] == [2, 4]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "node 0",
        "node 1",
        "node 2",
    ]
    plt.close("all")


def test_offline_heuristics_on_such_machines_are_valid() -> None:
    from optsched.heuristics.rigid.offline import heuristic_schedules

    jobs = tuple(Job(k, k % 4, 1 + k % 3, 6 + k) for k in range(8))
    instance = Instance(Machine(4, speeds=(1, 2, 2, 4)), jobs)
    schedules = heuristic_schedules(instance, "wct")
    assert "ffdh" not in schedules and schedules
    for schedule in schedules.values():
        assert check_schedule(instance, schedule) == []


def test_batsim_workload_refuses_speeds() -> None:
    from optsched.io.batsim import workload_to_dict

    with pytest.raises(ValueError, match="cannot hold node speeds"):
        workload_to_dict(Instance(Machine(2, speeds=(1, 2)), (Job(1, 0, 1, 5),)))
