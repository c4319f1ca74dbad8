"""Gang scheduling (optsched.heuristics.preempt.gang): golden schedules,
properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builders import small_instances
from support.paths import INSTANCES

from optsched.check import check_schedule, max_jobs_per_processor, migrations
from optsched.heuristics.preempt.gang import gang, parse_gang_spec
from optsched.heuristics.preempt.gang_classes import (
    GangClasses,
    JobClass,
    default_classes,
    load_classes,
    parse_classes,
)
from optsched.heuristics.preempt.gang_matrix import candidate_claims, free_runs, place
from optsched.instance import Instance, Job, Machine
from optsched.schedule import Schedule

PLAIN = GangClasses({"production": JobClass("production", priority=1)})
"""One preemptible class, no maximum wait, no minimum slice: pure round robin."""


def _classes(**extra: JobClass) -> GangClasses:
    """Production (queue 1, the default) plus classes mapped to queues 2, 3, ..."""
    classes = {"production": JobClass("production", priority=1), **extra}
    queues = {k: name for k, name in enumerate(extra, start=2)}
    return GangClasses(classes, queues, "production")


def _instance(m: int, jobs: list[tuple], **machine: object) -> Instance:
    """Jobs as (release, size, runtime[, queue]), numbered from 1."""
    return Instance(
        Machine(m, **machine),  # type: ignore[arg-type]
        tuple(
            Job(k, r, q, p, queue=rest[0] if rest else None)
            for k, (r, q, p, *rest) in enumerate(jobs, start=1)
        ),
    )


def _pieces(schedule: Schedule, job: int) -> list[tuple[int, int, int]]:
    """``(start, end, switch)`` of each piece (one for an uninterrupted job)."""
    p = schedule[job]
    if not p.pieces:
        return [(p.start, p.end, 0)]
    return [(x.start, x.end, x.switch) for x in p.pieces]


def _procs(schedule: Schedule, job: int) -> tuple[int, ...]:
    """Processors of the job's first piece."""
    return tuple(schedule[job].processors or ())


def _valid(instance: Instance, schedule: Schedule) -> None:
    assert check_schedule(instance, schedule) == []
    assert migrations(schedule) == []
    for job in instance.jobs:
        assert schedule[job.id].work == job.runtime


# -- the matrix ------------------------------------------------------------


def test_free_runs_and_packings() -> None:
    free = free_runs([(2, 3), (5, 6)], 8)
    assert free == [(0, 2), (3, 5), (6, 8)]
    assert place(free, 2, "first-fit", 8) == (0, 2)
    assert place([(0, 3), (3, 5), (6, 8)], 2, "best-fit", 8) == (3, 5)
    assert place(free, 3, "first-fit", 8) is None
    # Buddy: a block of 2 aligned on 2 -> the run [3, 5) holds no aligned
    # block ([4, 6) leaves it), [6, 8) does.
    assert place([(3, 5), (6, 8)], 2, "buddy", 8) == (6, 8)
    # m = 6: the block of 8 for a job of 5 is cut at 6 and still holds it.
    assert place([(0, 6)], 5, "buddy", 6) == (0, 6)
    # a job of 3 on 6: blocks [0, 4) and [4, 6) (cut, too short).
    assert place([(1, 6)], 3, "buddy", 6) is None
    assert candidate_claims(3, "buddy", 8, [5]) == [(0, 4), (4, 8)]
    assert candidate_claims(3, "buddy", 8, []) == [(0, 4)]
    # m = 10**9: as many candidates as boundaries, not m / 4.
    expected = [(0, 4), (4, 8), (8, 12), (12, 16)]
    assert candidate_claims(3, "buddy", 10**9, [6, 10]) == expected
    assert candidate_claims(2, "first-fit", 5, [3]) == [(0, 2), (1, 3), (3, 5)]


# -- golden schedules -------------------------------------------------------


