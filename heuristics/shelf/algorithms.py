r"""Offline shelf (level) algorithms for a batch of rigid jobs.

A *shelf* is a set of jobs that start together; it lasts as long as its
longest job (its *height*) and the next shelf starts when it ends. The
algorithms below decide which jobs share a shelf and in which order the
shelves run, for a batch of jobs all available at a batch start time
``start``. A job's *height* is its run time as the scheduler sees it: the
estimate (requested time) by default, the actual run time with
``estimate=False`` (or any heights the caller gives). Sorting is stable:
jobs of equal height keep the order in which they are given (the
instance's job order by default), so results are reproducible.

Algorithms (:data:`SHELF_ALGORITHMS`)
-------------------------------------
``nfdh``, ``ffdh``
    Next-Fit and First-Fit Decreasing Height: jobs by non-increasing
    height; a job joins the current (last) shelf if its size fits beside
    the jobs already there (next fit), or the first shelf it fits in (first
    fit), and otherwise opens a new shelf on top. E. G. Coffman, M. R.
    Garey, D. S. Johnson, R. E. Tarjan, "Performance bounds for
    level-oriented two-dimensional packing algorithms", SIAM J. Comput.
    9(4):808-826, 1980: NFDH <= 2 OPT + h_max, FFDH <= 1.7 OPT + h_max
    (strip packing: all jobs at 0, contiguous processors, no busy block).
    The "FFDH" pseudo-code printed in the PC² description (Kalthoff 2002,
    seed 001 §2.2 and errata §9), with its garbled test "P - i < P_frei"
    read as ``P_i > P_frei`` (the job does not fit the current level),
    only ever looks at the current level: it is ``nfdh`` here.
``nfih``, ``ffih``
    The same with non-decreasing heights (the FFIH of the PC² scheduler,
    Kalthoff 2002 / Gehring and Ramme 1996: short jobs first, better mean
    response; the printed pseudo-code is again next fit, ``nfih``). The job
    joining a shelf is then the tallest so far, so the shelf grows to its
    height; with first fit an earlier shelf may grow and the shelves after
    it move up.
``ffdh-stack``, ``ffih-stack``
    FFDH* and FFIH* of the PC² scheduler (seed 001 §2.2): as FFDH/FFIH,
    but when a job does not fit beside the jobs of a shelf it may be
    *stacked* behind one of them: it starts when that job ends, on
    processors that job frees, and must end (by its height) by the end of
    the shelf, so the shelf never grows (a job of height 0 counts as one
    second here: in the simulator it holds its processors at its start
    instant, which must lie inside the shelf's footprint). Each shelf keeps
    *slots*: after a job of the shelf ends, its processors not yet given to
    a job stacked behind it form a slot ``(ready, processors)``; several
    jobs may sit side by side in one slot. A stacked job takes the
    slot with the earliest ready time (lowest processors on ties) that is
    wide enough and leaves it early enough, and its own processors form a
    new slot when it ends. Beside is tried before stacking, shelf by shelf
    (first fit). With increasing heights a job is never shorter than the
    jobs before it, so stacking applies only behind jobs of height 0: on a
    single batch FFIH* equals FFIH. It differs when jobs are added to an
    existing plan later (the ``pc2`` policy).
``smart``
    SMART (U. Schwiegelshohn, W. Ludwig, J. L. Wolf, J. Turek, P. S. Yu,
    "Smart SMART bounds for weighted response time scheduling", IBM
    Research Report RC 19789, 1994; SIAM J. Comput. 28(1):237-253, 1998;
    as printed in Kalthoff 2002, seed 001 §1.1). Jobs fall into height
    classes ``2^(k-1) < p <= 2^k``; each shelf holds jobs of one class, so
    its jobs' heights differ by less than a factor 2 (the property SMART's
    bounds rest on; the printed text can also be read as one next-fit
    sequence across classes, which loses it). Options:

    * ``order=size`` (default; as printed): inside a class, ascending size
      (next fit in this order is the "NFIW" packing of the SMART papers).
      ``order=smith`` (the original's Smith-type rule): inside a class, by
      non-increasing ``w_j / (q_j p_j)`` (jobs of zero area first; the
      heights of a class differ by less than 2, so this is nearly weight
      per processor).
    * ``sequence=class`` (the default with ``order=size``; as printed: the
      shelves run class by class, shortest class first, in creation order
      inside a class) or ``sequence=smith`` (the default with
      ``order=smith``; the original SMART): the shelves run in Smith's
      order of (shelf height ``H``, shelf weight ``W`` = the sum of its
      jobs' weights), non-decreasing ``H / W``, which minimises ``sum W x
      (shelf end)``, an upper bound on the shelves' ``sum w_j C_j`` (ties:
      class, then creation order). ``sequence=auto`` is the default rule.
    * ``fit=next`` (default; as printed: a job that does not fit opens the
      next shelf) or ``fit=first`` (the first shelf of its class with
      room). With ``order=size`` both give the same shelves: a job that
      closed a shelf is no wider than the jobs after it.
    * ``weights=instance`` (default: the jobs' own weights), ``one``,
      ``size`` (``q_j``) or ``area`` (``q_j`` times the height): the ``w_j``
      of ``order=smith``, to match a ``wct`` objective's weight rule.

    Scaling of the classes: run times are integer seconds, so every job of
    positive height has ``p >= 1`` and its class is ``k = ceil(log2 p)``
    (``k = 0`` for ``p = 1``, computed exactly as ``(p - 1).bit_length()``);
    jobs of height 0 form a class of their own, first. Classes are on
    seconds directly, not on ``p / p_min``: a job's class then does not
    depend on which other jobs share its batch, so it is the same in every
    batch of a simulation, and SMART's analysis needs only that the heights
    inside a class differ by less than a factor 2, which holds for any
    fixed origin of the classes. Guarantees (the 1998 paper): ``sum C_j``
    within 8 of the optimum (unweighted), ``sum w_j C_j`` within 8.53.

Releases, busy blocks, processors
---------------------------------
Shelves are laid out in order: shelf ``k`` starts at the earliest time
``t >= max(start, end of shelf k-1, latest release of its jobs)`` at which
its *footprint*, its width (the sum of the sizes of the jobs that start
with it; stacked jobs reuse their processors) during ``[t, t + max(H,
1))``, fits beside the busy blocks: on an ``any`` machine the blocks are
processor counts and ``width`` processors must be free at every instant; on
a contiguous machine the shelf takes one processor range ``[o, o +
width)`` free of every block over that interval, ``o`` the lowest such
offset. The footprint reserves the whole width for the whole height, which
is conservative but always sound: every job of the shelf runs inside it.
(The ``max(H, 1)``: a shelf of jobs of length 0 still needs its processors
at its start instant in the simulator.) Inside the shelf the jobs that start
with it take adjacent ranges left to right in placement order; a stacked job
takes the lowest processors of its slot. On ``any`` machines these ranges
are the schedule's explicit processor sets as well.

While the shelves are filled, a job joins an existing shelf only if the
shelf does not move for it: the job is released by the shelf's (tentative)
start and the enlarged footprint still fits beside the blocks there. A
first-fit job that makes an earlier shelf taller moves the later shelves up
(never earlier, so every earlier decision stays valid). With no busy block
after ``start`` and every job released by ``start`` (the batch case) none of
this is needed and shelves simply follow each other. SMART fills its
shelves first and then sequences them, so it relies on the layout alone.

Realisation: :func:`shelf_schedule` runs every job for its actual run time.
A job stacked behind another starts when that job actually ends, and shelf
``k`` starts when every job of shelf ``k-1`` has ended, at the earliest such
time (as above) at which its footprint fits beside the blocks for the
shelf's *actual* extent (the offline function knows the run times; the
online policies check the planned height instead and let the simulator stop
a job that overruns into a block). With exact estimates the schedule is the
plan. Zero-length jobs are placed like the others (they take width in their
shelf, as items of height 0 in strip packing).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field

from optsched.heuristics.spec import Option, Options, split_spec
from optsched.instance import BusyBlock, Instance, Job
from optsched.packing import Profile, Strip, contiguous_placement
from optsched.schedule import Placement, Schedule

__all__ = [
    "SHELF_ALGORITHMS",
    "SHELF_NAMES",
    "PlannedJob",
    "PlannedShelf",
    "ShelfAlgorithm",
    "ShelfPlan",
    "ShelfSpec",
    "height_class",
    "parse_shelf_algorithm",
    "shelf_plan",
    "shelf_schedule",
]


# --------------------------------------------------------------------------
# The registry and specs
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShelfAlgorithm:
    """One entry of :data:`SHELF_ALGORITHMS`.

    Attributes
    ----------
    name
        Registry name.
    decreasing
        Heights non-increasing (``True``) or non-decreasing (``False``);
        ``None`` for SMART (classes).
    first_fit
        First fit (``True``) or next fit.
    stack
        Jobs may be stacked behind others inside a shelf.
    options
        Option names the algorithm accepts, with their valid values (the
        first one is the default).
    summary
        One line for help texts.
    """

    name: str
    decreasing: bool | None
    first_fit: bool
    stack: bool
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    summary: str = ""


_SMART_OPTIONS: dict[str, tuple[str, ...]] = {
    "order": ("size", "smith"),
    "sequence": ("auto", "class", "smith"),
    "fit": ("next", "first"),
    "weights": ("instance", "one", "size", "area"),
}
_OPTION_KEYS = tuple(_SMART_OPTIONS)

SHELF_OPTIONS = Options(
    tuple(Option(key, default=values[0]) for key, values in _SMART_OPTIONS.items())
)
"""The options of a :class:`ShelfSpec` (SMART's), in canonical spec order,
each defaulting to the first of its valid values (lower case is read)."""

SHELF_ALGORITHMS: dict[str, ShelfAlgorithm] = {
    a.name: a
    for a in (
        ShelfAlgorithm("nfdh", True, False, False, {}, "next-fit decreasing height"),
        ShelfAlgorithm("ffdh", True, True, False, {}, "first-fit decreasing height"),
        ShelfAlgorithm("nfih", False, False, False, {}, "next-fit increasing height"),
        ShelfAlgorithm("ffih", False, True, False, {}, "first-fit increasing height"),
        ShelfAlgorithm(
            "ffdh-stack", True, True, True, {}, "FFDH* (PC²): FFDH with stacking"
        ),
        ShelfAlgorithm(
            "ffih-stack", False, True, True, {}, "FFIH* (PC²): FFIH with stacking"
        ),
        ShelfAlgorithm(
            "smart",
            None,
            False,
            False,
            _SMART_OPTIONS,
            "SMART: power-of-2 height classes (order, sequence, fit, weights)",
        ),
    )
}
"""Shelf algorithms by name (see the module docstring for each rule)."""

SHELF_NAMES: tuple[str, ...] = tuple(SHELF_ALGORITHMS)
"""Names of :data:`SHELF_ALGORITHMS`, in registry order."""


@dataclass(frozen=True, slots=True)
class ShelfSpec:
    """A shelf algorithm with its options (only SMART has any).

    ``spec`` is the canonical text ``name[:key=value,...]`` (options at
    their default left out, keys in the order ``order, sequence, fit,
    weights``); ``ShelfSpec.parse(s.spec) == s``.
    """

    name: str = "ffdh"
    order: str = "size"
    sequence: str = "auto"
    fit: str = "next"
    weights: str = "instance"

    def __post_init__(self) -> None:
        if self.name not in SHELF_ALGORITHMS:
            valid = ", ".join(SHELF_NAMES)
            raise ValueError(f"unknown shelf algorithm {self.name!r}; valid: {valid}")
        allowed = SHELF_ALGORITHMS[self.name].options
        for key in _OPTION_KEYS:
            value = getattr(self, key)
            default = _SMART_OPTIONS[key][0]
            if key not in allowed:
                if value != default:
                    raise ValueError(f"{self.name} takes no option {key!r}")
            elif value not in allowed[key]:
                raise ValueError(
                    f"{self.name}: {key} must be one of {', '.join(allowed[key])}, "
                    f"got {value!r}"
                )

    @property
    def algorithm(self) -> ShelfAlgorithm:
        """The registry entry."""
        return SHELF_ALGORITHMS[self.name]

    @property
    def items(self) -> list[str]:
        """The ``key=value`` of the options that differ from their default,
        in canonical order (:data:`SHELF_OPTIONS`)."""
        return SHELF_OPTIONS.items(self, self.algorithm.options)

    @property
    def spec(self) -> str:
        """Canonical text form."""
        return SHELF_OPTIONS.spec(self.name, self, self.algorithm.options)

    def __str__(self) -> str:
        return self.spec

    @classmethod
    def parse(cls, text: str | ShelfSpec, **options: str) -> ShelfSpec:
        """``"ffdh"``, ``"smart:order=smith,fit=first"``; ``options`` add to
        (and must not repeat) those of the text."""
        return parse_shelf_algorithm(text, **options)


def parse_shelf_algorithm(text: str | ShelfSpec, **options: str) -> ShelfSpec:
    """The :class:`ShelfSpec` that ``text`` (plus keyword ``options``) names.

    Raises
    ------
    ValueError
        Unknown algorithm or option, a bad value, an option given twice.
    """
    if isinstance(text, ShelfSpec):
        if not options:
            return text
        text = text.spec
    parts = split_spec(text, noun="shelf algorithm").with_options(options)
    if parts.name not in SHELF_ALGORITHMS:
        raise ValueError(
            f"unknown shelf algorithm {parts.name!r}; valid: {', '.join(SHELF_NAMES)}"
        )
    keys = tuple(SHELF_ALGORITHMS[parts.name].options)
    return ShelfSpec(**SHELF_OPTIONS.read(parts, keys, name=parts.name))


def height_class(height: int) -> int:
    """SMART's class of a height in seconds: ``k`` with ``2^(k-1) < p <= 2^k``.

    ``k = ceil(log2 p)`` for ``p >= 1`` (0 for ``p = 1``), exactly, as
    ``(p - 1).bit_length()``; ``-1`` for ``p = 0``.
    """
    if height <= 0:
        return -1
    return (height - 1).bit_length()


# --------------------------------------------------------------------------
# Plans (public, frozen)
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlannedJob:
    """Where one job sits in its shelf.

    Attributes
    ----------
    id
        Job id.
    offset
        First processor, relative to the shelf's range (absolute:
        ``shelf.offset + offset``); the job takes ``size`` processors.
    delay
        Planned start minus the shelf's start: 0 for a job that starts with
        the shelf, the planned end of the job it is stacked behind otherwise.
    behind
        The job it is stacked behind (it starts when that one ends), or
        ``None``.
    """

    id: int
    offset: int
    delay: int = 0
    behind: int | None = None


@dataclass(frozen=True, slots=True)
class PlannedShelf:
    """One shelf of a plan: its planned start, height, width, range, jobs."""

    start: int
    height: int
    width: int
    offset: int
    jobs: tuple[PlannedJob, ...]

    @property
    def end(self) -> int:
        """Planned end: ``start + height``."""
        return self.start + self.height


@dataclass(frozen=True, slots=True)
class ShelfPlan:
    """The shelves an algorithm built, in time order, with planned times.

    Times come from the heights the plan was made with (estimates by
    default); :func:`shelf_schedule` realises a plan with actual run times.
    """

    algorithm: str
    shelves: tuple[PlannedShelf, ...]

    @property
    def end(self) -> int:
        """Planned end of the last shelf (the planned makespan)."""
        return max((s.end for s in self.shelves), default=0)

    def shelf_of(self) -> dict[int, int]:
        """Job id to the index of its shelf."""
        return {pj.id: k for k, s in enumerate(self.shelves) for pj in s.jobs}

    def planned_starts(self) -> dict[int, int]:
        """Job id to its planned start."""
        return {pj.id: s.start + pj.delay for s in self.shelves for pj in s.jobs}


# --------------------------------------------------------------------------
# Internal building blocks (also used by the shelf policies)
# --------------------------------------------------------------------------


@dataclass(slots=True)
class Item:
    """A job as the builder sees it (``key`` is a job id or a simulator index)."""

    key: int
    release: int
    size: int
    height: int
    weight: float = 1.0


class Obstacles:
    """Where a shelf footprint fits beside the busy blocks.

    ``any`` machines: a count profile of the blocks; contiguous machines: a
    :class:`~optsched.packing.Strip` of their ranges. Blocks that end by
    ``after`` are ignored.
    """

    def __init__(
        self, processors: int, contiguous: bool, blocks: Iterable[BusyBlock], after: int
    ) -> None:
        live = [b for b in blocks if b.end > b.start and b.end > after]
        self.processors = processors
        self.contiguous = contiguous
        self.last_end = max((b.end for b in live), default=0)
        self._strip = Strip(processors, live) if contiguous and live else None
        self._profile = Profile.of_blocks(processors, live) if live else None

    @classmethod
    def of(cls, instance: Instance, after: int = 0) -> Obstacles:
        """The busy blocks of ``instance`` that end after ``after``."""
        machine = instance.machine
        return cls(
            machine.processors,
            machine.allocation == "contiguous",
            machine.unavailable,
            after,
        )

    def pending(self, time: int) -> bool:
        """Whether some block has not ended at ``time``."""
        return time < self.last_end

    def earliest(self, time: int, width: int, height: int) -> tuple[int, int]:
        """Earliest ``(start >= time, offset)`` for a footprint of ``width``
        processors during ``[start, start + max(height, 1))``."""
        if time >= self.last_end:
            return time, 0
        duration = max(height, 1)
        if self._strip is not None:
            return self._strip.earliest(time, duration, width)
        assert self._profile is not None
        found = self._profile.earliest_from(time, width, duration)
        assert found is not None, "a shelf wider than the machine"
        return found, 0

    def offset_at(self, time: int, width: int, height: int) -> int | None:
        """Offset of the footprint if it fits at ``time``, else ``None``."""
        start, offset = self.earliest(time, width, height)
        return offset if start == time else None


class Shelf:
    """A shelf being built: its jobs, width, height, tentative start, slots.

    ``entries`` are ``(key, offset, delay, behind, size)`` in placement
    order (a stacked job after the job it is behind);
    ``slots`` are ``(ready, lo, hi, pred)``: processors ``[lo, hi)`` of the
    shelf's range free from ``ready`` (relative to the shelf's start) on,
    after job ``pred`` ends.
    """

    __slots__ = (
        "entries",
        "height",
        "index",
        "klass",
        "offset",
        "release",
        "slots",
        "start",
        "weight",
        "width",
    )

    def __init__(self, index: int, start: int, klass: int = 0) -> None:
        self.index = index
        self.start = start
        self.offset = 0
        self.height = 0
        self.width = 0
        self.release = 0
        self.weight = 0.0
        self.klass = klass
        self.entries: list[tuple[int, int, int, int | None, int]] = []
        self.slots: list[tuple[int, int, int, int]] = []

    def add_beside(self, item: Item, stack: bool) -> None:
        """Put ``item`` at the right of the jobs that start with the shelf."""
        lo = self.width
        self.entries.append((item.key, lo, 0, None, item.size))
        self.width += item.size
        self.height = max(self.height, item.height)
        self.release = max(self.release, item.release)
        self.weight += item.weight
        if stack:
            self.slots.append((item.height, lo, lo + item.size, item.key))

    def find_slot(self, size: int, height: int) -> int | None:
        """Index of the slot a stacked job of ``size`` x ``height`` takes."""
        # A job of length 0 still holds its processors at its start instant
        # in the simulator: it counts as 1 s, so that it never sits at the
        # shelf's end, outside the footprint [start, start + max(H, 1)).
        best: int | None = None
        best_key: tuple[int, int] = (0, 0)
        limit = max(self.height, 1)
        need = max(height, 1)
        for k, (ready, lo, hi, _) in enumerate(self.slots):
            if hi - lo >= size and ready + need <= limit:
                key = (ready, lo)
                if best is None or key < best_key:
                    best, best_key = k, key
        return best

    def add_stacked(self, item: Item, slot: int) -> None:
        """Stack ``item`` in ``slots[slot]``: behind its job, lowest processors."""
        ready, lo, hi, pred = self.slots[slot]
        top = lo + item.size
        self.entries.append((item.key, lo, ready, pred, item.size))
        self.release = max(self.release, item.release)
        self.weight += item.weight
        rest = [(ready, top, hi, pred)] if top < hi else []
        self.slots[slot : slot + 1] = [*rest, (ready + item.height, lo, top, item.key)]


@dataclass(eq=False)  # a builder is a worker: compared by identity
class Builder:
    """Fills shelves job by job (the engine of every algorithm).

    Parameters
    ----------
    processors
        ``m``.
    obstacles
        The busy blocks.
    start
        The batch start; no shelf starts earlier.
    timed
        Keep tentative shelf starts (needed when blocks remain after
        ``start`` or a job is released after it): a job then joins a shelf
        only if it is released by the shelf's start and the enlarged
        footprint fits beside the blocks there.
    stack
        Allow stacking.
    """

    processors: int
    obstacles: Obstacles
    start: int
    _: KW_ONLY
    timed: bool
    stack: bool
    shelves: list[Shelf] = field(default_factory=list, init=False)

    # -- joining and opening ----------------------------------------------
    def try_join(self, shelf: Shelf, item: Item, *, grow: bool = True) -> bool:
        """Put ``item`` in ``shelf`` (beside, else stacked) if it fits.

        ``grow``: the shelf may become taller (later shelves then move up).
        """
        timed = self.timed
        if timed and item.release > shelf.start:
            return False
        width = shelf.width + item.size
        if width <= self.processors:
            height = max(shelf.height, item.height)
            if height == shelf.height or grow:
                offset = shelf.offset
                if timed and self.obstacles.pending(shelf.start):
                    found = self.obstacles.offset_at(shelf.start, width, height)
                    if found is None:
                        return self._try_stack(shelf, item)
                    offset = found
                grew = height > shelf.height
                shelf.add_beside(item, self.stack)
                shelf.offset = offset
                if grew and timed:
                    self.relayout(shelf.index + 1)
                return True
        return self._try_stack(shelf, item)

    def _try_stack(self, shelf: Shelf, item: Item) -> bool:
        if not self.stack:
            return False
        slot = shelf.find_slot(item.size, item.height)
        if slot is None:
            return False
        shelf.add_stacked(item, slot)
        return True

    def open(self, item: Item, klass: int = 0) -> Shelf:
        """A new shelf on top of the last one, holding ``item``."""
        shelf = Shelf(len(self.shelves), self.start, klass)
        if self.timed:
            shelf.start, shelf.offset = self.obstacles.earliest(
                max(self.ready(len(self.shelves)), item.release),
                item.size,
                item.height,
            )
        shelf.add_beside(item, self.stack)
        self.shelves.append(shelf)
        return shelf

    def place(self, item: Item, *, first_fit: bool, grow: bool = True) -> Shelf:
        """First or next fit of ``item``; opens a shelf when none takes it."""
        shelves = self.shelves
        candidates = shelves if first_fit else shelves[-1:]
        for shelf in candidates:
            if self.try_join(shelf, item, grow=grow):
                return shelf
        return self.open(item)

    # -- times ---------------------------------------------------------------
    def ready(self, index: int) -> int:
        """When shelf ``index`` may start: the end of the one before it."""
        if index == 0:
            return self.start
        before = self.shelves[index - 1]
        return max(self.start, before.start + before.height)

    def relayout(self, first: int = 0) -> None:
        """Recompute the tentative starts (and ranges) from shelf ``first`` on."""
        for k in range(first, len(self.shelves)):
            shelf = self.shelves[k]
            shelf.start, shelf.offset = self.obstacles.earliest(
                max(self.ready(k), shelf.release), shelf.width, shelf.height
            )

    def reorder(self, order: Sequence[int]) -> None:
        """Run the shelves in ``order`` (indices), then lay them out again."""
        self.shelves = [self.shelves[k] for k in order]
        for k, shelf in enumerate(self.shelves):
            shelf.index = k
        self.relayout()

    def pop_first(self) -> Shelf:
        """Remove and return the first shelf (the others keep their starts)."""
        shelf = self.shelves.pop(0)
        for k, other in enumerate(self.shelves):
            other.index = k
        return shelf

    def rebase(self, start: int) -> None:
        """Move the plan's origin to ``start`` and lay it out again."""
        self.start = start
        self.relayout()

    # -- output ----------------------------------------------------------------
    def frozen(self, algorithm: str) -> ShelfPlan:
        """The public :class:`ShelfPlan` (keys are job ids)."""
        shelves = []
        for shelf in self.shelves:
            jobs = tuple(
                PlannedJob(key, offset, delay, behind)
                for key, offset, delay, behind, _ in shelf.entries
            )
            shelves.append(
                PlannedShelf(shelf.start, shelf.height, shelf.width, shelf.offset, jobs)
            )
        return ShelfPlan(algorithm, tuple(shelves))


