"""A policy written from scratch against the public protocol.

The plug-in ("start waiting jobs largest first whenever they fit") is
written to a file here, run through ``simulate``, ``gap`` (cpsat), a
``bench`` suite with two local workers and ``competitive_gap`` with a list
holding an object and a spec; every schedule is checked, and the starts
are compared with an independent plain simulation of the same rule
(:func:`largest_first_reference`, sharing no code with the engine).
"""

from __future__ import annotations

import heapq
import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.bench import write_suite
from support.paths import INSTANCES

import optsched
from optsched.check import check_schedule
from optsched.cli import main
from optsched.heuristics import parse_policy, simulate
from optsched.instance import Instance
from optsched.io.native import read_native

LARGEST_FIRST = textwrap.dedent(
    """
    class LargestFirst:
        name = "largest-first"

        def select(self, view):
            for job in sorted(view.waiting, key=lambda j: (-j.size, j.submit, j.id)):
                if view.fits(job.id):
                    yield job.id
    """
)

PLAIN_FILES = ("kth_20.json", "kth_50.json", "hpc2n_40.json", "lublin256_30.json")
"""Bundled windows on plain ``any`` machines (no busy blocks)."""


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "largest.py"
    path.write_text(LARGEST_FIRST)
    return path


def largest_first_reference(instance: Instance) -> dict[int, int]:
    """Start times under "largest first whenever it fits", by a plain loop.

    At every instant where a job arrives or ends (ends first), the waiting
    jobs are scanned by decreasing size (ties: submit, id) and each one that
    fits in the free processors starts. A job of zero run time gives its
    processors back at once.
    """
    m = instance.machine.processors
    arrivals = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    ends: list[tuple[int, int]] = []  # (end time, size)
    waiting: list = []
    starts: dict[int, int] = {}
    free, k = m, 0
    while k < len(arrivals) or waiting:
        times = [
            t
            for t in (
                arrivals[k].release if k < len(arrivals) else None,
                ends[0][0] if ends else None,
            )
            if t is not None
        ]
        now = min(times)
        while ends and ends[0][0] == now:
            free += heapq.heappop(ends)[1]
        while k < len(arrivals) and arrivals[k].release == now:
            waiting.append(arrivals[k])
            k += 1
        for job in sorted(waiting, key=lambda j: (-j.size, j.release, j.id)):
            if job.size <= free:
                starts[job.id] = now
                waiting.remove(job)
                if job.runtime > 0:
                    free -= job.size
                    heapq.heappush(ends, (now + job.runtime, job.size))
    return starts


def reference_makespan(instance: Instance) -> int:
    """The makespan of :func:`largest_first_reference`'s schedule."""
    jobs = instance.jobs_by_id()
    return max(
        t + jobs[j].runtime for j, t in largest_first_reference(instance).items()
    )


@pytest.mark.parametrize("name", PLAIN_FILES)
def test_simulate_matches_the_reference(policy_file: Path, name: str) -> None:
    instance = read_native(INSTANCES / name).instance
    assert not instance.machine.unavailable
    result = simulate(instance, f"{policy_file}:LargestFirst")
    assert check_schedule(instance, result.schedule) == []
    starts = {j: p.start for j, p in result.schedule.placements.items()}
    assert starts == largest_first_reference(instance)


def test_reference_is_not_fcfs() -> None:
    # The comparison above would prove little if the rule were FCFS here.
    instance = read_native(INSTANCES / "kth_20.json").instance
    fcfs = simulate(instance, "fcfs").schedule
    reference = largest_first_reference(instance)
    assert any(fcfs[j].start != t for j, t in reference.items())


def test_spec_round_trip_and_identity(policy_file: Path) -> None:
    policy = parse_policy(f"{policy_file}:LargestFirst")
    assert parse_policy(policy.spec) == policy
    assert policy.label == "largest-first"
    assert len(policy.digest) == 64
    policy_file.write_text(LARGEST_FIRST + "\n# changed\n")
    changed = parse_policy(f"{policy_file}:LargestFirst")
    assert changed.spec == policy.spec and changed.digest != policy.digest


