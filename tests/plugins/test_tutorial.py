"""The tutorial "Rate your own policy" shows the example policy as it is.

The page's commands and Python block run in order, and its printed output
and picture are compared, by ``docs/run_pages.py``
(``tests/docs/test_run_pages.py``); what that runner cannot know is that the
policy printed on the page is the file the commands name.
"""

from __future__ import annotations

import re

from support.paths import REPO

PAGE = REPO / "docs" / "guide" / "your-policy.md"
POLICY = REPO / "docs" / "examples" / "fair_share.py"

_FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_policy_shown_is_the_example_file() -> None:
    python = [
        body for lang, body in _FENCE.findall(PAGE.read_text()) if lang == "python"
    ]
    assert python[0] == POLICY.read_text()
    assert "docs/examples/fair_share.py:FairShare" in PAGE.read_text()
