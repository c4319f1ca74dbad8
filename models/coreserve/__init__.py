"""Grid co-reservation: the optimum of one request's placement
(:mod:`~optsched.models.coreserve.request`) and of a whole workload offline
(:mod:`~optsched.models.coreserve.offline`)."""
