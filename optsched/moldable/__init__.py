"""Moldable and malleable jobs in the core: the mode a placement runs a job
in (:mod:`~optsched.moldable.modes`) and the speed-up models that give a job
its modes (:mod:`~optsched.moldable.speedup`)."""
