"""EASY backfilling that tries the smallest waiting jobs first.

Written against optsched's public policy protocol: a plain class with a
``select(view)`` method (see ``optsched.heuristics.plugins``).
"""


class SmallestFirstBackfill:
    """EASY backfilling; backfill candidates are tried smallest first."""

    name = "easy-smallest"

    def select(self, view):
        waiting = list(view.waiting)
        while waiting and view.fits(waiting[0].id):  # heads start while they fit
            yield waiting.pop(0).id
        if not waiting:
            return
        head = waiting.pop(0)
        # The head's reservation: the shadow time, and the processors left
        # over then, which a backfilled job may hold past it.
        shadow = view.earliest_start(head.size, head.estimate)
        if shadow is None:
            return
        freed = sum(
            r.size for r in view.running if max(r.expected_end, view.now) <= shadow
        )
        spare = view.free + freed - head.size
        for job in sorted(waiting, key=lambda j: (j.size, j.submit, j.id)):
            ends_in_time = view.now + job.estimate <= shadow
            if (ends_in_time or job.size <= spare) and view.fits(job.id):
                if not ends_in_time:
                    spare -= job.size
                yield job.id
