"""CSV cells that a spreadsheet shows as text, never runs as a formula.

A spreadsheet opening a CSV file runs a cell that starts with ``=``, ``+``,
``-`` or ``@`` as a formula (and some also after a leading tab or carriage
return): a policy or instance name ``=HYPERLINK("http://...")`` in a table
optsched writes would become a live link, or worse ("CSV injection",
OWASP). Following the OWASP rule, such text cells get a leading ``'``,
which spreadsheets take as "this is text" and do not show. Numbers are left
alone, also when they arrive as text (``-1``, ``-0.5``, ``1e-3``): they stay
numbers for spreadsheets and for ``pandas.read_csv``.

Every CSV optsched writes passes its cells through :func:`safe_cell`
(schedule files, :mod:`optsched.io.schedules`) or :func:`safe_frame`
(``compare -o``, ``gap -o``, ``export``). pandas is imported only by
:func:`safe_frame`, so that the schedule writers do not load it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
"""A decimal number as text: left as it is, spreadsheets read it as a number."""


def safe_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` if it is text a spreadsheet would run.

    Parameters
    ----------
    value
        A cell: text, a number, ``None``, ...

    Returns
    -------
    Any
        ``"'" + value`` for a string starting with one of
        :data:`FORMULA_STARTS` that is not a decimal number; ``value``
        unchanged otherwise (numbers, other objects, harmless text).
    """
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_STARTS)
        and not _NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are :func:`safe_cell`.

    Numeric, boolean and date columns are not touched (their cells are not
    text); text columns keep their missing values.
    """
    import pandas as pd

    text_columns = [
        name
        for name, dtype in frame.dtypes.items()
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
    ]
    if not text_columns:
        return frame
    safe = frame.copy()
    for name in text_columns:
        safe[name] = safe[name].map(safe_cell, na_action="ignore")
    return safe
