"""Every package of the three trees is listed in pyproject.toml, so that a
plain ``pip install .`` (not editable) installs every room."""

from __future__ import annotations

import os
import tomllib

from support.paths import REPO

TREES = (
    ("optsched", "optsched"),
    ("models", "optsched.models"),
    ("heuristics", "optsched.heuristics"),
)


def _packages_on_disk() -> set[str]:
    found: set[str] = set()
    for folder, name in TREES:
        top = REPO / folder
        for here, dirs, files in os.walk(top):
            # optsched/models and optsched/heuristics are links to the trees.
            dirs[:] = [
                d
                for d in dirs
                if d != "__pycache__" and not os.path.islink(os.path.join(here, d))
            ]
            if "__init__.py" in files:
                rel = os.path.relpath(here, top)
                found.add(name if rel == "." else f"{name}.{rel.replace(os.sep, '.')}")
    return found


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert listed == _packages_on_disk()
