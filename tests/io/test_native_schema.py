"""The native reader's schema step: jsonschema on the shipped schema.

Checked here: every instance file of the repository and every family the
writer produces is valid under the shipped schema (jsonschema's own
``validate``, standard Draft 2020-12 semantics); the schema names every field
of the core types; a document the reader accepts is schema-valid and a
schema-invalid mutation of a valid one is refused with ``file:line:`` on the
line of the mutated value (hypothesis); the line locator finds every value of
generated JSON texts (strings full of braces, any whitespace).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import paths
from support.composition import BUILDERS, build_instance

from optsched.calendar import Calendar, Period
from optsched.errors import InputError
from optsched.instance import (
    MAX_INTEGER,
    BusyBlock,
    Job,
    Machine,
    Mode,
    Source,
    Window,
)
from optsched.io.json_lines import JsonPath, json_line
from optsched.io.native import (
    instance_to_dict,
    instance_to_json,
    read_native,
    schema_path,
)
from optsched.nodes import Nodes

SCHEMA = json.loads(schema_path().read_text(encoding="utf-8"))
STANDARD = jsonschema.Draft202012Validator(SCHEMA)


def _instance_files() -> list[Path]:
    candidates = [
        *paths.INSTANCES.rglob("*.json"),
        *(paths.DATA / "json").glob("*.json"),
        paths.DATA / "schedules" / "instance.json",
    ]
    return sorted(p for p in candidates if '"machine"' in p.read_text("utf-8"))


FILES = _instance_files()


def test_the_repository_has_instance_files_to_check() -> None:
    assert len(FILES) >= 15  # instances/, instances/perfect/, tests/data


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_instance_file_is_valid_under_the_schema(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text("utf-8")), SCHEMA)


@pytest.mark.parametrize("feature", sorted(BUILDERS))
def test_every_family_is_written_schema_valid_and_read_back(
    tmp_path: Path, feature: str
) -> None:
    instance = build_instance((feature,))
    text = instance_to_json(instance)
    jsonschema.validate(json.loads(text), SCHEMA)
    path = tmp_path / "family.json"
    path.write_text(text, encoding="utf-8")
    assert read_native(path).instance == instance


def _init_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init}


@pytest.mark.parametrize(
    ("definition", "cls"),
    [
        ("machine", Machine),
        ("busy_block", BusyBlock),
        ("job", Job),
        ("mode", Mode),
        ("nodes", Nodes),
        ("calendar", Calendar),
        ("period", Period),
        ("source", Source),
        ("window", Window),
    ],
)
def test_the_schema_names_every_field_of_the_core_types(
    definition: str, cls: type
) -> None:
    assert set(SCHEMA["$defs"][definition]["properties"]) == _init_fields(cls)


# --------------------------------------------------------------------------
# Accepted means schema-valid; a schema-invalid mutation is refused on its line
# --------------------------------------------------------------------------

BASES = [instance_to_dict(build_instance((feature,))) for feature in sorted(BUILDERS)]
JUNK = st.sampled_from(
    [-1, 0, 1, 2, MAX_INTEGER, MAX_INTEGER + 1, -MAX_INTEGER - 1, 10**30, 1.0, 1.5,
     1e13, float("inf"), float("nan"), True, None, "x", "", [], [1], {}, {"a": 1}]
)  # fmt: skip


def _paths(value: Any, path: JsonPath = ()) -> list[JsonPath]:
    """Every path into ``value`` (its own included), parents first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _at(value: Any, path: JsonPath) -> Any:
    for part in path:
        value = value[part]
    return value


def _around(document: Any, changed: JsonPath) -> list[JsonPath]:
    """``changed``'s object, ``changed`` and every path within its value."""
    try:
        inside = _paths(_at(document, changed), changed)
    except (KeyError, IndexError):  # the key was dropped
        inside = []
    return [changed[:-1], changed, *inside]


