"""Snapshots of every online policy's schedules: a safety net for refactors.

Each *case* is one policy spec run by :func:`optsched.heuristics.simulate`
(``seed=0``) on one *variant*: a bundled instance (``instances/*.json``) as
it is, or with one option (contiguous allocation, killing at the estimate,
node speeds, SMP nodes, a site calendar, outages, a user limit, job chains,
moldable or malleable jobs). :func:`record` turns the run into plain data:
for every job its start and end (and the start and end of every piece of a
preempted job), the killed jobs, the attempts lost to outages, the producer,
and a sha256 digest of the complete placements (processor sets, moves,
pieces with their processors and switch costs, lost attempts and killed
jobs), so that a change of allocation alone is caught too. A policy that
refuses the variant (``ValueError``) is recorded by its message: refusals
are behaviour too. Every schedule must pass
:func:`optsched.check.check_schedule`.

Known bugs are pinned, not hidden: a simulation that gives up is recorded
as ``error``, so fixing it changes its snapshot on purpose. (The shelf
policies and PC² used to stall on ``kth_50-outages`` and never return on
``kth_50-userlimit``; both were fixed, and their snapshots changed then.)

The stored snapshots are in ``tests/data/snapshots/``, one JSON file per
variant: ``{spec: record}``, sorted keys, one job per line so that a diff
reads well. A job is ``"id": [start, end]``, or the list of its pieces
``"id": [[start, end], [start, end], ...]`` when it was preempted. Each
case is one test (``kth_20-easy``, ``kth_50-contiguous-bestfit-easy``);
it compares the case with its stored record and names the case and the
first job that differs.

Regenerate the snapshots (after a deliberate change of behaviour only)::

    OPTSCHED_UPDATE_SNAPSHOTS=1 .venv/bin/pytest -q tests/core/test_snapshots.py

The tests then write the files when the module's tests end (dropping the
entries of cases that no longer exist) and pass; a schedule that fails the
checker still fails.

Comparing two trees from a script (before and after a refactor): the case
list and the recording are module-level functions, so::

    import sys
    sys.path[:0] = ["tests", "tests/core"]  # support, and this module
    from test_snapshots import cases, record
    records = {case.id: record(case) for case in cases()}

gives every case's record, to dump with :func:`dump_json` and diff.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

# The only coupling to the package's layout: a refactor that moves these
# names changes these imports and nothing else in this file.
from support.paths import DATA, INSTANCES
from support.specs import SHELF_SPECS

from optsched.calendar import Calendar
from optsched.check import check_schedule
from optsched.heuristics import simulate
from optsched.heuristics.rigid.orders import ORDER_NAMES
from optsched.heuristics.spec import valid_names
from optsched.instance import BusyBlock, Instance, Job
from optsched.io import read
from optsched.moldable.speedup import parse_model
from optsched.schedule import Placement, Schedule
from optsched.site.files import apply_site, read_site
from optsched.topology.machines import MachineShape

SITES = INSTANCES / "sites"
SNAPSHOTS = DATA / "snapshots"
UPDATE_VARIABLE = "OPTSCHED_UPDATE_SNAPSHOTS"


def updating() -> bool:
    """Whether this run rewrites the snapshots instead of comparing."""
    return os.environ.get(UPDATE_VARIABLE) == "1"


# -- policies -------------------------------------------------------------------
# Every family with its default spec and its main parameters.
# test_every_policy_name_is_covered checks that no name the spec parser
# accepts is missing here.
STRICT_SPECS = (
    *ORDER_NAMES,  # a dropped order leaves its snapshot stale
    "random:seed=3",
    "strict:order=lpt",
    "spt:oracle",
)
FIRSTFIT_SPECS = ("firstfit", "firstfit:order=lpt")
BACKFILL_SPECS = (
    "easy",
    "easy:order=sjf",
    "easy:oracle",
    "easy:select=submit",
    "easy:select=largest",
    "easy:select=largest-area",
    "easy:select=smallest",
    "easy:select=shortest",
    "easy:select=largest,maxwait=3600",
    "easy:select=largest,maxidle=0.3",
    "easy-sjbf",
    "backfill:depth=3",
    "backfill:depth=2,select=shortest,order=spt",
    "backfill:depth=all",
    "conservative",
    "conservative:oracle",
    "conservative:order=spt",
    "best-package",
    "best-package:limit=8",
)
MALLMANN_SPECS = (
    "mallmann",
    *(
        f"mallmann:variant={variant}"
        for variant in ("ff", "fc", "bs", "bd", "bqd", "bc", "ws", "fc3", "bs3")
    ),
    "mallmann:variant=ff,fairness=1",
    "mallmann:variant=fc,fairness=2",
    "mallmann:variant=bs,fairness=1,reading=shadow",
    "mallmann:variant=bd,fairness=1",
    "mallmann:variant=bqd,fairness=2",
    "mallmann:order=lsf,variant=bs,fairness=1",
    "mallmann:order=lsf,variant=bc,f=0.4",
    "mallmann:order=lsf,variant=ff,t=8h",
    "strict-backfill",
)
COMBINATOR_SPECS = (
    # The canonical kinds need f=; the thesis's names are aliases.
    "blocking:f=fifo",
    "fit:f=fifo",
    "fit:f=fid,placement=lowest",
    "fit2:f=lpt,g=fifo",
    "afkt-backfill:f=spt",
    "optimistic:f=fifo",
    "optimistic:f=random,seed=3",
    "fifo-fit",
    "spt-fit",
    "lpt-fit",
    "fifo-back",
    "spt-back",
    "lpt-back",
    "fifo-optim",
    "spt-optim",
    "lpt-optim",
    "lpt-fifo-optim",
    "lpt-back-fifo",
)
PREEMPTIVE_SPECS = (
    "pbi",
    "pbi:order=literal",
    "pbi:strict=true",
    "pbi:move_back=always",
    "pbi:weights=size",
    "psrs",
    "psrs:weights=one",
    "gang",
    "gang:packing=buddy,quantum=600",
    "gang:packing=best-fit,alternative=off",
    "gang:over_limit=default",
)
MOLDABLE_SPECS = (
    "rescale",
    "rescale:search=hc,budget=50,inner=easy",
    "rescale:search=ga,budget=100,population=10",
    "adaptive",
    "easy-scaling",
    "adaptive:guard=none",
    "easy-scaling:guard=none",
    "deq",
)
RECORDED_SPECS = ("orig", "orig:repair")
ALIAS_SPECS = ("fifo", "sjf", "ljf", "first-fit", "greedy", "bestpackage", "package")
"""Other names of engine policies listed above. They must keep naming the
same policy after a refactor, but that is the parser's business, not the
instance's: they run on the bundled instances only."""

