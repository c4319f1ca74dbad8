"""Kalthoff's rescaling experiments: Table 6.5 and Fig. 5.10 (issue 14).

Usage::

    .venv/bin/python benchmarks/moldable_rescaling.py table [--sets 1000]
        [--budget 10000] [--machine 128] [--inner pbi] [--methods hc,deluge,ga]
        [--seed 0] [--workers 2] [--out FILE]
    .venv/bin/python benchmarks/moldable_rescaling.py figure [--sets 1000]
        [--figure-budgets 100,1000] [--shares 0,0.25,0.5,0.75,1] ...
    .venv/bin/python benchmarks/moldable_rescaling.py units [--sets 1000]
        [--machines 128,256,512] [--inners pbi,pbi:order=literal,offline:ffdh]
    .venv/bin/python benchmarks/moldable_rescaling.py bounds [--sets 1000]
        [--machines 128,256,512]
    .venv/bin/python benchmarks/moldable_rescaling.py timing [--inner pbi]
    .venv/bin/python benchmarks/moldable_rescaling.py optimum --from TABLE.json...
        [--optimum 10] [--time-limit 60]

``table`` (thesis Ch. 6.5.5, Table 6.5): ``--sets`` random sets of 20
scalable jobs (:func:`optsched.generate.moldable.table_6_5`: requests
U{4..128}, run times U{20..400}, all at time 0, weight 1, linear speed-up
up to the request), set ``s`` drawn from ``default_rng([seed, s])``. Every
method runs once per set with budget ``--budget`` and records the best cost
after 0/100/1000/2000/5000/10000 iterations (those up to the budget), with
the search seed ``default_rng([seed, s, method])``. Cost: the weighted
response ``sum_j w_j (C_j - r_j)`` with ``w_j = 1`` and ``r_j = 0``, i.e.
``sum_j C_j`` (:data:`optsched.heuristics.moldable.rescaling.DEFAULT_OBJECTIVE`),
averaged over the sets. The report puts the thesis's numbers beside ours,
the relative reductions of the mean and the ranking at every checkpoint.

``figure`` (Ch. 5.4.4, Fig. 5.10): sets of 12 jobs with the share ``s`` of
scalable jobs (:func:`optsched.generate.moldable.figure_5_10`, same
distributions), hill climbing (Fig. 5.9's acceptance rule) with the
budgets ``--figure-budgets``; the gain is ``1 - mean(best)/mean(initial)``.

``units``: the unoptimised cost of the inner schedulers on many machine
sizes, in several cost units (``sum C_j``, mean ``C_j``, ``sum q_j C_j /
m``), to find which one the thesis's 7,790.7 is in.

``bounds``: numbers of the same sets that hold for every schedule (the
sum of run times, the mean completion of one job at a time, the lower
bound on ``sum C_j``) on the ``--machines`` sizes: what 7,790.7 can and
cannot be.

``timing``: seconds per inner evaluation on one 20-job set.

``optimum``: the first ``--optimum`` sets of a ``table`` run (its JSON)
solved by the moldable CP-SAT model (``optsched.models.solve(instance,
"wct", backend="cpsat", time_limit=..., workers=1)``, hinted with FFDH
shelves rescaled by hill climbing), and each method's final cost over the
upper and the lower bound.

``--out FILE`` writes ``FILE.json`` (every number) and ``FILE.md`` (the
tables). Work is spread over ``--workers`` processes (at most 2 on the
shared machine).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
from markdown_table import markdown_table

from optsched.generate.moldable import figure_5_10, moldable_batch, table_6_5
from optsched.heuristics.moldable.rescaling import rescale

THESIS_CHECKPOINTS = (0, 100, 1000, 2000, 5000, 10000)
THESIS = {
    "hc": (7790.7, 5849.2, 5363.5, 5357.5, 5357.5, 5357.5),
    "deluge": (7790.7, 6059.7, 5135.3, 4935.5, 4748.5, 4739.9),
    "ga": (7790.7, 7010.7, 5531.8, 5175.0, 4907.8, 4825.9),
}
"""Kalthoff, Table 6.5: mean cost by method at the checkpoints."""

LABELS = {"hc": "Hill climbing", "deluge": "Great deluge", "ga": "GA (no crossover)"}


# --------------------------------------------------------------------------
# Table 6.5
# --------------------------------------------------------------------------


def _table_task(task: tuple[int, int, str, int, str, int, tuple[int, ...]]) -> dict:
    seed, s, method, k, inner, budget, marks = task
    instance = table_6_5(
        np.random.default_rng([seed, s]), machine=_MACHINE[0], speedup=_SPEEDUP[0]
    )
    began = time.process_time()
    result = rescale(
        instance,
        inner=inner,
        search=method,
        budget=budget,
        seed=np.random.default_rng([seed, s, k]),
        checkpoints=marks,
    )
    calls = result.inner_calls
    row = {
        "set": s,
        "method": method,
        "checkpoints": {str(c): v for c, v in result.checkpoints.items()},
    }
    if method == "deluge":
        # The deluge's decrement is threshold / budget: the cost after b
        # iterations of a longer run is not that of a run of budget b. The
        # thesis's columns are runs of their own, so each budget runs apart.
        row["anytime"] = row["checkpoints"]
        row["checkpoints"] = {"0": result.initial_cost}
        for b in marks[1:]:
            part = (
                result
                if b == budget
                else rescale(
                    instance,
                    inner=inner,
                    search=method,
                    budget=b,
                    seed=np.random.default_rng([seed, s, k, b]),
                )
            )
            row["checkpoints"][str(b)] = part.best_cost
            calls += part.inner_calls if b != budget else 0
    return {**row, "inner_calls": calls, "cpu": time.process_time() - began}


_MACHINE = [128]
_SPEEDUP = ["linear"]


def _init(machine: int, speedup: str) -> None:
    _MACHINE[0] = machine
    _SPEEDUP[0] = speedup


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a ``table`` and a ``figure`` run record."""
    return {
        "machine": args.machine,
        "inner": args.inner,
        "speedup": args.speedup,
        "seed": args.seed,
    }


