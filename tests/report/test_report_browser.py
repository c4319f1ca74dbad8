"""The HTML report in a real browser: headless Chromium lays the page out.

Runs ``benchmarks/report_screenshot.py`` (Chromium only, no Python
package) and checks what a reader would see: the page is never wider than
the window (wide tables scroll inside their own box) and every figure
decodes. Skipped where Chromium is not installed (``apt-get install
chromium``), as on the CI machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from support.paths import REPO

from optsched.report.render import Heading, Image, Table, new_figure, write_html

SCRIPT = REPO / "benchmarks" / "report_screenshot.py"

pytestmark = pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Chromium is not installed (apt-get install chromium)",
)


def _measures(page: Path, width: int) -> tuple[int, dict[str, int]]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(page), "--width", str(width)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _wide_figure() -> Figure:
    figure = new_figure(12.0, 3.0)  # wider than the window at 100 dpi
    figure.subplots().plot([0, 1], [0, 1])
    return figure


def test_a_wide_table_scrolls_in_its_box_and_figures_decode(tmp_path: Path) -> None:
    columns = tuple(f"policy-{k} ratio" for k in range(40))
    wide = Table("wide", "forty policies", columns, (("[1.0285, 1.0924]",) * 40,))
    page = write_html(
        tmp_path / "report.html",
        "wide",
        [Heading("wide", 1), wide, Image("line", "a line", _wide_figure)],
    )
    status, measures = _measures(page, 1000)
    assert status == 0
    assert measures["page_width"] == measures["viewport_width"] == 1000
    assert measures["tables"] == measures["scrolling_tables"] == 1
    assert measures["images"] == 1 and measures["broken_images"] == 0
    # The same table without its box widens the page: the check can fail.
    bare = page.read_text().replace('<div class="table">', "<div>")
    (tmp_path / "bare.html").write_text(bare)
    status, measures = _measures(tmp_path / "bare.html", 1000)
    assert status == 1 and measures["page_width"] > 1000