def build(
    items: Sequence[Item],
    spec: ShelfSpec,
    processors: int,
    obstacles: Obstacles,
    start: int,
) -> Builder:
    """Run the algorithm ``spec`` on ``items`` (given order = tie order).

    Returns the :class:`Builder` with its shelves laid out from ``start``.
    """
    algorithm = spec.algorithm
    late = any(item.release > start for item in items)
    blocked = obstacles.pending(start)
    if algorithm.decreasing is None:
        return _smart(items, spec, processors, obstacles, start)
    builder = Builder(
        processors, obstacles, start, timed=blocked or late, stack=algorithm.stack
    )
    if algorithm.decreasing:
        ordered = sorted(items, key=lambda it: -it.height)
    else:
        ordered = sorted(items, key=lambda it: it.height)
    first_fit = algorithm.first_fit
    # First fit by width (and release) in O(log S) per job, where the
    # shelves never move while they fill (see _first_fit_indexed).
    indexed = not builder.timed or (not blocked and algorithm.decreasing)
    if indexed and not algorithm.stack and first_fit:
        _first_fit_indexed(builder, ordered)
    else:
        for item in ordered:
            builder.place(item, first_fit=first_fit)
    builder.relayout()
    return builder


def _first_fit_indexed(builder: Builder, ordered: Sequence[Item]) -> None:
    """First fit (no stacking) in ``O(log S)`` per job, not a scan of the shelves.

    The same shelves as :meth:`Builder.place`, in two cases:

    * untimed (every job released by the batch start, no block pending):
      a job joins the first shelf with room; every shelf starts at the
      batch start, so the release test below passes for all of them;
    * timed, in decreasing heights, no busy block pending: a job never
      makes a shelf taller, so no shelf moves once opened, and shelf starts
      (``max`` of the previous end and the opening job's release) never
      decrease along the shelves. A job may join a shelf iff the shelf
      starts at or after its release and has room.

    The candidates are a suffix of the shelves (bisection on the starts),
    and the first with room is a descent in a max segment tree of free
    widths restricted to that suffix.
    """
    m = builder.processors
    size = 1
    while size < max(len(ordered), 1):
        size *= 2
    room = [0] * (2 * size)  # free width; leaves beyond the open shelves: 0
    starts: list[int] = []
    shelves = builder.shelves

    def first_with_room(least: int, q: int) -> int:
        # The first leaf index >= least with room >= q, or -1: from the
        # leaf, go right subtree by subtree (climbing while a right child),
        # and down (left first) into the first subtree with room.
        if least >= size or room[1] < q:
            return -1
        v = size + least
        while True:
            if room[v] >= q:
                if v >= size:
                    return v - size
                v *= 2
                continue
            while v & 1:
                v >>= 1
            if v == 0:
                return -1
            v += 1

    for item in ordered:
        least = bisect.bisect_left(starts, item.release)
        index = first_with_room(least, item.size)
        if index >= 0:
            shelf = shelves[index]
            shelf.add_beside(item, False)
        else:
            shelf = builder.open(item)
            starts.append(shelf.start)
            index = shelf.index
        node = size + index
        room[node] = m - shelf.width
        node //= 2
        while node:
            room[node] = max(room[2 * node], room[2 * node + 1])
            node //= 2


