"""``optsched simulate FILE --policy SPEC``: replay a trace under a policy.

Prints the metrics table of the schedule (recomputed from it by
:mod:`optsched.metrics`) and, with ``-o``, writes the schedule.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import click
from rich.table import Table

from optsched.cli.console import echo
from optsched.cli.display import echo_json, json_option
from optsched.cli.options import (
    RUN_OPTIONS,
    choice_option,
    input_options,
    load_instance,
    option_group,
    output_option,
    shown_option,
)
from optsched.console import print_table, wide_console
from optsched.heuristics import (
    Policy,
    SimulationResult,
    parse_policy,
    simulate,
)
from optsched.instance import Instance
from optsched.io.batsim import summary_path
from optsched.metrics import Summary, summarize

SCHEDULE_FORMATS = ("csv", "batsim", "json", "swf")

POLICY_HELP = """\b
Policy specs: NAME[:PARAM,PARAM,...]
  fcfs spt lpt ssf lsf saf laf random  strict list scheduling in that
                                       queue order (only the head starts)
  firstfit                             any waiting job that fits starts
  easy                                 EASY backfilling
  backfill:depth=K|all                 K reservations (all = conservative)
  conservative                         conservative backfilling
  best-package                         subset-sum packing of free processors
  mallmann:variant=V,fairness=F        Mallmann's backfilling family: V in
                                       ff fc bs bd bqd bc ws fc3 bs3, F 0 1 2,
                                       reading=profile|shadow, f=SHARE, t=8h
  strict-backfill                      backfilled jobs end before the head
                                       starts (= mallmann ff, 2, shadow)
  easy-sjbf                            EASY, shortest estimate backfilled
                                       first (= easy:select=shortest)
  nfdh ffdh nfih ffih ffdh-stack       batch framework over that shelf
  ffih-stack smart                     algorithm (= batch:inner=NAME)
  pc2                                  PC² scheduler: FCFS until full, then
                                       FFDH*/FFIH* levels
  pbi psrs                             preemptive (schedules in pieces),
                                       clairvoyant, in batches over releases
  gang                                 gang scheduling (Ousterhout matrix,
                                       LLNL job classes), online
  blocking fit fit2 afkt-backfill      Rassmann's combinators over base
  optimistic                           orders f=, g= (fifo spt lpt fid
                                       random); aliases fifo-fit, lpt-back,
                                       fifo-optim, lpt-fifo-optim, ...
With --speeds or --nodes only fcfs, firstfit, easy, adaptive, easy-scaling
and the combinators run (fcfs, firstfit and easy as blocking, fit and
optimistic with f=fifo; adaptive and easy-scaling choose moldable jobs'
modes on the node simulator).
\b
Parameters:
  order=NAME        queue order (fcfs spt lpt ssf lsf saf laf random;
                    sjf ljf fifo accepted)
  oracle            see actual run times instead of estimates
  seed=N            seed of the random order (default: --seed)
  select=RULE       easy/backfill candidates: queue submit largest
                    largest-area smallest shortest
  maxwait=S         with select=largest: no backfilling once the head
                    has waited S seconds
  maxidle=F         with select=largest: no backfilling while more than
                    a share F of the machine is idle
  limit=N           best-package: jobs in the subset-sum search (128)
  order=size|smith  smart: order inside a height class (also
                    sequence=auto|class|smith, fit=next|first,
                    weights=instance|one|size|area)
  interactive=Q+Q   pc2: SWF queues of interactive jobs (0; none for none)
  batch_share=F     pc2: FFDH* when more than F of the waiting jobs are
                    batch jobs, else FFIH* (0.5)
  order=smith|literal  pbi: priority list (also move_back=list|always,
                    strict=false|true, weights=instance|one|size|area;
                    psrs: weights=)
  packing=first-fit|best-fit|buddy  gang: also quantum=S (600),
                    alternative=on|off, classes=FILE.toml,
                    over_limit=refuse|default
  f=F,g=G           combinators: select by F, fill by G (default F)
  placement=P       combinators: auto fastest lowest smp (auto: smp on
                    nodes, fastest on speeds, else lowest)
\b
Your own policy, a class with select(view) (docs/guide/your-policy.md):
  FILE.py:Class[:key=value,...]      a class in a file
  package.module:Class[:key=value]   an importable class
  NAME                               an installed package's entry point
                                     (group optsched.policies)
  schedule:name=N,file=F             a schedule made elsewhere, rated as is
\b
Examples: easy, easy:order=sjf, conservative, backfill:depth=3,
firstfit:order=lpt, best-package, easy:select=largest, spt:oracle,
random:seed=3, ffdh, smart:order=smith,fit=first, batch:inner=nfih, pc2,
pbi:order=literal, psrs, gang:packing=buddy,quantum=600,
optimistic:f=lpt,g=fifo, lpt-back, fit:f=spt,placement=fastest
"""


@dataclass(frozen=True, slots=True)
class SimulationOptions:
    """The options of :func:`simulation_options`, as one command argument."""

    seed: int
    oracle: bool
    kill_at_estimate: bool
    allocation_rule: str
    migration: bool

    def policy(self, spec: str) -> Policy:
        """The policy ``spec`` names, made an oracle with ``--oracle``."""
        policy = parse_policy(spec)
        return dataclasses.replace(policy, oracle=True) if self.oracle else policy

    def run_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`optsched.heuristics.simulate` (with its
        progress bar: a command's run is watched)."""
        return {
            "seed": self.seed,
            "kill_at_estimate": self.kill_at_estimate,
            "allocation_rule": self.allocation_rule,
            "migration": self.migration,
            "progress": True,
        }


