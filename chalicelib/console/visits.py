"""The console's credential kinds: a browser's session cookie, or its pre-session before sign-in.

- `CONSOLE_SESSION`: a live session (chalicelib.console.sessions) of a user the directory still
  has, active (a deactivated user is signed out on their next request). Without one, the browser
  is sent to the sign-in page, which brings a GET back where it was.
- `CONSOLE_SESSION_OR_ANONYMOUS`: the session when there is one; else the browser's pre-session
  cookie (made on its first visit), for the sign-in, password and email-link forms.

A POST must carry the form's CSRF token: the session's own token, or, before sign-in, an HMAC of
the pre-session cookie; a cookie alone proves nothing about where the form came from. A missing
or wrong token is 403 and nothing happens. A visit counts against the session's bucket (per
user), or the caller address's before sign-in, refused ones included. The verified `Visit` is
what the console's pages are built from (chalicelib.console.web).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from chalice.app import Request, Response

from chalicelib.api.credential_kinds import (
    ANONYMOUS,
    ANONYMOUS_BUCKET,
    CredentialKind,
    Inbound,
    Refused,
    Verified,
    address_bucket,
)
from chalicelib.api.error_render import console_headers
from chalicelib.api.operation import query_lists
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ROLE_SCOPES, ROLES
from chalicelib.console import sessions
from chalicelib.console.sessions import ConsoleSession
from chalicelib.directory.users import User, get_user
from chalicelib.errors import AppError, Forbidden, NotFound, PayloadTooLarge, Unauthorized, ValidationFailed
from chalicelib.ratelimit.buckets import Bucket
from chalicelib.settings import Settings

MAX_FORM_BYTES = 64 * 1024
CSRF_FIELD = "csrf_token"
FORM_TYPE = "application/x-www-form-urlencoded"
CSRF_REFUSED = "This form has expired or did not come from Tocsin. Reload the page and try again."


@dataclass
class Visit:
    """A verified console request: the person (none before sign-in), the form's CSRF token, the
    posted form, and cookies the answer must set."""

    session: ConsoleSession | None = None
    principal: Principal | None = None
    user: User | None = None
    csrf_token: str = ""
    form: dict[str, list[str]] = field(default_factory=dict)
    set_cookies: list[str] = field(default_factory=list)


def session_cookie_name(*, settings: Settings) -> str:
    # __Host-: the browser accepts it only from a secure origin, for the whole host, no Domain.
    return "__Host-tocsin_session" if settings.secure_cookies else "tocsin_session"


def pre_session_cookie_name(*, settings: Settings) -> str:
    return "__Host-tocsin_pre" if settings.secure_cookies else "tocsin_pre"


def app_path(suffix: str = "", *, settings: Settings) -> str:
    """A path under the console's root (PUBLIC_APP_URL's path, `/app` by default)."""
    root = urlsplit(settings.app_url()).path.rstrip("/") or ""
    return root + suffix


def cookie(name: str, value: str, *, max_age: int | None = None, settings: Settings) -> str:
    parts = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Lax"]
    if settings.secure_cookies:
        parts.append("Secure")
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    return "; ".join(parts)


def cookies_of(request: Request) -> dict[str, str]:
    jar: dict[str, str] = {}
    for part in str(request.headers.get("cookie") or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name and name not in jar:
            jar[name] = value.strip()
    return jar


def pre_session_token(pre_session: str, *, settings: Settings) -> str:
    """The CSRF token of a form shown before sign-in: bound to the browser's pre-session cookie."""
    secret = settings.api_key_hmac_secret.encode()
    return hmac.new(secret, b"console-csrf:" + pre_session.encode(), hashlib.sha256).hexdigest()


def redirect(location: str, set_cookies: list[str] | None = None) -> Response:
    """A 303 (post/redirect/get) with the console's headers."""
    headers: dict[str, str | list[str]] = {**console_headers(), "Location": location}
    if set_cookies:
        headers["Set-Cookie"] = set_cookies
    return Response(body="", status_code=303, headers=headers)


def route_path(request: Request, path_params: Mapping[str, str]) -> str:
    """The path asked for, below the console's root, rebuilt from the route and its parameters (the
    request's own path carries API Gateway's stage prefix, the route does not)."""
    here = str((request.context or {}).get("resourcePath") or "").removeprefix("/app")
    for name, value in path_params.items():
        here = here.replace("{" + name + "}", quote(value, safe=""))
    return here


