"""Worst-case search: adversarial instances and empirical competitive ratios.

Two questions, both answered by deterministic search over tiny instances:

* How bad can a policy be against the optimum?
  :func:`~optsched.worstcase.search.search_worst_case` maximises policy
  objective / exact optimum (random restarts plus local search); the ratio
  found is a lower bound on the policy's competitive ratio, shown beside the
  literature's bounds (:mod:`optsched.worstcase.theory`).
* When is policy A worse than policy B?
  :func:`~optsched.worstcase.versus.find_counterexample` finds a small,
  locally minimal instance where A is strictly worse (Hypothesis generation
  and shrinking, then a greedy shrinker).

Measures: ``cmax``, ``wct`` and ``maxwait`` (:mod:`optsched.worstcase.measure`).
"""

from optsched.worstcase.measure import MEASURES, Space, max_wait, measure_value
from optsched.worstcase.search import WorstCase, search_worst_case
from optsched.worstcase.theory import LITERATURE, LiteratureBound, bound_for
from optsched.worstcase.versus import Counterexample, find_counterexample

__all__ = [
    "LITERATURE",
    "MEASURES",
    "Counterexample",
    "LiteratureBound",
    "Space",
    "WorstCase",
    "bound_for",
    "find_counterexample",
    "max_wait",
    "measure_value",
    "search_worst_case",
]
