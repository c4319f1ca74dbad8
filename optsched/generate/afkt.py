"""The synthetic workloads of Arndt et al. (2000) as Rassmann (2020) generates them.

References: O. Arndt, B. Freisleben, T. Kielmann, F. Thilo, "A comparative
study of online scheduling algorithms for networks of workstations",
*Cluster Computing* 3 (2000) 95-112 (AFKT00); H. Rassmann, "Simulation von
Online Scheduling-Algorithmen fuer parallele Systeme", bachelor thesis, TU
Dortmund, 2020, Sec. 3.1 and its code ``Generator.generate`` (seed notes
003, Sec. A3.2-A3.3).

Model
-----
``n`` rigid jobs on nodes with speeds ``s_k``. Job ``i`` (0-based position
before the final shuffle) is

- *sequential* (``pi = 1``) when ``i < seqR * n``, with work
  ``p ~ U{minSeq..maxSeq}``;
- otherwise *parallel*, with ``p ~ U{minPar..maxPar}``: *small* with
  ``pi ~ U{2..floor(m/2)}`` when ``i < n (1 - largeR + seqR largeR)``, else
  *large* with ``pi ~ U{ceil(m/2)..m}`` (AFKT00: a large job takes at least
  half the nodes, so no two run side by side).

So ``ceil(seqR n)`` jobs are sequential and ``n - ceil(n (1 - largeR (1 -
seqR)))`` are large: a share ``largeR`` of the parallel ones, up to
rounding. Both bounds are evaluated exactly (the thesis compares floats, so
e.g. ``0.07 * 100 = 7.000000000000001`` gives it one sequential job more;
the grids of the experiments hit no such case).
Releases are ``q ~ U{0..T_c,max}`` (``T_c,max = 0``: offline), ids a random
permutation of ``0..n-1`` (ids break ties, so they must not encode the job
class), and the job list is shuffled.

The instance's machine has the speeds (:class:`~optsched.instance.Machine`
``speeds``); a job's ``runtime`` is its work ``p`` at speed 1 and its
``estimate`` the work ``p_hat`` the schedulers see, so on the node set
``S`` it runs ``ceil(p / sum_{k in S} s_k)``.

Estimate errors, with probability ``errorRate`` per job (``U ~ U[0, 1)``):

``"under"`` (the thesis's code; it only underestimates)
    ``p_hat = round(p / (1 + maxError U))``, so
    ``p / (1 + maxError) <= p_hat <= p`` up to rounding;
``"symmetric"`` (AFKT00)
    ``f = 1 + U pErr``, then ``p_hat = round(p f)`` or ``round(p / f)``
    with probability 1/2 each: ``p_err = 1`` gives ``p / 2 < p_hat < 2 p``.

Rounding is half to even (Python's ``round``, NumPy's ``rint``). The other
jobs have ``p_hat = p``. Nothing is killed on an overrun.

Node-speed presets (:func:`node_speeds`): ``"QxS"`` is ``Q`` nodes of speed
``S`` (experiments 1-3: ``10x100``; the thesis infers speed 100); a bare
node count ``M`` is the thesis's two-class estimate of AFKT00's unpublished
measured speeds, node ``x`` having speed ``275 if (x + 1) / M < 0.75 else
825``: ``22`` gives 16 x 275 + 6 x 825, ``100`` gives 74 x 275 + 26 x 825.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from optsched.instance import Instance, Job, Machine, Source
from optsched.nodes import exact
from optsched.topology.machines import parse_speed_list

__all__ = [
    "ERROR_MODELS",
    "SLOW_FAST",
    "afkt_instance",
    "job_classes",
    "node_speeds",
]

ERROR_MODELS: tuple[str, ...] = ("under", "symmetric")
"""Estimate-error models: the thesis's (underestimates only) and AFKT00's."""

SLOW_FAST: tuple[int, int] = (275, 825)
"""The thesis's two speed classes (equal total power at a 3:1 node ratio)."""

