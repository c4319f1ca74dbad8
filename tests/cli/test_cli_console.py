"""User text goes out literally: no emoji codes, no rich markup."""

from __future__ import annotations

import io
from pathlib import Path

from click.testing import CliRunner
from rich.table import Table

from optsched.cli import main
from optsched.console import console, stderr_console, wide_console
from optsched.instance import Instance, Job, Machine
from optsched.io.native import write_native

NAME = "wct:one:relative[red]x[/red]"


def _instance_file(tmp_path: Path) -> Path:
    jobs = (Job(1, 0, 1, 3), Job(2, 0, 2, 2))
    path = tmp_path / "literal.json"
    write_native(Instance(Machine(2), jobs, name=NAME), path)
    return path


def test_console_prints_text_and_table_cells_literally() -> None:
    screen = io.StringIO()
    out = console(file=screen, width=120)
    table = Table(title=f"title {NAME}")
    table.add_column("header :one: [bold]h[/bold]")
    table.add_row(f"cell {NAME}")
    out.print(table)
    out.print(f"line {NAME}")
    text = screen.getvalue()
    for literal in (
        f"title {NAME}",
        "header :one: [bold]h[/bold]",
        f"cell {NAME}",
        f"line {NAME}",
    ):
        assert literal in text
    assert "1️⃣" not in text


def test_console_variants_keep_markup_and_emoji_off() -> None:
    variants = (console(markup=True, emoji=True), stderr_console(), wide_console())
    for made in variants:
        screen = io.StringIO()
        made.file = screen
        made.print(NAME)
        assert screen.getvalue() == NAME + "\n"
    assert stderr_console().stderr
    assert wide_console(stderr=True).stderr


def test_compare_and_simulate_print_names_literally(tmp_path: Path) -> None:
    path = _instance_file(tmp_path)
    runner = CliRunner()
    for args in (
        ["compare", str(path), "--policies", "fcfs,easy"],
        ["simulate", str(path), "-p", "easy"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
        assert NAME in result.stdout
        assert "1️⃣" not in result.stdout


def test_bound_prints_the_objective_label_literally(tmp_path: Path) -> None:
    path = _instance_file(tmp_path)
    args = ["bound", str(path), "--objective", "wct", "--relative"]
    result = CliRunner().invoke(main, [*args, "--backend", "bounds-only"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # the title may wrap
    assert f"lower bounds: {NAME}, wct:one:relative" in text
    assert "1️⃣" not in text
