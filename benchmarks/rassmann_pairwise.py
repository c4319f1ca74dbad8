"""Rassmann's Tables 3.2.1/3.2.2: minimal instances separating ten schedulers.

Writes benchmarks/results/rassmann/pairwise.md, pairwise.csv (one row per
ordered pair) and pbt.csv (the pbt score per scheduler, read by
rassmann_exp3.py).

Protocol:

1. Exhaustive enumeration (:func:`optsched.worstcase.pairwise.
   enumerate_minima`) over the tiered space of ``--tiers`` (sizes up to
   S1 with run times <= R1 and releases <= Q1, then up to S2 with R2, Q2,
   ...): the smallest J+k+o at which the row beats the column, exact within
   the space.
2. Every witness is re-run with the product's simulator
   (``optsched.heuristics.simulate`` on the combinator specs) and both
   schedules pass ``check_schedule``; the makespans must agree with the
   enumeration's fast simulator.
3. Pairs without a witness in the space: the thesis's Hypothesis search
   (its generator: <= 10 nodes, 2..10 jobs, p <= 10, q <= 10;
   ``--examples`` examples for each of ``--seeds`` seeds, greedy shrink),
   also verified as in 2.
4. With ``--hypothesis-all N``: the thesis's method itself on all 90
   pairs (same generator, N examples, Hypothesis's shrinking only), once
   per seed ``0..--hypothesis-seeds - 1``, verified as in 2, and its pbt
   score per seed beside the exact one.

Usage::

    .venv/bin/python benchmarks/rassmann_pairwise.py [--tiers 7,4,4/8,3,3/9,2,2]
        [--examples 4000] [--seeds 3] [--hypothesis-all 3000]
        [--hypothesis-seeds 4] [--quick]
"""

from __future__ import annotations

import argparse
import csv
import math
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from markdown_table import markdown_table

from optsched.worstcase.pairwise import (
    SCHEDULERS,
    PairSpace,
    Witness,
    enumerate_minima,
    fast_makespans,
    hypothesis_witness,
    pbt_scores,
    verify,
)

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "rassmann"

LABELS = [s.label for s in SCHEDULERS]

THESIS_321 = """
fifo       + 3+2+0 3+2+1 6+2+2 X 8+3+4 3+4+0 3+2+0 3+2+1 3+9+1
spt        3+2+1 + 3+2+1 4+2+1 4+2+1 4+2+1 6+8+0 6+10+5 3+3+1 4+5+3
lpt        3+2+0 3+2+0 + 4+4+2 3+2+0 3+2+2 3+2+0 3+2+0 4+2+2 7+5+2
Fifo-fit   3+2+2 3+2+2 3+2+0 + 5+4+2 3+2+1 3+2+0 3+2+0 3+2+1 4+3+0
Fifo-back  5+2+0 3+2+2 3+2+0 5+6+4 + 7+6+2 3+3+0 3+2+2 3+2+1 3+2+1
Fifo-optim 3+3+1 3+2+0 3+2+0 4+2+1 3+4+0 + 3+4+0 3+2+2 3+2+1 3+2+1
Spt-fit    3+2+2 3+2+2 3+2+0 3+2+1 3+2+2 3+2+0 + 3+3+0 3+2+1 5+5+4
Spt-back   3+2+0 5+2+2 3+2+1 3+2+1 3+2+1 3+2+1 5+4+2 + 3+2+1 3+2+1
Lpt-fit    3+2+2 3+2+1 3+2+0 3+2+0 3+2+1 3+2+0 3+2+0 3+2+0 + 4+4+3
Lpt-back   3+2+1 3+2+2 3+3+0 3+2+0 3+4+1 4+2+1 3+2+0 3+2+0 5+4+2 +
"""
"""Table 3.2.1 (seed notes Sec. A4.3): cell (row R, column C) = size of the
smallest instance *found* where R has the smaller makespan; X = impossible."""

THESIS_PBT = {
    "fifo": 0.756218905472637,
    "spt": 0.666666666666667,
    "lpt": 0.765625,
    "Fifo-fit": 1.20338983050847,
    "Fifo-back": 0.866554054054054,
    "Fifo-optim": 1.28070175438597,
    "Spt-fit": 1.03174603174603,
    "Spt-back": 1.08196721311475,
    "Lpt-fit": 1.12727272727273,
    "Lpt-back": 1.48333333333333,
}
"""Table 3.2.2's pbt scores (= Table 3.2.3's column)."""


