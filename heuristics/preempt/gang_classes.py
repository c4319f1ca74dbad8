"""Job classes of the LLNL gang scheduler, read from TOML.

D. G. Feitelson and M. A. Jette, "Improved utilization and responsiveness
with gang scheduling", JSSPP 1997 (LNCS 1291), and the UCRL-JC-125614
report (1996) quoted in Kalthoff's thesis (seed 001 §2.3): every job
belongs to a class, and a class is the 4-tuple

``(priority, maximum wait, time multiplier, processor limit)``

- *priority*: a job never preempts a job of a class of higher priority;
- *maximum wait*: how long a job may wait for its start, or for its next
  time slice, before it preempts running jobs (``None``: never);
- *time multiplier*: minimum compute time of a slice per allocated
  processor; a job of ``q`` processors resumed at ``t`` cannot be preempted
  before ``t + switch + ceil(multiplier * q)`` (the T3D switched context by
  writing the job to disk, so the overhead, and the slice that amortises
  it, grow with the processors);
- *processor limit*: the largest job of the class (``None``: the machine).

Two flags complete the five LLNL classes: ``preemptible = false`` (debug,
benchmark: once started the job runs to completion on its processors, in
every time slot) and ``standby = true`` (the job runs only on processors
that would otherwise idle).

File format (``gang_classes.toml`` beside this module is the default)::

    default = "production"            # class of jobs without a known queue
    [queues]                          # SWF queue number -> class
    0 = "interactive"
    [classes.interactive]
    priority = 3
    max_wait = 600                    # seconds; omit for "never"
    multiplier = 1.0                  # seconds per processor, >= 0
    processor_limit = 64              # omit for the whole machine
    preemptible = true                # default true
    standby = false                   # default false
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from optsched.instance import Job

DEFAULT_CLASSES_FILE = "gang_classes.toml"
"""Package data of :mod:`optsched.heuristics`: the five default classes."""

OVER_LIMIT = ("refuse", "default")
"""Treatments of a job above its class's processor limit."""

_CLASS_KEYS = frozenset(
    {"priority", "max_wait", "multiplier", "processor_limit", "preemptible", "standby"}
)


