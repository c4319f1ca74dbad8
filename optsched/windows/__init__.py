"""Windows of a trace: cutting them (:mod:`~optsched.windows.window`) and
choosing them (:mod:`~optsched.windows.selection`)."""
