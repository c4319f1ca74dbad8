"""Fair-share backfilling: the least-served user's jobs go first.

The tutorial's policy (docs/guide/your-policy.md), written against
optsched's public protocol: a plain class with ``select(view)``.
"""


class FairShare:
    """Backfilling over a queue sorted by each user's usage so far.

    Usage is the processor-seconds of a user's finished runs, multiplied by
    ``decay`` at every finished run (1: no decay). The first job that cannot
    start gets a reservation at its shadow time; a later job starts only if
    it fits now and ends, by its estimate, before that time.
    """

    name = "fair-share"

    def __init__(self, decay: float = 1.0):
        self.decay = decay
        self.usage = {}  # user -> processor-seconds
        self.owner = {}  # job id -> user

    def on_submit(self, view, job):
        self.owner[job.id] = job.user

    def on_end(self, view, job):
        for user in self.usage:
            self.usage[user] *= self.decay
        user = self.owner[job.id]
        self.usage[user] = self.usage.get(user, 0) + job.size * (job.end - job.start)

    def select(self, view):
        usage = self.usage
        queue = sorted(view.waiting, key=lambda j: (usage.get(j.user, 0), j.submit))
        while queue and view.fits(queue[0].id):
            yield queue.pop(0).id
        if not queue:
            return
        head = queue.pop(0)  # waits for its reservation at the shadow time
        shadow = view.earliest_start(head.size, head.estimate)
        for job in queue:
            if view.now + job.estimate <= shadow and view.fits(job.id):
                yield job.id
