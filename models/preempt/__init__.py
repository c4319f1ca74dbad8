"""Preemption: the ``preemptive`` back-end (:mod:`~optsched.models.preempt.model`)
with its configuration LP (:mod:`~optsched.models.preempt.configurations`),
time-indexed model (:mod:`~optsched.models.preempt.timeindexed`) and the
``wct`` LP bound (:mod:`~optsched.models.preempt.wct_lp`)."""
