"""Times typed in console forms. `<input type="datetime-local">` sends no offset, so the forms say
their times are UTC and these read them so; anything else goes to the API's model as typed (and is
refused there when it is not an RFC 3339 date-time)."""

from __future__ import annotations

import re
from datetime import datetime

_LOCAL_MINUTES = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")
_LOCAL_SECONDS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")


def utc_from_form(value: str) -> str:
    """A datetime-local value read as UTC (RFC 3339 with `Z`); any other text unchanged."""
    if _LOCAL_MINUTES.match(value):
        return value + ":00Z"
    if _LOCAL_SECONDS.match(value):
        return value + "Z"
    return value


def form_value(moment: datetime) -> str:
    """A moment as a datetime-local input's value, in UTC (to prefill a form)."""
    return moment.strftime("%Y-%m-%dT%H:%M")
