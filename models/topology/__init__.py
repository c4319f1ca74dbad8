"""Node speeds and SMP nodes: the CP-SAT models of machines with speeds
(:mod:`~optsched.models.topology.speeds`) and with SMP nodes
(:mod:`~optsched.models.topology.smp`), and their lower bounds
(:mod:`~optsched.models.topology.bounds`)."""
