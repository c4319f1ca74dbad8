"""Parameter types of the command line that click lacks."""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    """A ``click.FloatRange`` that refuses ``nan`` and ``inf``.

    ``float()`` reads both, and every comparison with ``nan`` is false, so
    ``FloatRange(min=0)`` accepts ``--time-limit nan`` (a solve without a
    limit that then fails) and ``inf`` (a timer overflow). Seconds, weights
    and shares are finite numbers.
    """

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
