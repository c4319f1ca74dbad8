"""A griffe extension: optsched's docstring markup, rendered by mkdocstrings.

The docstrings follow numpydoc, whose prose is reStructuredText (Sphinx
roles such as ``:func:`read```, ``.. math::`` directives, ``::`` literal
blocks and simple tables) so that ``help()`` and Sphinx read them; the API
reference renders Markdown. This extension rewrites those few constructs
before rendering, without touching the source:

- a role ``:func:`~a.b.c``` becomes the code span ```c``` (``a.b.c`` without
  the tilde), as Sphinx shows it;
- ``.. math:: f(x)`` (and its indented continuation) becomes a ``text`` code
  block, so formulas are shown as written, with no JavaScript from a CDN;
- a paragraph ending in ``::`` loses one colon (Markdown already shows the
  indented block after it as code);
- a simple table (lines of ``=`` runs framing rows) becomes a Markdown table.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

try:
    from griffe import Extension
except ModuleNotFoundError:  # the docs extra is absent: tests use to_markdown
    Extension = object  # type: ignore[assignment,misc]

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj):`(~?)([^`]+)`")
_BORDER = re.compile(r"^\s*=+(?: +=+)+\s*$")


def _role(match: re.Match[str]) -> str:
    target = match.group(2).strip()
    shown = target.rsplit(".", 1)[-1] if match.group(1) else target
    return f"`{shown}`"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _math(lines: list[str], index: int) -> tuple[list[str], int]:
    """The ``.. math::`` directive at ``lines[index]`` as a fenced block."""
    line = lines[index]
    margin = _indent(line)
    formula = [line.split("::", 1)[1].strip()]
    index += 1
    while index < len(lines) and (
        not lines[index].strip() or _indent(lines[index]) > margin
    ):
        formula.append(lines[index].strip())
        index += 1
    body = [text for text in formula if text]
    pad = " " * margin
    fence = f"{pad}```"
    return [f"{fence}text", *(pad + text for text in body), fence, ""], index


def _columns(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _cells(line: str, starts: list[int]) -> list[str]:
    """Cut ``line`` at the column starts, moving a cut that falls inside a
    word to the space after it (docutils allows a first column's text to
    run past its border, as ``bounds-only`` does in :mod:`optsched.models`)."""
    cuts = []
    for start in starts[1:]:
        while 0 < start < len(line) and not line[start - 1].isspace():
            start += 1
        cuts.append(start)
    bounds = [starts[0], *cuts, len(line)]
    return [line[a:b].strip() for a, b in itertools.pairwise(bounds)]


def _rows(
    lines: list[str], index: int, starts: list[int]
) -> tuple[list[list[str]], int]:
    """The rows from ``lines[index]`` up to the next border, and its index."""
    rows: list[list[str]] = []
    while index < len(lines) and not _BORDER.match(lines[index]):
        cells = _cells(lines[index], starts)
        if rows and not cells[0]:
            # A continuation line: its text joins the row above, cell by cell.
            pairs = zip(rows[-1], cells, strict=True)
            rows[-1] = [f"{a} {b}".strip() for a, b in pairs]
        elif lines[index].strip():
            rows.append(cells)
        index += 1
    return rows, index


def _closes(lines: list[str], index: int) -> bool:
    """Whether the border at ``lines[index]`` ends its table: no row follows
    it, or no border follows the rows (then they are text after the table)."""
    for line in lines[index + 1 :]:
        if not line.strip():
            return True
        if _BORDER.match(line):
            return False
    return True


def _table(lines: list[str], index: int) -> tuple[list[str], int]:
    """The simple table opening at ``lines[index]`` as a Markdown table.

    A table with a header has three borders (top, under the header, bottom):
    its first rows become the Markdown header, otherwise the header is empty.
    """
    starts = [a for a, _ in _columns(lines[index])]
    pad = " " * _indent(lines[index])
    blocks: list[list[list[str]]] = []
    index += 1
    while True:
        rows, index = _rows(lines, index, starts)
        blocks.append(rows)
        if index >= len(lines) or _closes(lines, index):
            break
        index += 1
    header = blocks[0] if len(blocks) > 1 else [[""] * len(starts)]
    body = [row for block in blocks[len(blocks) > 1 :] for row in block]
    head = [" ".join(cell).strip() for cell in zip(*header, strict=True)]
    out = [pad + "| " + " | ".join(head) + " |"]
    out.append(pad + "|" + "|".join(["---"] * len(starts)) + "|")
    out += [pad + "| " + " | ".join(row) + " |" for row in body]
    return ["", *out, ""], index + 1


def to_markdown(text: str) -> str:
    """``text``, a numpydoc docstring, with its reStructuredText made Markdown."""
    # Tables are cut by columns first: a role rewritten shifts the text.
    lines = text.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith(".. math::"):
            block, index = _math(lines, index)
            out += block
        elif _BORDER.match(line):
            block, index = _table(lines, index)
            out += block
        else:
            if line.endswith("::") and not line.lstrip().startswith(".."):
                line = line[:-1]
            out.append(line)
            index += 1
    return _ROLE.sub(_role, "\n".join(out))


class RstMarkup(Extension):
    """Rewrite every docstring of the loaded objects with :func:`to_markdown`."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