def _settings_text(data: dict[str, Any], search: str) -> str:
    """:func:`_settings` of a run's data in words, ``search`` before the seed
    (files written before ``speedup`` was recorded ran ``linear``)."""
    return (
        f"m = {data['machine']}, inner `{data['inner']}`, speed-up "
        f"`{data.get('speedup', 'linear')}`, {search}, seed {data['seed']}"
    )


def run_table(args: argparse.Namespace) -> dict[str, Any]:
    methods = args.methods.split(",")
    marks = (*(c for c in THESIS_CHECKPOINTS if c < args.budget), args.budget)
    tasks = [
        (args.seed, s, method, k, args.inner, args.budget, marks)
        for s in range(args.sets)
        for k, method in enumerate(methods)
    ]
    rows, out = _experiment(
        "table_6_5",
        _table_task,
        tasks,
        args,
        budget=args.budget,
        **_settings(args),
        checkpoints=list(marks),
        methods={},
    )
    for method in methods:
        mine = [r for r in rows if r["method"] == method]
        values = np.array([[r["checkpoints"][str(c)] for c in marks] for r in mine])
        if method == "deluge":
            anytime = np.array([[r["anytime"][str(c)] for c in marks] for r in mine])
            out["deluge_anytime"] = anytime.mean(axis=0).tolist()
        order = np.argsort([r["set"] for r in mine])
        out["methods"][method] = {
            "final": values[order, -1].tolist(),
            "mean": values.mean(axis=0).tolist(),
            "std": values.std(axis=0, ddof=1).tolist() if len(mine) > 1 else [],
            "mean_ratio_to_initial": (values / values[:, :1]).mean(axis=0).tolist(),
            "inner_calls": float(np.mean([r["inner_calls"] for r in mine])),
            "cpu_per_set": float(np.mean([r["cpu"] for r in mine])),
        }
    return out


def _thesis(method: str, mark: int, form: str, reduction: bool = False) -> str:
    if mark not in THESIS_CHECKPOINTS:
        return "-"
    value = THESIS[method][THESIS_CHECKPOINTS.index(mark)]
    return form.format(1 - value / THESIS[method][0] if reduction else value)


