"""Composition of instance features: builders and the stages of a pipeline.

The composition matrix (``benchmarks/composition/matrix.py``) asks which
combinations of features work end to end. A *feature* is a name of
:data:`FEATURES`; ten of them change the instance (:data:`INSTANCE_FEATURES`)
and two are options of the simulator (:data:`ENGINE_OPTIONS`). Each instance
feature has a builder (:data:`BUILDERS`) that turns an instance into one with
the feature; several features compose by applying their builders to the base
instance (:func:`base_instance`) in the fixed order :data:`APPLY_ORDER`
(:func:`build_instance`).

:func:`run_pipeline` runs the stages of :data:`STAGES` on one combination and
returns an :class:`Outcome` per stage:

``build``
    The builders (the instance's own validation may refuse a combination).
``simulate``
    :func:`optsched.heuristics.simulate` with every policy of
    :func:`policies_for`, with the engine options asked for; ``refused``
    as soon as one policy refuses (the details say which, and whether
    others ran).
``check``
    :func:`optsched.check.check_schedule` on every simulated schedule.
``bound-bounds-only``, ``bound-cpsat``
    :func:`optsched.models.solve` with that back-end for ``cmax`` and
    ``wct``: a finite lower bound and an upper bound whose schedule passes
    the checker are needed.
``gap``
    The analysis pipeline of ``optsched gap`` as a library call
    (:func:`optsched.bench.analysis.analyse_instance`) with
    :func:`gap_policies_for`: every reference interval must be finite.
``consistency``
    Every lower bound found (bound stages, gap references) against every
    complete checked schedule (bound stages, simulated policies without a
    killed job): a lower bound above one is a wrong answer.

The bound stages pass the pipeline's starting schedules
(:func:`optsched.analysis.gap.heuristic_incumbents`), as ``optsched bound`` and
``optsched gap`` do; the same solve without them (``solve()`` called alone)
is kept as a detail line of the stage.

An outcome is ``ok``, ``refused`` (a ``ValueError`` raised on purpose by an
optsched ``raise`` statement: a documented refusal, with its message),
``failed`` (anything else: an exception leaking from a library or raised
implicitly, a missing bound, a checker violation, a lower bound above a
checked schedule, an ``optsched gap`` task failure), or ``n/a`` (the stage
does not apply: nothing was built, nothing was simulated, or the ``gap``
pipeline has no such engine option). A combination *works end to end* when
no stage is ``refused`` or ``failed`` (:func:`works`; with ``strict=False``
a simulate stage refused by some policies while others ran counts as
working).

:func:`run_cli_pipeline` runs the same stages through the command line
(``click.testing.CliRunner`` on :func:`optsched.cli.main`) on the same
instance written as a native JSON file, to show what a user sees.
"""

from __future__ import annotations

import dataclasses
import math
import re
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.calendar import Calendar
from optsched.instance import BusyBlock, Instance, Machine
from optsched.io.native import read_native
from optsched.moldable.speedup import parse_model
from optsched.site.files import apply_site, read_site
from optsched.topology.machines import MachineShape
from support.paths import INSTANCES

BASE_FILE = INSTANCES / "kth_20.json"
"""Jobs of the base instance (the first :data:`BASE_JOBS` of them)."""
BLOCKS_FILE = INSTANCES / "kth_20_recorded.json"
"""Busy blocks of the ``busy-blocks`` feature (a recorded initial state)."""
SITE_FILE = INSTANCES / "sites" / "t3e.toml"
"""Site calendar of the ``calendar`` feature (scaled to the machine)."""
BASE_JOBS = 12
"""Jobs kept from :data:`BASE_FILE`: small enough for the exact models."""

FEATURES: tuple[str, ...] = (
    "contiguous",
    "busy-blocks",
    "calendar",
    "outages",
    "user-limit",
    "chains",
    "moldable",
    "malleable",
    "speeds",
    "smp",
    "kill-at-estimate",
    "migration",
)
"""Every feature name, in display order."""
ENGINE_OPTIONS: tuple[str, ...] = ("kill-at-estimate", "migration")
"""Features that are options of the simulator, not of the instance."""
INSTANCE_FEATURES: tuple[str, ...] = tuple(
    f for f in FEATURES if f not in ENGINE_OPTIONS
)
"""Features that change the instance (each has a builder)."""
APPLY_ORDER: tuple[str, ...] = (
    "contiguous",
    "busy-blocks",
    "outages",
    "calendar",
    "user-limit",
    "chains",
    "moldable",
    "malleable",
    "speeds",
    "smp",
)
"""The order in which builders apply: the allocation first (busy blocks and
outages then get processor ranges on a contiguous machine), the site
calendar before the user limit (which goes into the calendar), the machine
shape (speeds, SMP nodes) last, as ``--speeds``/``--nodes`` do."""
IMPLIED: Mapping[str, tuple[str, ...]] = {"migration": ("contiguous",)}
"""Features that need others: migration compacts jobs on a contiguous
machine only, so ``migration`` runs on one."""

