"""``optsched --version``: optsched's version and its solvers'.

A result depends on the solvers as much as on optsched (CP-SAT's search, the
MILP back-end's HiGHS), so a bug report or a benchmark row names all three.
The versions are read from the installed distributions' metadata: the
solvers themselves are not imported (OR-Tools takes a second to load).
"""

from __future__ import annotations

import platform
from typing import Any

import click

SOLVERS = (("OR-Tools", "ortools"), ("HiGHS", "highspy"))
"""The solvers shown, as (name, the distribution that ships it)."""


def _installed(distribution: str) -> str:
    import importlib.metadata  # 80 ms, paid by --version only

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def version_text() -> str:
    """The lines ``optsched --version`` prints."""
    lines = [f"optsched {_installed('optsched')}"]
    lines += [f"{name} {_installed(dist)} ({dist})" for name, dist in SOLVERS]
    lines.append(f"Python {platform.python_version()}")
    return "\n".join(lines)


def print_version(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Click callback of ``--version``: print :func:`version_text`, exit 0."""
    del param  # the click callback signature
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit()


version_option = click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=print_version,
    help="Show the versions of optsched, OR-Tools and HiGHS, and exit.",
)
