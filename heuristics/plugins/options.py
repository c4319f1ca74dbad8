"""A plug-in's keyword parameters: read from its spec, typed by its class.

``mine.py:Largest:limit=8,greedy`` passes ``limit=8, greedy=True`` to
``Largest(...)``. Keys are the parameters of the class's ``__init__``; a
value is converted to the parameter's annotated type (``int``, ``float``,
``bool``, ``str``), or to the type of its default value when it has no
annotation, else passed as written. Errors come in the spec grammar's one
style (:class:`~optsched.heuristics.spec.SpecError`): an unknown key names
the valid ones.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from optsched.heuristics.spec import SpecError, boolean, integer, split_spec

Converter = Callable[[str, str], Any]


def _number(key: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{key} must be a number, got {value!r}") from None


_CONVERTERS: dict[type, Converter] = {
    int: integer,
    float: _number,
    bool: boolean,
    str: lambda key, value: value,
}


def plugin_options(cls: type, params: str, spec: str) -> tuple[tuple[str, Any], ...]:
    """The keyword arguments of ``cls`` a spec's parameter text gives, by
    the class's own parameter names, in the order of its signature (a
    canonical spec lists them so).

    Raises
    ------
    SpecError
        A key the class does not take, a key given twice, a value of the
        wrong type, a flag for a parameter that is not boolean.
    """
    try:
        written = split_spec(f"x:{params}").params
    except SpecError as error:  # named after the whole spec, not the stub
        raise SpecError(spec, error.reason) from None
    accepted = _parameters(cls)
    for key in written:
        if key not in accepted:
            valid = ", ".join(accepted) or "none"
            raise SpecError(spec, f"unknown parameter {key!r}; valid: {valid}")
    try:
        return tuple(
            (name, _convert(key, written[key], convert))
            for key, (name, convert) in accepted.items()
            if key in written
        )
    except ValueError as error:
        raise SpecError(spec, str(error)) from None


def _convert(key: str, value: str | None, convert: Converter | None) -> Any:
    if value is None:  # a flag: only for a boolean parameter
        if convert is not boolean:
            raise ValueError(f"parameter {key!r} needs a value ({key}=...)")
        return True
    return value if convert is None else convert(key, value)


def _parameters(cls: type) -> dict[str, tuple[str, Converter | None]]:
    """Each keyword parameter of ``cls(...)``, by its key in a spec (lower
    case, as the spec grammar reads keys), to its own name and the converter
    of its type."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return {}
    try:
        hints = typing.get_type_hints(getattr(cls, "__init__"))  # noqa: B009
    except Exception:  # unresolvable annotations: fall back on defaults
        hints = {}
    out: dict[str, tuple[str, Converter | None]] = {}
    for name, parameter in signature.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        kind = hints.get(name)
        if kind not in _CONVERTERS and parameter.default is not parameter.empty:
            kind = type(parameter.default)
        convert = _CONVERTERS.get(kind) if isinstance(kind, type) else None
        out[name.lower()] = (name, convert)
    return out
