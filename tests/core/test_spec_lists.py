"""Policy lists (``--policies``): every documented spec means in a list what
it means alone (:func:`optsched.heuristics.spec.split_policy_specs`)."""

from __future__ import annotations

import csv
import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import INSTANCES, REPO

from optsched.cli import main
from optsched.heuristics import parse_policy, split_policy_specs

PAGES = (REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")))


def _parses(spec: str) -> bool:
    try:
        parse_policy(spec)
    except ValueError:
        return False
    return True


@cache
def documented_specs() -> tuple[str, ...]:
    """Every policy spec the README and the docs print that parses alone:
    code spans, ``-p``/``--policy`` arguments and ``--policies`` lists (cut
    at plain commas: a piece that is no spec alone is dropped, so a list
    adds only its plain names), and rescaling over every documented inner
    scheduler (``inner=...`` code spans, which hold ``:``)."""
    found: set[str] = set()
    inner: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found.update(span.strip() for span in re.findall(r"`([^`\n]+)`", text))
        found.update(re.findall(r"(?:-p|--policy)[ =]([^\s`'\"]+)", text))
        for listed in re.findall(r"--policies[ =]([^\s`'\"]+)", text):
            found.update(listed.split(","))
        inner.update(re.findall(r"`(inner=[^`\s,]+)`", text))
    found.update(f"rescale:search=hc,budget=2,{item}" for item in inner)
    return tuple(sorted(spec for spec in found if " " not in spec and _parses(spec)))


def test_the_docs_document_specs_of_every_kind() -> None:
    specs = documented_specs()
    assert len(specs) >= 60
    # The forms that once split apart: a parameter value holding ":" and
    # flags after parameters.
    assert "rescale:search=hc,budget=2,inner=offline:ffdh" in specs
    assert "rescale:search=hc,budget=2,inner=pbi/order=literal" in specs
    assert "easy:order=spt,oracle" in specs
    assert "pc2:interactive=0+1,batch_share=0.6" in specs


@pytest.mark.parametrize("spec", documented_specs())
def test_a_documented_spec_is_one_item_of_a_list(spec: str) -> None:
    alone = parse_policy(spec).spec
    for listed, position in ((f"easy,{spec},fcfs", 1), (f"{spec}, {spec}", 0)):
        items = split_policy_specs(listed)
        assert len(items) == (3 if position else 2), items
        assert parse_policy(items[position]).spec == alone
    assert split_policy_specs(f"fcfs,{spec}")[1:] == [spec]


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("easy:order=spt,oracle,fcfs", ["easy:order=spt,oracle", "fcfs"]),
        # A value holding ":" (rescaling's inner offline algorithm).
        (
            "rescale:search=hc,inner=offline:ffdh,seed=1,easy",
            ["rescale:search=hc,inner=offline:ffdh,seed=1", "easy"],
        ),
        # Plug-ins: a key holding "." or ":" starts a spec, its own
        # parameters follow it.
        (
            "easy,mypkg.mod:MyPolicy:k=1,fcfs",
            ["easy", "mypkg.mod:MyPolicy:k=1", "fcfs"],
        ),
        (
            "easy:order=spt,mypkg.mod:MyPolicy:k=1,j=2,fcfs",
            ["easy:order=spt", "mypkg.mod:MyPolicy:k=1,j=2", "fcfs"],
        ),
        ("path/to/file.py:Cls,orig:repair", ["path/to/file.py:Cls", "orig:repair"]),
        # A parameter after a spec without parameters stays an item (and is
        # refused by the parser as an unknown policy).
        ("easy,order=spt", ["easy", "order=spt"]),
        (" easy , ,fcfs ", ["easy", "fcfs"]),
    ],
)
def test_list_splitting(text: str, items: list[str]) -> None:
    assert split_policy_specs(text) == items


def _compare(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["compare", str(INSTANCES / "kth_20.json"), *args]
    )
    return result.exit_code, result.output


def test_compare_runs_rescaling_over_an_offline_algorithm_in_a_list(
    tmp_path: Path,
) -> None:
    listed = "easy,rescale:search=hc,budget=2,inner=offline:ffdh,fcfs"
    table = tmp_path / "table.csv"
    args = ("--moldable", "linear", "--policies", listed, "-o", str(table))
    code, output = _compare(*args)
    assert code == 0, output
    with open(table, newline="") as handle:
        rows = [row["policy"] for row in csv.DictReader(handle)]
    assert rows == [
        "easy",
        "rescale:search=hc,budget=2,inner=offline/ffdh,seed=0",
        "fcfs",
    ]


def test_a_bad_item_of_a_list_is_one_line() -> None:
    code, output = _compare("--policies", "easy,nosuch:k=1")
    assert code == 2
    (line,) = output.strip().splitlines()
    assert line.startswith("optsched: error: unknown policy 'nosuch'")


def test_worst_case_splits_its_policies_like_every_list(tmp_path: Path) -> None:
    # --policy "easy:order=spt,oracle,fcfs" is two policies, the first
    # with its flag (it was cut at every comma: "oracle" alone, refused).
    args = ["--policy", "easy:order=spt,oracle,fcfs", "--evaluations", "2"]
    result = CliRunner().invoke(
        main, ["worst-case", *args, "--jobs", "2", "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    summaries = (tmp_path / "out").glob("*.summary.json")
    policies = {json.loads(path.read_text())["policy"] for path in summaries}
    assert policies == {"easy:order=spt,oracle", "fcfs"}
