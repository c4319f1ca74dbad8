"""Rassmann's combinators: the thesis's worked counterexamples (Figs.
3.2.12-3.2.15), base-order ties, spec names, and the flat engine policies
they equal."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.simulation import (
    ENGINE_COMBINATORS,
    assert_engines_equal_combinators,
    draw_shuffled_jobs,
    run_checked,
)

from optsched.heuristics import (
    COMBINATOR_NAMES,
    Combinator,
    parse_combinator,
    parse_policy,
    simulate,
)
from optsched.heuristics.spec import valid_names
from optsched.heuristics.topology.combinators import ALIASES, base_ranks, run_combinator
from optsched.instance import Instance, Job, Machine
from optsched.nodes import Nodes
from optsched.schedule import Schedule


def _thesis(nodes: int, rows: list[tuple[int, int, int, int]]) -> Instance:
    """Rows ``(id, q, p, pi)`` on ``nodes`` nodes of speed 1: a job's
    runtime is its work ``p`` and it runs ``ceil(p / pi)``."""
    return Instance(
        Machine(nodes, speeds=(1,) * nodes),
        tuple(Job(i, q, pi, p) for i, q, p, pi in rows),
    )


def _measures(instance: Instance, schedule: Schedule) -> tuple[int, int, int]:
    """``(L_max, C_max, sum F)``: max (s - q), max c - min q, sum (c - q)."""
    jobs = instance.jobs
    lmax = max(schedule[j.id].start - j.release for j in jobs)
    cmax = max(schedule[j.id].end for j in jobs) - min(j.release for j in jobs)
    flow = sum(schedule[j.id].end - j.release for j in jobs)
    return lmax, cmax, flow


def _starts(schedule: Schedule) -> dict[int, tuple[int, int]]:
    return {j: (p.start, p.end) for j, p in sorted(schedule.placements.items())}


# -- the worked counterexamples (seed notes §A4.6) --------------------------
FIG_3_2_12 = _thesis(3, [(0, 1, 3, 1), (1, 0, 3, 2), (2, 0, 1, 2), (3, 0, 1, 3)])
FIGURES = {
    "3.2.12": FIG_3_2_12,
    "3.2.13": _thesis(
        4, [(0, 1, 1, 4), (1, 1, 3, 1), (2, 1, 3, 1), (3, 0, 4, 3), (4, 0, 1, 2)]
    ),
    "3.2.14": _thesis(
        4, [(0, 0, 1, 2), (1, 0, 1, 3), (2, 0, 2, 1), (3, 0, 1, 3), (4, 0, 1, 2)]
    ),
}
"""The thesis's figures: Fig. 3.2.12, optimistic waits longer than AFKT
backfill; 3.2.13, optimistic loses on makespan and wait; 3.2.14, AFKT
backfill beats optimistic and FIFO."""

OPTIMISTIC, AFKT, FIFO = "optimistic:f=fifo", "afkt-backfill:f=fifo", "blocking:f=fifo"
FIGURE_RUNS = [
    # Job 0 starts at 1 on the extra node (pi = 1 <= extra = 1 at t* = 2).
    ("3.2.12", OPTIMISTIC, ((1, 4), (0, 2), (2, 3), (4, 5)), (4, 5, 13)),
    ("3.2.12", AFKT, ((4, 7), (0, 2), (2, 3), (3, 4)), (3, 7, 15)),
    ("3.2.12", FIFO, ((4, 7), (0, 2), (2, 3), (3, 4)), (3, 7, 15)),  # = AFKT
    # Job 1 starts optimistically at 1 and pushes job 0 (and job 2) back.
    ("3.2.13", OPTIMISTIC, ((4, 5), (1, 4), (5, 8), (0, 2), (2, 3)), (4, 8, 19)),
    ("3.2.13", AFKT, ((3, 4), (4, 7), (4, 7), (0, 2), (2, 3)), (3, 7, 20)),
    ("3.2.13", FIFO, ((3, 4), (4, 7), (4, 7), (0, 2), (2, 3)), (3, 7, 20)),  # = AFKT
    # Job 4 is backfilled at 0 on the two spare nodes.
    ("3.2.14", AFKT, ((0, 1), (1, 2), (1, 3), (2, 3), (0, 1)), (2, 3, 10)),
    ("3.2.14", OPTIMISTIC, ((0, 1), (1, 2), (0, 2), (2, 3), (3, 4)), (3, 4, 12)),
    ("3.2.14", FIFO, ((0, 1), (1, 2), (1, 3), (2, 3), (3, 4)), (3, 4, 13)),
]
"""Figure, policy, ``(start, end)`` of jobs 0, 1, ... and :func:`_measures`
``(L_max, C_max, sum F)``."""


@pytest.mark.parametrize(("figure", "spec", "runs", "measures"), FIGURE_RUNS)
def test_the_thesis_figures(
    figure: str,
    spec: str,
    runs: tuple[tuple[int, int], ...],
    measures: tuple[int, int, int],
) -> None:
    instance = FIGURES[figure]
    schedule = run_checked(instance, spec)
    assert tuple(_starts(schedule).values()) == runs
    assert _measures(instance, schedule) == measures


@pytest.mark.parametrize(("widths", "cmax"), [((2, 1, 1), 2), ((1, 2, 1), 3)])
def test_figure_3_2_15_the_id_order_decides_the_makespan(
    widths: tuple[int, ...], cmax: int
) -> None:
    instance = _thesis(2, [(i, 0, 1, pi) for i, pi in enumerate(widths)])
    schedule = run_checked(instance, "blocking:f=fid")
    assert _measures(instance, schedule)[1] == cmax


# -- base orders --------------------------------------------------------------
def test_spt_and_lpt_break_exact_ratio_ties_by_id_low_and_high() -> None:
    # Works 4 / 2 == 2 / 1 per processor exactly: SPT takes the lower id,
    # LPT the higher; each runs ceil(p / sum of speeds) = 2 s.
    machine = Machine(2, speeds=(1, 1))
    instance = Instance(machine, (Job(1, 0, 2, 4), Job(2, 0, 1, 2)))
    assert _starts(run_checked(instance, "blocking:f=spt")) == {1: (0, 2), 2: (2, 4)}
    assert _starts(run_checked(instance, "blocking:f=lpt")) == {1: (2, 4), 2: (0, 2)}


def test_spt_on_identical_processors_reads_the_estimate() -> None:
    # Without speeds the estimate is a run time: job 1 (2 procs, 4 s) is
    # longer than job 2 (1 proc, 3 s), whatever their works (8 and 3).
    instance = Instance(Machine(2), (Job(1, 0, 2, 4), Job(2, 0, 1, 3)))
    assert _starts(run_checked(instance, "blocking:f=spt")) == {1: (3, 7), 2: (0, 3)}
    assert _starts(run_checked(instance, "blocking:f=lpt")) == {1: (0, 4), 2: (4, 7)}
    assert _starts(run_checked(instance, "spt")) == {1: (3, 7), 2: (0, 3)}


def test_ratios_are_compared_exactly() -> None:
    # Both ratios are 1 + 2**-52 in floats; exactly, job 2's is smaller.
    big = 2**53
    a = Job(1, 0, big - 3, big - 2)  # 1 + 1/(2**53 - 3)
    b = Job(2, 0, big - 2, big - 1)  # 1 + 1/(2**53 - 2)
    assert a.runtime / a.size == b.runtime / b.size
    assert base_ranks("spt", [a, b]) == [1, 0]
    assert base_ranks("lpt", [a, b]) == [0, 1]


def test_fifo_and_fid_orders() -> None:
    jobs = [Job(9, 0, 1, 1), Job(3, 0, 1, 1), Job(5, 2, 1, 1)]
    jobs.sort(key=lambda j: (j.release, j.id))  # the simulator's numbering
    assert base_ranks("fifo", jobs) == [0, 1, 2]
    assert base_ranks("fid", jobs) == [0, 2, 1]  # ids 3, 9, 5


def test_random_order_is_reproducible_by_seed() -> None:
    jobs = [Job(k, 0, 1, 1) for k in range(20)]
    assert base_ranks("random", jobs, 7) == base_ranks("random", jobs, 7)
    assert base_ranks("random", jobs, 7) != base_ranks("random", jobs, 8)
    instance = Instance(Machine(1), tuple(jobs))
    first = run_checked(instance, "blocking:f=random,seed=7")
    assert first == run_checked(instance, "blocking:f=random,seed=7")
    assert first.producer == "blocking:f=random,seed=7"
    assert _starts(first) != _starts(run_checked(instance, "blocking:f=random,seed=8"))


def test_fit2_falls_back_to_its_second_order() -> None:
    # LPT's head (job 1, 2 CPUs) does not fit beside job 3; Fit2 then
    # starts the first fitting job by FIFO (job 2), Fit(LPT) job 4 (longer).
    instance = Instance(
        Machine(2),
        (Job(3, 0, 1, 10), Job(1, 1, 2, 30), Job(2, 1, 1, 1), Job(4, 1, 1, 5)),
    )
    assert run_checked(instance, "fit2:f=lpt,g=fifo")[2].start == 1
    assert run_checked(instance, "fit:f=lpt")[4].start == 1
    assert run_checked(instance, "fit:f=lpt")[2].start > 1


def test_lpt_fifo_optimistic_fills_by_fifo() -> None:
    # Head by LPT is job 1 (2 CPUs, blocked until 10, gap 9). Jobs 2 (8 s)
    # and 4 (9 s) both end by then; FIFO fills with job 2 (same release,
    # lower id), LPT with the longer job 4.
    instance = Instance(
        Machine(2),
        (Job(3, 0, 1, 10), Job(1, 1, 2, 30), Job(2, 1, 1, 8), Job(4, 1, 1, 9)),
    )
    fifo_filled = run_checked(instance, "lpt-fifo-optim")
    assert (fifo_filled[2].start, fifo_filled[4].start) == (1, 40)
    lpt_filled = run_checked(instance, "lpt-optim")
    assert (lpt_filled[4].start, lpt_filled[2].start) == (1, 40)


# -- spec names ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("blocking:f=fifo", "blocking:f=fifo"),
        ("fit:f=SPT", "fit:f=spt"),
        ("fit2:f=lpt,g=fifo", "fit2:f=lpt,g=fifo"),
        ("afkt-backfill:f=lpt,g=lpt", "afkt-backfill:f=lpt"),
        ("optimistic:f=fifo,placement=auto", "optimistic:f=fifo"),
        (
            "optimistic:g=fifo,f=lpt,placement=smp",
            "optimistic:f=lpt,g=fifo,placement=smp",
        ),
        ("blocking:f=random,seed=3", "blocking:f=random,seed=3"),
        ("fifo-fit", "fit:f=fifo"),
        ("spt-fit", "fit:f=spt"),
        ("lpt-fit", "fit:f=lpt"),
        ("fifo-back", "afkt-backfill:f=fifo"),
        ("spt-back", "afkt-backfill:f=spt"),
        ("lpt-back", "afkt-backfill:f=lpt"),
        ("fifo-optim", "optimistic:f=fifo"),
        ("spt-optim", "optimistic:f=spt"),
        ("lpt-optim", "optimistic:f=lpt"),
        ("lpt-fifo-optim", "optimistic:f=lpt,g=fifo"),
        ("lpt-back-fifo", "afkt-backfill:f=lpt,g=fifo"),
        ("LPT-Back:placement=fastest", "afkt-backfill:f=lpt,placement=fastest"),
    ],
)
def test_specs_parse_to_their_canonical_form(text: str, canonical: str) -> None:
    policy = parse_policy(text)
    assert isinstance(policy, Combinator)
    assert policy.spec == canonical
    assert parse_policy(policy.spec) == policy
    assert parse_combinator(text).canonical == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fit", "needs f=ORDER"),
        ("fit:f=sjf", "unknown base order 'sjf'"),
        ("blocking:f=fifo,g=spt", "unknown parameter 'g'"),
        ("fit:f=fifo,g=spt", "unknown parameter 'g'"),
        ("fit:f=fifo,seed=2", "seed applies only to the random order"),
        ("fit:f=random,seed=x", "seed must be an integer"),
        ("fifo-back:f=spt", "unknown parameter 'f'"),
        ("optimistic:f=fifo,placement=best", "unknown placement"),
        ("optimistic:f=fifo,f=spt", "given twice"),
        ("optimistic:f", "needs a value"),
    ],
)
def test_bad_specs_are_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        parse_policy(text)
    assert "\n" not in str(caught.value)


def test_the_names_are_listed_and_the_engine_names_stay_the_engines() -> None:
    assert set(ALIASES) <= set(COMBINATOR_NAMES)
    for name in COMBINATOR_NAMES:
        assert name in valid_names()
    for name in ("fifo", "fcfs", "spt", "lpt", "easy", "firstfit", "backfill"):
        assert not isinstance(parse_policy(name), Combinator)


def test_the_producer_is_the_canonical_spec() -> None:
    schedule = run_checked(FIG_3_2_12, "lpt-back-fifo")
    assert schedule.producer == "afkt-backfill:f=lpt,g=fifo"
    assert run_combinator(FIG_3_2_12, "fifo-optim").producer == "optimistic:f=fifo"


# -- the engine policies on machines that are not flat ------------------------
@pytest.mark.parametrize(
    ("engine", "combinator"),
    [*ENGINE_COMBINATORS, ("fifo", "blocking:f=fifo")],
)
def test_engine_names_run_as_their_combinators_off_flat_machines(
    engine: str, combinator: str
) -> None:
    instance = Instance(
        Machine(6, speeds=(1, 2, 1, 2, 1, 2), nodes=Nodes(3, 2, tight=0, level=1)),
        tuple(Job(k, k % 3, 1 + k % 4, 5 + 3 * k, 8 + k) for k in range(8)),
    )
    mine = run_checked(instance, engine)
    theirs = run_checked(instance, combinator)
    assert mine.placements == theirs.placements
    assert mine.producer == parse_policy(engine).spec


@pytest.mark.parametrize(
    "spec", ["conservative", "easy:order=spt", "spt", "easy:oracle", "pbi", "ffdh"]
)
def test_other_policies_are_refused_off_flat_machines(spec: str) -> None:
    instance = Instance(Machine(2, speeds=(1, 2)), (Job(1, 0, 1, 4),))
    with pytest.raises(ValueError, match="does not run on a machine with speeds"):
        simulate(instance, spec)


def test_engine_options_are_refused_off_flat_machines() -> None:
    instance = Instance(Machine(2, speeds=(1, 2)), (Job(1, 0, 1, 4),))
    with pytest.raises(ValueError, match="never killed"):
        simulate(instance, "easy", kill_at_estimate=True)
    with pytest.raises(ValueError, match="never killed"):
        simulate(instance, "lpt-back", allocation_rule="best-fit")


# -- where the combinators equal the flat engine ------------------------------
def test_afkt_backfill_is_not_easy() -> None:
    # Fig. 3.2.12 on a flat machine (run times ceil(p / pi) as given):
    # EASY starts job 0 at 1 on the extra processor, AFKT's time-only rule
    # does not (it would end at 4, after the head's shadow time 2).
    flat = Instance(
        Machine(3),
        (Job(0, 1, 1, 3), Job(1, 0, 2, 2), Job(2, 0, 2, 1), Job(3, 0, 3, 1)),
    )
    easy = run_checked(flat, "easy")
    assert easy[0].start == 1
    assert _starts(run_checked(flat, "optimistic:f=fifo")) == _starts(easy)
    afkt = run_checked(flat, "fifo-back")
    assert afkt[0].start == 4
    assert _starts(afkt) == _starts(run_checked(flat, "fcfs"))


@st.composite
def flat_instances(draw: st.DrawFn) -> Instance:
    """Flat machines; releases may tie, ids in any order, estimates exact,
    over or under, run times 0 allowed."""
    m = draw(st.integers(1, 6))
    return Instance(Machine(m), tuple(draw_shuffled_jobs(draw, m, release=10)))


@settings(max_examples=200, deadline=None)
@given(instance=flat_instances())
def test_easy_firstfit_and_fcfs_equal_their_combinators_on_flat_machines(
    instance: Instance,
) -> None:
    assert_engines_equal_combinators(instance)
