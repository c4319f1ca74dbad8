"""Meltzer's comparisons with their spread over seeds, from a study run.

Usage::

    .venv/bin/python benchmarks/coreserve_tables.py RUNS.csv... [--out tables.md]

Reads the ``runs.csv`` files of ``coreserve_study.py --seeds N`` (one row
per experiment, configuration and seed; one file per ``--only`` run, or
one for all) and prints, for §6.4 (A1's failure
rate), §6.6 (failure rates and unfairness of A2, A3, A3*, A3-BF), §6.8
(start-time sorting), §6.9.1 (A5's cost against start: relative start and
cost, day and night shares, the cost ratio of its two extremes) and §6.9.2
(the change in partial reservations per cluster and in BM3's expansion
under cost minimisation, A5 against A4), the study's number beside ours as mean ± sample
standard deviation and min–max over the seeds, and whether the study's
number lies within our min–max ("within noise": the spread of our seeds
covers it; "no" otherwise). The study reports one run per cell and no
spread, except its own unfairness standard deviations (Fig. 25b), which
are per request, not per run, and are not used here.

Relative measures (A3* against A3, A3-BF against A3) are computed per seed
on the same request draw and then summarised: ``(ours - A3) / A3``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import statistics
from collections.abc import Iterator
from pathlib import Path

Key = tuple[str, str]  # (experiment, label)

A1_CONFIGS = ("m1 w1", "m1 w3", "m300 w20", "m1 w200")
_A1_FAILURES = {
    # Table 8 (seed 002 §5.2): A1's failure rate on 4 clusters, then 7, in
    # the order of A1_CONFIGS.
    "R1": (0.12, 0.06, 0.07, 0.06, 0.06, 0.01, 0.02, 0.00),
    "R3": (0.30, 0.08, 0.10, 0.07, 0.11, 0.05, 0.03, 0.02),
}
STUDY_64: dict[tuple[str, str, str], float] = {
    (workload, config, clusters): value
    for workload, values in _A1_FAILURES.items()
    for (clusters, config), value in zip(
        itertools.product(("C4", "C7"), A1_CONFIGS), values, strict=True
    )
}
STUDY_66: dict[tuple[str, str, str], float | str] = {
    # (measure, algorithm, workload) -> the study's number (Tables 11, 14,
    # Fig. 25b); A3* ran on R3 only.
    ("failure rate", "A2", "R1"): 0.07,
    ("failure rate", "A2", "R2"): 0.07,
    ("failure rate", "A2", "R3"): 0.11,
    ("failure rate", "A3", "R1"): 0.51,
    ("failure rate", "A3", "R2"): 0.60,
    ("failure rate", "A3", "R3"): 0.75,
    ("failure rate, relative to A3", "A3*", "R3"): 0.35,
    ("failure rate, relative to A3", "A3BF", "R1"): -0.13,
    ("failure rate, relative to A3", "A3BF", "R2"): -0.12,
    ("failure rate, relative to A3", "A3BF", "R3"): -0.15,
    ("unfairness", "A2", "R1"): 0.33,
    ("unfairness", "A2", "R2"): 0.43,
    ("unfairness", "A2", "R3"): 0.50,
    ("unfairness", "A3", "R1"): 0.02,
    ("unfairness", "A3", "R2"): 0.01,
    ("unfairness", "A3", "R3"): 0.01,
    ("unfairness", "A3*", "R3"): 0.0,
}
STUDY_68: dict[tuple[str, str], tuple[float, float, float]] = {
    # (series, algorithm) -> failure rate, relative start, share started at
    # the earliest start (Tables 17, 19; seed 002 §5.5).
    ("1", "A2"): (0.11, 0.23, 0.25),
    ("1", "A3"): (0.53, 0.52, 0.0),
    ("1", "A4"): (0.52, 0.30, 0.20),
    ("2", "A2"): (0.01, 0.04, 0.70),
    ("2", "A3"): (0.47, 0.47, 0.0),
    ("2", "A4"): (0.33, 0.25, 0.30),
    ("3", "A2"): (0.03, 0.08, 0.50),
    ("3", "A3"): (0.60, 0.53, 0.0),
    ("3", "A4"): (0.53, 0.29, 0.20),
}

STUDY_691: dict[str, tuple[float, float, float, float]] = {
    # A5's weights "k=<cost> s=<start>" -> relative start, relative cost,
    # share of requests entirely in daytime, entirely at night (§6.9.1, 7
    # clusters, R1, cheap weekends on BM1 and BM3). Its mean costs are in
    # Blue Horizon units; only their ratio is compared (STUDY_691_COST).
    "k=1 s=0": (0.58, 0.00, 0.21, 0.53),
    "k=0.9 s=0.1": (0.27, 0.00, 0.37, 0.50),
    "k=0.8 s=0.2": (0.27, 0.00, 0.36, 0.45),
    "k=0.7 s=0.3": (0.26, 0.01, 0.38, 0.44),
    "k=0.6 s=0.4": (0.22, 0.03, 0.33, 0.44),
    "k=0 s=1": (0.00, 0.39, 0.28, 0.41),
}
STUDY_691_COST = 15_935 / 8_698
"""Mean cost of pure start minimisation over pure cost minimisation."""
STUDY_692: dict[str, tuple[int, int]] = {
    # Cluster -> partial reservations under A5 k=1 (cost minimisation) and
    # A4 on homogeneous prices (§6.9.2, 4 clusters, R1); compared as the
    # relative change A5 / A4 - 1.
    "BM0": (85, 74),
    "BM1": (74, 51),
    "BM2": (74, 76),
    "BM3": (45, 49),
}
STUDY_692_BM3_EXPANSION = 0.60
"""The rise of BM3's expansion factor under cost minimisation (§6.9.2)."""


