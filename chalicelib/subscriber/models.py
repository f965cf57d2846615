"""Request and response models of the subscriber routes (they generate the OpenAPI document)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import Field

from chalicelib.directory import rules as directory_rules
from chalicelib.model_base import ApiModel, RequestModel, SingleLine
from chalicelib.outbound.models import TargetUrl
from chalicelib.pagination import PageQuery
from chalicelib.subscriber.rules import MAX_COMPONENTS
from chalicelib.subscriber.tables import SubscriberItem

Email = Annotated[
    str,
    Field(
        max_length=directory_rules.EMAIL_MAX,
        pattern=directory_rules.EMAIL_PATTERN,
        description="Who is told; for a webhook subscriber, who is told when the webhook keeps failing.",
    ),
]
ComponentId = Annotated[str, Field(min_length=1, max_length=64), SingleLine]
SubscriberStatus = Literal["pending", "confirmed"]
SubscriberKind = Literal["email", "webhook"]


class SubscribeRequest(RequestModel):
    email: Email
    component_ids: list[ComponentId] = Field(
        default_factory=list,
        max_length=MAX_COMPONENTS,
        description="Components of this page to hear about; empty (the default) means every component.",
    )
    url: TargetUrl | None = Field(
        default=None, description="A webhook subscriber: where notices are POSTed (https, public addresses only)."
    )


class SubscribeAccepted(ApiModel):
    accepted: bool = Field(description="Always true: the answer never tells whether the address was subscribed.")
    message: str


Token = Annotated[
    str, Field(min_length=1, max_length=400, description="The signed token the email's link carries."), SingleLine
]


class LinkQuery(RequestModel):
    token: Token


class SubscriberListQuery(PageQuery):
    status: SubscriberStatus | None = Field(default=None, description="Only pending or only confirmed subscribers.")
    kind: SubscriberKind | None = Field(default=None, description="Only email or only webhook subscribers.")


def _utc(moment: datetime | None) -> datetime | None:
    return moment.astimezone(UTC) if moment is not None else None


class SubscriberV1(ApiModel):
    id: str = Field(description="sub_<hex>")
    kind: SubscriberKind
    email: str
    url: str | None = Field(description="The webhook's URL; null for an email subscriber.")
    component_ids: list[str] = Field(description="Empty: every component of the page.")
    status: SubscriberStatus = Field(description="pending until the confirmation link is followed.")
    created_at: datetime
    confirmed_at: datetime | None

    @classmethod
    def of(cls, item: SubscriberItem) -> SubscriberV1:
        return cls(
            id=item.subscriber_id or "",
            kind="webhook" if item.kind == "webhook" else "email",
            email=item.email or "",
            url=item.url,
            component_ids=list(item.component_ids or []),
            status="confirmed" if item.status == "confirmed" else "pending",
            created_at=_utc(item.created_at) or datetime.min.replace(tzinfo=UTC),
            confirmed_at=_utc(item.confirmed_at),
        )


class SubscriberCountV1(ApiModel):
    total: int
    confirmed: int
    pending: int
    email: int
    webhook: int
