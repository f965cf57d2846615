"""Request and response models of GET /api/v1/on-call/current."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from chalicelib.model_base import ApiModel, RequestModel, SingleLine
from chalicelib.oncall.models import utc
from chalicelib.paging.current import Engineer, OnCallNow, ServiceOnCall


class OnCallQuery(RequestModel):
    team_name: Annotated[str, SingleLine] | None = Field(
        default=None, max_length=400, description="Only services of this team; the whole name, case-insensitive."
    )


class OnCallEngineerV1(ApiModel):
    name: str = Field(description="The person's name (their email when they have none).")
    email: str | None
    slack_user_id: str | None
    role: str = Field(description="The policy level: primary (1), secondary (2), tertiary (3), ... level_<n>.")
    schedule_name: str | None = Field(description="The schedule they are on call through; null for a direct target.")
    shift_starts_at: datetime | None
    shift_ends_at: datetime | None

    @classmethod
    def of(cls, engineer: Engineer) -> OnCallEngineerV1:
        return cls(
            name=engineer.name,
            email=engineer.user.email,
            slack_user_id=engineer.user.slack_user_id,
            role=engineer.role,
            schedule_name=engineer.schedule.name if engineer.schedule else None,
            shift_starts_at=utc(engineer.shift.start) if engineer.shift else None,
            shift_ends_at=utc(engineer.shift.end) if engineer.shift else None,
        )


class OnCallServiceV1(ApiModel):
    service_key: str | None
    service_name: str
    service_description: str | None
    team_name: str = Field(description='The service\'s team; "" when it has none.')
    team_description: str | None
    on_call_engineers: list[OnCallEngineerV1]
    has_coverage: bool = Field(description="Someone at some level of the service's escalation policy is on call now.")
    primary_on_call: OnCallEngineerV1 | None = Field(description="The first level-1 engineer.")
    schedule_names: list[str]

    @classmethod
    def of(cls, entry: ServiceOnCall) -> OnCallServiceV1:
        primary = entry.primary_on_call
        return cls(
            service_key=entry.service.service_key,
            service_name=entry.service.name,
            service_description=entry.service.description,
            team_name=entry.team.name if entry.team else "",
            team_description=entry.team.description if entry.team else None,
            on_call_engineers=[OnCallEngineerV1.of(engineer) for engineer in entry.engineers],
            has_coverage=entry.has_coverage,
            primary_on_call=OnCallEngineerV1.of(primary) if primary else None,
            schedule_names=list(entry.schedule_names),
        )


class OnCallSummaryV1(ApiModel):
    total_services: int
    services_with_coverage: int
    services_without_coverage: int
    coverage_percentage: int = Field(description="floor(100 * with coverage / total); 0 when there are no services.")


class OnCallV1(ApiModel):
    timestamp: datetime
    summary: OnCallSummaryV1
    services: list[OnCallServiceV1] = Field(description="Active services, newest first.")

    @classmethod
    def of(cls, view: OnCallNow) -> OnCallV1:
        summary = view.summary
        return cls(
            timestamp=utc(view.timestamp),
            summary=OnCallSummaryV1(
                total_services=summary.total_services,
                services_with_coverage=summary.services_with_coverage,
                services_without_coverage=summary.services_without_coverage,
                coverage_percentage=summary.coverage_percentage,
            ),
            services=[OnCallServiceV1.of(entry) for entry in view.services],
        )
