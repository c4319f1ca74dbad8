"""Site files: a machine's calendar (and size) in TOML, and holiday detection.

Example (``instances/sites/t3e.toml``, Mallmann 1997, §3.2.5)::

    [site]
    name = "Cray T3E, FZ Jülich (Mallmann 1997, §3.2.5)"
    processors = 518
    monday_offset = 0            # seconds from a Monday 00:00 to time 0
    start_date = "1997-03-03"    # the Monday of time 0 (for dated holidays)
    holidays = ["1997-03-28"]    # or calendar day numbers

    [[batch]]
    days = ["mon", "tue", "wed", "thu", "fri"]
    from = "12:00"
    to = "20:00"
    processors = 4               # batch capacity (omitted: the machine)
    max_size = 4                 # largest job that may start (omitted: none)

    [[outage]]
    start = 86400                # seconds of trace time (or from = "1997-03-04 10:15")
    end = 90000                  # (or to = ..., or duration = seconds)
    processors = 518             # down (omitted: the whole machine)
    offset = 0                   # first processor down (contiguous machines)

Hours that no ``[[batch]]`` entry covers give batch jobs the whole machine
with no size limit. ``days`` takes ``mon`` .. ``sun`` and ``holiday`` (the
pattern of holidays, which replaces their weekday's). ``[site]`` may also
name NQS queue rules by SWF queue number (field 15): ``sequential_queues``
(one running job at a time) and ``anytime_queues`` (jobs that may start
outside the calendar, like the Paragon's test queue), and NQS's per-user
limit ``user_limit_hours`` in processor-hours (1,088 on the Paragon, 4,096
on the T3E; :class:`~optsched.calendar.Calendar`). ``interactive_queues``
names the queues of interactive jobs, which the study filters out of its
simulations (they ran outside the batch system): :func:`apply_site` leaves
them out of every window; with ``detect_holidays = true`` it first marks as
holidays the weekdays on which none of them started
(:func:`detect_holidays`).

``[[outage]]`` entries are machine outages (:attr:`Machine.outages
<optsched.instance.Machine.outages>`): unannounced downtimes that kill and
requeue the jobs on the processors they take. Dated ones (``from``/``to``,
local time) need ``start_date``: trace time 0 is ``monday_offset`` seconds
after that Monday 00:00.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optsched.calendar import DAY, DAY_NAMES, Calendar, Period, parse_clock
from optsched.errors import InputError, shown
from optsched.instance import MAX_INTEGER, BusyBlock, Instance, Job, Machine
from optsched.io.text import read_toml_file

SITE_KEYS = (
    "name",
    "processors",
    "monday_offset",
    "start_date",
    "holidays",
    "sequential_queues",
    "anytime_queues",
    "user_limit_hours",
    "interactive_queues",
    "detect_holidays",
)
BATCH_KEYS = ("days", "from", "to", "processors", "max_size")
OUTAGE_KEYS = ("start", "end", "from", "to", "duration", "processors", "offset")


@dataclass(frozen=True)
class Site:
    """A site file: its name, machine size (if given) and calendar."""

    name: str
    calendar: Calendar
    processors: int | None = None
    outages: tuple[SiteOutage, ...] = ()
    interactive_queues: frozenset[int] = frozenset()
    detect_holidays: bool = False


@dataclass(frozen=True)
class SiteOutage:
    """An ``[[outage]]`` entry in trace time: ``[start, end)``, the
    processors down (``None``: the whole machine) and the first of them."""

    start: int
    end: int
    processors: int | None = None
    offset: int | None = None


def read_site(path: str | Path) -> Site:
    """Read a site file (module docstring).

    Raises
    ------
    InputError
        One line ``file:line: reason``: bad TOML, an unknown table or key,
        a bad day name, time, number or date, overlapping periods.
    """
    path = Path(path)
    text, data = read_toml_file(path)
    try:
        return _site(data)
    except _Bad as bad:
        raise InputError(
            bad.reason, path, _line(text, bad.key, bad.entry, bad.array)
        ) from None
    except ValueError as error:
        raise InputError(str(error), path) from None


class _Bad(Exception):
    def __init__(
        self,
        reason: str,
        key: str | None = None,
        entry: int | None = None,
        array: str = "batch",
    ):
        super().__init__(reason)
        self.reason, self.key, self.entry, self.array = reason, key, entry, array


def _line(text: str, key: str | None, entry: int | None, array: str) -> int | None:
    """Line of ``key`` in ``[site]`` (``entry`` None) or in the
    ``entry``-th ``[[array]]`` table."""
    table, count = None, -1
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith(f"[[{array}]]"):
            table, count = array, count + 1
            if key is None and entry == count:
                return number
            continue
        if line.startswith("["):
            table = line.strip("[] ")
            continue
        inside = (table == "site" and entry is None) or (
            table == array and count == entry
        )
        if inside and key is not None and line.split("=")[0].strip() == key:
            return number
    return None


def _site(data: dict[str, Any]) -> Site:
    for key in data:
        if key not in ("site", "batch", "outage"):
            raise _Bad(
                f"unknown table [{key}] (expected [site], [[batch]] and [[outage]])"
            )
    site = data.get("site", {})
    for key in site:
        if key not in SITE_KEYS:
            raise _Bad(
                f"[site] unknown key {shown(key)} (expected: {', '.join(SITE_KEYS)})",
                key,
            )
    name = site.get("name", "")
    processors = site.get("processors")
    if processors is not None and (
        not isinstance(processors, int)
        or isinstance(processors, bool)
        or processors < 1
    ):
        raise _Bad("[site] processors: expected an integer >= 1", "processors")
    offset = site.get("monday_offset", 0)
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise _Bad("[site] monday_offset: expected an integer", "monday_offset")
    if processors is not None and processors > MAX_INTEGER:
        raise _Bad("[site] processors: above the limit 2**53", "processors")
    if abs(offset) > MAX_INTEGER:
        raise _Bad("[site] monday_offset: beyond the limit +-2**53", "monday_offset")
    start = _start_date(site.get("start_date"))
    holidays = frozenset(_holiday(h, start) for h in site.get("holidays", []))
    batch = data.get("batch", [])
    if not isinstance(batch, list):
        raise _Bad("batch must be an array of tables [[batch]]", "batch")
    periods = tuple(_period(entry, k) for k, entry in enumerate(batch))
    _periods_fit(periods, processors)
    queues = {
        key: _queues(site, key) for key in ("sequential_queues", "anytime_queues")
    }
    hours = site.get("user_limit_hours")
    if hours is not None and (
        not isinstance(hours, int | float)
        or isinstance(hours, bool)
        or not 0 <= hours <= MAX_INTEGER // 3600
    ):
        raise _Bad(
            "[site] user_limit_hours: expected processor-hours from 0 to "
            f"{MAX_INTEGER // 3600} (2**53 processor-seconds)",
            "user_limit_hours",
        )
    limit = None if hours is None else round(hours * 3600)
    try:
        calendar = Calendar(periods, holidays, offset, **queues, user_limit=limit)
    except ValueError as error:
        raise _Bad(str(error)) from None
    entries = data.get("outage", [])
    if not isinstance(entries, list):
        raise _Bad("outage must be an array of tables [[outage]]", "outage")
    outages = tuple(
        _outage(entry, k, start, offset, processors) for k, entry in enumerate(entries)
    )
    detect = site.get("detect_holidays", False)
    if not isinstance(detect, bool):
        raise _Bad("[site] detect_holidays: expected true or false", "detect_holidays")
    interactive = _queues(site, "interactive_queues")
    if detect and not interactive:
        raise _Bad(
            "[site] detect_holidays needs interactive_queues (holidays are the "
            "weekdays without interactive work)",
            "detect_holidays",
        )
    return Site(str(name), calendar, processors, outages, interactive, detect)


def _outage(
    entry: object,
    k: int,
    start_date: datetime.date | None,
    monday_offset: int,
    processors: int | None,
) -> SiteOutage:
    """One ``[[outage]]`` table, in trace time (``size`` 0: whole machine)."""

    def bad(reason: str, key: str | None = None) -> _Bad:
        return _Bad(f"outage[{k}]: {reason}", key, k, "outage")

    if not isinstance(entry, dict):
        raise bad("expected a table")
    for key in entry:
        if key not in OUTAGE_KEYS:
            raise bad(
                f"unknown key {shown(key)} (expected: {', '.join(OUTAGE_KEYS)})", key
            )
    begin = _outage_time(entry, ("start", "from"), start_date, monday_offset, bad)
    if begin is None:
        raise bad("needs start (seconds) or from (a date and time)")
    end = _outage_time(entry, ("end", "to"), start_date, monday_offset, bad)
    if "duration" in entry:
        duration = entry["duration"]
        if not _natural(duration) or end is not None:
            raise bad("duration: expected seconds >= 0, without end or to", "duration")
        end = begin + duration
    if end is None or end < begin:
        # The line of the end given, or of the table when none is.
        given = next((key for key in ("end", "to", "duration") if key in entry), None)
        raise bad("needs an end (end, to or duration) not before its start", given)
    size = entry.get("processors")
    offset = entry.get("offset")
    if size is not None and (not _natural(size) or size < 1):
        raise bad("processors: expected an integer >= 1", "processors")
    if offset is not None and not _natural(offset):
        raise bad("offset: expected an integer >= 0", "offset")
    if size is not None and processors is not None and size > processors:
        raise bad(f"processors {size}: more than the site's {processors}", "processors")
    return SiteOutage(begin, end, size, offset)


def _periods_fit(periods: tuple[Period, ...], processors: int | None) -> None:
    """A batch period never opens more processors than the site has."""
    if processors is None:
        return
    for k, period in enumerate(periods):
        if period.capacity is not None and period.capacity > processors:
            raise _Bad(
                f"batch[{k}]: processors {period.capacity} is more than the "
                f"site's {processors}",
                "processors",
                k,
            )


def _natural(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _outage_time(
    entry: dict[str, Any],
    keys: tuple[str, str],
    start_date: datetime.date | None,
    monday_offset: int,
    bad: Any,
) -> int | None:
    """Trace seconds of ``entry[seconds_key]`` or of ``entry[date_key]``."""
    seconds_key, date_key = keys
    if seconds_key in entry and date_key in entry:
        raise bad(f"give {seconds_key} or {date_key}, not both", seconds_key)
    if seconds_key in entry:
        value = entry[seconds_key]
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad(f"{seconds_key}: expected seconds (an integer)", seconds_key)
        if abs(value) > MAX_INTEGER:
            raise bad(f"{seconds_key}: beyond the limit +-2**53 seconds", seconds_key)
        return value
    if date_key not in entry:
        return None
    if start_date is None:
        raise bad(f"a dated {date_key} needs [site] start_date", date_key)
    value = entry[date_key]
    moment: datetime.datetime | None = None
    if isinstance(value, datetime.datetime):
        moment = value.replace(tzinfo=None)
    elif isinstance(value, str):
        try:
            moment = datetime.datetime.fromisoformat(value)
        except ValueError:
            moment = None
    if moment is None:
        raise bad(f"{date_key} {shown(value)}: expected a date and time", date_key)
    origin = datetime.datetime.combine(start_date, datetime.time())
    return int((moment - origin).total_seconds()) - monday_offset


def _queues(site: dict[str, Any], key: str) -> frozenset[int]:
    values = site.get(key, [])
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        raise _Bad(f"[site] {key}: expected a list of queue numbers", key)
    return frozenset(values)


def _date(value: object, what: str, key: str) -> datetime.date:
    """A TOML date or an ISO text as a date (``what`` names it in messages)."""
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    raise _Bad(f"[site] {what} {shown(value)}: expected a date YYYY-MM-DD", key)


def _start_date(value: object) -> datetime.date | None:
    if value is None:
        return None
    date = _date(value, "start_date", "start_date")
    if date.weekday() != 0:
        raise _Bad(f"[site] start_date {date}: must be a Monday", "start_date")
    return date


def _holiday(value: object, start: datetime.date | None) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= MAX_INTEGER // DAY:
            raise _Bad(
                f"[site] holiday {shown(value)}: a day number must be from 0 to "
                f"{MAX_INTEGER // DAY}",
                "holidays",
            )
        return value
    if start is None:
        raise _Bad("[site] dated holidays need start_date", "holidays")
    day = (_date(value, "holiday", "holidays") - start).days
    if day < 0:
        raise _Bad(
            f"[site] holiday on day {day} is before start_date {start}", "holidays"
        )
    return day


def _period(entry: object, k: int) -> Period:
    if not isinstance(entry, dict):
        raise _Bad(f"batch[{k}]: expected a table", None, k)
    for key in entry:
        if key not in BATCH_KEYS:
            raise _Bad(
                f"batch[{k}]: unknown key {shown(key)} "
                f"(expected: {', '.join(BATCH_KEYS)})",
                key,
                k,
            )
    for key in ("days", "from", "to"):
        if key not in entry:
            raise _Bad(f"batch[{k}]: missing key {key!r}", None, k)
    days = entry["days"]
    if not isinstance(days, list) or not days:
        raise _Bad(f"batch[{k}]: days: expected a list of day names", "days", k)
    numbers = []
    for day in days:
        if day not in DAY_NAMES:
            raise _Bad(
                f"batch[{k}]: day {shown(day)} is not one of {', '.join(DAY_NAMES)}",
                "days",
                k,
            )
        numbers.append(DAY_NAMES.index(day))
    clock = {}
    for key in ("from", "to"):
        try:
            clock[key] = parse_clock(str(entry[key]))
        except ValueError as error:
            raise _Bad(f"batch[{k}]: {key}: {error}", key, k) from None
    start, end = clock["from"], clock["to"]
    values = {}
    for key in ("processors", "max_size"):
        value = entry.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            raise _Bad(f"batch[{k}]: {key}: expected an integer >= 0", key, k)
        values[key] = value
    try:
        return Period(
            tuple(numbers), start, end, values["processors"], values["max_size"]
        )
    except ValueError as error:
        raise _Bad(f"batch[{k}]: {error}", None, k) from None


def header_monday_offset(header: Mapping[str, str]) -> int | None:
    """Seconds from the Monday 00:00 before a trace's time 0, in the
    trace's local time, from its SWF header (``UnixStartTime`` with
    ``TimeZoneString``, else the ``TimeZone`` offset in seconds); ``None``
    when the header does not say. Daylight-saving changes during the trace
    are not followed: the offset of the start holds throughout."""
    try:
        unix = int(header["UnixStartTime"])
    except (KeyError, ValueError):
        return None
    try:
        moment = _local_start(unix, header)
    except (OverflowError, OSError, ValueError):
        return None  # a start time or an offset no calendar holds: not said
    return (
        moment.weekday() * DAY + moment.hour * 3600 + moment.minute * 60 + moment.second
    )


def _local_start(unix: int, header: Mapping[str, str]) -> datetime.datetime:
    """The trace's time 0 in its local time (see :func:`header_monday_offset`)."""
    moment: datetime.datetime | None = None
    name = header.get("TimeZoneString")
    if name:
        try:
            from zoneinfo import ZoneInfo

            moment = datetime.datetime.fromtimestamp(unix, ZoneInfo(name))
        except (KeyError, ValueError, OSError, ImportError):
            moment = None
    if moment is None:
        try:
            shift = int(header.get("TimeZone", "0"))
        except ValueError:
            shift = 0
        moment = datetime.datetime.fromtimestamp(
            unix, datetime.UTC
        ) + datetime.timedelta(seconds=shift)
    return moment


