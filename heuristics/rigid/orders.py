"""Queue orders: in which order a policy looks at the waiting jobs.

Every order is a static key per job, so the simulator ranks all jobs once
and keeps the waiting queue sorted by rank (no re-sorting per event). Ties
are broken by ``(submit time, job id)``, which is also the whole FCFS key.

``estimate`` below is what the policy sees: the requested time, or the
actual run time for an oracle policy.

========  ====================================  ===========================
name      key (ascending)                        literature name
========  ====================================  ===========================
fcfs      submit, id                             first come first served
spt       estimate                               shortest (processing) time
lpt       -estimate                              longest (processing) time
ssf       size                                   smallest size first
lsf       -size                                  largest size first
saf       size * estimate                        smallest area first
laf       -(size * estimate)                     largest area first
random    a uniform draw per job (seeded)        random order
========  ====================================  ===========================
"""

from __future__ import annotations

import random
from collections.abc import Sequence

ORDER_NAMES: tuple[str, ...] = (
    "fcfs",
    "spt",
    "lpt",
    "ssf",
    "lsf",
    "saf",
    "laf",
    "random",
)
"""Canonical names of the queue orders."""

ORDER_ALIASES: dict[str, str] = {"fifo": "fcfs", "sjf": "spt", "ljf": "lpt"}
"""Other names accepted on the command line."""


def canonical_order(name: str) -> str:
    """The canonical name of an order, or ``ValueError`` listing the valid ones."""
    key = name.strip().lower()
    key = ORDER_ALIASES.get(key, key)
    if key not in ORDER_NAMES:
        valid = ", ".join(ORDER_NAMES + tuple(ORDER_ALIASES))
        raise ValueError(f"unknown queue order {name!r}; valid: {valid}")
    return key


def order_ranks(
    order: str,
    sizes: Sequence[int],
    estimates: Sequence[int],
    seed: int = 0,
) -> list[int]:
    """Rank of every job in ``order``.

    Parameters
    ----------
    order
        A canonical order name.
    sizes, estimates
        Per job, indexed in submit order (index ``i`` is the ``i``-th job by
        ``(submit, id)``), so the index itself is the FCFS tie-break.
    seed
        Seed of the ``random`` order.

    Returns
    -------
    list of int
        ``rank[i]``: position of job ``i`` when all jobs are sorted by the
        order's key, then by submit order.
    """
    n = len(sizes)
    keys: list[tuple[float, int]]
    if order == "fcfs":
        return list(range(n))
    if order == "spt":
        keys = [(estimates[i], i) for i in range(n)]
    elif order == "lpt":
        keys = [(-estimates[i], i) for i in range(n)]
    elif order == "ssf":
        keys = [(sizes[i], i) for i in range(n)]
    elif order == "lsf":
        keys = [(-sizes[i], i) for i in range(n)]
    elif order == "saf":
        keys = [(sizes[i] * estimates[i], i) for i in range(n)]
    elif order == "laf":
        keys = [(-sizes[i] * estimates[i], i) for i in range(n)]
    elif order == "random":
        # One draw per job in submit order: the order of a job never depends
        # on which other jobs have arrived, and a seed reproduces it exactly.
        rng = random.Random(seed)
        keys = [(rng.random(), i) for i in range(n)]
    else:
        raise ValueError(f"unknown queue order {order!r}")
    ranks = [0] * n
    for rank, (_, i) in enumerate(sorted(keys)):
        ranks[i] = rank
    return ranks
