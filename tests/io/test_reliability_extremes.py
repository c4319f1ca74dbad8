"""Issue 32, readers at the extremes: gzip bombs, caps, values near 2**53.

* A small gzip file that expands to gigabytes of newlines used to take every
  command to 11 GB of memory; it is now inflated chunk by chunk and refused
  at the line cap, with one line.
* The SWF fast path (numpy) read odd integers in [2**52, 2**53) one too high:
  ``x + 0.5`` is not a float there and rounded to the even neighbour.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from support.paths import INSTANCES
from support.refusals import refusal

from optsched.errors import REASON_LIMIT, InputError
from optsched.instance import BusyBlock, Instance, Job, Machine, Mode
from optsched.io import read_trace, text
from optsched.io.limits import horizon
from optsched.io.swf import _parse_fast, _parse_token, read_swf

HEADER = b"; MaxProcs: 4\n"


def _job(number: int, submit: int, runtime: int) -> bytes:
    fields = [number, submit, 0, runtime, 1, -1, -1, 1, runtime, -1, 1, 1, 1, 1, 1, 1]
    return " ".join(map(str, [*fields, -1, -1])).encode() + b"\n"


def test_a_gzip_bomb_of_newlines_is_refused_within_a_small_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bomb.swf.gz"
    block = b"\n" * (1 << 22)
    with gzip.open(path, "wb") as stream:
        stream.write(HEADER + _job(1, 0, 5))
        for _ in range(5):  # 20 Mi lines, over the 16 Mi line cap
            stream.write(block)
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as refused:
            read_trace(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(refused.value) == (
        f"{path}: too many lines: over 16777216 (the cap optsched reads)"
    )
    # Refused after 16 MiB of content, not after 20 MiB (let alone gigabytes).
    assert peak < 64 << 20, f"{peak:,} bytes"


def test_the_size_cap_holds_for_plain_and_gzip_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(text, "MAX_CONTENT_BYTES", 1000)
    content = HEADER + b"".join(_job(i, i, 5) for i in range(1, 40))
    assert len(content) > 1000
    plain, packed = tmp_path / "a.swf", tmp_path / "b.swf.gz"
    plain.write_bytes(content)
    packed.write_bytes(gzip.compress(content))
    assert packed.stat().st_size < 1000
    for path in (plain, packed):
        assert refusal(read_trace, path) == (
            f"{path}: too large: over 0 MiB of content (the cap optsched reads; "
            "cut the file into windows first)"
        )


def test_a_multi_member_gzip_reads_whole(tmp_path: Path) -> None:
    path = tmp_path / "two.swf.gz"
    path.write_bytes(
        gzip.compress(HEADER + _job(1, 0, 5)) + gzip.compress(_job(2, 3, 7))
    )
    jobs = read_trace(path).instance.jobs
    assert [(j.id, j.release, j.runtime) for j in jobs] == [(1, 0, 5), (2, 3, 7)]


@pytest.mark.parametrize(
    "value", [2**53 - 1, 2**52 + 1, 2**52 + 3, 2**52, 2**53 - 2, 4503599627370497]
)
def test_the_fast_path_keeps_whole_values_near_2_53(value: int) -> None:
    line = _job(1, value, 0).decode().strip()
    table = _parse_fast([line])
    assert table is not None
    assert int(table[0, 1]) == value  # field 2, submit time: a rounded field
    assert _parse_token(Path("t.swf"), 1, 1, f"{value}.0") == value
    assert _parse_token(Path("t.swf"), 1, 1, str(value)) == value


def test_the_fast_path_still_rounds_halves_up() -> None:
    table = _parse_fast(["1 2.5 0 3.5 1 -1 -1 1 3 -1 1 1 1 1 1 1 -1 -1"])
    assert table is not None
    assert np.array_equal(table[0, [1, 3]], [3.0, 4.0])


def test_an_swf_release_of_2_53_minus_1_reads_exactly(tmp_path: Path) -> None:
    path = tmp_path / "odd.swf"
    path.write_bytes(HEADER + _job(1, 2**53 - 1, 0) + _job(2, 0, 1))
    jobs = {j.id: j for j in read_trace(path).instance.jobs}
    assert jobs[1].release == 2**53 - 1


# ---------------------------------------------------------------------------
# The horizon: latest release or block end plus the total run time <= 2**53


def test_the_horizon_limit_is_exact_for_swf(tmp_path: Path) -> None:
    # Horizon 2**52 + (2**52 - 7) + 7 = 2**53: the limit itself is valid.
    at_limit = tmp_path / "a.swf"
    at_limit.write_bytes(HEADER + _job(1, 2**52, 2**52 - 7) + _job(2, 0, 7))
    assert horizon(read_trace(at_limit).instance) == 2**53
    over = tmp_path / "b.swf"
    over.write_bytes(HEADER + _job(1, 2**52, 2**52 - 7) + _job(2, 0, 8))
    assert refusal(read_swf, over) == (  # read_swf: the CLI's path for SWF
        f"{over}: jobs: the latest release or busy-block/outage end plus the jobs' "
        f"total run time is {2**53 + 1} s, above the limit 2**53 = {2**53} s: "
        "schedules of this instance would end beyond exact times"
    )


def test_the_horizon_counts_estimates_modes_blocks_and_outage_restarts() -> None:
    jobs = (
        Job(1, 10, 2, 100, estimate=300),
        Job(2, 50, 2, 40, modes=(Mode(1, 80), Mode(2, 40))),
    )
    blocks = (BusyBlock(0, 500, 1),)
    outages = (BusyBlock(900, 1000, 1), BusyBlock(2000, 2100, 1))
    # Latest end 2100; each job's longest time: 300 and 80; three runs each.
    machine = Machine(2, unavailable=blocks, outages=outages)
    assert horizon(Instance(machine, jobs)) == 2100 + 3 * (300 + 80)
    assert horizon(Instance(Machine(2), jobs)) == 50 + 380


def test_an_outage_to_2_53_is_refused_in_a_native_file(tmp_path: Path) -> None:
    data = json.loads((INSTANCES / "kth_20.json").read_text())
    data["machine"]["outages"] = [{"start": 1000, "end": 2**53 - 5, "size": 100}]
    path = tmp_path / "outage.json"
    path.write_text(json.dumps(data))
    message = refusal(read_trace, path)
    assert "above the limit 2**53" in message
    assert message.startswith(f"{path}: jobs: ")


def test_an_unshortened_quotation_is_cut_in_the_middle() -> None:
    reason = "unknown table [" + "9" * 5000 + "] (expected: a, b)"
    message = str(InputError(reason, "s.toml", 3))
    assert len(message) <= len("s.toml:3: ") + REASON_LIMIT
    assert message.startswith("s.toml:3: unknown table [999")
    assert message.endswith("999] (expected: a, b)")
    assert " ... " in message
    assert str(InputError("short", "s.toml")) == "s.toml: short"
