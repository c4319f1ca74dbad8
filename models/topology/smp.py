r"""CP-SAT optimum on an SMP cluster with a span limit (Wang, seed 004).

Machine: ``Q`` nodes of ``P`` processors (:class:`~optsched.nodes.Nodes`).
A job of ``n`` processors touching ``k`` nodes (its span) needs ``k`` in
``[ceil(n / P), K_n]`` with ``K_n = min(Q, n, tight + ceil(n / P))`` (no
``tight``: ``min(Q, n)``), and runs ``d_j(k) = ceil(p_j * f(n, k))``
seconds, ``f`` the communication inflation
(:meth:`~optsched.nodes.Nodes.inflation`, exact fractions; 1 at level 0).
``f`` grows with ``k``, so spans of equal run time form runs
``[k_lo, k_hi]``, the job's *options* ``o`` (one at level 0). Model, with
``c_{jq}`` the job's processors on node ``q`` and ``b_{jq} = [c_{jq} >=
1]``:

.. math::

    \textstyle\sum_q c_{jq} = n_j,\quad b_{jq} \le c_{jq} \le
    \min(P, n_j)\, b_{jq},\quad K_j = \sum_q b_{jq}

    \textstyle\sum_o x_{jo} = 1,\quad x_{jo} \Rightarrow k_{lo} \le K_j \le
    k_{hi},\quad D_j = \sum_o d_{jo} x_{jo},\quad C_j = S_j + D_j \le \bar D_j

    \forall q:\ \mathrm{Cumulative}(\{([S_j, C_j), c_{jq})\},\ P)
    \qquad \mathrm{Cumulative}(\{(I_{jo}, n_j)\},\ QP)\ \text{(redundant)}

with ``I_{jo} = [S_j, S_j + d_{jo})`` present iff ``x_{jo}``, objectives
and horizons as in :mod:`optsched.models.topology.speeds`
(:class:`~optsched.models.topology.speeds.OptionModel`). Cumulative with variable
demands: CP-SAT accepts affine demand expressions (Baptiste, Le Pape,
Nuijten, *Constraint-Based Scheduling*, 2001, for the cumulative; Laborie
and Rogerie 2008 for the optional intervals). With ``cliques`` (the
default), jobs whose sizes sum to more than ``QP`` get redundant
no-overlaps: on the KTH 20-job window on 10x10 nodes (tight 0, level 2,
one worker) they prove ``cmax`` in 16 to 27 s (unproven in 90 s without)
and ``wct`` in 5 s (34 s without).

Decoding: on each node the processors are identical, so counts ``c_{jq}``
that respect the node's cumulative admit a non-migrating assignment by
greedy interval colouring in start order
(:func:`optsched.models.topology.speeds.colour`; Hajnal and Surányi 1958); a job
then touches exactly the ``K_j`` nodes with ``c_{jq} >= 1``, within its
option's span range, so it runs ``d_{jo}``. Node ``q``'s processors are
``qP .. qP + P - 1``.

Symmetry: identical jobs have ordered starts (``symmetry``, as in
:mod:`optsched.models.rigid.cpsat`). The nodes are identical too, so permuting
them (and every job's counts with them) keeps a schedule feasible and its
objective: every schedule can be relabelled so that the nodes' count
columns ``(c_{jq})_j`` (jobs in a fixed order) are lexicographically
non-increasing in ``q``, which ``node_symmetry`` asks
(:meth:`_SmpModel._order_nodes`). Both combine: relabel the jobs first
(starts only), then sort the nodes (counts only, starts kept); the hint is
relabelled the same way. ``node_symmetry`` is off by default: on the KTH
20-job window on 10x10 nodes (tight 0, level 2, ``wct``, one worker) the
proof took 55 s with it and 34 s without.

:func:`span_limit_cost` solves an instance with and without its span limit
(same level): the price of the limit against the best placement.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from optsched.instance import Instance, Job
from optsched.models.common.settings import DEFAULTS, SolverSettings
from optsched.models.rigid.cpsat import BACKEND, _relabel
from optsched.models.topology.speeds import (
    OptionModel,
    OptionProblem,
    colour,
    solve_options,
)
from optsched.nodes import Nodes, ceiling
from optsched.objective import Objective
from optsched.packing import Profile
from optsched.result import Bound, Incumbent, Result
from optsched.schedule import Placement, Schedule

MAX_VARIABLES = 200_000
"""Most count variables (jobs times nodes) a model may hold; beyond, the
search is skipped and the result rests on the greedy schedules and bounds."""


@dataclass(frozen=True, slots=True)
class SpanOption:
    """Spans ``low..high`` of one job, all running ``duration`` seconds."""

    duration: int
    low: int
    high: int


def span_options(job: Job, nodes: Nodes) -> list[SpanOption]:
    """The job's allowed spans grouped by run time, shortest first."""
    n = job.size
    widest = min(nodes.span_limit(n), n, nodes.count)
    out: list[SpanOption] = []
    for k in range(nodes.min_span(n), widest + 1):
        d = ceiling(job.runtime * nodes.inflation(n, k))
        if out and out[-1].duration == d:
            out[-1] = dataclasses.replace(out[-1], high=k)
        else:
            out.append(SpanOption(d, k, k))
    return out


