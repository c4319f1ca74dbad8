"""Look at an HTML report the way a reader does: headless Chromium.

Usage::

    python benchmarks/report_screenshot.py REPORT.html --out-dir shots/ \
        [--width 1280] [--chromium /usr/bin/chromium]

Needs Chromium (Debian: ``apt-get install chromium``); nothing else, no
Python package. Two runs of the browser on a copy of the page:

1. ``--dump-dom`` on a copy with a small measuring script appended (the
   report itself holds no script): after the page has loaded, the script
   writes the page's scroll width and height, the viewport width, the
   number of images that failed to decode, and how many table boxes scroll
   horizontally, into an element that the dumped DOM carries back.
2. ``--screenshot`` of the report itself, with a window as tall as the page
   (capped at :data:`MAX_HEIGHT` pixels), cut into slices of
   :data:`SLICE_HEIGHT` pixels (``NN.png``) for an image viewer.

Prints the measures as one JSON object. Exit status 1 when the page is
wider than the window (a table or figure widens the page) or an image is
broken, 2 when Chromium is missing or fails. The protocol and what was
seen are in benchmarks/README.md ("Reports: the page as a reader sees it").
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
)
"""Chromium flags: headless, no sandbox (root in a container), and no
background connections (the machine's network is closed)."""

MAX_HEIGHT = 16_000
"""Tallest screenshot taken (pixels); a longer page is shot down to here."""

SLICE_HEIGHT = 2_000
"""Height of the slices the screenshot is cut into (pixels)."""

MEASURE = """
<pre id="optsched-measures"></pre>
<script>
window.addEventListener("load", () => {
  const root = document.documentElement;
  const images = Array.from(document.images);
  const boxes = Array.from(document.querySelectorAll("div.table"));
  document.getElementById("optsched-measures").textContent = JSON.stringify({
    viewport_width: window.innerWidth,
    page_width: root.scrollWidth,
    page_height: root.scrollHeight,
    images: images.length,
    broken_images: images.filter(i => !i.complete || i.naturalWidth === 0).length,
    tables: boxes.length,
    scrolling_tables: boxes.filter(b => b.scrollWidth > b.clientWidth).length,
  });
});
</script>
"""


def chromium_run(chromium: str, width: int, height: int, *args: str) -> str:
    """Run Chromium headless with a window of ``width`` x ``height``."""
    with tempfile.TemporaryDirectory(prefix="optsched-chromium-") as profile:
        done = subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "--virtual-time-budget=10000",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


def measure(chromium: str, report: Path, width: int) -> dict[str, int]:
    """Layout measures of ``report`` in a window ``width`` pixels wide."""
    text = report.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="optsched-measure-") as folder:
        copy = Path(folder) / "page.html"
        copy.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
        dom = chromium_run(chromium, width, 900, "--dump-dom", copy.as_uri())
    start = dom.index('<pre id="optsched-measures">') + len(
        '<pre id="optsched-measures">'
    )
    return json.loads(dom[start : dom.index("</pre>", start)])


def screenshot(
    chromium: str, report: Path, width: int, height: int, out_dir: Path
) -> list[Path]:
    """A full-page screenshot of ``report`` cut into slices; their paths."""
    from PIL import Image  # Pillow comes with matplotlib

    out_dir.mkdir(parents=True, exist_ok=True)
    whole = out_dir / "page.png"
    chromium_run(
        chromium,
        width,
        min(height, MAX_HEIGHT),
        f"--screenshot={whole}",
        report.resolve().as_uri(),
    )
    slices = []
    with Image.open(whole) as picture:
        for k, top in enumerate(range(0, picture.height, SLICE_HEIGHT)):
            part = picture.crop(
                (0, top, picture.width, min(picture.height, top + SLICE_HEIGHT))
            )
            path = out_dir / f"{k:02d}.png"
            part.save(path)
            slices.append(path)
    return slices


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args(argv)
    if shutil.which(args.chromium) is None:
        print(f"{args.chromium}: not found (apt-get install chromium)", file=sys.stderr)
        return 2
    try:
        measures = measure(args.chromium, args.report, args.width)
        if args.out_dir is not None:
            shots = screenshot(
                args.chromium,
                args.report,
                args.width,
                measures["page_height"],
                args.out_dir,
            )
            measures["slices"] = len(shots)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
        print(f"{args.report}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(measures, sort_keys=True))
    wider = measures["page_width"] > measures["viewport_width"]
    return 1 if wider or measures["broken_images"] else 0


if __name__ == "__main__":
    sys.exit(main())
