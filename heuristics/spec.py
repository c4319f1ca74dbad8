"""Policy specs: short strings naming a policy on the command line.

Grammar::

    spec   := name [":" param ("," param)*]
    param  := key "=" value | flag

Whitespace around the name, keys and values is ignored; names and keys are
read in lower case, values as written (each family lowers the values that
are names). An empty parameter (``easy:order=spt,``), a key given twice,
a key the policy does not take and a key without its value are refused
by :func:`split_spec` and :meth:`SpecParts.check`, for every family in one
style, naming the spec and the valid keys::

    policy 'easy:foo=1': unknown parameter 'foo'; valid: order, oracle, ...
    policy 'easy:order': parameter 'order' needs a value (order=...)
    policy 'gang:quantum=4,quantum=5': parameter 'quantum' given twice

A *flag* is a key a family lets stand alone: ``oracle`` (the engine's and
the shelf policies), ``repair`` (``orig``).

Families
--------
Each family of policies describes itself in a :class:`Family` record, in its
own room: the names it answers to and the parser that turns the tokens of a
spec (:class:`SpecParts`) into its policy with typed options. This module
knows only where the records are (:data:`FAMILIES`, ``"module:attribute"``
strings imported on first use, as :func:`optsched.families.load` does for
the feature table), so it imports no family: the families import it for
the tokenizer, and no import cycle arises. A new family adds its record and
one line to :data:`FAMILIES`.

A family declares its options once, in an :class:`Options` table of
:class:`Option` records (key, typed reader, default, writer, flag, in
canonical order): its parser reads a spec's tokens with
:meth:`Options.read` and its policies write their canonical ``spec`` with
:meth:`Options.spec`, so the two cannot drift apart (the engine's rigid
policies, Mallmann's, the shelf algorithms, PC², the mode-choosing
policies and rescaling do; the other standalone algorithms keep the spec
their parser normalised). The canonical specs are store identities:
``tests/core/test_spec_canonical.py`` pins them.

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
- ``pbi``, ``psrs``, ``gang``: preemptive policies
  (:mod:`optsched.heuristics.preempt.policies`); ``rescale``,
  ``adaptive``, ``easy-scaling``, ``deq``: policies that choose processor
  counts (:mod:`optsched.heuristics.moldable.wrappers`); ``orig``: the
  trace's recorded schedule (:mod:`optsched.heuristics.rigid.orig`).

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

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from optsched.families import load

if TYPE_CHECKING:
    from optsched.heuristics.rigid.policies import Policy

__all__ = [
    "FAMILIES",
    "Family",
    "Option",
    "Options",
    "SpecError",
    "SpecParts",
    "boolean",
    "families",
    "integer",
    "join_spec",
    "optional",
    "parse_policy",
    "seconds",
    "share",
    "spec_name",
    "split_policy_specs",
    "split_spec",
    "text",
    "valid_names",
    "write_float",
]


# --------------------------------------------------------------------------
# The tokenizer
# --------------------------------------------------------------------------


class SpecError(ValueError):
    """A spec refused: ``"{noun} '{text}': {reason}"``, one line.

    ``text`` is the spec as written, so that a caller can tell its own spec
    from an inner one (rescaling's inner scheduler) named in ``reason``.
    """

    def __init__(self, text: str, reason: str, noun: str = "policy") -> None:
        super().__init__(f"{noun} {text!r}: {reason}")
        self.text = text
        self.reason = reason
        self.noun = noun

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep the error picklable (process pools) despite its signature.
        return (type(self), (self.text, self.reason, self.noun))


@dataclass(frozen=True)
class SpecParts:
    """The tokens of one spec (:func:`split_spec`).

    Attributes
    ----------
    text
        The spec as written, stripped: every error names it.
    name
        The name, stripped and in lower case.
    params
        Each key (lower case) to its value (stripped, case kept), ``None``
        for a key written alone (a flag), in the order written.
    noun
        What the spec names, for the errors (``policy``, ``shelf
        algorithm``).
    """

    text: str
    name: str
    params: Mapping[str, str | None] = field(default_factory=dict)
    noun: str = "policy"

    def error(self, reason: str) -> SpecError:
        """The error naming this spec (to raise)."""
        return SpecError(self.text, reason, self.noun)

    def check(self, keys: Sequence[str], flags: Collection[str] = ()) -> None:
        """Refuse a key not in ``keys`` and a key without a value (only
        ``flags`` may stand alone); ``keys`` are listed in that order."""
        for key in self.params:
            if key not in keys:
                valid = ", ".join(keys) or "none"
                raise self.error(f"unknown parameter {key!r}; valid: {valid}")
        for key, value in self.params.items():
            if value is None and key not in flags:
                raise self.error(f"parameter {key!r} needs a value ({key}=...)")

    def options(self) -> dict[str, str]:
        """Each key to its value, ``"true"`` for a flag."""
        return {k: "true" if v is None else v for k, v in self.params.items()}

    def with_options(self, extra: Mapping[str, str]) -> SpecParts:
        """These tokens and ``extra`` (options passed beside the text),
        which must not repeat a key."""
        params = dict(self.params)
        for key, value in extra.items():
            if key in params:
                raise self.error(f"parameter {key!r} given twice")
            params[key] = str(value).strip()
        return SpecParts(self.text, self.name, params, self.noun)


def spec_name(text: str) -> str:
    """The name of a spec, stripped and in lower case (no check)."""
    return text.partition(":")[0].strip().lower()


def split_spec(text: str | SpecParts, noun: str = "policy") -> SpecParts:
    """The tokens of ``name[:key=value,...]`` (module docstring).

    Tokens are passed through, so that a parser takes a spec or its tokens.

    Raises
    ------
    SpecError
        An empty parameter or a key given twice.
    """
    if isinstance(text, SpecParts):
        return text
    written = text.strip()
    raw = written.partition(":")[2]
    parts = SpecParts(written, spec_name(written), {}, noun)
    params: dict[str, str | None] = {}
    if raw.strip():
        for item in raw.split(","):
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not key:
                raise parts.error("empty parameter")
            if key in params:
                raise parts.error(f"parameter {key!r} given twice")
            params[key] = value.strip() if sep else None
    return SpecParts(written, parts.name, params, noun)


def join_spec(name: str, items: Iterable[str]) -> str:
    """``name`` or ``name:item,item,...``: the form of every canonical spec."""
    text = ",".join(items)
    return f"{name}:{text}" if text else name


# --------------------------------------------------------------------------
# Typed values (messages name the key; the caller adds the spec)
# --------------------------------------------------------------------------


def integer(key: str, value: str, least: int | None = None) -> int:
    """``value`` as an integer (at least ``least``, if given)."""
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {value!r}") from None
    if least is not None and number < least:
        raise ValueError(f"{key} must be >= {least}, got {number}")
    return number


def share(key: str, value: str) -> float:
    """``value`` as a number (the policy checks that it lies in [0, 1])."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{key} must be a number in [0, 1], got {value!r}") from None
    return number


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(key: str, value: str) -> int:
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


