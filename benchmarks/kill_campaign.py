"""Kill/interrupt campaign: ``optsched bench`` killed at random, then resumed.

Runs a small suite (default: 6 random 45-job windows of
``instances/kth_50.json`` x fcfs, easy, conservative x CP-SAT on ``wct``
with a 20 s limit, 24 tasks) once without interruption, then again into a
fresh store while sending SIGINT, SIGTERM and SIGKILL at random moments
(``--kills`` in all, in a seeded random order), resuming after each, and
running it to the end after the last kill. Runs alternate between
``--workers 1`` and ``--workers 2``.

Each run is ``optsched bench`` (the click command, exit statuses included)
with the production task function wrapped to log when each computation
starts and ends, by which process, and whether the task was already stored
for good when it started. At the end it reports:

* rows lost: tasks of the uninterrupted run missing from the final store, or
  a final row that disappeared between two runs;
* truncated rows stored as complete: final solver rows (``incomplete`` NULL)
  that are unproven although their solve stopped before 90 % of its limit,
  in the store after any run;
* duplicate computations: a computation started although the task was
  already stored for good, or overlapping another process's computation of
  the same task (an orphan worker still at it);
* orphans: worker processes alive 3 s after their parent's SIGKILL;
* the exit status of each run and, for SIGINT/SIGTERM, seconds from the
  signal to the exit;
* policy rows equal to the uninterrupted run's (values, metrics, schedule),
  every stored schedule valid (:func:`optsched.check.check_schedule`).

Usage (about 6 minutes)::

    .venv/bin/python benchmarks/kill_campaign.py --kills 12 --seed 1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO / "instances" / "kth_50.json"
PROVEN = ("OPTIMAL", "INFEASIBLE")


# --------------------------------------------------------------------------
# The run (a child process): optsched bench with a logging task function
# --------------------------------------------------------------------------


def logged_task(task: Any, instance: Any) -> dict[str, Any]:
    """The production task function, logging its start and end."""
    from optsched.bench.tasks import execute_task

    execute_task = _REAL.get("execute_task", execute_task)  # in-process runs
    log = os.environ["KILL_CAMPAIGN_LOG"]
    done = _final(os.environ["KILL_CAMPAIGN_STORE"], task.task_id)
    _log(log, "start", task.task_id, done)
    row = execute_task(task, instance)
    _log(log, "end", task.task_id, False)
    return row


def _final(store: str, task_id: str) -> bool:
    db = sqlite3.connect(store, timeout=30)
    try:
        found = db.execute(
            "SELECT 1 FROM tasks WHERE task_id = ? AND incomplete IS NULL", (task_id,)
        ).fetchone()
    finally:
        db.close()
    return found is not None


def _log(path: str, event: str, task_id: str, done: bool) -> None:
    line = f"{event} {task_id} {os.getpid()} {time.time():.3f} {int(done)}\n"
    with open(path, "a") as handle:
        handle.write(line)


_REAL: dict[str, Any] = {}
"""The task function :func:`run_bench` replaced (workers import the real one)."""


def run_bench(suite: str, store: str, workers: str) -> None:
    """``optsched bench`` with :func:`logged_task` as its task function."""
    import optsched.bench.tasks
    from optsched.cli import main

    os.environ["KILL_CAMPAIGN_STORE"] = store
    _REAL["execute_task"] = optsched.bench.tasks.execute_task
    optsched.bench.tasks.execute_task = logged_task
    main(
        ["bench", suite, "--store", store, "--workers", workers, "--no-progress"],
        prog_name="optsched",
    )


# --------------------------------------------------------------------------
# The campaign
# --------------------------------------------------------------------------


def write_suite(folder: Path, windows: int, limit: float) -> Path:
    path = folder / "campaign.toml"
    path.write_text(
        'policies = ["fcfs", "easy", "conservative"]\nobjectives = ["wct"]\n\n'
        '[suite]\nname = "kill-campaign"\n\n'
        f'[[traces]]\npath = "{TRACE}"\n\n'
        f'[windows]\nkind = "random"\njobs = 45\ncount = {windows}\nseed = 1\n\n'
        f'[[solvers]]\nbackend = "cpsat"\ntime_limit = {limit}\nworkers = 1\n'
    )
    return path


def start(suite: Path, store: Path, workers: int, log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "KILL_CAMPAIGN_LOG": str(log)}
    return subprocess.Popen(
        [sys.executable, __file__, "--run", str(suite), str(store), str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def snapshot(store: Path) -> dict[str, tuple[Any, ...]]:
    """task_id -> (kind, status, runtime, incomplete) of every stored row."""
    if not store.exists():
        return {}
    db = sqlite3.connect(store, timeout=30)
    try:
        rows = db.execute(
            "SELECT task_id, kind, status, runtime, incomplete FROM tasks"
        ).fetchall()
    except sqlite3.OperationalError:
        rows = []
    finally:
        db.close()
    return {r[0]: r[1:] for r in rows}


def truncated(rows: dict[str, tuple[Any, ...]], limit: float) -> set[str]:
    """Final solver rows, unproven, whose solve stopped well before its limit."""
    return {
        task_id
        for task_id, (kind, status, runtime, incomplete) in rows.items()
        if kind == "solver"
        and incomplete is None
        and status not in PROVEN
        and status != "ERROR"
        and runtime < 0.9 * limit
    }


def duplicates(log: Path) -> list[str]:
    """Computations of a task already done, or overlapping another's."""
    events = [line.split() for line in log.read_text().splitlines()]
    found = [
        f"{task_id} started though stored"
        for event, task_id, _, _, done in events
        if event == "start" and done == "1"
    ]
    running: dict[str, set[str]] = {}
    for event, task_id, pid, _, _ in events:
        if event == "start":
            others = [p for p in running.get(task_id, {}) if p != pid and alive(int(p))]
            if others:
                found.append(f"{task_id} computed by {pid} while {others} still at it")
            running.setdefault(task_id, set()).add(pid)
        else:
            running.get(task_id, set()).discard(pid)
    return found


