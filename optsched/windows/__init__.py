"""Windows of a trace: cutting them (:mod:`~optsched.windows.window`),
choosing them (:mod:`~optsched.windows.selection`) and preparing them for
scheduling (:mod:`~optsched.windows.prepare`)."""
