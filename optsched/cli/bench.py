"""``optsched bench SUITE``: run a benchmark suite into a results store."""

from __future__ import annotations

import sys

import click

from optsched.bench import Store, run_suite
from optsched.cli.console import echo
from optsched.cli.display import failed_task
from optsched.cli.options import count_option, output_option, shown_option
from optsched.extras import require


@click.command(name="bench")
@click.argument("suite", type=click.Path(dir_okay=False))
@output_option(
    "--store",
    default="results.sqlite",
    show_default=True,
    help="SQLite results store (created when absent; re-runs skip stored tasks).",
)
@count_option(
    "--workers", help="Local process pool size [default: 1, in this process]."
)
@click.option(
    "--dask",
    "dask_address",
    metavar="ADDRESS",
    default=None,
    help="Run on the Dask scheduler at ADDRESS (e.g. tcp://host:8786).",
)
@count_option(
    "--dask-local",
    metavar="N",
    help="Run on a new Dask LocalCluster of N single-threaded workers.",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Run again the tasks stored with status ERROR.",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Run CP-SAT (back-ends cpsat, shelf) in its deterministic mode: "
    "interleaved search stopped after the time limit in deterministic time "
    "(CP-SAT's work count, about seconds but often several times longer in "
    "wall-clock time), so that a re-run gives the same rows whatever the "
    "load. Its solver tasks are distinct from the default mode's.",
)
@shown_option(
    "--progress/--no-progress",
    default=True,
    help="Progress bar on stderr (only drawn on a terminal).",
)
def command(
    suite: str,
    store: str,
    workers: int | None,
    dask_address: str | None,
    dask_local: int | None,
    retry_failed: bool,
    deterministic: bool,
    progress: bool,
) -> None:
    """Run every task of SUITE (a TOML file) not yet in the store.

    Each finished task is one row of the store, written when it ends: an
    interrupted run loses no finished task, and running the same command
    again resumes. Ctrl-C (SIGINT) or SIGTERM stops the run within a second
    or two (exit status 130 or 143); a solve cut short is stored as
    provisional, and the next run computes it again, as it does solves that
    were time-starved. Several runs may share one store: each task is
    claimed before it runs, so none is computed twice. Exit status 1 when
    the store holds failed tasks of the suite.
    """
    given = [
        name
        for name, value in (
            ("--workers", workers),
            ("--dask", dask_address),
            ("--dask-local", dask_local),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise click.UsageError(f"give at most one of {', '.join(given)}")
    if dask_address is not None or dask_local is not None:
        option = "--dask" if dask_address is not None else "--dask-local"
        require("distributed", "dask", f"bench {option}")
    summary = run_suite(
        suite,
        store,
        workers=workers or 1,
        dask_address=dask_address,
        dask_local=dask_local,
        progress=progress,
        retry_failed=retry_failed,
        deterministic=deterministic,
    )
    for path, sha256 in summary.unpinned.items():
        echo(
            f"note: trace {path} has no sha256 in the suite; recorded {sha256} "
            "(add it to the suite to pin the file)",
            err=True,
        )
    elsewhere = (
        f", {summary.elsewhere} run by another process" if summary.elsewhere else ""
    )
    echo(
        f"suite {summary.suite}: {summary.total} tasks, {summary.skipped} already "
        f"stored, {summary.ran} run ({summary.failed} failed){elsewhere} in "
        f"{summary.elapsed:.1f} s -> {summary.store}"
    )
    if summary.provisional:
        echo(
            f"{summary.provisional} provisional rows (interrupted or time-starved "
            "solves): run the command again to compute them again",
            err=True,
        )
    if summary.failed_total:
        with Store(summary.store, create=False) as results:
            failures = results.failures(summary.suite)
        echo(
            f"{summary.failed_total} failed tasks in the store "
            "(rerun with --retry-failed); first ones:",
            err=True,
        )
        for failure in failures:
            echo(f"  {failed_task(failure)}", err=True)
        sys.exit(1)
