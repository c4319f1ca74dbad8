"""Giving a flat instance node speeds or SMP nodes (``--speeds``, ``--nodes``).

A :class:`MachineShape` is what the command-line options (and a suite's
``machine = "..."``) ask for; :meth:`MachineShape.apply` turns an instance,
typically a trace window, into one on that machine:

- speeds: every job keeps its run time on ``size`` processors of speed 1,
  so its work at speed 1 is ``p_j = runtime_j * size_j`` (and likewise the
  estimate); on processors of speed 2 it then runs half as long. An
  instance whose machine already has speeds only gets the new speeds.
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
from optsched.instance import MAX_DETAILED_PROCESSORS, Instance, Machine
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
            Busy blocks (a recorded initial state), moldable jobs, a speed
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
        if instance.moldable:
            raise ValueError("--speeds/--nodes: moldable jobs are not supported")
        jobs = instance.jobs
        if self.speeds is not None and machine.speeds is None:
            jobs = tuple(
                job.replace(
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


def flat_relaxation(instance: Instance) -> Instance:
    """The flat instance in which every job runs its shortest possible time.

    Each job keeps its release, size and weight; its run time (and
    estimate) becomes :meth:`~optsched.instance.Machine.shortest_run_time`,
    a lower bound on its run time on any processor set of its size, and the
    speeds, span limit and communication cost are dropped.

    Why every flat bound holds for the original: a feasible schedule of the
    original, each job shortened to its shortest run time at the same start,
    is feasible for the relaxation (no more processors in use at any
    instant, releases kept), and every objective here (makespan, weighted
    completion or flow) only falls when completions move earlier. So the
    relaxation's optimum, and any lower bound on it, is at most the
    original's optimum.
    """
    machine = instance.machine
    if machine.flat:
        return instance
    jobs = tuple(
        job.replace(
            runtime=machine.shortest_run_time(job.runtime, job.size),
            estimate=machine.shortest_run_time(job.requested, job.size),
        )
        for job in instance.jobs
    )
    flat = machine.replace(speeds=None, nodes=None)
    return instance.replace(machine=flat, jobs=jobs)


def append_schedule(
    instance: Instance, order: Sequence[int], producer: str = "list:append"
) -> Schedule:
    """A feasible schedule on any machine: jobs appended in ``order``.

    Each job starts at the earliest time ``t >= release`` at which enough
    processors have finished their previous jobs (processors are never
    given back to an earlier gap), on the processors a placement rule picks
    among those idle at ``t``: the fullest nodes first on SMP nodes (the
    fewest nodes, within the span limit), else the fastest (ties by index).
    At the latest processor end every processor is idle, so every job is
    placed. Every back-end uses it as its fallback upper bound on machines
    with speeds or nodes, where run times depend on the processors.
    """
    machine = instance.machine
    jobs = instance.jobs_by_id()
    free_at = [0] * machine.processors
    placements: dict[int, Placement] = {}
    for job_id in order:
        job = jobs[job_id]
        for start in sorted({max(job.release, t) for t in free_at}):
            idle = [p for p, t in enumerate(free_at) if t <= start]
            chosen = pick_processors(machine, idle, job.size)
            if chosen is None:
                continue
            end = start + machine.run_time(job.runtime, chosen)
            for p in chosen:
                free_at[p] = end
            placements[job_id] = Placement(start, end, processors=tuple(sorted(chosen)))
            break
    return Schedule(placements, producer)


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
