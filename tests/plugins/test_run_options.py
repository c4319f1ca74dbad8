"""``gap`` and suites take ``simulate``'s run options on a real KTH window.

Mallmann's T3E variant (a contiguous machine, best-fit ranges, migration)
and kill-at-wallclock runs, with a built-in policy and a plug-in: each
policy's value is its schedule's under the same options (a separate
``simulate`` of the same window), the options changed the schedule (the
window is one where migration compacts jobs and where jobs overrun their
estimates), and the rows record the options.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from support.bench import write_suite
from support.paths import trace_path

from optsched.check import check_schedule
from optsched.cli import main
from optsched.heuristics import simulate
from optsched.instance import Instance
from optsched.io import read_trace
from optsched.windows.selection import WindowRule, select_windows

KTH = "KTH-SP2-1996-2.1-cln.swf"
FIRST, JOBS = 100, 100
"""The window: jobs 100 to 199 of KTH, where best fit with migration moves
jobs 6 times and shortens EASY's makespan from 91,412 s to 75,543 s."""

T3E = {"allocation_rule": "best-fit", "migration": True}
KILL = {"kill_at_estimate": True}

LARGEST_FIRST = textwrap.dedent(
    """
    class LargestFirst:
        def select(self, view):
            for job in sorted(view.waiting, key=lambda j: (-j.size, j.submit, j.id)):
                if view.fits(job.id):
                    yield job.id
    """
)


@pytest.fixture(scope="module")
def kth() -> Path:
    return trace_path(KTH)


@pytest.fixture(scope="module")
def window(kth: Path) -> Instance:
    """The window on a contiguous machine, as ``gap --allocation contiguous``
    cuts it."""
    trace = read_trace(kth)
    (cut,) = select_windows(trace, WindowRule("consecutive", JOBS, 1, first=FIRST))
    instance = cut.cut(trace)
    return instance.replace(machine=instance.machine.with_allocation("contiguous"))


@pytest.fixture
def plug_in(tmp_path: Path) -> str:
    path = tmp_path / "largest.py"
    path.write_text(LARGEST_FIRST)
    return f"{path}:LargestFirst"


def expected_makespans(
    window: Instance, policies: list[str], options: dict[str, object]
) -> dict[str, int]:
    """Each policy's checked makespan on ``window`` under ``options``."""
    out = {}
    for policy in policies:
        schedule = simulate(window, policy, **options).schedule  # type: ignore[arg-type]
        assert check_schedule(window, schedule) == []
        out[policy] = max(p.end for p in schedule.placements.values())
    return out


def test_the_options_change_this_window(window: Instance) -> None:
    # Otherwise the tests below would not tell an ignored option apart.
    t3e = simulate(window, "easy", **T3E)  # type: ignore[arg-type]
    plain = simulate(window, "easy", allocation_rule="first-fit")
    assert t3e.stats.migrations > 0
    makespans = [
        max(p.end for p in s.schedule.placements.values()) for s in (t3e, plain)
    ]
    assert makespans == [75_543, 91_412]
    assert simulate(window, "easy", kill_at_estimate=True).schedule.killed


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--allocation-rule", "best-fit", "--migration"], T3E),
        (["--kill-at-estimate"], KILL),
    ],
    ids=["t3e", "kill"],
)
def test_gap_on_a_kth_window(
    kth: Path,
    window: Instance,
    plug_in: str,
    tmp_path: Path,
    flags: list[str],
    options: dict[str, object],
) -> None:
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(
        main,
        ["gap", str(kth), "--window-jobs", str(JOBS), "--windows", "1",
         "--first-job", str(FIRST), "--allocation", "contiguous", *flags,
         "--policies", f"easy,{plug_in}", "--objective", "cmax",
         "--backend", "bounds-only", "--no-progress", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(out)
    expected = expected_makespans(window, ["easy", plug_in], options)
    assert dict(zip(rows["policy"], rows["value"], strict=True)) == expected
    killing = bool(options.get("kill_at_estimate"))
    assert (rows["kill_at_estimate"] == killing).all()
    assert (
        rows["allocation_rule"] == options.get("allocation_rule", "first-fit")
    ).all()
    assert (rows["migration"] == bool(options.get("migration"))).all()
    # A run that killed jobs did less work than the window: no ratio.
    assert (rows["comparable"] == ~(rows["killed"] > 0)).all()
    assert (rows["killed"] > 0).any() == killing


@pytest.mark.parametrize(
    ("options", "run_table"),
    [
        (T3E, 'allocation_rule = "best-fit"\nmigration = true'),
        (KILL, "kill_at_estimate = true"),
    ],
    ids=["t3e", "kill"],
)
def test_a_suite_on_a_kth_window(
    kth: Path,
    window: Instance,
    plug_in: str,
    tmp_path: Path,
    options: dict[str, object],
    run_table: str,
) -> None:
    from optsched.bench import run_suite
    from optsched.bench.analysis import analyse
    from optsched.bench.suite import load_suite

    suite_file = write_suite(
        tmp_path / "t3e.toml",
        kth,
        ["easy", plug_in],
        trace_options='allocation = "contiguous"',
        tables=f"""
            [windows]
            kind = "consecutive"
            jobs = {JOBS}
            first = {FIRST}
            count = 1

            """
        + f"[run]\n{run_table}\n",
    )
    store = tmp_path / "t3e.sqlite"
    assert run_suite(suite_file, store).failed == 0
    rows = analyse(load_suite(suite_file), store=store).rows
    expected = expected_makespans(window, ["easy", plug_in], options)
    assert dict(zip(rows["policy"], rows["value"], strict=True)) == expected
    for row in rows.to_dict("records"):
        assert row["kill_at_estimate"] == bool(options.get("kill_at_estimate"))
        assert row["allocation_rule"] == options.get("allocation_rule", "first-fit")
        assert row["migration"] == bool(options.get("migration"))
        assert row["comparable"] == (row["killed"] == 0)
    assert (rows["killed"] > 0).any() == bool(options.get("kill_at_estimate"))
