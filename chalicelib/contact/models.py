"""Request and response models for contact methods and notification rules (they generate the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field, field_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from chalicelib.contact import rules
from chalicelib.contact.profile import ContactMethod, NotificationProfile, RuleStep
from chalicelib.contact.rules import ContactType, Step
from chalicelib.contact.verification import VerificationSent
from chalicelib.model_base import ApiModel, ExpectedVersion, PatchModel, RequestModel, SingleLine, not_nullable
from chalicelib.pagination import PageQuery

Label = Annotated[str, Field(max_length=rules.LABEL_MAX), SingleLine]
Address = Annotated[str, Field(min_length=1, max_length=rules.HOOK_ADDRESS_MAX), SingleLine]
Secret = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[\x21-\x7e]+$")]
MethodId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]

ADDRESS_DESCRIPTION = (
    "email: an email address (stored lower-cased); slack: a Slack user id (e.g. U024BE7LH); "
    "sms and voice: an E.164 phone number (^\\+[1-9]\\d{7,14}$, e.g. +15551234567); "
    "teams, mattermost, discord, google_chat: the incoming-webhook URL; ntfy: the topic URL "
    "(https://ntfy.sh/<topic> or a self-hosted server's). A webhook URL is a secret: it is sealed and "
    "answered only as a hint (https://host/\u2026abcd). A user has each (type, address) once."
)
SECRET_DESCRIPTION = "ntfy only: an access token for a protected topic (sent as a Bearer token); never answered."


class ContactMethodV1(ApiModel):
    id: str = Field(description="Contact method id.")
    type: ContactType
    address: str
    label: str
    verified: bool = Field(
        description="Email and Slack methods are verified when added; sms, voice and the webhook-style types "
        "after a code sent there. Unverified methods are never paged."
    )
    follows_account_email: bool = Field(
        description="The default email method: its address is the user's account email, whatever it is now."
    )
    created_at: datetime
    updated_at: datetime | None

    @classmethod
    def of(cls, method: ContactMethod) -> ContactMethodV1:
        return cls(
            id=method.contact_method_id,
            type=method.type,
            address=method.address,
            label=method.label,
            verified=method.verified,
            follows_account_email=method.follows_account_email,
            created_at=method.created_at,
            updated_at=method.updated_at,
        )


class ContactMethodCreate(RequestModel):
    domain_names = {"type": "method_type"}

    type: ContactType
    address: Address = Field(description=ADDRESS_DESCRIPTION)
    label: Label | None = Field(default=None, description="Left out or blank: the type's name (Email, SMS, ...).")
    secret: Secret | None = Field(default=None, description=SECRET_DESCRIPTION)


class ContactMethodPatch(PatchModel):
    nullable = frozenset({"label"})

    label: Label | None = Field(default=None, description="null: back to the type's name.")
    address: Address | SkipJsonSchema[None] = Field(
        default=None,
        description="A new sms or voice number, or a new webhook URL, is unverified again. The default email "
        "method follows the account email and refuses a new address.",
    )


class ContactMethodListQuery(PageQuery):
    pass


class VerificationCode(RequestModel):
    code: str = Field(pattern=r"^[0-9]{6}$", description="The 6-digit code sent to the number or the webhook.")


class VerificationSentV1(ApiModel):
    contact_method_id: str
    type: ContactType
    address: str
    expires_at: datetime = Field(description="The code works until then (10 minutes).")
    resend_available_at: datetime = Field(description="A new code may be asked for from then on.")
    attempts_allowed: int = Field(description="Wrong codes accepted before the code is void.")

    @classmethod
    def of(cls, sent: VerificationSent) -> VerificationSentV1:
        return cls(
            contact_method_id=sent.contact_method_id,
            type=rules.check_type(sent.type),
            address=sent.address,
            expires_at=sent.expires_at,
            resend_available_at=sent.resend_available_at,
            attempts_allowed=sent.attempts_allowed,
        )


# --- notification rules --------------------------------------------------------------------------


class RuleStepIn(RequestModel):
    contact_method_id: MethodId
    delay_minutes: int = Field(ge=0, le=rules.MAX_DELAY_MINUTES, description="Minutes after the page starts.")

    def step(self) -> Step:
        return Step(self.contact_method_id, self.delay_minutes)


Steps = Annotated[list[RuleStepIn], Field(max_length=rules.MAX_STEPS)]


class NotificationRulesPut(RequestModel):
    high: Steps = Field(description="Steps for high-urgency pages; each names one of the user's contact methods.")
    low: Steps = Field(description="Steps for low-urgency pages.")
    version: ExpectedVersion = Field(
        default=None,
        description="The version you read. When given, the change applies only if the rules are still at that "
        "version (409 otherwise); when left out, it replaces the latest rules.",
        json_schema_extra=not_nullable,
    )

    @field_validator("version", mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:  # left out means "the latest"; an explicit null is refused, as the document says
            raise PydanticCustomError("null_not_allowed", "must not be null")
        return value


class RuleStepV1(ApiModel):
    contact_method_id: str
    delay_minutes: int
    type: ContactType
    label: str
    address: str
    verified: bool = Field(description="An unverified method's step is skipped when paging.")

    @classmethod
    def of(cls, step: RuleStep) -> RuleStepV1:
        method = step.contact_method
        return cls(
            contact_method_id=method.contact_method_id,
            delay_minutes=step.delay_minutes,
            type=method.type,
            label=method.label,
            address=method.address,
            verified=method.verified,
        )


class NotificationRulesV1(ApiModel):
    user_id: str
    version: int = Field(description="Bumped by every change; send it back in a PUT to make it conditional.")
    high: list[RuleStepV1] = Field(description="By delay.")
    low: list[RuleStepV1] = Field(description="By delay.")

    @classmethod
    def of(cls, profile: NotificationProfile) -> NotificationRulesV1:
        return cls(
            user_id=profile.user_id,
            version=profile.version,
            high=[RuleStepV1.of(step) for step in profile.steps("high")],
            low=[RuleStepV1.of(step) for step in profile.steps("low")],
        )
