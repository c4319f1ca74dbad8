"""Policies that choose processor counts: rescaling, adaptive partitioning,
EASY with scaling and DEQ.

Adaptive partitioning and EASY with scaling choose a job's mode when it
starts: they are engine policies
(:mod:`optsched.heuristics.moldable.policies`), run by the engine of
:mod:`optsched.heuristics.engine.core` with its "choose a mode at start"
hook. Rescaling searches modes around a whole inner schedule, and DEQ
changes a job's processor count while it runs (malleable jobs), so they
build their schedules themselves; :class:`MoldablePolicy` (a
:class:`~optsched.heuristics.engine.standalone.Standalone`) wraps each so
that it is named, parsed and simulated like every other policy (``optsched
simulate -p rescale:search=deluge,budget=1000,inner=pbi``).

On a rigid instance (no job has modes) the moldable policies have nothing
to choose: rescaling returns its inner scheduler's schedule, adaptive
partitioning and EASY with scaling run every job at its size, and DEQ
refuses (it needs malleable jobs).

``deq`` builds malleable pieces and refuses jobs that are not malleable:
its schedules exist for malleable windows only, where they are schedules
of the problem (an upper bound of its optimum).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from optsched.heuristics.engine.standalone import Standalone, algorithm_options
from optsched.heuristics.moldable.policies import (
    MOLDABLE_POLICY_NAMES,
    moldable_policy,
)
from optsched.heuristics.rigid.policies import Policy
from optsched.heuristics.spec import Family, SpecParts, join_spec, spec_name
from optsched.instance import Instance
from optsched.schedule import Schedule

MOLDABLE_NAMES: tuple[str, ...] = ("rescale", "adaptive", "easy-scaling", "deq")
"""Policy names that choose processor counts (see the module docstring)."""


def chooses_sizes(spec: str) -> bool:
    """Whether the policy ``spec`` chooses processor counts (by its name)."""
    return spec_name(spec) in MOLDABLE_NAMES


@dataclass(frozen=True)
class MoldablePolicy(Standalone):
    """A moldable or malleable algorithm run as a policy.

    Parameters
    ----------
    algorithm
        Its spec: ``rescale:...``
        (:func:`optsched.heuristics.moldable.rescaling.parse_rescale`) or
        ``deq`` (:func:`optsched.heuristics.moldable.deq.parse_deq`).
    """

    algorithm: str = "deq"

    rule: ClassVar[str] = "moldable"
    parsers: ClassVar[Mapping[str, str]] = {
        "rescale": "optsched.heuristics.moldable.rescaling:parse_rescale",
        "": "optsched.heuristics.moldable.deq:parse_deq",
    }

    def _schedule(self, instance: Instance) -> Schedule:
        if self.name == "rescale":
            from optsched.heuristics.moldable.rescaling import run_rescale

            return run_rescale(instance, self.algorithm)
        from optsched.heuristics.moldable.deq import deq

        return deq(instance, **self._options())


def parse_moldable(parts: SpecParts) -> Policy:
    """The policy named by a spec's tokens: the engine policies of
    :func:`~optsched.heuristics.moldable.policies.moldable_policy`, or a
    :class:`MoldablePolicy`.

    Its canonical spec: rescaling's from its options (every option written,
    in one order: :func:`~optsched.heuristics.moldable.rescaling.
    rescale_spec`); DEQ's options as written, in their order.

    Raises
    ------
    ValueError
        An unknown key, a bad value (the algorithm's parser).
    """
    if parts.name in MOLDABLE_POLICY_NAMES:
        return moldable_policy(parts)
    # errors name the spec as written
    options = algorithm_options(parts, MoldablePolicy.parsers)
    if parts.name == "rescale":
        from optsched.heuristics.moldable.rescaling import rescale_spec

        algorithm = rescale_spec(**options)
    else:
        items = (f"{key}={value}" for key, value in parts.options().items())
        algorithm = join_spec(parts.name, items)
    return MoldablePolicy(algorithm=algorithm)


FAMILY = Family(parse_moldable, names=MOLDABLE_NAMES)
"""The policies that choose processor counts in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
