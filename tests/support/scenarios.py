"""Co-reservation scenario files (``optsched coreserve simulate``) shared by
the command's tests and the input-refusal tests."""

from __future__ import annotations

from pathlib import Path

SCENARIO_HEAD = """\
[scenario]
name = "tiny"

[workload]
trace = "log.swf"
clusters = 3
"""
"""The scenario and workload sections of a small scenario, up to its
cluster count on line 6: the log ``log.swf`` beside the file, 3 clusters.
Further ``[workload]`` keys may follow at once (line 7 on)."""


def write_scenario(folder: Path, text: str) -> Path:
    """``text`` written as ``folder/s.toml`` (the log ``folder/log.swf`` is
    the caller's)."""
    path = folder / "s.toml"
    path.write_text(text)
    return path
