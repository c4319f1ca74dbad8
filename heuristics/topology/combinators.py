"""Rassmann's scheduler combinators: base orders, Fit, Backfill, Optimistic.

H. Rassmann, *Simulation von Online Scheduling-Algorithmen für parallele
Systeme*, bachelor thesis, TU Dortmund, 2020 (seed notes, Part A), after
O. Arndt, B. Freisleben, T. Kielmann, F. Thilo, "A comparative study of
on-line scheduling algorithms for networks of workstations", *Cluster
Computing* 3 (2000) 95-112 (AFKT00). A *selection function* maps the waiting
queue ``Q`` (and the machine's state) to at most one job; the simulator
(:mod:`optsched.heuristics.topology.simulator`) starts it and calls again at the
same instant until none is named.

Base orders (§A2.1; ``p_hat / pi`` is compared exactly, never in floats)
-----------------------------------------------------------------------
``fifo``    ``argmin (q_j, id_j)``
``spt``     ``argmin (p_hat_j / pi_j, id_j)``, ``p_hat_j`` the estimated
            work at speed 1 (:func:`base_ranks`: ``estimate / size`` on
            speeds, the estimate itself on identical processors)
``lpt``     ``argmax (p_hat_j / pi_j, id_j)``: ties go to the *higher* id
            (the thesis's ``max(key=(p/pi, id))``)
``fid``     ``argmin id_j``
``random``  ``argmin (u_j, id_j)`` with ``u_j`` one uniform draw per job in
            submit order from ``random.Random(seed)``: a fixed random
            priority, so the order is a total order as §A1.3 requires and
            the first choice among any set is uniform (the thesis notes
            Random equals lowest-id with random ids).

Combinators (§A2.2; ``F`` = "fits now", ``est`` and the shadow time
``t*`` as in :mod:`~optsched.heuristics.topology.simulator`)
-------------------------------------------------------------------
``blocking:f=F``
    ``h = f(Q)``; start ``h`` iff it fits, else nothing starts (AFKT00's
    blocking semantics).
``fit:f=F``
    ``f({j in Q : j fits})``; ``fit:f=fifo`` is FirstFit.
``fit2:f=F,g=G``
    ``h = f(Q)``; ``h`` if it fits, else ``g({j in Q : j fits})``.
``afkt-backfill:f=F,g=G``
    ``h = f(Q)``; ``h`` if it fits; else ``g({j in Q : j fits and est(j)
    <= t* - now})``: AFKT00's time-only rule, a candidate must end (by its
    unrounded estimate) by the head's shadow time; no spare-processor rule.
``optimistic:f=F,g=G``
    As ``afkt-backfill``, and also the candidates with ``pi_j <= extra``,
    ``extra`` = processors free at ``t*`` beyond the head's: EASY's rule
    (Lifka 1995; "aggressive" in Feitelson and Weil 1998).
    ``optimistic:f=fifo`` is EASY.

``g`` defaults to ``f``. The shadow time comes from Rassmann's loop over
the running jobs by estimated end (:meth:`NodeSimulator.shadow`; an
estimated end in the past counts as now, as in the flat engine's EASY).

Topology-aware generalisation (Wang, seed notes B5; ours)
---------------------------------------------------------
On SMP nodes with a span limit "fits" is the span rule on per-node free
counts (:meth:`optsched.nodes.Nodes.fits`): a job of ``n`` fits iff its
``tight + ceil(n/P)`` fullest nodes hold ``n`` free CPUs. The head's shadow
time is the first estimated end at which the head fits *by that rule* on
the per-node counts then, and the extra rule becomes: a candidate may start
if ``est(j) <= gap`` or the head still fits at ``t*`` after the candidate's
would-be processors are removed from the per-node counts at ``t*``. On a
machine seen as one group (flat, speeds, or no span limit) this is exactly
``pi_j <= extra``. A candidate admitted either way never moves ``t*``
later: the counts only grow with time, fits is monotone in them, and the
counts at ``t*`` still let the head fit.

Spec names
----------
``blocking``, ``fit``, ``fit2``, ``afkt-backfill``, ``optimistic``, with
``f=`` and ``g=`` (``fifo``, ``spt``, ``lpt``, ``fid``, ``random``),
``placement=auto|fastest|lowest|smp`` and ``seed=N`` (random orders; 0 by
default). The canonical spec omits ``g`` when it equals ``f`` and the
placement when it is ``auto``. The thesis's names are aliases
(:data:`ALIASES`): ``fifo-fit`` is ``fit:f=fifo``, ``lpt-back`` is
``afkt-backfill:f=lpt``, ``lpt-fifo-optim`` is ``optimistic:f=lpt,g=fifo``.
Rassmann's blocking FIFO is ``blocking:f=fifo``; the names ``fifo``,
``easy``, ``firstfit``, ... stay the flat engine's.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from optsched.heuristics.engine.standalone import Standalone
from optsched.heuristics.spec import Family, SpecParts, integer, optional, split_spec
from optsched.heuristics.topology.simulator import PLACEMENTS, NodeSimulator
from optsched.instance import Instance, Job
from optsched.schedule import Schedule

BASE_ORDERS: tuple[str, ...] = ("fifo", "spt", "lpt", "fid", "random")
"""Rassmann's base orders (§A2.1)."""

