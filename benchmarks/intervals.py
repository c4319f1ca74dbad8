"""Processor intervals: optsched.intervals against procset (issue 31).

Usage::

    .venv/bin/python benchmarks/intervals.py [--repeat 5]

For each operation the project asks of a processor set (parse the text
form, write it, merge intervals, find the distinct runs of a tuple, test
contiguity and disjointness), times :mod:`optsched.intervals` and the
equivalent :mod:`procset` calls on two inputs: a simulator-like set (106
processors in 3 runs, what a job of the benchmark's saturated Atlas trace
holds on average) and a wide one (1,000 intervals, a fragmented machine;
procset merges intervals one at a time, so 5,000 take minutes).
Each cell is the best of ``--repeat`` timings (``timeit``, enough calls to
last about 0.2 s), in microseconds per call, so the figures are the
one-core cost. Both sides start from the representation each keeps (a
tuple or :class:`~optsched.intervals.ProcessorSet` for us, a
:class:`procset.ProcSet` for procset); conversions are timed separately.
Prints one Markdown table; ``ratio`` is procset's time over ours.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable

from procset import ProcInt, ProcSet

from optsched.intervals import (
    ProcessorSet,
    disjoint,
    format_processors,
    is_consecutive,
    merge_runs,
    merged_runs,
    parse_processors,
    to_procset,
)


def _inputs() -> dict[str, dict[str, object]]:
    # A job of 106 processors in 3 runs, and a fragmented machine: 1,000
    # intervals of 2 processors each, 2 apart.
    small_runs = [(100, 149), (300, 329), (700, 725)]
    wide_runs = [(4 * k, 4 * k + 1) for k in range(1_000)]
    out: dict[str, dict[str, object]] = {}
    for name, runs in (("106 ids, 3 runs", small_runs), ("1,000 runs", wide_runs)):
        ids = tuple(p for first, last in runs for p in range(first, last + 1))
        other = tuple(p + 2 for p in ids)  # disjoint from ids
        out[name] = {
            "runs": runs,
            "ids": ids,
            "other": other,
            "ours": ProcessorSet(runs),
            "ours_other": ProcessorSet.of(other),
            "procset": to_procset(ProcessorSet(runs)),
            "procset_other": to_procset(ProcessorSet.of(other)),
            "text": format_processors(ProcessorSet(runs)),
            "shuffled": list(reversed(runs)),
        }
    return out


def _cases(
    x: dict[str, object],
) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """``(operation, ours, procset's)`` for one input."""
    runs = x["runs"]
    shuffled = x["shuffled"]
    ids = x["ids"]
    text = x["text"]
    ours, procset = x["ours"], x["procset"]
    assert isinstance(text, str) and isinstance(procset, ProcSet)
    assert isinstance(ours, ProcessorSet) and isinstance(ids, tuple)
    assert isinstance(runs, list) and isinstance(shuffled, list)
    ours_other, procset_other = x["ours_other"], x["procset_other"]
    assert isinstance(ours_other, ProcessorSet) and isinstance(procset_other, ProcSet)
    return [
        (
            "parse the text",
            lambda: parse_processors(text),
            lambda: ProcSet.from_str(text),
        ),
        ("write the text", lambda: format_processors(ours), lambda: str(procset)),
        (
            "write the text (per interval, ProcInt)",
            lambda: format_processors(ours),
            lambda: " ".join(format(ProcInt(a, b), "-") for a, b in ours.runs),
        ),
        (
            "merge unsorted intervals",
            lambda: merge_runs(shuffled),
            lambda: ProcSet(*(ProcInt(a, b) for a, b in shuffled)),
        ),
        ("runs of a sorted tuple", lambda: merged_runs(ids), lambda: ProcSet(*ids)),
        (
            "contiguity of a set",
            lambda: is_consecutive(ours),
            lambda: procset.iscontiguous(),
        ),
        (
            "contiguity of a set, procset's after conversion",
            lambda: is_consecutive(ours),
            lambda: to_procset(ours).iscontiguous(),
        ),
        (
            "disjointness of two sets",
            lambda: disjoint(ours, ours_other),
            lambda: procset.isdisjoint(procset_other),
        ),
    ]


def _best(call: Callable[[], object], repeat: int) -> float:
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| operation | input | ours µs | procset µs | ratio (procset / ours) |")
    print("|---|---|---:|---:|---:|")
    for name, x in _inputs().items():
        for operation, ours, theirs in _cases(x):
            mine = _best(ours, args.repeat)
            once = _once(theirs)
            # procset's quadratic merges take seconds on the wide input:
            # timed once there.
            other = once if once > 0.5e6 else _best(theirs, args.repeat)
            note = " (one call)" if once > 0.5e6 else ""
            print(
                f"| {operation} | {name} | {mine:,.2f} | {other:,.2f}{note} | "
                f"{other / mine:,.2f} |",
                flush=True,
            )


def _once(call: Callable[[], object]) -> float:
    start = timeit.default_timer()
    call()
    return (timeit.default_timer() - start) * 1e6


if __name__ == "__main__":
    main()
