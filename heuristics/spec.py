"""Policy specs: short strings naming a policy on the command line.

Grammar::

    spec   := name [":" param ("," param)*]
    param  := key "=" value | "oracle"

Names (aliases in parentheses):

- ``fcfs`` (``fifo``), ``spt`` (``sjf``), ``lpt`` (``ljf``), ``ssf``,
  ``lsf``, ``saf``, ``laf``, ``random``: strict list scheduling in that
  queue order (only the head may start). ``strict:order=NAME`` is the same.
- ``firstfit`` (``first-fit``, ``greedy``): any waiting job that fits starts.
- ``easy``: EASY backfilling; ``backfill:depth=K`` keeps ``K``
  reservations; ``backfill:depth=all`` is ``conservative``.
- ``conservative``: conservative backfilling.
- ``best-package`` (``bestpackage``, ``package``): subset-sum packing.
- ``easy-sjbf``: EASY with shortest-estimate-first backfilling
  (``easy:select=shortest``).
- ``mallmann``: Mallmann's backfilling family
  (:mod:`optsched.heuristics.rigid.mallmann`); ``strict-backfill`` is
  ``mallmann:variant=ff,fairness=2,reading=shadow``, the strict rule of
  Lifka et al. (a backfilled job ends before the head can start).
- ``nfdh``, ``ffdh``, ``nfih``, ``ffih``, ``ffdh-stack``, ``ffih-stack``,
  ``smart``: the batch framework (Shmoys, Wein, Williamson 1995) over that
  offline shelf algorithm (:mod:`optsched.heuristics.shelf.algorithms`);
  ``batch:inner=NAME[,OPTION=VALUE...]`` is the same, and its canonical
  spec is the plain name (``batch:inner=smart,order=smith`` is
  ``smart:order=smith``).
- ``pc2``: the PC² scheduler (FCFS until the machine is full, then
  FFDH*/FFIH* levels; :mod:`optsched.heuristics.shelf.policies`).
- ``blocking``, ``fit``, ``fit2``, ``afkt-backfill``, ``optimistic`` with
  ``f=``/``g=`` base orders (``fifo``, ``spt``, ``lpt``, ``fid``,
  ``random``), ``placement=`` and ``seed=``, and the thesis's names
  ``fifo-fit``, ``lpt-back``, ``lpt-fifo-optim``, ...: Rassmann's
  combinators (:mod:`optsched.heuristics.topology.combinators`), run by the node
  simulator on flat machines and on machines with speeds or SMP nodes.

Parameters:

- ``order=NAME``: queue order (``fcfs``, ``spt``, ``lpt``, ``ssf``, ``lsf``,
  ``saf``, ``laf``, ``random``; ``sjf``/``ljf``/``fifo`` accepted).
- ``oracle``: the policy sees actual durations instead of estimates.
- ``seed=N``: seed of the random order (default: the simulation's seed).
- ``select=RULE`` (easy, backfill): ``queue``, ``submit``, ``largest``,
  ``largest-area``, ``smallest``, ``shortest``.
- ``maxwait=SECONDS``, ``maxidle=SHARE`` (with ``select=largest``): stop
  backfilling while the head has waited that long, or while more than that
  share of the machine is idle.
- ``depth=K|all`` (backfill): number of reservations.
- ``limit=N`` (best-package): jobs in the subset-sum search (default 128).
- ``variant=V`` (mallmann): ``ff``, ``fc``, ``bs``, ``bd``, ``bqd``,
  ``bc``, ``ws``, ``fc3``, ``bs3``; ``fairness=0|1|2``;
  ``reading=profile|shadow``; ``f=SHARE`` (maximum idle share);
  ``t=DURATION`` (maximum backfilling phase: seconds, or with a suffix
  ``s``, ``m``, ``h``, ``d``: ``8h``).
- ``inner=NAME`` (batch): the shelf algorithm.
- ``order=size|smith``, ``sequence=auto|class|smith``, ``fit=next|first``,
  ``weights=instance|one|size|area`` (smart, or batch with ``inner=smart``):
  SMART's order inside a height class, order of the shelves, shelf
  filling, and weights of the Smith orders.
- ``interactive=Q[+Q...]|none``, ``batch_share=F`` (pc2): SWF queue numbers
  of interactive jobs (default 0), and the share of batch jobs above which
  PC² plans with FFDH* (default 0.5).

Examples: ``easy``, ``easy:order=sjf``, ``conservative``,
``backfill:depth=3``, ``firstfit:order=lpt``, ``best-package``,
``easy:select=largest,maxwait=3600``, ``easy-sjbf``,
``mallmann:order=lsf,variant=bs,fairness=1``,
``mallmann:order=lsf,variant=bc,f=0.4``, ``strict-backfill``,
``spt:oracle``, ``random:seed=3``,
``ffdh``, ``smart:order=smith,fit=first``, ``batch:inner=ffih``,
``pc2:interactive=0+1,batch_share=0.6``.

Every :class:`~optsched.heuristics.rigid.policies.Policy` has a canonical
``spec``; ``parse_policy(policy.spec) == policy``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from optsched.heuristics.moldable.wrappers import MOLDABLE_NAMES, MoldablePolicy
from optsched.heuristics.preempt.policies import PREEMPTIVE_NAMES, Preemptive
from optsched.heuristics.rigid.mallmann import STRICT_BACKFILL, Mallmann
from optsched.heuristics.rigid.orders import ORDER_NAMES, canonical_order
from optsched.heuristics.rigid.orig import Orig
from optsched.heuristics.rigid.policies import (
    SELECT_NAMES,
    Backfill,
    BestPackage,
    Conservative,
    FirstFit,
    Policy,
    Strict,
)
from optsched.heuristics.shelf.algorithms import SHELF_NAMES, ShelfSpec
from optsched.heuristics.shelf.policies import PC2, Batch, pc2_interactive
from optsched.heuristics.topology.combinators import COMBINATOR_NAMES, Combinator

POLICY_NAMES: tuple[str, ...] = (
    *ORDER_NAMES,
    "firstfit",
    "easy",
    "conservative",
    "best-package",
    *SHELF_NAMES,
    "pc2",
)
"""The named policies of the family (each parses on its own and runs on
every instance). The preemptive ones (:data:`PREEMPTIVE_NAMES`: ``pbi``,
``psrs``) are listed apart: they build schedules in pieces, which the
pipeline compares with the preemptive optimum, and they refuse what their
algorithms do not cover."""

_ALIASES: dict[str, str] = {
    "fifo": "fcfs",
    "sjf": "spt",
    "ljf": "lpt",
    "first-fit": "firstfit",
    "greedy": "firstfit",
    "bestpackage": "best-package",
    "package": "best-package",
}
_GENERIC = ("strict", "backfill", "batch", "mallmann")
_PRESETS = ("easy-sjbf", "strict-backfill")
"""Names that fix some parameters of another policy (not plain aliases)."""
_COMMON = ("order", "oracle", "seed")
_PARAMS: dict[str, tuple[str, ...]] = {
    "strict": _COMMON,
    "firstfit": _COMMON,
    "easy": (*_COMMON, "select", "maxwait", "maxidle"),
    "backfill": (*_COMMON, "depth", "select", "maxwait", "maxidle"),
    "conservative": _COMMON,
    "best-package": (*_COMMON, "limit"),
    "easy-sjbf": _COMMON,
    "mallmann": (*_COMMON, "variant", "fairness", "reading", "f", "t"),
    "strict-backfill": _COMMON,
    **{name: ("oracle",) for name in SHELF_NAMES},
    "smart": ("order", "sequence", "fit", "weights", "oracle"),
    "batch": ("inner", "order", "sequence", "fit", "weights", "oracle"),
    "pc2": ("interactive", "batch_share", "oracle"),
}


def valid_names() -> str:
    """Every accepted policy name, for error messages and help."""
    return ", ".join(
        (
            *POLICY_NAMES,
            *PREEMPTIVE_NAMES,
            *MOLDABLE_NAMES,
            *COMBINATOR_NAMES,
            "orig",
            *_GENERIC,
            *_PRESETS,
            *_ALIASES,
        )
    )


def split_policy_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs (``--policies``) into specs.

    Policies are separated by commas, but a spec's own parameters are
    comma-separated too (``easy:order=spt,oracle``): a piece without ``:``
    that looks like a parameter (has ``=`` or is ``oracle``) continues the
    previous spec when that spec has parameters. Empty pieces are dropped.
    Every command that takes several policies splits them here.
    """
    out: list[str] = []
    for piece in text.split(","):
        bare = piece.strip()
        if not bare:
            continue
        is_param = ("=" in bare and ":" not in bare) or bare.lower() == "oracle"
        if out and is_param and ":" in out[-1]:
            out[-1] += "," + bare
        else:
            out.append(bare)
    return out


