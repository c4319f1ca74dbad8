"""``optsched traces list|fetch|path`` and ``pwa:`` names on the command line.

A temporary cache (OPTSCHED_DATA_DIR) and ``--from`` the shared trace folder:
no network.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.paths import TRACES, trace_cache

from optsched.cli import main
from optsched.io import archive


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_list_names_every_trace_with_its_hash_and_acknowledgement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(tmp_path))
    result = _run("traces", "list")
    assert result.exit_code == 0
    for trace in archive.TRACES:
        assert f"pwa:{trace.name}\n" in result.output
        assert f"sha256       {trace.sha256}\n" in result.output
        assert f"acknowledge  {trace.acknowledge}\n" in result.output
        assert f"download     {trace.download_url}\n" in result.output
    assert result.output.count("cached       no\n") == len(archive.TRACES)
    assert archive.PWA_CITATION in " ".join(result.output.split())
    # 80 columns but for the URLs, which stay whole to be copied.
    text = [line for line in result.output.splitlines() if "https://" not in line]
    assert max(map(len, text)) <= 80


def test_fetch_then_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = trace_cache(monkeypatch, tmp_path / "cache")
    monkeypatch.delenv("OPTSCHED_TRACES_FROM")
    missing = _run("traces", "path", "hpc2n")
    assert missing.exit_code == 2
    assert "pwa:hpc2n: not fetched yet: optsched traces fetch hpc2n" in missing.output
    fetched = _run("traces", "fetch", "hpc2n", "lublin_256", "--from", TRACES)
    assert fetched.exit_code == 0, fetched.output
    lines = fetched.stdout.splitlines()
    assert lines == [str(cache / "hpc2n.swf"), str(cache / "lublin_256.swf")]
    assert _run("traces", "path", "HPC2N").stdout == f"{cache / 'hpc2n.swf'}\n"
    assert f"cached       {cache / 'hpc2n.swf'}\n" in _run("traces", "list").output


def test_fetch_needs_a_name_and_knows_its_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(tmp_path))
    assert _run("traces", "fetch").exit_code == 2
    unknown = _run("traces", "fetch", "SDSC-SP2", "--from", tmp_path)
    assert unknown.exit_code == 2
    assert unknown.output.startswith("optsched: error: pwa:sdsc-sp2: unknown trace;")
    assert not list(tmp_path.iterdir())


def test_bad_mirror_bytes_exit_2_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(tmp_path / "cache"))
    (tmp_path / "hpc2n.swf").write_text("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n")
    result = _run("traces", "fetch", "hpc2n", "--from", tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(
        "optsched: error: pwa:hpc2n: refused: the fetched file's sha256 is not"
    )
    assert not (tmp_path / "cache" / "hpc2n.swf").exists()


def test_commands_take_pwa_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_cache(monkeypatch, tmp_path / "cache")
    by_name = _run(
        "window",
        "pwa:KTH-SP2-1996-2.1-cln",
        "--first-job",
        100,
        "--jobs",
        7,
        "-o",
        tmp_path / "a.json",
    )
    assert by_name.exit_code == 0, by_name.output
    by_file = _run(
        "window",
        TRACES / "KTH-SP2-1996-2.1-cln.swf",
        "--first-job",
        100,
        "--jobs",
        7,
        "-o",
        tmp_path / "b.json",
    )
    assert by_file.exit_code == 0
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