def test_two_rows_alternate_with_the_quantum() -> None:
    # m = 4, quantum 4. A (3 procs, 10 s) takes row 1 [0, 3); B (2 procs,
    # 6 s) does not fit beside it and opens row 2 [0, 2). The rows take
    # turns: A [0,4) B [4,8) A [8,12) B [12,14) (done: 4 + 2), then row 2
    # is empty and A ends in [14,16) (4 + 4 + 2 = 10).
    inst = _instance(4, [(0, 3, 10), (0, 2, 6)])
    s = gang(inst, classes=PLAIN, quantum=4)
    _valid(inst, s)
    assert _pieces(s, 1) == [(0, 4, 0), (8, 12, 0), (14, 16, 0)]
    assert _pieces(s, 2) == [(4, 8, 0), (12, 14, 0)]
    assert _procs(s, 1) == (0, 1, 2)
    assert _procs(s, 2) == (0, 1)
    assert s.producer == "gang:packing=first-fit,quantum=4"
    assert max_jobs_per_processor(inst, s) == 2


SWITCH_COSTS = [
    # Same jobs, resume cost 1 s. A: [0,4) work 4. B: [4,8) work 4. A
    # resumes at 8 paying 1 s; its slice is 4 + 1 long: [8,13) work 4, 2
    # left. B resumes [13, 13+1+2=16) and ends. Row 2 empty: A resumes
    # [16, 16+1+2=19).
    pytest.param(
        {"switch_cost": 1},
        [(0, 4, 0), (8, 13, 1), (16, 19, 1)],
        [(4, 8, 0), (13, 16, 1)],
        id="per-resume",
    ),
    # T3D-style cost: 1 s per processor, so A (3 procs) pays 3 s and B 2 s.
    # A [0,4) w4; B [4,8) w4; A [8, 8+3+4=15) w4 (2 left); B [15,15+2+2=19)
    # ends; A [19, 19+3+2=24) ends.
    pytest.param(
        {"switch_cost_per_processor": 1},
        [(0, 4, 0), (8, 15, 3), (19, 24, 3)],
        [(4, 8, 0), (15, 19, 2)],
        id="per-processor",
    ),
]
"""Switch costs of the machine, then job A's and job B's pieces."""


@pytest.mark.parametrize(("switch", "pieces_a", "pieces_b"), SWITCH_COSTS)
def test_resumed_pieces_pay_the_switch_and_lengthen_the_slice(
    switch: dict[str, int],
    pieces_a: list[tuple[int, int, int]],
    pieces_b: list[tuple[int, int, int]],
) -> None:
    inst = _instance(4, [(0, 3, 10), (0, 2, 6)], **switch)
    s = gang(inst, classes=PLAIN, quantum=4)
    _valid(inst, s)
    assert _pieces(s, 1) == pieces_a
    assert _pieces(s, 2) == pieces_b


def test_alternative_scheduling_fills_idle_processors() -> None:
    # A (3 procs, 8 s) row 1 [0,3); B (3 procs, 8 s) row 2 [0,3); C (1
    # proc, 6 s) fits in row 1 at [3,4). In row 2's slice processor 3 is
    # idle, so with alternative scheduling C keeps running: [0,6) in one
    # piece. Without, C stops at 4 and resumes in row 1's next slice [8,10).
    inst = _instance(4, [(0, 3, 8), (0, 3, 8), (0, 1, 6)])
    s = gang(inst, classes=PLAIN, quantum=4)
    _valid(inst, s)
    assert _pieces(s, 3) == [(0, 6, 0)]
    assert _pieces(s, 1) == [(0, 4, 0), (8, 12, 0)]
    assert _pieces(s, 2) == [(4, 8, 0), (12, 16, 0)]
    off = gang(inst, classes=PLAIN, quantum=4, alternative=False)
    _valid(inst, off)
    assert _pieces(off, 3) == [(0, 4, 0), (8, 10, 0)]
    assert off.producer.endswith(",alternative=off")


def test_non_preemptible_job_parks_the_jobs_on_its_range() -> None:
    # A (production, 4 procs, 10 s) runs from 0. D (debug: priority 2,
    # non-preemptible, max wait 3) arrives at 1 needing 2 processors free
    # in every row: none. At 4 it has waited 3 s: both ranges [0,2) and
    # [2,4) cost the same (A), the lowest wins; A is parked. D runs [4,7)
    # in one piece; then A returns to a row on its own processors [7,13).
    debug = JobClass("debug", priority=2, max_wait=3, preemptible=False)
    inst = _instance(4, [(0, 4, 10), (1, 2, 3, 2)])
    s = gang(inst, classes=_classes(debug=debug), quantum=4)
    _valid(inst, s)
    assert _pieces(s, 2) == [(4, 7, 0)]
    assert _procs(s, 2) == (0, 1)
    assert _pieces(s, 1) == [(0, 4, 0), (7, 13, 0)]


