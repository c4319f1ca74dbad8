"""``optsched worst-case``: adversarial instances and minimal counterexamples."""

from __future__ import annotations

import click
from rich.table import Table

from optsched.cli.console import echo
from optsched.cli.options import (
    choice_option,
    count_option,
    output_option,
    seconds_option,
    seed_option,
    shown_option,
)
from optsched.console import console as make_console
from optsched.instance import ALLOCATIONS
from optsched.worstcase.measure import ESTIMATE_MODES, MEASURES, Space
from optsched.worstcase.search import DEFAULT_BUDGET, WorstCase, search_worst_case
from optsched.worstcase.theory import bound_label
from optsched.worstcase.versus import (
    Counterexample,
    examples_for_budget,
    find_counterexample,
)


def _ratio_table(results: list[WorstCase]) -> Table:
    table = Table(title="largest ratio found (policy / optimum)")
    for name in ("policy", "objective", "m", "n", "releases", "ratio", "value",
                 "optimum", "evaluations", "theoretical bound"):  # fmt: skip
        table.add_column(name, justify="right" if name in ("m", "n") else "left")
    for r in results:
        table.add_row(
            r.policy,
            r.objective,
            str(r.instance.processors),
            str(len(r.instance.jobs)),
            ("online" if r.space.online else "all at 0")
            + ("" if r.space.allocation == "any" else f", {r.space.allocation}"),
            f"{r.ratio:.4f}",
            f"{r.policy_value:g}",
            f"{r.optimum_value:g}",
            f"{r.evaluations} ({r.stopped_by})",
            bound_label(
                r.policy,
                r.objective,
                online=r.space.online,
                processors=r.instance.processors,
                allocation=r.space.allocation,
            ),
        )
    return table


def _versus_table(rows: list[tuple[str, str, Counterexample | None]]) -> Table:
    table = Table(title="smallest instance found where policy is strictly worse")
    for name in ("policy", "other", "m", "n", "policy value", "other value"):
        table.add_column(name)
    for policy, other, found in rows:
        if found is None:
            table.add_row(policy, other, "-", "-", "none found", "")
            continue
        table.add_row(
            policy,
            other,
            str(found.instance.processors),
            str(len(found.instance.jobs)),
            f"{found.policy_value:g}",
            f"{found.other_value:g}",
        )
    return table


@click.command(name="worst-case")
@click.option(
    "--policy",
    "policies",
    required=True,
    help="Policy spec, or several separated by commas (see 'optsched simulate').",
)
@shown_option(
    "--vs",
    "versus",
    default="optimum",
    help="'optimum' (largest ratio to the exact optimum) or a policy spec "
    "(smallest instance where --policy is strictly worse).",
)
@choice_option(
    "--objective",
    choices=MEASURES,
    default="cmax",
    help="cmax (makespan), wct (sum of completion times) or maxwait "
    "(max start - release; policy against policy only).",
)
@count_option(
    "--processors", default=3, help="Machine size (an upper bound with --vs SPEC)."
)
@count_option(
    "--jobs",
    high=12,
    default=4,
    help="Number of jobs (an upper bound with --vs SPEC).",
)
@click.option("--online", is_flag=True, help="Jobs have release dates (else all at 0).")
@choice_option(
    "--allocation",
    choices=ALLOCATIONS,
    default="any",
    help="Machine of the instances searched: any processors, or contiguous "
    "(adjacent processors, as in strip packing).",
)
@count_option(
    "--max-runtime", default=10, help="Runtimes are drawn in [1, max-runtime]."
)
@choice_option(
    "--estimates",
    choices=ESTIMATE_MODES,
    default="exact",
    help="exact: estimate = runtime; over: estimates in [runtime, 2 max-runtime].",
)
@seconds_option(
    "--budget",
    default=None,
    positive=True,
    help=f"Seconds (default {DEFAULT_BUDGET:g}), turned into a fixed evaluation "
    "count (reproducible); the clock only stops a search that overruns it "
    "three times.",
)
@count_option(
    "--evaluations",
    help="Evaluation cap instead of the count derived from --budget (with --vs "
    "SPEC: local-search evaluations, and one Hypothesis example per 20).",
)
@seed_option
@output_option(
    folder=True,
    help="Folder for the instance JSON, a summary and Gantt PNGs of both schedules.",
)
def command(
    policies: str,
    versus: str,
    objective: str,
    processors: int,
    jobs: int,
    online: bool,
    allocation: str,
    max_runtime: int,
    estimates: str,
    budget: float | None,
    evaluations: int | None,
    seed: int,
    output: str | None,
) -> None:
    """Worst instances a policy can meet, or where it loses to another policy.

    With --vs optimum (default): random restarts plus local search for the
    instance maximising policy objective / exact optimum; every ratio replays
    with 'optsched gap INSTANCE --policies SPEC --objective X'. With --vs
    SPEC: the smallest instance found (fewest jobs, then processors, then
    smallest numbers) where --policy is strictly worse than SPEC. The same
    --seed and --budget (or --evaluations) give the same answer on any
    machine, unless the clock's safety net fires, which the summary reports.
    """
    from optsched.heuristics import split_policy_specs
    from optsched.worstcase.output import write_counterexample, write_worst_case

    space = Space(
        processors, jobs, online, max_runtime, estimates, allocation=allocation
    )
    specs = split_policy_specs(policies)  # one grammar: "easy:order=spt,oracle"
    if not specs:
        raise click.UsageError("--policy needs at least one policy spec")
    console = make_console()
    if versus == "optimum":
        if objective == "maxwait":
            raise click.UsageError(
                "maxwait has no exact optimum here: compare it policy against "
                "policy (--vs SPEC)"
            )
        results = []
        for spec in specs:
            result = search_worst_case(
                spec,
                objective,
                space,
                seed=seed,
                budget=budget,
                max_evaluations=evaluations,
            )
            results.append(result)
            echo(result.summary())
            if output:
                write_worst_case(result, output)
        console.print(_ratio_table(results))
        return
    rows = []
    examples, climbs = examples_for_budget(budget or DEFAULT_BUDGET)
    if evaluations is not None:
        examples, climbs = max(1, evaluations // 20), evaluations
    for spec in specs:
        found = find_counterexample(
            spec,
            versus,
            objective,
            space,
            seed=seed,
            examples=examples,
            evaluations=climbs,
        )
        rows.append((spec, versus, found))
        if found is None:
            echo(
                f"{spec} never worse than {versus} on {objective} in {examples} "
                f"Hypothesis examples and {climbs} local-search evaluations "
                f"(m <= {processors}, n <= {jobs}); seed {seed}"
            )
            continue
        echo(found.summary())
        if output:
            write_counterexample(found, output)
    console.print(_versus_table(rows))