def _smart(
    items: Sequence[Item],
    spec: ShelfSpec,
    processors: int,
    obstacles: Obstacles,
    start: int,
) -> Builder:
    # Shelves are filled class by class without time constraints, then
    # sequenced; the layout alone respects releases and blocks.
    builder = Builder(processors, obstacles, start, timed=False, stack=False)
    classes: dict[int, list[Item]] = {}
    for item in items:
        classes.setdefault(height_class(item.height), []).append(item)
    first_fit = spec.fit == "first"
    for klass in sorted(classes):
        group = classes[klass]
        if spec.order == "size":
            group.sort(key=lambda it: it.size)
        else:
            group.sort(key=lambda it: -_smith_ratio(it))
        mine: list[Shelf] = []
        for item in group:
            candidates = mine if first_fit else mine[-1:]
            target = next(
                (s for s in candidates if s.width + item.size <= processors), None
            )
            if target is None:
                target = Shelf(len(builder.shelves), start, klass)
                builder.shelves.append(target)
                mine.append(target)
            target.add_beside(item, False)
    sequence = spec.sequence
    if sequence == "auto":
        sequence = "smith" if spec.order == "smith" else "class"
    if sequence == "smith":
        shelves = builder.shelves
        ranked = sorted(
            range(len(shelves)),
            key=lambda k: (_shelf_ratio(shelves[k]), shelves[k].klass, k),
        )
        builder.reorder(ranked)
    else:
        builder.relayout()
    return builder


