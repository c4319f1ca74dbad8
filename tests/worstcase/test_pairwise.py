"""Exhaustive minimal separating instances of Rassmann's ten schedulers."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.metrics import makespan
from optsched.worstcase.pairwise import (
    SCHEDULERS,
    PairSpace,
    Witness,
    WitnessError,
    by_label,
    enumerate_minima,
    fast_makespans,
    hypothesis_witness,
    instances,
    pbt_scores,
    schedule_of,
    shapes,
    spearman,
    to_instance,
    trapezoid,
    verify,
)

LABELS = [s.label for s in SCHEDULERS]

# Seed notes Sec. A4.6: jobs as (q, pi, p), ids = positions, speed-1 nodes.
FIGURES = {
    "3.2.12": (3, ((1, 1, 3), (0, 2, 3), (0, 2, 1), (0, 3, 1))),
    "3.2.13": (4, ((1, 4, 1), (1, 1, 3), (1, 1, 3), (0, 3, 4), (0, 2, 1))),
    "3.2.14": (4, ((0, 2, 1), (0, 3, 1), (0, 1, 2), (0, 3, 1), (0, 2, 1))),
}
# C_max of fifo, Fifo-back, Fifo-optim printed in the thesis.
FIGURE_CMAX = {
    "3.2.12": {"fifo": 7, "Fifo-back": 7, "Fifo-optim": 5},
    "3.2.13": {"Fifo-back": 7, "Fifo-optim": 8},
    "3.2.14": {"fifo": 4, "Fifo-back": 3, "Fifo-optim": 4},
}


def product_makespans(nodes: int, genes: tuple[tuple[int, int, int], ...]) -> list[int]:
    """All ten through the product simulator, each schedule checked."""
    instance = to_instance(nodes, genes)
    values = []
    for sched in SCHEDULERS:
        schedule = simulate(instance, sched.spec).schedule
        assert check_schedule(instance, schedule) == []
        values.append(makespan(instance, schedule, relative=True))
    return values


@pytest.mark.parametrize("figure", sorted(FIGURES))
def test_fast_simulator_reproduces_the_thesis_figures(figure: str) -> None:
    nodes, genes = FIGURES[figure]
    values = dict(zip(LABELS, fast_makespans(nodes, genes), strict=True))
    for label, expected in FIGURE_CMAX[figure].items():
        assert values[label] == expected
    assert list(values.values()) == product_makespans(nodes, genes)
    for sched in SCHEDULERS:
        assert (
            check_schedule(to_instance(nodes, genes), schedule_of(nodes, genes, sched))
            == []
        )


def test_hand_checked_cell_fifo_fit_beats_fifo_at_3_2_0() -> None:
    # k = 2; j0 (pi 1, r 1), j1 (pi 2, r 1), j2 (pi 1, r 1), all at 0.
    # fifo: j0 [0,1), j1 blocked until 1: [1,2), j2 [2,3): C_max 3.
    # Fifo-fit: j0 and j2 at 0, j1 [1,2): C_max 2.
    genes = ((0, 1, 1), (0, 2, 1), (0, 1, 1))
    fifo, fit = fast_makespans(2, genes, [by_label("fifo"), by_label("Fifo-fit")])
    assert (fifo, fit) == (3, 2)
    search = enumerate_minima(PairSpace.uniform(5, 1, 0))
    w = search.witnesses["Fifo-fit", "fifo"]
    assert w.parts == (3, 2, 0) and w.size == 5
    assert verify(w) == (2, 3)
    # The first instance met of the shape is this one.
    assert w.genes == genes


def test_nothing_separates_below_size_5() -> None:
    # Sizes 3 and 4 are (J, k, o) = (1, 2, 0), (2, 2, 0): the enumeration
    # starts at 5 because no pair separates on them (thesis Fig. 3.2.15).
    for size in (3, 4):
        for jobs, nodes, online in shapes(size):
            for genes in instances(jobs, nodes, online, 4, 4):
                assert len(set(fast_makespans(nodes, genes))) == 1


def test_fast_simulator_matches_the_product_on_all_of_size_5() -> None:
    count = 0
    for jobs, nodes, online in shapes(5):
        for genes in instances(jobs, nodes, online, 2, 2):
            assert fast_makespans(nodes, genes) == product_makespans(nodes, genes)
            count += 1
    assert count == 312


genes_strategy = st.integers(2, 5).flatmap(
    lambda k: st.tuples(
        st.just(k),
        st.lists(
            st.tuples(st.integers(0, 6), st.integers(1, k), st.integers(1, 12)),
            min_size=1,
            max_size=7,
        ),
    )
)


@settings(max_examples=60, deadline=None)
@given(case=genes_strategy)
def test_fast_simulator_matches_the_product(case: tuple[int, list]) -> None:
    nodes, genes = case
    first = min(q for q, _, _ in genes)
    genes = [(q - first, pi, p) for q, pi, p in genes]
    assert fast_makespans(nodes, genes) == product_makespans(nodes, tuple(genes))


def _signature(nodes: int, genes: tuple[tuple[int, int, int], ...]) -> tuple:
    """What the reduction keeps: q, pi, r and the key order inside r groups."""
    runs = [-(-p // pi) for _, pi, p in genes]
    keys = [Fraction(p, pi) for _, pi, p in genes]
    order = tuple(
        sorted({k for k, r2 in zip(keys, runs, strict=True) if r2 == r}).index(key)
        for key, r in zip(keys, runs, strict=True)
    )
    return (
        nodes,
        tuple((q, pi, r) for (q, pi, _), r in zip(genes, runs, strict=True)),
        order,
    )


def test_class_representatives_cover_every_work_exactly_once() -> None:
    # Brute force over every work p = 1..pi * max_run of shape (3, 3, 0):
    # the classes are exactly the representatives, and every member of a
    # class gives the representative's ten makespans.
    max_run = 2
    reps = {_signature(3, g): g for g in instances(3, 3, 0, max_run, 0)}
    assert len(reps) == len(list(instances(3, 3, 0, max_run, 0)))
    seen = set()
    per_job = [(pi, p) for pi in range(1, 4) for p in range(1, pi * max_run + 1)]
    for combo in itertools.product(per_job, repeat=3):
        genes = tuple((0, pi, p) for pi, p in combo)
        signature = _signature(3, genes)
        seen.add(signature)
        assert fast_makespans(3, genes) == fast_makespans(3, reps[signature])
    assert seen == set(reps)


def test_exhaustive_minimum_is_at_most_any_hypothesis_witness() -> None:
    # Hypothesis draws inside the space (p <= 2 keeps r <= 2, q <= 2).
    space = PairSpace.uniform(6, 2, 2)
    search = enumerate_minima(space)
    assert search.complete_to == 6
    assert search.counts == {5: 312, 6: 2894}
    pairs = [
        ("Fifo-fit", "fifo"), ("Fifo-optim", "Fifo-back"), ("fifo", "lpt"),
        ("spt", "lpt"), ("Spt-back", "Spt-fit"),
    ]  # fmt: skip
    compared = 0
    for winner, loser in pairs:
        found = hypothesis_witness(
            winner, loser, seed=1, examples=200, max_nodes=4, max_jobs=5,
            max_work=2, max_release=2,
        )  # fmt: skip
        if found is None:
            continue
        verify(found)
        exact = search.witnesses.get((winner, loser))
        if found.size <= space.max_size:
            assert exact is not None and exact.size <= found.size
            compared += 1
    assert compared >= 3
    # And every exhaustive witness separates under the product simulator.
    for witness in list(search.witnesses.values())[::7]:
        assert verify(witness) == (witness.winner_value, witness.loser_value)


def test_verify_rejects_a_non_witness() -> None:
    fake = Witness("fifo", "Fifo-fit", 2, ((0, 1, 1), (0, 2, 1), (0, 1, 1)), 2, 3)
    with pytest.raises(WitnessError, match="re-run gives"):
        verify(fake)


def test_fifo_never_beats_fifo_backfill_in_the_small() -> None:
    search = enumerate_minima(PairSpace.uniform(6, 2, 2))
    assert ("fifo", "Fifo-back") not in search.witnesses
    assert hypothesis_witness("fifo", "Fifo-back", examples=300) is None


THESIS = """
fifo       + 5 6 10 X 15 7 5 6 13
spt        6 + 6 7 7 7 14 21 7 12
lpt        5 5 + 10 5 7 5 5 8 14
Fifo-fit   7 7 5 + 11 6 5 5 6 7
Fifo-back  7 7 5 15 + 15 6 7 6 6
Fifo-optim 7 5 5 7 7 + 7 7 6 6
Spt-fit    7 7 5 6 7 5 + 6 6 14
Spt-back   5 9 6 6 6 6 11 + 6 6
Lpt-fit    7 6 5 5 6 5 5 5 + 11
Lpt-back   6 7 6 5 8 7 5 5 11 +
"""
"""Table 3.2.2's sums (seed notes Sec. A4.4)."""


