"""Plain reference schedulers for the engine's rigid policies (issue 28).

Written from the definitions in the policies' documentation, deliberately
slow and simple, and sharing no code with ``optsched.heuristics``: their own
step function of free processors (:mod:`support.oracle.steps`), their own
event loop and rules (:mod:`support.oracle.reference`). They read only the
instance. The tests compare them job for job with the product's policies
(``tests/oracles/``), and ``benchmarks/oracle_compare.py`` does so on whole
traces.
"""

from support.oracle.reference import SUPPORTED, reference_starts, supports

__all__ = ["SUPPORTED", "reference_starts", "supports"]