def safe_next(value: str, *, settings: Settings) -> str:
    """A sign-in's `next`: only a path inside the console (never another site: no open redirect),
    written in visible ASCII as a URL is: a CR LF would split the Location header (a 500) and a
    character beyond Latin-1 (U+2028) cannot be sent in one at all (the connection dropped)."""
    root = app_path(settings=settings)
    if (
        value.startswith(root + "/")
        and not value.startswith("//")
        and "\\" not in value
        and all("!" <= character <= "~" for character in value)
    ):
        return value
    return app_path("/incidents", settings=settings)


def _sign_in(request: Request, path_params: Mapping[str, str], *, settings: Settings) -> Response:
    """No live session: to the sign-in page, which brings a GET back to where it was."""
    target = app_path("/sign-in", settings=settings)
    if request.method == "GET":
        here = route_path(request, path_params)
        query = urlencode(query_lists(request), doseq=True)
        target += "?" + urlencode({"next": app_path(here, settings=settings) + ("?" + query if query else "")})
    return redirect(target)


def _signed_in(session: ConsoleSession) -> tuple[Principal, User] | None:
    """The person as the directory says now: a deactivated user is signed out on their next request."""
    try:
        person = get_user(organization_id=session.organization_id, user_id=session.user_id)
    except NotFound:
        return None
    if not person.is_active:
        return None
    role = person.role if person.role in ROLE_SCOPES else ROLES[-1]
    principal = Principal(
        organization_id=session.organization_id,
        credential_kind="session",
        scopes=ROLE_SCOPES[role],
        user_id=person.user_id,
        role=role,
        email=person.email,
        name=person.name,
        display_name=person.email,
    )
    return principal, person


def _read_form(request: Request) -> dict[str, list[str]]:
    raw = request.raw_body or b""
    if isinstance(raw, str):
        raw = raw.encode()
    if len(raw) > MAX_FORM_BYTES:
        raise PayloadTooLarge("The form is larger than 64 KiB.")
    content_type = str(request.headers.get("content-type") or "").split(";")[0].strip().lower()
    if raw and content_type != FORM_TYPE:
        raise ValidationFailed(f"Forms are sent as {FORM_TYPE}.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationFailed("The form is not UTF-8.") from None
    try:
        return parse_qs(text, keep_blank_values=True, max_num_fields=500)
    except ValueError:
        raise ValidationFailed("The form has too many fields.") from None


def _visit(inbound: Inbound, *, anonymous: bool) -> Verified:
    request = inbound.request
    jar = cookies_of(request)
    session = sessions.resume(
        jar.get(session_cookie_name(settings=inbound.settings), ""), now=inbound.now, settings=inbound.settings
    )
    person = _signed_in(session) if session is not None else None
    if session is not None and person is not None:
        principal, user = person
        visit = Visit(session, principal, user, session.csrf_token)
        bucket = Bucket(principal.rate_limit_category, principal.rate_limit_identity)
    else:
        bucket = address_bucket(ANONYMOUS_BUCKET, inbound)
        if not anonymous:
            refused = Unauthorized("Sign in to use the console.")
            raise Refused(refused, bucket=bucket, answer=_sign_in(request, inbound.path, settings=inbound.settings))
        visit = Visit()
        pre_session = jar.get(pre_session_cookie_name(settings=inbound.settings), "")
        if len(pre_session) < 20:
            pre_session = secrets.token_urlsafe(24)
            visit.set_cookies.append(
                cookie(pre_session_cookie_name(settings=inbound.settings), pre_session, settings=inbound.settings)
            )
        visit.csrf_token = pre_session_token(pre_session, settings=inbound.settings)
    if request.method == "POST":
        try:
            visit.form = _read_form(request)
            sent = (visit.form.get(CSRF_FIELD) or [""])[0]
            if not sent or not hmac.compare_digest(sent.encode(), visit.csrf_token.encode()):
                raise Forbidden(CSRF_REFUSED)
        except AppError as error:
            raise Refused(error, bucket=bucket) from None
    return Verified(visit.principal or ANONYMOUS, visit, bucket)


CONSOLE_SESSION = CredentialKind("console_session", lambda inbound: _visit(inbound, anonymous=False))
CONSOLE_SESSION_OR_ANONYMOUS = CredentialKind(
    "console_session_or_anonymous", lambda inbound: _visit(inbound, anonymous=True)
)
