"""The strip-packing decision by bottom-left branching (models/rigid/tiling.py)."""

from __future__ import annotations

import dataclasses
import itertools
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from optsched import models
from optsched.check import check_schedule
from optsched.generate.perfect import perfect_packing, reduced_packing
from optsched.instance import Instance, Job, Machine
from optsched.models.common.solution import upper_bound_candidates
from optsched.models.rigid import tiling
from optsched.objective import Objective
from optsched.result import Bound, SolveStatus


def _brute(items: list[tuple[int, int]], width: int, height: int) -> bool:
    """Every integer position of every rectangle, in turn (tiny cases only)."""
    grid = [[False] * width for _ in range(height)]

    def place(k: int) -> bool:
        if k == len(items):
            return True
        w, h = items[k]
        for x, y in itertools.product(range(width - w + 1), range(height - h + 1)):
            cells = [(r, c) for r in range(y, y + h) for c in range(x, x + w)]
            if any(grid[r][c] for r, c in cells):
                continue
            for r, c in cells:
                grid[r][c] = True
            if place(k + 1):
                return True
            for r, c in cells:
                grid[r][c] = False
        return False

    return place(0)


def _valid(
    items: list[tuple[int, int]],
    width: int,
    height: int,
    positions: tuple[tuple[int, int], ...],
) -> bool:
    seen: set[tuple[int, int]] = set()
    for (w, h), (x, y) in zip(items, positions, strict=True):
        if x < 0 or y < 0 or x + w > width or y + h > height:
            return False
        cells = {(r, c) for r in range(y, y + h) for c in range(x, x + w)}
        if cells & seen:
            return False
        seen |= cells
    return True


@settings(max_examples=150, deadline=None)
@given(
    width=st.integers(1, 4),
    height=st.integers(1, 4),
    items=st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)), max_size=5),
    restarts=st.booleans(),
)
def test_decision_matches_brute_force(
    width: int, height: int, items: list[tuple[int, int]], restarts: bool
) -> None:
    fitting = [(w, h) for w, h in items if w <= width]
    decision = tiling.decide(
        [w for w, _ in fitting], [h for _, h in fitting], width, height,
        restarts=restarts,
    )  # fmt: skip
    expected = _brute(fitting, width, height)
    assert decision.status == ("feasible" if expected else "infeasible")
    if expected:
        assert _valid(fitting, width, height, decision.positions)


def test_golden_cases() -> None:
    # Two 2 x 2 squares on a strip of width 3: area bound 3, optimum 4.
    assert tiling.decide([2, 2], [2, 2], 3, 3).status == "infeasible"
    found = tiling.decide([2, 2], [2, 2], 3, 4)
    assert found.status == "feasible"
    assert sorted(found.positions) == [(0, 0), (0, 2)]
    # A perfect 3 x 2 tiling by an L-free cut: 2x1, 1x1, 3x1.
    tiled = tiling.decide([2, 1, 3], [1, 1, 1], 3, 2)
    assert tiled.status == "feasible"
    assert _valid([(2, 1), (1, 1), (3, 1)], 3, 2, tiled.positions)
    # Zero-height rectangles occupy nothing.
    assert tiling.decide([3, 2], [0, 1], 3, 1).status == "feasible"
    assert tiling.decide([4], [1], 3, 5).status == "infeasible"


def test_perfect_packings_are_found() -> None:
    for width, items, seed in ((30, 20, 2), (12, 16, 1), (20, 15, 1)):
        inst = perfect_packing(width, width, items, seed=seed, mixed=True)
        widths = [j.size for j in inst.jobs]
        heights = [j.runtime for j in inst.jobs]
        decision = tiling.decide(widths, heights, width, width)
        assert decision.status == "feasible"
        assert _valid(
            list(zip(widths, heights, strict=True)), width, width, decision.positions
        )


def _strip(shapes: list[tuple[int, int]], width: int, release: int = 0) -> Instance:
    return Instance(
        machine=Machine(processors=width, allocation="contiguous"),
        jobs=tuple(
            Job(id=k, release=release, size=w, runtime=h)
            for k, (w, h) in enumerate(shapes, start=1)
        ),
    )


