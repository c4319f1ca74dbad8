"""The docs site (mkdocs.yml, docs/): its pages, its API targets, its markup.

The site itself is built by CI (`.ci/run`, `mkdocs build --strict`), which
needs the docs extra; these tests need neither mkdocs nor griffe, so they
run with the test extra alone and catch a page or an API name that went
missing before the build does.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from types import ModuleType

import pytest
from support.paths import REPO

DOCS = REPO / "docs"


def _markup() -> ModuleType:
    # docs/ is not a package: load the griffe extension's module by path.
    spec = importlib.util.spec_from_file_location("rst_markup", DOCS / "rst_markup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)


def test_every_nav_page_exists_and_every_page_is_in_the_nav() -> None:
    config = (REPO / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*(\S+\.md)\s*$", config, re.M))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert listed == pages
    assert {"index.md", "guide/policies.md", "api/optsched.md"} <= pages


def test_every_api_identifier_resolves() -> None:
    """Each ``::: name`` and each listed member names a real object."""
    for page in sorted((DOCS / "api").glob("*.md")):
        # A member belongs to the ``:::`` directive above it.
        for block in re.split(r"^(?=::: )", page.read_text(), flags=re.M)[1:]:
            module_name = block.split()[1]
            module = importlib.import_module(module_name)
            for member in re.findall(r"^ {8}- (\w+)$", block, re.M):
                assert hasattr(module, member), f"{page.name}: {module_name}.{member}"


def test_the_top_level_page_renders_every_lazy_function() -> None:
    import optsched

    text = (DOCS / "api" / "optsched.md").read_text()
    members = set(re.findall(r"^ {8}- (\w+)$", text, re.M))
    functions = {name for name in optsched.__all__ if name[0].islower()}
    assert functions - {"__version__"} <= members


def test_the_home_page_example_is_the_readme_example() -> None:
    # The README's block is run by tests/core/test_api.py; the copy must not drift.
    (readme,) = _python_blocks((REPO / "README.md").read_text())
    (home,) = _python_blocks((DOCS / "index.md").read_text())
    assert home == readme


def test_roles_become_code_spans() -> None:
    to_markdown = _markup().to_markdown
    text = "See :func:`~optsched.check.check_schedule` and :class:`Result`."
    assert to_markdown(text) == "See `check_schedule` and `Result`."
    assert to_markdown(":mod:`optsched.io`::") == "`optsched.io`:"


def test_simple_table_becomes_markdown_with_an_overlong_first_cell() -> None:
    to_markdown = _markup().to_markdown
    text = "\n".join(
        [
            "Back-ends:",
            "",
            "======= =============",
            "``a``   first, see :data:`X`",
            "``bounds-only`` second",
            "        continued",
            "======= =============",
            "",
            "After.",
        ]
    )
    assert to_markdown(text).splitlines() == [
        "Back-ends:",
        "",
        "",
        "|  |  |",
        "|---|---|",
        "| ``a`` | first, see `X` |",
        "| ``bounds-only`` | second continued |",
        "",
        "",
        "After.",
    ]


def test_table_with_a_header_and_math() -> None:
    to_markdown = _markup().to_markdown
    text = "\n".join(
        [
            "===== =====",
            "name  kind",
            "===== =====",
            "x     cmax",
            "===== =====",
            "",
            ".. math:: C \\ge r",
            "   + p",
            "",
            "Done.",
        ]
    )
    assert to_markdown(text).splitlines() == [
        "",
        "| name | kind |",
        "|---|---|",
        "| x | cmax |",
        "",
        "",
        "```text",
        "C \\ge r",
        "+ p",
        "```",
        "",
        "Done.",
    ]


@pytest.mark.parametrize(
    "module", ["optsched", "optsched.models", "optsched.analysis.gap"]
)
def test_real_docstrings_keep_no_rst_markup(module: str) -> None:
    text = _markup().to_markdown(importlib.import_module(module).__doc__ or "")
    assert not re.search(r":\w+:`|^\s*\.\. \w+::|^\s*=+ +=+\s*$", text, re.M)
