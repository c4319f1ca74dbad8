"""Node speeds and SMP nodes: Rassmann's combinators
(:mod:`~optsched.heuristics.topology.combinators`) on the node simulator
(:mod:`~optsched.heuristics.topology.simulator`)."""
