"""Site rules in the simulator: NQS's per-user limit
(:mod:`~optsched.heuristics.site.user_limit`)."""
