"""Speed-up models: the modes of a moldable job from its requested run.

A model turns a job's request (``q`` processors, run time ``T``, estimate
``E``) into its modes (:class:`~optsched.instance.Mode`): for every
processor count ``p`` of the model's range,

.. math:: T(p) = \\lceil T \\cdot S(q) / S(p) \\rceil,
          \\qquad E(p) = \\lceil E \\cdot S(q) / S(p) \\rceil,

where ``S`` is the model's speed-up curve, and ``T(q) = T``, ``E(q) = E``
exactly (the request is one of the modes). Run times are rounded *up*: a
mode never promises more than the model. Every curve here has ``S(p)/p``
non-increasing (speed-up at most linear), so the modes pass the instance's
monotone-work rule (:class:`~optsched.instance.Job`).

Models (spec ``NAME[:key=value,...]``, as ``--moldable`` takes it):

``linear[:max=K]``
    ``S(p) = p`` up to the maximum parallelism ``K`` (default ``q``), the
    model of DEQ's analysis (Deng et al. 1996): run time stretches as
    ``T q / p`` on fewer processors and shrinks likewise up to ``K``.
``conservative``
    Kalthoff's conservative estimate from the measured maximum point
    (thesis §5.4.1, with the erratum ``T(j) = T(p_i) p_i / j``): linear
    through the origin and the request, for ``p <= q`` only. It bounds the
    run time from above for every job whose efficiency does not rise as
    processors are removed.
``points:P1=S1;P2=S2;...``
    Piecewise-linear interpolation of measured speed-ups ``S(P_k) = S_k``
    (thesis §5.4.1 Fig. 5.6), linear through the origin below the first
    point and flat beyond the last; the range is ``1 .. max(P_k)`` (or
    ``max=K``). The measured points must have ``S_k / P_k`` non-increasing.
``amdahl:f=F[,max=K]``
    Amdahl's law with serial fraction ``F``: ``S(p) = 1 / (F + (1 - F)/p)``.
``downey:A=A,sigma=SIGMA[,max=K]``
    Downey's model (Downey 1997, "A model for speedup of parallel
    programs", UCB/CSD-97-933) with average parallelism ``A`` and
    variance ``sigma``::

        sigma <= 1:  S(p) = A p / (A + sigma (p - 1) / 2)        1 <= p <= A
                     S(p) = A p / (sigma (A - 1/2) + p (1 - sigma/2))
                                                                A <= p <= 2A - 1
                     S(p) = A                                   p >= 2A - 1
        sigma >= 1:  S(p) = p A (sigma + 1) / (sigma (p + A - 1) + A)
                                                     1 <= p <= A + A sigma - sigma
                     S(p) = A                        beyond

Every model takes ``max=K`` (largest processor count, default ``q``,
never above the machine) and ``min=K`` (smallest, default 1). Modes whose
run time is not shorter than that of a smaller mode are dropped: they
would only hold more processors for no gain.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise

from optsched.instance import Instance, Job, Mode

MODELS: tuple[str, ...] = ("linear", "conservative", "points", "amdahl", "downey")
"""Names of the speed-up models."""

_KEYS: dict[str, tuple[str, ...]] = {
    "linear": ("max", "min"),
    "conservative": ("min",),
    "points": ("max", "min"),
    "amdahl": ("f", "max", "min"),
    "downey": ("a", "sigma", "max", "min"),
}


@dataclass(frozen=True)
class SpeedupModel:
    """A parsed speed-up model (see the module docstring for the formulas).

    Parameters
    ----------
    name
        One of :data:`MODELS`.
    params
        Its numeric parameters (``f``, ``a``, ``sigma``).
    points
        Measured ``(processors, speed-up)`` pairs of ``points``.
    most, least
        The ``max=`` and ``min=`` processor counts, ``None`` for the defaults.
    """

    name: str
    params: dict[str, float] = field(default_factory=dict)
    points: tuple[tuple[int, Fraction], ...] = ()
    most: int | None = None
    least: int | None = None

    @property
    def spec(self) -> str:
        """The spec this model was parsed from (normalised)."""
        parts = [f"{k}={_number(v)}" for k, v in self.params.items()]
        if self.points:
            parts = [";".join(f"{p}={_number(s)}" for p, s in self.points)]
        parts += [f"max={self.most}"] if self.most is not None else []
        parts += [f"min={self.least}"] if self.least is not None else []
        return self.name + (":" + ",".join(parts) if parts else "")

    def speedup(self, processors: int) -> Fraction | float:
        """``S(p)``; exact (a ``Fraction``) for ``linear`` and ``points``."""
        return _CURVES[self.name](self, processors)

    def modes(self, job: Job, machine_processors: int) -> tuple[Mode, ...]:
        """The modes of ``job`` under this model (its request included)."""
        q = job.size
        most = self.most if self.most is not None else _default_most(self, q)
        most = max(min(most, machine_processors), q)
        least = min(self.least or 1, q)
        if self.name == "conservative":
            most = q
        reference = self.speedup(q)
        modes: list[Mode] = []
        for p in range(least, most + 1):
            if p == q:
                mode = Mode(q, job.runtime, job.estimate)
            else:
                ratio = reference / self.speedup(p)
                mode = Mode(p, _ceil(job.runtime * ratio), _ceil(job.requested * ratio))
            if modes and mode.runtime >= modes[-1].runtime and p != q:
                continue  # no faster than a smaller mode: never worth it
            modes.append(mode)  # the request stays even if no faster
        return tuple(modes)

    def apply(self, instance: Instance, *, malleable: bool = False) -> Instance:
        """``instance`` with every job made moldable under this model (and
        malleable with ``malleable``), its request kept as it was."""
        m = instance.processors
        return instance.with_jobs(
            job.replace(modes=self.modes(job.rigid(), m), malleable=malleable)
            for job in instance.jobs
        )


def _default_most(model: SpeedupModel, q: int) -> int:
    if model.name == "points" and model.points:
        return max(q, model.points[-1][0])
    return q


def _number(value: float | Fraction) -> str:
    if isinstance(value, Fraction) and value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):g}"


def _ceil(value: Fraction | float) -> int:
    if isinstance(value, Fraction):
        return math.ceil(value)
    # Float curves: a ratio computed as 2.0000000000000004 must not add a
    # second; 1e-9 relative is far below one second on any real run time.
    return math.ceil(value * (1 - 1e-12) - 1e-9)


def _linear(model: SpeedupModel, p: int) -> Fraction:
    return Fraction(p)


def _points(model: SpeedupModel, p: int) -> Fraction:
    points = model.points
    first_p, first_s = points[0]
    if p <= first_p:
        return first_s * p / first_p
    for (p0, s0), (p1, s1) in pairwise(points):
        if p <= p1:
            return s0 + (s1 - s0) * (p - p0) / (p1 - p0)
    return points[-1][1]


def _amdahl(model: SpeedupModel, p: int) -> float:
    f = model.params["f"]
    return 1.0 / (f + (1.0 - f) / p)


def _downey(model: SpeedupModel, p: int) -> float:
    a, sigma = model.params["a"], model.params["sigma"]
    if sigma <= 1:
        if p <= a:
            return a * p / (a + sigma * (p - 1) / 2)
        if p <= 2 * a - 1:
            return a * p / (sigma * (a - 0.5) + p * (1 - sigma / 2))
        return a
    if p <= a + a * sigma - sigma:
        return p * a * (sigma + 1) / (sigma * (p + a - 1) + a)
    return a


_CURVES: dict[str, Callable[[SpeedupModel, int], Fraction | float]] = {
    "linear": _linear,
    "conservative": _linear,
    "points": _points,
    "amdahl": _amdahl,
    "downey": _downey,
}


def parse_model(spec: str) -> SpeedupModel:
    """Parse ``NAME[:key=value,...]`` (module docstring); ``ValueError`` says
    what is wrong (unknown model or key, a value out of range)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in MODELS:
        raise ValueError(
            f"unknown speed-up model {name!r}; models: {', '.join(MODELS)}"
        )
    if name == "points":
        return _parse_points(rest)
    values = _pairs(rest.split(",") if rest.strip() else [], name)
    model = SpeedupModel(
        name,
        {k: v for k, v in values.items() if k not in ("max", "min")},
        most=_count(values, "max"),
        least=_count(values, "min"),
    )
    _check_params(model)
    return model


