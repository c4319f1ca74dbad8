"""Shelves: the offline shelf algorithms (NFDH, FFDH, NFIH, FFIH, FFDH*,
FFIH*, SMART; :mod:`~optsched.heuristics.shelf.algorithms`) and the
policies built on them, the batch framework and PC²
(:mod:`~optsched.heuristics.shelf.policies`)."""
