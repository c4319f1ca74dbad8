"""What the worst-case tables need to know about a policy spec."""

from __future__ import annotations


def start_rule(policy: str) -> str:
    """The start rule of ``policy``: ``strict``, ``firstfit``, ``backfill``, ..."""
    name = policy.split(":", 1)[0]
    return {"fcfs": "strict", "firstfit": "firstfit"}.get(name, name)
