"""Reliability campaign of issue 32: every command on a corpus of hostile inputs.

The corpus is rebuilt from the issue's description (devices and FIFOs as
outputs and stores, corrupt stores, values near ``2**53``, non-finite time
limits, huge machines, long CSV fields, lone surrogates, control characters,
a gzip bomb, processor ranges of ``10**12``, outages "forever", far
co-reservation deadlines, broken preceding-job links, inconsistent Batsim
files, out-of-range site, request and scenario values). Each case runs one
command as a separate process (``python -m optsched``), with an address-space
limit (``--memory``, default 2 GB) and a wall-clock limit (``--timeout``,
default 60 s), and is classified:

* ``traceback``: a Python traceback on stderr;
* ``hang``: killed at the time limit;
* ``memory``: a ``MemoryError`` or a peak resident size above the limit;
* ``silent``: an input the case marks invalid, answered with exit status 0
  and no ``note:`` line;
* ``wrong``: a case's own check failed (``/dev/null`` no longer a device, an
  SVG that is not XML, a valid input refused);
* ``unlocated``: the message audit. A refusal (exit status 2) caused by a
  file's content whose one line does not start with ``file:line:`` (or
  ``file:`` for a fault of the whole file: empty, binary, a broken gzip
  stream), or a write fault of a full disk whose line does not name the
  output file. The corpus of the audit is ``tests/support/message_corpus.py``
  (one spoiled file per format and kind of fault, shared with the fast test
  ``tests/cli/test_reliability_messages.py``); the full disk is a 64 KiB
  tmpfs, mounted when the campaign may (as root), skipped otherwise;
* ``ok`` otherwise.

Usage (about 5 minutes)::

    .venv/bin/python benchmarks/reliability_campaign.py [--timeout 60] [--memory 2048]

Prints one Markdown table (counts per outcome, the audited refusals among
the runs) and one line per case that is not ``ok``; exit status 1 when any.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import resource
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import xml.dom.minidom
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the audit's corpus lives with the tests
from support.message_corpus import ERROR, message_corpus  # noqa: E402

INSTANCE = REPO / "instances" / "kth_20.json"
TINY_SUITE = REPO / "tests" / "data" / "suites" / "tiny.toml"
REQUEST = REPO / "tests" / "data" / "coreserve" / "two_clusters.json"


@dataclass
class Case:
    """One command on one input, and what a correct answer looks like."""

    name: str
    args: list[str]
    invalid: bool
    check: Callable[[int, str], bool] = field(default=lambda code, err: True)
    located_as: str | None = None
    """How a refusal's line must start (after ``optsched: error: ``): the
    file and line at fault, or the output file a write fault is about;
    ``None``: not audited."""

    def unlocated(self, code: int, stderr: str) -> bool:
        """Whether a refusal misses the location the case requires."""
        if self.located_as is None or code != 2:
            return False
        last = (stderr.strip().splitlines() or [""])[-1]
        return not last.startswith(ERROR + self.located_as)


@dataclass
class Run:
    case: Case
    code: int | None
    stderr: str
    seconds: float
    peak_mb: float

    def outcome(self, timeout: float, memory_mb: float) -> str:
        if self.code is None:
            return "hang"
        if "Traceback (most recent call last)" in self.stderr:
            return "traceback"
        if "MemoryError" in self.stderr or self.peak_mb > memory_mb:
            return "memory"
        if self.case.invalid and self.code == 0 and "note:" not in self.stderr:
            return "silent"
        if not self.case.invalid and self.code != 0:
            return "wrong"
        if not self.case.check(self.code, self.stderr):
            return "wrong"
        if self.case.unlocated(self.code, self.stderr):
            return "unlocated"
        return "ok"


def _swf(path: Path, jobs: list[tuple[int, int, int, int]], m: int = 4) -> str:
    """``jobs``: (id, submit, run time, preceding job)."""
    lines = [f"; MaxProcs: {m}"]
    for k, submit, run, before in jobs:
        fields = [k, submit, 0, run, 1, -1, -1, 1, run, -1, 1, 1, 1, 1, 1, 1, before, 5]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _native(path: Path, change: Callable[[dict], None]) -> str:
    data = json.loads(INSTANCE.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return str(path)


def _schedule_rows(folder: Path) -> list[list[str]]:
    import csv

    out = folder / "easy.csv"
    command = ["simulate", str(INSTANCE), "-p", "easy", "-o", str(out)]
    subprocess.run(
        [sys.executable, "-m", "optsched", *command],
        capture_output=True,
        check=True,
    )
    with out.open(newline="") as handle:
        return list(csv.reader(handle))


def _csv(path: Path, rows: list[list[str]]) -> str:
    import csv

    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return str(path)


def _is_char_device(path: str) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode) and not os.path.lexists(path + ".json")


def output_cases(d: Path) -> list[Case]:
    """Outputs and stores: devices, FIFOs, corrupt and foreign files."""
    fifo = d / "out.fifo"
    os.mkfifo(fifo)
    text = d / "notes.txt"
    text.write_text("not a store\n")
    foreign = d / "other.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE x (a)")
    db.commit()
    db.close()
    cut = d / "cut.sqlite"
    cut.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    null_ok: Callable[[int, str], bool] = lambda code, err: _is_char_device("/dev/null")  # noqa: E731
    cases = [
        Case(
            "simulate -o /dev/null",
            ["simulate", str(INSTANCE), "-p", "easy", "-o", "/dev/null"],
            False,
            null_ok,
        ),
        Case(
            "simulate -o FIFO without reader",
            ["simulate", str(INSTANCE), "-p", "easy", "-o", str(fifo)],
            True,
        ),
        Case(
            "bench --store /dev/null",
            ["bench", str(TINY_SUITE), "--store", "/dev/null"],
            True,
            lambda code, err: (
                _is_char_device("/dev/null") and not os.path.exists("/dev/null-journal")
            ),
        ),
        Case(
            "bench --store a folder",
            ["bench", str(TINY_SUITE), "--store", str(d)],
            True,
        ),
    ]
    for store in (text, foreign, cut, fifo):
        cases += [
            Case(
                f"bench --store {store.name}",
                ["bench", str(TINY_SUITE), "--store", str(store)],
                True,
            ),
            Case(
                f"report {store.name}",
                ["report", str(store), "-o", str(d / "r.html")],
                True,
            ),
            Case(
                f"export {store.name}",
                ["export", str(store), "-o", str(d / "r.csv")],
                True,
            ),
        ]
    return cases


def extreme_cases(d: Path) -> list[Case]:
    """Values near 2**53, non-finite limits, huge machines and inputs."""
    odd = _swf(d / "odd.swf", [(1, 2**53 - 1, 0, -1), (2, 0, 1, -1)])
    beyond = _swf(d / "beyond.swf", [(1, 2**52, 2**52 + 2, -1), (2, 0, 5, -1)])
    nodes = _native(
        d / "nodes.json",
        lambda x: x["machine"].update(
            processors=2**40, nodes={"count": 2**20, "cpus": 2**20}
        ),
    )
    surrogate = d / "surrogate.json"
    surrogate.write_text(
        INSTANCE.read_text().replace('"name": "', '"name": "\\ud800', 1)
    )
    outage = _native(
        d / "outage.json",
        lambda x: x["machine"].update(
            outages=[{"start": 1000, "end": 2**53 - 5, "size": 100}]
        ),
    )
    bomb = d / "bomb.swf.gz"
    with gzip.open(bomb, "wb") as stream:
        stream.write(b"; MaxProcs: 4\n")
        for _ in range(40):
            stream.write(b"\n" * (1 << 24))
    i = str(INSTANCE)
    return [
        Case("info: release 2**53 - 1", ["info", odd], False, lambda c, e: True),
        Case(
            "gap: release + run time > 2**53",
            ["gap", beyond, "--time-limit", "2"],
            True,
        ),
        Case(
            "simulate: release + run time > 2**53",
            ["simulate", beyond, "-p", "fcfs"],
            True,
        ),
        Case("gap --time-limit nan", ["gap", i, "--time-limit", "nan"], True),
        Case("bound --time-limit inf", ["bound", i, "--time-limit", "inf"], True),
        Case("bound --time-limit 1e300", ["bound", i, "--time-limit", "1e300"], False),
        Case(
            "simulate --speeds 1e12x1",
            ["simulate", i, "-p", "easy", "--speeds", "1000000000000x1"],
            True,
        ),
        Case("simulate: 2**40 SMP processors", ["simulate", nodes, "-p", "easy"], True),
        Case("bound: 2**40 SMP processors", ["bound", nodes], True),
        Case("info: lone surrogate in the name", ["info", str(surrogate)], True),
        Case("simulate: outage to 2**53", ["simulate", outage, "-p", "easy"], True),
        Case("gap: outage to 2**53", ["gap", outage, "--time-limit", "2"], True),
        Case(
            "info: gzip bomb (10 MB -> 670 MB of newlines)", ["info", str(bomb)], True
        ),
        Case("simulate: gzip bomb", ["simulate", str(bomb), "-p", "fcfs"], True),
        Case("info: a FIFO as input", ["info", str(d / "out.fifo")], True),
        Case("info: a folder as input", ["info", str(d)], True),
        Case("info: /dev/zero as input", ["info", "/dev/zero"], True),
    ]


def schedule_cases(d: Path) -> list[Case]:
    """Schedules: long fields, huge ranges, odd placements, Batsim times."""
    rows = _schedule_rows(d)
    first = int(rows[1][4].split("-")[0])
    long_rows = [list(r) for r in rows]
    long_rows[1][4] = (" " * 12_000).join(str(first + k) for k in range(12))
    huge = [list(r) for r in rows]
    huge[1][3:5] = ["1000000000001", "0-1000000000000"]
    negative = [list(r) for r in rows]
    negative[1][1] = "-50"
    reverse = [list(r) for r in rows]
    reverse[1][1:3] = ["5000", "100"]
    batsim = d / "out_jobs.csv"
    batsim.write_text(
        "job_id,submission_time,starting_time,execution_time,finish_time,"
        "allocated_resources,final_state\n1,0,0,10,10,0,COMPLETED_SUCCESSFULLY\n"
        "2,0,10,99,15,1,COMPLETED_SUCCESSFULLY\n"
    )
    label = _native(
        d / "label.json",
        lambda x: x["machine"].update(
            unavailable=[{"start": 0, "end": 500, "size": 4, "label": "m\x01\x1b[31m"}]
        ),
    )
    label_csv = _csv(d / "label.csv", rows)
    svg = d / "label.svg"

    def svg_ok(code: int, err: str) -> bool:
        try:
            xml.dom.minidom.parse(str(svg))
        except Exception:
            return False
        return True

    i = str(INSTANCE)
    return [
        Case(
            "check: a 144,000-character processor field",
            ["check", i, _csv(d / "long.csv", long_rows)],
            False,
        ),
        Case(
            "plot gantt: processors 0-10**12 on 100",
            ["plot", "gantt", _csv(d / "huge.csv", huge), i, "-o", str(d / "a.png")],
            True,
        ),
        Case(
            "plot gantt: processors 0-10**12, no instance",
            ["plot", "gantt", str(d / "huge.csv"), "-o", str(d / "b.png")],
            False,
        ),
        Case(
            "plot gantt: a negative start, no instance",
            ["plot", "gantt", _csv(d / "neg.csv", negative), "-o", str(d / "c.png")],
            True,
        ),
        Case(
            "plot gantt: start > end, no instance",
            ["plot", "gantt", _csv(d / "rev.csv", reverse), "-o", str(d / "d.png")],
            True,
        ),
        Case(
            "check: Batsim execution_time != finish - start",
            ["check", i, str(batsim)],
            True,
        ),
        Case(
            "plot gantt: control characters in a busy label (SVG)",
            ["plot", "gantt", label_csv, label, "-o", str(svg)],
            False,
            svg_ok,
        ),
    ]


def file_cases(d: Path) -> list[Case]:
    """Site, co-reservation, scenario and SWF-chain inputs."""
    site = d / "site.toml"
    site.write_text(
        "[site]\nprocessors = 100\nuser_limit_hours = inf\n\n[[batch]]\n"
        'days = ["mon"]\nfrom = "00:00"\nto = "24:00"\nprocessors = 500\n'
    )
    request = json.loads(REQUEST.read_text())
    far = d / "far.json"
    far.write_text(
        json.dumps({**request, "request": {**request["request"], "deadline": 2**53}})
    )
    late = d / "late.json"
    late.write_text(
        json.dumps({**request, "request": {**request["request"], "submit": 60000}})
    )
    _swf(d / "log.swf", [(k, 600 * k, 300, -1) for k in range(1, 40)])
    scenario = d / "scenario.toml"
    scenario.write_text(
        '[scenario]\nname = "x"\n\n[workload]\ntrace = "log.swf"\n'
        "clusters = 100000000\nmerge_below = -5\n"
    )
    cycle = _swf(d / "cycle.swf", [(1, 0, 5, 2), (2, 1, 5, 1), (3, 2, 5, 3)])
    empty = _native(d / "empty.json", lambda x: x.update(jobs=[]))
    i = str(INSTANCE)
    return [
        Case(
            "simulate --site: user_limit_hours = inf",
            ["simulate", i, "-p", "easy", "--site", str(site)],
            True,
        ),
        Case(
            "coreserve optimum: deadline 2**53",
            ["coreserve", "optimum", str(far)],
            False,
        ),
        Case(
            "coreserve optimum --method cpsat: deadline 2**53",
            [
                "coreserve",
                "optimum",
                str(far),
                "--method",
                "cpsat",
                "--time-limit",
                "5",
            ],
            False,
        ),
        Case(
            "coreserve optimum: submit > earliest_start",
            ["coreserve", "optimum", str(late)],
            True,
        ),
        Case(
            "coreserve simulate: 10**8 clusters",
            ["coreserve", "simulate", str(scenario)],
            True,
        ),
        Case(
            "simulate: SWF preceding-job cycle and self link",
            ["simulate", cycle, "-p", "fcfs"],
            True,
        ),
        Case(
            "simulate: a native file without jobs",
            ["simulate", empty, "-p", "easy"],
            True,
        ),
    ]


def message_cases(d: Path) -> list[Case]:
    """The message audit: one spoiled file per format and kind of fault."""
    folder = d / "messages"
    folder.mkdir()
    return [
        Case(c.name, list(c.args), True, located_as=c.prefix)
        for c in message_corpus(folder)
    ]


FULL_DISK_BYTES = 64 * 1024


@contextlib.contextmanager
def full_disk(d: Path) -> Iterator[Path | None]:
    """A folder on a full file system (a tmpfs of 64 KiB, filled), or
    ``None`` when this process may not mount one (not root, not Linux)."""
    folder = d / "full"
    folder.mkdir()
    size = f"size={FULL_DISK_BYTES}"
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", size, "tmpfs", str(folder)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        yield None
        return
    try:
        with contextlib.suppress(OSError), (folder / "filler").open("wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def disk_cases(d: Path, full: Path) -> list[Case]:
    """Every command that writes a file, writing it on a full disk: the one
    line must name the file (SQLite's and the writes' errors name none)."""
    if not (d / "easy.csv").exists():
        _schedule_rows(d)  # the schedule plot gantt draws
    store = d / "tiny.sqlite"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "optsched",
            "bench",
            str(TINY_SUITE),
            "--store",
            str(store),
            "--no-progress",
        ],
        capture_output=True,
        check=True,
    )
    i = str(INSTANCE)
    outputs = {
        "simulate -o": ["simulate", i, "-p", "easy", "-o", "s.csv"],
        "compare -o": ["compare", i, "--policies", "fcfs,easy", "-o", "c.csv"],
        "bound -o": ["bound", i, "-o", "b.json"],
        "bound --schedule-out": ["bound", i, "--schedule-out", "b.csv"],
        "window -o": ["window", i, "--first-job", "1", "--jobs", "5", "-o", "w.json"],
        "gap -o": ["gap", i, "--time-limit", "2", "-o", "g.csv"],
        "plot gantt -o": ["plot", "gantt", str(d / "easy.csv"), i, "-o", "g.png"],
        "report -o": ["report", str(store), "-o", "r.html"],
        "export -o": ["export", str(store), "-o", "e.csv"],
        "bench --store": ["bench", str(TINY_SUITE), "--store", "st.sqlite"],
        "coreserve optimum -o": ["coreserve", "optimum", str(REQUEST), "-o", "c.json"],
    }
    cases = []
    for name, args in outputs.items():
        target = full / args[-1]
        args = [*args[:-1], str(target)]
        cases.append(Case(f"full disk: {name}", args, True, located_as=f"{target}:"))
    return cases


def run_case(case: Case, cwd: Path, timeout: float, memory_mb: float) -> Run:
    """``python -m optsched ARGS`` under the limits; its own peak resident
    size from ``wait4`` (stderr goes to a file: no pipe to fill)."""
    import subprocess

    limit = int(memory_mb * 2**20)

    def limits() -> None:  # in the child
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    began = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "optsched", *case.args],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=limits,
        )
        code: int | None = None
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - began > timeout:
                process.send_signal(signal.SIGKILL)
                _, _, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
        process.returncode = code if code is not None else -9  # reaped here
        err.seek(0)
        text = err.read()
    return Run(case, code, text, time.monotonic() - began, usage.ru_maxrss / 1024)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--memory", type=float, default=2048.0, help="MB")
    parser.add_argument(
        "--audit-only",
        action="store_true",
        help="only the message audit (spoiled files and the full disk)",
    )
    options = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="optsched-campaign-") as folder,
        full_disk(Path(folder)) as full,
    ):
        d = Path(folder)
        cases = []
        if not options.audit_only:
            cases += output_cases(d) + extreme_cases(d) + schedule_cases(d)
            cases += file_cases(d)
        cases += message_cases(d) + ([] if full is None else disk_cases(d, full))
        runs = [run_case(c, d, options.timeout, options.memory) for c in cases]
        # Judged here: some checks read the outputs left in the folder.
        judged = [(r, r.outcome(options.timeout, options.memory)) for r in runs]
    print_table(runs, judged)
    if full is None:
        print("- full-disk cases skipped: mounting a tmpfs needs root")
    bad = [(r, outcome) for r, outcome in judged if outcome != "ok"]
    for r, outcome in bad:
        last = r.stderr.strip().splitlines()[-1:] or [""]
        print(f"- {outcome}: {r.case.name}: exit {r.code}: {last[0][:160]}")
    return 1 if bad else 0


def print_table(runs: list[Run], judged: list[tuple[Run, str]]) -> None:
    """The Markdown table of outcomes; ``audited``: the refusals whose
    location the message audit checked (``unlocated``: those missing it)."""
    outcomes = Counter(outcome for _, outcome in judged)
    audited = sum(r.case.located_as is not None and r.code == 2 for r in runs)
    names = ["ok", "traceback", "hang", "memory", "silent", "wrong", "unlocated"]
    print(
        f"| runs | {' | '.join(names)} | audited refusals "
        "| longest run (s) | peak memory (MB) |"
    )
    print("|---" * (len(names) + 4) + "|")
    counts = " | ".join(str(outcomes[n]) for n in names)
    longest = max(r.seconds for r in runs)
    peak = max(r.peak_mb for r in runs)
    print(f"| {len(runs)} | {counts} | {audited} | {longest:.1f} | {peak:.0f} |")


if __name__ == "__main__":
    sys.exit(main())