def apply_site(
    instance: Instance, site: Site, header: Mapping[str, str] | None = None
) -> tuple[Instance, str | None]:
    """``instance`` with ``site``'s calendar on its machine, and a note.

    Time 0 of the trace is the site file's ``monday_offset`` after a Monday
    00:00 unless the trace ``header`` says when it starts
    (:func:`header_monday_offset`). A window rebased to 0 keeps each
    instant's time of week (the calendar is shifted by the window's shift).
    A site of another size is scaled to the machine
    (:meth:`~optsched.calendar.Calendar.scaled`), which the note says.
    Jobs of the site's ``interactive_queues`` are left out (holidays first
    detected from their recorded starts when ``detect_holidays``), which the
    note says too: apply the site before rewriting releases.
    """
    calendar = site.calendar
    from_header = header_monday_offset(header or {})
    if from_header is not None:
        calendar = dataclasses.replace(calendar, monday_offset=from_header)
    window = instance.source.window
    if window is not None and window.shift:
        calendar = calendar.shifted(window.shift)
    machine = instance.machine
    note = None
    if site.processors is not None and site.processors != machine.processors:
        calendar = calendar.scaled(site.processors, machine.processors)
        note = (
            f"site {site.name or 'calendar'}: {site.processors} processors scaled "
            f"to the machine's {machine.processors}"
        )
    shift = window.shift if window is not None else 0
    outages = site_outages(site, machine, shift)
    jobs = instance.jobs
    if site.interactive_queues:
        interactive = [j for j in jobs if j.queue in site.interactive_queues]
        if site.detect_holidays:
            found = detect_holidays(
                jobs,
                lambda j: j.queue in site.interactive_queues,
                calendar.monday_offset,
            )
            calendar = dataclasses.replace(calendar, holidays=calendar.holidays | found)
        jobs = tuple(j for j in jobs if j.queue not in site.interactive_queues)
        left_out = (
            f"site {site.name or 'file'}: {len(interactive)} interactive jobs "
            f"(queues {', '.join(map(str, sorted(site.interactive_queues)))}) left out"
        )
        note = left_out if note is None else f"{note}; {left_out}"
    machine = machine.replace(calendar=calendar, outages=machine.outages + outages)
    return instance.replace(machine=machine, jobs=jobs), note


