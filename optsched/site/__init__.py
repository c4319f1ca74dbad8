"""Site rules: site files (queues, calendars, user limits, outages;
:mod:`~optsched.site.files`), job chains (:mod:`~optsched.site.chains`) and
the site measures (:mod:`~optsched.site.metrics`)."""