def test_pbt_scores_reproduce_table_3_2_2() -> None:
    sizes = {}
    for line in THESIS.strip().splitlines():
        row, *values = line.split()
        for column, value in zip(LABELS, values, strict=True):
            if value not in ("+", "X"):
                sizes[row, column] = int(value)
    scores = pbt_scores(sizes)
    # fifo: losses 57/9, wins 67/8.
    assert scores["fifo"] == pytest.approx((57 / 9) / (67 / 8))
    assert scores["fifo"] == pytest.approx(0.756218905472637)
    assert scores["Lpt-back"] == pytest.approx(1.48333333333333)
    assert scores["Fifo-back"] == pytest.approx(0.866554054054054)
    assert math.isnan(pbt_scores({("fifo", "spt"): 5})["lpt"])


def test_spearman_and_trapezoid() -> None:
    auc = [25862.63, 23798.84, 23054.28, 21039.48, 21378.49,
           21008.51, 21211.51, 23685.24, 21073.09, 20213.09]  # fmt: skip
    pbt = [0.7562, 0.6667, 0.7656, 1.2034, 0.8666,
           1.2807, 1.0317, 1.0820, 1.1273, 1.4833]  # fmt: skip
    # Thesis Table 3.2.3 from its values: sum d^2 = 316, 1 - 6 * 316 / 990.
    assert spearman(auc, pbt) == pytest.approx(1 - 6 * 316 / 990)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # Ties take average ranks: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4).
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(
        4.5 / math.sqrt(4.5 * 5)
    )
    assert trapezoid([0, 1, 3], [2, 4, 0]) == 3 + 4
