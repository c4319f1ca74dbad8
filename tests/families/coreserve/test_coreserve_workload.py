"""Workloads of Meltzer's grid study: cluster slices, job merging, the R1-R3
request generators, the §6.8 variants and the price scenarios."""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import trace_path

from optsched.coreserve.request import Request
from optsched.coreserve.requests_gen import (
    describe_requests,
    generate_requests,
    request_from_template,
    section68_requests,
    shift_requests,
)
from optsched.coreserve.tariff import Tariff
from optsched.coreserve.workload import (
    STUDY_MONDAY_OFFSET,
    T_STOP,
    WEEK,
    ClusterWorkload,
    cluster_slices,
    default_merge_below,
    default_offsets,
    merge_jobs,
    monday_offset,
    price_scenario,
    rotate_tariff,
    shift_workload,
    wallclock_accuracy,
)
from optsched.instance import Instance, Job, Machine, Source
from optsched.io.swf import read_swf

KTH = "KTH-SP2-1996-2.1-cln.swf"
H = 3600
DAY = 86400


def _job(id: int, release: int, size: int, runtime: int, estimate: int) -> Job:
    return Job(id, release, size, runtime, estimate)


# --------------------------------------------------------------------------
# Merging


def test_default_merge_below_scales_from_blue_horizon() -> None:
    # round(cap * 128 / 1152), halves up.
    assert default_merge_below(1152) == 128
    assert default_merge_below(1160) == 129  # 128.89
    assert default_merge_below(100) == 11  # 11.11
    assert default_merge_below(9) == 1  # exactly 1.0
    assert default_merge_below(36) == 4  # 4.0
    assert default_merge_below(63) == 7  # exactly 7.0
    assert default_merge_below(45) == 5  # 5.0


def test_merge_golden() -> None:
    jobs = [
        _job(1, 0, 2, 100, 600),
        _job(2, 1000, 3, 300, 600),  # same wc, 1000 s after job 1: merged
        _job(3, 3600, 1, 50, 600),  # 3600 s after job 1: merged (<= 1 h)
        _job(4, 3601, 2, 70, 600),  # 3601 s after job 1: new group
        _job(5, 500, 4, 80, 900),  # other wc: own group
        _job(6, 600, 10, 90, 600),  # too large (>= below 5): never merged
        _job(7, 3700, 1, 20, 600),  # joins job 4's group
    ]
    merged, added = merge_jobs(jobs, below=5, max_size=100)
    assert [(j.id, j.release, j.size, j.runtime, j.estimate) for j in merged] == [
        (1, 0, 6, 300, 600),
        (5, 500, 4, 80, 900),
        (6, 600, 10, 90, 600),
        (4, 3601, 3, 70, 600),
    ]
    # Job 1's group: 6 * 300 - (200 + 900 + 50); job 4's: 3 * 70 - (140 + 20).
    assert added == 1800 - 1150 + 210 - 160
    assert merged[0].wait is None


def test_merge_respects_max_size() -> None:
    jobs = [_job(k, 10 * k, 3, 100, 600) for k in range(5)]
    merged, _ = merge_jobs(jobs, below=4, max_size=7)
    assert [(j.id, j.size) for j in merged] == [(0, 6), (2, 6), (4, 3)]
    unmerged, added = merge_jobs(jobs, below=0, max_size=7)
    assert [j.id for j in unmerged] == [0, 1, 2, 3, 4] and added == 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 20_000),
            st.integers(1, 12),
            st.integers(0, 5000),
            st.sampled_from([600, 1800, 3600]),
        ),
        max_size=30,
    ),
    st.integers(0, 13),
)
def test_merge_properties(rows: list[tuple[int, int, int, int]], below: int) -> None:
    jobs = [_job(k, *row) for k, row in enumerate(rows)]
    merged, added = merge_jobs(jobs, below=below, max_size=16)
    # CPUs are summed, never lost; work only grows; ids stay unique.
    assert sum(j.size for j in merged) == sum(j.size for j in jobs)
    assert added == sum(j.size * j.runtime for j in merged) - sum(
        j.size * j.runtime for j in jobs
    )
    assert added >= 0
    assert len({j.id for j in merged}) == len(merged) <= len(jobs)
    by_id = {j.id: j for j in jobs}
    for j in merged:
        first = by_id[j.id]
        assert (j.release, j.estimate) == (first.release, first.estimate)
        assert j.size <= max(16, first.size) and j.runtime >= first.runtime
        if j.size != first.size:
            assert j.size <= 16
    assert merged == sorted(merged, key=lambda j: (j.release, j.id))


