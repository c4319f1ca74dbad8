"""The tutorial, the gallery and the Batsim page run as written, in order,
and show what their blocks print and draw (``docs/run_pages.py``).

``OPTSCHED_UPDATE_DOCS=1`` rewrites the shown outputs and the pictures.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import matplotlib
import pytest
from support.paths import REPO, TRACES

sys.path.insert(0, str(REPO / "docs"))
try:
    import run_pages
finally:
    sys.path.remove(str(REPO / "docs"))

UPDATE = os.environ.get("OPTSCHED_UPDATE_DOCS") == "1"


def _needs_traces(page: Path) -> bool:
    return "pwa:" in page.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("page", run_pages.PAGES, ids=lambda p: p.name)
def test_the_page_shows_what_its_blocks_print_and_draw(
    page: Path, tmp_path: Path
) -> None:
    if _needs_traces(page) and not TRACES.is_dir():
        pytest.skip(f"real traces not available: {TRACES} is absent")
    folder = tmp_path / "work"
    folder.mkdir()
    env = run_pages.environment(str(TRACES), tmp_path / "cache")
    run = run_pages.run_page(page, folder, env)
    if UPDATE:
        run_pages.update(page, run)
    text = page.read_text()
    assert run_pages.updated_text(text, run) == text, (
        "run OPTSCHED_UPDATE_DOCS=1 or python docs/run_pages.py"
    )
    assert run.outputs, "no block ran"
    for name in run_pages.pictures(text):
        shown = (page.parent / "img" / name).read_bytes()
        version = re.search(rb"Matplotlib v([\d.]+)", shown)
        if version is None or version.group(1).decode() != matplotlib.__version__:
            pytest.skip(f"{name} was drawn by another matplotlib version")
        drawn = (folder / name).read_bytes()
        assert drawn == shown, f"{name}: run OPTSCHED_UPDATE_DOCS=1"
    if run.skipped:
        pytest.skip("; ".join(run.skipped))


PAGE = """\
Intro.

<!-- docs-test: skip run in order by docs/run_pages.py -->
```sh
echo one
```

<!-- output -->
```text
stale
```

<!-- docs-test: skip other reason -->
```sh
echo not run
```

![a picture](img/x.svg)
"""


def test_outputs_go_under_the_block_that_printed_them() -> None:
    blocks = run_pages.blocks(PAGE)
    assert [b.lang for b in blocks] == ["sh", "text", "sh"]
    assert [run_pages._runs_here(b) for b in blocks] == [True, False, False]
    run = run_pages.Run(Path("."), outputs={0: "one\n"})
    assert run_pages.updated_text(PAGE, run) == PAGE.replace("stale\n", "one\n")
    assert run_pages.pictures(PAGE) == ["x.svg"]


def test_a_page_runs_in_order_in_one_folder(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '```toml title="a.txt"\nfrom a file block\n```\n\n'
        "<!-- docs-test: skip run in order by docs/run_pages.py -->\n"
        "```sh\necho written > b.txt\n```\n\n"
        "<!-- docs-test: skip run in order by docs/run_pages.py -->\n"
        "```python\nfrom pathlib import Path\n"
        "print(Path('a.txt').read_text().strip(), Path('b.txt').read_text().strip())\n"
        "```\n"
    )
    folder = tmp_path / "work"
    folder.mkdir()
    run = run_pages.run_page(page, folder, run_pages.environment(None, None))
    assert run.outputs == {1: "", 2: "from a file block written\n"}
