"""Pure directory rules: identifier formats, normalisation, search. No AWS here."""

from __future__ import annotations

import re
import secrets
import string

from chalicelib.auth.scopes import ROLES
from chalicelib.errors import ValidationFailed
from chalicelib.model_base import WHITESPACE
from chalicelib.severity import SEVERITIES

__all__ = ["SEVERITIES"]
USER_ROLES: tuple[str, ...] = ROLES
DEFAULT_ROLE = "responder"
# The roles that can answer a page (acknowledge, resolve): escalation targets and shift swaps are
# for them only. A viewer reads and is never paged by a policy.
RESPONDER_ROLES: tuple[str, ...] = ("owner", "admin", "responder")

NAME_MAX = 100
DESCRIPTION_MAX = 1000
EMAIL_MAX = 254
SLACK_ID_MAX = 64

SERVICE_KEY_PREFIX = "svc_"
SERVICE_KEY_ALPHABET = string.ascii_lowercase + string.digits
SERVICE_KEY_BODY_LENGTH = 10
SERVICE_ID_PREFIX = "SER-"

# Deliberately simple: one @, no whitespace, a dot in the domain. Delivery proves the rest.
EMAIL_PATTERN = rf"^[^@{WHITESPACE}]+@[^@{WHITESPACE}]+\.[^@{WHITESPACE}]+$"
_EMAIL_RE = re.compile(EMAIL_PATTERN)
_SERVICE_KEY_RE = re.compile(rf"^{SERVICE_KEY_PREFIX}[a-z0-9]{{{SERVICE_KEY_BODY_LENGTH}}}$")
_SERVICE_ID_RE = re.compile(r"^SER-\d{5,}$")
# Item ids in paths: anything else cannot exist, so it is a 404 before DynamoDB sees it.
_ITEM_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Guard item keys (UniqueNameRecord.unique_key).
USER_EMAIL_GUARD = "user-email"
TEAM_NAME_GUARD = "team-name"
SERVICE_NAME_GUARD = "service-name"


def guard_key(kind: str, value: str) -> str:
    return f"{kind}#{value}"


# --- identifiers ---------------------------------------------------------------------------


def new_service_key() -> str:
    body = "".join(secrets.choice(SERVICE_KEY_ALPHABET) for _ in range(SERVICE_KEY_BODY_LENGTH))
    return SERVICE_KEY_PREFIX + body


def is_service_key(value: str) -> bool:
    return bool(_SERVICE_KEY_RE.match(value))


def format_service_id(sequence: int) -> str:
    return f"{SERVICE_ID_PREFIX}{sequence:05d}"


def is_service_id(value: str) -> bool:
    return bool(_SERVICE_ID_RE.match(value))


def normalize_service_id(value: str) -> str:
    """`ser-00001` and `SER-00001` name the same service."""
    return value.upper() if value[:4].upper() == SERVICE_ID_PREFIX else value


def is_item_id(value: str) -> bool:
    return bool(_ITEM_ID_RE.match(value))


# --- normalisation and validation ------------------------------------------------------------


def clean_name(value: str, *, field: str = "name", max_length: int = NAME_MAX) -> str:
    """Trim and collapse inner whitespace; 1 to max_length characters."""
    cleaned = " ".join(value.split())
    if not cleaned:
        raise ValidationFailed.for_field(field, "must not be empty")
    if len(cleaned) > max_length:
        raise ValidationFailed.for_field(field, f"must be at most {max_length} characters")
    return cleaned


def name_key(name: str) -> str:
    """The case-insensitive form names are unique by."""
    return " ".join(name.split()).casefold()


def clean_description(value: str | None, *, field: str = "description") -> str | None:
    if value is None:
        return None
    cleaned = value.strip()
    if len(cleaned) > DESCRIPTION_MAX:
        raise ValidationFailed.for_field(field, f"must be at most {DESCRIPTION_MAX} characters")
    return cleaned or None


def is_valid_email(value: str) -> bool:
    return len(value) <= EMAIL_MAX and bool(_EMAIL_RE.match(value))


def normalize_email(value: str, *, field: str = "email") -> str:
    email = value.strip().lower()
    if not is_valid_email(email):
        raise ValidationFailed.for_field(field, "must be a valid email address")
    return email


def clean_slack_user_id(value: str | None) -> str | None:
    if value is None:
        return None
    cleaned = value.strip()
    if not cleaned:
        return None
    if len(cleaned) > SLACK_ID_MAX or any(c.isspace() for c in cleaned):
        raise ValidationFailed.for_field("slack_user_id", f"must be 1 to {SLACK_ID_MAX} characters without spaces")
    return cleaned


def can_respond(role: str, is_active: bool) -> bool:
    """An active person whose role can acknowledge and resolve incidents."""
    return is_active and role in RESPONDER_ROLES


def check_role(role: str) -> str:
    if role not in USER_ROLES:
        raise ValidationFailed.for_field("role", f"must be one of {', '.join(USER_ROLES)}")
    return role


def is_severity(value: str) -> bool:
    return value in SEVERITIES


# --- search ------------------------------------------------------------------------------------


def matches_search(term: str | None, *values: str | None) -> bool:
    """Case-insensitive substring match of `term` in any value; an empty term matches everything."""
    if term is None:
        return True
    needle = term.strip().casefold()
    if not needle:
        return True
    return any(needle in value.casefold() for value in values if value)


def unique_in_order(values: list[str] | tuple[str, ...]) -> list[str]:
    seen: set[str] = set()
    ordered = []
    for value in values:
        if value not in seen:
            seen.add(value)
            ordered.append(value)
    return ordered
