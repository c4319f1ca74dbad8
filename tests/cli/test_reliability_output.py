"""Issue 17, outputs: user text shown literally, outputs that never destroy data.

* Names, specs and file names reach the terminal as written: no rich markup
  read, control characters (ESC first) shown as ``\\x1b``.
* ``-o`` into a missing folder stops every command before any work, with one
  line naming the user's path.
* ``report -o X.md`` never deletes an ``X_figures/`` folder optsched did not
  write.
* CSV cells a spreadsheet would run as formulas get a leading ``'``; numbers
  stay numbers.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from click.testing import CliRunner, Result
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from optsched.bench.executor import ProgressBar
from optsched.cli import main
from optsched.cli.compare import Row, _csv_text
from optsched.console import console, literal
from optsched.heuristics import simulate
from optsched.instance import Instance, Job, Machine
from optsched.io.atomic import atomic_write
from optsched.io.native import write_native
from optsched.io.spreadsheet import safe_cell, safe_frame
from optsched.plot.charts import binding_bounds, utilisation
from optsched.plot.gantt import gantt
from optsched.plot.text import literal_texts
from optsched.report.render import (
    FIGURES_MARKER,
    Image,
    Paragraph,
    check_figures_folder,
    new_figure,
    write_markdown,
)

ESC = "\x1b"
NAME = "[/bold][link=http://x]a[/link]\x1b[2J$x^2$"
SHOWN = r"[/bold][link=http://x]a[/link]\x1b[2J$x^2$"
"""How :data:`NAME` must appear on a terminal."""
FILE_NAME = "[bold]f[link=x]\x1b[2J$y$.json"
"""A file name with markup, an escape sequence and mathtext (no ``/``)."""
FILE_SHOWN = r"[bold]f[link=x]\x1b[2J$y$.json"


def _instance(name: str = NAME) -> Instance:
    jobs = (Job(1, 0, 1, 3), Job(2, 0, 2, 2), Job(3, 1, 1, 4))
    return Instance(Machine(2), jobs, name=name)


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _assert_literal(result: Result, expected: str) -> None:
    assert result.exit_code == 0, result.output
    assert ESC not in result.stdout
    assert ESC not in result.stderr
    assert "Traceback" not in result.output
    assert expected in result.stdout


# ---------------------------------------------------------------------------
# 1. user text shown literally


def test_literal_escapes_control_characters_only() -> None:
    text = "a\x1b[2J\tb\nc\x7f\x85\u202ed\r$[red]"
    assert literal(text) == "a\\x1b[2J\tb\nc\\x7f\\x85\\u202ed\\x0d$[red]"
    assert literal("x\ny", one_line=True) == "x\\x0ay"
    assert literal(12) == "12"


def test_console_escapes_strings_and_table_cells() -> None:
    from rich.table import Table

    screen = io.StringIO()
    out = console(file=screen, width=200)
    table = Table(title=NAME)
    table.add_column(NAME)
    table.add_row(NAME)
    out.print(table)
    out.print(NAME)
    assert ESC not in screen.getvalue()
    assert screen.getvalue().count(SHOWN) == 4


@pytest.mark.parametrize(
    "args",
    [
        ["info"],
        ["simulate", "-p", "easy"],
        ["compare", "--policies", "fcfs,easy"],
    ],
    ids=["info", "simulate", "compare"],
)
def test_commands_print_the_instance_name_literally(
    tmp_path: Path, args: list[str]
) -> None:
    path = tmp_path / "evil.json"
    write_native(_instance(), path)
    _assert_literal(_run(*args[:1], path, *args[1:]), SHOWN)


def test_plot_and_gap_print_file_names_literally(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    write_native(_instance(), path)
    schedule = tmp_path / "s.csv"
    assert _run("simulate", path, "-o", schedule).exit_code == 0
    figure = tmp_path / f"g{ESC}[2J[bold].png"
    result = _run("plot", "gantt", schedule, path, "-o", figure)
    _assert_literal(result, r"g\x1b[2J[bold].png")
    assert figure.read_bytes().startswith(b"\x89PNG")
    result = _run("gap", path, "--policies", "easy", "--objective", "cmax")
    _assert_literal(result, FILE_SHOWN)


def test_report_shows_names_literally(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    write_native(_instance(), path)
    store = tmp_path / "st.sqlite"
    result = _run(
        "gap", path, "--policies", "easy", "--objective", "cmax", "--store", store
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / f"r{ESC}[2J.html"
    _assert_literal(_run("report", store, "-o", out), r"r\x1b[2J.html")
    page = out.read_text(encoding="utf-8")
    assert ESC not in page
    assert r"\x1b[2J$y$.json" in page  # the trace's file name, in a table


def test_error_lines_show_control_characters_escaped(tmp_path: Path) -> None:
    missing = tmp_path / f"no{ESC}[2Jfile.json"
    result = _run("info", missing)
    assert result.exit_code == 2
    assert ESC not in result.stderr
    assert "\\x1b[2Jfile.json" in result.stderr
    assert result.stderr.count("\n") == 1


def test_progress_bar_shows_a_markup_label_literally() -> None:
    screen = io.StringIO()
    terminal = console(file=screen, force_terminal=True, width=200)
    # A suite named like this used to crash rich (MarkupError on "[/bold]").
    with ProgressBar(2, label=NAME, console=terminal) as bar:
        bar.advance(False)
        bar.advance(True)
    assert SHOWN in screen.getvalue()


# ---------------------------------------------------------------------------
# 2. user text in figures: no mathtext


def _axes() -> Axes:
    figure = Figure()
    FigureCanvasAgg(figure)
    return figure.subplots()


def _draw(ax: Axes) -> None:
    ax.figure.savefig(io.BytesIO(), format="png")


def test_gantt_titles_are_literal_text() -> None:
    instance = _instance()
    schedule = simulate(instance, "easy").schedule
    ax = gantt(instance, schedule, ax=_axes(), title="$x^2$")
    assert ax.title.get_text() == "$x^2$"
    assert not ax.title.get_parse_math()
    # Bad mathtext used to fail at drawing time ("$\\frac$": a parse error).
    for title in ("$\\frac$", "a $x^2$ b $", "$^$", NAME):
        ax = gantt(instance, schedule, ax=_axes(), title=title)
        _draw(ax)
    ax = gantt(instance, schedule, ax=_axes())  # default: the instance name
    assert ax.title.get_text().startswith(SHOWN + " — easy")
    assert not ax.title.get_parse_math()
    _draw(ax)


def test_chart_labels_are_literal_text() -> None:
    method = "$\\frac{$"
    counts = pd.DataFrame(
        {"objective": ["$x$"], "kind": ["lower"], "windows": [2], "method": [method]}
    )
    ax = binding_bounds(counts, ax=_axes(), title="$^$")
    labels = [t for t in ax.get_yticklabels() if t.get_text() == method]
    assert len(labels) == 1 and not labels[0].get_parse_math()
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["$x$"]
    assert not any(t.get_parse_math() for t in legend.get_texts())
    _draw(ax)
    instance = _instance()
    schedule = simulate(instance, "fcfs").schedule
    ax = utilisation(instance, schedule, ax=_axes(), label="$\\frac$")
    assert not any(t.get_parse_math() for t in ax.get_legend().get_texts())
    _draw(ax)


def test_numeric_tick_labels_keep_mathtext() -> None:
    ax = _axes()
    ax.plot([1, 2, 3], [1, 100, 10_000])
    ax.set_yscale("log")
    literal_texts(ax)
    _draw(ax)
    shown = [t for t in ax.get_yticklabels() if t.get_text()]
    assert shown and all(t.get_parse_math() for t in shown)
    assert any("$" in t.get_text() for t in shown)  # 10^k in mathtext


# ---------------------------------------------------------------------------
# 4. an output in a missing folder stops the command before any work


def _output_cases(tmp: Path, out: str) -> list[list[object]]:
    instance, store = tmp / "missing.json", tmp / "missing.sqlite"
    return [
        ["simulate", instance, "-o", out],
        ["compare", instance, "-o", out],
        ["export", store, "-o", out],
        ["report", store, "-o", out],
        ["plot", "gantt", tmp / "missing.csv", "-o", out],
        ["bound", instance, "--schedule-out", out],
        ["bound", instance, "-o", out],
        ["gap", instance, "--store", out],
        ["gap", instance, "-o", out],
        ["bench", tmp / "missing.toml", "--store", out],
        ["window", instance, "--jobs", "2", "-o", out],
        ["generate", "perfect-packing", "--width", 2, "--height", 2,
         "--items", 2, "-o", out],
        ["generate", "perfect-packing", "--width", 2, "--height", 2,
         "--items", 2, "-o", tmp / "i.json", "--layout", out],
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(13))
def test_output_in_a_missing_folder_fails_before_any_work(
    tmp_path: Path, case: int
) -> None:
    # The inputs do not exist either: the output is checked first.
    out = str(tmp_path / "nodir" / "out.csv")
    args = _output_cases(tmp_path, out)[case]
    result = _run(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"optsched: error: {out}: cannot write file: "
        f"no such folder {str(tmp_path / 'nodir')!r}\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_worst_case_output_folder_needs_an_existing_parent(tmp_path: Path) -> None:
    out = tmp_path / "nodir" / "found"
    result = _run("worst-case", "--policy", "fcfs", "-o", out)
    assert result.exit_code == 2
    assert result.stderr == (
        f"optsched: error: {out}: cannot write folder: "
        f"no such folder {str(out.parent)!r}\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_output_under_a_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("keep me")
    out = blocker / "out.csv"
    result = _run("simulate", tmp_path / "x.json", "-o", out)
    assert result.exit_code == 2
    assert result.stderr == (
        f"optsched: error: {out}: cannot write file: {str(blocker)!r} is not a folder\n"
    )
    assert blocker.read_text() == "keep me"


def test_atomic_write_errors_name_the_users_file(tmp_path: Path) -> None:
    out = tmp_path / "nodir" / "x.csv"
    with pytest.raises(FileNotFoundError) as missing, atomic_write(out) as handle:
        handle.write("x")
    assert missing.value.filename == str(out)
    folder = tmp_path / "adir"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as onto, atomic_write(folder) as handle:
        handle.write("x")
    assert onto.value.filename == str(folder)
    # An error of the caller's own files is not renamed.
    other = tmp_path / "other"
    with pytest.raises(FileNotFoundError) as own, atomic_write(tmp_path / "y"):
        other.read_text()
    assert own.value.filename == str(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    assert list(folder.iterdir()) == []


# ---------------------------------------------------------------------------
# 3. the figures folder of a Markdown report


PNG = Image("fig", "a figure", lambda: new_figure(1.0, 1.0))


def test_report_refuses_a_figures_folder_it_did_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "X_figures"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    # The store does not exist: the folder is checked before anything else.
    result = _run("report", tmp_path / "missing.sqlite", "-o", tmp_path / "X.md")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"optsched: error: {folder}: folder exists and")
    assert result.stderr.count("\n") == 1
    assert (folder / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X_figures"]


def test_markdown_replaces_only_its_own_figures_folder(tmp_path: Path) -> None:
    out = tmp_path / "X.md"
    folder = tmp_path / "X_figures"
    write_markdown(out, "first", [PNG])
    assert sorted(p.name for p in folder.iterdir()) == [FIGURES_MARKER, "01-fig.png"]
    check_figures_folder(folder)  # its own folder: replaceable
    write_markdown(out, "second", [Paragraph("no figure")])
    assert sorted(p.name for p in folder.iterdir()) == [FIGURES_MARKER]
    assert "second" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.md", "X_figures"]


@pytest.mark.parametrize("intruder", ["file", "folder", "symlink-folder"])
def test_markdown_keeps_a_marked_folder_holding_other_files(
    tmp_path: Path, intruder: str
) -> None:
    out = tmp_path / "X.md"
    write_markdown(out, "first", [PNG])
    before = out.read_text()
    folder = tmp_path / "X_figures"
    if intruder == "file":
        (folder / "notes.txt").write_text("mine")
    elif intruder == "folder":
        (folder / "data").mkdir()
    else:
        folder.rename(tmp_path / "elsewhere")
        folder.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="X_figures: "):
        write_markdown(out, "second", [PNG])
    assert out.read_text() == before
    target = tmp_path / "elsewhere" if intruder == "symlink-folder" else folder
    assert (target / "01-fig.png").exists()
    if intruder == "file":
        assert (folder / "notes.txt").read_text() == "mine"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []


# ---------------------------------------------------------------------------
# 5. CSV cells a spreadsheet would run


def test_safe_cell_follows_the_owasp_rule_and_keeps_numbers() -> None:
    for text in ('=HYPERLINK("http://x","y")', "+1+cmd", "-cmd", "@SUM(A1)",
                 "\t=1", "\r=1", "-", "-inf", "-1+cmd"):  # fmt: skip
        assert safe_cell(text) == "'" + text
    for value in ("-1", "-0.5", "+2", "1e-3", "-1E+3", ".5", "easy", "", -1, -0.5):
        assert safe_cell(value) == value
    assert safe_cell(None) is None


def test_compare_csv_neutralises_formula_names() -> None:
    row = Row('=HYPERLINK("http://x")', 5, -0.5, 1.5, 0.0, 0, 1.0, 0.5, 0, 0.01)
    frame = pd.read_csv(io.StringIO(_csv_text([row])))
    assert frame["policy"].tolist() == ['\'=HYPERLINK("http://x")']
    assert frame["weighted_completion"].tolist() == [-0.5]
    assert frame["makespan"].dtype.kind == "i"


def test_safe_frame_keeps_number_columns_and_missing_values() -> None:
    frame = pd.DataFrame(
        {"name": ["=cmd", "-1", None], "value": [-1.0, 1e-3, 2.0], "n": [-1, 0, 1]}
    )
    safe = safe_frame(frame)
    assert safe["name"].tolist()[:2] == ["'=cmd", "-1"]
    assert safe["name"].isna().tolist() == [False, False, True]
    assert safe["value"].tolist() == [-1.0, 1e-3, 2.0]
    assert safe["n"].tolist() == [-1, 0, 1]
    assert frame["name"].tolist()[0] == "=cmd"  # the input is not modified


def test_gap_and_export_csv_neutralise_a_formula_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the store keeps the path as given
    path = Path("=HYPERLINK(1).json")
    write_native(_instance("-instance"), path)
    store, rows, exported = "s.sqlite", "g.csv", "e.csv"
    args = ["gap", path, "--policies", "easy", "--objective", "cmax"]
    result = _run(*args, "--store", store, "-o", rows)
    assert result.exit_code == 0, result.output
    assert _run("export", store, "-o", exported).exit_code == 0
    for csv_path in (rows, exported):
        frame = pd.read_csv(csv_path)
        assert set(frame["trace"]) == {"'=HYPERLINK(1).json"}
        assert frame["value"].dtype.kind == "f"
    gap = pd.read_csv(rows)
    # EASY keeps job 2 (2 processors) waiting for job 1, then runs job 3.
    assert (gap["value"].tolist(), gap["upper"].tolist()) == ([9.0], [6.0])
    assert gap["window_index"].tolist() == [0]
    assert json.loads(path.read_text())["name"] == "-instance"
