"""One broken rule of the checker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule, naming the job, the time and the processors involved."""

    kind: str
    message: str
    job: int | None = None
    time: int | None = None
    processors: Sequence[int] = ()

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"