STAGES: tuple[str, ...] = (
    "build",
    "simulate",
    "check",
    "bound-bounds-only",
    "bound-cpsat",
    "gap",
    "consistency",
)
"""The stages of :func:`run_pipeline`, in order."""
OBJECTIVES: tuple[str, ...] = ("cmax", "wct")
"""Objectives of the bound and gap stages."""

BASE_POLICIES: tuple[str, ...] = ("fcfs", "easy", "conservative", "fit:f=fifo")
"""Policies simulated on every combination."""
MOLDABLE_POLICIES: tuple[str, ...] = ("adaptive", "easy-scaling")
"""Policies added for moldable (and malleable) jobs."""
MALLEABLE_POLICIES: tuple[str, ...] = ("deq",)
"""Policies added for malleable jobs."""

OUTAGES: tuple[BusyBlock, ...] = (
    BusyBlock(10_000, 12_000, 22, label="outage 1"),
    BusyBlock(40_000, 41_000, 22, label="outage 2"),
)
"""Outages of the ``outages`` feature (processor counts; ranges are chosen
on a contiguous machine). They fall while 80-processor jobs run, so the
simulator kills and requeues jobs; 22 processors fit beside the recorded
busy blocks (78 processors at time 0) on the 100-processor machine."""
CHAINS: Mapping[int, tuple[int, int]] = {
    2816: (2815, 60),
    2819: (2816, 0),
    2822: (2821, 30),
    2826: (2820, 120),
}
"""Job id to (preceding job, think time) of the ``chains`` feature."""
USER_LIMIT = 1_500_000
"""Processor-seconds of the ``user-limit`` feature: one 80 x 14,400 s job of
user 3 fits, two do not, so the limit binds."""
SPEEDUP_MODEL = "amdahl:f=0.05"
"""Speed-up model of the ``moldable`` and ``malleable`` features."""
SPEEDS: tuple[float, ...] = (1.0,) * 50 + (2.0,) * 50
"""Processor speeds of the ``speeds`` feature."""
SMP_NODES = (25, 4)
"""Nodes of the ``smp`` feature: 25 nodes of 4 processors, span slack 1,
network level 1."""

OK, REFUSED, FAILED, NA = "ok", "refused", "failed", "n/a"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one stage gave.

    Attributes
    ----------
    status
        ``"ok"``, ``"refused"``, ``"failed"`` or ``"n/a"`` (module notes).
    message
        Why (for ``ok``: a short summary of the values found).
    details
        One line per policy, objective or call of the stage.
    seconds
        Wall-clock time of the stage.
    """

    status: str
    message: str = ""
    details: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The outcome as plain JSON data.

        Returns
        -------
        dict
            ``status``, ``message``, ``details`` and ``seconds``.
        """
        return {
            "status": self.status,
            "message": self.message,
            "details": dict(self.details),
            "seconds": round(self.seconds, 3),
        }


# --------------------------------------------------------------------------
# Feature builders
# --------------------------------------------------------------------------


def base_instance(jobs: int = BASE_JOBS) -> Instance:
    """The first ``jobs`` jobs of :data:`BASE_FILE` on its 100 processors.

    Parameters
    ----------
    jobs
        Number of jobs kept (submit order).

    Returns
    -------
    Instance
        Rigid jobs on a flat ``any`` machine without blocks; the source (and
        its window shift, which places the site calendar) is the file's.
    """
    instance = read_native(BASE_FILE).instance
    return instance.with_jobs(instance.jobs[:jobs])


def _first_fit(machine: Machine, blocks: Iterable[BusyBlock]) -> tuple[BusyBlock, ...]:
    """``blocks`` with processor ranges on a contiguous ``machine``: each
    takes the lowest range free of the machine's blocks and outages and of
    the blocks placed before it over its interval; unchanged on an ``any``
    machine."""
    if machine.allocation != "contiguous":
        return tuple(dataclasses.replace(b, offset=None) for b in blocks)
    placed = [b for b in (*machine.unavailable, *machine.outages)]
    out = []
    for block in blocks:
        busy = sorted(
            (p.offset or 0, (p.offset or 0) + p.size)
            for p in placed
            if p.start < block.end and block.start < p.end
        )
        offset = 0
        for low, high in busy:
            if offset + block.size <= low:
                break
            offset = max(offset, high)
        if offset + block.size > machine.processors:
            raise ValueError(f"no free range for {block.label or 'a block'}")
        block = dataclasses.replace(block, offset=offset)
        placed.append(block)
        out.append(block)
    return tuple(out)


def _with_placed(
    instance: Instance, kind: str, blocks: Iterable[BusyBlock]
) -> Instance:
    """``instance`` with ``blocks`` added to its machine's ``kind`` (busy
    blocks ``"unavailable"`` or ``"outages"``), placed by :func:`_first_fit`."""
    machine = instance.machine
    placed = _first_fit(machine, blocks)
    return instance.replace(
        machine=machine.replace(**{kind: (*getattr(machine, kind), *placed)})
    )


