"""Start-up of the command line (issue 30): ``--version`` and ``--help``
import no command module, ``info`` neither pandas nor networkx, and the
command list ``--help`` prints without importing the commands is theirs.

Times are measured in benchmarks/README.md, never asserted here; what is
asserted is which modules a fresh interpreter has loaded.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from optsched.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "networkx", "ortools", "matplotlib", "highspy")


def _loaded_after(args: list[str]) -> set[str]:
    # The modules a fresh interpreter holds after running the command.
    code = (
        "import json, sys\n"
        "from optsched.cli import main\n"
        "try:\n"
        f"    main({args!r}, prog_name='optsched')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_command(flag: str) -> None:
    loaded = _loaded_after([flag])
    commands = {f"optsched.cli.{module}" for module, _ in COMMANDS.values()}
    assert not loaded & commands
    assert not loaded & set(HEAVY)
    assert "numpy" not in loaded


def test_info_imports_no_heavy_library() -> None:
    loaded = _loaded_after(["info", str(ROOT / "instances" / "kth_20.json")])
    assert "optsched.cli.info" in loaded
    assert not loaded & set(HEAVY)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_listed_summary_is_the_commands_own(name: str) -> None:
    module, _ = COMMANDS[name]
    command = importlib.import_module(f"optsched.cli.{module}").command
    assert command.name == name
    listed = click.Command(name, help=COMMANDS[name][1])
    for limit in (20, 45, 60, 74, 200):
        assert listed.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_help_lists_every_command_and_each_runs() -> None:
    out = CliRunner().invoke(main, ["--help"]).output
    listed = [
        line.split()[0]
        for line in out.split("Commands:")[1].splitlines()
        if line.strip()
    ]
    assert listed == sorted(COMMANDS)
    for name in COMMANDS:
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert result.output.startswith(f"Usage: main {name} ")


def test_unknown_command_is_refused() -> None:
    result = CliRunner().invoke(main, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command 'no-such-command'" in result.output