def thesis_cells() -> dict[tuple[str, str], str]:
    """``(row, column) -> "J+k+o"`` or ``"X"`` of Table 3.2.1."""
    cells = {}
    for line in THESIS_321.strip().splitlines():
        row, *values = line.split()
        for column, value in zip(LABELS, values, strict=True):
            if value != "+":
                cells[row, column] = value
    return cells


def cell_size(text: str) -> int | None:
    """``"3+2+1"`` -> 6; ``"X"`` -> None."""
    return None if text == "X" else sum(int(x) for x in text.split("+"))


def parse_tiers(text: str) -> PairSpace:
    """``"7,4,4/8,3,3"`` -> the tiered space."""
    tiers = tuple(
        (int(a), int(b), int(c))
        for a, b, c in (part.split(",") for part in text.split("/"))
    )
    return PairSpace(tiers)


def checked(witness: Witness) -> Witness:
    """The witness, after the product's simulator and the checker agree."""
    values = verify(witness)
    fast = (witness.winner_value, witness.loser_value)
    assert values == fast, f"{witness.describe()}: product gives {values}"
    return witness


def search_open(
    pairs: list[tuple[str, str]], examples: int, seeds: int
) -> dict[tuple[str, str], Witness]:
    """Hypothesis witnesses (smallest over the seeds) for the open pairs."""
    found: dict[tuple[str, str], Witness] = {}
    for winner, loser in pairs:
        best = None
        for seed in range(seeds):
            w = hypothesis_witness(winner, loser, seed=seed, examples=examples)
            if w is not None and (best is None or w.size < best.size):
                best = w
        print(f"  hypothesis {winner} beats {loser}: "
              f"{best.describe() if best else 'none'}", flush=True)  # fmt: skip
        if best is not None:
            found[winner, loser] = checked(best)
    return found


def replicate_thesis(examples: int, seed: int) -> dict[tuple[str, str], Witness]:
    """The thesis's Hypothesis search on every ordered pair (no greedy pass)."""
    found = {}
    for a in LABELS:
        for b in LABELS:
            if a == b:
                continue
            w = hypothesis_witness(a, b, seed=seed, examples=examples, greedy=False)
            if w is not None:
                found[a, b] = checked(w)
    print(f"  thesis method, seed {seed}: {len(found)} pairs separated", flush=True)
    return found


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True,
            text=True, check=True, cwd=HERE,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def ranking(scores: dict[str, float]) -> list[str]:
    """Labels by score, best (highest) first."""
    return sorted(scores, key=lambda s: -scores[s] if not math.isnan(scores[s]) else 0)


def pair_matrix(cell: Callable[[str, str], str], align: str) -> list[str]:
    """A Markdown table of the ordered pairs: ``cell(row, column)`` where row R
    beats column C, ``+`` on the diagonal; ``align`` (``l`` or ``r``, see
    :func:`markdown_table.markdown_table`) aligns each column."""
    rows = [[r, *("+" if r == c else cell(r, c) for c in LABELS)] for r in LABELS]
    return markdown_table(("R beats C", *LABELS), "l" + align * len(LABELS), rows)


