"""Policies for rigid jobs: queue orders (:mod:`~optsched.heuristics.rigid.orders`),
list scheduling and backfilling (:mod:`~optsched.heuristics.rigid.policies`),
Mallmann's backfilling family (:mod:`~optsched.heuristics.rigid.mallmann`),
the trace's recorded schedule (:mod:`~optsched.heuristics.rigid.orig`) and
the offline list heuristics (:mod:`~optsched.heuristics.rigid.offline`)."""