def read_runs(paths: list[Path]) -> dict[Key, dict[int, dict[str, float]]]:
    """``{(experiment, label): {seed: {column: value}}}`` of ``runs.csv``
    files."""
    out: dict[Key, dict[int, dict[str, float]]] = {}
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                values = {k: float(v) for k, v in row.items() if _number(v)}
                key = (row["experiment"], row["label"])
                out.setdefault(key, {})[int(row["seed"])] = values
    return out


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def cell(values: list[float], study: float, digits: int = 3) -> str:
    """``| study | mean ± sd | min–max (n) | within noise? |`` cells."""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    low, high = min(values), max(values)
    within = "within noise" if low <= study <= high else "no"
    f = f"{{:.{digits}f}}"
    return (
        f"{f.format(study)} | {f.format(mean)} ± {f.format(sd)} | "
        f"{f.format(low)}–{f.format(high)} ({len(values)}) | {within} |"
    )


def _column(runs: dict[int, dict[str, float]], name: str) -> list[float]:
    return [runs[seed][name] for seed in sorted(runs)]


def rows_64(data: dict[Key, dict[int, dict[str, float]]]) -> Iterator[str]:
    for (workload, config, clusters), study in STUDY_64.items():
        runs = data[("6.4", f"{workload} {config} {clusters}")]
        yield f"| {config}, {clusters} | {workload} | " + cell(
            _column(runs, "failure_rate"), study
        )


def rows_66(data: dict[Key, dict[int, dict[str, float]]]) -> Iterator[str]:
    for (measure, algorithm, workload), study in STUDY_66.items():
        runs = data[("6.6", f"{workload} {algorithm}")]
        if measure.endswith("relative to A3"):
            base = data[("6.6", f"{workload} A3")]
            values = [
                (runs[s]["failure_rate"] - base[s]["failure_rate"])
                / base[s]["failure_rate"]
                for s in sorted(runs)
            ]
        else:
            values = _column(runs, measure.replace(" ", "_"))
        name = "A3-BF" if algorithm == "A3BF" else algorithm
        yield f"| {measure} | {name} | {workload} | " + cell(values, float(study))


def rows_68(data: dict[Key, dict[int, dict[str, float]]]) -> Iterator[str]:
    columns = ("failure_rate", "relative_start_earliest", "at_earliest")
    names = ("failure rate", "relative start", "started at the earliest start")
    for (series, algorithm), study in STUDY_68.items():
        runs = data[("6.8", f"series {series} {algorithm}")]
        for column, name, value in zip(columns, names, study, strict=True):
            yield f"| {series} | {algorithm} | {name} | " + cell(
                _column(runs, column), value
            )


def rows_691(data: dict[Key, dict[int, dict[str, float]]]) -> Iterator[str]:
    columns = ("relative_start", "relative_cost", "day_share", "night_share")
    names = ("relative start", "relative cost", "entirely day", "entirely night")
    for label, study in STUDY_691.items():
        runs = data[("6.9.1", label)]
        for column, name, value in zip(columns, names, study, strict=True):
            yield f"| {label} | {name} | " + cell(_column(runs, column), value)
    start, cost = data[("6.9.1", "k=0 s=1")], data[("6.9.1", "k=1 s=0")]
    ratio = [start[s]["mean_cost"] / cost[s]["mean_cost"] for s in sorted(start)]
    yield "| k=0 s=1 over k=1 s=0 | mean cost | " + cell(ratio, STUDY_691_COST, 2)


def rows_692(data: dict[Key, dict[int, dict[str, float]]]) -> Iterator[str]:
    a5, a4 = data[("6.9.2", "CostMin A5 k=1")], data[("6.9.2", "NoOpt A4 homogeneous")]
    seeds = sorted(set(a5) & set(a4))

    def change(column: str) -> list[float]:
        return [a5[s][column] / a4[s][column] - 1 for s in seeds]

    for cluster, (with_cost, homogeneous) in STUDY_692.items():
        yield f"| {cluster} | partial reservations, A5 over A4 | " + cell(
            change(f"{cluster}_reservations"), with_cost / homogeneous - 1
        )
    yield "| BM3 | expansion factor, A5 over A4 | " + cell(
        change("BM3_expansion"), STUDY_692_BM3_EXPANSION
    )


def tables(data: dict[Key, dict[int, dict[str, float]]]) -> str:
    """The three tables, each only if ``data`` holds its experiment."""
    head = "study | ours, mean ± sd | ours, min–max (seeds) | study within our range |"
    rule = "---|---|---|---|"
    sections = (
        ("6.4", "§6.4: A1's failure rate", "(minsize, windows), clusters | workload"),
        ("6.6", "§6.6 and §6.7: failure rates and unfairness (4 clusters)",
         "measure | algorithm | workload"),
        ("6.8", "§6.8: start-time sorting", "series | algorithm | measure"),
        ("6.9.1", "§6.9.1: A5, cost against start (7 clusters, R1)",
         "weights | measure"),
        ("6.9.2", "§6.9.2: cost minimisation shifts load (4 clusters, R1)",
         "cluster | measure (relative change)"),
    )  # fmt: skip
    rows = {
        "6.4": rows_64,
        "6.6": rows_66,
        "6.8": rows_68,
        "6.9.1": rows_691,
        "6.9.2": rows_692,
    }
    parts = []
    for experiment, title, columns in sections:
        if any(key[0] == experiment for key in data):
            rules = "|---" * (columns.count("|") + 1)
            parts += [f"### {title}\n", f"| {columns} | {head}", f"{rules}|{rule}"]
            parts += [*rows[experiment](data), ""]
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    text = tables(read_runs(args.runs))
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
