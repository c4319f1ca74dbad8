"""How long ``optsched report`` takes on a results store.

Runs the smoke suite (``benchmarks/suites/smoke.toml``) into a temporary
store unless ``--store`` names one, then times :func:`build_report` to HTML
and to Markdown, and the drawing of one Gantt chart of a 100-job window
(drawn and rendered to PNG). Each figure is the best of ``--repeat`` runs;
"cpu s" is the process CPU time (the machine may be shared), "wall s" the
elapsed time.

Usage::

    .venv/bin/python benchmarks/report_speed.py [--store FILE] [--suite NAME]
        [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from native_io import best

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "benchmarks" / "suites" / "smoke.toml"
KTH = REPO.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf"


def gantt_png(instance: object, schedule: object) -> bytes:
    from optsched.plot import gantt
    from optsched.report.render import figure_png, new_figure

    figure = new_figure(10.0, 5.0)
    gantt(instance, schedule, ax=figure.subplots())  # type: ignore[arg-type]
    return figure_png(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--suite", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from optsched.bench import run_suite
    from optsched.report import build_report

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        store = args.store
        if store is None:
            store = out / "smoke.sqlite"
            run_suite(SMOKE, store)
        print(f"store {store}, load average {os.getloadavg()[0]:.1f}")
        for suffix in ("html", "md"):
            target = out / f"report.{suffix}"

            def build(target: Path = target) -> Path:
                return build_report(store, target, suite=args.suite)

            wall, cpu = best(build, args.repeat)
            size = target.stat().st_size
            figures = len(list((out / "report_figures").glob("*.png")))
            extra = f", {figures} figures" if suffix == "md" else ""
            print(f"report .{suffix}: wall {wall:.2f} s, cpu {cpu:.2f} s, "
                  f"{size / 1024:.0f} KiB{extra}")  # fmt: skip
        if KTH.exists():
            from optsched.heuristics import simulate
            from optsched.io import read_trace
            from optsched.windows.window import cut_window

            window = cut_window(read_trace(KTH), first_job=5000, jobs=100)
            schedule = simulate(window, "easy").schedule
            wall, cpu = best(lambda: gantt_png(window, schedule), args.repeat)
            print(f"gantt of 100 KTH jobs to PNG: wall {wall:.2f} s, cpu {cpu:.2f} s")


if __name__ == "__main__":
    main()
