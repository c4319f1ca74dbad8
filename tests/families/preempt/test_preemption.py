"""Schedules in pieces: the core types, the checker, metrics, files, charts.

The hand-checked schedule used throughout (m = 4, all jobs released at 0):

* job 1 (4 processors, 6 s) runs ``[0, 2)`` and ``[5, 9)`` on processors
  0-3: work 2 + 4 = 6, C_1 = 9;
* job 2 (2 processors, 4 s) runs ``[2, 5)`` and ``[9, 10)`` on processors
  0-1: work 3 + 1 = 4, C_2 = 10.

Processor 0 holds job 1 from 0 to 9 and job 2 from 2 to 10: two jobs in
progress at once (PBI's promise), never three. Utilisation (4·6 + 2·4) /
(4·10) = 0.8; with τ = 1 the bounded slowdowns are 9/6 = 1.5 and 10/4 = 2.5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from optsched.check import check_schedule, max_jobs_per_processor, migrations
from optsched.instance import Instance, Job, Machine
from optsched.io.native import instance_to_json, read_native
from optsched.io.schedules import read_schedule, write_schedule
from optsched.metrics import bounded_slowdowns, summarize, utilisation, waits
from optsched.plot.gantt import gantt
from optsched.schedule import Piece, Placement, Schedule

P01, P0123 = (0, 1), (0, 1, 2, 3)


def instance(switch_cost: int = 0, per_processor: int = 0) -> Instance:
    machine = Machine(
        4, switch_cost=switch_cost, switch_cost_per_processor=per_processor
    )
    jobs = (Job(1, 0, 4, 6), Job(2, 0, 2, 4))
    return Instance(machine, jobs, name="pieces")


def pieced(pieces_1: list[Piece], pieces_2: list[Piece]) -> Schedule:
    return Schedule(
        {1: Placement.of_pieces(pieces_1), 2: Placement.of_pieces(pieces_2)},
        producer="hand",
    )


def golden() -> Schedule:
    return pieced(
        [Piece(0, 2, P0123), Piece(5, 9, P0123)],
        [Piece(2, 5, P01), Piece(9, 10, P01)],
    )


def kinds(inst: Instance, schedule: Schedule) -> list[str]:
    return [v.kind for v in check_schedule(inst, schedule)]


# ---------------------------------------------------------------------------
# core types


def test_placement_of_pieces_spans_its_pieces() -> None:
    placement = golden()[1]
    assert (placement.start, placement.end, placement.processors) == (0, 9, P0123)
    assert placement.segments() == ((0, 2, P0123), (5, 9, P0123))
    assert (placement.work, placement.held, placement.duration) == (6, 6, 9)
    # one piece without a switch is a plain placement
    assert Placement.of_pieces([Piece(3, 7, P01)]) == Placement(3, 7, P01)
    with pytest.raises(ValueError, match="not the span"):
        Placement(0, 8, P0123, pieces=(Piece(0, 2, P0123), Piece(5, 9, P0123)))
    with pytest.raises(ValueError, match="moves or pieces"):
        Placement(0, 9, P0123, ((1, P01),), (Piece(0, 2, P0123), Piece(5, 9, P0123)))
    with pytest.raises(ValueError, match="at least one piece"):
        Placement.of_pieces([])
    with pytest.raises(ValueError, match="switch must be an integer"):
        Piece(0, 1, None, 0.5)  # type: ignore[arg-type]


def test_machine_resume_cost_and_native_round_trip(tmp_path: Path) -> None:
    inst = instance(switch_cost=2, per_processor=3)
    assert inst.machine.resume_cost(4) == 2 + 3 * 4
    path = tmp_path / "i.json"
    path.write_text(instance_to_json(inst))
    data = json.loads(path.read_text())
    assert data["machine"]["switch_cost"] == 2
    assert data["machine"]["switch_cost_per_processor"] == 3
    assert read_native(path).instance.machine == inst.machine
    # free preemption writes nothing new: old files stay byte-identical
    assert "switch_cost" not in instance_to_json(instance())
    with pytest.raises(ValueError, match="switch_cost -1 must be >= 0"):
        Machine(4, switch_cost=-1)


def test_native_reader_names_a_bad_switch_cost(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from optsched.cli import main

    text = instance_to_json(instance()).replace(
        '"allocation": "any", ', '"allocation": "any", "switch_cost": -5, '
    )
    path = tmp_path / "bad.json"
    path.write_text(text)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2
    assert f"{path}:5: machine: " in result.stderr
    assert "switch_cost -5 must be >= 0" in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------
# checker


def test_golden_pieced_schedule_is_valid() -> None:
    assert check_schedule(instance(), golden()) == []
    assert max_jobs_per_processor(instance(), golden()) == 2
    assert migrations(golden()) == []


def test_checker_rules_on_pieces() -> None:
    inst = instance()
    # work 2 + 3 = 5 instead of 6
    short = pieced(
        [Piece(0, 2, P0123), Piece(5, 8, P0123)], [Piece(2, 5, P01), Piece(9, 10, P01)]
    )
    assert kinds(inst, short) == ["duration"]
    # job 1's pieces overlap each other (and so job 1 with itself in time)
    overlapping = pieced([Piece(0, 3, P0123), Piece(2, 5, P0123)], [Piece(5, 9, P01)])
    assert "piece-order" in kinds(inst, overlapping)
    # a switch recorded where the machine has none, and a first-piece switch
    free = pieced(
        [Piece(0, 2, P0123), Piece(5, 10, P0123, switch=1)],
        [Piece(2, 5, P01, switch=1), Piece(10, 12, P01)],
    )
    messages = [str(v) for v in check_schedule(inst, free)]
    assert any("piece 1 [5, 10) records a switch of 1 s, expected 0 s" in m
               for m in messages)  # fmt: skip
    assert any("piece 0 [2, 5) records a switch of 1 s, expected 0 s (a first "
               "piece pays none)" in m for m in messages)  # fmt: skip
    # two pieces of different jobs on one processor at one time
    clash = pieced(
        [Piece(0, 2, P0123), Piece(4, 8, P0123)], [Piece(2, 5, P01), Piece(9, 10, P01)]
    )
    assert set(kinds(inst, clash)) == {"capacity", "processor-overlap"}
    # a piece before the release
    late = Instance(Machine(4), (Job(1, 1, 4, 6), Job(2, 0, 2, 4)))
    assert kinds(late, golden()) == ["early-start"]


def test_checker_demands_the_machines_resume_cost() -> None:
    costly = instance(switch_cost=1)
    paid = pieced(
        [Piece(0, 2, P0123), Piece(5, 10, P0123, switch=1)],
        [Piece(2, 5, P01), Piece(10, 12, P01, switch=1)],
    )
    assert check_schedule(costly, paid) == []
    assert paid[1].switch_cost == 1 and paid[1].work == 6 and paid[1].held == 7
    # the same schedule on a machine charging per processor: 1 + 2*4 = 9 s
    per_processor = instance(switch_cost=1, per_processor=2)
    assert kinds(per_processor, paid) == ["switch-cost", "switch-cost"]
    # unpaid on the costly machine
    assert kinds(costly, golden()) == ["switch-cost", "switch-cost"]


def test_max_jobs_per_processor_counts_suspended_jobs() -> None:
    inst = Instance(Machine(2), (Job(1, 0, 2, 2), Job(2, 0, 1, 2), Job(3, 0, 1, 2)))
    # jobs 2 and 3 start on processor 0 while job 1 is suspended there
    three = Schedule(
        {
            1: Placement.of_pieces([Piece(0, 1, (0, 1)), Piece(5, 6, (0, 1))]),
            2: Placement.of_pieces([Piece(1, 2, (0,)), Piece(3, 4, (0,))]),
            3: Placement.of_pieces([Piece(2, 3, (0,)), Piece(4, 5, (0,))]),
        }
    )
    assert check_schedule(inst, three) == []
    assert max_jobs_per_processor(inst, three) == 3
    # non-preemptive schedules keep one job per processor
    plain = Schedule({1: Placement(0, 2, (0, 1)), 2: Placement(2, 4, (0,)),
                      3: Placement(2, 4, (1,))})  # fmt: skip
    assert check_schedule(inst, plain) == []
    assert max_jobs_per_processor(inst, plain) == 1
    moved = Schedule(
        {
            1: Placement(0, 2, (0, 1)),
            2: Placement.of_pieces([Piece(2, 3, (0,)), Piece(3, 4, (1,))]),
            3: Placement.of_pieces([Piece(2, 3, (1,)), Piece(3, 4, (0,))]),
        }
    )
    assert check_schedule(inst, moved) == []
    assert migrations(moved) == [2, 3]
    with pytest.raises(ValueError, match="job 1 has no processor set"):
        max_jobs_per_processor(inst, Schedule({1: Placement(0, 2)}))


# ---------------------------------------------------------------------------
# metrics


def test_metrics_of_a_pieced_schedule() -> None:
    inst, schedule = instance(), golden()
    assert waits(inst, schedule).tolist() == [0, 2]
    assert bounded_slowdowns(inst, schedule, threshold=1).tolist() == [1.5, 2.5]
    assert utilisation(inst, schedule) == pytest.approx(0.8)
    summary = summarize(inst, schedule)
    assert (summary.makespan, summary.weighted_completion) == (10, 19.0)


# ---------------------------------------------------------------------------
# files


def test_json_and_csv_carry_pieces(tmp_path: Path) -> None:
    schedule = pieced(
        [Piece(0, 2, P0123), Piece(5, 10, P0123, switch=1)],
        [Piece(2, 5, P01), Piece(10, 12, P01, switch=1)],
    )
    for name, fmt in (("s.json", "json"), ("s.csv", "csv")):
        write_schedule(schedule, tmp_path / name, fmt)
        assert read_schedule(tmp_path / name) == schedule
    item = json.loads((tmp_path / "s.json").read_text())["placements"][0]
    assert item["pieces"] == [
        {"start": 0, "end": 2, "processors": "0-3"},
        {"start": 5, "end": 10, "processors": "0-3", "switch": 1},
    ]
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines == [
        "job_id,start,end,size,processors,piece,switch",
        "1,0,2,4,0-3,0,0",
        "2,2,5,2,0-1,0,0",
        "1,5,10,4,0-3,1,1",
        "2,10,12,2,0-1,1,1",
    ]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["1,0,2,4,,0,0", "1,3,5,4,,0,0"],
         ":3: job 1 piece 0 appears twice (first at line 2)"),
        (["1,0,2,4,,0,0", "1,3,5,4,,2,0"], ":2: job 1: piece 1 is missing"),
        (["1,0,2,4,,0,0", "1,3,5,4,,x,0"],
         ":3: piece: expected a non-negative integer"),
    ],
)  # fmt: skip
def test_csv_piece_errors(tmp_path: Path, rows: list[str], message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(["job_id,start,end,size,processors,piece,switch", *rows]))
    with pytest.raises(ValueError) as error:
        read_schedule(path)
    assert f"{path}{message}" in str(error.value)


def test_batsim_and_swf_refuse_pieces(tmp_path: Path) -> None:
    for name, fmt in (("out_jobs.csv", "batsim"), ("s.swf", "swf")):
        with pytest.raises(ValueError, match=f"the {fmt} format cannot record a "
                           "preempted job \\(job 1 runs in 2 pieces\\)"):  # fmt: skip
            write_schedule(golden(), tmp_path / name, fmt, instance=instance())
        assert not (tmp_path / name).exists()


@st.composite
def pieced_schedules(draw: st.DrawFn) -> Schedule:
    placements = {}
    for job_id in range(draw(st.integers(1, 4))):
        count = draw(st.integers(1, 3))
        times = sorted(draw(st.lists(st.integers(0, 50), min_size=2 * count,
                                     max_size=2 * count, unique=True)))  # fmt: skip
        pieces = []
        for k in range(count):
            first = draw(st.integers(0, 5))
            procs = tuple(range(first, first + draw(st.integers(1, 3))))
            switch = draw(st.integers(0, 1)) if k else 0
            start, end = times[2 * k], times[2 * k + 1]
            pieces.append(Piece(start, end, procs, min(switch, end - start)))
        placements[job_id] = Placement.of_pieces(pieces)
    return Schedule(placements, producer="random")


@settings(max_examples=40, deadline=None)
@given(schedule=pieced_schedules())
def test_pieced_schedules_round_trip(tmp_path_factory: pytest.TempPathFactory,
                                     schedule: Schedule) -> None:  # fmt: skip
    folder = tmp_path_factory.mktemp("round")
    for name, fmt in (("s.json", "json"), ("s.csv", "csv")):
        write_schedule(schedule, folder / name, fmt)
        assert read_schedule(folder / name) == schedule


# ---------------------------------------------------------------------------
# charts


def test_gantt_draws_pieces_and_hatches_switches() -> None:
    schedule = pieced(
        [Piece(0, 2, P0123), Piece(5, 10, P0123, switch=1)],
        [Piece(2, 5, P01), Piece(10, 12, P01, switch=1)],
    )
    ax = Figure().subplots()
    gantt(instance(switch_cost=1), schedule, ax=ax)
    boxes = [(p.get_gid(), p.get_x(), p.get_width()) for p in ax.patches]
    assert [b for b in boxes if b[0] == "job 1"] == [("job 1", 0, 2), ("job 1", 5, 5)]
    assert [b for b in boxes if b[0] == "switch 1"] == [("switch 1", 5, 1)]
    assert [b for b in boxes if b[0] == "switch 2"] == [("switch 2", 10, 1)]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "context switch" in legend
    assert "preempted jobs: one box per piece" in legend
    # pieces without processors are laid out piece by piece
    counted = Schedule(
        {j: Placement.of_pieces([Piece(p.start, p.end, None, p.switch)
                                  for p in schedule[j].pieces])
         for j in (1, 2)}
    )  # fmt: skip
    ax = Figure().subplots()
    gantt(instance(switch_cost=1), counted, ax=ax)
    assert len([p for p in ax.patches if p.get_gid() == "job 2"]) == 2


def test_check_cli_asks_promises_on_request(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from optsched.cli import main
    from optsched.io.native import write_native

    write_native(instance(), tmp_path / "i.json")
    moved = pieced(
        [Piece(0, 2, P0123), Piece(5, 9, P0123)],
        [Piece(2, 5, P01), Piece(9, 10, (2, 3))],
    )
    write_schedule(moved, tmp_path / "s.json", "json")
    args = ["check", str(tmp_path / "i.json"), str(tmp_path / "s.json")]
    assert CliRunner().invoke(main, args).exit_code == 0  # valid as a schedule
    result = CliRunner().invoke(main, [*args, "--max-per-processor", "2"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, [*args, "--max-per-processor", "1",
                                       "--no-migration"])  # fmt: skip
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "promise: 2 jobs in progress share a processor, promised at most 1",
        "promise: job 2 changes processors (promised: no migration)",
        "INVALID: 2 violations (2 jobs)",
    ]
    counted = Schedule({1: Placement(0, 6), 2: Placement(6, 10)})
    write_schedule(counted, tmp_path / "c.json", "json")
    result = CliRunner().invoke(
        main, [*args[:2], str(tmp_path / "c.json"), "--max-per-processor", "2"]
    )
    assert result.exit_code == 2
    assert result.stderr.endswith("--max-per-processor: job 1 has no processor set\n")
