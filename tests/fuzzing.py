"""Settings shared by the fuzz tests (issue 17).

A regular run draws :data:`REGULAR_EXAMPLES` inputs per fuzz test, a few
hundred over the whole suite; ``pytest --fuzz`` (or ``OPTSCHED_FUZZ=1``)
draws :data:`CAMPAIGN_EXAMPLES`, the count of the campaign recorded in
benchmarks/README.md. Each fuzz test asserts one contract: a bad input gives
exit status 2 with one line ``file[:line]: reason`` and leaves no output, or
the input is valid and the result is correct.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

CAMPAIGN = os.environ.get("OPTSCHED_FUZZ") == "1"
REGULAR_EXAMPLES = 40
CAMPAIGN_EXAMPLES = 2000


def fuzz_settings(regular: int = REGULAR_EXAMPLES) -> settings:
    """Hypothesis settings of one fuzz test: ``regular`` examples, or a campaign's."""
    return settings(
        max_examples=CAMPAIGN_EXAMPLES if CAMPAIGN else regular,
        deadline=None,
        derandomize=not CAMPAIGN,  # the regular run is reproducible
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
