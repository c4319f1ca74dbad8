"""Display options shared by the commands that print tables: ``--wide``
and ``--json``."""

from __future__ import annotations

import json
import math
from typing import Any

import click

wide_option = click.option(
    "--wide",
    is_flag=True,
    help="Print tables at their full width, every column, instead of fitting "
    "them to the terminal (80 columns, or $COLUMNS, when piped).",
)
"""``--wide``: see :func:`optsched.console.print_table`."""

json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the metrics as JSON on stdout instead of the table (snake_case "
    "names, as 'optsched export' writes them after metric_); other messages "
    "go to stderr.",
)
"""``--json``: see :func:`echo_json`."""


def failed_task(failure: dict[str, Any]) -> str:
    """A failed task of a results store (:meth:`optsched.bench.store.Store.failures`)
    in one line: ``WINDOW KIND [NAME] [OBJECTIVE]: first line of its error``."""
    error = failure["error"] or ""
    first = error.splitlines()[0] if error else ""
    named = " ".join(filter(None, [failure["name"], failure["objective"]]))
    return f"{failure['window']} {failure['kind']} {named}: {first}"


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON; NaN and infinities become ``null``
    (JSON has neither, and a consumer's parser would refuse them)."""
    click.echo(json.dumps(_finite(data), indent=2, ensure_ascii=False))


def _finite(data: Any) -> Any:
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {str(key): _finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(value) for value in data]
    return data
