"""A report as a list of blocks, rendered to HTML or Markdown.

Blocks are headings, paragraphs, tables (cells already formatted as text)
and figures (matplotlib figures, rendered by the writer). :func:`render_html`
makes one self-contained page from the Jinja2 templates in ``templates/``
(package data; every value HTML-escaped, CSS inline, every figure an SVG in
a ``data:image/svg+xml;base64`` URI: sharp at any zoom, and an ``<img>``
runs no script); :func:`write_markdown` writes Markdown with PNG files at
:data:`MARKDOWN_DPI` dpi in a folder ``<stem>_figures/`` beside it. Both
write atomically: a crash leaves the old report (or none), never half of
one.

The figures folder is replaced on every run, so optsched marks the folders
it creates with a file :data:`FIGURES_MARKER` listing the files it wrote,
and replaces a folder only when it carries that mark and holds nothing
else (:func:`check_figures_folder`): a folder of the user's that happens to
have the same name is never deleted.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2
import markupsafe
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from optsched.errors import InputError
from optsched.io.atomic import atomic_write

FIGURES_MARKER = ".optsched-figures"
"""File in every figures folder optsched creates: the names of the files it
wrote there, one a line (after a comment line)."""

_MARKER_HEADER = "# written by optsched report, replaced by the next report"


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
    """A figure; ``name`` is its HTML id and its file stem in Markdown.

    ``draw`` makes the figure when the report is written: the HTML page
    renders it as SVG, the Markdown report as PNG (:func:`figure_svg`,
    :func:`figure_png`), and it is dropped at once. Holding figures instead
    would keep every one alive with its renderer's pixel buffer (artists
    keep a reference to it): 630 MB for a report of 45 figures at 200 dpi.
    """

    name: str
    caption: str
    draw: Callable[[], Figure]

    def render(self, form: str) -> bytes:
        """The figure as ``"svg"`` or ``"png"`` bytes; the figure is freed."""
        figure = self.draw()
        try:
            return figure_svg(figure) if form == "svg" else figure_png(figure)
        finally:
            figure.clear()  # breaks the artists' cycles: freed without gc


Block = Heading | Paragraph | Table | Image


MARKDOWN_DPI = 200
"""Resolution of the PNG figures of the Markdown report (print quality)."""

_SVG_SALT = "optsched"
"""Fixed salt of the ids matplotlib writes into SVG: the same report twice
gives the same bytes (matplotlib's default salt is random)."""


def figure_png(figure: Figure, dpi: int = MARKDOWN_DPI) -> bytes:
    """Render a matplotlib figure to PNG bytes with the Agg canvas.

    No pyplot: the figure never enters pyplot's global registry and no
    display backend is touched. No time stamp is written, so the bytes
    depend on the figure only.
    """
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def figure_svg(figure: Figure) -> bytes:
    """Render a matplotlib figure to SVG bytes, reproducibly.

    Text is drawn as paths (matplotlib's default), so the picture does not
    depend on the reader's fonts; the date is left out and the ids use a
    fixed salt, so the same figure always gives the same bytes.
    """
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": _SVG_SALT}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure with constrained layout."""
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


# ---------------------------------------------------------------------------
# HTML

LONG_CELL = 40
"""Cells longer than this many characters may wrap (class ``text``); the
others, numbers and short names, stay on one line."""

_BLOCK_KINDS = {Heading: "heading", Paragraph: "paragraph", Table: "table",
                Image: "figure"}  # fmt: skip
"""The macro of ``templates/blocks.html.j2`` that renders each block type."""


@functools.cache
def _templates() -> jinja2.Environment:
    """The report's templates (package data), HTML-escaping every value.

    ``finalize`` runs before escaping: control characters in user text are
    written as escapes (:func:`_printable`), as in the Markdown report.
    """
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("optsched.report", "templates"),
        autoescape=True,
        finalize=_printable_value,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["svg_data_uri"] = _svg_data_uri
    environment.globals["long_cell"] = LONG_CELL
    return environment


def _printable_value(value: object) -> object:
    # Markup is HTML the templates made (a rendered macro), not user text.
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return _printable(value)
    return value


def _svg_data_uri(image: Image) -> str:
    data = base64.b64encode(image.render("svg")).decode("ascii")
    return f"data:image/svg+xml;base64,{data}"


def _printable(text: str) -> str:
    # A report shown with cat or less must not move the cursor or clear the
    # screen: control characters in user text are written as escapes.
    from optsched.console import literal

    return literal(text)


def render_html(title: str, blocks: Sequence[Block]) -> str:
    """One self-contained HTML page (``templates/report.html.j2``)."""
    page = _templates().get_template("report.html.j2")
    return page.render(title=title, blocks=[(_BLOCK_KINDS[type(b)], b) for b in blocks])


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
    return _MD_SPECIAL.sub(r"\\\1", _printable(text))


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


def figures_folder(path: str | Path) -> Path:
    """The folder of the figures of the Markdown report ``path``."""
    path = Path(path)
    return path.with_name(f"{path.stem}_figures")


def check_figures_folder(folder: Path) -> None:
    """Fail unless ``folder`` is absent or a figures folder optsched wrote.

    A folder optsched wrote holds :data:`FIGURES_MARKER` and only the
    regular files that marker lists; replacing it loses nothing of the
    user's. Anything else (no marker, a file or folder it does not list, a
    symbolic link, a file in place of the folder) stops the report.

    Raises
    ------
    InputError
        ``folder: reason``, one line naming the folder.
    """
    if not folder.exists() and not folder.is_symlink():
        return
    advice = "move it away or give the report another name"
    if folder.is_symlink() or not folder.is_dir():
        raise InputError(
            f"exists and is not a figures folder optsched wrote; {advice}", folder
        )
    written = _marked_files(folder)
    if written is None:
        raise InputError(
            f"folder exists and optsched did not create it (no {FIGURES_MARKER} "
            f"file): it would be replaced; {advice}",
            folder,
        )
    strangers = sorted(
        entry.name
        for entry in folder.iterdir()
        if entry.name != FIGURES_MARKER
        and (entry.name not in written or entry.is_symlink() or not entry.is_file())
    )
    if strangers:
        shown = ", ".join(repr(name) for name in strangers[:3])
        more = f" and {len(strangers) - 3} more" if len(strangers) > 3 else ""
        raise InputError(
            f"folder holds files optsched did not write ({shown}{more}): it would "
            f"be replaced; {advice}",
            folder,
        )


def _marked_files(folder: Path) -> set[str] | None:
    """Names the marker of ``folder`` lists, or ``None`` without a marker."""
    marker = folder / FIGURES_MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    lines = marker.read_text(encoding="utf-8", errors="replace").splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def write_markdown(path: Path, title: str, blocks: Sequence[Block]) -> Path:
    """Write Markdown to ``path`` and its PNG files to ``<stem>_figures/``.

    The figures are written to a fresh temporary folder that then replaces
    the old one, and the Markdown file is written last (atomically), so a
    failure half-way leaves the previous report intact. An old folder is
    replaced only if optsched wrote it (:func:`check_figures_folder`).

    Raises
    ------
    InputError
        The figures folder exists and is not one optsched wrote; nothing is
        written.
    """
    path = Path(path)
    folder = figures_folder(path)
    check_figures_folder(folder)
    names = _figure_names(blocks)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=path.parent))
    mask = os.umask(0)
    os.umask(mask)
    staging.chmod(0o777 & ~mask)  # mkdtemp makes it private (0o700)
    try:
        for block in blocks:
            if isinstance(block, Image):
                (staging / names[block.name]).write_bytes(block.render("png"))
        marker = "\n".join([_MARKER_HEADER, *sorted(names.values())]) + "\n"
        (staging / FIGURES_MARKER).write_text(marker, encoding="utf-8")
        _replace_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(render_markdown(title, blocks, folder.name))
    return path


def _replace_folder(new: Path, target: Path) -> None:
    """Put ``new`` at ``target``; an old ``target`` is removed after the swap.

    The old folder is checked again just before (it may have changed while
    the report was computed), and then only the files its marker lists are
    deleted: a file that appeared since stays, in the renamed old folder.
    """
    old = None
    if target.exists() or target.is_symlink():
        check_figures_folder(target)
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(new, target)
    if old is not None:
        _remove_written(old / target.name)
        with contextlib.suppress(OSError):
            old.rmdir()


def _remove_written(folder: Path) -> None:
    """Delete the files the marker of ``folder`` lists, the marker, the folder."""
    with contextlib.suppress(OSError):
        for name in sorted(_marked_files(folder) or ()):
            (folder / name).unlink()
        (folder / FIGURES_MARKER).unlink()
        folder.rmdir()
