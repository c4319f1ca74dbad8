"""Issue 17, part B: interrupts, signals, orphans and concurrent stores.

* SIGINT and SIGTERM stop ``bench`` and ``gap`` within seconds, even in the
  middle of a long CP-SAT solve (exit status 130 / 143, one line, no
  traceback); the solve cut short is stored as provisional and a resume
  computes it again.
* A time-starved solve is stored as provisional too.
* Pool workers die with their parent, even on SIGKILL.
* Two runs sharing a store compute each task once.
* ``--deterministic`` makes CP-SAT runs with a binding limit repeatable.
* A schema-2 store is migrated, its interrupted rows made provisional.

The long solves use ``instances/kth_50.json`` for ``wct``, which CP-SAT does
not prove optimal within a minute: a run that stops within the test's
timeouts (far below the limit) was stopped by the signal.
"""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from support.paths import DATA, REPO, TESTS

from optsched.bench import Store, run_suite
from optsched.bench.executor import Interrupted
from optsched.bench.store import BUSY, CLAIMED, COLUMNS, DONE, LEASE
from optsched.bench.tasks import Task, starved
from optsched.cli import main
from optsched.instance import Instance

KTH_50 = REPO / "instances" / "kth_50.json"
TINY = DATA / "suites" / "tiny.toml"
OPTSCHED = [str(Path(sys.executable).with_name("optsched"))]
LINUX = sys.platform.startswith("linux")


def long_suite(tmp_path: Path, *, windows: int = 1, limit: int = 60) -> Path:
    """fcfs and easy, then one CP-SAT wct solve per window that runs to
    ``limit`` seconds (unproven)."""
    rule = (
        'kind = "consecutive"\njobs = 50\ncount = 1'
        if windows == 1
        else f'kind = "random"\njobs = 45\ncount = {windows}\nseed = 1'
    )
    path = tmp_path / "long.toml"
    path.write_text(
        'policies = ["fcfs", "easy"]\nobjectives = ["wct"]\n\n'
        '[suite]\nname = "long"\n\n'
        f'[[traces]]\npath = "{KTH_50}"\n\n'
        f"[windows]\n{rule}\n\n"
        f'[[solvers]]\nbackend = "cpsat"\ntime_limit = {limit}\nworkers = 1\n'
    )
    return path


def bench(suite: Path, store: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*OPTSCHED, "bench", str(suite), "--store", str(store), "--no-progress",
         *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )  # fmt: skip


def wait_for(condition: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def query(store: Path, sql: str) -> list[tuple[Any, ...]]:
    if not store.exists():
        return []
    db = sqlite3.connect(store, timeout=30)
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []  # not created yet
    finally:
        db.close()


def solving(store: Path) -> bool:
    """The run claimed its (only) solver task: the policies are stored."""
    policies = query(store, "SELECT COUNT(*) FROM tasks WHERE kind = 'policy'")
    claims = query(store, "SELECT COUNT(*) FROM claims")
    return bool(policies) and policies[0][0] == 2 and claims[0][0] == 1


def only_line(text: str) -> str:
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1, text
    return lines[0]


# --------------------------------------------------------------------------
# SIGINT and SIGTERM: bench, gap, the library
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
)
def test_a_signal_stops_bench_mid_solve_and_the_solve_is_provisional(
    tmp_path: Path, signum: int, status: int
) -> None:
    store = tmp_path / "r.sqlite"
    process = bench(long_suite(tmp_path), store)
    try:
        wait_for(lambda: solving(store))
        time.sleep(1.0)  # inside CP-SAT's search (the model takes < 0.5 s)
        process.send_signal(signum)
        _, err = process.communicate(timeout=20)  # the limit is 60 s
    finally:
        process.kill()
    name = signal.Signals(signum).name
    assert process.returncode == status
    assert only_line(err) == f"optsched: interrupted ({name})"
    rows = query(
        store, "SELECT kind, status, interrupted, incomplete FROM tasks ORDER BY kind"
    )
    assert rows[:2] == [("policy", "OK", 0, None)] * 2
    assert rows[2:] == [("solver", "FEASIBLE", 1, f"interrupted by {name}")]
    assert query(store, "SELECT COUNT(*) FROM claims") == [(0,)]
    # A resume computes the provisional solve again, and only it.
    calls: list[str] = []
    summary = run_suite(long_suite(tmp_path), store, task_function=counting(calls))
    assert (summary.skipped, summary.ran, summary.provisional) == (2, 1, 0)
    assert calls == ["solver"]
    with Store(store) as results:
        assert len(results.done_ids()) == 3
        assert results.provisional_ids() == set()