def boolean(key: str, value: str) -> bool:
    """``true``/``1``/``yes``/``on`` or ``false``/``0``/``no``/``off``."""
    lowered = value.lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"{key} must be true or false, got {value!r}")


def optional(
    params: Mapping[str, str], key: str, convert: Callable[[str, str], Any]
) -> Any:
    """``convert(key, value)`` if ``key`` was given, else ``None``."""
    return convert(key, params[key]) if key in params else None


# --------------------------------------------------------------------------
# Option declarations: parsing and the canonical spec from one table
# --------------------------------------------------------------------------


def text(key: str, value: str) -> str:
    """``value`` in lower case (a name: an order, a variant, a rule)."""
    return value.lower()


@dataclass(frozen=True)
class Option:
    """One option of a family: its key, how a spec reads and writes it.

    Attributes
    ----------
    key
        The spec key (lower case).
    read
        ``read(key, value)``: the typed value of the text (``ValueError``
        naming the key on a bad one).
    default
        The value when the key is absent; a value equal to it is left out
        of the canonical spec.
    write
        The text of a value in the canonical spec (``str``; floats are
        written ``str(float(v))`` so that ``1`` and ``1.0`` write alike).
    attribute
        The policy's field holding the value (default: ``key``).
    flag
        A boolean written alone (``oracle``) when true, and which a spec
        may give alone.
    always
        Written even at its default (rescaling's spec names its search,
        budget, inner scheduler and seed in every case); ``None`` is never
        written.
    """

    key: str
    read: Callable[[str, str], Any] = text
    default: Any = None
    write: Callable[[Any], str] = str
    attribute: str = ""
    flag: bool = False
    always: bool = False

    @property
    def field(self) -> str:
        """The policy's field of this option."""
        return self.attribute or self.key

    def item(self, value: Any) -> str | None:
        """This option's canonical text for ``value`` (``None``: left out)."""
        if value is None or (value == self.default and not self.always):
            return None
        return self.key if self.flag else f"{self.key}={self.write(value)}"