def test_wallclock_accuracy() -> None:
    jobs = [_job(1, 0, 1, 50, 100), _job(2, 0, 1, 300, 200), _job(3, 0, 1, 0, 0)]
    assert wallclock_accuracy(jobs) == pytest.approx((0.5 + 1.5) / 2)
    assert wallclock_accuracy([_job(3, 0, 1, 0, 0)]) == 1.0


# --------------------------------------------------------------------------
# Slices


def _trace() -> Instance:
    w = 2 * WEEK
    rows = [
        (1, 100, 2, 10, 20),
        (2, 100 + w - 1, 8, 10, 20),  # last second of slice 0
        (3, 100 + w, 1, 10, 20),  # first second of slice 1
        (4, 100 + w + 5, 9, 10, 20),  # larger than cap 8: dropped
        (5, 100 + 2 * w + 7, 1, 30, 10),  # overran its estimate: kept as is
    ]
    jobs = tuple(_job(*row) for row in rows)
    return Instance(
        Machine(10), jobs, name="toy", source=Source("toy.swf", "ab" * 32, "swf")
    )


def test_slices_disjoint_shifted_and_capped() -> None:
    trace = _trace()
    assert default_offsets(trace, 3) == [100, 100 + 2 * WEEK, 100 + 4 * WEEK]
    assert default_offsets(trace, 2, gap=50) == [100, 100 + 2 * WEEK + 50]
    slices = cluster_slices(trace, 3, cap=8, merge=False)
    assert [c.name for c in slices] == ["BM0", "BM1", "BM2"]
    assert [[(j.id, j.release) for j in c.jobs] for c in slices] == [
        [(1, 0), (2, 2 * WEEK - 1)],
        [(3, 0)],
        [(5, 7)],
    ]
    assert [c.dropped_too_large for c in slices] == [0, 1, 0]
    assert [c.submitted for c in slices] == [2, 2, 1]
    assert slices[2].jobs[0].runtime == 30 and slices[2].jobs[0].estimate == 10
    bm1 = slices[1]
    assert bm1.processors == 8 and bm1.merge_below == 0
    assert (
        bm1.instance.name == f"toy_BM1_t{100 + 2 * WEEK}-{100 + 4 * WEEK}_cap8_merge0"
    )
    source = bm1.instance.source
    assert (source.file, source.sha256) == ("toy.swf", "ab" * 32)
    assert source.window is not None and source.window.shift == 100 + 2 * WEEK
    assert bm1.summary()["offset"] == 100 + 2 * WEEK


def test_slices_default_cap_and_merge() -> None:
    slices = cluster_slices(_trace(), 1)
    assert slices[0].processors == 10
    assert slices[0].merge_below == default_merge_below(10) == 1  # 1.11
    explicit = cluster_slices(_trace(), 2, offsets=[100 + 2 * WEEK, 0], cap=9)
    assert [c.offset for c in explicit] == [100 + 2 * WEEK, 0]
    assert [c.dropped_too_large for c in explicit] == [0, 0]


def test_slices_refuse_overlap_and_bad_counts() -> None:
    with pytest.raises(ValueError, match="overlap"):
        cluster_slices(_trace(), 2, offsets=[0, WEEK])
    with pytest.raises(ValueError, match="offsets for"):
        cluster_slices(_trace(), 3, offsets=[0])
    with pytest.raises(ValueError, match="count"):
        cluster_slices(_trace(), 0)


def test_shift_workload() -> None:
    bm = cluster_slices(_trace(), 1, merge=False)[0]
    moved = shift_workload(bm, STUDY_MONDAY_OFFSET)
    assert isinstance(moved, ClusterWorkload)
    assert [j.release for j in moved.jobs] == [
        j.release + STUDY_MONDAY_OFFSET for j in bm.jobs
    ]


# --------------------------------------------------------------------------
# Requests