@dataclass(frozen=True, slots=True)
class JobClass:
    """One class of the LLNL gang scheduler (see the module docstring).

    Parameters
    ----------
    name
        Class name (``"production"``).
    priority
        Integer; larger is more important.
    max_wait
        Seconds (``>= 1``) a job may wait before it preempts; ``None``: never.
    multiplier
        Minimum slice per allocated processor, seconds (``>= 0``).
    processor_limit
        Largest job of the class (``>= 1``); ``None``: no limit.
    preemptible
        ``False``: once started the job runs to completion.
    standby
        ``True``: the job only uses otherwise idle processors.
    """

    name: str
    priority: int = 0
    max_wait: int | None = None
    multiplier: float = 0.0
    processor_limit: int | None = None
    preemptible: bool = True
    standby: bool = False

    def __post_init__(self) -> None:
        who = f"gang class {self.name!r}"
        if not _is_int(self.priority):
            raise ValueError(f"{who}: priority must be an integer")
        if self.max_wait is not None and (
            not _is_int(self.max_wait) or self.max_wait < 1
        ):
            # 0 would let two jobs preempt each other at the same instant.
            raise ValueError(f"{who}: max_wait must be an integer >= 1 (seconds)")
        multiplier = self.multiplier
        if isinstance(multiplier, bool) or not isinstance(multiplier, int | float):
            raise ValueError(f"{who}: multiplier must be a number")
        if not 0 <= multiplier < math.inf:
            raise ValueError(f"{who}: multiplier must be finite and >= 0")
        limit = self.processor_limit
        if limit is not None and (not _is_int(limit) or limit < 1):
            raise ValueError(f"{who}: processor_limit must be an integer >= 1")
        for flag in ("preemptible", "standby"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{who}: {flag} must be true or false")
        if self.standby and not self.preemptible:
            raise ValueError(f"{who}: a standby class must be preemptible")

    def min_slice(self, size: int) -> int:
        """``ceil(multiplier * size)``: least work of a slice, in seconds."""
        return math.ceil(self.multiplier * size)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class GangClasses:
    """The classes of a gang scheduler and the map from SWF queues to them.

    Parameters
    ----------
    classes
        ``{name: JobClass}``.
    queues
        ``{SWF queue number: class name}``.
    default
        Class of jobs without a queue number (``None``, or ``-1`` in SWF)
        or with a number absent from ``queues``.
    """

    classes: Mapping[str, JobClass]
    queues: Mapping[int, str] = field(default_factory=dict)
    default: str = "production"

    def __post_init__(self) -> None:
        object.__setattr__(self, "classes", MappingProxyType(dict(self.classes)))
        object.__setattr__(self, "queues", MappingProxyType(dict(self.queues)))
        if not self.classes:
            raise ValueError("gang classes: no class defined")
        for name, cls in self.classes.items():
            if cls.name != name:
                raise ValueError(f"gang classes: class {name!r} is named {cls.name!r}")
        for queue, name in [(None, self.default), *self.queues.items()]:
            if name not in self.classes:
                where = "default" if queue is None else f"queue {queue}"
                raise ValueError(
                    f"gang classes: {where} names the unknown class {name!r} "
                    f"(classes: {', '.join(sorted(self.classes))})"
                )

    def of(self, job: Job) -> JobClass:
        """The class of ``job``, through its SWF queue number."""
        if job.queue is None:
            return self.classes[self.default]
        return self.classes[self.queues.get(job.queue, self.default)]

    def assign(
        self, jobs: Iterable[Job], over_limit: str = "refuse"
    ) -> dict[int, JobClass]:
        """The class of every job, ``{job id: JobClass}``.

        Parameters
        ----------
        jobs
            The jobs.
        over_limit
            What to do with a job above its class's processor limit:
            ``"refuse"`` (raise) or ``"default"`` (put it in the default
            class, as a site would demote it to production).

        Raises
        ------
        ValueError
            A job above its class's limit (with ``"default"``: above the
            default class's limit too), naming the job, class and limit.
        """
        if over_limit not in OVER_LIMIT:
            raise ValueError(
                f"gang classes: over_limit {over_limit!r} is not one of "
                f"{', '.join(OVER_LIMIT)}"
            )
        out = {}
        for job in jobs:
            cls = self.of(job)
            if over_limit == "default" and _above(job, cls):
                cls = self.classes[self.default]
            if _above(job, cls):
                raise ValueError(
                    f"job {job.id}: {job.size} processors exceed the limit "
                    f"{cls.processor_limit} of gang class {cls.name!r}"
                )
            out[job.id] = cls
        return out


def _above(job: Job, cls: JobClass) -> bool:
    return cls.processor_limit is not None and job.size > cls.processor_limit


def parse_classes(data: Mapping[str, Any], source: str = "gang classes") -> GangClasses:
    """Build :class:`GangClasses` from parsed TOML (see the module docstring).

    Raises
    ------
    ValueError
        Unknown keys, bad values or references to unknown classes, with
        ``source`` in the message.
    """
    unknown = set(data) - {"default", "queues", "classes"}
    if unknown:
        raise ValueError(f"{source}: unknown keys {sorted(unknown)}")
    raw_classes = data.get("classes", {})
    if not isinstance(raw_classes, Mapping):
        raise ValueError(f"{source}: [classes] must be a table")
    classes = {}
    for name, table in raw_classes.items():
        if not isinstance(table, Mapping):
            raise ValueError(f"{source}: class {name!r} must be a table")
        extra = set(table) - _CLASS_KEYS
        if extra:
            raise ValueError(f"{source}: class {name!r}: unknown keys {sorted(extra)}")
        try:
            classes[name] = JobClass(name=name, **table)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{source}: {error}") from None
    queues = {}
    raw_queues = data.get("queues", {})
    if not isinstance(raw_queues, Mapping):
        raise ValueError(f"{source}: [queues] must be a table")
    for key, name in raw_queues.items():
        try:
            number = int(key)
        except ValueError:
            raise ValueError(f"{source}: queue {key!r} is not an integer") from None
        if not isinstance(name, str):
            raise ValueError(f"{source}: queue {key!r} must name a class")
        queues[number] = name
    default = data.get("default", "production")
    if not isinstance(default, str):
        raise ValueError(f"{source}: default must name a class")
    try:
        return GangClasses(classes, queues, default)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None


def load_classes(path: str | Path | None = None) -> GangClasses:
    """Read a classes file; ``None`` reads the default classes (package data)."""
    if path is None:
        text = (
            resources.files("optsched.heuristics.preempt")
            .joinpath(DEFAULT_CLASSES_FILE)
            .read_text()
        )
        source = DEFAULT_CLASSES_FILE
    else:
        text = Path(path).read_text(encoding="utf-8")
        source = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{source}: {error}") from None
    return parse_classes(data, source)


def default_classes() -> GangClasses:
    """The five LLNL classes with this project's numbers (``gang_classes.toml``)."""
    return load_classes(None)