SLOW_SHARE = Fraction(3, 4)
"""Node ``x`` of ``M`` is slow when ``(x + 1) / M < 3/4`` (thesis code)."""


def node_speeds(spec: str | Sequence[float]) -> tuple[float, ...]:
    """Speeds of a preset, a list, or a speed list string.

    ``"22"`` (a bare count ``M``) is the thesis's two-class rule ``275 if
    (x + 1) / M < 0.75 else 825`` for nodes ``x = 0..M-1``; anything else
    is read by :func:`optsched.topology.machines.parse_speed_list` (``"10x100"``,
    ``"16x275,6x825"``, ``"100,100,275"``, or a file), and a sequence is
    the speeds themselves.

    Raises ``ValueError`` on a malformed spec or a speed that is not > 0.
    """
    if not isinstance(spec, str):
        return _checked_speeds(list(spec), repr(spec))
    text = spec.strip()
    if "," in text or "x" in text:
        return parse_speed_list(text)
    if not text.isdigit():
        raise ValueError(
            f"speeds {spec!r}: expected a node count M (two classes 275/825), "
            "QxS (Q nodes of speed S) or a comma-separated list of speeds"
        )
    total = int(text)
    if total < 1:
        raise ValueError(f"speeds {spec!r}: a node count must be at least 1")
    slow, fast = SLOW_FAST
    return tuple(
        slow if Fraction(x + 1, total) < SLOW_SHARE else fast for x in range(total)
    )


def _checked_speeds(values: list[float], spec: str) -> tuple[float, ...]:
    if not values:
        raise ValueError(f"speeds {spec}: no speeds")
    for value in values:
        if isinstance(value, bool) or not (0 < value < math.inf):
            raise ValueError(f"speeds {spec}: speed {value!r} must be a number > 0")
    return tuple(values)


def job_classes(
    jobs: int, seq_ratio: float, large_ratio: float
) -> tuple[int, int, int]:
    """``(sequential, small parallel, large parallel)`` job counts.

    Position ``i`` is sequential when ``i < seqR n`` and small parallel when
    ``i < n (1 - largeR + seqR largeR)``, both exactly (module notes):
    ``seq = ceil(seqR n)``, ``seq + small = ceil(n (1 - largeR (1 - seqR)))``.
    """
    seq_share, large_share = exact(seq_ratio), exact(large_ratio)
    sequential = min(jobs, math.ceil(seq_share * jobs))
    not_large = min(jobs, math.ceil(jobs * (1 - large_share * (1 - seq_share))))
    return sequential, not_large - sequential, jobs - not_large


def _validate(
    jobs: int,
    speeds: tuple[float, ...],
    ratios: tuple[float, float],
    timespan: int,
    ranges: tuple[tuple[int, int], tuple[int, int]],
    error: tuple[float, float, str],
) -> None:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"afkt: jobs must be an integer >= 1, got {jobs!r}")
    for name, ratio in zip(("seq ratio", "large ratio"), ratios, strict=True):
        if not 0 <= ratio <= 1:
            raise ValueError(f"afkt: {name} {ratio!r} must lie in [0, 1]")
    if isinstance(timespan, bool) or not isinstance(timespan, int) or timespan < 0:
        raise ValueError(f"afkt: timespan must be an integer >= 0, got {timespan!r}")
    for name, (low, high) in zip(("sequential", "parallel"), ranges, strict=True):
        if not 1 <= low <= high:
            raise ValueError(
                f"afkt: {name} work range {low}..{high} needs 1 <= min <= max"
            )
    rate, most, model = error
    if not 0 <= rate <= 1:
        raise ValueError(f"afkt: error rate {rate!r} must lie in [0, 1]")
    if not 0 <= most < math.inf:
        raise ValueError(f"afkt: max error {most!r} must be a number >= 0")
    if model not in ERROR_MODELS:
        raise ValueError(
            f"afkt: error model {model!r} is not one of {', '.join(ERROR_MODELS)}"
        )
    _, small, _ = job_classes(jobs, *ratios)
    if small and len(speeds) < 4:
        raise ValueError(
            f"afkt: {small} small parallel jobs need 2..floor(m/2) nodes, but the "
            f"machine has only {len(speeds)} nodes (use at least 4, or large "
            "ratio 1)"
        )


