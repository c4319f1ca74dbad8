"""The outputs README.md and docs/ show are what the code prints now.

``docs/printed_outputs.py`` reruns every ```` ```text ```` block that starts
with ``$ COMMAND``; ``--check`` fails on any difference. When a change moves
a printed number, run ``python docs/printed_outputs.py`` and commit the
pages it rewrites.
"""

from __future__ import annotations

import subprocess
import sys

from support.paths import REPO

SCRIPT = REPO / "docs" / "printed_outputs.py"


def test_printed_outputs_are_current() -> None:
    done = subprocess.run(
        [sys.executable, SCRIPT, "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_sees_a_stale_block() -> None:
    """A block whose output differs is found (the check is not vacuous)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import printed_outputs
    finally:
        sys.path.remove(str(SCRIPT.parent))
    stale = "```text\n$ echo 1 2\n1 3\n```\n"
    assert printed_outputs.regenerated(stale) == "```text\n$ echo 1 2\n1 2\n```\n"
    current = "text\n```text\n$ printf 'a  \\nb\\n'\na\nb\n```\n"
    assert printed_outputs.regenerated(current) == current
