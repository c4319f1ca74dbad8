"""The product's policy specs beside the reference rule that should give the
same schedule (one entry per family and main parameter)."""

from __future__ import annotations

from typing import Any

CASES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("fcfs", "strict", {}),
    ("spt", "strict", {"order": "spt"}),
    ("lpt:oracle", "strict", {"order": "lpt", "oracle": True}),
    ("laf", "strict", {"order": "laf"}),
    ("random:seed=3", "strict", {"order": "random", "seed": 3}),
    ("firstfit", "firstfit", {}),
    ("firstfit:order=ssf", "firstfit", {"order": "ssf"}),
    ("easy", "backfill", {}),
    ("easy:order=sjf", "backfill", {"order": "spt"}),
    ("easy:oracle", "backfill", {"oracle": True}),
    ("easy:select=submit", "backfill", {"select": "submit"}),
    ("easy:select=largest", "backfill", {"select": "largest"}),
    ("easy:select=largest-area", "backfill", {"select": "largest-area"}),
    ("easy:select=smallest", "backfill", {"select": "smallest"}),
    ("easy-sjbf", "backfill", {"select": "shortest"}),
    (
        "easy:select=largest,maxwait=3600",
        "backfill",
        {"select": "largest", "maxwait": 3600},
    ),
    (
        "easy:select=largest,maxidle=0.3",
        "backfill",
        {"select": "largest", "maxidle": 0.3},
    ),
    ("backfill:depth=3", "backfill", {"depth": 3}),
    (
        "backfill:depth=2,select=shortest,order=spt",
        "backfill",
        {"depth": 2, "select": "shortest", "order": "spt"},
    ),
    ("conservative", "conservative", {}),
    ("conservative:oracle", "conservative", {"oracle": True}),
    ("conservative:order=saf", "conservative", {"order": "saf"}),
    ("best-package", "best-package", {}),
    ("best-package:limit=4", "best-package", {"limit": 4}),
)
"""``(spec, reference rule, its options)``; every case runs with and
without killing at the estimate."""

CONSERVATIVE = tuple(case for case in CASES if case[1] == "conservative")
"""The conservative cases (the slowest references)."""
