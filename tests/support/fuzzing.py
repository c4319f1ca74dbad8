"""Settings and input mutations shared by the fuzz tests (issue 17).

A regular run draws :data:`REGULAR_EXAMPLES` inputs per fuzz test, a few
hundred over the whole suite; ``pytest --fuzz`` (or ``OPTSCHED_FUZZ=1``)
draws :data:`CAMPAIGN_EXAMPLES`, the count of the campaign recorded in
benchmarks/README.md. Each fuzz test asserts one contract: a bad input gives
exit status 2 with one line ``file[:line]: reason`` and leaves no output, or
the input is valid and the result is correct.

The reader fuzz tests mutate :data:`SEEDS` (small real instance files) with
:func:`mutants`; the command fuzz tests give the same mutants to the commands
that write files.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable, Sequence

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from support.paths import DATA, INSTANCES

CAMPAIGN = os.environ.get("OPTSCHED_FUZZ") == "1"
REGULAR_EXAMPLES = 40
CAMPAIGN_EXAMPLES = 2000


def fuzz_settings(regular: int = REGULAR_EXAMPLES) -> settings:
    """Hypothesis settings of one fuzz test: ``regular`` examples, or a campaign's."""
    return settings(
        max_examples=CAMPAIGN_EXAMPLES if CAMPAIGN else regular,
        deadline=None,
        derandomize=not CAMPAIGN,  # the regular run is reproducible
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?")
"""A number of a text file, the target of the ``number`` mutation."""

MUTATIONS = ("cut", "flip", "insert", "number", "cut out", "repeat", "deep",
             "bom", "utf16", "latin1")  # fmt: skip
"""Kinds of mutation: truncation, a bit flip, a token inserted, a number
replaced by a token, a cut-out, a repeat, deep JSON nesting, a byte order
mark, UTF-16, Latin-1 ``é`` for ``e``."""

Mutation = Callable[[bytes], bytes]


@st.composite
def mutation(draw: st.DrawFn, tokens: Sequence[bytes]) -> Mutation:
    """One mutation of a file's bytes, its tokens drawn from ``tokens``."""
    kind = draw(st.sampled_from(MUTATIONS))
    where = draw(st.floats(0, 1))
    other = draw(st.floats(0, 1))
    token = draw(st.sampled_from(tokens))
    bit = draw(st.integers(0, 7))
    depth = draw(st.sampled_from([2, 70, 600, 3000]))

    def apply(data: bytes) -> bytes:
        i = int(where * len(data))
        j = min(len(data), i + 1 + int(other * 64))
        if kind == "cut":
            return data[:i]
        if kind == "flip" and data:
            i = min(i, len(data) - 1)
            return data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1 :]
        if kind == "number":
            numbers = list(NUMBER.finditer(data))
            if numbers:
                match = numbers[int(where * len(numbers)) % len(numbers)]
                return data[: match.start()] + token + data[match.end() :]
        if kind == "cut out":
            return data[:i] + data[j:]
        if kind == "repeat":
            return data[:j] + data[i:j] + data[j:]
        if kind == "deep":
            nest = b"[" * depth + b"]" * depth if bit % 2 else b'{"a":' * depth
            tail = b"" if bit % 2 else b"1" + b"}" * depth
            return data[:i] + nest + tail + data[i:]
        if kind == "bom":
            return b"\xef\xbb\xbf" + data
        if kind == "utf16":
            return data.decode("latin-1").encode("utf-16")
        if kind == "latin1":
            return data.replace(b"e", b"\xe9")
        return data[:i] + token + data[i:]

    return apply


@st.composite
def mutated(draw: st.DrawFn, seeds: Sequence[bytes], tokens: Sequence[bytes]) -> bytes:
    """One of ``seeds`` with one to four mutations."""
    data = draw(st.sampled_from(seeds))
    for change in draw(st.lists(mutation(tokens), min_size=1, max_size=4)):
        data = change(data)
    return data


# -- instance files: the seeds and tokens of the reader fuzz tests ------------

SEEDS: dict[str, tuple[bytes, ...]] = {
    "json": tuple(
        p.read_bytes()
        for p in (
            INSTANCES / "kth_20.json",
            INSTANCES / "kth_20_recorded.json",
            DATA / "json" / "tiny.json",
            DATA / "json" / "contiguous.json",
            DATA / "json" / "handwritten.json",
        )
    ),
    "swf": tuple(
        p.read_bytes()
        for p in (
            DATA / "swf" / "good.swf",
            DATA / "swf" / "recorded.swf",
            DATA / "suites" / "tiny.swf",
        )
    ),
    "strip": tuple(p.read_bytes() for p in sorted((DATA / "strip").glob("*.txt"))),
}
"""Small real instance files by format: the seeds of the reader mutants."""
ALL_SEEDS = tuple(seed for seeds in SEEDS.values() for seed in seeds)
"""Every seed of :data:`SEEDS`."""

JSON_TOKENS = (b'"x"', b"[", b"]", b"{", b"}", b'"', b",", b":")
"""A JSON string and JSON's punctuation, for the mutants of every reader."""

TOKENS = (
    b"9" * 30,
    b"9" * 5000,
    str(2**63).encode(),
    str(2**53).encode(),
    str(2**53 + 1).encode(),
    str(10**15).encode(),
    b"1e12",
    b"1e400",
    b"-1e308",
    b"1e-400",
    b"NaN",
    b"Infinity",
    b"-0",
    b"-1",
    b"0",
    b"1.5",
    b"null",
    b"true",
    *JSON_TOKENS,
    b";",
    b"\n",
    b" ",
    b"\xe9",
    b"\xff",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\x1b[2J",
    b"\xf0\x9f\x98\x80",
    b'"\\ud800"',
    "\u00b2".encode(),
    "\u0661".encode(),
)
"""Tokens the reader mutants insert or put in place of a number."""


@st.composite
def mutants(draw: st.DrawFn, seeds: tuple[bytes, ...] = ALL_SEEDS) -> bytes:
    """A seed file with one to four mutations, then maybe gzip (or bad gzip)."""
    data = draw(mutated(seeds, TOKENS))
    packing = draw(st.sampled_from(["plain"] * 6 + ["gzip", "cut gzip", "bad gzip"]))
    if packing == "plain":
        return data
    packed = gzip.compress(data, mtime=0)
    where = draw(st.integers(0, len(packed) - 1))
    if packing == "cut gzip":
        return packed[:where]
    if packing == "bad gzip":
        return packed[:where] + bytes([packed[where] ^ 0x5A]) + packed[where + 1 :]
    return packed
