# ruff: noqa: E501  (pinned spec strings and messages stay whole, to grep)
"""Canonical policy specs are store identities and snapshot keys: pinned.

Every online policy has a canonical ``spec`` (the bench store's identity
of a policy, the name of a schedule, the key a report groups by). The
strings below were taken from the code before the specs were generated
from the families' option declarations
(:class:`optsched.heuristics.spec.Options`), and must never change: a
change would split a store's results in two. They cover every family,
defaults and non-defaults, every spec the README and docs print, every
snapshot key (``tests/data/snapshots``) and every policy of the bundled
suites (``benchmarks/suites``), with aliases, upper case, keys out of
order and values at their default. The errors for an unknown or a bad
parameter keep the one style of :mod:`optsched.heuristics.spec`.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import DATA, REPO

from optsched.heuristics import parse_policy
from optsched.heuristics.moldable.policies import AdaptivePartitioning, EasyScaling
from optsched.heuristics.rigid.mallmann import FAIRNESS_OF, READINGS, VARIANTS, Mallmann
from optsched.heuristics.rigid.orders import ORDER_NAMES
from optsched.heuristics.rigid.policies import (
    SELECT_NAMES,
    Backfill,
    BestPackage,
    Conservative,
    FirstFit,
    Policy,
    Strict,
)
from optsched.heuristics.shelf.algorithms import (
    SHELF_ALGORITHMS,
    SHELF_NAMES,
    ShelfSpec,
    parse_shelf_algorithm,
)
from optsched.heuristics.shelf.policies import PC2, Batch
from optsched.topology.machines import MachineShape

CANONICAL: dict[str, str] = {
    "ADAPTIVE:GUARD=NONE": "adaptive:guard=none",
    "Easy:Order=SJF": "easy:order=spt",
    "adaptive": "adaptive",
    "adaptive:guard=finish": "adaptive",
    "adaptive:guard=none": "adaptive:guard=none",
    "afkt-backfill:f=fifo": "afkt-backfill:f=fifo",
    "afkt-backfill:f=lpt": "afkt-backfill:f=lpt",
    "afkt-backfill:f=spt": "afkt-backfill:f=spt",
    "backfill": "easy",
    "backfill:depth=1": "easy",
    "backfill:depth=2,select=shortest,order=spt": "backfill:order=spt,depth=2,select=shortest",
    "backfill:depth=3": "backfill:depth=3",
    "backfill:depth=5,order=saf,oracle,select=submit": "backfill:order=saf,depth=5,oracle,select=submit",
    "backfill:depth=all": "conservative",
    "backfill:depth=all,order=lsf": "conservative:order=lsf",
    "backfill:depth=inf": "conservative",
    "batch": "ffdh",
    "batch:inner=ffdh": "ffdh",
    "batch:inner=ffdh,oracle": "ffdh:oracle",
    "batch:inner=ffih": "ffih",
    "batch:inner=ffih-stack": "ffih-stack",
    "batch:inner=nfdh": "nfdh",
    "batch:inner=nfih": "nfih",
    "batch:inner=smart,fit=first,weights=one": "smart:fit=first,weights=one",
    "batch:inner=smart,order=smith": "smart:order=smith",
    "best-package": "best-package",
    "best-package:limit=128": "best-package",
    "best-package:limit=16,order=spt,oracle": "best-package:order=spt,oracle,limit=16",
    "best-package:limit=8": "best-package:limit=8",
    "bestpackage": "best-package",
    "blocking:f=fifo": "blocking:f=fifo",
    "conservative": "conservative",
    "conservative:oracle": "conservative:oracle",
    "conservative:oracle,order=laf": "conservative:order=laf,oracle",
    "conservative:order=spt": "conservative:order=spt",
    "deq": "deq",
    "easy": "easy",
    "easy-scaling": "easy-scaling",
    "easy-scaling:guard=FINISH": "easy-scaling",
    "easy-scaling:guard=none": "easy-scaling:guard=none",
    "easy-sjbf": "easy:select=shortest",
    "easy-sjbf:oracle,order=lpt": "easy:order=lpt,oracle,select=shortest",
    "easy:maxidle=0.5,select=largest": "easy:select=largest,maxidle=0.5",
    "easy:oracle": "easy:oracle",
    "easy:oracle,order=lpt,select=smallest": "easy:order=lpt,oracle,select=smallest",
    "easy:order=random,seed=7": "easy:order=random,seed=7",
    "easy:order=sjf": "easy:order=spt",
    "easy:order=spt,oracle": "easy:order=spt,oracle",
    "easy:select=largest": "easy:select=largest",
    "easy:select=largest,maxidle=0.3": "easy:select=largest,maxidle=0.3",
    "easy:select=largest,maxidle=1,maxwait=60": "easy:select=largest,maxwait=60,maxidle=1.0",
    "easy:select=largest,maxwait=3600": "easy:select=largest,maxwait=3600",
    "easy:select=largest-area": "easy:select=largest-area",
    "easy:select=shortest": "easy:select=shortest",
    "easy:select=smallest": "easy:select=smallest",
    "easy:select=submit": "easy:select=submit",
    "easy:select=submit,oracle": "easy:oracle,select=submit",
    "fcfs": "fcfs",
    "ffdh": "ffdh",
    "ffdh-stack": "ffdh-stack",
    "ffdh:oracle": "ffdh:oracle",
    "ffih": "ffih",
    "ffih-stack": "ffih-stack",
    "fifo": "fcfs",
    "fifo-back": "afkt-backfill:f=fifo",
    "fifo-fit": "fit:f=fifo",
    "fifo-optim": "optimistic:f=fifo",
    "fifo:oracle": "fcfs:oracle",
    "first-fit": "firstfit",
    "firstfit": "firstfit",
    "firstfit:order=lpt": "firstfit:order=lpt",
    "firstfit:order=random,seed=2,oracle": "firstfit:order=random,oracle,seed=2",
    "fit2:f=lpt,g=fifo": "fit2:f=lpt,g=fifo",
    "fit:f=fid,placement=lowest": "fit:f=fid,placement=lowest",
    "fit:f=fifo": "fit:f=fifo",
    "fit:f=lpt": "fit:f=lpt",
    "fit:f=spt": "fit:f=spt",
    "gang": "gang",
    "gang:over_limit=default": "gang:over_limit=default",
    "gang:packing=best-fit,alternative=off": "gang:alternative=off,packing=best-fit",
    "gang:packing=buddy,quantum=600": "gang:packing=buddy,quantum=600",
    "greedy": "firstfit",
    "laf": "laf",
    "ljf": "lpt",
    "lpt": "lpt",
    "lpt-back": "afkt-backfill:f=lpt",
    "lpt-back-fifo": "afkt-backfill:f=lpt,g=fifo",
    "lpt-fifo-optim": "optimistic:f=lpt,g=fifo",
    "lpt-fit": "fit:f=lpt",
    "lpt-optim": "optimistic:f=lpt",
    "lsf": "lsf",
    "mallmann": "mallmann",
    "mallmann:order=lsf,variant=bc,f=0.4": "mallmann:order=lsf,variant=bc,f=0.4",
    "mallmann:order=lsf,variant=bd,fairness=1": "mallmann:order=lsf,variant=bd,fairness=1",
    "mallmann:order=lsf,variant=bs,f=0.6": "mallmann:order=lsf,variant=bs,f=0.6",
    "mallmann:order=lsf,variant=bs,fairness=1": "mallmann:order=lsf,variant=bs,fairness=1",
    "mallmann:order=lsf,variant=bs3,t=8h": "mallmann:order=lsf,variant=bs3,t=28800",
    "mallmann:order=lsf,variant=ff,t=8h": "mallmann:order=lsf,t=28800",
    "mallmann:order=spt,oracle,variant=fc3": "mallmann:order=spt,variant=fc3,oracle",
    "mallmann:t=2d": "mallmann:t=172800",
    "mallmann:t=45s": "mallmann:t=45",
    "mallmann:variant=bc": "mallmann:variant=bc",
    "mallmann:variant=bc,f=1": "mallmann:variant=bc,f=1.0",
    "mallmann:variant=bd": "mallmann:variant=bd",
    "mallmann:variant=bd,fairness=1": "mallmann:variant=bd,fairness=1",
    "mallmann:variant=bqd": "mallmann:variant=bqd",
    "mallmann:variant=bqd,fairness=2": "mallmann:variant=bqd,fairness=2",
    "mallmann:variant=bqd,fairness=2,t=90m,seed=3,order=random": "mallmann:order=random,variant=bqd,fairness=2,t=5400,seed=3",
    "mallmann:variant=bs": "mallmann:variant=bs",
    "mallmann:variant=bs,fairness=1,reading=shadow": "mallmann:variant=bs,fairness=1,reading=shadow",
    "mallmann:variant=bs3": "mallmann:variant=bs3",
    "mallmann:variant=fc": "mallmann:variant=fc",
    "mallmann:variant=fc,fairness=2": "mallmann:variant=fc,fairness=2",
    "mallmann:variant=fc,fairness=2,reading=shadow,f=0.25,t=8h,oracle": "mallmann:variant=fc,fairness=2,reading=shadow,f=0.25,t=28800,oracle",
    "mallmann:variant=fc3": "mallmann:variant=fc3",
    "mallmann:variant=ff": "mallmann",
    "mallmann:variant=ff,fairness=1": "mallmann:fairness=1",
    "mallmann:variant=ff,fairness=2,reading=shadow": "strict-backfill",
    "mallmann:variant=ff,fairness=2,reading=shadow,f=0.5": "mallmann:fairness=2,reading=shadow,f=0.5",
    "mallmann:variant=ff,fairness=2,reading=shadow,t=1h": "mallmann:fairness=2,reading=shadow,t=3600",
    "mallmann:variant=ws": "mallmann:variant=ws",
    "mallmann:variant=ws,f=0": "mallmann:variant=ws,f=0.0",
    "nfdh": "nfdh",
    "nfih": "nfih",
    "nfih:oracle": "nfih:oracle",
    "optimistic:f=fifo": "optimistic:f=fifo",
    "optimistic:f=lpt,g=fifo": "optimistic:f=lpt,g=fifo",
    "optimistic:f=random,seed=3": "optimistic:f=random,seed=3",
    "orig": "orig",
    "orig:repair": "orig:repair",
    "package": "best-package",
    "package:limit=64": "best-package:limit=64",
    "pbi": "pbi",
    "pbi:move_back=always": "pbi:move_back=always",
    "pbi:order=literal": "pbi:order=literal",
    "pbi:strict=true": "pbi:strict=true",
    "pbi:weights=size": "pbi:weights=size",
    "pc2": "pc2",
    "pc2:batch_share=0.25,oracle": "pc2:batch_share=0.25,oracle",
    "pc2:batch_share=1,interactive=3": "pc2:interactive=3,batch_share=1.0",
    "pc2:interactive=0+1,batch_share=0.6": "pc2:interactive=0+1,batch_share=0.6",
    "pc2:interactive=0,batch_share=0.5": "pc2",
    "pc2:interactive=2+1+1": "pc2:interactive=1+2",
    "pc2:interactive=none": "pc2:interactive=none",
    "pc2:oracle": "pc2:oracle",
    "psrs": "psrs",
    "psrs:weights=one": "psrs:weights=one",
    "random": "random",
    "random:seed=3": "random:seed=3",
    "random:seed=9,oracle": "random:oracle,seed=9",
    "rescale": "rescale:search=deluge,budget=1000,inner=pbi,seed=0",
    "rescale:search=ga,budget=100,population=10": "rescale:search=ga,budget=100,inner=pbi,seed=0,population=10,init=random",
    "rescale:search=hc,budget=2,inner=offline:ffdh": "rescale:search=hc,budget=2,inner=offline/ffdh,seed=0",
    "rescale:search=hc,budget=2,inner=pbi/order=literal": "rescale:search=hc,budget=2,inner=pbi/order=literal,seed=0",
    "rescale:search=hc,budget=2,inner=smart": "rescale:search=hc,budget=2,inner=smart,seed=0",
    "rescale:search=hc,budget=50,inner=easy": "rescale:search=hc,budget=50,inner=easy,seed=0",
    "saf": "saf",
    "sjf": "spt",
    "smart": "smart",
    "smart:fit=first": "smart:fit=first",
    "smart:oracle,weights=area": "smart:weights=area,oracle",
    "smart:order=size,sequence=auto,fit=next,weights=instance": "smart",
    "smart:order=smith": "smart:order=smith",
    "smart:order=smith,fit=first": "smart:order=smith,fit=first",
    "smart:sequence=class,weights=area": "smart:sequence=class,weights=area",
    "smart:weights=one,sequence=smith,order=smith,fit=first": "smart:order=smith,sequence=smith,fit=first,weights=one",
    "smart:weights=size": "smart:weights=size",
    "spt": "spt",
    "spt-back": "afkt-backfill:f=spt",
    "spt-fit": "fit:f=spt",
    "spt-optim": "optimistic:f=spt",
    "spt:oracle": "spt:oracle",
    "ssf": "ssf",
    "strict": "fcfs",
    "strict-backfill": "strict-backfill",
    "strict-backfill:order=random,seed=1": "strict-backfill:order=random,seed=1",
    "strict-backfill:order=spt,oracle": "strict-backfill:order=spt,oracle",
    "strict:order=lpt": "lpt",
    "strict:order=random,seed=4": "random:seed=4",
    "strict:order=ssf": "ssf",
}
"""Spec as written -> its canonical spec (``parse_policy(written).spec``)."""

BUILT: tuple[tuple[Callable[[], Policy], str], ...] = (
    (lambda: Backfill(select="largest", maxidle=1), "easy:select=largest,maxidle=1.0"),
    (
        lambda: Backfill(depth=4, maxwait=0, select="largest"),
        "backfill:depth=4,select=largest,maxwait=0",
    ),
    (
        lambda: BestPackage(limit=3, seed=5, order="random"),
        "best-package:order=random,limit=3,seed=5",
    ),
    (lambda: Strict(order="lpt", oracle=True), "lpt:oracle"),
    (lambda: FirstFit(), "firstfit"),
    (lambda: Conservative(order="random", seed=0), "conservative:order=random,seed=0"),
    (lambda: Mallmann(variant="bc", f=1), "mallmann:variant=bc,f=1.0"),
    (
        lambda: Mallmann(variant="ff", fairness=2, reading="shadow", t=0),
        "mallmann:fairness=2,reading=shadow,t=0",
    ),
    (
        lambda: Mallmann(fairness=2, reading="shadow", oracle=True, order="saf"),
        "strict-backfill:order=saf,oracle",
    ),
    (lambda: PC2(batch_share=1), "pc2:batch_share=1.0"),
    (lambda: PC2(interactive=()), "pc2:interactive=none"),
    (lambda: PC2(interactive=(3, 1)), "pc2:interactive=1+3"),
    (lambda: Batch(inner="smart:order=smith", oracle=True), "smart:order=smith,oracle"),
    (lambda: Batch(inner=ShelfSpec("smart", fit="first")), "smart:fit=first"),
    (lambda: AdaptivePartitioning(guarded=False), "adaptive:guard=none"),
    (lambda: EasyScaling(), "easy-scaling"),
)
"""Policies built in code (ints where floats are written) and their specs."""

SHELVES: dict[str, str] = {
    "ffdh": "ffdh",
    "SMART:Order=Smith": "smart:order=smith",
    "smart:weights=area,fit=first,sequence=class": (
        "smart:sequence=class,fit=first,weights=area"
    ),
    "smart:order=size,sequence=auto,fit=next,weights=instance": "smart",
}
"""Shelf algorithm specs (the inner algorithm of the batch framework)."""

MACHINES: dict[str, str] = {
    "speeds=74x1,26x3": "speeds=74x1,26x3",
    "nodes=10x10;tight=1;level=2;cost=excess": "nodes=10x10;tight=1;level=2;cost=excess",
    "nodes=10x10;tight=2;level=4": "nodes=10x10;tight=2;level=4",
    "speeds=16x275,6x825": "speeds=16x275,6x825",
    "nodes=4x8;tight=adaptive;base=2.5": "nodes=4x8;tight=adaptive;base=2.5",
    "nodes=2x3;base=2;cost=ratio": "nodes=2x3;base=2",
    "speeds=1.5,2,2,2;nodes=2x2;tight=0": "speeds=1.5,3x2;nodes=2x2;tight=0",
    "nodes=4x4;level=1;tight=3": "nodes=4x4;tight=3;level=1",
    "speeds=3x1": "speeds=3x1",
    "": "",
}
"""Machine shape specs (``--machine``, suites' ``machine =``) and their
canonical form (a bench option, so part of a task's identity)."""

ERRORS: tuple[tuple[str, str], ...] = (
    (
        "easy:foo=1",
        "policy 'easy:foo=1': unknown parameter 'foo'; valid: order, oracle, seed, select, maxwait, maxidle",
    ),
    ("easy:order", "policy 'easy:order': parameter 'order' needs a value (order=...)"),
    (
        "gang:quantum=4,quantum=5",
        "policy 'gang:quantum=4,quantum=5': parameter 'quantum' given twice",
    ),
    (
        "mallmann:depth=2",
        "policy 'mallmann:depth=2': unknown parameter 'depth'; valid: order, oracle, seed, variant, fairness, reading, f, t",
    ),
    (
        "strict-backfill:variant=bs",
        "policy 'strict-backfill:variant=bs': unknown parameter 'variant'; valid: order, oracle, seed",
    ),
    (
        "conservative:select=largest",
        "policy 'conservative:select=largest': unknown parameter 'select'; valid: order, oracle, seed",
    ),
    (
        "smart:foo=1",
        "policy 'smart:foo=1': unknown parameter 'foo'; valid: order, sequence, fit, weights, oracle",
    ),
    (
        "batch:inner=ffdh,order=smith",
        "policy 'batch:inner=ffdh,order=smith': shelf algorithm 'ffdh': unknown parameter 'order'; valid: none",
    ),
    (
        "pc2:order=spt",
        "policy 'pc2:order=spt': unknown parameter 'order'; valid: interactive, batch_share, oracle",
    ),
    (
        "pc2:interactive",
        "policy 'pc2:interactive': parameter 'interactive' needs a value (interactive=...)",
    ),
    (
        "adaptive:guard=x",
        "policy 'adaptive:guard=x': guard must be one of finish, none, got 'x'",
    ),
    (
        "adaptive:oracle",
        "policy 'adaptive:oracle': unknown parameter 'oracle'; valid: guard",
    ),
    (
        "easy-scaling:k=1",
        "policy 'easy-scaling:k=1': unknown parameter 'k'; valid: guard",
    ),
    ("ffdh:seed=1", "policy 'ffdh:seed=1': unknown parameter 'seed'; valid: oracle"),
    (
        "best-package:depth=2",
        "policy 'best-package:depth=2': unknown parameter 'depth'; valid: order, oracle, seed, limit",
    ),
    (
        "spt:order=lpt",
        "policy 'spt:order=lpt': the name 'spt' fixes the order; use strict:order=NAME",
    ),
    (
        "backfill:depth=all,select=largest",
        "policy 'backfill:depth=all,select=largest': select, maxwait and maxidle need a finite depth",
    ),
    (
        "mallmann:variant=zz",
        "policy 'mallmann:variant=zz': unknown variant 'zz'; valid: ff, fc, bs, bd, bqd, bc, ws, fc3, bs3",
    ),
    (
        "mallmann:variant=bc,fairness=1",
        "policy 'mallmann:variant=bc,fairness=1': variant bc takes fairness 0 only (as in Mallmann's study), got fairness=1",
    ),
    (
        "easy:maxidle=2,select=largest",
        "policy 'easy:maxidle=2,select=largest': maxidle must be a share in [0, 1], got 2.0",
    ),
    (
        "easy:select=foo",
        "policy 'easy:select=foo': unknown select 'foo'; valid: queue, submit, largest, largest-area, smallest, shortest",
    ),
    (
        "pc2:batch_share=x",
        "policy 'pc2:batch_share=x': batch_share must be a number in [0, 1], got 'x'",
    ),
    (
        "pc2:interactive=a+b",
        "policy 'pc2:interactive=a+b': interactive must be queue numbers joined by '+' (or none), got 'a+b'",
    ),
    (
        "smart:order=zz",
        "policy 'smart:order=zz': smart: order must be one of size, smith, got 'zz'",
    ),
    (
        "fcfs:oracle=maybe",
        "policy 'fcfs:oracle=maybe': oracle must be true or false, got 'maybe'",
    ),
    ("easy:seed=1", "policy 'easy:seed=1': seed applies only to the random order"),
    (
        "firstfit:depth=2",
        "policy 'firstfit:depth=2': unknown parameter 'depth'; valid: order, oracle, seed",
    ),
    (
        "rescale:foo=1",
        "policy 'rescale:foo=1': unknown parameter 'foo'; valid: search, budget, inner, seed, objective, population, init",
    ),
    ("orig:foo", "policy 'orig:foo': unknown parameter 'foo'; valid: repair"),
    (
        "pbi:foo=1",
        "policy 'pbi:foo=1': unknown parameter 'foo'; valid: order, strict, move_back, weights",
    ),
    ("deq:foo=1", "policy 'deq:foo=1': unknown parameter 'foo'; valid: rigid"),
)
"""Specs refused, with the message as it stands."""


@pytest.mark.parametrize(("written", "canonical"), CANONICAL.items())
def test_canonical_spec_is_pinned(written: str, canonical: str) -> None:
    policy = parse_policy(written)
    assert policy.spec == canonical
    assert parse_policy(canonical) == policy
    assert parse_policy(canonical).spec == canonical


@pytest.mark.parametrize(("build", "canonical"), BUILT)
def test_built_policy_spec_is_pinned(
    build: Callable[[], Policy], canonical: str
) -> None:
    policy = build()
    assert policy.spec == canonical
    assert parse_policy(canonical) == policy


@pytest.mark.parametrize(("written", "canonical"), SHELVES.items())
def test_shelf_algorithm_spec_is_pinned(written: str, canonical: str) -> None:
    shelf = parse_shelf_algorithm(written)
    assert shelf.spec == canonical
    assert parse_shelf_algorithm(canonical) == shelf


@pytest.mark.parametrize(("written", "canonical"), MACHINES.items())
def test_machine_spec_is_pinned(written: str, canonical: str) -> None:
    shape = MachineShape.parse(written)
    assert shape.spec == canonical
    assert MachineShape.parse(canonical) == shape


@pytest.mark.parametrize(("written", "message"), ERRORS)
def test_refusal_message_is_pinned(written: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_policy(written)
    assert str(caught.value) == message


def _suite_policies(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = []
        for key, value in node.items():
            if key == "policies":
                found.extend(value)
            else:
                found.extend(_suite_policies(value))
        return found
    if isinstance(node, list):
        return [spec for item in node for spec in _suite_policies(item)]
    return []


def _stored_specs() -> list[str]:
    specs: set[str] = set()
    for path in (DATA / "snapshots").glob("*.json"):
        specs.update(json.loads(path.read_text(encoding="utf-8")))
    for path in (REPO / "benchmarks" / "suites").glob("*.toml"):
        specs.update(_suite_policies(tomllib.loads(path.read_text(encoding="utf-8"))))
    return sorted(specs)


def test_the_table_holds_every_stored_spec_of_its_day() -> None:
    # The snapshot keys and suite policies of the day the table was taken
    # are all in it (new ones may come; see the next test).
    stored = set(_stored_specs())
    assert len(CANONICAL) >= 170
    assert {"easy", "pc2:interactive=none", "strict-backfill"} <= stored
    assert stored & set(CANONICAL) >= {"fcfs", "easy", "conservative"}


@pytest.mark.parametrize("written", _stored_specs())
def test_every_stored_spec_round_trips(written: str) -> None:
    policy = parse_policy(written)
    assert parse_policy(policy.spec) == policy
    assert parse_policy(policy.spec).spec == policy.spec


# --------------------------------------------------------------------------
# Every policy the declarations allow reads back from its spec
# --------------------------------------------------------------------------

_ORDERS = st.sampled_from(ORDER_NAMES)


@st.composite
def _engine_policies(draw: st.DrawFn) -> Policy:
    order = draw(_ORDERS)
    common = {
        "order": order,
        "oracle": draw(st.booleans()),
        "seed": draw(st.none() | st.integers(0, 10**6)) if order == "random" else None,
    }
    kind = draw(st.sampled_from(("strict", "firstfit", "backfill", "cons", "bp")))
    if kind == "strict":
        return Strict(**common)
    if kind == "firstfit":
        return FirstFit(**common)
    if kind == "cons":
        return Conservative(**common)
    if kind == "bp":
        return BestPackage(**common, limit=draw(st.integers(1, 1000)))
    select = draw(st.sampled_from(SELECT_NAMES))
    largest = select == "largest"
    return Backfill(
        **common,
        depth=draw(st.integers(1, 50)),
        select=select,
        maxwait=draw(st.none() | st.integers(0, 10**7)) if largest else None,
        maxidle=draw(st.none() | st.floats(0, 1)) if largest else None,
    )


@st.composite
def _mallmann_policies(draw: st.DrawFn) -> Mallmann:
    order = draw(_ORDERS)
    variant = draw(st.sampled_from(VARIANTS))
    fairness = draw(st.sampled_from(FAIRNESS_OF[variant]))
    reading = draw(st.sampled_from(READINGS)) if fairness else "profile"
    return Mallmann(
        order=order,
        oracle=draw(st.booleans()),
        seed=draw(st.none() | st.integers(0, 99)) if order == "random" else None,
        variant=variant,
        fairness=fairness,
        reading=reading,
        f=draw(st.none() | st.floats(0, 1)),
        t=draw(st.none() | st.integers(0, 10**7)),
    )


@st.composite
def _shelf_policies(draw: st.DrawFn) -> Policy:
    oracle = draw(st.booleans())
    if draw(st.booleans()):
        return PC2(
            oracle=oracle,
            interactive=tuple(draw(st.sets(st.integers(0, 9), max_size=3))),
            batch_share=draw(st.floats(0, 1)),
        )
    name = draw(st.sampled_from(SHELF_NAMES))
    options = SHELF_ALGORITHMS[name].options
    chosen = {key: draw(st.sampled_from(values)) for key, values in options.items()}
    return Batch(oracle=oracle, inner=ShelfSpec(name, **chosen))


_POLICIES = (
    _engine_policies()
    | _mallmann_policies()
    | _shelf_policies()
    | st.builds(AdaptivePartitioning, guarded=st.booleans())
    | st.builds(EasyScaling, guarded=st.booleans())
)


@settings(max_examples=300, deadline=None)
@given(_POLICIES)
def test_every_declared_policy_reads_back_from_its_spec(policy: Policy) -> None:
    assert parse_policy(policy.spec) == policy
    assert parse_policy(policy.spec).spec == policy.spec
