"""Instance generators: perfect packings with a known optimum
(:mod:`~optsched.generate.perfect`), the AFKT worst cases
(:mod:`~optsched.generate.afkt`) and moldable workloads
(:mod:`~optsched.generate.moldable`)."""
