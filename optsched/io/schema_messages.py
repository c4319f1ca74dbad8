"""jsonschema errors as optsched's one-line reasons.

The readers of JSON formats validate with :mod:`jsonschema` (the reference
implementation of JSON Schema) against the schemas shipped in
``optsched/schemas``, then report the most relevant error
(:func:`jsonschema.exceptions.best_match`) the way every optsched message
reads: ``where: field: reason``, e.g. ``jobs[3] (id 17): size: expected an
integer, got the string '4'``. This module turns an error into that reason;
the reader adds the file, the line (:mod:`optsched.io.json_lines`) and its own
label for the object.

Two JSON types are narrowed from the JSON Schema defaults to what optsched
reads: an integer is a JSON number written without fraction or exponent
(``1.0`` is not one) and a number is finite (Python's ``json`` accepts the
``NaN`` and ``Infinity`` some encoders write; JSON has neither).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match, relevance
from jsonschema.protocols import Validator

from optsched.errors import shown
from optsched.instance import MAX_INTEGER, MAX_WEIGHT
from optsched.io.json_lines import JsonPath


def _is_integer(checker: object, value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(checker: object, value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return _is_integer(checker, value)


_TYPES = Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number}
)
SchemaValidator = validators.extend(Draft202012Validator, type_checker=_TYPES)
"""Draft 2020-12 with optsched's integer and number (module docstring)."""


def validator_for(schema: Mapping[str, Any]) -> Validator:
    """A validator of ``schema`` (checked first: a broken schema raises)."""
    SchemaValidator.check_schema(schema)
    return SchemaValidator(schema)


def first_error(
    validator: Validator, instance: object, ahead: Iterable[str] = ()
) -> ValidationError | None:
    """The most relevant error of ``instance``, or ``None`` if it is valid.

    :func:`~jsonschema.exceptions.best_match`, except that errors under the
    top-level keys ``ahead`` come first (a file of another format or
    version is best told so, not that it lacks this format's keys).
    ``is_valid`` first: collecting every error is the slow path.
    """
    if validator.is_valid(instance):
        return None
    first = frozenset(ahead)

    def key(error: ValidationError) -> tuple[Any, ...]:
        leading = bool(error.path) and error.path[0] in first
        # Between an unknown and a missing key of one object, the unknown one
        # is the typo ("runtme" for "runtime").
        return (leading, *relevance(error), error.validator == "additionalProperties")

    return best_match(validator.iter_errors(instance), key=key)


@dataclass(frozen=True)
class SchemaProblem:
    """An error in optsched's terms.

    Attributes
    ----------
    path
        Where the message points (for the line): the offending value, or the
        unknown key's value.
    owner
        The object the message names first (the reader labels it).
    reason
        ``field: what is wrong``, or ``what is wrong`` about the owner itself.
    """

    path: JsonPath
    owner: JsonPath
    reason: str


_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "an object",
    "boolean": "true or false",
    "null": "null",
}
_LIMIT_NAMES: dict[float, str] = {
    MAX_INTEGER: f"2**53 = {MAX_INTEGER}",
    MAX_WEIGHT: "1e12",
}


def describe_value(value: object) -> str:
    """A value as messages quote it: ``the string 'x'``, ``a list``, ``3``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return shown(value)
    if isinstance(value, str):
        return f"the string {shown(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def explain(error: ValidationError, prefix: JsonPath = ()) -> SchemaProblem:
    """The :class:`SchemaProblem` of a jsonschema ``error``.

    ``prefix`` is the path of the validated value in its document, for a
    part validated on its own.
    """
    path: JsonPath = (*prefix, *error.absolute_path)
    keyword = error.validator
    value = error.instance
    if keyword == "required":
        missing = next(k for k in error.validator_value if k not in value)
        return SchemaProblem(path, path, f"missing key {missing!r}")
    if keyword == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        key = next(k for k in value if k not in known)
        reason = f"unknown key {shown(key)} (expected one of: {', '.join(known)})"
        return SchemaProblem((*path, key), path, reason)
    if keyword == "type" and "object" in _types(error.validator_value):
        expected = _expected(error.validator_value, value)
        return SchemaProblem(path, path, f"{expected}, got {describe_value(value)}")
    owner, field = _owner_and_field(path)
    return SchemaProblem(path, owner, _value_reason(error, field))


def _types(declared: str | Iterable[str]) -> list[str]:
    return [declared] if isinstance(declared, str) else list(declared)


def _expected(declared: str | Iterable[str], value: object) -> str:
    names = [t for t in _types(declared) if t != "null"] or ["null"]
    if names == ["number"] and isinstance(value, float):  # NaN or infinite
        return "expected a finite number"
    return "expected " + " or ".join(_TYPE_NAMES.get(t, t) for t in names)


def _owner_and_field(path: JsonPath) -> tuple[JsonPath, str]:
    """``("jobs", 3, "size")`` -> ``(("jobs", 3), "size")``; the field of an
    array item keeps its index: ``("machine", "speeds", 2)`` ->
    ``(("machine",), "speeds[2]")``."""
    keys = [i for i, part in enumerate(path) if isinstance(part, str)]
    if not keys:
        return path, ""
    last = keys[-1]
    field = str(path[last]) + "".join(f"[{i}]" for i in path[last + 1 :])
    return path[:last], field


def _value_reason(error: ValidationError, field: str) -> str:
    """``field: reason`` (or ``field value reason``) for a keyword on a value."""
    keyword, limit, value = error.validator, error.validator_value, error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if keyword == "type":
        return f"{field}: {_expected(limit, value)}, got {describe_value(value)}"
    if keyword in ("minimum", "maximum") and schema.get("minimum") == -schema.get(
        "maximum", math.nan
    ):
        bound = schema["maximum"]
        name = _LIMIT_NAMES.get(bound, str(bound)).replace(" = ", " = +-")
        return f"{field} {shown(value)} is outside the limits +-{name}"
    if keyword == "maximum":
        name = _LIMIT_NAMES.get(limit, shown(limit))
        return f"{field} {shown(value)} is above the limit {name}"
    if keyword == "minimum":
        return f"{field} {shown(value)} must be >= {shown(limit)}"
    if keyword == "exclusiveMinimum":
        return f"{field} {shown(value)} must be > {shown(limit)}"
    if keyword == "enum":
        names = ", ".join(str(item) for item in limit)
        return f"{field}: expected one of {names}, got {shown(value)}"
    description = schema.get("description")
    if keyword in ("const", "pattern") and description:
        # The schema says what is expected better than the rule itself.
        return f"{field}: {description}, got {shown(value)}"
    if keyword == "const":
        return f"{field}: expected {shown(limit)}, got {shown(value)}"
    if keyword == "minItems":
        entries = "entry" if limit == 1 else "entries"
        return f"{field}: expected at least {limit} {entries}, got {len(value)}"
    if keyword == "not" and description:
        return f"{field}: {description}"
    return f"{field}: {error.message}" if field else error.message
