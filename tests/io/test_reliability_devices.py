"""Issue 32, outputs: devices, FIFOs and links at an output path are never replaced.

The atomic-write helper renames a temporary file onto the output path; it
used to do so onto whatever was there, so that ``-o /dev/null`` run as root
replaced the device node with a regular file (and wrote ``/dev/null.json``
beside it). Now a link is followed (its target replaced, the link kept), a
character device or a FIFO with a reader is written through in place, a
FIFO nobody reads is refused with one line, and no companion file is written
beside a device.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import INSTANCES

from optsched.cli import main
from optsched.io.atomic import atomic_write, replaces_a_file

INSTANCE = INSTANCES / "kth_20.json"


def _is_char_device(path: str) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


def test_dev_null_is_written_through_and_stays_a_device() -> None:
    # As root (CI) the old helper replaced the node; as any user it must
    # leave it a character device and write no /dev/null.json beside it.
    before = os.lstat("/dev/null")
    result = CliRunner().invoke(
        main, ["simulate", str(INSTANCE), "-p", "easy", "-o", "/dev/null"]
    )
    assert result.exit_code == 0, result.output
    assert _is_char_device("/dev/null")
    assert os.lstat("/dev/null").st_ino == before.st_ino
    assert not os.path.lexists("/dev/null.json")
    assert "schedule written to /dev/null" in result.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_full_device_is_one_line_and_stays_a_device() -> None:
    result = CliRunner().invoke(
        main, ["simulate", str(INSTANCE), "-p", "easy", "-o", "/dev/full"]
    )
    assert result.exit_code == 2
    assert result.stderr == "optsched: error: /dev/full: No space left on device\n"
    assert _is_char_device("/dev/full")
    assert not os.path.lexists("/dev/full.json")


@pytest.mark.skipif(os.geteuid() != 0, reason="run as root: tests a non-root user")
def test_dev_null_as_a_user_who_cannot_write_in_dev() -> None:
    # nobody cannot create files in /dev: the old helper failed there on its
    # temporary file; writing through needs no new file. A forked child
    # drops to nobody (the venv's interpreter may be out of its reach).
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            with atomic_write("/dev/null") as handle:
                handle.write("discarded\n")
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _is_char_device("/dev/null")
    assert not os.path.lexists("/dev/null.json")


def test_a_symlink_keeps_its_link_and_its_target_is_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to("real.csv")
    with atomic_write(link) as handle:
        handle.write("new\n")
    assert link.is_symlink() and os.readlink(link) == "real.csv"
    assert real.read_text() == "new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.csv"
    link.symlink_to("sub/target.csv")
    (tmp_path / "sub").mkdir()
    with atomic_write(link) as handle:
        handle.write("x")
    assert link.is_symlink()
    assert (tmp_path / "sub" / "target.csv").read_text() == "x"


def test_a_fifo_with_a_reader_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    received: list[bytes] = []
    ready = threading.Event()

    def read() -> None:
        ready.set()
        with open(fifo, "rb") as handle:  # blocks until the writer opens
            received.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    ready.wait()
    # The reader's open() may lag behind the event; retry the refused open.
    for _ in range(200):
        try:
            with atomic_write(fifo) as handle:
                handle.write("a,b\n1,2\n")
            break
        except OSError:
            threading.Event().wait(0.01)
    reader.join(10)
    assert received == [b"a,b\n1,2\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_fifo_nobody_reads_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    result = CliRunner().invoke(
        main, ["simulate", str(INSTANCE), "-p", "easy", "-o", str(fifo)]
    )
    assert result.exit_code == 2
    assert result.stderr == f"optsched: error: {fifo}: a FIFO that nobody reads\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_replaces_a_file_tells_devices_from_files(tmp_path: Path) -> None:
    assert replaces_a_file(tmp_path / "absent.csv")
    (tmp_path / "f").write_text("x")
    assert replaces_a_file(tmp_path / "f")
    assert not replaces_a_file("/dev/null")
    os.mkfifo(tmp_path / "p")
    assert not replaces_a_file(tmp_path / "p")


def test_a_directory_as_input_or_output_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "adir"
    folder.mkdir()
    runner = CliRunner()
    given = runner.invoke(main, ["info", str(folder)])
    assert given.exit_code == 2
    assert given.stderr == f"optsched: error: FILE: File '{folder}' is a directory.\n"
    out = runner.invoke(
        main, ["simulate", str(INSTANCE), "-p", "easy", "-o", str(folder)]
    )
    assert out.exit_code == 2
    assert out.stderr.count("\n") == 1 and "is a directory" in out.stderr
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("device", ["fifo", "/dev/zero"])
def test_a_fifo_or_device_as_input_is_one_line(tmp_path: Path, device: str) -> None:
    path = tmp_path / "in.swf"
    if device == "fifo":
        os.mkfifo(path)
    else:
        path = Path(device)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"optsched: error: {path}: cannot read file: not a regular file "
        "(a FIFO or a device may never end)\n"
    )