class _Campaign:
    """The killed runs of one store, and what they left."""

    def __init__(self, suite: Path, folder: Path, limit: float) -> None:
        self.suite = suite
        self.store, self.log = folder / "killed.sqlite", folder / "killed.log"
        self.log.touch()
        self.limit = limit
        self.runs: list[dict[str, Any]] = []
        self.lost: set[str] = set()
        self.cut: set[str] = set()
        self.orphans = 0
        self.rows: dict[str, tuple[Any, ...]] = {}
        self.workers = 1

    def killed_run(self, signum: int, delay: float) -> bool:
        """A run sent ``signum`` after ``delay`` s; ``False`` if it finished
        the suite before."""
        process = self._start()
        time.sleep(delay)
        kids = children(process.pid)
        if process.poll() is not None:
            self._finish(process, {"signal": "none", "after": round(delay, 1)})
            return False
        sent = time.perf_counter()
        process.send_signal(signum)
        process.wait()
        record = {
            "signal": signal.Signals(signum).name,
            "after": round(delay, 1),
            "stop_seconds": round(time.perf_counter() - sent, 2),
        }
        if signum == signal.SIGKILL:
            time.sleep(3.0)
            self.orphans += sum(alive(pid) for pid in kids)
            for pid in kids:  # clean up, whatever the outcome
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self._finish(process, record)
        return True

    def full_run(self) -> bool:
        """A run to the end; ``True`` when the store is complete and final."""
        process = self._start()
        process.wait()
        self._finish(process, {})
        final = [r for r in self.rows.values() if r[3] is None]
        return process.returncode in (0, 1) and len(final) == len(self.rows)

    def _start(self) -> subprocess.Popen[str]:
        workers = 1 + len(self.runs) % 2
        self.workers = workers
        return start(self.suite, self.store, workers, self.log)

    def _finish(self, process: subprocess.Popen[str], record: dict[str, Any]) -> None:
        err = process.stderr.read() if process.stderr else ""
        before = {t for t, r in self.rows.items() if r[3] is None}
        self.rows = snapshot(self.store)
        final = {t for t, r in self.rows.items() if r[3] is None}
        self.lost |= before - final  # a final row never goes away
        self.cut |= truncated(self.rows, self.limit)
        self.runs.append(
            {
                "workers": self.workers,
                **record,
                "exit": process.returncode,
                "traceback": "Traceback" in err,
                "final_rows": len(final),
                "provisional_rows": len(self.rows) - len(final),
            }
        )


