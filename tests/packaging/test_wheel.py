"""The built wheel runs the main job: package data, not the checkout.

Builds the wheel from a copy of the source tree (so no build/ folder is left
in the checkout), installs it without dependencies into a fresh virtual
environment that reuses this one's installed packages (no network), and runs
``optsched gap`` on the bundled window from a folder outside the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.paths import REPO

_ROOT_LEFT_OUT = {".git", ".venv", "build", "optsched.egg-info", "tests", "site"}


def _left_out(folder: str, names: list[str]) -> set[str]:
    """What the copy leaves out: caches anywhere, the bulky root folders."""
    root = Path(folder) == REPO
    return {n for n in names if n == "__pycache__" or (root and n in _ROOT_LEFT_OUT)}


def _run(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding the wheel; its bin/ folder."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=_left_out)
    built = _run(sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q",
                 "-w", root / "dist", cwd=source)  # fmt: skip
    if built.returncode != 0:
        pytest.skip(f"cannot build the wheel here (no build backend): {built.stderr}")
    (wheel,) = (root / "dist").glob("optsched-*.whl")
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    # The dependencies come from this environment: its site-packages is
    # appended to the new one's path (its .pth files, such as the editable
    # install of the checkout, are not read, so the wheel's optsched wins).
    (site,) = (venv / "lib").glob("python*/site-packages")
    (site / "reuse.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python",
               "install", "--no-deps", "-q", wheel, cwd=root)  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    return venv / "bin"


@pytest.mark.slow
def test_the_wheel_runs_gap_on_the_bundled_window(
    installed: Path, tmp_path: Path
) -> None:
    code = "import optsched; print(optsched.__file__)"
    where = _run(installed / "python", "-c", code, cwd=tmp_path)
    assert where.stdout.startswith(str(installed.parent)), where
    gap = _run(installed / "optsched", "gap", "--time-limit", 5, cwd=tmp_path)
    assert gap.returncode == 0, gap.stderr
    first = gap.stdout.splitlines()[0]
    assert first.startswith("instances/default.json (bundled): 1 window(s)")
    for policy in ("fcfs", "easy", "best-package"):
        assert f"│ {policy} " in gap.stdout
    assert "Traceback" not in gap.stderr


@pytest.mark.slow
def test_the_wheel_ships_schema_sites_and_gang_classes(
    installed: Path, tmp_path: Path
) -> None:
    code = (
        "from importlib import resources\n"
        "from optsched.bundled import bundled_path\n"
        "from optsched.io.native import read_native\n"
        "from optsched.site.files import read_site\n"
        "from optsched.heuristics.preempt.gang_classes import default_classes\n"
        "print(len(read_native(bundled_path('kth_20.json')).instance.jobs))\n"
        "print(read_site(bundled_path('sites', 't3e.toml')) is not None)\n"
        "print(len(default_classes().classes))\n"
        "print((resources.files('optsched') / 'schemas' / 'instance.schema.json')"
        ".is_file())\n"
    )
    result = _run(installed / "python", "-c", code, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["20", "True", "5", "True"]


@pytest.mark.slow
def test_the_wheel_ships_the_report_templates(installed: Path, tmp_path: Path) -> None:
    code = (
        "from optsched.report.render import Paragraph, Table, render_html\n"
        "blocks = [Paragraph('<b>'), Table('t', 'c', ('x',), (('1',),))]\n"
        "print(render_html('T', blocks))\n"
    )
    result = _run(installed / "python", "-c", code, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "<title>T</title>" in result.stdout
    assert "<p>&lt;b&gt;</p>" in result.stdout
    assert '<table id="t"><caption>c</caption>' in result.stdout
