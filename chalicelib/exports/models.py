"""The exports' query, the download link's request and answer (the OpenAPI schemas)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from chalicelib.exports.requests import DEFAULT_LIMIT, MAX_LIMIT
from chalicelib.model_base import ApiModel, DateTimeIn, RequestModel

FilterValue = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class ExportFilters(RequestModel):
    since: DateTimeIn = Field(description="Range start (inclusive), RFC 3339 with an offset.")
    until: DateTimeIn = Field(description="Range end (exclusive); at most 366 days after since.")
    format: Literal["csv", "ndjson"] | None = Field(
        default=None, description="csv or ndjson; unset: by Accept (text/csv, application/x-ndjson), else csv."
    )
    service: FilterValue | None = Field(default=None, description="incidents, alerts: only this service key.")
    team: FilterValue | None = Field(default=None, description="incidents, shifts: only this team.")
    severity: FilterValue | None = Field(default=None, description="incidents, alerts: only this severity.")
    user: FilterValue | None = Field(default=None, description="notifications, shifts: only this person.")
    channel: FilterValue | None = Field(default=None, description="notifications: only this channel.")

    def filter_values(self) -> dict[str, str | None]:
        return {
            "service": self.service,
            "team": self.team,
            "severity": self.severity,
            "user": self.user,
            "channel": self.channel,
        }


class ExportPageQuery(RequestModel):
    """A download link's own query: which page."""

    cursor: Annotated[str, Field(min_length=1, max_length=2000, pattern=r"^[A-Za-z0-9_.-]+$")] | None = Field(
        default=None, description="The next page's cursor, from the previous page's Link header."
    )
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="Rows per page, 1 to 5000.")


class ExportQuery(ExportFilters, ExportPageQuery):
    pass


class ExportLinkCreate(ExportFilters):
    expires_in_minutes: int = Field(default=15, ge=1, le=60, description="How long the link works, 1 to 60 minutes.")


class ExportLinkV1(ApiModel):
    url: str = Field(description="GET it without a credential until expires_at; it pages like the API.")
    expires_at: datetime
    kind: str
    format: Literal["csv", "ndjson"]