# Every builder takes an instance and returns it with one feature added,
# everything else kept; the docstrings say what each one needs of its input.


def with_contiguous(instance: Instance) -> Instance:
    """Contiguous allocation (:meth:`~optsched.instance.Machine.with_allocation`);
    blocks need ranges already, so this applies first."""
    return instance.replace(machine=instance.machine.with_allocation("contiguous"))


def with_busy_blocks(instance: Instance) -> Instance:
    """The busy blocks of :data:`BLOCKS_FILE` (jobs running at time 0) on a
    100-processor machine, with first-fit ranges on a contiguous one."""
    recorded = read_native(BLOCKS_FILE).instance.machine.unavailable
    return _with_placed(instance, "unavailable", recorded)


def with_outages(instance: Instance) -> Instance:
    """The outages :data:`OUTAGES` (killing and requeueing in the simulator)
    on a 100-processor machine, with first-fit ranges on a contiguous one."""
    return _with_placed(instance, "outages", OUTAGES)


def with_calendar(instance: Instance) -> Instance:
    """The site calendar of :data:`SITE_FILE`, scaled to the machine and
    shifted by the window (:func:`optsched.site.files.apply_site`)."""
    return apply_site(instance, read_site(SITE_FILE))[0]


def with_user_limit(instance: Instance) -> Instance:
    """NQS's per-user limit :data:`USER_LIMIT` in the machine's calendar (an
    empty one if it had none; the periods of one it has are kept)."""
    machine = instance.machine
    calendar = machine.calendar or Calendar(())
    calendar = dataclasses.replace(calendar, user_limit=USER_LIMIT)
    return instance.replace(machine=machine.replace(calendar=calendar))


def with_chains(instance: Instance) -> Instance:
    """Job chains :data:`CHAINS` (SWF fields 17/18: predecessor, think
    time); chains between jobs the instance does not hold are left out."""
    ids = {job.id for job in instance.jobs}
    return instance.with_jobs(
        job.replace(preceding_job=CHAINS[job.id][0], think_time=CHAINS[job.id][1])
        if job.id in CHAINS and CHAINS[job.id][0] in ids
        else job
        for job in instance.jobs
    )


def with_moldable(instance: Instance) -> Instance:
    """Every job moldable under :data:`SPEEDUP_MODEL` (as ``--moldable``),
    its request kept as one of its modes."""
    return parse_model(SPEEDUP_MODEL).apply(instance)


def with_malleable(instance: Instance) -> Instance:
    """Every job malleable under :data:`SPEEDUP_MODEL` (``--moldable
    --malleable``), moldable or not before."""
    return parse_model(SPEEDUP_MODEL).apply(instance, malleable=True)


def with_speeds(instance: Instance) -> Instance:
    """Processor speeds :data:`SPEEDS` (as ``--speeds 50x1,50x2``) on a
    100-processor machine; each job keeps its run time on ``size``
    processors of speed 1."""
    return MachineShape(speeds=SPEEDS).apply(instance)


def with_smp(instance: Instance) -> Instance:
    """SMP nodes :data:`SMP_NODES` (as ``--nodes 25x4 --tight 1 --level 1``)
    on a 100-processor machine: a span limit and a communication cost."""
    return MachineShape(nodes=SMP_NODES, tight=1, level=1).apply(instance)


BUILDERS: Mapping[str, Callable[[Instance], Instance]] = {
    "contiguous": with_contiguous,
    "busy-blocks": with_busy_blocks,
    "outages": with_outages,
    "calendar": with_calendar,
    "user-limit": with_user_limit,
    "chains": with_chains,
    "moldable": with_moldable,
    "malleable": with_malleable,
    "speeds": with_speeds,
    "smp": with_smp,
}
"""Instance feature name to its builder: a function of an instance that
returns the same instance with that feature added."""


def normalise(features: Iterable[str]) -> tuple[str, ...]:
    """The features asked for, checked, without repeats, in display order.

    Parameters
    ----------
    features
        Names of :data:`FEATURES`.

    Returns
    -------
    tuple of str
        The same features in :data:`FEATURES` order.

    Raises
    ------
    ValueError
        An unknown feature name.
    """
    features = tuple(features)
    unknown = sorted(set(features) - set(FEATURES))
    if unknown:
        raise ValueError(
            f"unknown feature {unknown[0]!r}; features: {', '.join(FEATURES)}"
        )
    return tuple(f for f in FEATURES if f in features)


def instance_features(features: Iterable[str]) -> tuple[str, ...]:
    """The instance features a combination builds, implied ones included.

    Parameters
    ----------
    features
        Names of :data:`FEATURES`.

    Returns
    -------
    tuple of str
        Instance features in :data:`APPLY_ORDER`.
    """
    wanted = set(normalise(features))
    for feature in tuple(wanted):
        wanted.update(IMPLIED.get(feature, ()))
    return tuple(f for f in APPLY_ORDER if f in wanted)