KINDS: tuple[str, ...] = ("blocking", "fit", "fit2", "afkt-backfill", "optimistic")
"""The combinator names (§A2.2)."""

_TWO = ("fit2", "afkt-backfill", "optimistic")  # the kinds with a g
_ONE_KEYS = ("f", "placement", "seed")  # the keys of the kinds without

ALIASES: dict[str, tuple[str, str, str]] = {
    "fifo-fit": ("fit", "fifo", "fifo"),
    "spt-fit": ("fit", "spt", "spt"),
    "lpt-fit": ("fit", "lpt", "lpt"),
    "fifo-back": ("afkt-backfill", "fifo", "fifo"),
    "spt-back": ("afkt-backfill", "spt", "spt"),
    "lpt-back": ("afkt-backfill", "lpt", "lpt"),
    "fifo-optim": ("optimistic", "fifo", "fifo"),
    "spt-optim": ("optimistic", "spt", "spt"),
    "lpt-optim": ("optimistic", "lpt", "lpt"),
    "lpt-fifo-optim": ("optimistic", "lpt", "fifo"),
    "lpt-back-fifo": ("afkt-backfill", "lpt", "fifo"),
}
"""The thesis's scheduler names: ``(kind, f, g)``."""

COMBINATOR_NAMES: tuple[str, ...] = (*KINDS, *ALIASES)
"""Every policy name of this module (canonical kinds, then aliases)."""


@dataclass(frozen=True)
class CombinatorSpec:
    """A parsed combinator: kind, base orders, placement, seed."""

    kind: str
    f: str
    g: str
    placement: str = "auto"
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"unknown combinator {self.kind!r}; valid: {', '.join(KINDS)}"
            )
        for order in (self.f, self.g):
            if order not in BASE_ORDERS:
                raise ValueError(
                    f"unknown base order {order!r}; valid: {', '.join(BASE_ORDERS)}"
                )
        if self.kind not in _TWO and self.g != self.f:
            raise ValueError(f"{self.kind} takes one base order (f), not g")
        if self.placement not in PLACEMENTS:
            raise ValueError(
                f"unknown placement {self.placement!r}; valid: {', '.join(PLACEMENTS)}"
            )
        if self.seed is not None and "random" not in (self.f, self.g):
            raise ValueError("seed applies only to the random order")

    @property
    def canonical(self) -> str:
        """``kind:f=F[,g=G][,placement=P][,seed=N]`` (defaults left out)."""
        params = [f"f={self.f}"]
        if self.g != self.f:
            params.append(f"g={self.g}")
        if self.placement != "auto":
            params.append(f"placement={self.placement}")
        if self.seed is not None:
            params.append(f"seed={self.seed}")
        return f"{self.kind}:{','.join(params)}"


def parse_combinator(text: str | SpecParts) -> CombinatorSpec:
    """The combinator a spec (or its tokens,
    :func:`~optsched.heuristics.spec.split_spec`) names: a kind or an
    alias, with parameters.

    Raises
    ------
    ValueError
        One line naming the problem and the valid choices.
    """
    parts = split_spec(text)
    name = parts.name
    if name not in COMBINATOR_NAMES:
        raise ValueError(
            f"unknown combinator {name!r}; valid: {', '.join(COMBINATOR_NAMES)}"
        )
    if name in ALIASES:
        parts.check(("placement", "seed"))
    else:
        parts.check(("f", "g", "placement", "seed") if name in _TWO else _ONE_KEYS)
    # Every value is a name or a number: read in lower case.
    params = {key: value.lower() for key, value in parts.options().items()}
    if name in ALIASES:
        kind, f, g = ALIASES[name]
    elif "f" in params:
        kind, f = name, params["f"]
        g = params.get("g", f)
    else:
        valid = ", ".join(BASE_ORDERS)
        raise parts.error(f"{name} needs f=ORDER, one of {valid}")
    try:
        seed = optional(params, "seed", integer)
        return CombinatorSpec(kind, f, g, params.get("placement", "auto"), seed)
    except ValueError as error:
        raise parts.error(str(error)) from None


