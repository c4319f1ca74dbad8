"""The analysis pipeline: a window's policies, its reference (optimum or
bounds) and their competitive ratios (:mod:`~optsched.analysis.gap`)."""
