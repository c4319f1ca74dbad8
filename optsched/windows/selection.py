"""Window rules: which windows of a trace an analysis looks at.

A :class:`WindowRule` describes a family of windows (consecutive windows of
``N`` jobs, ``K`` random windows of ``N`` jobs with a seed, consecutive time
windows, or the whole file) and the initial machine state each window
starts from. :func:`select_windows` turns a rule into :class:`WindowSpec`
objects, each of which cuts one :class:`~optsched.instance.Instance` from
the trace.

Initial states:

``none``
    Empty machine.
``recorded``
    Jobs running in the trace's recorded schedule (submit + wait) at the
    window start become busy blocks (needs wait times in the trace).
``simulated:POLICY``
    The jobs submitted before the window are simulated under ``POLICY``
    (from the start of the trace); those still running at the window start
    become busy blocks until their simulated end. Jobs still *waiting* at
    that moment are not handed over: the window holds exactly its own jobs.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace

from optsched.instance import BusyBlock, Instance
from optsched.trace import Trace

RULE_KINDS = ("consecutive", "random", "time", "whole")
_RULE_KEYS = (
    "kind",
    "jobs",
    "count",
    "seed",
    "first",
    "start",
    "end",
    "step",
    "initial_state",
)


def _check_initial_state(state: str) -> None:
    if state in ("none", "recorded"):
        return
    if state.startswith("simulated:") and state.partition(":")[2]:
        return
    raise ValueError(
        f"initial state {state!r}: expected none, recorded or simulated:POLICY"
    )


@dataclass(frozen=True, slots=True)
class WindowRule:
    """A family of windows.

    Parameters
    ----------
    kind
        ``consecutive`` (windows of ``jobs`` jobs from index ``first`` on),
        ``random`` (``count`` windows of ``jobs`` jobs at random positions,
        ``seed``), ``time`` (windows of ``step`` seconds of submit time in
        ``[start, end)``) or ``whole`` (the file as it is, not rebased).
    jobs
        Jobs per window (``consecutive``, ``random``).
    count
        Number of windows; ``None`` = as many as fit (not for ``random``).
    initial_state
        ``none``, ``recorded`` or ``simulated:POLICY``.
    """

    kind: str = "consecutive"
    jobs: int | None = None
    count: int | None = None
    seed: int = 0
    first: int = 0
    start: int | None = None
    end: int | None = None
    step: int | None = None
    initial_state: str = "none"

    def __post_init__(self) -> None:
        for name in ("jobs", "count", "seed", "first", "start", "end", "step"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool)
            ):
                raise ValueError(f"window {name} must be an integer, got {value!r}")
        if self.kind not in RULE_KINDS:
            raise ValueError(
                f"window kind {self.kind!r} is not one of {', '.join(RULE_KINDS)}"
            )
        if self.kind in ("consecutive", "random") and (self.jobs or 0) < 1:
            raise ValueError(f"{self.kind} windows need jobs >= 1")
        if self.kind == "random" and (self.count or 0) < 1:
            raise ValueError("random windows need count >= 1")
        if self.kind == "time" and (self.step or 0) < 1:
            raise ValueError("time windows need step >= 1 (seconds)")
        if self.count is not None and self.count < 1:
            raise ValueError(f"window count {self.count} must be >= 1")
        if self.first < 0:
            raise ValueError(f"first window job {self.first} is negative")
        _check_initial_state(self.initial_state)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> WindowRule:
        """Build from a TOML table; unknown keys are errors naming them."""
        unknown = sorted(set(data) - set(_RULE_KEYS))
        if unknown:
            raise ValueError(
                f"unknown window key(s) {', '.join(unknown)}; valid keys: "
                f"{', '.join(_RULE_KEYS)}"
            )
        return cls(**data)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """One window: a selection by position or by time, and an initial state."""

    first_job: int | None = None
    jobs: int | None = None
    start: int | None = None
    end: int | None = None
    initial_state: str = "none"
    whole: bool = False

    @property
    def key(self) -> str:
        """Stable text naming the window, e.g. ``first=200,jobs=100,state=none``."""
        if self.whole:
            return "whole"
        if self.first_job is not None:
            where = f"first={self.first_job},jobs={self.jobs}"
        else:
            where = f"start={self.start},end={self.end}"
        return f"{where},state={self.initial_state}"

    @classmethod
    def from_key(cls, key: str) -> WindowSpec:
        """Inverse of :attr:`key`: ``whole``, ``first=F,jobs=N,state=S`` or
        ``start=T0,end=T1,state=S``."""
        if key == "whole":
            return cls(whole=True)
        where, found, state = key.partition(",state=")
        if not found:
            raise ValueError(f"window key {key!r}: no state")
        fields: dict[str, int | None] = {}
        for part in where.split(","):
            name, _, value = part.partition("=")
            fields[name] = None if value == "None" else int(value)
        if set(fields) == {"first", "jobs"}:
            return cls(
                first_job=fields["first"], jobs=fields["jobs"], initial_state=state
            )
        if set(fields) == {"start", "end"}:
            return cls(start=fields["start"], end=fields["end"], initial_state=state)
        raise ValueError(f"window key {key!r}: unknown fields {sorted(fields)}")

    def cut(self, trace: Trace) -> Instance:
        """The window's instance (releases rebased to start at 0)."""
        from optsched.windows.window import cut_window

        if self.whole:
            return trace.instance
        simulated = self.initial_state.startswith("simulated:")
        instance = cut_window(
            trace,
            first_job=self.first_job,
            jobs=self.jobs,
            start=self.start,
            end=self.end,
            initial_state="none" if simulated else self.initial_state,
        )
        if simulated:
            instance = _hand_over_simulated(
                trace, instance, self.initial_state.partition(":")[2]
            )
        return instance


