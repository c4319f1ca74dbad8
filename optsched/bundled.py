"""Files shipped inside the package: the bundled windows and site files.

They live in the repository's ``instances/`` folder, which the package sees
as ``optsched/instances`` (a link in a checkout, a folder of package data in
an installed wheel), so that ``optsched gap`` with no file runs the same
window after ``pip install .`` as in a checkout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def bundled_path(*parts: str) -> Path:
    """The path of a bundled file, e.g. ``bundled_path("default.json")`` or
    ``bundled_path("sites", "t3e.toml")``.

    Package data is installed as plain files (the wheel is not zip-imported),
    so the path can be opened like any other.
    """
    return Path(str(resources.files("optsched").joinpath("instances", *parts)))