def test_request_formulas_golden() -> None:
    job = _job(9, 0, 40, 1000, 7200)
    r1 = request_from_template(job, "R1", 0.25, 0.5, cap=100, t_stop=T_STOP, id=3)
    # res: round(28 + 0.6 * 0.25 * 40) = round(34.0) = 34; f_start = 604800;
    # span min(86400, 43200); submit 604800 - 21600.
    assert r1 == Request(583_200, 604_800, 604_800 + 7200 + 43_200, 7200, (40, 34), 3)
    r2 = request_from_template(job, "R2", 0.25, 0.5, cap=100)
    assert (r2.submit, r2.deadline) == (604_800 - 3600, 604_800 + 7200 + 43_200)
    r3 = request_from_template(job, "R3", 0.25, 0.5, cap=100)
    assert (r3.submit, r3.deadline) == (604_800 - 3600, 604_800 + 7200 + 21_600)
    # Long wallclock: span capped at one day; submit clipped at 0.
    long = _job(1, 0, 10, 5, 20_000)
    r = request_from_template(long, "R1", 0.0, 0.01, cap=100)
    assert (r.submit, r.earliest_start, r.deadline) == (
        0,
        12_096,
        12_096 + 20_000 + DAY,
    )
    assert r.parts == (10, 7)  # round(7.0)
    # Odd wallclock: f_start - wc/2 rounded down; res capped; half rounds up.
    odd = _job(2, 0, 95, 5, 601)
    r = request_from_template(odd, "R2", 0.5, 0.1, cap=100)
    assert r.submit == 120_960 - 301 and r.parts == (95, 95)  # 66.5 + 28.5
    r = request_from_template(odd, "R2", 1.0 - 1e-12, 0.1, cap=100)
    assert r.parts == (95, 100)  # round(123.5) capped
    half = _job(3, 0, 5, 5, 600)
    assert request_from_template(half, "R1", 0.5, 0, cap=9).parts == (5, 5)  # 5.0
    assert request_from_template(
        _job(4, 0, 25, 5, 600), "R1", 0.0, 0, cap=99
    ).parts == (
        25,
        18,  # round(17.5) = 18, half up
    )
    # No estimate: the run time is the wallclock.
    assert (
        request_from_template(_job(5, 0, 1, 900, 0), "R1", 0, 0, cap=9).duration == 900
    )


def test_request_formula_errors() -> None:
    with pytest.raises(ValueError, match="exceed the cap"):
        request_from_template(_job(1, 0, 10, 5, 60), "R1", 0, 0, cap=8)
    with pytest.raises(ValueError, match="unknown request workload"):
        request_from_template(_job(1, 0, 1, 5, 60), "R4", 0, 0, cap=8)
    with pytest.raises(ValueError, match="draws"):
        generate_requests([], seed=0, cap=8, draws=3)


def _templates() -> list[Job]:
    return [_job(k, 7 * k, 1 + k % 12, 100 + k, 600 + 60 * (k % 5)) for k in range(200)]


@pytest.mark.parametrize("draws", [1, 2])
@pytest.mark.parametrize("kind", ["R1", "R2", "R3"])
def test_generate_requests_follows_the_documented_draws(kind: str, draws: int) -> None:
    jobs = _templates()
    got = generate_requests(list(reversed(jobs)), kind, seed=7, cap=12, draws=draws)
    rng = np.random.default_rng(7)
    picked = [j for j, u in zip(jobs, rng.random(len(jobs)), strict=True) if u < 0.1]
    numbers = rng.random((len(picked), draws))
    expected = sorted(
        (
            request_from_template(j, kind, float(u[0]), float(u[-1]), cap=12)
            for j, u in zip(picked, numbers, strict=True)
        ),
        key=lambda r: (r.submit, r.earliest_start),
    )
    assert len(got) == len(picked) > 0
    assert [r.id for r in got] == list(range(len(got)))
    strip = [(r.submit, r.earliest_start, r.deadline, r.duration, r.parts) for r in got]
    assert strip == [
        (r.submit, r.earliest_start, r.deadline, r.duration, r.parts) for r in expected
    ]
    assert got == generate_requests(jobs, kind, seed=7, cap=12, draws=draws)
    assert got != generate_requests(jobs, kind, seed=8, cap=12, draws=draws)


