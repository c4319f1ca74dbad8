"""Site rules (calendars, queues, chains, user limits, outages offline): the
exact CP-SAT site model (:mod:`~optsched.models.site.model`) and the site
bounds (:mod:`~optsched.models.site.bounds`)."""
