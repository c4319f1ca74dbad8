"""Suite files: parsing, validation errors, expansion into tasks."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.paths import DATA, REPO, swf_job, write_swf
from support.refusals import refusal

from optsched.bench.suite import (
    DEFAULT_SOLVER_WORKERS,
    SolverSpec,
    Suite,
    load_suite,
    sha256_of,
)
from optsched.bench.tasks import ALL_OBJECTIVES, expand, make_task_id
from optsched.cli import main
from optsched.errors import InputError
from optsched.windows.selection import WindowRule

SUITES = DATA / "suites"
TINY_SHA = "9e14461f496eed16602d27d7be0fa80d82bd25132a09329e1884eec709a91315"

HEAD = 'policies = ["fcfs", "easy"]\nobjectives = ["cmax", "wct"]\n\n'
SUITE = '[suite]\nname = "t"\n\n'
TRACE = f'[[traces]]\npath = "tiny.swf"\nsha256 = "{TINY_SHA}"\n\n'
WINDOWS = '[windows]\nkind = "consecutive"\njobs = 6\ncount = 2\n\n'
SOLVER = '[[solvers]]\nbackend = "cpsat"\ntime_limit = 5\n'


def write_suite(folder: Path, text: str, name: str = "suite.toml") -> Path:
    """A suite file beside a copy of tiny.swf."""
    shutil.copy(SUITES / "tiny.swf", folder / "tiny.swf")
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_tiny_suite_fields() -> None:
    suite = load_suite(SUITES / "tiny.toml")
    assert suite.name == "tiny"
    assert suite.policies == ("fcfs", "easy")
    # Labels are canonical: "wct" is "wct:one".
    assert suite.objectives == ("cmax", "wct:one")
    assert suite.windows == WindowRule("consecutive", jobs=6, count=3)
    assert [(s.backend, s.time_limit, s.workers) for s in suite.solvers] == [
        ("cpsat", 10.0, 1)
    ]
    (trace,) = suite.traces
    assert trace.path == "tiny.swf"
    assert trace.file == SUITES / "tiny.swf"
    assert trace.sha256 == TINY_SHA == sha256_of(SUITES / "tiny.swf")
    assert trace.pinned


def test_missing_sha256_is_computed_and_reported(tmp_path: Path) -> None:
    trace = '[[traces]]\npath = "tiny.swf"\n\n'
    suite = load_suite(write_suite(tmp_path, HEAD + SUITE + trace + WINDOWS))
    (ref,) = suite.traces
    assert ref.sha256 == TINY_SHA
    assert not ref.pinned


def test_windows_default_to_the_whole_file(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, HEAD + SUITE + TRACE + SOLVER))
    assert suite.windows == WindowRule("whole")
    # [[solvers]] without workers: two solver threads (gap --workers alike).
    assert DEFAULT_SOLVER_WORKERS == 2
    assert suite.solvers == (SolverSpec("cpsat", 5.0, 2),)
    plan = expand(suite)
    assert {t.window for t in plan.tasks} == {"whole"}
    # 1 window x (2 policies + 2 objectives x 1 back-end).
    assert len(plan.tasks) == 2 + 2 * 1
    assert plan.tasks[-1].params == {"time_limit": 5.0, "workers": 2}


def test_expansion_order_and_ids() -> None:
    plan = expand(load_suite(SUITES / "tiny.toml"))
    # 3 windows x (2 policies, each simulated once + 2 objectives x 1 back-end).
    assert len(plan.tasks) == 12
    assert len({t.task_id for t in plan.tasks}) == 12
    first = plan.tasks[:4]
    assert [(t.window_index, t.objective, t.kind, t.name) for t in first] == [
        (0, ALL_OBJECTIVES, "policy", "fcfs"),
        (0, ALL_OBJECTIVES, "policy", "easy"),
        (0, "cmax", "solver", "cpsat"),
        (0, "wct:one", "solver", "cpsat"),
    ]
    assert ALL_OBJECTIVES == ""
    assert [t.window for t in plan.tasks[::4]] == [
        "first=0,jobs=6,state=none",
        "first=6,jobs=6,state=none",
        "first=12,jobs=6,state=none",
    ]
    fcfs, easy, solver, _ = first
    assert solver.params == {"time_limit": 10.0, "workers": 1}
    assert fcfs.params == {"seed": 0, "objectives": ["cmax", "wct:one"]}
    # Policies come first; each solver task of a window waits for exactly
    # that window's policy tasks (never for another window's).
    for index in range(3):
        tasks = [t for t in plan.tasks if t.window_index == index]
        policies = tuple(t.task_id for t in tasks if t.kind == "policy")
        assert [t.kind for t in tasks] == ["policy", "policy", "solver", "solver"]
        assert [t.after for t in tasks] == [(), (), policies, policies]
    assert solver.incumbents == ()  # attached by the executor, not the plan
    # The ids are the documented hash, recomputed here from their parts.
    assert solver.task_id == make_task_id(
        "tiny",
        TINY_SHA,
        "first=0,jobs=6,state=none",
        "solver",
        "cpsat",
        "cmax",
        '{"time_limit":10.0,"workers":1}',
    )
    assert easy.task_id == make_task_id(
        "tiny",
        TINY_SHA,
        "first=0,jobs=6,state=none",
        "policy",
        "easy",
        "",
        '{"objectives":["cmax","wct:one"],"seed":0}',
    )


def test_ids_ignore_where_the_trace_lives(tmp_path: Path) -> None:
    # Same suite, the trace reached through another path: same task ids.
    original = expand(load_suite(SUITES / "tiny.toml"))
    (tmp_path / "data").mkdir()
    text = (SUITES / "tiny.toml").read_text().replace('"tiny.swf"', '"data/tiny.swf"')
    shutil.copy(SUITES / "tiny.swf", tmp_path / "data" / "tiny.swf")
    (tmp_path / "moved.toml").write_text(text)
    moved = expand(load_suite(tmp_path / "moved.toml"))
    assert [t.task_id for t in moved.tasks] == [t.task_id for t in original.tasks]
    assert {t.trace for t in moved.tasks} == {"data/tiny.swf"}


def test_instances_are_the_windows(tmp_path: Path) -> None:
    plan = expand(load_suite(SUITES / "tiny.toml"))
    pairs = [(task, plan.instance(task)) for task in plan.tasks]
    by_window = {task.window_index: instance for task, instance in pairs}
    assert [[j.id for j in by_window[i].jobs] for i in range(3)] == [
        [1, 2, 3, 4, 5, 6],
        [7, 8, 9, 10, 11, 12],
        [13, 14, 15, 16, 17, 18],
    ]
    # Cut once per window: the tasks of one window share the instance.
    assert len({id(instance) for _, instance in pairs}) == 3


def test_windows_that_do_not_fit_name_the_suite(tmp_path: Path) -> None:
    windows = '[windows]\nkind = "consecutive"\njobs = 10\ncount = 3\n'
    suite = load_suite(write_suite(tmp_path, HEAD + SUITE + TRACE + windows))
    with pytest.raises(InputError) as caught:
        expand(suite)
    assert str(caught.value) == (
        f"{tmp_path / 'suite.toml'}: trace tiny.swf: [windows]: 3 windows of 10 "
        "jobs from job 0 do not fit in the 24 jobs of the trace (2 do)"
    )


def test_random_windows_of_several_seeds_are_pooled(tmp_path: Path) -> None:
    windows = '[windows]\nkind = "random"\njobs = 20\ncount = 2\n\n'
    text = HEAD + "seeds = [1, 2, 3]\n\n" + SUITE + TRACE + windows
    suite = load_suite(write_suite(tmp_path, text))
    assert [r.seed for r in suite.window_rules] == [1, 2, 3]
    plan = expand(suite)
    # 24 jobs hold 5 positions for a 20-job window; each seed draws 2.
    from optsched.io import read_trace
    from optsched.windows.selection import select_windows

    trace = read_trace(tmp_path / "tiny.swf")
    expected: list[str] = []
    for rule in suite.window_rules:
        for spec in select_windows(trace, rule):
            if spec.key not in expected:
                expected.append(spec.key)
    windows_seen = list(dict.fromkeys(t.window for t in plan.tasks))
    assert windows_seen == expected
    # No [[solvers]]: one task per window and policy (both objectives in it).
    assert len(plan.tasks) == len(expected) * 2
    assert {t.kind for t in plan.tasks} == {"policy"}
    assert len({t.task_id for t in plan.tasks}) == len(plan.tasks)


def _error(tmp_path: Path, text: str) -> str:
    """The one-line refusal of the suite file ``text``."""
    return refusal(load_suite, write_suite(tmp_path, text))


def test_unknown_top_level_key(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD + "polices = []\n" + SUITE + TRACE)
    assert message.startswith(f"{tmp_path / 'suite.toml'}:4: unknown key 'polices'")
    assert "valid keys: suite, traces" in message


def test_unknown_key_in_a_trace_table(tmp_path: Path) -> None:
    trace2 = '[[traces]]\npath = "tiny.swf"\ncolumns = 18\n'
    message = _error(tmp_path, HEAD + SUITE + TRACE + trace2)
    # Line 13: the second [[traces]] table's 'columns' key.
    assert message == (
        f"{tmp_path / 'suite.toml'}:13: unknown key 'columns' in [traces]; "
        "valid keys: path, sha256, format, processors, allocation, moldable, "
        "malleable, machine, site, arrivals, chains"
    )


def _suite_with_trace_options(tmp_path: Path, options: str) -> Suite:
    """The suite of one trace with ``options`` (TOML lines, ending in a blank
    line) added to its [[traces]] table, written and loaded."""
    trace = TRACE.replace("\n\n", "\n") + options
    return load_suite(write_suite(tmp_path, HEAD + SUITE + trace + WINDOWS + SOLVER))


def test_trace_moldable_options(tmp_path: Path) -> None:
    options = 'moldable = "linear:max=8"\nmalleable = true\n\n'
    suite = _suite_with_trace_options(tmp_path, options)
    (ref,) = suite.traces
    assert (ref.moldable, ref.malleable) == ("linear:max=8", True)
    plan = expand(suite)
    for task in plan.tasks:
        instance = plan.instance(task)
        # Applied to each window: every job moldable up to 8 processors
        # (modes no faster than a smaller one are dropped: 1-second jobs).
        assert all(j.malleable and j.modes[-1].processors <= 8 for j in instance.jobs)
        assert any(j.modes[-1].processors == 8 for j in instance.jobs)
        assert task.params["moldable"] == "linear:max=8"
    for bad, message in (
        ('moldable = "fast"', "[[traces]] moldable: unknown speed-up model 'fast'"),
        ("malleable = true", "[[traces]] malleable needs moldable"),
        ('moldable = "linear"\nmalleable = 1', "malleable must be true or false"),
    ):
        text = HEAD + SUITE + TRACE.replace("\n\n", "\n") + bad + "\n\n" + WINDOWS
        assert message in _error(tmp_path, text + SOLVER)


def test_trace_chains_option(tmp_path: Path) -> None:
    # chains = false is --no-chains for every window of the trace.
    lines = [
        swf_job(1, 0, 60, 2),
        swf_job(2, 10, 60, 2, preceding=1, think=5),
        swf_job(3, 20, 60, 2),
    ]
    write_swf(tmp_path / "c.swf", lines, 4)
    trace = '[[traces]]\npath = "c.swf"\n'
    plain_text = HEAD + SUITE + trace + "\n" + SOLVER
    plain = expand(load_suite(write_suite(tmp_path, plain_text, "plain.toml")))
    assert plain.instance(plain.tasks[0]).job(2).preceding_job == 1
    assert "chains" not in plain.tasks[0].params
    # chains = true is the default: the same tasks, the same ids.
    text = HEAD + SUITE + trace + "chains = true\n\n" + SOLVER
    kept = expand(load_suite(write_suite(tmp_path, text, "kept.toml")))
    assert [t.task_id for t in kept.tasks] == [t.task_id for t in plain.tasks]
    text = HEAD + SUITE + trace + "chains = false\n\n" + SOLVER
    suite = load_suite(write_suite(tmp_path, text, "loose.toml"))
    (ref,) = suite.traces
    assert not ref.chains and ref.read_options() == {"chains": False}
    assert not ref.preparation.chains
    loose = expand(suite)
    for task in loose.tasks:
        assert all(j.preceding_job is None for j in loose.instance(task).jobs)
        assert task.params["chains"] is False
    assert not {t.task_id for t in loose.tasks} & {t.task_id for t in plain.tasks}
    bad = HEAD + SUITE + trace + 'chains = "no"\n\n' + SOLVER
    assert _error(tmp_path, bad) == (
        f"{tmp_path / 'suite.toml'}:9: [[traces]] chains must be true or false, "
        "got 'no'"
    )


def test_trace_read_options(tmp_path: Path) -> None:
    options = 'format = "swf"\nprocessors = 16\nallocation = "contiguous"\n\n'
    suite = _suite_with_trace_options(tmp_path, options)
    (ref,) = suite.traces
    assert (ref.format, ref.processors, ref.allocation) == ("swf", 16, "contiguous")
    assert ref.read_options() == {
        "format": "swf",
        "processors": 16,
        "allocation": "contiguous",
    }
    plan = expand(suite)
    # Applied before the windows are cut (tiny.swf says MaxProcs 8).
    for task in plan.tasks:
        machine = plan.instance(task).machine
        assert (machine.processors, machine.allocation) == (16, "contiguous")
        assert {"format", "processors", "allocation"} <= set(task.params)
    assert plan.tasks[0].params == {
        "seed": 0,
        "objectives": ["cmax", "wct:one"],
        "format": "swf",
        "processors": 16,
        "allocation": "contiguous",
    }
    # The read options are part of the ids: other options, other results.
    text = HEAD + SUITE + TRACE + WINDOWS + SOLVER
    plain = expand(load_suite(write_suite(tmp_path, text, "plain.toml")))
    assert plain.tasks[0].params == {
        "seed": 0,
        "objectives": ["cmax", "wct:one"],
    }
    assert not {t.task_id for t in plain.tasks} & {t.task_id for t in plan.tasks}
    assert plain.instance(plain.tasks[0]).machine.processors == 8


def test_policies_are_stored_under_their_canonical_spec(tmp_path: Path) -> None:
    head = 'policies = ["fcfs", "sjf", "easy:order=spt"]\nobjectives = ["cmax"]\n'
    suite = load_suite(write_suite(tmp_path, head + SUITE + TRACE + WINDOWS))
    assert suite.policies == ("fcfs", "spt", "easy:order=spt")
    assert [t.name for t in expand(suite).tasks[:3]] == [
        "fcfs",
        "spt",
        "easy:order=spt",
    ]


def test_unknown_key_in_solvers(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD + SUITE + TRACE + SOLVER + "threads = 4\n")
    assert ":14: unknown key 'threads' in [solvers]" in message


def test_top_level_key_written_after_a_table(tmp_path: Path) -> None:
    text = SUITE + TRACE + WINDOWS + 'policies = ["fcfs"]\nobjectives = ["cmax"]\n'
    message = _error(tmp_path, text)
    assert ":13: unknown key 'policies' in [windows]" in message
    assert "belongs at the top level, before the first [table]" in message


def test_bad_window_rule(tmp_path: Path) -> None:
    windows = '[windows]\nkind = "consecutive"\nsize = 6\n'
    message = _error(tmp_path, HEAD + SUITE + TRACE + windows)
    assert ":13: unknown key 'size' in [windows]; valid keys: kind, jobs" in message


def test_sha256_mismatch_names_the_file(tmp_path: Path) -> None:
    wrong = "0" * 64
    message = _error(tmp_path, HEAD + SUITE + TRACE.replace(TINY_SHA, wrong))
    assert ":9: trace tiny.swf: sha256 mismatch: the suite says 000" in message
    assert f"the file {tmp_path / 'tiny.swf'} has {TINY_SHA}" in message


def test_malformed_sha256(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD + SUITE + TRACE.replace(TINY_SHA, "abc"))
    assert "sha256 must be 64 hex digits, got 'abc'" in message


def test_missing_trace(tmp_path: Path) -> None:
    text = HEAD + SUITE + TRACE.replace('"tiny.swf"', '"nowhere/kth.swf"')
    message = _error(tmp_path, text)
    where = f"{tmp_path}/nowhere/kth.swf"
    assert f":8: trace not found: 'nowhere/kth.swf' ('{where}')" in message


def test_a_trace_path_too_long_is_one_line(tmp_path: Path) -> None:
    """Found by the suite fuzzing: a 2,000-character name raised OSError."""
    long_name = "tiny.s" + "[" * 1000 + "]" * 1000 + "wf"
    message = _error(tmp_path, HEAD + SUITE + TRACE.replace("tiny.swf", long_name))
    assert ":8: [[traces]] path 'tiny.s[[[" in message
    assert "File name too long" in message
    assert len(message) < 200


def test_same_trace_twice(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD + SUITE + TRACE + TRACE)
    assert ":12: trace tiny.swf is the same file as tiny.swf" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SUITE + TRACE, "missing 'objectives'"),
        ('objectives = ["cmax"]\n' + SUITE + TRACE, "nothing to run"),
        ('objectives = ["makespan"]\npolicies = ["fcfs"]\n' + SUITE + TRACE,
         ":1: objectives: objective 'makespan' is not one of cmax, wct"),
        ('objectives = ["wct", "wct:one"]\npolicies = ["fcfs"]\n' + SUITE + TRACE,
         "name one objective twice"),
        ('objectives = ["cmax"]\npolicies = ["easy", "easy"]\n' + SUITE + TRACE,
         ":2: policies: easy listed twice"),
        ('objectives = "cmax"\npolicies = ["easy"]\n' + SUITE + TRACE,
         "objectives must be a list of strings"),
        ('objectives = ["cmax"]\npolicies = ["easy", "fifo-ish"]\n' + SUITE + TRACE,
         ":2: policies: unknown policy 'fifo-ish'; valid names: "),
        ('objectives = ["cmax"]\npolicies = ["sjf", "fcfs", "spt"]\n' + SUITE + TRACE,
         ":2: policies: 'sjf' and 'spt' are one policy (spt)"),
        (HEAD + SUITE + TRACE.replace("\n\n", '\nformat = "csv"\n'),
         ":10: [[traces]] format 'csv' is not one of swf, json, batsim, strip"),
        (HEAD + SUITE + TRACE.replace("\n\n", "\nprocessors = 0\n"),
         ":10: [[traces]] processors must be an integer in [1, 2**53], got 0"),
        (HEAD + SUITE + TRACE.replace("\n\n", "\nprocessors = true\n"),
         ":10: [[traces]] processors must be an integer in [1, 2**53], got True"),
        (HEAD + SUITE + TRACE.replace("\n\n", '\nallocation = "packed"\n'),
         ":10: [[traces]] allocation 'packed' is not one of any, contiguous"),
        (HEAD + TRACE, "missing [suite] table"),
        (HEAD + '[suite]\nname = ""\n' + TRACE, "name must not be empty"),
        (HEAD + SUITE, "the suite has no [[traces]]"),
        (HEAD + SUITE + TRACE + SOLVER.replace("cpsat", "gurobi"),
         ":12: [[solvers]] unknown back-end 'gurobi'; valid back-ends: cpsat"),
        (HEAD + SUITE + TRACE + SOLVER.replace("5", "-1"),
         ":13: [[solvers]] time_limit must be a positive number of seconds"),
        (HEAD + SUITE + TRACE + SOLVER + "workers = 0\n",
         ":14: [[solvers]] workers must be an integer in [1, 1024], got 0"),
        (HEAD + SUITE + TRACE + SOLVER + SOLVER, "same back-end settings twice"),
        (HEAD + "seeds = [1]\n" + SUITE + TRACE + WINDOWS,
         ":4: seeds apply to random windows only"),
        (HEAD + SUITE + TRACE + "[windows]\nkind = 'whole'\n[windows]\n",
         "invalid TOML"),
    ],
)  # fmt: skip
def test_invalid_suites(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in _error(tmp_path, text)


def test_toml_syntax_error_has_a_line(tmp_path: Path) -> None:
    message = _error(tmp_path, HEAD + SUITE + "[[traces]\npath = 1\n")
    assert message.startswith(f"{tmp_path / 'suite.toml'}:7: invalid TOML")


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "colour = 1\n" + SUITE + TRACE,
        HEAD + SUITE + TRACE.replace(TINY_SHA, "f" * 64),
        HEAD + SUITE + TRACE.replace('"tiny.swf"', '"missing.swf"'),
    ],
)
def test_cli_parse_errors_are_one_line_and_exit_2(tmp_path: Path, text: str) -> None:
    suite = write_suite(tmp_path, text)
    store = tmp_path / "results.sqlite"
    result = CliRunner().invoke(main, ["bench", str(suite), "--store", str(store)])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"optsched: error: {suite}:")
    assert not store.exists()


def test_shipped_suites_parse_and_expand(traces_dir: Path) -> None:
    smoke = load_suite(REPO / "benchmarks" / "suites" / "smoke.toml")
    assert smoke.policies == ("fcfs", "easy", "conservative")
    assert smoke.objectives == ("cmax", "wct:one")
    assert [s.backend for s in smoke.solvers] == ["cpsat"]
    (trace,) = smoke.traces
    assert trace.path == "pwa:KTH-SP2-1996-2.1-cln"  # the cached copy of:
    assert trace.file.read_bytes() == (traces_dir / trace.file.name).read_bytes()
    assert trace.pinned
    # 3 windows x (3 policies + 2 objectives x 1 back-end).
    assert len(expand(smoke).tasks) == 3 * (3 + 2 * 1)
    kth = load_suite(REPO / "benchmarks" / "suites" / "kth.toml")
    assert kth.windows.jobs == 100
    assert kth.objectives == ("cmax", "wct:one")
    assert kth.traces[0].sha256 == trace.sha256
    tasks = expand(kth).tasks
    assert len({t.window for t in tasks}) == kth.windows.count
    assert len(tasks) == kth.windows.count * (len(kth.policies) + 2 * 1)


def test_a_trace_is_read_once_from_load_to_expansion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loading validates each trace by reading it; expansion reuses that read."""
    import optsched.io
    import optsched.io.swf

    reads: list[Path] = []

    def counted(real: Any) -> Any:
        def counting(path: Path, *args: object, **kwargs: object) -> object:
            reads.append(Path(path))
            return real(path, *args, **kwargs)

        return counting

    # Either reader: optsched.windows.prepare.read_source reads SWF files
    # with read_swf (it filters statuses itself), the others with read_trace.
    monkeypatch.setattr(optsched.io, "read_trace", counted(optsched.io.read_trace))
    monkeypatch.setattr(optsched.io.swf, "read_swf", counted(optsched.io.swf.read_swf))
    plan = expand(load_suite(SUITES / "tiny.toml"))
    assert len(reads) == 1 and reads[0].name == "tiny.swf"
    assert plan.tasks
    # Loading again reads the file again (it may have changed), still once.
    expand(load_suite(SUITES / "tiny.toml"))
    assert len(reads) == 2