def _smith_ratio(item: Item) -> float:
    area = item.size * item.height
    return float("inf") if area == 0 else item.weight / area


def _shelf_ratio(shelf: Shelf) -> float:
    # Smith's rule on (height, weight): non-decreasing H / W.
    return shelf.height / shelf.weight if shelf.weight > 0 else float("inf")


def item_weight(job: Job, height: int, weights: str) -> float:
    """``w_j`` of a job under SMART's ``weights`` option."""
    if weights == "one":
        return 1.0
    if weights == "size":
        return float(job.size)
    if weights == "area":
        return float(job.size * height)
    return float(job.weight)


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------


def _items(
    instance: Instance,
    jobs: Iterable[Job] | None,
    estimate: bool,
    heights: Mapping[int, int] | None,
    weights: str,
) -> list[Item]:
    chosen = list(instance.jobs if jobs is None else jobs)
    items = []
    for job in chosen:
        if heights is not None and job.id in heights:
            height = heights[job.id]
        else:
            height = job.requested if estimate else job.runtime
        if height < 0:
            raise ValueError(f"job {job.id}: height {height} is negative")
        items.append(
            Item(
                job.id, job.release, job.size, height, item_weight(job, height, weights)
            )
        )
    return items


def _planned(
    instance: Instance,
    algorithm: str | ShelfSpec,
    start: int,
    jobs: Iterable[Job] | None,
    estimate: bool,
    heights: Mapping[int, int] | None,
    options: Mapping[str, str],
) -> tuple[ShelfSpec, Obstacles, Builder]:
    """The algorithm, the machine's obstacles and the built shelves of a
    batch (the parameters of :func:`shelf_plan`)."""
    spec = parse_shelf_algorithm(algorithm, **options)
    items = _items(instance, jobs, estimate, heights, spec.weights)
    obstacles = Obstacles.of(instance, after=start)
    return spec, obstacles, build(items, spec, instance.processors, obstacles, start)


