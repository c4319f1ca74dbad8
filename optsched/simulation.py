"""How a policy is simulated: the options every command shares.

``optsched simulate``, ``gap`` and ``compare`` take them as flags, a suite as
its ``[run]`` table (:mod:`optsched.bench.suite`), the library as keyword
arguments of :func:`optsched.heuristics.simulate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

RUN_KEYS = ("kill_at_estimate", "allocation_rule", "migration")
"""The option names, in the order they are listed."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How the policies of a suite are simulated (``[run]``; the options
    of :func:`optsched.heuristics.simulate`)."""

    kill_at_estimate: bool = False
    allocation_rule: str = "first-fit"
    migration: bool = False

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> RunOptions:
        """The options a task's parameters hold (absent keys: the default)."""
        return cls(**{key: params[key] for key in RUN_KEYS if key in params})

    def params(self) -> dict[str, Any]:
        """The options that are not the default (a policy task's parameters:
        the ids of default runs never change)."""
        default = RunOptions()
        return {
            key: getattr(self, key)
            for key in RUN_KEYS
            if getattr(self, key) != getattr(default, key)
        }