def test_gap_cpsat_rates_the_plug_in(policy_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(
        main,
        ["gap", str(INSTANCES / "kth_20.json"), "--policies",
         f"easy,{policy_file}:LargestFirst", "--time-limit", "5", "-o", str(out),
         "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    import pandas as pd

    rows = pd.read_csv(out)
    mine = rows[rows["policy"] == f"{policy_file}:LargestFirst"]
    instance = read_native(INSTANCES / "kth_20.json").instance
    jobs = instance.jobs_by_id()
    ends = [t + jobs[j].runtime for j, t in largest_first_reference(instance).items()]
    values = dict(zip(mine["objective"], mine["value"], strict=True))
    assert values == {"cmax": max(ends), "wct:one": sum(ends)}
    assert (mine["lower"] <= mine["value"]).all()


def test_competitive_gap_takes_an_object_and_a_spec(policy_file: Path) -> None:
    namespace: dict = {}
    exec(compile(LARGEST_FIRST, str(policy_file), "exec"), namespace)
    mine = namespace["LargestFirst"]()
    rows = optsched.competitive_gap(
        INSTANCES / "kth_20.json",
        policies=[mine, "easy"],
        objectives="cmax",
        backend="bounds-only",
    )
    assert len(rows) == 2
    instance = read_native(INSTANCES / "kth_20.json").instance
    expected = reference_makespan(instance)
    values = dict(zip(rows["policy"], rows["value"], strict=True))
    easy = simulate(instance, "easy").schedule
    assert values["easy"] == max(p.end for p in easy.placements.values())
    (plug_in,) = [v for p, v in values.items() if p != "easy"]
    assert plug_in == expected


def test_compare_policies_takes_an_object(policy_file: Path) -> None:
    from optsched.cli.compare import compare_policies

    namespace: dict = {}
    exec(compile(LARGEST_FIRST, str(policy_file), "exec"), namespace)
    instance = read_native(INSTANCES / "kth_20.json").instance
    mine = namespace["LargestFirst"]()
    rows = compare_policies(instance, [mine, "easy"])
    assert [row.policy for row in rows] == [parse_policy(mine).spec, "easy"]
    assert rows[0].makespan == reference_makespan(instance)


@pytest.mark.parametrize(
    "executor",
    [
        pytest.param({"workers": 2}, id="process-pool"),
        pytest.param({"dask_local": 2}, id="dask"),
    ],
)
def test_bench_suite_in_worker_processes(
    policy_file: Path, tmp_path: Path, executor: dict[str, int]
) -> None:
    # Workers load the plug-in anew from its spec (a fresh interpreter each).
    from optsched.bench import run_suite
    from optsched.bench.store import Store

    kth_50 = INSTANCES / "kth_50.json"
    suite = write_suite(
        tmp_path / "mine.toml",
        kth_50,
        ["easy", f"{policy_file}:LargestFirst"],
        tables="""
            [windows]
            kind = "consecutive"
            jobs = 25
            count = 2
            """,
    )
    store = tmp_path / "store.sqlite"
    summary = run_suite(suite, store, **executor)
    assert summary.failed == 0
    with Store(store) as results:
        rows = results.rows("mine")
    policy_rows = rows[rows["kind"] == "policy"]
    assert len(policy_rows) == 4
    assert (policy_rows["status"] == "OK").all()
    mine = policy_rows[policy_rows["name"] == f"{policy_file}:LargestFirst"]
    assert all('"source_sha256"' in p for p in mine["params"])
    # The values are the plain reference's, window by window.
    instance = read_native(kth_50).instance
    ordered = sorted(instance.jobs, key=lambda j: (j.release, j.id))
    import json

    for _, row in mine.iterrows():
        first = 0 if row["window_index"] == 0 else 25
        jobs = ordered[first : first + 25]
        window = instance.with_jobs(
            [j.replace(release=j.release - jobs[0].release) for j in jobs]
        )
        expected = reference_makespan(window)
        assert json.loads(row["values"])["cmax"] == expected


def test_a_changed_plug_in_is_run_again(policy_file: Path, tmp_path: Path) -> None:
    from optsched.bench import run_suite

    suite = write_suite(
        tmp_path / "again.toml",
        INSTANCES / "kth_20.json",
        ["easy", f"{policy_file}:LargestFirst"],
    )
    store = tmp_path / "store.sqlite"
    first = run_suite(suite, store)
    assert (first.total, first.ran) == (3, 3)
    assert run_suite(suite, store).ran == 0  # resumed: nothing changed
    policy_file.write_text(LARGEST_FIRST.replace("-j.size", "j.size"))  # smallest
    changed = run_suite(suite, store)
    assert (changed.skipped, changed.ran) == (2, 1)  # only the plug-in's task


def test_compare_and_worst_case_take_a_plug_in(policy_file: Path) -> None:
    spec = f"{policy_file}:LargestFirst"
    compared = CliRunner().invoke(
        main,
        ["compare", str(INSTANCES / "kth_20.json"), "--policies", f"easy,{spec}",
         "--json"],
    )  # fmt: skip
    assert compared.exit_code == 0, compared.output
    rows = {row["policy"]: row for row in json.loads(compared.output)["rows"]}
    instance = read_native(INSTANCES / "kth_20.json").instance
    assert rows[spec]["makespan"] == reference_makespan(instance)
    # The search for a small instance where the plug-in is strictly worse
    # than FCFS simulates it like any policy.
    searched = CliRunner().invoke(
        main,
        ["worst-case", "--policy", spec, "--vs", "fcfs", "--evaluations", "40"],
    )
    assert searched.exit_code == 0, searched.output


def test_spec_parameters_are_typed_by_the_class(tmp_path: Path) -> None:
    path = tmp_path / "typed.py"
    path.write_text(
        textwrap.dedent(
            """
            seen = []

            class Typed:
                def __init__(self, maxSize: int = 1, greedy: bool = False, tag="x"):
                    seen.append((maxSize, greedy, tag))

                def select(self, view):
                    return [j.id for j in view.waiting if view.fits(j.id)][:1]
            """
        )
    )
    policy = parse_policy(f"{path}:Typed:greedy,MAXSIZE=3,tag=7")
    assert policy.options == (("maxSize", 3), ("greedy", True), ("tag", "7"))
    assert parse_policy(policy.spec) == policy
    simulate(read_native(INSTANCES / "kth_20.json").instance, policy)
    module = sys.modules[policy._class.__module__]
    assert module.seen == [(3, True, "7")]