def site_outages(site: Site, machine: Machine, shift: int = 0) -> tuple[BusyBlock, ...]:
    """The site's outages on ``machine`` in window time (trace time minus
    ``shift``): those that end after the window's time 0, cut at 0. A site
    of another size has its partial outages scaled to the machine
    (``ceil(q m / M)`` processors, so that an outage never vanishes); one
    without ``processors`` takes the whole machine (offset 0 on a
    contiguous machine)."""
    m = machine.processors
    out = []
    for o in site.outages:
        start, end = o.start - shift, o.end - shift
        if end <= 0 or end <= start:
            continue
        size, offset = o.processors, o.offset
        if size is None:
            size, offset = m, 0
        elif site.processors is not None and site.processors != m:
            size = -(-size * m // site.processors)
            offset = None if offset is None else offset * m // site.processors
        if size > m:
            raise ValueError(
                f"site {site.name or 'file'}: an outage of {size} processors on a "
                f"machine of {m}"
            )
        if machine.allocation == "any":
            offset = None
        elif offset is None:
            raise ValueError(
                f"site {site.name or 'file'}: the outage at {o.start} takes {size} "
                "of the processors; a contiguous machine needs its offset"
            )
        else:
            offset = min(offset, m - size)
        out.append(BusyBlock(max(start, 0), end, size, offset, "outage"))
    return tuple(out)


def detect_holidays(
    jobs: Iterable[Job], interactive: Any, monday_offset: int = 0
) -> frozenset[int]:
    """Weekdays without interactive work: the study's holiday rule (§4.3).

    The study detects holidays and other non-working weekdays from the
    recorded schedule as "days without interactive operation" and gives no
    exact rule (§11, item 10). Ours: a calendar day from Monday to Friday,
    between the first and the last recorded start, on which no job for
    which ``interactive(job)`` is true started (recorded start = release +
    recorded wait; jobs without a recorded wait are skipped).
    """
    busy: set[int] = set()
    first = last = None
    for job in jobs:
        if job.wait is None or job.wait < 0:
            continue
        start = job.release + job.wait
        day = (start + monday_offset) // DAY
        first = day if first is None else min(first, day)
        last = day if last is None else max(last, day)
        if interactive(job):
            busy.add(day)
    if first is None or last is None:
        return frozenset()
    return frozenset(d for d in range(first, last + 1) if d % 7 < 5 and d not in busy)
