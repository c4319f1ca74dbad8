"""Fuzzing of the commands that write files (issue 17): no output is left
behind by a bad input.

Each input is a mutant of a small real file (the mutations of
tests/io/test_fuzz_readers.py) given to a command that writes an output
(``window -o``, ``simulate -o``, ``bound -o --schedule-out``). The contract:
either the command succeeds (exit 0), its output exists and, for a
schedule, passes :func:`optsched.check.check_schedule` against the instance
read from the same input; or it fails with exit status 2, one line on
stderr, and the folder holds exactly what it held before (no output, no
temporary file). Anything else (a traceback, another status, a leftover
file) fails the test. ``pytest --fuzz`` runs the campaign recorded in
benchmarks/README.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import fuzz_settings, mutants

from optsched.check import check_schedule
from optsched.cli import main
from optsched.io import read
from optsched.io.schedules import read_schedule

pytestmark = pytest.mark.fuzz

COMMANDS = {
    "window": ["window", "{input}", "--first-job", "0", "--jobs", "3", "-o", "{out}"],
    "simulate": ["simulate", "{input}", "--policy", "easy", "-o", "{out}"],
    "bound": [
        "bound",
        "{input}",
        "--backend",
        "bounds-only",
        "--time-limit",
        "2",
        "--schedule-out",
        "{out}",
    ],
}
OUTPUT_NAMES = {"window": "w.json", "simulate": "s.csv", "bound": "b.csv"}


def _run(folder: Path, command: str, data: bytes) -> None:
    source = folder / "input"
    source.write_bytes(data)
    out = folder / OUTPUT_NAMES[command]
    before = set(os.listdir(folder))
    args = [a.format(input=source, out=out) for a in COMMANDS[command]]
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    after = set(os.listdir(folder))
    if result.exit_code == 0:
        # A CSV schedule comes with its provenance file (``NAME.json``).
        written = {out.name} | ({out.name + ".json"} if out.suffix == ".csv" else set())
        assert after == before | written, sorted(after - before)
        if command != "window":
            instance = read(source)
            assert check_schedule(instance, read_schedule(out)) == []
    else:
        assert result.exit_code == 2, (result.exit_code, result.exception)
        # click's sys.exit(2), not an exception escaping the command
        assert isinstance(result.exception, SystemExit), repr(result.exception)
        assert after == before, sorted(after ^ before)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("optsched: error: "), lines
    out.unlink(missing_ok=True)


@fuzz_settings(regular=25)
@given(data=mutants(), command=st.sampled_from(sorted(COMMANDS)))
def test_a_bad_input_leaves_no_output(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, command: str
) -> None:
    _run(tmp_path_factory.mktemp("out"), command, data)
