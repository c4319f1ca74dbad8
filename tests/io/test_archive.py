"""The known archive traces (optsched.io.archive): registry, fetch, pwa: names.

No network: every fetch copies from the shared trace folder or from a mirror
folder the test writes, into a temporary cache (OPTSCHED_DATA_DIR).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from support.paths import TRACES, trace_cache, trace_path

from optsched.bench.suite import load_suite
from optsched.errors import InputError
from optsched.io import archive, read_trace
from optsched.windows.prepare import read_source


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("trace", archive.TRACES, ids=lambda t: t.name)
def test_registry_hash_is_the_shared_files_hash(trace: archive.ArchiveTrace) -> None:
    # hashlib on the shared copy, not pooch: the pins are checked independently.
    assert _sha256(trace_path(trace.file)) == trace.sha256


@pytest.mark.parametrize("trace", archive.TRACES, ids=lambda t: t.name)
def test_registry_job_count_is_the_files(trace: archive.ArchiveTrace) -> None:
    import gzip

    path = trace_path(trace.file)
    opener = gzip.open if trace.file.endswith(".gz") else open
    with opener(path, "rt", encoding="latin-1") as lines:
        jobs = sum(1 for line in lines if len(line.split()) == 18)
    assert jobs == trace.jobs


def test_find_by_name_file_name_prefix_and_case() -> None:
    kth = archive.TRACES[0]
    for name in ("KTH-SP2-1996-2.1-cln", "pwa:kth-sp2-1996-2.1-cln", kth.file):
        assert archive.find(name) is kth
    with pytest.raises(InputError, match=r"^pwa:nope: unknown trace; known traces: "):
        archive.find("nope")


def test_fetch_copies_from_the_mirror_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = trace_cache(monkeypatch, tmp_path / "cache")
    path = archive.fetch("hpc2n")
    assert path == cache / "hpc2n.swf"
    assert path.read_bytes() == (TRACES / "hpc2n.swf").read_bytes()
    # A damaged cached copy is replaced from the mirror on the next use.
    path.write_bytes(b"damaged")
    assert (
        archive.fetch("pwa:hpc2n").read_bytes() == (TRACES / "hpc2n.swf").read_bytes()
    )


def test_a_cached_trace_needs_no_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_cache(monkeypatch, tmp_path / "cache")
    archive.fetch("hpc2n")
    monkeypatch.setenv("OPTSCHED_TRACES_FROM", str(tmp_path / "nowhere"))
    assert archive.resolve_trace_path("pwa:hpc2n").is_file()


def test_a_file_with_another_hash_is_refused_and_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(tmp_path / "cache"))
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "hpc2n.swf").write_text("; not the trace\n")
    with pytest.raises(InputError, match=r"^pwa:hpc2n: refused: .*sha256 is not eaac"):
        archive.fetch("hpc2n", str(mirror))
    assert not (tmp_path / "cache" / "hpc2n.swf").exists()


def test_a_file_missing_from_the_mirror_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(tmp_path / "cache"))
    with pytest.raises(InputError, match="no such file in the mirror folder"):
        archive.fetch("lublin_256", str(tmp_path))


def test_a_plain_path_is_left_alone() -> None:
    assert archive.resolve_trace_path("pwa") == Path("pwa")
    assert archive.resolve_trace_path("dir/pwa:x.swf") == Path("dir/pwa:x.swf")


def test_readers_take_pwa_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_cache(monkeypatch, tmp_path / "cache")
    by_name = read_source("pwa:lublin_256").instance
    by_file = read_source(TRACES / "lublin_256.swf").instance
    assert by_name.jobs == by_file.jobs and len(by_name.jobs) == 10_000
    assert (
        read_trace("pwa:hpc2n").instance.jobs
        == read_trace(TRACES / "hpc2n.swf").instance.jobs
    )


def test_suite_takes_pwa_name_with_its_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_cache(monkeypatch, tmp_path / "cache")
    kth = archive.TRACES[0]
    suite = tmp_path / "s.toml"
    text = (
        'policies = ["fcfs"]\nobjectives = ["cmax"]\n[suite]\nname = "s"\n'
        f'[[traces]]\npath = "pwa:{kth.name}"\nsha256 = "{kth.sha256}"\n'
        '[windows]\nkind = "consecutive"\njobs = 5\ncount = 1\n'
    )
    suite.write_text(text)
    (ref,) = load_suite(suite).traces
    assert ref.pinned and ref.sha256 == kth.sha256
    assert ref.file == tmp_path / "cache" / kth.file
    suite.write_text(text.replace(f"pwa:{kth.name}", "pwa:nope"))
    with pytest.raises(InputError, match=r"s\.toml:6: .*unknown trace"):
        load_suite(suite)


def test_fetch_from_a_url_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mirror URL (a local HTTP server here: no network) serves the file
    under its name; pooch downloads it and checks its sha256."""
    import functools
    import http.server
    import threading

    source = trace_path("lublin_256.swf")
    monkeypatch.setenv("OPTSCHED_DATA_DIR", str(tmp_path / "cache"))
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(source.parent)
    )
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        server.daemon_threads = True  # a kept-alive connection must not hold the exit
        server.block_on_close = False
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            path = archive.fetch("lublin_256", url)
        finally:
            server.shutdown()
    assert path.read_bytes() == source.read_bytes()