def parse_policy(spec: str | Policy) -> Policy:
    """The policy a spec names (a :class:`Policy` is returned as is).

    Raises
    ------
    ValueError
        One line naming the problem and the valid choices.
    """
    if isinstance(spec, Policy):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty policy spec; valid names: {valid_names()}")
    text = spec.strip()
    raw_name, _, raw_params = text.partition(":")
    name = raw_name.strip().lower()
    if name in COMBINATOR_NAMES:
        return _build_combinator(text)
    name = _ALIASES.get(name, name)
    fixed_order: str | None = None
    if name in ORDER_NAMES:
        fixed_order, name = name, "strict"
    if name in PREEMPTIVE_NAMES:
        return _build_preemptive(text, name, raw_params)
    if name in MOLDABLE_NAMES:
        return _build_moldable(text, name, raw_params)
    if name == "orig":
        return Orig(algorithm=text.lower())
    if name not in _PARAMS:
        raise ValueError(
            f"unknown policy {raw_name.strip()!r}; valid names: {valid_names()}"
        )
    params = _split_params(text, raw_params, _PARAMS[name])
    if fixed_order is not None:
        if "order" in params:
            raise ValueError(
                f"policy {text!r}: the name {fixed_order!r} fixes the order; "
                "use strict:order=NAME"
            )
        params["order"] = fixed_order
    try:
        return _build(name, params)
    except ValueError as error:
        raise ValueError(f"policy {text!r}: {error}") from None