def write(
    space: PairSpace,
    exhaustive: dict[tuple[str, str], Witness],
    hypo: dict[tuple[str, str], Witness],
    counts: dict[int, int],
    seconds: float,
    cpu: float,
    args: argparse.Namespace,
    replicas: list[dict[tuple[str, str], Witness]],
) -> None:
    """Write pairwise.csv, pbt.csv and pairwise.md to :data:`OUT`."""
    OUT.mkdir(parents=True, exist_ok=True)
    thesis = thesis_cells()
    top = space.max_size
    rows, ours_sizes = pair_rows(exhaustive, hypo, thesis, top)
    with (OUT / "pairwise.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    ours = pbt_scores(ours_sizes)
    thesis_sizes = {k: s for k, v in thesis.items() if (s := cell_size(v)) is not None}
    recomputed = pbt_scores(thesis_sizes)
    methods = [pbt_scores({k: w.size for k, w in r.items()}) for r in replicas]
    with (OUT / "pbt.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        extra = [f"pbt_hypothesis_{i}" for i in range(len(replicas))]
        writer.writerow(["scheduler", "pbt_ours", "pbt_thesis", *extra])
        for label in LABELS:
            writer.writerow(
                [label, f"{ours[label]:.6f}", f"{THESIS_PBT[label]:.6f}"]
                + [f"{m[label]:.6f}" for m in methods]
            )
    lines = [
        "# Rassmann Table 3.2.1 / 3.2.2: minimal separating instances",
        "",
        f"Commit {git_commit()}; `benchmarks/rassmann_pairwise.py --tiers "
        f"{args.tiers} --examples {args.examples} --seeds {args.seeds} "
        f"--hypothesis-all {args.hypothesis_all} --hypothesis-seeds "
        f"{args.hypothesis_seeds}`; "
        f"{seconds:.0f} s wall, {cpu:.0f} s CPU.",
        "",
        f"Space: {space.describe()}.",
        "",
        "Class representatives run per size: "
        + ", ".join(f"{s}: {n:,}" for s, n in sorted(counts.items()))
        + ".",
        "",
        "Cell (row R, column C) = smallest J+k+o (jobs + nodes + online jobs) "
        "on which R has a strictly smaller makespan than C. Each cell: "
        f"**ours** (exact minimum within the space; `> {top}` = no witness in "
        "the space, then the Hypothesis size in brackets, `-` if none) / "
        "thesis (Hypothesis, found). Every witness was re-run with "
        "`optsched.heuristics.simulate` and both schedules passed "
        "`check_schedule`.",
        "",
        *matrix_section(exhaustive, hypo, thesis, top),
        "",
        "## pbt score (Table 3.2.2): mean losing size / mean winning size",
        "",
        "Non-null cells only (our cells: exact minimum, else the Hypothesis "
        "size; pairs with neither are null). 'thesis (recomputed)' is the "
        "score recomputed from Table 3.2.1's sums, a check of the formula.",
        "",
        *pbt_table(ours, recomputed),
        "",
        "Ranking (ours, best first): " + " > ".join(ranking(ours)),
        "",
    ]
    if replicas:
        lines += replication_section(replicas, methods, args.hypothesis_all)
    lines += [
        "## Witnesses",
        "",
        "Jobs as (q, pi, p) in id order; k nodes of speed 1.",
        "",
    ]
    for key in sorted(
        exhaustive | hypo, key=lambda k: (LABELS.index(k[0]), LABELS.index(k[1]))
    ):
        w = exhaustive.get(key) or hypo[key]
        lines.append(f"- {w.winner} beats {w.loser} ({w.found_by}): {w.describe()}")
    (OUT / "pairwise.md").write_text("\n".join(lines) + "\n")


def matrix_section(
    exhaustive: dict[tuple[str, str], Witness],
    hypo: dict[tuple[str, str], Witness],
    thesis: dict[tuple[str, str], str],
    top: int,
) -> list[str]:
    """Table 3.2.1, ours beside the thesis's, and the cells where our exact
    minimum exceeds the size the thesis found."""

    def cell(r: str, c: str) -> str:
        w, h = exhaustive.get((r, c)), hypo.get((r, c))
        if w is not None:
            ours_text = "+".join(map(str, w.parts))
        else:
            extra = "+".join(map(str, h.parts)) if h else "-"
            ours_text = f"> {top} ({extra})"
        return f"**{ours_text}** / {thesis[r, c]}"

    above = [
        (r, c) for (r, c), t in thesis.items()
        if (r, c) in exhaustive and (s := cell_size(t)) is not None
        and exhaustive[r, c].size > s
    ]  # fmt: skip
    return [
        *pair_matrix(cell, "l"),
        "",
        f"Cells where our exact minimum exceeds the thesis's found size: "
        f"{len(above)}" + (f" ({above})" if above else "") + ".",
    ]


def pair_rows(
    exhaustive: dict[tuple[str, str], Witness],
    hypo: dict[tuple[str, str], Witness],
    thesis: dict[tuple[str, str], str],
    top: int,
) -> tuple[list[dict[str, object]], dict[tuple[str, str], int]]:
    """pairwise.csv's rows, one per ordered pair, and our size of each pair
    separated: the exact minimum, else the Hypothesis size."""
    ours_sizes: dict[tuple[str, str], int] = {}
    rows = []
    for r in LABELS:
        for c in LABELS:
            if r == c:
                continue
            w = exhaustive.get((r, c))
            h = hypo.get((r, c))
            if w is not None:
                ours_sizes[r, c] = w.size
            elif h is not None:
                ours_sizes[r, c] = h.size
            chosen = w or h
            rows.append({
                "winner": r, "loser": c,
                "exact_size": w.size if w else "",
                "exact_parts": "+".join(map(str, w.parts)) if w else f"> {top}",
                "hypothesis_parts": "+".join(map(str, h.parts)) if h else "",
                "thesis": thesis[r, c],
                "nodes": chosen.nodes if chosen else "",
                "jobs_q_pi_p": " ".join(f"{q}/{pi}/{p}" for q, pi, p in chosen.genes)
                if chosen else "",
                "winner_cmax": chosen.winner_value if chosen else "",
                "loser_cmax": chosen.loser_value if chosen else "",
            })  # fmt: skip
    return rows, ours_sizes


def pbt_table(ours: dict[str, float], recomputed: dict[str, float]) -> list[str]:
    """The pbt table: our score, the thesis's and the one recomputed from its
    Table 3.2.1, with ranks."""
    ours_rank = {label: i + 1 for i, label in enumerate(ranking(ours))}
    thesis_rank = {label: i + 1 for i, label in enumerate(ranking(THESIS_PBT))}
    rows = [
        (label, f"{ours[label]:.3f}", ours_rank[label], f"{THESIS_PBT[label]:.3f}",
         thesis_rank[label], f"{recomputed[label]:.3f}")
        for label in LABELS
    ]  # fmt: skip
    header = ("scheduler", "ours", "rank", "thesis", "rank", "thesis (recomputed)")
    return markdown_table(header, "lrrrrr", rows)


def replication_section(
    replicas: list[dict[tuple[str, str], Witness]],
    methods: list[dict[str, float]],
    examples: int,
) -> list[str]:
    """Sizes (seed 0) and pbt scores (every seed) of the thesis's method."""
    first = replicas[0]
    lines = [
        "## The thesis's method re-run (Hypothesis only, every pair)",
        "",
        f"Its generator, {examples} examples per ordered pair (thesis: "
        "100,000), Hypothesis's shrinking only (no greedy pass), the fast "
        "simulator; every witness verified as above. Sizes J+k+o found with "
        "seed 0 (`-`: none):",
        "",
        *pair_matrix(
            lambda r, c: str(first[r, c].size) if (r, c) in first else "-", "r"
        ),
    ]
    lines += [
        "",
        "pbt score of the thesis's method, one column per seed (rank in brackets):",
        "",
    ]
    ranks = [{k: i + 1 for i, k in enumerate(ranking(m))} for m in methods]
    rows = [
        [
            label,
            *(
                f"{m[label]:.3f} ({r[label]})"
                for m, r in zip(methods, ranks, strict=True)
            ),
        ]
        for label in LABELS
    ]
    header = ("scheduler", *(f"seed {i}" for i in range(len(methods))))
    lines += markdown_table(header, "l" + "r" * len(methods), rows)
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="7,4,4/8,3,3/9,2,2")
    parser.add_argument("--examples", type=int, default=4000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--hypothesis-all", type=int, default=0, metavar="N")
    parser.add_argument("--hypothesis-seeds", type=int, default=1, metavar="K")
    parser.add_argument("--quick", action="store_true", help="tiny smoke run")
    args = parser.parse_args()
    if args.quick:
        args.tiers, args.examples, args.seeds = "6,2,2", 200, 1
        args.hypothesis_all = min(args.hypothesis_all, 100)
    space = parse_tiers(args.tiers)
    began = time.perf_counter()
    search = enumerate_minima(space, progress=lambda m: print(
        f"{time.perf_counter() - began:7.1f} s  {m}", flush=True))  # fmt: skip
    exhaustive = {k: checked(w) for k, w in search.witnesses.items()}
    print(f"verified {len(exhaustive)} witnesses", flush=True)
    hypo = search_open(search.open_pairs(), args.examples, args.seeds)
    replicas = [
        replicate_thesis(args.hypothesis_all, seed)
        for seed in range(args.hypothesis_seeds if args.hypothesis_all else 0)
    ]
    for w in hypo.values():
        assert fast_makespans(w.nodes, w.genes)  # reproducible
    seconds = time.perf_counter() - began
    usage = resource.getrusage(resource.RUSAGE_SELF)
    write(space, exhaustive, hypo, search.counts, seconds,
          usage.ru_utime + usage.ru_stime, args, replicas)  # fmt: skip
    print(f"wrote {OUT / 'pairwise.md'}")


if __name__ == "__main__":
    main()
