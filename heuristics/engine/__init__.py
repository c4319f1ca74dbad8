"""The online simulator: the event engine (:mod:`~optsched.heuristics.engine.core`),
processor allocation on contiguous machines
(:mod:`~optsched.heuristics.engine.allocation`), the policies that build
their schedules themselves (:mod:`~optsched.heuristics.engine.standalone`)
and ``simulate`` (:mod:`~optsched.heuristics.engine.runner`)."""
