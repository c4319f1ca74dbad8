"""Optional dependencies: a missing extra is one line naming pip, exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import paths

from optsched.cli import main
from optsched.extras import MissingExtra, require

DATA = paths.DATA / "suites"


def test_require_returns_the_module() -> None:
    assert require("json", "none", "anything").__name__ == "json"


def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(MissingExtra) as caught:
        require("hypothesis", "worstcase", "worst-case --vs SPEC")
    assert str(caught.value) == (
        "worst-case --vs SPEC needs hypothesis: pip install 'optsched[worstcase]'"
    )
    assert isinstance(caught.value, ImportError)
    assert caught.value.name == "hypothesis"


def _one_line_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"optsched: error: {message}\n"
    assert result.stdout == ""


def test_worst_case_versus_without_hypothesis(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    _one_line_exit_2(
        ["worst-case", "--policy", "fcfs", "--vs", "firstfit", "--evaluations", "5"],
        "worst-case --vs SPEC needs hypothesis: pip install 'optsched[worstcase]'",
    )


def test_worst_case_versus_optimum_needs_no_hypothesis(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    args = ["worst-case", "--policy", "fcfs", "--jobs", "2", "--evaluations", "3"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output


def test_parquet_export_without_pyarrow(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from optsched.bench.store import Store

    store = tmp_path / "r.sqlite"
    Store(store).close()
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    _one_line_exit_2(
        ["export", str(store), "-o", str(tmp_path / "rows.parquet")],
        "export to .parquet needs pyarrow: pip install 'optsched[parquet]'",
    )
    assert not (tmp_path / "rows.parquet").exists()


@pytest.mark.parametrize("option", [["--dask-local", "1"], ["--dask", "tcp://x:1"]])
def test_bench_on_dask_without_distributed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, option: list[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    store = tmp_path / "r.sqlite"
    _one_line_exit_2(
        ["bench", str(DATA / "tiny.toml"), "--store", str(store), *option],
        f"bench {option[0]} needs distributed: pip install 'optsched[dask]'",
    )


def test_dask_backend_without_distributed(monkeypatch: pytest.MonkeyPatch) -> None:
    from optsched.bench.executor import _dask_backend

    monkeypatch.setitem(sys.modules, "distributed", None)
    with (
        pytest.raises(MissingExtra, match=r"pip install 'optsched\[dask\]'"),
        _dask_backend(None, 1),
    ):
        pass