def _estimates(
    work: np.ndarray, rng: np.random.Generator, rate: float, most: float, model: str
) -> np.ndarray:
    """Estimated work ``p_hat`` per job (module notes), drawn after the rest."""
    erring = rng.random(work.size) < rate
    factor = 1 + most * rng.random(work.size)
    # Drawn under both models, so that the model changes no other draw.
    longer = rng.random(work.size) < 0.5
    if model == "under":
        wrong = np.rint(work / factor)
    else:
        wrong = np.where(longer, np.rint(work * factor), np.rint(work / factor))
    return np.where(erring, wrong, work).astype(np.int64)


def afkt_instance(
    jobs: int = 250,
    speeds: str | Sequence[float] = "10x100",
    *,
    seq_ratio: float = 0.5,
    large_ratio: float = 0.3,
    timespan: int = 10_000,
    seq_work: tuple[int, int] = (1000, 50_000),
    par_work: tuple[int, int] = (10_000, 400_000),
    error_rate: float = 0.0,
    max_error: float = 0.0,
    error_model: str = "under",
    seed: int | np.random.Generator = 0,
    name: str = "",
) -> Instance:
    """An AFKT00 job mix (module notes); defaults are experiment 3's.

    Parameters
    ----------
    jobs
        ``n``.
    speeds
        Node speeds: a preset or list for :func:`node_speeds`.
    seq_ratio, large_ratio
        ``seqR`` (AFKT00's ``P_s``) and ``largeR`` (``P_lp``).
    timespan
        ``T_c,max``: releases uniform on ``0..timespan`` (0: offline).
    seq_work, par_work
        ``(min, max)`` work of sequential and of parallel jobs, inclusive.
    error_rate, max_error, error_model
        Estimate errors (module notes).
    seed
        Seed or :class:`numpy.random.Generator`. Draw order: ids, work,
        releases, sizes, then the estimate errors, then the list shuffle;
        every draw is vectorised over the jobs, so the instance without
        errors does not depend on the error model.
    name
        Instance name; a description of the parameters by default.

    Returns
    -------
    Instance
        On ``Machine(m, speeds=...)``; ``runtime`` = work ``p``,
        ``estimate`` = ``p_hat``; ``source.format`` is ``"afkt"``.
    """
    speed_list = node_speeds(speeds)
    _validate(
        jobs,
        speed_list,
        (seq_ratio, large_ratio),
        timespan,
        (seq_work, par_work),
        (error_rate, max_error, error_model),
    )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    m = len(speed_list)
    sequential, small, large = job_classes(jobs, seq_ratio, large_ratio)
    ids = rng.permutation(jobs)
    work = np.concatenate(
        [
            rng.integers(seq_work[0], seq_work[1] + 1, size=sequential),
            rng.integers(par_work[0], par_work[1] + 1, size=small + large),
        ]
    )
    releases = rng.integers(0, timespan + 1, size=jobs)
    sizes = np.concatenate(
        [
            np.ones(sequential, dtype=np.int64),
            rng.integers(2, m // 2 + 1, size=small) if small else np.empty(0, int),
            rng.integers((m + 1) // 2, m + 1, size=large),
        ]
    )
    estimates = _estimates(work, rng, error_rate, max_error, error_model)
    order = rng.permutation(jobs)
    made = tuple(
        Job(
            id=int(ids[i]),
            release=int(releases[i]),
            size=int(sizes[i]),
            runtime=int(work[i]),
            estimate=int(estimates[i]),
        )
        for i in order
    )
    label = name or (
        f"afkt n={jobs} m={m} seqR={seq_ratio:g} largeR={large_ratio:g} "
        f"T={timespan} seed={seed if isinstance(seed, int) else 'rng'}"
    )
    return Instance(
        Machine(m, speeds=speed_list), made, name=label, source=Source(format="afkt")
    )
