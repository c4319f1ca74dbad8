"""Perfect-packing generator and the ``generate`` command."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import REPO

from optsched.check import check_schedule
from optsched.cli import main
from optsched.generate.perfect import (
    Piece,
    cut_rectangle,
    is_guillotine,
    perfect_packing,
    perfect_packing_layout,
)
from optsched.io import read
from optsched.io.schedules import read_schedule
from optsched.metrics import makespan
from optsched.models.rigid.bounds import area_bound
from optsched.models.rigid.enumerate import solve_exact

INSTANCES = REPO / "instances" / "perfect"


class Cut(NamedTuple):
    """The arguments of a cut of a ``width`` x ``height`` rectangle into
    ``items`` pieces (:func:`cut_rectangle`, :func:`perfect_packing_layout`)."""

    width: int
    height: int
    items: int
    seed: int
    guillotine: bool


@st.composite
def cuts(draw: st.DrawFn) -> Cut:
    guillotine = draw(st.booleans())
    # Tiny non-guillotine cases can be impossible (a 3 x 3 square has exactly
    # one non-guillotine tiling, the 5-piece pinwheel): keep room for them.
    low = 1 if guillotine else 6
    width, height = draw(st.integers(low, 40)), draw(st.integers(low, 40))
    most = width * height if guillotine else width * height // 4
    items = draw(st.integers(1 if guillotine else 5, min(most, 40)))
    return Cut(width, height, items, draw(st.integers(0, 10**6)), guillotine)


@settings(max_examples=150, deadline=None)
@given(cut=cuts())
def test_the_cut_is_a_schedule_of_makespan_h(cut: Cut) -> None:
    instance, schedule = perfect_packing_layout(**cut._asdict())
    assert len(instance.jobs) == cut.items
    assert [j.id for j in instance.jobs] == list(range(1, cut.items + 1))
    assert all(j.size >= 1 and j.runtime >= 1 and j.release == 0 for j in instance.jobs)
    assert sum(j.size * j.runtime for j in instance.jobs) == cut.width * cut.height
    assert instance.processors == cut.width
    assert instance.machine.allocation == "contiguous"
    assert check_schedule(instance, schedule) == []
    assert makespan(instance, schedule) == cut.height
    assert area_bound(instance).value == cut.height


@settings(max_examples=60, deadline=None)
@given(cut=cuts())
def test_non_guillotine_cuts_are_non_guillotine(cut: Cut) -> None:
    assert is_guillotine(cut_rectangle(**cut._asdict())) == cut.guillotine


def test_deterministic_per_seed() -> None:
    a = perfect_packing(20, 20, 12, seed=7, guillotine=False)
    b = perfect_packing(20, 20, 12, seed=7, guillotine=False)
    c = perfect_packing(20, 20, 12, seed=8, guillotine=False)
    assert a == b
    assert a.jobs != c.jobs
    assert a.name == "perfect-packing W=20 H=20 n=12 seed=7 non-guillotine"
    assert a.source.format == "perfect-packing"


def test_is_guillotine_by_hand() -> None:
    # Two halves of a 4 x 2 rectangle: guillotine.
    assert is_guillotine([Piece(0, 0, 2, 2), Piece(2, 0, 2, 2)])
    # The pinwheel of a 3 x 3 square: four 2 x 1 / 1 x 2 arms around a unit
    # centre; every straight line across cuts an arm.
    pinwheel = [
        Piece(0, 0, 2, 1),
        Piece(2, 0, 1, 2),
        Piece(1, 2, 2, 1),
        Piece(0, 1, 1, 2),
        Piece(1, 1, 1, 1),
    ]
    assert not is_guillotine(pinwheel)
    # A pinwheel beside a rectangle: the first cut is free, the left part is not.
    shifted = [*pinwheel, Piece(3, 0, 2, 3)]
    assert not is_guillotine(shifted)


def test_tiny_perfect_packings_are_optimal_at_h() -> None:
    for seed in range(3):
        for guillotine, items in ((True, 4), (False, 5), (False, 6)):
            instance = perfect_packing(4, 5, items, seed=seed, guillotine=guillotine)
            assert solve_exact(instance, "cmax").objective == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2, 2, 5, True), "5 items cannot tile a 2 x 2 rectangle"),
        ((10, 10, 4, False), "non-guillotine packing needs at least 5 items"),
        ((2, 10, 6, False), "at least 3 x 3"),
        ((0, 10, 6, True), "width must be a positive integer"),
        ((10, 10, 0, True), "items must be a positive integer"),
    ],
)
def test_bad_parameters(args: tuple[int, int, int, bool], message: str) -> None:
    width, height, items, guillotine = args
    with pytest.raises(ValueError, match=message):
        perfect_packing(width, height, items, seed=1, guillotine=guillotine)


def test_cli_writes_the_instance_and_its_layout(tmp_path: Path) -> None:
    out, layout = tmp_path / "pp.json", tmp_path / "pp.csv"
    result = CliRunner().invoke(
        main,
        [
            "generate", "perfect-packing", "--width", "12", "--height", "9",
            "--items", "15", "--seed", "3", "--non-guillotine",
            "-o", str(out), "--layout", str(layout),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "optimal makespan 9" in result.output
    instance = read(out)
    expected = perfect_packing(12, 9, 15, seed=3, guillotine=False)
    assert instance.jobs == expected.jobs
    assert instance.machine == expected.machine
    assert instance.name == expected.name
    schedule = read_schedule(layout)
    assert check_schedule(instance, schedule) == []
    assert makespan(instance, schedule) == 9


def test_cli_bad_parameters_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "pp.json"
    result = CliRunner().invoke(
        main,
        ["generate", "perfect-packing", "--width", "2", "--height", "2",
         "--items", "9", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "9 items cannot tile a 2 x 2 rectangle" in result.output
    assert not out.exists()


BUNDLED = [
    ("pp_g_10.json", 20, 20, 10, 1, True),
    ("pp_ng_10.json", 20, 20, 10, 2, False),
    ("pp_g_20.json", 32, 40, 20, 3, True),
    ("pp_ng_20.json", 32, 40, 20, 4, False),
    ("pp_g_30.json", 40, 50, 30, 5, True),
    ("pp_ng_30.json", 40, 50, 30, 6, False),
]


@pytest.mark.parametrize(
    ("name", "width", "height", "items", "seed", "guillotine"), BUNDLED
)
def test_bundled_instances_are_what_the_generator_makes(
    name: str, width: int, height: int, items: int, seed: int, guillotine: bool
) -> None:
    bundled = read(INSTANCES / name)
    fresh = perfect_packing(width, height, items, seed=seed, guillotine=guillotine)
    assert bundled.jobs == fresh.jobs
    assert bundled.machine == fresh.machine
    assert bundled.name == fresh.name
    assert area_bound(bundled).value == height
