"""Issue 30: time limits hold, model building included; list schedules at scale.

No test here times anything: the deadline a back-end's model builder sees
is moved to the past (or a clock is faked), and the result must come back
with its checked schedule, its bounds and a note naming what stopped.
"""

from __future__ import annotations

import itertools
import random
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import rectangles

from optsched import models
from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.models.common import template
from optsched.models.common.template import OutOfTime, on_time
from optsched.objective import Objective
from optsched.packing import Strip, list_schedule
from optsched.result import Result, SolveStatus

CMAX = Objective("cmax")
PAST = 0.0  # a time.monotonic() deadline that has always passed


def _strip(n: int = 8, m: int = 6, seed: int = 3) -> Instance:
    rng = random.Random(seed)
    jobs = [
        Job(id=k + 1, release=0, runtime=rng.randint(1, 9), size=rng.randint(1, m))
        for k in range(n)
    ]
    return Instance(jobs=jobs, machine=Machine(m, allocation="contiguous"))


def _window(n: int = 8, m: int = 6, seed: int = 5) -> Instance:
    rng = random.Random(seed)
    jobs = [
        Job(
            id=k + 1,
            release=rng.randint(0, 20),
            runtime=rng.randint(1, 9),
            size=rng.randint(1, m),
        )
        for k in range(n)
    ]
    return Instance(jobs=jobs, machine=Machine(m))


def _checked(instance: Instance, result: Result) -> None:
    """A schedule that passes the checker, whose objective is recomputed."""
    assert result.schedule is not None
    assert check_schedule(instance, result.schedule) == []
    assert result.objective == CMAX.value(instance, result.schedule)
    assert result.lower_bound is not None
    assert result.lower_bound <= result.objective


# --------------------------------------------------------------------------
# The deadline reaches model building
# --------------------------------------------------------------------------


def test_on_time_raises_only_after_the_deadline() -> None:
    on_time(None)
    on_time(float("inf"))
    with pytest.raises(OutOfTime):
        on_time(PAST)


def _deadline_in_the_past(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model builders see a deadline already passed; the rest of the
    call (bounds, candidates) keeps the real one."""
    real = template.Solving.model_inputs

    def expired(self: template.Solving) -> template.ModelInputs:
        inputs = real(self)
        assert inputs.deadline == self.deadline is not None  # passed on
        return template.ModelInputs(
            inputs.instance, inputs.objective, inputs.incumbent, inputs.bounds,
            inputs.symmetry, PAST,
        )  # fmt: skip

    monkeypatch.setattr(template.Solving, "model_inputs", expired)


@pytest.mark.parametrize(
    ("backend", "instance"),
    [("cpsat", _window()), ("cpsat", _strip()), ("shelf", _strip())],
)
def test_cpsat_models_stop_building_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch, backend: str, instance: Instance
) -> None:
    _deadline_in_the_past(monkeypatch)
    result = models.solve(instance, CMAX, backend=backend, time_limit=60)
    assert f"{backend}: model building stopped (time limit)" in result.skipped
    assert "cpsat" not in (result.upper_bound_source or "")
    _checked(instance, result)
    assert result.status in (SolveStatus.FEASIBLE, SolveStatus.OPTIMAL)


@pytest.mark.parametrize("instance", [_window(), _strip(n=4, m=3)])
def test_milp_stops_building_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch, instance: Instance
) -> None:
    """The MILP builders get the call's deadline; once it has passed they
    stop and the call ends with the list schedule and the closed-form bounds."""
    from optsched.models.rigid import milp

    seen: list[float | None] = []

    def late(deadline: float | None) -> None:
        seen.append(deadline)
        on_time(PAST)

    monkeypatch.setattr(milp, "on_time", late)
    result = models.solve(instance, CMAX, backend="milp", time_limit=60)
    assert "milp: model building stopped (time limit)" in result.skipped
    assert seen and seen[0] is not None  # the call's deadline, not "no limit"
    _checked(instance, result)
    assert result.upper_bound_source == "list:submit"


@pytest.mark.parametrize("backend", ["cpsat", "shelf", "milp", "bounds-only"])
def test_a_spent_limit_builds_no_model(
    monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """``time_limit=0``: no model is built (the builders would fail), the
    list schedule and the first bound still give an honest result."""
    from optsched.models.rigid import cpsat, milp
    from optsched.models.shelf import model as shelf

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was built after the deadline")

    monkeypatch.setattr(cpsat, "_Model", never)
    monkeypatch.setattr(shelf, "_RepresentativeModel", never)
    monkeypatch.setattr(milp, "_solve_models", never)
    instance = _strip()
    result = models.solve(instance, CMAX, backend=backend, time_limit=0)
    _checked(instance, result)
    assert any("time limit" in note for note in result.skipped)
    assert result.bounds[0].method == "release"


def test_the_limit_counts_from_the_start_of_solve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What ``models.solve`` does before the back-end (importing it, the
    offline view) comes off the back-end's limit: a fake clock that moves 3 s
    between the start and the call leaves 7 s of 10."""
    clock = itertools.chain([100.0], itertools.repeat(103.0))
    seen: list[float] = []

    def backend(instance: Instance, objective: Objective, **kwargs: float) -> None:
        seen.append(kwargs["time_limit"])

    fake_time = types.SimpleNamespace(monotonic=lambda: next(clock))
    monkeypatch.setattr(models, "time", fake_time)
    monkeypatch.setitem(models.BACKENDS, "bounds-only", backend)
    models.solve(_window(), CMAX, backend="bounds-only", time_limit=10)
    assert seen == [7.0]


# --------------------------------------------------------------------------
# List schedules with a bounded lookback
# --------------------------------------------------------------------------


def _random_instance(data: st.DataObject, allocation: str) -> Instance:
    m = data.draw(st.integers(1, 6))
    shapes = data.draw(
        st.lists(
            st.tuples(st.integers(0, 30), st.integers(0, 8), st.integers(1, m)),
            min_size=1,
            max_size=25,
        )
    )
    jobs = [
        Job(id=k + 1, release=r, runtime=p, size=q)
        for k, (r, p, q) in enumerate(shapes)
    ]
    return Instance(jobs=jobs, machine=Machine(m, allocation=allocation))


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["any", "contiguous"]), st.integers(1, 4))
def test_a_bounded_lookback_gives_checked_schedules(
    data: st.DataObject, allocation: str, window: int
) -> None:
    """With a tiny window the profile forgets often: every schedule stays
    feasible (the checker), and a window larger than the whole profile gives
    the unbounded schedule."""
    instance = _random_instance(data, allocation)
    order = data.draw(st.permutations([j.id for j in instance.jobs]))
    short = list_schedule(instance, order, window=window)
    assert check_schedule(instance, short) == []
    whole = list_schedule(instance, order)
    assert list_schedule(instance, order, window=10**6).placements == whole.placements


