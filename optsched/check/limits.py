"""Rule 14 of the checker: NQS's per-user limit.

14. On a machine whose calendar has a :attr:`user_limit
    <optsched.calendar.Calendar.user_limit>` ``L``, every run of a job
    (lost attempts included) charges ``size x requested time`` to its user
    (a moldable job's run: its processors times the requested time of the
    mode they name, rule 8; a waiting job's charge below is its request's).
    A user's account holds the charges of its runs started after the last
    instant at which another user's job started (exclusive). At an instant
    ``t`` at which user ``u``'s jobs start, if ``u``'s account before ``t``
    plus all of ``u``'s charges at ``t`` exceeds ``L``, then no job of
    another user ``w`` may be waiting at ``t`` whose own start would have
    kept ``w`` within the limit (``w``'s account before ``t`` plus all of
    ``w``'s charges at ``t`` plus its charge at most ``L``). A job waits at
    ``t`` when it was released (its submit time, or its predecessor's end
    plus the think time) at or before ``t``, does not start at ``t``, and
    neither has its complete run started nor does one of its lost attempts
    run at ``t``, except a successor released at the very instant at which
    its predecessor's complete run started (a run of 0 s, think time 0):
    its release follows a start of ``t``, so it waits from ``t`` on but not
    at ``t``.

Why that exception: the job exists only once a start of ``t`` was made, and
that start may be the very one over the limit (a user's 0 s job whose
successor belongs to another user): counting it as waiting at ``t`` would
ask a scheduler to refuse a start for a job that only this start releases.
The simulator sees such a successor in a second pass of the instant
(:mod:`optsched.heuristics.engine.core`) and holds the later starts of
``t`` to the limit for it; the rule asks for no more.

The rule is judged on whole instants: which of two starts at one instant
came first is not in a schedule, so the charges of an instant are taken all
together, the strictest reading (the simulator, which starts jobs one after
another, meets it: :mod:`optsched.heuristics.site.user_limit`). Like
:mod:`optsched.check`, this module imports nothing from the producers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from optsched.check.violation import Violation
from optsched.families import feature
from optsched.instance import Instance, Job
from optsched.schedule import Placement, Schedule


def _check_user_limit(instance: Instance, schedule: Schedule) -> list[Violation]:
    """Rule 14's violations (:class:`optsched.check.Violation`)."""
    calendar = instance.machine.calendar
    assert calendar is not None and calendar.user_limit is not None
    limit = calendar.user_limit
    jobs = [j for j in instance.jobs if j.user is not None]
    cost = {job.id: job.size * job.requested for job in jobs}  # if waiting
    user: dict[int, int] = {}
    for job in jobs:
        assert job.user is not None
        user[job.id] = job.user
    starts: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for job in jobs:  # instant -> (job id, charge) of the runs starting then
        for run in _placements(job, schedule):
            starts[run.start].append((job.id, _charge(job, run)))
    waits = _waiting_spans(instance, schedule, jobs)
    users = set(user.values())
    account: dict[int, int] = {}
    out: list[Violation] = []
    for t in sorted(starts):
        charged: dict[int, int] = defaultdict(int)
        for jid, charge in starts[t]:
            charged[user[jid]] += charge
        total = {u: account.get(u, 0) + c for u, c in charged.items()}
        for u in sorted(charged):
            if total[u] <= limit:
                continue
            spent = {w: account.get(w, 0) + charged.get(w, 0) for w in users}
            blocker = _startable_waiter(t, u, waits, spent, cost, user, limit)
            if blocker is not None:
                out.append(
                    Violation(
                        "user-limit",
                        f"user {u} starts jobs at {t} with {total[u]} "
                        f"processor-seconds charged, above the limit {limit}, "
                        f"while job {blocker} of user {user[blocker]} waits",
                        job=min(j for j, _ in starts[t] if user[j] == u),
                        time=t,
                    )
                )
        if len(charged) == 1:
            ((u, c),) = charged.items()
            account = {u: account.get(u, 0) + c}
        else:
            account = {}
    return out


def _placements(job: Job, schedule: Schedule) -> list[Placement]:
    """Every run of ``job``: lost attempts, then the complete one."""
    runs = list(schedule.lost.get(job.id, ()))
    final = schedule.placements.get(job.id)
    if final is not None:
        runs.append(final)
    return runs


def _runs(job: Job, schedule: Schedule) -> list[tuple[int, int]]:
    """``(start, end)`` of every run of ``job``: lost attempts, then the
    complete one."""
    return [(run.start, run.end) for run in _placements(job, schedule)]


def _charge(job: Job, run: Placement) -> int:
    """What ``run`` charges: size x requested time of the mode its
    processors name (a rigid job, or a count that names no mode, which
    rule 8 reports: the request)."""
    mode = job.mode(len(run.processors)) if job.modes and run.processors else None
    if mode is None:
        return job.size * job.requested
    return mode.processors * mode.requested


def _waiting_spans(
    instance: Instance, schedule: Schedule, jobs: list[Job]
) -> dict[int, list[tuple[int, int]]]:
    """Per job, the half-open spans ``[a, b)`` in which it waits."""
    from optsched.site.chains import chain_graph

    released = {job.id: job.release for job in jobs}
    started_then: dict[int, set[int]] = {}  # successor -> its predecessor's start
    graph = chain_graph(instance.jobs).graph
    for before, after, data in graph.edges(data=True):
        first = schedule.placements.get(before)
        if after in released and first is not None:
            released[after] = max(released[after], first.end + data["think_time"])
            started_then.setdefault(after, set()).add(first.start)
    spans: dict[int, list[tuple[int, int]]] = {}
    for job in jobs:
        since = released[job.id]
        if since in started_then.get(job.id, ()):
            since += 1  # released inside instant ``since`` (rule 14's exception)
        mine = []
        for start, end in _runs(job, schedule):
            if start > since:
                mine.append((since, start))
            since = max(since, end)
        spans[job.id] = mine
    return spans


def _startable_waiter(
    t: int,
    u: int,
    waits: dict[int, list[tuple[int, int]]],
    spent: dict[int, int],
    cost: dict[int, int],
    user: dict[int, int],
    limit: int,
) -> int | None:
    """A job of another user waiting at ``t`` that its user's account
    (``spent``, this instant's charges included) would let start, or
    ``None``."""
    for jid, spans in waits.items():
        w = user[jid]
        if w == u:
            continue
        if spent[w] + cost[jid] > limit:
            continue
        if any(a <= t < b for a, b in spans):
            return jid
    return None


def rule(
    instance: Instance, schedule: Schedule, rest: Callable[..., list[Violation]]
) -> list[Violation]:
    """Rule 14, then ``rest`` on the calendar without its user limit."""
    bare = feature("user-limit").relax(instance)  # type: ignore[misc]
    return _check_user_limit(instance, schedule) + rest(bare, schedule)
