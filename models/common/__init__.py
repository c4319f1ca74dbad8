"""What every family's models share: the settings of a solve and their
defaults (:mod:`~optsched.models.common.settings`), the frame of every
back-end's ``solve``, its preamble and finish
(:mod:`~optsched.models.common.template`), the checked candidates and the
common finish of a result (:mod:`~optsched.models.common.solution`),
solving a relaxation (:mod:`~optsched.models.common.relaxation`), MILP time
grids (:mod:`~optsched.models.common.timegrid`) and the ``bounds-only``
back-end (:mod:`~optsched.models.common.bounds_only`)."""