def _pairs(items: Iterable[str], name: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in _KEYS[name]:
            raise ValueError(
                f"speed-up model {name}: bad parameter {item.strip()!r}; it takes "
                f"{', '.join(k + '=' for k in _KEYS[name]) or 'none'}"
            )
        try:
            number = float(value)
        except ValueError:
            raise ValueError(
                f"speed-up model {name}: {key} must be a number, got {value.strip()!r}"
            ) from None
        if not math.isfinite(number):
            raise ValueError(f"speed-up model {name}: {key} must be finite")
        out[key] = number
    return out


def _count(values: dict[str, float], key: str) -> int | None:
    if key not in values:
        return None
    value = values[key]
    if value != int(value) or value < 1:
        raise ValueError(f"speed-up model: {key} must be a whole number >= 1")
    return int(value)


def _check_params(model: SpeedupModel) -> None:
    name, params = model.name, model.params
    required = {"amdahl": ("f",), "downey": ("a", "sigma")}.get(name, ())
    for key in required:
        if key not in params:
            raise ValueError(f"speed-up model {name} needs {key}=")
    if name == "amdahl" and not 0 <= params["f"] <= 1:
        raise ValueError("speed-up model amdahl: f must lie in [0, 1]")
    if name == "downey" and (params["a"] < 1 or params["sigma"] < 0):
        raise ValueError("speed-up model downey: needs A >= 1 and sigma >= 0")
    if model.most is not None and model.least is not None and model.least > model.most:
        raise ValueError("speed-up model: min is above max")


def _parse_points(rest: str) -> SpeedupModel:
    text, _, options = rest.partition(",")
    points: list[tuple[int, Fraction]] = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        p_text, eq, s_text = item.partition("=")
        try:
            p, s = int(p_text), Fraction(s_text.strip())
        except ValueError:
            raise ValueError(
                f"speed-up model points: bad point {item!r}; write P=SPEEDUP;..."
            ) from None
        if not eq or p < 1 or s <= 0:
            raise ValueError(
                f"speed-up model points: bad point {item!r}; needs P >= 1, SPEEDUP > 0"
            )
        points.append((p, s))
    points.sort()
    if not points:
        raise ValueError("speed-up model points needs at least one P=SPEEDUP point")
    for (p0, s0), (p1, s1) in pairwise(points):
        if p0 == p1:
            raise ValueError(f"speed-up model points: two points at P={p0}")
        if s1 / p1 > s0 / p0 or s1 < s0:
            raise ValueError(
                f"speed-up model points: from P={p0} to P={p1} the speed-up must "
                "not fall nor grow faster than linearly"
            )
    values = _pairs(options.split(",") if options.strip() else [], "points")
    return SpeedupModel(
        "points",
        points=tuple(points),
        most=_count(values, "max"),
        least=_count(values, "min"),
    )
