"""``optsched coreserve simulate``: run a grid co-reservation scenario."""

from __future__ import annotations

import dataclasses
import json

import click
from rich.table import Table

from optsched.cli.options import choice_option, output_option
from optsched.cli.types import FiniteFloatRange
from optsched.console import console
from optsched.coreserve.metrics import measure
from optsched.coreserve.scenario import load_scenario
from optsched.coreserve.service import ALGORITHMS
from optsched.coreserve.simulate import simulate_grid
from optsched.io.atomic import atomic_write


@click.command(name="simulate")
@click.argument("scenario", type=click.Path(dir_okay=False))
@choice_option(
    "--algorithm",
    choices=ALGORITHMS,
    help="The grid service's algorithm (default: the scenario's).",
)
@click.option(
    "--k", "k", type=FiniteFloatRange(0, 1), default=None, help="A5's cost weight."
)
@click.option(
    "--s", "s", type=FiniteFloatRange(0, 1), default=None, help="A5's start weight."
)
@click.option(
    "--accuracy",
    type=FiniteFloatRange(0, 1, min_open=True),
    default=None,
    help="Wallclock accuracy of the backlog time (1: the pessimistic A3*).",
)
@click.option("--seed", type=int, default=None, help="Seed of the variant order.")
@click.option(
    "--optimum",
    is_flag=True,
    help="Also compute each request's exact optimum (start and cost gaps).",
)
@output_option("--json", "json_path", help="Write the measures as JSON.")
def simulate_command(
    scenario: str,
    algorithm: str | None,
    k: float | None,
    s: float | None,
    accuracy: float | None,
    seed: int | None,
    optimum: bool,
    json_path: str | None,
) -> None:
    """Run the grid study SCENARIO (a TOML file, see optsched.coreserve.scenario)
    and print the study's measures (Meltzer 2005, §6.1)."""
    chosen = load_scenario(scenario).with_service(
        algorithm=algorithm, k=k, s=s, accuracy=accuracy
    )
    clusters, requests = chosen.build()
    run = simulate_grid(
        clusters,
        requests,
        chosen.service,
        seed=chosen.seed if seed is None else seed,
        optimum=optimum,
    )
    measures = measure(run, chosen.t_stop)
    table = Table(
        title=f"{chosen.name}: {chosen.service.algorithm}", title_justify="left"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in measures.rows():
        table.add_row(name, value)
    per_cluster = Table(title="clusters", title_justify="left")
    for column in (
        "cluster",
        "jobs",
        "job util.",
        "res. util.",
        "reservations",
        "filter degree",
        "infeasibility",
        "killed",
    ):
        per_cluster.add_column(column, justify="right")
    for c in measures.clusters:
        per_cluster.add_row(
            c.name,
            str(c.jobs),
            f"{c.job_utilisation:.3f}",
            f"{c.reservation_utilisation:.3f}",
            str(c.reservations),
            f"{c.mean_filter_degree:.2f}",
            f"{c.infeasibility_rate:.2f}",
            str(c.killed),
        )
    out = console()
    out.print(table)
    out.print(per_cluster)
    if json_path is not None:
        with atomic_write(json_path) as handle:
            json.dump(dataclasses.asdict(measures), handle, indent=1)
            handle.write("\n")
