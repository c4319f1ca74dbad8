"""Co-reservation request workloads R1-R3 and the §6.8 variants of Meltzer's study.

Generators (Meltzer 2005, §6.3; seed002 §4.3)
    Every job of BM0's workload becomes a template with probability
    ``p = 1/10``. With ``wc`` its wallclock limit (the estimate; the run
    time when the estimate is 0), ``cpus`` its size and ``u`` uniform in
    ``[0, 1)``:

    .. math::

        dauer &= wc \\\\
        res &= [cpus, \\min(cap, round(0.7\\,cpus + 0.6\\,u\\,cpus))] \\\\
        f_{start} &= \\lfloor u \\, t_{stop} \\rfloor \\\\
        deadline &= f_{start} + dauer + \\min(86400, c\\,wc),
            \\quad c = 6 \\text{ (R1, R2)}, 3 \\text{ (R3)} \\\\
        submit &= \\max(0, f_{start} - 3\\,wc) \\text{ (R1)}, \\quad
            \\max(0, \\lfloor f_{start} - wc/2 \\rfloor) \\text{ (R2, R3)}

    Rounding: ``round`` is half up (``floor(x + 1/2)``); every derived time
    is rounded down to whole seconds, so ``f_start < t_stop`` and R2/R3's
    advance booking is at least ``wc / 2``. The thesis uses one symbol for
    the random number of ``res`` and of ``f_start``: ``draws=1`` uses one
    ``u`` for both, ``draws=2`` two independent ones (``u`` for ``res``,
    ``v`` for ``f_start``).

Random numbers
    ``numpy.random.default_rng(seed)``: first one ``random()`` per job, in
    ``(release, id)`` order (the job is a template when it is ``< p``);
    then, per template in that order, ``draws`` numbers. A job whose ``wc``
    is 0 cannot give a duration and never becomes a template (its draw is
    still consumed, so the other requests do not change).

Ids
    ``0 ..`` in submit order (ties by ``f_start``, then template order).

§6.8 variants (Table 16)
    From R1: ``f_start``, duration and parts are kept; the span becomes 6 h
    (``deadline = f_start + dauer + 21600``) and ``submit = max(0, f_start -
    30)``. The 3-part variant duplicates part 2 as part 3 and removes every
    third R1 request in id order: positions 2, 5, 8, ... (R1 ids 2, 5, 8,
    ... when they are ``0 ..``), so ``n - floor(n/3)`` remain. Ids are
    renumbered ``0 ..`` in the new submit order.

Reference: J. Meltzer, *Vergleich von Co-Reservierungs-Algorithmen in
Grid-Umgebungen*, Diplomarbeit, FU Berlin / ZIB (about 2005), §6.3, §6.8.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from optsched.coreserve.request import Request
from optsched.coreserve.workload import T_STOP, ClusterWorkload
from optsched.instance import Instance, Job

KINDS = ("R1", "R2", "R3")
DAY = 86400
SPAN_68 = 6 * 3600
SUBMIT_68 = 30


def wallclock(job: Job) -> int:
    """The template's ``wc``: its estimate, or its run time when the
    estimate is 0."""
    return job.estimate or job.runtime


def round_half_up(x: float) -> int:
    """``floor(x + 1/2)``."""
    return math.floor(x + 0.5)


def request_from_template(
    job: Job,
    kind: str,
    u_res: float,
    u_start: float,
    *,
    cap: int,
    t_stop: int = T_STOP,
    id: int = 0,
) -> Request:
    """One request of workload ``kind`` from one template job (formulas in
    the module docstring), ``u_res`` and ``u_start`` in ``[0, 1)``."""
    if kind not in KINDS:
        raise ValueError(
            f"unknown request workload {kind!r}; valid: {', '.join(KINDS)}"
        )
    wc = wallclock(job)
    if wc < 1:
        raise ValueError(f"job {job.id}: wallclock 0 gives no duration")
    cpus = job.size
    if cpus > cap:
        raise ValueError(f"job {job.id}: {cpus} CPUs exceed the cap {cap}")
    second = min(cap, round_half_up(0.7 * cpus + 0.6 * u_res * cpus))
    f_start = math.floor(u_start * t_stop)
    spread = 3 if kind == "R3" else 6
    deadline = f_start + wc + min(DAY, spread * wc)
    # f_start - wc/2 rounded down is f_start - ceil(wc/2).
    notice = 3 * wc if kind == "R1" else -(-wc // 2)
    submit = max(0, f_start - notice)
    return Request(submit, f_start, deadline, wc, (cpus, second), id)


def generate_requests(
    template_jobs: ClusterWorkload | Instance | Iterable[Job],
    kind: str = "R1",
    *,
    seed: int,
    cap: int,
    probability: float = 0.1,
    t_stop: int = T_STOP,
    draws: int = 1,
) -> list[Request]:
    """The study's request workload ``kind`` (R1, R2, R3) from BM0's jobs.

    Parameters
    ----------
    template_jobs
        The jobs to draw templates from (BM0's workload).
    kind
        ``"R1"``, ``"R2"`` or ``"R3"``.
    seed
        Seed of ``numpy.random.default_rng``.
    cap
        Most CPUs of a part (the clusters' size; the study's 1160).
    probability
        Chance that a job becomes a template.
    t_stop
        Submit stop: ``f_start = floor(u * t_stop)``.
    draws
        1: one uniform number for ``res`` and ``f_start``; 2: two.

    Returns
    -------
    list[Request]
        Sorted by submit time, ids ``0 ..`` in that order.
    """
    if draws not in (1, 2):
        raise ValueError(f"draws {draws} must be 1 or 2")
    if not 0 <= probability <= 1:
        raise ValueError(f"probability {probability} must lie in [0, 1]")
    if kind not in KINDS:
        raise ValueError(
            f"unknown request workload {kind!r}; valid: {', '.join(KINDS)}"
        )
    jobs = _jobs(template_jobs)
    rng = np.random.default_rng(seed)
    chosen = rng.random(len(jobs)) < probability
    templates = [job for job, pick in zip(jobs, chosen, strict=True) if pick]
    numbers = rng.random((len(templates), draws))
    made = []
    for k, (job, u) in enumerate(zip(templates, numbers, strict=True)):
        if wallclock(job) < 1:
            continue
        u_res, u_start = float(u[0]), float(u[-1])
        made.append(
            (
                request_from_template(
                    job, kind, u_res, u_start, cap=cap, t_stop=t_stop
                ),
                k,
            )
        )
    made.sort(key=lambda rk: (rk[0].submit, rk[0].earliest_start, rk[1]))
    return [_with_id(r, i) for i, (r, _) in enumerate(made)]


def _jobs(source: ClusterWorkload | Instance | Iterable[Job]) -> list[Job]:
    if isinstance(source, ClusterWorkload):
        source = source.instance
    jobs = source.jobs if isinstance(source, Instance) else source
    return sorted(jobs, key=operator.attrgetter("release", "id"))


def _with_id(request: Request, id: int) -> Request:
    return Request(
        request.submit,
        request.earliest_start,
        request.deadline,
        request.duration,
        request.parts,
        id,
    )


def section68_requests(r1: Sequence[Request], parts: int = 2) -> list[Request]:
    """The §6.8 variants of R1: 6 h span, submitted 30 s before ``f_start``;
    ``parts=3`` duplicates part 2 and drops every third request in R1
    id order (positions 2, 5, 8, ...).

    Returns
    -------
    list[Request]
        Sorted by submit time (ties by R1 id), ids renumbered ``0 ..``.
    """
    if parts not in (2, 3):
        raise ValueError(f"parts {parts} must be 2 or 3")
    out = []
    for k, r in enumerate(sorted(r1, key=operator.attrgetter("id"))):
        if parts == 3 and k % 3 == 2:
            continue
        p = tuple(r.parts[:2]) + ((r.parts[1],) if parts == 3 else ())
        out.append(
            Request(
                max(0, r.earliest_start - SUBMIT_68),
                r.earliest_start,
                r.earliest_start + r.duration + SPAN_68,
                r.duration,
                p,
                r.id,
            )
        )
    out.sort(key=operator.attrgetter("submit", "id"))
    return [_with_id(r, i) for i, r in enumerate(out)]


def shift_requests(requests: Iterable[Request], offset: int) -> list[Request]:
    """The requests with submit, earliest start and deadline moved by
    ``offset`` seconds."""
    return [
        Request(
            r.submit + offset,
            r.earliest_start + offset,
            r.deadline + offset,
            r.duration,
            r.parts,
            r.id,
        )
        for r in requests
    ]


@dataclass(frozen=True)
class RequestReport:
    """Validation figures of a request workload (compare §6.3's R1 table:
    213 requests, about 1e9 CPU-s, span 60 000 +- 60 000 s, part size
    80 +- 120 CPUs, on 1160-CPU clusters). Standard deviations are the
    population ones (``ddof = 0``)."""

    count: int
    parts: int
    load: int
    span_mean: float
    span_std: float
    part_mean: float
    part_std: float
    advance_mean: float
    advance_std: float
    duration_mean: float
    duration_std: float

    def as_dict(self) -> dict[str, float | int]:
        """The figures, rounded for reports."""
        return {
            "count": self.count,
            "parts": self.parts,
            "load": self.load,
            "span_mean": round(self.span_mean, 1),
            "span_std": round(self.span_std, 1),
            "part_mean": round(self.part_mean, 2),
            "part_std": round(self.part_std, 2),
            "advance_mean": round(self.advance_mean, 1),
            "advance_std": round(self.advance_std, 1),
            "duration_mean": round(self.duration_mean, 1),
            "duration_std": round(self.duration_std, 1),
        }


def describe_requests(requests: Sequence[Request]) -> RequestReport:
    """Count, total load ``sum(sum(parts) * duration)`` (CPU-s), mean and
    std of the span, of the part sizes (over all parts), of the advance
    booking ``f_start - submit`` and of the duration."""
    if not requests:
        return RequestReport(0, 0, 0, *(0.0,) * 8)
    span = np.array([r.span for r in requests], dtype=float)
    sizes = np.array([q for r in requests for q in r.parts], dtype=float)
    advance = np.array([r.earliest_start - r.submit for r in requests], dtype=float)
    duration = np.array([r.duration for r in requests], dtype=float)
    return RequestReport(
        count=len(requests),
        parts=len(sizes),
        load=sum(r.area for r in requests),
        span_mean=float(span.mean()),
        span_std=float(span.std()),
        part_mean=float(sizes.mean()),
        part_std=float(sizes.std()),
        advance_mean=float(advance.mean()),
        advance_std=float(advance.std()),
        duration_mean=float(duration.mean()),
        duration_std=float(duration.std()),
    )
