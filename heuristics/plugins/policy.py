"""A user's policy on the engine: the adapter between the public protocol
and the simulator.

The engine calls :meth:`UserPolicy.decide` at every scheduling point (after
the completions, busy-block changes and arrivals of an instant). The
adapter calls the user's hooks, then ``select(view)``, and starts the jobs
it returns, in that order, after checking each one: a job id that is not
waiting, a job that does not fit now, or a job returned twice stops the
run with one :class:`PolicyError` naming the policy, the time and the job.
A policy with a ``choose_mode(view, job)`` method is asked, for each job
it selects, which of the job's modes to start it on; the adapter gives
that mode to the engine
(:meth:`~optsched.heuristics.engine.core.Simulator.choose_mode`) after
checking that it is one of the job's, then checks that the job fits in it.
The schedule is the engine's, so it carries every guarantee the built-in
policies have (allocation, busy blocks, the site's rules are the engine's)
and goes through the independent checker like theirs.
"""

from __future__ import annotations

import copy
import dataclasses
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from optsched.heuristics.engine.core import DONE, RUNNING, WAITING, Simulator
from optsched.heuristics.engine.view import FinishedJob, PolicyView, engine_mode
from optsched.heuristics.plugins.loader import load_plugin
from optsched.heuristics.plugins.options import plugin_options
from optsched.heuristics.rigid.policies import EnginePolicy
from optsched.heuristics.spec import SpecError, join_spec


class PolicyError(ValueError):
    """A user policy broke the protocol or raised.

    ``str(error)`` is one line (policy, time, job, reason); ``user_traceback``
    holds the frames of the user's code when it raised (empty otherwise),
    which the command line prints above the line.
    """

    def __init__(self, message: str, user_traceback: str = "") -> None:
        super().__init__(message)
        self.user_traceback = user_traceback

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.user_traceback))


