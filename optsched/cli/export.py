"""``optsched export STORE -o out.csv|out.parquet``: a results store as a table."""

from __future__ import annotations

from pathlib import Path

import click

from optsched.bench.store import TABLES, export_store
from optsched.cli.console import echo
from optsched.cli.options import choice_option, output_option
from optsched.extras import require


@click.command(name="export")
@click.argument("store", type=click.Path(dir_okay=False))
@output_option(required=True, help="Output file: .csv, or .parquet (needs pyarrow).")
@click.option("--suite", default=None, help="Only this suite's rows.")
@choice_option(
    "--table",
    choices=TABLES,
    default="tasks",
    help="tasks: one row per task, its objective values, metrics, bounds, "
    "parameters and versions spread into columns (value_cmax, metric_mean_wait, "
    "bound_area, param_seed, version_ortools, ...); gap: policy rows with the "
    "best bounds of their window and the competitive-ratio interval.",
)
def command(store: str, output: str, suite: str | None, table: str) -> None:
    """Write the rows of a results STORE to a CSV or Parquet file (atomically).

    The CSV opens with pandas.read_csv as it is: numbers are numbers, and no
    cell holds JSON but the schedule column (a JSON schedule).
    """
    if Path(output).suffix.lower() == ".parquet":
        require("pyarrow", "parquet", "export to .parquet")
    try:
        count = export_store(store, output, suite=suite, table=table)
    except ImportError as error:
        raise click.ClickException(str(error)) from None
    echo(f"{count} rows -> {output}")
