"""Perfect guillotine packings by bottom-up merging (models/rigid/guillotine.py)."""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tiling import _valid

from optsched import models
from optsched.check import check_schedule
from optsched.generate.perfect import perfect_packing
from optsched.models.rigid import guillotine
from optsched.result import SolveStatus


def _covers_exactly(
    items: list[tuple[int, int]],
    width: int,
    height: int,
    positions: tuple[tuple[int, int], ...],
) -> bool:
    """A packing (the skyline tests' plain cell check) with no cell left empty."""
    area = sum(w * h for w, h in items)
    return area == width * height and _valid(items, width, height, positions)


@functools.cache
def _guillotine_reference(
    items: tuple[tuple[int, int], ...], width: int, height: int
) -> bool:
    """Top-down: one rectangle, or a straight cut and a split of the items
    into two guillotine tilings (every sub-multiset tried; tiny cases)."""
    if sum(w * h for w, h in items) != width * height:
        return False
    if len(items) == 1:
        return items[0] == (width, height)
    for mask in range(1, 2 ** len(items) - 1):
        part = tuple(sorted(it for k, it in enumerate(items) if mask >> k & 1))
        rest = tuple(sorted(it for k, it in enumerate(items) if not mask >> k & 1))
        area = sum(w * h for w, h in part)
        if area % width == 0 and 0 < area // width < height:
            cut = area // width
            if _guillotine_reference(part, width, cut) and _guillotine_reference(
                rest, width, height - cut
            ):
                return True
        if area % height == 0 and 0 < area // height < width:
            cut = area // height
            if _guillotine_reference(part, cut, height) and _guillotine_reference(
                rest, width - cut, height
            ):
                return True
    return False


@settings(max_examples=120, deadline=None)
@given(
    width=st.integers(1, 4),
    height=st.integers(1, 4),
    items=st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=6
    ),
)
def test_tile_matches_the_top_down_reference(
    width: int, height: int, items: list[tuple[int, int]]
) -> None:
    found = guillotine.tile([w for w, _ in items], [h for _, h in items], width, height)
    expected = _guillotine_reference(tuple(sorted(items)), width, height)
    assert found.status == ("feasible" if expected else "no-guillotine")
    if expected:
        assert _covers_exactly(items, width, height, found.positions)


@settings(max_examples=40, deadline=None)
@given(
    width=st.integers(2, 30),
    height=st.integers(2, 30),
    items=st.integers(2, 14),
    seed=st.integers(0, 10**6),
    mixed=st.booleans(),
)
def test_tile_finds_every_generated_guillotine_cut(
    width: int, height: int, items: int, seed: int, mixed: bool
) -> None:
    inst = perfect_packing(
        width, height, min(items, width * height), seed=seed, mixed=mixed
    )
    sizes = [(j.size, j.runtime) for j in inst.jobs]
    found = guillotine.tile(
        [w for w, _ in sizes], [h for _, h in sizes], width, height, seed=seed
    )
    assert found.status == "feasible"
    assert _covers_exactly(sizes, width, height, found.positions)


def test_pinwheel_has_no_guillotine_tiling() -> None:
    # The 3 x 3 pinwheel: four 2 x 1 / 1 x 2 arms around a 1 x 1 centre
    # tile the square, but no straight cut crosses it.
    items = [(2, 1), (1, 2), (2, 1), (1, 2), (1, 1)]
    found = guillotine.tile([w for w, _ in items], [h for _, h in items], 3, 3)
    assert found.status == "no-guillotine"
    assert not _guillotine_reference(tuple(sorted(items)), 3, 3)


def test_hand_checked_cases() -> None:
    # Area differs from the strip: no tiling at all.
    assert guillotine.tile([2], [2], 3, 1).status == "no-guillotine"
    # Two 1 x 2 side by side, then a 2 x 1 band on top: 2 x 3.
    found = guillotine.tile([1, 1, 2], [2, 2, 1], 2, 3)
    assert found.status == "feasible"
    assert _covers_exactly([(1, 2), (1, 2), (2, 1)], 2, 3, found.positions)
    # Equal areas (6) but the 1 x 3 is taller than the 3 x 2 strip.
    assert guillotine.tile([3, 1], [1, 3], 3, 2).status == "no-guillotine"
    with pytest.raises(ValueError):
        guillotine.tile([0], [1], 1, 1)


def test_node_limit_gives_unknown() -> None:
    inst = perfect_packing(60, 60, 40, seed=3, mixed=True)
    ws = [j.size for j in inst.jobs]
    hs = [j.runtime for j in inst.jobs]
    found = guillotine.tile(ws, hs, 60, 60, node_limit=1)
    assert found.status in {"unknown", "feasible"}
    assert found.nodes <= 1


def test_solve_proves_a_bkw_like_perfect_packing() -> None:
    # 50 items in 100 x 100 (mixed cuts): the skyline search alone did not
    # find this one in 60 s (benchmarks/README.md, issue 16); the merge
    # search does in well under a second.
    inst = perfect_packing(100, 100, 50, seed=0, mixed=True)
    result = models.solve(inst, "cmax", time_limit=30, workers=1)
    assert result.schedule is not None
    assert check_schedule(inst, result.schedule) == []
    assert result.objective == 100
    assert result.status is SolveStatus.OPTIMAL
    assert result.lower_bound == 100
    decisions = dict(result.params)["tiling"]["decisions"]
    assert [d["method"] for d in decisions] == ["guillotine"]


def test_reference_agrees_on_all_tiny_multisets() -> None:
    # The reference itself, against a plain enumeration of the 2 x 2 square.
    shapes = [(1, 1), (1, 2), (2, 1), (2, 2)]
    for k in range(1, 5):
        for items in itertools.combinations_with_replacement(shapes, k):
            area = sum(w * h for w, h in items)
            expected = area == 4 and (
                items == ((2, 2),)
                or sorted(items) in ([(1, 2), (1, 2)], [(2, 1), (2, 1)])
                or sorted(items) in ([(1, 1), (1, 1), (1, 2)], [(1, 1), (1, 1), (2, 1)])
                or sorted(items) == [(1, 1)] * 4
            )
            assert _guillotine_reference(tuple(sorted(items)), 2, 2) == expected
