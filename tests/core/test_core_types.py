"""Core types: validation messages name the job (or block), and the solver
stack (OR-Tools, PuLP, highspy) loads into one process."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.schedule import Placement, Schedule, format_processors, parse_processors

# --------------------------------------------------------------------------
# Job
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"release": -1}, "job 17: release -1 is negative"),
        ({"size": 0}, "job 17: size 0 must be at least 1"),
        ({"size": -3}, "job 17: size -3 must be at least 1"),
        ({"runtime": -1}, "job 17: runtime -1 is negative"),
        ({"estimate": -5}, "job 17: estimate -5 is negative"),
        ({"weight": 0}, "job 17: weight 0 must be positive and finite"),
        ({"weight": -2.0}, "job 17: weight -2.0 must be positive and finite"),
        ({"weight": math.inf}, "job 17: weight inf must be positive and finite"),
        ({"weight": math.nan}, "job 17: weight nan must be positive and finite"),
        ({"weight": "1"}, "job 17: weight must be a number, got '1'"),
        ({"weight": True}, "job 17: weight must be a number, got True"),
        ({"size": 2.5}, "job 17: size must be an integer, got 2.5"),
        ({"size": True}, "job 17: size must be an integer, got True"),
        ({"release": "0"}, "job 17: release must be an integer, got '0'"),
        ({"runtime": None}, "job 17: runtime must be an integer, got None"),
        ({"estimate": 3.0}, "job 17: estimate must be an integer, got 3.0"),
    ],
)
def test_job_errors_name_the_job(fields: dict[str, object], message: str) -> None:
    values: dict[str, object] = {"id": 17, "release": 0, "size": 2, "runtime": 10}
    values.update(fields)
    with pytest.raises(ValueError) as info:
        Job(**values)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_job_id_must_be_an_integer() -> None:
    with pytest.raises(ValueError, match=r"^job x: id must be an integer, got 'x'$"):
        Job("x", 0, 1, 1)  # type: ignore[arg-type]


def test_job_defaults_and_derived_values() -> None:
    job = Job(3, 10, 4, 25)
    assert job.estimate == 25 and job.requested == 25
    assert job.weight == 1.0
    assert job.area == 100
    assert job.wait is None and job.user is None
    assert Job(3, 10, 4, 25, 40).requested == 40


def test_job_replace_validates() -> None:
    job = Job(5, 0, 2, 10)
    assert job.replace(size=3) == Job(5, 0, 3, 10)
    with pytest.raises(ValueError, match=r"^job 5: size 0 must be at least 1$"):
        job.replace(size=0)


def test_job_is_frozen() -> None:
    job = Job(5, 0, 2, 10)
    with pytest.raises(AttributeError):
        job.size = 3  # type: ignore[misc]


# --------------------------------------------------------------------------
# BusyBlock and Machine
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((5, 3, 1, None, "job 9"), "busy block job 9: interval [5, 3) is invalid"),
        ((-1, 3, 1, None, ""), "busy block (-1, 3): interval [-1, 3) is invalid"),
        ((0, 3, 0, None, "down"), "busy block down: size 0 must be at least 1"),
        ((0, 3, 1, -1, "down"), "busy block down: offset -1 is negative"),
        ((0, 3.5, 1, None, "down"), "busy block down: end must be an integer, got 3.5"),
        ((0, 3, 1, 0.0, "down"), "busy block down: offset must be an integer, got 0.0"),
    ],
)
def test_busy_block_errors_name_the_block(
    args: tuple[object, ...], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        BusyBlock(*args)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_busy_block_processors() -> None:
    assert BusyBlock(0, 5, 3, 2).processors == range(2, 5)
    assert BusyBlock(0, 5, 3).processors is None


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Machine(0), "machine: processors 0 must be >= 1"),
        (lambda: Machine(4.0), "machine: processors must be an integer, got 4.0"),  # type: ignore[arg-type]
        (
            lambda: Machine(4, "packed"),
            "machine: allocation 'packed' is not one of any, contiguous",
        ),
        (
            lambda: Machine(4, "any", (BusyBlock(0, 5, 5, label="job 9"),)),
            "busy block job 9: size 5 exceeds machine processors 4",
        ),
        (
            lambda: Machine(4, "contiguous", (BusyBlock(0, 5, 2, 3, "job 9"),)),
            "busy block job 9: processors [3, 5) exceed machine processors 4",
        ),
        (
            lambda: Machine(4, "contiguous", (BusyBlock(0, 5, 2, label="down"),)),
            "busy block down: a contiguous machine needs block offsets",
        ),
        (
            lambda: Machine(4, "any", (BusyBlock(0, 5, 3), BusyBlock(4, 9, 2))),
            "machine: busy blocks use 5 processors at time 4, more than 4",
        ),
        (
            lambda: Machine(4, "any", (BusyBlock(0, 5, 2, 2, "job 7"),)),
            "busy block job 7: offset 2 on an 'any' machine: blocks on 'any' "
            "machines are processor counts; drop the offset or use allocation "
            "'contiguous'",
        ),
        (
            lambda: Machine(
                4,
                "contiguous",
                (BusyBlock(0, 5, 2, 0, "job 1"), BusyBlock(3, 9, 2, 1, "job 2")),
            ),
            "busy block job 2: shares processors with busy block job 1 at time 3",
        ),
    ],
)
def test_machine_errors(build: Callable[[], Machine], message: str) -> None:
    with pytest.raises(ValueError) as info:
        build()
    assert str(info.value) == message


def test_machine_accepts_touching_and_disjoint_blocks() -> None:
    blocks = (
        BusyBlock(0, 5, 4, 0, "a"),
        BusyBlock(5, 9, 4, 0, "b"),  # half-open: starts when a ends
        BusyBlock(0, 0, 4, 0, "empty"),  # zero length never conflicts
    )
    assert Machine(4, "contiguous", blocks).unavailable == blocks
    side_by_side = (BusyBlock(0, 9, 2, 0), BusyBlock(3, 5, 2, 2))
    assert len(Machine(4, "contiguous", side_by_side).unavailable) == 2
    counts = (BusyBlock(0, 9, 2), BusyBlock(3, 5, 2))
    assert len(Machine(4, "any", counts).unavailable) == 2


def test_with_allocation_drops_or_requires_block_offsets() -> None:
    blocks = (BusyBlock(0, 9, 2, 0, "job 1"), BusyBlock(3, 5, 2, 2, "down"))
    contiguous = Machine(4, "contiguous", blocks)
    counted = contiguous.with_allocation("any")
    assert counted == Machine(
        4, "any", (BusyBlock(0, 9, 2, label="job 1"), BusyBlock(3, 5, 2, label="down"))
    )
    assert contiguous.with_allocation("contiguous") is contiguous
    assert Machine(4).with_allocation("contiguous") == Machine(4, "contiguous")
    # Counts have no place on the strip: the offsets must be chosen first.
    with pytest.raises(ValueError, match="job 1: a contiguous machine needs block"):
        counted.with_allocation("contiguous")
    with pytest.raises(ValueError, match="allocation 'packed' is not one of"):
        counted.with_allocation("packed")


# --------------------------------------------------------------------------
# Instance
# --------------------------------------------------------------------------


def test_instance_job_larger_than_machine() -> None:
    with pytest.raises(ValueError) as info:
        Instance(Machine(128), (Job(1, 0, 1, 1), Job(17, 0, 130, 5)))
    assert str(info.value) == "job 17: size 130 exceeds machine processors 128"


def test_instance_duplicate_ids() -> None:
    with pytest.raises(ValueError) as info:
        Instance(Machine(4), (Job(3, 0, 1, 1), Job(4, 0, 1, 1), Job(3, 5, 1, 1)))
    assert str(info.value) == "job 3: duplicate job id"


def test_instance_replace_and_lookups_validate() -> None:
    jobs = [Job(1, 0, 4, 1), Job(2, 3, 2, 1)]
    instance = Instance(Machine(4), jobs)  # type: ignore[arg-type]
    assert isinstance(instance.jobs, tuple)
    assert instance.processors == 4
    assert instance.job(2) == Job(2, 3, 2, 1)
    with pytest.raises(KeyError):
        instance.job(9)
    with pytest.raises(
        ValueError, match=r"^job 1: size 4 exceeds machine processors 2$"
    ):
        instance.replace(machine=Machine(2))
    with pytest.raises(ValueError, match=r"^job 2: duplicate job id$"):
        instance.with_jobs([Job(2, 0, 1, 1), Job(2, 0, 1, 1)])


# --------------------------------------------------------------------------
# Placement and Schedule
# --------------------------------------------------------------------------


def test_placement_errors() -> None:
    with pytest.raises(
        ValueError, match=r"^placement: start must be an integer, got 1\.5$"
    ):
        Placement(1.5, 3)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"^placement: end must be an integer, got None$"
    ):
        Placement(1, None)  # type: ignore[arg-type]


def test_placement_values() -> None:
    placement = Placement(2, 9, (5, 3, 4))
    assert placement.processors == (3, 4, 5)
    assert placement.offset == 3
    assert placement.duration == 7
    assert Placement.contiguous(0, 4, 2, 3) == Placement(0, 4, (2, 3, 4))
    assert Placement(0, 1).offset is None


def test_schedule_equality_and_lookup() -> None:
    a = Schedule({1: Placement(0, 4, (0,))}, "easy", frozenset({1}))
    assert a == Schedule({1: Placement(0, 4, (0,))}, "easy", frozenset({1}))
    assert a != Schedule({1: Placement(0, 4, (0,))}, "fcfs", frozenset({1}))
    assert a != Schedule({1: Placement(0, 4, (0,))}, "easy")
    assert len(a) == 1 and a[1].end == 4
    assert hash(a) == hash(Schedule({1: Placement(0, 4, (0,))}, "easy", frozenset({1})))


def test_processor_intervals() -> None:
    assert format_processors((0, 1, 2, 5, 7, 8)) == "0-2 5 7-8"
    assert format_processors(None) == ""
    assert parse_processors("0-2 5 7-8") == (0, 1, 2, 5, 7, 8)
    assert parse_processors("  ") is None
    for bad in ("3-1", "-1", "a", "1-", "0-3-5"):
        with pytest.raises(ValueError):
            parse_processors(bad)


# --------------------------------------------------------------------------
# The solver stack in one process
# --------------------------------------------------------------------------


def test_ortools_pulp_and_highspy_share_a_process() -> None:
    """highspy 1.15 and ortools 9.15 cannot be imported together (undefined
    HiGHS symbols); pyproject pins highspy < 1.15. Import all three and solve
    a trivial model with each."""
    import highspy
    import pulp
    from ortools.sat.python import cp_model

    # CP-SAT: max x + y, x + y <= 3, x, y in [0, 2].
    model = cp_model.CpModel()
    x, y = model.new_int_var(0, 2, "x"), model.new_int_var(0, 2, "y")
    model.add(x + y <= 3)
    model.maximize(x + 2 * y)
    solver = cp_model.CpSolver()
    assert solver.solve(model) == cp_model.OPTIMAL
    assert (solver.value(x), solver.value(y)) == (1, 2)

    # PuLP through its HiGHS back-end (highspy): min a + b, a + 2b >= 4, a >= 1.
    problem = pulp.LpProblem("trivial", pulp.LpMinimize)
    # PuLP >= 3.3 attaches variables to the problem; older versions lack it.
    if hasattr(problem, "add_variable"):
        a, b = problem.add_variable("a", 1), problem.add_variable("b", 0)
    else:  # pragma: no cover
        a, b = pulp.LpVariable("a", lowBound=1), pulp.LpVariable("b", lowBound=0)
    problem += a + b
    problem += a + 2 * b >= 4
    assert problem.solve(pulp.HiGHS(msg=False)) == pulp.LpStatusOptimal
    assert a.value() == pytest.approx(1.0) and b.value() == pytest.approx(1.5)

    # highspy directly: min v, v >= 2.5.
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.addVar(2.5, highspy.kHighsInf)
    highs.changeColCost(0, 1.0)
    highs.run()
    assert highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert highs.getInfo().objective_function_value == pytest.approx(2.5)
