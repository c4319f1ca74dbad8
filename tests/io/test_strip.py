"""Strip-packing benchmark files read as scheduling instances."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import paths
from support.refusals import located_refusal

from optsched.check import check_schedule
from optsched.instance import Job
from optsched.io import detect_format, read
from optsched.io.strip import read_strip
from optsched.metrics import makespan
from optsched.schedule import Placement, Schedule

DATA = paths.DATA / "strip"

# The packing the 20 x 20 file was cut from: item -> (x, y); x is the first
# processor, y the start time.
HT_PACKING = {
    1: (0, 0), 2: (7, 0), 3: (7, 3), 4: (12, 0), 5: (12, 4), 6: (15, 4),
    7: (0, 8), 8: (0, 13), 9: (4, 8), 10: (4, 10), 11: (4, 14), 12: (10, 14),
    13: (13, 8), 14: (13, 10), 15: (15, 10), 16: (15, 15),
}  # fmt: skip
HT_ITEMS = [
    (7, 8), (5, 3), (5, 5), (8, 4), (3, 4), (5, 4), (4, 5), (4, 7),
    (9, 2), (9, 4), (6, 6), (3, 6), (7, 2), (2, 10), (5, 5), (5, 5),
]  # fmt: skip
SMALL_ITEMS = [(6, 4), (4, 4), (5, 3), (5, 3), (10, 2)]


def test_layout_b_hopper_turton_style_file() -> None:
    trace = read_strip(DATA / "ht_style_20x20.txt")
    instance = trace.instance
    assert instance.processors == 20
    assert instance.machine.allocation == "contiguous"
    assert instance.jobs == tuple(
        Job(i, 0, w, h) for i, (w, h) in enumerate(HT_ITEMS, start=1)
    )
    assert trace.header == {"layout": "b", "width": "20", "items": "16", "height": "20"}
    assert trace.records == 16
    assert instance.name == "ht_style_20x20"
    assert instance.source.format == "strip"
    assert instance.source.file == str(DATA / "ht_style_20x20.txt")


def test_the_known_packing_is_a_valid_optimal_schedule() -> None:
    instance = read_strip(DATA / "ht_style_20x20.txt").instance
    sizes = {job.id: (job.size, job.runtime) for job in instance.jobs}
    schedule = Schedule(
        {
            job_id: Placement.contiguous(y, y + sizes[job_id][1], x, sizes[job_id][0])
            for job_id, (x, y) in HT_PACKING.items()
        },
        "hand packing",
    )
    assert check_schedule(instance, schedule) == []
    area = sum(job.area for job in instance.jobs)
    assert area == 400
    # Makespan equals the area bound W*H / W: the packing is optimal.
    assert makespan(instance, schedule) == 20 == area // instance.processors


def test_layout_a_file() -> None:
    trace = read_strip(DATA / "layout_a_10x9.txt")
    assert trace.instance.processors == 10
    assert trace.instance.jobs == tuple(
        Job(i, 0, w, h) for i, (w, h) in enumerate(SMALL_ITEMS, start=1)
    )
    assert trace.header == {"layout": "a", "width": "10", "items": "5"}


def test_layout_b_with_ids() -> None:
    trace = read_strip(DATA / "ids_10x9.txt")
    assert trace.instance.jobs == tuple(
        Job(i, 0, w, h) for i, (w, h) in zip(range(101, 106), SMALL_ITEMS, strict=True)
    )
    assert trace.header["height"] == "9"


def test_allocation_any() -> None:
    instance = read_strip(DATA / "layout_a_10x9.txt", allocation="any").instance
    assert instance.machine.allocation == "any"


def test_detected_from_content_whatever_the_extension(tmp_path: Path) -> None:
    for name in ("ht_style_20x20.txt", "layout_a_10x9.txt", "ids_10x9.txt"):
        assert detect_format(DATA / name) == "strip"
    copy = tmp_path / "instance.dat"
    copy.write_bytes((DATA / "layout_a_10x9.txt").read_bytes())
    assert read(copy).jobs == read_strip(DATA / "layout_a_10x9.txt").instance.jobs


def test_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "ht.txt.gz"
    path.write_bytes(gzip.compress((DATA / "ht_style_20x20.txt").read_bytes()))
    assert (
        read_strip(path).instance.jobs
        == read_strip(DATA / "ht_style_20x20.txt").instance.jobs
    )


def test_blank_lines_and_trailing_spaces(tmp_path: Path) -> None:
    path = tmp_path / "spaced.txt"
    path.write_text("\n10  \n\n2\n 3 4 \n\n 5 6\n\n")
    assert read_strip(path).instance.jobs == (Job(1, 0, 3, 4), Job(2, 0, 5, 6))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 50).flatmap(
        lambda width: st.tuples(
            st.just(width),
            st.lists(st.tuples(st.integers(1, width), st.integers(0, 10**6))),
        )
    ),
    st.sampled_from(["a", "b", "b-ids"]),
)
def test_items_read_back_in_every_layout(
    tmp_path_factory: pytest.TempPathFactory,
    problem: tuple[int, list[tuple[int, int]]],
    layout: str,
) -> None:
    width, items = problem
    if layout == "a":
        lines = [str(width), str(len(items))] + [f"{w} {h}" for w, h in items]
    else:
        lines = [str(len(items)), f"{width} 999"]
        lines += [
            f"{i + 1} {w} {h}" if layout == "b-ids" else f"{w} {h}"
            for i, (w, h) in enumerate(items)
        ]
    path = tmp_path_factory.mktemp("strip") / "items.txt"
    path.write_text("\n".join(lines) + "\n")
    instance = read_strip(path).instance
    assert instance.processors == width
    assert [(j.size, j.runtime, j.release) for j in instance.jobs] == [
        (w, h, 0) for w, h in items
    ]
    assert [j.id for j in instance.jobs] == list(range(1, len(items) + 1))


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def _error(tmp_path: Path, text: str | bytes) -> str:
    return located_refusal(read_strip, tmp_path / "bad.txt", text)


def test_fewer_items_than_announced_names_the_count_line(tmp_path: Path) -> None:
    items = "".join(f"{i} 1\n" for i in range(1, 10))
    assert _error(tmp_path, f"20\n10\n{items}") == (
        ":2: header announces 10 items, found 9"
    )
    assert _error(tmp_path, f"10\n20 5\n{items}") == (
        ":1: header announces 10 items, found 9"
    )


def test_more_items_than_announced_names_the_first_extra(tmp_path: Path) -> None:
    assert _error(tmp_path, "2\n5 5\n1 1\n1 1\n\n1 1\n") == (
        ":6: item 3 is more than the 2 items announced on line 1"
    )


def test_n_before_w_gets_a_hint(tmp_path: Path) -> None:
    assert _error(tmp_path, "2\n10\n3 4\n5 6\n") == (
        ":2: header announces 10 items, found 2 (the first line equals the item "
        "count: is n given before W?)"
    )


def test_item_wider_than_the_strip(tmp_path: Path) -> None:
    assert _error(tmp_path, "3\n20 20\n2 12\n25 3\n1 1\n") == (
        ":4: item 2: width 25 exceeds strip width 20"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10\n2\n3 4\n5 x\n",
         ":4: item 2 height: expected a non-negative integer, got 'x'"),
        ("10\n2\n3 4\n0 1\n",
         ":4: item 2 width: expected a positive integer, got '0'"),
        ("10\n2\n3 4\n2.5 1\n",
         ":4: item 2 width: expected a positive integer, got '2.5'"),
        ("10\n1\n3 -4\n",
         ":3: item 1 height: expected a non-negative integer, got '-4'"),
        ("0\n1\n3 4\n",
         ":1: strip width W: expected a positive integer, got '0'"),
        ("10\n-1\n",
         ":2: number of items n: expected a non-negative integer, got '-1'"),
        ("10\n2\n3 4 5\n1 1\n", ":3: item 1: expected 'w h', got 3 fields"),
        ("2\n10 9\n1 3 4\n5 6\n", ":4: item 2: expected 'id w h', got 2 fields"),
        ("2\n10 9\n1 3 4 1\n5 6\n",
         ":3: item 1: expected 'w h' or 'id w h', got 4 fields"),
        ("10 2\n3 4\n",
         ":1: expected one number on the first line (W or n), got 2 fields"),
        ("10\n", ":1: expected a second header line (n, or W H)"),
        ("2\n1 2 3\n", ":2: expected n (layout 'W, n, w h') or 'W H' (layout "
                       "'n, W H, [id] w h') on the second line, got 3 fields"),
        ("2\n10 9\n7 3 4\n7 5 6\n",
         ":4: item 2: id 7 appears twice (first at line 3)"),
        ("", ": empty file: expected a strip-packing instance"),
        (b"10\n1\n\x00\x01", ": binary file: expected a strip-packing text file"),
        (b"10\n1\n\xff 3\n", ":3: not UTF-8 text (byte 0xff): expected numbers"),
    ],
)  # fmt: skip
def test_malformed_files(tmp_path: Path, text: str | bytes, expected: str) -> None:
    assert _error(tmp_path, text) == expected