@settings(max_examples=150, deadline=None)
@given(
    rectangles(20, 6, (0, 5), most=12),
    st.integers(0, 20),
    rectangles(30, 6, (1, 6), most=5, least=1),
)
def test_a_strip_that_forgets_the_past_answers_as_before_from_then_on(
    rectangles: list[tuple[int, int, int]],
    forget: int,
    queries: list[tuple[int, int, int]],
) -> None:
    """``Strip.forget_before(t)`` changes no earliest fit at or after ``t``
    (the rectangles it drops end by ``t``); compared with a strip that keeps
    everything, placing the same rectangles."""
    m = 6
    kept, forgetting = Strip(m, []), Strip(m, [])
    for start, length, offset in rectangles:
        width = min(2, m - offset)
        for strip in (kept, forgetting):
            strip.add(start, start + length, offset, width)
    for k in range(70):  # enough rows to compact (more than 64)
        for strip in (kept, forgetting):
            strip.add(k % 5, k % 5 + 1, 5, 1)
    forgetting.forget_before(forget)
    for release, duration, size in queries:
        release = max(release, forget)
        assert forgetting.earliest(release, duration, size) == kept.earliest(
            release, duration, size
        )
        assert forgetting.earliest_at(release, duration, 0, size) == kept.earliest_at(
            release, duration, 0, size
        )


def test_the_shelf_height_bound_keeps_the_cases_examined_by_the_deadline() -> None:
    """``t = 0`` is always examined: on the hand case of the shelf tests
    (sizes 1, 2, 2 on 3 processors, run times 1, 4, 3) it is 2 bins over
    [0, 1), 2 over [1, 3) and 1 over [3, 4): 7, against 12 with ``t = 5``."""
    from optsched.models.shelf.model import shelf_height_bound

    jobs = [
        Job(id=1, release=0, runtime=1, size=1),
        Job(id=2, release=5, runtime=4, size=2),
        Job(id=3, release=5, runtime=3, size=2),
    ]
    instance = Instance(jobs=jobs, machine=Machine(3))
    cut = shelf_height_bound(instance, deadline=PAST)
    assert (cut.value, cut.partial) == (7, True)
    whole = shelf_height_bound(instance, deadline=float("inf"))
    assert (whole.value, whole.partial) == (12, False)


def test_milp_leaves_out_a_solve_with_less_time_left_than_its_building() -> None:
    import time

    from optsched.models.rigid import milp

    run = milp._Run(_window(), CMAX, 0.0, 60.0, 1, "highs", False)
    run.deadline = time.monotonic() + 1000.0
    milp._enough_left(run, 0.5)  # plenty left
    with pytest.raises(OutOfTime, match="less time left than its building"):
        milp._enough_left(run, 10_000.0)
    run.deadline = None  # no limit: never left out
    milp._enough_left(run, 10_000.0)