@st.composite
def mutations(draw: st.DrawFn) -> tuple[dict[str, Any], JsonPath]:
    """A valid document with one value replaced, one key dropped or one
    unknown key added; and the path of what changed."""
    document = copy.deepcopy(draw(st.sampled_from(BASES)))
    path = draw(st.sampled_from(_paths(document)[1:]))
    parent = _at(document, path[:-1])
    action = draw(st.sampled_from(["replace", "drop", "add"]))
    if action == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "add" and isinstance(parent, dict):
        parent["zz"] = draw(JUNK)
        path = (*path[:-1], "zz")
    else:
        parent[path[-1]] = draw(JUNK)
    return document, path


@settings(max_examples=250, deadline=None)
@given(mutations(), st.sampled_from([None, 1, 2]))
def test_accepted_is_schema_valid_and_refused_is_located(
    tmp_path_factory: pytest.TempPathFactory,
    mutation: tuple[dict[str, Any], JsonPath],
    indent: int | None,
) -> None:
    document, changed = mutation
    text = json.dumps(document, indent=indent)
    path = tmp_path_factory.mktemp("mutated") / "m.json"
    path.write_text(text, encoding="utf-8")
    try:
        read_native(path)
    except InputError as error:
        message = str(error)
        assert "\n" not in message
        match = re.match(rf"{re.escape(str(path))}:(\d+): ", message)
        assert match, message
        if not STANDARD.is_valid(document):
            # The schema's error is at the changed value, within it (a key of
            # an object put there) or at the object that holds it.
            lines = {json_line(text, p) for p in _around(document, changed)}
            assert int(match.group(1)) in lines, message
        return
    STANDARD.validate(document)  # accepted: valid under standard semantics


# --------------------------------------------------------------------------
# The line locator on generated JSON texts
# --------------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='{}[]":,\\ \n\tab\u00e9\u2028', max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet='{}[]":,\\ ab', max_size=4), inner, max_size=4
        )
    ),
    max_leaves=20,
)
GAPS = st.lists(st.sampled_from([" ", "\n", "\t", "\r\n"]), max_size=3).map("".join)


class _Writer:
    """A JSON serialiser of its own that records each value's start line,
    with drawn whitespace between every two tokens."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.parts: list[str] = []
        self.lines: dict[JsonPath, int] = {}

    def _emit(self, token: str) -> None:
        self.parts.append(self.draw(GAPS))
        self.parts.append(token)

    def value(self, value: Any, path: JsonPath = ()) -> None:
        self.parts.append(self.draw(GAPS))
        self.lines[path] = "".join(self.parts).count("\n") + 1
        if isinstance(value, dict):
            self.parts.append("{")
            for k, (key, item) in enumerate(value.items()):
                if k:
                    self._emit(",")
                self._emit(json.dumps(key, ensure_ascii=self.draw(st.booleans())))
                self._emit(":")
                self.value(item, (*path, key))
            self._emit("}")
        elif isinstance(value, list):
            self.parts.append("[")
            for index, item in enumerate(value):
                if index:
                    self._emit(",")
                self.value(item, (*path, index))
            self._emit("]")
        else:
            self.parts.append(json.dumps(value, ensure_ascii=self.draw(st.booleans())))


@st.composite
def located_texts(draw: st.DrawFn) -> tuple[Any, str, dict[JsonPath, int]]:
    value = draw(VALUES)
    writer = _Writer(draw)
    writer.value(value)
    return value, "".join(writer.parts) + draw(GAPS), writer.lines


@settings(max_examples=300, deadline=None)
@given(located_texts())
def test_json_line_finds_every_value(
    case: tuple[Any, str, dict[JsonPath, int]],
) -> None:
    value, text, lines = case
    assert json.loads(text) == value  # the writer writes JSON
    for path, line in lines.items():
        assert json_line(text, path) == line, (path, text)


def test_json_line_of_a_missing_path_is_its_nearest_ancestor() -> None:
    text = '{"a": [\n  {"b": 1},\n  {"c": "}{][\\""}\n]}'
    assert json_line(text, ("a", 1, "c")) == 3
    assert json_line(text, ("a", 1, "zz")) == 3
    assert json_line(text, ("a", 7)) == 1
    assert json_line("{not json", ("a",)) is None
