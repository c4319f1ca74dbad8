"""Run the tutorials', the gallery's and the Batsim page's blocks in order, and
make again what they show: printed outputs and pictures.

A page here is a story: each block uses the files the blocks above it
wrote. A fenced ``sh`` or ``python`` block right under
``<!-- docs-test: skip run in order by docs/run_pages.py -->`` runs (``sh``
with ``bash -euo pipefail``, ``python`` with ``python -c``), in page order,
in one fresh folder per page that sees the checkout's ``instances/``,
``benchmarks/`` and ``docs/``; the page's file blocks
(```` ```toml title="NAME" ````) are written there first. Then:

- a ``text`` block right under ``<!-- output -->`` shows what the block
  before it printed on stdout (``COLUMNS=80``, trailing blanks dropped);
- each picture ``![...](img/NAME.svg)`` is the file ``NAME.svg`` the
  blocks wrote, copied beside the page (``img/``).

A block under ``<!-- docs-test: skip needs evalys ... -->`` runs here only
when evalys is installed (its output is then checked too).

Usage::

    python docs/run_pages.py                  # rewrite outputs and pictures
    python docs/run_pages.py --check          # exit 1 naming what is stale
    python docs/run_pages.py --png DIR        # also write the pictures as PNG
    python docs/run_pages.py --from FOLDER    # pwa: traces from a local copy

``tests/docs/test_run_pages.py`` runs ``--check``'s comparison (outputs
always; pictures when matplotlib's version is the one that drew them).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [
    REPO / "docs" / "guide" / name
    for name in ("tutorial.md", "gallery.md", "batsim.md", "your-policy.md")
]
RUN = "docs-test: skip run in order by docs/run_pages.py"
EVALYS = "docs-test: skip needs evalys"
_LINKED = ("instances", "benchmarks", "docs")
_BLOCK = re.compile(
    r"^(?:<!-- (?P<comment>[^\n]*?) -->\n)?"
    r"```(?P<lang>\w+)(?P<attrs>[^\n]*)\n(?P<body>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_TITLE = re.compile(r'title="([^"]+)"')
_PICTURE = re.compile(r"!\[[^\]]*\]\(img/([^)\s]+\.svg)\)")


@dataclass
class Block:
    """One fenced block of a page, with the comment right above it."""

    comment: str
    lang: str
    title: str | None
    body: str
    span: tuple[int, int]  # of the body, in the page's text


@dataclass
class Run:
    """What running a page gave: outputs by block index and the folder."""

    folder: Path
    outputs: dict[int, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text``, in order."""
    found = []
    for match in _BLOCK.finditer(text):
        title = _TITLE.search(match["attrs"])
        found.append(
            Block(
                comment=(match["comment"] or "").strip(),
                lang=match["lang"],
                title=title.group(1) if title else None,
                body=match["body"],
                span=match.span("body"),
            )
        )
    return found


def pictures(text: str) -> list[str]:
    """File names of the pictures ``text`` shows from ``img/``."""
    return _PICTURE.findall(text)


def _runs_here(block: Block) -> bool:
    if block.comment.startswith(RUN):
        return True
    return block.comment.startswith(EVALYS) and _has_evalys()


def _has_evalys() -> bool:
    return importlib.util.find_spec("evalys") is not None


def _clean(stdout: str) -> str:
    # Trailing blanks (rich pads a table's title) would not survive an
    # editor's or a Markdown linter's clean-up.
    return "".join(line.rstrip() + "\n" for line in stdout.splitlines())


