"""Machines with node speeds or SMP nodes: machine shapes, the flat
relaxation and processor-aware schedules (:mod:`~optsched.topology.machines`).
The SMP node model itself is core vocabulary (:mod:`optsched.nodes`)."""
