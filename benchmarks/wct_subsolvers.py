"""Which CP-SAT sub-solvers raise the ``wct`` bound on two workers (issue 30).

Each configuration runs on chosen 100-job KTH windows (those of
``models_bench.py``, seed 0) with ``--dt`` units of CP-SAT's deterministic
time per sub-solver (``max_deterministic_time``, no wall-clock limit), so
that every configuration gets the same work whatever the machine's load;
one unit is roughly one CPU second. Windows are searched whole
(``decompose=False``). Configurations:

* ``cur``: the default (``default_lp``, ``objective_lb_search`` and
  ``objective_shaving`` as ``extra_subsolvers``, three full sub-solvers on
  two threads);
* a pair ``a+b``: exactly those two sub-solvers (``subsolvers``);
* ``cur:interleave``: the default with ``interleave_search`` (all
  sub-solvers, LNS included, in turns; ``--dt`` is then the total);
* ``phased``: ``default_lp`` + ``max_lp`` for a fifth of the units, then the
  default hinted with the best schedule for the rest (the two-phase search
  of :func:`optsched.models.rigid.cpsat.first_phase`, by hand).

Every schedule goes through the checker and every bound is checked against
it. Rows are appended to ``--out``; ``--summary FILE`` prints the table.

Example::

    .venv/bin/python benchmarks/wct_subsolvers.py --dt 10 --keys 3166,21466,3177 \\
        --configs cur,max_lp+objective_lb_search,phased \\
        --out benchmarks/results/wct_subsolvers_dt10.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from markdown_table import markdown_table
from models_bench import KTH, kth_windows, verified

from optsched.instance import Instance
from optsched.models.rigid import cpsat
from optsched.result import Incumbent, Result

PHASE_SHARE = 0.2
"""Share of the units of the first phase of ``phased``."""


def search(instance: Instance, config: str, dt: float, **extra: Any) -> Result:
    """One whole-window search of ``config`` (module notes) with ``dt`` units."""
    parameters: dict[str, Any] = {"max_deterministic_time": dt}
    options: dict[str, Any] = {}
    if config == "cur:interleave":
        parameters["interleave_search"] = True
    elif config != "cur":
        parameters["subsolvers"] = config.split("+")
        options["bound_subsolvers"] = ()
    result = cpsat.solve(
        instance,
        "wct",
        time_limit=1e6,
        workers=2,
        decompose=False,
        parameters=parameters,
        **options,
        **extra,
    )
    verified(instance, result)
    return result


def run_config(instance: Instance, config: str, dt: float) -> tuple[float, float]:
    """``(best schedule's objective, best bound)`` of ``config``."""
    if config != "phased":
        result = search(instance, config, dt)
        assert result.objective is not None and result.lower_bound is not None
        return result.objective, result.lower_bound
    first = search(instance, "default_lp+max_lp", PHASE_SHARE * dt)
    assert first.schedule is not None
    hint = [Incumbent("phase1", first.schedule)]
    second = search(instance, "cur", (1 - PHASE_SHARE) * dt, incumbents=hint)
    uppers = [r.objective for r in (first, second) if r.objective is not None]
    lowers = [r.lower_bound for r in (first, second) if r.lower_bound is not None]
    return min(uppers), max(lowers)


def summary(rows: list[dict[str, Any]]) -> str:
    """Per window and configuration: best schedule, bound and gap."""
    by_key: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    configs: list[str] = []
    for row in rows:
        by_key[row["key"]][row["config"]] = row
        if row["config"] not in configs:
            configs.append(row["config"])
    lines = []
    for key, runs in sorted(by_key.items()):
        for config in configs:
            if config not in runs:
                continue
            row = runs[config]
            gap = (row["upper"] - row["lower"]) / row["upper"]
            lines.append(
                [key, config, f"{row['upper']:,.0f}", f"{row['lower']:,.0f}",
                 f"{gap:.3%}", f"{row['cpu']:.0f}", row["load"]]
            )  # fmt: skip
    header = [
        "first job",
        "sub-solvers",
        "best schedule",
        "bound",
        "gap",
        "CPU s",
        "load",
    ]
    return "\n".join(markdown_table(header, "llrrrrr", lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default=str(KTH))
    parser.add_argument("--configs", type=lambda s: s.split(","), default=["cur"])
    parser.add_argument("--dt", type=float, default=10.0)
    parser.add_argument("--keys", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--out", default=None, help="JSON-lines file to append to")
    parser.add_argument("--summary", default=None, help="only summarise this file")
    args = parser.parse_args(argv)
    if args.summary:
        lines = Path(args.summary).read_text(encoding="utf-8").splitlines()
        print(summary([json.loads(line) for line in lines if line.strip()]))
        return 0
    windows = {k: w for _, k, w in kth_windows(Path(args.trace), [100], 10, 0)}
    for config in args.configs:
        for key in args.keys:
            began = time.process_time()
            upper, lower = run_config(windows[key], config, args.dt)
            row = {
                "config": config, "key": key, "dt": args.dt, "upper": upper,
                "lower": lower, "cpu": time.process_time() - began,
                "load": float(Path("/proc/loadavg").read_text().split()[0]),
            }  # fmt: skip
            print(json.dumps(row), flush=True)
            if args.out:
                with Path(args.out).open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
