"""A report as a list of blocks, rendered to HTML or Markdown.

Blocks are headings, paragraphs, tables (cells already formatted as text)
and figures (PNG bytes). :func:`render_html` makes one self-contained page
(CSS inline, every image a ``data:image/png;base64`` URI);
:func:`write_markdown` writes Markdown with the PNG files in a folder
``<stem>_figures/`` beside it. Both write atomically: a crash leaves the old
report (or none), never half of one.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from optsched.io.atomic import atomic_write


@dataclass(frozen=True, slots=True)
class Heading:
    """A section title; ``level`` 1 is the page title."""

    text: str
    level: int = 2


@dataclass(frozen=True, slots=True)
class Paragraph:
    """Plain text; ``note`` paragraphs are set apart (warnings, caveats)."""

    text: str
    note: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    """A table of text cells; ``id`` names it in HTML (``<table id=...>``)."""

    id: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Image:
    """A PNG figure; ``name`` is its file stem in the Markdown variant."""

    name: str
    caption: str
    png: bytes


Block = Heading | Paragraph | Table | Image


def figure_png(figure: Figure, dpi: int = 100) -> bytes:
    """Render a matplotlib figure to PNG bytes with the Agg canvas.

    No pyplot: the figure never enters pyplot's global registry and no
    display backend is touched.
    """
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure with constrained layout."""
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


# ---------------------------------------------------------------------------
# HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
       margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f2f2f2; text-align: left; }
td { font-variant-numeric: tabular-nums; }
figure { margin: 0.5em 0 1.5em; } figcaption { font-size: 0.85em; color: #444; }
img { max-width: 100%; height: auto; }
p.note { background: #fff6d6; border-left: 4px solid #e0b000; padding: 0.4em 0.8em; }
"""


def _html_block(block: Block) -> str:
    if isinstance(block, Heading):
        level = min(max(block.level, 1), 6)
        return f"<h{level}>{html.escape(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        css = ' class="note"' if block.note else ""
        return f"<p{css}>{html.escape(block.text)}</p>"
    if isinstance(block, Table):
        head = "".join(f"<th>{html.escape(c)}</th>" for c in block.columns)
        body = "\n".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
            for row in block.rows
        )
        return (
            f'<table id="{html.escape(block.id)}">'
            f"<caption>{html.escape(block.caption)}</caption>\n"
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"
        )
    data = base64.b64encode(block.png).decode("ascii")
    caption = html.escape(block.caption)
    return (
        f'<figure id="{html.escape(block.name)}">'
        f'<img src="data:image/png;base64,{data}" alt="{caption}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def render_html(title: str, blocks: Sequence[Block]) -> str:
    """One self-contained HTML page."""
    body = "\n".join(_html_block(b) for b in blocks)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def write_html(path: Path, title: str, blocks: Sequence[Block]) -> Path:
    """Write :func:`render_html` to ``path`` atomically."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(render_html(title, blocks))
    return path


# ---------------------------------------------------------------------------
# Markdown

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|])")


def _md_text(text: str) -> str:
    """Escape Markdown syntax so that text stays text."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_cell(text: str) -> str:
    return _md_text(text).replace("\n", " ")


def _md_block(block: Block, figures: str, names: dict[str, str]) -> str:
    if isinstance(block, Heading):
        return f"{'#' * min(max(block.level, 1), 6)} {_md_text(block.text)}"
    if isinstance(block, Paragraph):
        text = _md_text(block.text)
        return f"> **Note:** {text}" if block.note else text
    if isinstance(block, Table):
        lines = [
            f"*{_md_text(block.caption)}*",
            "",
            "| " + " | ".join(_md_cell(c) for c in block.columns) + " |",
            "|" + "|".join("---" for _ in block.columns) + "|",
        ]
        lines += [
            "| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows
        ]
        return "\n".join(lines)
    target = f"{figures}/{names[block.name]}"
    return f"![{_md_cell(block.caption)}]({target})"


def _figure_names(blocks: Sequence[Block]) -> dict[str, str]:
    """File name of every image: ``NN-name.png`` in document order."""
    names: dict[str, str] = {}
    images = [b for b in blocks if isinstance(b, Image)]
    for number, image in enumerate(images, start=1):
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", image.name).strip("-") or "figure"
        names[image.name] = f"{number:02d}-{stem}.png"
    if len(names) != len(images):
        raise ValueError("report images need distinct names")
    return names


def render_markdown(title: str, blocks: Sequence[Block], figures: str) -> str:
    """Markdown text whose images link to ``figures/NN-name.png``."""
    names = _figure_names(blocks)
    parts = [f"# {_md_text(title)}"] if title else []
    parts += [_md_block(b, figures, names) for b in blocks]
    return "\n\n".join(parts) + "\n"


def write_markdown(path: Path, title: str, blocks: Sequence[Block]) -> Path:
    """Write Markdown to ``path`` and its PNG files to ``<stem>_figures/``.

    The figures are written to a fresh temporary folder that then replaces
    the old one, and the Markdown file is written last (atomically), so a
    failure half-way leaves the previous report intact.
    """
    path = Path(path)
    folder = path.with_name(f"{path.stem}_figures")
    names = _figure_names(blocks)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=path.parent))
    mask = os.umask(0)
    os.umask(mask)
    staging.chmod(0o777 & ~mask)  # mkdtemp makes it private (0o700)
    try:
        for block in blocks:
            if isinstance(block, Image):
                (staging / names[block.name]).write_bytes(block.png)
        _replace_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(render_markdown(title, blocks, folder.name))
    return path


def _replace_folder(new: Path, target: Path) -> None:
    """Put ``new`` at ``target``; an old ``target`` is removed after the swap."""
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(new, target)
    if old is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(old)