def test_non_preemptible_job_starts_at_once_when_a_range_is_free() -> None:
    # B (benchmark, non-preemptible) finds [2,4) free in every row at 0 and
    # runs to the end; A alternates with C (row 2) on [0,2) only.
    bench = JobClass("benchmark", priority=1, preemptible=False)
    inst = _instance(4, [(0, 2, 8), (0, 2, 12, 2), (0, 2, 4)])
    s = gang(inst, classes=_classes(benchmark=bench), quantum=4)
    _valid(inst, s)
    assert _pieces(s, 2) == [(0, 12, 0)]
    assert _procs(s, 2) == (2, 3)
    # A row 1 [0,2), C row 2 [0,2): A [0,4) C [4,8) A [8,12).
    assert _pieces(s, 1) == [(0, 4, 0), (8, 12, 0)]
    assert _pieces(s, 3) == [(4, 8, 0)]


def test_standby_runs_only_on_idle_processors() -> None:
    # A (2 procs, 6 s) runs [0,6) on 0-1. S (standby, 3 procs, 4 s) finds
    # only 2 idle processors until A ends, then runs [6,7) on 0-2. B (4
    # procs, 4 s) arrives at 7 and takes the machine: S stops and resumes
    # at 11, when B is done: [11,14) (1 + 3 = 4 s).
    standby = JobClass("standby", standby=True)
    inst = _instance(4, [(0, 2, 6), (0, 3, 4, 2), (7, 4, 4)])
    s = gang(inst, classes=_classes(standby=standby), quantum=10)
    _valid(inst, s)
    assert _pieces(s, 1) == [(0, 6, 0)]
    assert _pieces(s, 2) == [(6, 7, 0), (11, 14, 0)]
    assert _procs(s, 2) == (0, 1, 2)
    assert _pieces(s, 3) == [(7, 11, 0)]


def _victim_instance() -> Instance:
    # P1 (3 procs, 20 s) [0,3) and P2 (1 proc, 5 s) [3,4) fill row 1; I
    # (interactive, 1 proc, 3 s, max wait 2) arrives at 1 and opens row 2.
    return _instance(4, [(0, 3, 20), (0, 1, 5), (1, 1, 3, 2)])


def test_cost_function_preempts_the_cheapest_job() -> None:
    # At 3 I has waited 2 s. It never ran, so any range of the current row
    # is a candidate: [0,1), [1,2), [2,3) preempt P1 (3 processors), [3,4)
    # preempts P2 (1 processor): cheaper. P2 moves to row 2 on its own
    # processor; I runs [3,6). Without alternative scheduling P2 waits for
    # row 2's slice at 10: [10,12) finishes it (3 + 2 = 5); P1 runs [0,10)
    # and, row 2 empty again, [12,22).
    interactive = JobClass("interactive", priority=2, max_wait=2)
    inst = _victim_instance()
    s = gang(
        inst, classes=_classes(interactive=interactive), quantum=10, alternative=False
    )
    _valid(inst, s)
    assert _pieces(s, 3) == [(3, 6, 0)]
    assert _procs(s, 3) == (3,)
    assert _pieces(s, 2) == [(0, 3, 0), (10, 12, 0)]
    assert _pieces(s, 1) == [(0, 10, 0), (12, 22, 0)]


