"""Policies whose schedules are in pieces: PBI, PSRS and gang scheduling.

The engine of :mod:`optsched.heuristics.engine.core` starts jobs and lets them
run to their end; a preemptive policy instead builds every job's pieces
(:class:`~optsched.schedule.Piece`). :class:`Preemptive` wraps such an
algorithm so that it is named, parsed and simulated like every other
policy (``optsched simulate -p pbi:order=literal``), and so that the
analysis pipeline knows its schedules are preemptive: they are compared
with the *preemptive* optimum, and never offered as upper bounds of the
non-preemptive problem (:func:`preempts`).

``pbi`` and ``psrs`` run in the batch framework over the release times
(:func:`optsched.heuristics.preempt.algorithms.batched`): jobs released while a
batch runs wait for the next batch. They are clairvoyant, as the offline
algorithms are: they plan with the actual run times, not the estimates.
``gang`` is online and needs no run time at all
(:func:`optsched.heuristics.preempt.gang.gang`: an Ousterhout matrix, LLNL's job
classes and their cost function).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from optsched.heuristics.engine.standalone import Standalone, algorithm_options
from optsched.heuristics.spec import Family, SpecParts, join_spec, spec_name
from optsched.instance import Instance
from optsched.schedule import Schedule

PREEMPTIVE_NAMES: tuple[str, ...] = ("pbi", "psrs", "gang")
"""Policy names whose schedules are preemptive."""


def preempts(spec: str) -> bool:
    """Whether the policy ``spec`` builds preemptive schedules: by its name,
    or, for rescaling (:mod:`optsched.heuristics.moldable.rescaling`), by its inner
    scheduler's (PBI by default)."""
    name = spec_name(spec)
    if name == "rescale":
        from optsched.heuristics.moldable.rescaling import parse_rescale

        try:
            inner = parse_rescale(spec)["inner"]
        except ValueError:
            return False  # not a policy: nothing to compare
        return preempts(str(inner))
    return name in PREEMPTIVE_NAMES


@dataclass(frozen=True)
class Preemptive(Standalone):
    """A preemptive algorithm run as a policy (see the module docstring).

    Parameters
    ----------
    algorithm
        Its spec, e.g. ``"pbi:order=literal"``, ``"psrs"`` (validated by
        :func:`optsched.heuristics.preempt.algorithms.parse_preemptive`) or
        ``"gang:packing=buddy,quantum=600"``
        (:func:`optsched.heuristics.preempt.gang.parse_gang_spec`).
    """

    algorithm: str = "pbi"

    rule: ClassVar[str] = "preemptive"
    parsers: ClassVar[Mapping[str, str]] = {
        "gang": "optsched.heuristics.preempt.gang:parse_gang_spec",
        # PBI and PSRS: checked only (batched() reads the spec itself)
        "": "optsched.heuristics.preempt.algorithms:parse_preemptive",
    }

    def _schedule(self, instance: Instance) -> Schedule:
        """Every job complete, in pieces."""
        if self.name == "gang":
            from optsched.heuristics.preempt.gang import gang

            return gang(instance, **self._options())
        from optsched.heuristics.preempt.algorithms import batched

        return batched(instance, self.algorithm)


def parse_preemptive_policy(parts: SpecParts) -> Preemptive:
    """The :class:`Preemptive` policy named by a spec's tokens.

    Its canonical spec keeps the values as written (gang's ``classes=FILE``
    is a path) and sorts the options, so that equal specs compare equal.

    Raises
    ------
    ValueError
        An unknown key, a bad value (the algorithm's parser).
    """
    algorithm_options(parts, Preemptive.parsers)  # errors name the spec as written
    items = sorted(f"{key}={value}" for key, value in parts.options().items())
    return Preemptive(algorithm=join_spec(parts.name, items))


FAMILY = Family(parse_preemptive_policy, names=PREEMPTIVE_NAMES)
"""The preemptive policies in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
