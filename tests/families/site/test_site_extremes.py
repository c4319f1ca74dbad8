"""Issue 32, site files at the extremes: one located line, never a traceback.

``user_limit_hours = inf`` was an ``OverflowError`` in every command; a trace
header whose ``UnixStartTime`` or ``TimeZone`` no calendar holds was an
``OverflowError`` when a site was applied; batch periods opening more
processors than the site has, and day numbers no calendar reaches, were
accepted without a word.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from optsched.errors import InputError
from optsched.site.files import header_monday_offset, read_site

SITE = """[site]
processors = 8
{site}

[[batch]]
days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun", "holiday"]
from = "00:00"
to = "24:00"
processors = {batch}
"""


def _read(tmp_path: Path, site: str = "", batch: int = 8) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(SITE.format(site=site, batch=batch))
    return path


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            "user_limit_hours = inf",
            "[site] user_limit_hours: expected processor-hours from 0 to "
            "2501999792983 (2**53 processor-seconds)",
        ),
        (
            "user_limit_hours = nan",
            "[site] user_limit_hours: expected processor-hours from 0 to "
            "2501999792983 (2**53 processor-seconds)",
        ),
        (
            "monday_offset = 99999999999999999",
            "[site] monday_offset: beyond the limit +-2**53",
        ),
        (
            "holidays = [99999999999999999]",
            "[site] holiday 99999999999999999: a day number must be from 0 to "
            "104249991374",
        ),
    ],
)
def test_out_of_range_site_values_are_located(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = _read(tmp_path, line)
    with pytest.raises(InputError) as refused:
        read_site(path)
    assert str(refused.value) == f"{path}:3: {reason}"


def test_a_large_finite_user_limit_is_read(tmp_path: Path) -> None:
    site = read_site(_read(tmp_path, "user_limit_hours = 2501999792983"))
    assert site.calendar.user_limit == 2501999792983 * 3600


def test_a_batch_period_above_the_site_is_refused(tmp_path: Path) -> None:
    path = _read(tmp_path, batch=9)
    with pytest.raises(InputError) as refused:
        read_site(path)
    assert str(refused.value) == (
        f"{path}:9: batch[0]: processors 9 is more than the site's 8"
    )
    assert read_site(_read(tmp_path, batch=8)).processors == 8


@pytest.mark.parametrize(
    "header",
    [
        {"UnixStartTime": str(10**20)},
        {"UnixStartTime": "0", "TimeZone": str(10**15)},
        {"UnixStartTime": str(-(10**15)), "TimeZoneString": "Europe/Berlin"},
    ],
)
def test_a_header_time_no_calendar_holds_is_not_said(header: dict[str, str]) -> None:
    assert header_monday_offset(header) is None


def test_a_header_time_in_range_still_gives_the_offset() -> None:
    # 1997-03-05 (a Wednesday) 12:00 UTC: two days and 12 hours after Monday.
    unix = int(datetime.datetime(1997, 3, 5, 12, tzinfo=datetime.UTC).timestamp())
    assert header_monday_offset({"UnixStartTime": str(unix)}) == 2 * 86400 + 12 * 3600
