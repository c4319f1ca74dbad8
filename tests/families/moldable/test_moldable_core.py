"""Moldable and malleable jobs in the core: modes, speed-up models, checker
rules 8 and 9, native JSON, metrics."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.errors import InputError
from optsched.instance import Instance, Job, Machine, Mode
from optsched.io.native import read_native, write_native
from optsched.metrics import utilisation
from optsched.moldable.modes import chosen_modes, resolved
from optsched.moldable.speedup import parse_model
from optsched.schedule import Piece, Placement, Schedule

MODES = (Mode(1, 12), Mode(2, 6), Mode(4, 3))


# --------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------


def test_linear_modes_with_rounding_pass_the_work_rule() -> None:
    # Works 33, 34, 33: a fall of 1 that rounding 16.5 up to 17 explains.
    job = Job(1, 0, 3, 11, modes=(Mode(3, 11), Mode(1, 33), Mode(2, 17)))
    assert [m.processors for m in job.modes] == [1, 2, 3]  # sorted


@pytest.mark.parametrize(
    ("modes", "reason"),
    [
        ((Mode(1, 20), Mode(2, 9)), "work falls from 20"),  # 18 <= 1 * 19
        ((Mode(1, 20), Mode(2, 10), Mode(4, 4)), "work falls from 20"),
        ((Mode(2, 10), Mode(2, 12)), "two modes on 2 processors"),
    ],
)
def test_inconsistent_modes_are_refused(modes: tuple[Mode, ...], reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        Job(1, 0, modes[0].processors, modes[0].runtime, modes=modes)


def test_the_request_must_be_a_mode_and_malleable_needs_modes() -> None:
    with pytest.raises(ValueError, match="requested mode"):
        Job(1, 0, 2, 7, modes=MODES)
    with pytest.raises(ValueError, match="malleable job needs modes"):
        Job(1, 0, 2, 7, malleable=True)
    with pytest.raises(ValueError, match="mode on 4 processors exceeds"):
        Instance(Machine(2), (Job(1, 0, 2, 6, modes=MODES),))


def test_job_mode_helpers() -> None:
    job = Job(1, 0, 2, 6, modes=MODES)
    assert job.moldable and job.mode(4) == Mode(4, 3) and job.mode(3) is None
    wide = job.with_mode(Mode(4, 3))
    assert (wide.size, wide.runtime, wide.modes) == (4, 3, MODES)
    assert job.rigid(Mode(1, 12)) == Job(1, 0, 1, 12)
    assert Job(2, 0, 3, 5).mode(3) == Mode(3, 5)  # a rigid job's one mode


# --------------------------------------------------------------------------
# Speed-up models (values worked out by hand)
# --------------------------------------------------------------------------


def _modes(spec: str, job: Job, m: int = 64) -> list[tuple[int, int, int]]:
    return [
        (x.processors, x.runtime, x.requested) for x in parse_model(spec).modes(job, m)
    ]


def test_linear_and_conservative_stretch_the_request() -> None:
    job = Job(1, 0, 4, 100, estimate=120)
    expected = [(1, 400, 480), (2, 200, 240), (3, 134, 160), (4, 100, 120)]
    assert _modes("linear", job) == expected
    assert _modes("conservative", job) == expected
    # Up to a maximum parallelism of 6 (100 * 4 / 5 = 80, / 6 = 66.7 -> 67).
    assert _modes("linear:max=6", job)[4:] == [(5, 80, 96), (6, 67, 80)]
    assert _modes("linear:max=6", job, m=5)[-1] == (5, 80, 96)  # machine caps


def test_points_interpolate_the_speedup() -> None:
    # S(1)=1, S(4)=3, S(8)=4: S(2) = 1 + 2*(1/3) = 5/3 -> T = 100*3/(5/3) = 180;
    # S(6) = 3.5 -> 100*3/3.5 = 85.7 -> 86.
    modes = dict((p, t) for p, t, _ in _modes("points:1=1;4=3;8=4", Job(1, 0, 4, 100)))
    assert (modes[1], modes[2], modes[4], modes[6], modes[8]) == (300, 180, 100, 86, 75)


def test_amdahl_and_downey() -> None:
    job = Job(1, 0, 4, 100)
    # Amdahl f=0.1: S(1) = 1, S(4) = 1/(0.1 + 0.225) = 3.0769 -> T(1) = 307.7.
    assert _modes("amdahl:f=0.1,max=8", job)[0] == (1, 308, 308)
    # Downey A=6, sigma=0.5: S(3) = 18/6.5, S(4) = 24/6.75 -> 128.4 -> 129.
    assert (
        dict((p, t) for p, t, _ in _modes("downey:a=6,sigma=0.5,max=16", job))[3] == 129
    )
    # High variance sigma=2: S(p) = 18p/(2(p+5)+6): S(2) = 1.8, S(4) = 3 -> 167.
    assert _modes("downey:a=6,sigma=2,max=16", job)[1] == (2, 167, 167)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gustafson", "unknown speed-up model"),
        ("amdahl", "needs f="),
        ("amdahl:f=1.5", r"f must lie in \[0, 1\]"),
        ("linear:k=3", "bad parameter"),
        ("points:1=1;4=5", "faster than linearly"),
        ("downey:a=0.5,sigma=1", "A >= 1"),
    ],
)
def test_bad_model_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_model(spec)


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(1, 40),
    runtime=st.integers(0, 10**6),
    spec=st.sampled_from(
        ["linear", "linear:max=48", "conservative", "amdahl:f=0.03,max=48",
         "downey:a=12,sigma=0.7,max=48", "downey:a=5,sigma=3,max=48",
         "points:1=1;8=6;32=14"]
    ),
)  # fmt: skip
def test_every_model_gives_valid_modes_with_the_request(
    size: int, runtime: int, spec: str
) -> None:
    job = Job(1, 0, size, runtime)
    modes = parse_model(spec).modes(job, 48)
    made = job.replace(modes=modes)  # validates: monotone work up to rounding
    assert made.mode(size) == Mode(size, runtime)
    runtimes = [m.runtime for m in made.modes]
    below = [m.runtime for m in made.modes if m.processors < size]
    assert all(t >= runtime for t in below)  # fewer processors are never faster
    assert runtimes[: len(below)] == sorted(below, reverse=True)


# --------------------------------------------------------------------------
# Checker rules 8 and 9
# --------------------------------------------------------------------------

MOLDABLE = Instance(Machine(4), (Job(1, 0, 2, 6, modes=MODES), Job(2, 0, 1, 5)))
MALLEABLE = Instance(
    Machine(4), (Job(1, 0, 2, 6, modes=MODES, malleable=True), Job(2, 0, 1, 5))
)


def test_a_moldable_job_runs_in_any_of_its_modes() -> None:
    wide = Schedule({1: Placement(0, 3, (0, 1, 2, 3)), 2: Placement(3, 8, (0,))})
    asked = Schedule({1: Placement(0, 6, (0, 1)), 2: Placement(0, 5, (2,))})
    assert check_schedule(MOLDABLE, wide) == []
    assert check_schedule(MOLDABLE, asked) == []
    assert chosen_modes(MOLDABLE, wide) == {1: Mode(4, 3)}
    assert resolved(MOLDABLE, wide).job(1) == Job(1, 0, 4, 3)
    # 4 processors for 3 s and 1 for 5 s over [0, 8) on 4 processors.
    assert utilisation(MOLDABLE, wide) == (12 + 5) / 32


@pytest.mark.parametrize(
    ("placement", "kind", "text"),
    [
        (Placement(0, 4, (0, 1, 2)), "mode", "runs on 3 processors, not the count"),
        (Placement(0, 3, None), "mode", "has no processors"),
        (Placement(0, 4, (0, 1, 2, 3)), "duration", "expected 3 s"),
    ],
)
def test_rule_8_violations(placement: Placement, kind: str, text: str) -> None:
    schedule = Schedule({1: placement, 2: Placement(10, 15, (0,))})
    found = check_schedule(MOLDABLE, schedule)
    assert found[0].kind == kind and text in found[0].message


def test_a_malleable_job_completes_in_its_last_second() -> None:
    # 2 s on 2 processors (1/3 of the job) then 2 s on 4 (2/3): done at 4.
    pieces = [Piece(0, 2, (0, 1)), Piece(2, 4, (0, 1, 2, 3))]
    ok = Schedule({1: Placement.of_pieces(pieces), 2: Placement(4, 9, (0,))})
    assert check_schedule(MALLEABLE, ok) == []
    assert utilisation(MALLEABLE, ok) == (4 + 8 + 5) / 36
    # 5 s on 1 processor (5/12), then 7/12 * 6 = 3.5 s on 2: ends at 9, not 10.
    slow = [Piece(0, 5, (0,)), Piece(5, 9, (0, 1))]
    other = Placement(0, 5, (1,))
    assert (
        check_schedule(MALLEABLE, Schedule({1: Placement.of_pieces(slow), 2: other}))
        == []
    )
    late = [Piece(0, 5, (0,)), Piece(5, 10, (0, 1))]
    found = check_schedule(
        MALLEABLE, Schedule({1: Placement.of_pieces(late), 2: Placement(0, 5, (1,))})
    )
    assert [v.kind for v in found] == ["duration"]
    assert "before its last second" in found[0].message


def test_rule_9_violations() -> None:
    short = [Piece(0, 2, (0, 1)), Piece(2, 3, (0, 1, 2, 3))]
    found = check_schedule(
        MALLEABLE, Schedule({1: Placement.of_pieces(short), 2: Placement(3, 8, (0,))})
    )
    assert "does 0.666667 of its work" in found[0].message
    odd = [Piece(0, 2, (0, 1, 2)), Piece(2, 4, (0, 1, 2, 3))]
    found = check_schedule(
        MALLEABLE, Schedule({1: Placement.of_pieces(odd), 2: Placement(4, 9, (0,))})
    )
    assert found[0].kind == "processor-count" and "(1, 2, 4)" in found[0].message
    # Capacity counts each piece's own processors: 4 + 1 > 4 at time 3.
    pieces = [Piece(0, 2, (0, 1)), Piece(2, 4, (0, 1, 2, 3))]
    found = check_schedule(
        MALLEABLE, Schedule({1: Placement.of_pieces(pieces), 2: Placement(3, 8, (3,))})
    )
    assert [v.kind for v in found] == ["capacity", "processor-overlap"]


def test_a_resumed_malleable_piece_pays_its_own_switch_cost() -> None:
    machine = Machine(4, switch_cost_per_processor=1)
    instance = Instance(machine, (Job(1, 0, 2, 6, modes=MODES, malleable=True),))
    # 2 s on 2 processors (1/3); resumed on 4 at 5: switch 4 s, then 2 s.
    pieces = [Piece(0, 2, (0, 1)), Piece(5, 11, (0, 1, 2, 3), switch=4)]
    assert check_schedule(instance, Schedule({1: Placement.of_pieces(pieces)})) == []
    wrong = [Piece(0, 2, (0, 1)), Piece(5, 9, (0, 1, 2, 3), switch=2)]
    found = check_schedule(instance, Schedule({1: Placement.of_pieces(wrong)}))
    assert found[0].kind == "switch-cost"


# --------------------------------------------------------------------------
# Native JSON
# --------------------------------------------------------------------------


def _write(path: Path, jobs: str) -> Path:
    path.write_text(
        '{"version": 1, "machine": {"processors": 8}, "jobs": [' + jobs + "]}\n",
        encoding="utf-8",
    )
    return path


def test_json_modes_round_trip(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "m.json",
        '{"id": 1, "release": 0, "modes": [{"processors": 1, "runtime": 40},'
        ' {"processors": 4, "runtime": 11, "estimate": 15}]},'
        ' {"id": 2, "release": 3, "size": 1, "malleable": true,'
        ' "modes": [{"processors": 1, "runtime": 40},'
        ' {"processors": 2, "runtime": 20}]}',
    )
    instance = read_native(path).instance
    first, second = instance.jobs
    assert (first.size, first.runtime, first.estimate) == (4, 11, 15)  # most processors
    assert (second.size, second.runtime, second.malleable) == (1, 40, True)
    write_native(instance, tmp_path / "again.json")
    assert read_native(tmp_path / "again.json").instance.jobs == instance.jobs


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ('"modes": [{"processors": 1, "runtime": 40},'
         ' {"processors": 2, "runtime": 10}]',
         "work falls from 40"),
        ('"size": 3, "modes": [{"processors": 1, "runtime": 40}]',
         "size 3 is not the processor count of one of its modes"),
        ('"runtime": 3, "modes": [{"processors": 1, "runtime": 40}]',
         "runtime: a job with modes gives it in each mode"),
        ('"modes": [{"processors": 16, "runtime": 40}]',
         "exceeds machine processors 8"),
        ('"modes": []', "modes: expected at least 1 entry, got 0"),
        ('"modes": [{"processors": 1, "runtime": 4, "x": 1}]', "unknown key 'x'"),
        ('"modes": [{"processors": 1, "runtime": 4}], "malleable": 1',
         "expected true or false"),
    ],
)  # fmt: skip
def test_json_mode_errors_name_file_and_line(
    tmp_path: Path, job: str, message: str
) -> None:
    path = _write(tmp_path / "bad.json", '{"id": 1, "release": 0, ' + job + "}")
    with pytest.raises(InputError, match=message) as error:
        read_native(path)
    assert str(error.value).startswith(f"{path}:1: jobs[0]")


def test_a_moldable_job_may_be_preempted_in_one_mode() -> None:
    # PBI inside rescaling preempts moldable jobs: each keeps one mode.
    one_mode = [Piece(0, 1, (0, 1, 2, 3)), Piece(6, 8, (0, 1, 2, 3))]
    schedule = Schedule({1: Placement.of_pieces(one_mode), 2: Placement(1, 6, (1,))})
    assert check_schedule(MOLDABLE, schedule) == []
    two_modes = [Piece(0, 1, (0, 1, 2, 3)), Piece(5, 9, (0, 1))]
    found = check_schedule(
        MOLDABLE,
        Schedule({1: Placement.of_pieces(two_modes), 2: Placement(1, 6, (2,))}),
    )
    assert (
        found[0].kind == "mode" and "stretches of different counts" in found[0].message
    )


def test_a_malleable_job_in_one_piece_counts_its_own_processors() -> None:
    # Requested mode 2 processors; it runs 3 s on 4: job 2 fits beside
    # nothing, and 4 + 1 > 4 would be a capacity fault only if counted as 4.
    one = Schedule({1: Placement(0, 3, (0, 1, 2, 3)), 2: Placement(3, 8, (0,))})
    assert check_schedule(MALLEABLE, one) == []
    narrow = Schedule({1: Placement(0, 12, (0,)), 2: Placement(0, 5, (1,))})
    assert check_schedule(MALLEABLE, narrow) == []  # 1 + 1 processors, not 2 + 1
    crowded = Instance(
        Machine(2), (Job(1, 0, 2, 6, modes=MODES[:2], malleable=True), Job(2, 0, 1, 5))
    )
    assert (
        check_schedule(
            crowded, Schedule({1: Placement(0, 12, (0,)), 2: Placement(0, 5, (1,))})
        )
        == []
    )


# --------------------------------------------------------------------------
# The checker against a brute-force judge (unit time grid, few processors)
# --------------------------------------------------------------------------


def _brute_valid(instance: Instance, schedule: Schedule) -> bool:
    """Rules 1-9 decided second by second and processor by processor."""
    m = instance.processors
    used: dict[tuple[int, int], int] = {}
    for job in instance.jobs:
        placement = schedule.placements[job.id]
        if placement.start < job.release:
            return False
        segments = placement.segments()
        counts = set()
        done = Fraction(0)
        for start, end, procs in segments:
            if procs is None or len(set(procs)) != len(procs) or end < start:
                return False
            if any(not 0 <= p < m for p in procs):
                return False
            mode = job.mode(len(procs))
            if mode is None:
                return False
            counts.add(len(procs))
            for t in range(start, end):
                for p in procs:
                    if (t, p) in used:
                        return False
                    used[(t, p)] = job.id
            if mode.runtime:
                done += Fraction(end - start, mode.runtime)
        if job.malleable:
            last = [seg for seg in segments if seg[1] > seg[0]][-1:] or segments[-1:]
            last = last[0]
            mode = job.mode(len(last[2]))  # type: ignore[arg-type]
            assert mode is not None
            if (
                done < 1
                or done - Fraction(min(1, last[1] - last[0]), mode.runtime) >= 1
            ):
                return False
        elif len(counts) != 1 or done != 1:
            return False
    return True


@st.composite
def _cases(draw: st.DrawFn) -> tuple[Instance, Schedule]:
    """Mostly near-valid placements (a mode's count and length, completing
    pieces), so that both answers are common, with faults drawn in."""
    m = draw(st.integers(2, 4))
    malleable = draw(st.booleans())
    jobs, placements = [], {}
    start = 0
    for jid in range(1, draw(st.integers(1, 3)) + 1):
        t1 = draw(st.integers(1, 6))
        modes = parse_model(f"linear:max={m}").modes(Job(jid, 0, 1, t1), m)
        start = draw(st.sampled_from([start, start, start, 0]))  # after the last
        release = draw(st.sampled_from([0, start, start + 1]))
        jobs.append(Job(jid, release, 1, t1, modes=modes, malleable=malleable))
        pieces, done = [], Fraction(0)
        for k in range(draw(st.integers(1, 2 if malleable else 1))):
            mode = draw(st.sampled_from(modes))
            width = draw(
                st.sampled_from([mode.processors] * 4 + [mode.processors + 1, 0])
            )
            first = draw(st.sampled_from([0, max(0, m - width), 1]))
            left = max(0, math.ceil((1 - done) * mode.runtime))
            length = draw(st.sampled_from([left, left + 1, max(left - 1, 0), 1]))
            if k == 0 and malleable:
                length = draw(st.integers(0, left))
            procs = tuple(range(first, first + width))
            pieces.append(Piece(start, start + length, procs))
            done += Fraction(length, mode.runtime) if mode.runtime else 1
            start += length + draw(st.integers(0, 1))
        placements[jid] = Placement.of_pieces(pieces)
    return Instance(Machine(m), tuple(jobs)), Schedule(placements)


@settings(max_examples=400, deadline=None)
@given(_cases())
def test_the_checker_agrees_with_a_brute_force_judge(
    case: tuple[Instance, Schedule],
) -> None:
    instance, schedule = case
    found = check_schedule(instance, schedule)  # never raises
    assert (found == []) == _brute_valid(instance, schedule), found


def test_a_malleable_job_holding_processors_after_completing_is_a_fault() -> None:
    # 3 s on 4 processors complete it; a later piece runs it again.
    pieces = [Piece(0, 3, (0, 1, 2, 3)), Piece(5, 7, (0, 1))]
    found = check_schedule(
        MALLEABLE, Schedule({1: Placement.of_pieces(pieces), 2: Placement(7, 12, (0,))})
    )
    assert [v.kind for v in found] == ["duration"]
    assert "before its last second" in found[0].message