def test_higher_priority_jobs_are_never_victims() -> None:
    # P2 is now of a class above I's (and, placed first at 0 for its
    # priority, on processor 0; P1 on 1-3). The only admissible victim is
    # P1: I takes the lowest range over it, [1,2); P2 runs untouched [0,5).
    # P1 moves to row 2, which becomes current when I ends at 6: [6,23).
    interactive = JobClass("interactive", priority=2, max_wait=2)
    vip = JobClass("vip", priority=3)
    inst = _instance(4, [(0, 3, 20), (0, 1, 5, 3), (1, 1, 3, 2)])
    classes = _classes(interactive=interactive, vip=vip)
    s = gang(inst, classes=classes, quantum=10, alternative=False)
    _valid(inst, s)
    assert _procs(s, 2) == (0,)
    assert _procs(s, 3) == (1,)
    assert _pieces(s, 3) == [(3, 6, 0)]
    assert _pieces(s, 2) == [(0, 5, 0)]
    assert _pieces(s, 1) == [(0, 3, 0), (6, 23, 0)]


def test_the_switch_waits_for_the_victims_minimum_slice() -> None:
    # Production now has a minimum slice of 4 s per processor: P2 (1 proc)
    # is protected until 4, P1 (3 procs) until 12. I is chosen at 3 as
    # before but starts at 4, when P2's minimum slice expires: [4,7). P2
    # (1 s left) resumes with row 2's slice at 10: [10,11). P1 is never
    # stopped: at 10 its minimum slice runs on, at 11 row 2 is empty and
    # row 1 is current again, so it runs [0,20).
    interactive = JobClass("interactive", priority=2, max_wait=2)
    classes = GangClasses(
        {"production": JobClass("production", priority=1, multiplier=4.0),
         "interactive": interactive},
        {2: "interactive"},
    )  # fmt: skip
    inst = _victim_instance()
    s = gang(inst, classes=classes, quantum=10, alternative=False)
    _valid(inst, s)
    assert _pieces(s, 3) == [(4, 7, 0)]
    assert _pieces(s, 2) == [(0, 4, 0), (10, 11, 0)]
    assert _pieces(s, 1) == [(0, 20, 0)]


def test_buddy_placement_is_aligned() -> None:
    # m = 8. Buddy: A (3) takes the block [0,4) and runs on 0-2; B (2) the
    # block [4,6); C (3) needs a block of 4: [4,8) is not free, so a new row
    # [0,4); D (1) the block [6,7) of row 1. First fit packs A [0,3), B
    # [3,5), C [5,8), D in row 2 [0,1).
    inst = _instance(8, [(0, 3, 10), (0, 2, 10), (0, 3, 10), (0, 1, 10)])
    buddy = gang(inst, classes=PLAIN, quantum=5, packing="buddy")
    _valid(inst, buddy)
    first = {j: buddy[j].offset for j in (1, 2, 3, 4)}
    assert first == {1: 0, 2: 4, 3: 0, 4: 6}
    for job in inst.jobs:
        block = 1 << (job.size - 1).bit_length()
        assert (first[job.id] or 0) % block == 0
    # C alternates with A (row 2), B and D run throughout.
    assert _pieces(buddy, 2) == [(0, 10, 0)]
    assert _pieces(buddy, 4) == [(0, 10, 0)]
    assert _pieces(buddy, 3) == [(5, 10, 0), (15, 20, 0)]
    ff = gang(inst, classes=PLAIN, quantum=5)
    _valid(inst, ff)
    assert {j: ff[j].offset for j in (1, 2, 3, 4)} == {
        1: 0,
        2: 3,
        3: 5,
        4: 0,
    }


def test_best_fit_takes_the_tightest_row() -> None:
    # m = 4. A (2) row 1 [0,2); B (3) row 2 [0,3); D (1) arrives at 1 and
    # fits in both rows. First fit: row 1 [2,3), current, so D runs at once
    # [1,5) and ends in row 1's next slice [10,11). Best fit: row 2 (no
    # processor left, against 1 in row 1) on [3,4): D waits for row 2's
    # slice and runs [5,10) with B.
    inst = _instance(4, [(0, 2, 10), (0, 3, 10), (1, 1, 5)])
    best = gang(inst, classes=PLAIN, quantum=5, packing="best-fit", alternative=False)
    _valid(inst, best)
    assert _procs(best, 3) == (3,)
    assert _pieces(best, 3) == [(5, 10, 0)]
    assert _pieces(best, 1) == [(0, 5, 0), (10, 15, 0)]
    first = gang(inst, classes=PLAIN, quantum=5, alternative=False)
    _valid(inst, first)
    assert _procs(first, 3) == (2,)
    assert _pieces(first, 3) == [(1, 5, 0), (10, 11, 0)]


