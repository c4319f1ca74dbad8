"""optsched.intervals: processor sets as intervals, against plain references.

Every reference below works index by index on Python sets and tuples and
shares no code with the module.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from procset import ProcInt, ProcSet

from optsched.intervals import (
    EXPAND_LIMIT,
    ProcessorLimitError,
    ProcessorSet,
    RunColumns,
    RunStore,
    count,
    disjoint,
    distinct,
    format_processors,
    from_procset,
    highest,
    is_consecutive,
    merge_runs,
    merged_runs,
    parse_processors,
    processor_set,
    runs_of,
    to_procset,
)
from optsched.schedule import Placement, PlacementColumns, Schedule

indices = st.lists(st.integers(0, 60), max_size=25)
runs = st.lists(
    st.tuples(st.integers(0, 50), st.integers(0, 12)).map(
        lambda r: (r[0], r[0] + r[1])
    ),
    max_size=8,
)


def plain_runs(values: set[int]) -> list[tuple[int, int]]:
    """Disjoint maximal runs of a set of indices, one index at a time."""
    out: list[tuple[int, int]] = []
    for p in sorted(values):
        if out and out[-1][1] == p - 1:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return out


def expanded(pairs: list[tuple[int, int]]) -> list[int]:
    return [p for first, last in pairs for p in range(first, last + 1)]


@given(indices)
def test_runs_of_a_sorted_sequence_give_it_back(values: list[int]) -> None:
    ordered = sorted(values)
    assert expanded(runs_of(ordered)) == ordered


@given(indices)
def test_merged_runs_and_counts_match_the_set(values: list[int]) -> None:
    assert merged_runs(values) == plain_runs(set(values))
    assert merged_runs(ProcessorSet.of(values)) == plain_runs(set(values))
    assert distinct(values) == len(set(values)) == count(merged_runs(values))
    if values:
        assert highest(values) == highest(ProcessorSet.of(values)) == max(values)


@given(runs)
def test_merge_runs_is_the_union(pairs: list[tuple[int, int]]) -> None:
    assert merge_runs(pairs) == plain_runs(set(expanded(pairs)))


@given(indices)
def test_consecutive_means_one_run_without_repeats(values: list[int]) -> None:
    ordered = sorted(values)
    plain = bool(ordered) and ordered == list(
        range(ordered[0], ordered[0] + len(ordered))
    )
    assert is_consecutive(values) == plain
    assert is_consecutive(ProcessorSet.of(values)) == plain


@given(indices, indices)
def test_disjoint_means_no_shared_index(first: list[int], second: list[int]) -> None:
    plain = not set(first) & set(second)
    assert disjoint(first, second) == plain
    assert disjoint(ProcessorSet.of(first), ProcessorSet.of(second)) == plain


@given(indices)
def test_text_round_trip_and_procset_notation(values: list[int]) -> None:
    text = format_processors(values)
    parsed = parse_processors(text)
    if not values:
        assert text == "" and parsed is None
        return
    assert parsed == tuple(sorted(values))  # repeats kept
    if len(set(values)) == len(values):
        assert text == str(ProcSet(*values))


def test_text_golden_values() -> None:
    assert format_processors((0, 1, 2, 5)) == "0-2 5"
    assert format_processors((0, 1, 2, 3, 2)) == "0-2 2-3"  # a repeat stays
    assert format_processors(None) == ""
    assert parse_processors(" 0-3 7 ") == (0, 1, 2, 3, 7)
    assert parse_processors("0-3000000000").runs == ((0, 3_000_000_000),)


@pytest.mark.parametrize("text", ["3-1", "+1", "1_0", "٣", "1-", "-1", "a", "1" * 21])
def test_malformed_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="bad processor range"):
        parse_processors(text)


def test_indices_beyond_the_limit_are_refused() -> None:
    with pytest.raises(ProcessorLimitError):
        parse_processors(str(2**53 + 1))
    with pytest.raises(ProcessorLimitError):
        from_procset(ProcSet(ProcInt(0, 2**53 + 1)))


@given(indices)
def test_procset_conversions(values: list[int]) -> None:
    reference = ProcSet(*values)
    assert to_procset(values) == reference
    assert from_procset(reference) == tuple(sorted(set(values)))


def test_to_procset_of_many_intervals_is_quick_and_exact() -> None:
    # Balanced unions: 5,000 intervals one at a time would take seconds.
    wide = ProcessorSet((4 * k, 4 * k + 1) for k in range(5_000))
    converted = to_procset(wide)
    assert len(list(converted.intervals())) == 5_000 and len(converted) == 10_000


@given(st.lists(st.tuples(st.integers(0, 9_000), st.integers(1, 3_000)), max_size=4))
def test_processor_set_is_a_tuple_up_to_the_limit(pairs: list[tuple[int, int]]) -> None:
    ranges = sorted((lo, lo + width) for lo, width in pairs)
    merged = merge_runs([(lo, hi - 1) for lo, hi in ranges])
    halfopen = [(first, last + 1) for first, last in merged]
    built = processor_set(halfopen)
    assert list(built) == expanded(merged)
    wanted = tuple if count(merged) <= EXPAND_LIMIT else ProcessorSet
    assert type(built) is wanted


def columns_of(sets: list[list[range]], processors: int | None = None) -> RunColumns:
    store = RunStore(len(sets), processors)
    for k in reversed(range(len(sets))):  # any order
        store.put(k, sets[k])
    return store.columns()


sets_of_ranges = st.lists(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6)), max_size=4).map(
        lambda pairs: [
            range(first, last + 1)
            for first, last in merge_runs([(a, a + w) for a, w in pairs])
        ]
    ),
    max_size=12,
)


@settings(deadline=None)  # the first example imports numpy
@given(sets_of_ranges)
def test_run_columns_hold_what_processor_set_builds(sets: list[list[range]]) -> None:
    columns = columns_of(sets)
    narrow = columns_of(sets, 64)  # 32-bit bounds
    assert narrow[:] == columns[:]
    assert narrow.flat()[0].tolist() == columns.flat()[0].tolist()
    assert len(columns) == len(sets)
    flat, lengths = columns.flat()
    assert lengths.tolist() == columns.sizes().tolist()
    assert flat.tolist() == [p for ranges in sets for r in ranges for p in r]
    for k, ranges in enumerate(sets):
        plain = processor_set([(r.start, r.stop) for r in ranges])
        assert columns[k] == plain and type(columns[k]) is type(plain)
        assert lengths[k] == sum(len(r) for r in ranges)
    assert pickle.loads(pickle.dumps(columns))[:] == columns[:]


def test_run_columns_share_int_objects_and_keep_wide_sets_as_intervals() -> None:
    columns = columns_of([[range(300, 310)], [range(305, 320)], [range(0, 10_000)]])
    assert columns[0][5] is columns[1][0]  # 305 is one object in both tuples
    assert isinstance(columns[2], ProcessorSet) and columns[2].runs == ((0, 9_999),)
    huge = columns_of([[range(0, 10**9)], [range(5, 6)]])
    assert huge[1] == (5,) and len(huge[0]) == 10**9


def plain_placements() -> dict[int, Placement]:
    return {
        9: Placement(5, 8, (0, 1, 4)),
        2: Placement(0, 3, (2,)),
        7: Placement(1, 4, (5, 6), moves=((2, (0, 1)),)),
        4: Placement(2, 2, ()),
    }


def placement_columns() -> PlacementColumns:
    plain = plain_placements()
    store = RunStore(len(plain))
    store.put(0, [range(0, 2), range(4, 5)])
    store.put(1, [range(2, 3)])
    return PlacementColumns(
        list(plain),
        [p.start for p in plain.values()],
        [p.end for p in plain.values()],
        store.columns(),
        {7: plain[7]},
    )


def test_placement_columns_behave_as_the_dictionary() -> None:
    columns, plain = placement_columns(), plain_placements()
    assert list(columns) == list(plain) and len(columns) == 4
    assert list(columns.items()) == list(plain.items())
    assert list(columns.values()) == list(plain.values())
    assert columns == plain and dict(columns) == plain
    assert columns[9] == plain[9] and columns.get(3) is None
    assert 2 in columns and 3 not in columns and "2" not in columns
    with pytest.raises(KeyError):
        columns[100]
    assert type(columns[9].processors) is tuple
    runs = columns.as_intervals()  # what the checker reads: never expanded
    assert dict(runs) == plain and isinstance(runs[9].processors, ProcessorSet)
    assert runs[7] == plain[7] and type(columns[9].processors) is tuple
    schedule = Schedule(columns, "easy", killed=frozenset({2}))
    assert schedule == Schedule(plain, "easy", killed=frozenset({2}))
    assert schedule.placements is columns  # kept as given, not copied
    again = pickle.loads(pickle.dumps(schedule))
    assert again == schedule and isinstance(again.placements, PlacementColumns)
    assert hash(again) == hash(Schedule(plain, "easy"))


def test_placement_columns_refuse_repeats_and_ragged_columns() -> None:
    store = RunStore(2)
    with pytest.raises(ValueError, match="repeated"):
        PlacementColumns([1, 1], [0, 0], [1, 1], store.columns())
    with pytest.raises(ValueError, match="length"):
        PlacementColumns([1, 2], [0], [1, 1], store.columns())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 6)), max_size=6
    ),
    st.integers(0, 3),
    st.sampled_from(["any", "contiguous"]),
)
def test_the_checker_judges_columns_as_the_dictionary(
    rows: list[tuple[int, int, int]], shift: int, allocation: str
) -> None:
    # Random schedules, valid or not: the column-wise fast path and the
    # rule-by-rule checks of the same placements give the same verdict.
    from optsched.check import check_schedule
    from optsched.instance import Instance, Job, Machine

    jobs = tuple(Job(k + 1, 0, 2, 1 + k % 2) for k in range(len(rows)))
    instance = Instance(Machine(6, allocation), jobs)  # type: ignore[arg-type]
    store = RunStore(len(rows))
    plain = {}
    for k, (start, width, first) in enumerate(rows):
        # Two runs for the second job: not consecutive on a line.
        gap = [range(first + width + 1, first + width + 2)] if k == 1 else []
        ranges = [range(first, first + width), *gap] if width else []
        store.put(k, ranges)
        plain[k + 1] = Placement(
            start,
            start + 2 + (shift if k == 0 else 0),
            tuple(p for r in ranges for p in r),
        )
    columns = PlacementColumns(
        list(plain),
        [p.start for p in plain.values()],
        [p.end for p in plain.values()],
        store.columns(),
    )
    by_columns = check_schedule(instance, Schedule(columns))
    by_dict = check_schedule(instance, Schedule(plain))
    assert [str(v) for v in by_columns] == [str(v) for v in by_dict]
