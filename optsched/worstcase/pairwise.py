"""Minimal instances separating Rassmann's ten schedulers, exhaustively.

Rassmann (2020, Sec. 3.2.2, Table 3.2.1; seed notes 003, Sec. A4.3-A5)
searched with Hypothesis, for every ordered pair ``(R, C)`` of ten
schedulers, the smallest instance on which ``R`` has a strictly smaller
makespan ``C_max = max_j c_j - min_j q_j`` than ``C``; size is
``J + k + o`` (jobs + nodes + online jobs, i.e. jobs with ``q_j > 0``).
Hypothesis's shrinker gives small instances, not minimal ones. Here the
instances of a finite space are enumerated in increasing size, all ten
schedulers run once per instance, and every ordered pair keeps the first
(smallest) instance that separates it, which makes each minimum exact
*within the space*.

Space (:class:`PairSpace`)
    ``k >= 2`` nodes of speed 1 (one node separates nothing: every
    scheduler is then work-conserving); jobs listed in order, job ``j``
    having id ``j`` (ids break ties, so the order matters); per job a width
    ``pi in 1..k``, a run time ``r = ceil(p / pi) in 1..max_run`` with *any*
    work ``p`` giving it (``p in pi (r - 1) + 1 .. pi r``) and a release
    ``q in 0..max_release``, shifted so that ``min q = 0``; estimates exact.
    ``max_run`` and ``max_release`` may shrink as the size grows (tiers).
    The size counts the machine's nodes (the thesis's code counts the nodes
    a run used). Sizes 3 and 4 (``(J, k, o) = (1, 2, 0), (2, 2, 0)``)
    separate no pair (tested), so the enumeration starts at 5.

Reduction (exact, not a heuristic)
    On speed-1 nodes with exact estimates the ten schedulers see the work
    only through ``r`` (run times, estimated ends ``c_hat = s + r``) and the
    order of the keys ``p / pi`` of SPT and LPT: the backfill test
    ``est(j) = p / pi <= gap`` with an integer gap is ``r <= gap``. Keys of
    different ``r`` are ordered by ``r``; among jobs of equal ``r`` the
    key is ``r - 1 + i / pi`` with ``i in 1..pi``. So each class of works
    with equal ``r`` and the same weak order of keys inside every ``r``
    group behaves identically, and one representative per class is run.

Schedulers (:data:`SCHEDULERS`, the thesis's ten; seed notes Sec. A2): base
orders FIFO ``(q, id)``, SPT ``min (p/pi, id)``, LPT ``max (p/pi, id)``
(ties to the higher id), each *blocking*, or wrapped in ``Fit``,
``Backfill`` (AFKT00: a job may jump the blocked head ``h`` when it fits now
and ends by the head's shadow time ``t*``) or ``OptimisticBackfill`` (also
when ``pi_j <= extra``, the nodes left over at ``t*``: EASY). The fast
simulator here (:func:`starts`) implements exactly the thesis's event loop
(finish, admit, start until nothing starts, jump); the product's simulator
(:func:`optsched.heuristics.simulate` on the same specs) re-runs every
witness, and its schedules go through the checker.

pbt score (Rassmann Sec. 3.2.3, Table 3.2.2): for scheduler ``A``, the
average size of the cells in which ``A`` loses (its column) divided by the
average size of those in which it wins (its row), over cells with a
witness only; higher is better.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from optsched.check import check_schedule
from optsched.instance import Instance, Job, Machine
from optsched.metrics import makespan
from optsched.schedule import Placement, Schedule

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "BASES",
    "KINDS",
    "SCHEDULERS",
    "PairSpace",
    "Scheduler",
    "Search",
    "Witness",
    "WitnessError",
    "base_instances",
    "by_label",
    "enumerate_minima",
    "fast_makespans",
    "hypothesis_witness",
    "instances",
    "order_ranks",
    "pbt_scores",
    "schedule_of",
    "shapes",
    "size_of",
    "spearman",
    "starts",
    "to_instance",
    "trapezoid",
    "verify",
]

BASES: tuple[str, ...] = ("fifo", "spt", "lpt")
KINDS: tuple[str, ...] = ("blocking", "fit", "back", "optim")
"""Blocking base order, ``Fit``, AFKT00 ``Backfill``, ``OptimisticBackfill``."""

_SPEC_HEAD = {
    "blocking": "blocking",
    "fit": "fit",
    "back": "afkt-backfill",
    "optim": "optimistic",
}


@dataclass(frozen=True, slots=True)
class Scheduler:
    """One of the ten: thesis ``label``, base order and combinator ``kind``."""

    label: str
    base: str
    kind: str

    @property
    def spec(self) -> str:
        """The policy spec of :func:`optsched.heuristics.simulate`."""
        return f"{_SPEC_HEAD[self.kind]}:f={self.base}"


SCHEDULERS: tuple[Scheduler, ...] = (
    Scheduler("fifo", "fifo", "blocking"),
    Scheduler("spt", "spt", "blocking"),
    Scheduler("lpt", "lpt", "blocking"),
    Scheduler("Fifo-fit", "fifo", "fit"),
    Scheduler("Fifo-back", "fifo", "back"),
    Scheduler("Fifo-optim", "fifo", "optim"),
    Scheduler("Spt-fit", "spt", "fit"),
    Scheduler("Spt-back", "spt", "back"),
    Scheduler("Lpt-fit", "lpt", "fit"),
    Scheduler("Lpt-back", "lpt", "back"),
)
"""The ten of Tables 3.2.1-3.2.3, in the thesis's order."""

