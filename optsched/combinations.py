"""What combines with what: the combinations of features refused at input.

Every single feature of the family table (:data:`optsched.families.FEATURES`)
and every pair of them, with the two options of ``simulate``
(``kill-at-estimate``, ``migration``), either works end to end (``simulate``
with every policy that takes it, ``check``, ``bound`` with ``bounds-only``
and ``cpsat``, ``gap``) or is refused at input, before any work, in one
line. :data:`INPUT_REFUSALS` lists every such refusal, once; the
composition test (``tests/core/test_composition.py``) runs the whole matrix and
holds each refusal to its entry here, and the user guide's table ("What
combines with what", ``docs/guide/composition.md``) is
:func:`refusals_markdown`.

Each entry says whether its reason is one of the model (``model``: the
combination has no meaning as stated, e.g. a busy block given as a
processor count on processors of different speeds) or a capability not
built yet (``not built``), so that the table is honest about which is
which.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from optsched.families import FEATURES, SIMULATORS

__all__ = [
    "INPUT_REFUSALS",
    "InputRefusal",
    "refusal_for",
    "refusals_markdown",
    "simulators_markdown",
]

TOPOLOGY = ("speeds", "nodes")
"""The machine shapes whose run times depend on the processors."""


@dataclass(frozen=True)
class InputRefusal:
    """One refused combination: a shape with another feature.

    ``message`` is a fragment of the one-line refusal the user sees;
    ``kind`` is ``model`` or ``not built`` (module docstring).
    """

    shape: str
    other: str
    message: str
    kind: str


def _both(other: str, message: str, kind: str) -> tuple[InputRefusal, ...]:
    return tuple(InputRefusal(shape, other, message, kind) for shape in TOPOLOGY)


INPUT_REFUSALS: tuple[InputRefusal, ...] = (
    *_both("contiguous", "speeds and SMP nodes need allocation 'any'", "not built"),
    *_both("migration", "speeds and SMP nodes need allocation 'any'", "not built"),
    *_both(
        "busy-blocks",
        "machines with speeds or nodes take none",
        "model",
    ),
    *_both(
        "outages",
        "takes no busy blocks or outages (which processors a block holds "
        "would change run times)",
        "model",
    ),
    *_both("malleable", "malleable jobs are not supported", "not built"),
    *_both(
        "kill-at-estimate",
        "on a machine with speeds or SMP nodes jobs are never killed and never move",
        "not built",
    ),
    InputRefusal(
        "malleable",
        "kill-at-estimate",
        "--kill-at-estimate does not apply to malleable jobs",
        "model",
    ),
)
"""Every combination refused at input, each once (module docstring)."""


def refusal_for(features: Iterable[str]) -> InputRefusal | None:
    """The entry of :data:`INPUT_REFUSALS` that covers ``features`` (the
    first whose two features are both named), or ``None``."""
    named = set(features)
    for entry in INPUT_REFUSALS:
        if entry.shape in named and entry.other in named:
            return entry
    return None


def refusals_markdown() -> str:
    """:data:`INPUT_REFUSALS` as the Markdown table of the user guide."""
    rows = [
        "| combination | refused with | why |",
        "|---|---|---|",
    ]
    for entry in INPUT_REFUSALS:
        why = "the model" if entry.kind == "model" else "not built yet"
        rows.append(f"| {entry.shape} + {entry.other} | {entry.message} | {why} |")
    return "\n".join(rows) + "\n"


def simulators_markdown() -> str:
    """Which simulators follow each feature that some simulator refuses
    (the family table's ``simulators`` column), as the user guide's table:
    a policy whose simulator does not follow a feature the instance
    carries is refused in one line, while the other policies run."""
    names = [name for name, _ in SIMULATORS]
    rows = [
        "| feature | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for row in FEATURES:
        if row.simulators is None:
            continue
        cells = ("runs" if name in row.simulators else "refused" for name in names)
        rows.append(f"| {row.name} | " + " | ".join(cells) + " |")
    rows.append("")
    rows += [f"- `{name}`: {what}" for name, what in SIMULATORS]
    return "\n".join(rows) + "\n"