simulation_options = option_group(
    "simulation",
    SimulationOptions,
    [
        shown_option(
            "--seed", type=int, default=0, help="Seed of random queue orders."
        ),
        click.option(
            "--oracle",
            is_flag=True,
            help="Policies see actual run times instead of estimates "
            "(the spec parameter 'oracle' for every policy).",
        ),
        *RUN_OPTIONS,
    ],
)
"""Options shared by ``simulate`` and ``compare``; the command receives them
as one :class:`SimulationOptions`, ``simulation``."""


def exact(value: float) -> str:
    """All the digits of a sum: an integer as such, else 6 decimals."""
    if float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.6f}".rstrip("0")


def completion_unit(instance: Instance) -> str:
    """Unit of ``sum_j w_j C_j`` on ``instance``.

    ``s`` when every weight is 1 (the sum of completion times),
    ``processor-s`` when every weight is the job's size, else ``weight-s``.
    """
    if all(job.weight == 1 for job in instance.jobs):
        return "s"
    if all(job.weight == job.size for job in instance.jobs):
        return "processor-s"
    return "weight-s"


def metrics_rows(
    summary: Summary, result: SimulationResult, instance: Instance
) -> list[tuple[str, str]]:
    """The metrics table as ``(name, value)`` rows, units in the names."""
    unit = completion_unit(instance)
    completions = "completions" if unit == "s" else "weighted completions"
    rows = [
        ("jobs", f"{summary.jobs}"),
        ("makespan (s)", f"{summary.makespan}"),
        (f"sum of {completions} ({unit})", exact(summary.weighted_completion)),
        ("mean response (s)", f"{summary.mean_response:.2f}"),
        ("mean wait (s)", f"{summary.mean_wait:.2f}"),
        ("max wait (s)", f"{summary.max_wait}"),
        ("mean bounded slowdown (10 s)", f"{summary.mean_bounded_slowdown:.3f}"),
        ("utilisation", f"{summary.utilisation:.4f}"),
    ]
    stats = result.stats
    if stats.killed:
        rows.append(("jobs killed at estimate", f"{stats.killed}"))
    if stats.killed_for_blocks:
        rows.append(("  of which before a busy block", f"{stats.killed_for_blocks}"))
    if stats.outage_kills:
        rows.append(("runs killed by outages", f"{stats.outage_kills}"))
        rows.append(("  work lost (processor-hours)", f"{stats.lost_area / 3600:.1f}"))
    if stats.predictions:
        rows.append(
            ("start-time prediction error (s)", f"{stats.prediction_error:.2f}")
        )
    if stats.migrations:
        rows.append(("migrations", f"{stats.migrations}"))
        rows.append(("migrated jobs", f"{stats.migrated_jobs}"))
        rows.append(("migrated processors", f"{stats.migrated_processors}"))
    return rows


def metrics_json(
    summary: Summary, result: SimulationResult, instance: str
) -> dict[str, Any]:
    """What ``simulate --json`` prints: the policy, the instance, the metrics
    under the names ``optsched export`` writes after ``metric_``, and the
    simulation's counters (:class:`~optsched.heuristics.SimulationStats`)."""
    return {
        "policy": result.schedule.producer,
        "instance": instance,
        "metrics": summary.as_dict(),
        "simulation": dataclasses.asdict(result.stats),
    }


def _output_format(path: str, forced: str | None) -> str:
    from optsched.io.schedules import schedule_format_for

    # One table for every command that writes schedules (bound too).
    return schedule_format_for(path, forced)


def _write(result: SimulationResult, instance: Instance, path: str, fmt: str) -> None:
    from optsched.io.schedules import write_schedule

    write_schedule(result.schedule, path, fmt, instance)


@click.command("simulate", epilog=POLICY_HELP)
@click.argument("file", type=click.Path(dir_okay=False))
@shown_option(
    "--policy", "-p", "policy", default="easy", help="Policy spec (see below)."
)
@simulation_options
@output_option("--output", "-o", help="Write the schedule to this file.")
@choice_option(
    "--schedule-format",
    choices=SCHEDULE_FORMATS,
    help="Format of -o: csv, batsim (out_jobs.csv) or json (default from "
    "the name: .json json, *_jobs.csv batsim with its *_schedule.csv, .swf "
    "swf, else csv).",
)
@json_option
@input_options
def command(
    file: str,
    policy: str,
    simulation: SimulationOptions,
    output: str | None,
    schedule_format: str | None,
    as_json: bool,
    **input_kwargs: Any,
) -> None:
    """Simulate FILE online under a policy and print its metrics.

    Jobs run for their actual run time; the policy sees only the estimates
    (requested times), except oracle policies. Busy blocks of the instance
    are respected. --format is the input format; --schedule-format the
    output's.
    """
    chosen = simulation.policy(policy)
    instance = load_instance(file, **input_kwargs)
    result = simulate(instance, chosen, **simulation.run_options())
    summary = summarize(instance, result.schedule)
    if as_json:
        echo_json(metrics_json(summary, result, instance.name or file))
    else:
        title = f"{result.schedule.producer} on {instance.name or file}"
        console = wide_console()
        # As wide as the title: a name must not be folded over two lines.
        table = Table(title=title, min_width=min(len(title) + 4, console.width))
        table.add_column("metric")
        table.add_column("value", justify="right")
        for name, value in metrics_rows(summary, result, instance):
            table.add_row(name, value)
        print_table(console, table)
    if output is not None:
        fmt = _output_format(output, schedule_format)
        _write(result, instance, output, fmt)
        echo(f"schedule written to {output}", err=as_json)
        beside = summary_path(output) if fmt == "batsim" else None
        if beside is not None:
            echo(f"Batsim summary written to {beside}", err=as_json)