@dataclass(frozen=True)
class UserPolicy(EnginePolicy):
    """A policy written against the public protocol, run by the engine.

    Parameters
    ----------
    target
        Where its class is: ``module:Class``, ``file.py:Class`` or an
        entry-point name (:mod:`optsched.heuristics.plugins.loader`).
    options
        Keyword arguments of the class, typed, in its signature's order.
    digest
        sha256 of the class's source file (part of the store identity).
    implementation
        An object given directly (``simulate(instance, obj)``), used instead
        of a new instance of the class; each run works on a deep copy.
    """

    target: str = ""
    options: tuple[tuple[str, Any], ...] = ()
    digest: str = ""
    implementation: Any = field(default=None, compare=False, repr=False)

    rule: ClassVar[str] = "plugin"

    @property
    def spec(self) -> str:
        """``target[:key=value,...]``: parsing it gives this policy again."""
        items = [f"{key}={_spelled(value)}" for key, value in self.options]
        return join_spec(self.target, items)

    @property
    def label(self) -> str:
        """The class's ``name`` attribute, else the spec."""
        name = getattr(self._class, "name", None)
        return name if isinstance(name, str) and name else self.spec

    @property
    def _class(self) -> type:
        if self.implementation is not None:
            return type(self.implementation)
        return load_plugin(self.target, self.spec).cls

    @property
    def needs_profile(self) -> bool:
        return True  # PolicyView.earliest_start reads the profile

    @property
    def chooses_modes(self) -> bool:
        """Whether the class has the optional ``choose_mode(view, job)``:
        the engine then starts a moldable job on the mode it returns."""
        return callable(getattr(self._class, "choose_mode", None))

    def new_state(self, sim: Simulator) -> _Run:
        if self.implementation is not None:
            user = copy.deepcopy(self.implementation)
        else:
            user = _call(self, sim, self._class, **dict(self.options))
        number = {job_id: j for j, job_id in enumerate(sim.job_id)}
        return _Run(user, PolicyView(sim, number, self.oracle), number)

    def decide(self, sim: Simulator, state: _Run) -> None:
        user, view = state.user, state.view
        _hooks(self, sim, state)
        chosen = _call(self, sim, user.select, view)
        choose = getattr(user, "choose_mode", None)
        taken: set[int] = set()
        for job_id in _guarded(self, sim, chosen):
            j = _waiting(self, sim, state.number, taken, job_id)
            if choose is not None:
                _choose_mode(self, sim, state, choose, j)
            _check_fits(self, sim, j, in_mode=choose is not None)
            taken.add(j)
            sim.start(j)
        _watch_idle(self, sim, state, bool(taken))

    def stalled(
        self,
        sim: Simulator,
        why: str = "nothing left to happen (no arrival, no end, no busy block)",
    ) -> PolicyError:
        """The error of a run stuck with jobs waiting: the policy started none
        of them while nothing else could change."""
        return PolicyError(
            f"policy {self.label!r} left {len(sim.queue)} jobs waiting at "
            f"t={sim.now} with {why}: a policy must start some waiting job then"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Processes (local pool, Dask workers) load the class anew from the
        # spec; an object given directly travels as it is.
        if self.implementation is None:
            return (_from_spec, (self.spec, self.digest))
        return (
            UserPolicy,
            (
                self.order,
                self.oracle,
                self.seed,
                self.target,
                self.options,
                self.digest,
                self.implementation,
            ),
        )


@dataclass
class _Run:
    """Per-run memory: the user's object, the view, ids to job numbers, and
    how many scheduling points in a row changed nothing."""

    user: Any
    view: PolicyView
    number: dict[int, int]
    idle: int = 0


IDLE_POINTS = 10_000
"""Scheduling points in a row at which nothing arrived, ended or started
and nothing runs, after which a run is stopped as stuck. Only a site
calendar's wakes bring such points (the engine wakes the queue at each
calendar change); 10,000 of them are years of simulated time."""


def _watch_idle(policy: UserPolicy, sim: Simulator, state: _Run, started: bool) -> None:
    """Stop a policy that lets a site calendar wake an idle machine forever."""
    if started or sim.running_ends or sim.arrived or sim.finished:
        state.idle = 0
        return
    state.idle += 1
    if state.idle >= IDLE_POINTS:
        raise policy.stalled(
            sim, f"the machine idle for {IDLE_POINTS:,} site-calendar wakes in a row"
        )


def _from_spec(spec: str, digest: str) -> UserPolicy:
    policy = plugin_policy(spec)
    if digest and policy.digest != digest:
        raise PolicyError(
            f"policy {spec!r}: its source changed while the run was being planned"
        )
    return policy


def plugin_policy(spec: str, target: str | None = None, params: str = "") -> UserPolicy:
    """The :class:`UserPolicy` a plug-in spec names (:func:`plugin_parts`
    has split it, or is asked here)."""
    from optsched.heuristics.plugins.loader import plugin_parts

    if target is None:
        parts = plugin_parts(spec)
        if parts is None:
            raise SpecError(spec, "not a plug-in spec (module:Class or file.py:Class)")
        target, params = parts
    found = load_plugin(target, spec)
    options = plugin_options(found.cls, params, spec)
    oracle = getattr(found.cls, "oracle", False)
    if not isinstance(oracle, bool):
        raise SpecError(spec, "the class's oracle attribute must be True or False")
    return UserPolicy(
        oracle=oracle, target=target, options=options, digest=found.digest
    )


_OBJECTS: dict[str, UserPolicy] = {}
"""Policy objects given directly, by their spec (:func:`registered`)."""


def registered(spec: str) -> UserPolicy | None:
    """The policy object registered under ``spec`` in this process."""
    return _OBJECTS.get(spec)


def object_policy(obj: Any) -> UserPolicy:
    """A :class:`UserPolicy` running a policy object given directly.

    The object is registered in this process under its spec
    (``module:Class``; ``module:Class#2`` for a second object of one class),
    so that a suite that names policies by spec finds it again: the spec
    works in this process, and in worker processes when ``module`` is
    importable there (not ``__main__``).
    """
    for policy in _OBJECTS.values():
        if policy.implementation is obj:
            return policy
    made = _object_policy(obj)
    target, k = made.target, 1
    while made.target in _OBJECTS:
        k += 1
        made = dataclasses.replace(made, target=f"{target}#{k}")
    _OBJECTS[made.spec] = made
    return made


def _object_policy(obj: Any) -> UserPolicy:
    import hashlib
    import inspect

    cls = type(obj)
    try:
        source = inspect.getsourcefile(cls)
    except (TypeError, OSError):  # defined in a notebook, python -c or a REPL
        source = None
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest() if source else ""
    oracle = getattr(obj, "oracle", False)
    if not isinstance(oracle, bool):
        raise ValueError(f"policy {cls.__qualname__}: oracle must be True or False")
    return UserPolicy(
        oracle=oracle,
        target=f"{cls.__module__}:{cls.__qualname__}",
        digest=digest,
        implementation=obj,
    )


def _spelled(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _hooks(policy: UserPolicy, sim: Simulator, state: _Run) -> None:
    """``on_submit(view, job)`` for each arrival and ``on_end(view, job)``
    for each run that ended since the previous scheduling point."""
    user, view = state.user, state.view
    on_end = getattr(user, "on_end", None)
    if on_end is not None:
        for j, end, _ in sim.finished:
            _call(policy, sim, on_end, view, _finished(sim, j, end))
    on_submit = getattr(user, "on_submit", None)
    if on_submit is not None:
        for j in sim.arrived:
            _call(policy, sim, on_submit, view, view.job(sim.job_id[j]))


def _finished(sim: Simulator, j: int, end: int) -> FinishedJob:
    completed = sim.state[j] == DONE
    start = sim.start_time[j] if completed else sim.lost[j][-1].start
    return FinishedJob(sim.job_id[j], sim.size[j], start, end, completed)


def _refusal(policy: UserPolicy, sim: Simulator, reason: str) -> PolicyError:
    return PolicyError(f"policy {policy.label!r} at t={sim.now}: {reason}")


def _waiting(
    policy: UserPolicy,
    sim: Simulator,
    number: dict[int, int],
    taken: set[int],
    job_id: Any,
) -> int:
    """The engine's number of ``job_id`` if it is a waiting job, else the
    :class:`PolicyError` saying why not."""

    def refuse(reason: str) -> PolicyError:
        return _refusal(policy, sim, reason)

    if isinstance(job_id, bool) or not isinstance(job_id, int):
        raise refuse(f"select returned {job_id!r}, not a job id (an int)")
    j = number.get(job_id)
    if j is None:
        raise refuse(f"job {job_id} is not in the instance")
    if j in taken or sim.state[j] == RUNNING:
        raise refuse(f"job {job_id} is already running")
    if sim.state[j] != WAITING:
        what = "has already finished" if sim.state[j] == DONE else "has not arrived yet"
        raise refuse(f"job {job_id} {what}")
    return j


def _check_fits(policy: UserPolicy, sim: Simulator, j: int, in_mode: bool) -> None:
    """A :class:`PolicyError` unless waiting job ``j`` may start now (in the
    mode ``choose_mode`` gave it, when ``in_mode``)."""
    job_id = sim.job_id[j]
    mode = f" in its {sim.size[j]}-processor mode" if in_mode else ""
    if sim.size[j] > sim.free:
        raise _refusal(
            policy,
            sim,
            f"job {job_id}{mode} needs {sim.size[j]} processors, {sim.free} are free",
        )
    if not (sim.simple or sim.can_start(j)):
        raise _refusal(
            policy,
            sim,
            f"job {job_id}{mode} cannot start now (a busy block, the processors' "
            "layout or the site's rules; ask view.fits first)",
        )


def _choose_mode(
    policy: UserPolicy,
    sim: Simulator,
    state: _Run,
    choose: Callable[..., Any],
    j: int,
) -> None:
    """Give job ``j`` the mode ``choose_mode(view, job)`` returns (``None``:
    the mode the view shows for it), after checking it is one of its own."""
    job = state.view.job(sim.job_id[j])
    chosen = _call(policy, sim, choose, state.view, job)
    if chosen is None:
        return
    mode = engine_mode(sim, j, chosen)
    if mode is None:
        shown = ", ".join(f"{m.processors}" for m in job.modes)
        raise _refusal(
            policy,
            sim,
            f"choose_mode returned {chosen!r} for job {job.id}, not one of its "
            f"modes (on {shown} processors; return one of job.modes)",
        )
    sim.choose_mode(j, mode)


def _guarded(policy: UserPolicy, sim: Simulator, chosen: Any) -> Iterable[Any]:
    """The items ``select`` returned, its own errors reported as the user's."""
    if chosen is None:
        return
    try:
        iterator = iter(chosen)
    except TypeError:
        raise PolicyError(
            f"policy {policy.label!r} at t={sim.now}: select returned "
            f"{type(chosen).__name__}, not an iterable of job ids"
        ) from None
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except Exception as error:
            raise _raised(policy, sim, error) from error
        yield item


def _call(
    policy: UserPolicy,
    sim: Simulator,
    function: Callable[..., Any],
    *args: Any,
    **kwargs: Any,
) -> Any:
    try:
        return function(*args, **kwargs)
    except PolicyError:
        raise
    except Exception as error:
        raise _raised(policy, sim, error) from error


def _raised(policy: UserPolicy, sim: Simulator, error: Exception) -> PolicyError:
    """The user's error as one line, with the frames of their code."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not _ours(frame.filename)
    ]
    shown = "".join(traceback.format_list(frames))
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return PolicyError(
        f"policy {policy.label!r} raised at t={sim.now}: {text}",
        f"Traceback of the policy (most recent call last):\n{shown}" if shown else "",
    )


def _our_folders() -> tuple[str, ...]:
    # The packages' folders, found without importing optsched.models
    # (heuristics never import models).
    from importlib.util import find_spec

    folders = [str(Path(__file__).resolve().parents[1])]  # the heuristics
    for name in ("optsched", "optsched.models"):
        found = find_spec(name)
        folders += found.submodule_search_locations or [] if found else []
    return tuple(str(Path(f).resolve()) for f in folders)


def _ours(filename: str) -> bool:
    # Frames of optsched's packages are ours; the rest (the user's code and
    # the libraries it calls) is shown.
    return str(Path(filename).resolve()).startswith(_our_folders())
