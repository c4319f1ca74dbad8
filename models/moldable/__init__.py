"""Moldable and malleable jobs: the CP-SAT model choosing each job's mode
(:mod:`~optsched.models.moldable.model`) and the moldable lower bounds
(:mod:`~optsched.models.moldable.bounds`)."""