Found = dict[int, tuple[int, int, tuple[int, ...]]]
"""``{job: (start, option index, counts per node)}``."""


def smp_schedule(
    instance: Instance,
    options: Mapping[int, Sequence[SpanOption]],
    found: Found,
    producer: str,
) -> Schedule:
    """Placements of starts, options and per-node counts: each node's
    processors by :func:`~optsched.models.topology.speeds.colour` (``ValueError`` if
    some node is overloaded)."""
    nodes = instance.machine.nodes
    assert nodes is not None
    taken: dict[int, list[int]] = defaultdict(list)
    for q in range(nodes.count):
        items = [
            (start, start + options[jid][k].duration, counts[q], jid)
            for jid, (start, k, counts) in found.items()
            if counts[q]
        ]
        pool = range(q * nodes.cpus, (q + 1) * nodes.cpus)
        for jid, procs in colour(pool, items).items():
            taken[jid].extend(procs)
    return Schedule(
        {
            jid: Placement(
                start, start + options[jid][k].duration, tuple(sorted(taken[jid]))
            )
            for jid, (start, k, _) in found.items()
        },
        producer,
    )


def _spread(size: int, span: int, free: Sequence[tuple[int, int]]) -> list[int]:
    """Counts per node for ``size`` processors on ``span`` nodes: the
    ``span`` nodes with the most free processors (``free`` sorted that way,
    as ``(free, node)``), one each, the rest filled most-free first."""
    counts = [0] * (max(q for _, q in free) + 1)
    chosen = free[:span]
    for _, q in chosen:
        counts[q] = 1
    left = size - span
    for room, q in chosen:
        extra = min(room - 1, left)
        counts[q] += extra
        left -= extra
    assert left == 0
    return counts


def _fit(
    profiles: Sequence[Profile], option: SpanOption, size: int, start: int
) -> list[int] | None:
    """Counts per node for a start at ``start`` in ``option``, or ``None``.

    With each node's least free count ``f_q`` over ``[start, start + d)``
    sorted down, the fewest nodes that hold ``size`` is the least ``s*``
    with ``f_1 + .. + f_{s*} >= size``; every span from ``s*`` up to the
    number of nodes with a free processor (and ``size``) is reachable (one
    processor on each, the rest on the fullest). The smallest span of the
    option's range that is reachable is used.
    """
    end = start + option.duration
    free = sorted(
        ((p.min_free(start, end), q) for q, p in enumerate(profiles)),
        key=lambda fq: (-fq[0], fq[1]),
    )
    total, fewest = 0, None
    for k, (f, _) in enumerate(free, 1):
        total += f
        if total >= size:
            fewest = k
            break
    if fewest is None:
        return None
    usable = sum(1 for f, _ in free if f >= 1)
    span = max(fewest, option.low)
    if span > min(option.high, usable, size):
        return None
    return _spread(size, span, free)


