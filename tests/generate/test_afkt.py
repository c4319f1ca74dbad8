"""The AFKT00/Rassmann synthetic generator and ``optsched generate afkt``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from optsched.check import check_schedule
from optsched.cli import main
from optsched.generate.afkt import afkt_instance, job_classes, node_speeds
from optsched.heuristics import simulate
from optsched.io import read


def test_speed_presets() -> None:
    assert node_speeds("10x100") == (100,) * 10
    # The thesis code's rule: 275 if (x + 1) / m < 0.75 else 825.
    assert node_speeds("22") == (275,) * 16 + (825,) * 6
    assert node_speeds("100") == (275,) * 74 + (825,) * 26
    assert node_speeds("4") == (275, 275, 825, 825)  # (x+1)/4 < 3/4: x = 0, 1
    assert node_speeds("100,100,275.5") == (100, 100, 275.5)
    assert node_speeds("16x275,6x825") == node_speeds("22")
    assert node_speeds([1, 2]) == (1, 2)
    for bad in ("0", "x", "3x", "3x0", "1,-2", "", "2.5"):
        with pytest.raises(ValueError, match="speeds"):
            node_speeds(bad)


def test_class_counts_are_the_codes_exact_thresholds() -> None:
    # i < seqR n is sequential; i < n (1 - largeR + seqR largeR) small.
    assert job_classes(250, 0.28, 0.3) == (70, 126, 54)
    assert job_classes(100, 0.07, 0.0) == (7, 93, 0)  # 0.07 * 100 > 7 in floats
    assert job_classes(250, 0.2, 0.3) == (50, 140, 60)
    assert job_classes(10, 0.25, 0.5) == (3, 4, 3)  # ceil(2.5); ceil(6.25) = 7
    assert job_classes(7, 1.0, 0.3) == (7, 0, 0)
    assert job_classes(7, 0.0, 1.0) == (0, 0, 7)


def test_instance_facts() -> None:
    # 11 nodes: small jobs take 2..5 nodes, large 6..11, so sizes tell classes.
    instance = afkt_instance(
        400, "11x3", seq_ratio=0.28, large_ratio=0.3, timespan=500,
        seq_work=(10, 20), par_work=(100, 300), seed=7,
    )  # fmt: skip
    assert instance.machine.speeds == (3,) * 11
    sequential, small, large = job_classes(400, 0.28, 0.3)
    jobs = instance.jobs
    assert sum(j.size == 1 for j in jobs) == sequential == 112
    assert sum(2 <= j.size <= 5 for j in jobs) == small
    assert sum(j.size >= 6 for j in jobs) == large
    assert all(10 <= j.runtime <= 20 for j in jobs if j.size == 1)
    assert all(100 <= j.runtime <= 300 for j in jobs if j.size > 1)
    assert all(0 <= j.release <= 500 for j in jobs)
    assert all(j.estimate == j.runtime for j in jobs)
    # Ids are a permutation, not in class order, and the list is shuffled.
    ids = [j.id for j in jobs]
    assert sorted(ids) == list(range(400))
    assert ids != sorted(ids)
    seq_ids = sorted(j.id for j in jobs if j.size == 1)
    assert seq_ids != list(range(sequential))
    assert [j.size for j in jobs][:sequential] != [1] * sequential
    # Both ends of the ranges occur with enough draws.
    assert {j.size for j in jobs if j.size > 1} == set(range(2, 12))
    assert instance.source.format == "afkt"


def test_seed_reproducibility() -> None:
    a = afkt_instance(50, "10x100", seed=3)
    assert afkt_instance(50, "10x100", seed=3) == a
    assert afkt_instance(50, "10x100", seed=np.random.default_rng(3)).jobs == a.jobs
    assert afkt_instance(50, "10x100", seed=4).jobs != a.jobs
    # Without errors the model changes nothing (all draws are always made).
    assert afkt_instance(50, "10x100", seed=3, error_model="symmetric").jobs == a.jobs


def test_thesis_error_model_only_underestimates() -> None:
    instance = afkt_instance(
        300, "10x100", seed=1, error_rate=1.0, max_error=1.0, error_model="under"
    )
    jobs = instance.jobs
    # p_hat = round(p / f), 1 <= f < 2.
    assert all(round(j.runtime / 2) <= j.estimate <= j.runtime for j in jobs)
    assert sum(j.estimate < j.runtime for j in jobs) > 250


def test_afkt_error_model_is_symmetric() -> None:
    jobs = afkt_instance(
        300, "10x100", seed=1, error_rate=1.0, max_error=1.0, error_model="symmetric"
    ).jobs
    # p_hat = round(p f) or round(p / f), 1 <= f < 2: p / 2 < p_hat < 2 p.
    assert all(round(j.runtime / 2) <= j.estimate <= round(2 * j.runtime) for j in jobs)
    over = sum(j.estimate > j.runtime for j in jobs)
    under = sum(j.estimate < j.runtime for j in jobs)
    assert over > 100 and under > 100


def test_error_rate_is_a_share_of_the_jobs() -> None:
    jobs = afkt_instance(1000, "10x100", seed=2, error_rate=0.3, max_error=0.5).jobs
    wrong = sum(j.estimate != j.runtime for j in jobs)
    assert 240 <= wrong <= 360  # binomial(1000, 0.3): mean 300, sd 14.5
    exact = afkt_instance(200, "10x100", seed=2, error_rate=0.0, max_error=5.0).jobs
    assert all(j.estimate == j.runtime for j in exact)


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="small parallel jobs need"):
        afkt_instance(20, "3x1", seq_ratio=0.5, large_ratio=0.3)
    afkt_instance(20, "3x1", seq_ratio=0.5, large_ratio=1.0)  # no small jobs
    with pytest.raises(ValueError, match="seq ratio"):
        afkt_instance(20, seq_ratio=1.5)
    with pytest.raises(ValueError, match="work range"):
        afkt_instance(20, seq_work=(5, 1))
    with pytest.raises(ValueError, match="error model"):
        afkt_instance(20, error_model="both")
    with pytest.raises(ValueError, match="timespan"):
        afkt_instance(20, timespan=-1)


def test_instances_simulate_and_check_on_speed_classes() -> None:
    instance = afkt_instance(60, "22", seq_ratio=0.5, timespan=4000, seed=5)
    assert instance.machine.speeds == node_speeds("22")
    schedule = simulate(instance, "afkt-backfill:f=fifo").schedule
    assert check_schedule(instance, schedule) == []


def test_cli_writes_the_generators_instance(tmp_path: Path) -> None:
    out = tmp_path / "afkt.json"
    result = CliRunner().invoke(
        main,
        ["generate", "afkt", "--jobs", "40", "--speeds", "22", "--seq-ratio",
         "0.4", "--timespan", "4000", "--seq-work", "2000:100000", "--par-work",
         "20000:800000", "--error-rate", "0.5", "--max-error", "1",
         "--error-model", "symmetric", "--seed", "9", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "40 jobs (16 sequential) on 22 nodes" in result.output
    expected = afkt_instance(
        40, "22", seq_ratio=0.4, timespan=4000, seq_work=(2000, 100_000),
        par_work=(20_000, 800_000), error_rate=0.5, max_error=1.0,
        error_model="symmetric", seed=9,
    )  # fmt: skip
    back = read(out)
    assert back.jobs == expected.jobs
    assert back.machine == expected.machine


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--speeds", "2"], "small parallel jobs need"),
        (["--seq-work", "5:x"], "--seq-work '5:x': expected MIN:MAX"),
        (["--error-model", "foo"], "error model 'foo'"),
        (["--jobs", "0"], "jobs must be an integer >= 1"),
        (["--speeds", "4x-1"], "speeds: '4x-1'"),
    ],
)
def test_cli_bad_options_exit_2_with_one_line(
    tmp_path: Path, options: list[str], message: str
) -> None:
    out = tmp_path / "afkt.json"
    result = CliRunner().invoke(main, ["generate", "afkt", *options, "-o", str(out)])
    assert result.exit_code == 2
    assert message in result.output
    assert result.output.strip().count("\n") == 0
    assert not out.exists()
