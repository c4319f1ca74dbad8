"""Issue 32, the message audit: a refusal caused by a file says where.

Every spoiled file of ``tests/support/message_corpus.py`` (a valid seed with
one fault: a syntax error, a word for a number, a value out of range, an
unknown key or name, a missing field, a bad byte; or a whole file empty,
binary or a cut gzip stream) must be refused with exit status 2 and one
line ``file:line: reason`` naming the faulty line, or ``file: reason`` for a
fault of the whole file. The campaign (benchmarks/reliability_campaign.py)
runs the same corpus one process per case; this test runs it in-process.

And an output the disk cannot hold (``ENOSPC`` from the writes, which name
no file) is one line naming the output, for every command that writes one.
"""

from __future__ import annotations

import errno
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.bench import row
from support.message_corpus import (
    FORMATS,
    MessageCase,
    located,
    message_corpus,
    unlocated_reason,
)
from support.paths import DATA, INSTANCES

from optsched.bench.store import Store
from optsched.cli import main

INSTANCE = INSTANCES / "kth_20.json"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[MessageCase]]:
    by_format: dict[str, list[MessageCase]] = defaultdict(list)
    for case in message_corpus(tmp_path_factory.mktemp("messages")):
        by_format[case.fmt].append(case)
    return by_format


def test_the_corpus_covers_every_format(corpus: dict[str, list[MessageCase]]) -> None:
    assert sorted(corpus) == sorted(FORMATS)
    kinds = {case.fault for cases in corpus.values() for case in cases}
    assert {"empty", "binary", "bad UTF-8", "a word for a number"} <= kinds


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_refusal_names_the_file_and_line(
    corpus: dict[str, list[MessageCase]], fmt: str
) -> None:
    runner = CliRunner()
    wrong = []
    for case in corpus[fmt]:
        result = runner.invoke(main, list(case.args))
        if result.exit_code != 2 or not located(case, result.stderr):
            got = unlocated_reason(result.stderr)
            wrong.append(f"{case.fault}: exit {result.exit_code}: {got!r}")
        elif "\n" in result.stderr.strip():
            wrong.append(f"{case.fault}: more than one line: {result.stderr!r}")
    assert not wrong, "\n".join(wrong)


def _output_commands(tmp: Path, store: Path) -> dict[str, list[str]]:
    """Each command writing a file, its output path last."""
    schedule = DATA / "schedules" / "golden.csv"
    golden = DATA / "schedules" / "instance.json"
    i = str(INSTANCE)
    commands = {
        "simulate": ["simulate", i, "-p", "easy", "-o", "s.csv"],
        "compare": ["compare", i, "--policies", "fcfs,easy", "-o", "c.csv"],
        "bound": ["bound", i, "--time-limit", "2", "-o", "b.json"],
        "window": ["window", i, "--first-job", "1", "--jobs", "5", "-o", "w.json"],
        "plot gantt": ["plot", "gantt", str(schedule), str(golden), "-o", "g.png"],
        "coreserve optimum": [
            "coreserve",
            "optimum",
            str(DATA / "coreserve" / "two_clusters.json"),
            "-o",
            "c.json",
        ],
        "export": ["export", str(store), "-o", "e.csv"],
        "report": ["report", str(store), "-o", "r.html"],
    }
    return {name: [*args[:-1], str(tmp / args[-1])] for name, args in commands.items()}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results store of one row (export and report read it)."""
    path = tmp_path_factory.mktemp("store") / "rows.sqlite"
    with Store(path) as results:
        results.insert(row("t1"))
    return path


@pytest.mark.parametrize("command", sorted(_output_commands(Path(), Path())))
def test_a_full_disk_names_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: Path, command: str
) -> None:
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    # fsync is where a full disk shows on a file written through a buffer.
    monkeypatch.setattr("optsched.io.atomic.os.fsync", no_space)
    args = _output_commands(tmp_path, store)[command]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    # The output, or the provenance sidecar written with it (simulate's).
    message = result.stderr
    assert re.fullmatch(
        rf"optsched: error: {re.escape(args[-1])}(\.json)?: "
        r"(cannot write file: )?No space left on device\n",
        message,
    ), message
    assert list(tmp_path.iterdir()) == []  # no temporary file left