def greedy_smp_schedule(
    instance: Instance,
    options: Mapping[int, Sequence[SpanOption]],
    order: Sequence[int],
    producer: str = "list:smp",
) -> Schedule:
    """Serial list schedule: each job in ``order`` at the start and span
    that complete it first (ties: the shorter option), on the fullest free
    nodes (:func:`_fit`).

    The candidate starts are the release and the later ends of placed jobs
    (free counts only rise there), scanned up while they can still beat the
    best completion found.
    """
    nodes = instance.machine.nodes
    assert nodes is not None
    jobs = instance.jobs_by_id()
    profiles = [Profile(0, nodes.cpus) for _ in range(nodes.count)]
    ends: list[int] = [0]
    found: Found = {}
    for jid in order:
        job = jobs[jid]
        times = sorted({job.release, *(e for e in ends if e > job.release)})
        shortest = options[jid][0].duration
        best: tuple[int, int, int, list[int]] | None = None
        for t in times:
            if best is not None and t + shortest >= best[0]:
                break
            for k, option in enumerate(options[jid]):
                if best is not None and t + option.duration >= best[0]:
                    break
                counts = _fit(profiles, option, job.size, t)
                if counts is not None:
                    best = (t + option.duration, t, k, counts)
                    break
        assert best is not None, "the last start leaves the whole machine free"
        end, start, k, counts = best
        if end > start:
            for q, c in enumerate(counts):
                if c:
                    profiles[q].add(start, end, -c)
        ends.append(end)
        found[jid] = (start, k, tuple(counts))
    return smp_schedule(instance, options, found, producer)