def test_busy_blocks_hold_their_processors() -> None:
    # Any machine of 4 with a block of 2 processors during [0, 5): the block
    # takes processors 0-1 until 5; A (4 procs) waits for it.
    from optsched.instance import BusyBlock

    inst = Instance(Machine(4, unavailable=(BusyBlock(0, 5, 2),)), (Job(1, 0, 4, 3),))
    s = gang(inst, classes=PLAIN)
    _valid(inst, s)
    assert _pieces(s, 1) == [(5, 8, 0)]


def test_every_piece_works_at_least_a_second() -> None:
    # Switches (3 s) longer than the maximum wait (1 s) and no minimum
    # slice: two jobs on the same processors in two rows preempt each other
    # as soon as the other's protection ends. Each piece still does one
    # second of work, so both finish: A (2 s) and B (2 s) need two pieces
    # each at most.
    eager = GangClasses({"production": JobClass("production", max_wait=1)})
    inst = _instance(2, [(0, 2, 2), (0, 2, 2)], switch_cost=3)
    s = gang(inst, classes=eager, quantum=10)
    _valid(inst, s)
    for job in (1, 2):
        assert all(end - start - switch >= 1 for start, end, switch in _pieces(s, job))
    # A [0,1) is preempted by B (waited 1 s) which runs [1,2); A resumes at
    # 2 paying 3 s: [2,6); B resumes at 6: [6,10).
    assert _pieces(s, 1) == [(0, 1, 0), (2, 6, 3)]
    assert _pieces(s, 2) == [(1, 2, 0), (6, 10, 3)]


def test_bundled_kth_window_with_the_default_classes() -> None:
    from optsched.io import read

    base = read(INSTANCES / "kth_20.json")
    for cost in (0, 2):
        inst = base.replace(
            machine=base.machine.replace(switch_cost_per_processor=cost)
        )
        for packing in ("first-fit", "best-fit", "buddy"):
            _valid(inst, gang(inst, packing=packing))


@pytest.mark.parametrize("packing", ["first-fit", "best-fit", "buddy"])
def test_a_huge_machine_costs_its_jobs_not_its_processors(packing: str) -> None:
    # 10**9 processors, a block of 10**8, jobs of up to 10**9 processors,
    # a non-preemptible class that must take ranges over running jobs.
    from optsched.instance import BusyBlock

    classes = GangClasses(
        {"production": JobClass("production", priority=1, max_wait=5),
         "debug": JobClass("debug", priority=2, max_wait=3, preemptible=False)},
        {1: "debug"},
    )  # fmt: skip
    m = 10**9
    jobs = tuple(
        Job(k, 3 * k, (k * 7919 % 10**6 + 1) * 997, 40 + k, queue=k % 3)
        for k in range(30)
    )
    machine = Machine(m, unavailable=(BusyBlock(0, 50, 10**8),), switch_cost=2)
    inst = Instance(machine, (*jobs, Job(99, 5, m, 7)))
    _valid(inst, gang(inst, classes=classes, packing=packing, quantum=10))


# -- classes -----------------------------------------------------------------


def test_default_classes() -> None:
    classes = default_classes()
    assert set(classes.classes) == {
        "interactive", "debug", "production", "benchmark", "standby"
    }  # fmt: skip
    assert not classes.classes["debug"].preemptible
    assert not classes.classes["benchmark"].preemptible
    assert classes.classes["standby"].standby
    assert classes.of(Job(1, 0, 1, 1)).name == "production"
    assert classes.of(Job(1, 0, 1, 1, queue=0)).name == "interactive"
    assert classes.of(Job(1, 0, 1, 1, queue=99)).name == "production"
    assert classes.classes["production"].min_slice(100) == 200


