"""Moldable and malleable jobs: the moldable policies
(:mod:`~optsched.heuristics.moldable.policies`), rescaling
(:mod:`~optsched.heuristics.moldable.rescaling`), DEQ
(:mod:`~optsched.heuristics.moldable.deq`) and their policy specs
(:mod:`~optsched.heuristics.moldable.wrappers`)."""
