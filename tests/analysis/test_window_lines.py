"""The per-window progress lines of ``optsched gap`` off a terminal."""

from __future__ import annotations

from optsched.bench.analysis import WindowLines


def _row(window: str, index: int, incomplete: str | None = None) -> dict[str, object]:
    return {
        "trace_sha256": "abc",
        "window": window,
        "window_index": index,
        "incomplete": incomplete,
    }


def test_a_window_is_done_when_all_its_tasks_are_stored_for_good() -> None:
    lines: list[str] = []
    progress = WindowLines(tasks_per_window=3, write=lines.append)
    progress.advance(False, _row("w0", 0))
    progress.advance(False, _row("w1", 1))
    progress.advance(False, _row("w0", 0))
    assert lines == []
    progress.advance(True, _row("w0", 0))  # a failed task is finished too
    assert [line.split(" in ")[0] for line in lines] == [
        "window 0 (w0) done, 1 window(s)"
    ]


def test_a_solve_cut_short_by_ctrl_c_does_not_finish_its_window() -> None:
    lines: list[str] = []
    progress = WindowLines(tasks_per_window=2, write=lines.append)
    progress.advance(False, _row("w1", 1))
    progress.advance(False, _row("w1", 1, incomplete="interrupted by SIGINT"))
    progress.advance(False, None)
    assert lines == []
