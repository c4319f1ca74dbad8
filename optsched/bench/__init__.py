"""Benchmark suites run into a results store (``optsched bench``).

:mod:`~optsched.bench.suite` reads a suite file, :mod:`~optsched.bench.tasks`
expands it into tasks, :mod:`~optsched.bench.executor` runs them (in this
process, a local process pool or Dask) and :mod:`~optsched.bench.store`
keeps one SQLite row per finished task; :func:`run_suite` ties them up.
"""

from optsched.bench.run import RunSummary, run_suite
from optsched.bench.store import Store

__all__ = ["RunSummary", "Store", "run_suite"]
