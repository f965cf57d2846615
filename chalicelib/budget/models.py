"""Request and response models of the outbound limits (GET/PATCH /api/v1/settings/limits)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from chalicelib.budget.organization_limits import LimitView
from chalicelib.model_base import ApiModel, RequestModel

LimitName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z_]+$")]


class OutboundLimitV1(ApiModel):
    name: str = Field(description="The limit's name (docs/SECURITY.md, The outbound budget).")
    counts: str = Field(description="What one unit is.")
    per: Literal["destination", "person", "person_and_channel", "organization", "deployment"] = Field(
        description="Whose count: one destination (a phone number, a mailbox, a chat user), one person, one "
        "person on one channel, the organization, or the whole deployment."
    )
    window_seconds: int = Field(description="The sliding window the value holds for.")
    value: int = Field(description="The limit in effect for this organization.")
    deployment_value: int = Field(description="The deployment's limit (BUDGET_<NAME>); an owner may only go lower.")
    lowered: bool = Field(description="The owner set a lower value than the deployment's.")
    owner_may_lower: bool = Field(description="False for the deployment's own limits (replies to unknown numbers).")

    @classmethod
    def of(cls, view: LimitView) -> OutboundLimitV1:
        return cls(
            name=view.limit.name,
            counts=view.limit.counts,
            per=view.limit.per,
            window_seconds=view.window_seconds,
            value=view.value,
            deployment_value=view.deployment_value,
            lowered=view.lowered,
            owner_may_lower=view.limit.owner_may_lower,
        )


class OutboundLimitsV1(ApiModel):
    limits: list[OutboundLimitV1] = Field(description="Every limit of the outbound budget.")

    @classmethod
    def of(cls, views: list[LimitView]) -> OutboundLimitsV1:
        return cls(limits=[OutboundLimitV1.of(view) for view in views])


class OutboundLimitsPatch(RequestModel):
    limits: dict[LimitName, int | None] = Field(
        max_length=32,
        description="Limit name -> the organization's value, from 1 to the deployment's (never higher); null "
        "goes back to the deployment's value. Limits left out keep theirs. An unknown name, a deployment-only "
        "limit or a value out of range is a 400 naming limits.<name>.",
    )