Gene = tuple[int, int, int]
"""One job: ``(q, pi, p)``, release, width (nodes) and work."""


# --------------------------------------------------------------------------
# The fast simulator (speed-1 nodes, exact estimates)


def _ranks(keys: Sequence[tuple[object, ...]]) -> list[int]:
    """Position of each job when sorted by its key (keys are distinct)."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = [0] * len(keys)
    for position, j in enumerate(order):
        rank[j] = position
    return rank


def order_ranks(base: str, release: Sequence[int], key: Sequence[int]) -> list[int]:
    """Priority of each job under ``base``: the job of lowest rank is chosen.

    FIFO: ``(q, id)``; SPT: ``(key, id)``; LPT: the largest ``(key, id)``
    (ties to the higher id, as the thesis's ``max``). Ids are positions.
    """
    n = len(release)
    if base == "fifo":
        return _ranks([(release[j], j) for j in range(n)])
    if base == "spt":
        return _ranks([(key[j], j) for j in range(n)])
    if base == "lpt":
        return _ranks([(-key[j], -j) for j in range(n)])
    raise ValueError(f"base order {base!r} is not one of {', '.join(BASES)}")


def starts(
    nodes: int,
    release: Sequence[int],
    width: Sequence[int],
    run: Sequence[int],
    rank: Sequence[int],
    kind: str,
) -> list[int]:
    """Start times of the thesis's event loop (seed notes Sec. A2.2-A2.3).

    At each event time ``t``: finish the jobs with ``c_j <= t``, admit the
    jobs with ``q_j <= t``, then start the scheduler's choice while it fits,
    and jump to the next release or completion. ``rank`` is the base
    order (lowest first, :func:`order_ranks`); estimates are exact, so the
    estimated end of a running job is its end and ``est(j) <= gap`` is
    ``run_j <= gap`` for an integer gap. ``kind`` is one of :data:`KINDS`.

    For the backfills the blocked head ``h`` gets the shadow time ``t*``:
    running jobs by end ascending are added to the free count until ``h``
    fits, jobs ending at ``t*`` too; ``extra`` is the count then minus
    ``pi_h``. Candidates fit now and end by ``t*`` (or, optimistic, have
    ``pi_j <= extra``); the base order picks among them.
    """
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    n = len(release)
    arrivals = sorted(range(n), key=lambda j: (release[j], j))
    return _starts(nodes, arrivals, release, width, run, rank, KINDS.index(kind))


def _starts(
    nodes: int,
    arrivals: Sequence[int],
    release: Sequence[int],
    width: Sequence[int],
    run: Sequence[int],
    rank: Sequence[int],
    kind: int,
) -> list[int]:
    """:func:`starts` with the arrival order given and ``kind`` an index
    into :data:`KINDS` (the enumeration's hot loop)."""
    n = len(release)
    start = [-1] * n
    running: list[tuple[int, int]] = []  # (end, width)
    queue: list[int] = []
    free = nodes
    nxt = 0
    t = release[arrivals[0]] if n else 0
    by_rank = rank.__getitem__
    while True:
        if running:
            kept = []
            for item in running:
                if item[0] <= t:
                    free += item[1]
                else:
                    kept.append(item)
            running = kept
        while nxt < n and release[arrivals[nxt]] <= t:
            queue.append(arrivals[nxt])
            nxt += 1
        while queue:
            head = min(queue, key=by_rank)
            if width[head] <= free:
                chosen = head
            elif kind == 0:  # blocking
                break
            else:
                if kind == 1:  # fit
                    fitting = [j for j in queue if width[j] <= free]
                else:
                    gap, extra = _shadow(running, free, width[head], t)
                    if kind == 2:
                        fitting = [
                            j for j in queue if width[j] <= free and run[j] <= gap
                        ]
                    else:
                        fitting = [
                            j
                            for j in queue
                            if width[j] <= free and (run[j] <= gap or width[j] <= extra)
                        ]
                if not fitting:
                    break
                chosen = min(fitting, key=by_rank)
            queue.remove(chosen)
            start[chosen] = t
            running.append((t + run[chosen], width[chosen]))
            free -= width[chosen]
        if running:
            t = min(running)[0]
            if nxt < n and release[arrivals[nxt]] < t:
                t = release[arrivals[nxt]]
        elif nxt < n:
            t = release[arrivals[nxt]]
        else:
            return start


def _shadow(
    running: list[tuple[int, int]], free: int, need: int, now: int
) -> tuple[int, int]:
    """``(t* - now, extra)`` of a head of width ``need`` (thesis's loop)."""
    available, shadow = free, None
    for end, w in sorted(running):
        if available < need or end == shadow:
            available += w
            shadow = end
        else:
            break
    assert shadow is not None  # the head fits on the empty machine
    return shadow - now, available - need


def _keys(genes: Sequence[Gene]) -> list[int]:
    """The keys ``p / pi`` scaled by the lcm of the widths: exact integers."""
    scale = math.lcm(*(pi for _, pi, _ in genes))
    return [p * (scale // pi) for _, pi, p in genes]


def _columns(genes: Sequence[Gene]) -> tuple[list[int], list[int], list[int]]:
    release = [q for q, _, _ in genes]
    width = [pi for _, pi, _ in genes]
    run = [-(-p // pi) for _, pi, p in genes]
    return release, width, run


def fast_makespans(
    nodes: int, genes: Sequence[Gene], schedulers: Sequence[Scheduler] = SCHEDULERS
) -> list[int]:
    """``C_max = max c - min q`` of each scheduler on the instance of ``genes``."""
    release, width, run = _columns(genes)
    keys = _keys(genes)
    arrivals = sorted(range(len(genes)), key=lambda j: (release[j], j))
    ranks: dict[str, list[int]] = {}
    values = []
    for sched in schedulers:
        if sched.base not in ranks:
            ranks[sched.base] = order_ranks(sched.base, release, keys)
        values.append(
            _makespan(nodes, arrivals, release, width, run, ranks[sched.base], sched)
        )
    return values


def to_instance(nodes: int, genes: Sequence[Gene], name: str = "") -> Instance:
    """The instance: ``nodes`` processors of speed 1, job ``j`` = ``genes[j]``.

    ``runtime`` and ``estimate`` are the work ``p`` (the machine has
    speeds), so job ``j`` runs ``ceil(p / pi)`` on any ``pi`` nodes.
    """
    jobs = tuple(
        Job(id=j, release=q, size=pi, runtime=p, estimate=p)
        for j, (q, pi, p) in enumerate(genes)
    )
    return Instance(Machine(nodes, speeds=(1,) * nodes), jobs, name=name)


def schedule_of(nodes: int, genes: Sequence[Gene], sched: Scheduler) -> Schedule:
    """The fast simulator's schedule, processors assigned lowest-free-first.

    Any assignment works on identical nodes; assigning in start order
    (completions first at equal times) is the greedy colouring that always
    succeeds when the counts fit, so the checker judges the start times.
    """
    release, width, run = _columns(genes)
    rank = order_ranks(sched.base, release, _keys(genes))
    begun = starts(nodes, release, width, run, rank, sched.kind)
    free = list(range(nodes))
    busy: list[tuple[int, tuple[int, ...]]] = []
    placements = {}
    for j in sorted(range(len(genes)), key=lambda j: (begun[j], j)):
        for item in [b for b in busy if b[0] <= begun[j]]:
            busy.remove(item)
            free.extend(item[1])
        free.sort()
        taken, free = tuple(free[: width[j]]), free[width[j] :]
        busy.append((begun[j] + run[j], taken))
        placements[j] = Placement(begun[j], begun[j] + run[j], processors=taken)
    return Schedule(placements, producer=f"pairwise-fast {sched.spec}")


# --------------------------------------------------------------------------
# Witnesses and their verification


def size_of(nodes: int, genes: Sequence[Gene]) -> tuple[int, int, int]:
    """``(J, k, o)``: jobs, nodes, online jobs (``q > min q``)."""
    first = min(q for q, _, _ in genes)
    return len(genes), nodes, sum(1 for q, _, _ in genes if q > first)


@dataclass(frozen=True, slots=True)
class Witness:
    """An instance on which ``winner`` has a strictly smaller makespan."""

    winner: str
    loser: str
    nodes: int
    genes: tuple[Gene, ...]
    winner_value: int
    loser_value: int
    found_by: str = "enumeration"

    @property
    def parts(self) -> tuple[int, int, int]:
        """``(J, k, o)``."""
        return size_of(self.nodes, self.genes)

    @property
    def size(self) -> int:
        """``J + k + o``."""
        return sum(self.parts)

    def describe(self) -> str:
        """``J+k+o`` and the jobs as ``(q, pi, p)``."""
        jobs = " ".join(f"({q},{pi},{p})" for q, pi, p in self.genes)
        j, k, o = self.parts
        return (
            f"{j}+{k}+{o}: k={self.nodes} jobs(q,pi,p)={jobs}; "
            f"{self.winner} {self.winner_value} < {self.loser} {self.loser_value}"
        )


def by_label(label: str) -> Scheduler:
    """The scheduler of a thesis label (``KeyError`` if none)."""
    for sched in SCHEDULERS:
        if sched.label == label:
            return sched
    raise KeyError(label)


Simulate = Callable[[Instance, str], Schedule]


def _product_simulate(instance: Instance, spec: str) -> Schedule:
    from optsched.heuristics import simulate

    return simulate(instance, spec).schedule


class WitnessError(RuntimeError):
    """A witness whose re-run gives an invalid schedule or no separation."""


def verify(witness: Witness, simulate: Simulate | None = None) -> tuple[int, int]:
    """Re-run a witness with ``simulate`` and check both schedules.

    ``simulate(instance, spec) -> Schedule`` defaults to the product's
    :func:`optsched.heuristics.simulate`. Returns both makespans
    (``max c - min q``, from the schedules); raises :class:`WitnessError`
    when a schedule is invalid or the winner does not win.
    """
    run = simulate or _product_simulate
    instance = to_instance(witness.nodes, witness.genes)
    values = []
    for label in (witness.winner, witness.loser):
        schedule = run(instance, by_label(label).spec)
        violations = check_schedule(instance, schedule)
        if violations:
            raise WitnessError(f"{label}: invalid schedule: {violations[0]}")
        values.append(makespan(instance, schedule, relative=True))
    if values[0] >= values[1]:
        raise WitnessError(f"{witness.describe()}: re-run gives {values}")
    return values[0], values[1]


# --------------------------------------------------------------------------
# The exhaustive enumeration


@dataclass(frozen=True, slots=True)
class PairSpace:
    """The enumerated space (module notes), in tiers of sizes.

    ``tiers`` holds ``(max_size, max_run, max_release)`` triples with
    growing ``max_size``: sizes ``J + k + o`` up to the first tier's
    ``max_size`` are enumerated with run times ``r = ceil(p / pi) <=
    max_run`` and releases ``q <= max_release`` of that tier, larger sizes
    with the next tier's limits (larger sizes have many more instances, so
    later tiers usually take smaller limits).
    """

    tiers: tuple[tuple[int, int, int], ...]

    def __post_init__(self) -> None:
        sizes = [t[0] for t in self.tiers]
        if not self.tiers or sizes != sorted(set(sizes)):
            raise ValueError("pair space: tiers need strictly growing sizes")
        if any(t[1] < 1 or t[2] < 0 for t in self.tiers):
            raise ValueError("pair space: max run >= 1 and max release >= 0")

    @classmethod
    def uniform(cls, max_size: int, max_run: int, max_release: int) -> PairSpace:
        """One tier: the same limits at every size."""
        return cls(((max_size, max_run, max_release),))

    @property
    def max_size(self) -> int:
        """Largest size enumerated."""
        return self.tiers[-1][0]

    def limits(self, size: int) -> tuple[int, int]:
        """``(max_run, max_release)`` at ``size``."""
        for top, run, release in self.tiers:
            if size <= top:
                return run, release
        raise ValueError(f"size {size} is beyond the space ({self.max_size})")

    def describe(self) -> str:
        """The space in words."""
        low = 5
        parts = []
        for top, run, release in self.tiers:
            parts.append(f"sizes {low}..{top}: r <= {run}, q <= {release}")
            low = top + 1
        return (
            "; ".join(parts)
            + ". Every shape J+k+o with k >= 2 speed-1 nodes, pi in 1..k, "
            "every work p with r = ceil(p/pi), min q = 0, ids = list positions, "
            "exact estimates"
        )


def shapes(size: int) -> Iterator[tuple[int, int, int]]:
    """``(J, k, o)`` with ``J + k + o = size``, ``k >= 2``, ``o <= J - 1``.

    Fewer nodes first, then fewer online jobs (more jobs).
    """
    for k in range(2, size):
        for o in range(size - k):
            jobs = size - k - o
            if jobs >= 1 and o <= jobs - 1:
                yield jobs, k, o


@cache
def _fraction_choices(widths: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """One ``i`` tuple per distinct weak order of the keys ``i_j / pi_j``.

    Jobs of one run time ``r`` have keys ``r - 1 + i_j / pi_j`` with
    ``i_j in 1..pi_j``; only their weak order matters (module notes). The
    representative of an order is the first tuple met in lexicographic
    order.
    """
    seen: dict[tuple[int, ...], tuple[int, ...]] = {}
    for choice in itertools.product(*(range(1, w + 1) for w in widths)):
        values = [Fraction(i, w) for i, w in zip(choice, widths, strict=True)]
        levels = sorted(set(values))
        order = tuple(levels.index(v) for v in values)
        seen.setdefault(order, choice)
    return tuple(seen.values())


def _work_choices(
    widths: Sequence[int], runs: Sequence[int]
) -> Iterator[tuple[int, ...]]:
    """Representative works ``p`` per class of key orders (module notes)."""
    groups: dict[int, list[int]] = {}
    for j, r in enumerate(runs):
        groups.setdefault(r, []).append(j)
    members = list(groups.values())
    options = [_fraction_choices(tuple(widths[j] for j in m)) for m in members]
    for picks in itertools.product(*options):
        work = [0] * len(widths)
        for m, pick in zip(members, picks, strict=True):
            for j, i in zip(m, pick, strict=True):
                work[j] = widths[j] * (runs[j] - 1) + i
        yield tuple(work)


def base_instances(
    jobs: int, nodes: int, online: int, max_run: int, max_release: int
) -> Iterator[tuple[list[int], list[int], list[int], list[tuple[int, ...]]]]:
    """``(releases, widths, runs, works)`` of one shape ``(J, k, o)``.

    ``works`` lists one work vector per class of key orders; the FIFO
    schedulers do not depend on it (they see ``q``, ``pi`` and ``r`` only).
    """
    per_job = [(pi, r) for r in range(1, max_run + 1) for pi in range(1, nodes + 1)]
    releases = []
    for which in itertools.combinations(range(jobs), online):
        for values in itertools.product(range(1, max_release + 1), repeat=online):
            release = [0] * jobs
            for j, q in zip(which, values, strict=True):
                release[j] = q
            releases.append(release)
    for combo in itertools.product(per_job, repeat=jobs):
        widths = [pi for pi, _ in combo]
        runs = [r for _, r in combo]
        works = list(_work_choices(widths, runs))
        for release in releases:
            yield release, widths, runs, works


def instances(
    jobs: int, nodes: int, online: int, max_run: int, max_release: int
) -> Iterator[tuple[Gene, ...]]:
    """Every class representative of one shape ``(J, k, o)``."""
    for release, widths, _, works in base_instances(
        jobs, nodes, online, max_run, max_release
    ):
        for work in works:
            yield tuple(zip(release, widths, work, strict=True))


@dataclass
class Search:
    """State and result of :func:`enumerate_minima`."""

    space: PairSpace
    witnesses: dict[tuple[str, str], Witness] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    """Instances (class representatives) run per size."""
    complete_to: int = 0
    """Largest size enumerated completely."""

    def open_pairs(self) -> list[tuple[str, str]]:
        """Ordered pairs without a witness yet."""
        return [
            (a.label, b.label)
            for a in SCHEDULERS
            for b in SCHEDULERS
            if a is not b and (a.label, b.label) not in self.witnesses
        ]


def enumerate_minima(
    space: PairSpace,
    *,
    progress: Callable[[str], None] | None = None,
    impossible: Sequence[tuple[str, str]] = (),
) -> Search:
    """Smallest separating instance of every ordered pair within ``space``.

    Sizes are enumerated in increasing order and completely; within a size,
    a pair keeps the first instance met. Only the schedulers of still-open
    pairs are simulated, the FIFO ones once per ``(q, pi, r)`` vector and
    the SPT and LPT ones once per class of key orders. ``impossible``
    pairs (proven never to separate, e.g. FIFO beating FIFO-backfill) are
    not searched.
    """
    search = Search(space)
    skip = set(impossible)
    for size in range(5, space.max_size + 1):
        pending = [p for p in search.open_pairs() if p not in skip]
        if not pending:
            search.complete_to = space.max_size
            break
        count = 0
        for jobs, nodes, online in shapes(size):
            for release, widths, runs, works in base_instances(
                jobs, nodes, online, *space.limits(size)
            ):
                count += len(works)
                pending = _record(search, nodes, release, widths, runs, works, pending)
        search.counts[size] = count
        search.complete_to = size
        if progress:
            progress(
                f"size {size}: {count} instances, "
                f"{len(search.witnesses)} pairs separated"
            )
    return search


_LABELS = [s.label for s in SCHEDULERS]


def _record(
    search: Search,
    nodes: int,
    release: list[int],
    widths: list[int],
    runs: list[int],
    works: list[tuple[int, ...]],
    pending: list[tuple[str, str]],
) -> list[tuple[str, str]]:
    """Run the schedulers of the pending pairs; record new witnesses."""
    if not pending:
        return pending
    needed = {label for pair in pending for label in pair}
    fifo = [s for s in SCHEDULERS if s.base == "fifo" and s.label in needed]
    keyed = [s for s in SCHEDULERS if s.base != "fifo" and s.label in needed]
    n = len(release)
    arrivals = sorted(range(n), key=lambda j: (release[j], j))
    values: dict[str, int] = {}
    rank = list(range(n))
    for j, position in zip(arrivals, range(n), strict=True):
        rank[j] = position
    for sched in fifo:
        values[sched.label] = _makespan(
            nodes, arrivals, release, widths, runs, rank, sched
        )
    for work in works if keyed else works[:1]:
        genes = tuple(zip(release, widths, work, strict=True))
        keys = _keys(genes)
        ranks: dict[str, list[int]] = {}
        for sched in keyed:
            if sched.base not in ranks:
                ranks[sched.base] = order_ranks(sched.base, release, keys)
            values[sched.label] = _makespan(
                nodes, arrivals, release, widths, runs, ranks[sched.base], sched
            )
        still = []
        for winner, loser in pending:
            if values[winner] < values[loser]:
                search.witnesses[winner, loser] = Witness(
                    winner, loser, nodes, genes, values[winner], values[loser]
                )
            else:
                still.append((winner, loser))
        pending = still
    return pending


def _makespan(
    nodes: int,
    arrivals: list[int],
    release: list[int],
    width: list[int],
    run: list[int],
    rank: list[int],
    sched: Scheduler,
) -> int:
    begun = _starts(nodes, arrivals, release, width, run, rank, KINDS.index(sched.kind))
    return max(s + r for s, r in zip(begun, run, strict=True)) - release[arrivals[0]]


# --------------------------------------------------------------------------
# Hypothesis search (the thesis's method) for cells beyond the space


def _thesis_strategy(
    max_nodes: int, max_jobs: int, max_work: int, max_release: int
) -> SearchStrategy[tuple[int, tuple[Gene, ...]]]:
    """The thesis's generator (seed notes Sec. A5): nodes ``1..max_nodes``,
    ``2..max_jobs`` jobs with ``pi in 1..k``, ``p in 1..max_work``,
    ``q in 0..max_release``; ``q`` shifted to ``min q = 0`` afterwards."""
    from hypothesis import strategies as st

    @st.composite
    def candidates(draw: st.DrawFn) -> tuple[int, tuple[Gene, ...]]:
        k = draw(st.integers(1, max_nodes))
        genes = draw(
            st.lists(
                st.tuples(
                    st.integers(0, max_release),
                    st.integers(1, k),
                    st.integers(1, max_work),
                ),
                min_size=2,
                max_size=max_jobs,
            )
        )
        first = min(q for q, _, _ in genes)
        return k, tuple((q - first, pi, p) for q, pi, p in genes)

    return candidates()


def hypothesis_witness(
    winner: str,
    loser: str,
    *,
    seed: int = 0,
    examples: int = 2000,
    max_nodes: int = 10,
    max_jobs: int = 10,
    max_work: int = 10,
    max_release: int = 10,
    greedy: bool = True,
) -> Witness | None:
    """Hypothesis's smallest instance where ``winner`` beats ``loser``.

    The thesis's search (generator as its ``generate_System_and_Jobs``,
    shrinking by Hypothesis), with the fast simulator, ``examples``
    examples, no database and ``random.Random(seed)``; then, with
    ``greedy``, a pass that drops jobs and nodes and lowers numbers while
    the winner still wins (without it: the thesis's method as it was).
    ``None`` when nothing separates the pair.
    """
    from optsched.extras import require

    require("hypothesis", "worstcase", "the pairwise Hypothesis search")
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    pair = [by_label(winner), by_label(loser)]

    def wins(candidate: tuple[int, tuple[Gene, ...]]) -> bool:
        nodes, genes = candidate
        ours, theirs = fast_makespans(nodes, genes, pair)
        return ours < theirs

    config = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    try:
        found = find(
            _thesis_strategy(max_nodes, max_jobs, max_work, max_release),
            wins,
            settings=config,
            random=random.Random(seed),
        )
    except NoSuchExample:
        return None
    nodes, genes = _shrink(found, wins) if greedy else found
    ours, theirs = fast_makespans(nodes, genes, pair)
    return Witness(winner, loser, nodes, genes, ours, theirs, found_by="hypothesis")


def _normalised(genes: Sequence[Gene]) -> tuple[Gene, ...]:
    first = min(q for q, _, _ in genes)
    return tuple((q - first, pi, p) for q, pi, p in genes)


def _smaller(
    nodes: int, genes: tuple[Gene, ...]
) -> Iterator[tuple[int, tuple[Gene, ...]]]:
    if len(genes) > 1:
        for j in range(len(genes)):
            yield nodes, _normalised(genes[:j] + genes[j + 1 :])
    if nodes > 1:
        yield nodes - 1, tuple((q, min(pi, nodes - 1), p) for q, pi, p in genes)
    for j, (q, pi, p) in enumerate(genes):
        for changed in ((0, pi, p), (q, pi, max(1, p - 1)), (q, max(1, pi - 1), p)):
            if changed != genes[j]:
                yield nodes, _normalised((*genes[:j], changed, *genes[j + 1 :]))


def _shrink(
    candidate: tuple[int, tuple[Gene, ...]],
    holds: Callable[[tuple[int, tuple[Gene, ...]]], bool],
) -> tuple[int, tuple[Gene, ...]]:
    """Greedy: take the first smaller ``(size, sum of numbers)`` that holds."""

    def key(c: tuple[int, tuple[Gene, ...]]) -> tuple[int, int]:
        return sum(size_of(*c)), sum(sum(g) for g in c[1])

    changed = True
    while changed:
        changed = False
        for option in _smaller(*candidate):
            if key(option) < key(candidate) and holds(option):
                candidate, changed = option, True
                break
    return candidate


# --------------------------------------------------------------------------
# Scores and statistics


def pbt_scores(sizes: dict[tuple[str, str], int]) -> dict[str, float]:
    """Rassmann's pbt score per scheduler: mean losing size / mean winning size.

    ``sizes[(R, C)]`` is the size of the smallest instance where ``R``
    beats ``C``; pairs without a witness are absent (the thesis averages
    non-null cells only). Row ``R`` lists the wins of ``R``, column ``C``
    the losses of ``C``.
    """
    scores = {}
    for sched in SCHEDULERS:
        wins = [v for (r, _), v in sizes.items() if r == sched.label]
        losses = [v for (_, c), v in sizes.items() if c == sched.label]
        if wins and losses:
            scores[sched.label] = (sum(losses) / len(losses)) / (sum(wins) / len(wins))
        else:
            scores[sched.label] = math.nan
    return scores


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's ``r`` of the average ranks.

    ``rho = cov(rank x, rank y) / (sd(rank x) sd(rank y))``, ties getting
    the average rank (C. Spearman, "The proof and measurement of
    association between two things", Am. J. Psychol. 15, 1904).
    """
    import pandas as pd

    ranks = pd.DataFrame({"x": list(x), "y": list(y)}).rank(method="average")
    return float(np.corrcoef(ranks["x"], ranks["y"])[0, 1])


def trapezoid(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Area under the piecewise-linear curve (trapezoid rule), as the
    thesis's ``Analysis.integral``: ``sum (x_{i+1} - x_i) (y_i + y_{i+1}) / 2``."""
    return float(
        sum(
            (b - a) * (u + v) / 2
            for a, b, u, v in zip(xs, xs[1:], ys, ys[1:], strict=False)
        )
    )
