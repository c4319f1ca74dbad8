"""The composition matrix: every feature alone, every pair of features and
a sample of the triples either works end to end or is refused at input by one entry of
:data:`optsched.combinations.INPUT_REFUSALS`.

The five stages (``simulate`` with every policy that takes the combination,
``check``, ``bound`` with ``bounds-only`` and ``cpsat``, ``gap``) and a
consistency stage (no lower bound above a checked complete schedule) run on
the first 12 jobs of the bundled KTH window through
:func:`support.composition.run_pipeline`; ``benchmarks/composition/matrix.py``
prints the same matrix as a table.
"""

from __future__ import annotations

import itertools

import pytest
from support.composition import (
    FEATURES,
    MOLDABLE_POLICIES,
    NA,
    OK,
    REFUSED,
    Outcome,
    refused_policies,
    run_pipeline,
    works,
)
from support.paths import REPO

from optsched.combinations import (
    INPUT_REFUSALS,
    refusal_for,
    refusals_markdown,
    simulators_markdown,
)
from optsched.families import FEATURES as TABLE

TIME_LIMIT = 1.0
"""Seconds per solve: enough for every bound of a 12-job window."""

TABLE_NAME = {"moldable": "modes", "smp": "nodes"}
"""The harness's feature names that the family table spells otherwise."""

COMBINATIONS = [(f,) for f in FEATURES] + list(itertools.combinations(FEATURES, 2))


def _named(features: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(TABLE_NAME.get(f, f) for f in features)


TRIPLES = [
    t
    for t in itertools.combinations(FEATURES, 3)
    if not any(refusal_for(_named(pair)) for pair in itertools.combinations(t, 2))
][::8]
"""Every eighth of the triples none of whose pairs is refused (those that
make sense as one machine), each feature in several of them;
``benchmarks/composition/TRIPLES.md`` records every triple of instance
features."""


def _refused_at_input(outcomes: dict[str, Outcome]) -> str | None:
    """The refusal's text when the combination was refused before any work:
    by the instance model, or by ``simulate`` for every policy."""
    build = outcomes["build"]
    if build.status == REFUSED:
        return build.message
    simulate = outcomes["simulate"]
    if simulate.status == REFUSED and OK not in simulate.details.values():
        return simulate.message
    return None


def _summary(outcomes: dict[str, Outcome]) -> str:
    return "; ".join(
        f"{stage}: {o.status} {o.message}"
        for stage, o in outcomes.items()
        if o.status not in (OK, NA)
    )


@pytest.mark.parametrize("features", COMBINATIONS + TRIPLES, ids="+".join)
def test_every_combination_works_or_is_refused_at_input(
    features: tuple[str, ...],
) -> None:
    outcomes = run_pipeline(features, time_limit=TIME_LIMIT)
    refused = _refused_at_input(outcomes)
    entry = refusal_for(_named(features))
    if refused is None:
        assert entry is None, f"listed as refused ({entry}) but it runs"
        assert works(outcomes, strict=False), _summary(outcomes)
        # The moldable policies run on the engine: whatever it follows,
        # they follow (on speeds and SMP nodes too, through the node simulator).
        if {"moldable", "malleable"} & set(features):
            refusing = set(refused_policies(outcomes)) & set(MOLDABLE_POLICIES)
            assert not refusing, _summary(outcomes)
        return
    assert entry is not None, f"refused but not listed: {refused}"
    assert entry.message in refused, (entry.message, refused)
    # Nothing after a refused build runs; nothing failed on the way.
    assert all(o.status != "failed" for o in outcomes.values()), _summary(outcomes)


def test_the_refusals_name_features_of_the_table() -> None:
    names = {row.name for row in TABLE} | {"kill-at-estimate", "migration"}
    for entry in INPUT_REFUSALS:
        assert {entry.shape, entry.other} <= names, entry
        assert entry.kind in ("model", "not built"), entry
    pairs = [(e.shape, e.other) for e in INPUT_REFUSALS]
    assert len(pairs) == len(set(pairs))


def test_the_user_guide_shows_the_refusals() -> None:

    guide = REPO / "docs" / "guide" / "composition.md"
    assert refusals_markdown() in guide.read_text()
    assert simulators_markdown() in guide.read_text()
