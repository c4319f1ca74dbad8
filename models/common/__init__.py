"""What every family's models share: the checked candidates and the common
finish of a result (:mod:`~optsched.models.common.solution`), solving a
relaxation (:mod:`~optsched.models.common.relaxation`), MILP time grids
(:mod:`~optsched.models.common.timegrid`) and the ``bounds-only`` back-end
(:mod:`~optsched.models.common.bounds_only`)."""
