"""Giving a flat instance node speeds or SMP nodes (``--speeds``, ``--nodes``).

A :class:`MachineShape` is what the command-line options (and a suite's
``machine = "..."``) ask for; :meth:`MachineShape.apply` turns an instance,
typically a trace window, into one on that machine:

- speeds: every job keeps its run time on ``size`` processors of speed 1,
  so its work at speed 1 is ``p_j = runtime_j * size_j`` (and likewise the
  estimate); on processors of speed 2 it then runs half as long. An
  instance whose machine already has speeds only gets the new speeds.
  A moldable job keeps its modes as they are: a mode ``(q, t)`` is ``q``
  processors and the run time ``t`` on ``q`` processors of speed 1, so its
  work is ``q * t`` (:func:`mode_work`), the rigid convention read per
  mode; its run time on the processor set ``S`` of ``q`` processors is
  ``ceil(q t / sum_{k in S} s_k * inflation)``.
- nodes: a moldable job's mode is ``q`` processors that must fit the span
  limit like a rigid job of size ``q``; its run time is inflated by the
  span its processors touch. Malleable jobs are refused: a job runs in one
  piece on a machine with speeds or nodes.
- nodes: ``Q x P`` must be the machine's processor count; ``tight`` is a
  number, ``adaptive`` (Wang's ``max(0, 6 - level)``) or absent (no span
  limit); ``level``, ``base`` and ``cost`` set the communication cost
  (:mod:`optsched.nodes`).

The spec grammar (one string, for suites and results)::

    speeds=16x275,6x825;nodes=10x10;tight=2;level=4;base=0.05;cost=ratio

Speeds are a comma list of numbers or ``COUNTxSPEED`` groups, or the path
of a file holding such a list (commas, spaces or lines; ``#`` comments).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from optsched.errors import shown
from optsched.instance import MAX_DETAILED_PROCESSORS, Instance, Job, Machine, Mode
from optsched.nodes import COSTS, DEFAULT_BASE, Nodes, adaptive_tight
from optsched.schedule import Placement, Schedule

KEYS = ("speeds", "nodes", "tight", "level", "base", "cost")


def parse_speed_list(text: str) -> tuple[float, ...]:
    """``"16x275,6x825"`` or ``"1,2,0.5"`` (or a file of them) as speeds.

    Raises
    ------
    ValueError
        On an entry that is not a number > 0 or ``COUNTxSPEED``, naming it,
        or on more than :data:`~optsched.instance.MAX_DETAILED_PROCESSORS`
        processors in all (one speed is kept per processor: ``1000000000000x1``
        would need terabytes).
    """
    source = text
    path = Path(text)
    if path.is_file():
        source = _file_text(path)
    speeds: list[float] = []
    for entry in source.replace(",", " ").split():
        count, _, speed = entry.rpartition("x")
        number = _speed(speed, entry)
        if count and (not count.isdigit() or int(count) < 1):
            raise ValueError(f"speeds: {entry!r}: count must be an integer >= 1")
        if len(speeds) + (int(count) if count else 1) > MAX_DETAILED_PROCESSORS:
            raise ValueError(
                f"speeds: {shown(entry)}: more than {MAX_DETAILED_PROCESSORS} "
                "processors with speeds in all (one speed is kept per processor)"
            )
        speeds.extend([number] * (int(count) if count else 1))
    if not speeds:
        raise ValueError(f"speeds: {text!r} gives no speed")
    return tuple(speeds)


def _file_text(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"speeds: cannot read {path}: {error}") from None
    return " ".join(line.partition("#")[0] for line in lines)


def _speed(text: str, entry: str) -> float:
    try:
        value = int(text) if text.isdigit() else float(text)
    except ValueError:
        raise ValueError(f"speeds: {entry!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"speeds: {entry!r}: a speed must be a finite number > 0")
    return value


def parse_node_grid(text: str) -> tuple[int, int]:
    """``"10x10"`` as ``(nodes, cpus)``."""
    count, sep, cpus = text.strip().partition("x")
    if not sep or not count.isdigit() or not cpus.isdigit():
        raise ValueError(f"nodes: {text!r} is not NODESxCPUS (e.g. 10x10)")
    if int(count) < 1 or int(cpus) < 1:
        raise ValueError(f"nodes: {text!r} needs at least one node of one processor")
    return int(count), int(cpus)


def _compact(speeds: tuple[float, ...]) -> str:
    # Runs of equal speeds as COUNTxSPEED: 16x275,6x825.
    groups: list[str] = []
    k = 0
    while k < len(speeds):
        run = 1
        while k + run < len(speeds) and speeds[k + run] == speeds[k]:
            run += 1
        groups.append(f"{run}x{speeds[k]:g}" if run > 1 else f"{speeds[k]:g}")
        k += run
    return ",".join(groups)


@dataclass(frozen=True, slots=True)
class MachineShape:
    """Speeds and SMP nodes to give an instance's machine.

    ``tight`` is an integer, ``"adaptive"`` or ``None`` (no span limit).
    """

    speeds: tuple[float, ...] | None = None
    nodes: tuple[int, int] | None = None
    tight: int | str | None = None
    level: int = 0
    base: float = DEFAULT_BASE
    cost: str = "ratio"

    def __post_init__(self) -> None:
        if self.nodes is None and (
            self.tight is not None
            or self.level
            or self.base != DEFAULT_BASE
            or self.cost != "ratio"
        ):
            raise ValueError("tight, level, base and cost need nodes (--nodes QxP)")
        if isinstance(self.tight, str) and self.tight != "adaptive":
            raise ValueError(f"tight: {self.tight!r} is not an integer or 'adaptive'")
        if isinstance(self.tight, int) and self.tight < 0:
            raise ValueError(f"tight: {self.tight} must be >= 0")
        if self.level < 0:
            raise ValueError(f"level: {self.level} must be >= 0")
        if self.cost not in COSTS:
            raise ValueError(f"cost: {self.cost!r} is not one of {', '.join(COSTS)}")

    @classmethod
    def parse(cls, spec: str) -> MachineShape:
        """The shape a spec string names (module grammar)."""
        fields: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in spec.split(";"))):
            key, sep, value = item.partition("=")
            if not sep or key not in KEYS:
                raise ValueError(
                    f"machine: {item!r} is not KEY=VALUE with KEY one of "
                    f"{', '.join(KEYS)}"
                )
            fields[key] = value
        return cls.from_options(**fields)

    @classmethod
    def from_options(
        cls,
        speeds: str | None = None,
        nodes: str | None = None,
        tight: str | None = None,
        level: str | int | None = None,
        base: str | float | None = None,
        cost: str | None = None,
    ) -> MachineShape:
        """The shape of the command-line options (strings as typed)."""
        tight_value: int | str | None = tight
        if tight is not None and tight != "adaptive":
            if not str(tight).isdigit():
                raise ValueError(f"tight: {tight!r} is not an integer or 'adaptive'")
            tight_value = int(tight)
        try:
            level_value = int(level) if level is not None else 0
            base_value = float(base) if base is not None else DEFAULT_BASE
        except ValueError as error:
            raise ValueError(f"level/base: {error}") from None
        return cls(
            speeds=None if speeds is None else parse_speed_list(speeds),
            nodes=None if nodes is None else parse_node_grid(nodes),
            tight=tight_value,
            level=level_value,
            base=base_value,
            cost=cost or "ratio",
        )

    @property
    def spec(self) -> str:
        """The canonical spec string (``MachineShape.parse(s.spec) == s``)."""
        parts: list[str] = []
        if self.speeds is not None:
            parts.append(f"speeds={_compact(self.speeds)}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes[0]}x{self.nodes[1]}")
            if self.tight is not None:
                parts.append(f"tight={self.tight}")
            if self.level:
                parts.append(f"level={self.level}")
            if self.base != DEFAULT_BASE:
                parts.append(f"base={self.base:g}")
            if self.cost != "ratio":
                parts.append(f"cost={self.cost}")
        return ";".join(parts)

    def machine_nodes(self) -> Nodes | None:
        """The :class:`~optsched.nodes.Nodes` asked for (``None``: none)."""
        if self.nodes is None:
            return None
        tight = adaptive_tight(self.level) if self.tight == "adaptive" else self.tight
        assert tight is None or isinstance(tight, int)
        return Nodes(*self.nodes, tight, self.level, self.base, self.cost)

    def apply(self, instance: Instance) -> Instance:
        """``instance`` on this machine (module notes).

        Raises
        ------
        ValueError
            Busy blocks (a recorded initial state), malleable jobs, a speed
            count or node grid that does not match the processors.
        """
        if self.speeds is None and self.nodes is None:
            return instance
        machine = instance.machine
        if machine.unavailable:
            raise ValueError(
                f"--speeds/--nodes: the instance has {len(machine.unavailable)} "
                "busy blocks (a recorded initial state?); machines with speeds "
                "or nodes take none"
            )
        if instance.malleable:
            raise ValueError(
                "--speeds/--nodes: malleable jobs are not supported (a job runs "
                "in one piece on a machine with speeds or nodes)"
            )
        jobs = instance.jobs
        if self.speeds is not None and machine.speeds is None:
            # Rigid jobs carry their work; moldable jobs keep their modes'
            # run times on speed-1 processors (module notes).
            jobs = tuple(
                job
                if job.modes
                else job.replace(
                    runtime=job.runtime * job.size, estimate=job.requested * job.size
                )
                for job in jobs
            )
        changes: dict[str, object] = {}
        if self.speeds is not None:
            changes["speeds"] = self.speeds
        if self.nodes is not None:
            changes["nodes"] = self.machine_nodes()
        return instance.replace(machine=machine.replace(**changes), jobs=jobs)


def mode_work(machine: Machine, mode: Mode) -> tuple[int, int]:
    """The work and estimated work of a moldable job's ``mode`` that the
    machine's run-time rule (:meth:`~optsched.instance.Machine.run_time`)
    reads: ``q * t`` (and ``q * estimate``) with speeds, a mode's run time
    being on ``q`` processors of speed 1 (module notes); ``t`` itself
    without (SMP nodes inflate it, a flat machine runs it)."""
    if machine.speeds is None:
        return mode.runtime, mode.requested
    return mode.processors * mode.runtime, mode.processors * mode.requested


def request_work(machine: Machine, job: Job) -> tuple[int, int]:
    """The work and estimated work of ``job`` in its requested mode: a
    rigid job's ``runtime`` and ``estimate`` (its work with speeds), a
    moldable job's requested mode through :func:`mode_work`."""
    if not job.modes:
        return job.runtime, job.requested
    return mode_work(machine, Mode(job.size, job.runtime, job.estimate))


