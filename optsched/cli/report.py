"""``optsched report STORE -o report.html|report.md``: the report of a run."""

from __future__ import annotations

import click

from optsched.cli.console import echo
from optsched.cli.options import output_option


@click.command(name="report")
@click.argument("store", type=click.Path(dir_okay=False))
@output_option(
    required=True,
    help="report.html (one self-contained page) or report.md (figures in "
    "report_figures/ beside it; an existing folder of that name is replaced "
    "only if an earlier report wrote it).",
)
@click.option(
    "--suite",
    default=None,
    help="Suite to report (needed when the store holds several).",
)
@click.option(
    "--trace-dir",
    "trace_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Deprecated, ignored: the report reads the windows' instances from the store.",
)
def command(
    store: str, output: str, suite: str | None, trace_dirs: tuple[str, ...]
) -> None:
    """Write the report of the benchmark run in the results STORE.

    The report reads nothing but STORE: window instances (machine size, busy
    blocks) and schedules are kept there.
    """
    from optsched.report import build_report

    if trace_dirs:
        click.echo(
            "warning: --trace-dir is deprecated and ignored: the report reads the "
            "windows' instances from the store",
            err=True,
        )
    path = build_report(store, output, suite=suite)
    echo(f"report -> {path}")
