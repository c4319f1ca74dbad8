"""Issue 32, storage: a results store that cannot be used is one line, never harmed.

``bench``, ``report`` and ``export`` on ``/dev/null``, a FIFO, a directory, a
text file, a truncated file, a foreign SQLite database, a damaged page, a
read-only folder or a full disk: one line naming the file, exit status 2, no
traceback; the rows stored before a fault stay readable, and a re-run
resumes after them.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support import paths

from optsched.bench import Store
from optsched.bench import store as store_module
from optsched.cli import main

TINY = paths.DATA / "suites" / "tiny.toml"
"""12 tasks, under a second."""
FULL_HINT = (
    "results store: database or disk is full; the rows stored so far are kept; "
    "free some space and run the command again to resume"
)


def _bench(store: Path | str) -> Result:
    return CliRunner().invoke(main, ["bench", str(TINY), "--store", str(store)])


def _readers(store: Path | str, tmp: Path) -> list[Result]:
    runner = CliRunner()
    return [
        runner.invoke(main, ["report", str(store), "-o", str(tmp / "r.html")]),
        runner.invoke(main, ["export", str(store), "-o", str(tmp / "r.csv")]),
    ]


def _one_line(result: Result, store: Path | str, reason: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr == f"optsched: error: {store}: {reason}\n"


@pytest.fixture(scope="module")
def full_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete store of the tiny suite (checkpointed: one file)."""
    path = tmp_path_factory.mktemp("store") / "tiny.sqlite"
    assert _bench(path).exit_code == 0
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return path


def test_dev_null_as_store_is_refused_and_left_a_device() -> None:
    result = _bench("/dev/null")
    _one_line(
        result,
        "/dev/null",
        "results store: a device; a results store is an SQLite file",
    )
    assert not os.path.lexists("/dev/null-journal")
    assert not os.path.lexists("/dev/null-wal")


def test_fifo_and_directory_as_store(tmp_path: Path) -> None:
    fifo = tmp_path / "s.sqlite"
    os.mkfifo(fifo)
    reason = "results store: a FIFO; a results store is an SQLite file"
    _one_line(_bench(fifo), fifo, reason)
    for result in _readers(fifo, tmp_path):
        _one_line(result, fifo, reason)
    folder = tmp_path / "d"
    folder.mkdir()
    result = _bench(folder)
    assert result.exit_code == 2
    assert (
        result.stderr == f"optsched: error: --store: File '{folder}' is a directory.\n"
    )


def test_text_file_and_foreign_database(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n" * 100)
    foreign = tmp_path / "other.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE x (a)")
    db.execute("INSERT INTO x VALUES (1)")
    db.commit()
    db.close()
    cases = {
        text: "not a results store: file is not a database",
        foreign: "not an optsched results store (no schema_version table)",
    }
    for path, reason in cases.items():
        before = path.read_bytes()
        for result in [_bench(path), *_readers(path, tmp_path)]:
            _one_line(result, path, reason)
        assert path.read_bytes() == before  # unharmed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "other.db"]


@pytest.mark.parametrize("size", [100, 4096, 20_000])
def test_truncated_store(full_store: Path, tmp_path: Path, size: int) -> None:
    path = tmp_path / "cut.sqlite"
    shutil.copy(full_store, path)
    os.truncate(path, size)
    reason = "not a results store: database disk image is malformed"
    for result in [_bench(path), *_readers(path, tmp_path)]:
        _one_line(result, path, reason)
    assert path.stat().st_size == size


def test_a_damaged_page_is_one_line(full_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.sqlite"
    shutil.copy(full_store, path)
    with open(path, "r+b") as handle:  # the second page: part of the schema
        handle.seek(4096 * 2)
        handle.write(b"\xff" * 4096)
    reason = (
        "results store: database disk image is malformed; the file is damaged "
        "(truncated or overwritten)"
    )
    for result in [_bench(path), *_readers(path, tmp_path)]:
        _one_line(result, path, reason)


def test_a_full_disk_keeps_the_rows_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's page cap raises the very error of a full disk (SQLITE_FULL).
    prepare = store_module.Store._prepare

    def capped(self: Store, create: bool) -> None:
        prepare(self, create)
        self._db.execute("PRAGMA max_page_count = 9")

    path = tmp_path / "s.sqlite"
    monkeypatch.setattr(store_module.Store, "_prepare", capped)
    _one_line(_bench(path), path, FULL_HINT)
    monkeypatch.setattr(store_module.Store, "_prepare", prepare)
    with Store(path, create=False) as store:
        kept = len(store.rows())
    assert 0 < kept < 12
    again = _bench(path)
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(
        f"suite tiny: 12 tasks, {kept} already stored, {12 - kept} run (0 failed)"
    )


def _as_nobody(work: Callable[[], str]) -> str:
    """``work()`` in a forked child, as user nobody when run as root (root
    writes into read-only folders); its result comes back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        text = "child failed"
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            text = work()
        finally:
            os.write(write_end, text.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    return text


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder nobody can reach (``tmp_path`` sits in root's 0700 folder)."""
    path = Path(tempfile.mkdtemp(prefix="optsched-ro-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        for folder in path.rglob("*"):
            if folder.is_dir():
                folder.chmod(0o755)
        shutil.rmtree(path)


def test_a_read_only_folder(full_store: Path, open_tmp: Path) -> None:
    folder = open_tmp / "ro"
    folder.mkdir()
    shutil.copy(full_store, folder / "s.sqlite")
    os.chmod(folder / "s.sqlite", 0o444)
    folder.chmod(0o555)
    new, kept = folder / "new.sqlite", folder / "s.sqlite"

    def run() -> str:
        # Not report: the child (nobody) may not read root's interpreter
        # files that matplotlib imports.
        export = ["export", str(kept), "-o", str(open_tmp / "r.csv")]
        results = [_bench(new), _bench(kept), CliRunner().invoke(main, export)]
        return json.dumps([[r.exit_code, r.stderr] for r in results])

    try:
        results = json.loads(_as_nobody(run))
    finally:
        folder.chmod(0o755)
    not_writable = f"cannot write file: folder '{folder}' is not writable"
    assert results == [
        [2, f"optsched: error: {new}: {not_writable}\n"],
        [2, f"optsched: error: {kept}: {not_writable}\n"],
        [
            2,
            f"optsched: error: {kept}: results store: attempt to write a readonly "
            "database; the file or its folder is read-only\n",
        ],
    ]
    assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite"]
    assert (folder / "s.sqlite").read_bytes() == full_store.read_bytes()
