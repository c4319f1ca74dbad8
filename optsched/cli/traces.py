"""``optsched traces list|fetch|path``: the archive traces optsched knows.

``fetch`` downloads a trace into the per-user cache (``OPTSCHED_DATA_DIR``
relocates it) and checks its sha256; ``--from`` takes it from a mirror
folder or URL instead. Every command taking a trace file also takes
``pwa:NAME``, fetched on first use (:mod:`optsched.io.archive`).
"""

from __future__ import annotations

import textwrap

import click

from optsched.cli.console import echo
from optsched.errors import InputError
from optsched.io import archive

_FROM_HELP = (
    "A mirror to fetch from instead of the download URLs: a local folder or a "
    "URL holding the files under their names (default: $OPTSCHED_TRACES_FROM)."
)


@click.group(name="traces")
def command() -> None:
    """The Parallel Workloads Archive traces optsched fetches by name.

    Give pwa:NAME wherever a trace file is expected (e.g. optsched gap
    pwa:KTH-SP2-1996-2.1-cln): the file is fetched into the cache on first
    use, and its sha256 is checked on every use.
    """


@command.command(name="list")
def list_traces() -> None:
    """Each known trace: machine, jobs, years, URLs, sha256, whom to thank."""
    for trace in archive.TRACES:
        cached = archive.cached_path(trace.name)
        echo(f"{archive.PREFIX}{trace.name}")
        echo(f"  machine      {trace.machine}")
        echo(f"  size         {trace.processors:,} processors, {trace.jobs:,} jobs")
        echo(f"  years        {trace.years}")
        echo(f"  archive      {trace.archive_url}")
        echo(f"  download     {trace.download_url}")
        echo(f"  sha256       {trace.sha256}")
        echo(f"  acknowledge  {trace.acknowledge}")
        if trace.note:
            echo(f"  note         {trace.note}")
        echo(f"  cached       {cached if cached.is_file() else 'no'}")
    echo("")
    echo("The Parallel Workloads Archive asks users to cite it as:")
    for line in textwrap.wrap(archive.PWA_CITATION, 76):
        echo(f"  {line}")
    echo("and to thank the person each log acknowledges (above).")


@command.command(name="fetch")
@click.argument("names", metavar="NAME...", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Fetch every known trace.")
@click.option("--from", "mirror", default=None, help=_FROM_HELP)
def fetch(names: tuple[str, ...], every: bool, mirror: str | None) -> None:
    """Fetch traces into the cache (checking each sha256); print their paths."""
    if every:
        names = tuple(trace.name for trace in archive.TRACES)
    if not names:
        raise click.UsageError("name a trace (optsched traces list) or give --all")
    for name in names:
        echo(archive.fetch(name, mirror))


@command.command(name="path")
@click.argument("name")
def path(name: str) -> None:
    """Print where trace NAME is cached (an error until it is fetched)."""
    cached = archive.cached_path(name)
    if not cached.is_file():
        raise InputError(
            f"not fetched yet: optsched traces fetch {name}", archive.PREFIX + name
        )
    echo(cached)
