"""Every error the service can answer with, defined once, free of any web framework.

Each error carries its code, HTTP status and a default message. Domain code and views raise
them; the API layer renders them, one renderer per route family (the API envelope, the
webhook body, the PagerDuty Events body, the public status page), chosen in
`chalicelib.api.error_render`. Nothing here imports Chalice: the view wrapper in
`chalicelib.api.pipeline` catches `AppError` before Chalice could turn it into its own 500.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Self

# A dict for the API envelope's `error.details` (e.g. `{"fields": [...]}`), or the list of
# problems an inbound delivery had (PagerDuty-style strings, the Events API's `errors`).
Details = dict[str, Any] | list[str]


class AppError(Exception):
    code: ClassVar[str] = "INTERNAL_ERROR"
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "An internal error occurred."

    def __init__(
        self,
        message: str | None = None,
        *,
        details: Details | None = None,
        user_message: str | None = None,
        headers: Mapping[str, str] | None = None,
        retryable: bool = False,
    ) -> None:
        self.message = message or self.default_message
        self.details = details
        self.user_message = user_message
        # Read-only: an error may be raised, caught and rendered by several hands; a copy with more
        # headers is `with_headers`, never a change to this one.
        self._headers: Mapping[str, str] = MappingProxyType(dict(headers or {}))
        # Not the sender's fault (e.g. a certificate fetch failed): the webhook routes answer 5xx
        # so the provider retries, where a 4xx would make it drop the delivery.
        self.retryable = retryable
        super().__init__(self.message)

    @property
    def headers(self) -> Mapping[str, str]:
        """The headers its answer carries (e.g. Retry-After); read-only."""
        return self._headers

    def with_headers(self, more: Mapping[str, str]) -> Self:
        """A copy of this error whose answer also carries `more`. Its own headers win: they say
        more precisely what happened (a nested budget's Retry-After over the request's bucket)."""
        copy = type(self).__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.args = self.args
        copy._headers = MappingProxyType({**more, **self._headers})
        return copy

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class ValidationFailed(AppError):
    code = "VALIDATION_ERROR"
    status = 400
    default_message = "The request is invalid."

    @classmethod
    def for_fields(cls, fields: list[dict[str, str]], message: str | None = None) -> ValidationFailed:
        return cls(message or "The request is invalid.", details={"fields": fields})

    @classmethod
    def for_field(cls, field: str, problem: str) -> ValidationFailed:
        return cls.for_fields([{"field": field, "message": problem}], f"{field}: {problem}")


class InvalidSeverity(AppError):
    code = "INVALID_SEVERITY"
    status = 400
    default_message = "Severity must be one of SEV0, SEV1, SEV2, SEV3, SEV4."


class InvalidStatus(AppError):
    code = "INVALID_STATUS"
    status = 400
    default_message = "That status does not exist in this organization's workflow."


class TransitionNotAllowed(AppError):
    code = "TRANSITION_NOT_ALLOWED"
    status = 400
    default_message = "That status change is not allowed."


class Unauthorized(AppError):
    code = "UNAUTHORIZED"
    status = 401
    default_message = "A valid bearer credential is required."


class Forbidden(AppError):
    code = "FORBIDDEN"
    status = 403
    default_message = "The credential lacks the permission this operation needs."

    @classmethod
    def missing_scope(cls, scope: str) -> Forbidden:
        return cls(
            f"This operation requires the '{scope}' scope.",
            details={"required_scope": scope},
        )


class NotFound(AppError):
    code = "NOT_FOUND"
    status = 404
    default_message = "The resource was not found."


class MethodNotAllowed(AppError):
    code = "METHOD_NOT_ALLOWED"
    status = 405
    default_message = "That method is not allowed on this resource."


class Conflict(AppError):
    code = "CONFLICT"
    status = 409
    default_message = "The request conflicts with the current state of the resource."


class IdempotencyKeyReused(AppError):
    code = "IDEMPOTENCY_KEY_REUSED"
    status = 409
    default_message = "This Idempotency-Key was already used with a different payload."


class IdempotencyInProgress(AppError):
    code = "IDEMPOTENCY_IN_PROGRESS"
    status = 409
    default_message = "A request with this Idempotency-Key is still in progress; retry after it finishes."


class IncidentResolved(AppError):
    """Acknowledging an incident that is resolved or closed: there is nothing left to acknowledge,
    and its acknowledge SLA is never recorded as met. `details`: status, resolved_at, resolved_by."""

    code = "INCIDENT_RESOLVED"
    status = 409
    default_message = "The incident is resolved; a resolved incident cannot be acknowledged."


class ContactDetailsMissing(AppError):
    code = "CONTACT_DETAILS_MISSING"
    status = 409
    default_message = "The person lacks the contact details every requested channel needs."


class InvalidVerificationCode(AppError):
    """A wrong verification code for a contact method; `details.attempts_left` says how many remain."""

    code = "INVALID_VERIFICATION_CODE"
    status = 400
    default_message = "The verification code is wrong."


class NoVerificationCode(AppError):
    """No code can be checked: none was sent, it expired, or it took too many wrong attempts
    (`details.reason`: not_sent | expired | attempts_exhausted | replaced). A new one must be sent."""

    code = "NO_VERIFICATION_CODE"
    status = 409
    default_message = "There is no usable verification code for this contact method; send a new one."


class PayloadTooLarge(AppError):
    code = "PAYLOAD_TOO_LARGE"
    status = 413
    default_message = "The request body is too large."


class UriTooLong(AppError):
    code = "URI_TOO_LONG"
    status = 414
    default_message = "The request line (path and query string) is too long."


class HeadersTooLarge(AppError):
    code = "HEADERS_TOO_LARGE"
    status = 431
    default_message = "The request's headers are too large."


class RateLimited(AppError):
    code = "RATE_LIMITED"
    status = 429
    default_message = "Rate limit exceeded; retry after the number of seconds in Retry-After."


class InternalError(AppError):
    code = "INTERNAL_ERROR"
    status = 500
    default_message = "An internal error occurred."


class ConfigurationError(InternalError):
    """A server-side configuration problem (the spec's 500, e.g. incomplete SLA settings)."""


class ServiceUnavailable(AppError):
    """DynamoDB kept throttling (or failing transiently) after botocore's retries; nothing was
    written. Retry-After says when to try again."""

    code = "SERVICE_UNAVAILABLE"
    status = 503
    default_message = "The service is busy; retry after the number of seconds in Retry-After."
    retry_after_seconds: ClassVar[int] = 2

    def __init__(self, message: str | None = None, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message, headers={**(headers or {}), "Retry-After": str(self.retry_after_seconds)})


class DeliveryFailed(AppError):
    code = "DELIVERY_FAILED"
    status = 502
    default_message = "The notification provider could not deliver on any channel."


# --- inbound webhooks: the checks before parsing (chalicelib.integration.gate) -------------------


class RouteNotFound(AppError):
    code = "ROUTE_NOT_FOUND"
    status = 404
    default_message = "No integration has this routing key (invalid or expired)."


class WebhookRevoked(AppError):
    code = "WEBHOOK_REVOKED"
    status = 410
    default_message = "This webhook has been revoked."


class IpNotAllowed(AppError):
    code = "IP_NOT_ALLOWED"
    status = 403
    default_message = "Deliveries from this address are not allowed for this webhook."


class HttpsRequired(AppError):
    code = "HTTPS_REQUIRED"
    status = 403
    default_message = "Webhook URLs work over HTTPS only."


# --- inbound webhooks: what a parser refuses (chalicelib.integration.parsers) ---------------------


class DeliveryRejected(AppError):
    """A delivery refused for its body or its signature. Not raised itself: the parent of the three
    errors a parser raises, so callers can catch "the parser refused it" in one clause.

    `details` is the list of every problem found (PagerDuty-style strings for the Events API's
    `errors`); it defaults to the message alone."""

    def __init__(
        self,
        message: str | None = None,
        *,
        details: list[str] | None = None,
        headers: Mapping[str, str] | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message, headers=headers, retryable=retryable)
        self.details: list[str] = list(details) if details is not None else [self.message]


class InvalidPayload(DeliveryRejected):
    code = "INVALID_PAYLOAD"
    status = 400
    default_message = "The delivery's body is invalid."

    @classmethod
    def from_problems(cls, problems: list[str]) -> InvalidPayload:
        """One INVALID_PAYLOAD naming every problem (the message joins them)."""
        return cls("; ".join(problems), details=problems)


class InvalidSignature(DeliveryRejected):
    code = "INVALID_SIGNATURE"
    status = 401
    default_message = "The delivery's signature is missing or does not verify."


class SignatureExpired(DeliveryRejected):
    code = "SIGNATURE_EXPIRED"
    status = 401
    default_message = "The delivery's signature timestamp is outside the accepted window."


class InvalidFields(DeliveryRejected):
    """A drop-in request whose JSON is fine but whose fields are not (Opsgenie's 422, "semantic
    errors in request body"): `fields` names each field and its problem."""

    code = "INVALID_FIELDS"
    status = 422
    default_message = "Request has invalid fields."

    def __init__(self, fields: Mapping[str, str] | None = None, message: str | None = None) -> None:
        self.fields: dict[str, str] = dict(fields or {})
        problems = [f"{name}: {problem}" for name, problem in self.fields.items()]
        super().__init__(message, details=problems or None)


# The codes the API envelope answers with (its OpenAPI `error.code` enum).
ERROR_TYPES: tuple[type[AppError], ...] = (
    ValidationFailed,
    InvalidSeverity,
    InvalidStatus,
    TransitionNotAllowed,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Conflict,
    IdempotencyKeyReused,
    IdempotencyInProgress,
    ContactDetailsMissing,
    InvalidVerificationCode,
    NoVerificationCode,
    PayloadTooLarge,
    UriTooLong,
    HeadersTooLarge,
    RateLimited,
    InternalError,
    DeliveryFailed,
    ServiceUnavailable,
)

# The codes the inbound webhook routes answer with, besides PAYLOAD_TOO_LARGE, RATE_LIMITED,
# INTERNAL_ERROR and SERVICE_UNAVAILABLE, which the API shares.
WEBHOOK_ERROR_TYPES: tuple[type[AppError], ...] = (
    RouteNotFound,
    WebhookRevoked,
    InvalidPayload,
    InvalidSignature,
    SignatureExpired,
    IpNotAllowed,
    HttpsRequired,
)