def _split_params(text: str, raw: str, allowed: tuple[str, ...]) -> dict[str, str]:
    params: dict[str, str] = {}
    if not raw.strip():
        return params
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        value = value.strip()
        if not key:
            raise ValueError(f"policy {text!r}: empty parameter")
        if key not in allowed:
            raise ValueError(
                f"policy {text!r}: unknown parameter {key!r}; "
                f"valid: {', '.join(allowed)}"
            )
        if key in params:
            raise ValueError(f"policy {text!r}: parameter {key!r} given twice")
        if not sep and key != "oracle":
            raise ValueError(
                f"policy {text!r}: parameter {key!r} needs a value ({key}=...)"
            )
        params[key] = value if sep else "true"
    return params


def _build(name: str, params: dict[str, str]) -> Policy:
    if name in SHELF_NAMES or name in ("batch", "pc2"):
        return _build_shelf(name, params)
    common: dict[str, Any] = {
        "order": canonical_order(params.get("order", "fcfs")),
        "oracle": _flag("oracle", params.get("oracle", "false")),
        "seed": _optional(params, "seed", _integer),
    }
    if name == "strict":
        return Strict(**common)
    if name == "firstfit":
        return FirstFit(**common)
    if name == "conservative":
        return Conservative(**common)
    if name == "best-package":
        return BestPackage(
            **common, limit=_integer("limit", params.get("limit", "128"))
        )
    if name == "easy-sjbf":
        return Backfill(**common, select="shortest")
    if name in ("mallmann", "strict-backfill"):
        return _build_mallmann(name, common, params)
    depth_text = params.get("depth", "1")
    if name == "backfill" and depth_text.lower() in ("all", "inf", "infinite"):
        if any(k in params for k in ("select", "maxwait", "maxidle")):
            raise ValueError("select, maxwait and maxidle need a finite depth")
        return Conservative(**common)
    return Backfill(
        **common,
        depth=_integer("depth", depth_text),
        select=_select(params.get("select", "queue")),
        maxwait=_optional(params, "maxwait", _integer),
        maxidle=_optional(params, "maxidle", _share),
    )