def write_float(value: float) -> str:
    """A number written as a float (``1`` as ``1.0``): the canonical form."""
    return str(float(value))


@dataclass(frozen=True)
class Options:
    """A family's options, declared once, in their canonical order.

    Both directions come from the declaration: :meth:`read` turns the tokens
    of a spec into the policy's keyword arguments (each given key read by
    its :class:`Option`, each absent one at its default), :meth:`spec`
    writes a policy's canonical spec (the options that differ from their
    default, in declaration order, flags alone). So ``parse(p.spec) == p``
    holds as long as each option reads back what it writes.
    """

    options: tuple[Option, ...]

    def __getitem__(self, key: str) -> Option:
        for option in self.options:
            if option.key == key:
                return option
        raise KeyError(key)

    def check(self, parts: SpecParts, keys: Sequence[str]) -> None:
        """:meth:`SpecParts.check` with ``keys`` (listed in that order in the
        error) and this family's flags."""
        flags = [option.key for option in self.options if option.flag]
        parts.check(keys, flags=flags)

    def read(
        self, parts: SpecParts, keys: Sequence[str], **fixed: Any
    ) -> dict[str, Any]:
        """The keyword arguments of the options ``keys`` from a spec's
        tokens (checked: :meth:`check`), ``fixed`` ones added as given."""
        self.check(parts, keys)
        params = parts.options()
        values: dict[str, Any] = {}
        for key in keys:
            option = self[key]
            given = params.get(key)
            values[option.field] = (
                option.default if given is None else option.read(key, given)
            )
        values.update(fixed)
        return values

    def items(self, policy: Any, keys: Collection[str]) -> list[str]:
        """The canonical items of ``policy``'s options ``keys`` (declaration
        order, defaults left out)."""
        fields = [self[key].field for key in keys]
        return self.written({field: getattr(policy, field) for field in fields})

    def written(self, values: Mapping[str, Any]) -> list[str]:
        """The canonical items of the options ``values`` holds (by field
        name), in declaration order, defaults left out."""
        return [
            item
            for option in self.options
            if option.field in values
            and (item := option.item(values[option.field])) is not None
        ]

    def spec(self, name: str, policy: Any, keys: Collection[str]) -> str:
        """The canonical spec ``name[:items]`` of ``policy``'s options ``keys``."""
        return join_spec(name, self.items(policy, keys))


# --------------------------------------------------------------------------
# The family table
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """A family of policies as the spec parser sees it.

    Attributes
    ----------
    parse
        Its policy from the tokens of a spec naming it (``ValueError`` on a
        bad one; an error that is no :class:`SpecError` of that spec gets
        the spec's name in front).
    names
        Its policies' own names (listed first in :func:`valid_names`).
    generic
        Names of general forms that other names are cases of (``strict``,
        ``backfill``, ``batch``, ``mallmann``).
    presets
        Names that fix some parameters of another policy (not plain
        aliases).
    aliases
        Other spellings of its names.
    """

    parse: Callable[[SpecParts], Policy]
    names: tuple[str, ...] = ()
    generic: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


FAMILIES: tuple[str, ...] = (
    "optsched.heuristics.rigid.policies:FAMILY",
    "optsched.heuristics.shelf.policies:FAMILY",
    "optsched.heuristics.preempt.policies:FAMILY",
    "optsched.heuristics.moldable.wrappers:FAMILY",
    "optsched.heuristics.topology.combinators:FAMILY",
    "optsched.heuristics.rigid.orig:FAMILY",
    "optsched.heuristics.rigid.mallmann:FAMILY",
    "optsched.heuristics.rigid.replay:FAMILY",
)
"""Where each family's :class:`Family` record is, in the order their names
are listed (imported on first use: see the module docstring)."""

