"""Policy specs shared by several tests."""

from __future__ import annotations

LEVEL_SPECS: tuple[str, ...] = (
    "nfdh",
    "ffdh",
    "nfih",
    "ffih",
    "ffdh-stack",
    "ffih-stack",
)
"""The level algorithms (next/first fit, decreasing/increasing height,
with and without stacking)."""

SHELF_SPECS: tuple[str, ...] = (
    *LEVEL_SPECS,
    "smart",
    "smart:order=smith,fit=first",
    "smart:sequence=class,weights=area",
    "ffdh:oracle",
    "batch",
    "batch:inner=ffih",
    "batch:inner=smart,order=smith",
    "pc2",
    "pc2:interactive=0+1,batch_share=0.6",
    "pc2:interactive=none",
)
"""Every shelf algorithm, the batch framework and PC², with their main
options (the snapshot test runs them on every variant)."""

WORST_CASE_POLICIES: tuple[str, ...] = (
    "fcfs",
    "firstfit",
    "easy",
    "conservative",
    "spt",
    "lpt",
    "lsf",
    "best-package",
)
"""The policies of the worst-case search (``benchmarks/worst_case.py``) and
of its properties (``tests/worstcase``): ``spt``, ``lpt`` and ``lsf``
(largest size first) are strict queue orders (only the head may start)."""
