"""Theoretical worst-case ratios from the literature, with their exact settings.

A bound is quoted only for the setting it was proved in: objective, release
dates (all at 0 or over time), job kind (sequential = one processor each, or
rigid parallel), allocation (any processors, or contiguous as in strip
packing), and whether the algorithm is offline (may sort all jobs) or online.
Where we know of no bound for a policy and setting, :func:`bound_for`
returns ``None`` and tables print "none known" — never a guess.

``m`` is the number of processors. Ratios are ``algorithm / optimum``.

Entries
-------
Graham (1966)
    List scheduling (any list order, a job starts as soon as a machine is
    free) of sequential jobs released at 0 on ``m`` identical machines
    (``P || C_max``): ``C_max <= (2 - 1/m) OPT``, tight.
    R. L. Graham, "Bounds for certain multiprocessing anomalies", Bell System
    Technical Journal 45(9):1563-1581, 1966.
Graham (1969)
    LPT list scheduling for ``P || C_max`` (sequential jobs, released at 0):
    ``C_max <= (4/3 - 1/(3m)) OPT``, tight.
    R. L. Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl.
    Math. 17(2):416-429, 1969.
Garey and Graham (1975)
    Greedy list scheduling of rigid parallel jobs (a job needs ``q_j``
    processors at once, any ones: no contiguity), all released at 0:
    ``C_max <= (2 - 1/m) OPT``, whatever the list order.
    M. R. Garey, R. L. Graham, "Bounds for multiprocessor scheduling with
    resource constraints", SIAM J. Comput. 4(2):187-200, 1975.
Naroska and Schwiegelshohn (2002)
    The same greedy list scheduling of rigid parallel jobs when jobs arrive
    over time (release dates, online): competitive factor ``2 - 1/m`` for
    the makespan.
    E. Naroska, U. Schwiegelshohn, "On an on-line scheduling problem for
    parallel jobs", Information Processing Letters 81(6):297-304, 2002.
Schwiegelshohn et al. (1998), SMART
    Offline shelf-based SMART schedules of rigid parallel jobs released at 0,
    total weighted completion time: factor 8.53 (8 with unit weights).
    Not one of the simulator's policies; listed for comparison.
    U. Schwiegelshohn, W. Ludwig, J. L. Wolf, J. Turek, P. S. Yu, "Smart
    SMART bounds for weighted response time scheduling", SIAM J. Comput.
    28(1):237-253, 1998.
Coffman, Garey, Johnson and Tarjan (1980), NFDH and FFDH
    Offline level (shelf) algorithms for strip packing (contiguous
    processors), rectangles sorted by decreasing height (runtime), all
    released at 0: ``NFDH <= 2 OPT + p_max`` and ``FFDH <= 1.7 OPT + p_max``
    (asymptotic factors 2 and 1.7; ``p_max`` the longest runtime). Not
    simulator policies; listed for comparison.
    E. G. Coffman Jr., M. R. Garey, D. S. Johnson, R. E. Tarjan, "Performance
    bounds for level-oriented two-dimensional packing algorithms", SIAM J.
    Comput. 9(4):808-826, 1980.
Kawaguchi and Kyan (1986)
    WSPT (largest ``w_j / p_j`` first) list scheduling of *sequential* jobs
    released at 0 (``P || sum w_j C_j``): factor ``(1 + sqrt 2) / 2``; with
    unit weights SPT is optimal for ``P || sum C_j`` (Conway, Maxwell and
    Miller 1967). Neither holds for rigid parallel jobs; listed so that the
    tables do not suggest otherwise.
    T. Kawaguchi, S. Kyan, "Worst case bound of an LRF schedule for the mean
    weighted flow-time problem", SIAM J. Comput. 15(4):1119-1129, 1986.

Strict FCFS (only the head of the queue may start) is *not* a list schedule:
a wide job at the head idles the machine. At release 0 its makespan ratio
is at least ``min(m, floor((n + 1) / 2))`` in the limit, by the
construction of :func:`fcfs_lower_bound_instance` (narrow long jobs
separated by full-width short ones; FCFS runs the narrow ones one phase
after another, the optimum runs them side by side). We cite no upper bound
for it, nor for EASY or conservative backfilling, Best Package, or
largest-size-first, in the settings searched here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from optsched.instance import Instance, Job, Machine


@dataclass(frozen=True, slots=True)
class LiteratureBound:
    """One proved worst-case ratio and the exact setting it holds in.

    Parameters
    ----------
    algorithm
        What the bound is about (``"greedy list scheduling"``, ``"SMART"``).
    objective
        ``"cmax"`` or ``"wct"``.
    releases
        ``"zero"`` (all jobs released at 0) or ``"online"`` (over time).
    jobs
        ``"sequential"`` or ``"rigid"``.
    allocation
        ``"any"`` or ``"contiguous"``.
    formula
        The ratio as text, in ``m``.
    ratio
        ``m -> ratio`` (multiplicative part only for additive bounds).
    citation
        Short citation ("Garey & Graham 1975").
    reference
        Full reference.
    note
        What else the reader must know (tightness, additive terms).
    """

    algorithm: str
    objective: str
    releases: str
    jobs: str
    allocation: str
    formula: str
    ratio: Callable[[int], float]
    citation: str
    reference: str
    note: str = ""

    def label(self, processors: int) -> str:
        """``"2 - 1/m = 1.6667 (Garey & Graham 1975)"`` for ``m = 3``."""
        return f"{self.formula} = {self.ratio(processors):.4f} ({self.citation})"


GRAHAM_1966 = LiteratureBound(
    "list scheduling",
    "cmax",
    "zero",
    "sequential",
    "any",
    "2 - 1/m",
    lambda m: 2 - 1 / m,
    "Graham 1966",
    "R. L. Graham, Bounds for certain multiprocessing anomalies, Bell System "
    "Technical Journal 45(9):1563-1581, 1966.",
    "tight",
)
GRAHAM_1969 = LiteratureBound(
    "LPT list scheduling",
    "cmax",
    "zero",
    "sequential",
    "any",
    "4/3 - 1/(3m)",
    lambda m: 4 / 3 - 1 / (3 * m),
    "Graham 1969",
    "R. L. Graham, Bounds on multiprocessing timing anomalies, SIAM J. Appl. "
    "Math. 17(2):416-429, 1969.",
    "tight; sequential jobs only",
)
GAREY_GRAHAM_1975 = LiteratureBound(
    "greedy list scheduling",
    "cmax",
    "zero",
    "rigid",
    "any",
    "2 - 1/m",
    lambda m: 2 - 1 / m,
    "Garey & Graham 1975",
    "M. R. Garey, R. L. Graham, Bounds for multiprocessor scheduling with "
    "resource constraints, SIAM J. Comput. 4(2):187-200, 1975.",
    "any list order; no contiguity",
)
NAROSKA_SCHWIEGELSHOHN_2002 = LiteratureBound(
    "greedy list scheduling",
    "cmax",
    "online",
    "rigid",
    "any",
    "2 - 1/m",
    lambda m: 2 - 1 / m,
    "Naroska & Schwiegelshohn 2002",
    "E. Naroska, U. Schwiegelshohn, On an on-line scheduling problem for "
    "parallel jobs, Information Processing Letters 81(6):297-304, 2002.",
    "jobs released over time; no contiguity",
)
SMART_1998 = LiteratureBound(
    "SMART (offline shelves)",
    "wct",
    "zero",
    "rigid",
    "any",
    "8.53 (8 with unit weights)",
    lambda m: 8.0,
    "Schwiegelshohn et al. 1998",
    "U. Schwiegelshohn, W. Ludwig, J. L. Wolf, J. Turek, P. S. Yu, Smart SMART "
    "bounds for weighted response time scheduling, SIAM J. Comput. "
    "28(1):237-253, 1998.",
    "not a simulator policy; 8 is the unit-weight factor",
)
NFDH_1980 = LiteratureBound(
    "NFDH (offline shelves)",
    "cmax",
    "zero",
    "rigid",
    "contiguous",
    "2 OPT + p_max",
    lambda m: 2.0,
    "Coffman et al. 1980",
    "E. G. Coffman Jr., M. R. Garey, D. S. Johnson, R. E. Tarjan, Performance "
    "bounds for level-oriented two-dimensional packing algorithms, SIAM J. "
    "Comput. 9(4):808-826, 1980.",
    "strip packing; additive p_max; not a simulator policy",
)
FFDH_1980 = LiteratureBound(
    "FFDH (offline shelves)",
    "cmax",
    "zero",
    "rigid",
    "contiguous",
    "1.7 OPT + p_max",
    lambda m: 1.7,
    "Coffman et al. 1980",
    NFDH_1980.reference,
    "strip packing; additive p_max; not a simulator policy",
)
KAWAGUCHI_KYAN_1986 = LiteratureBound(
    "WSPT list scheduling",
    "wct",
    "zero",
    "sequential",
    "any",
    "(1 + sqrt 2)/2",
    lambda m: (1 + 2**0.5) / 2,
    "Kawaguchi & Kyan 1986",
    "T. Kawaguchi, S. Kyan, Worst case bound of an LRF schedule for the mean "
    "weighted flow-time problem, SIAM J. Comput. 15(4):1119-1129, 1986.",
    "sequential jobs only; SPT is optimal for P||sum C_j",
)

LITERATURE: tuple[LiteratureBound, ...] = (
    GRAHAM_1966,
    GRAHAM_1969,
    GAREY_GRAHAM_1975,
    NAROSKA_SCHWIEGELSHOHN_2002,
    SMART_1998,
    NFDH_1980,
    FFDH_1980,
    KAWAGUCHI_KYAN_1986,
)
"""Every bound quoted by this package."""


def is_greedy_list_scheduling(policy: str) -> bool:
    """Whether ``policy`` is greedy list scheduling of rigid jobs.

    Greedy list scheduling starts, at every decision, any waiting job that
    fits on the free processors, scanning a priority list; it never idles
    processors a waiting job could use. In the simulator's grammar that is
    the first-fit start rule (``firstfit``, ``firstfit:order=...``) on a
    machine with ``any`` allocation. The single-name queue orders ``spt``,
    ``lpt``, ``lsf``, ... are *strict* (only the head may start): not list
    scheduling.
    """
    from optsched.heuristics import FirstFit, parse_policy

    return isinstance(parse_policy(policy), FirstFit)


def bound_for(
    policy: str, objective: str, *, online: bool, allocation: str = "any"
) -> LiteratureBound | None:
    """The literature bound that applies to ``policy`` in this setting, if any.

    Rigid jobs are searched here; the list-scheduling bounds are proved for
    ``any`` allocation only (on a contiguous machine a job may wait although
    enough processors are free, just not adjacent ones), so a contiguous
    search gets no bound from them.
    """
    if allocation != "any":
        return None
    if objective != "cmax" or not is_greedy_list_scheduling(policy):
        return None
    return NAROSKA_SCHWIEGELSHOHN_2002 if online else GAREY_GRAHAM_1975


def bound_label(
    policy: str,
    objective: str,
    *,
    online: bool,
    processors: int,
    allocation: str = "any",
) -> str:
    """Table text: the bound with its citation, or ``"none known"``."""
    bound = bound_for(policy, objective, online=online, allocation=allocation)
    return "none known" if bound is None else bound.label(processors)


def fcfs_lower_bound_instance(
    processors: int, jobs: int, long: int = 10, short: int = 1
) -> Instance:
    """Strict-FCFS makespan lower-bound construction, all jobs released at 0.

    ``k = min(m, floor((n + 1) / 2))`` narrow jobs (size 1, runtime ``long``)
    separated by ``k - 1`` full-width jobs (size ``m``, runtime ``short``);
    the remaining jobs are narrow, long while at most ``m`` long narrow jobs
    exist, short after. Strict FCFS cannot start a narrow job past a waiting
    full-width one, so it runs the ``k`` phases one after another:
    ``C_max >= k * long + (k - 1) * short``. A schedule that runs the (at
    most ``m``) long narrow jobs side by side first and every other job after
    them, one at a time, has ``C_max <= long + (n - L) * short`` with ``L``
    the number of long jobs. The ratio therefore tends to ``k`` as
    ``long / short`` grows: strict FCFS is not ``(2 - 1/m)``-competitive.
    """
    if processors < 1 or jobs < 1:
        raise ValueError("processors and jobs must be >= 1")
    phases = min(processors, (jobs + 1) // 2)
    out: list[Job] = []
    for phase in range(phases):
        if phase:
            out.append(Job(len(out) + 1, 0, processors, short))
        out.append(Job(len(out) + 1, 0, 1, long))
    narrow = phases
    while len(out) < jobs:
        runtime = long if narrow < processors else short
        narrow += 1
        out.append(Job(len(out) + 1, 0, 1, runtime))
    return Instance(Machine(processors), tuple(out), name="fcfs-lower-bound")
