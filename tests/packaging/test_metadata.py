"""What a stranger reads first: the licence, the citation, the changelog."""

from __future__ import annotations

import re
import tomllib

import yaml
from support.paths import REPO

import optsched

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_licence_is_the_one_the_metadata_names() -> None:
    text = (REPO / "LICENSE").read_text()
    assert PYPROJECT["license"] == {"text": "MIT"}
    assert text.startswith("MIT License\n")
    assert "License :: OSI Approved :: MIT License" in PYPROJECT["classifiers"]


def test_citation_names_this_version_and_the_archive() -> None:
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == PYPROJECT["version"] == optsched.__version__
    assert citation["license"] == "MIT"
    titles = [reference["title"] for reference in citation["references"]]
    assert "Experience with using the Parallel Workloads Archive" in titles
    # Each seed study the docs cite, by its author.
    authors = {
        author["family-names"]
        for reference in citation["references"]
        for author in reference["authors"]
    }
    assert {"Mallmann", "Kalthoff", "Meltzer", "Rassmann", "Wang"} <= authors


def test_changelog_keeps_a_changelog() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert versions[0] == "Unreleased"
    assert PYPROJECT["version"] in versions
    sections = set(re.findall(r"^### (\w+)$", text, flags=re.MULTILINE))
    assert sections <= {
        "Added",
        "Changed",
        "Deprecated",
        "Removed",
        "Fixed",
        "Security",
    }
