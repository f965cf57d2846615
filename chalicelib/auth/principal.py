from __future__ import annotations

from dataclasses import dataclass, field

from chalicelib.errors import Forbidden


@dataclass(frozen=True)
class Principal:
    """Who is calling: resolved from an API key or a session token."""

    organization_id: str
    credential_kind: str  # api_key | session
    scopes: frozenset[str]
    user_id: str | None = None
    key_id: str | None = None
    key_kind: str | None = None  # personal | service_account, for API keys
    role: str | None = None  # for sessions
    email: str | None = None  # the person behind the credential, when there is one
    name: str | None = None
    display_name: str | None = None  # how timelines name the actor: an email, or the key's name
    # Where a person acted when it was not the API or the console: "Slack", "SMS", "a phone call",
    # "an email link". Timeline entries name it ("Acknowledged by ana@example.com via Slack").
    via: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def rate_limit_category(self) -> str:
        return "api_key" if self.credential_kind == "api_key" else "session"

    @property
    def rate_limit_identity(self) -> str:
        return (self.key_id if self.credential_kind == "api_key" else self.user_id) or "unknown"

    @property
    def actor(self) -> str:
        if self.display_name:
            return self.display_name
        return f"user {self.user_id}" if self.user_id else "unknown"

    def require(self, scope: str | None) -> None:
        if scope is not None and scope not in self.scopes:
            raise Forbidden.missing_scope(scope)