def test_one_draw_links_part_two_and_start() -> None:
    # With one draw, part 2 grows with f_start: u = f_start / t_stop.
    jobs = [_job(k, k, 100, 10, 600) for k in range(300)]
    for r in generate_requests(jobs, "R1", seed=1, cap=1000, probability=0.5):
        u = r.earliest_start / T_STOP
        assert abs(r.parts[1] - (70 + 60 * u)) <= 0.5 + 60 / T_STOP * 1.0001


def test_generate_requests_accepts_workloads_and_skips_zero_wallclock() -> None:
    jobs = [*_templates(), _job(999, 5, 1, 0, 0)]
    bm0 = cluster_slices(Instance(Machine(12), tuple(jobs)), 1, merge=False)[0]
    all_picked = generate_requests(bm0, "R1", seed=3, cap=12, probability=1.0)
    assert len(all_picked) == 200 and all(r.duration > 0 for r in all_picked)
    assert generate_requests(bm0, "R1", seed=3, cap=12, probability=0.0) == []


def test_section68_variants() -> None:
    r1 = [
        Request(0, 100, 100 + 600 + 3600, 600, (4, 5), 0),
        Request(10, 20, 20 + 60 + 360, 60, (8, 6), 1),
        Request(50, 5000, 5000 + 900 + 5400, 900, (3, 2), 2),
        Request(60, 9000, 9000 + 60 + 360, 60, (1, 1), 3),
    ]
    two = section68_requests(r1, 2)
    assert two == [
        Request(0, 20, 20 + 60 + 21_600, 60, (8, 6), 0),
        Request(70, 100, 100 + 600 + 21_600, 600, (4, 5), 1),
        Request(4970, 5000, 5000 + 900 + 21_600, 900, (3, 2), 2),
        Request(8970, 9000, 9000 + 60 + 21_600, 60, (1, 1), 3),
    ]
    three = section68_requests(r1, 3)  # R1 id 2 dropped
    assert [(r.submit, r.parts, r.id) for r in three] == [
        (0, (8, 6, 6), 0),
        (70, (4, 5, 5), 1),
        (8970, (1, 1, 1), 2),
    ]
    assert all(r.span == 21_600 for r in three)
    # Every third request in R1 id order goes: positions 2, 5 of seven.
    seven = [*r1, *(dataclasses.replace(r, id=r.id + 4) for r in r1[:3])]
    kept = section68_requests(seven, 3)
    assert len(kept) == 7 - 7 // 3
    # Ids 0..6 start at 100, 20, 5000, 9000, 100, 20, 5000; ids 2 and 5 go.
    assert sorted(r.earliest_start for r in kept) == [20, 100, 100, 5000, 9000]
    with pytest.raises(ValueError, match="parts"):
        section68_requests(r1, 4)


def test_describe_requests_golden() -> None:
    rs = [
        Request(0, 100, 100 + 10 + 50, 10, (4, 6), 0),
        Request(10, 40, 40 + 20 + 150, 20, (2, 4), 1),
    ]
    report = describe_requests(rs)
    assert (report.count, report.parts, report.load) == (2, 4, 100 + 120)
    assert (report.span_mean, report.span_std) == (100.0, 50.0)
    assert report.part_mean == 4.0 and report.part_std == pytest.approx(2**0.5)
    assert (report.advance_mean, report.advance_std) == (65.0, 35.0)
    assert (report.duration_mean, report.duration_std) == (15.0, 5.0)
    assert report.as_dict()["load"] == 220
    assert describe_requests([]).count == 0


def test_shift_requests() -> None:
    r = Request(1, 2, 30, 5, (1,), 4)
    assert shift_requests([r], 100) == [Request(101, 102, 130, 5, (1,), 4)]


# --------------------------------------------------------------------------
# Prices


def _at(day: int, hour: int, minute: int = 0) -> int:
    return day * DAY + hour * H + minute * 60


