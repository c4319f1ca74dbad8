"""Instance generators with a known optimum.

:func:`perfect_packing` cuts a ``W x H`` rectangle into ``n`` smaller ones and
turns each piece into a job (width = size, height = runtime, released at 0)
on a contiguous machine of ``W`` processors. The pieces tile the rectangle,
so the cut itself is a schedule of makespan ``H``, and no schedule is
shorter: the jobs' total area is ``W H`` and the machine has ``W``
processors (the area bound). The optimal contiguous makespan is therefore
exactly ``H``; this makes such instances a test bed for exact models
(zero-waste strip packing, as in the "perfect packing" benchmarks of
E. Hopper, B. C. H. Turton, "An empirical investigation of meta-heuristic
and heuristic algorithms for a 2D packing problem", EJOR 128(1), 2001).

Guillotine cuts split a rectangle in two by a straight cut across it.
Non-guillotine instances start with a *pinwheel*: five rectangles around a
central one, with no straight cut across the whole; the result is checked
to be non-guillotine (:func:`is_guillotine`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from optsched.instance import Instance, Job, Machine, Source
from optsched.schedule import Placement, Schedule

__all__ = [
    "Piece",
    "cut_rectangle",
    "is_guillotine",
    "perfect_packing",
    "perfect_packing_layout",
    "reduced_packing",
]

_MAX_ATTEMPTS = 100

_DRAWS = 20
_SHARE_TOLERANCE = 0.2
""":func:`reduced_packing`: draws per cut, and how far (relative) the
removed area may be from the share asked."""


@dataclass(frozen=True, slots=True)
class Piece:
    """An axis-parallel rectangle ``[x, x + width) x [y, y + height)``."""

    x: int
    y: int
    width: int
    height: int

    @property
    def area(self) -> int:
        """``width * height``."""
        return self.width * self.height


def _validate(width: int, height: int, items: int, guillotine: bool) -> None:
    for name, value in (("width", width), ("height", height), ("items", items)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(
                f"perfect packing: {name} must be a positive integer, got {value!r}"
            )
    if items > width * height:
        raise ValueError(
            f"perfect packing: {items} items cannot tile a {width} x {height} "
            f"rectangle (at most {width * height} unit pieces)"
        )
    if not guillotine and (items < 5 or width < 3 or height < 3):
        raise ValueError(
            "perfect packing: a non-guillotine packing needs at least 5 items "
            f"and a rectangle of at least 3 x 3, got {items} items in "
            f"{width} x {height}"
        )


def _guillotine_cut(
    piece: Piece, rng: random.Random, mixed: bool = False
) -> tuple[Piece, Piece]:
    # Cut across the longer side more often, which keeps pieces squarish;
    # mixed: either direction with probability 1/2, which leaves long thin
    # pieces beside squarish ones (BKW's mixed aspect ratios).
    share = 0.5 if mixed else piece.width / (piece.width + piece.height)
    vertical = piece.height < 2 or (piece.width >= 2 and rng.random() < share)
    if vertical:
        c = rng.randint(1, piece.width - 1)
        return (
            Piece(piece.x, piece.y, c, piece.height),
            Piece(piece.x + c, piece.y, piece.width - c, piece.height),
        )
    c = rng.randint(1, piece.height - 1)
    return (
        Piece(piece.x, piece.y, piece.width, c),
        Piece(piece.x, piece.y + c, piece.width, piece.height - c),
    )


def _pinwheel_cut(piece: Piece, rng: random.Random) -> tuple[Piece, ...]:
    """Five pieces: four arms turning around a central piece.

    With ``0 < x1 < x2 < w`` and ``0 < y1 < y2 < h`` (relative coordinates):
    bottom ``[0, x2) x [0, y1)``, right ``[x2, w) x [0, y2)``, top
    ``[x1, w) x [y2, h)``, left ``[0, x1) x [y1, h)``, centre
    ``[x1, x2) x [y1, y2)``. No straight line crosses the piece without
    cutting an arm.
    """
    x1, x2 = sorted(rng.sample(range(1, piece.width), 2))
    y1, y2 = sorted(rng.sample(range(1, piece.height), 2))
    w, h, x, y = piece.width, piece.height, piece.x, piece.y
    return (
        Piece(x, y, x2, y1),
        Piece(x + x2, y, w - x2, y2),
        Piece(x + x1, y + y2, w - x1, h - y2),
        Piece(x, y + y1, x1, h - y1),
        Piece(x + x1, y + y1, x2 - x1, y2 - y1),
    )


def _pick(pieces: list[Piece], ok: list[int], rng: random.Random) -> int:
    """A piece index among ``ok``, with probability proportional to its area."""
    return rng.choices(ok, weights=[pieces[i].area for i in ok])[0]


def _cut_once(
    width: int,
    height: int,
    items: int,
    guillotine: bool,
    rng: random.Random,
    mixed: bool = False,
) -> list[Piece]:
    pieces = [Piece(0, 0, width, height)]
    if not guillotine:
        pieces = list(_pinwheel_cut(pieces[0], rng))
    while len(pieces) < items:
        wheels = [i for i, p in enumerate(pieces) if p.width >= 3 and p.height >= 3]
        if (
            not guillotine
            and wheels
            and items - len(pieces) >= 4
            and rng.random() < 0.3
        ):
            i = _pick(pieces, wheels, rng)
            pieces[i : i + 1] = _pinwheel_cut(pieces[i], rng)
            continue
        cuttable = [i for i, p in enumerate(pieces) if p.area >= 2]
        i = _pick(pieces, cuttable, rng)
        pieces[i : i + 1] = _guillotine_cut(pieces[i], rng, mixed)
    return pieces


def is_guillotine(pieces: list[Piece]) -> bool:
    """Whether a tiling can be split recursively by straight cuts across it.

    A region is split by a vertical line ``x = c`` when every piece lies
    entirely left or right of it (likewise horizontally); a single piece is
    guillotine. The pieces must tile their bounding rectangle.
    """
    if len(pieces) <= 1:
        return True
    for lo, size in (("x", "width"), ("y", "height")):
        start = min(getattr(p, lo) for p in pieces)
        # A cut at c is free when no piece straddles it: sweep the pieces by
        # their low edge and look for a gap in the covered span.
        reach = start
        for p in sorted(pieces, key=lambda p: getattr(p, lo)):
            p_lo = getattr(p, lo)
            if p_lo >= reach and p_lo > start:
                first = [q for q in pieces if getattr(q, lo) < p_lo]
                rest = [q for q in pieces if getattr(q, lo) >= p_lo]
                return is_guillotine(first) and is_guillotine(rest)
            reach = max(reach, p_lo + getattr(p, size))
    return False


def cut_rectangle(
    width: int,
    height: int,
    items: int,
    *,
    seed: int,
    guillotine: bool = True,
    mixed: bool = False,
) -> list[Piece]:
    """Cut ``width x height`` into exactly ``items`` integer pieces.

    Guillotine mode: repeatedly pick a piece (with probability proportional
    to its area) and cut it in two at a uniform position. Non-guillotine
    mode: the first cut is a pinwheel (five pieces), later pieces of at
    least 3 x 3 are pinwheeled with probability 0.3 while at least four more
    pieces are wanted, the rest are guillotine cuts; a result that happens to
    be guillotine (later cuts can line up) is redrawn. Deterministic for a
    given seed. ``mixed``: each guillotine cut is vertical or horizontal
    with probability 1/2 (instead of across the longer side more often),
    which gives the mixed aspect ratios of the BKW instances (see
    :func:`perfect_packing`); ``False`` keeps the historical outputs.

    Raises ``ValueError`` on impossible parameters.
    """
    _validate(width, height, items, guillotine)
    rng = random.Random(seed)
    for _ in range(_MAX_ATTEMPTS):
        pieces = _cut_once(width, height, items, guillotine, rng, mixed)
        if guillotine or not is_guillotine(pieces):
            rng.shuffle(pieces)  # job numbers should not reveal the cut
            return pieces
    raise ValueError(
        f"perfect packing: no non-guillotine cut of {width} x {height} into "
        f"{items} pieces found in {_MAX_ATTEMPTS} attempts (small rectangles "
        "cut into many pieces may have none: use a larger rectangle)"
    )


def _name(
    width: int, height: int, items: int, seed: int, guillotine: bool, mixed: bool
) -> str:
    kind = "guillotine" if guillotine else "non-guillotine"
    if mixed:
        kind += " mixed"
    return f"perfect-packing W={width} H={height} n={items} seed={seed} {kind}"


def perfect_packing_layout(
    width: int,
    height: int,
    items: int,
    *,
    seed: int,
    guillotine: bool = True,
    mixed: bool = False,
) -> tuple[Instance, Schedule]:
    """The instance of :func:`perfect_packing` and its optimal schedule (the cut).

    Job ``k`` (ids ``1..items``) is piece ``k``: size = piece width, runtime =
    piece height, release 0; the schedule places it at start ``y``, on
    processors ``[x, x + width)``. Its makespan is ``height``.
    """
    pieces = cut_rectangle(
        width, height, items, seed=seed, guillotine=guillotine, mixed=mixed
    )
    return _as_instance(
        width, pieces, _name(width, height, items, seed, guillotine, mixed),
        "perfect-packing",
    )  # fmt: skip


def _as_instance(
    width: int, pieces: list[Piece], name: str, kind: str
) -> tuple[Instance, Schedule]:
    """Piece ``k`` (from 1) as job ``k``: size = width, run time = height,
    released at 0; the schedule places it where the cut put it."""
    jobs = [
        Job(id=k, release=0, size=p.width, runtime=p.height)
        for k, p in enumerate(pieces, start=1)
    ]
    instance = Instance(
        machine=Machine(processors=width, allocation="contiguous"),
        jobs=tuple(jobs),
        name=name,
        source=Source(format=kind),
    )
    schedule = Schedule(
        {
            k: Placement.contiguous(p.y, p.y + p.height, p.x, p.width)
            for k, p in enumerate(pieces, start=1)
        },
        producer=kind,
    )
    return instance, schedule


def perfect_packing(
    width: int,
    height: int,
    items: int,
    *,
    seed: int,
    guillotine: bool = True,
    mixed: bool = False,
) -> Instance:
    """A contiguous instance whose optimal makespan is ``height`` by construction.

    Parameters
    ----------
    width
        Processors ``W`` (the strip width).
    height
        The optimal makespan ``H``.
    items
        Number of jobs, ``1 <= items <= W H`` (``>= 5`` and ``W, H >= 3``
        for non-guillotine).
    seed
        Random seed; the same parameters give the same instance.
    guillotine
        Cut by guillotine cuts only, or make a non-guillotine tiling.
    mixed
        Cut vertically or horizontally with probability 1/2 each (see
        :func:`cut_rectangle`), which gives long thin pieces beside squarish
        ones, like the perfect-packing instances of E. K. Burke, G. Kendall,
        G. Whitwell, "A new placement heuristic for the orthogonal
        stock-cutting problem", Operations Research 52(4), 2004 (guillotine
        cuts, 10 to 3,152 items, strip widths 40 to 640). ``False`` (the
        default) keeps the historical instances unchanged.

    Returns
    -------
    Instance
        Jobs ``1..items`` released at 0, ``sum_j q_j p_j = W H``; the name
        records the parameters (``"perfect-packing W=20 H=20 n=10 seed=1
        guillotine"``), ``source.format`` is ``"perfect-packing"``.
    """
    return perfect_packing_layout(
        width, height, items, seed=seed, guillotine=guillotine, mixed=mixed
    )[0]


def reduced_packing(
    width: int,
    height: int,
    items: int,
    *,
    share: float,
    seed: int,
    mixed: bool = False,
) -> tuple[Instance, Schedule]:
    """A perfect packing with a random share of its area removed.

    Parameters
    ----------
    width, height
        The strip ``W`` and the height ``H`` of the perfect packing cut.
    items
        Jobs wanted after the removal.
    share
        Share of the area ``W H`` to remove, ``0 <= share < 1``.
    seed
        Random seed; the same parameters give the same instance.
    mixed
        Mixed aspect ratios (see :func:`perfect_packing`).

    Returns
    -------
    instance, schedule
        Jobs ``1..items`` (contiguous machine of ``W`` processors, released
        at 0) and the remaining pieces of the cut as a schedule of makespan
        at most ``H`` (an upper bound; the optimum may be lower).

    Notes
    -----
    For ``k = items + 1, items + 2, ..., 4 items``: cut ``W x H`` into ``k``
    guillotine pieces (:func:`cut_rectangle`, seed ``seed``) and, in up to
    20 draws (``random.Random(f"reduce:{seed}:{k}:{draw}")``), remove
    ``k - items`` pieces drawn at random; the first draw whose removed
    area is within 20 % of ``share W H`` is used. Such
    instances are the non-perfect strip-packing instances of issue 16: the
    area bound ``ceil((1 - share) H)`` is no longer tight, as in the
    literature's non-perfect families (e.g. Martello, Monaci, Vigo 2003).
    """
    if not 0 <= share < 1:
        raise ValueError(f"reduced packing: share must be in [0, 1), got {share!r}")
    target = share * width * height
    for extra in range(0 if share == 0 else 1, 3 * items + 1):
        k = items + extra
        if k > width * height:
            break
        pieces = cut_rectangle(width, height, k, seed=seed, mixed=mixed)
        for draw in range(_DRAWS):
            rng = random.Random(f"reduce:{seed}:{k}:{draw}")
            dropped = set(rng.sample(range(k), extra))
            removed = sum(pieces[i].area for i in dropped)
            if abs(removed - target) <= _SHARE_TOLERANCE * target:
                kept = [p for i, p in enumerate(pieces) if i not in dropped]
                return _reduced(width, height, kept, seed, share, mixed)
    raise ValueError(
        f"reduced packing: no cut of {width} x {height} leaves {items} pieces "
        f"after removing {share:.0%} of the area"
    )


def _reduced(
    width: int,
    height: int,
    kept: list[Piece],
    seed: int,
    share: float,
    mixed: bool,
) -> tuple[Instance, Schedule]:
    kind = " mixed" if mixed else ""
    name = (
        f"reduced-packing W={width} H={height} n={len(kept)} "
        f"share={share} seed={seed}{kind}"
    )
    return _as_instance(width, kept, name, "reduced-packing")