SPECS: tuple[str, ...] = (
    *STRICT_SPECS,
    *FIRSTFIT_SPECS,
    *BACKFILL_SPECS,
    *MALLMANN_SPECS,
    *SHELF_SPECS,
    *COMBINATOR_SPECS,
    *PREEMPTIVE_SPECS,
    *MOLDABLE_SPECS,
    *RECORDED_SPECS,
)
"""The specs run on every variant (refusals recorded)."""


# -- variants -------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """An instance file, an optional change of it, and the engine options.

    Parameters
    ----------
    name
        File stem of the snapshot and first part of the test ids.
    base
        Stem of the bundled instance (``instances/<base>.json``).
    change
        Turns the bundled instance into the variant's (``None``: as it is).
    kill_at_estimate, allocation_rule, migration
        Passed to :func:`~optsched.heuristics.simulate`.
    """

    name: str
    base: str
    change: Callable[[Instance], Instance] | None = None
    kill_at_estimate: bool = False
    allocation_rule: str = "first-fit"
    migration: bool = False

    @property
    def specs(self) -> tuple[str, ...]:
        """The specs run on this variant: :data:`SPECS`, and
        :data:`ALIAS_SPECS` on a bundled instance as it is."""
        plain = self.change is None and self.name == self.base
        return SPECS + ALIAS_SPECS if plain else SPECS

    def instance(self) -> Instance:
        """The variant's instance (built once per process)."""
        return _instance_of(self)