_TIERS = ("names", "generic", "presets", "aliases")


@cache
def families() -> tuple[Family, ...]:
    """The records of :data:`FAMILIES`, imported."""
    return tuple(cast(Family, load(target)) for target in FAMILIES)


@cache
def _family_of() -> dict[str, Family]:
    table: dict[str, Family] = {}
    for family in families():
        for tier in _TIERS:
            for name in getattr(family, tier):
                # Two families answering to one name is a programming error.
                if name in table:
                    raise RuntimeError(f"policy name {name!r} registered twice")
                table[name] = family
    return table


def valid_names() -> str:
    """Every accepted policy name, for error messages and help: every
    family's names, then the generic names, the presets, the aliases."""
    return ", ".join(
        name
        for tier in _TIERS
        for family in families()
        for name in getattr(family, tier)
    )


@cache
def _policy_class() -> type:
    return cast(type, load("optsched.heuristics.rigid.policies:Policy"))


def parse_policy(spec: str | Policy) -> Policy:
    """The policy a spec names (a :class:`Policy` is returned as is).

    A name that no family answers to may be a plug-in
    (``module.path:Class[:key=value,...]``, ``file.py:Class[:...]`` or an
    entry-point name: :mod:`optsched.heuristics.plugins`); an object with a
    ``select(view)`` method is run as a plug-in too.

    Raises
    ------
    ValueError
        One line naming the problem and the valid choices.
    """
    if isinstance(spec, _policy_class()):
        return cast("Policy", spec)
    if not isinstance(spec, str) and callable(getattr(spec, "select", None)):
        wrap = load("optsched.heuristics.plugins.policy:object_policy")
        return cast("Policy", wrap(spec))
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty policy spec; valid names: {valid_names()}")
    text = spec.strip()
    family = _family_of().get(spec_name(text))
    if family is None:
        return _plugin(text)
    parts = split_spec(text)
    try:
        return family.parse(parts)
    except SpecError as error:
        if error.text == parts.text:
            raise
        raise parts.error(str(error)) from None
    except ValueError as error:
        raise parts.error(str(error)) from None


def _plugin(text: str) -> Policy:
    """The plug-in ``text`` names (:mod:`optsched.heuristics.plugins`), or
    the unknown-name error."""
    found = load("optsched.heuristics.plugins.policy:registered")(text)
    if found is not None:
        return cast("Policy", found)
    parts = load("optsched.heuristics.plugins.loader:plugin_parts")(text)
    if parts is None:
        written = text.partition(":")[0].strip()
        raise ValueError(
            f"unknown policy {written!r}; valid names: {valid_names()}, or a "
            "plug-in module.path:Class or file.py:Class"
        )
    make = load("optsched.heuristics.plugins.policy:plugin_policy")
    return cast("Policy", make(text, *parts))


_PARAMETER = re.compile(r"[a-z_][\w-]*\s*=", re.IGNORECASE)
"""A piece that opens with ``key=``: a parameter, whatever its value holds
(``inner=offline:ffdh``)."""

FLAGS = ("oracle", "repair")
"""The keys some family lets stand alone (:meth:`SpecParts.check`)."""


def split_policy_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs (``--policies``) into specs.

    Policies are separated by commas, but a spec's own parameters are
    comma-separated too (``easy:order=spt,oracle``): a piece that is a
    parameter continues the previous spec when that spec has parameters.
    A parameter is ``key=value`` with a plain key (letters, digits, ``_``,
    ``-``), whatever the value holds (``rescale:search=hc,inner=offline:ffdh``
    is one spec), or a flag of :data:`FLAGS`. Any other piece starts a spec:
    a name (``fcfs``), a spec with parameters (``easy:order=spt``), a
    plug-in (``mypkg.mod:MyPolicy:k=1``, whose key holds ``.`` and ``:``).
    Empty pieces are dropped. Every command that takes several policies
    splits them here, so that a spec means the same in a list as alone.
    """
    out: list[str] = []
    for piece in text.split(","):
        bare = piece.strip()
        if not bare:
            continue
        is_param = bool(_PARAMETER.match(bare)) or bare.lower() in FLAGS
        if out and is_param and ":" in out[-1]:
            out[-1] += "," + bare
        else:
            out.append(bare)
    return out
