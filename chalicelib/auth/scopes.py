"""Scopes for API keys and the role permissions that session tokens map onto."""

from __future__ import annotations

SPEC_SCOPES: tuple[str, ...] = (
    "incidents:read",
    "incidents:write",
    "services:read",
    "oncall:read",
    "postmortems:read",
    "postmortems:write",
    "teams:read",
    "users:read",
)
# Scopes the service adds to the interface's table (docs/API.md, "Scopes").
ADDED_SCOPES: tuple[str, ...] = (
    "services:write",
    "teams:write",
    "users:write",
    "oncall:write",
    "integrations:read",
    "integrations:write",
    "status:read",
    "status:write",
    "webhooks:write",
    # Bulk reads of the organization's history (chalicelib.exports): a key for a payroll or BI job
    # can read exports and nothing else. A read scope: viewers and responders hold it.
    "exports:read",
    "admin",
    # Insights (docs/INSIGHTS.md): the figures of /api/v1/insights/*, and the /metrics text a
    # monitoring scraper reads with a key of its own.
    "insights:read",
    "metrics:read",
)
ALL_SCOPES: tuple[str, ...] = SPEC_SCOPES + ADDED_SCOPES

# Every role reads insights (aggregates of what incidents:read shows already); metrics:read is a
# scraper's, given to keys on purpose: only owners and admins (who hold every scope) have it.
READ_SCOPES: frozenset[str] = frozenset(s for s in ALL_SCOPES if s.endswith(":read") and s != "metrics:read")

ROLES: tuple[str, ...] = ("owner", "admin", "responder", "viewer")  # highest first

ROLE_SCOPES: dict[str, frozenset[str]] = {
    "owner": frozenset(ALL_SCOPES),
    "admin": frozenset(ALL_SCOPES),
    # Responders work incidents and write postmortems; configuration stays with admins.
    "responder": READ_SCOPES | {"incidents:write", "postmortems:write", "status:write"},
    "viewer": READ_SCOPES,
}


def lower_role(first: str, second: str) -> str:
    """The less powerful of two roles (a session holds the lower of its token's and the directory's)."""
    return first if ROLES.index(first) >= ROLES.index(second) else second


def unknown_scopes(scopes: list[str]) -> list[str]:
    return [s for s in scopes if s not in ALL_SCOPES]