def select_windows(trace: Trace, rule: WindowRule) -> list[WindowSpec]:
    """All windows of ``trace`` the rule selects, in trace order.

    Windows that would be empty or run past the end of the trace are not
    produced; asking for more windows than fit is an error naming both.
    """
    if rule.kind == "whole":
        return [WindowSpec(whole=True)]
    if rule.kind == "time":
        return _time_windows(trace, rule)
    assert rule.jobs is not None
    total = len(trace.instance.jobs)
    fitting = max(0, (total - rule.first) // rule.jobs)
    if rule.kind == "consecutive":
        count = fitting if rule.count is None else rule.count
        if count > fitting or count == 0:
            raise ValueError(
                f"{count} windows of {rule.jobs} jobs from job {rule.first} do not "
                f"fit in the {total} jobs of the trace ({fitting} do)"
            )
        firsts = [rule.first + i * rule.jobs for i in range(count)]
    else:
        positions = total - rule.first - rule.jobs + 1
        assert rule.count is not None
        if positions < rule.count:
            raise ValueError(
                f"{rule.count} random windows of {rule.jobs} jobs need at least "
                f"{rule.count + rule.jobs - 1} jobs after job {rule.first}; the trace "
                f"has {total}"
            )
        # Distinct start positions drawn with the rule's own generator, sorted
        # so that window order follows the trace.
        rng = random.Random(rule.seed)
        firsts = sorted(
            rule.first + i for i in rng.sample(range(positions), rule.count)
        )
    return [
        WindowSpec(first_job=f, jobs=rule.jobs, initial_state=rule.initial_state)
        for f in firsts
    ]


def _time_windows(trace: Trace, rule: WindowRule) -> list[WindowSpec]:
    releases = sorted(j.release for j in trace.instance.jobs)
    if not releases:
        raise ValueError("the trace has no jobs")
    assert rule.step is not None
    start = releases[0] if rule.start is None else rule.start
    end = releases[-1] + 1 if rule.end is None else rule.end
    specs: list[WindowSpec] = []
    t = start
    while t < end and (rule.count is None or len(specs) < rule.count):
        first = bisect.bisect_left(releases, t)
        if first == len(releases) or releases[first] >= end:
            break
        # Jump over the empty steps to the one holding the next release: the
        # loop runs once per window, not once per step (a 1-second step over
        # a year of trace was 3e7 turns).
        t += (releases[first] - t) // rule.step * rule.step
        if t >= end:
            break
        t_end = min(t + rule.step, end)
        specs.append(WindowSpec(start=t, end=t_end, initial_state=rule.initial_state))
        t = t_end
    if not specs:
        from optsched.windows.window import submit_span

        span = submit_span(trace.instance.jobs)
        raise ValueError(f"no job is submitted in [{start}, {end}) ({span})")
    return specs


def _hand_over_simulated(trace: Trace, window: Instance, policy: str) -> Instance:
    """Add, as busy blocks, the jobs a simulated past still runs at window start."""
    from optsched.heuristics import simulate

    source_window = window.source.window
    assert source_window is not None
    t0 = source_window.shift
    ids = {j.id for j in window.jobs}
    past = [j for j in trace.instance.jobs if j.release < t0 and j.id not in ids]
    if not past:
        return _with_state(window, (), f"simulated:{policy}")
    history = trace.instance.with_jobs(past)
    schedule = simulate(history, policy).schedule
    blocks = []
    for job in past:
        placement = schedule[job.id]
        if placement.start <= t0 < placement.end:
            contiguous = window.machine.allocation == "contiguous"
            offset = placement.offset if contiguous else None
            blocks.append(
                BusyBlock(
                    start=max(0, placement.start - t0),
                    end=placement.end - t0,
                    size=job.size,
                    offset=offset,
                    label=f"job {job.id}",
                )
            )
    return _with_state(window, tuple(blocks), f"simulated:{policy}")


def _with_state(
    window: Instance, blocks: tuple[BusyBlock, ...], state: str
) -> Instance:
    machine = window.machine.replace(unavailable=window.machine.unavailable + blocks)
    source_window = window.source.window
    assert source_window is not None
    source = replace(window.source, window=replace(source_window, initial_state=state))
    return window.replace(machine=machine, source=source)