def table_markdown(data: dict[str, Any]) -> str:
    marks = data["checkpoints"]
    methods = data["methods"]
    head = "| Method | " + " | ".join(str(c) for c in marks) + " |"
    rule = "|---|" + "---|" * len(marks)
    settings = _settings_text(data, f"budget {data['budget']}")
    lines = [
        f"Table 6.5 reproduction: {data['sets']} sets x 20 jobs, {settings}. "
        "Mean cost sum_j C_j (thesis value in brackets).",
        "",
        head,
        rule,
    ]
    for method, values in methods.items():
        cells = []
        for c, v in zip(marks, values["mean"], strict=True):
            cells.append(f"{v:,.1f} ({_thesis(method, c, '{:,.1f}')})")
        lines.append(f"| {LABELS[method]} | " + " | ".join(cells) + " |")
    if "deluge_anytime" in data:
        cells = [f"{v:,.1f}" for v in data["deluge_anytime"]]
        lines.append(
            "| Great deluge, one run (best so far) | " + " | ".join(cells) + " |"
        )
    lines += ["", "Relative reduction of the mean cost (thesis in brackets):", ""]
    lines += [head, rule]
    for method, values in methods.items():
        first = values["mean"][0]
        cells = []
        for c, v in zip(marks, values["mean"], strict=True):
            cells.append(f"{1 - v / first:.1%} ({_thesis(method, c, '{:.1%}', True)})")
        lines.append(f"| {LABELS[method]} | " + " | ".join(cells) + " |")
    lines += ["", "Ranking (best first; thesis in brackets):", ""]
    for i, c in enumerate(marks[1:], start=1):
        ours = sorted(methods, key=lambda m: methods[m]["mean"][i])
        theirs = " < ".join(
            sorted(methods, key=lambda m: THESIS[m][THESIS_CHECKPOINTS.index(c)])
            if c in THESIS_CHECKPOINTS
            else ["-"]
        )
        lines.append(f"- {c}: {' < '.join(ours)} ({theirs})")
    lines += [""]
    for method, values in methods.items():
        lines.append(
            f"- {method}: {values['inner_calls']:.0f} inner runs per set on "
            f"average (distinct vectors), {values['cpu_per_set']:.2f} s CPU per set"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Fig. 5.10
# --------------------------------------------------------------------------


def _figure_task(task: tuple[int, float, int, str, tuple[int, ...]]) -> dict:
    seed, share, s, inner, budgets = task
    instance = figure_5_10(
        share,
        np.random.default_rng([seed, 510, s]),
        machine=_MACHINE[0],
        speedup=_SPEEDUP[0],
    )
    result = rescale(
        instance,
        inner=inner,
        search="hc",
        budget=max(budgets),
        seed=np.random.default_rng([seed, 510, s, 0]),
        checkpoints=(0, *budgets),
    )
    best = {str(b): result.checkpoints.get(b, result.best_cost) for b in budgets}
    return {"share": share, "set": s, "initial": result.initial_cost, "best": best}


def run_figure(args: argparse.Namespace) -> dict[str, Any]:
    shares = [float(x) for x in args.shares.split(",")]
    budgets = tuple(int(x) for x in args.figure_budgets.split(","))
    tasks = [
        (args.seed, share, s, args.inner, budgets)
        for share in shares
        for s in range(args.sets)
    ]
    rows, out = _experiment(
        "figure_5_10",
        _figure_task,
        tasks,
        args,
        **_settings(args),
        budgets=list(budgets),
        shares={},
    )
    for share in shares:
        mine = [r for r in rows if r["share"] == share]
        initial = float(np.mean([r["initial"] for r in mine]))
        best = {b: float(np.mean([r["best"][str(b)] for r in mine])) for b in budgets}
        out["shares"][str(share)] = {
            "initial": initial,
            "best": best,
            "gain": {b: 1 - v / initial for b, v in best.items()},
        }
    return out


def figure_markdown(data: dict[str, Any]) -> str:
    budgets = data["budgets"]
    lines = [
        f"Fig. 5.10 reproduction: {data['sets']} sets x 12 jobs per share, "
        f"{_settings_text(data, 'hill climbing')}. Mean sum_j C_j and gain "
        "1 - mean(best)/mean(initial).",
        "",
    ]
    header = ("Scalable share", "no opt.", *(f"{b} it. (gain)" for b in budgets))
    rows = [
        (
            f"{float(share):.0%}",
            f"{values['initial']:,.1f}",
            *(f"{values['best'][b]:,.1f} ({values['gain'][b]:.1%})" for b in budgets),
        )
        for share, values in data["shares"].items()
    ]
    align = "l" * len(header)
    return "\n".join(lines + markdown_table(header, align, rows)) + "\n"


# --------------------------------------------------------------------------
# Cost units and timing
# --------------------------------------------------------------------------


def _units_task(task: tuple[int, int, int, str, int]) -> dict:
    from optsched.heuristics.moldable.rescaling import inner_scheduler

    seed, s, machine, inner, jobs = task
    rng = np.random.default_rng([seed, s])
    instance = moldable_batch(jobs, jobs, machine=machine, seed=rng).rigid()
    schedule = inner_scheduler(inner)(instance)
    ends = np.array([schedule[j.id].end for j in instance.jobs], dtype=float)
    sizes = np.array([j.size for j in instance.jobs], dtype=float)
    return {
        "machine": machine,
        "inner": inner,
        "sum_C": ends.sum(),
        "mean_C": ends.mean(),
        "sum_qC_over_m": (sizes * ends).sum() / machine,
        "makespan": ends.max(),
    }


UNIT_COLUMNS = ("sum_C", "mean_C", "sum_qC_over_m", "makespan")
"""The numbers of the units experiment, per machine size and inner scheduler."""


def run_units(args: argparse.Namespace) -> dict[str, Any]:
    machines = [int(x) for x in args.machines.split(",")]
    inners = args.inners.split(",") if args.inners else [args.inner]
    inners = [x.replace("/", ":").replace(";", ",") for x in inners]
    tasks = [
        (args.seed, s, m, inner, args.jobs)
        for m in machines
        for inner in inners
        for s in range(args.sets)
    ]
    rows, out = _experiment("units", _units_task, tasks, args, jobs=args.jobs, rows=[])
    for m in machines:
        for inner in inners:
            mine = [r for r in rows if r["machine"] == m and r["inner"] == inner]
            out["rows"].append(
                {"machine": m, "inner": inner, **_means(mine, UNIT_COLUMNS)}
            )
    return out


def _means(rows: list[dict], keys: tuple[str, ...]) -> dict[str, float]:
    """The mean of each of ``keys`` over ``rows``."""
    return {key: float(np.mean([r[key] for r in rows])) for key in keys}


def units_markdown(data: dict[str, Any]) -> str:
    lines = [
        f"Unoptimised mean cost over {data['sets']} sets of {data['jobs']} jobs "
        "drawn as in Table 6.5 (thesis: 7,790.7).",
        "",
    ]
    header = ("m", "inner", "sum C_j", "mean C_j", "sum q_j C_j / m", "makespan")
    cells = [
        (r["machine"], f"`{r['inner']}`", *(f"{r[key]:,.1f}" for key in UNIT_COLUMNS))
        for r in data["rows"]
    ]
    return "\n".join(lines + markdown_table(header, "llllll", cells)) + "\n"


def _bounds_task(task: tuple[int, int, int, int]) -> dict:
    from optsched.models.rigid.bounds import lower_bounds

    seed, s, machine, jobs = task
    rng = np.random.default_rng([seed, s])
    instance = moldable_batch(jobs, jobs, machine=machine, seed=rng).rigid()
    heights = sorted(j.runtime for j in instance.jobs)
    # One job at a time, shortest first: a schedule on any machine, so the
    # mean C_j of the best schedule is at most this; and no schedule that
    # keeps some job running while one waits ends later than sum(heights).
    sequential = np.cumsum(heights)
    return {
        "machine": machine,
        "sum_h": float(sequential[-1]),
        "sequential_mean_C": float(sequential.mean()),
        "sum_C_lower": max(b.value for b in lower_bounds(instance, "wct")),
    }


BOUND_COLUMNS = ("sum_h", "sequential_mean_C", "sum_C_lower")
"""The numbers of the bounds experiment, per machine size."""


def run_bounds(args: argparse.Namespace) -> dict[str, Any]:
    """Schedule-independent numbers of the Table 6.5 sets: what 7,790.7
    can and cannot be (benchmarks/README.md)."""
    machines = [int(x) for x in args.machines.split(",")]
    tasks = [(args.seed, s, m, args.jobs) for m in machines for s in range(args.sets)]
    rows, out = _experiment("bounds", _bounds_task, tasks, args, jobs=args.jobs)
    out["rows"] = [
        {
            "machine": m,
            **_means([r for r in rows if r["machine"] == m], BOUND_COLUMNS),
        }
        for m in machines
    ]
    return out


def bounds_markdown(data: dict[str, Any]) -> str:
    lines = [
        f"Means over {data['sets']} sets of {data['jobs']} jobs drawn as in "
        "Table 6.5 (thesis: 7,790.7 before optimisation).",
        "",
    ]
    header = (
        "m",
        "sum h_j (makespan of any schedule that never idles the whole machine "
        "while jobs wait; bounds its mean C_j)",
        "mean C_j, one job at a time, shortest first",
        "lower bound on sum C_j (`lower_bounds`, wct)",
    )
    cells = [
        (r["machine"], *(f"{r[key]:,.1f}" for key in BOUND_COLUMNS))
        for r in data["rows"]
    ]
    return "\n".join(lines + markdown_table(header, "llll", cells)) + "\n"


def run_timing(args: argparse.Namespace) -> dict[str, Any]:
    instance = table_6_5(np.random.default_rng([args.seed, 0]), machine=args.machine)
    out: dict[str, Any] = {"experiment": "timing", "inner": args.inner}
    for method in ("hc", "deluge", "ga"):
        began = time.perf_counter()
        result = rescale(instance, args.inner, method, budget=1000, seed=0)
        wall = time.perf_counter() - began
        out[method] = {
            "seconds_per_iteration": wall / 1000,
            "inner_calls": result.inner_calls,
        }
    return out


def timing_markdown(data: dict[str, Any]) -> str:
    lines = [f"Seconds per iteration, inner `{data['inner']}`, budget 1000:", ""]
    for method in ("hc", "deluge", "ga"):
        d = data[method]
        lines.append(
            f"- {method}: {d['seconds_per_iteration'] * 1e3:.2f} ms "
            f"({d['inner_calls']} inner runs)"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Distance to the moldable optimum
# --------------------------------------------------------------------------


def _optimum_task(task: tuple[int, int, int, float]) -> dict:
    from optsched.models import solve

    seed, s, machine, limit = task
    instance = table_6_5(np.random.default_rng([seed, s]), machine=machine)
    # A non-preemptive hint: FFDH shelves rescaled by hill climbing.
    hint = rescale(instance, "offline:ffdh", "hc", budget=2000, seed=0).schedule
    result = solve(
        instance, "wct", backend="cpsat", time_limit=limit, workers=1, hint=hint
    )
    return {
        "set": s,
        "upper": result.objective,
        "lower": result.lower_bound,
        "status": str(result.status),
    }


def run_optimum(args: argparse.Namespace) -> dict[str, Any]:
    if not args.source:
        raise SystemExit("optimum needs --from TABLE.json ... (table runs)")
    tables = [json.loads(path.read_text()) for path in args.source]
    if len({(t["seed"], t["machine"]) for t in tables}) != 1:
        raise SystemExit("the table runs differ in seed or machine")
    first = tables[0]
    count = min(args.optimum, *(t["sets"] for t in tables))
    tasks = [
        (first["seed"], s, first["machine"], args.time_limit) for s in range(count)
    ]
    solved = sorted(_pool(_optimum_task, tasks, args), key=lambda r: r["set"])
    out: dict[str, Any] = {
        "experiment": "optimum",
        "tables": [str(path) for path in args.source],
        "sets": count,
        "time_limit": args.time_limit,
        "solved": solved,
        "runs": [],
    }
    upper = np.array([r["upper"] for r in solved], dtype=float)
    lower = np.array([r["lower"] for r in solved], dtype=float)
    for table in tables:
        for method, values in table["methods"].items():
            best = np.array(values["final"][:count], dtype=float)
            out["runs"].append(
                {
                    "inner": table["inner"],
                    "budget": table["budget"],
                    "method": method,
                    "mean_best": float(best.mean()),
                    "best_over_upper": float(np.mean(best / upper)),
                    "best_over_lower": float(np.mean(best / lower)),
                }
            )
    return out


def optimum_markdown(data: dict[str, Any]) -> str:
    solved = data["solved"]
    optimal = sum(r["status"].endswith("OPTIMAL") for r in solved)
    lines = [
        "Distance to the non-preemptive moldable optimum (CP-SAT, "
        f"{data['time_limit']:g} s, 1 worker, hinted) on the first "
        f"{data['sets']} sets; {optimal} solved to optimality. Mean UB "
        f"{np.mean([r['upper'] for r in solved]):,.1f}, mean LB "
        f"{np.mean([r['lower'] for r in solved]):,.1f}. Per run, the mean "
        "final cost and the mean of best/UB and best/LB per set (the ratio to "
        "the optimum lies between them; a preemptive inner scheduler may beat "
        "the non-preemptive optimum, so its best/UB can be below 1).",
        "",
    ]
    header = ("Inner", "Budget", "Method", "mean best", "best / UB", "best / LB")
    cells = [
        (f"`{run['inner']}`", run["budget"], LABELS[run["method"]],
         f"{run['mean_best']:,.1f}", f"{run['best_over_upper']:.3f}",
         f"{run['best_over_lower']:.3f}")
        for run in data["runs"]
    ]  # fmt: skip
    return "\n".join(lines + markdown_table(header, "llllll", cells)) + "\n"


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def _experiment(
    name: str, function: Any, tasks: list, args: argparse.Namespace, **fields: Any
) -> tuple[list[dict], dict[str, Any]]:
    """The rows of ``tasks`` (run by :func:`_pool`) and the head of the
    experiment's record: its name, the number of sets, then ``fields``."""
    rows = _pool(function, tasks, args)
    return rows, {"experiment": name, "sets": args.sets, **fields}


def _pool(function: Any, tasks: list, args: argparse.Namespace) -> list[dict]:
    workers = max(1, min(args.workers, 2))
    if workers == 1:
        _init(args.machine, args.speedup)
        return [function(t) for t in tasks]
    settings = (args.machine, args.speedup)
    with Pool(workers, initializer=_init, initargs=settings) as pool:
        return list(pool.imap_unordered(function, tasks, chunksize=1))


EXPERIMENTS = {
    "table": (run_table, table_markdown),
    "figure": (run_figure, figure_markdown),
    "units": (run_units, units_markdown),
    "bounds": (run_bounds, bounds_markdown),
    "timing": (run_timing, timing_markdown),
    "optimum": (run_optimum, optimum_markdown),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=sorted(EXPERIMENTS))
    parser.add_argument("--sets", type=int, default=1000)
    parser.add_argument("--budget", type=int, default=10000)
    parser.add_argument("--machine", type=int, default=128)
    parser.add_argument(
        "--inner",
        default="pbi",
        help="inner scheduler (a policy spec or offline:NAME), e.g. pbi, "
        "pbi:order=literal, offline:ffdh",
    )
    parser.add_argument("--methods", default="hc,deluge,ga")
    parser.add_argument(
        "--speedup",
        default="linear",
        help="speed-up model of the scalable jobs (table, figure); linear = "
        "modes up to the request, linear:max=128 = growing too",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shares", default="0,0.25,0.5,0.75,1")
    parser.add_argument("--figure-budgets", default="100,1000")
    parser.add_argument("--machines", default="128,256,512")
    parser.add_argument("--jobs", type=int, default=20, help="units: jobs per set")
    parser.add_argument(
        "--inners",
        default="pbi,pbi:order=literal,offline:ffdh",
        help="units: inner schedulers, comma-separated; write a spec's own "
        "commas as ';'",
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        nargs="+",
        help="optimum: JSON of table runs (same seed and machine)",
    )
    parser.add_argument("--optimum", type=int, default=10, help="optimum: sets")
    parser.add_argument(
        "--time-limit", type=float, default=60.0, help="optimum: CP-SAT seconds"
    )
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    args = parser.parse_args(argv)
    run, markdown = EXPERIMENTS[args.experiment]
    began = time.perf_counter()
    data = run(args)
    data["wall_seconds"] = time.perf_counter() - began
    text = markdown(data)
    print(text)
    print(f"({data['wall_seconds']:.0f} s wall)", file=sys.stderr)
    if args.out is not None:
        args.out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
        args.out.with_suffix(".md").write_text(text)


if __name__ == "__main__":
    main()
