"""Shelf schedules: the shelf-restricted optimum (the ``shelf`` back-end,
:mod:`~optsched.models.shelf.model`) and its brute-force reference
(:mod:`~optsched.models.shelf.enumerate`)."""