def shelf_plan(
    instance: Instance,
    algorithm: str | ShelfSpec = "ffdh",
    *,
    start: int = 0,
    jobs: Iterable[Job] | None = None,
    estimate: bool = True,
    heights: Mapping[int, int] | None = None,
    **options: str,
) -> ShelfPlan:
    """The shelves of ``algorithm`` for a batch, with planned times.

    Parameters
    ----------
    instance
        The machine (processors, allocation, busy blocks) and, unless
        ``jobs`` is given, the batch.
    algorithm
        A name of :data:`SHELF_ALGORITHMS` or a spec
        (``"smart:order=smith,fit=first"``), or a :class:`ShelfSpec`.
    start
        Batch start: no shelf starts earlier. Jobs released later are
        accepted (a shelf starts no earlier than its jobs' releases).
    jobs
        The batch, in tie order (default: every job of the instance, in
        the instance's order).
    estimate
        Heights are the estimates (``True``) or the actual run times.
    heights
        Heights by job id, overriding ``estimate`` for the jobs listed.
    **options
        Algorithm options (``order``, ``fit``, ``weights`` for SMART).

    Returns
    -------
    ShelfPlan
        Shelves in time order; planned starts from the heights used.
    """
    spec, _, builder = _planned(
        instance, algorithm, start, jobs, estimate, heights, options
    )
    return builder.frozen(spec.spec)


