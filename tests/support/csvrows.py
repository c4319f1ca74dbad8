"""A policy's CSV schedule as rows to edit, and rows written back (the
reliability tests damage one cell and run a command on the result)."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from optsched.cli import main


def simulated_rows(
    instance: Path, folder: Path, policy: str = "easy"
) -> list[list[str]]:
    """The rows (header first) of ``policy``'s CSV schedule of ``instance``."""
    out = folder / "s.csv"
    done = CliRunner().invoke(
        main, ["simulate", str(instance), "-p", policy, "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    with out.open(newline="") as handle:
        return list(csv.reader(handle))


def write_rows(path: Path, rows: list[list[str]]) -> Path:
    """``rows`` as a CSV file at ``path``."""
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path
