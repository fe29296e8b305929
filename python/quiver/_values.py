"""Python objects for Arrow values that have no plain Python number type.

Called by the C side of ``Column.to_pylist()`` (python/src/batch.c). The
choices (docs/python.md): dates are ``datetime.date``; timestamps are
``datetime.datetime`` (naive without a time zone, aware with one: "UTC",
"+hh:mm" offsets and IANA names through ``zoneinfo``); times of day are
``datetime.time``; durations ``datetime.timedelta``; decimals
``decimal.Decimal``. Python's datetime types hold microseconds, so
nanoseconds are floored to microseconds (``to_numpy()`` keeps them). A value
outside what the datetime types can hold raises ``quiver.NotSupportedError``.
"""

import datetime as _dt
import decimal as _decimal
from typing import NamedTuple

from ._quiver import InvalidError, NotSupportedError

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_UNIT_NAMES = ("s", "ms", "us", "ns")


class DayTimeInterval(NamedTuple):
    """An Arrow ``day_time_interval`` value."""
    days: int
    milliseconds: int


class MonthDayNano(NamedTuple):
    """An Arrow ``month_day_nano_interval`` value."""
    months: int
    days: int
    nanoseconds: int


def _micros(value, unit):
    if unit == 0:
        return value * 1_000_000
    if unit == 1:
        return value * 1000
    if unit == 2:
        return value
    return value // 1000


def _range_error(what, value, unit):
    return NotSupportedError(
        f"{what} {value} {_UNIT_NAMES[unit & 3]} is outside what Python's datetime types hold "
        "(use to_numpy())")


def date_from_days(days):
    try:
        return _EPOCH_DATE + _dt.timedelta(days=days)
    except OverflowError:
        raise NotSupportedError(f"date32 {days} days is outside what datetime.date holds "
                                "(use to_numpy())") from None


def date_from_ms(ms):
    """date64: a date when the value is a whole day, else a naive datetime."""
    try:
        if ms % 86_400_000 == 0:
            return _EPOCH_DATE + _dt.timedelta(days=ms // 86_400_000)
        return _EPOCH + _dt.timedelta(milliseconds=ms)
    except OverflowError:
        raise _range_error("date64", ms, 1) from None


_ZONES = {}


def _zone(name):
    z = _ZONES.get(name)
    if z is not None:
        return z
    if name in ("UTC", "Etc/UTC", "Z", "utc"):
        z = _dt.timezone.utc
    elif len(name) == 6 and name[0] in "+-" and name[3] == ":" and name[1:3].isdigit() \
            and name[4:].isdigit():
        off = _dt.timedelta(hours=int(name[1:3]), minutes=int(name[4:]))
        try:
            z = _dt.timezone(-off if name[0] == "-" else off)
        except ValueError:
            raise InvalidError(f"time zone offset {name!r} is out of range") from None
    else:
        try:
            import zoneinfo
            z = zoneinfo.ZoneInfo(name)
        except Exception:
            raise NotSupportedError(f"unknown time zone {name!r} (zoneinfo has no such zone)") from None
    _ZONES[name] = z
    return z


def datetime_from(value, unit, tz):
    try:
        t = _EPOCH + _dt.timedelta(microseconds=_micros(value, unit))
    except OverflowError:
        raise _range_error("timestamp", value, unit) from None
    if tz is None:
        return t
    try:
        return t.replace(tzinfo=_dt.timezone.utc).astimezone(_zone(tz))
    except OverflowError:
        raise _range_error("timestamp", value, unit) from None


def time_from(value, unit):
    us = _micros(value, unit)
    if not 0 <= us < 86_400_000_000:
        raise InvalidError(f"time of day {value} {_UNIT_NAMES[unit & 3]} is outside [0, 24h)")
    s, us = divmod(us, 1_000_000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return _dt.time(h, m, s, us)


def timedelta_from(value, unit):
    try:
        return _dt.timedelta(microseconds=_micros(value, unit))
    except OverflowError:
        raise _range_error("duration", value, unit) from None


def decimal_from(text):
    return _decimal.Decimal(text)


def day_time(days, ms):
    return DayTimeInterval(days, ms)


def month_day_nano(months, days, ns):
    return MonthDayNano(months, days, ns)
