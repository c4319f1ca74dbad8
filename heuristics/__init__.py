"""Online simulator and scheduling policies (imported as ``optsched.heuristics``)."""
