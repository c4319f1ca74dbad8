"""Regenerate the printed outputs that README.md and docs/ show, from the code.

A ``text`` block whose first line is ``$ COMMAND`` shows what COMMAND
prints. This script runs each such COMMAND from the repository root, with
``COLUMNS=80`` (tables laid out as on an 80-column terminal) and this
Python's ``bin`` folder first on ``PATH``, and writes its standard output
under the ``$`` line. Numbers in the docs therefore come from the code, and
a change that moves them (a policy fixed, a bound improved) is one run of
this script away from the docs.

Usage::

    python docs/printed_outputs.py           # rewrite the blocks in place
    python docs/printed_outputs.py --check   # exit 1 with a diff if stale

CI runs ``--check`` (``tests/docs/test_printed_outputs.py``).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
_PRINTED = re.compile(
    r"^```text\n\$ (?P<command>[^\n]*)\n(?P<output>.*?)^```$", re.M | re.S
)


def printed(command: str) -> str:
    """What ``command`` prints on stdout, run as the docs say."""
    env = {**os.environ, "COLUMNS": "80"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{command!r} failed ({done.returncode}):\n{done.stderr}")
    # Trailing blanks (rich pads a table's title) would not survive an
    # editor's or a Markdown linter's clean-up.
    return "".join(line.rstrip() + "\n" for line in done.stdout.splitlines())


def regenerated(text: str) -> str:
    """``text`` with every printed block's output made what its command prints."""

    def rerun(match: re.Match[str]) -> str:
        output = printed(match["command"])
        return f"```text\n$ {match['command']}\n{output}```"

    return _PRINTED.sub(rerun, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report, do not write")
    args = parser.parse_args(argv)
    stale = 0
    for page in PAGES:
        text = page.read_text()
        if not _PRINTED.search(text):
            continue
        new = regenerated(text)
        if new == text:
            continue
        stale += 1
        name = str(page.relative_to(REPO))
        if args.check:
            diff = difflib.unified_diff(
                text.splitlines(True), new.splitlines(True), name, f"{name} (now)"
            )
            sys.stdout.writelines(diff)
        else:
            page.write_text(new)
            print(f"rewrote {name}")
    if args.check and stale:
        print(f"{stale} page(s) show outputs the code no longer prints: "
              "run python docs/printed_outputs.py")  # fmt: skip
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
