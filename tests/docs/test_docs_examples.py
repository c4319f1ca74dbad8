"""Every shell and Python example of README.md and docs/ runs as written.

Each fenced ``sh``, ``bash`` or ``python`` block is run in a fresh folder
that sees the checkout's ``instances/`` and ``benchmarks/``, after the
page's file blocks (```` ```json title="request.json" ````) are written
there. An HTML comment right above a block steers it:

``<!-- docs-test: skip REASON -->``
    not run (installs, the test suite itself: what ``.ci/run`` runs);
``<!-- docs-test: slow; replace "A" "B" -->``
    run with reduced limits (each ``A`` must be in the block) and marked
    slow.

``pwa:`` names resolve to a cache filled from the shared trace folder (no
network); blocks needing a trace skip when that folder is absent.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.paths import REPO, TRACES

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
RUNNABLE = {"sh": "bash", "bash": "bash", "python": "python"}
_BLOCK = re.compile(
    r"^(?:<!-- docs-test: (?P<directives>[^\n]*?) -->\n)?"
    r"```(?P<lang>\w+)(?P<attrs>[^\n]*)\n(?P<body>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_TITLE = re.compile(r'title="([^"]+)"')
_LINKED = ("instances", "benchmarks")
"""Checkout folders the examples name (bundled windows, suites, scenarios)."""


@dataclass(frozen=True)
class Example:
    """One fenced block of a page."""

    page: Path
    line: int
    lang: str
    body: str
    title: str | None
    directives: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def examples(page: Path) -> list[Example]:
    """The fenced blocks of ``page``, in order."""
    text = page.read_text()
    found = []
    for match in _BLOCK.finditer(text):
        title = _TITLE.search(match["attrs"])
        directives = match["directives"] or ""
        found.append(
            Example(
                page=page,
                line=text.count("\n", 0, match.start("lang")) + 1,
                lang=match["lang"],
                body=match["body"],
                title=title.group(1) if title else None,
                directives=tuple(d.strip() for d in directives.split(";") if d.strip()),
            )
        )
    return found


def _params() -> list[object]:
    params = []
    for page in PAGES:
        for example in examples(page):
            if example.lang not in RUNNABLE or example.title:
                continue
            slow = "slow" in example.directives
            marks = [pytest.mark.slow] if slow else []
            params.append(pytest.param(example, marks=marks, id=example.name))
    return params


def _reduced(example: Example) -> str:
    """The block with its ``replace "A" "B"`` directives applied."""
    body = example.body
    for directive in example.directives:
        if directive.startswith("replace "):
            old, new = shlex.split(directive)[1:]
            assert old in body, f"{example.name}: {old!r} is not in the block"
            body = body.replace(old, new)
    return body


def _needs_traces(body: str) -> bool:
    return any(word in body for word in ("pwa:", "benchmarks/", "optsched traces"))


@pytest.mark.parametrize("example", _params())
def test_example_runs(
    example: Example, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    for directive in example.directives:
        if directive.startswith("skip"):
            pytest.skip(f"{example.name}: {directive[4:].strip()}")
    body = _reduced(example)
    if _needs_traces(body):
        request.getfixturevalue("traces_dir")  # the trace cache, or a skip
    for folder in _LINKED:
        (tmp_path / folder).symlink_to(REPO / folder)
    for sibling in examples(example.page):
        if sibling.title:
            (tmp_path / sibling.title).write_text(sibling.body)
    bin_folder = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_folder}{os.pathsep}{os.environ['PATH']}"}
    env["COLUMNS"] = "80"
    command = (
        [sys.executable, "-c", body]
        if RUNNABLE[example.lang] == "python"
        else ["bash", "-euo", "pipefail", "-c", body]
    )
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, f"{example.name}:\n{body}\n{done.stderr}"
    assert "Traceback" not in done.stderr


def test_every_page_with_examples_is_found() -> None:
    """The parser sees the blocks (a broken pattern would run nothing)."""
    names = {p.values[0].name for p in _params()}  # type: ignore[attr-defined]
    assert "README.md:4" in names
    assert any(name.startswith("docs/guide/coreserve.md") for name in names)
    titled = [e.title for e in examples(REPO / "docs/guide/coreserve.md") if e.title]
    assert titled == ["request.json"]


def test_traces_are_needed_only_by_name() -> None:
    assert _needs_traces("optsched gap pwa:hpc2n")
    assert _needs_traces("optsched traces fetch hpc2n")
    assert not _needs_traces("optsched gap instances/kth_20.json")
    assert TRACES.name == "traces"
