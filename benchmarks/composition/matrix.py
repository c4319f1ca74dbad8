"""Composition matrix: which combinations of instance features work end to end.

Usage::

    python benchmarks/composition/matrix.py                  # Markdown on stdout
    python benchmarks/composition/matrix.py -o BEFORE.md --json raw.json
    python benchmarks/composition/matrix.py --time-limit 2 --triples
    python benchmarks/composition/matrix.py --cli calendar+chains --cli outages
    python benchmarks/composition/matrix.py --only speeds+smp --only chains

    # one commit, whatever the working tree holds:
    mkdir /tmp/optsched-C && git archive C | tar -x -C /tmp/optsched-C
    PYTHONPATH=/tmp/optsched-C python benchmarks/composition/matrix.py --commit C

Runs every single feature and every pair of features of
``tests/support/composition.py`` (ten instance features and the two engine
options kill-at-estimate and migration: 12 singles, 45 pairs of instance
features, 21 pairs with an engine option; ``--triples`` adds the 120
triples of instance features) through the stages build, simulate, check,
bound (bounds-only), bound (cpsat), gap and consistency
(:func:`~support.composition.run_pipeline`), and prints:

- the counts: combinations that work end to end (with every policy, and
  with the policies that take them), refused at build, by simulate, by the
  exact model, failing in gap, per stage and status, per policy;
- the matrix (rows and columns = features, the diagonal = the feature
  alone): ``ok``, or the stages refused (``R:``) and failed (``F:``) with a
  footnote number naming the first message, and the policies that refused
  while others ran (``-xy``);
- the most common messages, where ``solve()`` called alone differs from
  the solve given the pipeline's starting schedules, and one line per
  combination with each stage's outcome;
- the same stages through the command line (``CliRunner``) for a few
  combinations, beside the library's outcomes (``--cli``; by default two
  that work, two refused by simulate and every one with a failed stage, up
  to ``--cli-count``).

``--json FILE`` writes the raw outcomes. Solves use one worker and
``--time-limit`` seconds each (default 1). The header names the commit of
this repository, or, when optsched is imported from elsewhere (an export
put first on ``PYTHONPATH``), that folder and the ``--commit`` given.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.composition import (  # noqa: E402
    ENGINE_OPTIONS,
    FAILED,
    FEATURES,
    INSTANCE_FEATURES,
    NA,
    OK,
    REFUSED,
    STAGES,
    Outcome,
    normalise,
    refused_policies,
    run_cli_pipeline,
    run_pipeline,
    source_root,
    works,
)

STAGE_CODES = {
    "build": "B",
    "simulate": "S",
    "check": "C",
    "bound-bounds-only": "L",
    "bound-cpsat": "X",
    "gap": "G",
    "consistency": "K",
}
"""One letter per stage in the matrix cells."""
POLICY_CODES = {
    "fcfs": "f",
    "easy": "e",
    "conservative": "c",
    "fit:f=fifo": "F",
    "adaptive": "a",
    "easy-scaling": "s",
    "deq": "d",
}
"""One letter per policy in the matrix cells (a policy that refused)."""
ALONE = " (solve alone)"
"""Suffix of the detail lines of ``solve()`` called without starting
schedules (:func:`support.composition.run_pipeline`)."""

Outcomes = dict[str, Outcome]
Combination = tuple[str, ...]


def commit(given: str | None = None) -> str:
    """The commit the report is about, and where optsched was imported from.

    Parameters
    ----------
    given
        The commit of an export put first on ``PYTHONPATH`` (``--commit``);
        ``None``: this repository's ``git rev-parse --short HEAD``.

    Returns
    -------
    str
        Markdown: the commit, with ``+changes`` when optsched runs from this
        working tree and tracked files differ from it, or with the folder it
        was imported from (an export of one commit put first on
        ``PYTHONPATH``: without ``given`` its commit is not known, and the
        repository's HEAD is named as such).
    """
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        head, dirty = "unknown", ""
    root = source_root()
    if root != REPO.resolve():
        if given:
            return f"Commit `{given}` (optsched imported from `{root}`)"
        return (
            f"Commit unknown: optsched imported from `{root}` (this "
            f"repository's HEAD is `{head}`; give `--commit`)"
        )
    if given and given != head:
        return f"Commit `{head}` (not `{given}`: optsched ran from this tree)"
    return f"Commit `{head}+changes`" if dirty else f"Commit `{head}`"


def combinations(triples: bool) -> list[Combination]:
    """The combinations to run: singles, pairs, and triples if asked for.

    Parameters
    ----------
    triples
        Add every triple of instance features.

    Returns
    -------
    list of tuple of str
        Each combination in feature order.
    """
    out: list[Combination] = [(f,) for f in FEATURES]
    out += [tuple(pair) for pair in itertools.combinations(FEATURES, 2)]
    if triples:
        out += [tuple(t) for t in itertools.combinations(INSTANCE_FEATURES, 3)]
    return out


def label(combination: Combination) -> str:
    """``a+b``: a combination's name.

    Parameters
    ----------
    combination
        Feature names.

    Returns
    -------
    str
        The names joined by ``+`` (``base`` when empty).
    """
    return "+".join(combination) or "base"


def kind(combination: Combination) -> str:
    """``single``, ``pair``, ``engine pair`` (with an engine option) or
    ``triple``.

    Parameters
    ----------
    combination
        Feature names.

    Returns
    -------
    str
        The group the combination is counted in.
    """
    if len(combination) <= 1:
        return "single"
    if len(combination) == 2:
        engine = any(f in ENGINE_OPTIONS for f in combination)
        return "engine pair" if engine else "pair"
    return "triple"


def short(message: str) -> str:
    """A message with numbers and job names taken out, to group alike ones.

    Parameters
    ----------
    message
        An outcome message.

    Returns
    -------
    str
        The message with every number replaced by ``N``.
    """
    return re.sub(r"\d[\d,.]*", "N", message)


def cell(outcomes: Mapping[str, Outcome], notes: dict[str, int]) -> str:
    """A matrix cell: ``ok``, or the refused and failed stages.

    Parameters
    ----------
    outcomes
        The stages of one combination.
    notes
        Message to footnote number, extended with new messages.

    Returns
    -------
    str
        E.g. ``ok -F`` (works, but policy ``F`` refused it), ``R:S[3]``
        (simulate refused by every policy, note 3) or ``-cF F:XG[7]``
        (policies ``c`` and ``F`` refused; cpsat and gap failed, note 7).
    """
    if works(outcomes):
        return "ok"
    simulate = outcomes["simulate"]
    partial = simulate.status == REFUSED and OK in simulate.details.values()
    parts = []
    for status, tag in ((REFUSED, "R"), (FAILED, "F")):
        stages = [
            s
            for s in STAGES
            if outcomes[s].status == status and not (s == "simulate" and partial)
        ]
        if not stages:
            continue
        first = outcomes[stages[0]]
        key = f"{stages[0]}: {first.message}"
        number = notes.setdefault(key, len(notes) + 1)
        codes = "".join(STAGE_CODES[s] for s in stages)
        parts.append(f"{tag}:{codes}[{number}]")
    if partial:
        policies = "".join(POLICY_CODES.get(p, p) for p in refused_policies(outcomes))
        parts.insert(0, f"{'' if parts else 'ok '}-{policies}")
    return " ".join(parts)


def escape(text: str) -> str:
    """Text made safe for a Markdown table cell.

    Parameters
    ----------
    text
        Any text.

    Returns
    -------
    str
        Pipes escaped, newlines folded.
    """
    return text.replace("|", "\\|").replace("\n", " ")


def matrix_table(results: Mapping[Combination, Outcomes], notes: dict[str, int]) -> str:
    """The Markdown matrix of singles (diagonal) and pairs.

    Parameters
    ----------
    results
        Outcomes by combination.
    notes
        Footnotes, extended by the cells.

    Returns
    -------
    str
        One Markdown table.
    """
    header = "| | " + " | ".join(FEATURES) + " |"
    lines = [header, "|---" * (len(FEATURES) + 1) + "|"]
    for row in FEATURES:
        cells = []
        for column in FEATURES:
            combination = normalise((row, column))
            cells.append(cell(results[combination], notes))
        lines.append(f"| **{row}** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def counts(results: Mapping[Combination, Outcomes]) -> str:
    """Counts per group: working end to end, refused and failed per stage.

    Parameters
    ----------
    results
        Outcomes by combination.

    Returns
    -------
    str
        Markdown: a summary table, a stage-by-status table and a
        policy-by-status table.
    """
    groups: dict[str, list[Outcomes]] = {}
    for combination, outcomes in results.items():
        groups.setdefault(kind(combination), []).append(outcomes)
    rows = [
        "| group | combinations | work end to end (every policy) | work end to "
        "end (policies that take them) | refused at build | refused by "
        "simulate (every policy) | refused by simulate (some policies) | "
        "refused by bounds-only | refused by cpsat (exact model) | failed in "
        "simulate | failed in check | failed in a bound | failed in gap | "
        "gap n/a |",
        "|---" * 14 + "|",
    ]
    for group in ("single", "pair", "engine pair", "triple"):
        members = groups.get(group, [])
        if not members:
            continue

        def n(stage: str, status: str, members: list[Outcomes] = members) -> int:
            return sum(o[stage].status == status for o in members)

        some = sum(
            o["simulate"].status == REFUSED and OK in o["simulate"].details.values()
            for o in members
        )
        bound_failed = sum(
            FAILED in (o["bound-bounds-only"].status, o["bound-cpsat"].status)
            for o in members
        )
        lenient = sum(works(o, strict=False) for o in members)
        rows.append(
            f"| {group} | {len(members)} | {sum(map(works, members))} | "
            f"{lenient} | {n('build', REFUSED)} | {n('simulate', REFUSED) - some} "
            f"| {some} | {n('bound-bounds-only', REFUSED)} | "
            f"{n('bound-cpsat', REFUSED)} | {n('simulate', FAILED)} | "
            f"{n('check', FAILED)} | {bound_failed} | {n('gap', FAILED)} | "
            f"{n('gap', NA)} |"
        )
    statuses = (OK, REFUSED, FAILED, NA)
    stages = ["| stage | " + " | ".join(statuses) + " |", "|---" * 5 + "|"]
    for stage in STAGES:
        tally = Counter(o[stage].status for o in results.values())
        cells = " | ".join(str(tally[s]) for s in statuses)
        stages.append(f"| {stage} | {cells} |")
    policies: dict[str, Counter[str]] = {}
    for outcomes in results.values():
        for policy, text in outcomes["simulate"].details.items():
            status = text.split(":", 1)[0]
            policies.setdefault(policy, Counter())[status] += 1
    table = ["| policy (code) | ran | refused | failed |", "|---" * 4 + "|"]
    for policy, tally in policies.items():
        code = POLICY_CODES.get(policy, policy)
        table.append(
            f"| {policy} ({code}) | {tally[OK]} | {tally[REFUSED]} | {tally[FAILED]} |"
        )
    return (
        "\n".join(rows)
        + "\n\nEvery combination, per stage:\n\n"
        + "\n".join(stages)
        + "\n\nEvery simulation, per policy:\n\n"
        + "\n".join(table)
    )


def common_messages(results: Mapping[Combination, Outcomes], top: int = 15) -> str:
    """The most common refusal and failure messages (numbers folded).

    Parameters
    ----------
    results
        Outcomes by combination.
    top
        Messages listed per status.

    Returns
    -------
    str
        Markdown: per status, a table of stage, message, count and an
        example combination.
    """
    out = []
    for status in (FAILED, REFUSED):
        tally: Counter[tuple[str, str]] = Counter()
        example: dict[tuple[str, str], str] = {}
        for combination, outcomes in results.items():
            for stage in STAGES:
                outcome = outcomes[stage]
                if outcome.status != status:
                    continue
                # Every call with this status counts (a stage may hold several).
                messages = [
                    f"{name}: {text.split(': ', 1)[1]}"
                    for name, text in outcome.details.items()
                    if text.startswith(f"{status}: ") and ALONE not in name
                ] or [outcome.message]
                for message in messages:
                    key = (stage, short(message))
                    tally[key] += 1
                    example.setdefault(key, f"{label(combination)}: {message}")
        out.append(f"### Most common: {status}\n")
        out.append("| stage | count | example (combination: message) |")
        out.append("|---|---|---|")
        for (stage, _), number in tally.most_common(top):
            out.append(f"| {stage} | {number} | {escape(example[(stage, _)])} |")
        out.append("")
    return "\n".join(out)


def alone_differences(results: Mapping[Combination, Outcomes]) -> str:
    """Where ``solve()`` called alone differs from the solve given the
    pipeline's starting schedules (what ``optsched bound`` and ``gap`` do).

    Parameters
    ----------
    results
        Outcomes by combination.

    Returns
    -------
    str
        A Markdown table (or a sentence when nothing differs).
    """
    lines = [
        "| combination | stage | objective | with starting schedules | solve() alone |",
        "|---|---|---|---|---|",
    ]
    for combination, outcomes in results.items():
        for stage in ("bound-bounds-only", "bound-cpsat"):
            details = outcomes[stage].details
            for name, text in details.items():
                if ALONE not in name:
                    continue
                objective = name.replace(ALONE, "")
                given = details.get(objective, "")
                if given.split(":", 1)[0] != text.split(":", 1)[0]:
                    lines.append(
                        f"| {label(combination)} | {stage} | {objective} | "
                        f"{escape(given[:140])} | {escape(text[:140])} |"
                    )
    if len(lines) == 2:
        return "No difference: every status is the same with and without them."
    return "\n".join(lines)


def detail_lines(results: Mapping[Combination, Outcomes]) -> str:
    """One Markdown table row per combination: every stage's outcome.

    Parameters
    ----------
    results
        Outcomes by combination.

    Returns
    -------
    str
        A Markdown table.
    """
    lines = ["| combination | " + " | ".join(STAGES) + " |"]
    lines.append("|---" * (len(STAGES) + 1) + "|")
    for combination, outcomes in results.items():
        cells = []
        for stage in STAGES:
            outcome = outcomes[stage]
            text = outcome.status
            if outcome.status in (REFUSED, FAILED):
                text += f": {outcome.message[:160]}"
            cells.append(escape(text))
        lines.append(f"| {label(combination)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cli_choice(
    results: Mapping[Combination, Outcomes], count: int
) -> list[Combination]:
    """Combinations to rerun through the command line.

    Two that work, two refused by simulate, then every one with a failed
    stage (``consistency`` aside: the command line does not probe it), up
    to ``count`` in all.

    Parameters
    ----------
    results
        Outcomes by combination (pairs are preferred).
    count
        Most combinations chosen.

    Returns
    -------
    list of tuple of str
        The combinations, each once.
    """
    pairs = [c for c in results if len(c) == 2]

    def where(test: Any) -> list[Combination]:
        return [c for c in pairs if test(results[c])]

    failing = where(
        lambda o: any(o[s].status == FAILED for s in STAGES if s != "consistency")
    )
    working = where(works)[:2]
    refused = where(lambda o: o["simulate"].status == REFUSED)[:2]
    chosen = list(dict.fromkeys([*working, *refused, *failing]))
    return chosen[:count]


def cli_table(
    library: Mapping[Combination, Outcomes],
    cli: Mapping[Combination, Outcomes],
) -> str:
    """Library and command-line outcomes side by side.

    Parameters
    ----------
    library
        The library pipeline's outcomes.
    cli
        The command line's outcomes of some of the same combinations.

    Returns
    -------
    str
        A Markdown table: per combination and stage, ``library / cli``
        statuses (bold when they differ), and the command line's message
        where it refused or failed.
    """
    stages = [s for s in STAGES if s not in ("build", "consistency")]
    lines = ["| combination | " + " | ".join(stages) + " | CLI messages |"]
    lines.append("|---" * (len(stages) + 2) + "|")
    for combination, outcomes in cli.items():
        cells, said = [], []
        for stage in stages:
            mine, theirs = library[combination][stage].status, outcomes[stage].status
            text = mine if mine == theirs else f"**{mine} / {theirs}**"
            cells.append(text)
            if theirs in (REFUSED, FAILED):
                said.append(f"{stage}: {outcomes[stage].message[:200]}")
        lines.append(
            f"| {label(combination)} | " + " | ".join(cells) + " | "
            + escape("; ".join(said)) + " |"
        )  # fmt: skip
    return "\n".join(lines)


def report(
    results: Mapping[Combination, Outcomes],
    cli: Mapping[Combination, Outcomes],
    *,
    time_limit: float,
    seconds: float,
    note: str = "",
    given: str | None = None,
) -> str:
    """The whole Markdown report.

    Parameters
    ----------
    results
        Library outcomes by combination.
    cli
        Command-line outcomes of some combinations.
    time_limit
        Seconds per solve.
    seconds
        Wall-clock time of the run.
    note
        A paragraph put under the header (e.g. how the code was exported).
    given
        The commit of the code run, when optsched is imported from an
        export (:func:`commit`).

    Returns
    -------
    str
        Markdown.
    """
    notes: dict[str, int] = {}
    matrix = matrix_table(results, notes)
    footnotes = "\n".join(f"{number}. {escape(text)}" for text, number in notes.items())
    codes = ", ".join(f"{code} = {stage}" for stage, code in STAGE_CODES.items())
    policies = ", ".join(f"{code} = {p}" for p, code in POLICY_CODES.items())
    today = datetime.date.today().isoformat()
    parts = [
        "# Composition matrix",
        "",
        f"{commit(given)}, {today}; `python benchmarks/composition/matrix.py "
        f"--time-limit {time_limit:g}`: {len(results)} combinations in "
        f"{seconds:.0f} s (1 solver worker, {time_limit:g} s per solve).",
        "",
        *([note, ""] if note else []),
        "Base: the first 12 jobs of `instances/kth_20.json` on its 100 "
        "processors; builders and stages in `tests/support/composition.py`. "
        "A combination works end to end when no stage is refused or failed "
        "(`n/a`: the stage does not apply, e.g. `optsched gap` has no engine "
        "options). `migration` runs on a contiguous machine (it needs one). "
        "Policies: fcfs, easy, conservative, fit:f=fifo; with moldable jobs "
        "also adaptive and easy-scaling, with malleable ones deq; gap with "
        "fcfs, easy (+ adaptive, deq) among those that ran.",
        "",
        "## Counts",
        "",
        counts(results),
        "",
        "## Matrix",
        "",
        f"Diagonal: the feature alone. `R:` refused, `F:` failed, then the "
        f"stages ({codes}) and the footnote of the first such stage's message; "
        f"`-xy`: the policies that refused while others ran ({policies}), "
        "`ok -xy` when nothing else went wrong.",
        "",
        matrix,
        "",
        footnotes,
        "",
        common_messages(results),
        "## solve() alone",
        "",
        "The bound stages pass the pipeline's starting schedules "
        "(`optsched.analysis.gap.heuristic_incumbents`), as `optsched bound` and "
        "`optsched gap` do. Where `optsched.models.solve()` called without "
        "them gives another status:",
        "",
        alone_differences(results),
        "",
        "## Every combination",
        "",
        detail_lines(results),
        "",
    ]
    if cli:
        parts += [
            "## Through the command line",
            "",
            "The same stages with `optsched simulate/check/bound/gap` "
            "(`CliRunner`) on the instance written as JSON; `library / cli` "
            "in bold where they differ.",
            "",
            cli_table(results, cli),
            "",
        ]
    return "\n".join(parts)


def raw(
    results: Mapping[Combination, Outcomes],
    cli: Mapping[Combination, Outcomes],
    time_limit: float,
    given: str | None = None,
) -> dict[str, Any]:
    """The raw outcomes as JSON data.

    Parameters
    ----------
    results
        Library outcomes by combination.
    cli
        Command-line outcomes.
    time_limit
        Seconds per solve.
    given
        The commit of the code run (:func:`commit`).

    Returns
    -------
    dict
        ``commit``, ``time_limit``, ``results`` and ``cli``: lists of
        ``{"features", "works", "stages"}``.
    """

    def rows(found: Mapping[Combination, Outcomes]) -> list[dict[str, Any]]:
        return [
            {
                "features": list(combination),
                "works": works(outcomes),
                "stages": {s: o.as_dict() for s, o in outcomes.items()},
            }
            for combination, outcomes in found.items()
        ]

    return {
        "commit": commit(given).replace("`", ""),
        "time_limit": time_limit,
        "results": rows(results),
        "cli": rows(cli),
    }


def run(
    chosen: Iterable[Combination], time_limit: float, *, cli: bool = False
) -> dict[Combination, Outcomes]:
    """Run the library (or command-line) pipeline on each combination.

    Parameters
    ----------
    chosen
        Combinations.
    time_limit
        Seconds per solve.
    cli
        Through the command line instead of the library.

    Returns
    -------
    dict
        Outcomes by combination, in the order given.
    """
    pipeline = run_cli_pipeline if cli else run_pipeline
    out: dict[Combination, Outcomes] = {}
    for combination in chosen:
        began = time.perf_counter()
        out[combination] = pipeline(combination, time_limit=time_limit)
        status = "ok" if works(out[combination]) else "--"
        print(
            f"{'cli ' if cli else ''}{label(combination)}: {status} "
            f"({time.perf_counter() - began:.1f} s)",
            file=sys.stderr,
        )
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, run the combinations, write the report.

    Parameters
    ----------
    argv
        Command-line arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time-limit", type=float, default=1.0)
    parser.add_argument("--triples", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="raw outcomes")
    parser.add_argument("-o", "--output", type=Path, default=None, help="Markdown")
    parser.add_argument(
        "--cli",
        action="append",
        default=None,
        metavar="A+B",
        help="combinations to rerun through the command line (repeatable; "
        "'none' for none); default: chosen from the results",
    )
    parser.add_argument("--cli-count", type=int, default=16)
    parser.add_argument(
        "--note", default="", help="a paragraph put under the report's header"
    )
    parser.add_argument(
        "--commit",
        default=None,
        help="the commit of the code run, when optsched is imported from an "
        "export put first on PYTHONPATH",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="A+B",
        help="run these combinations only (repeatable; the matrix then "
        "needs every single and pair)",
    )
    args = parser.parse_args(argv)
    began = time.perf_counter()
    if args.only:
        chosen = [normalise(c.split("+")) for c in args.only]
    else:
        chosen = combinations(args.triples)
    results = run(chosen, args.time_limit)
    if args.cli is None:
        cli_combinations = cli_choice(results, args.cli_count)
    else:
        cli_combinations = [
            normalise(c.split("+")) for c in args.cli if c.lower() != "none"
        ]
    missing = [c for c in cli_combinations if c not in results]
    results.update(run(missing, args.time_limit))
    cli = run(cli_combinations, args.time_limit, cli=True)
    seconds = time.perf_counter() - began
    if args.only:
        text = "\n".join(
            [counts(results), "", common_messages(results), detail_lines(results)]
        )
        if cli:
            text += "\n\n" + cli_table(results, cli)
    else:
        text = report(
            results,
            cli,
            time_limit=args.time_limit,
            seconds=seconds,
            note=args.note,
            given=args.commit,
        )
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    if args.json:
        data = raw(results, cli, args.time_limit, args.commit)
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
