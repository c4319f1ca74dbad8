"""Rigid jobs on identical processors: closed-form lower bounds
(:mod:`~optsched.models.rigid.bounds`), the CP-SAT back-end and its kit
(:mod:`~optsched.models.rigid.cpsat`), the time-indexed MILP
(:mod:`~optsched.models.rigid.milp`), the strip-packing tiling decision
(:mod:`~optsched.models.rigid.tiling`), ``wct`` by release blocks
(:mod:`~optsched.models.rigid.wct_decompose`) and brute force for tests
(:mod:`~optsched.models.rigid.enumerate`)."""
