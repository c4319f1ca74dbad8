"""Shelf policies: the batch framework and PC² (goldens, the checker, specs,
the batch framework equals the offline algorithm on a single batch)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support.builders import draw_blocks, draw_jobs, slow_settings
from support.simulation import spans_of

from optsched.check import check_schedule
from optsched.cli import main
from optsched.heuristics import PC2, Batch, parse_policy, simulate
from optsched.heuristics.shelf.algorithms import SHELF_NAMES, ShelfSpec, shelf_schedule
from optsched.instance import BusyBlock, Instance, Job, Machine
from optsched.io.native import write_native

FAST = slow_settings(120)

SHELF_POLICIES = (
    *SHELF_NAMES,
    "smart:order=smith",
    "smart:order=smith,fit=first",
    "smart:sequence=smith,weights=size",
)
POLICIES = (
    *SHELF_POLICIES,
    "ffdh:oracle",
    "pc2",
    "pc2:batch_share=0",
    "pc2:interactive=none,oracle",
)


def span(lo: int, size: int) -> tuple[int, ...]:
    return tuple(range(lo, lo + size))


# --------------------------------------------------------------------------
# The batch framework
# --------------------------------------------------------------------------

# m = 4; (release, size, runtime) by id.
RELEASED = [(0, 2, 4), (0, 2, 2), (1, 4, 1), (2, 1, 3), (5, 2, 2)]


def released(estimates: dict[int, int] | None = None) -> Instance:
    estimates = estimates or {}
    jobs = tuple(
        Job(k, r, q, p, estimates.get(k, p)) for k, (r, q, p) in enumerate(RELEASED, 1)
    )
    return Instance(Machine(4), jobs)


@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_batch_ffdh_golden(allocation: str) -> None:
    inst = released()
    inst = inst.replace(machine=Machine(4, allocation))
    # t = 0: batch {1, 2}, one shelf: 1 on 0-1, 2 on 2-3. 3 (t = 1) and 4
    # (t = 2) wait for it to end at 4: batch {3, 4}, FFDH: 4 (p 3) on 0,
    # 3 (q 4) does not fit beside: next shelf at 7. 5 (t = 5) waits for that
    # batch to end at 8.
    result = simulate(inst, "ffdh")
    s = result.schedule
    assert spans_of(s) == {1: (0, 4), 2: (0, 2), 4: (4, 7), 3: (7, 8), 5: (8, 10)}
    assert s[1].processors == span(0, 2) and s[2].processors == span(2, 2)
    assert s[3].processors == span(0, 4) and s[5].processors == span(0, 2)
    assert s.producer == "ffdh"
    assert check_schedule(inst, s) == []
    # The same batches under NFIH: batch {3, 4} runs 3 (p 1) first, then 4.
    s = simulate(inst, "batch:inner=nfih").schedule
    assert spans_of(s) == {1: (0, 4), 2: (0, 2), 3: (4, 5), 4: (5, 8), 5: (8, 10)}


# The same instance under every shelf policy. Batch 1 = {1, 2} at 0.
# Decreasing heights: 1 (p 4) on 0-1 and 2 on 2-3, one shelf; batch 2 =
# {3, 4} at 4: 4 (p 3, q 1), then 3 (q 4) cannot sit beside it nor be
# stacked (slot of width 1): shelf at 7; batch 3 = {5} at 8.
DECREASING = {1: (0, 4), 2: (0, 2), 4: (4, 7), 3: (7, 8), 5: (8, 10)}
# Increasing heights: 2 on 0-1, 1 on 2-3; batch 2 at 4: 3 (p 1) first,
# 4 cannot sit beside it (4 + 1 > 4): shelf at 5; batch 3 = {5} at 8.
INCREASING = {1: (0, 4), 2: (0, 2), 3: (4, 5), 4: (5, 8), 5: (8, 10)}
# SMART never mixes classes: batch 1 = [2] (class 1) then [1] (class 2),
# ending at 6; batch 2 = {3, 4, 5}, classes 0, 2, 1: [3], [5], [4]. Smith's
# order of the shelves (H / W with unit weights) is the class order here.
SMART = {2: (0, 2), 1: (2, 6), 3: (6, 7), 5: (7, 9), 4: (9, 12)}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("nfdh", DECREASING),
        ("ffdh", DECREASING),
        ("ffdh-stack", DECREASING),
        ("nfih", INCREASING),
        ("ffih", INCREASING),
        ("ffih-stack", INCREASING),
        ("smart", SMART),
        ("smart:order=smith,fit=first", SMART),
    ],
)
@pytest.mark.parametrize("allocation", ["any", "contiguous"])
def test_every_shelf_policy_golden(
    spec: str, expected: dict[int, tuple[int, int]], allocation: str
) -> None:
    inst = released().replace(machine=Machine(4, allocation))
    s = simulate(inst, spec).schedule
    assert spans_of(s) == expected
    assert check_schedule(inst, s) == []


def test_batch_runs_event_driven_with_early_ends() -> None:
    # Estimates 6 for job 1 (runs 4) and 5 for job 4 (runs 3): the plans
    # are the same, and every shelf starts when the previous one has really
    # ended (3 at 7, not at 4 + 5 = 9).
    inst = released({1: 6, 4: 5})
    s = simulate(inst, "ffdh").schedule
    assert spans_of(s) == {1: (0, 4), 2: (0, 2), 4: (4, 7), 3: (7, 8), 5: (8, 10)}
    assert check_schedule(inst, s) == []


def test_stacked_job_starts_when_the_job_in_front_ends() -> None:
    # m = 3; (q, runtime, estimate): 1 (2, 2, 4), 2 (1, 5, 5), 3 (2, 1, 1).
    # FFDH*: 2 on 0, 1 on 1-2, 3 stacked behind 1 (planned at 4); 1 ends at
    # 2, so 3 runs [2, 3) on 1-2, as in the offline realisation.
    inst = Instance(
        Machine(3, "contiguous"),
        (Job(1, 0, 2, 2, 4), Job(2, 0, 1, 5, 5), Job(3, 0, 2, 1, 1)),
    )
    s = simulate(inst, "ffdh-stack").schedule
    assert spans_of(s) == {1: (0, 2), 2: (0, 5), 3: (2, 3)}
    assert s[3].processors == span(1, 2)
    assert s.placements == shelf_schedule(inst, "ffdh-stack").placements


def test_shelf_waits_for_its_footprint_beside_a_block() -> None:
    # m = 2 contiguous, block on processor 0 during [3, 6). Batch at 0:
    # FFDH shelf [1 (q 1, p 3)], then [2 (q 2, p 1)]: its footprint (2
    # processors) fits only when the block has ended, at 6 (a pass is asked
    # for then).
    inst = Instance(
        Machine(2, "contiguous", (BusyBlock(3, 6, 1, 0),)),
        (Job(1, 0, 1, 3), Job(2, 0, 2, 1)),
    )
    s = simulate(inst, "ffdh").schedule
    assert spans_of(s) == {1: (0, 3), 2: (6, 7)}
    assert check_schedule(inst, s) == []
    assert s.placements == shelf_schedule(inst, "ffdh").placements


# --------------------------------------------------------------------------
# PC²
# --------------------------------------------------------------------------

# m = 4; (release, size, runtime) by id.
PC2_CASE = [(0, 3, 10), (0, 2, 4), (1, 1, 5), (2, 2, 3), (3, 1, 6), (4, 2, 1)]


def pc2_case(estimate_1: int = 10) -> Instance:
    jobs = tuple(
        Job(k, r, q, p, estimate_1 if k == 1 else p)
        for k, (r, q, p) in enumerate(PC2_CASE, 1)
    )
    return Instance(Machine(4), jobs)


def test_pc2_golden() -> None:
    # t = 0, FCFS: 1 (q 3) starts; 2 (q 2) cannot: the machine is full.
    # Level 0 = {1}, next scheduling point E = 10; 2 is planned by FFDH*
    # (no queue numbers: all batch jobs) at 10 on 0-1.
    # t = 1: 3 (q 1, p 5) ends by 10 and fits now: it joins level 0.
    # t = 2: 4 (q 2, p 3) joins the planned level beside 2 (10, on 2-3).
    # t = 3: 5 (q 1, p 6) fits no slot of that level (height 4): new level
    #        at 14.
    # t = 4: 6 (q 2, p 1) is stacked behind 4 (ready 3, 3 + 1 <= 4): 13.
    inst = pc2_case()
    result = simulate(inst, "pc2")
    s = result.schedule
    assert spans_of(s) == {
        1: (0, 10),
        2: (10, 14),
        3: (1, 6),
        4: (10, 13),
        5: (14, 20),
        6: (13, 14),
    }
    assert s[2].processors == span(0, 2) and s[4].processors == span(2, 2)
    assert s[6].processors == span(2, 2) and s[3].processors == span(3, 1)
    assert check_schedule(inst, s) == []
    # Exact estimates: every prediction comes true.
    assert result.stats.predictions == 6
    assert result.stats.prediction_error == 0


def test_pc2_prediction_error() -> None:
    # Job 1 estimated at 12 (runs 10): E = 12, so 2 and 4 are told 12, 6 is
    # told 15 and 5 16; everything runs 2 s earlier than told: the schedule
    # is that of the golden case, and the mean absolute error is 4 x 2 / 6.
    inst = pc2_case(estimate_1=12)
    result = simulate(inst, "pc2")
    assert spans_of(result.schedule) == spans_of(simulate(pc2_case(), "pc2").schedule)
    assert result.stats.predictions == 6
    assert result.stats.prediction_error == pytest.approx(8 / 6)


@pytest.mark.parametrize(
    ("spec", "queue", "first"),
    [
        ("pc2", None, 2),  # no queue: batch jobs, FFDH*: 2 (p 4) first
        ("pc2", 0, 3),  # queue 0: interactive, FFIH*: 3 (p 2) first
        ("pc2", 1, 2),
        ("pc2:interactive=1", 1, 3),
        ("pc2:interactive=none", 0, 2),
        ("pc2:interactive=0+1", 1, 3),
    ],
)
def test_pc2_chooses_ffdh_star_for_mostly_batch_jobs(
    spec: str, queue: int | None, first: int
) -> None:
    # m = 4: 1 (q 4, p 5) takes the machine; 2 (q 3, p 4) and 3 (q 3, p 2)
    # wait, one level each, from E = 5.
    jobs = (
        Job(1, 0, 4, 5),
        Job(2, 0, 3, 4, queue=queue),
        Job(3, 0, 3, 2, queue=queue),
    )
    s = simulate(Instance(Machine(4), jobs), spec).schedule
    second = 5 - first  # the other of 2 and 3
    assert s[first].start == 5
    assert s[second].start == s[first].end


def test_pc2_batch_share_threshold() -> None:
    # One batch and one interactive job waiting: a share of 1/2 is not
    # "mostly batch" at the default 0.5 (FFIH*), but is above 0.4 (FFDH*).
    jobs = (Job(1, 0, 4, 5), Job(2, 0, 3, 4), Job(3, 0, 3, 2, queue=0))
    inst = Instance(Machine(4), jobs)
    assert simulate(inst, "pc2").schedule[3].start == 5
    assert simulate(inst, "pc2:batch_share=0.4").schedule[2].start == 5


def test_conservative_predicts_its_reservations() -> None:
    result = simulate(pc2_case(estimate_1=12), "conservative")
    assert result.stats.predictions == 6
    assert result.stats.prediction_error >= 0
    assert simulate(pc2_case(), "easy").stats.predictions == 0


def test_simulate_prints_the_prediction_error(tmp_path: Path) -> None:
    path = tmp_path / "pc2.json"
    write_native(pc2_case(estimate_1=12), path)
    result = CliRunner().invoke(main, ["simulate", str(path), "-p", "pc2"])
    assert result.exit_code == 0, result.output
    rows = dict(re.findall(r"│ ([a-z][^│]*?) +│ +([^ │]+) │", result.output))
    assert rows["start-time prediction error (s)"] == "1.33"
    result = CliRunner().invoke(main, ["simulate", str(path), "-p", "easy"])
    assert "prediction" not in result.output


# --------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected", "canonical"),
    [
        ("ffdh", Batch(inner=ShelfSpec("ffdh")), "ffdh"),
        ("batch:inner=ffdh", Batch(inner=ShelfSpec("ffdh")), "ffdh"),
        ("batch", Batch(), "ffdh"),
        ("NFIH:oracle", Batch(oracle=True, inner=ShelfSpec("nfih")), "nfih:oracle"),
        (
            "batch:inner=smart,order=smith",
            Batch(inner=ShelfSpec("smart", order="smith")),
            "smart:order=smith",
        ),
        (
            "smart:fit=first,order=smith,oracle",
            Batch(oracle=True, inner=ShelfSpec("smart", order="smith", fit="first")),
            "smart:order=smith,fit=first,oracle",
        ),
        ("smart:sequence=auto", Batch(inner=ShelfSpec("smart")), "smart"),
        ("pc2", PC2(), "pc2"),
        (
            "pc2:batch_share=0.75,interactive=2+1",
            PC2(interactive=(1, 2), batch_share=0.75),
            "pc2:interactive=1+2,batch_share=0.75",
        ),
        ("pc2:interactive=none", PC2(interactive=()), "pc2:interactive=none"),
    ],
)
def test_specs_round_trip(spec: str, expected: object, canonical: str) -> None:
    policy = parse_policy(spec)
    assert policy == expected
    assert policy.spec == canonical
    assert parse_policy(policy.spec) == policy
    assert Batch(inner="smart:order=smith") == parse_policy("smart:order=smith")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ffdh:order=smith", "unknown parameter 'order'; valid: oracle"),
        (
            "batch:inner=ffdh,order=smith",
            "shelf algorithm 'ffdh': unknown parameter 'order'; valid: none",
        ),
        ("batch:inner=nope", "unknown shelf algorithm 'nope'"),
        ("smart:fit=best", "fit must be one of next, first"),
        ("pc2:order=spt", "unknown parameter 'order'"),
        ("pc2:interactive=a", "interactive must be queue numbers"),
        ("pc2:batch_share=2", "batch_share must be a share in [0, 1]"),
    ],
)
def test_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_policy(spec)


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------


@st.composite
def instances(
    draw: st.DrawFn, *, exact_batch: bool = False, allocation: str | None = None
) -> Instance:
    """Random instances: both allocations, busy blocks, releases, inexact
    estimates, queue numbers; ``exact_batch``: every job at 0 with its
    estimate exact."""
    m = draw(st.integers(1, 10))
    allocation = allocation or draw(st.sampled_from(["any", "contiguous"]))
    blocks = draw_blocks(draw, m, allocation, most=3, latest=40, longest=20)
    jobs = draw_jobs(
        draw,
        m,
        (0, 14),
        release=0 if exact_batch else 40,
        runtime=25,
        estimate=st.just if exact_batch else lambda _: st.integers(0, 30),
        weights=(0.5, 1.0, 2.0),
        queue=st.sampled_from([None, 0, 1]),
    )
    jobs = draw(st.permutations(jobs))
    return Instance(Machine(m, allocation, blocks), tuple(jobs))


@FAST
@given(instances(), st.booleans())
def test_every_policy_schedule_passes_the_checker(inst: Instance, kill: bool) -> None:
    for spec in POLICIES:
        result = simulate(inst, spec, kill_at_estimate=kill)
        assert check_schedule(inst, result.schedule) == [], spec
        assert len(result.schedule) == len(inst.jobs)
        if spec.startswith("pc2"):
            assert result.stats.predictions == len(inst.jobs)


@FAST
@given(instances(allocation="contiguous"))
def test_contiguous_with_migration_and_best_fit(inst: Instance) -> None:
    for spec in POLICIES:
        for rule in ("first-fit", "best-fit"):
            result = simulate(inst, spec, allocation_rule=rule, migration=True)
            assert check_schedule(inst, result.schedule) == [], (spec, rule)


@FAST
@given(instances(exact_batch=True))
def test_one_batch_is_the_offline_algorithm(inst: Instance) -> None:
    # All jobs at 0 with exact estimates: one batch, planned as offline, run
    # as planned, on the processors of the plan (busy blocks included).
    for spec in SHELF_POLICIES:
        simulated = simulate(inst, "batch:inner=" + spec.replace(":", ",")).schedule
        offline = shelf_schedule(inst, spec)
        assert simulated.placements == offline.placements, spec