def run_campaign(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="kill-campaign-"))
    suite = write_suite(folder, args.windows, args.limit)
    reference_store = folder / "reference.sqlite"
    began = time.perf_counter()
    process = start(suite, reference_store, 2, folder / "reference.log")
    _, err = process.communicate()
    reference_seconds = time.perf_counter() - began
    if process.returncode != 0:
        raise SystemExit(f"reference run failed ({process.returncode}): {err}")
    plan = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL] * (args.kills // 3 + 1)
    plan = plan[: args.kills]
    rng.shuffle(plan)
    campaign = _Campaign(suite, folder, args.limit)
    for signum in plan:
        # After the interpreter's start-up (about 2 s): a signal during the
        # imports, before any handler, is Python's own business.
        if not campaign.killed_run(int(signum), rng.uniform(3.0, args.max_delay)):
            break  # the suite is done: nothing left to interrupt
    # Provisional rows left (time-starved solves on a loaded machine) are
    # computed again by the next run; a few runs at most.
    for _ in range(4):
        if campaign.full_run():
            break
    reference = snapshot(reference_store)
    rows = campaign.rows
    return {
        "folder": str(folder),
        "tasks": len(reference),
        "reference_seconds": round(reference_seconds, 1),
        "runs": campaign.runs,
        "rows_lost": sorted(campaign.lost | (set(reference) - set(rows))),
        "provisional_at_end": {t: r[3] for t, r in rows.items() if r[3] is not None},
        "provisional_in_reference": sum(r[3] is not None for r in reference.values()),
        "truncated_stored_as_complete": sorted(campaign.cut),
        "duplicate_computations": duplicates(campaign.log),
        "orphans_after_sigkill": campaign.orphans,
        "policy_rows_equal": _policy_rows_equal(reference_store, campaign.store),
        "invalid_schedules": _invalid_schedules(campaign.store),
    }


def _policy_rows_equal(reference: Path, store: Path) -> bool:
    query = (
        'SELECT task_id, status, "values", metrics, schedule FROM tasks '
        "WHERE kind = 'policy' ORDER BY task_id"
    )
    results = []
    for path in (reference, store):
        db = sqlite3.connect(path)
        results.append(db.execute(query).fetchall())
        db.close()
    return results[0] == results[1]


def _invalid_schedules(store: Path) -> int:
    from optsched.bench.store import Store
    from optsched.check import check_schedule
    from optsched.io.schedules import schedule_from_json

    bad = 0
    with Store(store, create=False) as results:
        for row in results.task_rows():
            if row.schedule_json and row.instance_sha256:
                instance = results.instance(row.instance_sha256)
                schedule = schedule_from_json(row.schedule_json, row.task_id)
                bad += bool(check_schedule(instance, schedule))
    return bad


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        run_bench(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--windows", type=int, default=6)
    parser.add_argument("--limit", type=float, default=20.0)
    parser.add_argument(
        "--max-delay", type=float, default=20.0, help="latest kill (s after start)"
    )
    args = parser.parse_args()
    report = run_campaign(args)
    for number, run in enumerate(report["runs"], 1):
        print(
            f"run {number:2d}: workers {run['workers']}, "
            + (
                f"{run['signal']} after {run['after']} s, exit {run['exit']}"
                + (
                    f" {run['stop_seconds']} s after the signal"
                    if "stop_seconds" in run
                    else " (finished before the signal)"
                )
                if "signal" in run
                else f"to the end, exit {run['exit']}"
            )
            + f"; {run['final_rows']} final + {run['provisional_rows']} provisional "
            f"rows{', TRACEBACK' if run['traceback'] else ''}"
        )
    kills = [r for r in report["runs"] if "stop_seconds" in r]
    soft = [r["stop_seconds"] for r in kills if r["signal"] != "SIGKILL"]
    print(f"tasks {report['tasks']}; uninterrupted run {report['reference_seconds']} s")
    print(f"kills {len(kills)}: " + ", ".join(
        f"{name} {sum(r['signal'] == name for r in kills)}"
        for name in ("SIGINT", "SIGTERM", "SIGKILL")
    ))  # fmt: skip
    print(f"slowest stop after SIGINT/SIGTERM: {max(soft, default=0):.2f} s")
    expected = {"SIGINT": 130, "SIGTERM": 143, "SIGKILL": -9}
    wrong = [r for r in kills if r["exit"] != expected[r["signal"]]]
    print(f"unexpected exit statuses: {len(wrong)}")
    print(f"rows lost: {len(report['rows_lost'])}")
    print(
        f"provisional rows at the end: {len(report['provisional_at_end'])} "
        f"(uninterrupted run: {report['provisional_in_reference']}; "
        "time-starved solves, recomputed on resume)"
    )
    print(
        "truncated rows stored as complete: "
        f"{len(report['truncated_stored_as_complete'])}"
    )
    print(f"duplicate computations: {len(report['duplicate_computations'])}")
    print(f"orphan workers 3 s after SIGKILL: {report['orphans_after_sigkill']}")
    print(
        f"policy rows equal to the uninterrupted run's: {report['policy_rows_equal']}"
    )
    print(f"invalid schedules: {report['invalid_schedules']}")
    (Path(report["folder"]) / "report.json").write_text(json.dumps(report, indent=1))
    print(f"details: {report['folder']}/report.json")


if __name__ == "__main__":
    main()