def build_instance(features: Iterable[str]) -> Instance:
    """The base instance with every feature's builder applied in order.

    Parameters
    ----------
    features
        Names of :data:`FEATURES` (engine options add nothing here but
        what they imply).

    Returns
    -------
    Instance
        The composed instance, named after its features.

    Raises
    ------
    ValueError
        A combination the instance model refuses (e.g. speeds with busy
        blocks).
    """
    chosen = instance_features(features)
    instance = base_instance()
    for feature in chosen:
        instance = BUILDERS[feature](instance)
    name = "+".join(normalise(features)) or "base"
    return instance.replace(name=f"composition-{name}")


def policies_for(features: Iterable[str]) -> tuple[str, ...]:
    """The online policies simulated on a combination.

    Parameters
    ----------
    features
        Names of :data:`FEATURES`.

    Returns
    -------
    tuple of str
        :data:`BASE_POLICIES`, with :data:`MOLDABLE_POLICIES` for moldable
        or malleable jobs and :data:`MALLEABLE_POLICIES` for malleable ones.
    """
    return _by_job_kind(features, BASE_POLICIES, MOLDABLE_POLICIES, MALLEABLE_POLICIES)


def gap_policies_for(features: Iterable[str]) -> tuple[str, ...]:
    """The short policy list of the gap stage.

    Parameters
    ----------
    features
        Names of :data:`FEATURES`.

    Returns
    -------
    tuple of str
        ``fcfs`` and ``easy``, with ``adaptive`` for moldable jobs and
        ``deq`` for malleable ones.
    """
    return _by_job_kind(features, ("fcfs", "easy"), ("adaptive",), ("deq",))


def _by_job_kind(
    features: Iterable[str],
    rigid: tuple[str, ...],
    moldable: tuple[str, ...],
    malleable: tuple[str, ...],
) -> tuple[str, ...]:
    """``rigid``, then ``moldable`` for moldable or malleable jobs, then
    ``malleable`` for malleable ones."""
    chosen = set(normalise(features))
    policies = rigid
    if chosen & {"moldable", "malleable"}:
        policies += moldable
    if "malleable" in chosen:
        policies += malleable
    return policies


def _gap_policies_run(features: Iterable[str], accepted: Iterable[str]) -> list[str]:
    """The gap stage's policies that the simulate stage saw run (all of
    them when none did)."""
    accepted = set(accepted)
    policies = [p for p in gap_policies_for(features) if p in accepted]
    return policies or list(gap_policies_for(features))


# --------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------


def first_line(text: object, limit: int = 300) -> str:
    """The first non-empty line of ``text``, cut at ``limit`` characters.

    Parameters
    ----------
    text
        Any object (its ``str``).
    limit
        Longest result.

    Returns
    -------
    str
        One line.
    """
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def source_root() -> Path:
    """The folder holding the imported ``optsched`` (and its ``models/`` and
    ``heuristics/``): the repository, or an export of one commit put first
    on ``PYTHONPATH``.

    Returns
    -------
    Path
        The parent of the ``optsched`` package, symbolic links resolved.
    """
    import optsched

    return Path(optsched.__file__).resolve().parent.parent


def _ours(filename: str) -> bool:
    """Whether ``filename`` is optsched source (not the virtualenv, not a
    library)."""
    path = Path(filename).resolve()
    return source_root() in path.parents and ".venv" not in path.parts