def run_page(
    page: Path, folder: Path, env: Mapping[str, str], png: bool = False
) -> Run:
    """Run the blocks of ``page`` in ``folder`` (empty); ``png``: write the
    pictures as PNG instead of SVG (for looking at them)."""
    text = page.read_text()
    for name in _LINKED:
        (folder / name).symlink_to(REPO / name)
    page_blocks = blocks(text)
    for block in page_blocks:
        if block.title:
            (folder / block.title).write_text(block.body)
    run = Run(folder)
    shown = pictures(text)
    for index, block in enumerate(page_blocks):
        if block.comment.startswith(EVALYS) and not _has_evalys():
            run.skipped.append(f"{page.name}: a block needs evalys (not installed)")
        if not _runs_here(block):
            continue
        body = block.body
        if png:
            for name in shown:
                body = body.replace(name, name[: -len(".svg")] + ".png")
        command = (
            [sys.executable, "-c", body]
            if block.lang == "python"
            else ["bash", "-euo", "pipefail", "-c", body]
        )
        done = subprocess.run(
            command, cwd=folder, env=dict(env), capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{page.relative_to(REPO)}: block {index} failed "
                f"({done.returncode}):\n{body}\n{done.stderr}"
            )
        run.outputs[index] = _clean(done.stdout)
    return run


def shown_outputs(text: str) -> dict[int, tuple[int, int, str]]:
    """For each block followed by an ``<!-- output -->`` text block: the
    index of the block it shows the output of, and that text block's span
    and body."""
    page_blocks = blocks(text)
    shown = {}
    for index, block in enumerate(page_blocks):
        if block.lang == "text" and block.comment == "output" and index > 0:
            shown[index - 1] = (*block.span, block.body)
    return shown


def updated_text(text: str, run: Run) -> str:
    """``text`` with every shown output made what its block printed."""
    pieces, last = [], 0
    for source, (start, end, _) in sorted(
        shown_outputs(text).items(), key=lambda item: item[1][0]
    ):
        if source not in run.outputs:
            continue  # not run here (evalys absent): left as it is
        pieces += [text[last:start], run.outputs[source]]
        last = end
    return "".join([*pieces, text[last:]])


def environment(traces_from: str | None, data_dir: Path | None) -> dict[str, str]:
    """The environment the blocks run in: this Python's ``bin`` first on
    ``PATH``, 80 columns, and the trace cache and mirror when given."""
    env = {**os.environ, "COLUMNS": "80"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    if traces_from is not None:
        env["OPTSCHED_TRACES_FROM"] = traces_from
    if data_dir is not None:
        env["OPTSCHED_DATA_DIR"] = str(data_dir)
    return env


def stale(page: Path, run: Run) -> list[str]:
    """What of ``page`` differs from what ``run`` made (outputs, pictures)."""
    text = page.read_text()
    found = []
    if updated_text(text, run) != text:
        found.append(f"{page.relative_to(REPO)}: a printed output changed")
    for name in pictures(text):
        committed = page.parent / "img" / name
        drawn = run.folder / name
        if not committed.exists() or committed.read_bytes() != drawn.read_bytes():
            found.append(f"{committed.relative_to(REPO)}: the picture changed")
    return found


def update(page: Path, run: Run) -> None:
    """Rewrite ``page``'s outputs and copy its pictures beside it."""
    text = page.read_text()
    new = updated_text(text, run)
    if new != text:
        page.write_text(new)
    for name in pictures(new):
        target = page.parent / "img" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run.folder / name, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report, do not write")
    parser.add_argument("--png", metavar="DIR", help="write PNG pictures to DIR")
    parser.add_argument(
        "--from", dest="traces_from", help="fetch pwa: traces from this mirror"
    )
    parser.add_argument("pages", nargs="*", type=Path, default=PAGES)
    args = parser.parse_args(argv)
    differences = []
    with tempfile.TemporaryDirectory() as scratch:
        env = environment(args.traces_from, None)
        for page in args.pages:
            page = page.resolve()
            folder = Path(tempfile.mkdtemp(dir=scratch))
            run = run_page(page, folder, env, png=args.png is not None)
            if args.png is not None:
                Path(args.png).mkdir(parents=True, exist_ok=True)
                for name in pictures(page.read_text()):
                    png = name[: -len(".svg")] + ".png"
                    shutil.copyfile(folder / png, Path(args.png) / png)
                continue
            if args.check:
                differences += stale(page, run)
            else:
                update(page, run)
    print("\n".join(differences))
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
