"""Offline exact and bounded models (imported as ``optsched.models``)."""
