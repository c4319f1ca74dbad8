"""How long reading an SWF trace takes.

Times :func:`optsched.io.read_trace` (format detection + SWF reader) on every
trace in ``../shared/traces`` and on a synthetic trace of 450,000 job lines
built from the KTH log: its job lines repeated, each copy shifted by one year
and renumbered so that job numbers stay unique. The synthetic trace is also
timed gzip-compressed. Each figure is the best of ``--repeat`` runs in this
one process (one core: the reader does not use threads).

Usage::

    .venv/bin/python benchmarks/read_trace.py [--traces DIR] [--lines N] [--repeat R]
"""

from __future__ import annotations

import argparse
import gzip
import platform
import tempfile
import time
from pathlib import Path

from optsched.io import read_trace

REPO = Path(__file__).resolve().parent.parent
TRACES = REPO.parent / "shared" / "traces"
SEED_TRACE = "KTH-SP2-1996-2.1-cln.swf"
YEAR = 365 * 24 * 3600


def synthetic_swf(seed: Path, lines: int, out: Path) -> None:
    """Write ``lines`` job lines: copies of ``seed``'s, shifted and renumbered."""
    text = seed.read_text().splitlines()
    header = [line for line in text if line.startswith(";")]
    jobs = [line.split() for line in text if line.strip() and line[0] != ";"]
    body: list[str] = []
    copy = 0
    while len(body) < lines:
        for fields in jobs[: lines - len(body)]:
            fields = fields.copy()
            fields[0] = str(len(body) + 1)
            fields[1] = str(int(fields[1]) + copy * YEAR)
            body.append(" ".join(fields))
        copy += 1
    out.write_text("\n".join(header + body) + "\n")


def best_time(path: Path, repeat: int) -> tuple[float, float, int, int]:
    """Best wall and CPU time of ``repeat`` reads, job records and jobs kept.

    The CPU time (this process) is less disturbed than the wall time when
    other programs share the machine.
    """
    wall = cpu = float("inf")
    records = kept = 0
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        trace = read_trace(path)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
        records, kept = trace.records, len(trace.instance.jobs)
    return wall, cpu, records, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--lines", type=int, default=450_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    print(f"python {platform.python_version()} on {platform.machine()}")
    print(
        f"{'file':32} {'records':>9} {'kept':>9} {'wall s':>7} {'cpu s':>7} "
        f"{'lines/s (wall)':>15}"
    )
    paths = sorted(p for p in args.traces.glob("*.swf*") if p.is_file())
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / f"synthetic-{args.lines}.swf"
        synthetic_swf(args.traces / SEED_TRACE, args.lines, big)
        packed = Path(tmp) / f"{big.name}.gz"
        packed.write_bytes(gzip.compress(big.read_bytes(), compresslevel=6))
        for path in [*paths, big, packed]:
            wall, cpu, records, kept = best_time(path, args.repeat)
            print(
                f"{path.name:32} {records:9,} {kept:9,} {wall:7.3f} {cpu:7.3f} "
                f"{records / wall:15,.0f}"
            )


if __name__ == "__main__":
    main()