def counting(calls: list[str]) -> Any:
    """A quick stand-in task function that lists the kinds it ran."""
    from support.bench import fake

    def run(task: Task, instance: Instance) -> dict[str, Any]:
        calls.append(task.kind)
        return fake(task, instance)

    return run


def test_gap_stops_on_sigterm_mid_solve(tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    process = subprocess.Popen(
        [*OPTSCHED, "gap", str(KTH_50), "--window-jobs", "50", "--policies",
         "fcfs", "--objective", "wct", "--time-limit", "60", "--no-progress",
         "--store", str(tmp_path / "g.sqlite"), "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        store = tmp_path / "g.sqlite"
        wait_for(lambda: query(store, "SELECT COUNT(*) FROM claims") == [(1,)])
        wait_for(
            lambda: (
                query(store, "SELECT COUNT(*) FROM tasks WHERE kind='policy'") == [(1,)]
            )
        )
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 143
    assert "Traceback" not in err
    assert "optsched: interrupted: 0 of 1 window(s) finished" in err
    # The window is not finished: its solve was cut short.
    assert out.read_text().count("\n") == 1  # the header only


def test_library_ctrl_c_returns_the_best_so_far_and_keeps_ctrl_c_working() -> None:
    # models.solve in a plain script: CP-SAT catches Ctrl-C, the result is
    # marked interrupted; afterwards Ctrl-C raises KeyboardInterrupt again
    # (CP-SAT used to leave SIGINT at SIG_DFL: the next one killed Python).
    code = (
        "import os, signal, threading, time\n"
        # A run started in the background of a non-interactive shell (as CI
        # may be) inherits SIGINT ignored; a script run by a user has
        # Python's handler.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from optsched.io import read\n"
        "from optsched.models import solve\n"
        f"instance = read({str(KTH_50)!r})\n"
        "import optsched.models.rigid.cpsat as cpsat\n"
        "def ctrl_c():\n"
        # Once CP-SAT runs (its solver registered, then a second for it to
        # install its handler): a signal in the instant between the call and
        # CP-SAT's handler waits, in Python, for the solve to end.
        "    while not list(cpsat._SOLVERS):\n"
        "        time.sleep(0.05)\n"
        "    time.sleep(1.5)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "threading.Thread(target=ctrl_c, daemon=True).start()\n"
        "began = time.perf_counter()\n"
        "result = solve(instance, 'wct', time_limit=60, workers=2)\n"
        "print(result.status, result.interrupted, result.schedule is not None,\n"
        "      time.perf_counter() - began < 30)\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(5)\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "FEASIBLE", "True", "True", "True", "KeyboardInterrupt",
    ]  # fmt: skip


def interrupted_solver(task: Task, instance: Instance) -> dict[str, Any]:
    """A stand-in solver that is Ctrl-C'd and returns its best so far, as
    CP-SAT and HiGHS do; policies as the stub."""
    from support.bench import fake

    row = fake(task, instance)
    if task.kind != "solver":
        return row
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(10)
    except KeyboardInterrupt:
        return {**row, "interrupted": 1}
    raise AssertionError("no KeyboardInterrupt")


def test_the_solve_in_flight_is_stored_provisional_then_recomputed(
    tmp_path: Path,
) -> None:
    store = tmp_path / "r.sqlite"
    with pytest.raises(Interrupted) as caught:
        run_suite(TINY, store, task_function=interrupted_solver)
    assert caught.value.signum == signal.SIGINT
    assert caught.value.exit_status == 130
    rows = query(store, "SELECT kind, interrupted, incomplete FROM tasks ORDER BY kind")
    # Window 0: two policies, then the first solver task, cut short.
    assert rows == [("policy", 0, None)] * 2 + [("solver", 1, "interrupted by SIGINT")]
    calls: list[str] = []
    summary = run_suite(TINY, store, task_function=counting(calls))
    assert (summary.total, summary.skipped, summary.ran) == (12, 2, 10)
    assert calls.count("solver") == 6  # the cut one again, and the others
    assert query(store, "SELECT COUNT(*) FROM tasks WHERE incomplete IS NULL") == [
        (12,)
    ]


# --------------------------------------------------------------------------
# Time-starved solves
# --------------------------------------------------------------------------


def test_starved_rule() -> None:
    # Proven, or stopped well before the limit: never starved.
    assert starved("OPTIMAL", 10, 2, 10.0, 0.1, 0.5) is None
    assert starved("FEASIBLE", 10, 2, 5.0, 0.1, 0.5) is None
    # The search itself ran less than half the limit.
    assert starved("FEASIBLE", 10, 1, 10.0, 10.0, 4.9) == (
        "time-starved: the search ran 4.9 s (limit 10 s, wall 10.0 s, "
        "CPU 10.0 s, 1 worker(s))"
    )
    # Too little CPU for the threads asked for (on a machine with >= 1 CPU).
    assert starved("UNKNOWN", 10, 1, 10.0, 2.4, 9.5) == (
        "time-starved: too little CPU (limit 10 s, wall 10.0 s, CPU 2.4 s, 1 worker(s))"
    )
    assert starved("FEASIBLE", 10, 1, 10.0, 2.6, 9.5) is None
    assert starved("FEASIBLE", 10, 1, 10.0, 9.0, None) is None  # not CP-SAT
    # The limit was spent before CP-SAT could search at all.
    assert starved("FEASIBLE", 10, 1, 10.0, 9.0, 0.0).startswith(
        "time-starved: the search ran 0.0 s"
    )


def test_a_solve_whose_limit_went_into_building_is_provisional(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from optsched.models.rigid import cpsat

    class SlowModel(cpsat._Model):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            time.sleep(1.5)  # of a 2 s limit: the search gets about 0.5 s
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(cpsat, "_Model", SlowModel)
    suite = long_suite(tmp_path, limit=2)
    store = tmp_path / "r.sqlite"
    summary = run_suite(suite, store)
    assert (summary.ran, summary.provisional) == (3, 1)
    ((status, interrupted, why),) = query(
        store, "SELECT status, interrupted, incomplete FROM tasks WHERE kind='solver'"
    )
    assert (status, interrupted) == ("FEASIBLE", 0)
    # The search ran about 0.5 s (and the process slept meanwhile).
    assert why.startswith("time-starved: ")
    calls: list[str] = []
    again = run_suite(suite, store, task_function=counting(calls))
    assert (again.skipped, again.ran, calls) == (2, 1, ["solver"])


# --------------------------------------------------------------------------
# Orphans
# --------------------------------------------------------------------------


def children(pid: int) -> set[int]:
    """Live (not zombie) child processes of ``pid``, from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not LINUX, reason="reads /proc; PR_SET_PDEATHSIG is Linux's")
def test_workers_and_resource_tracker_die_with_a_killed_parent(
    tmp_path: Path,
) -> None:
    store = tmp_path / "r.sqlite"
    process = bench(long_suite(tmp_path, windows=2), store, "--workers", "2")
    try:
        # Both workers solving (their window's policies are stored).
        wait_for(
            lambda: (
                query(store, "SELECT COUNT(*) FROM tasks WHERE kind='policy'") == [(4,)]
            )
        )
        wait_for(lambda: len(children(process.pid)) >= 3)  # 2 workers, tracker
        kids = children(process.pid)
        time.sleep(1.0)
        process.kill()
        process.wait(timeout=10)
        wait_for(lambda: not any(alive(pid) for pid in kids), timeout=10)
    finally:
        process.kill()
        for pid in children(process.pid):
            os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------
# Concurrent runs on one store
# --------------------------------------------------------------------------


def test_two_runs_on_one_store_compute_each_task_once(tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    log = tmp_path / "log"
    code = (
        "from optsched.bench import run_suite\n"
        "from support.bench import logging_task\n"
        f"s = run_suite({str(TINY)!r}, {str(store)!r}, task_function=logging_task)\n"
        "print(s.ran, s.elsewhere, s.remaining)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS), "OPTSCHED_TEST_LOG": str(log)}
    Store(store).close()  # created once, before both open it
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    for run, (_, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    computed = log.read_text().split()
    assert len(computed) == 12 == len(set(computed))
    counts = [tuple(map(int, out.split())) for out, _ in outputs]
    assert sum(ran for ran, _, _ in counts) == 12
    assert all(remaining == 0 for _, _, remaining in counts)
    assert query(store, "SELECT COUNT(*) FROM tasks") == [(12,)]
    assert query(store, "SELECT COUNT(*) FROM claims") == [(0,)]


def test_claims(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path) as mine, Store(path) as other:
        assert mine.claim("a") == CLAIMED
        assert mine.claim("a") == CLAIMED  # ours already
        assert other.claim("a") == BUSY  # a live process holds it
        db = sqlite3.connect(path)
        # A claim whose heartbeat is older than the lease is taken over...
        db.execute("UPDATE claims SET heartbeat = ?", (time.time() - LEASE - 1,))
        db.commit()
        assert other.claim("a") == CLAIMED
        # ... and so is one of a dead process of this host.
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout  # fmt: skip
        db.execute("UPDATE claims SET pid = ?", (int(gone),))
        db.commit()
        db.close()
        assert mine.claim("a") == CLAIMED
        from support.bench import policy

        mine.insert(policy("a", "fcfs", {"cmax": 1.0}))
        assert other.claim("a") == DONE
        assert query(path, "SELECT task_id FROM claims") == []
    assert query(path, "SELECT COUNT(*) FROM claims") == [(0,)]  # released


# --------------------------------------------------------------------------
# Deterministic mode
# --------------------------------------------------------------------------


def test_deterministic_gap_rows_are_identical_with_a_binding_limit(
    tmp_path: Path,
) -> None:
    outputs = []
    for run in range(2):
        out = tmp_path / f"rows{run}.csv"
        result = CliRunner().invoke(
            main,
            ["gap", str(KTH_50), "--window-jobs", "50", "--policies", "fcfs,easy",
             "--objective", "wct", "--time-limit", "0.5", "--workers", "2",
             "--deterministic", "--no-progress", "-o", str(out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    frame = pd.read_csv(io.StringIO(outputs[0]))
    assert len(frame) == 2
    assert not frame["optimal"].any()  # the limit binds
    assert (frame["lower"] < frame["upper"]).all()


def test_deterministic_is_a_solver_task_parameter() -> None:
    from optsched.bench.suite import load_suite
    from optsched.bench.tasks import expand

    default, fixed = (
        expand(load_suite(TINY), deterministic=d).tasks for d in (False, True)
    )
    solvers = [
        (a, b) for a, b in zip(default, fixed, strict=True) if a.kind == "solver"
    ]
    assert all(b.params == {**a.params, "deterministic": True} for a, b in solvers)
    assert all(a.task_id != b.task_id for a, b in solvers)
    policies = [
        (a, b) for a, b in zip(default, fixed, strict=True) if a.kind == "policy"
    ]
    assert all(a == b for a, b in policies)


# --------------------------------------------------------------------------
# Schema 2 stores
# --------------------------------------------------------------------------


def test_a_schema_2_store_is_migrated_and_its_interrupted_rows_rerun(
    tmp_path: Path,
) -> None:
    from support.bench import policy, solver

    path = tmp_path / "v2.sqlite"
    v2 = [(name, kind) for name, kind in COLUMNS if name != "incomplete"]
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (2)")
    db.execute(
        "CREATE TABLE tasks ("
        + ", ".join(f'"{name}" {kind}' for name, kind in v2)
        + ")"
    )
    db.execute('CREATE TABLE instances ("sha256" TEXT PRIMARY KEY, "instance" TEXT)')
    defaults = {"killed": 0, "lost_work": 0.0, "interrupted": 0}
    for record in (
        policy("a", "fcfs", {"cmax": 1.0}),
        solver("b", 1.0, 2.0, interrupted=1),  # Ctrl-C'd, stored as if done
    ):
        values = [
            defaults[name] if record[name] is None and name in defaults
            else record[name]
            for name, _ in v2
        ]  # fmt: skip
        db.execute(f"INSERT INTO tasks VALUES ({', '.join('?' * len(v2))})", values)
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.done_ids() == {"a"}
        assert store.provisional_ids() == {"b"}
        rows = store.rows().set_index("task_id")
        assert rows.loc["b", "incomplete"] == "interrupted"
    assert query(path, "SELECT version FROM schema_version") == [(3,)]
    assert query(path, "SELECT COUNT(*) FROM claims") == [(0,)]
    # The next run replaces the provisional row; a final row stays.
    with Store(path) as store:
        assert store.insert(solver("b", 1.5, 2.0))
        assert not store.insert(solver("b", 0.0, 9.0))
        assert store.done_ids() == {"a", "b"}
    assert query(path, "SELECT lower, incomplete FROM tasks WHERE task_id = 'b'") == [
        (1.5, None)
    ]