def _build_mallmann(
    name: str, common: dict[str, Any], params: dict[str, str]
) -> Policy:
    if name == "strict-backfill":
        variant, fairness, reading = STRICT_BACKFILL
        return Mallmann(**common, variant=variant, fairness=fairness, reading=reading)
    return Mallmann(
        **common,
        variant=params.get("variant", "ff").lower(),
        fairness=_integer("fairness", params.get("fairness", "0")),
        reading=params.get("reading", "profile").lower(),
        f=_optional(params, "f", _share),
        t=_optional(params, "t", _seconds),
    )


def _build_preemptive(text: str, name: str, raw: str) -> Policy:
    # The algorithm checks its own options; the spec is made canonical
    # (spaces around options dropped, options sorted) so that equal specs
    # compare equal. Values keep their case: gang's classes=FILE is a path.
    options = sorted(
        "=".join(x.strip() for x in part.partition("=")[::2]) if "=" in part
        else part.strip()
        for part in raw.split(",")
        if part.strip()
    )  # fmt: skip
    algorithm = name + (":" + ",".join(options) if options else "")
    try:
        return Preemptive(algorithm=algorithm)
    except ValueError as error:
        raise ValueError(f"policy {text!r}: {error}") from None


def _build_moldable(text: str, name: str, raw: str) -> Policy:
    # As _build_preemptive, but the options keep their order: rescale's
    # inner scheduler spec is itself a list of options.
    options = [part.strip() for part in raw.split(",") if part.strip()]
    algorithm = name + (":" + ",".join(options) if options else "")
    try:
        if name == "rescale":
            from optsched.heuristics.moldable.rescaling import (
                parse_rescale,
                rescale_spec,
            )

            # Canonical: every option written, in one order.
            algorithm = rescale_spec(**parse_rescale(algorithm))  # type: ignore[arg-type]
        return MoldablePolicy(algorithm=algorithm)
    except ValueError as error:
        raise ValueError(f"policy {text!r}: {error}") from None


def _build_combinator(text: str) -> Policy:
    # Rassmann's combinators (optsched.heuristics.topology.combinators); an alias
    # becomes its canonical spec.
    try:
        return Combinator(algorithm=text)
    except ValueError as error:
        message = str(error)
        if message.startswith("policy "):
            raise
        raise ValueError(f"policy {text!r}: {message}") from None


def _build_shelf(name: str, params: dict[str, str]) -> Policy:
    oracle = _flag("oracle", params.pop("oracle", "false"))
    if name == "pc2":
        return PC2(
            oracle=oracle,
            interactive=pc2_interactive(params.get("interactive", "0")),
            batch_share=_share("batch_share", params.get("batch_share", "0.5")),
        )
    inner = params.pop("inner", "ffdh") if name == "batch" else name
    options = {key: value.lower() for key, value in params.items()}
    return Batch(oracle=oracle, inner=ShelfSpec.parse(inner.lower(), **options))


def _optional(
    params: dict[str, str], key: str, convert: Callable[[str, str], Any]
) -> Any:
    return convert(key, params[key]) if key in params else None


def _integer(key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {value!r}") from None
    return number


def _share(key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{key} must be a number in [0, 1], got {value!r}") from None
    return number


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _seconds(key: str, value: str) -> int:
    """A duration: integer seconds, or an integer with a unit suffix
    ``s``, ``m``, ``h`` or ``d`` (``8h`` is 28800)."""
    text = value.strip().lower()
    unit = _UNITS.get(text[-1:])
    number = text[:-1] if unit is not None else text
    try:
        amount = int(number)
    except ValueError:
        raise ValueError(
            f"{key} must be whole seconds or a number with s, m, h or d, got {value!r}"
        ) from None
    return amount * (unit or 1)


def _flag(key: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"{key} must be true or false, got {value!r}")


def _select(value: str) -> str:
    lowered = value.lower()
    if lowered not in SELECT_NAMES:
        raise ValueError(f"unknown select {value!r}; valid: {', '.join(SELECT_NAMES)}")
    return lowered
