"""Preemption: PBI and PSRS (:mod:`~optsched.heuristics.preempt.algorithms`),
gang scheduling (:mod:`~optsched.heuristics.preempt.gang`, its job classes
and Ousterhout matrix), and their policy specs
(:mod:`~optsched.heuristics.preempt.policies`)."""