def test_classes_from_a_file(tmp_path) -> None:
    path = tmp_path / "classes.toml"
    path.write_text(
        'default = "batch"\nqueues = {0 = "fast"}\n'
        "[classes.batch]\npriority = 1\n"
        "[classes.fast]\npriority = 2\nmax_wait = 60\nprocessor_limit = 2\n"
    )
    classes = load_classes(path)
    assert classes.of(Job(1, 0, 1, 1, queue=0)).max_wait == 60
    inst = _instance(4, [(0, 3, 5, 0)])
    with pytest.raises(ValueError, match="job 1: 3 processors exceed the limit 2"):
        gang(inst, classes=classes)
    s = gang(inst, classes=classes, over_limit="default")
    _valid(inst, s)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"classes": {"a": {"priority": 1}}, "default": "b"}, "unknown class 'b'"),
        ({"classes": {"a": {"speed": 1}}, "default": "a"}, "unknown keys"),
        ({"classes": {"a": {"max_wait": 0}}, "default": "a"}, "max_wait"),
        ({"classes": {"a": {}}, "default": "a", "queues": {"x": "a"}},
         "not an integer"),
        ({"classes": {"a": {"standby": True, "preemptible": False}}, "default": "a"},
         "standby"),
    ],
)  # fmt: skip
def test_bad_classes_are_refused(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_classes(data, "x.toml")


def test_bad_parameters() -> None:
    inst = _instance(2, [(0, 1, 1)])
    with pytest.raises(ValueError, match="unknown packing"):
        gang(inst, packing="worst-fit")
    with pytest.raises(ValueError, match="quantum"):
        gang(inst, quantum=0)
    with pytest.raises(ValueError, match="over_limit"):
        gang(inst, over_limit="ignore")


def test_specs() -> None:
    inst = _instance(4, [(0, 3, 10), (0, 2, 6)])
    options = parse_gang_spec("gang:packing=buddy,quantum=4,alternative=off")
    assert options == {"packing": "buddy", "quantum": 4, "alternative": False}
    s = gang(inst, classes=PLAIN, **options)  # type: ignore[arg-type]
    assert s.producer == "gang:packing=buddy,quantum=4,alternative=off"
    assert parse_gang_spec(s.producer) == options
    assert parse_gang_spec("gang") == {}
    for bad in ("easy", "gang:speed=2", "gang:quantum=x", "gang:alternative=yes"):
        with pytest.raises(ValueError):
            parse_gang_spec(bad)


# -- properties ---------------------------------------------------------------

MIXED = GangClasses(
    {
        "production": JobClass("production", priority=1, max_wait=7, multiplier=0.5),
        "interactive": JobClass("interactive", priority=2, max_wait=3, multiplier=1.0),
        "debug": JobClass("debug", priority=3, max_wait=2, preemptible=False),
        "benchmark": JobClass("benchmark", priority=1, max_wait=9, preemptible=False),
        "standby": JobClass("standby", standby=True),
    },
    {0: "production", 1: "interactive", 2: "debug", 3: "benchmark", 4: "standby"},
)
"""Every kind of class, with short waits so that preemptions happen."""


@settings(max_examples=300, deadline=None)
@given(
    small_instances(max_jobs=8),
    st.lists(st.integers(0, 4), min_size=8, max_size=8),
    st.sampled_from(["first-fit", "best-fit", "buddy"]),
    st.integers(1, 6),
    st.integers(0, 2),
    st.integers(0, 1),
    st.booleans(),
)
def test_gang_schedules_are_valid(
    inst: Instance,
    queues: list[int],
    packing: str,
    quantum: int,
    switch: int,
    per_processor: int,
    alternative: bool,
) -> None:
    jobs = tuple(
        job.replace(queue=queues[k], runtime=job.runtime * 3)
        for k, job in enumerate(inst.jobs)
    )
    machine = inst.machine.replace(
        switch_cost=switch, switch_cost_per_processor=per_processor
    )
    inst = inst.replace(machine=machine, jobs=jobs)
    s = gang(
        inst, classes=MIXED, quantum=quantum, packing=packing, alternative=alternative
    )
    _valid(inst, s)
    for job in inst.jobs:
        placement = s[job.id]
        if MIXED.of(job).preemptible is False:
            assert not placement.pieces  # ran to completion in one piece
        # Never started before its release, every resumption paid for.
        assert placement.start >= job.release
        resumed = max(len(placement.pieces) - 1, 0)
        assert placement.switch_cost == resumed * machine.resume_cost(job.size)