def base_ranks(
    order: str, jobs: Sequence[Job], seed: int = 0, *, work: bool = True
) -> list[int]:
    """Rank of every job (indexed like ``jobs``, which are sorted by
    ``(release, id)``) in a base order: 0 is chosen first.

    ``spt`` and ``lpt`` compare the estimated work per processor at speed 1,
    Rassmann's ``p_hat / pi``, as exact fractions, so ties are ties and
    fall to the id (the lower for ``spt``, the higher for ``lpt``). With
    ``work`` (a machine with speeds, where a rigid job's estimate is its
    work) that is ``estimate / size`` (a moldable job's estimate, on
    speed-1 processors, is already per processor); without (identical
    processors, where the estimate is already a run time, the work being
    ``estimate * size``) it is the estimate itself, the flat engine's
    ``spt`` key.
    """
    n = len(jobs)
    keys: list[Any]
    if order == "fifo":
        keys = [(job.release, job.id) for job in jobs]
    elif order == "fid":
        keys = [job.id for job in jobs]
    elif order in ("spt", "lpt"):
        sign = 1 if order == "spt" else -1
        keys = [
            (
                # A moldable job's estimate is a run time on speed-1
                # processors already (optsched.topology.machines.mode_work).
                sign
                * Fraction(job.requested, job.size if work and not job.modes else 1),
                sign * job.id,
            )
            for job in jobs
        ]
    elif order == "random":
        rng = random.Random(seed)
        keys = [(rng.random(), job.id) for job in jobs]
    else:
        raise ValueError(
            f"unknown base order {order!r}; valid: {', '.join(BASE_ORDERS)}"
        )
    ranks = [0] * n
    for rank, i in enumerate(sorted(range(n), key=keys.__getitem__)):
        ranks[i] = rank
    return ranks


Select = Callable[[NodeSimulator], "int | None"]


def selection(spec: CombinatorSpec) -> Select:
    """The selection function of a combinator (§A2.2), on a simulator that
    has the orders ``spec.f`` and ``spec.g`` registered by name."""
    f, g = spec.f, spec.g
    if spec.kind == "blocking":

        def blocking(sim: NodeSimulator) -> int | None:
            h = sim.head(f)
            return h if h is not None and sim.fits(h) else None

        return blocking
    if spec.kind == "fit":

        def fit(sim: NodeSimulator) -> int | None:
            return sim.first_fitting(f)

        return fit
    if spec.kind == "fit2":

        def fit2(sim: NodeSimulator) -> int | None:
            h = sim.head(f)
            if h is None or sim.fits(h):
                return h
            return sim.first_fitting(g)

        return fit2
    optimistic = spec.kind == "optimistic"

    def backfill(sim: NodeSimulator) -> int | None:
        h = sim.head(f)
        if h is None or sim.fits(h):
            return h
        return sim.first_backfill(g, sim.shadow(h), optimistic)

    return backfill


def run_combinator(instance: Instance, spec: CombinatorSpec | str) -> Schedule:
    """The schedule of ``instance`` under a combinator (producer: its
    canonical spec)."""
    if isinstance(spec, str):
        spec = parse_combinator(spec)
    sim = NodeSimulator(instance, spec.placement)
    seed = spec.seed or 0
    for order in {spec.f, spec.g}:
        work = instance.machine.speeds is not None
        sim.add_order(order, base_ranks(order, sim.jobs, seed, work=work))
    sim.run(selection(spec))
    return sim.schedule(spec.canonical)


@dataclass(frozen=True)
class Combinator(Standalone):
    """A Rassmann combinator run as a policy (on any machine without busy
    blocks: flat, speeds, SMP nodes).

    Parameters
    ----------
    algorithm
        Its canonical spec, e.g. ``"optimistic:f=lpt,g=fifo"``
        (:func:`parse_combinator`; :func:`optsched.heuristics.parse_policy`
        accepts the aliases too and makes the spec canonical).
    """

    algorithm: str = "optimistic:f=fifo"

    rule: ClassVar[str] = "combinator"

    def __post_init__(self) -> None:
        # An alias or a spelling with defaults becomes the canonical spec.
        canonical = parse_combinator(self.algorithm).canonical
        object.__setattr__(self, "algorithm", canonical)
        super().__post_init__()

    def _options(self) -> dict[str, Any]:
        return {"spec": parse_combinator(self.algorithm)}

    def _schedule(self, instance: Instance) -> Schedule:
        return run_combinator(instance, self._options()["spec"])


def parse_combinator_policy(parts: SpecParts) -> Combinator:
    """The :class:`Combinator` named by a spec's tokens, with its canonical
    spec (an alias becomes the kind with its orders)."""
    return Combinator(algorithm=parse_combinator(parts).canonical)


FAMILY = Family(parse_combinator_policy, names=COMBINATOR_NAMES)
"""Rassmann's combinators in the spec parser's table
(:data:`optsched.heuristics.spec.FAMILIES`)."""