class _SmpModel(OptionModel):
    """:class:`~optsched.models.topology.speeds.OptionModel` with per-node counts,
    span literals and per-node cumulatives (module notes)."""

    def __init__(
        self,
        instance: Instance,
        objective: Objective,
        options: Mapping[int, Sequence[SpanOption]],
        deadlines: Mapping[int, int],
        bounds: Sequence[Bound],
        *,
        symmetry: bool,
        node_symmetry: bool,
        cliques: bool,
    ) -> None:
        super().__init__(
            instance, objective, options, deadlines, bounds, symmetry=symmetry,
            cliques=cliques,
        )  # fmt: skip
        nodes = instance.machine.nodes
        assert nodes is not None
        self.nodes, self.options = nodes, options
        self.counts: dict[int, list[cp_model.IntVar]] = {}
        self.used: dict[int, list[cp_model.IntVar]] = {}
        for job in instance.jobs:
            self._add_counts(job)
        for q in range(nodes.count):
            self.model.add_cumulative(
                [self.intervals[j.id] for j in instance.jobs],
                [self.counts[j.id][q] for j in instance.jobs],
                nodes.cpus,
            )
        boxes, demands = [], []
        for job in instance.jobs:
            for box in self.option_intervals[job.id]:
                if box is not None:
                    boxes.append(box)
                    demands.append(job.size)
        self.model.add_cumulative(boxes, demands, instance.processors)
        self.order = sorted(instance.jobs, key=lambda j: (-j.size, j.id))
        self.node_symmetry = node_symmetry and nodes.count > 1
        if self.node_symmetry:
            self._order_nodes()

    def _add_counts(self, job: Job) -> None:
        most = min(self.nodes.cpus, job.size)
        counts, used = [], []
        for q in range(self.nodes.count):
            c = self.model.new_int_var(0, most, f"c{job.id}_{q}")
            b = self.model.new_bool_var(f"b{job.id}_{q}")
            self.model.add(c >= b)
            self.model.add(c <= most * b)
            counts.append(c)
            used.append(b)
        self.model.add(sum(counts) == job.size)
        span = sum(used)
        for option, x in zip(self.options[job.id], self.chosen[job.id], strict=True):
            if x is not None:
                self.model.add(span >= option.low).only_enforce_if(x)
                self.model.add(span <= option.high).only_enforce_if(x)
        self.counts[job.id], self.used[job.id] = counts, used

    def _order_nodes(self) -> None:
        """Columns ``(c_{jq})_j`` lexicographically non-increasing in ``q``.

        ``e_{i,q}``: the first ``i`` jobs have equal counts on ``q`` and
        ``q + 1``; then job ``i``'s count on ``q`` is at least its count on
        ``q + 1``. ``e_{i+1,q} <=> e_{i,q} and c_{iq} = c_{i,q+1}``, both
        directions (a one-way implication could cut every optimum).
        """
        model = self.model
        for q in range(self.nodes.count - 1):
            prefix: cp_model.IntVar | None = None  # None: true
            for job in self.order:
                upper, lower = self.counts[job.id][q], self.counts[job.id][q + 1]
                if prefix is None:
                    model.add(upper >= lower)
                else:
                    model.add(upper >= lower).only_enforce_if(prefix)
                equal = model.new_bool_var("")
                model.add(upper == lower).only_enforce_if(equal)
                model.add(upper != lower).only_enforce_if(~equal)
                both = model.new_bool_var("")
                parts = [equal] if prefix is None else [prefix, equal]
                model.add_bool_and(parts).only_enforce_if(both)
                model.add_bool_or([~p for p in parts] + [both])
                prefix = both

    def hint(self, schedule: Schedule) -> None:
        """Hint a checked schedule (jobs relabelled, then nodes sorted)."""
        schedule = _relabel(schedule, self.groups)
        counts = {
            j.id: self._counts_of(schedule[j.id].processors) for j in self.instance.jobs
        }
        if self.node_symmetry:
            column = {
                q: tuple(counts[j.id][q] for j in self.order)
                for q in range(self.nodes.count)
            }
            perm = sorted(
                range(self.nodes.count), key=lambda q: column[q], reverse=True
            )
            counts = {jid: [c[q] for q in perm] for jid, c in counts.items()}
        for job in self.instance.jobs:
            placement = schedule[job.id]
            span = sum(1 for c in counts[job.id] if c)
            option = next(
                k for k, o in enumerate(self.options[job.id]) if o.low <= span <= o.high
            )
            self.hint_job(job.id, placement.start, option)
            for q, c in enumerate(counts[job.id]):
                self.model.add_hint(self.counts[job.id][q], c)
                self.model.add_hint(self.used[job.id][q], c > 0)
        self.hint_makespan(schedule)
        # The lexicographic helpers are left to CP-SAT's hint completion.

    def _counts_of(self, processors: Sequence[int] | None) -> list[int]:
        assert processors is not None
        counts = [0] * self.nodes.count
        for p in processors:
            counts[p // self.nodes.cpus] += 1
        return counts

    def read(self, value: Callable[[Any], int]) -> Found:
        """``{job: (start, option, counts)}`` of a solution."""
        return {
            jid: (
                int(value(self.starts[jid])),
                self.picked(jid, value),
                tuple(int(value(c)) for c in self.counts[jid]),
            )
            for jid in self.starts
        }


def solve(
    instance: Instance,
    objective: Objective | str,
    *,
    settings: SolverSettings = DEFAULTS,
    incumbents: Sequence[Incumbent] = (),
    cliques: bool = True,
    node_symmetry: bool = False,
) -> Result:
    """The optimum on SMP nodes with a span limit, with CP-SAT (module notes).

    ``settings`` as for :func:`optsched.models.rigid.cpsat.solve`, except
    that ``settings.cliques`` is not read: ``cliques`` is this model's own
    keyword, on by default (module notes); ``node_symmetry`` orders
    the nodes' count columns (module notes). Always returns a
    checked schedule; ``lower_bound`` is the best of CP-SAT's bound and
    :func:`optsched.models.topology.bounds.topology_lower_bounds` (the flat
    relaxation's bounds and the squashed bound for ``wct``).

    Raises
    ------
    ValueError
        The machine has no SMP nodes, or has speeds as well.
    """
    objective = Objective.parse(objective)
    nodes = instance.machine.nodes
    if nodes is None or instance.machine.speeds is not None:
        raise ValueError("SMP model: needs a machine with SMP nodes and without speeds")
    options = {j.id: span_options(j, nodes) for j in instance.jobs}

    def refusal(deadlines: dict[int, int]) -> str | None:
        if len(instance.jobs) * nodes.count > MAX_VARIABLES:
            return (
                f"{len(instance.jobs)} jobs x {nodes.count} nodes, more than "
                f"{MAX_VARIABLES} counts"
            )
        return None

    problem = OptionProblem(
        name="smp",
        options=options,
        greedy=lambda order, producer: greedy_smp_schedule(
            instance, options, order, producer
        ),
        build=lambda deadlines, domain: _SmpModel(
            instance,
            objective,
            options,
            deadlines,
            domain,
            symmetry=settings.symmetry,
            node_symmetry=node_symmetry,
            cliques=cliques,
        ),
        decode=lambda found: smp_schedule(instance, options, found, BACKEND),
        params={
            "nodes": nodes.describe(),
            "options": sum(len(o) for o in options.values()),
            "node_symmetry": node_symmetry and nodes.count > 1,
        },
        refusal=refusal,
    )
    return solve_options(instance, objective, problem, settings, incumbents)


@dataclass(frozen=True, slots=True)
class SpanLimitCost:
    """An instance solved with its span limit and without it (same level)."""

    limited: Result
    unlimited: Result

    @property
    def ratio(self) -> float | None:
        """Limited optimum over unlimited optimum, when both are proven
        (``None`` otherwise, or when the unlimited one is 0)."""
        if not (self.limited.status == self.unlimited.status == "OPTIMAL"):
            return None
        if not self.unlimited.objective:
            return None
        assert self.limited.objective is not None
        return self.limited.objective / self.unlimited.objective


def span_limit_cost(
    instance: Instance, objective: Objective | str, **options: Any
) -> SpanLimitCost:
    """What the span limit ``tight`` costs against the best placement.

    Solves ``instance`` (:func:`solve`, ``options`` passed on: settings
    as ``settings=`` or one by one, :func:`_solve_keywords`) and the same
    instance with ``tight=None`` (no limit, same level and cost). A schedule
    within the limit is feasible without it, so the limited schedule is the
    unlimited model's first incumbent and the unlimited optimum is at most
    the limited one: offline, a limit never helps (the optimum already
    picks narrow spans where communication costs), and the ratio
    (:attr:`SpanLimitCost.ratio`, at least 1) is what it costs. Online
    policies are another matter (Wang's Table 3): they take the first
    placement that fits, which a limit keeps compact.
    """
    nodes = instance.machine.nodes
    if nodes is None:
        raise ValueError("span_limit_cost: the machine has no SMP nodes")
    options = _solve_keywords(options)
    limited = solve(instance, objective, **options)
    free = instance.replace(
        machine=instance.machine.replace(nodes=dataclasses.replace(nodes, tight=None))
    )
    given = list(options.pop("incumbents", ()))
    if limited.schedule is not None:
        given.insert(0, Incumbent("span-limited", limited.schedule))
    unlimited = solve(free, objective, incumbents=given, **options)
    return SpanLimitCost(limited, unlimited)


def tight_sweep(
    instance: Instance,
    objective: Objective | str,
    tights: Sequence[int | None],
    **options: Any,
) -> dict[int | None, Result]:
    """Solve ``instance`` for each span slack of ``tights`` (same level).

    The slacks are solved in increasing order (``None``, no limit, last);
    each one's best schedule is an incumbent of the next, which it respects
    (a larger slack only admits more placements), so the optima found never
    rise along the sweep. ``options`` as for :func:`span_limit_cost`.
    """
    nodes = instance.machine.nodes
    if nodes is None:
        raise ValueError("tight_sweep: the machine has no SMP nodes")
    options = _solve_keywords(options)
    given = list(options.pop("incumbents", ()))
    ordered = sorted(set(tights), key=lambda t: (t is None, t or 0))
    results: dict[int | None, Result] = {}
    for tight in ordered:
        machine = instance.machine.replace(
            nodes=dataclasses.replace(nodes, tight=tight)
        )
        result = solve(
            instance.replace(machine=machine), objective, incumbents=given, **options
        )
        results[tight] = result
        if result.schedule is not None:
            given = [Incumbent(f"tight-{tight}", result.schedule), *given]
    return results


def _solve_keywords(options: dict[str, Any]) -> dict[str, Any]:
    """The keywords of :func:`solve` from a helper's ``options``: settings
    given one by one (``time_limit=..., workers=...``) gathered into
    ``settings``; ``options`` as they are when they name ``settings``."""
    if "settings" in options:
        return options
    settings, rest = SolverSettings.split(options)
    return {"settings": settings, **rest}


__all__ = [
    "SpanLimitCost",
    "SpanOption",
    "greedy_smp_schedule",
    "smp_schedule",
    "solve",
    "span_limit_cost",
    "span_options",
    "tight_sweep",
]
