"""The tutorial "Rate your own policy" (docs/guide/your-policy.md) runs as
written: its policy is the example file, its commands and Python block run
from a copy of the repository's layout, the output it prints is the one
shown, and its picture is the one the commands draw.

``OPTSCHED_UPDATE_DOCS=1`` rewrites the shown output and the picture.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO, TRACES

PAGE = REPO / "docs" / "guide" / "your-policy.md"
PICTURE = REPO / "docs" / "guide" / "img" / "fair_share_gantt.svg"
POLICY = REPO / "docs" / "examples" / "fair_share.py"
UPDATE = os.environ.get("OPTSCHED_UPDATE_DOCS") == "1"

_FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_OUTPUT = re.compile(
    r"(<!-- output: tutorial-rows -->\n```text\n)(.*?)(^```)", re.MULTILINE | re.DOTALL
)


def blocks(language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(PAGE.read_text()) if lang == language]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that looks like the repository's root (instances/, docs/)."""
    folder = tmp_path_factory.mktemp("tutorial")
    for name in ("instances", "docs"):
        (folder / name).symlink_to(REPO / name)
    return folder


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[0] == "optsched", command
    return subprocess.run(
        [sys.executable, "-m", "optsched", *words[1:]],
        cwd=cwd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"},
    )  # fmt: skip


def test_the_policy_shown_is_the_example_file() -> None:
    assert blocks("python")[0] == POLICY.read_text()


def test_every_command_runs(workdir: Path) -> None:
    for block in blocks("sh"):
        for command in block.strip().splitlines():
            if "pwa:" in command:
                continue  # test_the_trace_command, below
            if command.startswith("optsched gap") and "--backend" not in command:
                command += " --time-limit 2"  # reduced: the last value counts
            done = run(command, workdir)
            assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    drawn = (workdir / "fair_share_gantt.svg").read_bytes()
    if UPDATE:
        PICTURE.write_bytes(drawn)
    shown = PICTURE.read_bytes()
    version = re.search(rb"Matplotlib v([\d.]+)", shown)
    import matplotlib

    if version is None or version.group(1).decode() != matplotlib.__version__:
        pytest.skip("the picture was drawn by another matplotlib version")
    assert drawn == shown, "run with OPTSCHED_UPDATE_DOCS=1 to redraw the picture"


def test_the_python_block_prints_what_is_shown(workdir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", blocks("python")[1]],
        cwd=workdir, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = PAGE.read_text()
    if UPDATE:
        PAGE.write_text(_OUTPUT.sub(lambda m: m[1] + done.stdout + m[3], text))
        text = PAGE.read_text()
    match = _OUTPUT.search(text)
    assert match is not None
    assert match[2] == done.stdout, "run with OPTSCHED_UPDATE_DOCS=1"


def test_the_trace_command(workdir: Path, tmp_path: Path) -> None:
    (command,) = [c for b in blocks("sh") for c in b.splitlines() if "pwa:" in c]
    if not (TRACES / "KTH-SP2-1996-2.1-cln.swf").exists():
        pytest.skip(f"real trace not available: {TRACES} is absent")
    env = {**os.environ, "OPTSCHED_DATA_DIR": str(tmp_path)}
    fetch = subprocess.run(
        [sys.executable, "-m", "optsched", "traces", "fetch",
         "pwa:KTH-SP2-1996-2.1-cln", "--from", str(TRACES)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert fetch.returncode == 0, fetch.stderr
    # Reduced: bounds only, instead of ten CP-SAT solves of 10 s per objective.
    words = [*shlex.split(command)[1:], "--backend", "bounds-only", "--no-progress"]
    done = subprocess.run(
        [sys.executable, "-m", "optsched", *words],
        cwd=workdir, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
