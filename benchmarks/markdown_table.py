"""The Markdown tables the benchmark scripts print for benchmarks/README.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RULES = {"l": "---", "r": "---:", "c": ":-:"}
"""A column's alignment letter and its rule cell (left, right, centred)."""


def markdown_table(
    header: Sequence[str], align: str, rows: Iterable[Sequence[object]]
) -> list[str]:
    """The lines of a Markdown table: ``header``, its rule, one line per row.

    Parameters
    ----------
    header
        The column names.
    align
        One letter per column, ``l``, ``r`` or ``c`` (see :data:`RULES`).
    rows
        The cells, already formatted (each is written with ``str``).
    """
    if len(align) != len(header):
        raise ValueError(f"{len(header)} columns but alignment {align!r}")
    return [
        _line(header),
        "|" + "|".join(RULES[letter] for letter in align) + "|",
        *(_line(row) for row in rows),
    ]


def _line(cells: Sequence[object]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"