def shelf_schedule(
    instance: Instance,
    algorithm: str | ShelfSpec = "ffdh",
    *,
    start: int = 0,
    jobs: Iterable[Job] | None = None,
    estimate: bool = True,
    heights: Mapping[int, int] | None = None,
    producer: str | None = None,
    **options: str,
) -> Schedule:
    """The schedule of a shelf algorithm on a batch, run with actual run times.

    The plan (:func:`shelf_plan`, same parameters) is realised as in the
    module docstring: stacked jobs start when the job in front of them
    ends, a shelf starts once every job of the previous one has ended and
    its footprint fits beside the busy blocks for its actual extent. The
    schedule passes :func:`optsched.check.check_schedule` on ``any`` and
    ``contiguous`` machines (every job gets explicit processors) when
    ``jobs`` is the whole instance; with a subset it places only those.

    Parameters
    ----------
    producer
        Recorded in the schedule (default ``"shelf:<algorithm spec>"``).

    Examples
    --------
    >>> from optsched.instance import Instance, Job, Machine
    >>> inst = Instance(Machine(4), (Job(1, 0, 2, 3), Job(2, 0, 3, 2), Job(3, 0, 1, 4)))
    >>> s = shelf_schedule(inst, "ffdh")
    >>> [(s[j].start, s[j].end) for j in (1, 2, 3)]
    [(0, 3), (4, 6), (0, 4)]
    """
    spec, obstacles, builder = _planned(
        instance, algorithm, start, jobs, estimate, heights, options
    )
    runtimes = {job.id: job.runtime for job in instance.jobs}
    placements = realise(builder, runtimes, obstacles, start)
    return Schedule(placements, producer or f"shelf:{spec.spec}")


def realise(
    builder: Builder,
    runtimes: Mapping[int, int],
    obstacles: Obstacles,
    start: int,
) -> dict[int, Placement]:
    """Placements of the builder's shelves with actual run times."""
    placements: dict[int, Placement] = {}
    ready = start
    for shelf in builder.shelves:
        # Actual times relative to the shelf's start: a stacked job starts
        # when the job in front of it ends (entries come after their front).
        begin: dict[int, int] = {}
        finish: dict[int, int] = {}
        for key, _, _, behind, _ in shelf.entries:
            first = 0 if behind is None else finish[behind]
            begin[key] = first
            finish[key] = first + runtimes[key]
        extent = max(finish.values(), default=0)
        at, base = obstacles.earliest(max(ready, shelf.release), shelf.width, extent)
        for key, offset, _, _, size in shelf.entries:
            placements[key] = contiguous_placement(
                at + begin[key], at + finish[key], base + offset, size
            )
        ready = at + extent
    return placements