def _innermost(error: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of ``error``'s traceback (``None`` without one)."""
    frames = traceback.extract_tb(error.__traceback__)
    return frames[-1] if frames else None


def deliberate_refusal(error: BaseException) -> bool:
    """Whether ``error`` is a refusal: a ``ValueError`` raised by an
    optsched ``raise`` statement.

    A ``ValueError`` raised implicitly (``max([])``, unpacking, a library's
    own check) is a leak, not a refusal.

    Parameters
    ----------
    error
        A caught exception.

    Returns
    -------
    bool
        ``True`` for a documented refusal.
    """
    last = _innermost(error)
    if not isinstance(error, ValueError) or last is None:
        return False
    return _ours(last.filename) and (last.line or "").lstrip().startswith("raise")


def where_raised(error: BaseException) -> str:
    """``file:line`` of the innermost frame of ``error``'s traceback.

    Parameters
    ----------
    error
        A caught exception.

    Returns
    -------
    str
        A path relative to the repository when it lies in it.
    """
    last = _innermost(error)
    if last is None:
        return "?"
    path = Path(last.filename).resolve()
    root = source_root()
    shown = path.relative_to(root) if root in path.parents else path
    return f"{shown}:{last.lineno}"


def outcome_of_error(error: BaseException) -> Outcome:
    """``refused`` for a deliberate ``ValueError``, ``failed`` otherwise.

    Parameters
    ----------
    error
        A caught exception.

    Returns
    -------
    Outcome
        With the error's first line (and, when failed, its type and where
        it was raised).
    """
    if deliberate_refusal(error):
        return Outcome(REFUSED, first_line(error))
    return Outcome(
        FAILED,
        f"{type(error).__name__}: {first_line(error)} (at {where_raised(error)})",
    )


def combine(parts: Mapping[str, Outcome]) -> Outcome:
    """One stage's outcome from the outcomes of its calls.

    ``failed`` if any call failed, else ``refused`` if any was refused, else
    ``ok`` (``n/a`` without calls). The message is that of the first call
    with the stage's status, prefixed with the call's name.

    Parameters
    ----------
    parts
        Call name (policy, objective) to its outcome.

    Returns
    -------
    Outcome
        The stage's outcome, with one detail line per call.
    """
    details = {
        name: f"{o.status}: {o.message}" if o.message else o.status
        for name, o in parts.items()
    }
    for status in (FAILED, REFUSED):
        bad = [(name, o) for name, o in parts.items() if o.status == status]
        if bad:
            names = ", ".join(name for name, _ in bad)
            return Outcome(status, f"{names}: {bad[0][1].message}", details)
    if not parts:
        return Outcome(NA, "nothing to run", details)
    summary = "; ".join(f"{n}: {o.message}" for n, o in parts.items() if o.message)
    return Outcome(OK, summary, details)


def refused_policies(outcomes: Mapping[str, Outcome]) -> tuple[str, ...]:
    """The policies the simulate stage saw refuse the combination.

    Parameters
    ----------
    outcomes
        The outcome of every stage (:func:`run_pipeline`).

    Returns
    -------
    tuple of str
        Policy specs, in the order simulated.
    """
    details = outcomes["simulate"].details
    return tuple(p for p, text in details.items() if text.startswith(REFUSED))


def works(outcomes: Mapping[str, Outcome], *, strict: bool = True) -> bool:
    """Whether a combination works end to end: no stage refused or failed.

    Parameters
    ----------
    outcomes
        The outcome of every stage (:func:`run_pipeline`).
    strict
        ``True``: every policy simulated must take the combination.
        ``False``: policies that refuse it are left out, as long as one
        policy ran (a simulate stage refused by some policies only counts).

    Returns
    -------
    bool
        ``True`` when every stage is ``ok`` or does not apply.
    """
    for stage, outcome in outcomes.items():
        if outcome.status in (OK, NA):
            continue
        partly = stage == "simulate" and outcome.status == REFUSED
        if partly and not strict and OK in outcome.details.values():
            continue
        return False
    return True


# --------------------------------------------------------------------------
# The pipeline
# --------------------------------------------------------------------------


def _timed(call: Callable[[], Outcome]) -> Outcome:
    began = time.perf_counter()
    try:
        outcome = call()
    except Exception as error:  # every leak is an outcome, never a crash
        outcome = outcome_of_error(error)
    return dataclasses.replace(outcome, seconds=time.perf_counter() - began)


def _simulate(
    instance: Instance, features: tuple[str, ...]
) -> tuple[Outcome, dict[str, Any]]:
    """Every policy of the combination; the schedules of those that ran."""
    from optsched.heuristics import simulate

    options = {
        "kill_at_estimate": "kill-at-estimate" in features,
        "migration": "migration" in features,
    }
    parts: dict[str, Outcome] = {}
    schedules: dict[str, Any] = {}
    began = time.perf_counter()
    for policy in policies_for(features):
        try:
            result = simulate(instance, policy, **options)
        except Exception as error:
            parts[policy] = outcome_of_error(error)
            continue
        schedules[policy] = result.schedule
        parts[policy] = Outcome(OK)
    outcome = combine(parts)
    if outcome.status == OK:
        outcome = dataclasses.replace(outcome, message=f"{len(schedules)} policies")
    return dataclasses.replace(outcome, seconds=time.perf_counter() - began), schedules


def _check(instance: Instance, schedules: Mapping[str, Any]) -> Outcome:
    from optsched.check import check_schedule

    if not schedules:
        return Outcome(NA, "no simulated schedule")
    parts: dict[str, Outcome] = {}
    for policy, schedule in schedules.items():
        try:
            violations = check_schedule(instance, schedule)
        except Exception as error:
            parts[policy] = outcome_of_error(error)
            continue
        if violations:
            parts[policy] = Outcome(
                FAILED,
                f"{len(violations)} violation(s), first: {first_line(violations[0])}",
            )
        else:
            parts[policy] = Outcome(OK)
    outcome = combine(parts)
    if outcome.status == OK:
        outcome = dataclasses.replace(outcome, message=f"{len(schedules)} valid")
    return outcome


Values = dict[tuple[str, str], tuple[float | None, float | None]]
"""``(source, objective label)`` to ``(lower bound, checked upper bound)``."""


def _bound_one(
    instance: Instance,
    objective: str,
    backend: str,
    time_limit: float,
    incumbents: Sequence[Any],
) -> tuple[Outcome, tuple[float | None, float | None]]:
    """One solve; its outcome and ``(lower, checked upper)``."""
    from optsched.check import check_schedule
    from optsched.models import solve
    from optsched.objective import Objective

    parsed = Objective.parse(objective)
    result = solve(
        instance,
        parsed,
        backend=backend,
        time_limit=time_limit,
        workers=1,
        incumbents=incumbents,
    )
    lower = result.lower_bound
    upper = None
    why = f" ({first_line(result.error)})" if result.error else ""
    if result.schedule is not None:
        violations = check_schedule(instance, result.schedule)
        if violations:
            return Outcome(
                FAILED,
                f"its schedule breaks the checker ({len(violations)} "
                f"violation(s)), first: {first_line(violations[0])}",
            ), (lower, None)
        upper = parsed.value(instance, result.schedule)
    found = (lower, upper)
    if lower is None or not math.isfinite(lower):
        return Outcome(
            FAILED, f"no finite lower bound, status {result.status.value}{why}"
        ), found
    if upper is None:
        return Outcome(
            FAILED, f"no upper bound (no schedule), status {result.status.value}{why}"
        ), found
    if lower > upper * (1 + 1e-9):
        return Outcome(
            FAILED, f"lower bound {lower:g} above its checked schedule's {upper:g}"
        ), found
    if result.objective is not None and not math.isclose(
        result.objective, upper, rel_tol=1e-9
    ):
        return Outcome(
            FAILED,
            f"reports {result.objective:g} but its schedule measures {upper:g}",
        ), found
    return Outcome(OK, f"[{lower:g}, {upper:g}] {result.status.value}"), found


def _bound(
    instance: Instance, backend: str, time_limit: float, values: Values
) -> Outcome:
    """Both objectives with ``backend``, as ``optsched bound`` runs them.

    The stage's status comes from solves given the pipeline's starting
    schedules (:func:`optsched.analysis.gap.heuristic_incumbents`: the best offline
    heuristic and the oracle policies, which ``optsched bound`` and
    ``optsched gap`` pass too). The same solve without them (``solve()``
    called alone) is kept as a detail line, ``OBJECTIVE (solve alone)``.
    """
    from optsched.analysis.gap import heuristic_incumbents
    from optsched.objective import Objective

    parts: dict[str, Outcome] = {}
    alone: dict[str, Outcome] = {}
    for objective in OBJECTIVES:
        label = Objective.parse(objective).label
        try:
            incumbents = heuristic_incumbents(instance, Objective.parse(objective))
        except Exception as error:
            failure = outcome_of_error(error)
            parts[objective] = dataclasses.replace(
                failure, message=f"starting schedules: {failure.message}"
            )
        else:
            try:
                parts[objective], values[(backend, label)] = _bound_one(
                    instance, objective, backend, time_limit, incumbents
                )
            except Exception as error:
                parts[objective] = outcome_of_error(error)
        name = f"{objective} (solve alone)"
        try:
            alone[name], values[(f"{backend} alone", label)] = _bound_one(
                instance, objective, backend, time_limit, ()
            )
        except Exception as error:
            alone[name] = outcome_of_error(error)
    outcome = combine(parts)
    extra = {n: f"{o.status}: {o.message}" for n, o in alone.items()}
    return dataclasses.replace(outcome, details={**outcome.details, **extra})


def _gap(
    instance: Instance,
    features: tuple[str, ...],
    accepted: Iterable[str],
    time_limit: float,
    values: Values,
) -> Outcome:
    from optsched.bench.analysis import analyse_instance

    options = [f for f in features if f in ENGINE_OPTIONS]
    if options:
        return Outcome(
            NA,
            f"the gap pipeline has no {'/'.join(options)} option (its policies "
            "always run without it)",
        )
    policies = _gap_policies_run(features, accepted)
    try:
        found = analyse_instance(
            instance, policies, OBJECTIVES, time_limit=time_limit, workers=1
        )
    except RuntimeError as error:  # a task failed: "optsched: failed: ..."
        return Outcome(FAILED, f"task failed: {first_line(error)}")
    parts: dict[str, Outcome] = {}
    for label, reference in found.references.items():
        lower, upper = reference.lower, reference.upper
        values[("gap", label)] = (lower, upper)
        if reference.defect:
            parts[label] = Outcome(FAILED, f"defect: {first_line(reference.defect)}")
        elif lower is None or not math.isfinite(lower):
            parts[label] = Outcome(FAILED, f"optimum shown as [?, {upper}]")
        elif upper is None or not math.isfinite(upper):
            parts[label] = Outcome(FAILED, f"optimum shown as [{lower:g}, ?]")
        elif lower > upper * (1 + 1e-9):
            parts[label] = Outcome(FAILED, f"LB {lower:g} > UB {upper:g}")
        else:
            parts[label] = Outcome(OK, f"[{lower:g}, {upper:g}]")
    for row in found.rows:
        name = f"{row.policy}/{row.objective}"
        if row.comparable and not (
            math.isfinite(row.ratio_low) and math.isfinite(row.ratio_high)
        ):
            parts[name] = Outcome(
                FAILED, f"ratio [{row.ratio_low}, {row.ratio_high}] not finite"
            )
        elif not row.comparable and not row.killed and not row.defect:
            parts[name] = Outcome(FAILED, "not comparable without a killed job")
    outcome = combine(parts)
    if outcome.status == OK:
        kept = ", ".join(policies)
        outcome = dataclasses.replace(
            outcome, message=f"{outcome.message} (policies {kept})"
        )
    return outcome


def _consistency(
    instance: Instance, schedules: Mapping[str, Any], values: Values
) -> Outcome:
    """Every lower bound against every complete checked schedule.

    Lower bounds: those of the bound stages (with and without starting
    schedules) and the gap references. Upper bounds: their checked
    schedules' values and every simulated schedule in which no job was
    killed (a complete schedule bounds the offline optimum; lost attempts
    before an outage are not part of it).
    """
    from optsched.check import check_schedule
    from optsched.objective import Objective

    lowers: dict[str, list[tuple[float, str]]] = {}
    uppers: dict[str, list[tuple[float, str]]] = {}
    for (source, label), (lower, upper) in values.items():
        if lower is not None and math.isfinite(lower):
            lowers.setdefault(label, []).append((lower, source))
        if upper is not None and math.isfinite(upper):
            uppers.setdefault(label, []).append((upper, source))
    for policy, schedule in schedules.items():
        if schedule.killed or check_schedule(instance, schedule):
            continue
        for objective in OBJECTIVES:
            parsed = Objective.parse(objective)
            value = parsed.value(instance, schedule)
            uppers.setdefault(parsed.label, []).append((value, f"policy {policy}"))
    parts: dict[str, Outcome] = {}
    for label in sorted(set(lowers) & set(uppers)):
        lower, low_source = max(lowers[label])
        upper, high_source = min(uppers[label])
        if lower > upper * (1 + 1e-9):
            parts[label] = Outcome(
                FAILED,
                f"lower bound {lower:g} ({low_source}) above a checked complete "
                f"schedule's {upper:g} ({high_source})",
            )
        else:
            parts[label] = Outcome(
                OK,
                f"LB {lower:g} <= UB {upper:g} ({len(lowers[label])} bounds, "
                f"{len(uppers[label])} schedules)",
            )
    return combine(parts)


def run_pipeline(features: tuple[str, ...], *, time_limit: float) -> dict[str, Outcome]:
    """Build a combination and run every stage of :data:`STAGES` on it.

    Parameters
    ----------
    features
        Names of :data:`FEATURES` (empty: the base instance).
    time_limit
        Seconds per solve (each objective of the bound stages, each
        objective of the gap stage).

    Returns
    -------
    dict of str to Outcome
        The outcome of every stage, in :data:`STAGES` order. A stage after
        a failed or refused build is ``n/a``.
    """
    features = normalise(features)
    holder: dict[str, Instance] = {}

    def build() -> Outcome:
        holder["instance"] = build_instance(features)
        instance = holder["instance"]
        return Outcome(
            OK,
            f"{len(instance.jobs)} jobs on {instance.processors} processors",
        )

    out: dict[str, Outcome] = {"build": _timed(build)}
    if "instance" not in holder:
        why = f"not built ({out['build'].status})"
        out.update({stage: Outcome(NA, why) for stage in STAGES[1:]})
        return out
    instance = holder["instance"]
    values: Values = {}
    out["simulate"], schedules = _simulate(instance, features)
    out["check"] = _timed(lambda: _check(instance, schedules))
    for backend in ("bounds-only", "cpsat"):
        out[f"bound-{backend}"] = _timed(
            lambda backend=backend: _bound(instance, backend, time_limit, values)
        )
    out["gap"] = _timed(lambda: _gap(instance, features, schedules, time_limit, values))
    out["consistency"] = _timed(lambda: _consistency(instance, schedules, values))
    return out


# --------------------------------------------------------------------------
# The same through the command line
# --------------------------------------------------------------------------

_NUMBER = r"-?[\d,]+(?:\.\d+)?(?:e[+-]?\d+)?"


def _invoke(args: Sequence[str]) -> tuple[int, str, str]:
    """Run ``optsched ARGS`` in this process; exit status, stdout, stderr."""
    from click.testing import CliRunner

    from optsched.cli import main

    result = CliRunner().invoke(main, list(args), catch_exceptions=True)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        error = result.exception
        stderr += f"\n{type(error).__name__}: {error} (at {where_raised(error)})"
        return -1, result.stdout, stderr
    return result.exit_code, result.stdout, stderr


def _cli_error(code: int, stdout: str, stderr: str) -> Outcome:
    """The outcome of a command that did not exit with status 0."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    said = next((line for line in lines if line.startswith("optsched: ")), None)
    said = said or (lines[-1] if lines else first_line(stdout))
    if code == 2 and said.startswith("optsched: error: "):
        return Outcome(REFUSED, said.removeprefix("optsched: error: "))
    return Outcome(FAILED, f"exit {code}: {first_line(said)}")


def _cli_simulate(
    path: Path, features: tuple[str, ...], folder: Path
) -> tuple[Outcome, dict[str, Path]]:
    flags = [f"--{f}" for f in features if f in ENGINE_OPTIONS]
    parts: dict[str, Outcome] = {}
    files: dict[str, Path] = {}
    for k, policy in enumerate(policies_for(features)):
        out = folder / f"schedule{k}.json"
        code, stdout, stderr = _invoke(
            ["simulate", str(path), "--policy", policy, *flags, "-o", str(out)]
        )
        if code == 0:
            parts[policy] = Outcome(OK)
            files[policy] = out
        else:
            parts[policy] = _cli_error(code, stdout, stderr)
    return combine(parts), files


def _cli_check(path: Path, files: Mapping[str, Path]) -> Outcome:
    if not files:
        return Outcome(NA, "no simulated schedule")
    parts: dict[str, Outcome] = {}
    for policy, schedule in files.items():
        code, stdout, stderr = _invoke(["check", str(path), str(schedule)])
        if code == 0:
            parts[policy] = Outcome(OK)
        elif code == 1:
            parts[policy] = Outcome(FAILED, f"exit 1: {first_line(stdout + stderr)}")
        else:
            parts[policy] = _cli_error(code, stdout, stderr)
    return combine(parts)


def _cli_bound(path: Path, backend: str, time_limit: float) -> Outcome:
    parts: dict[str, Outcome] = {}
    for objective in OBJECTIVES:
        code, stdout, stderr = _invoke(
            ["bound", str(path), "--objective", objective, "--backend", backend,
             "--time-limit", f"{time_limit:g}", "--workers", "1"]
        )  # fmt: skip
        if code != 0:
            parts[objective] = _cli_error(code, stdout, stderr)
            continue
        found = {
            name: re.search(rf"^best {name} bound\s+({_NUMBER})", stdout, re.M)
            for name in ("lower", "upper")
        }
        missing = [name for name, match in found.items() if match is None]
        if missing:
            parts[objective] = Outcome(FAILED, f"no best {missing[0]} bound printed")
            continue
        low, high = (
            found[n].group(1).replace(",", "")  # type: ignore[union-attr]
            for n in ("lower", "upper")
        )
        parts[objective] = Outcome(OK, f"[{low}, {high}]")
    return combine(parts)


def _cli_gap(
    path: Path, features: tuple[str, ...], accepted: Iterable[str], time_limit: float
) -> Outcome:
    options = [f for f in features if f in ENGINE_OPTIONS]
    if options:
        return Outcome(NA, f"optsched gap has no --{'/--'.join(options)}")
    policies = _gap_policies_run(features, accepted)
    code, stdout, stderr = _invoke(
        ["gap", str(path), "--policies", ",".join(policies), "--objective",
         ",".join(OBJECTIVES), "--time-limit", f"{time_limit:g}", "--workers", "1",
         "--no-progress"]
    )  # fmt: skip
    unknown = "[?," in stdout
    if code == 0 and not unknown:
        return Outcome(OK, f"policies {', '.join(policies)}")
    message = _cli_error(code, stdout, stderr) if code else Outcome(FAILED, "")
    note = " (optimum shown as [?, UB])" if unknown else ""
    return Outcome(message.status, f"{message.message}{note}".strip())


def run_cli_pipeline(
    features: tuple[str, ...], *, time_limit: float
) -> dict[str, Outcome]:
    """The stages of :func:`run_pipeline` through the command line.

    The combination's instance is written as a native JSON file; then
    ``optsched simulate -o`` (each policy, with ``--kill-at-estimate`` and
    ``--migration`` when asked for), ``optsched check`` on each schedule
    written, ``optsched bound`` with each back-end and objective, and
    ``optsched gap`` with the short policy list (``consistency`` is
    ``n/a``: the library pipeline only). Exit status 0 is ``ok``
    (for ``bound``: both best bounds printed; for ``gap``: no ``[?, UB]``),
    status 2 with ``optsched: error:`` is ``refused``, anything else
    ``failed``.

    Parameters
    ----------
    features
        Names of :data:`FEATURES`.
    time_limit
        Seconds per solve.

    Returns
    -------
    dict of str to Outcome
        The outcome of every stage, in :data:`STAGES` order.
    """
    from optsched.io.native import write_native

    features = normalise(features)
    try:
        instance = build_instance(features)
    except Exception as error:
        out = {"build": outcome_of_error(error)}
        out.update({stage: Outcome(NA, "not built") for stage in STAGES[1:]})
        return out
    out = {"build": Outcome(OK)}
    with tempfile.TemporaryDirectory(prefix="composition-") as name:
        folder = Path(name)
        path = folder / "instance.json"
        write_native(instance, path)
        began = time.perf_counter()
        simulated, files = _cli_simulate(path, features, folder)
        out["simulate"] = dataclasses.replace(
            simulated, seconds=time.perf_counter() - began
        )
        out["check"] = _timed(lambda: _cli_check(path, files))
        out["bound-bounds-only"] = _timed(
            lambda: _cli_bound(path, "bounds-only", time_limit)
        )
        out["bound-cpsat"] = _timed(lambda: _cli_bound(path, "cpsat", time_limit))
        out["gap"] = _timed(lambda: _cli_gap(path, features, files, time_limit))
    out["consistency"] = Outcome(NA, "library only")
    return out
