"""User text in figures is drawn as written.

Matplotlib reads a text holding two ``$`` as mathtext: an instance named
``cost $x^2$`` would get a superscript, and ``$\\frac$`` makes drawing fail
with a parse error. Titles, axis labels, legends, annotations and
categorical tick labels carry user text (instance names, policy specs,
objective labels), so :func:`literal_texts` turns math parsing and TeX off
on them and shows control characters as escapes (as the terminal does,
:func:`optsched.console.literal`). Numeric tick labels keep mathtext:
their formatters write ``$10^{2}$`` on logarithmic axes.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter


def literal_texts(ax: Axes) -> Axes:
    """Show every user text of ``ax`` literally; return ``ax``.

    Call it once the axes are drawn on (titles, labels, legend and tick
    labels set): texts added later are not covered.

    Parameters
    ----------
    ax
        The axes of a chart.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.
    """
    numeric = {id(label) for axis in _numeric_axes(ax) for label in _tick_labels(axis)}
    for text in ax.findobj(Text):
        if id(text) not in numeric:
            _make_literal(text)
    return ax


def _numeric_axes(ax: Axes) -> list[Axis]:
    # Labels given as text (``set_xticks(positions, names)``: policy names)
    # end up in a FixedFormatter or, in recent matplotlib, a FuncFormatter
    # over the list; the other formatters write numbers, maybe in mathtext.
    return [
        axis
        for axis in (ax.xaxis, ax.yaxis)
        if not isinstance(axis.get_major_formatter(), FixedFormatter | FuncFormatter)
    ]


def _tick_labels(axis: Axis) -> list[Text]:
    ticks = [*axis.get_major_ticks(), *axis.get_minor_ticks()]
    return [label for tick in ticks for label in (tick.label1, tick.label2)]


def _make_literal(text: Text) -> None:
    # Imported here: the figures must not pull in the CLI package at import.
    from optsched.console import literal

    text.set_parse_math(False)
    text.set_usetex(False)
    shown = literal(text.get_text())
    if shown != text.get_text():
        text.set_text(shown)