def _flat_modes(machine: Machine, job: Job) -> Job:
    """``job`` with every mode at its shortest run time on the machine, on
    identical processors (:func:`flat_relaxation`).

    Each mode ``(q, t)`` becomes ``(q, shortest_run_time(w_q, q))`` with
    ``w_q`` its work (:func:`mode_work`). Rounding may leave the new run
    times with a work that falls faster than :class:`~optsched.instance.Job`
    admits; a downward pass lowers a mode's run time until ``q (T_q - 1)
    < q' T_q'`` for every larger mode ``q'`` (the job's condition), which
    only shortens run times and so keeps the relaxation valid."""
    lowest_work: int | None = None  # min q' T_q' over the larger modes
    flat: list[Mode] = []
    for mode in reversed(job.modes):
        work, estimated = mode_work(machine, mode)
        runtime = machine.shortest_run_time(work, mode.processors)
        if lowest_work is not None:
            runtime = min(runtime, (lowest_work - 1) // mode.processors + 1)
        estimate = machine.shortest_run_time(estimated, mode.processors)
        flat.append(Mode(mode.processors, runtime, estimate))
        work_here = mode.processors * runtime
        lowest_work = work_here if lowest_work is None else min(lowest_work, work_here)
    flat.reverse()
    request = next(m for m in flat if m.processors == job.size)
    return job.replace(
        modes=tuple(flat),
        size=request.processors,
        runtime=request.runtime,
        estimate=request.estimate,
    )


def flat_relaxation(instance: Instance) -> Instance:
    """The flat instance in which every job runs its shortest possible time.

    Each job keeps its release, size and weight; its run time (and
    estimate) becomes :meth:`~optsched.instance.Machine.shortest_run_time`,
    a lower bound on its run time on any processor set of its size, and the
    speeds, span limit and communication cost are dropped. A moldable job
    keeps its modes, each at its shortest run time (:func:`_flat_modes`).

    Why every flat bound holds for the original: a feasible schedule of the
    original, each job shortened to its shortest run time at the same start,
    is feasible for the relaxation (no more processors in use at any
    instant, releases kept), and every objective here (makespan, weighted
    completion or flow) only falls when completions move earlier. So the
    relaxation's optimum, and any lower bound on it, is at most the
    original's optimum. A moldable job runs in the original in one of its
    modes ``q`` on some set of ``q`` processors; the relaxation offers the
    same mode, no longer (each mode at most its shortest run time), so the
    argument holds mode by mode.
    """
    machine = instance.machine
    if machine.flat:
        return instance
    jobs = tuple(
        _flat_modes(machine, job)
        if job.modes
        else job.replace(
            runtime=machine.shortest_run_time(job.runtime, job.size),
            estimate=machine.shortest_run_time(job.requested, job.size),
        )
        for job in instance.jobs
    )
    flat = machine.replace(speeds=None, nodes=None)
    return instance.replace(machine=flat, jobs=jobs)


def append_schedule(
    instance: Instance,
    order: Sequence[int],
    producer: str = "list:append",
    *,
    choose_modes: bool = False,
) -> Schedule:
    """A feasible schedule on any machine: jobs appended in ``order``.

    Each job starts at the earliest time ``t >= release`` at which enough
    processors have finished their previous jobs (processors are never
    given back to an earlier gap), on the processors a placement rule picks
    among those idle at ``t``: the fullest nodes first on SMP nodes (the
    fewest nodes, within the span limit), else the fastest (ties by index).
    At the latest processor end every processor is idle, so every job is
    placed. Every back-end uses it as its fallback upper bound on machines
    with speeds or nodes, where run times depend on the processors. A
    moldable job runs in its requested mode (:func:`request_work`), or,
    with ``choose_modes``, in the mode that ends first so placed (ties: the
    fewer processors).
    """
    machine = instance.machine
    jobs = instance.jobs_by_id()
    free_at = [0] * machine.processors
    placements: dict[int, Placement] = {}
    for job_id in order:
        job = jobs[job_id]
        ways = [(job.size, request_work(machine, job)[0])]
        if choose_modes and job.modes:
            ways = [(m.processors, mode_work(machine, m)[0]) for m in job.modes]
        placed = min(
            (
                _appended(machine, free_at, job.release, size, work)
                for size, work in ways
            ),
            key=lambda p: (p.end, len(p.processors or ())),
        )
        assert placed.processors is not None
        for p in placed.processors:
            free_at[p] = placed.end
        placements[job_id] = placed
    return Schedule(placements, producer)


def _appended(
    machine: Machine, free_at: Sequence[int], release: int, size: int, work: int
) -> Placement:
    """Where :func:`append_schedule` puts ``work`` on ``size`` processors,
    given when each processor is free (the processors are not taken)."""
    for start in sorted({max(release, t) for t in free_at}):
        idle = [p for p, t in enumerate(free_at) if t <= start]
        chosen = pick_processors(machine, idle, size)
        if chosen is not None:
            end = start + machine.run_time(work, chosen)
            return Placement(start, end, processors=tuple(sorted(chosen)))
    raise AssertionError("at the latest processor end every processor is idle")


def pick_processors(
    machine: Machine, idle: Sequence[int], size: int
) -> list[int] | None:
    """``size`` of the ``idle`` processors, or ``None`` when none fit.

    On SMP nodes: the nodes with the most idle processors first (ties: the
    lower node), lowest processors inside a node, which reaches the fewest
    nodes; ``None`` past the span limit. Otherwise the fastest processors
    (ties: the lower index); on a flat machine the lowest.
    """
    if len(idle) < size:
        return None
    nodes = machine.nodes
    if nodes is not None:
        by_node: dict[int, list[int]] = {}
        for p in sorted(idle):
            by_node.setdefault(p // nodes.cpus, []).append(p)
        ranked = sorted(by_node.items(), key=lambda item: (-len(item[1]), item[0]))
        chosen: list[int] = []
        for used, (_, cpus) in enumerate(ranked, start=1):
            chosen += cpus[: size - len(chosen)]
            if len(chosen) == size:
                return chosen if used <= nodes.span_limit(size) else None
        return None
    if machine.speeds is not None:
        speeds = machine.speeds
        return sorted(idle, key=lambda p: (-speeds[p], p))[:size]
    return sorted(idle)[:size]