@cache
def _instance_of(variant: Variant) -> Instance:
    instance = read(INSTANCES / f"{variant.base}.json")
    return variant.change(instance) if variant.change is not None else instance


def bundled() -> list[str]:
    """Stems of the bundled instances, byte-identical copies left out.

    ``default.json`` is a byte-for-byte copy of ``kth_20.json`` (see
    instances/README.md): snapshotting both would double that data for
    nothing, so the copy named ``default`` is the one left out. Should it
    ever differ, it gets its own variant.
    """
    seen: set[bytes] = set()
    out = []
    paths = sorted(INSTANCES.glob("*.json"), key=lambda p: (p.stem == "default", p))
    for path in paths:
        content = path.read_bytes()
        if content not in seen:
            seen.add(content)
            out.append(path.stem)
    return sorted(out)


def contiguous(instance: Instance) -> Instance:
    """``instance`` on a contiguous machine (it has no busy blocks)."""
    return instance.replace(machine=instance.machine.with_allocation("contiguous"))


def speeds(instance: Instance) -> Instance:
    """Half the processors twice as fast; each job's work is its run time on
    its size at speed 1 (:meth:`MachineShape.apply`)."""
    half = instance.machine.processors // 2
    rest = instance.machine.processors - half
    return MachineShape.from_options(speeds=f"{half}x1,{rest}x2").apply(instance)


def smp_tight(instance: Instance) -> Instance:
    """Nodes of 10 processors; a job may span no more nodes than it needs."""
    grid = f"{instance.machine.processors // 10}x10"
    return MachineShape.from_options(nodes=grid, tight="0").apply(instance)


def smp_level(instance: Instance) -> Instance:
    """Nodes of 10 processors, one node of slack, network load 2 (run times
    inflated with the span)."""
    grid = f"{instance.machine.processors // 10}x10"
    return MachineShape.from_options(nodes=grid, tight="1", level="2").apply(instance)


def site(name: str) -> Callable[[Instance], Instance]:
    """The calendar of ``instances/sites/<name>.toml`` on the instance (scaled
    to its machine, in its window's time of week)."""

    def change(instance: Instance) -> Instance:
        return apply_site(instance, read_site(SITES / f"{name}.toml"))[0]

    return change


