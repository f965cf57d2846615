"""Every error the service can answer with, defined once.

Each error carries its code, HTTP status and a default message. Views raise them;
`chalicelib.api.envelope` turns them into the error envelope in one place. They
subclass ChaliceUnhandledError so Chalice re-raises them to our middleware instead
of turning them into its own 500.
"""

from __future__ import annotations

from typing import Any, ClassVar

from chalice.app import ChaliceUnhandledError


class AppError(ChaliceUnhandledError):
    code: ClassVar[str] = "INTERNAL_ERROR"
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "An internal error occurred."

    def __init__(
        self,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        user_message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.details = details
        self.user_message = user_message
        self.headers = headers or {}
        super().__init__(self.message)


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


class ContactDetailsMissing(AppError):
    code = "CONTACT_DETAILS_MISSING"
    status = 409
    default_message = "The person lacks the contact details every requested channel needs."


class PayloadTooLarge(AppError):
    code = "PAYLOAD_TOO_LARGE"
    status = 413
    default_message = "The request body is too large."


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


class DeliveryFailed(AppError):
    code = "DELIVERY_FAILED"
    status = 502
    default_message = "The notification provider could not deliver on any channel."


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
    PayloadTooLarge,
    RateLimited,
    InternalError,
    DeliveryFailed,
)