def test_strengthen_raises_the_bound_to_the_optimum_exactly() -> None:
    # Three 2 x 2 squares on width 3 must stack: optimum 5 + 6, area bound 5 + 4.
    inst = _strip([(2, 2)] * 3, 3, release=5)
    objective = Objective.parse("cmax")
    bounds = [Bound(9, "area")]
    candidates, _ = upper_bound_candidates(inst, objective)
    done = tiling.strengthen(
        inst, objective, bounds, candidates, time.monotonic() + 30, share=1.0
    )
    tiled = [b.value for b in bounds if b.method == "tiling"]
    assert tiled == [10, 11]  # heights 4 and 5 refuted; never above the optimum
    assert min(c.value for c in candidates) == 11
    assert done.notes["proved"] is True
    best = min(candidates, key=lambda c: c.value)
    assert not check_schedule(inst, best.schedule)


def test_cpsat_uses_a_tiling_found_quickly() -> None:
    inst = perfect_packing(30, 30, 20, seed=2, mixed=True)
    result = models.solve(inst, "cmax", time_limit=10, workers=1)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == 30
    assert result.upper_bound_source == "tiling"
    assert not check_schedule(inst, result.schedule)
    assert result.params["tiling"]["proved"] is True


def test_strengthen_leaves_other_instances_alone() -> None:
    inst = _strip([(2, 2)] * 3, 3)
    varied = dataclasses.replace(
        inst, jobs=(*inst.jobs[:2], dataclasses.replace(inst.jobs[2], release=1))
    )
    assert not tiling.applies(varied, Objective.parse("cmax"))
    assert not tiling.applies(inst, Objective.parse("wct"))
    anywhere = dataclasses.replace(inst, machine=Machine(processors=3))
    assert not tiling.applies(anywhere, Objective.parse("cmax"))
    assert tiling.applies(inst, Objective.parse("cmax"))


def test_reduced_packing_is_seeded_and_fits_its_layout() -> None:
    first, layout = reduced_packing(20, 20, 20, share=0.2, seed=3)
    again, _ = reduced_packing(20, 20, 20, share=0.2, seed=3)
    assert first == again
    assert len(first.jobs) == 20
    assert not check_schedule(first, layout)
    removed = 400 - sum(j.size * j.runtime for j in first.jobs)
    assert abs(removed - 80) <= 16
    assert max(p.end for p in layout.placements.values()) <= 20


def test_mixed_perfect_packing_keeps_the_area() -> None:
    inst = perfect_packing(50, 40, 60, seed=1, mixed=True)
    assert sum(j.size * j.runtime for j in inst.jobs) == 2000
    assert "mixed" in (inst.name or "")
    assert perfect_packing(20, 20, 10, seed=1) == perfect_packing(
        20, 20, 10, seed=1, mixed=False
    )


def test_restarts_in_both_orientations_stay_exact() -> None:
    # A cutoff of one node forces many restarts, alternating between the
    # strip as given and transposed; every answer must still be exact.
    cases = [
        ([(2, 2), (2, 2)], 3, 3),
        ([(2, 2), (2, 2)], 3, 4),
        ([(1, 3), (2, 1), (2, 2)], 3, 3),
        ([(3, 1), (1, 2), (2, 2), (1, 1)], 3, 3),
        ([(2, 3), (2, 3)], 3, 4),
        ([(1, 2), (1, 2), (3, 1), (2, 1)], 3, 3),
    ]
    saved = tiling._FIRST_CUTOFF
    tiling._FIRST_CUTOFF = 1
    try:
        for items, width, height in cases:
            decision = tiling.decide(
                [w for w, _ in items], [h for _, h in items], width, height
            )
            expected = _brute(items, width, height)
            assert decision.status == ("feasible" if expected else "infeasible")
            if expected:
                assert _valid(items, width, height, decision.positions)
    finally:
        tiling._FIRST_CUTOFF = saved


def test_a_packing_found_transposed_is_mirrored_back(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Only the transposed runs (strip 5 wide) may answer.
    run = tiling._Search.run

    def transposed_only(self, deadline, limit):  # type: ignore[no-untyped-def]
        if self.width == 4:
            self.nodes = 1
            return "unknown", []
        return run(self, deadline, limit)

    monkeypatch.setattr(tiling._Search, "run", transposed_only)
    items = [(3, 2), (1, 5), (3, 3), (2, 1), (1, 1)]  # 4 x 5, perfect
    decision = tiling.decide([w for w, _ in items], [h for _, h in items], 4, 6)
    assert decision.status == "feasible"
    assert _valid(items, 4, 6, decision.positions)