def test_price_scenarios_rates() -> None:
    flat = price_scenario("homogeneous", 4)
    assert all(
        t.rate(_at(d, h)) == 1 for t in flat for d in range(7) for h in (0, 9, 23)
    )
    dn = price_scenario("day-night", 2)
    assert [dn[1].rate(_at(2, h)) for h in (7, 8, 17, 18)] == [1, 2, 2, 1]
    assert dn[0].rate(_at(5, 10)) == 2  # no weekend discount
    cheap = price_scenario("cheap-weekends", 7)
    assert len(cheap) == 7
    half = Fraction(1, 2)
    for k, tariff in enumerate(cheap):
        discounted = k in (1, 3)
        assert tariff.rate(_at(1, 9)) == 2 and tariff.rate(_at(4, 20)) == 1
        assert tariff.rate(_at(5, 10)) == (1 if discounted else 2)
        assert tariff.rate(_at(6, 3)) == (half if discounted else 1)
    assert len(price_scenario("cheap-weekends", 2)) == 2
    with pytest.raises(ValueError, match="unknown price scenario"):
        price_scenario("free", 2)


def test_study_offset_puts_the_first_weekend_in_place() -> None:
    assert monday_offset(whole_hours=False) == 236_800
    assert monday_offset() == STUDY_MONDAY_OFFSET == 237_600
    assert monday_offset(5 * DAY) == 0
    cheap = price_scenario("cheap-weekends", 4, offset=STUDY_MONDAY_OFFSET)
    # Time 0 = Wednesday 18:00; Saturday 00:00 = 799 200; Monday 00:00 = 972 000.
    assert cheap[1].rate(0) == 1 and cheap[1].rate(-1 + 14 * H) == 1
    assert cheap[1].rate(14 * H) == 2  # Thursday 08:00
    assert cheap[1].rate(799_199) == 1 and cheap[1].rate(799_200) == Fraction(1, 2)
    assert cheap[1].rate(971_999) == Fraction(1, 2) and cheap[1].rate(972_000) == 1
    assert cheap[0].rate(800_000) == 1


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 400), st.integers(-2 * WEEK, 2 * WEEK), st.integers(1, 50_000))
def test_rotation_matches_shifting_times(hours: int, start: int, duration: int) -> None:
    base = Tariff.day_night(2, 1, weekend_factor=Fraction(1, 2))
    offset = hours * H
    rotated = rotate_tariff(base, offset)
    assert rotated.rate(start) == base.rate(start + offset)
    for rule in ("sampled", "prorata"):
        assert rotated.cost(start, duration, 3, rule) == base.cost(
            start + offset, duration, 3, rule
        )


def test_rotation_needs_whole_hours() -> None:
    with pytest.raises(ValueError, match="whole number of hours"):
        rotate_tariff(Tariff.flat(1), 1800)
    assert rotate_tariff(Tariff(), 3600) == Tariff()


# --------------------------------------------------------------------------
# The KTH substitute for Blue Horizon


@functools.cache
def _kth() -> list[ClusterWorkload]:
    return cluster_slices(read_swf(trace_path(KTH)), 7)


def test_kth_clusters() -> None:
    clusters = _kth()
    assert [c.offset for c in clusters] == [599_850 + k * 2 * WEEK for k in range(7)]
    assert [c.submitted for c in clusters] == [1171, 1076, 759, 1176, 784, 1341, 861]
    assert [len(c.jobs) for c in clusters] == [658, 751, 511, 665, 532, 814, 488]
    assert all(c.dropped_too_large == 0 and c.merge_below == 11 for c in clusters)
    assert [round(c.wc_accuracy_raw, 3) for c in clusters] == [
        0.423, 0.429, 0.404, 0.407, 0.428, 0.534, 0.49,
    ]  # fmt: skip
    for c in clusters:
        assert c.instance.source.sha256 == (
            "fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87"
        )
        assert all(0 <= j.release < T_STOP for j in c.jobs)
    capped = cluster_slices(read_swf(trace_path(KTH)), 1, cap=64, merge=False)[0]
    assert capped.submitted == 1171
    assert capped.dropped_too_large == 23 == capped.submitted - len(capped.jobs)
    assert all(j.size <= 64 for j in capped.jobs)


def test_kth_r1_report() -> None:
    bm0 = _kth()[0]
    r1 = generate_requests(bm0, "R1", seed=0, cap=100)
    report = describe_requests(r1)
    assert (report.count, report.load) == (59, 16_640_100)
    assert round(report.span_mean) == 29_935
    assert round(report.part_mean, 2) == 16.65