def outages(instance: Instance) -> Instance:
    """Two outages the simulator learns of when they begin: 60 % of the
    machine while the queue is long, then the whole machine for an hour."""
    m = instance.machine.processors
    down = (
        BusyBlock(3_000, 6_000, m * 6 // 10, label="outage"),
        BusyBlock(20_000, 23_600, m, label="outage"),
    )
    return instance.replace(machine=instance.machine.replace(outages=down))


def user_limit(instance: Instance) -> Instance:
    """NQS's user limit alone (no batch hours): 100 processor-hours, below
    the request of the larger jobs, so that users get demoted."""
    calendar = Calendar((), user_limit=100 * 3600)
    return instance.replace(machine=instance.machine.replace(calendar=calendar))


def chains(instance: Instance) -> Instance:
    """Every third job (submit order) follows the job before it: think times
    of 120 s, 0 s and unknown (``None``, counted as 0) in turn."""
    ordered = sorted(instance.jobs, key=lambda job: (job.release, job.id))
    think: tuple[int | None, ...] = (120, 0, None)
    changed: dict[int, Job] = {}
    for k in range(2, len(ordered), 3):
        job, before = ordered[k], ordered[k - 1]
        changed[job.id] = job.replace(
            preceding_job=before.id, think_time=think[(k // 3) % 3]
        )
    return instance.with_jobs(changed.get(job.id, job) for job in instance.jobs)


def both(*changes: Callable[[Instance], Instance]) -> Callable[[Instance], Instance]:
    """The ``changes`` applied in turn (a site's calendar, then a machine
    shape)."""

    def change(instance: Instance) -> Instance:
        for one in changes:
            instance = one(instance)
        return instance

    return change


def moldable(model: str, *, malleable: bool = False) -> Callable[[Instance], Instance]:
    """Every job moldable (malleable) with the speed-up ``model``
    (:mod:`optsched.moldable.speedup`), its request kept as one of its modes."""

    def change(instance: Instance) -> Instance:
        return parse_model(model).apply(instance, malleable=malleable)

    return change


def variants() -> list[Variant]:
    """The bundled instances as they are, then the option variants."""
    out = [Variant(stem, stem) for stem in bundled()]
    out += [
        # kth_50 has no busy blocks (a contiguous machine needs offsets)
        # and is contended enough for first and best fit to differ.
        Variant("kth_50-contiguous", "kth_50", contiguous),
        Variant(
            "kth_50-contiguous-bestfit",
            "kth_50",
            contiguous,
            allocation_rule="best-fit",
        ),
        Variant("kth_50-contiguous-migration", "kth_50", contiguous, migration=True),
        Variant(
            "lublin256_30-contiguous-bestfit",
            "lublin256_30",
            contiguous,
            allocation_rule="best-fit",
        ),
        # kth_20 and hpc2n_40 have jobs that overrun their estimates.
        Variant("kth_20-kill", "kth_20", kill_at_estimate=True),
        Variant("hpc2n_40-kill", "hpc2n_40", kill_at_estimate=True),
        Variant("kth_20-speeds", "kth_20", speeds),
        Variant("kth_20-smp-tight", "kth_20", smp_tight),
        Variant("kth_50-smp-level", "kth_50", smp_level),
        Variant("kth_50-paragon", "kth_50", site("paragon")),
        Variant("kth_50-t3e", "kth_50", site("t3e")),
        Variant("kth_50-outages", "kth_50", outages),
        Variant("kth_50-userlimit", "kth_50", user_limit),
        Variant("kth_50-chains", "kth_50", chains),
        # Site rules on the node simulator (speeds, SMP nodes).
        Variant("kth_50-t3e-speeds", "kth_50", both(site("t3e"), speeds)),
        Variant("kth_50-paragon-smp-level", "kth_50", both(site("paragon"), smp_level)),
        Variant("kth_50-userlimit-smp-tight", "kth_50", both(user_limit, smp_tight)),
        Variant("kth_20-moldable", "kth_20", moldable("linear")),
        Variant("kth_50-moldable-amdahl", "kth_50", moldable("amdahl:f=0.1")),
        Variant("kth_20-malleable", "kth_20", moldable("linear", malleable=True)),
        # Moldable jobs on the node simulator (modes read on their processors).
        Variant(
            "kth_20-moldable-speeds", "kth_20", both(moldable("amdahl:f=0.05"), speeds)
        ),
        Variant(
            "kth_50-moldable-smp-level",
            "kth_50",
            both(moldable("amdahl:f=0.05"), smp_level),
        ),
    ]
    return out


# -- cases ----------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One policy spec on one variant."""

    variant: Variant
    spec: str

    @property
    def id(self) -> str:
        """``<variant>-<spec>``, e.g. ``kth_20-easy``."""
        return f"{self.variant.name}-{self.spec}"


def cases() -> list[Case]:
    """Every case: variants in order, each with its specs in order."""
    return [Case(variant, spec) for variant in variants() for spec in variant.specs]


def run(case: Case) -> Schedule:
    """The schedule of ``case`` (``ValueError`` when the policy refuses)."""
    variant = case.variant
    return simulate(
        variant.instance(),
        case.spec,
        seed=0,
        kill_at_estimate=variant.kill_at_estimate,
        allocation_rule=variant.allocation_rule,
        migration=variant.migration,
    ).schedule


def record(case: Case) -> dict[str, Any]:
    """What the snapshot of ``case`` holds (plain JSON data).

    Returns
    -------
    dict
        ``{"refused": message}`` when the policy refuses the variant
        (``ValueError``); ``{"error": "RuntimeError: message"}`` when the
        engine gives up (a stalled simulation: a known bug, pinned so that
        a refactor keeps it until it is fixed on purpose); else ``jobs``
        (``{id: [start, end]}``, or ``{id: [[start, end], ...]}`` with the
        pieces of a preempted job; ids as strings), ``killed``, ``lost``
        (``{id: [[start, end], ...]}``, the attempts), ``producer``,
        ``digest`` (sha256 of :func:`canonical`) and, only if the checker
        objects, ``violations`` (their messages).
    """
    try:
        schedule = run(case)
    except ValueError as error:
        return {"refused": str(error)}
    except RuntimeError as error:
        return {"error": f"{type(error).__name__}: {error}"}
    out: dict[str, Any] = {
        "producer": schedule.producer,
        "jobs": {
            str(job): _times(placement)
            for job, placement in sorted(schedule.placements.items())
        },
        "killed": sorted(schedule.killed),
        "lost": {
            str(job): [[run.start, run.end] for run in runs]
            for job, runs in sorted(schedule.lost.items())
        },
        "digest": hashlib.sha256(canonical(schedule).encode()).hexdigest(),
    }
    violations = check_schedule(case.variant.instance(), schedule)
    if violations:
        out["violations"] = [str(v) for v in violations]
    return out


def _times(placement: Placement) -> list[Any]:
    # Short lists rather than {"start": ..., "end": ...}: the snapshots
    # hold some 100,000 jobs, and half the bytes are a budget worth keeping.
    if placement.pieces:
        return [[piece.start, piece.end] for piece in placement.pieces]
    return [placement.start, placement.end]


def _runs(processors: Sequence[int] | None) -> list[list[int]] | None:
    """Processor indices as ``[first, last]`` runs, in the order given (a
    reordering of the same set is a change too)."""
    if processors is None:
        return None
    runs: list[list[int]] = []
    for p in processors:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return runs


def canonical(schedule: Schedule) -> str:
    """Everything a schedule says, as one JSON text (what the digest hashes).

    Built from the public fields only, never from reprs, so that moving the
    classes to other modules leaves it unchanged.
    """

    def placement(p: Placement) -> dict[str, Any]:
        return {
            "start": p.start,
            "end": p.end,
            "processors": _runs(p.processors),
            "moves": [[time, _runs(procs)] for time, procs in p.moves],
            "pieces": [
                [piece.start, piece.end, _runs(piece.processors), piece.switch]
                for piece in p.pieces
            ],
        }

    data = {
        "producer": schedule.producer,
        "placements": [
            [job, placement(p)] for job, p in sorted(schedule.placements.items())
        ],
        "killed": sorted(schedule.killed),
        "lost": [
            [job, [placement(p) for p in runs]]
            for job, runs in sorted(schedule.lost.items())
        ],
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


# -- storage --------------------------------------------------------------------
def dump_json(value: Any) -> str:
    """``value`` as JSON with sorted keys, one job per line.

    The dicts of the first three levels (file, record, ``jobs`` and
    ``lost``) that hold dicts or lists are written one key per line;
    anything else on one line.
    """

    def dump(item: Any, depth: int) -> str:
        if (
            isinstance(item, dict)
            and depth < 3
            and any(isinstance(v, dict | list) for v in item.values())
        ):
            indent = " " * depth
            lines = [
                f"{indent} {json.dumps(str(key))}: {dump(item[key], depth + 1)}"
                for key in sorted(item)
            ]
            return "{\n" + ",\n".join(lines) + "\n" + indent + "}"
        return json.dumps(item, sort_keys=True, ensure_ascii=False)

    return dump(value, 0) + "\n"


def snapshot_path(variant: Variant) -> Path:
    """The file holding ``variant``'s records."""
    return SNAPSHOTS / f"{variant.name}.json"


@cache
def stored(name: str) -> dict[str, Any]:
    """The records of variant ``name`` on disk (``{}`` without a file).

    Cached: in update mode the tests change this dict in place and
    :func:`save` writes it back once, so each file is read once per run.
    """
    path = SNAPSHOTS / f"{name}.json"
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def save(variant: Variant) -> None:
    """Write ``variant``'s records, dropping those of specs no longer run
    (a run of some of the tests keeps the others' records)."""
    records = stored(variant.name)
    for spec in [spec for spec in records if spec not in variant.specs]:
        del records[spec]
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    snapshot_path(variant).write_text(dump_json(records), encoding="utf-8")


def difference(case_id: str, before: dict[str, Any], now: dict[str, Any]) -> str:
    """What differs between a stored record and a new one, first job first
    (jobs in id order), as one message naming the case."""
    if not ("jobs" in before and "jobs" in now):
        return (
            f"{case_id}: stored {_outcome(before)}; now {_outcome(now)}"
            if before != now
            else ""
        )
    jobs_before, jobs_now = before.get("jobs", {}), now.get("jobs", {})
    for job in sorted({*jobs_before, *jobs_now}, key=int):
        was, is_ = jobs_before.get(job), jobs_now.get(job)
        if was != is_:
            return f"{case_id}: first differing job {job}: stored {was}, now {is_}"
    for key in ("killed", "lost", "producer", "violations", "digest"):
        if before.get(key) != now.get(key):
            hint = (
                " (every job's start and end agree: processor sets, moves, "
                "piece processors or switch costs changed)"
                if key == "digest"
                else ""
            )
            return (
                f"{case_id}: {key} differs{hint}: stored {before.get(key)!r}, "
                f"now {now.get(key)!r}"
            )
    return ""


def _outcome(data: dict[str, Any]) -> str:
    for key in ("refused", "error"):
        if key in data:
            return f"{key} ({data[key]})"
    return f"a schedule of {len(data.get('jobs', {}))} jobs"


# -- tests ----------------------------------------------------------------------
ALL_CASES = cases()
_CHANGED: dict[str, Variant] = {}
"""Variants whose records this run changed (update mode), by name."""


@pytest.fixture(scope="module", autouse=True)
def _write_updates() -> Iterator[None]:
    # One write per changed file when the module's tests end, instead of
    # rewriting a whole file after each of its cases.
    yield
    for variant in _CHANGED.values():
        save(variant)
    _CHANGED.clear()


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.id for case in ALL_CASES])
def test_snapshot(case: Case) -> None:
    now = record(case)
    if updating():
        stored(case.variant.name)[case.spec] = now
        _CHANGED[case.variant.name] = case.variant
    else:
        before = stored(case.variant.name).get(case.spec)
        assert before is not None, (
            f"{case.id}: no stored snapshot in {snapshot_path(case.variant)}; "
            f"run with {UPDATE_VARIABLE}=1 to record it"
        )
        assert before == now, difference(case.id, before, now)
    assert "violations" not in now, (
        f"{case.id}: the checker rejects the schedule: {now['violations'][:3]}"
    )


def test_no_stale_snapshots() -> None:
    """Every stored file and record belongs to a case (renamed or dropped
    cases leave none behind); in update mode stale files are removed."""
    known = {variant.name: variant for variant in variants()}
    stale = sorted(path for path in SNAPSHOTS.glob("*.json") if path.stem not in known)
    if updating():
        for path in stale:
            path.unlink()
        return
    assert not stale, f"snapshot files of no variant: {[p.name for p in stale]}"
    extra = [
        f"{name}-{spec}"
        for name, variant in sorted(known.items())
        for spec in stored(name)
        if spec not in variant.specs
    ]
    assert not extra, f"stored records of no case: {extra[:10]}"


def test_every_policy_name_is_covered() -> None:
    """Each name the spec parser accepts (policies, aliases, presets,
    generic names) starts some spec of :data:`SPECS`: a policy added later
    must be added here too."""
    names = {name.strip() for name in valid_names().split(",")}
    used = {spec.partition(":")[0] for spec in SPECS + ALIAS_SPECS}
    assert names - used == set(REPLAYS)


REPLAYS = ("schedule",)
"""Names that replay a schedule file instead of scheduling (a snapshot of
one would record the file): tests/plugins/test_bring_a_schedule.py checks
them against hand-built schedules."""
